//! `ron`: calibrate a machine, solve lock routes, inspect the topology,
//! benchmark locks, compare benchmark runs, simulate lock policies on
//! recorded latency matrices and draw the results.

mod args;
mod cmd;
mod error;
mod input;
mod output;
mod progress;
mod rows;

use clap::{CommandFactory, Parser, Subcommand};

/// Topology-routed spinlocks: calibration, routing, benchmarks and simulation.
#[derive(Parser, Debug)]
#[command(name = "ron", version, about, long_about = None)]
pub struct Cli {
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
    /// Compare two `ron bench` runs point by point.
    Compare(cmd::compare::Args),
    /// Replay lock admission policies on a recorded latency matrix.
    Simulate(cmd::simulate::Args),
    /// Draw benchmark curves or a latency heatmap with its route.
    Plot(cmd::plot::Args),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell).
    Completions(cmd::completions::Args),
    /// Print the man page (roff), or write one page per subcommand to a
    /// directory.
    Man(cmd::completions::ManArgs),
}

/// The clap command tree (for completions and the man page).
pub fn command() -> clap::Command {
    Cli::command()
}

fn main() {
    restore_sigpipe();
    let cli = Cli::parse();
    let result = match cli.command {
        Command::Topo(a) => cmd::topo::run(a),
        Command::Calibrate(a) => cmd::calibrate::run(a),
        Command::Route(a) => cmd::route::run(a),
        Command::Bench(a) => cmd::bench::run(a),
        Command::Compare(a) => cmd::compare::run(a),
        Command::Simulate(a) => cmd::simulate::run(a),
        Command::Plot(a) => cmd::plot::run(a),
        Command::Completions(a) => cmd::completions::run(a),
        Command::Man(a) => cmd::completions::run_man(a),
    };
    if let Err(e) = result {
        if !e.message().is_empty() {
            eprintln!("error: {e}");
        }
        std::process::exit(e.exit_code());
    }
}

/// Lets a closed pipe end the process quietly, as `cat`, `ls` and `grep`
/// do (`ron bench --list | head -1`). Rust ignores SIGPIPE by default, so
/// a write to a closed pipe returns an error and `println!` panics.
fn restore_sigpipe() {
    #[cfg(unix)]
    // SAFETY: called first thing in `main`, before any other thread exists;
    // setting a signal's disposition to the default has no other effect on
    // this process's memory.
    unsafe {
        libc::signal(libc::SIGPIPE, libc::SIG_DFL);
    }
}
