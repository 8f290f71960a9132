//! Loom models of the RON family's handoff protocols.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p ron-core --release --test loom`.
//!
//! Every model checks mutual exclusion through a `loom::cell::UnsafeCell`
//! (loom reports two unsynchronized accesses as a causality violation) and
//! the final count. Slot choice is adversarial: two threads on one slot, a
//! thread that "migrates" (unlocks with a token naming another slot), a
//! handoff racing a fresh arrival, a `try_lock` racing an unlock.
//! Two threads with one critical section each are explored exhaustively
//! (the pooled plock core's `try_lock_races_unlock` within
//! [`PREEMPTIONS_TRY_POOLED`] preemptions), two rounds each with
//! [`PREEMPTIONS_2R`] preemptions; three-thread models are bounded to
//! [`PREEMPTIONS_3`] preemptions.
#![cfg(loom)]

mod common;

use common::{ModelLock, Shared};
use loom::thread;
use ron_core::{
    NxtRon, NxtRonInline, PlaceToken, Ron, RonInline, RonPlock, RonPlockInline, RonRaw, RonTicket,
    RonTicketInline,
};

/// Preemption bound of the three-thread models.
const PREEMPTIONS_3: usize = 1;
/// Preemption bound of `try_lock_races_unlock` for the pooled plock core
/// (exhaustive for the other locks).
const PREEMPTIONS_TRY_POOLED: usize = 7;
/// Preemption bound of the two-thread, two-round models.
const PREEMPTIONS_2R: usize = 2;

/// Lock waiting in `slot`, bump, unlock with a token naming `unlock_as` (a
/// migrated thread) or the real token.
fn critical<L: ModelLock<Token = PlaceToken>>(
    s: &Shared<L>,
    slot: usize,
    unlock_as: Option<usize>,
) {
    let t = s.lock.lock_in(slot);
    // Any token slot is safe by contract.
    s.bump_and_release(unlock_as.map_or(t, PlaceToken::at));
}

/// Two threads, each `rounds` critical sections in its slot: exhaustive for
/// one round, [`PREEMPTIONS_2R`] preemptions for more (a waiter coming back
/// while its previous handover is still being taken).
fn two_threads<L: ModelLock<Token = PlaceToken>>(slots: [usize; 2], migrate: bool, rounds: usize) {
    let mut b = loom::model::Builder::new();
    if rounds > 1 {
        b.preemption_bound = Some(PREEMPTIONS_2R);
    }
    b.max_branches = 50_000;
    b.check(move || {
        let s = Shared::<L>::new();
        let s2 = s.clone();
        let h = thread::spawn(move || {
            for _ in 0..rounds {
                critical(&s2, slots[1], migrate.then_some(slots[1] + 1));
            }
        });
        for _ in 0..rounds {
            critical(&s, slots[0], None);
        }
        h.join().unwrap();
        assert_eq!(s.total(), 2 * rounds);
        assert!(s.lock.try_lock().is_some(), "lock left held");
    });
}

/// Three threads: a holder handing off while a waiter of its slot and a
/// fresh arrival in another slot race (bounded preemptions).
fn three_threads<L: ModelLock<Token = PlaceToken>>(slots: [usize; 3]) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(PREEMPTIONS_3);
    b.max_branches = 50_000;
    b.check(move || {
        let s = Shared::<L>::new();
        let hs: Vec<_> = [slots[1], slots[2]]
            .into_iter()
            .map(|slot| {
                let s = s.clone();
                thread::spawn(move || critical(&s, slot, None))
            })
            .collect();
        critical(&s, slots[0], None);
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(s.total(), 3);
        assert!(s.lock.try_lock().is_some(), "lock left held");
    });
}

macro_rules! models {
    ($name:ident, $one:ty, $two:ty) => {
        models!($name, $one, $two, None);
    };
    ($name:ident, $one:ty, $two:ty, $try_lock_preemptions:expr) => {
        mod $name {
            use super::*;

            #[test]
            fn two_threads_one_slot() {
                two_threads::<$one>([0, 0], false, 1);
            }
            #[test]
            fn two_threads_two_slots() {
                two_threads::<$two>([0, 1], false, 1);
            }
            #[test]
            fn two_threads_same_slot_of_two() {
                two_threads::<$two>([1, 1], false, 1);
            }
            #[test]
            fn two_rounds_two_slots() {
                two_threads::<$two>([0, 1], false, 2);
            }
            #[test]
            fn two_rounds_one_slot() {
                two_threads::<$one>([0, 0], false, 2);
            }
            #[test]
            fn migrating_unlock() {
                two_threads::<$two>([0, 1], true, 1);
            }
            #[test]
            fn try_lock_races_unlock() {
                common::try_lock_races_unlock_within::<$two>($try_lock_preemptions);
            }
            #[test]
            fn handoff_races_fresh_arrival() {
                three_threads::<$two>([0, 0, 1]);
            }
            #[test]
            fn three_threads_one_slot() {
                three_threads::<$one>([0, 0, 0]);
            }
        }
    };
}

models!(ron_alg1, Ron<1>, Ron<2>);
models!(ron_plock, RonPlockInline<1>, RonPlockInline<2>);
models!(nxt_ron, NxtRonInline<1>, NxtRonInline<2>);
models!(ron_ticket, RonTicketInline<1>, RonTicketInline<2>);
// The pooled plock core's waiters poll `in_use`, which the holder also
// writes (its kept-reference bit): exhaustively, `try_lock_races_unlock`
// takes minutes for each.
models!(
    ron_plock_pooled,
    RonPlock,
    RonPlock,
    Some(PREEMPTIONS_TRY_POOLED)
);
models!(nxt_ron_pooled, NxtRon, NxtRon, Some(PREEMPTIONS_TRY_POOLED));
models!(ron_ticket_pooled, RonTicket, RonTicket);
models!(ron_inline, RonInline<1>, RonInline<2>);
models!(ron_raw, RonRaw, RonRaw);
