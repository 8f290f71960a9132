//! The executor: virtual threads as stackful fibers on one OS thread, each
//! bound to a virtual CPU with its own clock; the fiber with the smallest
//! clock always runs next, so shared-memory operations happen in one global
//! order consistent with virtual time.

use std::any::Any;
use std::cell::Cell;
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
    /// Per fiber: its `FiberLocal` values (boxed, freed when it ends).
    pub(crate) locals: Vec<HashMap<usize, Box<dyn Any>>>,
    switches: u64,
}

thread_local! {
    /// The simulation running on this OS thread (null when none). Set and
    /// cleared by `Vm::run`, which owns the box.
    static SIM: Cell<*mut Sim> = const { Cell::new(core::ptr::null_mut()) };
}

/// The running simulation's state, if the caller is one of its fibers.
///
/// # Safety
/// The caller must not keep the reference across a fiber switch (a
/// `suspend`) or a call that may reach another hook: every hook takes its
/// own short-lived reference, and the scheduler uses the state only while
/// no fiber runs, so no two references are live at once.
#[inline]
unsafe fn fiber_sim<'a>() -> Option<&'a mut Sim> {
    let p = SIM.with(|c| c.get());
    if p.is_null() {
        return None;
    }
    // SAFETY: `p` points to the box `Vm::run` owns until it clears `SIM`
    // (same OS thread); exclusivity is the caller's contract.
    let s = unsafe { &mut *p };
    (s.in_fiber && !s.dead).then_some(s)
}

/// Runs `f` on the running simulation's state if the caller is one of its
/// fibers; `None` otherwise (outside any VM, or after the run ended).
/// `f` must not call back into the VM.
#[inline]
pub(crate) fn with_fiber<R>(f: impl FnOnce(&mut Sim, usize) -> R) -> Option<R> {
    // SAFETY: the reference lives for this call only and `f` does not
    // re-enter the VM (crate-internal closures only).
    let s = unsafe { fiber_sim() }?;
    let me = s.current;
    Some(f(s, me))
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
    let y = {
        // SAFETY: the reference is dropped before the suspend below.
        let Some(s) = (unsafe { fiber_sim() }) else {
            return false;
        };
        let me = s.current;
        match s.ready.peek() {
            Some(&Reverse(first)) if first < (s.clocks[me], me) => s.yielders[me],
            _ => return true,
        }
    };
    // SAFETY: `y` is the yielder passed to this fiber's body (stored by
    // `spawn`'s wrapper when the body started); the body is still running,
    // since we are on its stack, so the yielder is alive.
    unsafe { (*y).suspend(()) };
    true
}

/// Charges an access to `addr` by the calling virtual thread at its virtual
/// time (after every thread with an earlier clock has run up to it); the
/// access takes effect when the line is there (at once for a hit), and the
/// clock moves to its completion. Does nothing outside a VM.
#[inline]
pub fn access(addr: usize, kind: Access) {
    if !sync_point() {
        return;
    }
    let pending = with_fiber(|s, me| {
        let line = s.mem.line_of(addr);
        let r = s.mem.reserve(s.cpus[me], kind, line, s.clocks[me]);
        if r.hit {
            s.clocks[me] = s.mem.apply(s.cpus[me], kind, line, r);
            None
        } else {
            s.clocks[me] = r.exec_at;
            Some((line, r))
        }
    });
    let Some(Some((line, r))) = pending else {
        return;
    };
    // Wait for the line: the operation takes effect when it arrives.
    sync_point();
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
        let installed = !SIM.with(|c| c.get()).is_null();
        assert!(!installed, "ron-vm: a VM is already running on this thread");
        let sim = Box::new(Sim {
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
        });
        let sim = Box::into_raw(sim);
        SIM.with(|c| c.set(sim));
        let mut fibers: Vec<Option<Fiber>> = Vec::with_capacity(n);
        for (i, (_, f)) in self.threads.into_iter().enumerate() {
            let stack =
                DefaultStack::new(self.stack_bytes).expect("ron-vm: cannot map a fiber stack");
            fibers.push(Some(Coroutine::with_stack(
                stack,
                move |y: &Yielder<(), ()>, ()| {
                    with_fiber(|s, me| {
                        debug_assert_eq!(me, i);
                        s.yielders[me] = y as *const _;
                    });
                    f();
                },
            )));
        }
        let outcome = catch_unwind(AssertUnwindSafe(|| {
            let st = || {
                // SAFETY: `sim` is the live box from above. No fiber runs
                // while the scheduler holds this reference; it is
                // re-derived after every resume, and hooks take theirs
                // only while a fiber runs.
                unsafe { &mut *sim }
            };
            let Some(Reverse((_, mut i))) = st().ready.pop() else {
                return;
            };
            loop {
                let s = st();
                s.current = i;
                s.in_fiber = true;
                s.switches += 1;
                let r = fibers[i].as_mut().expect("runnable fiber").resume(());
                let s = st();
                s.in_fiber = false;
                match r {
                    CoroutineResult::Yield(()) => {
                        // Put `i` back and take the earliest: one sift.
                        let Some(mut top) = s.ready.peek_mut() else {
                            continue;
                        };
                        let Reverse(next) = *top;
                        *top = Reverse((s.clocks[i], i));
                        drop(top);
                        i = next.1;
                    }
                    CoroutineResult::Return(()) => {
                        let locals = std::mem::take(&mut s.locals[i]);
                        fibers[i] = None;
                        drop(locals);
                        match st().ready.pop() {
                            Some(Reverse((_, next))) => i = next,
                            None => break,
                        }
                    }
                }
            }
        }));
        // From here on the hooks do nothing, so fibers unwound by the drop
        // below (after a panic) run their destructors without the VM.
        // SAFETY: no fiber runs; see above.
        unsafe {
            (*sim).dead = true;
            (*sim).in_fiber = false;
        }
        drop(fibers);
        SIM.with(|c| c.set(core::ptr::null_mut()));
        // SAFETY: `sim` came from `Box::into_raw` above and nothing refers
        // to it any more (`SIM` is cleared, the fibers are gone).
        let sim = unsafe { Box::from_raw(sim) };
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
