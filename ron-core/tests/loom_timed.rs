//! Loom models of timed acquisition (`RawMutexTimed`) in the locks whose
//! timed waiters register while they wait.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p ron-core --release --test loom_timed`.
//!
//! * `ron_abort_races_handover`: a holder releases while a waiter whose
//!   deadline has already passed withdraws its claim. Either the withdraw
//!   wins (the waiter leaves, the holder frees the lock) or the grant wins
//!   (the waiter owns the lock and must release it); never both, never a
//!   grant to a thread that left. Both outcomes are counted and must occur.
//!
//! Every model checks mutual exclusion through a `loom::cell::UnsafeCell`,
//! the final count, and that the lock is free at the end.
#![cfg(loom)]

mod common;

use std::time::{Duration, Instant};

use common::Shared;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicBool, Ordering};
use loom::thread;
use ron_core::Ron;
use ron_core::coverage;
use ron_core::timed::Deadline;

/// A holder in `slots[0]` and a timed waiter in `slots[1]` that gives up
/// after one look. Unsynchronised (`sync == false`): the deadline has
/// already passed and the holder releases whenever loom schedules it.
/// Synchronised: the waiter's give-up decision (between its look and its
/// withdraw) raises a flag that the holder waits for before it releases, so
/// the release races exactly the withdraw.
fn abort_races_handover<const S: usize>(slots: [usize; 2], sync: bool) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(3);
    b.check(move || {
        let s = Shared::<Ron<S>>::new();
        let t = s.lock.acquire_in(slots[0]);
        let looked = Arc::new(AtomicBool::new(false));
        let s2 = s.clone();
        let looked2 = looked.clone();
        let h = thread::spawn(move || {
            let r = if sync {
                s2.lock.try_acquire_in_while(slots[1], || {
                    looked2.store(true, Ordering::SeqCst);
                    false
                })
            } else {
                let past = Deadline::at(Instant::now() - Duration::from_secs(1));
                s2.lock.try_acquire_in_until(slots[1], past)
            };
            match r {
                Some(t) => {
                    s2.bump_and_release(t);
                    1
                }
                None => 0,
            }
        });
        if sync {
            while !looked.load(Ordering::SeqCst) {
                thread::yield_now();
            }
        }
        s.bump_and_release(t);
        let won = h.join().unwrap();
        assert_eq!(s.total(), 1 + won);
        assert!(!s.lock.is_held(), "lock left held");
        let t = s.lock.try_acquire().expect("lock left held");
        // SAFETY: just acquired.
        unsafe { s.lock.release(t) };
    });
}

#[test]
fn ron_abort_races_handover() {
    // One test function: the path counters are process-wide, so the models
    // run one after another and each reads its own deltas.
    for (name, run, both) in [
        (
            "Ron<1> [0, 0]",
            (|| abort_races_handover::<1>([0, 0], false)) as fn(),
            false,
        ),
        (
            "Ron<2> [0, 1]",
            || abort_races_handover::<2>([0, 1], false),
            false,
        ),
        (
            "Ron<1> [0, 0] synchronised",
            || abort_races_handover::<1>([0, 0], true),
            true,
        ),
        (
            "Ron<2> [0, 1] synchronised",
            || abort_races_handover::<2>([0, 1], true),
            true,
        ),
        (
            "Ron<2> [1, 1] synchronised",
            || abort_races_handover::<2>([1, 1], true),
            true,
        ),
    ] {
        coverage::reset();
        run();
        let withdraw = coverage::count("ron.timed_withdraw");
        let grant_won = coverage::count("ron.timed_grant_won");
        println!("{name}: withdraw {withdraw}, grant won {grant_won}");
        assert!(withdraw > 0, "{name}: the withdraw path was never reached");
        if both {
            assert!(
                grant_won > 0,
                "{name}: the grant-beats-withdraw path was never reached"
            );
        }
    }
}
