//! Harness tests: metrics math, the registry, a tiny run of every lock,
//! stable JSON field names. No timed assertions.

use std::time::Duration;

use ron_bench::grid::{Grid, LoopWorkload};
use ron_bench::metrics::{cv, fairness_factor};
use ron_bench::pin::Pinning;
use ron_bench::registry::{self, DEFAULT_LOCKS};
use ron_bench::workload::LoopConfig;
use ron_bench::workload::micro::MicroConfig;
use ron_bench::{BenchError, BenchRow};

#[test]
fn fairness_factor_known_inputs() {
    assert_eq!(fairness_factor(&[]), 0.5);
    assert_eq!(fairness_factor(&[0, 0]), 0.5);
    assert_eq!(fairness_factor(&[7]), 0.5);
    assert_eq!(fairness_factor(&[5, 5, 5, 5]), 0.5);
    assert_eq!(fairness_factor(&[10, 0]), 1.0);
    assert!((fairness_factor(&[3, 1]) - 0.75).abs() < 1e-12);
    // Odd count: the middle thread counts half: (6 + 0.5 * 3) / 10.
    assert!((fairness_factor(&[1, 6, 3]) - 0.75).abs() < 1e-12);
}

#[test]
fn cv_known_inputs() {
    assert_eq!(cv(&[]), 0.0);
    assert_eq!(cv(&[0, 0, 0]), 0.0);
    assert_eq!(cv(&[4, 4]), 0.0);
    assert!((cv(&[0, 2]) - 1.0).abs() < 1e-12);
    // mean 2, population variance (1 + 0 + 1) / 3.
    assert!((cv(&[1, 2, 3]) - (2.0f64 / 3.0).sqrt() / 2.0).abs() < 1e-12);
}

#[test]
fn registry_resolves_every_documented_name() {
    for name in [
        "ron-raw",
        "ron",
        "ron-plock",
        "ron-ticket",
        "nxt-ron",
        "std",
        "parking_lot",
        "spin",
        "spin-ticket",
        "sh-ron",
        "mcs",
        "cna",
        "cbo-mcs",
        "fsl",
        "ticket",
        "ttas",
        "tas",
    ] {
        assert_eq!(registry::find(name).unwrap().name(), name);
    }
    // Baselines documented in the issue, present once ron-core has them.
    for name in DEFAULT_LOCKS {
        if registry::names().contains(name) {
            assert!(registry::find(name).is_ok());
        }
    }
    assert_eq!(registry::find("parking-lot").unwrap().name(), "parking_lot");
    // Type names and aliases, case-insensitively; output uses one spelling.
    for (given, canonical) in [
        ("RonRaw", "ron-raw"),
        ("ronraw", "ron-raw"),
        ("NxtRon", "nxt-ron"),
        ("NXTRON<16>", "nxt-ron"),
        ("Ron", "ron"),
        ("Ron<16>", "ron"),
        ("ron-alg1", "ron"),
        ("ShRon", "sh-ron"),
        ("CBoMcs", "cbo-mcs"),
        ("parking_lot::Mutex", "parking_lot"),
        ("std::sync::Mutex", "std"),
        ("spin::TicketMutex", "spin-ticket"),
        ("Ttas", "ttas"),
    ] {
        assert_eq!(registry::find(given).unwrap().name(), canonical, "{given}");
    }
    // Every lock is found by its own name and type name (no collisions).
    for e in registry::registry() {
        for n in [e.name(), e.info.type_name] {
            assert_eq!(registry::find(n).unwrap().name(), e.name(), "{n}");
        }
    }
    assert_eq!(
        registry::resolve("all").unwrap().len(),
        registry::registry().len()
    );
    let two = registry::resolve("ron, std,ron").unwrap();
    assert_eq!(
        two.iter().map(|e| e.name()).collect::<Vec<_>>(),
        ["ron", "std"]
    );
    assert!(registry::names().iter().all(|n| !n.is_empty()));
}

#[test]
fn registry_rejects_unknown_names() {
    let e = registry::resolve("ron,nope").unwrap_err();
    assert!(matches!(&e, BenchError::UnknownLock { name, .. } if name == "nope"));
    let msg = e.to_string();
    assert!(msg.contains("unknown lock `nope`") && msg.contains("ron"));
    assert!(!msg.contains('\n'));
    assert!(registry::resolve("").is_err());
}

#[test]
fn tiny_run_of_every_lock_is_sane() {
    for e in registry::registry() {
        let cfg = MicroConfig {
            base: LoopConfig {
                threads: 2,
                ncs_ns: 50.0,
                duration: Duration::from_millis(20),
                warmup: Duration::from_millis(2),
                pinning: Pinning::Route,
                seed: 3,
            },
            cs_lines: 2,
        };
        let s = (e.micro)(&cfg);
        assert!(s.exclusion_ok, "{}: lost updates", e.name());
        assert_eq!(s.per_thread.len(), 2);
        assert_eq!(s.total(), s.per_thread.iter().sum::<u64>());
        let ff = s.fairness_factor();
        assert!((0.5..=1.0).contains(&ff), "{}: ff {ff}", e.name());
        assert!(s.elapsed_s > 0.0);
        assert!(s.latency.p50_ns <= s.latency.p99_ns && s.latency.p99_ns <= s.latency.p999_ns);
    }
}

#[test]
fn config_ranges_are_checked() {
    let bad = |f: fn(&mut LoopConfig)| {
        let mut c = LoopConfig::default();
        f(&mut c);
        c.validate().unwrap_err().to_string()
    };
    assert!(bad(|c| c.threads = 0).contains("threads"));
    assert!(bad(|c| c.duration = Duration::ZERO).contains("duration"));
    assert!(bad(|c| c.duration = Duration::from_secs(100_000)).contains("duration"));
    assert!(bad(|c| c.ncs_ns = f64::NAN).contains("--ncs"));
}

fn tiny_grid(workload: LoopWorkload) -> Vec<BenchRow> {
    Grid {
        locks: registry::resolve("ron-raw,parking_lot,spin").unwrap(),
        threads: vec![1, 2],
        ncs_ns: vec![0.0],
        cs_lines: 1,
        duration: Duration::from_millis(20),
        warmup: Duration::from_millis(2),
        pinning: Pinning::Route,
        seed: 1,
        workload,
        repeat: 2,
    }
    .run(|_, _, _| {})
    .unwrap()
}

#[test]
fn grid_rows_and_ratios() {
    for w in [LoopWorkload::Micro, LoopWorkload::Kv] {
        let rows = tiny_grid(w);
        assert_eq!(rows.len(), 6);
        for r in &rows {
            assert_eq!(r.workload, w.name());
            assert!(r.exclusion_ok);
            assert_eq!(r.total, r.per_thread.iter().sum::<u64>());
            assert_eq!(r.per_thread.len(), r.threads);
            // A loaded machine may starve a whole window: no acquisition
            // means no fairness figure rather than a fake 0.5.
            match r.fairness_factor {
                Some(ff) => assert!(r.total > 0 && (0.5..=1.0).contains(&ff), "{ff}"),
                None => assert_eq!(r.total, 0),
            }
            assert_eq!(r.repeats, 2);
            assert!(r.mlocks_per_s_min <= r.mlocks_per_s && r.mlocks_per_s <= r.mlocks_per_s_max);
            if cfg!(unix) {
                // getrusage works on unix; the cost per lock exists exactly
                // when something was acquired.
                let cpu = r.cpu_per_wall.expect("getrusage on unix");
                assert!(cpu >= 0.0 && cpu.is_finite(), "{}: cpu {cpu}", r.lock);
                assert_eq!(r.cpu_ns_per_lock.is_some(), r.total > 0, "{}", r.lock);
            }
            // parking_lot and spin are peers: every row has a ratio.
            assert!(r.vs_best_peer.is_some() && r.vs_parking_lot.is_some());
        }
        let pl = rows.iter().find(|r| r.lock == "parking_lot").unwrap();
        assert!((pl.vs_parking_lot.unwrap() - 1.0).abs() < 1e-12 || pl.mlocks_per_s == 0.0);
    }
}

#[test]
fn json_field_names_are_stable() {
    let rows = tiny_grid(LoopWorkload::Micro);
    let v = serde_json::to_value(&rows).unwrap();
    let row = v.as_array().unwrap()[0].as_object().unwrap();
    for k in [
        "lock",
        "threads",
        "ncs_ns",
        "cs_lines",
        "duration_s",
        "mlocks_per_s",
        "fairness_factor",
        "cv",
        "p50_ns",
        "p99_ns",
        "handover_ns",
        "p999_ns",
        "per_thread",
        "workload",
        "vs_best_peer",
        "cpu_per_wall",
        "cpu_ns_per_lock",
        "repeats",
        "mlocks_per_s_sd",
    ] {
        assert!(row.contains_key(k), "missing field {k}");
    }
    // And the rows read back.
    let back: Vec<BenchRow> = serde_json::from_value(v).unwrap();
    assert_eq!(back, rows);
}
