//! The executor: virtual threads as stackful fibers on one OS thread, each
//! bound to a virtual CPU with its own clock; the fiber with the smallest
//! clock always runs next, so shared-memory operations happen in one global
//! order consistent with virtual time.

use std::any::Any;
use std::cell::Cell;
use std::cmp::Reverse;
use std::collections::binary_heap::PeekMut;
use std::collections::{BinaryHeap, HashMap};
use std::panic::{AssertUnwindSafe, catch_unwind, resume_unwind};

use corosensei::stack::DefaultStack;
use corosensei::{Coroutine, CoroutineResult, Yielder};

use crate::cost::{Access, CostStats, Memory};
use crate::machine::{Costs, Machine, ns_to_ps};

type Fiber = Coroutine<(), (), (), DefaultStack>;

/// A spinner suspended in [`spin_while`]: its looks `k..spins` at
/// `at_k + (j - k) * period` all hit `line` unless a store or RMW of
/// another thread takes effect on it first.
#[derive(Debug, Clone, Copy)]
struct Park {
    line: u64,
    k: u32,
    at_k: u64,
    period: u64,
    spins: u32,
}

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
    /// Runnable fibers other than `current`, by (clock, index); the third
    /// field is the fiber's generation when the entry was pushed (an entry
    /// whose generation is not the fiber's current one is stale: the fiber
    /// was re-queued at another time since, see `wake_spinners`).
    ready: BinaryHeap<Reverse<(u64, usize, u32)>>,
    /// Per fiber: its generation (bumped when its queued entry is replaced).
    gens: Vec<u32>,
    /// Whether `spin_while` suspends spinners (`Costs::suspend_spinners`).
    suspend: bool,
    /// Per fiber: its suspended spin, if any.
    parked: Vec<Option<Park>>,
    /// Per fiber: the look at which a write woke its suspended spin.
    woke: Vec<Option<u32>>,
    /// Per line: the fibers whose suspended spin watches it.
    watchers: HashMap<u64, Vec<usize>>,
    yielders: Vec<*const Yielder<(), ()>>,
    /// Per fiber: its `FiberLocal` values (boxed, freed when it ends).
    pub(crate) locals: Vec<HashMap<usize, Box<dyn Any>>>,
    switches: u64,
}

impl Sim {
    /// Drops stale entries from the top of the ready queue.
    #[inline]
    fn drop_stale_top(&mut self) {
        while let Some(&Reverse((_, j, g))) = self.ready.peek() {
            if self.gens[j] == g {
                break;
            }
            self.ready.pop();
        }
    }

    /// The earliest runnable fiber, taken from the queue.
    fn pop_valid(&mut self) -> Option<usize> {
        self.drop_stale_top();
        self.ready.pop().map(|Reverse((_, j, _))| j)
    }

    /// A store or RMW of fiber `w` took effect on `line` at `t` (ps): every
    /// spinner suspended on the line is re-queued at its first look that
    /// comes after `(t, w)` in the global order, the look that sees the
    /// write, unless its spin ends before that.
    fn wake_spinners(&mut self, line: u64, t: u64, w: usize) {
        if self.watchers.is_empty() {
            return;
        }
        let Some(list) = self.watchers.remove(&line) else {
            return;
        };
        for f in list {
            let Some(p) = self.parked[f].take() else {
                continue;
            };
            let j = if (p.at_k, f) > (t, w) {
                p.k as u64
            } else {
                let d = t - p.at_k;
                // A look at exactly `t` comes after the write if its
                // fiber's index is higher (the order is by (time, index)).
                let after = if d.is_multiple_of(p.period) && f > w {
                    0
                } else {
                    1
                };
                p.k as u64 + d / p.period + after
            };
            if j < p.spins as u64 {
                let at = p.at_k + (j - p.k as u64) * p.period;
                self.woke[f] = Some(j as u32);
                self.clocks[f] = at;
                self.gens[f] = self.gens[f].wrapping_add(1);
                self.ready.push(Reverse((at, f, self.gens[f])));
            }
            // Otherwise its spin is over before the write: it keeps its
            // place at the spin's end.
        }
    }
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
        s.drop_stale_top();
        match s.ready.peek() {
            Some(&Reverse((c, j, _))) if (c, j) < (s.clocks[me], me) => s.yielders[me],
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
            let t = s.clocks[me];
            s.clocks[me] = s.mem.apply(s.cpus[me], kind, line, r);
            if kind != Access::Load {
                s.wake_spinners(line, t, me);
            }
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
        let t = s.clocks[me];
        s.clocks[me] = s.mem.apply(s.cpus[me], kind, line, r);
        if kind != Access::Load {
            s.wake_spinners(line, t, me);
        }
    });
}

/// Spins on the line of `addr`: up to `spins` looks, each an instrumented
/// load of `addr` (the caller's `look` does the real read right after it
/// and says whether to keep waiting) followed, while waiting, by a
/// [`pause`]. Returns the index of the look that ended the wait, or `None`
/// after `spins` looks (and pauses). The same as
///
/// ```text
/// for k in 0..spins { on_load(addr); if !look() { return Some(k) } pause() }
/// interleave(); None
/// ```
///
/// and it gives the same results, but with [`Costs::suspend_spinners`]
/// (the default) the VM does not run the looks that cannot see anything
/// new: while the caller holds the line, its looks hit and read what the
/// last one read until another thread's store or RMW takes effect on the
/// line, so it suspends the caller until then (or until its spin is over),
/// moves its clock to the first look after that write and counts the
/// skipped loads. `look` must therefore be a pure function of the value it
/// reads (no other hooks, no state beyond the value). A run with many
/// spinners costs far less host time: one fiber switch per write instead of
/// one per look.
pub fn spin_while(addr: usize, spins: u32, mut look: impl FnMut() -> bool) -> Option<u32> {
    let mut k = 0;
    while k < spins {
        on_load(addr);
        if !look() {
            return Some(k);
        }
        pause();
        k += 1;
        if k < spins {
            k = park(addr, k, spins);
        }
    }
    sync_point();
    None
}

/// Suspends the calling spinner at look `k` of `spins` on the line of
/// `addr` if it holds the line (see [`spin_while`]); returns the look to
/// run next: `k` when it did not suspend, the look a write woke it at, or
/// `spins` when its spin ran out.
fn park(addr: usize, k: u32, spins: u32) -> u32 {
    let y = with_fiber(|s, me| {
        let line = s.mem.line_of(addr);
        let period = s.mem.hit_ps() + s.pause;
        let at_k = s.clocks[me];
        let end = at_k + (spins - k) as u64 * period;
        if !s.suspend || end > s.max_ps || !s.mem.holds(s.cpus[me], line) {
            return None;
        }
        s.parked[me] = Some(Park {
            line,
            k,
            at_k,
            period,
            spins,
        });
        s.woke[me] = None;
        s.watchers.entry(line).or_default().push(me);
        s.clocks[me] = end;
        Some(s.yielders[me])
    });
    let Some(Some(y)) = y else {
        return k;
    };
    // SAFETY: as in `sync_point`: `y` is this running fiber's yielder.
    unsafe { (*y).suspend(()) };
    with_fiber(|s, me| match s.woke[me].take() {
        Some(j) => {
            s.mem.count_hit_loads((j - k) as u64);
            j
        }
        None => {
            // The spin ran out: no write woke it.
            if let Some(p) = s.parked[me].take()
                && let Some(list) = s.watchers.get_mut(&p.line)
            {
                list.retain(|&f| f != me);
                if list.is_empty() {
                    s.watchers.remove(&p.line);
                }
            }
            s.mem.count_hit_loads((spins - k) as u64);
            spins
        }
    })
    .unwrap_or(spins)
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
            ready: (0..n).map(|i| Reverse((0, i, 0))).collect(),
            gens: vec![0; n],
            suspend: self.costs.suspend_spinners,
            parked: vec![None; n],
            woke: vec![None; n],
            watchers: HashMap::new(),
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
            let Some(mut i) = st().pop_valid() else {
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
                        let mine = (s.clocks[i], i, s.gens[i]);
                        while let Some(mut top) = s.ready.peek_mut() {
                            let Reverse((c, j, g)) = *top;
                            if s.gens[j] != g {
                                PeekMut::pop(top);
                                continue;
                            }
                            if (c, j) < (mine.0, mine.1) {
                                *top = Reverse(mine);
                                i = j;
                            }
                            break;
                        }
                    }
                    CoroutineResult::Return(()) => {
                        let locals = std::mem::take(&mut s.locals[i]);
                        fibers[i] = None;
                        drop(locals);
                        match st().pop_valid() {
                            Some(next) => i = next,
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
