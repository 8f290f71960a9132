//! [`RonRaw`]: the recommended default. A TTAS fast path, nxtRON's
//! route-ordered handover between *spinning* waiters, and waiters that get
//! off the CPU, so that it holds up when threads outnumber CPUs.
//!
//! ## Why not plain nxtRON
//! A handover lock that grants a waiter which is not running stalls everyone
//! until the scheduler runs that waiter again (milliseconds). With more
//! threads than CPUs most waiters are not running, and such locks collapse.
//! `RonRaw` changes two things:
//!
//! 1. **Ownership lives in the lock word only.** A handover writes
//!    `HANDED(slot, seq)` into the lock word (and rings the slot's doorbell);
//!    the lock then belongs to whichever thread first CASes that word to
//!    `LOCKED`. A waiter of the named slot does so at once; any other waiter
//!    that has watched the *same* `HANDED` value for [`PATIENCE_NS`] (or,
//!    without `std`, [`PATIENCE`] looks) may take it over. Safety is
//!    therefore that of a test-and-set lock: every
//!    `X -> LOCKED` transition is one CAS with one winner, from `FREE` or
//!    `HANDED` only, and only the owner writes `FREE`/`HANDED`. The slots,
//!    counts and doorbells steer *who* gets the lock, never *whether* two do.
//! 2. **Only spinning waiters are registered.** A waiter first spins
//!    unregistered (TTAS, [`PHASE_A_LOOKS`] looks with exponential backoff
//!    up to [`PHASE_A_PAUSE_MAX`] pauses, then, if the thread's last yield
//!    showed its CPU shared with other runnable threads, a yield per look
//!    instead: there a spinning look only pulls the line from a running
//!    holder or keeps a preempted one off the CPU; it can take
//!    the lock only when the holder freed it with nobody registered), then
//!    registers in its slot and spins on the slot's doorbell, then *leaves*
//!    its slot and yields the CPU, and starts a new round registered. The
//!    registered spin adapts: it starts at [`PHASE_B_LOOKS`], quarters
//!    (down to [`PHASE_B_MIN`]) after a yield during which another thread
//!    ran (the CPU is oversubscribed: spinning only steals the holder's
//!    time) and doubles (up to [`PHASE_B_MAX`]) after a yield that came
//!    back at once (a CPU per thread: keep the place in the route order). A handover therefore targets a
//!    thread that was spinning a moment ago; if it got preempted right then,
//!    the running waiters take the handover over after [`PATIENCE`] looks.
//!
//! Under contention with one thread per CPU, the waiters are registered and
//! the lock travels along the route; at low contention it behaves like a
//! TTAS lock (no handover cost, the fast path is one CAS and one store).
//!
//! ## Lock word
//! | value | meaning | who may write next |
//! |---|---|---|
//! | `FREE` (0) | unlocked | anyone: CAS -> `LOCKED` |
//! | `LOCKED` (1) | held | the owner: `FREE` or `HANDED` |
//! | `HANDED(s, seq)` | released to slot `s`, owned by nobody | a waiter of `s` (at once) or any waiter that saw this exact value for `PATIENCE_NS` (`PATIENCE` looks): CAS -> `LOCKED` |
//!
//! `seq` is the low 16 bits of the lock's handover count, which only the
//! owner writes (a relaxed counter beside the word, ordered by the lock
//! itself) and which survives `FREE` periods: `HANDED(s, n)` recurs only
//! after 65,536 further handovers, never merely because the lock went idle.
//! That is what lets a waiter judge a handover's age by how long it has
//! watched one word value (see [`WATCH_HORIZON_NS`] for the wrap). The slot
//! takes 14 bits (`S <= 16384`). The fast path never touches the counter:
//! one CAS `FREE -> LOCKED` to lock, a bitmap load and a store of `FREE` to
//! unlock.
//! Slot words and bitmap: see [`slots`](crate::slots); here the `GRANT` bit
//! is only a doorbell (the slot's waiters spin on their own line and look at
//! the lock word when it rings or every 8 spins).
//!
//! ## Guarantees
//! * Mutual exclusion under any schedule and any hint (TAS argument above).
//! * Progress: a `HANDED` word is taken by its slot or, after `PATIENCE`
//!   looks, by any waiter, so the lock never stays unowned while a thread
//!   waits.
//! * **No bounded-waiting guarantee.** Handovers follow the route among
//!   registered waiters, but waiters leave their slot between rounds and the
//!   fast path barges, so the bound is statistical (measured: fairness
//!   factor in `ron bench`). Use [`RonTicket`](crate::RonTicket) or
//!   [`NxtRon`](crate::NxtRon) where a bound is required.
//! * A holder that is descheduled stalls its waiters (as for every
//!   spinlock); waiters yield after each round, so the holder gets its CPU
//!   back quickly.
//!
//! ## Cost
//! `RonRaw<S>` takes `128 * (S + 1)` bytes; the default `S` =
//! [`DEFAULT_SLOTS`] = 16 gives 2176 bytes per lock. Sixteen slots are
//! sixteen arcs of the route: on a 16-CPU machine one CPU per slot, on a
//! 128-CPU machine 8 neighbouring CPUs per slot (a CCX, roughly), which
//! keeps handovers local without paying 128 cache-line pairs per lock.
//! Uncontended lock + unlock: one CAS, one bitmap load, one release store.
//!
//! ```
//! use ron_core::RonMutex;
//! let m = RonMutex::new(0u64);
//! std::thread::scope(|s| {
//!     for _ in 0..8 {
//!         s.spawn(|| for _ in 0..1000 { *m.lock() += 1 });
//!     }
//! });
//! assert_eq!(*m.lock(), 8000);
//! ```

use crossbeam_utils::CachePadded;

use crate::slots::{GRANT, SlotTable, SlotToken, slot_hint};
use crate::sync::{AtomicU32, Ordering, spin_loop};

/// Slots of `RonRaw` when the type does not name them.
pub const DEFAULT_SLOTS: usize = 16;

/// Looks a waiter spends unregistered (TTAS) before it registers.
#[cfg(not(loom))]
pub const PHASE_A_LOOKS: u32 = 64;
/// Looks a waiter spends unregistered (TTAS) before it registers.
#[cfg(loom)]
pub const PHASE_A_LOOKS: u32 = 1;
/// Longest backoff (pauses between two looks) of the unregistered phase.
pub const PHASE_A_PAUSE_MAX: u32 = 16;
/// Doorbell spins of a registered waiter's first round; later rounds adapt
/// between [`PHASE_B_MIN`] and [`PHASE_B_MAX`] (see [`acquire`](RonRaw::acquire)).
#[cfg(not(loom))]
pub const PHASE_B_LOOKS: u32 = 128;
/// Doorbell spins of a registered waiter's first round.
#[cfg(loom)]
pub const PHASE_B_LOOKS: u32 = 2;
/// Shortest registered spin: used while yields show the CPU is oversubscribed.
pub const PHASE_B_MIN: u32 = 64;
/// Longest registered spin: reached while yields return at once (a CPU each).
pub const PHASE_B_MAX: u32 = 4096;
/// A `sched_yield` that returns faster than this (ns) found nobody else to
/// run: the waiter has its CPU to itself and may spin longer next round.
pub const QUICK_YIELD_NS: u64 = 5_000;
/// How long (ns) a waiter of another slot watches one unchanged `HANDED`
/// value before it takes the handover over (`std`). A running grantee takes
/// its handover within about a microsecond; a grantee that was preempted
/// while registered would hold everyone up for a scheduler round.
pub const PATIENCE_NS: u64 = 10_000;
/// Longest gap (ns) between two looks of one waiter across which it still
/// counts a `HANDED` value as watched without a break. A waiter back from a
/// longer yield (or preemption) starts watching anew: the word's 16-bit
/// `seq` repeats after 65,536 handovers, and each handover costs at least a
/// few cache-line transfers and atomic read-modify-writes (over 25 ns), so
/// 65,536 of them take well over this horizon. Within it an unchanged word
/// is therefore one and the same handover; a new one is never judged stale
/// by an observation that predates it.
pub const WATCH_HORIZON_NS: u64 = 500_000;
/// Looks at one unchanged `HANDED` value after which a waiter of another
/// slot takes the handover over (without `std`, where there is no clock).
#[cfg(not(any(loom, miri)))]
pub const PATIENCE: u32 = 64;
/// Looks at one unchanged `HANDED` value after which a waiter of another
/// slot takes the handover over. Under loom and Miri the watch counts looks
/// even with `std`: loom has no clock, and Miri's virtual clock advances
/// about 100 us per look, which would make every handover stale at its
/// second look (or, with [`WATCH_HORIZON_NS`], never).
#[cfg(any(loom, miri))]
pub const PATIENCE: u32 = 1;

const FREE: u32 = 0;
const LOCKED: u32 = 1;
const HANDED: u32 = 2;
const TAG: u32 = 3;
const SLOT_SHIFT: u32 = 2;
const SLOT_MASK: u32 = (1 << 14) - 1;
const SEQ_SHIFT: u32 = 16;
const SEQ_MASK: u32 = 0xFFFF;

/// The lock word that hands the lock to `slot` as handover number `seq`
/// (only its low 16 bits are kept).
#[inline]
fn handed(slot: usize, seq: u32) -> u32 {
    HANDED | ((slot as u32 & SLOT_MASK) << SLOT_SHIFT) | ((seq & SEQ_MASK) << SEQ_SHIFT)
}

#[inline]
fn handed_slot(word: u32) -> usize {
    ((word >> SLOT_SHIFT) & SLOT_MASK) as usize
}

/// Tracks how long one `HANDED` value has stayed in the lock word, as seen
/// by one waiter.
struct Watch {
    last: u32,
    looks: u32,
    /// First look at `last` in the current unbroken watch.
    #[cfg(all(feature = "std", not(loom), not(miri)))]
    since: Option<std::time::Instant>,
    /// The latest look at a `HANDED` word.
    #[cfg(all(feature = "std", not(loom), not(miri)))]
    seen: Option<std::time::Instant>,
}

impl Watch {
    fn new() -> Self {
        Watch {
            last: FREE,
            looks: 0,
            #[cfg(all(feature = "std", not(loom), not(miri)))]
            since: None,
            #[cfg(all(feature = "std", not(loom), not(miri)))]
            seen: None,
        }
    }

    /// Records a look at `word`; true once the same `HANDED` word has been
    /// watched for [`PATIENCE_NS`] (with `std`) or [`PATIENCE`] looks in a
    /// row. With `std` the watch spans yields (a waiter that saw a handover
    /// before it yielded and sees the same one after the yield takes it at
    /// once) but not gaps longer than [`WATCH_HORIZON_NS`].
    #[inline]
    fn stale(&mut self, word: u32) -> bool {
        #[cfg(all(feature = "std", not(loom), not(miri)))]
        if word & TAG == HANDED {
            return self.stale_at(word, std::time::Instant::now());
        }
        if word != self.last {
            self.last = word;
            self.looks = 0;
            return false;
        }
        self.looks = self.looks.saturating_add(1);
        self.looks >= PATIENCE
    }

    /// [`stale`](Self::stale) for a `HANDED` word looked at at time `now`.
    #[cfg(all(feature = "std", not(loom), not(miri)))]
    fn stale_at(&mut self, word: u32, now: std::time::Instant) -> bool {
        let horizon = core::time::Duration::from_nanos(WATCH_HORIZON_NS);
        let broken = self
            .seen
            .is_none_or(|t| now.saturating_duration_since(t) > horizon);
        self.seen = Some(now);
        match self.since {
            Some(since) if word == self.last && !broken => {
                now.saturating_duration_since(since).as_nanos() as u64 >= PATIENCE_NS
            }
            _ => {
                self.last = word;
                self.looks = 0;
                self.since = Some(now);
                false
            }
        }
    }
}

/// The lock word and the handover count, on one line.
struct Word {
    state: AtomicU32,
    /// Handovers so far (wrapping); written only by the owner, so it is
    /// data protected by the lock itself.
    handovers: AtomicU32,
}

/// The recommended RON lock; see the [module docs](self). `S` slots,
/// [`DEFAULT_SLOTS`] unless named.
pub struct RonRaw<const S: usize = DEFAULT_SLOTS> {
    word: CachePadded<Word>,
    slots: SlotTable<S>,
}

impl<const S: usize> RonRaw<S> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            const { assert!(S >= 1 && S <= 1 << 14, "RonRaw supports 1 to 16384 slots") };
            RonRaw {
                word: CachePadded::new(Word {
                    state: AtomicU32::new(FREE),
                    handovers: AtomicU32::new(0),
                }),
                slots: SlotTable::new(),
            }
        }
    }

    /// Acquires the lock; a contended waiter waits in its slot from the CPU hint.
    #[inline]
    pub fn acquire(&self) -> SlotToken {
        // Acquire: pairs with the Release store of FREE in `release`.
        if self
            .word
            .state
            .compare_exchange_weak(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
            crate::coverage::hit!("ron_raw.fast");
            return SlotToken::NONE;
        }
        self.acquire_slow(slot_hint::<S>())
    }

    /// Acquires the lock waiting in slot `slot % S` (any value is safe).
    pub fn acquire_in(&self, slot: usize) -> SlotToken {
        match self.try_acquire() {
            Some(t) => t,
            None => self.acquire_slow(slot % S),
        }
    }

    /// Takes the lock if it is free; never registers in a slot.
    #[inline]
    pub fn try_acquire(&self) -> Option<SlotToken> {
        // Acquire: pairs with the Release store of FREE in `release`.
        let ok = self
            .word
            .state
            .compare_exchange(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
        if ok {
            crate::coverage::hit!("ron_raw.fast");
        }
        ok.then_some(SlotToken::NONE)
    }

    /// One look at the lock word by a waiter of slot `s`: takes the lock if
    /// it is free, handed to `s` while the caller is (or was, at the
    /// handover) registered there, or handed anywhere and stale. Returns
    /// whether the caller now owns the lock. An unregistered arrival does
    /// not take its slot's handover at once: that would let a thread that
    /// just released re-take a handover meant for the slot's waiters.
    #[inline]
    fn look(&self, s: usize, registered: bool, watch: &mut Watch) -> bool {
        // Relaxed: only decides whether to try the CAS, which has the Acquire.
        let word = self.word.state.load(Ordering::Relaxed);
        let stale = watch.stale(word);
        let own = registered && handed_slot(word) == s;
        match word & TAG {
            FREE => {}
            HANDED if own || stale => {}
            _ => return false,
        }
        // Acquire: pairs with the Release store (FREE or HANDED) of the
        // previous owner's `release`, so its critical section happens-before
        // ours. Load-bearing for a takeover: a thread of another slot has no
        // other synchronisation with the releasing owner.
        if self
            .word
            .state
            .compare_exchange(word, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        if word & TAG == HANDED {
            if own {
                crate::coverage::hit!("ron_raw.take_own");
            } else {
                crate::coverage::hit!("ron_raw.takeover");
            }
            // We own the lock, so no other handover can be in flight: clear
            // the doorbell of the slot it named. Relaxed: the doorbell
            // carries no data (ownership came from the CAS above).
            self.slots
                .word(handed_slot(word) % S)
                .fetch_and(!GRANT, Ordering::Relaxed);
        } else {
            crate::coverage::hit!("ron_raw.take_free");
        }
        true
    }

    #[cold]
    fn acquire_slow(&self, s: usize) -> SlotToken {
        let mut watch = Watch::new();
        let mut first_round = true;
        let mut spins = PHASE_B_LOOKS;
        loop {
            // Phase A (first round only): unregistered TTAS with backoff.
            if first_round {
                let mut pause = 1u32;
                let shared_cpu = cpu_looked_shared();
                for _ in 0..PHASE_A_LOOKS {
                    if self.look(s, false, &mut watch) {
                        return SlotToken::at(s);
                    }
                    if shared_cpu && pause == PHASE_A_PAUSE_MAX {
                        // The CPU is oversubscribed: a spinning look only
                        // pulls the line from a running holder (or keeps a
                        // preempted one off this CPU); give the CPU away.
                        yield_cpu();
                    } else {
                        for _ in 0..pause {
                            spin_loop();
                        }
                        pause = (pause * 2).min(PHASE_A_PAUSE_MAX);
                    }
                }
                first_round = false;
                crate::coverage::hit!("ron_raw.register");
            } else {
                crate::coverage::hit!("ron_raw.round_restart");
            }
            // Phase B: registered; spin on the doorbell, look at the lock
            // word when it rings or every 8 spins.
            self.slots.register::<true>(s);
            for i in 0..spins {
                // Relaxed: the doorbell only says "look now"; the look's CAS
                // has the Acquire.
                let bell = self.slots.word(s).load(Ordering::Relaxed) & GRANT != 0;
                if (bell || i % 8 == 0) && self.look(s, true, &mut watch) {
                    self.slots.unregister::<true>(s);
                    return SlotToken::at(s);
                }
                spin_loop();
            }
            // Leave the slot, so no handover targets us while we are off
            // the CPU; a handover to our slot that raced with leaving is
            // taken here (any waiter of the slot may take it).
            self.slots.unregister::<true>(s);
            if self.look(s, true, &mut watch) {
                return SlotToken::at(s);
            }
            // Phase C: give the CPU away, and learn from how long that took
            // whether other threads want this CPU (oversubscribed: spin
            // little) or not (spin longer, keep the route order).
            spins = give_cpu_away(spins);
        }
    }

    /// Releases the lock: hands it to the next registered slot along the
    /// route after the acquirer's slot, or frees it.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: SlotToken) {
        if !self.slots.any_marked() {
            crate::coverage::hit!("ron_raw.release_free");
            // Release: publishes the critical section to the next CAS winner.
            self.word.state.store(FREE, Ordering::Release);
            return;
        }
        self.release_slow(token);
    }

    #[cold]
    fn release_slow(&self, token: SlotToken) {
        let from = token.slot_or_hint::<S>();
        // Ring the doorbell first (it checks that the slot has a waiter),
        // then publish the handover: a waiter woken early just sees LOCKED
        // for a moment and looks again.
        let next = match self.slots.grant_next_bitmap(from) {
            Some(t) => {
                crate::coverage::hit!("ron_raw.handover");
                // Relaxed, both: the counter is written only by owners, and
                // the lock's own Acquire/Release chain orders consecutive
                // owners; a torn view could only cost route order anyway.
                let n = self.word.handovers.load(Ordering::Relaxed).wrapping_add(1);
                self.word.handovers.store(n, Ordering::Relaxed);
                handed(t, n)
            }
            None => {
                crate::coverage::hit!("ron_raw.release_free");
                FREE
            }
        };
        // Release: publishes the critical section to the next CAS winner
        // (load-bearing for HANDED: a takeover by another slot's waiter
        // synchronises with the old owner through this store only).
        self.word.state.store(next, Ordering::Release);
    }

    /// Same as [`release`](Self::release): a release already hands the lock
    /// to a registered waiter when there is one, and a `HANDED` word cannot
    /// be barged by the fast path.
    ///
    /// # Safety
    /// As for [`release`](Self::release).
    #[inline]
    pub unsafe fn release_fair(&self, token: SlotToken) {
        // SAFETY: same contract.
        unsafe { self.release(token) }
    }

    /// Whether the lock is held or handed over (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.word.state.load(Ordering::Relaxed) != FREE // a snapshot by contract
    }
}

crate::raw_impl::impl_raw_mutex! {
    impl [const S: usize] for RonRaw<S>, guard = SlotToken, debug "RonRaw" { slots: S }, fair
}

/// Yields the CPU and returns the next round's registered spin budget:
/// doubled (up to [`PHASE_B_MAX`]) when the yield came back within
/// [`QUICK_YIELD_NS`] (nobody else was runnable), quartered (down to
/// [`PHASE_B_MIN`]) when another thread ran meanwhile.
#[cfg(all(feature = "std", not(loom)))]
fn give_cpu_away(spins: u32) -> u32 {
    if yield_cpu() {
        (spins * 2).min(PHASE_B_MAX)
    } else {
        (spins / 4).max(PHASE_B_MIN)
    }
}

#[cfg(all(feature = "std", not(loom)))]
std::thread_local! {
    /// Whether this thread's last yield in a `RonRaw` wait let another
    /// thread run (its CPU is oversubscribed); read by its next wait.
    static OVERSUBSCRIBED: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// Whether this thread's last yield in a wait found its CPU shared.
#[cfg(all(feature = "std", not(loom)))]
fn cpu_looked_shared() -> bool {
    OVERSUBSCRIBED.with(|o| o.get())
}

/// Yields the CPU; returns whether the yield came back within
/// [`QUICK_YIELD_NS`] (nobody else was runnable here) and records the
/// answer for [`cpu_looked_shared`].
#[cfg(all(feature = "std", not(loom)))]
fn yield_cpu() -> bool {
    let t0 = std::time::Instant::now();
    std::thread::yield_now();
    let quick = (t0.elapsed().as_nanos() as u64) < QUICK_YIELD_NS;
    OVERSUBSCRIBED.with(|o| o.set(!quick));
    quick
}

/// Without `std` there is no scheduler to ask: back off and keep the budget.
#[cfg(all(not(feature = "std"), not(loom)))]
fn give_cpu_away(spins: u32) -> u32 {
    for _ in 0..64 {
        spin_loop();
    }
    spins
}

/// Under loom: one yield point (64 would only multiply the schedules).
#[cfg(loom)]
fn give_cpu_away(spins: u32) -> u32 {
    spin_loop();
    spins
}

/// Without `std` (and under loom) a CPU never looks shared.
#[cfg(any(not(feature = "std"), loom))]
fn cpu_looked_shared() -> bool {
    false
}

/// Never called without `std` ([`cpu_looked_shared`] is false there).
#[cfg(any(not(feature = "std"), loom))]
fn yield_cpu() -> bool {
    true
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::*;

    /// Locks `l` on the fast path, registers a waiter in `slot` by hand and
    /// releases: the release hands over. Returns the word it wrote.
    fn hand_over<const S: usize>(l: &RonRaw<S>, slot: usize) -> u32 {
        let t = l.acquire();
        l.slots.register::<true>(slot);
        // SAFETY: we hold the lock.
        unsafe { l.release(t) };
        let word = l.word.state.load(Ordering::Relaxed);
        assert_eq!(word & TAG, HANDED);
        assert_eq!(handed_slot(word), slot);
        // Take it as the registered waiter would, then leave the slot.
        assert!(l.look(slot, true, &mut Watch::new()));
        l.slots.unregister::<true>(slot);
        // SAFETY: we hold the lock (taken by `look`).
        unsafe { l.release(SlotToken::at(slot)) };
        assert_eq!(l.word.state.load(Ordering::Relaxed), FREE);
        word
    }

    #[test]
    fn seq_survives_free_periods() {
        let l = RonRaw::<4>::new();
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
        let l = RonRaw::<64>::new();
        l.word.handovers.store(0xFFFE, Ordering::Relaxed);
        let a = hand_over(&l, 63);
        let b = hand_over(&l, 63);
        let c = hand_over(&l, 63);
        assert_eq!(
            [a >> SEQ_SHIFT, b >> SEQ_SHIFT, c >> SEQ_SHIFT],
            [0xFFFF, 0, 1]
        );
        assert_eq!(l.word.handovers.load(Ordering::Relaxed), 0x1_0001);
        // 65,536 handovers later the word repeats, not sooner.
        l.word.handovers.store(0xFFFE + 0x1_0000, Ordering::Relaxed);
        assert_eq!(hand_over(&l, 63), a);
        assert_eq!(handed(3, 0x1_0005), handed(3, 5));
        assert_eq!(handed_slot(handed(16383, u32::MAX)), 16383);
    }

    #[cfg(all(feature = "std", not(miri)))]
    #[test]
    fn watch_spans_short_gaps_only() {
        use core::time::Duration;
        use std::time::Instant;
        let ns = Duration::from_nanos;
        let t0 = Instant::now();
        let w = handed(1, 7);
        // Watched without a break: stale after PATIENCE_NS.
        let mut watch = Watch::new();
        assert!(!watch.stale_at(w, t0));
        assert!(!watch.stale_at(w, t0 + ns(PATIENCE_NS - 1)));
        assert!(watch.stale_at(w, t0 + ns(PATIENCE_NS)));
        // Across a short yield: still the same watch.
        let mut watch = Watch::new();
        assert!(!watch.stale_at(w, t0));
        assert!(watch.stale_at(w, t0 + ns(WATCH_HORIZON_NS)));
        // Across a gap beyond the horizon (the word may have wrapped): a
        // new watch, however long ago the first look was.
        let mut watch = Watch::new();
        assert!(!watch.stale_at(w, t0));
        let back = t0 + ns(WATCH_HORIZON_NS + 1);
        assert!(!watch.stale_at(w, back));
        assert!(!watch.stale_at(w, back + ns(PATIENCE_NS - 1)));
        assert!(watch.stale_at(w, back + ns(PATIENCE_NS)));
        // A different handover (or a LOCKED word between) restarts the watch.
        let mut watch = Watch::new();
        assert!(!watch.stale_at(w, t0));
        assert!(!watch.stale_at(handed(1, 8), t0 + ns(PATIENCE_NS)));
        let mut watch = Watch::new();
        assert!(!watch.stale_at(w, t0));
        assert!(!watch.stale(LOCKED));
        assert!(!watch.stale_at(w, t0 + ns(PATIENCE_NS)));
    }

    #[test]
    fn watch_counts_looks_at_other_words() {
        let mut watch = Watch::new();
        assert!(!watch.stale(LOCKED));
        for _ in 1..PATIENCE {
            assert!(!watch.stale(LOCKED));
        }
        assert!(watch.stale(LOCKED));
        assert!(!watch.stale(FREE));
    }
}
