//! Result rows: the fields of `ron bench`'s rows plus `machine`,
//! `virtual: true` and what the simulation cost; table, CSV and JSON; on
//! request ([`render_with`]) the line transfers per handover as a last
//! column (kept out of [`Row`], whose fields are those of `ron bench`).

use serde::Serialize;

use crate::workload::RunStats;

/// One (machine, lock, threads, nCS, K) point.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Row {
    /// The machine (matrix file stem).
    pub machine: String,
    /// Always true: times are virtual.
    #[serde(rename = "virtual")]
    pub is_virtual: bool,
    /// `micro`, `ron-micro`, `kv` or `kv-update`.
    pub workload: String,
    /// Lock name.
    pub lock: String,
    /// Waiting policy: `default` (the lock's own) or `spin`.
    pub relax: String,
    /// The group table installed (e.g. `socket:2x64`).
    pub groups: String,
    /// `directory` or `relay`.
    pub line_model: String,
    /// Misses one thread may have outstanding.
    pub mlp: usize,
    /// Slots of a RON lock (0 for the others).
    pub slots: usize,
    /// Threads (one per virtual CPU).
    pub threads: usize,
    /// `route`, `first` or `random`.
    pub placement: String,
    /// Mean non-critical section (ns).
    pub ncs_ns: f64,
    /// Data lines written per critical section.
    pub cs_lines: usize,
    /// Measured window (virtual s).
    pub duration_s: f64,
    /// Threads are bound to their virtual CPUs.
    pub pinned: bool,
    /// Seed of the jitter (and of a random placement).
    pub seed: u64,
    /// Million acquisitions per virtual second.
    pub mlocks_per_s: f64,
    /// Acquisitions in the window.
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
    pub handover_p50_ns: f64,
    /// Handovers counted.
    pub handovers: u64,
    /// Mean time of the critical section's data accesses (ns).
    pub cs_data_ns: f64,
    /// Mean threads waiting when the lock was taken.
    pub waiters: f64,
    /// Not computed in the VM (no peers run there).
    pub vs_best_peer: Option<f64>,
    /// Not computed in the VM.
    pub best_peer: Option<String>,
    /// Not computed in the VM.
    pub vs_parking_lot: Option<f64>,
    /// Whether the data lines counted every acquisition.
    pub exclusion_ok: bool,
    /// Acquisitions per thread in the window.
    pub per_thread: Vec<u64>,
    /// Wall-clock seconds of the simulation (not part of the model; it
    /// differs between runs, so `--no-wall` leaves it out).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_s: Option<f64>,
    /// CPU seconds of the simulation (left out with `--no-wall` too).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_s: Option<f64>,
}

/// The inputs of a row besides the statistics.
#[derive(Debug, Clone)]
pub struct RowKey<'a> {
    /// Machine name.
    pub machine: &'a str,
    /// Workload name.
    pub workload: &'a str,
    /// Lock name.
    pub lock: &'a str,
    /// Waiting policy name.
    pub relax: &'a str,
    /// The group table, described.
    pub groups: &'a str,
    /// Line model name.
    pub line_model: &'a str,
    /// Memory-level parallelism.
    pub mlp: usize,
    /// Slots (0 if not a RON lock).
    pub slots: usize,
    /// Placement name.
    pub placement: &'a str,
    /// Mean nCS (ns).
    pub ncs_ns: f64,
    /// K.
    pub cs_lines: usize,
    /// Seed.
    pub seed: u64,
    /// Whether to record the wall time.
    pub wall: bool,
}

impl Row {
    /// A row from a run.
    pub fn new(k: &RowKey<'_>, s: &RunStats) -> Self {
        Row {
            machine: k.machine.to_string(),
            is_virtual: true,
            workload: k.workload.to_string(),
            lock: k.lock.to_string(),
            relax: k.relax.to_string(),
            groups: k.groups.to_string(),
            line_model: k.line_model.to_string(),
            mlp: k.mlp,
            slots: k.slots,
            threads: s.per_thread.len(),
            placement: k.placement.to_string(),
            ncs_ns: k.ncs_ns,
            cs_lines: k.cs_lines,
            duration_s: s.window_ns * 1e-9,
            pinned: true,
            seed: k.seed,
            mlocks_per_s: s.mlocks_per_s,
            total: s.window_acquisitions,
            fairness_factor: s.fairness_factor(),
            cv: s.cv(),
            p50_ns: s.latency_ns[0],
            p99_ns: s.latency_ns[1],
            p999_ns: s.latency_ns[2],
            handover_ns: s.handover_ns,
            handover_p50_ns: s.handover_p50_ns,
            handovers: s.handovers,
            cs_data_ns: s.cs_data_ns(),
            waiters: s.waiters(),
            vs_best_peer: None,
            best_peer: None,
            vs_parking_lot: None,
            exclusion_ok: s.exclusion_ok,
            per_thread: s.per_thread.clone(),
            wall_s: k.wall.then_some(s.wall_s),
            cpu_s: k.wall.then_some(s.cpu_s),
        }
    }
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Format {
    /// Aligned columns.
    Table,
    /// One header line, one line per row (`per_thread` joined with `;`).
    Csv,
    /// A JSON array of rows.
    Json,
}

/// A row with the line transfers per handover (JSON with `--transfers`).
#[derive(Serialize)]
struct WithTransfers<'a> {
    #[serde(flatten)]
    row: &'a Row,
    transfers_per_handover: f64,
}

/// Renders `rows`.
pub fn render(rows: &[Row], format: Format) -> String {
    render_with(rows, format, None)
}

/// Renders `rows`, with `transfers[i]`, the line transfers per handover of
/// row `i` (`RunStats::transfers_per_handover`), as the last column (the
/// last field in JSON) when given; the other columns are those of
/// [`render`], byte for byte.
pub fn render_with(rows: &[Row], format: Format, transfers: Option<&[f64]>) -> String {
    if let Some(t) = transfers {
        assert_eq!(t.len(), rows.len(), "one transfer count per row");
    }
    let extra =
        |i: usize, f: &dyn Fn(f64) -> String| transfers.map(|t| f(t[i])).unwrap_or_default();
    match format {
        Format::Json => {
            let json = match transfers {
                Some(t) => serde_json::to_string_pretty(
                    &rows
                        .iter()
                        .zip(t)
                        .map(|(row, &x)| WithTransfers {
                            row,
                            transfers_per_handover: x,
                        })
                        .collect::<Vec<_>>(),
                ),
                None => serde_json::to_string_pretty(rows),
            };
            json.expect("rows serialize") + "\n"
        }
        Format::Csv => {
            let mut out = String::from(
                "machine,virtual,workload,lock,relax,groups,line_model,mlp,slots,threads,placement,ncs_ns,cs_lines,duration_s,pinned,seed,mlocks_per_s,total,fairness_factor,cv,p50_ns,p99_ns,p999_ns,handover_ns,handover_p50_ns,handovers,cs_data_ns,waiters,exclusion_ok,per_thread,wall_s,cpu_s",
            );
            out += if transfers.is_some() {
                ",transfers_per_handover\n"
            } else {
                "\n"
            };
            for (i, r) in rows.iter().enumerate() {
                let per: Vec<String> = r.per_thread.iter().map(|c| c.to_string()).collect();
                out += &format!(
                    "{},{},{},{},{},{},{},{},{},{},{},{},{},{:.9},{},{},{:.4},{},{:.4},{:.4},{:.1},{:.1},{:.1},{:.2},{:.2},{},{:.2},{:.2},{},{},{},{}{}\n",
                    r.machine,
                    r.is_virtual,
                    r.workload,
                    r.lock,
                    r.relax,
                    r.groups,
                    r.line_model,
                    r.mlp,
                    r.slots,
                    r.threads,
                    r.placement,
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
                    r.cs_data_ns,
                    r.waiters,
                    r.exclusion_ok,
                    per.join(";"),
                    r.wall_s.map(|w| format!("{w:.3}")).unwrap_or_default(),
                    r.cpu_s.map(|w| format!("{w:.3}")).unwrap_or_default(),
                    extra(i, &|x| format!(",{x:.2}"))
                );
            }
            out
        }
        Format::Table => {
            let mut out = format!(
                "{:<28} {:<11} {:<7} {:>5} {:>7} {:>7} {:>3} {:>9} {:>11} {:>9} {:>9} {:>5} {:>4} {:>8}{}\n",
                "machine",
                "lock",
                "relax",
                "slots",
                "threads",
                "ncs_ns",
                "K",
                "Mlocks/s",
                "handover_ns",
                "p50_ns",
                "p99_ns",
                "fair",
                "excl",
                "cpu_s",
                if transfers.is_some() {
                    format!(" {:>7}", "xfer/ho")
                } else {
                    String::new()
                }
            );
            for (i, r) in rows.iter().enumerate() {
                out += &format!(
                    "{:<28} {:<11} {:<7} {:>5} {:>7} {:>7} {:>3} {:>9.3} {:>11.1} {:>9.1} {:>9.1} {:>5.3} {:>4} {:>8}{}\n",
                    r.machine,
                    r.lock,
                    r.relax,
                    r.slots,
                    r.threads,
                    r.ncs_ns,
                    r.cs_lines,
                    r.mlocks_per_s,
                    r.handover_ns,
                    r.p50_ns,
                    r.p99_ns,
                    r.fairness_factor,
                    if r.exclusion_ok { "ok" } else { "FAIL" },
                    r.cpu_s
                        .map(|w| format!("{w:.2}"))
                        .unwrap_or_else(|| "-".into()),
                    extra(i, &|x| format!(" {x:>7.2}"))
                );
            }
            out
        }
    }
}
