//! [`Ron`]: RON's Algorithm 1 (one flag per slot) with a claim step.
//!
//! Each slot has one flag. A waiter *claims* its slot's flag (`UNCLAIMED ->
//! WAITING`) and spins on it; the holder, at unlock, walks the slots along
//! the route from its own slot + 1 and turns the first `WAITING` flag into
//! `GRANTED`, keeping the lock word set, so the lock passes straight to that
//! waiter. A waiter that finds its slot already claimed (two threads on one
//! slot: more threads than slots, a shared CPU, a wrong hint) does not spin
//! on the flag: it waits on the lock word, TTAS-style, and claims the flag
//! as soon as it is `UNCLAIMED` again. Without the claim step two threads would
//! spin on one flag and a single grant would release both (the bug of the
//! published code); why it claims again: `docs/design.md`, "Oversubscription".
//!
//! ## States
//! | row | `in_use` | flag of slot `s` | meaning |
//! |---|---|---|---|
//! | free | false | `UNCLAIMED` | unlocked, nobody claimed `s` |
//! | free, claimed | false | `WAITING` | unlocked; `s`'s claimer is about to see it and CAS `in_use` |
//! | held | true | `UNCLAIMED` | held; `s` unclaimed |
//! | held, claimed | true | `WAITING` | held; `s`'s claimer spins on its flag |
//! | granted | true | `GRANTED` | the holder handed over to `s`'s claimer, whose CAS `GRANTED -> UNCLAIMED` takes the lock |
//!
//! `GRANTED` is only written by the holder, only over `WAITING`, and only
//! while `in_use` stays true; its one claimer is the only thread that can
//! consume it. `in_use` is only taken by CAS from false. A claimer whose
//! relax policy panics CASes its flag `WAITING -> UNCLAIMED`; if that fails the
//! flag is `GRANTED`, and it consumes the grant and releases the lock.
//!
//! ## Guarantees
//! * Mutual exclusion, under any schedule and any hint.
//! * Progress (deadlock-freedom).
//! * Bounded waiting for claimers: once a thread has claimed its slot, at
//!   most `S - 1` other acquisitions (one per other slot) plus one racing
//!   fast-path acquisition happen before its own. A thread that finds its
//!   slot claimed by another has no bound until it claims (it retries at
//!   every look, and succeeds once the other claimer got its grant).
//! * `RawMutexTimed` (`std`): a timed waiter that gives up withdraws its
//!   claim with a CAS `WAITING -> UNCLAIMED` that races the holder's grant CAS
//!   on the same flag; if the grant won, the waiter owns the lock and
//!   returns it, so no grant ever goes to a thread that left.
//! * Panics: a waiter whose `Relax` policy panics gives its claim back the
//!   same way, or, if its slot was granted meanwhile, takes the lock and
//!   hands it on, then unwinds; an unlock whose CPU hint panics releases
//!   the lock (scanning from slot 0) before it unwinds. The lock stays
//!   usable (`docs/panic-safety.md`).
//!
//! ## Cost
//! Bytes per lock: `128 * (S + 1)` (the lock word and every flag on their
//! own 128-byte pair of cache lines). Uncontended lock + unlock: a load, a CAS and
//! one scan of `S` flags (O(S) loads) plus a release store.
//!
//! ```
//! use ron_core::Ron;
//! let m: lock_api::Mutex<Ron<8>, u32> = lock_api::Mutex::new(0);
//! *m.lock() += 1;
//! assert_eq!(*m.lock(), 1);
//! ```

use core::cell::Cell;
use core::marker::PhantomData;

use crossbeam_utils::CachePadded;

use crate::in_use::InUse;
use crate::relax::{DefaultRelax, Relax};
use crate::sync::{AtomicU8, Ordering};
use crate::token::PlaceToken;
use crate::unwind::OnUnwind;

const UNCLAIMED: u8 = 0;
const WAITING: u8 = 1;
const GRANTED: u8 = 2;

/// RON Algorithm 1 with a claim step (`S` slots of one flag each), the
/// paper's first lock kept as a reference. States, guarantees and cost: the
/// [module docs](self).
pub struct Ron<const S: usize, R: Relax = DefaultRelax> {
    in_use: InUse,
    flags: [CachePadded<AtomicU8>; S],
    _relax: PhantomData<fn() -> R>,
}

impl<const S: usize, R: Relax> Ron<S, R> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            const { assert!(S >= 1, "a RON lock needs at least one slot") };
            Ron {
                in_use: InUse::new(),
                flags: crate::sync::array_init!(S, CachePadded::new(AtomicU8::new(UNCLAIMED))),
                _relax: PhantomData,
            }
        }
    }

    crate::in_use::slotted_entry_points!();

    /// The fast path: a load of `in_use`, then the CAS only when it looked
    /// free. An arrival that finds the lock held reads the line the slot
    /// heads poll (it stays shared) and goes to wait in its slot.
    #[inline]
    fn try_fast(&self) -> bool {
        if self.in_use.is_held() {
            crate::coverage::hit!("ron.fast_saw_held");
            return false;
        }
        self.in_use.try_take()
    }

    #[cold]
    fn acquire_slow(&self, s: usize, on_wait: impl FnOnce()) -> PlaceToken {
        // User code before claiming: a panic here leaves nothing behind.
        let mut relax = R::default();
        let claimed = Cell::new(self.claim(s));
        // While claimed, a panic in `relax` (or `on_wait`) unwinds through
        // this guard: it gives the claim back, or, if the holder granted it
        // meanwhile, owns the lock and hands it on.
        let guard = OnUnwind::new(|| self.unclaim_on_unwind(s, &claimed));
        on_wait();
        loop {
            if self.look(s, &claimed) {
                guard.disarm();
                return PlaceToken::at(s);
            }
            relax.relax();
        }
    }

    /// Tries to make this thread the claimer of slot `s` (`UNCLAIMED ->
    /// WAITING`); false if another thread holds the claim or a grant to it
    /// is not consumed yet.
    #[inline]
    fn claim(&self, s: usize) -> bool {
        let flag = &self.flags[s];
        // Relaxed peek, then a Relaxed CAS: claiming transfers no data; it
        // only makes this thread the one consumer of the slot's grant.
        flag.load(Ordering::Relaxed) == UNCLAIMED
            && flag
                .compare_exchange(UNCLAIMED, WAITING, Ordering::Relaxed, Ordering::Relaxed)
                .is_ok()
    }

    /// One look of a waiter in slot `s`: consumes a grant to its claim, or
    /// takes a free lock, or (when it holds no claim) tries to claim again.
    /// True when the caller now owns the lock (and holds no claim).
    #[inline]
    fn look(&self, s: usize, claimed: &Cell<bool>) -> bool {
        let flag = &self.flags[s];
        // The claimer consumes a grant with one read-modify-write: it owns
        // the flag's line between grants (its claim wrote it, and only a
        // grant writes it from outside), so a failed look costs what a
        // load does, and a look that finds the grant takes the line for
        // writing at once, where a load and then a store would fetch it
        // shared and then pay an invalidation of the granting holder's
        // copy (one more hop per handover). Acquire on success: pairs with
        // the holder's Release CAS WAITING -> GRANTED; Relaxed on failure:
        // nothing was taken.
        if claimed.get()
            && flag
                .compare_exchange(GRANTED, UNCLAIMED, Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            crate::coverage::hit!("ron.grant_taken");
            claimed.set(false);
            return true;
        }
        if self.in_use.take_if_free() {
            if claimed.get() {
                // No grant can be pending: a grant keeps `in_use` true
                // until its claimer consumes it, and we just found
                // `in_use` false. So the flag is WAITING; give it back.
                flag.store(UNCLAIMED, Ordering::Relaxed); // as above
                claimed.set(false);
            }
            return true;
        }
        if !claimed.get() {
            // Claim as soon as the slot's previous claimer is done: a
            // waiter that stayed unclaimed would only ever win the lock
            // word in the instant between a release that found no claimer
            // and the next fast-path CAS, and a running thread that
            // re-locks in a loop wins that race nearly every time.
            claimed.set(self.claim(s));
            if claimed.get() {
                crate::coverage::hit!("ron.reclaim");
            }
        }
        false
    }

    /// Tries to take the lock until `deadline`, waiting in the caller's
    /// slot (from the CPU hint); see [`try_acquire_in_until`](Self::try_acquire_in_until).
    #[cfg(feature = "std")]
    pub fn try_acquire_until(&self, deadline: crate::timed::Deadline) -> Option<PlaceToken> {
        if self.try_fast() {
            return Some(PlaceToken::NONE);
        }
        self.try_acquire_in_until(crate::slots::slot_hint::<S>(), deadline)
    }

    /// Tries to take the lock until `deadline`, waiting in slot `slot % S`
    /// (any value is safe). `None` only once the deadline has passed.
    #[cfg(feature = "std")]
    pub fn try_acquire_in_until(
        &self,
        slot: usize,
        deadline: crate::timed::Deadline,
    ) -> Option<PlaceToken> {
        self.try_acquire_in_while(slot, || !deadline.expired())
    }

    /// Waits for the lock in slot `slot % S` (any value is safe) as long as
    /// `keep_waiting` says so: it is asked after every look that did not
    /// take the lock, and `None` is returned after it said `false` (a
    /// deadline, a cancellation flag; works without `std`).
    ///
    /// Giving up withdraws the claim with a CAS `WAITING -> UNCLAIMED`; the
    /// holder's grant is a CAS `WAITING -> GRANTED` on the same flag, so
    /// exactly one of the two wins: either the waiter leaves and no grant
    /// can reach it any more (the holder moves on along the route), or the
    /// grant arrived first and the waiter owns the lock and returns it.
    /// A panic in `keep_waiting` or the relax policy withdraws the same way
    /// (handing the lock on if the grant won) before it unwinds.
    pub fn try_acquire_in_while(
        &self,
        slot: usize,
        mut keep_waiting: impl FnMut() -> bool,
    ) -> Option<PlaceToken> {
        let s = slot % S;
        if self.try_fast() {
            return Some(PlaceToken::NONE);
        }
        // User code before claiming: a panic here leaves nothing behind.
        let mut relax = R::default();
        let claimed = Cell::new(self.claim(s));
        let guard = OnUnwind::new(|| self.unclaim_on_unwind(s, &claimed));
        loop {
            if self.look(s, &claimed) {
                guard.disarm();
                return Some(PlaceToken::at(s));
            }
            if !keep_waiting() {
                guard.disarm();
                if !claimed.get() {
                    return None;
                }
                return if self.withdraw(s) {
                    crate::coverage::hit!("ron.timed_withdraw");
                    None
                } else {
                    crate::coverage::hit!("ron.timed_grant_won");
                    Some(PlaceToken::at(s))
                };
            }
            relax.relax();
        }
    }

    /// The claimer of slot `s` leaves: one CAS `WAITING -> UNCLAIMED` against
    /// the holder's CAS `WAITING -> GRANTED`. True if it left; false if the
    /// grant won, and the caller now owns the lock.
    #[inline]
    fn withdraw(&self, s: usize) -> bool {
        let flag = &self.flags[s];
        // Relaxed on success: withdrawing transfers nothing. Acquire on
        // failure: the flag is GRANTED (only the holder changes a WAITING
        // flag), pairing with its Release CAS.
        match flag.compare_exchange(WAITING, UNCLAIMED, Ordering::Relaxed, Ordering::Acquire) {
            Ok(_) => true,
            Err(_) => {
                // Relaxed: the flag carries no data for the next claimer.
                flag.store(UNCLAIMED, Ordering::Relaxed);
                false
            }
        }
    }

    /// A waiter of slot `s` unwinds without the lock: if it holds a claim,
    /// it withdraws it, or, if the grant won, owns the lock and releases it
    /// (no waiting, no user code).
    #[cold]
    fn unclaim_on_unwind(&self, s: usize, claimed: &Cell<bool>) {
        if !claimed.get() {
            return;
        }
        if self.withdraw(s) {
            crate::coverage::hit!("ron.unwind_left");
        } else {
            crate::coverage::hit!("ron.unwind_took_grant");
            self.release_from(s);
        }
    }

    /// Releases the lock: hands it to the next claimed slot along the route
    /// after the acquirer's slot, or frees it.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: PlaceToken) {
        token.release_from_slot::<S>(|from| self.release_from(from));
    }

    /// The release, scanning from slot `from` + 1.
    #[inline]
    fn release_from(&self, from: usize) {
        for i in 1..=S {
            let t = (from + i) % S;
            let f = &self.flags[t];
            // Relaxed peek, then a Release CAS that passes our critical
            // section to the claimer (its Acquire CAS from GRANTED).
            if f.load(Ordering::Relaxed) == WAITING
                && f.compare_exchange(WAITING, GRANTED, Ordering::Release, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
        }
        self.in_use.free();
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.in_use.is_held()
    }
}

crate::raw_impl::impl_default_debug! {
    impl [const S: usize, R: Relax] for Ron<S, R>, debug "Ron" { slots: S }
}

#[cfg(not(loom))]
// SAFETY: state table rows "free" -> "held" and "held, claimed" -> "granted",
// with the invariant under the table (`GRANTED` only by the holder, only over
// `WAITING`, `in_use` kept true). `lock` and `try_lock` return a guard only
// after the CAS `in_use` false -> true (Acquire, pairing with the Release
// store that freed it), or, as the one claimer of slot `s` (claiming is a CAS
// `UNCLAIMED -> WAITING`, so one thread per flag), an Acquire CAS `GRANTED
// -> UNCLAIMED` that consumes the grant, pairing with the holder's Release
// CAS `WAITING -> GRANTED`; by the invariant nobody takes `in_use` while a
// grant is pending and only the claimer consumes it. The slot is only a place to wait: a wrong,
// out-of-range or stale CPU hint changes where the unlock's scan starts,
// never who owns the lock. A claimer whose `Relax` panics withdraws with a
// CAS `WAITING -> UNCLAIMED` that races the grant CAS; if the grant won it
// owns the lock and releases it, so it unwinds owning nothing. `unlock` asks
// the CPU hint only for a fast-path guard (`PlaceToken::NONE`); if the hint
// panics it releases from slot 0 first, so it never unwinds holding the lock.
// A forgotten guard leaves the lock held; claims are flags in the lock, not
// nodes, so nothing dangles.
unsafe impl<const S: usize, R: Relax> lock_api::RawMutex for Ron<S, R> {
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
// SAFETY: `unlock_fair` is `release`, which already hands the lock to the
// next claimed slot; the `RawMutex` argument above covers it.
unsafe impl<const S: usize, R: Relax> lock_api::RawMutexFair for Ron<S, R> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }
}

#[cfg(feature = "std")]
crate::timed::impl_raw_mutex_timed! {
    impl [const S: usize, R: Relax] for Ron<S, R>
}
