//! The many-locks workload: a tiny run of a few locks, the skip on memory,
//! the ratio to parking_lot. No timed assertions.

use std::time::Duration;

use ron_bench::grid::ManyLocksGrid;
use ron_bench::pin::Pinning;
use ron_bench::registry;
use ron_bench::workload::many_locks::ManyLocksConfig;

/// Resident memory is the process's: the tests of this file run one at a
/// time, so that one's allocations do not show in another's RSS (whether
/// it grows is checked by the CLI tests, in a fresh process: here the
/// allocator may reuse memory that an earlier test freed).
static ONE_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn serial() -> std::sync::MutexGuard<'static, ()> {
    ONE_AT_A_TIME
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn tiny() -> ManyLocksConfig {
    ManyLocksConfig {
        threads: 2,
        n_locks: 64,
        duration: Duration::from_millis(10),
        warmup: Duration::ZERO,
        pinning: Pinning::None,
        seed: 7,
        ..ManyLocksConfig::default()
    }
}

#[test]
fn every_lock_counts_every_operation() {
    let _one = serial();
    for e in registry::registry() {
        for n in [1, 3, 1000] {
            let cfg = ManyLocksConfig {
                n_locks: n,
                ..tiny()
            };
            let s = (e.many_locks)(&cfg).unwrap_or_else(|s| panic!("{}: {s:?}", e.name()));
            assert!(s.exclusion_ok, "{} lost updates at {n} locks", e.name());
            assert_eq!(s.per_thread.len(), 2);
            assert!(
                s.bytes_per_lock >= std::mem::size_of::<u64>(),
                "{}",
                e.name()
            );
        }
    }
}

#[test]
fn a_point_over_the_memory_bound_is_skipped_with_a_reason() {
    let _one = serial();
    let e = registry::find("ron-inline").unwrap();
    let cfg = ManyLocksConfig {
        n_locks: 1_000_000,
        max_lock_bytes: 1 << 20,
        ..tiny()
    };
    let sk = (e.many_locks)(&cfg).expect_err("2 GB of locks must be skipped");
    assert!(sk.bytes_per_lock > 1000);
    assert!(sk.reason.contains("1000000 locks"), "{}", sk.reason);
    let grid = ManyLocksGrid {
        locks: registry::resolve("ron-inline,parking_lot").unwrap(),
        threads: vec![1],
        n_locks: vec![2, 1_000_000],
        base: ManyLocksConfig {
            max_lock_bytes: 1 << 26,
            ..tiny()
        },
        repeat: 2,
    };
    let out = grid.run(|_, _, _| {}).unwrap();
    assert_eq!(out.rows.len(), 3);
    assert_eq!(out.skipped.len(), 1, "one note per skipped point");
    assert_eq!(out.skipped[0].lock, "ron-inline");
    for r in &out.rows {
        assert_eq!(r.repeats, 2);
        assert!(r.exclusion_ok);
        assert_eq!(r.lock_bytes, r.bytes_per_lock as u64 * r.n_locks as u64);
        assert!(r.vs_parking_lot.is_some(), "{r:?}");
    }
    let pl = out
        .rows
        .iter()
        .find(|r| r.lock == "parking_lot" && r.n_locks == 1_000_000);
    assert_eq!(pl.unwrap().vs_parking_lot, Some(1.0));
}

#[test]
fn bad_parameters_are_refused() {
    assert!(
        ManyLocksConfig {
            n_locks: 0,
            ..tiny()
        }
        .validate()
        .is_err()
    );
    assert!(
        ManyLocksConfig {
            threads: 0,
            ..tiny()
        }
        .validate()
        .is_err()
    );
    assert!(tiny().validate().is_ok());
}
