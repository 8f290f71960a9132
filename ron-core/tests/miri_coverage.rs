//! Miri workloads of `NxtRon`, `RonPlock` (inline and pooled) and `ShRon`
//! that go through their handover paths, with the path counts
//! (`ron_core::coverage`).
//!
//! Run under Miri (`.ci/miri 2`, or `MIRIFLAGS="-Zmiri-permissive-provenance
//! -Zmiri-ignore-leaks -Zmiri-many-seeds=0..4" cargo +nightly miri test -p
//! ron-core --test miri_coverage -- --nocapture`). 4 threads x 6
//! acquisitions, a critical section that yields 8 times (so the others
//! arrive and wait while it is held), half of them through the CPU hint
//! (`acquire`) and half at a chosen slot (`acquire_in`, two threads per
//! slot). Miri checks the plain counter for data races and the handover
//! for undefined behaviour; the test asserts that waiters registered, were
//! granted the lock and took the grant. Natively (no counters) it is a
//! quick mutual-exclusion test.

#![cfg(not(loom))]

use std::cell::UnsafeCell;
use std::sync::Mutex;

use ron_core::{NxtRon, NxtRonInline, PlaceToken, RonPlock, RonPlockInline, ShRon, coverage};

const THREADS: usize = 4;
const ROUNDS: usize = 6;
const YIELDS: usize = 8;

/// The path counters are process-wide: one workload at a time.
static SERIAL: Mutex<()> = Mutex::new(());

struct Counter(UnsafeCell<u64>);
// SAFETY: only touched with the lock held (Miri checks it).
unsafe impl Sync for Counter {}

/// Runs the workload over `acquire` / `acquire_in` / `release` and asserts
/// the `must` paths were reached (when the counters are compiled in), then
/// runs `after` (still one workload at a time).
fn workload<L: Sync>(
    name: &str,
    lock: &L,
    acquire: fn(&L) -> PlaceToken,
    acquire_in: fn(&L, usize) -> PlaceToken,
    release: unsafe fn(&L, PlaceToken),
    must: &[&str],
    after: fn(&L),
) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    coverage::reset();
    let count = Counter(UnsafeCell::new(0));
    std::thread::scope(|s| {
        for t in 0..THREADS {
            let count = &count;
            s.spawn(move || {
                for r in 0..ROUNDS {
                    let tok = if (t + r) % 2 == 0 {
                        acquire(lock)
                    } else {
                        acquire_in(lock, t / 2)
                    };
                    // SAFETY: the lock is held.
                    let v = unsafe { *count.0.get() };
                    for _ in 0..YIELDS {
                        std::thread::yield_now();
                    }
                    // SAFETY: as above.
                    unsafe { *count.0.get() = v + 1 };
                    // SAFETY: held, with the token of this acquisition.
                    unsafe { release(lock, tok) };
                }
            });
        }
    });
    assert_eq!(count.0.into_inner(), (THREADS * ROUNDS) as u64);
    let prefix = &name[..=name.find('.').unwrap_or(0)];
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
    after(lock);
}

macro_rules! plock_workload {
    ($f:ident, $t:ty, $p:literal) => {
        #[test]
        fn $f() {
            let l = <$t>::new();
            workload(
                concat!($p, "workload"),
                &l,
                |l| l.acquire(),
                |l, s| l.acquire_in(s),
                // SAFETY: forwarded contract (the workload holds the lock).
                |l, t| unsafe { l.release(t) },
                &[
                    concat!($p, "registered"),
                    concat!($p, "granted"),
                    concat!($p, "grant_taken"),
                ],
                |_| (),
            );
        }
    };
}

plock_workload!(nxt_ron, NxtRonInline<4>, "nxt_ron.");
plock_workload!(ron_plock, RonPlockInline<4>, "ron_plock.");

/// The pooled locks: their slots are a block of the process-wide pool,
/// and every grant brings a block reference that the grantee banks in its
/// slot (`plock`, "Where the slots live"). Besides the handover paths the
/// workload must bank, and once the lock is idle its block must be back in
/// the pool (a bank left uncollected keeps it attached; Miri reports a
/// reference dropped twice as the pool's debug assertion or a later
/// wrong claim). No other workload here uses that pool.
macro_rules! pooled_workload {
    ($f:ident, $t:ty, $p:literal) => {
        #[test]
        fn $f() {
            let l = <$t>::new();
            workload(
                concat!($p, "pooled_workload"),
                &l,
                |l| l.acquire(),
                |l, s| l.acquire_in(s),
                // SAFETY: forwarded contract (the workload holds the lock).
                |l, t| unsafe { l.release(t) },
                &[
                    concat!($p, "registered"),
                    concat!($p, "granted"),
                    concat!($p, "grant_taken"),
                    concat!($p, "banked"),
                ],
                |l| {
                    assert!(!l.is_held(), "lock left held");
                    assert_eq!(
                        ron_core::ron_raw::pool::global().in_use(),
                        0,
                        "a block not returned to the pool"
                    );
                },
            );
        }
    };
}

pooled_workload!(nxt_ron_pooled, NxtRon, "nxt_ron.");
pooled_workload!(ron_plock_pooled, RonPlock, "ron_plock.");

#[test]
fn sh_ron() {
    let l = ShRon::<ron_core::relax::Spin>::new();
    workload(
        "sh_ron.workload",
        &l,
        |l| l.acquire(),
        |l, s| l.acquire_in(s),
        // SAFETY: forwarded contract (the workload holds the lock).
        |l, t| unsafe { l.release(t) },
        &[
            "sh_ron.column_claimed",
            "sh_ron.row_claimed",
            "sh_ron.granted",
            "sh_ron.grant_taken",
        ],
        |_| (),
    );
    drop(l);
    assert!(coverage::count("sh_ron.column_freed") > 0 || !coverage::ENABLED);
}
