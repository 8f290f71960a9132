//! A Miri workload for `RonRaw` that reaches every path of its protocol.
//!
//! `.ci/miri` runs it under one scheduler seed (`.ci/miri 2` or more: two);
//! natively it runs in well under a second (`cargo test -p ron-core
//! --release --test miri_ron_raw`), where it checks only exclusion and
//! totals.
//!
//! Four threads share one lock; every critical section yields many times,
//! so that under Miri's scheduler the others wait long enough to register,
//! run out of their registered spins and start new rounds, while releases
//! hand the lock over and handovers age past `PATIENCE_NS` (Miri's virtual
//! clock) and get taken over by waiters of other slots. Two threads take
//! their slot from the CPU hint (`acquire`), two name one shared slot
//! (`acquire_in`). A takeover is the one path on which the new owner has no
//! synchronisation with the old one but the lock word, so this workload is
//! what lets Miri's data-race detector see a weakened `HANDED` release or
//! takeover acquire: the non-atomic counter then races.
//!
//! Under Miri (where `ron_core::coverage` counts) the test also asserts
//! that the fast path, registration, handover, a handover taken by its
//! slot, a release to `FREE` and the pool's claim, use and return of a
//! block were each reached (running the workload up to [`RUNS`] times), and
//! prints the counts, with those of a takeover, a round restart and
//! parking. Since waiters park when their CPU looks shared (under Miri a
//! yield is slow), some seeds reach no takeover: the seeds that do still
//! race the counter through it, and `loom_ron_raw` requires the path.
#![cfg(not(loom))]

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering};

use ron_core::{RonRaw, coverage};

/// Threads sharing the lock.
const THREADS: usize = 4;
/// Critical sections per thread.
const ITERS: usize = if cfg!(miri) { 12 } else { 50 };
/// Yields after every other critical section.
const OUT_YIELDS: usize = if cfg!(miri) { 20 } else { 2 };
/// Yields inside each critical section.
const CS_YIELDS: usize = if cfg!(miri) { 100 } else { 20 };

/// A counter whose updates are deliberately non-atomic.
struct Counter {
    value: UnsafeCell<u64>,
    inside: AtomicUsize,
}

// SAFETY: `value` is only accessed while the lock is held, and read at the
// end after every thread was joined.
unsafe impl Sync for Counter {}

/// The paths the workload must reach.
const PATHS: [&str; 9] = [
    "ron_raw.fast",
    "ron_raw.register",
    "ron_raw.handover",
    "ron_raw.take_own",
    "ron_raw.release_kept",
    "ron_raw.release_free",
    "ron_raw.pool_claim",
    "ron_raw.pool_use",
    "ron_raw.pool_return",
];

/// Paths counted and printed but not required: under Miri's scheduler a
/// yield is slow, so waiters often find their CPU shared and park instead
/// of registering, and a takeover (a stale handover) or a new round of a
/// registered wait is rare for some seeds. `loom_ron_raw` requires them
/// (`takeover`, `round_restart`, `park_watcher_wakes_sleeper`).
const REPORTED: [&str; 4] = [
    "ron_raw.takeover",
    "ron_raw.round_restart",
    "ron_raw.park_sleep",
    "ron_raw.park_wake",
];

/// Runs the workload until every path of [`PATHS`] was reached, at most
/// this many times: whether a waiter registers (and so takes its own
/// handover) or, its CPU looking shared, waits unregistered and parks
/// depends on the schedule, so one seed's run may miss a path another
/// reaches.
const RUNS: usize = 4;

#[test]
fn every_ron_raw_path() {
    coverage::reset();
    for run in 1..=RUNS {
        workload();
        let counts: Vec<_> = PATHS.iter().map(|&p| (p, coverage::count(p))).collect();
        let other: Vec<_> = REPORTED.iter().map(|&p| (p, coverage::count(p))).collect();
        eprintln!("miri_ron_raw, after run {run}: {counts:?}; not required: {other:?}");
        if !coverage::ENABLED || counts.iter().all(|&(_, n)| n > 0) {
            return;
        }
    }
    for p in PATHS {
        assert!(
            coverage::count(p) > 0,
            "path {p} never reached in {RUNS} runs"
        );
    }
}

/// Four threads on one lock, critical sections that yield, checked for
/// exclusion and a lost update.
fn workload() {
    let lock = RonRaw::new();
    let counter = Counter {
        value: UnsafeCell::new(0),
        inside: AtomicUsize::new(0),
    };
    // One uncontended round first (a strong CAS: Miri lets the fast path's
    // weak CAS fail spuriously, so the threads might never take it).
    let t = lock.try_acquire().expect("a new lock is free");
    // SAFETY: we hold the lock with `t`.
    unsafe { lock.release(t) };
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (lock, counter) = (&lock, &counter);
            s.spawn(move || {
                for i in 0..ITERS {
                    // Threads 0 and 1: slot from the hint; 2 and 3: slot 3,
                    // shared (and, every third time, the hint as well).
                    let token = if t < 2 || i % 3 == 0 {
                        lock.acquire()
                    } else {
                        lock.acquire_in(3)
                    };
                    // Relaxed: only "more than one thread inside" is checked.
                    let was = counter.inside.fetch_add(1, Ordering::Relaxed);
                    assert_eq!(was, 0, "two threads inside the critical section");
                    // SAFETY: the lock is held.
                    let v = unsafe { *counter.value.get() };
                    for _ in 0..CS_YIELDS {
                        std::thread::yield_now();
                    }
                    // SAFETY: as above.
                    unsafe { *counter.value.get() = v + 1 };
                    counter.inside.fetch_sub(1, Ordering::Relaxed); // as above
                    // SAFETY: we hold the lock, acquired with `token`.
                    unsafe { lock.release(token) };
                    // Every other time, work outside: the releaser does not
                    // come straight back for its own handover, so other
                    // threads get to take it over.
                    for _ in 0..OUT_YIELDS * ((t + i) % 2) {
                        std::thread::yield_now();
                    }
                }
            });
        }
    });
    // SAFETY: every thread was joined (scoped threads).
    assert_eq!(unsafe { *counter.value.get() }, (THREADS * ITERS) as u64);
    assert!(lock.try_acquire().is_some(), "lock left held");
}
