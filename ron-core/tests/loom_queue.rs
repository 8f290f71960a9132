//! Loom models of the handoffs of the queue, ticket, test-and-set, cohort
//! and compact locks (the RON slot locks are in `loom.rs`).
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p ron-core --release --test loom_queue`.
//!
//! Every model checks mutual exclusion through a `loom::cell::UnsafeCell`
//! counter (loom reports two unsynchronized accesses) and the final count,
//! and that the lock is free at the end. Hints are adversarial: two threads
//! in one row/group, threads of two groups, a holder racing fresh arrivals.
//! Two threads with one critical section each are explored exhaustively,
//! two rounds each with [`PREEMPTIONS_2R`] preemptions; three- and
//! four-thread models are bounded to [`PREEMPTIONS_3`] / [`PREEMPTIONS_4`]
//! preemptions (loom cannot finish them unbounded, docs/design.md, "Verification").
//!
//! What each covers:
//! * Tas, Ttas, Ticket: lock/unlock and try_lock racing an unlock.
//! * Mcs: the successor race (a waiter swapping the tail while the head
//!   CASes itself out, and the head waiting for its successor's link).
//! * Cna: the head moving an other-group waiter to the secondary queue, the
//!   flush in front of the main queue (threshold 1) and the splice of the
//!   secondary queue as the new main queue when the main queue empties.
//! * CBoMcs: the cohort's local handover (passed global lock) against the
//!   global release, with threads of one and of two groups.
//! * Fsl: the same for the two-level ticket lock.
//! * ShRon: claim/grant bits in a per-model wait table: two threads on one
//!   row (the second must not claim), two rows (grant), column claiming
//!   racing between two first contenders.
#![cfg(loom)]

mod common;

use common::{ModelLock, Shared};
use loom::sync::Arc;
use loom::thread;
use ron_core::sh_ron::ShTable;
use ron_core::{CBoMcs, Cna, Fsl, Mcs, ShRon, Tas, Ticket, Ttas};

/// Preemption bound of the two-thread, two-round models.
const PREEMPTIONS_2R: usize = 2;
/// Preemption bound of the three-thread models.
const PREEMPTIONS_3: usize = 1;
/// Preemption bound of the four-thread models.
const PREEMPTIONS_4: usize = 1;
/// Branch budget of one execution: spin loops yield, but a waiter may look
/// many times while a preempted holder runs its critical section.
const MAX_BRANCHES: usize = 50_000;

/// Two threads with hints `hints`, `rounds` critical sections each: one
/// round is explored exhaustively; more rounds (a waiter re-queueing behind
/// a handover) with at most [`PREEMPTIONS_2R`] preemptions.
fn two_threads<L: ModelLock>(hints: [usize; 2], rounds: usize) {
    let mut b = loom::model::Builder::new();
    if rounds > 1 {
        b.preemption_bound = Some(PREEMPTIONS_2R);
    }
    b.max_branches = MAX_BRANCHES;
    b.check(move || {
        let s = Shared::<L>::new();
        let s2 = s.clone();
        let h = thread::spawn(move || {
            for _ in 0..rounds {
                s2.critical(hints[1]);
            }
        });
        for _ in 0..rounds {
            s.critical(hints[0]);
        }
        h.join().unwrap();
        assert_eq!(s.total(), 2 * rounds);
        s.assert_free();
    });
}

/// `1 + extra.len()` threads, one critical section each (bounded).
fn many_threads<L: ModelLock>(main_hint: usize, extra: &'static [usize], bound: usize) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(bound);
    b.max_branches = MAX_BRANCHES;
    b.check(move || {
        let s = Shared::<L>::new();
        let hs: Vec<_> = extra
            .iter()
            .map(|&hint| {
                let s = s.clone();
                thread::spawn(move || s.critical(hint))
            })
            .collect();
        s.critical(main_hint);
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(s.total(), 1 + extra.len());
        s.assert_free();
    });
}

/// The holder (main thread) keeps the lock while three waiters of groups
/// 0, 1, 0 queue: the head may move the group-1 waiter to the secondary
/// queue, which is then flushed or spliced back (bounded).
fn cna_secondary_queue() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(PREEMPTIONS_4);
    b.max_branches = MAX_BRANCHES;
    b.check(|| {
        let s = Shared::<Cna<0, false>>::new();
        let t = s.lock.lock_in(0);
        let hs: Vec<_> = [0usize, 1, 0]
            .into_iter()
            .map(|g| {
                let s = s.clone();
                thread::spawn(move || s.critical(g))
            })
            .collect();
        s.bump_and_release(t);
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(s.total(), 4);
        s.assert_free();
    });
}

macro_rules! basic_models {
    ($name:ident, $t:ty) => {
        mod $name {
            use super::*;

            #[test]
            fn two_threads_one_slot() {
                two_threads::<$t>([0, 0], 1);
                two_threads::<$t>([0, 0], 2);
            }
            #[test]
            fn try_lock_races_unlock() {
                common::try_lock_races_unlock::<$t>();
            }
            #[test]
            fn three_threads_bounded() {
                many_threads::<$t>(0, &[0, 1], PREEMPTIONS_3);
            }
        }
    };
}

basic_models!(tas, Tas);
basic_models!(ttas, Ttas);
basic_models!(ticket, Ticket);
basic_models!(mcs, Mcs);

mod cna {
    use super::*;

    #[test]
    fn two_threads_two_groups() {
        two_threads::<Cna<0, false>>([0, 1], 1);
        two_threads::<Cna<0, false>>([0, 1], 2);
    }
    #[test]
    fn try_lock_races_unlock() {
        common::try_lock_races_unlock::<Cna<0, false>>();
    }
    #[test]
    fn three_threads_groups_0_1_0() {
        many_threads::<Cna<0, false>>(0, &[1, 0], PREEMPTIONS_3);
    }
    #[test]
    fn secondary_queue_move_flush_splice() {
        cna_secondary_queue();
    }
}

mod cbo_mcs {
    use super::*;

    #[test]
    fn two_threads_one_group() {
        two_threads::<CBoMcs<2>>([0, 0], 1);
        two_threads::<CBoMcs<2>>([0, 0], 2);
    }
    #[test]
    fn two_threads_two_groups() {
        two_threads::<CBoMcs<2>>([0, 1], 1);
        two_threads::<CBoMcs<2>>([0, 1], 2);
    }
    #[test]
    fn try_lock_races_unlock() {
        common::try_lock_races_unlock::<CBoMcs<2>>();
    }
    #[test]
    fn local_handover_races_other_group() {
        many_threads::<CBoMcs<2>>(0, &[0, 1], PREEMPTIONS_3);
    }
}

mod fsl {
    use super::*;

    #[test]
    fn two_threads_one_group() {
        two_threads::<Fsl<1, 2>>([0, 0], 1);
        two_threads::<Fsl<1, 2>>([0, 0], 2);
    }
    #[test]
    fn two_threads_two_groups() {
        two_threads::<Fsl<1, 2>>([0, 1], 1);
        two_threads::<Fsl<1, 2>>([0, 1], 2);
    }
    #[test]
    fn try_lock_races_unlock() {
        common::try_lock_races_unlock::<Fsl<1, 2>>();
    }
    #[test]
    fn local_handover_races_other_group() {
        many_threads::<Fsl<1, 2>>(0, &[0, 1], PREEMPTIONS_3);
    }
}

mod sh_ron {
    use super::*;

    #[test]
    fn two_threads_one_row() {
        two_threads::<ShRon>([0, 0], 1);
        two_threads::<ShRon>([0, 0], 2);
    }
    #[test]
    fn two_threads_two_rows() {
        two_threads::<ShRon>([0, 1], 1);
        two_threads::<ShRon>([0, 1], 2);
    }
    #[test]
    fn try_lock_races_unlock() {
        common::try_lock_races_unlock::<ShRon>();
    }
    #[test]
    fn grant_races_fresh_arrival_same_row() {
        many_threads::<ShRon>(0, &[1, 1], PREEMPTIONS_3);
    }
    #[test]
    fn three_threads_one_row() {
        many_threads::<ShRon>(0, &[0, 0], PREEMPTIONS_3);
    }

    /// Two threads create a lock each and claim its column while a third
    /// lock is dropped: live locks never share a column, a dropped lock's
    /// column is free again, and racing page allocations leak nothing.
    #[test]
    fn columns_claimed_and_dropped_concurrently() {
        let mut b = loom::model::Builder::new();
        b.max_branches = MAX_BRANCHES;
        b.check(|| {
            let table: &'static ShTable = Box::leak(Box::new(ShTable::new()));
            let early = ShRon::<ron_core::relax::Spin>::new_in(table);
            let _early_col = early.claim_column().expect("a column");
            let h = thread::spawn(move || {
                let l = ShRon::<ron_core::relax::Spin>::new_in(table);
                let c = l.claim_column().expect("a column");
                assert_eq!(l.claim_column(), Some(c), "a lock keeps its column");
                (l, c) // stays alive until the main thread drops it
            });
            drop(early); // gives `early_col` back while the other thread claims
            let mine = ShRon::<ron_core::relax::Spin>::new_in(table);
            let c = mine.claim_column().expect("a column");
            let (theirs, their_col) = h.join().unwrap();
            assert_ne!(c, their_col, "two live locks share a column");
            assert_eq!(table.claimed_columns(), 2);
            drop(theirs);
            drop(mine);
            assert_eq!(table.claimed_columns(), 0, "a column leaked");
        });
    }

    /// Two first contenders of one lock claim its column at once: both end
    /// up with the same column and the loser's spare goes back to the table.
    #[test]
    fn first_contenders_race_for_the_column() {
        let mut b = loom::model::Builder::new();
        b.max_branches = MAX_BRANCHES;
        b.check(|| {
            let table: &'static ShTable = Box::leak(Box::new(ShTable::new()));
            let l = Arc::new(ShRon::<ron_core::relax::Spin>::new_in(table));
            let l2 = l.clone();
            let h = thread::spawn(move || l2.claim_column());
            let mine = l.claim_column();
            let theirs = h.join().unwrap();
            assert!(mine.is_some());
            assert_eq!(mine, theirs, "one lock, two columns");
            assert_eq!(table.claimed_columns(), 1, "the loser's column leaked");
            drop(l);
            assert_eq!(table.claimed_columns(), 0);
        });
    }
}
