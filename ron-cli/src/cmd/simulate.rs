//! `ron simulate`: replays lock admission policies on a recorded latency
//! matrix (see `ron_sim` for the model and its limits).
//!
//! The route is solved with `ron_topo::tsp::solve` under a fixed iteration
//! count (deterministic for `--route-seed`); the simulations are
//! deterministic for `--seed`. Every (threads, nCS) pair also runs FIFO, the
//! baseline of the `x fifo` ratio columns, even when FIFO is not listed.

use std::path::PathBuf;

use ron_sim::{
    Costs, CpuSelection, PolicyKind, PolicyParams, SimConfig, SimError, Simulator, groups,
};
use ron_stats::ratio;
use ron_topo::{SolveOptions, tsp};

use crate::args;
use crate::error::{CliError, CliResult};
use crate::output::{self, Format};
use crate::progress;
use crate::rows::SimRow;

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
    /// Latency matrix: CSV (no header, row = from-CPU, ns), ron-topo JSON
    /// or a calibration file (`.json`).
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
    /// Simulated time per run (seconds, or with a unit: 20ms); the first
    /// 10% is warm-up.
    #[arg(long, default_value = "20ms", value_name = "DURATION")]
    pub duration: String,
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
    /// Route solver: wall-clock cap (seconds, or with a unit; only binds on
    /// slow machines).
    #[arg(long, default_value = "10s", value_name = "DURATION")]
    pub time_limit: String,
    /// Route solver seed.
    #[arg(long, default_value_t = 0x5eed)]
    pub route_seed: u64,
    /// Name of the matrix in the output (default: the file stem).
    #[arg(long)]
    pub label: Option<String>,
    /// Format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Runs `ron simulate`.
pub fn run(args: Args) -> CliResult {
    if !(args.cs.is_finite() && args.cs > 0.0) {
        return Err(CliError::usage(format!(
            "--cs: must be a number of ns above 0, got {}",
            args.cs
        )));
    }
    for (flag, v) in [
        ("--cna-threshold", args.cna_threshold),
        ("--cohort-threshold", args.cohort_threshold),
        ("--cohort-group-size", args.cohort_group_size.unwrap_or(1)),
        ("--route-iterations", args.route_iterations),
    ] {
        if v == 0 {
            return Err(CliError::usage(format!(
                "{flag}: must be at least 1, got 0"
            )));
        }
    }
    if !(args.ttas_jitter.is_finite() && args.ttas_jitter >= 0.0) {
        return Err(CliError::usage(format!(
            "--ttas-jitter: must be a number >= 0, got {}",
            args.ttas_jitter
        )));
    }
    let matrix = args::read_matrix(&args.matrix)?;
    let n = matrix.n();
    let costs: Costs = matrix.clone();
    let policies = PolicyKind::parse_list(&args.policies).map_err(usage)?;
    let threads = parse_threads(&args.threads, n)?;
    let ncs_list: Vec<f64> = args::ncs_list("--ncs", &args.ncs)?
        .into_iter()
        .map(|n| n.ns(args.cs))
        .collect();
    let duration = args::duration("--duration", &args.duration, false)?;
    let time_limit = args::duration("--time-limit", &args.time_limit, false)?;
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
            time_limit,
            seed: args.route_seed,
            max_iterations: Some(args.route_iterations.into()),
            ..SolveOptions::default()
        },
    );
    let sim = Simulator::new(costs, route.order.clone()).map_err(failed)?;

    let mut rows = Vec::new();
    let total = threads.len() * ncs_list.len() * policies.len();
    // The run time grows with the matrix and the thread count: show the
    // bar whenever the work is not tiny.
    let pb = progress::bar(
        total as u64,
        std::time::Duration::from_secs(if n * total > 64 { 2 } else { 0 }),
        "simulate",
    );
    for &t in &threads {
        for &ncs in &ncs_list {
            pb.set_message(format!("{t} threads, nCS {ncs:.0} ns"));
            let config = SimConfig {
                threads: t,
                cpus: match args.cpus {
                    Cpus::First => CpuSelection::First,
                    Cpus::Random => CpuSelection::Random(args.seed),
                },
                cs_ns: args.cs,
                ncs_ns: ncs,
                duration_ns: duration.as_secs_f64() * 1e9,
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
                pb.inc(1);
                rows.push(SimRow {
                    throughput_vs_fifo: ratio(report.throughput_per_s, fifo.throughput_per_s),
                    handover_vs_fifo: ratio(report.handover_mean_ns, fifo.handover_mean_ns),
                    report,
                });
            }
        }
    }

    pb.finish_and_clear();
    let head = if args.format == Format::Table {
        let c = sim.costs();
        let identity: Vec<usize> = (0..n).collect();
        format!(
            "matrix {label}: {n} CPU{}; groups (near = under 3/4 of the median pair): {}; per handover: FIFO mean {:.1} ns, route {:.1} ns, identity order {:.1} ns (full lap / n)\nCS {} ns, {} simulated per run, seed {}, threads on {}\n\n",
            if n == 1 { "" } else { "s" },
            group_summary(sim.groups()),
            c.fifo_mean(),
            route.cost / n as f64,
            c.tour_cost(&identity) / n as f64,
            args.cs,
            args::show_duration(duration),
            args.seed,
            match args.cpus {
                Cpus::First => "the first CPUs of the matrix",
                Cpus::Random => "CPUs drawn at random",
            },
        )
    } else {
        String::new()
    };
    let text = output::render(args.format, &head, &rows, "", &rows)?;
    output::stdout(&text)
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

fn parse_threads(s: &str, n: usize) -> Result<Vec<usize>, CliError> {
    let mut out = Vec::new();
    for part in args::entries("--threads", s)? {
        let t = if part.eq_ignore_ascii_case("all") {
            n
        } else {
            part.parse::<usize>().map_err(|_| {
                CliError::usage(format!(
                    "--threads: must be thread counts or `all`, got `{part}`"
                ))
            })?
        };
        if t == 0 || t > n {
            return Err(CliError::usage(format!(
                "--threads: must be in 1..={n} on this {n}-CPU matrix, got {t}"
            )));
        }
        if !out.contains(&t) {
            out.push(t);
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

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
