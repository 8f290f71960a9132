//! The two workloads after the papers: `kv-update` (the CNA paper's
//! update-only mix) and `ron-micro` (the RON paper's Algorithm 4) keep
//! mutual exclusion and report what they promise: the data time and the
//! waiting count only where they are measured, the waiting count between
//! 0 and the other threads.

use std::time::Duration;

use ron_bench::grid::{Grid, LoopWorkload};
use ron_bench::pin::Pinning;
use ron_bench::registry;
use ron_bench::workload::LoopConfig;

fn cfg(threads: usize) -> LoopConfig {
    LoopConfig {
        threads,
        ncs_ns: 50.0,
        duration: Duration::from_millis(20),
        warmup: Duration::from_millis(2),
        pinning: Pinning::Route,
        seed: 5,
    }
}

#[test]
fn ron_micro_keeps_exclusion_and_counts_waiters() {
    for e in registry::resolve("ron-raw,ron-ticket,mcs,cna,ticket,std").unwrap() {
        let s = (e.ron_micro)(&cfg(3));
        assert!(s.exclusion_ok, "{}: lost updates", e.name());
        assert_eq!(s.per_thread.len(), 3);
        // A loaded machine may starve a whole window: no acquisition, no
        // means.
        if s.total() > 0 {
            let data = s.cs_data_ns.expect("ron-micro times its data accesses");
            assert!(data > 0.0 && data.is_finite(), "{}: {data}", e.name());
            let w = s.waiters.expect("ron-micro counts waiters");
            assert!((0.0..=2.0).contains(&w), "{}: waiters {w}", e.name());
        } else {
            assert_eq!((s.cs_data_ns, s.waiters), (None, None));
        }
    }
}

#[test]
fn ron_micro_alone_never_sees_a_waiter() {
    let e = registry::find("mcs").unwrap();
    let s = (e.ron_micro)(&cfg(1));
    assert!(s.exclusion_ok);
    assert!(s.total() > 0);
    assert_eq!(s.waiters, Some(0.0));
}

#[test]
fn kv_update_keeps_exclusion_and_has_no_probe() {
    for e in registry::resolve("ron-raw,mcs,cna,std").unwrap() {
        let s = (e.kv_update)(&cfg(3));
        assert!(s.exclusion_ok, "{}: lost operations", e.name());
        assert_eq!((s.cs_data_ns, s.waiters), (None, None));
        let k = (e.kv)(&cfg(2));
        assert!(k.exclusion_ok, "{}: lost operations", e.name());
        assert_eq!((k.cs_data_ns, k.waiters), (None, None));
    }
}

#[test]
fn grid_rows_carry_the_probe_fields_of_ron_micro_only() {
    for w in [LoopWorkload::KvUpdate, LoopWorkload::RonMicro] {
        let rows = Grid {
            locks: registry::resolve("ron-raw,parking_lot").unwrap(),
            threads: vec![1, 2],
            ncs_ns: vec![0.0],
            cs_lines: 2,
            duration: Duration::from_millis(20),
            warmup: Duration::from_millis(2),
            pinning: Pinning::Route,
            seed: 1,
            workload: w,
            repeat: 2,
        }
        .run(|_, _, _| {})
        .unwrap();
        assert_eq!(rows.len(), 4);
        for r in &rows {
            assert_eq!(r.workload, w.name());
            assert_eq!(r.cs_lines, 0);
            assert!(r.exclusion_ok);
            let probed = w == LoopWorkload::RonMicro && r.total > 0;
            assert_eq!(r.cs_data_ns.is_some(), probed, "{r:?}");
            assert_eq!(r.waiters.is_some(), probed, "{r:?}");
            if r.threads == 1 && probed {
                assert_eq!(r.waiters, Some(0.0));
            }
        }
        // The fields survive JSON, as null where absent.
        let v = serde_json::to_value(&rows).unwrap();
        let row = v.as_array().unwrap()[0].as_object().unwrap();
        assert!(row.contains_key("cs_data_ns") && row.contains_key("waiters"));
        let back: Vec<ron_bench::report::BenchRow> = serde_json::from_value(v).unwrap();
        assert_eq!(back, rows);
    }
}
