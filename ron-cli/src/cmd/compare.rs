//! `ron compare OLD NEW`: two `ron bench` runs side by side, point by
//! point: the throughput ratio new / old with its standard deviation, and
//! whether the difference exceeds the noise of the runs.
//!
//! A difference counts as real when it is more than twice the combined
//! standard deviation of the two means (`|new - old| > 2 sqrt(sd_old^2 +
//! sd_new^2)`); with a single run on either side there is no spread to
//! judge by and the verdict says so.

use std::path::{Path, PathBuf};

use ron_bench::report::{BenchRow, PerRound};

use crate::error::{CliError, CliResult};
use crate::input;
use crate::output::{self, Format};
use crate::rows::{CompareRow, Verdict};

/// Arguments of `ron compare`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The earlier run (`ron bench --out FILE.json` or `.csv`).
    #[arg(value_name = "OLD")]
    pub old: PathBuf,
    /// The later run.
    #[arg(value_name = "NEW")]
    pub new: PathBuf,
    /// Format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Reads the rows of a `ron bench` result file (JSON or CSV).
pub fn read_rows(path: &Path) -> Result<Vec<BenchRow>, CliError> {
    let (_, rows) = input::read_rows(path)?;
    let mut out = Vec::with_capacity(rows.len());
    for v in &rows {
        let get = |k: &str| input::num(v, k);
        let (Some(lock), Some(threads), Some(ncs), Some(tput)) = (
            input::text(v, "lock"),
            get("threads"),
            get("ncs_ns"),
            get("mlocks_per_s"),
        ) else {
            return Err(CliError::usage(format!(
                "{}: not `ron bench` rows (need lock, threads, ncs_ns, mlocks_per_s)",
                path.display()
            )));
        };
        let repeats = get("repeats").unwrap_or(1.0) as usize;
        out.push(BenchRow {
            workload: input::text(v, "workload").unwrap_or_else(|| "micro".into()),
            lock,
            threads: threads as usize,
            ncs_ns: ncs,
            cs_lines: get("cs_lines").unwrap_or(0.0) as usize,
            duration_s: get("duration_s").unwrap_or(0.0),
            pinned: v
                .get("pinned")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(true),
            seed: get("seed").unwrap_or(0.0) as u64,
            repeats,
            mlocks_per_s: tput,
            mlocks_per_s_sd: get("mlocks_per_s_sd").unwrap_or(0.0),
            mlocks_per_s_min: get("mlocks_per_s_min").unwrap_or(tput),
            mlocks_per_s_max: get("mlocks_per_s_max").unwrap_or(tput),
            total: get("total").unwrap_or(0.0) as u64,
            fairness_factor: get("fairness_factor"),
            cv: get("cv"),
            p50_ns: get("p50_ns"),
            p99_ns: get("p99_ns"),
            p999_ns: get("p999_ns"),
            handover_ns: get("handover_ns"),
            handover_p50_ns: get("handover_p50_ns"),
            handovers: get("handovers").unwrap_or(0.0) as u64,
            cpu_per_wall: get("cpu_per_wall"),
            cpu_ns_per_lock: get("cpu_ns_per_lock"),
            vs_best_peer: get("vs_best_peer"),
            vs_best_peer_sd: get("vs_best_peer_sd"),
            best_peer: input::text(v, "best_peer"),
            vs_parking_lot: get("vs_parking_lot"),
            vs_parking_lot_sd: get("vs_parking_lot_sd"),
            per_round: PerRound {
                vs_parking_lot_median: get("vs_parking_lot_median"),
                vs_parking_lot_min: get("vs_parking_lot_min"),
                vs_parking_lot_max: get("vs_parking_lot_max"),
            },
            exclusion_ok: v
                .get("exclusion_ok")
                .and_then(serde_json::Value::as_bool)
                .unwrap_or(true),
            cs_data_ns: get("cs_data_ns"),
            waiters: get("waiters"),
            per_thread: Vec::new(),
            runs_mlocks_per_s: v
                .get("runs_mlocks_per_s")
                .and_then(serde_json::Value::as_array)
                .map(|a| a.iter().filter_map(serde_json::Value::as_f64).collect())
                .unwrap_or_default(),
        });
    }
    if out.is_empty() {
        return Err(CliError::usage(format!("{}: no rows", path.display())));
    }
    Ok(out)
}

/// What makes two rows the same point.
fn key(r: &BenchRow) -> (String, String, usize, u64, usize) {
    (
        r.workload.clone(),
        r.lock.clone(),
        r.threads,
        r.ncs_ns.to_bits(),
        r.cs_lines,
    )
}

/// A note for stderr on the points only one side has (they are not
/// compared), or `None` when every point is in both.
pub fn unmatched_note(
    old_name: &str,
    old: &[BenchRow],
    new_name: &str,
    new: &[BenchRow],
) -> Option<String> {
    let missing = |a: &[BenchRow], b: &[BenchRow]| {
        a.iter()
            .filter(|r| !b.iter().any(|o| key(o) == key(r)))
            .count()
    };
    let (only_old, only_new) = (missing(old, new), missing(new, old));
    let point = |n: usize| if n == 1 { "point" } else { "points" };
    match (only_old, only_new) {
        (0, 0) => None,
        _ => Some(format!(
            "note: not compared: {only_old} {} only in {old_name}, {only_new} {} only in {new_name}",
            point(only_old),
            point(only_new)
        )),
    }
}

/// The error when two runs have no point in common.
pub fn nothing_in_common(old_name: &str, new_name: &str) -> CliError {
    CliError::usage(format!(
        "{old_name} and {new_name} have no point in common (same lock, workload, threads, nCS, cache lines)"
    ))
}

/// The points present in both runs, in the new run's order.
pub fn compare(old: &[BenchRow], new: &[BenchRow]) -> Vec<CompareRow> {
    new.iter()
        .filter_map(|n| {
            let o = old.iter().find(|o| key(o) == key(n))?;
            let ratio = ron_stats::ratio(n.mlocks_per_s, o.mlocks_per_s);
            let ratio_sd = ron_stats::ratio_sd(
                n.mlocks_per_s,
                n.mlocks_per_s_sd,
                o.mlocks_per_s,
                o.mlocks_per_s_sd,
            );
            let verdict = if o.repeats < 2 || n.repeats < 2 {
                Verdict::OneRun
            } else {
                let noise = 2.0 * o.mlocks_per_s_sd.hypot(n.mlocks_per_s_sd);
                let d = n.mlocks_per_s - o.mlocks_per_s;
                if d.abs() <= noise {
                    Verdict::WithinNoise
                } else if d > 0.0 {
                    Verdict::Faster
                } else {
                    Verdict::Slower
                }
            };
            Some(CompareRow {
                lock: n.lock.clone(),
                workload: n.workload.clone(),
                threads: n.threads,
                ncs_ns: n.ncs_ns,
                old_mlocks_per_s: o.mlocks_per_s,
                new_mlocks_per_s: n.mlocks_per_s,
                ratio,
                ratio_sd,
                verdict,
            })
        })
        .collect()
}

/// "3 faster, 1 slower, 12 within noise (of 16 points in both runs)".
pub fn verdict_line(rows: &[CompareRow]) -> String {
    let count = |v: Verdict| rows.iter().filter(|r| r.verdict == v).count();
    format!(
        "{} faster, {} slower, {} within noise, {} without spread (of {} point{} in both runs; a difference counts beyond 2 combined standard deviations)\n",
        count(Verdict::Faster),
        count(Verdict::Slower),
        count(Verdict::WithinNoise),
        count(Verdict::OneRun),
        rows.len(),
        if rows.len() == 1 { "" } else { "s" }
    )
}

/// Runs `ron compare`.
pub fn run(args: Args) -> CliResult {
    let old = read_rows(&args.old)?;
    let new = read_rows(&args.new)?;
    let rows = compare(&old, &new);
    let (old_name, new_name) = (
        args.old.display().to_string(),
        args.new.display().to_string(),
    );
    if rows.is_empty() {
        return Err(nothing_in_common(&old_name, &new_name));
    }
    if let Some(note) = unmatched_note(&old_name, &old, &new_name, &new) {
        eprintln!("{note}");
    }
    let head = format!(
        "{} (old) -> {} (new)\n",
        args.old.display(),
        args.new.display()
    );
    let text = output::render(args.format, &head, &rows, &verdict_line(&rows), &rows)?;
    output::stdout(&text)
}
