//! [`RonGrant`]: nxtRON's grant (a bit in the grantee's slot word) with
//! waiters that spin while their CPU is their own and park on a futex
//! when it is shared or their wait grows long. 8 bytes.
//!
//! ## States
//! The protocol is RON Algorithm 3 with nxtRON's bitmap, shared with
//! [`NxtRon`](crate::NxtRon) in [`plock`](crate::plock) (the full argument,
//! where the slots live, and the bank of block references):
//!
//! | `in_use` | slot `s` word (count, GRANT) | meaning |
//! |---|---|---|
//! | false | (0, 0) | unlocked, nobody registered in `s` |
//! | false | (c > 0, 0) | unlocked; `s`'s waiters are about to see it and CAS `in_use` |
//! | true | (c, 0) | held; `c` threads spin registered in `s` |
//! | true | (c > 0, 1) | handed to `s`; exactly one of its `c` waiters takes the grant and owns the lock |
//!
//! What `RonGrant` adds is *who registers, and for how long*: only a
//! waiter that spins on a CPU of its own, for one round at a time. A
//! waiter leaves its slot at the end of each round by one CAS on the slot
//! word, `(c, g) -> (c - 1, g)`, except `(1, 1) -> (0, 0)`, where the last
//! waiter of a granted slot takes the grant (it then owns the lock) rather
//! than strand it. So a grant goes to a slot whose waiter was spinning a
//! moment ago.
//!
//! ## Waiting
//!
//! | phase | what the waiter does | how long | what ends it |
//! |---|---|---|---|
//! | fast path | a load of `in_use`, and a CAS `false -> true` if it looked free; the CAS alone at a lock the thread has not met lately (`lately.rs` says which) | once | the lock, or on |
//! | the first round's question | when the thread has no recent verdict on its CPU ([`relax`](crate::relax)): one timed yield | once | on |
//! | shared round | while the thread's last yield showed its CPU shared: in the first round, at a lock with no block (nobody registered or parked), first a short spin (`SHARED_SPIN_LOOKS` looks, the first after `SHARED_SPIN_FIRST_PAUSE` pauses, doubling; both in `plock.rs`), which a thread skips in its next `SHARED_SPIN_SKIP` shared rounds (`ron_raw/wait.rs`) after a spin that missed; then `SHARED_LOOKS` looks at `in_use` (`plock.rs`), a yield after each, never registered; then parks | every round while the CPU looks shared | the lock (a free `in_use`) |
//! | unregistered looks | TTAS looks at `in_use`, backoff doubling from 1 pause (a thread's first waits) or `UNREGISTERED_FIRST_PAUSE` (later waits, so that a holder retaking the lock keeps its line) up to `UNREGISTERED_LONGEST_PAUSE` (both in `plock.rs`) | [`UNREGISTERED_LOOKS`](crate::ron_raw::UNREGISTERED_LOOKS), first round only, and only when nobody is registered (the lock has no block, or its block's only marked slot is empty: the bit of the waiter that took the lock by grant, which the next release clears) | the lock; on to register at a held look once another waiter is registered (the lock will go by grant, never free), after `UNREGISTERED_HELD_LOOKS` held looks in a row (a holder retaking the lock at once; `EARLY_HELD_LOOKS` in a thread's first such waits (`lately.rs`), where threads that start together meet at one lock), at repeated lost races (CASes that failed on an `in_use` it saw free: other threads wait too; `UNREGISTERED_LOST_RACES`; both in `plock.rs`), or after the last look |
//! | registered round | enters the lock's pooled block (claiming one if it has none), registers in its slot, spins looking at its slot word and `in_use` | the thread's registered budget ([`REGISTERED_SPINS`](crate::ron_raw::REGISTERED_SPINS) at first, adapted between [`REGISTERED_SPINS_MIN`](crate::ron_raw::REGISTERED_SPINS_MIN) and [`REGISTERED_SPINS_MAX`](crate::ron_raw::REGISTERED_SPINS_MAX) by its yields) | the slot's grant or a free `in_use`; else leaves the slot (above) and looks once more |
//! | yield or park | once the wait has lasted [`PARK_AFTER_NS`](crate::ron_raw::PARK_AFTER_NS), parks (sleeps on a futex while another waiter of the lock keeps its *watch*, else takes the watch); otherwise gives the CPU away: a yield that comes back at once multiplies the budget by [`BUDGET_GROWTH`](crate::ron_raw::BUDGET_GROWTH), a slow one quarters it and marks the CPU shared | one yield, or a sleep until woken | a new round |
//! | give-up (timed) | `keep_waiting` (or the deadline) is asked after every round that did not take the lock, never while registered | | returns `None` |
//!
//! Parking is `RonRaw`'s ([`ron_raw`](crate::ron_raw), "Parking"): a
//! process-wide table of buckets keyed by the lock's address, one watcher
//! awake per lock while it has sleepers. A parked waiter holds a reference
//! to the lock's block, so that a release that frees the lock sees a
//! block and wakes one sleeper (if none is on its way).
//!
//! ## Guarantees
//! | property | holds |
//! |---|---|
//! | mutual exclusion | under any schedule and any CPU hint: the owner is whoever CASes `in_use` from false or takes a grant, each with one winner ([`plock`](crate::plock)) |
//! | progress | yes; a grant to a waiter that was preempted right after its last look waits until it runs again (it takes the grant at its next look, or leaves with it) |
//! | bounded waiting | no: the fast path barges and waiters leave their slots (fairness is measured, not promised) |
//! | panics | the only user code is the CPU hint and a timed wait's `keep_waiting`, both asked while nothing is registered; an unlock whose hint panics releases the lock (scanning from slot 0) before it unwinds |
//!
//! ## Cost
//! 8 bytes: `in_use` (a word whose second bit records whether the owner
//! kept its block reference for its release) and the index of a pooled
//! block, held while the lock has registered or parked waiters.
//! Uncontended: a load and a CAS to lock (the CAS alone at a lock the
//! thread has not met lately; both after a thread-local load), a load
//! (the block index) and a store to unlock. A handover writes the granted
//! slot's line only, as `NxtRon`'s ([`plock`](crate::plock), "What a handover costs"); a
//! waiter's round costs two read-modify-writes of its slot word
//! (registering, leaving or taking) and one of the block's reference count
//! (entering; one more when it leaves without the lock).

use crate::plock::PooledPlock;
use crate::ron_raw::park::SleepLimit;
use crate::ron_raw::pool::{self, Pool};
use crate::slots::slot_hint_of;
use crate::token::PlaceToken;

/// A route-ordered lock for any number of threads: 8 bytes, a TTAS fast
/// path, nxtRON's handover between spinning waiters, and waiters that park
/// when threads outnumber CPUs. States, waiting phases and guarantees: the
/// [module docs](self).
///
/// ```
/// use ron_core::{lock_api::Mutex, RonGrant};
///
/// let m = Mutex::<RonGrant, u32>::new(0);
/// *m.lock() += 1;
/// assert_eq!(*m.lock(), 1);
/// ```
pub struct RonGrant {
    core: PooledPlock<true>,
}

/// `RonGrant`'s entry points with a model's own pool of blocks, for the
/// loom models only (built with `--cfg loom`; not part of the API).
#[cfg(loom)]
pub mod with_pool {
    use super::{PlaceToken, Pool, RonGrant};

    /// [`RonGrant::acquire_in`] with blocks from `pool`.
    pub fn acquire_in<'a>(lock: &'a RonGrant, pool: &'a Pool<'a>, slot: usize) -> PlaceToken {
        lock.acquire_in_pool(pool, slot)
    }

    /// [`RonGrant::try_acquire_in_while`] with blocks from `pool`.
    pub fn try_acquire_in_while<'a>(
        lock: &'a RonGrant,
        pool: &'a Pool<'a>,
        slot: usize,
        keep_waiting: impl FnMut() -> bool,
    ) -> Option<PlaceToken> {
        lock.try_acquire_in_pool_while(pool, slot, keep_waiting)
    }

    /// [`RonGrant::release`] with blocks from `pool`.
    ///
    /// # Safety
    /// As for [`RonGrant::release`].
    pub unsafe fn release(lock: &RonGrant, pool: &Pool<'_>, token: PlaceToken) {
        // SAFETY: the caller's contract is `release`'s.
        unsafe { lock.release_in_pool(pool, token) }
    }

    /// Whether `lock` holds a block of its pool now (a snapshot).
    pub fn has_block(lock: &RonGrant) -> bool {
        lock.core.has_block()
    }
}

impl RonGrant {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock (holding no block).
        pub fn new() -> Self {
            RonGrant { core: PooledPlock::new() }
        }
    }

    /// Acquires the lock; a contended waiter waits in its slot from the CPU hint.
    #[inline]
    pub fn acquire(&self) -> PlaceToken {
        if self.core.try_fast_lately() {
            return PlaceToken::NONE;
        }
        self.acquire_contended()
    }

    /// The contended acquisition from the CPU hint, out of line so that
    /// the fast path above inlines into every caller.
    #[cold]
    #[inline(never)]
    fn acquire_contended(&self) -> PlaceToken {
        let pool = pool::global();
        let s = slot_hint_of(pool::active_slots());
        self.wait(pool, s, SleepLimit::Never, || true)
    }

    /// Acquires the lock waiting in slot `slot % active_slots()` (any
    /// value is safe).
    pub fn acquire_in(&self, slot: usize) -> PlaceToken {
        self.acquire_in_pool(pool::global(), slot)
    }

    /// [`acquire_in`](Self::acquire_in) with blocks from `pool`. A lock
    /// must use one pool for its whole life, and the pool must outlive it.
    pub(crate) fn acquire_in_pool<'a>(&'a self, pool: &'a Pool<'a>, slot: usize) -> PlaceToken {
        if self.core.try_fast_lately() {
            return PlaceToken::NONE;
        }
        self.wait(pool, slot % pool::active_slots(), SleepLimit::Never, || {
            true
        })
    }

    /// The slow path, which returns only with the lock when `keep_waiting`
    /// never says no.
    fn wait<'a>(
        &'a self,
        pool: &'a Pool<'a>,
        s: usize,
        limit: SleepLimit,
        keep_waiting: impl FnMut() -> bool,
    ) -> PlaceToken {
        match self.core.acquire_parking_in(pool, s, limit, keep_waiting) {
            Some(t) => t,
            None => unreachable!("a wait that never gives up returns the lock"),
        }
    }

    /// Takes the lock if it is free; never registers in a slot.
    #[inline]
    pub fn try_acquire(&self) -> Option<PlaceToken> {
        self.core.try_fast_lately().then_some(PlaceToken::NONE)
    }

    /// Tries to take the lock until `deadline`, waiting in the caller's
    /// slot (from the CPU hint); `None` only once the deadline has passed
    /// (looked at after every round that did not take the lock: at most
    /// [`REGISTERED_SPINS_MAX`](crate::ron_raw::REGISTERED_SPINS_MAX)
    /// spins, or one sleep, apart).
    #[cfg(feature = "std")]
    pub fn try_acquire_until(&self, deadline: crate::timed::Deadline) -> Option<PlaceToken> {
        if self.core.try_fast_lately() {
            return Some(PlaceToken::NONE);
        }
        let pool = pool::global();
        let s = slot_hint_of(pool::active_slots());
        self.core
            .acquire_parking_in(pool, s, SleepLimit::Until(deadline), || !deadline.expired())
    }

    /// Waits for the lock in slot `slot % active_slots()` (any value is
    /// safe) as long as `keep_waiting` says so: it is asked after every
    /// round that did not take the lock (never while the waiter is
    /// registered, so a panic in it leaves nothing behind), and `None` is
    /// returned after it said `false`. Such a wait never sleeps (a
    /// sleeper cannot ask): it yields instead.
    pub fn try_acquire_in_while(
        &self,
        slot: usize,
        keep_waiting: impl FnMut() -> bool,
    ) -> Option<PlaceToken> {
        self.try_acquire_in_pool_while(pool::global(), slot, keep_waiting)
    }

    /// [`try_acquire_in_while`](Self::try_acquire_in_while) with blocks
    /// from `pool` (as for [`acquire_in_pool`](Self::acquire_in_pool)).
    pub(crate) fn try_acquire_in_pool_while<'a>(
        &'a self,
        pool: &'a Pool<'a>,
        slot: usize,
        keep_waiting: impl FnMut() -> bool,
    ) -> Option<PlaceToken> {
        if self.core.try_fast_lately() {
            return Some(PlaceToken::NONE);
        }
        self.core.acquire_parking_in(
            pool,
            slot % pool::active_slots(),
            SleepLimit::Ask,
            keep_waiting,
        )
    }

    /// Releases the lock: grants the next slot with a registered waiter
    /// along the route after the acquirer's slot, or frees it (waking a
    /// parked waiter if the lock has any).
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: PlaceToken) {
        // SAFETY: same contract; the lock's blocks come from the global pool.
        unsafe { self.release_in_pool(pool::global(), token) }
    }

    /// [`release`](Self::release) with blocks from `pool`.
    ///
    /// # Safety
    /// As for [`release`](Self::release).
    #[inline]
    pub(crate) unsafe fn release_in_pool(&self, pool: &Pool<'_>, token: PlaceToken) {
        // SAFETY: the caller holds the lock.
        if let Some(index) = unsafe { self.core.release_if_idle() } {
            // SAFETY: the caller holds the lock (not released above), and
            // `index` was read while it did.
            unsafe { self.release_contended(pool, token, index) }
        }
    }

    /// The release of a lock with a block or a kept reference, out of line
    /// so that the uncontended release above inlines as a load and a
    /// store.
    ///
    /// # Safety
    /// As for [`release`](Self::release); `index` is the value of the
    /// lock's block index that the caller read while holding the lock.
    #[inline(never)]
    unsafe fn release_contended(&self, pool: &Pool<'_>, token: PlaceToken, index: u32) {
        // The lock's address only: once released, the lock may be gone.
        let key = &self.core as *const PooledPlock<true> as usize;
        // The lock has (or lately had) waiters: this thread's next fast
        // path on it looks first.
        crate::lately::contended(key);
        // SAFETY: the caller holds the lock; `pool` is the lock's pool;
        // `index` is `home` as read while holding it.
        let freed_with_block = unsafe { self.core.release_in_at(pool, token, index) };
        if freed_with_block {
            // Parked waiters hold the block: wake one (if none is on its way).
            #[cfg(feature = "std")]
            crate::ron_raw::park::wake_sleeper(key);
            #[cfg(not(feature = "std"))]
            let _ = key;
        }
    }

    /// Whether the lock is held or handed over (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.core.is_held()
    }
}

crate::raw_impl::impl_default_debug! {
    impl [] for RonGrant, debug "RonGrant" { slots: pool::BLOCK_SLOTS }
}

#[cfg(not(loom))]
// SAFETY: the lock is the plock protocol of `plock` (whose module docs
// argue exclusion): the owner is the winner of a CAS of `in_use` from
// false or of a slot's grant, one at a time, and only the owner frees
// `in_use` or sets a grant. `lock` and `try_lock` return a guard only to
// such a winner. The CPU hint only picks a slot (any value is reduced
// modulo the slots in use); the hint is asked before anything is
// registered, and `unlock` asks it only for a fast-path guard and, if it
// panics, releases from slot 0 before it unwinds. No user code runs
// while a waiter is registered. Whether the owner holds a block reference
// is read from the lock (`owner_ref`), never from the guard, which anyone
// can forge.
unsafe impl lock_api::RawMutex for RonGrant {
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
// SAFETY: `unlock_fair` is `release`, which already hands over to the next
// registered slot; the `RawMutex` argument above covers it.
unsafe impl lock_api::RawMutexFair for RonGrant {
    #[inline]
    unsafe fn unlock_fair(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }
}

#[cfg(feature = "std")]
crate::timed::impl_raw_mutex_timed! {
    impl [] for RonGrant
}
