//! A Miri workload for `RonRaw` that reaches every path of its protocol.
//!
//! `.ci/miri` runs it under several scheduler seeds; natively it runs in
//! well under a second (`cargo test -p ron-core --release --test
//! miri_ron_raw`), where it checks only exclusion and totals.
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
//! slot, a takeover, a round restart, a release to `FREE` and the pool's
//! claim, use and return of a block were each reached, and prints the
//! counts.
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
const CS_YIELDS: usize = if cfg!(miri) { 200 } else { 20 };

/// A counter whose updates are deliberately non-atomic.
struct Counter {
    value: UnsafeCell<u64>,
    inside: AtomicUsize,
}

// SAFETY: `value` is only accessed while the lock is held, and read at the
// end after every thread was joined.
unsafe impl Sync for Counter {}

#[test]
fn every_ron_raw_path() {
    coverage::reset();
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

    let paths = [
        "ron_raw.fast",
        "ron_raw.register",
        "ron_raw.handover",
        "ron_raw.take_own",
        "ron_raw.takeover",
        "ron_raw.round_restart",
        "ron_raw.release_free",
        "ron_raw.pool_claim",
        "ron_raw.pool_use",
        "ron_raw.pool_return",
    ];
    let counts: Vec<_> = paths.iter().map(|&p| (p, coverage::count(p))).collect();
    eprintln!("miri_ron_raw: {counts:?}");
    if coverage::ENABLED {
        for (p, n) in counts {
            assert!(n > 0, "path {p} never reached");
        }
    }
}
