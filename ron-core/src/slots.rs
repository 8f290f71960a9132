//! The slot mechanism shared by the RON family (`RonPlock`, `NxtRon`, `RonRaw`;
//! `RonTicket` has ticket slots of its own, placed the same way).
//!
//! The guard of these locks is a [`PlaceToken`]: the slot the acquirer
//! registered in.
//!
//! A lock with `S` slots keeps, per slot, one 32-bit *slot word*:
//!
//! | bits | meaning | written by |
//! |---|---|---|
//! | 0 | `GRANT`: the lock (or, for `RonRaw`, a doorbell) was passed to this slot | set by the holder at unlock; cleared by whoever takes it |
//! | 1..32 | number of threads registered as waiting in this slot | `+1` by a waiter registering, `-1` when it acquires (or, in `RonRaw`, gives up) |
//!
//! and, for the bitmap variants, one bit per slot saying "may have waiters",
//! 64 per word. Word `k` of the bitmap lives in the second cache line of
//! slot `k` (`k < ceil(S/64) <= S`), so the bitmap costs no memory beyond
//! the padded slots and its updates never invalidate the line a slot's
//! waiters spin on.
//!
//! Beside the slot word, on its line, a pooled `NxtRon`/`RonPlock` slot
//! holds a *bank* of block references (written only by the lock's holder,
//! `plock`'s "The bank"), and a `RonRaw` slot a note. The bank marks (which
//! slots may hold a bank) share the second line of the last slot.
//!
//! Each slot is 128 bytes (two 64-byte lines, the prefetch pair on x86:
//! see `crossbeam_utils::CachePadded`): waiters of different slots never
//! share a line.
//!
//! ## One slot per CPU: pooled blocks or `S` inline
//! The handover follows the route between *slots*, and a CPU waits in
//! slot `position * n / route length` ([`route::slot_of`](crate::route::slot_of)).
//! With `n` at least the number of CPUs on the installed route every CPU
//! has a slot of its own and the handover order is the route's; with fewer,
//! `ceil(CPUs / n)` neighbouring CPUs share a slot and are not ordered by
//! the route among themselves.
//!
//! The default `RonRaw`, `RonTicket`, `NxtRon` and `RonPlock` take their
//! slots from a process-wide pool of blocks (`ron_raw::pool`) while they
//! have registered waiters: the lock itself is 8 bytes, and a claimed
//! block has [`BLOCK_SLOTS`](crate::ron_raw::BLOCK_SLOTS) slots (256 with
//! `std`: 32,896 bytes), of which the lock uses
//! `n =` [`active_slots()`](crate::ron_raw::active_slots): one per CPU of
//! the installed route, rounded up to a power of two. `RonTicket` has its
//! own pool (its slots are ticket locks); the others share one.
//! The `*Inline<S>` variants (`RonInline`, `RonTicketInline`,
//! `NxtRonInline`, `RonPlockInline`) and `Ron<S>` keep `n = S` slots in
//! the lock (`128 * (S + 1)` bytes: 2176 at 16, 32,896 at 256), for a slot
//! count fixed when the program is built.
//!
//! Each lock's bound is stated per slot and holds for any `n` (no
//! guarantee is lost with fewer slots than CPUs, it weakens as stated):
//!
//! | lock | `n >=` CPUs (one thread per CPU) | `n <` CPUs or threads > CPUs | pool exhausted |
//! |---|---|---|---|
//! | `RonTicket` | a waiter is overtaken at most `n` times | FIFO in its slot: `q + (q + 1)(n - 1) + 1` with `q` slot-mates ahead | unregistered waiter (TTAS, re-registers every 128 looks): no bound |
//! | `RonPlock`, `NxtRon` | `n - 1` (+1) | per slot `n - 1` (+1); slot-mates race for its grant (no per-thread bound) | as `RonTicket` |
//! | `Ron` (inline only) | `S - 1` (+1) | `S - 1` (+1) for the slot's claimer; none for a thread waiting to claim | - |
//! | `ShRon` | rows are per CPU up to 256 CPUs: `255` (+1) | a thread sharing a row (or a full table) has none | - |
//!
//! The pool runs out only when more locks than its
//! [`POOL_MAX_BLOCKS`](crate::ron_raw::POOL_MAX_BLOCKS) (4096 with `std`)
//! have registered waiters at once: a lock that has a block takes every
//! waiter in.

//! ## Bitmap invariant
//! If a slot's count is non-zero at quiescence, its bit is set. Bits may be
//! stale-set (count 0); the scan skips such slots. `register` increments the
//! count, then loads the bit and sets it only if it reads clear; a thread
//! that clears a bit (`clear_bit_if_empty`) does so only after reading the
//! count 0, and then re-checks the count, setting the bit again if a
//! registration slipped in between. The two pairs (count write, bit load)
//! and (bit clear, count load) are the store-buffering pattern: with these
//! steps `SeqCst`, a registrant that reads its bit set is ordered before
//! the clear, whose re-check then sees its count; so no interleaving ends
//! with a non-zero count and a clear bit. A bit that is wrongly clear could
//! only cost fairness, never safety: waiters also poll the lock word.
//!
//! Bits are cleared lazily where a waiter takes the lock: the plock
//! protocol's waiters (`try_take_grant`, `uncount`) and `RonRaw`'s waiter
//! that takes a handover (`unregister_keep_bit`) leave their bit set even
//! when their slot empties. A thread that comes back to its slot finds its
//! bit set and writes nothing of the bitmap, so the bitmap line stays
//! shared by the releasers that read it. A release's scan that finds a
//! marked slot empty clears its bit (and re-checks, above), as does a
//! waiter that leaves otherwise (`unregister`, `leave`).
//!
//! ## Orderings no test can kill
//! The `SeqCst` of the bitmap invariant (registration, the bit's load,
//! set and clear, the re-checking count load, and the unlock's bitmap
//! loads) survive ordering mutation (`.ci/mutants`): weakened to `Relaxed`, mutual
//! exclusion and progress still hold, since every data handover goes
//! through the grant CAS (Release/Acquire) or the lock word and a waiter
//! whose bit was lost still polls the lock word. What they buy is the
//! per-slot waiting bound (no registered slot skipped by an unlock), which
//! needs the store-buffering outcome ruled out: loom treats `SeqCst` like
//! `AcqRel` and x86 compiles these loads and read-modify-writes the same
//! either way, so no model or test here can tell them apart. They stay
//! `SeqCst`, each marked `mutants: bitmap invariant`.

use crate::sync::{AtomicU32, AtomicU64, Ordering};
pub use crate::token::PlaceToken;
#[allow(deprecated)]
pub use crate::token::SlotToken;

/// `GRANT` bit of a slot word.
pub(crate) const GRANT: u32 = 1;
/// One registered waiter in a slot word.
pub(crate) const ONE: u32 = 2;
/// Flag of a slot's bank (`Slot::banked`): the slot is marked in the
/// bank marks (or their count overflowed).
const BANK_MARKED: u32 = 1 << 31;
/// Slots a lock marks in its bank marks between two frees; the next slot
/// to bank sets the count past it, and the free then reads every slot's
/// bank instead (`SlotTable::collect_banks`): a mark is a write on a line
/// that moves between holders, in the hold time, and a free's reads of
/// every slot overlap.
#[cfg(not(loom))]
const BANK_MARKS_MAX: u32 = 16;
/// Slots marked before the free scans every slot (1 under loom, so that
/// the models reach both ways of collecting).
#[cfg(loom)]
const BANK_MARKS_MAX: u32 = 1;

/// One waiting room: the slot word on the first line, a bitmap word on the second.
#[repr(C, align(128))]
pub(crate) struct Slot {
    word: AtomicU32,
    /// `RonRaw` only: the number of the handover a release is about to
    /// publish to this slot, written just before it rings (beside the
    /// doorbell, so the woken waiter reads it with the ring's line).
    note: AtomicU32,
    /// Pooled `NxtRon`/`RonPlock` only: block references their owners
    /// banked here (see `plock`'s "The bank"), and the
    /// `BANK_MARKED` flag. Read and written only by the lock's holder,
    /// beside the slot word it has just taken the grant on.
    banked: AtomicU32,
    _pad: [u8; 52],
    bits: AtomicU64,
    /// Pooled `NxtRon`/`RonPlock` only, in slot `S - 1` for `S <= 256`
    /// (a second line nothing else touches unless `S == 1`; see
    /// [`SlotTable::bank_marks`]): the bank marks, bit `s % 64` of word
    /// `s / 64` set while slot `s` may hold a bank (see
    /// [`bank`](SlotTable::bank)).
    bank_marks: [AtomicU64; 4],
    /// Pooled `NxtRon`/`RonPlock` only, in slot `S - 1`: the number of
    /// slots marked in the bank marks, `BANK_MARKS_MAX + 1` once more
    /// slots banked than it marks.
    bank_marked: AtomicU32,
}

impl Slot {
    crate::sync::const_fn_unless_loom! {
        fn new() -> Slot {
            Slot {
                word: AtomicU32::new(0),
                note: AtomicU32::new(0),
                banked: AtomicU32::new(0),
                _pad: [0; 52],
                bits: AtomicU64::new(0),
                bank_marks: [
                    AtomicU64::new(0),
                    AtomicU64::new(0),
                    AtomicU64::new(0),
                    AtomicU64::new(0),
                ],
                bank_marked: AtomicU32::new(0),
            }
        }
    }
}

/// Waiter count of a slot word.
#[inline]
pub(crate) fn count(word: u32) -> u32 {
    word >> 1
}

/// `S` slots and (for the bitmap variants) their bitmap: the inline slots
/// of `NxtRon`/`RonPlock` and the slots of a pooled block of `RonRaw`,
/// `NxtRon` and `RonPlock` (opaque outside the crate).
pub struct SlotTable<const S: usize> {
    slots: [Slot; S],
}

impl<const S: usize> SlotTable<S> {
    crate::sync::const_fn_unless_loom! {
        pub(crate) fn new() -> Self {
            SlotTable { slots: crate::sync::array_init!(S, Slot::new()) }
        }
    }

    /// The slot word of slot `s`.
    #[inline]
    pub(crate) fn word(&self, s: usize) -> &AtomicU32 {
        &self.slots[s].word
    }

    #[inline]
    fn bitmap_word(&self, k: usize) -> &AtomicU64 {
        &self.slots[k].bits
    }

    /// Counts the caller as a waiter of slot `s` (and marks it in the bitmap
    /// when `BITMAP`). Returns the number of waiters that were already
    /// registered there (for the path counters of the verification suites).
    #[inline]
    pub(crate) fn register<const BITMAP: bool>(&self, s: usize) -> u32 {
        // SeqCst: one of the four steps of the bitmap invariant (module docs);
        // for the non-bitmap variants Relaxed would do, but registration is
        // on the slow path.
        // mutants: bitmap invariant (fairness only; module docs).
        let old = self.word(s).fetch_add(ONE, Ordering::SeqCst);
        if BITMAP {
            self.set_bit(s);
        }
        count(old)
    }

    #[inline]
    fn set_bit(&self, s: usize) {
        let (k, b) = (s / 64, 1u64 << (s % 64));
        // Plain load first: the bit is usually set already (by a slot-mate,
        // or left set by this slot's last waiter to take the lock).
        // mutants: bitmap invariant (fairness only; module docs).
        if self.bitmap_word(k).load(Ordering::SeqCst) & b == 0 {
            // mutants: bitmap invariant (fairness only; module docs).
            self.bitmap_word(k).fetch_or(b, Ordering::SeqCst);
        }
    }

    /// After the count of slot `s` dropped to zero: clear its bit, then
    /// restore it if a waiter registered meanwhile (bitmap invariant).
    #[inline]
    fn clear_bit_if_empty(&self, s: usize) {
        let (k, b) = (s / 64, 1u64 << (s % 64));
        // mutants: bitmap invariant (fairness only; module docs).
        self.bitmap_word(k).fetch_and(!b, Ordering::SeqCst);
        // mutants: bitmap invariant (fairness only; module docs).
        if count(self.word(s).load(Ordering::SeqCst)) != 0 {
            crate::coverage::hit!("slots.bit_restored");
            self.set_bit(s);
        }
    }

    /// The caller, registered in slot `s`, became the owner by other means
    /// than the slot's grant: drop its count (before anything can observe
    /// the new owner's unlock: docs/design.md, "Pitfalls in the published RON code").
    #[inline]
    pub(crate) fn unregister<const BITMAP: bool>(&self, s: usize) {
        // SeqCst: bitmap invariant (module docs).
        // mutants: bitmap invariant (fairness only; module docs).
        let old = self.word(s).fetch_sub(ONE, Ordering::SeqCst);
        if BITMAP && count(old) == 1 {
            self.clear_bit_if_empty(s);
        }
    }

    /// [`register`](Self::register) for `RonRaw`, whose doorbell (`GRANT`)
    /// a waiter that took its handover alone leaves set (see
    /// [`unregister_keep_bit`](Self::unregister_keep_bit)): when the slot
    /// has no waiter, a set `GRANT` rings for nobody, so the registration
    /// clears it in the same read-modify-write (a first try from the value
    /// such a slot holds, `GRANT` alone). Returns the slot-mates found.
    #[inline]
    pub(crate) fn register_clearing_bell(&self, s: usize) -> u32 {
        let w = self.word(s);
        let mut cur = GRANT; // a guess, checked by the CAS
        loop {
            let new = if count(cur) == 0 {
                (cur & !GRANT) + ONE
            } else {
                cur + ONE
            };
            // SeqCst: as `register` (bitmap invariant).
            // mutants: bitmap invariant (fairness only; module docs).
            match w.compare_exchange_weak(cur, new, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => break,
                Err(now) => cur = now,
            }
        }
        if count(cur) == 0 && cur & GRANT != 0 {
            crate::coverage::hit!("slots.stale_bell_cleared");
        }
        self.set_bit(s);
        count(cur)
    }

    /// [`unregister`](Self::unregister) that leaves the slot's bitmap bit
    /// set even when the count drops to zero: a stale-set bit, which the
    /// bitmap invariant allows, cleared by the next scan that finds the
    /// slot empty (`grant_next_bitmap_within::<true>`). For a waiter that
    /// took the lock and will likely register again soon, this saves two
    /// read-modify-writes of the bitmap line that every registration and
    /// every release reads.
    ///
    /// For `RonRaw`'s waiter that just took its slot's handover: the
    /// doorbell is left set when the slot is left empty (the next
    /// registration clears it, [`register_clearing_bell`](Self::register_clearing_bell),
    /// off the lock's critical path) and cleared when slot-mates still wait
    /// (a bell left ringing would have them look at the lock word on every
    /// spin). No other handover can be in flight: the caller owns the lock.
    #[inline]
    pub(crate) fn unregister_keep_bit(&self, s: usize) {
        // SeqCst: bitmap invariant (module docs).
        // mutants: bitmap invariant (fairness only; module docs).
        let old = self.word(s).fetch_sub(ONE, Ordering::SeqCst);
        if count(old) > 1 && old & GRANT != 0 {
            // Relaxed: the doorbell carries no data.
            self.word(s).fetch_and(!GRANT, Ordering::Relaxed);
        }
    }

    /// Takes the grant of slot `s` and drops the caller's count in one step:
    /// `(c, GRANT) -> (c - 1, 0)`. Returns whether the caller got it.
    /// `alone` is the caller's belief that it is its slot's only waiter
    /// (it only chooses how the look reads the slot; this updates it).
    ///
    /// The slot's bitmap bit (bitmap variants) stays set even when the
    /// count drops to zero: a stale-set bit, which the bitmap invariant
    /// allows, cleared by the next scan that finds the slot empty
    /// ([`grant_next_bitmap_within`](Self::grant_next_bitmap_within)) or
    /// kept for the caller's next registration, which then writes nothing
    /// of the bitmap. The new owner thus writes only its slot's line.
    #[inline]
    pub(crate) fn try_take_grant(&self, s: usize, alone: &mut bool) -> bool {
        let w = self.word(s);
        // While the caller believes itself alone in its slot (`alone`: it
        // registered into an empty slot, and no look since saw a
        // slot-mate), a look is the take itself, guessing "one waiter,
        // granted": one read-modify-write, which takes the line for
        // writing. A look that finds the grant owns the lock at once,
        // where a load and then a CAS would fetch the line shared and
        // then pay an invalidation of the granting releaser's copy (one
        // more hop per handover); a look that finds none costs what a load
        // does, since only a grant writes the line from outside. With
        // slot-mates (more threads than CPUs, a shared or wrong CPU hint)
        // a look is a load, and a CAS only on a grant: waiters on other
        // CPUs then share the line instead of taking it from each other.
        // Acquire on success: the grant was stored with Release by the
        // previous holder, so its critical section happens-before ours.
        // Relaxed on failure: nothing was taken; the value read is a
        // guess for the next CAS. (A take only lowers the count and
        // leaves the bit: it has no part in the bitmap invariant.)
        let mut cur = if *alone {
            match w.compare_exchange(ONE | GRANT, 0, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => {
                    crate::coverage::hit!("slots.grant_taken_alone");
                    return true;
                }
                Err(cur) => cur,
            }
        } else {
            w.load(Ordering::Relaxed) // a guess, checked by the CAS
        };
        *alone = count(cur) <= 1;
        loop {
            if cur & GRANT == 0 || count(cur) == 0 {
                return false;
            }
            // Acquire on success, Relaxed on failure: as above.
            match w.compare_exchange(cur, cur - ONE - GRANT, Ordering::Acquire, Ordering::Relaxed) {
                Ok(_) => {
                    crate::coverage::hit!("slots.grant_taken_shared");
                    return true;
                }
                Err(now) => cur = now,
            }
        }
    }

    /// The caller, registered in slot `s`, took the lock by other means
    /// than the slot's grant: drops its count, leaving the slot's bitmap
    /// bit set like [`try_take_grant`](Self::try_take_grant) (the plock
    /// protocol; `RonRaw` uses [`unregister`](Self::unregister) and
    /// [`unregister_keep_bit`](Self::unregister_keep_bit)).
    #[inline]
    pub(crate) fn uncount(&self, s: usize) {
        // SeqCst: kept from the registration's read-modify-writes (slow
        // path); only lowering the count, it has no part in the bitmap
        // invariant.
        // mutants: not load-bearing: every releaser that reads this count
        // comes after us through the lock's own Release/Acquire, and
        // coherence then gives it this decrement.
        self.word(s).fetch_sub(ONE, Ordering::SeqCst);
    }

    /// A registered waiter of slot `s` leaves it without having acquired
    /// (its relax policy panicked): drops its count, unless the slot holds
    /// a grant and the caller is its last waiter, in which case it takes
    /// the grant, since nobody else could: `(c, GRANT) -> (c - 1, 0)`.
    /// Returns whether the caller took the grant (it then owns the lock and
    /// must release it). One CAS decides, on the word the holder's `grant`
    /// CASes, so a grant is either seen here or never set on an empty slot.
    pub(crate) fn leave<const BITMAP: bool>(&self, s: usize) -> bool {
        let w = self.word(s);
        let mut cur = w.load(Ordering::Relaxed); // a guess, checked by the CAS
        loop {
            let took = cur & GRANT != 0 && count(cur) == 1;
            let new = if took { cur - ONE - GRANT } else { cur - ONE };
            // SeqCst: the bitmap invariant, and Acquire when taking the
            // grant (pairs with the Release in `grant`).
            match w.compare_exchange_weak(cur, new, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => {
                    if BITMAP && count(cur) == 1 {
                        self.clear_bit_if_empty(s);
                    }
                    return took;
                }
                Err(now) => cur = now,
            }
        }
    }

    /// Sets the grant of slot `s` if it has a registered waiter. Returns
    /// whether it did (or the grant was already set with waiters present).
    #[inline]
    pub(crate) fn grant(&self, s: usize) -> bool {
        self.grant_from(s, None)
    }

    /// [`grant`](Self::grant) whose CAS starts from `guess` (the slot
    /// word's expected value) instead of a load of the word.
    #[inline]
    fn grant_from(&self, s: usize, guess: Option<u32>) -> bool {
        let w = self.word(s);
        // A guess, checked by the CAS.
        let mut cur = guess.unwrap_or_else(|| w.load(Ordering::Relaxed));
        loop {
            if count(cur) == 0 {
                return false;
            }
            if cur & GRANT != 0 {
                return true;
            }
            // Release: passes the holder's critical section to the thread
            // that takes the grant (Acquire in `try_take_grant`).
            match w.compare_exchange_weak(cur, cur | GRANT, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(now) => cur = now,
            }
        }
    }

    /// Zeroes the first `n` slot words (`n <= S`) and their bitmap words
    /// where they are not zero already (a pooled block being claimed: no
    /// other thread may touch the table; slots from `n` on were never used).
    pub(crate) fn clean_within(&self, n: usize) {
        // One line per slot, most of them last written by other CPUs (or
        // never touched): announce the loads, so that their misses
        // overlap. While the claimer cleans, the lock's holder takes the
        // lock again and again on its own CPU; on the VM, which prices
        // loads one after another unless announced, the 256 misses of a
        // 256-CPU route let one thread keep the lock for over a thousand
        // acquisitions (`vm/tests/episode.rs`).
        crate::sync::prefetch_lines((0..n.min(S)).map(|s| self.word(s)));
        // Relaxed, all: the claimer owns the table; the Release that
        // publishes it to the next users follows.
        for s in 0..n.min(S) {
            if self.word(s).load(Ordering::Relaxed) != 0 {
                self.word(s).store(0, Ordering::Relaxed);
            }
        }
        for k in 0..n.min(S).div_ceil(64) {
            if self.bitmap_word(k).load(Ordering::Relaxed) != 0 {
                self.bitmap_word(k).store(0, Ordering::Relaxed);
            }
        }
    }

    /// Whether slot `s` has no registered waiter (a snapshot).
    #[inline]
    pub(crate) fn slot_empty(&self, s: usize) -> bool {
        // Relaxed: a snapshot; callers decide with a CAS elsewhere.
        count(self.word(s).load(Ordering::Relaxed)) == 0
    }

    /// Whether any bitmap bit is set (bitmap variants only).
    #[inline]
    pub(crate) fn any_marked(&self) -> bool {
        self.any_marked_within(S)
    }

    /// [`any_marked`](Self::any_marked) over the first `n` slots only
    /// (`n <= S`; the others are never used).
    #[inline]
    pub(crate) fn any_marked_within(&self, n: usize) -> bool {
        // SeqCst: pairs with the SeqCst registration so that an unlocker
        // that misses a waiter is ordered before that waiter's next look at
        // the lock word (it then sees the lock free).
        // mutants: bitmap invariant (a missed waiter still polls the lock
        // word and sees it free a look later; module docs).
        (0..n.min(S).div_ceil(64)).any(|k| self.bitmap_word(k).load(Ordering::SeqCst) != 0)
    }

    /// Whether a waiter seems registered among the first `n` slots (a
    /// snapshot): two marked slots or more, or one whose word counts a
    /// waiter. A lone bit left by the waiter that took the lock (bits are
    /// cleared lazily, by the next release's scan) does not count; with
    /// more bits the slot words are not read (one may be stale too).
    pub(crate) fn waiting_within(&self, n: usize) -> bool {
        let n = n.min(S);
        let mut lone = None;
        for k in 0..n.div_ceil(64) {
            // Relaxed: a snapshot that only steers (nobody decides
            // ownership from it).
            let mut bits = self.bitmap_word(k).load(Ordering::Relaxed);
            if k * 64 + 64 > n {
                bits &= (1u64 << (n - k * 64)) - 1;
            }
            if bits == 0 {
                continue;
            }
            if lone.is_some() || bits & (bits - 1) != 0 {
                return true;
            }
            lone = Some(k * 64 + bits.trailing_zeros() as usize);
        }
        lone.is_some_and(|t| !self.slot_empty(t))
    }

    /// Grants the first slot with a registered waiter after `from` around the
    /// ring of the first `n` slots (`1 <= n <= S`; the others are never
    /// used; `from` itself last), by a linear scan of the slot words.
    /// Returns the slot granted, or `None` if no slot has a waiter.
    pub(crate) fn grant_next_linear_within(&self, from: usize, n: usize) -> Option<usize> {
        let n = n.clamp(1, S);
        (1..=n).map(|i| (from + i) % n).find(|&t| self.grant(t))
    }

    /// Adds `k` block references to the bank of slot `s` (pooled
    /// `NxtRon`/`RonPlock`, see [`Slot::banked`]; the caller holds the
    /// lock). Returns 0 if they are banked, or, when the bank would exceed
    /// `max`, empties it and returns the references it held with the `k`,
    /// for the caller to drop. A slot's first bank since the last
    /// [`collect_banks`](Self::collect_banks) marks it in the bank marks,
    /// or, past `BANK_MARKS_MAX` marked slots, sets their count past it
    /// (the free then reads every slot); its `BANK_MARKED` flag, on the
    /// line the caller has just written, says so. So a handover reads and
    /// writes its own slot's line only, but for that first bank.
    #[inline]
    pub(crate) fn bank(&self, s: usize, k: u32, max: u32) -> u32 {
        let b = &self.slots[s].banked;
        // Relaxed (all, here and in `collect_banks`): only the lock's
        // holder touches the banks and their marks, and the lock's own
        // Release/Acquire (grant, `in_use`) orders its holders.
        let v = b.load(Ordering::Relaxed);
        let held = v & !BANK_MARKED;
        let total = held + k;
        if total > max {
            if held != 0 {
                // The mark stays (until the free collects).
                b.store(v & BANK_MARKED, Ordering::Relaxed);
            }
            return total;
        }
        b.store(total | BANK_MARKED, Ordering::Relaxed);
        if v & BANK_MARKED == 0 {
            let marked = &self.slots[S - 1].bank_marked;
            let c = marked.load(Ordering::Relaxed);
            if c <= BANK_MARKS_MAX {
                marked.store(c + 1, Ordering::Relaxed);
            }
            if c < BANK_MARKS_MAX {
                let (m, bit) = (self.bank_marks(s / 64), 1u64 << (s % 64));
                let w = m.load(Ordering::Relaxed);
                m.store(w | bit, Ordering::Relaxed);
            }
        }
        0
    }

    /// Empties the banks of the first `n` slots (`n <= S`; no other slot
    /// banks) and clears their marks (the caller holds the lock and is
    /// about to free it): the references they held, and whether it read
    /// every slot (more slots banked than were marked) rather than the
    /// marked ones only. Calls `seen(s, k)` for each slot `s` found with
    /// `k > 0`.
    #[inline]
    pub(crate) fn collect_banks(&self, n: usize, mut seen: impl FnMut(usize, u32)) -> (u32, bool) {
        let marked = &self.slots[S - 1].bank_marked;
        let c = marked.load(Ordering::Relaxed);
        if c == 0 {
            return (0, false);
        }
        marked.store(0, Ordering::Relaxed);
        let mut total = 0;
        let mut take = |s: usize| {
            let b = &self.slots[s].banked;
            let v = b.load(Ordering::Relaxed);
            if v != 0 {
                b.store(0, Ordering::Relaxed);
            }
            let held = v & !BANK_MARKED;
            if held != 0 {
                seen(s, held);
                total += held;
            }
        };
        let scan = c > BANK_MARKS_MAX;
        if scan {
            (0..n.min(S)).for_each(&mut take);
        }
        for k in 0..S.div_ceil(64) {
            let m = self.bank_marks(k);
            let mut w = m.load(Ordering::Relaxed);
            if w == 0 {
                continue;
            }
            m.store(0, Ordering::Relaxed);
            while !scan && w != 0 {
                take(k * 64 + w.trailing_zeros() as usize);
                w &= w - 1;
            }
        }
        (total, scan)
    }

    /// Word `k` of the bank marks: in slot `S - 1 - k / 4` (so the 256
    /// slots of a pooled block keep theirs on one line, with the count of
    /// marked slots: a holder that marks a slot takes one line).
    #[inline]
    fn bank_marks(&self, k: usize) -> &AtomicU64 {
        &self.slots[S - 1 - k / 4].bank_marks[k % 4]
    }

    /// The note of slot `s` (`RonRaw`: see [`Slot::note`]).
    #[inline]
    pub(crate) fn note(&self, s: usize) -> &AtomicU32 {
        &self.slots[s].note
    }

    /// Like [`grant_next_linear_within`](Self::grant_next_linear_within)
    /// but visits only the slots marked in the bitmap: rotate +
    /// trailing_zeros per word, so the successor is found in O(n / 64)
    /// word reads.
    ///
    /// Bits are cleared lazily (the waiters of `RonRaw` and of the plock
    /// protocol leave theirs set when they take the lock, see
    /// [`unregister_keep_bit`](Self::unregister_keep_bit) and
    /// [`try_take_grant`](Self::try_take_grant)): the grant's CAS first
    /// guesses a slot with one waiter and no grant (one read-modify-write,
    /// which fetches the line for writing, instead of a load and a CAS
    /// when it is right), and a marked slot found empty has its bit
    /// cleared here (`stale` is called for each). With `note`, it is
    /// written to the slot's note before the grant (`RonRaw`'s doorbell).
    pub(crate) fn grant_next_bitmap_within(
        &self,
        from: usize,
        n: usize,
        note: Option<u32>,
        mut stale: impl FnMut(),
    ) -> Option<usize> {
        let n = n.clamp(1, S);
        let words = n.div_ceil(64);
        let start = (from + 1) % n;
        let (k0, b0) = (start / 64, start % 64);
        // Visit word k0 from bit b0, the other words in order, then word k0
        // below bit b0 (the ring wraps inside that word).
        for step in 0..=words {
            let k = (k0 + step) % words;
            // SeqCst: see `any_marked`.
            // mutants: bitmap invariant (fairness only; module docs).
            let mut bits = self.bitmap_word(k).load(Ordering::SeqCst);
            if step == 0 {
                bits &= u64::MAX << b0;
            } else if step == words {
                bits &= !(u64::MAX << b0);
            }
            while bits != 0 {
                let t = k * 64 + bits.trailing_zeros() as usize;
                bits &= bits - 1;
                if t >= n {
                    continue;
                }
                if let Some(note) = note {
                    // Relaxed: the note only lets the woken waiter guess
                    // the lock word; its CAS checks the guess.
                    self.slots[t].note.store(note, Ordering::Relaxed);
                }
                if self.grant_from(t, Some(ONE)) {
                    return Some(t);
                }
                stale();
                self.clear_bit_if_empty(t);
            }
        }
        None
    }
}

impl PlaceToken {
    /// Runs `release_from(start)`, the release of a lock with `S` slots
    /// that scans for a successor from slot `start`: the recorded slot, or
    /// for a fast-path acquisition the caller's current slot (CPU hint).
    /// The hint provider is user code and may panic; it is asked before the
    /// release changes anything, and if it panics, `release_from(0)` (which
    /// asks nothing) runs while the panic unwinds, so an unlock never
    /// unwinds with the lock held.
    #[inline]
    pub(crate) fn release_from_slot<const S: usize>(self, release_from: impl Fn(usize)) {
        self.release_from_slot_of(S, release_from)
    }

    /// [`release_from_slot`](Self::release_from_slot) for a lock that uses
    /// `n` slots, a count known at run time.
    #[inline]
    pub(crate) fn release_from_slot_of(self, n: usize, release_from: impl Fn(usize)) {
        let start = match self.index() {
            Some(s) if s < n => s,
            _ => {
                let on_unwind = crate::unwind::OnUnwind::new(|| release_from(0));
                let s = slot_hint_of(n);
                on_unwind.disarm();
                s
            }
        };
        release_from(start);
    }
}

/// The caller's slot among `S`, from the CPU hint and the route.
#[inline]
pub(crate) fn slot_hint<const S: usize>() -> usize {
    slot_hint_of(S)
}

/// The caller's slot among `n`, from the CPU hint and the route.
#[inline]
pub(crate) fn slot_hint_of(n: usize) -> usize {
    // Under loom the hint must be deterministic (loom replays schedules);
    // models choose their slots explicitly through `acquire_in`.
    #[cfg(loom)]
    return {
        let _ = n;
        0
    };
    #[cfg(not(loom))]
    crate::route::slot_of(crate::hint::current_cpu(), n)
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::SlotTable;

    #[test]
    fn waiting_within_passes_over_a_lone_taken_bit() {
        let t = SlotTable::<128>::new();
        assert!(!t.waiting_within(128), "no mark");
        t.register::<true>(70);
        assert!(
            t.waiting_within(128),
            "a lone mark whose slot counts a waiter"
        );
        // The waiter takes its slot's grant: its count drops, its bit stays.
        assert!(t.grant(70));
        let mut alone = true;
        assert!(t.try_take_grant(70, &mut alone));
        assert!(t.any_marked_within(128));
        assert!(!t.waiting_within(128), "a lone mark on an empty slot");
        // Two marks count as a queue (the slot words are not read).
        t.register::<true>(3);
        assert!(t.waiting_within(128));
        // Only the first `n` slots are looked at: slot 3 and 70 lie beyond 3.
        assert!(!t.waiting_within(3));
        assert!(t.waiting_within(4));
    }
}
