//! The `ron-micro`, `kv` and `kv-update` workloads: every lock keeps the
//! tree valid and counts every acquisition; the waiting count and the
//! critical section's data time mean what they say.

mod common;

use ron_vm_bench::Workload;
use ron_vm_bench::locks::RelaxKind;

#[test]
fn kv_and_ron_micro_keep_exclusion() {
    let vm = common::two_socket(16);
    for workload in [Workload::Kv, Workload::KvUpdate, Workload::RonMicro] {
        for lock in ["ron-raw", "ron-ticket", "mcs", "cna", "cbo-mcs", "ttas"] {
            let s =
                common::point_seeded(&vm, workload, lock, RelaxKind::Spin, 12, 200.0, 2, 600, 3);
            assert!(
                s.exclusion_ok,
                "{lock} {workload:?}: lost update or broken tree"
            );
            assert_eq!(s.total, 600, "{lock} {workload:?}");
        }
    }
}

/// At nCS 0 every other thread waits when the lock is taken; with an nCS
/// far above what the lock needs per acquisition almost none does. (The
/// count is taken at each thread's own virtual time: a thread in its nCS
/// is not waiting.)
#[test]
fn waiters_follow_the_load() {
    let vm = common::two_socket(16);
    let at = |ncs: f64| {
        common::point_seeded(
            &vm,
            Workload::RonMicro,
            "mcs",
            RelaxKind::Spin,
            16,
            ncs,
            2,
            1500,
            1,
        )
    };
    let (busy, idle) = (at(0.0), at(200_000.0));
    eprintln!(
        "waiters: nCS 0 {:.2}, nCS 200 us {:.2}; data ns {:.1} / {:.1}",
        busy.waiters(),
        idle.waiters(),
        busy.cs_data_ns(),
        idle.cs_data_ns()
    );
    assert!(busy.waiters() > 14.0, "{}", busy.waiters());
    assert!(idle.waiters() < 0.5, "{}", idle.waiters());
    // The 7 lines of the 100 integers come from the last holder: at least
    // one transfer (40 ns within a socket on this machine), at most 7
    // one after the other across sockets.
    for s in [&busy, &idle] {
        assert!(
            s.cs_data_ns() >= 40.0 && s.cs_data_ns() <= 7.0 * 140.0,
            "{}",
            s.cs_data_ns()
        );
    }
}

/// Line transfers per handover: under full contention every handover
/// moves each of the K data lines once, so going from K = 2 to K = 6 adds
/// four transfers per handover, whatever the lock moves itself.
#[test]
fn transfers_per_handover_count_the_data_lines() {
    let vm = common::two_socket(16);
    for lock in ["mcs", "ttas", "ron-raw"] {
        let at = |k: usize| {
            let s = common::point_seeded(
                &vm,
                Workload::Micro,
                lock,
                RelaxKind::Spin,
                12,
                0.0,
                k,
                1500,
                7,
            );
            assert!(s.handovers > 0 && s.window_transfers > 0, "{lock}");
            s.transfers_per_handover()
        };
        let (two, six) = (at(2), at(6));
        assert!(
            two >= 2.0,
            "{lock}: {two} transfers per handover with K = 2"
        );
        assert!(
            (six - two - 4.0).abs() < 0.5,
            "{lock}: K = 2 {two}, K = 6 {six} transfers per handover"
        );
    }
}

/// `--transfers` appends a column and changes nothing else of the output.
#[test]
fn the_transfers_column_only_appends() {
    use ron_vm_bench::report::{Format, Row, RowKey, render, render_with};
    let vm = common::two_socket(16);
    let rows: Vec<Row> = [2, 4]
        .iter()
        .map(|&k| {
            let s = common::point_seeded(
                &vm,
                Workload::Micro,
                "mcs",
                RelaxKind::Spin,
                8,
                0.0,
                k,
                300,
                1,
            );
            let key = RowKey {
                machine: &vm.name,
                workload: "micro",
                lock: "mcs",
                relax: "spin",
                groups: "socket",
                line_model: "directory",
                mlp: 10,
                slots: 0,
                placement: "random",
                ncs_ns: 0.0,
                cs_lines: k,
                seed: 1,
                wall: false,
            };
            Row::new(&key, &s)
        })
        .collect();
    let t = [7.25, 11.5];
    for f in [Format::Table, Format::Csv] {
        let (plain, with) = (render(&rows, f), render_with(&rows, f, Some(&t)));
        assert_eq!(plain, render_with(&rows, f, None));
        assert_eq!(plain.lines().count(), with.lines().count());
        for (p, w) in plain.lines().zip(with.lines()) {
            assert!(
                w.starts_with(p) && w.len() > p.len(),
                "{f:?}: {p:?} -> {w:?}"
            );
        }
        assert!(with.lines().nth(2).unwrap().ends_with("11.50"), "{with}");
    }
    let json: serde_json::Value =
        serde_json::from_str(&render_with(&rows, Format::Json, Some(&t))).unwrap();
    assert_eq!(json[1]["transfers_per_handover"], 11.5);
    assert_eq!(json[1]["cs_lines"], 4);
}
