//! The ownership flag of the slotted RON locks (`Ron`, `RonTicket`,
//! `RonPlock`, `NxtRon`) and the entry points they share.
//!
//! In those locks the lock is owned by whoever set `in_use` (by CAS from
//! false) or received a grant while `in_use` stayed true; `in_use` goes
//! back to false only when a release finds nobody to hand over to. The flag
//! is the same test-and-set flag as [`Ttas`](crate::Ttas)'s (`flag.rs`):
//! the fast path and a waiter's look are both its load-then-CAS
//! (`TasFlag::take_if_free`), so an arrival that finds the lock held
//! only reads the line the slot heads poll: it never takes it exclusive
//! (a failed `lock cmpxchg` does, on real hardware as on the VM).

use core::ops::Deref;

use crossbeam_utils::CachePadded;

use crate::flag::TasFlag;

/// The test-and-set flag ([`TasFlag`], the word of `Ttas`) on its own
/// cache-line pair: true while the lock is held or handed over.
pub(crate) struct InUse(CachePadded<TasFlag>);

impl InUse {
    crate::sync::const_fn_unless_loom! {
        /// A flag saying "free".
        pub(crate) fn new() -> Self {
            InUse(CachePadded::new(TasFlag::new()))
        }
    }
}

impl Deref for InUse {
    type Target = TasFlag;

    #[inline]
    fn deref(&self) -> &TasFlag {
        &self.0
    }
}

/// The public entry points of a slotted lock with `S` slots (or as many as
/// the expression passed says) whose type has
/// `fn try_fast(&self) -> bool` (a load of its `InUse`, then a CAS only
/// when it looked free) and
/// `fn acquire_slow(&self, slot: usize, on_wait: impl FnOnce()) -> PlaceToken`.
/// Expands inside the type's `impl` block.
macro_rules! slotted_entry_points {
    () => {
        $crate::in_use::slotted_entry_points!(S);
    };
    ($n:expr) => {
        /// Acquires the lock, waiting in the caller's slot (from the CPU hint).
        #[inline]
        pub fn acquire(&self) -> $crate::token::PlaceToken {
            if self.try_fast() {
                return $crate::token::PlaceToken::NONE;
            }
            self.acquire_slow($crate::slots::slot_hint_of($n), || ())
        }

        /// Acquires the lock waiting in slot `slot` modulo the lock's slot
        /// count (any value is safe).
        pub fn acquire_in(&self, slot: usize) -> $crate::token::PlaceToken {
            self.acquire_in_observed(slot, || ())
        }

        /// As [`acquire_in`](Self::acquire_in), calling `on_wait` once the
        /// caller waits in its slot (or at once after an acquisition made
        /// without waiting there: the fast path, or a `RonTicket` waiter
        /// that had not queued yet): tests count overtakes from that moment.
        #[doc(hidden)]
        pub fn acquire_in_observed(
            &self,
            slot: usize,
            on_wait: impl FnOnce(),
        ) -> $crate::token::PlaceToken {
            if self.try_fast() {
                // `on_wait` is caller code: if it panics, give the lock back.
                let held = $crate::unwind::OnUnwind::new(|| {
                    // SAFETY: we hold the lock (the fast path just took it).
                    unsafe { self.release($crate::token::PlaceToken::at(0)) }
                });
                on_wait();
                held.disarm();
                return $crate::token::PlaceToken::NONE;
            }
            self.acquire_slow(slot % $n, on_wait)
        }

        /// Takes the lock if it is free; never waits in a slot.
        #[inline]
        pub fn try_acquire(&self) -> Option<$crate::token::PlaceToken> {
            self.try_fast().then_some($crate::token::PlaceToken::NONE)
        }
    };
}
pub(crate) use slotted_entry_points;
