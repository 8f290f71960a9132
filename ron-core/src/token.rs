//! [`PlaceToken`]: the guard state of the locks that wait in one of several
//! places, and what its index means in each.
//!
//! | lock | the index is | set when |
//! |---|---|---|
//! | `Ron`, `RonTicket`, `RonPlock`, `NxtRon`, `RonRaw`, `RonInline`, `RonPark` | the acquirer's *slot* (a position on the route) | the acquirer registered in a slot; [`NONE`](PlaceToken::NONE) after a fast-path acquisition |
//! | `ShRon` | the acquirer's *row* of the wait table | as for a slot |
//! | `CBoMcs`, `Fsl` | the *local lock* (group) the acquisition went through | always |
//!
//! The unlock uses the index to start its handover scan (slots, rows) or to
//! find the local lock to release (groups), so it never depends on the CPU
//! the thread runs on at that moment. Any index is safe to pass back: an
//! out-of-range one is reduced or replaced, never trusted for exclusion.

/// The place an acquisition waited in or went through: a slot, a row or a
/// local lock, depending on the lock (see the [module docs](self)).
///
/// Copy, 4 bytes. Build one with [`at`](Self::at) only to play a thread
/// that migrated (tests, models): the lock's own `acquire` returns the
/// right one.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PlaceToken {
    index: u32,
}

/// The former name of [`PlaceToken`].
#[deprecated(
    since = "0.1.0",
    note = "use `PlaceToken`: one name for the guard state of every lock"
)]
pub type SlotToken = PlaceToken;

impl PlaceToken {
    /// "Acquired without waiting in a place" (a fast-path acquisition of a
    /// slotted or row lock; the unlock then asks the CPU hint if it finds
    /// waiters).
    pub const NONE: PlaceToken = PlaceToken { index: u32::MAX };

    /// A token naming place `index`. Any value is safe to pass back to an
    /// unlock: the index only chooses where the handover scan starts or
    /// which local lock is released (modulo the lock's count).
    #[inline]
    pub const fn at(index: usize) -> PlaceToken {
        PlaceToken {
            index: index as u32,
        }
    }

    /// The index recorded at acquisition, if there is one.
    #[inline]
    pub fn index(self) -> Option<usize> {
        (self.index != u32::MAX).then_some(self.index as usize)
    }

    /// The former name of [`index`](Self::index).
    #[deprecated(since = "0.1.0", note = "use `index`")]
    #[inline]
    pub fn slot(self) -> Option<usize> {
        self.index()
    }
}
