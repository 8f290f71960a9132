//! The human format: aligned Markdown tables (numeric columns
//! right-aligned), one renderer per kind of result.

use ron_bench::report::{BenchRow, CorunnerRow, PerRound};
use ron_bench::workload::many_locks::ManyLocksRow;
use ron_bench::workload::rw::RwRow;

use crate::rows::{CompareRow, SimRow};

/// An aligned Markdown table: numeric columns right-aligned, text columns
/// left-aligned (`-` counts as numeric: it marks a missing number).
pub fn table(header: &[&str], cells: &[Vec<String>]) -> String {
    let numeric: Vec<bool> = (0..header.len())
        .map(|i| {
            cells.iter().all(|r| {
                r.get(i).is_none_or(|c| {
                    let c = c.trim_end_matches(['%', 'x']);
                    c == "-" || c.parse::<f64>().is_ok()
                })
            })
        })
        .collect();
    let mut width: Vec<usize> = header.iter().map(|h| h.chars().count()).collect();
    for row in cells {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.chars().count());
        }
    }
    let line = |row: &[&str]| -> String {
        let parts: Vec<String> = row
            .iter()
            .zip(&width)
            .enumerate()
            .map(|(i, (c, w))| {
                if numeric[i] {
                    format!("{c:>w$}")
                } else {
                    format!("{c:<w$}")
                }
            })
            .collect();
        format!("| {} |\n", parts.join(" | "))
    };
    let mut out = line(header);
    let sep: Vec<String> = width
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if numeric[i] {
                format!(" {}: ", "-".repeat(w.saturating_sub(1)))
            } else {
                format!(" {} ", "-".repeat(*w))
            }
        })
        .collect();
    out.push_str(&format!("|{}|\n", sep.join("|")));
    for row in cells {
        let r: Vec<&str> = row.iter().map(String::as_str).collect();
        out.push_str(&line(&r));
    }
    out
}

/// `x` with `prec` decimals, or `-`.
pub fn opt(x: Option<f64>, prec: usize) -> String {
    x.filter(|v| v.is_finite())
        .map_or_else(|| "-".into(), |v| format!("{v:.prec$}"))
}

/// The lock column: its name, flagged when the row failed its exclusion
/// check.
fn lock_cell(lock: &str, exclusion_ok: bool) -> String {
    if exclusion_ok {
        lock.to_string()
    } else {
        format!("{lock} (EXCLUSION FAILED)")
    }
}

/// A throughput's standard deviation over the runs, or `-` for one run.
fn sd_cell(sd: f64, repeats: usize) -> String {
    if repeats > 1 {
        format!("{sd:.3}")
    } else {
        "-".into()
    }
}

/// A per-round ratio to parking_lot, `median (min-max)`; `-` without
/// one, or with a single round (the ratio column has it then).
fn rounds_cell(p: &PerRound, repeats: usize) -> String {
    p.ratios()
        .filter(|_| repeats > 1)
        .map_or_else(|| "-".into(), |x| x.to_string())
}

/// The table of lock-loop rows (the columns are explained in the README).
/// The `CS data ns` and `waiters` columns appear when some row has them
/// (`ron-micro`); other rows show `-` there.
pub fn bench(rows: &[BenchRow]) -> String {
    let probed = rows
        .iter()
        .any(|r| r.cs_data_ns.is_some() || r.waiters.is_some());
    let mut header = vec![
        "lock",
        "threads",
        "ncs ns",
        "Mlocks/s",
        "+- sd",
        "x best peer",
        "x parking_lot",
        "x pl per round",
        "fairness",
        "cv",
        "p50 ns",
        "p99 ns",
        "handover ns",
        "ho p50 ns",
        "CPUs busy",
        "CPU ns/lock",
    ];
    if probed {
        header.extend(["CS data ns", "waiters"]);
    }
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let mut cells = vec![
                lock_cell(&r.lock, r.exclusion_ok),
                r.threads.to_string(),
                format!("{:.0}", r.ncs_ns),
                format!("{:.3}", r.mlocks_per_s),
                sd_cell(r.mlocks_per_s_sd, r.repeats),
                opt(r.vs_best_peer, 2),
                opt(r.vs_parking_lot, 2),
                rounds_cell(&r.per_round, r.repeats),
                opt(r.fairness_factor, 3),
                opt(r.cv, 3),
                opt(r.p50_ns, 0),
                opt(r.p99_ns, 0),
                opt(r.handover_ns, 0),
                opt(r.handover_p50_ns, 0),
                opt(r.cpu_per_wall, 2),
                opt(r.cpu_ns_per_lock, 0),
            ];
            if probed {
                cells.extend([opt(r.cs_data_ns, 0), opt(r.waiters, 2)]);
            }
            cells
        })
        .collect();
    table(&header, &cells)
}

/// The table of co-runner rows.
pub fn corunner(rows: &[CorunnerRow]) -> String {
    let header = [
        "policy",
        "lock type",
        "waiters",
        "alone units/s",
        "shared units/s",
        "slowdown",
        "waiters' share",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.policy.clone(),
                r.lock_type.clone(),
                r.waiters.to_string(),
                format!("{:.0}", r.alone_units_per_s),
                format!("{:.0}", r.shared_units_per_s),
                format!("{:.1}%", 100.0 * r.slowdown),
                format!("{:.1}%", 100.0 * r.waiters_share),
            ]
        })
        .collect();
    table(&header, &cells)
}

/// The table of simulated rows.
pub fn simulate(rows: &[SimRow]) -> String {
    let header = [
        "policy",
        "threads",
        "ncs ns",
        "Mlocks/s",
        "Mlocks/s x fifo",
        "handover ns",
        "handover x fifo",
        "p99 ns",
        "wait ns",
        "fairness",
        "cv",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let p = &r.report;
            vec![
                p.policy.clone(),
                p.threads.to_string(),
                format!("{:.0}", p.ncs_ns),
                format!("{:.2}", p.throughput_per_s / 1e6),
                opt(r.throughput_vs_fifo, 2),
                format!("{:.1}", p.handover_mean_ns),
                opt(r.handover_vs_fifo, 2),
                format!("{:.1}", p.handover_p99_ns),
                format!("{:.0}", p.wait_mean_ns),
                format!("{:.3}", p.fairness_factor),
                format!("{:.3}", p.cv),
            ]
        })
        .collect();
    table(&header, &cells)
}

/// The table of `ron compare`.
pub fn compare(rows: &[CompareRow]) -> String {
    let header = [
        "lock",
        "workload",
        "threads",
        "ncs ns",
        "old Mlocks/s",
        "new Mlocks/s",
        "new / old",
        "+- sd",
        "verdict",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.lock.clone(),
                r.workload.clone(),
                r.threads.to_string(),
                format!("{:.0}", r.ncs_ns),
                format!("{:.3}", r.old_mlocks_per_s),
                format!("{:.3}", r.new_mlocks_per_s),
                opt(r.ratio, 3),
                opt(r.ratio_sd, 3),
                r.verdict.to_string(),
            ]
        })
        .collect();
    table(&header, &cells)
}

fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1u64 << 20) as f64)
}

/// The table of many-locks rows.
pub fn many_locks(rows: &[ManyLocksRow]) -> String {
    let header = [
        "lock",
        "threads",
        "locks",
        "Mops/s",
        "+- sd",
        "x parking_lot",
        "+- sd",
        "fairness",
        "CPU ns/op",
        "bytes/lock",
        "locks MiB",
        "RSS MiB",
        "+RSS MiB",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                lock_cell(&r.lock, r.exclusion_ok),
                r.threads.to_string(),
                r.n_locks.to_string(),
                format!("{:.3}", r.mops_per_s),
                sd_cell(r.mops_per_s_sd, r.repeats),
                opt(r.vs_parking_lot, 2),
                opt(r.vs_parking_lot_sd, 2),
                opt(r.fairness_factor, 3),
                opt(r.cpu_ns_per_op, 0),
                r.bytes_per_lock.to_string(),
                mib(r.lock_bytes),
                r.rss_bytes.map_or_else(|| "-".into(), mib),
                r.rss_delta_bytes.map_or_else(|| "-".into(), mib),
            ]
        })
        .collect();
    table(&header, &cells)
}

/// The table of reader-writer rows (the columns are explained in the
/// README).
pub fn rw(rows: &[RwRow]) -> String {
    let header = [
        "lock",
        "threads",
        "read %",
        "ncs ns",
        "Mops/s",
        "+- sd",
        "x parking_lot",
        "+- sd",
        "x pl per round",
        "fair reads",
        "fair writes",
        "writes",
        "CPU ns/op",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                lock_cell(&r.lock, r.exclusion_ok),
                r.threads.to_string(),
                r.read_pct.to_string(),
                format!("{:.0}", r.ncs_ns),
                format!("{:.3}", r.mops_per_s),
                sd_cell(r.mops_per_s_sd, r.repeats),
                opt(r.vs_parking_lot, 2),
                opt(r.vs_parking_lot_sd, 2),
                rounds_cell(&r.per_round, r.repeats),
                opt(r.fairness_reads, 3),
                opt(r.fairness_writes, 3),
                r.writes.to_string(),
                opt(r.cpu_ns_per_op, 0),
            ]
        })
        .collect();
    table(&header, &cells)
}
