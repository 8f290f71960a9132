//! Loom models of `RonPark`'s park / unpark races.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p ron-core --release --test loom_ron_park`.
//!
//! Under loom the spin budget is one look (so waiters park) and the futex
//! is a poll of the slot's epoch with a loom yield per look: a lost
//! wake-up shows up as a waiter that polls forever, which loom fails on its
//! branch limit.
//!
//! * `release_races_park`: a release racing a waiter between its last look
//!   at the lock word and its sleep, in one slot and in two. The wake-up is
//!   never lost; the models count waiters that slept (`ron_park.sleeps`)
//!   and releases that woke one (`ron_park.wakes`).
//! * `timed_leaver_passes_on`: a holder, a sleeper in slot 0 and a timed
//!   waiter in slot 1 whose deadline has passed. The holder's release picks
//!   slot 1 first (the route after the holder's slot 0); if the timed
//!   waiter has left by then, that wake-up would go to nobody, so the
//!   leaver passes it on (`ron_park.passes_on`, counted): the sleeper in
//!   slot 0 always wakes.
//!
//! * `two_sleepers`: a holder and two waiters; a release wakes only when
//!   no wake-up is in flight (`WAKING`), and every unpark clears it, so the
//!   second sleeper is woken by a later release: nobody stays asleep.
//!
//! * `arrival_passes_sleeper`: the holder releases and at once takes the
//!   lock again while a waiter sleeps or is being woken: the fast path
//!   takes a free lock past registered sleepers
//!   (`ron_park.fast_past_sleepers`) and the woken waiter looks at the word
//!   while still registered (`ron_park.woken_sees_free`), both counted.
//!   Under loom `HUNGER_AFTER` is zero, so a woken waiter that loses the
//!   lock starves: the holder's next release hands the lock over without
//!   freeing it (`ron_park.handed_over`), or the starving waiter takes it
//!   free (`ron_park.hungry_takes`), both counted. Weakening the hand-over
//!   RMW's Release makes this model fail (a race on the cell).
//!
//! Every model checks mutual exclusion through a `loom::cell::UnsafeCell`,
//! the final count, and that the lock is free at the end.
#![cfg(loom)]

mod common;

use std::time::{Duration, Instant};

use common::Shared;
use loom::thread;
use ron_core::timed::Deadline;
use ron_core::{RonPark, coverage};

fn release_races_park<const S: usize>(slots: [usize; 2]) {
    let mut b = loom::model::Builder::new();
    b.max_branches = 50_000;
    b.check(move || {
        let s = Shared::<RonPark<S>>::new();
        let t = s.lock.acquire_in(slots[0]);
        let s2 = s.clone();
        let h = thread::spawn(move || {
            let t = s2.lock.acquire_in(slots[1]);
            s2.bump_and_release(t);
        });
        s.bump_and_release(t);
        h.join().unwrap();
        assert_eq!(s.total(), 2);
        assert!(!s.lock.is_held(), "lock left held");
    });
}

fn timed_leaver_passes_on() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.max_branches = 50_000;
    b.check(|| {
        let s = Shared::<RonPark<2>>::new();
        let t = s.lock.acquire_in(0);
        let sleeper = {
            let s = s.clone();
            thread::spawn(move || {
                let t = s.lock.acquire_in(0);
                s.bump_and_release(t);
            })
        };
        let leaver = {
            let s = s.clone();
            thread::spawn(move || {
                let past = Deadline::at(Instant::now() - Duration::from_secs(1));
                match s.lock.try_acquire_in_until(1, past) {
                    Some(t) => {
                        s.bump_and_release(t);
                        1
                    }
                    None => 0,
                }
            })
        };
        s.bump_and_release(t);
        sleeper.join().unwrap();
        let won = leaver.join().unwrap();
        assert_eq!(s.total(), 2 + won);
        assert!(!s.lock.is_held(), "lock left held");
    });
}

/// A holder and two waiters in slots 0 and 1: at most one wake-up is in
/// flight (`WAKING`), so the second sleeper is woken only after the first
/// woken thread unparked; neither may be left asleep.
fn two_sleepers() {
    let mut b = loom::model::Builder::new();
    // Bound 1: the release's marked-word loop and the waiters' marks put
    // every waiter's and release's steps on the lock word, and bound 2
    // took 260 s here (8.8 million sleeps); bound 1 still reaches both
    // sleepers asleep with one wake-up in flight.
    b.preemption_bound = Some(1);
    b.max_branches = 50_000;
    b.check(|| {
        let s = Shared::<RonPark<2>>::new();
        let t = s.lock.acquire_in(0);
        let hs: Vec<_> = [0, 1]
            .into_iter()
            .map(|slot| {
                let s = s.clone();
                thread::spawn(move || {
                    let t = s.lock.acquire_in(slot);
                    s.bump_and_release(t);
                })
            })
            .collect();
        s.bump_and_release(t);
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(s.total(), 3);
        assert!(!s.lock.is_held(), "lock left held");
    });
}

/// A holder, and a waiter in slot 0 that may park; the holder releases
/// and takes the lock again at once. The second acquisition may take the
/// free lock by the fast path while the waiter is still registered
/// (`ron_park.fast_past_sleepers`), and the woken waiter looks at the word
/// while still registered before it competes (`ron_park.woken_sees_free`):
/// neither may break exclusion or leave the waiter asleep. A woken waiter
/// that loses starves and gets the lock handed over by the holder's next
/// release (`ron_park.handed_over`) or takes it free
/// (`ron_park.hungry_takes`); four preemptions reach the hand-over.
fn arrival_passes_sleeper() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(4);
    b.max_branches = 50_000;
    b.check(|| {
        let s = Shared::<RonPark<1>>::new();
        let t = s.lock.acquire_in(0);
        let waiter = {
            let s = s.clone();
            thread::spawn(move || {
                let t = s.lock.acquire_in(0);
                s.bump_and_release(t);
            })
        };
        s.bump_and_release(t);
        let t = s.lock.acquire_in(0);
        s.bump_and_release(t);
        waiter.join().unwrap();
        assert_eq!(s.total(), 3);
        assert!(!s.lock.is_held(), "lock left held");
    });
}

#[test]
fn park_unpark_races() {
    // One test function: the path counters are process-wide, so the models
    // run one after another and each reads its own counts.
    type Model = (&'static str, fn(), &'static [&'static str]);
    let models: [Model; 6] = [
        (
            "release races park, one slot",
            || release_races_park::<1>([0, 0]),
            &["ron_park.sleeps", "ron_park.wakes"],
        ),
        (
            "release races park, slots [0, 1]",
            || release_races_park::<2>([0, 1]),
            &["ron_park.sleeps", "ron_park.wakes"],
        ),
        (
            "release races park, slots [1, 0]",
            || release_races_park::<2>([1, 0]),
            &["ron_park.sleeps", "ron_park.wakes"],
        ),
        (
            "two sleepers, one wake-up in flight",
            two_sleepers,
            &["ron_park.sleeps", "ron_park.wakes"],
        ),
        (
            "timed leaver passes on",
            timed_leaver_passes_on,
            &["ron_park.sleeps", "ron_park.wakes", "ron_park.passes_on"],
        ),
        (
            "an arrival passes a sleeper",
            arrival_passes_sleeper,
            &[
                "ron_park.sleeps",
                "ron_park.wakes",
                "ron_park.fast_past_sleepers",
                "ron_park.woken_sees_free",
                "ron_park.handed_over",
                "ron_park.hungry_takes",
            ],
        ),
    ];
    for (name, run, paths) in models {
        coverage::reset();
        run();
        for &p in paths {
            let n = coverage::count(p);
            println!("{name}: {p} {n}");
            assert!(n > 0, "{name}: path {p} never reached");
        }
    }
}
