//! `ron route`: solve a route for any latency matrix.

use std::path::PathBuf;

use ron_topo::{SolveOptions, tsp};
use serde::Serialize;

use crate::args;
use crate::error::{CliError, CliResult};

/// Output format.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Human-readable summary.
    Table,
    /// One JSON object: route, cost, identity_cost, fifo_mean, ...
    Json,
}

/// Arguments of `ron route`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Latency matrix: CSV (no header, row = from-CPU, ns) or ron-topo JSON
    /// (`.json`).
    #[arg(long, value_name = "FILE")]
    pub matrix: PathBuf,
    /// Solver wall-clock budget in seconds.
    #[arg(long, default_value_t = 1.0, value_name = "S")]
    pub time_limit: f64,
    /// Solver seed.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Stop after this many local-search iterations (reproducible routes).
    #[arg(long, value_name = "N")]
    pub iterations: Option<u64>,
    /// Output format.
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
    let time_limit = args::seconds("--time-limit", args.time_limit, false)?;
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
    match args.format {
        Format::Json => {
            let s = serde_json::to_string_pretty(&out)
                .map_err(|e| CliError::failed(format!("cannot encode JSON: {e}")))?;
            println!("{s}");
        }
        Format::Table => {
            println!("matrix   {} ({n} CPUs)", args.matrix.display());
            println!("route    {}", join(&out.route));
            println!(
                "cost     {:.1} ns per lap ({:.1} ns per handover)",
                out.cost, out.cost_per_handover
            );
            println!(
                "identity {:.1} ns per lap ({:.1} ns per handover; route = {:.2}x)",
                out.identity_cost,
                out.identity_cost / n as f64,
                ratio(out.cost, out.identity_cost)
            );
            println!(
                "fifo     {:.1} ns per handover (mean off-diagonal; route = {:.2}x)",
                out.fifo_mean,
                ratio(out.cost_per_handover, out.fifo_mean)
            );
        }
    }
    Ok(())
}

fn ratio(a: f64, b: f64) -> f64 {
    if b > 0.0 { a / b } else { f64::NAN }
}

/// `a,b,c`.
pub fn join(v: &[usize]) -> String {
    v.iter().map(usize::to_string).collect::<Vec<_>>().join(",")
}
