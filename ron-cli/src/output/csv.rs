//! CSV output: a header line, then one record per row (quoted where a
//! field needs it). Missing numbers are empty fields.

use ron_bench::report::{BenchRow, CorunnerRow};
use ron_bench::workload::many_locks::ManyLocksRow;
use ron_bench::workload::rw::RwRow;

use crate::rows::{CompareRow, SimRow};

/// A CSV document from a header and records.
pub fn document(header: &[&str], records: impl IntoIterator<Item = Vec<String>>) -> String {
    let mut w = csv::WriterBuilder::new().from_writer(Vec::new());
    // Writing to a Vec cannot fail; a record of the wrong length would be
    // a bug caught by the tests.
    let _ = w.write_record(header);
    for r in records {
        let _ = w.write_record(&r);
    }
    let bytes = w.into_inner().unwrap_or_default();
    String::from_utf8(bytes).unwrap_or_default()
}

fn o(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite())
        .map_or_else(String::new, |v| format!("{v:.4}"))
}

fn o1(x: Option<f64>) -> String {
    x.filter(|v| v.is_finite())
        .map_or_else(String::new, |v| format!("{v:.1}"))
}

/// The CSV columns of lock-loop rows (JSON has these and `per_thread`).
pub const BENCH_COLUMNS: [&str; 35] = [
    "workload",
    "lock",
    "threads",
    "ncs_ns",
    "cs_lines",
    "duration_s",
    "pinned",
    "seed",
    "repeats",
    "mlocks_per_s",
    "mlocks_per_s_sd",
    "mlocks_per_s_min",
    "mlocks_per_s_max",
    "total",
    "fairness_factor",
    "cv",
    "p50_ns",
    "p99_ns",
    "p999_ns",
    "handover_ns",
    "handover_p50_ns",
    "handovers",
    "cpu_per_wall",
    "cpu_ns_per_lock",
    "vs_best_peer",
    "vs_best_peer_sd",
    "best_peer",
    "vs_parking_lot",
    "vs_parking_lot_sd",
    "vs_parking_lot_median",
    "vs_parking_lot_min",
    "vs_parking_lot_max",
    "exclusion_ok",
    "cs_data_ns",
    "waiters",
];

/// Lock-loop rows as CSV.
pub fn bench(rows: &[BenchRow]) -> String {
    document(
        &BENCH_COLUMNS,
        rows.iter().map(|r| {
            vec![
                r.workload.clone(),
                r.lock.clone(),
                r.threads.to_string(),
                r.ncs_ns.to_string(),
                r.cs_lines.to_string(),
                format!("{:.4}", r.duration_s),
                r.pinned.to_string(),
                r.seed.to_string(),
                r.repeats.to_string(),
                format!("{:.4}", r.mlocks_per_s),
                format!("{:.4}", r.mlocks_per_s_sd),
                format!("{:.4}", r.mlocks_per_s_min),
                format!("{:.4}", r.mlocks_per_s_max),
                r.total.to_string(),
                o(r.fairness_factor),
                o(r.cv),
                o1(r.p50_ns),
                o1(r.p99_ns),
                o1(r.p999_ns),
                o1(r.handover_ns),
                o1(r.handover_p50_ns),
                r.handovers.to_string(),
                o(r.cpu_per_wall),
                o(r.cpu_ns_per_lock),
                o(r.vs_best_peer),
                o(r.vs_best_peer_sd),
                r.best_peer.clone().unwrap_or_default(),
                o(r.vs_parking_lot),
                o(r.vs_parking_lot_sd),
                o(r.per_round.vs_parking_lot_median),
                o(r.per_round.vs_parking_lot_min),
                o(r.per_round.vs_parking_lot_max),
                r.exclusion_ok.to_string(),
                o1(r.cs_data_ns),
                o(r.waiters),
            ]
        }),
    )
}

/// Co-runner rows as CSV.
pub fn corunner(rows: &[CorunnerRow]) -> String {
    document(
        &[
            "workload",
            "policy",
            "lock_type",
            "waiters",
            "duration_s",
            "alone_units_per_s",
            "shared_units_per_s",
            "slowdown",
            "waiters_share",
            "compute_cpu",
            "holder_cpu",
        ],
        rows.iter().map(|r| {
            vec![
                r.workload.clone(),
                r.policy.clone(),
                r.lock_type.clone(),
                r.waiters.to_string(),
                format!("{:.4}", r.duration_s),
                format!("{:.1}", r.alone_units_per_s),
                format!("{:.1}", r.shared_units_per_s),
                format!("{:.4}", r.slowdown),
                format!("{:.4}", r.waiters_share),
                r.compute_cpu.to_string(),
                r.holder_cpu.to_string(),
            ]
        }),
    )
}

/// Simulated rows as CSV (JSON also has the per-thread counts).
pub fn simulate(rows: &[SimRow]) -> String {
    document(
        &[
            "matrix",
            "policy",
            "threads",
            "cs_ns",
            "ncs_ns",
            "throughput_per_s",
            "throughput_vs_fifo",
            "handover_mean_ns",
            "handover_vs_fifo",
            "handover_p99_ns",
            "wait_mean_ns",
            "direct_share",
            "fairness_factor",
            "cv",
            "admissions",
        ],
        rows.iter().map(|r| {
            let p = &r.report;
            vec![
                p.matrix.clone(),
                p.policy.clone(),
                p.threads.to_string(),
                p.cs_ns.to_string(),
                p.ncs_ns.to_string(),
                format!("{:.0}", p.throughput_per_s),
                o(r.throughput_vs_fifo),
                format!("{:.2}", p.handover_mean_ns),
                o(r.handover_vs_fifo),
                format!("{:.2}", p.handover_p99_ns),
                format!("{:.1}", p.wait_mean_ns),
                format!("{:.4}", p.direct_share),
                format!("{:.4}", p.fairness_factor),
                format!("{:.4}", p.cv),
                p.admissions.to_string(),
            ]
        }),
    )
}

/// `ron compare` rows as CSV.
pub fn compare(rows: &[CompareRow]) -> String {
    document(
        &[
            "lock",
            "workload",
            "threads",
            "ncs_ns",
            "old_mlocks_per_s",
            "new_mlocks_per_s",
            "ratio",
            "ratio_sd",
            "verdict",
        ],
        rows.iter().map(|r| {
            vec![
                r.lock.clone(),
                r.workload.clone(),
                r.threads.to_string(),
                r.ncs_ns.to_string(),
                format!("{:.4}", r.old_mlocks_per_s),
                format!("{:.4}", r.new_mlocks_per_s),
                o(r.ratio),
                o(r.ratio_sd),
                r.verdict.to_string(),
            ]
        }),
    )
}

/// The CSV columns of many-locks rows (JSON has these and `per_thread`).
pub const MANY_LOCKS_COLUMNS: [&str; 22] = [
    "workload",
    "lock",
    "threads",
    "n_locks",
    "duration_s",
    "pinned",
    "seed",
    "repeats",
    "mops_per_s",
    "mops_per_s_sd",
    "mops_per_s_min",
    "mops_per_s_max",
    "total",
    "fairness_factor",
    "cpu_ns_per_op",
    "vs_parking_lot",
    "vs_parking_lot_sd",
    "bytes_per_lock",
    "lock_bytes",
    "rss_bytes",
    "rss_delta_bytes",
    "exclusion_ok",
];

/// Many-locks rows as CSV.
pub fn many_locks(rows: &[ManyLocksRow]) -> String {
    let u = |x: Option<u64>| x.map_or_else(String::new, |v| v.to_string());
    document(
        &MANY_LOCKS_COLUMNS,
        rows.iter().map(|r| {
            vec![
                r.workload.clone(),
                r.lock.clone(),
                r.threads.to_string(),
                r.n_locks.to_string(),
                format!("{:.4}", r.duration_s),
                r.pinned.to_string(),
                r.seed.to_string(),
                r.repeats.to_string(),
                format!("{:.4}", r.mops_per_s),
                format!("{:.4}", r.mops_per_s_sd),
                format!("{:.4}", r.mops_per_s_min),
                format!("{:.4}", r.mops_per_s_max),
                r.total.to_string(),
                o(r.fairness_factor),
                o(r.cpu_ns_per_op),
                o(r.vs_parking_lot),
                o(r.vs_parking_lot_sd),
                r.bytes_per_lock.to_string(),
                r.lock_bytes.to_string(),
                u(r.rss_bytes),
                u(r.rss_delta_bytes),
                r.exclusion_ok.to_string(),
            ]
        }),
    )
}

/// The CSV columns of reader-writer rows (JSON has these and the
/// per-thread reads and writes).
pub const RW_COLUMNS: [&str; 26] = [
    "workload",
    "lock",
    "threads",
    "read_pct",
    "ncs_ns",
    "cs_lines",
    "duration_s",
    "pinned",
    "seed",
    "repeats",
    "mops_per_s",
    "mops_per_s_sd",
    "mops_per_s_min",
    "mops_per_s_max",
    "total",
    "reads",
    "writes",
    "vs_parking_lot",
    "vs_parking_lot_sd",
    "vs_parking_lot_median",
    "vs_parking_lot_min",
    "vs_parking_lot_max",
    "fairness_reads",
    "fairness_writes",
    "cpu_ns_per_op",
    "exclusion_ok",
];

/// Reader-writer rows as CSV.
pub fn rw(rows: &[RwRow]) -> String {
    document(
        &RW_COLUMNS,
        rows.iter().map(|r| {
            vec![
                r.workload.clone(),
                r.lock.clone(),
                r.threads.to_string(),
                r.read_pct.to_string(),
                format!("{:.1}", r.ncs_ns),
                r.cs_lines.to_string(),
                format!("{:.4}", r.duration_s),
                r.pinned.to_string(),
                r.seed.to_string(),
                r.repeats.to_string(),
                format!("{:.4}", r.mops_per_s),
                format!("{:.4}", r.mops_per_s_sd),
                format!("{:.4}", r.mops_per_s_min),
                format!("{:.4}", r.mops_per_s_max),
                r.total.to_string(),
                r.reads.to_string(),
                r.writes.to_string(),
                o(r.vs_parking_lot),
                o(r.vs_parking_lot_sd),
                o(r.per_round.vs_parking_lot_median),
                o(r.per_round.vs_parking_lot_min),
                o(r.per_round.vs_parking_lot_max),
                o(r.fairness_reads),
                o(r.fairness_writes),
                o1(r.cpu_ns_per_op),
                r.exclusion_ok.to_string(),
            ]
        }),
    )
}
