//! [`RonPark`]: a RON lock whose waiters spin a little, then sleep on a
//! futex, and whose releases wake the next *sleeping* waiter along the
//! route (`std` only).
//!
//! Meant for services where threads outnumber CPUs: a spinning waiter
//! steals the CPU the holder needs, a sleeping one does not. Waiters first
//! spin on the lock word (an adaptive budget of looks), then *park*: they
//! register in their slot (from the CPU hint, mapped through the
//! [`route`](crate::route)) and sleep on the slot's futex word. A release
//! frees the lock word and, if anybody is parked, wakes one sleeper of the
//! first slot along the route after the releaser's own that has one, so
//! wake-ups follow the route as RON handovers do. The woken thread competes
//! for the lock word like a spinner (no direct handover: a running spinner
//! may take the lock first; the woken thread then parks again).
//!
//! ## States
//! | field | meaning | written by |
//! |---|---|---|
//! | `word` bit 0 | `LOCKED` | set by the CAS that takes the lock, cleared by the release's CAS |
//! | `word` bit 1 | `WAKING`: a wake-up is on its way | set by a release (or a leaving timed waiter) in the same CAS that frees the lock, only while threads are parked; cleared by every unpark |
//! | `word` bits 2.. | threads parked in any slot (registered, possibly not asleep yet) | `+4` by a parking waiter, `-4` when it wakes or leaves |
//! | slot `sleepers` | threads parked in this slot | `+1` (after reading `epoch`) before the `word` `+4`; `-1` before the `word` `-4` |
//! | slot `epoch` | futex word: wake-ups sent to this slot (wrapping) | `+1` by a release that picked this slot |
//!
//! A parking waiter: reads `epoch`, `sleepers += 1`, `word += 4`; if that
//! RMW saw the lock free it tries to take it instead of sleeping, else it
//! sleeps while `epoch` is unchanged. A release: one CAS clears `LOCKED`
//! and, if threads are parked and `WAKING` is clear, sets `WAKING`; then it
//! scans the slots from its own + 1 along the route and, in the first with
//! `sleepers != 0`, bumps `epoch` and wakes one sleeper. With `WAKING`
//! set, releases wake nobody: one woken thread at a time competes for the
//! lock, instead of one futex wake per release.
//!
//! ## Why no wake-up is lost
//! All changes of `word` are read-modify-writes, so they are totally
//! ordered. If a parking waiter's `word += 4` comes after a release's CAS,
//! it sees the lock free and does not sleep. If it comes before, the
//! release sees it parked and, unless `WAKING` is set, finds a slot with
//! `sleepers != 0` (the waiter's increment precedes its `word` RMW, which
//! the release's RMW reads from) and bumps that slot's `epoch`.
//!
//! The thread the scan counted in that slot need not be one that is asleep:
//! it may have incremented `sleepers` and not yet done its `word` RMW. What
//! matters is that it cannot sleep through the bump: it read `epoch`
//! *before* its increment (Release), which the scan read (Acquire), so its
//! read happens before the bump and cannot see it (coherence); its futex
//! wait returns at once, or it never sleeps. Every thread that incremented
//! `sleepers` then unparks, which clears `WAKING`, and is still competing
//! for the lock (or, a timed waiter that gives up, passes the wake-up on,
//! below). So a wake-up either reaches a sleeper or lands on a thread that
//! keeps the lock moving; it is never spent on a thread that then sleeps
//! with `WAKING` set and nobody left to clear it. (Reading `epoch` after
//! the increment allowed exactly that: shuttle's randomized schedules with
//! four threads found it, `tests/shuttle.rs`.) `epoch` itself needs no
//! ordering beyond that pair: the woken thread takes the lock through
//! `word`, which orders the data.
//! `WAKING` is only set while threads are parked, and each of them clears
//! it when it unparks, so it never stays set with nobody to clear it; the
//! thread that clears it either takes the lock (its release wakes the
//! next), finds it held (that holder's release wakes the next) or, for a
//! timed waiter that gives up, passes the wake-up on: if the lock is free
//! and others are parked, its unpark sets `WAKING` again and it wakes the
//! next sleeper itself.
//!
//! ## Guarantees
//! * Mutual exclusion: only the CAS that sees `LOCKED` clear takes it.
//! * Progress: while threads are parked and the lock is free, a wake-up
//!   is on its way to one of them (above).
//! * No waiting bound: running spinners may take the lock before a woken
//!   sleeper (as with `parking_lot`'s default unfair unlock).
//! * `RawMutexFair`: `unlock_fair` is a plain unlock (no direct handover).
//! * `RawMutexTimed`: a timed waiter gives up after its deadline, from the
//!   spin phase (nothing to undo) or from its sleep (deregisters, then
//!   passes on a wake-up it may have received).
//!
//! ## Fast paths while others sleep
//! Registered sleepers change the word, so the plain CASes from `0` and
//! from `LOCKED` fail while anybody is parked. Both fast paths then retry
//! once from the value the failed CAS returned (the cache line is already
//! exclusive, so the retry is cheap): an acquisition takes a free lock
//! whatever the parked count, and a release with a wake-up already in
//! flight (`WAKING`) clears `LOCKED` without a fresh load. Without these,
//! a lock with sleepers paid the slow path on every acquisition and
//! release, which halved its throughput when threads outnumber CPUs.
//!
//! ## The woken waiter
//! A woken waiter first looks at the lock word *while still registered*
//! (the spin phase's schedule of looks, until it sees the lock free), and
//! only then competes and unparks. Its registration keeps the `WAKING` of
//! the release that woke it set meanwhile, so the releases of a busy
//! running thread wake nobody else: one woken thread at a time, as long as
//! it is looking. Only loads happen while it looks, so for the protocol it
//! is a waiter slow to run after its wake-up.
//!
//! ## Spin budget
//! One budget per lock, in looks at the lock word: the first looks are
//! separated by exponentially growing pauses (1, 2, 4 .. 64), later ones by
//! a yield of the CPU. The budget doubles (up to [`SPIN_MAX`]) when a
//! spinner takes the lock, and halves (down to [`SPIN_MIN`]) whenever a
//! waiter has to sleep, so it shrinks when threads outnumber CPUs and
//! spinning stops paying, and grows back when handovers happen while
//! waiters spin.
//!
//! ## Cost
//! Bytes per lock: `128 * (S + 2)` (the word, the budget and every slot on
//! their own 128-byte pair of lines). Uncontended lock + unlock: two CAS
//! (one more each while threads sleep); the slot scan runs only when
//! somebody is parked and no wake-up is in flight.
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

use crossbeam_utils::CachePadded;

use crate::futex;
use crate::slots::SlotToken;
use crate::sync::{AtomicU32, Ordering};
use crate::timed::Deadline;

const LOCKED: u32 = 1;
const WAKING: u32 = 2;
const PARKED: u32 = 4;

/// Fewest looks a waiter takes at the lock word before it parks.
pub const SPIN_MIN: u32 = if cfg!(loom) { 1 } else { 2 };
/// Most looks a waiter takes at the lock word before it parks.
pub const SPIN_MAX: u32 = if cfg!(loom) { 1 } else { 20 };
/// Budget of a new lock.
const SPIN_INIT: u32 = if cfg!(loom) { 1 } else { 10 };
/// Looks that pause (2^look pauses each) before looks start to yield.
const PAUSE_LOOKS: u32 = 7;

/// Between two looks of the spin phase: `2^look` pauses for the first
/// [`PAUSE_LOOKS`] looks, then a yield of the CPU (a co-runner, maybe the
/// holder, gets it without a futex round trip). A plain pause under loom:
/// the budget is bounded, and a loom yield would let every release run
/// first.
#[inline]
fn pause(look: u32) {
    if cfg!(loom) || look < PAUSE_LOOKS {
        for _ in 0..1u32 << look.min(PAUSE_LOOKS) {
            core::hint::spin_loop();
        }
    } else {
        std::thread::yield_now();
    }
}
/// Default number of slots.
pub const DEFAULT_SLOTS: usize = 16;

struct ParkSlot {
    sleepers: AtomicU32,
    epoch: AtomicU32,
}

/// A parking RON lock with `S` slots: waiters spin, then sleep on a futex.
///
/// * **States:** the lock word (`LOCKED`, `WAKING`, parked count) and per
///   slot its sleeper count and futex epoch; table in the
///   [module docs](self).
/// * **Guarantees:** mutual exclusion (only the CAS that sees `LOCKED`
///   clear takes it); progress (while threads are parked and the lock is
///   free, a wake-up is on its way); no waiting bound.
/// * **Panics:** the only user code is the CPU hint: `lock` asks it before
///   registering anything, and an unlock whose hint panics has released
///   the lock before it unwinds.
/// * **Cost:** `128 * (S + 2)` bytes; two CASes uncontended.
pub struct RonPark<const S: usize = DEFAULT_SLOTS> {
    word: CachePadded<AtomicU32>,
    spin: CachePadded<AtomicU32>,
    slots: [CachePadded<ParkSlot>; S],
}

impl<const S: usize> RonPark<S> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            const { assert!(S >= 1, "a RON lock needs at least one slot") };
            RonPark {
                word: CachePadded::new(AtomicU32::new(0)),
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
    pub fn acquire(&self) -> SlotToken {
        if self.try_fast() {
            return SlotToken::NONE;
        }
        self.acquire_slow(crate::slots::slot_hint::<S>(), Deadline::NEVER)
            .expect("an acquisition without deadline only returns with the lock")
    }

    /// Acquires the lock parking in slot `slot % S` (any value is safe).
    pub fn acquire_in(&self, slot: usize) -> SlotToken {
        if self.try_fast() {
            return SlotToken::NONE;
        }
        self.acquire_slow(slot % S, Deadline::NEVER)
            .expect("an acquisition without deadline only returns with the lock")
    }

    /// Takes the lock if it is free; never parks.
    #[inline]
    pub fn try_acquire(&self) -> Option<SlotToken> {
        self.try_take().then_some(SlotToken::NONE)
    }

    /// Tries to take the lock until `deadline`, parking in the caller's slot.
    pub fn try_acquire_until(&self, deadline: Deadline) -> Option<SlotToken> {
        self.try_acquire_in_until(crate::slots::slot_hint::<S>(), deadline)
    }

    /// Tries to take the lock until `deadline`, parking in slot `slot % S`
    /// (any value is safe). `None` only once the deadline has passed.
    pub fn try_acquire_in_until(&self, slot: usize, deadline: Deadline) -> Option<SlotToken> {
        if self.try_fast() {
            return Some(SlotToken::NONE);
        }
        self.acquire_slow(slot % S, deadline)
    }

    /// The acquisition fast path: one CAS from `0` and, if that saw the
    /// lock free with sleepers registered, one more from the word it saw
    /// (the line is already ours, so it is cheap): while threads sleep,
    /// a running thread still takes a free lock without the slow path.
    #[inline]
    fn try_fast(&self) -> bool {
        // Acquire: pairs with the release's CAS. Relaxed on
        // failure: a failed attempt takes nothing.
        match self
            .word
            .compare_exchange(0, LOCKED, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => true,
            Err(now) => {
                let got = now & LOCKED == 0
                    // Acquire, Relaxed: as above.
                    && self
                        .word
                        .compare_exchange(now, now | LOCKED, Ordering::Acquire, Ordering::Relaxed)
                        .is_ok();
                if got {
                    crate::coverage::hit!("ron_park.fast_past_sleepers");
                }
                got
            }
        }
    }

    /// Takes the lock if `LOCKED` is clear, whatever the parked count.
    #[inline]
    fn try_take(&self) -> bool {
        // Relaxed: only picks the value for the CAS, which has the Acquire.
        let mut w = self.word.load(Ordering::Relaxed);
        while w & LOCKED == 0 {
            // Acquire: pairs with the release's CAS. Relaxed on
            // failure: a failed attempt takes nothing.
            match self.word.compare_exchange_weak(
                w,
                w | LOCKED,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(now) => w = now,
            }
        }
        false
    }

    #[cold]
    fn acquire_slow(&self, s: usize, deadline: Deadline) -> Option<SlotToken> {
        let slot = &self.slots[s];
        loop {
            // Spin phase. Relaxed: the budget is a tuning hint, no data.
            let budget = self.spin.load(Ordering::Relaxed);
            for look in 0..budget {
                if self.try_take() {
                    // Relaxed: as above.
                    self.spin
                        .store((budget.saturating_mul(2)).min(SPIN_MAX), Ordering::Relaxed);
                    return Some(SlotToken::at(s));
                }
                // Only the yielding looks check the clock (the pausing
                // ones are short); nothing is registered yet.
                if look >= PAUSE_LOOKS && deadline.expired() {
                    return None;
                }
                pause(look);
            }
            // Park phase: spinning did not pay; spin less next time.
            self.spin
                .store((budget / 2).max(SPIN_MIN), Ordering::Relaxed); // as above
            // The epoch is read *before* the slot shows us as a sleeper: a
            // release whose scan sees our `sleepers` increment may bump
            // this slot's epoch at once, even before our `word` RMW, and
            // that bump must wake us (it is the one wake-up in flight).
            // Relaxed: ordered before the increment's Release below.
            let epoch = slot.epoch.load(Ordering::Relaxed);
            // mutants: a load-buffering pair with `wake_next`'s Acquire
            // load, which neither loom nor Miri explores; the order of the
            // two accesses is what `tests/shuttle.rs` (ron_park) checks.
            // Release: pairs with the scan's Acquire load in `wake_next`,
            // so a release that sees this increment bumps `epoch` after our
            // read above happened, and coherence keeps the bump out of it.
            slot.sleepers.fetch_add(1, Ordering::Release);
            // AcqRel: publishes our `sleepers` increment to the release
            // that reads this RMW's result, and orders us after it.
            let w = self.word.fetch_add(PARKED, Ordering::AcqRel);
            if w & LOCKED == 0 || deadline.expired() {
                // The lock was free when we registered (or we give up):
                // do not sleep.
                let got = self.try_take();
                self.unpark(s, !got);
                if got {
                    return Some(SlotToken::at(s));
                }
                if deadline.expired() {
                    return None;
                }
                continue;
            }
            crate::coverage::hit!("ron_park.sleeps");
            futex::wait(&slot.epoch, epoch, deadline);
            // Still registered: while we look, `WAKING` (set by the release
            // that woke us) stays set, so further releases wake nobody; we
            // are the one wake-up in flight until our unpark below.
            self.spin_registered(budget, deadline);
            let got = self.try_take();
            let leaving = !got && deadline.expired();
            self.unpark(s, leaving);
            if got {
                return Some(SlotToken::at(s));
            }
            if leaving {
                crate::coverage::hit!("ron_park.timed_out");
                return None;
            }
        }
    }

    /// A woken waiter's looks at the lock word before it competes for it,
    /// while it is still registered: up to `budget` looks (the spin
    /// phase's pauses, then yields), until the lock is seen free or the
    /// deadline passes. Only loads: it changes nothing, so for the
    /// protocol it is a waiter slow to run after its wake-up.
    fn spin_registered(&self, budget: u32, deadline: Deadline) {
        for look in 0..budget {
            // Relaxed: a hint; `try_take` has the Acquire.
            if self.word.load(Ordering::Relaxed) & LOCKED == 0 {
                crate::coverage::hit!("ron_park.woken_sees_free");
                return;
            }
            if look >= PAUSE_LOOKS && deadline.expired() {
                return;
            }
            pause(look);
        }
    }

    /// Deregisters a parked waiter of slot `s`. A waiter leaving without
    /// the lock (`pass_on`) may have received a wake-up meant to keep the
    /// lock moving: if the lock is free and others are parked, it wakes
    /// the next sleeper itself.
    fn unpark(&self, s: usize, pass_on: bool) {
        // Relaxed: ordered before the `word` RMW below by its Release half.
        self.slots[s].sleepers.fetch_sub(1, Ordering::Relaxed);
        // Relaxed: only picks the value for the CAS below.
        let mut w = self.word.load(Ordering::Relaxed);
        loop {
            // Every unpark clears WAKING: the wake-up in flight (maybe
            // ours) has arrived, or went to a thread that left; either way
            // the next release may wake again.
            let mut new = (w - PARKED) & !WAKING;
            let wake = pass_on && new & LOCKED == 0 && new >= PARKED;
            if wake {
                new |= WAKING;
            }
            // AcqRel: as the registration's RMW. Relaxed on failure: retried.
            match self
                .word
                .compare_exchange_weak(w, new, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => {
                    if wake {
                        crate::coverage::hit!("ron_park.passes_on");
                        self.wake_next(s);
                    }
                    return;
                }
                Err(now) => w = now,
            }
        }
    }

    /// Wakes one sleeper of the first slot after `from` along the route
    /// (ending with `from` itself) that has one.
    fn wake_next(&self, from: usize) {
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
                // through `word`, and the parking waiter's `epoch` read
                // needs no pairing (see the registration).
                slot.epoch.fetch_add(1, Ordering::Relaxed);
                futex::wake(&slot.epoch, 1);
                return;
            }
        }
    }

    /// Releases the lock and wakes the next sleeper along the route after
    /// the acquirer's slot, if anybody is parked.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: SlotToken) {
        // Release: publishes the critical section to the next taker; the
        // common case, nobody parked. Relaxed on failure: handled below.
        if let Err(w) = self
            .word
            .compare_exchange(LOCKED, 0, Ordering::Release, Ordering::Relaxed)
        {
            self.release_slow(w, token);
        }
    }

    /// The release with threads parked; `w` is the word last seen.
    fn release_slow(&self, mut w: u32, token: SlotToken) {
        loop {
            // Unlock, and claim the one wake-up in flight (WAKING) if
            // somebody is parked and no wake-up is on its way yet: in the
            // same RMW, so WAKING is only ever set while threads are
            // parked, and each of them clears it when it unparks.
            let wake = w >= PARKED && w & WAKING == 0;
            let new = (w & !LOCKED) | if wake { WAKING } else { 0 };
            // AcqRel: Release publishes the critical section to the next
            // taker; Acquire makes parked waiters' slot registrations
            // visible to the scan. Relaxed on failure: retried.
            match self
                .word
                .compare_exchange_weak(w, new, Ordering::AcqRel, Ordering::Relaxed)
            {
                Ok(_) => {
                    if wake {
                        // The lock is free; the wake-up we claimed must
                        // still go out if the hint provider (user code)
                        // panics: `release_from_slot` then wakes from slot 0.
                        token.release_from_slot::<S>(|from| self.wake_next(from));
                    }
                    return;
                }
                Err(now) => w = now,
            }
        }
    }

    /// Same as [`release`](Self::release): a woken sleeper competes with
    /// spinners; there is no direct handover.
    ///
    /// # Safety
    /// As for [`release`](Self::release).
    #[inline]
    pub unsafe fn release_fair(&self, token: SlotToken) {
        // SAFETY: same contract.
        unsafe { self.release(token) }
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.word.load(Ordering::Relaxed) & LOCKED != 0 // a snapshot by contract
    }
}

crate::raw_impl::impl_default_debug! {
    impl [const S: usize] for RonPark<S>, debug "RonPark" { slots: S }
}

#[cfg(not(loom))]
// SAFETY: by the state table in the module docs, the lock is held exactly
// while bit 0 (`LOCKED`) of `word` is set. `lock` and `try_lock` return a
// guard only after a CAS of `word` that found `LOCKED` clear and set it
// (Acquire, pairing with the release's Release CAS that cleared it); every
// other change of `word` (parked count, `WAKING`) is an RMW that leaves
// `LOCKED` as it found it, so one thread owns the lock at a time. Slots,
// sleepers and futex wake-ups only decide who is woken to compete for the
// word; a wrong, out-of-range or stale CPU hint moves a sleeper to another
// slot, never past the CAS. The only user code is the CPU hint provider:
// `lock` asks it before registering anything, so a panic there leaves
// nothing behind; `unlock` clears `LOCKED` in its CAS before it asks the
// hint for the wake-up scan (and wakes from slot 0 if the hint panics), so
// it never unwinds holding the lock nor drops a claimed wake-up. A
// forgotten guard leaves the lock held; nothing dangles (sleepers are
// counts in the lock).
unsafe impl<const S: usize> lock_api::RawMutex for RonPark<S> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();
    type Guard = SlotToken;

    #[inline]
    fn lock(&self) -> SlotToken {
        self.acquire()
    }

    #[inline]
    fn try_lock(&self) -> Option<SlotToken> {
        self.try_acquire()
    }

    #[inline]
    unsafe fn unlock(&self, guard: SlotToken) {
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
// SAFETY: `release_fair` is `release` (a woken sleeper competes with
// spinners; there is no direct handover); the `RawMutex` argument above
// covers it.
unsafe impl<const S: usize> lock_api::RawMutexFair for RonPark<S> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: SlotToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release_fair(guard) }
    }
}

crate::timed::impl_raw_mutex_timed! {
    impl [const S: usize] for RonPark<S>
}
