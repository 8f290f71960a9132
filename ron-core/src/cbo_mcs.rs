//! [`CBoMcs`]: the C-BO-MCS cohort lock (Dice, Marathe & Shavit): one MCS
//! lock per group plus a global test-and-test-and-set lock ([`Ttas`]) whose
//! waiters back off with the relax policy.
//!
//! A thread first takes its group's local MCS lock (waiters-only queue, see
//! [`Mcs`](crate::Mcs)), then the global lock, unless the previous local
//! owner *passed* the global lock along with the local one. On unlock, if
//! local waiters are queued and fewer than [`COHORT_HANDOVERS`] consecutive
//! local handovers happened, the holder sets `passed` and releases only the
//! local lock: the next owner of the group inherits the global lock without
//! touching it. Otherwise it releases the local lock, then the global one
//! (its last access: the lock may be freed once it is free).
//! A thread's group is `groups::group_of(hint::current_cpu()) % N`, read once
//! per acquisition and carried in the guard, so the unlock finds the same
//! local lock after a migration.
//!
//! ## States (per group `g`, plus `global`)
//! | row | `global` (held) | local `g` | `passed[g]` | meaning |
//! |---|---|---|---|---|
//! | free | false | free | false | nobody holds the cohort lock through `g` |
//! | held | true | held | false | `g`'s local owner holds the global lock too, or is about to take it |
//! | inherited | true | held | true | the global lock was passed: the local owner owns it without a CAS |
//! | passing | true | free, waiters queued | true | passed to `g`'s queue head, who will own both |
//!
//! `passed[g]` and the handover count are only touched by `g`'s local
//! owner, ordered by the local lock.
//!
//! ## Guarantees
//! * Mutual exclusion: the cohort lock is held by whoever holds the global
//!   lock, directly or by inheritance; an inheritance chain stays inside one
//!   local lock, which at most one thread holds.
//! * Progress.
//! * Bounded waiting for the global lock only in the sense of the threshold:
//!   a group keeps it for at most `COHORT_HANDOVERS + 1` acquisitions in a
//!   row; the global lock itself is a TTAS with backoff (no order), so a
//!   group head can in principle lose every race. Inside a group: FIFO.
//! * Panics: a `Relax` panic while queued in the group's MCS lock aborts
//!   the process (as [`Mcs`](crate::Mcs)); while waiting for the global lock
//!   the waiter gives its group lock back and unwinds. Unlock runs no user
//!   code (`docs/panic-safety.md`).
//!
//! ## Cost
//! Bytes per lock: `128 * (N + 1)`, **1152** for the default `N = 8` (each
//! local lock and the global lock on its own 128-byte pair of lines).
//! Uncontended lock + unlock: two CASes, one store and one `fetch_and`.
//!
//! ```
//! use ron_core::CBoMcs;
//! let m: lock_api::Mutex<CBoMcs, u64> = lock_api::Mutex::new(0);
//! std::thread::scope(|s| {
//!     for _ in 0..4 {
//!         s.spawn(|| for _ in 0..500 { *m.lock() += 1 });
//!     }
//! });
//! assert_eq!(*m.lock(), 2000);
//! ```

use core::marker::PhantomData;

use crossbeam_utils::CachePadded;

use crate::mcs_queue::McsQueue;
use crate::relax::{DefaultRelax, Relax};
use crate::sync::{AtomicBool, AtomicU32, Ordering};
use crate::token::PlaceToken;
use crate::ttas::Ttas;
use crate::unwind::OnUnwind;

/// Consecutive local handovers before the global lock must be released
/// (the cohort papers' threshold; 64 keeps a group's turn well under the
/// cost of a cross-node transfer times the batch).
pub const COHORT_HANDOVERS: u32 = 64;

struct Local {
    q: McsQueue,
    passed: AtomicBool,
    handovers: AtomicU32,
}

impl Local {
    crate::sync::const_fn_unless_loom! {
        fn new() -> Self {
            Local { q: McsQueue::new(), passed: AtomicBool::new(false), handovers: AtomicU32::new(0) }
        }
    }
}

/// Cohort lock: per-group MCS locks plus a global [`Ttas`], the classic
/// NUMA-aware baseline. `N` is the number of local locks (groups map onto
/// them modulo `N`). States, guarantees and cost: the [module docs](self).
///
/// The guard ([`PlaceToken`]) carries the index of the local lock the
/// acquirer went through, so the unlock needs no CPU hint.
pub struct CBoMcs<const N: usize = 8, R: Relax = DefaultRelax> {
    global: CachePadded<Ttas<R>>,
    locals: [CachePadded<Local>; N],
    _relax: PhantomData<fn() -> R>,
}

impl<const N: usize, R: Relax> CBoMcs<N, R> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            const { assert!(N >= 1, "a cohort lock needs at least one group") };
            CBoMcs {
                global: CachePadded::new(Ttas::new()),
                locals: crate::sync::array_init!(N, CachePadded::new(Local::new())),
                _relax: PhantomData,
            }
        }
    }

    /// Acquires the lock through the caller's group (from the topology hint).
    #[inline]
    pub fn acquire(&self) -> PlaceToken {
        self.acquire_in(crate::groups::group_of(crate::hint::current_cpu()))
    }

    /// Acquires the lock through local lock `group % N` (any value is safe).
    #[inline]
    pub fn acquire_in(&self, group: usize) -> PlaceToken {
        let g = group % N;
        let l = &self.locals[g];
        if !l.q.try_fast() {
            l.q.acquire_slow::<R>(None, "CBoMcs");
        }
        // Relaxed: `passed` is only accessed by the local owner, ordered by
        // the local lock's Release/Acquire.
        if l.passed.load(Ordering::Relaxed) {
            l.passed.store(false, Ordering::Relaxed); // as above
        } else if self.global.try_acquire().is_none() {
            // We hold the group's lock and wait for the global one, running
            // the relax policy: if it panics, give the group's lock back
            // (its next waiter then takes the global lock itself, as after
            // `release_both`), so nothing is left held.
            let holding_local = OnUnwind::new(|| {
                crate::coverage::hit!("cbo_mcs.unwind_released_local");
                // SAFETY: we hold the local lock (acquired above) and not
                // the global one, which we were still waiting for.
                unsafe { l.q.release() }
            });
            self.global.acquire_slow();
            holding_local.disarm();
        }
        PlaceToken::at(g)
    }

    /// Takes the lock if both its local lock (of the caller's group) and
    /// the global lock are free.
    pub fn try_acquire(&self) -> Option<PlaceToken> {
        let g = crate::groups::group_of(crate::hint::current_cpu()) % N;
        let l = &self.locals[g];
        if !l.q.try_fast() {
            return None;
        }
        // Relaxed: see `acquire_in`. (A passed global lock implies a queued
        // waiter, so the fast CAS above fails; checked anyway.)
        if l.passed.load(Ordering::Relaxed) {
            l.passed.store(false, Ordering::Relaxed);
            return Some(PlaceToken::at(g));
        }
        if self.global.try_acquire().is_some() {
            return Some(PlaceToken::at(g));
        }
        // SAFETY: we hold the local lock (fast CAS above).
        unsafe { l.q.release() };
        None
    }

    /// Releases the lock: passes the global lock to the next local waiter
    /// (up to the threshold), else releases both.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: PlaceToken) {
        let l = &self.locals[token.index().unwrap_or(0) % N];
        // Relaxed: owner-only fields (see `acquire_in`).
        let h = l.handovers.load(Ordering::Relaxed);
        if h < COHORT_HANDOVERS && l.q.has_waiters() {
            l.handovers.store(h + 1, Ordering::Relaxed);
            l.passed.store(true, Ordering::Relaxed);
            // SAFETY: we hold the local lock; a queued waiter will take it
            // (no fast path succeeds while the queue is non-empty).
            unsafe { l.q.release() };
            return;
        }
        // SAFETY: same contract.
        unsafe { self.release_both(l) }
    }

    /// # Safety
    /// The caller holds the lock through `l`.
    #[inline]
    unsafe fn release_both(&self, l: &Local) {
        l.handovers.store(0, Ordering::Relaxed); // owner-only field
        // The local lock first: the global lock's release must be our last
        // access, since once it is free the lock's last user may take it
        // and free the lock (`docs/design.md`, invariant 6). The next
        // owner of `g` finds `passed` false and waits for the global lock.
        // SAFETY: we hold the local lock.
        unsafe { l.q.release() };
        // SAFETY: we hold the global lock (the caller's contract); its
        // Release store publishes the critical section to the next owner.
        unsafe { self.global.release(()) };
    }

    /// Releases both the global and the local lock (no cohort handover).
    ///
    /// # Safety
    /// As for [`release`](Self::release).
    pub unsafe fn release_fair(&self, token: PlaceToken) {
        let l = &self.locals[token.index().unwrap_or(0) % N];
        // SAFETY: same contract.
        unsafe { self.release_both(l) }
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.global.is_held()
    }
}

crate::raw_impl::impl_default_debug! {
    impl [const N: usize, R: Relax] for CBoMcs<N, R>, debug "CBoMcs" { groups: N }
}

#[cfg(not(loom))]
// SAFETY: state table rows "held" (the global `Ttas` taken by its CAS,
// Acquire; the holder's Release store frees it), "passing" and "inherited":
// `passed[g]` is set by `g`'s owner only while it keeps the global lock,
// before its Release unlock of `g`, and read and cleared by the next owner of
// `g` after its Acquire; so an inherited global lock moves with
// happens-before inside one local lock, which one thread holds at a time.
// `try_lock` gives the local lock back if the global one is taken. A `Relax`
// panic while queued in `g` aborts the process (an MCS node cannot leave the
// queue); while waiting for the global lock the waiter releases `g` and
// unwinds owning nothing (a `Ttas` waiter publishes nothing). The guard
// carries `g`, so `unlock` uses no CPU hint and runs no user code. A
// forgotten guard leaves the lock held; the MCS nodes live only inside `lock`
// (`mcs_queue.rs`), so nothing dangles.
unsafe impl<const N: usize, R: Relax> lock_api::RawMutex for CBoMcs<N, R> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();
    type Guard = PlaceToken;

    #[inline]
    fn lock(&self) -> PlaceToken {
        self.acquire()
    }

    #[inline]
    fn try_lock(&self) -> Option<PlaceToken> {
        self.try_acquire()
    }

    #[inline]
    unsafe fn unlock(&self, guard: PlaceToken) {
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
// SAFETY: `release_fair` releases the global lock, then the local one (no
// cohort handover), the `release` path the argument above covers when the
// threshold is hit.
unsafe impl<const N: usize, R: Relax> lock_api::RawMutexFair for CBoMcs<N, R> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release_fair(guard) }
    }
}
