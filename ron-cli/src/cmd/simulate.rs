//! `ron simulate`: replays lock admission policies on a recorded latency
//! matrix (see `ron_bench::sim` for the model and its limits).
//!
//! The route is solved with `ron_topo::tsp::solve` under a fixed iteration
//! count (deterministic for `--route-seed`); the simulations are
//! deterministic for `--seed`. Every (threads, nCS) pair also runs FIFO, the
//! baseline of the `x fifo` ratio columns, even when FIFO is not listed.

use std::path::PathBuf;
use std::time::Duration;

use ron_bench::sim::{
    Costs, CpuSelection, PolicyKind, PolicyParams, SimConfig, SimError, SimReport, Simulator,
    groups,
};
use ron_topo::{LatencyMatrix, SolveOptions, tsp};
use serde::Serialize;

use crate::error::{CliError, CliResult};

/// Output format of `ron simulate`.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned table for people, with a header describing the matrix.
    Table,
    /// One CSV line per row, with a header line.
    Csv,
    /// A JSON array of rows (stable field names; `ron plot` reads it).
    Json,
}

/// Where the threads run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Cpus {
    /// CPUs `0..T` in the matrix's (OS) order.
    First,
    /// `T` CPUs drawn at random with `--seed`.
    Random,
}

/// Arguments of `ron simulate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Latency matrix: CSV (no header, row = from-CPU, ns) or ron-topo JSON
    /// (`.json`).
    #[arg(long, value_name = "FILE")]
    pub matrix: PathBuf,
    /// Policies to run, comma-separated: fifo, ttas, cna, cohort, ron,
    /// ron-identity, or all.
    #[arg(long, default_value = "all", value_name = "LIST")]
    pub policies: String,
    /// Thread counts, comma-separated; `all` = every CPU of the matrix.
    #[arg(long, default_value = "all", value_name = "LIST")]
    pub threads: String,
    /// Which CPUs the threads run on.
    #[arg(long, value_enum, default_value_t = Cpus::First)]
    pub cpus: Cpus,
    /// Critical section in ns (the handover cost comes on top).
    #[arg(long, default_value_t = 100.0, value_name = "NS")]
    pub cs: f64,
    /// Non-critical sections, comma-separated: ns, or a multiple of CS with
    /// an `x` suffix (`40x` = 40 * CS). Each is jittered +-15%.
    #[arg(long, default_value = "1x,4x,10x,40x", value_name = "LIST")]
    pub ncs: String,
    /// Simulated time per run in ms (the first 10% is warm-up).
    #[arg(long, default_value_t = 20.0, value_name = "MS")]
    pub duration_ms: f64,
    /// Seed of the timing jitter, TTAS races and `--cpus random`.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// CNA: consecutive same-group handovers before the secondary queue
    /// goes first.
    #[arg(long, default_value_t = 64)]
    pub cna_threshold: u32,
    /// Cohort/FSL: consecutive admissions in one group before the lock
    /// moves to the next group.
    #[arg(long, default_value_t = 64)]
    pub cohort_threshold: u32,
    /// Cohort/FSL group size: arcs of this many CPUs along the route
    /// (default: the groups derived from the matrix).
    #[arg(long, value_name = "CPUS")]
    pub cohort_group_size: Option<u32>,
    /// TTAS race jitter (0 = the nearest waiter always wins).
    #[arg(long, default_value_t = 1.0)]
    pub ttas_jitter: f64,
    /// Route solver: local-search iterations (fixed, for reproducible
    /// routes).
    #[arg(long, default_value_t = 20_000)]
    pub route_iterations: u32,
    /// Route solver: wall-clock cap in ms (only binds on slow machines).
    #[arg(long, default_value_t = 10_000)]
    pub route_ms: u32,
    /// Route solver seed.
    #[arg(long, default_value_t = 0x5eed)]
    pub route_seed: u64,
    /// Name of the matrix in the output (default: the file stem).
    #[arg(long)]
    pub label: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// One output row: a [`SimReport`] plus its ratios to FIFO.
#[derive(Serialize, Debug)]
struct Row {
    #[serde(flatten)]
    report: SimReport,
    /// throughput / FIFO's throughput at the same threads and nCS.
    throughput_vs_fifo: f64,
    /// handover mean / FIFO's handover mean at the same threads and nCS.
    handover_vs_fifo: f64,
}

/// Runs `ron simulate`.
pub fn run(args: Args) -> CliResult {
    let matrix = read_matrix(&args.matrix)?;
    let n = matrix.n();
    let costs: Costs = matrix.clone();
    let policies = PolicyKind::parse_list(&args.policies).map_err(usage)?;
    let threads = parse_threads(&args.threads, n)?;
    if !(args.cs.is_finite() && args.cs > 0.0) {
        return Err(CliError::usage("--cs must be a number of ns > 0"));
    }
    let ncs_list = parse_ncs(&args.ncs, args.cs)?;
    if !(args.duration_ms.is_finite() && args.duration_ms > 0.0) {
        return Err(CliError::usage("--duration-ms must be a number > 0"));
    }
    let params = PolicyParams {
        cna_threshold: args.cna_threshold,
        cohort_threshold: args.cohort_threshold,
        cohort_group_size: args.cohort_group_size.map(|k| k as usize),
        ttas_jitter: args.ttas_jitter,
    };
    params.validate().map_err(usage)?;
    let label = args.label.clone().unwrap_or_else(|| {
        args.matrix
            .file_stem()
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_default()
    });

    let route = tsp::solve(
        &matrix,
        &SolveOptions {
            time_limit: Duration::from_millis(args.route_ms.into()),
            seed: args.route_seed,
            max_iterations: Some(args.route_iterations.into()),
            ..SolveOptions::default()
        },
    );
    let sim = Simulator::new(costs, route.order.clone()).map_err(failed)?;

    let mut rows = Vec::new();
    for &t in &threads {
        for &ncs in &ncs_list {
            let config = SimConfig {
                threads: t,
                cpus: match args.cpus {
                    Cpus::First => CpuSelection::First,
                    Cpus::Random => CpuSelection::Random(args.seed),
                },
                cs_ns: args.cs,
                ncs_ns: ncs,
                duration_ns: args.duration_ms * 1e6,
                warmup_fraction: 0.1,
                seed: args.seed,
                params: params.clone(),
            };
            let fifo = sim.run(PolicyKind::Fifo, &config).map_err(usage)?;
            for &kind in &policies {
                let mut report = if kind == PolicyKind::Fifo {
                    fifo.clone()
                } else {
                    sim.run(kind, &config).map_err(usage)?
                };
                report.matrix = label.clone();
                rows.push(Row {
                    throughput_vs_fifo: ratio(report.throughput_per_s, fifo.throughput_per_s),
                    handover_vs_fifo: ratio(report.handover_mean_ns, fifo.handover_mean_ns),
                    report,
                });
            }
        }
    }

    match args.format {
        Format::Json => {
            let text = serde_json::to_string_pretty(&rows)
                .map_err(|e| CliError::failed(format!("cannot write JSON: {e}")))?;
            println!("{text}");
        }
        Format::Csv => print_csv(&rows),
        Format::Table => {
            let c = sim.costs();
            let identity: Vec<usize> = (0..n).collect();
            println!(
                "matrix {label}: {n} CPUs; groups (near = under 3/4 of the median pair): {}; per handover: FIFO mean {:.1} ns, route {:.1} ns, identity order {:.1} ns (full lap / n)",
                group_summary(sim.groups()),
                c.fifo_mean(),
                route.cost / n as f64,
                c.tour_cost(&identity) / n as f64,
            );
            println!(
                "CS {} ns, {} ms simulated per run, seed {}, CPUs: {:?}",
                args.cs, args.duration_ms, args.seed, args.cpus
            );
            println!();
            print_table(&rows);
        }
    }
    Ok(())
}

/// "3 groups: 2 x 4 + 1 x 2" style summary of a group vector.
fn group_summary(g: &[usize]) -> String {
    let mut sizes = vec![0usize; groups::count(g)];
    for &x in g {
        sizes[x] += 1;
    }
    sizes.sort_unstable_by(|a, b| b.cmp(a));
    let mut parts: Vec<String> = Vec::new();
    let mut i = 0;
    while i < sizes.len() {
        let same = sizes[i..].iter().take_while(|&&s| s == sizes[i]).count();
        parts.push(format!("{same} x {}", sizes[i]));
        i += same;
    }
    format!("{} ({})", sizes.len(), parts.join(" + "))
}

fn usage(e: SimError) -> CliError {
    CliError::usage(e.to_string())
}

fn failed(e: SimError) -> CliError {
    CliError::failed(e.to_string())
}

fn ratio(a: f64, b: f64) -> f64 {
    if b == 0.0 { f64::NAN } else { a / b }
}

fn read_matrix(path: &PathBuf) -> Result<LatencyMatrix, CliError> {
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let m = if is_json {
        LatencyMatrix::read_json(path)
    } else {
        LatencyMatrix::read_csv(path)
    };
    m.map_err(|e| {
        let (msg, shown) = (e.to_string(), path.display().to_string());
        if msg.contains(&shown) {
            CliError::usage(msg)
        } else {
            CliError::usage(format!("{shown}: {msg}"))
        }
    })
}

fn parse_threads(s: &str, n: usize) -> Result<Vec<usize>, CliError> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let t = if part.eq_ignore_ascii_case("all") {
            n
        } else {
            part.parse::<usize>().map_err(|_| {
                CliError::usage(format!("--threads: `{part}` is not a thread count"))
            })?
        };
        if t == 0 || t > n {
            return Err(CliError::usage(format!(
                "--threads: {t} threads on a {n}-CPU matrix (use 1..={n})"
            )));
        }
        if !out.contains(&t) {
            out.push(t);
        }
    }
    if out.is_empty() {
        return Err(CliError::usage("--threads: no thread count given"));
    }
    Ok(out)
}

fn parse_ncs(s: &str, cs: f64) -> Result<Vec<f64>, CliError> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || {
            CliError::usage(format!(
                "--ncs: `{part}` is neither ns nor a multiple like 40x"
            ))
        };
        let v = match part.strip_suffix(['x', 'X']) {
            Some(m) => m.trim().parse::<f64>().map_err(|_| bad())? * cs,
            None => part.parse::<f64>().map_err(|_| bad())?,
        };
        if !(v.is_finite() && v >= 0.0) {
            return Err(bad());
        }
        out.push(v);
    }
    if out.is_empty() {
        return Err(CliError::usage("--ncs: no value given"));
    }
    Ok(out)
}

/// The CSV/table columns (JSON has these and the per-thread counts).
const COLUMNS: [&str; 15] = [
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
];

fn print_csv(rows: &[Row]) {
    println!("{}", COLUMNS.join(","));
    for r in rows {
        let p = &r.report;
        println!(
            "{},{},{},{},{},{:.0},{:.4},{:.2},{:.4},{:.2},{:.1},{:.4},{:.4},{:.4},{}",
            p.matrix,
            p.policy,
            p.threads,
            p.cs_ns,
            p.ncs_ns,
            p.throughput_per_s,
            r.throughput_vs_fifo,
            p.handover_mean_ns,
            r.handover_vs_fifo,
            p.handover_p99_ns,
            p.wait_mean_ns,
            p.direct_share,
            p.fairness_factor,
            p.cv,
            p.admissions
        );
    }
}

fn print_table(rows: &[Row]) {
    let header = [
        "policy",
        "threads",
        "ncs_ns",
        "Mlocks/s",
        "x fifo",
        "handover ns",
        "x fifo",
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
                format!("{:.2}", r.throughput_vs_fifo),
                format!("{:.1}", p.handover_mean_ns),
                format!("{:.2}", r.handover_vs_fifo),
                format!("{:.1}", p.handover_p99_ns),
                format!("{:.0}", p.wait_mean_ns),
                format!("{:.3}", p.fairness_factor),
                format!("{:.3}", p.cv),
            ]
        })
        .collect();
    let mut width: Vec<usize> = header.iter().map(|h| h.len()).collect();
    for row in &cells {
        for (w, c) in width.iter_mut().zip(row) {
            *w = (*w).max(c.len());
        }
    }
    let line = |row: Vec<&str>| {
        let parts: Vec<String> = row
            .iter()
            .zip(&width)
            .enumerate()
            .map(|(i, (c, w))| {
                if i == 0 {
                    format!("{c:<w$}")
                } else {
                    format!("{c:>w$}")
                }
            })
            .collect();
        println!("| {} |", parts.join(" | "));
    };
    line(header.to_vec());
    let sep: Vec<String> = width
        .iter()
        .enumerate()
        .map(|(i, w)| {
            if i == 0 {
                "-".repeat(*w)
            } else {
                format!("{}:", "-".repeat(w.saturating_sub(1)))
            }
        })
        .collect();
    let sep: Vec<String> = sep.iter().map(|s| format!(" {s} ")).collect();
    println!("|{}|", sep.join("|"));
    for row in &cells {
        line(row.iter().map(String::as_str).collect());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ncs_takes_ns_and_multiples_of_cs() {
        assert_eq!(
            parse_ncs("0, 250,2x,40X", 100.0).unwrap(),
            vec![0.0, 250.0, 200.0, 4000.0]
        );
        for bad in ["", "x", "-1", "abc", "nanx", "inf"] {
            assert!(parse_ncs(bad, 100.0).is_err(), "{bad}");
        }
    }

    #[test]
    fn threads_take_counts_and_all() {
        assert_eq!(parse_threads("4,all,4", 16).unwrap(), vec![4, 16]);
        for bad in ["", "0", "17", "four"] {
            assert!(parse_threads(bad, 16).is_err(), "{bad}");
        }
    }

    #[test]
    fn group_sizes_are_summarized() {
        assert_eq!(group_summary(&[0, 0, 1, 1, 2]), "3 (2 x 2 + 1 x 1)");
    }
}
