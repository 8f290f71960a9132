//! The values of `RonRaw`'s and `RonInline`'s lock word, as constants and
//! helpers; the operations on it are in [`word`](super::word). What each
//! value means, who may write the word next, and why `seq` survives `FREE`
//! periods: the lock-word table of the [module docs](super), stated there
//! only.
//!
//! Layout: the low 2 bits are the tag (`FREE` 0, `LOCKED` 1, `HANDED` 2;
//! tag 3 is `KEPT`, the one value with that tag); a `HANDED` word carries
//! the slot in the next 14 bits (`S < 16384`: the last value is
//! [`WATCH_SLOT`]) and `seq`, the low 16 bits of the lock's handover
//! count, in the high 16.

pub(crate) const FREE: u32 = 0;
pub(crate) const LOCKED: u32 = 1;
pub(crate) const HANDED: u32 = 2;
/// Held by an owner that kept its waiting reference to the lock's pooled
/// block (the one value whose tag is `TAG`; the lock-word table of the
/// [module docs](super)).
pub(crate) const KEPT: u32 = 3;
pub(crate) const TAG: u32 = 3;
const SLOT_SHIFT: u32 = 2;
const SLOT_MASK: u32 = (1 << 14) - 1;
pub(crate) const SEQ_SHIFT: u32 = 16;
const SEQ_MASK: u32 = 0xFFFF;

/// The slot value of a handover to the lock's watcher, the one waiter
/// that stays awake while others of the lock sleep on a futex
/// (`park.rs`). On the releasing thread's fair turn (once every
/// [`FAIR_EVERY_NS`](super::FAIR_EVERY_NS), see `wait::fair_turn_due`), a
/// `RonRaw` release that would hand the lock along the route while the
/// lock has a watcher hands it to the watcher instead: otherwise the
/// registered waiters pass the lock among themselves while the sleepers
/// wait. The watcher takes it at its next look (and leaves the watch,
/// waking the next sleeper); if it cannot, any waiter takes it over after
/// `PATIENCE_NS`, as for a grantee that was preempted. No real slot has
/// this number (`RonRaw` has at most 256 slots, `RonInline` fewer than
/// 16384), and no doorbell rings for it.
pub(crate) const WATCH_SLOT: usize = SLOT_MASK as usize;

/// The lock word that hands the lock to `slot` as handover number `seq`
/// (only its low 16 bits are kept).
#[inline]
pub(crate) fn handed(slot: usize, seq: u32) -> u32 {
    HANDED | ((slot as u32 & SLOT_MASK) << SLOT_SHIFT) | ((seq & SEQ_MASK) << SEQ_SHIFT)
}

/// The slot a `HANDED` word names.
#[inline]
pub(crate) fn handed_slot(word: u32) -> usize {
    ((word >> SLOT_SHIFT) & SLOT_MASK) as usize
}

/// Whether `word` hands the lock to a slot that `slot_empty` says has no
/// registered waiter: an *orphaned* handover. It arises when the slot's
/// last waiter gave up (a timed acquisition) after the releaser chose the
/// slot and before it published the handover. Anyone may take it: every
/// `X -> LOCKED` is one CAS, so exclusion does not depend on the answer,
/// which is a snapshot (a waiter registering just after it only loses its
/// place, and looks at the word again). A handover to the watcher
/// ([`WATCH_SLOT`]) is never orphaned: it names no slot.
#[inline]
pub(crate) fn orphaned(word: u32, slot_empty: impl FnOnce(usize) -> bool) -> bool {
    word & TAG == HANDED && handed_slot(word) != WATCH_SLOT && slot_empty(handed_slot(word))
}
