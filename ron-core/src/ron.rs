//! [`Ron`]: RON's Algorithm 1 (one flag per slot) with a claim step.
//!
//! Each slot has one flag. A waiter *claims* its slot's flag (`FREE ->
//! WAITING`) and spins on it; the holder, at unlock, walks the slots along
//! the route from its own slot + 1 and turns the first `WAITING` flag into
//! `GRANTED`, keeping the lock word set, so the lock passes straight to that
//! waiter. A waiter that finds its slot already claimed (two threads on one
//! slot: more threads than slots, a shared CPU, a wrong hint) does not touch
//! the flag: it waits on the lock word alone, TTAS-style. Without that claim
//! step two threads would spin on one flag and a single grant would release
//! both (the published code's bug, DESIGN 3.3.1).
//!
//! ## States
//! | `in_use` | flag of slot `s` | meaning |
//! |---|---|---|
//! | false | `FREE` | unlocked, nobody claimed `s` |
//! | false | `WAITING` | unlocked; `s`'s claimer is about to see it and CAS `in_use` |
//! | true | `FREE` | held; `s` unclaimed |
//! | true | `WAITING` | held; `s`'s claimer spins on its flag |
//! | true | `GRANTED` | the holder handed over to `s`'s claimer, who now owns the lock (and resets the flag to `FREE`) |
//!
//! `GRANTED` is only written by the holder, only over `WAITING`, and only
//! while `in_use` stays true; its one claimer is the only thread that can
//! consume it. `in_use` is only taken by CAS from false. A claimer whose
//! relax policy panics CASes its flag `WAITING -> FREE`; if that fails the
//! flag is `GRANTED`, and it consumes the grant and releases the lock.
//!
//! ## Guarantees
//! * Mutual exclusion, under any schedule and any hint.
//! * Progress (deadlock-freedom).
//! * Bounded waiting for claimers: once a thread has claimed its slot, at
//!   most `S - 1` other acquisitions (one per other slot) plus one racing
//!   fast-path acquisition happen before its own. Threads that could not
//!   claim (slot already taken) have no bound.
//! * Panics: a waiter whose `Relax` policy panics gives its claim back, or,
//!   if its slot was granted meanwhile, takes the lock and hands it on, then
//!   unwinds; an unlock whose CPU hint panics releases the lock (scanning
//!   from slot 0) before it unwinds. The lock stays usable
//!   (`docs/panic-safety.md`).
//!
//! ## Cost
//! Bytes per lock: `128 * (S + 1)` (the lock word and every flag on their
//! own 128-byte pair of cache lines). Uncontended lock + unlock: one CAS and
//! one scan of `S` flags (O(S) loads) plus a release store.
//!
//! ```
//! use ron_core::Ron;
//! let m: lock_api::Mutex<Ron<8>, u32> = lock_api::Mutex::new(0);
//! *m.lock() += 1;
//! assert_eq!(*m.lock(), 1);
//! ```

use core::marker::PhantomData;

use crossbeam_utils::CachePadded;

use crate::in_use::InUse;
use crate::relax::{DefaultRelax, Relax};
use crate::slots::SlotToken;
use crate::sync::{AtomicU8, Ordering};
use crate::unwind::OnUnwind;

const FREE: u8 = 0;
const WAITING: u8 = 1;
const GRANTED: u8 = 2;

/// RON Algorithm 1 with a claim step: `S` slots of one flag each; see the
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
                flags: crate::sync::array_init!(S, CachePadded::new(AtomicU8::new(FREE))),
                _relax: PhantomData,
            }
        }
    }

    crate::in_use::slotted_entry_points!();

    #[inline]
    fn try_fast(&self) -> bool {
        self.in_use.try_take()
    }

    #[cold]
    fn acquire_slow(&self, s: usize, on_wait: impl FnOnce()) -> SlotToken {
        let flag = &self.flags[s];
        // User code before claiming: a panic here leaves nothing behind.
        let mut relax = R::default();
        // Relaxed: claiming transfers no data; it only makes this thread the
        // one consumer of the slot's grant.
        let claimed = flag
            .compare_exchange(FREE, WAITING, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok();
        // While claimed, a panic in `relax` (or `on_wait`) unwinds through
        // this guard: it gives the flag back, or, if the holder granted it
        // meanwhile, owns the lock and hands it on.
        let claim = OnUnwind::new(|| {
            if claimed {
                self.unclaim_on_unwind(s);
            }
        });
        on_wait();
        loop {
            // Acquire: pairs with the holder's Release CAS WAITING -> GRANTED.
            if claimed && flag.load(Ordering::Acquire) == GRANTED {
                // Relaxed: the flag carries no data for the next claimer.
                flag.store(FREE, Ordering::Relaxed);
                claim.disarm();
                return SlotToken::at(s);
            }
            if self.in_use.take_if_free() {
                if claimed {
                    // No grant can be pending: a grant keeps `in_use` true
                    // until its claimer consumes it, and we just found
                    // `in_use` false. So the flag is WAITING; give it back.
                    flag.store(FREE, Ordering::Relaxed); // as above
                }
                claim.disarm();
                return SlotToken::at(s);
            }
            relax.relax();
        }
    }

    /// The claimer of slot `s` unwinds without the lock: one CAS `WAITING
    /// -> FREE` against the holder's CAS `WAITING -> GRANTED`; if the grant
    /// won, the claimer owns the lock and releases it (no waiting, no user
    /// code).
    #[cold]
    fn unclaim_on_unwind(&self, s: usize) {
        let flag = &self.flags[s];
        // Acquire on failure: the flag is then GRANTED, and we take the
        // lock the holder's Release CAS handed over. Relaxed on success: the
        // flag carries no data.
        match flag.compare_exchange(WAITING, FREE, Ordering::Relaxed, Ordering::Acquire) {
            Ok(_) => {
                crate::coverage::hit!("ron.unwind_left");
            }
            Err(_) => {
                crate::coverage::hit!("ron.unwind_took_grant");
                flag.store(FREE, Ordering::Relaxed); // as in `acquire_slow`
                self.release_from(s);
            }
        }
    }

    /// Releases the lock: hands it to the next claimed slot along the route
    /// after the acquirer's slot, or frees it.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: SlotToken) {
        token.release_from_slot::<S>(|from| self.release_from(from));
    }

    /// The release, scanning from slot `from` + 1.
    #[inline]
    fn release_from(&self, from: usize) {
        for i in 1..=S {
            let t = (from + i) % S;
            let f = &self.flags[t];
            // Relaxed peek, then a Release CAS that passes our critical
            // section to the claimer (its Acquire load of GRANTED).
            if f.load(Ordering::Relaxed) == WAITING
                && f.compare_exchange(WAITING, GRANTED, Ordering::Release, Ordering::Relaxed)
                    .is_ok()
            {
                return;
            }
        }
        self.in_use.free();
    }

    /// Same as [`release`](Self::release): every unlock already hands over.
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
        self.in_use.is_held()
    }
}

crate::raw_impl::impl_raw_mutex! {
    impl [const S: usize, R: Relax] for Ron<S, R>, guard = SlotToken, debug "Ron" { slots: S }, fair
}
