//! [`RonInline<S>`]: `RonRaw`'s protocol with its `S` slots inline, no pool.
//!
//! `128 * (S + 1)` bytes (2176 for the default 16). It skips the claim of
//! a pooled block on the first contention and never shares the pool, which
//! suits a few hot locks that are contended all the time; for anything
//! else (and a lock per object) use [`RonRaw`](super::RonRaw), 8 bytes.
//! Same guarantees, same lock word, same waiting policy (see the
//! [module docs](super)), except `RonRaw`'s fairness pause
//! ([`FAIR_EVERY_NS`](super::FAIR_EVERY_NS)): it counts the waiters that
//! hold a pooled block, and inline slots have no such count.

use crossbeam_utils::CachePadded;

use super::DEFAULT_SLOTS;
use super::word::{Rooms, Word};
use crate::slots::{PlaceToken, SlotTable, slot_hint};
use crate::sync::AtomicU32;

/// `RonRaw`'s protocol with `S` inline slots ([`DEFAULT_SLOTS`] unless
/// named); see the [module docs](super).
pub struct RonInline<const S: usize = DEFAULT_SLOTS> {
    head: CachePadded<Head>,
    slots: SlotTable<S>,
}

/// The lock word and its handover count, on the lock's first line.
struct Head {
    word: Word,
    /// Handovers so far (wrapping); written only by the owner, so it is
    /// data protected by the lock itself (see `Word::next_owner`).
    handovers: AtomicU32,
}

impl<const S: usize> Rooms<S> for SlotTable<S> {
    type Room<'a> = &'a SlotTable<S>;

    fn enter(&self) -> Option<&SlotTable<S>> {
        Some(self)
    }

    fn is_current(&self, _: &&SlotTable<S>) -> bool {
        true
    }

    fn crowded(&self) -> bool {
        self.any_marked()
    }

    fn key(&self) -> usize {
        self as *const SlotTable<S> as usize
    }

    fn waiters(&self) -> usize {
        0
    }

    /// Inline slots hold no reference: the owner writes `LOCKED`.
    const HELD: u32 = super::encoding::LOCKED;
}

impl<const S: usize> RonInline<S> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            const { assert!(S >= 1 && S < 1 << 14, "RonInline supports 1 to 16383 slots") };
            RonInline {
                head: CachePadded::new(Head { word: Word::new(), handovers: AtomicU32::new(0) }),
                slots: SlotTable::new(),
            }
        }
    }

    /// Acquires the lock; a contended waiter waits in its slot from the CPU hint.
    #[inline]
    pub fn acquire(&self) -> PlaceToken {
        if self.head.word.acquire_fast() {
            return PlaceToken::NONE;
        }
        self.acquire_contended()
    }

    /// The contended acquisition from the CPU hint, out of line so that
    /// the fast path above inlines into every caller as one CAS (as for
    /// `RonRaw`).
    #[cold]
    #[inline(never)]
    fn acquire_contended(&self) -> PlaceToken {
        self.head.word.acquire_slow(&self.slots, slot_hint::<S>())
    }

    /// Acquires the lock waiting in slot `slot % S` (any value is safe).
    pub fn acquire_in(&self, slot: usize) -> PlaceToken {
        match self.try_acquire() {
            Some(t) => t,
            None => self.head.word.acquire_slow(&self.slots, slot % S),
        }
    }

    /// Takes the lock if it is free; never registers in a slot.
    #[inline]
    pub fn try_acquire(&self) -> Option<PlaceToken> {
        self.head
            .word
            .try_acquire(|t| self.slots.slot_empty(t % S))
            .then_some(PlaceToken::NONE)
    }

    /// Tries to take the lock until `deadline`, waiting in the caller's
    /// slot (from the CPU hint); `None` only once the deadline has passed.
    #[cfg(feature = "std")]
    pub fn try_acquire_until(&self, deadline: crate::timed::Deadline) -> Option<PlaceToken> {
        if self.head.word.acquire_fast() {
            return Some(PlaceToken::NONE);
        }
        self.head
            .word
            .acquire_slow_until(&self.slots, slot_hint::<S>(), deadline)
    }

    /// Waits for the lock in slot `slot % S` (any value is safe) as long
    /// as `keep_waiting` says so; see `RonRaw::try_acquire_in_while` (the
    /// same protocol, without a block to drop).
    pub fn try_acquire_in_while(
        &self,
        slot: usize,
        keep_waiting: impl FnMut() -> bool,
    ) -> Option<PlaceToken> {
        if let Some(t) = self.try_acquire() {
            return Some(t);
        }
        self.head
            .word
            .acquire_slow_while(&self.slots, slot % S, keep_waiting)
    }

    /// Releases the lock: hands it to the next registered slot along the
    /// route after the acquirer's slot, or frees it.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: PlaceToken) {
        if !self.slots.any_marked() {
            self.head.word.release_free();
            return;
        }
        self.release_slow(token);
    }

    #[cold]
    #[inline(never)]
    fn release_slow(&self, token: PlaceToken) {
        // The hint is asked before anything changes; if it panics, the
        // release runs from slot 0 (see `RonRaw::release_slow`).
        token.release_from_slot::<S>(|from| {
            let head = &*self.head;
            head.word.publish(
                head.word
                    .next_owner(&self.slots, from, S, &head.handovers, false),
            );
        });
    }

    /// Whether the lock is held or handed over (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.head.word.is_held(|t| self.slots.slot_empty(t % S))
    }
}

crate::raw_impl::impl_default_debug! {
    impl [const S: usize] for RonInline<S>, debug "RonInline" { slots: S }
}

#[cfg(not(loom))]
// SAFETY: by the lock-word table in `RonRaw`'s module docs (`word.rs`), the
// lock is owned by whoever performed the last `X -> LOCKED` transition of
// the word, and every such transition is one CAS from `FREE` or
// `HANDED(s, seq)` (Acquire, pairing with the owner's Release store of
// `FREE` or `HANDED`), with one winner; only the owner writes `FREE` or
// `HANDED`. So `lock` and `try_lock` return a guard only to that CAS's
// winner, exactly as for a test-and-set lock. The inline slots and the CPU
// hint only steer which waiter tries the CAS first; a wrong hint or a
// migration cannot make two CASes win. No user code runs while a waiter is
// registered (the hint is asked before), so `lock` unwinds only with
// nothing registered. `unlock` asks the hint only for a fast-path guard
// (`PlaceToken::NONE`) and, if it panics, releases from slot 0 first, so it
// never unwinds holding the lock. A forgotten guard leaves the lock held;
// nothing dangles (waiters are counts in the slots).
unsafe impl<const S: usize> lock_api::RawMutex for RonInline<S> {
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
unsafe impl<const S: usize> lock_api::RawMutexFair for RonInline<S> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }
}

#[cfg(feature = "std")]
crate::timed::impl_raw_mutex_timed! {
    impl [const S: usize] for RonInline<S>
}

// Plain unit tests: not under loom or shuttle, whose atomics need their runtime.
#[cfg(all(test, not(loom), not(shuttle)))]
mod tests {
    use super::super::encoding::{FREE, HANDED, LOCKED, SEQ_SHIFT, TAG, handed, handed_slot};
    use super::super::wait::Watch;
    use super::*;
    use crate::sync::Ordering;

    /// Locks `l` on the fast path, registers a waiter in `slot` by hand and
    /// releases: the release hands over. Returns the word it wrote.
    fn hand_over<const S: usize>(l: &RonInline<S>, slot: usize) -> u32 {
        let t = l.acquire();
        l.slots.register::<true>(slot);
        // SAFETY: we hold the lock.
        unsafe { l.release(t) };
        let word = l.head.word.state.load(Ordering::Relaxed);
        assert_eq!(word & TAG, HANDED);
        assert_eq!(handed_slot(word), slot);
        // Take it as the registered waiter would, then leave the slot.
        assert!(
            l.head
                .word
                .look(slot, true, false, Some(&l.slots), &mut Watch::new(), LOCKED)
        );
        l.slots.unregister::<true>(slot);
        // SAFETY: we hold the lock (taken by `look`).
        unsafe { l.release(PlaceToken::at(slot)) };
        assert_eq!(l.head.word.state.load(Ordering::Relaxed), FREE);
        word
    }

    #[test]
    fn seq_survives_free_periods() {
        let l = RonInline::<4>::new();
        let first = hand_over(&l, 2);
        // An idle period: lock and unlock on the fast path.
        for _ in 0..3 {
            let t = l.acquire();
            // SAFETY: we hold the lock.
            unsafe { l.release(t) };
        }
        let second = hand_over(&l, 2);
        assert_ne!(
            first, second,
            "a handover after an idle period repeats a word"
        );
        assert_eq!(second >> SEQ_SHIFT, (first >> SEQ_SHIFT) + 1);
    }

    #[test]
    fn seq_wraps_after_65536_handovers_without_touching_the_slot() {
        let l = RonInline::<64>::new();
        l.head.handovers.store(0xFFFE, Ordering::Relaxed);
        let a = hand_over(&l, 63);
        let b = hand_over(&l, 63);
        let c = hand_over(&l, 63);
        assert_eq!(
            [a >> SEQ_SHIFT, b >> SEQ_SHIFT, c >> SEQ_SHIFT],
            [0xFFFF, 0, 1]
        );
        assert_eq!(l.head.handovers.load(Ordering::Relaxed), 0x1_0001);
        // 65,536 handovers later the word repeats, not sooner.
        l.head.handovers.store(0xFFFE + 0x1_0000, Ordering::Relaxed);
        assert_eq!(hand_over(&l, 63), a);
        assert_eq!(handed(3, 0x1_0005), handed(3, 5));
        assert_eq!(handed_slot(handed(16383, u32::MAX)), 16383);
    }
}
