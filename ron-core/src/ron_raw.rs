//! [`RonRaw`]: the recommended default. A TTAS fast path, nxtRON's
//! route-ordered handover between *spinning* waiters, and waiters that get
//! off the CPU, so that it holds up when threads outnumber CPUs.
//!
//! ## Why not plain nxtRON
//! A handover lock that grants a waiter which is not running stalls everyone
//! until the scheduler runs that waiter again (milliseconds). With more
//! threads than CPUs most waiters are not running, and such locks collapse
//! (DESIGN 3.3.0). `RonRaw` changes two things:
//!
//! 1. **Ownership lives in the lock word only.** A handover writes
//!    `HANDED(slot, seq)` into the lock word (and rings the slot's doorbell);
//!    the lock then belongs to whichever thread first CASes that word to
//!    `LOCKED`. A waiter of the named slot does so at once; any other waiter
//!    that has watched the *same* `HANDED` value for [`PATIENCE_NS`] (or,
//!    without `std`, [`PATIENCE`] looks) may take it over. Safety is therefore that of a test-and-set lock: every
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
//! | `LOCKED \| seq` | held | the owner: `FREE` or `HANDED` |
//! | `HANDED(s, seq)` | released to slot `s`, owned by nobody | a waiter of `s` (at once) or any waiter that saw this exact value for `PATIENCE` looks: CAS -> `LOCKED \| seq` |
//!
//! `seq` (16 bits) counts handovers so that two handovers to the same slot
//! are different values; the slot takes 14 bits (`S <= 16384`).
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
//! * Panics: no user code runs while a waiter is registered (the CPU hint
//!   is asked before); an unlock whose hint panics releases the lock
//!   (scanning from slot 0) before it unwinds (`docs/panic-safety.md`).
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
/// Looks at one unchanged `HANDED` value after which a waiter of another
/// slot takes the handover over (without `std`, where there is no clock).
#[cfg(not(loom))]
pub const PATIENCE: u32 = 64;
/// Looks at one unchanged `HANDED` value after which a waiter of another
/// slot takes the handover over.
#[cfg(loom)]
pub const PATIENCE: u32 = 1;

const FREE: u32 = 0;
const LOCKED: u32 = 1;
const HANDED: u32 = 2;
const TAG: u32 = 3;
const SLOT_SHIFT: u32 = 2;
const SLOT_MASK: u32 = (1 << 14) - 1;
const SEQ_SHIFT: u32 = 16;

#[inline]
fn handed(slot: usize, seq: u32) -> u32 {
    HANDED | ((slot as u32 & SLOT_MASK) << SLOT_SHIFT) | (seq << SEQ_SHIFT)
}

#[inline]
fn handed_slot(word: u32) -> usize {
    ((word >> SLOT_SHIFT) & SLOT_MASK) as usize
}

/// Tracks how long one `HANDED` value has stayed in the lock word.
struct Watch {
    last: u32,
    looks: u32,
    #[cfg(all(feature = "std", not(loom), not(shuttle)))]
    since: Option<crate::sync::Instant>,
}

impl Watch {
    fn new() -> Self {
        Watch {
            last: FREE,
            looks: 0,
            #[cfg(all(feature = "std", not(loom), not(shuttle)))]
            since: None,
        }
    }

    /// Records a look at `word`; true once the same `HANDED` word has been
    /// seen for [`PATIENCE_NS`] (with `std`) or [`PATIENCE`] looks in a row.
    /// Wall time matters with `std`: a waiter that saw a handover before it
    /// yielded and sees the same one after the yield takes it at once.
    #[inline]
    fn stale(&mut self, word: u32) -> bool {
        if word != self.last {
            self.last = word;
            self.looks = 0;
            #[cfg(all(feature = "std", not(loom), not(shuttle)))]
            {
                self.since = None;
            }
            return false;
        }
        self.looks += 1;
        #[cfg(all(feature = "std", not(loom), not(shuttle)))]
        if word & TAG == HANDED {
            let since = *self.since.get_or_insert_with(crate::sync::Instant::now);
            return since.elapsed().as_nanos() as u64 >= PATIENCE_NS;
        }
        self.looks >= PATIENCE
    }
}

/// The recommended RON lock; see the [module docs](self). `S` slots,
/// [`DEFAULT_SLOTS`] unless named.
pub struct RonRaw<const S: usize = DEFAULT_SLOTS> {
    state: CachePadded<AtomicU32>,
    slots: SlotTable<S>,
}

impl<const S: usize> RonRaw<S> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            const { assert!(S >= 1 && S <= 1 << 14, "RonRaw supports 1 to 16384 slots") };
            RonRaw { state: CachePadded::new(AtomicU32::new(FREE)), slots: SlotTable::new() }
        }
    }

    /// Acquires the lock; a contended waiter waits in its slot from the CPU hint.
    #[inline]
    pub fn acquire(&self) -> SlotToken {
        // Acquire: pairs with the Release store of FREE in `release`.
        if self
            .state
            .compare_exchange_weak(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
        {
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
        self.state
            .compare_exchange(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
            .then_some(SlotToken::NONE)
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
        let word = self.state.load(Ordering::Relaxed);
        let stale = watch.stale(word);
        let target = match word & TAG {
            FREE => LOCKED,
            HANDED if (registered && handed_slot(word) == s) || stale => {
                LOCKED | (word & !((1 << SEQ_SHIFT) - 1))
            }
            _ => return false,
        };
        // Acquire: pairs with the Release store (FREE or HANDED) of the
        // previous owner's `release`, so its critical section happens-before ours.
        if self
            .state
            .compare_exchange(word, target, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        if word & TAG == HANDED {
            // We own the lock, so no other handover can be in flight: clear
            // the doorbell of the slot it named. Relaxed: the doorbell
            // carries no data (ownership came from the CAS above).
            self.slots
                .word(handed_slot(word) % S)
                .fetch_and(!GRANT, Ordering::Relaxed);
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
            // Release: publishes the critical section to the next CAS winner.
            self.state.store(FREE, Ordering::Release);
            return;
        }
        self.release_slow(token);
    }

    #[cold]
    fn release_slow(&self, token: SlotToken) {
        // The CPU hint (for a fast-path token) is asked before anything
        // changes; if it panics, the release runs from slot 0 instead.
        token.release_from_slot::<S>(|from| self.release_from(from));
    }

    /// The release, granting from slot `from` + 1.
    #[inline]
    fn release_from(&self, from: usize) {
        // Relaxed: we own the lock, so the word is the one we wrote (or CASed in).
        let seq = self.state.load(Ordering::Relaxed) >> SEQ_SHIFT;
        // Ring the doorbell first (it checks that the slot has a waiter),
        // then publish the handover: a waiter woken early just sees LOCKED
        // for a moment and looks again.
        let next = match self.slots.grant_next_bitmap(from) {
            Some(t) => handed(t, (seq + 1) & 0xFFFF),
            None => FREE,
        };
        // Release: publishes the critical section to the next CAS winner.
        self.state.store(next, Ordering::Release);
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
        self.state.load(Ordering::Relaxed) != FREE // a snapshot by contract
    }
}

crate::raw_impl::impl_raw_mutex! {
    impl [const S: usize] for RonRaw<S>, guard = SlotToken, debug "RonRaw" { slots: S }, fair
}

/// Yields the CPU and returns the next round's registered spin budget:
/// doubled (up to [`PHASE_B_MAX`]) when the yield came back within
/// [`QUICK_YIELD_NS`] (nobody else was runnable), quartered (down to
/// [`PHASE_B_MIN`]) when another thread ran meanwhile.
#[cfg(all(feature = "std", not(loom), not(shuttle)))]
fn give_cpu_away(spins: u32) -> u32 {
    if yield_cpu() {
        (spins * 2).min(PHASE_B_MAX)
    } else {
        (spins / 4).max(PHASE_B_MIN)
    }
}

#[cfg(all(feature = "std", not(loom), not(shuttle)))]
crate::sync::thread_local! {
    /// Whether this thread's last yield in a `RonRaw` wait let another
    /// thread run (its CPU is oversubscribed); read by its next wait.
    static OVERSUBSCRIBED: core::cell::Cell<bool> = const { core::cell::Cell::new(false) };
}

/// Whether this thread's last yield in a wait found its CPU shared.
#[cfg(all(feature = "std", not(loom), not(shuttle)))]
fn cpu_looked_shared() -> bool {
    OVERSUBSCRIBED.with(|o| o.get())
}

/// Yields the CPU; returns whether the yield came back within
/// [`QUICK_YIELD_NS`] (nobody else was runnable here) and records the
/// answer for [`cpu_looked_shared`].
#[cfg(all(feature = "std", not(loom), not(shuttle)))]
fn yield_cpu() -> bool {
    let t0 = crate::sync::Instant::now();
    crate::sync::yield_now();
    let quick = (t0.elapsed().as_nanos() as u64) < QUICK_YIELD_NS;
    OVERSUBSCRIBED.with(|o| o.set(!quick));
    quick
}

/// Without `std` (and under loom or shuttle, whose schedules must replay)
/// there is no scheduler to ask: back off
/// and keep the budget.
#[cfg(any(not(feature = "std"), loom, shuttle))]
fn give_cpu_away(spins: u32) -> u32 {
    for _ in 0..64 {
        spin_loop();
    }
    spins
}

/// Without `std` (and under loom or shuttle) a CPU never looks shared.
#[cfg(any(not(feature = "std"), loom, shuttle))]
fn cpu_looked_shared() -> bool {
    false
}

/// Never called without `std` ([`cpu_looked_shared`] is false there).
#[cfg(any(not(feature = "std"), loom, shuttle))]
fn yield_cpu() -> bool {
    true
}
