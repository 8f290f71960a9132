//! The scheduler's bookkeeping: which virtual thread runs on each virtual
//! CPU, the run queue of each CPU, and the threads asleep on a futex (see
//! the crate docs, "Scheduler and futex"). The executor (`exec.rs`) moves
//! threads between these states; this module only keeps them.

use std::collections::{HashMap, VecDeque};

/// Where a virtual thread is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum State {
    /// On its CPU: the executor runs it (or it is a suspended spinner).
    Running,
    /// In its CPU's run queue, runnable from `Sched::ready_at`.
    Queued,
    /// Asleep on a futex (and maybe a timer); costs no CPU time.
    Sleeping,
    /// Finished.
    Done,
}

/// Run queues, the thread on each CPU, and the futex wait lists.
pub(crate) struct Sched {
    /// Per thread: its state.
    pub(crate) state: Vec<State>,
    /// Per thread, while queued: when it became runnable (ps).
    pub(crate) ready_at: Vec<u64>,
    /// Per CPU: runnable threads waiting for it, first in line first.
    pub(crate) runq: Vec<VecDeque<usize>>,
    /// Per CPU: the thread running on it.
    pub(crate) on_cpu: Vec<Option<usize>>,
    /// Per CPU: when the running thread's time slice ends (ps).
    pub(crate) slice_end: Vec<u64>,
    /// Per CPU, while no thread runs on it: since when (ps).
    pub(crate) free_at: Vec<u64>,
    /// Per CPU: whether more than one thread was spawned on it (only then
    /// can its run queue ever be non-empty).
    pub(crate) shared: Vec<bool>,
    /// Per futex word (address): its sleepers, first to sleep first.
    pub(crate) futex: HashMap<usize, VecDeque<usize>>,
    /// Per thread, while asleep: the futex word it sleeps on.
    pub(crate) sleeps_on: Vec<Option<usize>>,
    /// Per thread: whether it left its CPU since its last memory access
    /// (another thread of its CPU may then have written a line its CPU
    /// still holds, so its next look cannot be skipped).
    pub(crate) moved: Vec<bool>,
}

impl Sched {
    /// Threads `cpus[i]` on CPUs `0..ncpu`: the first spawned on each CPU
    /// runs, the others wait in its run queue in spawn order.
    pub(crate) fn new(ncpu: usize, cpus: &[usize], slice: u64) -> Self {
        let n = cpus.len();
        let mut s = Sched {
            state: vec![State::Queued; n],
            ready_at: vec![0; n],
            runq: vec![VecDeque::new(); ncpu],
            on_cpu: vec![None; ncpu],
            slice_end: vec![slice; ncpu],
            free_at: vec![0; ncpu],
            shared: vec![false; ncpu],
            futex: HashMap::new(),
            sleeps_on: vec![None; n],
            moved: vec![false; n],
        };
        for (i, &c) in cpus.iter().enumerate() {
            if s.on_cpu[c].is_none() {
                s.on_cpu[c] = Some(i);
                s.state[i] = State::Running;
            } else {
                s.shared[c] = true;
                s.runq[c].push_back(i);
            }
        }
        s
    }

    /// The earliest time a thread of `cpu`'s run queue is runnable.
    pub(crate) fn min_ready(&self, cpu: usize) -> Option<u64> {
        self.runq[cpu].iter().map(|&t| self.ready_at[t]).min()
    }

    /// Whether a thread of `cpu`'s run queue is runnable at `t`.
    pub(crate) fn ready_by(&self, cpu: usize, t: u64) -> bool {
        self.min_ready(cpu).is_some_and(|r| r <= t)
    }

    /// When the thread running on `cpu` is preempted (the first
    /// preemption point at or after it): its slice is over and a queued
    /// thread is runnable. `None` while nobody is queued.
    pub(crate) fn preempt_at(&self, cpu: usize) -> Option<u64> {
        self.min_ready(cpu).map(|r| r.max(self.slice_end[cpu]))
    }

    /// Removes sleeper `t` from its futex's wait list.
    pub(crate) fn unlist(&mut self, t: usize) {
        if let Some(addr) = self.sleeps_on[t].take()
            && let Some(list) = self.futex.get_mut(&addr)
        {
            list.retain(|&x| x != t);
            if list.is_empty() {
                self.futex.remove(&addr);
            }
        }
    }
}
