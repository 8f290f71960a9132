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

use crate::cost::{Access, CostStats, Memory, Reservation};
use crate::machine::{Costs, Machine, ns_to_ps};
use crate::sched::{Sched, State};
use crate::stacks::{FiberStack, FixedStacks};

type Fiber = Coroutine<(), (), (), FiberStack>;

/// The most lines one suspension watches. One: a look that loads two
/// lines one hit apart can straddle a write (its first load before it, its
/// second after), and such a look cannot be replayed once the write has
/// been applied.
const MAX_WATCHED: usize = 1;

/// Look times a [`Park`] stores one by one before its pacing is constant.
const HEAD: usize = 12;

/// `Park::woke`'s line when the scheduler, not a write, ended a suspension
/// (no line number is this large).
const NO_LINE: u64 = u64::MAX;

/// A waiter suspended in [`spin_while`] or [`park_looks`]: its looks
/// `k, k + 1, .. spins - 1` all hit its lines (in `lines` order, one hit
/// apart) unless a store or RMW of another thread takes effect on one of
/// them first. Look `k + i` starts at `head[i]` for `i < nhead`, then one
/// look every `period`.
#[derive(Debug, Clone, Copy)]
struct Park {
    /// Its lines, each once, and where in a look each is last loaded (0
    /// for the first load, 1 for the second, ..): the look that sees a
    /// write to a line is the first whose last load of it comes after.
    lines: [u64; MAX_WATCHED],
    load_at: [u64; MAX_WATCHED],
    nlines: usize,
    k: u64,
    head: [u64; HEAD],
    nhead: usize,
    period: u64,
    spins: u64,
    /// The look that a write woke it at, and the line of that write
    /// (`NO_LINE`: its CPU's scheduler ended the suspension there).
    woke: Option<(u64, u64)>,
    /// The cost of one look (ps).
    look: u64,
    /// The first look whose relax is a yield, if its pacing reaches yields.
    yield_from: Option<u64>,
}

impl Park {
    /// When look `j` (`j >= k`) starts.
    #[inline]
    fn at(&self, j: u64) -> u64 {
        let i = j - self.k;
        let last = self.nhead - 1;
        if i < self.nhead as u64 {
            self.head[i as usize]
        } else {
            self.head[last] + (i - last as u64) * self.period
        }
    }

    /// The first look (`>= k`) that starts at or after `t`.
    fn first_from(&self, t: u64) -> u64 {
        for i in 0..self.nhead {
            if self.head[i] >= t {
                return self.k + i as u64;
            }
        }
        let last = self.nhead - 1;
        let d = t - self.head[last];
        self.k + last as u64 + d.div_ceil(self.period)
    }

    /// The first look whose load at `offset` after its start comes after
    /// `(t, w)` in the global order (fiber `f` is the spinner; `f != w`).
    fn first_after(&self, offset: u64, t: u64, w: usize, f: usize) -> u64 {
        for i in 0..self.nhead {
            if (self.head[i] + offset, f) > (t, w) {
                return self.k + i as u64;
            }
        }
        // Look `k + nhead - 1` and those before it come before the write;
        // from then on the looks are `period` apart.
        let last = self.nhead - 1;
        let d = t - (self.head[last] + offset);
        // A look at exactly `t` comes after the write if its fiber's index
        // is higher (the order is by (time, index)).
        let after = if d.is_multiple_of(self.period) && f > w {
            0
        } else {
            1
        };
        self.k + last as u64 + d / self.period + after
    }
}

/// How a waiting loop's relax policy spends the time between two looks,
/// from now on: the `i`-th relax (`i = 0, 1, ..`) takes `pauses * 2^i`
/// pauses while that is at most `max_pauses`; after that, one yield per
/// relax if `then_yield`, else `max_pauses` pauses. (ron-core's `Spin` is
/// `1, 1, false`, `Yield` `1, 0, true`, `Backoff` at step `s` is
/// `2^min(s, 6), 64, false`, `SpinThenYield` at step `s` is
/// `2^min(s, 7), 64, true`.)
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Pacing {
    /// Pauses of the next relax.
    pub pauses: u32,
    /// The most pauses of one relax; doubling stops there.
    pub max_pauses: u32,
    /// Whether a relax past `max_pauses` is one yield instead.
    pub then_yield: bool,
}

impl Pacing {
    /// Whether every relax from one of `p` pauses on costs the same.
    #[inline]
    fn steady(&self, p: u64) -> bool {
        p == 0 || p > self.max_pauses as u64 || (p == self.max_pauses as u64 && !self.then_yield)
    }

    /// The cost (ps) of a relax of `p` pauses (before the cap).
    #[inline]
    fn gap(&self, p: u64, pause: u64, yield_: u64) -> u64 {
        if p <= self.max_pauses as u64 {
            p * pause
        } else if self.then_yield {
            yield_
        } else {
            self.max_pauses as u64 * pause
        }
    }
}

/// The state of a running simulation, reachable from the hooks.
pub(crate) struct Sim {
    pub(crate) mem: Memory,
    pause: u64,
    yield_: u64,
    max_ps: u64,
    /// Misses one thread may have outstanding in `access_all`.
    mlp: usize,
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
    /// Whether `spin_while` and `park_looks` suspend waiters
    /// (`Costs::suspend_spinners`).
    suspend: bool,
    /// Per fiber: its suspended waiting loop, if any (until it resumes).
    parked: Vec<Option<Park>>,
    /// Per line: the fibers whose suspended waiting loop watches it.
    watchers: HashMap<u64, Vec<usize>>,
    yielders: Vec<*const Yielder<(), ()>>,
    /// Per fiber: its `FiberLocal` values (boxed, freed when it ends).
    pub(crate) locals: Vec<HashMap<usize, Box<dyn Any>>>,
    switches: u64,
    /// Run queues, the thread on each CPU, futex sleepers.
    sched: Sched,
    /// `Costs::slice_ns`, `switch_ns`, `wake_ns` in ps.
    slice: u64,
    switch: u64,
    wake: u64,
    /// `Costs::ipi_ns`, `Costs::ipi_handler_ns` in ps.
    ipi: u64,
    ipi_handler: u64,
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

    /// A store or RMW of fiber `w` took effect on `line` at `t` (ps): every
    /// waiter suspended on the line is re-queued at its first look whose
    /// load of the line comes after `(t, w)` in the global order (the look
    /// that sees the write), unless its suspension ends before that.
    fn wake_spinners(&mut self, line: u64, t: u64, w: usize) {
        if self.watchers.is_empty() {
            return;
        }
        let Some(list) = self.watchers.remove(&line) else {
            return;
        };
        let hit = self.mem.hit_ps();
        for f in list {
            let Some(p) = self.parked[f].as_mut() else {
                continue;
            };
            let pos = p.lines[..p.nlines]
                .iter()
                .position(|&l| l == line)
                .expect("a watcher watches its line");
            let j = p.first_after(p.load_at[pos] * hit, t, w, f);
            if let Some((j0, _)) = p.woke
                && j >= j0
            {
                // An earlier write to another of its lines woke it at a
                // look that comes no later.
                continue;
            }
            // A later write can still need an earlier look than the one an
            // earlier write to another line chose: it is loaded earlier in
            // a look (`load_at`).
            if j < p.spins {
                let at = p.at(j);
                p.woke = Some((j, line));
                self.clocks[f] = at;
                self.gens[f] = self.gens[f].wrapping_add(1);
                self.ready.push(Reverse((at, f, self.gens[f])));
            } else {
                // Its suspension is over before the write: it keeps its
                // place at the end, and no longer watches this line.
                p.woke = Some((p.spins, line));
            }
        }
        // A re-queued waiter leaves a stale entry far down the queue (at
        // the end of its suspension); drop them before they pile up.
        if self.ready.len() > 2 * self.gens.len() + 64 {
            let gens = &self.gens;
            self.ready.retain(|&Reverse((_, j, g))| gens[j] == g);
        }
    }

    /// Suspends fiber `me` (running) on `lines` from look `k` on, paced by
    /// `pacing` with each look costing one hit per line, for at most the
    /// looks before `spins` (and before the time limit). None when it
    /// cannot: suspension off, a line it does not hold, or no look to skip.
    fn park(
        &mut self,
        me: usize,
        lines: &[u64],
        k: u64,
        spins: u64,
        pacing: Pacing,
    ) -> Option<*const Yielder<(), ()>> {
        if !self.suspend || lines.is_empty() || lines.len() > MAX_WATCHED || k >= spins {
            return None;
        }
        let cpu = self.cpus[me];
        if !lines.iter().all(|&l| self.mem.holds(cpu, l)) {
            return None;
        }
        if self.sched.moved[me] {
            // Off its CPU since its last look: another thread of the CPU
            // may have written the line, which the CPU still holds.
            return None;
        }
        let look = lines.len() as u64 * self.mem.hit_ps();
        let mut head = [0; HEAD];
        head[0] = self.clocks[me];
        let mut nhead = 1;
        let mut p = pacing.pauses as u64;
        while !pacing.steady(p) {
            if nhead == HEAD {
                return None;
            }
            head[nhead] = head[nhead - 1] + look + pacing.gap(p, self.pause, self.yield_);
            nhead += 1;
            p *= 2;
        }
        let period = look + pacing.gap(p, self.pause, self.yield_);
        if period == 0 {
            return None;
        }
        // The steady relax is a yield from look `k + nhead - 1` on.
        let yield_from =
            (pacing.then_yield && p > pacing.max_pauses as u64).then_some(k + nhead as u64 - 1);
        let mut park = Park {
            lines: [0; MAX_WATCHED],
            load_at: [0; MAX_WATCHED],
            nlines: 0,
            k,
            head,
            nhead,
            period,
            spins,
            woke: None,
            look,
            yield_from,
        };
        // The suspension ends no later than the last look that starts
        // within the time limit (the looks and relaxes it skips stay
        // below it, so none of them would have stopped the run).
        let last = nhead - 1;
        let limit = if head[last] <= self.max_ps {
            k + last as u64 + (self.max_ps - head[last]) / period
        } else {
            match head.iter().take(nhead).position(|&a| a > self.max_ps) {
                Some(0) | None => return None,
                Some(i) => k + i as u64 - 1,
            }
        };
        park.spins = spins.min(limit);
        if self.sched.shared[cpu] {
            park.spins = park.spins.min(self.sched_limit(cpu, &park));
        }
        if park.spins <= k {
            return None;
        }
        for (i, &l) in lines.iter().enumerate() {
            match park.lines[..park.nlines].iter().position(|&m| m == l) {
                Some(at) => park.load_at[at] = i as u64,
                None => {
                    park.lines[park.nlines] = l;
                    park.load_at[park.nlines] = i as u64;
                    park.nlines += 1;
                    self.watchers.entry(l).or_default().push(me);
                }
            }
        }
        self.clocks[me] = park.at(park.spins);
        self.parked[me] = Some(park);
        Some(self.yielders[me])
    }

    /// The first look of suspended waiter `p` on `cpu` that must run for
    /// real because of the scheduler: the first that starts once its slice
    /// is over and a queued thread is runnable (a preemption point), or the
    /// first whose relax is a yield that starts once a queued thread is
    /// runnable (the yield switches). `u64::MAX` while nobody is queued.
    fn sched_limit(&self, cpu: usize, p: &Park) -> u64 {
        let Some(at) = self.sched.preempt_at(cpu) else {
            return u64::MAX;
        };
        let mut lim = p.first_from(at);
        if let (Some(y), Some(ready)) = (p.yield_from, self.sched.min_ready(cpu)) {
            lim = lim.min(p.first_from(ready.saturating_sub(p.look)).max(y));
        }
        lim
    }

    /// A thread was queued on `cpu`: if its running thread is a suspended
    /// waiter, its suspension ends at the first look the scheduler now
    /// needs run for real (see `sched_limit`).
    fn cut_suspension(&mut self, cpu: usize) {
        let Some(r) = self.sched.on_cpu[cpu] else {
            return;
        };
        let Some(p) = self.parked[r].as_ref() else {
            return;
        };
        let lim = self.sched_limit(cpu, p);
        let end = p.woke.map_or(p.spins, |w| w.0);
        if lim < end {
            let at = p.at(lim);
            if let Some(p) = self.parked[r].as_mut() {
                p.woke = Some((lim, NO_LINE));
            }
            self.clocks[r] = at;
            self.gens[r] = self.gens[r].wrapping_add(1);
            self.ready.push(Reverse((at, r, self.gens[r])));
        }
    }

    /// Takes running thread `me` off its CPU at its clock, into state
    /// `to` (`Queued`: at the back of the run queue, runnable at once;
    /// `Sleeping`), and gives the CPU to the next thread.
    fn off_cpu(&mut self, me: usize, to: State) {
        let (cpu, t) = (self.cpus[me], self.clocks[me]);
        self.sched.state[me] = to;
        self.sched.moved[me] = true;
        if to == State::Queued {
            self.sched.ready_at[me] = t;
            self.sched.runq[cpu].push_back(me);
        }
        self.gens[me] = self.gens[me].wrapping_add(1);
        self.sched.on_cpu[cpu] = None;
        self.sched.free_at[cpu] = t;
        self.run_next(cpu, t);
    }

    /// CPU `cpu` is free from `t`: the first queued thread runnable by the
    /// end of a switch (else the one runnable first) runs from then, with
    /// a new time slice.
    fn run_next(&mut self, cpu: usize, t: u64) {
        let sw = t + self.switch;
        let q = &self.sched.runq[cpu];
        let pick = q
            .iter()
            .position(|&b| self.sched.ready_at[b] <= sw)
            .or_else(|| (0..q.len()).min_by_key(|&i| (self.sched.ready_at[q[i]], i)));
        let Some(b) = pick.and_then(|i| self.sched.runq[cpu].remove(i)) else {
            return;
        };
        let at = sw.max(self.sched.ready_at[b]).max(self.clocks[b]);
        self.start_on(cpu, b, at);
    }

    /// Thread `b` runs on `cpu` from `at` (a new slice).
    fn start_on(&mut self, cpu: usize, b: usize, at: u64) {
        self.clocks[b] = at;
        self.sched.state[b] = State::Running;
        self.sched.on_cpu[cpu] = Some(b);
        self.sched.slice_end[cpu] = at + self.slice;
        self.gens[b] = self.gens[b].wrapping_add(1);
        self.ready.push(Reverse((at, b, self.gens[b])));
    }

    /// Sleeping thread `th` is woken, runnable from `ready`: it runs at
    /// once on its CPU if that is free, else it joins the run queue.
    fn make_runnable(&mut self, th: usize, ready: u64) {
        self.sched.unlist(th);
        let cpu = self.cpus[th];
        if self.sched.on_cpu[cpu].is_none() {
            let at = ready.max(self.clocks[th]).max(self.sched.free_at[cpu]);
            self.start_on(cpu, th, at);
        } else {
            self.sched.state[th] = State::Queued;
            self.sched.ready_at[th] = ready.max(self.clocks[th]);
            self.sched.runq[cpu].push_back(th);
            self.gens[th] = self.gens[th].wrapping_add(1);
            self.cut_suspension(cpu);
        }
    }

    /// The next fiber to run: the earliest valid entry of the ready queue
    /// whose thread runs; a sleeper's entry is its timer, which wakes it.
    /// `None` when nothing is left to run.
    ///
    /// # Panics
    /// When threads are left and all of them sleep without a timer (a
    /// lost wake-up).
    fn next_fiber(&mut self) -> Option<usize> {
        loop {
            self.drop_stale_top();
            let Some(Reverse((c, j, _))) = self.ready.pop() else {
                let asleep = self
                    .sched
                    .state
                    .iter()
                    .filter(|&&s| s == State::Sleeping)
                    .count();
                assert!(
                    asleep == 0,
                    "ron-vm: {asleep} virtual threads sleep on a futex and nothing else runs (a lost wake-up?)"
                );
                return None;
            };
            match self.sched.state[j] {
                State::Running => return Some(j),
                State::Sleeping => self.time_out(j, c),
                State::Queued | State::Done => {}
            }
        }
    }

    /// The timer of sleeper `j` fired at `at`.
    fn time_out(&mut self, j: usize, at: u64) {
        self.make_runnable(j, at + self.wake);
    }

    /// Fiber `me` resumes from a suspension: the look it runs next.
    fn unpark(&mut self, me: usize) -> u64 {
        let p = self.parked[me].take().expect("a suspended fiber");
        let (j, woken_by) = match p.woke {
            Some(w) => (w.0, Some(w.1)),
            None => (p.spins, None),
        };
        for &l in &p.lines[..p.nlines] {
            if Some(l) == woken_by {
                continue; // that list went with the write
            }
            // (Lists of lines whose writes came earlier are gone too; a
            // list made since does not hold this fiber.)
            if let Some(list) = self.watchers.get_mut(&l) {
                list.retain(|&f| f != me);
                if list.is_empty() {
                    self.watchers.remove(&l);
                }
            }
        }
        self.mem.count_hit_loads((j - p.k) * p.nlines as u64);
        j
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

/// A preemption point (the caller is synchronized, at its own virtual
/// time): if its time slice is over and a thread queued on its CPU is
/// runnable, the caller goes to the back of the run queue and returns when
/// it runs again.
#[inline]
fn preempt_point() {
    let y = with_fiber(|s, me| {
        let cpu = s.cpus[me];
        if !s.sched.shared[cpu] {
            return None;
        }
        match s.sched.preempt_at(cpu) {
            Some(at) if s.clocks[me] >= at => {
                s.off_cpu(me, State::Queued);
                Some(s.yielders[me])
            }
            _ => None,
        }
    });
    if let Some(Some(y)) = y {
        // SAFETY: as in `sync_point`: `y` is this running fiber's yielder.
        unsafe { (*y).suspend(()) };
    }
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
    preempt_point();
    let pending = with_fiber(|s, me| {
        s.sched.moved[me] = false;
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

/// Most addresses one [`access_all`] takes: a scan of up to this many
/// lines is one sliding window of misses, as a core's run of independent
/// loads or prefetches is (a scan split over several calls would wait for
/// each part's last miss before it issues the next part's first).
pub const ACCESS_ALL_MAX: usize = 1024;

/// Independent accesses of `kind` to every address of `addrs` (at most
/// [`ACCESS_ALL_MAX`]), issued together by the calling virtual thread: up to
/// [`Costs::mlp`] misses are outstanding at once (a further miss is issued
/// when the earliest outstanding one has arrived), each takes effect when
/// its line arrives, and the clock moves to the last completion. With
/// `mlp` 1 it is the same as `access` on each address in turn. The caller
/// performs the real operations after the call (the addresses must not
/// depend on each other's values, as with a CPU's independent misses).
/// Does nothing outside a VM.
pub fn access_all(addrs: &[usize], kind: Access) {
    assert!(
        addrs.len() <= ACCESS_ALL_MAX,
        "access_all: at most {ACCESS_ALL_MAX} addresses"
    );
    if !sync_point() {
        return;
    }
    preempt_point();
    let Some(mlp) = with_fiber(|s, _| s.mlp) else {
        return;
    };
    if mlp == 1 {
        for &a in addrs {
            access(a, kind);
        }
        return;
    }
    // Issue: each miss at the issue time, or when an outstanding one has
    // arrived if `mlp` are out; hits take effect at once.
    let mut out: Vec<(u64, u64, Reservation)> = Vec::with_capacity(addrs.len());
    let mut done = 0u64;
    with_fiber(|s, me| {
        s.sched.moved[me] = false;
        let t0 = s.clocks[me];
        let mut arrivals: Vec<u64> = Vec::new();
        done = t0;
        for &a in addrs {
            let line = s.mem.line_of(a);
            if out.iter().any(|o| o.0 == line) {
                continue; // one request per line
            }
            arrivals.sort_unstable();
            let issue = if arrivals.len() >= mlp {
                t0.max(arrivals[arrivals.len() - mlp])
            } else {
                t0
            };
            let r = s.mem.reserve(s.cpus[me], kind, line, issue);
            if r.hit {
                let t = s.clocks[me];
                let end = s.mem.apply(s.cpus[me], kind, line, r);
                done = done.max(end);
                if kind != Access::Load {
                    s.wake_spinners(line, t, me);
                }
            } else {
                arrivals.push(r.exec_at);
                out.push((line, r.exec_at, r));
            }
        }
    });
    out.sort_by_key(|o| o.1);
    for (line, at, r) in out {
        // Each operation takes effect when its line arrives, in the global
        // order of virtual time.
        with_fiber(|s, me| s.clocks[me] = s.clocks[me].max(at));
        sync_point();
        with_fiber(|s, me| {
            let t = s.clocks[me];
            let end = s.mem.apply(s.cpus[me], kind, line, r);
            done = done.max(end);
            if kind != Access::Load {
                s.wake_spinners(line, t, me);
            }
        });
    }
    with_fiber(|s, me| s.clocks[me] = s.clocks[me].max(done));
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
    const SPIN: Pacing = Pacing {
        pauses: 1,
        max_pauses: 1,
        then_yield: false,
    };
    suspend(&[addr], k as u64, spins as u64, SPIN) as u32
}

/// Suspends the calling waiter at look `k` (see `Sim::park`) and returns
/// the look it runs next (`k` if it did not suspend).
fn suspend(addrs: &[usize], k: u64, spins: u64, pacing: Pacing) -> u64 {
    if addrs.len() > MAX_WATCHED {
        return k;
    }
    let y = with_fiber(|s, me| {
        let mut lines = [0; MAX_WATCHED];
        for (l, &a) in lines.iter_mut().zip(addrs) {
            *l = s.mem.line_of(a);
        }
        s.park(me, &lines[..addrs.len()], k, spins, pacing)
    });
    let Some(Some(y)) = y else {
        return k;
    };
    // SAFETY: as in `sync_point`: `y` is this running fiber's yielder.
    unsafe { (*y).suspend(()) };
    with_fiber(|s, me| s.unpark(me)).unwrap_or(spins)
}

/// Lets the VM skip the looks of a waiting loop that cannot see anything
/// new; returns how many it skipped (each one look and one relax: the
/// caller advances its relax policy by that many relaxes without running
/// them). Call it right after a relax of a loop of this shape:
///
/// ```text
/// loop {
///     look: one instrumented load of `addr`, and nothing else that reaches
///           the VM while it waits; stop if what it read says so
///     relax: pauses and yields as `pacing` says (nothing else)
/// }
/// ```
///
/// where the look decides only from the value it reads, and, with the
/// value the atomic holds after the caller's last access to it (made by
/// the look just before this relax), would wait again: true when the look
/// only loads; a look that may also issue an RMW on the line must wait
/// whenever that RMW fails (a TTAS look whose CAS failed finds the lock
/// taken). While the caller holds the line, no other thread has written it
/// since that access, each look hits (`hit_ns`) and reads the same value
/// until another thread's store or RMW takes effect on the line, so with
/// [`Costs::suspend_spinners`] (the default) the VM suspends the caller
/// until then, moves its clock to the first look that comes after the
/// write in the (time, thread) order and counts the skipped loads: the
/// results are those of running every look. Without suspension, without
/// the line, or outside a VM it returns 0 at once.
pub fn park_looks(addr: usize, pacing: Pacing) -> u64 {
    suspend(&[addr], 0, u64::MAX, pacing)
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

/// `sched_yield`: costs `Costs::yield_ns`; if then a thread queued on the
/// caller's CPU is runnable, the caller goes to the back of the run queue
/// and that thread runs (after a switch, `Costs::switch_ns`); else it
/// returns at once. `std::thread::yield_now` outside a VM.
#[inline]
pub fn yield_now() {
    let shared = with_fiber(|s, me| s.sched.shared[s.cpus[me]]);
    match shared {
        None => std::thread::yield_now(),
        Some(false) => {
            advance(|s| s.yield_);
        }
        Some(true) => {
            // At its own virtual time: the run queue as it is then.
            sync_point();
            advance(|s| s.yield_);
            let y = with_fiber(|s, me| {
                let cpu = s.cpus[me];
                if s.sched.ready_by(cpu, s.clocks[me]) {
                    s.off_cpu(me, State::Queued);
                    Some(s.yielders[me])
                } else {
                    None
                }
            });
            if let Some(Some(y)) = y {
                // SAFETY: as in `sync_point`: `y` is this running fiber's yielder.
                unsafe { (*y).suspend(()) };
            }
        }
    }
}

/// `membarrier(MEMBARRIER_CMD_PRIVATE_EXPEDITED)`: a full barrier on
/// every CPU running a thread of the process, by an IPI to each. The
/// caller pays one syscall (`Costs::yield_ns`) and `Costs::ipi_ns` per
/// other CPU that runs a thread now (one after the other: the cost grows
/// with the CPUs running the process; the kernel overlaps some of these
/// deliveries, so this is the pessimistic end). Each of those CPUs' running
/// threads loses `Costs::ipi_handler_ns` (the handler); a waiter the VM
/// has suspended ([`spin_while`], [`park_looks`]) is not delayed (its
/// looks see nothing new), nor is a thread whose miss is in flight (the
/// miss absorbs it). Returns the CPUs interrupted (0 outside a VM: then it
/// only runs a `SeqCst` fence).
pub fn membarrier() -> usize {
    if !sync_point() {
        core::sync::atomic::fence(core::sync::atomic::Ordering::SeqCst);
        return 0;
    }
    with_fiber(|s, me| {
        let mine = s.cpus[me];
        let mut k = 0;
        for cpu in 0..s.sched.on_cpu.len() {
            let Some(r) = s.sched.on_cpu[cpu] else {
                continue;
            };
            if cpu == mine || r == me {
                continue;
            }
            k += 1;
            if s.parked[r].is_none() {
                s.clocks[r] += s.ipi_handler;
                s.gens[r] = s.gens[r].wrapping_add(1);
                s.ready.push(Reverse((s.clocks[r], r, s.gens[r])));
            }
        }
        s.clocks[me] += s.yield_ + k as u64 * s.ipi;
        k
    })
    .unwrap_or(0)
}

/// `FUTEX_WAIT`: the kernel loads the word at `addr` (a priced load);
/// if `unchanged()` (the caller's real read of it, right after) is true,
/// the calling virtual thread sleeps on `addr` until [`futex_wake`] wakes
/// it or `timeout` (virtual) passes: it costs no CPU time and its CPU runs
/// the next queued thread. Either way the call costs one syscall
/// (`Costs::yield_ns`) before the thread sleeps or returns; a woken thread
/// runs `Costs::wake_ns` after the wake (or its timer), later if its CPU
/// is busy. May return early, as a futex may; the caller re-checks.
/// Returns false outside a VM (nothing done).
pub fn futex_wait(
    addr: usize,
    unchanged: impl FnOnce() -> bool,
    timeout: Option<core::time::Duration>,
) -> bool {
    if !in_vm() {
        return false;
    }
    on_load(addr);
    if !unchanged() {
        advance(|s| s.yield_);
        return true;
    }
    let y = with_fiber(|s, me| {
        s.clocks[me] += s.yield_;
        let at = timeout.map(|d| {
            let ps = u64::try_from(d.as_nanos())
                .unwrap_or(u64::MAX)
                .saturating_mul(1000);
            s.clocks[me].saturating_add(ps)
        });
        s.sched.futex.entry(addr).or_default().push_back(me);
        s.sched.sleeps_on[me] = Some(addr);
        s.off_cpu(me, State::Sleeping);
        if let Some(at) = at.filter(|&at| at <= s.max_ps) {
            // Its timer: an entry of the ready queue while it sleeps.
            s.ready.push(Reverse((at, me, s.gens[me])));
        }
        s.yielders[me]
    });
    if let Some(y) = y {
        // SAFETY: as in `sync_point`: `y` is this running fiber's yielder.
        unsafe { (*y).suspend(()) };
    }
    true
}

/// `FUTEX_WAKE`: wakes up to `n` threads sleeping on `addr` (the first to
/// sleep first), each runnable `Costs::wake_ns` after this call starts;
/// costs the caller one syscall (`Costs::yield_ns`). Returns how many it
/// woke (0 outside a VM).
pub fn futex_wake(addr: usize, n: u32) -> u32 {
    if !sync_point() {
        return 0;
    }
    with_fiber(|s, me| {
        let t = s.clocks[me];
        s.clocks[me] += s.yield_;
        let mut woke = 0;
        while woke < n {
            let Some(th) = s.sched.futex.get_mut(&addr).and_then(|l| l.pop_front()) else {
                break;
            };
            s.sched.sleeps_on[th] = None;
            s.make_runnable(th, t + s.wake);
            woke += 1;
        }
        if s.sched.futex.get(&addr).is_some_and(|l| l.is_empty()) {
            s.sched.futex.remove(&addr);
        }
        woke
    })
    .unwrap_or(0)
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

/// What the cost model has charged so far in the running VM, up to the
/// caller's virtual time (`None` outside a VM). A measurement only: free,
/// and no clock or line state changes, so a workload may read it anywhere
/// (e.g. line transfers per lock handover).
pub fn cost_stats() -> Option<CostStats> {
    with_fiber(|s, _| s.mem.stats.clone())
}

/// What every line moved so far in the running VM cost, up to the
/// caller's virtual time (`None` outside a VM): a measurement, like
/// [`cost_stats`], for a per-line breakdown of a lock's handover.
pub fn line_costs() -> Option<Vec<crate::LineCost>> {
    with_fiber(|s, _| s.mem.line_costs())
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
    fixed_stacks: bool,
    threads: Vec<(usize, Box<dyn FnOnce()>)>,
}

impl Vm {
    /// An empty VM of `machine`, priced by `costs`.
    pub fn new(machine: Machine, costs: Costs) -> Self {
        Vm {
            machine,
            costs,
            stack_bytes: 256 * 1024,
            fixed_stacks: false,
            threads: Vec::new(),
        }
    }

    /// Stack size of each virtual thread (default 256 KiB).
    pub fn stack_bytes(mut self, bytes: usize) -> Self {
        self.stack_bytes = bytes;
        self
    }

    /// Puts virtual thread `i`'s stack at the same virtual address in every
    /// run that asks for it (default: off, stacks go where the OS maps
    /// them): with it, code that derives something from a stack address
    /// (a seed from a queue node's address; which stack objects share a
    /// line) gives the same run whatever ran before in the process and
    /// whatever the address-space layout (ASLR). Such runs take turns
    /// within a process. Where the address is taken or the platform has
    /// none (only 64-bit Unix has it), the run uses ordinary stacks and
    /// says so once on stderr.
    pub fn fixed_stacks(mut self, yes: bool) -> Self {
        self.fixed_stacks = yes;
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
        let cpus: Vec<usize> = self.threads.iter().map(|t| t.0).collect();
        let sched = Sched::new(
            self.machine.n(),
            &cpus,
            ns_to_ps(self.costs.slice_ns).max(1),
        );
        let sim = Box::new(Sim {
            mem: Memory::new(self.machine, &self.costs),
            pause: ns_to_ps(self.costs.pause_ns),
            yield_: ns_to_ps(self.costs.yield_ns),
            max_ps: ns_to_ps(self.costs.max_virtual_ns),
            mlp: self.costs.mlp.max(1),
            cpus,
            clocks: vec![0; n],
            current: 0,
            in_fiber: false,
            dead: false,
            ready: (0..n)
                .filter(|&i| sched.state[i] == State::Running)
                .map(|i| Reverse((0, i, 0)))
                .collect(),
            gens: vec![0; n],
            suspend: self.costs.suspend_spinners,
            parked: vec![None; n],
            watchers: HashMap::new(),
            yielders: vec![core::ptr::null(); n],
            locals: (0..n).map(|_| HashMap::new()).collect(),
            switches: 0,
            sched,
            slice: ns_to_ps(self.costs.slice_ns).max(1),
            switch: ns_to_ps(self.costs.switch_ns),
            wake: ns_to_ps(self.costs.wake_ns),
            ipi: ns_to_ps(self.costs.ipi_ns),
            ipi_handler: ns_to_ps(self.costs.ipi_handler_ns),
        });
        let sim = Box::into_raw(sim);
        SIM.with(|c| c.set(sim));
        let fixed = if self.fixed_stacks {
            let f = FixedStacks::map(n, self.stack_bytes);
            if f.is_none() {
                static SAID: std::sync::Once = std::sync::Once::new();
                SAID.call_once(|| {
                    eprintln!("ron-vm: fixed stack addresses unavailable; runs use ordinary stacks")
                });
            }
            f
        } else {
            None
        };
        let mut fibers: Vec<Option<Fiber>> = Vec::with_capacity(n);
        for (i, (_, f)) in self.threads.into_iter().enumerate() {
            let stack = match &fixed {
                Some(s) => s.stack(i),
                None => FiberStack::Default(
                    DefaultStack::new(self.stack_bytes).expect("ron-vm: cannot map a fiber stack"),
                ),
            };
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
            let Some(mut i) = st().next_fiber() else {
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
                    CoroutineResult::Yield(()) if s.sched.state[i] != State::Running => {
                        // It left its CPU (queued or asleep).
                        match s.next_fiber() {
                            Some(next) => i = next,
                            None => break,
                        }
                    }
                    CoroutineResult::Yield(()) => {
                        // Put `i` back and take the earliest: one sift.
                        let mine = (s.clocks[i], i, s.gens[i]);
                        let mut took = None;
                        while let Some(mut top) = s.ready.peek_mut() {
                            let Reverse((c, j, g)) = *top;
                            if s.gens[j] != g {
                                PeekMut::pop(top);
                                continue;
                            }
                            if (c, j) < (mine.0, mine.1) {
                                *top = Reverse(mine);
                                took = Some((c, j));
                            }
                            break;
                        }
                        if let Some((c, j)) = took {
                            if s.sched.state[j] == State::Running {
                                i = j;
                            } else {
                                // A sleeper's timer: it fires now.
                                s.time_out(j, c);
                                match s.next_fiber() {
                                    Some(next) => i = next,
                                    None => break,
                                }
                            }
                        }
                    }
                    CoroutineResult::Return(()) => {
                        let locals = std::mem::take(&mut s.locals[i]);
                        fibers[i] = None;
                        drop(locals);
                        let s = st();
                        let cpu = s.cpus[i];
                        s.sched.state[i] = State::Done;
                        s.sched.on_cpu[cpu] = None;
                        s.sched.free_at[cpu] = s.clocks[i];
                        s.run_next(cpu, s.clocks[i]);
                        match s.next_fiber() {
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
        // After the fibers: their stacks live in it.
        drop(fixed);
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
