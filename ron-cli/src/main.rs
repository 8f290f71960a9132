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

use clap::error::{ContextKind, ContextValue, ErrorKind};
use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

/// Where the virtual many-core machine lives and how to build it.
const AFTER_HELP: &str = "\
The virtual many-core machine (the real locks on hundreds of simulated CPUs,
priced by a recorded latency matrix) is a separate tool in the vm/ workspace:
build it with `(cd vm && cargo build --release)` from the checkout's root,
then run `vm/target/release/ron-vm-bench --help`.";

/// Topology-routed spinlocks: calibration, routing, benchmarks and simulation.
#[derive(Parser, Debug)]
#[command(name = "ron", version, about, long_about = None, after_help = AFTER_HELP)]
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

/// The clap command tree (for parsing, completions and the man page).
///
/// Option values may start with `-` (`--duration -1`, `--ncs -5`), so that
/// a negative number reaches the option's own check and its one-line
/// message instead of reading as an unknown option; file options and
/// positional arguments keep clap's default.
pub fn command() -> clap::Command {
    Cli::command().mut_subcommands(|sub| {
        sub.mut_args(|a| {
            let file = a
                .get_value_names()
                .is_some_and(|n| n.iter().any(|v| *v == "FILE" || *v == "DIR"));
            if a.get_action().takes_values() && !a.is_positional() && !file {
                a.allow_hyphen_values(true)
            } else {
                a
            }
        })
    })
}

/// Parses the command line: help and version print as clap prints them;
/// any other mistake is one `error:` line and exit code 2.
fn parse() -> Cli {
    command()
        .try_get_matches()
        .and_then(|m| Cli::from_arg_matches(&m))
        .unwrap_or_else(|e| match e.kind() {
            ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand => e.exit(),
            _ => {
                eprintln!("error: {}", usage_line(&e));
                std::process::exit(2);
            }
        })
}

/// A clap error as `--OPTION: what is wrong, got VALUE`.
fn usage_line(e: &clap::Error) -> String {
    let ctx = |k: ContextKind| match e.get(k) {
        Some(ContextValue::String(s)) => Some(s.clone()),
        Some(ContextValue::Strings(v)) => Some(v.join(", ")),
        Some(other) => Some(other.to_string()),
        None => None,
    };
    // "--format <FORMAT>" -> "--format".
    let arg = ctx(ContextKind::InvalidArg)
        .map(|a| a.split(' ').next().unwrap_or_default().to_string())
        .unwrap_or_default();
    let value = ctx(ContextKind::InvalidValue).unwrap_or_default();
    let shown = if value.is_empty() {
        "nothing".to_string()
    } else {
        format!("`{value}`")
    };
    match e.kind() {
        ErrorKind::InvalidValue => match ctx(ContextKind::ValidValue) {
            Some(valid) if !value.is_empty() => {
                format!("{arg}: must be one of {valid}, got {shown}")
            }
            _ => format!("{arg}: needs a value, got {shown}"),
        },
        ErrorKind::ValueValidation => {
            let why = std::error::Error::source(e).map(|s| s.to_string());
            let what = match why.as_deref() {
                Some("invalid digit found in string") => "must be a whole number".to_string(),
                Some("number too large to fit in target type") => "is too large".to_string(),
                Some("invalid float literal") => "must be a number".to_string(),
                Some(w) if w.contains(" is not in ") => {
                    let range = w.split(" is not in ").nth(1).unwrap_or_default();
                    format!("must be a whole number in {range}")
                }
                Some(w) => w.to_string(),
                None => "invalid value".to_string(),
            };
            format!("{arg}: {what}, got {shown}")
        }
        ErrorKind::UnknownArgument => match ctx(ContextKind::SuggestedArg) {
            Some(s) => format!("{arg}: no such option (did you mean {s}?)"),
            None => format!("{arg}: no such option (see --help)"),
        },
        ErrorKind::InvalidSubcommand => {
            let sub = ctx(ContextKind::InvalidSubcommand).unwrap_or_default();
            format!("{sub}: no such command (see `ron --help`)")
        }
        ErrorKind::MissingRequiredArgument => {
            format!("missing {} (see --help)", arg_list(e))
        }
        ErrorKind::ArgumentConflict => {
            let prior = ctx(ContextKind::PriorArg)
                .map(|a| a.split(' ').next().unwrap_or_default().to_string())
                .unwrap_or_default();
            format!("{arg}: cannot be used with {prior}; give one of them")
        }
        _ => {
            let text = e.render().to_string();
            let first = text.lines().next().unwrap_or_default();
            first.strip_prefix("error: ").unwrap_or(first).to_string()
        }
    }
}

/// The arguments a clap error names, without their value names.
fn arg_list(e: &clap::Error) -> String {
    match e.get(ContextKind::InvalidArg) {
        Some(ContextValue::Strings(v)) => v.join(", "),
        Some(ContextValue::String(s)) => s.clone(),
        _ => "an argument".into(),
    }
}

fn main() {
    restore_sigpipe();
    let cli = parse();
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
