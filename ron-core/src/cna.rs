//! [`Cna`]: the compact NUMA-aware lock (Dice & Kogan, EuroSys'19) in the
//! waiters-only queue shape (as in CNA v15 for Linux qspinlock and ShflLock).
//!
//! One word of lock state, like [`Mcs`](crate::Mcs). Waiters queue FIFO;
//! the queue *head*, while it waits for the lock word (off the critical
//! path), moves waiters of other groups that stand in front of a waiter of
//! its own group to a *secondary queue*, so the lock tends to stay inside a
//! group (NUMA node by default; any grouping installed with
//! [`groups::install`](crate::groups::install), e.g. L3/CCX). The secondary
//! queue travels with the head role and is spliced back in front of the
//! main queue when the next waiter is of another group, when the main queue
//! empties, or after `2^FLUSH_LOG2` local handovers (the paper's long-term
//! fairness threshold, as a counter). With `SHUFFLE_REDUCTION` a head whose
//! secondary queue is empty reorders only with probability 1/128 (a
//! xorshift32 draw whose state is passed along with the head role), as the
//! paper's shuffle reduction: little shuffling under light contention.
//! Details and the node-lifetime argument: `mcs_queue.rs`.
//!
//! A waiter's group is `groups::group_of(hint::current_cpu())`, read once
//! when it queues. Wrong or changing groups only cost locality.
//!
//! ## States
//! The lock word's rows are [`Mcs`](crate::mcs)'s (row "free" also means no
//! secondary queue; in row "held, queued" the head may be reordering its
//! successors). The secondary queue is owned by whoever holds the head role;
//! its nodes still spin on their own `head` flags, so moving them is
//! invisible to them.
//!
//! ## Guarantees
//! * Mutual exclusion: as [`Mcs`](crate::Mcs) (reordering never touches the
//!   lock bit).
//! * Progress.
//! * Bounded waiting: a waiter moved to the secondary queue re-enters the
//!   main queue in front of everyone after at most `2^FLUSH_LOG2` local
//!   handovers (sooner if its group comes up or the queue drains); once in
//!   the main queue it is served in order unless moved again, and every
//!   move is followed by such a flush. Nobody barges past a queue.
//! * Panics: as [`Mcs`](crate::Mcs): a `Relax` panic while queued aborts
//!   the process; unlock runs no user code.
//!
//! ## Cost
//! Bytes per lock: **8**. Per waiting thread: a 128-byte node on its stack
//! while it waits. Uncontended lock + unlock: one CAS and one `fetch_and`
//! (the hint is read only on the slow path).
//!
//! ```
//! use ron_core::Cna;
//! ron_core::groups::install(&[0, 0, 1, 1]).unwrap(); // CPUs 0-1 node 0, 2-3 node 1
//! let m: lock_api::Mutex<Cna, u64> = lock_api::Mutex::new(0);
//! std::thread::scope(|s| {
//!     for _ in 0..4 {
//!         s.spawn(|| for _ in 0..500 { *m.lock() += 1 });
//!     }
//! });
//! assert_eq!(*m.lock(), 2000);
//! ```

use core::marker::PhantomData;

use crate::mcs_queue::{CnaCfg, McsQueue};
use crate::relax::{DefaultRelax, Relax};

/// Compact NUMA-aware lock: an MCS queue that keeps the lock inside a
/// group (NUMA node, CCX) for a bounded number of handovers. States,
/// guarantees and cost: the [module docs](self).
///
/// `FLUSH_LOG2`: the secondary queue is flushed after `2^FLUSH_LOG2` local
/// handovers (default 16 as in the paper; at most 31).
/// `SHUFFLE_REDUCTION`: reorder from an empty secondary queue only with
/// probability 1/128.
pub struct Cna<
    const FLUSH_LOG2: u32 = 16,
    const SHUFFLE_REDUCTION: bool = true,
    R: Relax = DefaultRelax,
> {
    q: McsQueue,
    _relax: PhantomData<fn() -> R>,
}

impl<const FLUSH_LOG2: u32, const SHUFFLE_REDUCTION: bool, R: Relax>
    Cna<FLUSH_LOG2, SHUFFLE_REDUCTION, R>
{
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            const { assert!(FLUSH_LOG2 < 32, "FLUSH_LOG2 must be below 32") };
            Cna { q: McsQueue::new(), _relax: PhantomData }
        }
    }

    /// Acquires the lock; the caller's group comes from the topology hint.
    #[inline]
    pub fn acquire(&self) {
        if !self.q.try_fast() {
            self.acquire_slow(crate::groups::group_of(crate::hint::current_cpu()));
        }
    }

    /// Acquires the lock as a waiter of `group` (any value is safe).
    pub fn acquire_in(&self, group: usize) {
        if !self.q.try_fast() {
            self.acquire_slow(group);
        }
    }

    #[cold]
    fn acquire_slow(&self, group: usize) {
        self.q.acquire_slow::<R>(
            Some(CnaCfg {
                group,
                threshold: 1 << FLUSH_LOG2,
                shuffle_reduction: SHUFFLE_REDUCTION,
            }),
            "Cna",
        );
    }

    /// Takes the lock if it is free and nobody waits.
    #[inline]
    pub fn try_acquire(&self) -> Option<()> {
        self.q.try_fast().then_some(())
    }

    /// Releases the lock (the queue head takes it next).
    ///
    /// # Safety
    /// The caller holds the lock.
    #[inline]
    pub unsafe fn release(&self, _guard: ()) {
        // SAFETY: forwarded contract.
        unsafe { self.q.release() }
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.q.is_held()
    }
}

crate::raw_impl::impl_default_debug! {
    impl [const FLUSH_LOG2: u32, const SHUFFLE_REDUCTION: bool, R: Relax]
        for Cna<FLUSH_LOG2, SHUFFLE_REDUCTION, R>,
        debug "Cna" { flush_log2: FLUSH_LOG2, shuffle_reduction: SHUFFLE_REDUCTION }
}

#[cfg(not(loom))]
// SAFETY: the lock word's rows and transitions are `Mcs`'s, and so is its
// argument (`mcs.rs`: rows "free" -> "held" by the fast-path CAS, "handing
// over" -> "held, queued" by the one head, Acquire against the holder's
// Release `fetch_and`). Moving waiters to or from the secondary queue is done
// by the head, off the lock word, and never touches `LOCKED`; the head role
// passes by a Release store to the next head's node, read with Acquire,
// together with the secondary queue. The nodes live on the waiters' stacks
// only inside `lock` (`mcs_queue.rs`), so the guard is `()` and a forgotten
// guard leaves only the lock held. A `Relax` panic while queued aborts the
// process, so `lock` never unwinds with a node linked. The CPU hint only
// picks the waiter's group; `unlock` runs no user code and ignores it.
unsafe impl<const FLUSH_LOG2: u32, const SHUFFLE_REDUCTION: bool, R: Relax> lock_api::RawMutex
    for Cna<FLUSH_LOG2, SHUFFLE_REDUCTION, R>
{
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();
    type Guard = ();

    #[inline]
    fn lock(&self) {
        self.acquire()
    }

    #[inline]
    fn try_lock(&self) -> Option<()> {
        self.try_acquire()
    }

    #[inline]
    unsafe fn unlock(&self, guard: ()) {
        // SAFETY: the caller holds the lock with `guard`, as
        // `RawMutex::unlock` requires.
        unsafe { self.release(guard) }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.is_held()
    }
}

#[cfg(not(loom))]
// SAFETY: `unlock_fair` is `unlock`: the order is decided by the waiting
// head within the flush threshold; the `RawMutex` argument above covers it.
unsafe impl<const FLUSH_LOG2: u32, const SHUFFLE_REDUCTION: bool, R: Relax> lock_api::RawMutexFair
    for Cna<FLUSH_LOG2, SHUFFLE_REDUCTION, R>
{
    #[inline]
    unsafe fn unlock_fair(&self, guard: ()) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }
}
