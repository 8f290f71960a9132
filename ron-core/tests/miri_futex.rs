//! Miri workloads of the futex sleeps: `RonCondvar` and `RonPark` on Linux's
//! `futex(FUTEX_WAIT / FUTEX_WAKE)`, which Miri emulates (the loom models
//! replace the futex with a poll).
//!
//! Run under Miri (`.ci/miri`, or `MIRIFLAGS="-Zmiri-permissive-provenance
//! -Zmiri-many-seeds=0..8" cargo +nightly miri test -p ron-core --test
//! miri_futex -- --nocapture`). Miri reports a deadlock when every thread
//! sleeps on a futex, so a lost wake-up fails the run; its weak-memory
//! emulation lets loads read stale values wherever the orderings allow it,
//! and it checks the plain data for races. The workloads assert the paths
//! they are named after (`ron_core::coverage`): waiters that slept and
//! notifies or releases that woke one. Natively (no counters) they are
//! quick functional tests.
//!
//! * `condvar_ping_pong`: two threads hand a turn back and forth under a
//!   mutex, each waiting on the condvar for its turn; the notify comes
//!   after the unlock in even rounds and under the lock in odd ones.
//! * `condvar_notify_all`: three waiters block until one `notify_all`.
//! * `ron_park_contended`: three threads on a two-slot `RonPark` whose
//!   critical section yields, so waiters park and releases wake them.

#![cfg(not(loom))]

use std::cell::UnsafeCell;
use std::sync::Mutex as StdMutex;

use lock_api::Mutex;
use ron_core::{Condvar, RonPark, Ttas, coverage};

/// The path counters are process-wide: one workload at a time.
static SERIAL: StdMutex<()> = StdMutex::new(());

const ROUNDS: u32 = if cfg!(miri) { 12 } else { 1000 };
/// Yields inside `RonPark`'s critical section: enough for a waiter to spend
/// its spin budget (under Miri every `spin_loop` hint yields too) and park.
const YIELDS: usize = if cfg!(miri) { 300 } else { 1 };

/// The counts of the paths whose names start with `prefix`, printed, and
/// the `must` ones asserted non-zero where the counters are compiled in.
fn check_paths(name: &str, prefix: &str, must: &[&str]) {
    let counts: Vec<_> = coverage::snapshot()
        .filter(|(n, _)| n.starts_with(prefix))
        .collect();
    println!("{name}: {counts:?}");
    if coverage::ENABLED {
        for path in must {
            assert!(
                coverage::count(path) > 0,
                "{name}: {path} never reached ({counts:?})"
            );
        }
    }
}

/// Two threads take turns `ROUNDS` times each; a lost wake-up leaves both
/// asleep (Miri: deadlock).
fn ping_pong<R: lock_api::RawMutex + Send + Sync>(name: &str) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    coverage::reset();
    let turn = Mutex::<R, u32>::new(0);
    let cv = Condvar::<R>::new();
    std::thread::scope(|s| {
        for me in 0..2u32 {
            let (turn, cv) = (&turn, &cv);
            s.spawn(move || {
                for round in 0..ROUNDS {
                    let mut g = turn.lock();
                    cv.wait_while(&mut g, |t| *t % 2 != me);
                    *g += 1;
                    if round % 2 == 0 {
                        drop(g);
                        cv.notify_one();
                    } else {
                        cv.notify_one();
                        drop(g);
                    }
                }
            });
        }
    });
    assert_eq!(turn.into_inner(), 2 * ROUNDS);
    check_paths(
        name,
        "condvar.",
        &[
            "condvar.sleeps",
            "condvar.notify_wakes",
            "condvar.notify_skips",
        ],
    );
}

#[test]
fn condvar_ping_pong() {
    ping_pong::<Ttas>("condvar ping-pong on Ttas");
    ping_pong::<RonPark<2>>("condvar ping-pong on RonPark");
}

#[test]
fn condvar_notify_all() {
    const WAITERS: u32 = 3;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    coverage::reset();
    // (waiters registered, go, woken)
    let state = Mutex::<Ttas, (u32, bool, u32)>::new((0, false, 0));
    let (cv, all_in) = (Condvar::<Ttas>::new(), Condvar::<Ttas>::new());
    std::thread::scope(|s| {
        for _ in 0..WAITERS {
            let (state, cv, all_in) = (&state, &cv, &all_in);
            s.spawn(move || {
                let mut g = state.lock();
                g.0 += 1;
                if g.0 == WAITERS {
                    all_in.notify_one();
                }
                cv.wait_while(&mut g, |st| !st.1);
                g.2 += 1;
            });
        }
        let mut g = state.lock();
        all_in.wait_while(&mut g, |st| st.0 < WAITERS);
        g.1 = true;
        drop(g);
        cv.notify_all();
    });
    assert_eq!(state.into_inner(), (WAITERS, true, WAITERS));
    check_paths(
        "condvar notify_all",
        "condvar.",
        &["condvar.sleeps", "condvar.notify_wakes"],
    );
}

struct Counter(UnsafeCell<u64>);
// SAFETY: only touched with the lock held (Miri checks it).
unsafe impl Sync for Counter {}

#[test]
fn ron_park_contended() {
    const THREADS: usize = 3;
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    coverage::reset();
    let lock = RonPark::<2>::new();
    let count = Counter(UnsafeCell::new(0));
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let (lock, count) = (&lock, &count);
            s.spawn(move || {
                for _ in 0..ROUNDS / 2 {
                    let tok = lock.acquire_in(t);
                    // SAFETY: the lock is held.
                    let v = unsafe { *count.0.get() };
                    for _ in 0..YIELDS {
                        std::thread::yield_now();
                    }
                    // SAFETY: as above.
                    unsafe { *count.0.get() = v + 1 };
                    // SAFETY: held, with the token of this acquisition.
                    unsafe { lock.release(tok) };
                }
            });
        }
    });
    assert_eq!(
        count.0.into_inner(),
        (THREADS as u64) * u64::from(ROUNDS / 2)
    );
    assert!(!lock.is_held(), "lock left held");
    check_paths(
        "RonPark, 3 threads, 2 slots",
        "ron_park.",
        &["ron_park.sleeps", "ron_park.wakes"],
    );
}
