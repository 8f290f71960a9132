//! The executor: virtual threads as stackful fibers on one OS thread, each
//! bound to a virtual CPU with its own clock; the fiber with the smallest
//! clock always runs next, so shared-memory operations happen in one global
//! order consistent with virtual time.

use std::any::Any;
use std::cell::RefCell;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use crate::cost::{Access, CostStats, Memory};
use crate::machine::{Costs, Machine, ns_to_ps};

type Fiber = Coroutine<(), (), (), DefaultStack>;

/// The state of a running simulation, reachable from the hooks.
pub(crate) struct Sim {
    pub(crate) mem: Memory,
    pause: u64,
    yield_: u64,
    max_ps: u64,
    cpus: Vec<usize>,
    clocks: Vec<u64>,
    /// The fiber that runs now (valid while `in_fiber`).
    current: usize,
    in_fiber: bool,
    /// Set once the run is over (or failed): hooks do nothing from then on.
    dead: bool,
    /// Runnable fibers other than `current`, by (clock, index).
    ready: BinaryHeap<Reverse<(u64, usize)>>,
    yielders: Vec<*const Yielder<(), ()>>,
    pub(crate) locals: Vec<HashMap<usize, Box<dyn Any>>>,
    switches: u64,
}

thread_local! {
    static SIM: RefCell<Option<Box<Sim>>> = const { RefCell::new(None) };
}

/// Runs `f` on the running simulation's state if the caller is one of its
/// fibers; `None` otherwise (outside any VM, or after the run ended).
#[inline]
pub(crate) fn with_fiber<R>(f: impl FnOnce(&mut Sim, usize) -> R) -> Option<R> {
    SIM.with(|cell| {
        let mut g = cell.borrow_mut();
        match g.as_deref_mut() {
            Some(s) if s.in_fiber && !s.dead => {
                let me = s.current;
                Some(f(s, me))
            }
            _ => None,
        }
    })
}

/// Lets every virtual thread whose clock is earlier than the caller's run
/// first (free: no cost, no change to any clock). Instrumented accesses do
/// this themselves; a workload calls it to make a non-atomic
/// read-modify-write observable to other threads (an exclusion check).
/// Does nothing outside a VM.
#[inline]
pub fn interleave() {
    sync_point();
}

/// Suspends the calling fiber until it has the smallest clock, so that its
/// next operation happens at its own virtual time. False outside a VM.
#[inline]
fn sync_point() -> bool {
    let wait = with_fiber(|s, me| match s.ready.peek() {
        Some(&Reverse(first)) if first < (s.clocks[me], me) => Some(s.yielders[me]),
        _ => None,
    });
    match wait {
        None => false,
        Some(None) => true,
        Some(Some(y)) => {
            // SAFETY: `y` is the yielder passed to this fiber's body (stored
            // by `spawn`'s wrapper when the body started); the body is still
            // running, since we are on its stack, so the yielder is alive.
            // The borrow of the simulation state was dropped above.
            unsafe { (*y).suspend(()) };
            true
        }
    }
}

/// Charges an access to `addr` by the calling virtual thread at its virtual
/// time (after every thread with an earlier clock has run up to it) and
/// moves its clock to the access's completion. Does nothing outside a VM.
#[inline]
pub fn access(addr: usize, kind: Access) {
    if !sync_point() {
        return;
    }
    let pending = with_fiber(|s, me| {
        let line = s.mem.line_of(addr);
        let r = s.mem.reserve(s.cpus[me], kind, line, s.clocks[me]);
        s.clocks[me] = r.exec_at;
        (line, r)
    });
    let Some((line, r)) = pending else { return };
    if !r.hit {
        // Wait for the line: the operation takes effect when it arrives.
        sync_point();
    }
    with_fiber(|s, me| {
        s.clocks[me] = s.mem.apply(s.cpus[me], kind, line, r);
    });
}

/// A load of `addr` (see [`access`]).
#[inline]
pub fn on_load(addr: usize) {
    access(addr, Access::Load)
}

/// A store to `addr` (see [`access`]).
#[inline]
pub fn on_store(addr: usize) {
    access(addr, Access::Store)
}

/// A read-modify-write of `addr` (see [`access`]).
#[inline]
pub fn on_rmw(addr: usize) {
    access(addr, Access::Rmw)
}

/// Adds `ps` to the calling fiber's clock; false outside a VM.
#[inline]
fn advance(ps: impl FnOnce(&Sim) -> u64) -> bool {
    with_fiber(|s, me| {
        let d = ps(s);
        s.clocks[me] += d;
        if s.clocks[me] > s.max_ps {
            panic!(
                "ron-vm: virtual thread {me} passed the virtual time limit ({} ns): livelock?",
                s.max_ps / 1000
            );
        }
    })
    .is_some()
}

/// One busy-wait pause (`Costs::pause_ns`); a CPU pause outside a VM.
#[inline]
pub fn pause() {
    if !advance(|s| s.pause) {
        core::hint::spin_loop();
    }
}

/// Gives the CPU away: costs `Costs::yield_ns` and returns at once (one
/// virtual thread per virtual CPU); `std::thread::yield_now` outside a VM.
#[inline]
pub fn yield_now() {
    if !advance(|s| s.yield_) {
        std::thread::yield_now();
    }
}

/// Spends `ns` of local work (no memory traffic); nothing outside a VM.
#[inline]
pub fn work(ns: f64) {
    let ps = ns_to_ps(ns);
    advance(|_| ps);
}

/// The calling virtual thread's clock in ns; outside a VM, ns since the
/// first call in the process (a monotonic clock).
pub fn now_ns() -> u64 {
    with_fiber(|s, me| s.clocks[me] / 1000).unwrap_or_else(|| {
        static EPOCH: std::sync::OnceLock<std::time::Instant> = std::sync::OnceLock::new();
        EPOCH
            .get_or_init(std::time::Instant::now)
            .elapsed()
            .as_nanos() as u64
    })
}

/// The calling virtual thread's clock in ps (0 outside a VM).
pub fn now_ps() -> u64 {
    with_fiber(|s, me| s.clocks[me]).unwrap_or(0)
}

/// The virtual CPU of the calling virtual thread (0 outside a VM).
pub fn current_cpu() -> usize {
    with_fiber(|s, me| s.cpus[me]).unwrap_or(0)
}

/// The index of the calling virtual thread in spawn order (`None` outside a VM).
pub fn thread_index() -> Option<usize> {
    with_fiber(|_, me| me)
}

/// Whether the caller is a virtual thread of a running VM.
pub fn in_vm() -> bool {
    with_fiber(|_, _| ()).is_some()
}

/// What a run did.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// Each virtual thread's clock when it finished (ns, spawn order).
    pub end_ns: Vec<f64>,
    /// The latest of `end_ns`.
    pub makespan_ns: f64,
    /// Accesses the cost model charged.
    pub stats: CostStats,
    /// Fiber switches the executor made (a measure of its own work).
    pub switches: u64,
}

/// A virtual machine: spawn virtual threads on its CPUs, then [`run`](Vm::run).
///
/// ```
/// use std::sync::Arc;
/// use std::sync::atomic::{AtomicU64, Ordering};
/// let m = ron_vm::Machine::from_fn(2, |a, b| if a == b { 0.0 } else { 50.0 }).unwrap();
/// let mut vm = ron_vm::Vm::new(m, ron_vm::Costs::default());
/// let x = Arc::new(AtomicU64::new(0));
/// for cpu in 0..2 {
///     let x = Arc::clone(&x);
///     vm.spawn(cpu, move || {
///         ron_vm::on_rmw(&*x as *const AtomicU64 as usize);
///         x.fetch_add(1, Ordering::Relaxed);
///     });
/// }
/// let r = vm.run();
/// assert_eq!(x.load(Ordering::Relaxed), 2);
/// assert!(r.makespan_ns >= 100.0); // the second RMW waits for the line
/// ```
pub struct Vm {
    machine: Machine,
    costs: Costs,
    stack_bytes: usize,
    threads: Vec<(usize, Box<dyn FnOnce()>)>,
}

impl Vm {
    /// An empty VM of `machine`, priced by `costs`.
    pub fn new(machine: Machine, costs: Costs) -> Self {
        Vm {
            machine,
            costs,
            stack_bytes: 256 * 1024,
            threads: Vec::new(),
        }
    }

    /// Stack size of each virtual thread (default 256 KiB).
    pub fn stack_bytes(mut self, bytes: usize) -> Self {
        self.stack_bytes = bytes;
        self
    }

    /// Adds a virtual thread on virtual CPU `cpu` (below the machine's
    /// CPU count) that runs `f`; it starts at virtual time 0.
    pub fn spawn(&mut self, cpu: usize, f: impl FnOnce() + 'static) {
        assert!(
            cpu < self.machine.n(),
            "virtual CPU {cpu} of {}",
            self.machine.n()
        );
        self.threads.push((cpu, Box::new(f)));
    }

    /// Runs every virtual thread to completion. A panic in a virtual thread
    /// ends the run and resumes here (the other threads are unwound).
    ///
    /// # Panics
    /// When called from inside a running VM, when a thread panics, or when
    /// a thread passes `Costs::max_virtual_ns`.
    pub fn run(self) -> Report {
        let n = self.threads.len();
        let installed = SIM.with(|c| c.borrow().is_some());
        assert!(!installed, "ron-vm: a VM is already running on this thread");
        let sim = Sim {
            mem: Memory::new(self.machine, &self.costs),
            pause: ns_to_ps(self.costs.pause_ns),
            yield_: ns_to_ps(self.costs.yield_ns),
            max_ps: ns_to_ps(self.costs.max_virtual_ns),
            cpus: self.threads.iter().map(|t| t.0).collect(),
            clocks: vec![0; n],
            current: 0,
            in_fiber: false,
            dead: false,
            ready: (0..n).map(|i| Reverse((0, i))).collect(),
            yielders: vec![core::ptr::null(); n],
            locals: (0..n).map(|_| HashMap::new()).collect(),
            switches: 0,
        };
        SIM.with(|c| *c.borrow_mut() = Some(Box::new(sim)));
        let mut fibers: Vec<Option<Fiber>> = Vec::with_capacity(n);
        for (i, (_, f)) in self.threads.into_iter().enumerate() {
            let stack =
                DefaultStack::new(self.stack_bytes).expect("ron-vm: cannot map a fiber stack");
            fibers.push(Some(Coroutine::with_stack(
                stack,
                move |y: &Yielder<(), ()>, ()| {
                    SIM.with(|c| {
                        if let Some(s) = c.borrow_mut().as_deref_mut() {
                            s.yielders[i] = y as *const _;
                        }
                    });
                    f();
                },
            )));
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let sim = |f: &mut dyn FnMut(&mut Sim)| {
                SIM.with(|c| f(c.borrow_mut().as_deref_mut().expect("simulation state")))
            };
            loop {
                let mut next = None;
                sim(&mut |s| {
                    if let Some(Reverse((_, i))) = s.ready.pop() {
                        s.current = i;
                        s.in_fiber = true;
                        s.switches += 1;
                        next = Some(i);
                    }
                });
                let Some(i) = next else { break };
                let r = fibers[i].as_mut().expect("runnable fiber").resume(());
                sim(&mut |s| {
                    s.in_fiber = false;
                    if let CoroutineResult::Yield(()) = r {
                        s.ready.push(Reverse((s.clocks[i], i)));
                    } else {
                        s.locals[i].clear();
                    }
                });
                if matches!(r, CoroutineResult::Return(())) {
                    fibers[i] = None;
                }
            }
        }));
        // From here on the hooks do nothing, so fibers unwound by the drop
        // below (after a panic) run their destructors without the VM.
        SIM.with(|c| {
            if let Some(s) = c.borrow_mut().as_deref_mut() {
                s.dead = true;
                s.in_fiber = false;
            }
        });
        drop(fibers);
        let sim = SIM
            .with(|c| c.borrow_mut().take())
            .expect("simulation state");
        if let Err(p) = outcome {
            resume_unwind(p);
        }
        let end_ns: Vec<f64> = sim.clocks.iter().map(|&c| c as f64 / 1000.0).collect();
        Report {
            makespan_ns: end_ns.iter().copied().fold(0.0, f64::max),
            end_ns,
            stats: sim.mem.stats.clone(),
            switches: sim.switches,
        }
    }
}
