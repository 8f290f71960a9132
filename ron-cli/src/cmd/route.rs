//! `ron route`: solve a route for any latency matrix.

use std::path::PathBuf;

use ron_stats::ratio;
use ron_topo::{SolveOptions, tsp};
use serde::Serialize;

use crate::args;
use crate::error::CliResult;
use crate::output::{self, Format, json};

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
        Format::Table => {
            let mut t = format!(
                "matrix   {} ({n} CPU{})\nroute    {}\ncost     {:.1} ns per lap ({:.1} ns per handover)\n",
                args.matrix.display(),
                if n == 1 { "" } else { "s" },
                wrap(&out.route, "         "),
                out.cost,
                out.cost_per_handover,
            );
            let vs = |r: Option<f64>| {
                r.map_or_else(
                    || "no ratio: a zero cost".to_string(),
                    |r| format!("route = {r:.2}x"),
                )
            };
            if n == 1 {
                t.push_str("(one CPU: no handover between CPUs, nothing to compare)\n");
            } else {
                t.push_str(&format!(
                    "identity {:.1} ns per lap ({:.1} ns per handover; {})\nfifo     {:.1} ns per handover (mean off-diagonal; {})\n",
                    out.identity_cost,
                    out.identity_cost / n as f64,
                    vs(ratio(out.cost, out.identity_cost)),
                    out.fifo_mean,
                    vs(ratio(out.cost_per_handover, out.fifo_mean)),
                ));
            }
            t
        }
    };
    output::stdout(&text)
}

/// `a,b,c`, broken after a comma into lines of at most 72 characters,
/// each continuation line starting with `indent`.
pub fn wrap(v: &[usize], indent: &str) -> String {
    let mut out = String::new();
    let mut line = 0;
    for (i, c) in v.iter().enumerate() {
        let item = if i + 1 < v.len() {
            format!("{c},")
        } else {
            c.to_string()
        };
        if line > 0 && line + item.len() > 72 - indent.len() {
            out.push('\n');
            out.push_str(indent);
            line = 0;
        }
        line += item.len();
        out.push_str(&item);
    }
    out
}
