//! `--lines`: the per-line breakdown of a run's window is a measurement.
//! Its own test binary, since `measure_lines` is process-wide.

mod common;

use ron_vm_bench::Workload;
use ron_vm_bench::locks::RelaxKind;
use ron_vm_bench::workload::measure_lines;

/// Measuring the lines changes no figure of the run, and the lines' kind
/// totals account for every transfer of the window: the data lines move
/// twice per handover with K = 2 (each once), the lock's and the other
/// lines the rest.
#[test]
fn measuring_lines_changes_nothing_and_accounts_for_every_transfer() {
    let vm = common::two_socket(16);
    for lock in ["mcs", "ron-raw", "ron-ticket"] {
        let run = |on: bool| {
            measure_lines(on);
            let s = common::point_seeded(
                &vm,
                Workload::Micro,
                lock,
                RelaxKind::Spin,
                12,
                0.0,
                2,
                1500,
                5,
            );
            measure_lines(false);
            s
        };
        let (plain, measured) = (run(false), run(true));
        assert!(plain.lines.is_empty(), "{lock}: lines measured while off");
        assert_eq!(plain.mlocks_per_s, measured.mlocks_per_s, "{lock}");
        assert_eq!(plain.handover_ns, measured.handover_ns, "{lock}");
        assert_eq!(plain.window_transfers, measured.window_transfers, "{lock}");
        let all: u64 = measured.kind_totals.iter().map(|t| t.0).sum();
        assert_eq!(all, measured.window_transfers, "{lock}: kind totals");
        let data = measured.kind_totals[1].0 as f64 / measured.handovers as f64;
        assert!(
            (data - 2.0).abs() < 0.2,
            "{lock}: {data} data transfers per handover"
        );
        assert!(
            !measured.lines.is_empty() && measured.lines.len() <= 8,
            "{lock}"
        );
        assert!(
            measured
                .lines
                .windows(2)
                .all(|w| w[0].wait_ps >= w[1].wait_ps),
            "{lock}: lines not ranked by wait"
        );
    }
}
