//! Result rows and their table / CSV / JSON renderings.
//!
//! The JSON of `ron bench` is one array of [`BenchRow`]s (or of
//! [`CorunnerRow`]s for `--workload corunner`). Field names are stable:
//! tools and `ron plot` read them; new fields may be added.

use serde::{Deserialize, Serialize};

use crate::registry::LockEntry;
use crate::workload::RunStats;
use crate::workload::corunner::{CorunnerPolicy, CorunnerStats};

/// One (workload, lock, threads, nCS) point of a lock-loop benchmark.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchRow {
    /// `micro` or `kv`.
    pub workload: String,
    /// Lock name (as on the command line).
    pub lock: String,
    /// Threads.
    pub threads: usize,
    /// Mean non-critical section (ns).
    pub ncs_ns: f64,
    /// Cache lines read and written per critical section (0 for `kv`).
    pub cs_lines: usize,
    /// Measured window (s).
    pub duration_s: f64,
    /// Whether threads were pinned along the route.
    pub pinned: bool,
    /// Seed of the jitter and key generators.
    pub seed: u64,
    /// Million acquisitions (= operations) per second.
    pub mlocks_per_s: f64,
    /// Acquisitions counted in the window.
    pub total: u64,
    /// Busier half's share of the acquisitions (0.5 = fair).
    pub fairness_factor: f64,
    /// Coefficient of variation of the per-thread counts.
    pub cv: f64,
    /// Acquire latency, median (ns).
    pub p50_ns: f64,
    /// Acquire latency, 99th percentile (ns).
    pub p99_ns: f64,
    /// Acquire latency, 99.9th percentile (ns).
    pub p999_ns: f64,
    /// Mean handover time between different threads (ns; 0 if none).
    pub handover_ns: f64,
    /// Median handover time (ns; 0 if none).
    #[serde(default)]
    pub handover_p50_ns: f64,
    /// Handovers counted.
    pub handovers: u64,
    /// Throughput / the best peer's at the same point (`None` without a
    /// peer in the run).
    pub vs_best_peer: Option<f64>,
    /// The best peer at this point.
    pub best_peer: Option<String>,
    /// Throughput / parking_lot's at the same point.
    pub vs_parking_lot: Option<f64>,
    /// Whether the final shared data matched the acquisition count.
    pub exclusion_ok: bool,
    /// Acquisitions per thread.
    pub per_thread: Vec<u64>,
}

impl BenchRow {
    /// A row from a run's statistics (ratios filled by [`add_ratios`]).
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        workload: &str,
        lock: &LockEntry,
        threads: usize,
        ncs_ns: f64,
        cs_lines: usize,
        pinned: bool,
        seed: u64,
        s: &RunStats,
    ) -> Self {
        BenchRow {
            workload: workload.to_string(),
            lock: lock.name().to_string(),
            threads,
            ncs_ns,
            cs_lines,
            duration_s: s.elapsed_s,
            pinned,
            seed,
            mlocks_per_s: s.mlocks_per_s(),
            total: s.total(),
            fairness_factor: s.fairness_factor(),
            cv: s.cv(),
            p50_ns: s.latency.p50_ns,
            p99_ns: s.latency.p99_ns,
            p999_ns: s.latency.p999_ns,
            handover_ns: s.handover_ns,
            handover_p50_ns: s.handover_p50_ns,
            handovers: s.handovers,
            vs_best_peer: None,
            best_peer: None,
            vs_parking_lot: None,
            exclusion_ok: s.exclusion_ok,
            per_thread: s.per_thread.clone(),
        }
    }
}

/// Fills `vs_best_peer`, `best_peer` and `vs_parking_lot` of every row
/// from the peers (`is_peer(name)`) at the same (workload, threads, nCS,
/// cs_lines).
pub fn add_ratios(rows: &mut [BenchRow], is_peer: impl Fn(&str) -> bool) {
    let key = |r: &BenchRow| {
        (
            r.workload.clone(),
            r.threads,
            r.ncs_ns.to_bits(),
            r.cs_lines,
        )
    };
    let snapshot: Vec<BenchRow> = rows.to_vec();
    for r in rows.iter_mut() {
        let k = key(r);
        let same = snapshot.iter().filter(|o| key(o) == k);
        let best = same
            .clone()
            .filter(|o| is_peer(&o.lock))
            .max_by(|a, b| a.mlocks_per_s.total_cmp(&b.mlocks_per_s));
        if let Some(b) = best.filter(|b| b.mlocks_per_s > 0.0) {
            r.vs_best_peer = Some(r.mlocks_per_s / b.mlocks_per_s);
            r.best_peer = Some(b.lock.clone());
        }
        if let Some(p) = same
            .clone()
            .find(|o| o.lock == "parking_lot")
            .filter(|p| p.mlocks_per_s > 0.0)
        {
            r.vs_parking_lot = Some(r.mlocks_per_s / p.mlocks_per_s);
        }
    }
}

/// One co-runner measurement.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CorunnerRow {
    /// Always `corunner`.
    pub workload: String,
    /// Waiting policy name.
    pub policy: String,
    /// The lock type that waits.
    pub lock_type: String,
    /// Waiters sharing the compute thread's CPU.
    pub waiters: usize,
    /// Length of each phase (s).
    pub duration_s: f64,
    /// Compute work units (1 us) per second alone.
    pub alone_units_per_s: f64,
    /// Compute work units per second with the waiters.
    pub shared_units_per_s: f64,
    /// `1 - shared / alone`.
    pub slowdown: f64,
    /// The waiters' fair share of the CPU, `W / (W + 1)`: what pure
    /// spinning costs.
    pub waiters_share: f64,
    /// CPU of the compute thread and waiters.
    pub compute_cpu: usize,
    /// CPU of the lock holder.
    pub holder_cpu: usize,
}

impl CorunnerRow {
    /// A row from one measurement.
    pub fn new(p: &CorunnerPolicy, waiters: usize, duration_s: f64, s: &CorunnerStats) -> Self {
        CorunnerRow {
            workload: "corunner".into(),
            policy: p.name.into(),
            lock_type: p.type_name.into(),
            waiters,
            duration_s,
            alone_units_per_s: s.alone_per_s,
            shared_units_per_s: s.shared_per_s,
            slowdown: s.slowdown(),
            waiters_share: waiters as f64 / (waiters as f64 + 1.0),
            compute_cpu: s.compute_cpu,
            holder_cpu: s.holder_cpu,
        }
    }
}

/// An aligned Markdown table: numeric columns right-aligned, text columns
/// left-aligned.
pub fn table(header: &[&str], cells: &[Vec<String>]) -> String {
    let numeric: Vec<bool> = (0..header.len())
        .map(|i| {
            cells.iter().all(|r| {
                r.get(i).is_none_or(|c| {
                    let c = c.trim_end_matches('%');
                    c == "-" || c.parse::<f64>().is_ok()
                })
            })
        })
        .collect();
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in cells {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.len());
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
            if !numeric[i] {
                format!(" {} ", "-".repeat(*w))
            } else {
                format!(" {}: ", "-".repeat(w.saturating_sub(1)))
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

fn opt(x: Option<f64>, prec: usize) -> String {
    x.map_or_else(|| "-".into(), |v| format!("{v:.prec$}"))
}

/// The human table of lock-loop rows.
pub fn bench_table(rows: &[BenchRow]) -> String {
    let header = [
        "lock",
        "workload",
        "threads",
        "ncs ns",
        "Mlocks/s",
        "x best peer",
        "x parking_lot",
        "fairness",
        "cv",
        "p50 ns",
        "p99 ns",
        "p99.9 ns",
        "handover ns",
        "ho p50 ns",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                if r.exclusion_ok {
                    r.lock.clone()
                } else {
                    format!("{} (EXCLUSION FAILED)", r.lock)
                },
                r.workload.clone(),
                r.threads.to_string(),
                format!("{:.0}", r.ncs_ns),
                format!("{:.3}", r.mlocks_per_s),
                opt(r.vs_best_peer, 2),
                opt(r.vs_parking_lot, 2),
                format!("{:.3}", r.fairness_factor),
                format!("{:.3}", r.cv),
                format!("{:.0}", r.p50_ns),
                format!("{:.0}", r.p99_ns),
                format!("{:.0}", r.p999_ns),
                if r.handovers > 0 {
                    format!("{:.0}", r.handover_ns)
                } else {
                    "-".into()
                },
                if r.handovers > 0 {
                    format!("{:.0}", r.handover_p50_ns)
                } else {
                    "-".into()
                },
            ]
        })
        .collect();
    table(&header, &cells)
}

/// The CSV columns of lock-loop rows (JSON has these and `per_thread`).
pub const BENCH_CSV_COLUMNS: [&str; 22] = [
    "workload",
    "lock",
    "threads",
    "ncs_ns",
    "cs_lines",
    "duration_s",
    "pinned",
    "seed",
    "mlocks_per_s",
    "total",
    "fairness_factor",
    "cv",
    "p50_ns",
    "p99_ns",
    "p999_ns",
    "handover_ns",
    "handover_p50_ns",
    "handovers",
    "vs_best_peer",
    "best_peer",
    "vs_parking_lot",
    "exclusion_ok",
];

/// Lock-loop rows as CSV with a header line.
pub fn bench_csv(rows: &[BenchRow]) -> String {
    let mut out = BENCH_CSV_COLUMNS.join(",");
    out.push('\n');
    let o = |x: Option<f64>| x.map_or_else(String::new, |v| format!("{v:.4}"));
    for r in rows {
        out.push_str(&format!(
            "{},{},{},{},{},{:.4},{},{},{:.4},{},{:.4},{:.4},{:.1},{:.1},{:.1},{:.1},{:.1},{},{},{},{},{}\n",
            r.workload,
            r.lock,
            r.threads,
            r.ncs_ns,
            r.cs_lines,
            r.duration_s,
            r.pinned,
            r.seed,
            r.mlocks_per_s,
            r.total,
            r.fairness_factor,
            r.cv,
            r.p50_ns,
            r.p99_ns,
            r.p999_ns,
            r.handover_ns,
            r.handover_p50_ns,
            r.handovers,
            o(r.vs_best_peer),
            r.best_peer.as_deref().unwrap_or(""),
            o(r.vs_parking_lot),
            r.exclusion_ok
        ));
    }
    out
}

/// The human table of co-runner rows.
pub fn corunner_table(rows: &[CorunnerRow]) -> String {
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

/// Co-runner rows as CSV with a header line.
pub fn corunner_csv(rows: &[CorunnerRow]) -> String {
    let mut out = String::from(
        "workload,policy,lock_type,waiters,duration_s,alone_units_per_s,shared_units_per_s,slowdown,waiters_share,compute_cpu,holder_cpu\n",
    );
    for r in rows {
        out.push_str(&format!(
            "{},{},\"{}\",{},{:.4},{:.1},{:.1},{:.4},{:.4},{},{}\n",
            r.workload,
            r.policy,
            r.lock_type,
            r.waiters,
            r.duration_s,
            r.alone_units_per_s,
            r.shared_units_per_s,
            r.slowdown,
            r.waiters_share,
            r.compute_cpu,
            r.holder_cpu
        ));
    }
    out
}
