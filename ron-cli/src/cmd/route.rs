//! `ron route`: solve a route for any latency matrix.

use std::path::PathBuf;

use ron_bench::report::ratio;
use ron_topo::{SolveOptions, tsp};
use serde::Serialize;

use crate::args;
use crate::error::CliResult;
use crate::output::{self, Format, json, table::opt};

/// Arguments of `ron route`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Latency matrix: CSV (no header, row = from-CPU, ns), ron-topo JSON
    /// or a calibration file (`.json`).
    #[arg(long, value_name = "FILE")]
    pub matrix: PathBuf,
    /// Solver wall-clock budget (seconds, or with a unit: 500ms).
    #[arg(long, default_value = "1s", value_name = "DURATION")]
    pub time_limit: String,
    /// Solver seed.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Stop after this many local-search iterations (reproducible routes).
    #[arg(long, value_name = "N")]
    pub iterations: Option<u64>,
    /// Format on stdout (CSV: one line per route position).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// The JSON output of `ron route` (stable field names).
#[derive(Serialize, Debug)]
pub struct RouteOut {
    /// The route as CPU ids in tour order.
    pub route: Vec<usize>,
    /// The route as matrix indices.
    pub order: Vec<usize>,
    /// Tour cost (ns per lap).
    pub cost: f64,
    /// Cost of the identity order 0, 1, .., n-1 (ns per lap).
    pub identity_cost: f64,
    /// Mean off-diagonal latency: a FIFO handover's expected cost (ns).
    pub fifo_mean: f64,
    /// Number of CPUs.
    pub n: usize,
    /// `cost / n`: the mean handover along the route (ns).
    pub cost_per_handover: f64,
}

/// Runs `ron route`.
pub fn run(args: Args) -> CliResult {
    let time_limit = args::duration("--time-limit", &args.time_limit, false)?;
    let m = args::read_matrix(&args.matrix)?;
    let route = tsp::solve(
        &m,
        &SolveOptions {
            time_limit,
            seed: args.seed,
            max_iterations: args.iterations,
            ..SolveOptions::default()
        },
    );
    let n = m.n();
    let out = RouteOut {
        route: route.cpu_ids(&m),
        order: route.order.clone(),
        cost: route.cost,
        identity_cost: m.identity_cost(),
        fifo_mean: m.fifo_mean(),
        n,
        cost_per_handover: route.cost / n as f64,
    };
    let text = match args.format {
        Format::Json => json::pretty(&out)?,
        Format::Csv => output::csv::document(
            &["position", "cpu", "next_cpu", "hop_ns"],
            (0..n).map(|k| {
                let (a, b) = (route.order[k], route.order[(k + 1) % n]);
                vec![
                    k.to_string(),
                    m.cpus()[a].to_string(),
                    m.cpus()[b].to_string(),
                    m.get(a, b).to_string(),
                ]
            }),
        ),
        Format::Table => format!(
            "matrix   {} ({n} CPU{})\nroute    {}\ncost     {:.1} ns per lap ({:.1} ns per handover)\nidentity {:.1} ns per lap ({:.1} ns per handover; route = {}x)\nfifo     {:.1} ns per handover (mean off-diagonal; route = {}x)\n",
            args.matrix.display(),
            if n == 1 { "" } else { "s" },
            join(&out.route),
            out.cost,
            out.cost_per_handover,
            out.identity_cost,
            out.identity_cost / n as f64,
            opt(ratio(out.cost, out.identity_cost), 2),
            out.fifo_mean,
            opt(ratio(out.cost_per_handover, out.fifo_mean), 2),
        ),
    };
    output::stdout(&text)
}

/// `a,b,c`.
pub fn join(v: &[usize]) -> String {
    v.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}
