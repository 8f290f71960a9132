//! [`NxtRon`]: RON-plock with a bitmap of waiting slots (nxtRON), one slot
//! per CPU from a pool ([`NxtRonInline`]: `S` slots in the lock).
//!
//! ## States
//! The protocol is RON Algorithm 3, shared with [`RonPlock`](crate::RonPlock)
//! in [`plock`](crate::plock) (which has the full argument and where the
//! slots live). `in_use` is the lock's test-and-set flag; each of the `n`
//! slots (`n` = [`active_slots()`](crate::ron_raw::active_slots) in the
//! lock's pooled block, or `S` inline) holds a waiter count `c` and a
//! GRANT bit. A pooled lock holds a block only while it has registered
//! waiters (no block: every slot reads (0, 0)); each of its slots also
//! holds a *bank* of block references that belong to the lock's holder (a
//! grant passes one, which the grantee banks in its slot: no reference
//! count is written per handover; [`plock`](crate::plock), "The bank").
//!
//! | `in_use` | slot `s` (count, GRANT) | meaning |
//! |---|---|---|
//! | false | (0, 0) | unlocked, nobody waits in `s` |
//! | false | (c > 0, 0) | unlocked; `s`'s waiters are about to see it and CAS `in_use` |
//! | true | (c, 0) | held; `c` threads wait in `s` |
//! | true | (c > 0, 1) | the holder handed the lock to `s`; exactly one of its `c` waiters will take the grant and own the lock |
//!
//! `NxtRon`'s bitmap bit of slot `s` is set whenever `c > 0` (at
//! quiescence) and may stay set at `c = 0` (stale: a waiter that took the
//! lock leaves it; the next unlock that scans it clears it).
//!
//! A bitmap (one bit per slot with waiters, in the first slots' second cache
//! line) lets the unlock find the next waiting slot with rotate +
//! `trailing_zeros`; its invariant is in [`slots`](crate::slots). With
//! `BITMAP = false` the unlock reads the slot words one by one instead:
//! that is RON-plock, [`RonPlock`](crate::RonPlock), an alias of this type.
//!
//! ## Guarantees
//! | property | holds |
//! |---|---|
//! | mutual exclusion | under any schedule and any CPU hint |
//! | progress | yes |
//! | bounded waiting | per slot: at most `n - 1` grants to other slots plus one racing fast-path acquisition; pooled, none for a waiter that found the pool exhausted (it waits unregistered and retries, [`plock`](crate::plock)) |
//! | `Relax` panic | the waiter leaves its slot (passing on a grant it would strand) and unwinds |
//! | hint panic in unlock | the lock is released (scan from slot 0) before the unwind |
//!
//! ## Cost
//! `NxtRon`: 8 bytes, plus a pooled block (`128 * (BLOCK_SLOTS + 1)` =
//! 32,896 bytes with `std`, of which a lock touches the first line and its
//! `active_slots()` slots) while contended. A handover writes the granted
//! slot's line only (the grant CAS, then the grantee's look, which is its
//! take's CAS, and its bank beside it: two transfers of the line with one
//! waiter in the slot), no
//! bitmap word (bits are cleared lazily, by an unlock that finds a marked
//! slot empty) and no reference count: the block's count takes one
//! read-modify-write per waiter's entry, one per [`BANK_MAX`](crate::ron_ticket::BANK_MAX)
//! grants to a slot, and one at the free. `NxtRonInline<S>`:
//! `128 * (S + 1)` bytes.

use core::marker::PhantomData;

use crate::plock::{Plock, PooledPlock};
use crate::relax::{DefaultRelax, Relax};
use crate::ron_raw::pool;
use crate::token::PlaceToken;

/// nxtRON: RON-plock plus a bitmap of slots that have waiters, so the
/// unlock finds the next waiting slot along the route by rotate +
/// `trailing_zeros` per 64-slot word (O(1) for up to 64 slots, O(n/64)
/// beyond) instead of reading every slot. An unlock with no waiters is
/// one bitmap load and a store (once a scan has cleared the bits that
/// its last waiters left set, [`slots`](crate::slots)). Protocol and
/// state table: [`plock`](crate::plock); bitmap invariant:
/// [`slots`](crate::slots).
///
/// * **Guarantees:** as [`RonPlock`](crate::RonPlock): mutual exclusion,
///   progress, and per-slot bounded waiting of `n - 1` other grants plus
///   one racing fast-path acquisition, `n` =
///   [`active_slots()`](crate::ron_raw::active_slots) (one slot per CPU of
///   the route); none while the pool is exhausted (the waiter waits
///   unregistered and retries, [`plock`](crate::plock)).
/// * **Panics:** a waiter whose `Relax` policy panics leaves its slot
///   (the last waiter of a granted slot takes the grant and hands the
///   lock on), then unwinds; an unlock whose CPU hint panics releases
///   the lock (scanning from slot 0) before it unwinds. The lock stays
///   usable (`docs/panic-safety.md`).
/// * **Cost:** 8 bytes per lock, plus a pooled block of
///   `128 * (BLOCK_SLOTS + 1)` bytes while contended (the bitmap words live
///   in the second cache line of the first slots). Uncontended
///   lock+unlock: a load and a CAS, a load of the block index, one release
///   store.
/// * **When not to use:** threads outnumbering CPUs with a relax policy
///   that keeps spinning: a grant to a descheduled waiter stalls every
///   other thread until that waiter runs (use [`RonRaw`](crate::RonRaw)).
/// * **`BITMAP`:** `true` (the default) is nxtRON; `false` keeps no bitmap
///   and scans the slot words linearly, which is RON-plock
///   ([`RonPlock`](crate::RonPlock)).
///
/// ```
/// use ron_core::NxtRon;
/// let m: lock_api::Mutex<NxtRon, u64> = lock_api::Mutex::new(0);
/// std::thread::scope(|s| {
///     for _ in 0..4 {
///         s.spawn(|| for _ in 0..1000 { *m.lock() += 1 });
///     }
/// });
/// assert_eq!(m.into_inner(), 4000);
/// ```
pub struct NxtRon<R: Relax = DefaultRelax, const BITMAP: bool = true> {
    inner: PooledPlock<BITMAP>,
    _relax: PhantomData<fn() -> R>,
}

impl<R: Relax, const BITMAP: bool> NxtRon<R, BITMAP> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            NxtRon { inner: PooledPlock::new(), _relax: PhantomData }
        }
    }

    crate::in_use::slotted_entry_points!(pool::active_slots());

    /// A load of `in_use` (the lock's test-and-set flag), then a CAS only
    /// when it looked free.
    #[inline]
    fn try_fast(&self) -> bool {
        self.inner.try_fast()
    }

    /// Counts the caller in slot `slot` of the lock's block and waits for a
    /// grant or a free lock.
    #[cold]
    fn acquire_slow(&self, slot: usize, on_wait: impl FnOnce()) -> PlaceToken {
        self.inner
            .acquire_slow_in::<R>(pool::global(), slot, on_wait)
    }

    /// Releases the lock, handing it to the next waiting slot along the
    /// route after the acquirer's slot (the first set bit of the
    /// waiting-slot bitmap, or with `BITMAP = false` a linear scan of the
    /// slot words), or freeing it.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: PlaceToken) {
        // SAFETY: forwarded contract; the lock's blocks come from the
        // global pool.
        unsafe { self.inner.release_in(pool::global(), token) };
    }

    /// Whether the lock is held or handed over (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.inner.is_held()
    }

    /// Whether the lock holds a pooled block (a snapshot): for the loom
    /// models only, which exist only with `--cfg loom`.
    #[cfg(loom)]
    #[doc(hidden)]
    pub fn has_block(&self) -> bool {
        self.inner.has_block()
    }
}

crate::raw_impl::impl_default_debug! {
    impl [R: Relax, const BITMAP: bool] for NxtRon<R, BITMAP>, debug custom
}

impl<R: Relax, const BITMAP: bool> core::fmt::Debug for NxtRon<R, BITMAP> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct(if BITMAP { "NxtRon" } else { "RonPlock" })
            .field("slots", &pool::active_slots())
            .field("locked", &self.is_held())
            .finish()
    }
}

#[cfg(not(loom))]
// SAFETY: the protocol of `plock.rs` on the slots of the lock's pooled
// block: exactly one of "the holder", "the pending grant" or "nobody" owns
// the lock at every moment. `lock` and `try_lock` return a guard only after
// taking ownership by the CAS `in_use` false -> true (Acquire, pairing with
// the Release store that freed it), or, registered in a slot of the lock's
// block, by the CAS that takes that slot's GRANT (SeqCst, pairing with the
// holder's Release CAS that set it while `in_use` stayed true). The holder
// grants only while it holds a reference to the block the lock names, and
// a waiter registers, waits and unregisters only while it holds one; a
// referenced block is never detached or claimed by another lock (`pool`),
// so a grant always lands in this lock's block, on a slot whose count it
// checked in the same CAS. A claim zeroes the slots it will use after the
// last users' writes (the pool's Release/Acquire chain), so no count is
// left behind for an empty slot. A waiter whose `Relax` panics leaves its
// slot by one CAS (passing on a grant it would strand) before its block
// reference is dropped; unregistered (pool exhausted) it holds nothing.
// The references a grant passes are banked in slots and dropped only by
// the lock's holder (one at a time past `BANK_MAX`, all at a free, before
// the free), so the block's count never falls to its last reference while
// the lock is held or handed over, and no release writes the lock or its
// count after the grant or free that makes the lock available. A
// wrong, out-of-range or stale CPU hint changes where the scan starts,
// never who owns the lock; a panicking hint in `unlock` releases from slot
// 0 first. A forgotten guard leaves the lock held; nothing dangles.
unsafe impl<R: Relax, const BITMAP: bool> lock_api::RawMutex for NxtRon<R, BITMAP> {
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
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.is_held()
    }
}

#[cfg(not(loom))]
// SAFETY: `unlock_fair` is `release`; the `RawMutex` argument covers it.
unsafe impl<R: Relax, const BITMAP: bool> lock_api::RawMutexFair for NxtRon<R, BITMAP> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }
}

/// nxtRON with its `S` slots in the lock: the protocol of [`NxtRon`]
/// without the pool, for a slot count fixed when the program is built.
///
/// * **Guarantees:** as [`NxtRon`], with `n = S`: per-slot bounded waiting
///   of `S - 1` other grants plus one racing fast-path acquisition; no
///   pool, so no exhaustion.
/// * **Panics:** as [`NxtRon`].
/// * **Cost:** `128 * (S + 1)` bytes per lock: the bitmap words live in
///   the second cache line of the first `ceil(S/64)` slots. Uncontended
///   lock+unlock: a load and a CAS, one bitmap load, one release store.
/// * **`BITMAP`:** `false` scans the slot words linearly:
///   [`RonPlockInline`](crate::ron_plock::RonPlockInline).
///
/// ```
/// use ron_core::NxtRonInline;
/// let m: lock_api::Mutex<NxtRonInline<64>, u64> = lock_api::Mutex::new(0);
/// *m.lock() += 1;
/// assert_eq!(m.into_inner(), 1);
/// ```
pub struct NxtRonInline<const S: usize, R: Relax = DefaultRelax, const BITMAP: bool = true> {
    inner: Plock<S, BITMAP>,
    _relax: PhantomData<fn() -> R>,
}

impl<const S: usize, R: Relax, const BITMAP: bool> NxtRonInline<S, R, BITMAP> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            NxtRonInline { inner: Plock::new(), _relax: PhantomData }
        }
    }

    crate::in_use::slotted_entry_points!();

    /// A load of `in_use` (the lock's test-and-set flag), then a CAS only
    /// when it looked free.
    #[inline]
    fn try_fast(&self) -> bool {
        self.inner.try_fast()
    }

    /// Counts the caller in slot `slot` and waits for a grant or a free lock.
    #[cold]
    fn acquire_slow(&self, slot: usize, on_wait: impl FnOnce()) -> PlaceToken {
        self.inner.acquire_slow::<R>(slot, on_wait)
    }

    /// Releases the lock, handing it to the next waiting slot along the
    /// route after the acquirer's slot (the first set bit of the
    /// waiting-slot bitmap, or with `BITMAP = false` a linear scan of the
    /// slot words), or freeing it.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: PlaceToken) {
        // SAFETY: forwarded contract.
        unsafe { self.inner.release(token) }
    }

    /// Whether the lock is held or handed over (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.inner.is_held()
    }
}

crate::raw_impl::impl_default_debug! {
    impl [const S: usize, R: Relax, const BITMAP: bool] for NxtRonInline<S, R, BITMAP>, debug custom
}

impl<const S: usize, R: Relax, const BITMAP: bool> core::fmt::Debug for NxtRonInline<S, R, BITMAP> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct(if BITMAP {
            "NxtRonInline"
        } else {
            "RonPlockInline"
        })
        .field("slots", &S)
        .field("locked", &self.is_held())
        .finish()
    }
}

#[cfg(not(loom))]
// SAFETY: by the state table in the module docs (argued in `plock.rs`),
// exactly one of "the holder", "the pending grant" or "nobody" owns the
// lock at every moment. `lock` and `try_lock` return a guard only after
// taking ownership one of two ways: the CAS `in_use` false -> true
// (Acquire, pairing with the Release store that freed it), or, registered
// in a slot, the CAS that takes that slot's GRANT, (c, 1) -> (c - 1, 0)
// (SeqCst, so Acquire, pairing with the holder's Release CAS that set it
// while `in_use` stayed true). GRANT is set only by the holder, only on a
// slot whose count it checked in the same CAS, and one CAS takes it;
// nobody can CAS `in_use` while a grant is pending. The slot is only a
// place to wait: a wrong, out-of-range or stale CPU hint changes where the
// unlock's scan starts, never who owns the lock. A waiter whose `Relax`
// panics leaves its slot by one CAS, taking and passing on a grant it
// would strand ((1, 1) -> (0, 0)), so it unwinds owning nothing and leaves
// nothing behind. `unlock` asks the CPU hint only for a fast-path guard
// (`PlaceToken::NONE`); if the hint panics it releases from slot 0 first
// (`PlaceToken::release_from_slot`), so it never unwinds holding the lock.
// A forgotten guard leaves the lock held; waiters are counts in slot
// words, not nodes, so nothing dangles.
unsafe impl<const S: usize, R: Relax, const BITMAP: bool> lock_api::RawMutex
    for NxtRonInline<S, R, BITMAP>
{
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
// SAFETY: `unlock_fair` is `release`, which already hands the lock to the
// next waiting slot; the `RawMutex` argument above covers it.
unsafe impl<const S: usize, R: Relax, const BITMAP: bool> lock_api::RawMutexFair
    for NxtRonInline<S, R, BITMAP>
{
    #[inline]
    unsafe fn unlock_fair(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }
}
