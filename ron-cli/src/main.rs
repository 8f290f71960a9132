//! `ron`: calibrate a machine, solve lock routes, inspect the topology,
//! benchmark locks and simulate lock policies on recorded latency matrices.

mod args;
mod cmd;
mod error;
mod progress;

use clap::{Parser, Subcommand};

/// Topology-routed spinlocks: calibration, routing, benchmarks and simulation.
#[derive(Parser, Debug)]
#[command(name = "ron", version, about, long_about = None)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand, Debug)]
enum Command {
    /// Print the topology tree and the current route, one line per CPU.
    Topo(cmd::topo::Args),
    /// Probe core-to-core latency, solve the route and write the calibration file.
    Calibrate(cmd::calibrate::Args),
    /// Solve a route for a latency matrix.
    Route(cmd::route::Args),
    /// Run the lock microbenchmarks and workloads.
    Bench(cmd::bench::Args),
    /// Replay lock admission policies on a recorded latency matrix.
    Simulate(cmd::simulate::Args),
    /// Draw benchmark curves or a latency heatmap with its route.
    Plot(cmd::plot::Args),
}

fn main() {
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Topo(a) => cmd::topo::run(a),
        Command::Calibrate(a) => cmd::calibrate::run(a),
        Command::Route(a) => cmd::route::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Simulate(a) => cmd::simulate::run(a),
        Command::Plot(a) => cmd::plot::run(a),
    };
    if let Err(e) = result {
        eprintln!("ron: error: {e}");
        std::process::exit(e.exit_code());
    }
}
