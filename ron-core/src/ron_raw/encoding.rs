//! The values of `RonRaw`'s and `RonInline`'s lock word: who owns the
//! lock. The operations on it are in [`word`](super::word).
//!
//! | value | meaning | who may write next |
//! |---|---|---|
//! | `FREE` (0) | unlocked | anyone: CAS -> `LOCKED` |
//! | `LOCKED` (1) | held | the owner: `FREE` or `HANDED` |
//! | `KEPT` (3) | held, and the owner keeps the reference to the lock's pooled block it waited with, for its release (`RonRaw` only) | the owner: `FREE` or `HANDED` (after dropping the reference) |
//! | `HANDED(s, seq)` | released to slot `s`, owned by nobody | a waiter of `s` (at once) or any waiter that watched this exact value for `PATIENCE_NS` (`PATIENCE` looks): CAS -> `LOCKED` |
//! | `HANDED(WATCH_SLOT, seq)` | released to the lock's parking *watcher* (`RonRaw`'s turn for its sleepers, see [`WATCH_SLOT`]), owned by nobody | the waiter that holds the lock's watch (at once) or, as above, any waiter after `PATIENCE_NS` |
//!
//! Every `X -> LOCKED` (or `KEPT`) is one CAS from `FREE` or `HANDED`,
//! with one winner, and only the owner writes `FREE` or `HANDED`:
//! exclusion is that of a test-and-set lock, whatever the slots, the
//! blocks or the CPU hint say. `KEPT` is `LOCKED` for everyone but the
//! owner's release, which reads it back to learn whether it holds a block
//! reference (so a guard, which anyone can forge, never carries one).
//! Slots (and, for `RonRaw`, the pooled block that holds them) only steer
//! *who* takes a `HANDED` word first.
//!
//! `seq` is the low 16 bits of a handover count that only the owner writes
//! (a relaxed counter ordered by the lock itself, passed to
//! [`Word::next_owner`](super::word::Word::next_owner)): `RonInline` keeps it beside its word, `RonRaw` in
//! its pooled block (a handover needs the block anyway). It survives `FREE`
//! periods (for `RonRaw`: while the lock keeps its block): `HANDED(s, n)`
//! recurs only after 65,536 further handovers, never merely because the
//! lock went idle. That is what lets a waiter judge a handover's age by how
//! long it has watched one word value (see
//! [`WATCH_HORIZON_NS`](super::WATCH_HORIZON_NS) for the wrap, and for what
//! a block change does to it). The slot takes 14 bits (`S < 16384`: the
//! last value is [`WATCH_SLOT`]). The
//! fast path never touches the counter.

pub(crate) const FREE: u32 = 0;
pub(crate) const LOCKED: u32 = 1;
pub(crate) const HANDED: u32 = 2;
/// Held by an owner that kept its waiting reference to the lock's pooled
/// block (the one value whose tag is `TAG`; see the table above).
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
