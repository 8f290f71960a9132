//! [`RonPark`]: a RON lock whose waiters spin a little, then sleep on a
//! futex, and whose releases wake the next *sleeping* waiter along the
//! route (`std` only).
//!
//! Waiters first spin on the lock word (an adaptive budget of looks), then
//! *park*: they register in their slot (from the CPU hint, mapped through
//! the [`route`](crate::route)) and sleep on the slot's futex word. A
//! release frees the lock word and, if anybody is parked, wakes one sleeper
//! of the first slot along the route after the releaser's own that has one.
//! The woken thread competes for the lock word like a spinner; if it has
//! been parked for [`HUNGER_AFTER`] and loses, it *starves* and the next
//! release hands the lock over to it directly. Why it is built this way
//! (and the measurements behind the spin budget and the starving waiter):
//! `docs/design.md`, "`RonPark`".
//!
//! ## States
//! | field | meaning | written by |
//! |---|---|---|
//! | `lock` | free (`0`), `LOCKED` (`1`), or `LOCKED \| MARK` (`3`): held, and a waiter registered (or passed a wake-up on) since it was taken, so the release must look at `state` | `LOCKED` by the CAS that takes the lock; `MARK` by a parking waiter's CAS (only while held); cleared by the release: a CAS `LOCKED -> 0`, or, marked, a swap back to `LOCKED`, the wake-up, and that CAS again |
//! | `state` bit 0 | `WAKING`: a wake-up is on its way | set by a release (or a leaving timed waiter) that saw the lock free and threads parked, in an RMW that requires them parked; cleared by every unpark |
//! | `state` bit 1 | `HUNGRY`: a starving waiter wants the lock handed over | set by a woken waiter that lost the lock after [`HUNGER_AFTER`] parked, while no other waiter starves; cleared by the release that hands over, or by the starving waiter when it takes the free lock or gives up |
//! | `state` bit 2 | `HANDOFF`: the lock was handed over to the starving waiter (`lock` stayed `LOCKED`) | set by that release (in the RMW that clears `HUNGRY`); cleared by the starving waiter, which then holds the lock |
//! | `state` bits 3.. | threads parked in any slot (registered, possibly not asleep yet) | `+8` by a parking waiter, `-8` when it wakes or leaves |
//! | slot `sleepers` | threads parked in this slot | `+1` (after reading `epoch`) before the `state` `+8`; `-1` before the `state` `-8` |
//! | slot `epoch` | futex word: wake-ups sent to this slot (wrapping) | `+1` by a release that picked this slot |
//!
//! `lock` and `state` share a cache line but not a word: taking the lock
//! is one CAS of `lock` and freeing it one CAS, whatever the parked count.
//! The free is the release's last access to the lock: once it is free, the
//! lock's last user may take it and free the lock's memory, so a release
//! does everything it owes (the look at `state`, a wake-up) first.
//!
//! ## Parking and waking
//! A parking waiter: reads `epoch`, `sleepers += 1`, `state += 8`, then
//! *marks* the lock word (a CAS `l -> l | MARK` while it is held, also
//! over an existing mark); if the word is free it tries to take it
//! instead of sleeping, else it sleeps while `epoch` is unchanged. A
//! release: a CAS `LOCKED -> 0`; if that fails the word is marked, and,
//! still holding the lock, it swaps the word back to `LOCKED`, looks at
//! `state` and, if threads are parked and `WAKING` is clear, sets
//! `WAKING` (an RMW that fails if that changed meanwhile), scans the slots
//! from its own + 1 along the route and, in the first with
//! `sleepers != 0`, bumps `epoch`; then it tries the CAS `LOCKED -> 0`
//! again (a waiter may have marked the word since), and once it freed the
//! lock it wakes one sleeper of that slot (a futex wake uses the epoch
//! word's address only, so it may follow the free, as in `std`'s mutex). With
//! `WAKING` set, releases wake nobody: one woken thread at a time competes
//! for the lock.
//!
//! A woken waiter first looks at the lock word *while still registered*
//! (the spin phase's schedule of looks, until it sees the lock free), and
//! only then competes and unparks. Its registration keeps `WAKING` set
//! meanwhile, so the releases of a busy running thread wake nobody else.
//! Only loads happen while it looks, so for the protocol it is a waiter
//! slow to run after its wake-up.
//!
//! ## Why no wake-up is lost
//! The parking waiter's mark and the release's CASes are read-modify-writes
//! of one word, so they are ordered: a waiter sleeps only after marking a
//! held word, and the holder then frees it only by a CAS from the unmarked
//! word, so its release sees the mark, clears it with an Acquire swap that
//! reads from the mark (Release) or a later RMW of the word, and so sees
//! the waiter's registration, which came before the mark. A waiter that
//! marks after that swap makes the release's final CAS fail, and the
//! release looks again. No fence, and no `membarrier`, on either side.
//! That release then, unless `WAKING` is set, claims it and
//! finds a slot with `sleepers != 0`: the claim is an Acquire RMW of
//! `state` that reads from the release sequence headed by the waiter's
//! registration RMW, which its `sleepers` increment precedes (Release). It
//! bumps that slot's `epoch`.
//!
//! The thread the scan counted in that slot need not be one that is asleep:
//! it may have incremented `sleepers` and not yet done its `state` RMW. It
//! cannot sleep through the bump: it read `epoch` *before* its increment
//! (Release), which the claim read (Acquire), so its read happens before
//! the bump and cannot see it (coherence); its futex wait returns at once,
//! or it never sleeps. Every thread that incremented `sleepers` then
//! unparks, which clears `WAKING`, and is still competing for the lock (or,
//! a timed waiter that gives up, passes the wake-up on, below). So a
//! wake-up either reaches a sleeper or lands on a thread that keeps the
//! lock moving; it is never spent on a thread that then sleeps with
//! `WAKING` set and nobody left to clear it. `epoch` itself needs no
//! ordering beyond that pair: the woken thread takes the lock through
//! `lock`, which orders the data.
//!
//! `WAKING` is only set while threads are parked (the RMW that sets it
//! requires it), and each of them clears it when it unparks, so it never
//! stays set with nobody to clear it. A release that saw it set woke
//! nobody, counting on the wake-up in flight; so the unpark that clears a
//! set `WAKING` while others are still parked owes the next wake-up: it
//! marks the lock word if the lock is held (its holder's release then
//! wakes one), else claims `WAKING` and wakes the next sleeper itself.
//! This covers the woken thread that takes the lock (it marks its own
//! word), the one that keeps competing, and a timed waiter that gives up
//! (`passes_on`).
//!
//! ## Starving waiters
//! * A woken waiter that loses the lock, after its first sleep of this
//!   acquisition began [`HUNGER_AFTER`] ago or more, sets `HUNGRY` (an RMW
//!   that requires `HUNGRY` and `HANDOFF` clear: one starving waiter at a
//!   time) and stays registered and awake, looking (with yields).
//! * A release first looks at `state` (on the lock word's line). If
//!   `HUNGRY` is set, it swaps it for `HANDOFF` in one RMW (Release) and
//!   returns *without freeing `lock`*: the starving waiter sees `HANDOFF`,
//!   clears it and holds the lock (its unpark, an Acquire RMW of `state`
//!   before the guard is returned, orders it after the release's RMW). No
//!   other thread can take the lock meanwhile: `lock` never reads free.
//!   The lock was never free, so this release owes no wake-up.
//! * A release that looked before `HUNGRY` was set frees the lock as
//!   usual; the starving waiter may then take it by CAS (and clears
//!   `HUNGRY`: it holds the lock, so no release reads it before its own),
//!   or whoever took it hands over at its release (once that release
//!   reads `HUNGRY`: in practice the next one).
//! * A starving timed waiter whose deadline passes withdraws `HUNGRY` in an
//!   RMW that fails if `HANDOFF` is set; if it fails, the lock is its, and
//!   it returns with it. A release's RMW fails if `HUNGRY` was withdrawn,
//!   and it then frees the lock as usual. So a hand-over never goes to a
//!   thread that left.
//!
//! The starving waiter stays registered, so it counts as parked and keeps
//! the `WAKING` it was woken with; when it has the lock (or leaves) it
//! unparks as any woken waiter does.
//!
//! ## Spin budget
//! One budget per lock, in looks at the lock word (see `pause`). It doubles
//! (up to [`SPIN_MAX`]) when a spinner takes the lock, and halves (down to
//! [`SPIN_MIN`]) whenever a waiter has to sleep.
//!
//! ## Guarantees
//! * Mutual exclusion: the lock is taken only by the CAS that sees `lock`
//!   free, or by the starving waiter from a release that left `lock` set
//!   and handed over through `HANDOFF`.
//! * Progress: while threads are parked and the lock is free, a wake-up
//!   is on its way to one of them, or a thread that cleared `WAKING` is
//!   still competing (above).
//! * No strict waiting bound: running spinners may take the lock before a
//!   woken sleeper (as with `parking_lot`'s default unfair unlock). A
//!   waiter that has been parked for [`HUNGER_AFTER`] and is woken and
//!   loses gets the lock from a following release (above).
//! * Panics: the only user code is the CPU hint: `lock` asks it before
//!   registering anything, and an unlock whose hint panics has released
//!   the lock before it unwinds.
//! * `RawMutexFair`: `unlock_fair` is a plain unlock (it hands over only to
//!   a starving waiter, as every release does).
//! * `RawMutexTimed`: a timed waiter gives up after its deadline, from the
//!   spin phase (nothing to undo) or from its sleep (deregisters, then
//!   passes on a wake-up it may have received).
//!
//! ## Cost
//! Bytes per lock: `128 * (S + 2)`, **2304** for the default `S = 16` (the
//! lock and parked words, the budget and every slot on their own 128-byte
//! pair of lines). Uncontended lock + unlock: two CASes and a load (the
//! `HUNGRY` look). A release whose word nobody marked is that CAS; a
//! marked one clears the mark, looks at `state` and, with threads parked
//! and no wake-up in flight, claims, scans the slots and bumps an epoch
//! before the CAS that frees the lock, and makes the futex wake after it
//! (by address). A parking waiter pays
//! one CAS on the lock word before it sleeps, and no fence.
//!
//! ```
//! use ron_core::RonPark;
//! let m: lock_api::Mutex<RonPark, u64> = lock_api::Mutex::new(0);
//! std::thread::scope(|s| {
//!     for _ in 0..8 {
//!         s.spawn(|| for _ in 0..1000 { *m.lock() += 1 });
//!     }
//! });
//! assert_eq!(*m.lock(), 8000);
//! ```

use core::ops::ControlFlow;

use crossbeam_utils::CachePadded;

use crate::futex;
use crate::slots::PlaceToken;
use crate::sync::{AtomicU32, Ordering};
use crate::timed::Deadline;

// The VM's virtual clock under `ron_vm` (the host's would make a run
// depend on how fast the host simulates it).
#[cfg(ron_vm)]
use crate::sync::Instant;
#[cfg(not(ron_vm))]
use std::time::Instant;

/// `lock`: held.
const LOCKED: u32 = 1;
/// `lock` bit 1, only with [`LOCKED`]: a waiter registered (or unparked
/// with others still parked) while the lock was held, so its release must
/// look at `state` before it frees the lock.
const MARK: u32 = 2;
/// `state` bit 0: a wake-up is on its way.
const WAKING: u32 = 1;
/// `state` bit 1: a starving waiter waits for the next release to hand
/// the lock over to it.
const HUNGRY: u32 = 2;
/// `state` bit 2: a release handed the lock over to the starving waiter
/// (the lock word stayed `LOCKED`).
const HANDOFF: u32 = 4;
/// `state` bits 3..: one parked thread.
const PARKED: u32 = 8;

/// How long a waiter sleeps and loses before it starves: once it has been
/// parked this long and its wake-up still finds the lock taken, it sets
/// `HUNGRY` and the next release hands the lock to it. Under the model
/// checkers every woken waiter that loses starves, so the models reach
/// the hand-over.
#[cfg(not(any(loom, shuttle)))]
pub const HUNGER_AFTER: std::time::Duration = std::time::Duration::from_micros(1000);
/// How long a waiter sleeps and loses before it starves (zero under the
/// model checkers).
#[cfg(any(loom, shuttle))]
pub const HUNGER_AFTER: std::time::Duration = std::time::Duration::ZERO;

/// Fewest looks a waiter takes at the lock word before it parks.
pub const SPIN_MIN: u32 = if cfg!(loom) { 1 } else { 6 };
/// Most looks a waiter takes at the lock word before it parks.
pub const SPIN_MAX: u32 = if cfg!(loom) { 1 } else { 24 };
/// Budget of a new lock.
const SPIN_INIT: u32 = if cfg!(loom) { 1 } else { 12 };
/// Looks from which the spin phase checks the deadline: every look after
/// the first follows a yield, which costs far more than a clock read.
const CLOCK_LOOKS: u32 = 1;

/// Between two looks of the spin phase: one `spin_loop` hint after the
/// first look (a holder on another CPU may be about to release), a
/// `sched_yield` after every later one (why yields and not longer spins:
/// `docs/design.md`, "`RonPark`").
#[inline]
fn pause(look: u32) {
    if look == 0 {
        core::hint::spin_loop();
        return;
    }
    #[cfg(not(any(loom, shuttle)))]
    crate::sync::yield_now();
    // The model checkers' yield point.
    #[cfg(any(loom, shuttle))]
    crate::sync::spin_loop();
}

/// Default number of slots.
pub const DEFAULT_SLOTS: usize = 16;

/// The lock word and the parked count, on one cache line: a release of a
/// marked word reads the second before it frees the first.
struct Word {
    /// `0` free, [`LOCKED`] held, `LOCKED | MARK` held and to be checked.
    lock: AtomicU32,
    /// [`WAKING`] and the parked count (in units of [`PARKED`]).
    state: AtomicU32,
}

struct ParkSlot {
    sleepers: AtomicU32,
    epoch: AtomicU32,
}

/// A parking RON lock with `S` slots (waiters spin, then sleep on a
/// futex), for services where threads outnumber CPUs: a sleeping waiter
/// does not steal the CPU the holder needs. States, guarantees and cost:
/// the [module docs](self).
pub struct RonPark<const S: usize = DEFAULT_SLOTS> {
    word: CachePadded<Word>,
    spin: CachePadded<AtomicU32>,
    slots: [CachePadded<ParkSlot>; S],
}

impl<const S: usize> RonPark<S> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            const { assert!(S >= 1, "a RON lock needs at least one slot") };
            RonPark {
                word: CachePadded::new(Word { lock: AtomicU32::new(0), state: AtomicU32::new(0) }),
                spin: CachePadded::new(AtomicU32::new(SPIN_INIT)),
                slots: crate::sync::array_init!(
                    S,
                    CachePadded::new(ParkSlot { sleepers: AtomicU32::new(0), epoch: AtomicU32::new(0) })
                ),
            }
        }
    }

    /// Acquires the lock, parking in the caller's slot (from the CPU hint).
    #[inline]
    pub fn acquire(&self) -> PlaceToken {
        if self.try_fast() {
            return PlaceToken::NONE;
        }
        self.acquire_contended()
    }

    /// The contended acquisition from the CPU hint, out of line so that
    /// the fast path above inlines into every caller as one CAS.
    #[cold]
    #[inline(never)]
    fn acquire_contended(&self) -> PlaceToken {
        self.acquire_slow(crate::slots::slot_hint::<S>(), Deadline::NEVER)
            .expect("an acquisition without deadline only returns with the lock")
    }

    /// Acquires the lock parking in slot `slot % S` (any value is safe).
    pub fn acquire_in(&self, slot: usize) -> PlaceToken {
        if self.try_fast() {
            return PlaceToken::NONE;
        }
        self.acquire_slow(slot % S, Deadline::NEVER)
            .expect("an acquisition without deadline only returns with the lock")
    }

    /// Takes the lock if it is free; never parks.
    #[inline]
    pub fn try_acquire(&self) -> Option<PlaceToken> {
        self.try_take().then_some(PlaceToken::NONE)
    }

    /// Tries to take the lock until `deadline`, parking in the caller's slot.
    pub fn try_acquire_until(&self, deadline: Deadline) -> Option<PlaceToken> {
        self.try_acquire_in_until(crate::slots::slot_hint::<S>(), deadline)
    }

    /// Tries to take the lock until `deadline`, parking in slot `slot % S`
    /// (any value is safe). `None` only once the deadline has passed.
    pub fn try_acquire_in_until(&self, slot: usize, deadline: Deadline) -> Option<PlaceToken> {
        if self.try_fast() {
            return Some(PlaceToken::NONE);
        }
        self.acquire_slow(slot % S, deadline)
    }

    /// The acquisition fast path: one CAS of the lock word from `0`,
    /// whatever the parked count (it lives in `state`): while threads
    /// sleep, a running thread still takes a free lock without the slow
    /// path.
    #[inline]
    fn try_fast(&self) -> bool {
        // Acquire: pairs with the release's Release store. Relaxed on
        // failure: a failed attempt takes nothing.
        let got = self
            .word
            .lock
            .compare_exchange(0, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
        // Relaxed: only counts a path, in counting builds.
        if crate::coverage::ENABLED && got && self.word.state.load(Ordering::Relaxed) >= PARKED {
            crate::coverage::hit!("ron_park.fast_past_sleepers");
        }
        got
    }

    /// Takes the lock if it is free (a look, then one CAS).
    #[inline]
    fn try_take(&self) -> bool {
        // Relaxed: a look that spares the CAS while the lock is held; the
        // CAS has the Acquire.
        self.word.lock.load(Ordering::Relaxed) == 0
            // Acquire: pairs with the release's Release store. Relaxed on
            // failure: a failed attempt takes nothing.
            && self
                .word
                .lock
                .compare_exchange(0, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
    }

    /// The contended acquisition: rounds of a spin, then a park (module
    /// docs), until the lock is ours or `deadline` passes.
    #[cold]
    fn acquire_slow(&self, s: usize, deadline: Deadline) -> Option<PlaceToken> {
        // When this acquisition first went to sleep (for `HUNGER_AFTER`).
        let mut parked_at: Option<Instant> = None;
        loop {
            let budget = match self.spin_round(deadline) {
                ControlFlow::Continue(budget) => budget,
                ControlFlow::Break(got) => return got.then_some(PlaceToken::at(s)),
            };
            if let ControlFlow::Break(got) = self.park_round(s, budget, deadline, &mut parked_at) {
                return got;
            }
        }
    }

    /// Spin phase: looks (with growing pauses) for up to the lock's spin
    /// budget, unregistered. `Break(true)`: the lock is ours (the budget
    /// doubles); `Break(false)`: the deadline passed; `Continue(budget)`:
    /// on to the park phase.
    fn spin_round(&self, deadline: Deadline) -> ControlFlow<bool, u32> {
        // Relaxed: the budget is a tuning hint, no data.
        let budget = self.spin.load(Ordering::Relaxed);
        for look in 0..budget {
            if self.try_take() {
                // Relaxed: as above.
                self.spin
                    .store((budget.saturating_mul(2)).min(SPIN_MAX), Ordering::Relaxed);
                return ControlFlow::Break(true);
            }
            // Only the long pauses check the clock (the first ones are
            // short); nothing is registered yet.
            if look >= CLOCK_LOOKS && deadline.expired() {
                return ControlFlow::Break(false);
            }
            pause(look);
        }
        ControlFlow::Continue(budget)
    }

    /// Park phase: registers as a sleeper of slot `s`, looks at the lock
    /// word (marks it while held, module docs), sleeps, then takes the lock, has
    /// it handed over (starving) or goes round again. `Break(Some(_))`:
    /// the lock is ours; `Break(None)`: the deadline passed; `Continue`: a
    /// new round.
    fn park_round(
        &self,
        s: usize,
        budget: u32,
        deadline: Deadline,
        parked_at: &mut Option<Instant>,
    ) -> ControlFlow<Option<PlaceToken>> {
        let slot = &self.slots[s];
        // Spinning did not pay; spin less next time.
        self.spin
            .store((budget / 2).max(SPIN_MIN), Ordering::Relaxed); // as above
        // The epoch is read *before* the slot shows us as a sleeper: a
        // release whose scan sees our `sleepers` increment may bump
        // this slot's epoch at once, even before our `state` RMW, and
        // that bump must wake us (it is the one wake-up in flight).
        // Relaxed: ordered before the increment's Release below.
        let epoch = slot.epoch.load(Ordering::Relaxed);
        // mutants: a load-buffering pair with `bump_next`'s Acquire
        // load, which neither loom nor Miri explores; the order of the
        // two accesses is what `tests/shuttle.rs` (ron_park) checks.
        // Release: pairs with the scan's Acquire load in `bump_next`,
        // so a release that sees this increment bumps `epoch` after our
        // read above happened, and coherence keeps the bump out of it.
        slot.sleepers.fetch_add(1, Ordering::Release);
        // AcqRel: its Release half heads the release sequence through
        // which a release's claim of WAKING (an Acquire RMW) sees our
        // `sleepers` increment; Acquire orders us after earlier unparks.
        self.word.state.fetch_add(PARKED, Ordering::AcqRel);
        // After our registration, mark the lock word (module docs): either
        // we see it free, or its holder's release, which frees it only by a
        // CAS from an unmarked word, sees our mark and looks at `state`.
        let free = !self.mark_held();
        if free || deadline.expired() {
            // The lock was free after we registered (or we give up):
            // do not sleep.
            let got = self.try_take();
            let leaving = !got && deadline.expired();
            self.unpark(s, leaving);
            if got {
                crate::coverage::hit!("ron_park.registered_takes");
                return ControlFlow::Break(Some(PlaceToken::at(s)));
            }
            if leaving {
                return ControlFlow::Break(None);
            }
            return ControlFlow::Continue(());
        }
        crate::coverage::hit!("ron_park.sleeps");
        let parked_at = *parked_at.get_or_insert_with(Instant::now);
        futex::wait(&slot.epoch, epoch, deadline);
        self.after_wake(s, budget, deadline, parked_at)
    }

    /// A sleeper of slot `s` woken (or its deadline passed): still
    /// registered, it looks for the lock, and a waiter that has slept
    /// since `parked_at` for [`HUNGER_AFTER`] starves (asks for a
    /// handover). As [`park_round`](Self::park_round) for the result.
    fn after_wake(
        &self,
        s: usize,
        budget: u32,
        deadline: Deadline,
        parked_at: Instant,
    ) -> ControlFlow<Option<PlaceToken>> {
        // Still registered: while we look, `WAKING` (set by the release
        // that woke us) stays set, so further releases wake nobody; we
        // are the one wake-up in flight until our unpark below.
        self.spin_registered(budget, deadline);
        let got = self.try_take();
        let leaving = !got && deadline.expired();
        if !got && !leaving && parked_at.elapsed() >= HUNGER_AFTER && self.starve() {
            // Still registered, and awake until the lock is ours or
            // the deadline passes: the next release hands it over.
            let got = self.wait_hand_over(deadline);
            self.unpark(s, !got);
            return ControlFlow::Break(got.then_some(PlaceToken::at(s)));
        }
        self.unpark(s, leaving);
        if got {
            return ControlFlow::Break(Some(PlaceToken::at(s)));
        }
        if leaving {
            crate::coverage::hit!("ron_park.timed_out");
            return ControlFlow::Break(None);
        }
        ControlFlow::Continue(())
    }

    /// Sets `HUNGRY` if no other waiter starves (`HUNGRY` and `HANDOFF`
    /// clear); whether it did.
    fn starve(&self) -> bool {
        self.update_state(|w| (w & (HUNGRY | HANDOFF) == 0).then_some(w | HUNGRY))
            .is_ok()
    }

    /// The starving waiter (it set `HUNGRY`, and is still registered)
    /// waits until a release hands the lock over (`HANDOFF`), it takes the
    /// lock free, or the deadline passes and it withdraws `HUNGRY` before
    /// any release handed over. Whether it holds the lock.
    ///
    /// It stays awake meanwhile (looks and yields): a release that sees
    /// `HUNGRY` leaves the lock `LOCKED` for it, so it must be there to
    /// take it; the next release that reads `HUNGRY` hands over.
    fn wait_hand_over(&self, deadline: Deadline) -> bool {
        let mut look = 0u32;
        loop {
            // Relaxed: a look; the unpark after `take_hand_over` has the
            // Acquire.
            if self.word.state.load(Ordering::Relaxed) & HANDOFF != 0 {
                self.take_hand_over();
                return true;
            }
            if self.try_take() {
                // We hold the lock, so no release can read `HUNGRY` until
                // ours, which comes after this RMW. Relaxed: no data; only
                // we set or clear `HUNGRY` while we starve.
                self.word.state.fetch_and(!HUNGRY, Ordering::Relaxed);
                crate::coverage::hit!("ron_park.hungry_takes");
                return true;
            }
            if look >= CLOCK_LOOKS && deadline.expired() {
                // Withdraw `HUNGRY`, unless a release already handed over.
                if self
                    .update_state(|w| (w & HANDOFF == 0).then_some(w & !HUNGRY))
                    .is_ok()
                {
                    return false;
                }
                self.take_hand_over();
                return true;
            }
            pause(look);
            look = look.saturating_add(1);
        }
    }

    /// Takes the lock a release handed over (clears `HANDOFF`).
    fn take_hand_over(&self) {
        // Relaxed: only the starving waiter clears `HANDOFF`. The ordering
        // comes from its unpark right after (an AcqRel RMW of `state`,
        // before the guard is returned): it reads from the release sequence
        // headed by `hand_over`'s RMW (Release), so the previous holder's
        // critical section happens before ours.
        self.word.state.fetch_and(!HANDOFF, Ordering::Relaxed);
        crate::coverage::hit!("ron_park.handed_over");
    }

    /// The holder's release when a waiter starves: swaps `HUNGRY` for
    /// `HANDOFF`, leaving the lock word `LOCKED`, so the lock passes to the
    /// starving waiter without ever being free. `false` if `HUNGRY` was
    /// withdrawn meanwhile (then the release frees the lock as usual).
    #[cold]
    #[inline(never)]
    fn hand_over(&self) -> bool {
        // AcqRel (in `update_state`): its Release half publishes our
        // critical section to the starving waiter's Acquire.
        self.update_state(|w| (w & HUNGRY != 0).then_some((w & !HUNGRY) | HANDOFF))
            .is_ok()
    }

    /// A woken waiter's looks at the lock word before it competes for it,
    /// while it is still registered: up to `budget` looks (with the spin
    /// phase's pauses), until the lock is seen free or the
    /// deadline passes. Only loads: it changes nothing, so for the
    /// protocol it is a waiter slow to run after its wake-up.
    fn spin_registered(&self, budget: u32, deadline: Deadline) {
        for look in 0..budget {
            // Relaxed: a hint; `try_take` has the Acquire.
            if self.word.lock.load(Ordering::Relaxed) == 0 {
                crate::coverage::hit!("ron_park.woken_sees_free");
                return;
            }
            if look >= CLOCK_LOOKS && deadline.expired() {
                return;
            }
            pause(look);
        }
    }

    /// Deregisters a parked waiter of slot `s`, clearing `WAKING`. If it
    /// cleared a set `WAKING` and others are still parked, the next
    /// wake-up must follow: it marks the lock word if the lock is held (its
    /// release then wakes one), else wakes the next sleeper itself
    /// (`pass_on`: a waiter leaving without the lock, counted apart).
    fn unpark(&self, s: usize, pass_on: bool) {
        // Relaxed: ordered before the `state` RMW below by its Release half.
        self.slots[s].sleepers.fetch_sub(1, Ordering::Relaxed);
        // Every unpark clears WAKING: the wake-up in flight (maybe ours)
        // has arrived, or went to a thread that left; either way the next
        // release may wake again. AcqRel: as the registration's RMW.
        let Ok(w) = self.update_state(|w| Some((w - PARKED) & !WAKING)) else {
            unreachable!("the update always applies")
        };
        // Only the unpark that clears a set `WAKING` owes the next
        // wake-up: a release that saw it set woke nobody, counting on it.
        if w & WAKING != 0 && w - PARKED >= PARKED && !self.mark_held() {
            // Free: nobody's release will look; wake the next one here.
            self.claim_and_wake(s, || {
                if pass_on {
                    crate::coverage::hit!("ron_park.passes_on");
                }
            });
        }
    }

    /// Marks the lock word if the lock is held (`true`), so that its
    /// holder's release looks at `state` before freeing it; `false` if it
    /// is free. Always an RMW when held (also over an existing mark), so
    /// that what this thread did to `state` before happens before that
    /// release's look.
    fn mark_held(&self) -> bool {
        // Relaxed: a guess for the CAS.
        let mut l = self.word.lock.load(Ordering::Relaxed);
        loop {
            if l == 0 {
                return false;
            }
            // Release: our `state` RMWs before this happen before the
            // release's Acquire swap that clears the mark. Relaxed on
            // failure: retried with the value seen.
            match self
                .word
                .lock
                .compare_exchange(l, l | MARK, Ordering::Release, Ordering::Relaxed)
            {
                Ok(_) => {
                    crate::coverage::hit!("ron_park.marks");
                    return true;
                }
                Err(now) => l = now,
            }
        }
    }

    /// Applies `f` to `state` in one RMW (a CAS loop) while `f` returns
    /// `Some`; the value it applied to, or the one `f` refused.
    fn update_state(&self, f: impl Fn(u32) -> Option<u32>) -> Result<u32, u32> {
        // Relaxed: only picks the value for the CAS.
        let mut w = self.word.state.load(Ordering::Relaxed);
        while let Some(new) = f(w) {
            // AcqRel: Acquire makes the parked waiters' slot registrations
            // (their `sleepers` increments, before their registration RMW)
            // visible to a claim's scan and orders an unpark after earlier
            // RMWs; Release keeps every update in the release sequences of
            // the registrations. Relaxed on failure: retried.
            match self
                .word
                .state
                .compare_exchange_weak(w, new, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => return Ok(w),
                Err(now) => w = now,
            }
        }
        Err(w)
    }

    /// Sets `WAKING` if threads are parked and it is clear, and if so
    /// calls `claimed` and wakes the next sleeper after slot `from`.
    fn claim_and_wake(&self, from: usize, claimed: impl FnOnce()) {
        if let Some(epoch) = self.claim_next(from, claimed) {
            futex::wake_at(epoch, 1);
        }
    }

    /// [`claim_and_wake`](Self::claim_and_wake) but for the futex wake
    /// itself: the epoch word to wake one sleeper on, if it claimed.
    fn claim_next(&self, from: usize, claimed: impl FnOnce()) -> Option<*const AtomicU32> {
        // Relaxed: a look that spares the RMW; the RMW has the Acquire.
        let w = self.word.state.load(Ordering::Relaxed);
        let claim = |w: u32| (w >= PARKED && w & WAKING == 0).then_some(w | WAKING);
        if claim(w).is_some() && self.update_state(claim).is_ok() {
            claimed();
            return self.bump_next(from);
        }
        None
    }

    /// Bumps the epoch of the first slot after `from` along the route
    /// (ending with `from` itself) that has a sleeper: the word to wake
    /// one sleeper on.
    fn bump_next(&self, from: usize) -> Option<*const AtomicU32> {
        for i in 1..=S {
            let t = (from + i) % S;
            let slot = &self.slots[t];
            // mutants: the other half of the registration's load-buffering
            // pair (see there).
            // Acquire: pairs with the registration's Release increment, so
            // the sleeper's `epoch` read happens before the bump below.
            if slot.sleepers.load(Ordering::Acquire) != 0 {
                crate::coverage::hit!("ron_park.wakes");
                // Relaxed: only wakes; the woken thread takes the lock
                // through `lock`, and the parking waiter's `epoch` read
                // needs no pairing (see the registration).
                slot.epoch.fetch_add(1, Ordering::Relaxed);
                return Some(&slot.epoch);
            }
        }
        None
    }

    /// Releases the lock and wakes the next sleeper along the route after
    /// the acquirer's slot, if anybody is parked and no wake-up is on its
    /// way.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: PlaceToken) {
        // A starving waiter gets the lock handed over. Relaxed: a look
        // that spares the RMW (the lock word and `state` share a line);
        // `hand_over` has the ordering.
        if self.word.state.load(Ordering::Relaxed) & HUNGRY != 0 && self.hand_over() {
            return;
        }
        if !self.free_unmarked() {
            self.release_slow(token);
        }
    }

    /// Frees the lock unless its word is marked; whether it did. The free
    /// is a release's last access to the lock: its last user may free it
    /// once it is free.
    #[inline]
    fn free_unmarked(&self) -> bool {
        // Release: publishes the critical section to the next taker.
        // Relaxed on failure: the caller reads the word again.
        self.word
            .lock
            .compare_exchange(LOCKED, 0, Ordering::Release, Ordering::Relaxed)
            .is_ok()
    }

    /// The release of a marked lock: clears the mark, wakes the next
    /// sleeper if threads are parked and no wake-up is in flight, and
    /// frees the lock by a CAS from the unmarked word (again if a waiter
    /// marked it meanwhile). Everything happens while we hold the lock.
    #[cold]
    #[inline(never)]
    fn release_slow(&self, token: PlaceToken) {
        // The CPU hint (for a fast-path token) is user code: if it panics,
        // `release_from_slot` runs this from slot 0 instead, so the lock
        // is freed (and the wake-up it owes sent) before the panic unwinds.
        token.release_from_slot::<S>(|from| {
            let mut woken = None;
            loop {
                // Acquire: pairs with the markers' Release, so their
                // registrations (and unparks) happen before the claim.
                self.word.lock.swap(LOCKED, Ordering::Acquire);
                // A claim on a later round means the wake-up claimed on an
                // earlier one has arrived (its unpark cleared `WAKING` and
                // marked the word): the earlier one is woken now, the new
                // one after the free.
                if let Some(epoch) = self.claim_next(from, || {})
                    && let Some(earlier) = woken.replace(epoch)
                {
                    futex::wake_at(earlier, 1);
                }
                // Fails if a waiter marked the word since the swap (it
                // registered or unparked after our claim's look).
                if self.free_unmarked() {
                    break;
                }
                crate::coverage::hit!("ron_park.marked_again");
            }
            // The futex wake after the free: it uses only the address of
            // the epoch word (bumped above, while we held the lock), so the
            // syscall stays out of the lock's hold time.
            if let Some(epoch) = woken {
                futex::wake_at(epoch, 1);
            }
        });
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.word.lock.load(Ordering::Relaxed) != 0 // a snapshot by contract
    }
}

crate::raw_impl::impl_default_debug! {
    impl [const S: usize] for RonPark<S>, debug "RonPark" { slots: S }
}

#[cfg(not(loom))]
// SAFETY: state table rows `lock` and `state` bits 1 and 2 (`HUNGRY`,
// `HANDOFF`). `lock` and `try_lock` return a guard only after a CAS of `lock`
// that found it free and set it (Acquire, pairing with the release's Release
// store that freed it), or, for the one starving waiter, after it cleared the
// `HANDOFF` that the holder's release set instead of freeing `lock` and then
// unparked (an AcqRel RMW of `state` that reads from the release sequence of
// that release's RMW, whose Release publishes its critical section); only the
// holder's release writes `lock` otherwise, and a release that handed over
// leaves it `LOCKED`, so one thread owns the lock at a time. The other rows
// (`WAKING`, the parked count, `sleepers`, `epoch`) only decide who is woken
// to compete for `lock`; a wrong, out-of-range or stale CPU hint moves a
// sleeper to another slot, never past the CAS. The only user code is the CPU
// hint provider: `lock` asks it before registering anything, so a panic there
// leaves nothing behind; `unlock` frees `lock` before it asks the hint for
// the wake-up scan (and wakes from slot 0 if the hint panics), so it never
// unwinds holding the lock nor drops a wake-up it owes. A forgotten guard
// leaves the lock held; nothing dangles (sleepers are counts in the lock).
unsafe impl<const S: usize> lock_api::RawMutex for RonPark<S> {
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
// SAFETY: `unlock_fair` is `release` (a woken sleeper competes with
// spinners; only a starving waiter gets the lock handed over); the
// `RawMutex` argument above covers it.
unsafe impl<const S: usize> lock_api::RawMutexFair for RonPark<S> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }
}

crate::timed::impl_raw_mutex_timed! {
    impl [const S: usize] for RonPark<S>
}
