//! `ron bench`: the lock microbenchmark grid, the key-value workload and
//! the co-runner cost (see `ron_bench` for what each measures).

use std::path::PathBuf;
use std::time::Duration;

use ron_bench::grid::{Grid, LoopWorkload, run_corunner};
use ron_bench::pin::Pinning;
use ron_bench::registry::{self, LockKind};
use ron_bench::report;
use ron_bench::workload::MAX_THREADS;
use ron_bench::workload::corunner;
use ron_bench::{BenchError, clock};

use crate::args;
use crate::error::{CliError, CliResult};
use crate::progress;

/// Output format.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned table with ratio columns.
    Table,
    /// CSV with a header line.
    Csv,
    /// A JSON array of rows (stable field names).
    Json,
}

/// Which workload to run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// lock; read+write K cache lines; unlock; busy-wait nCS.
    Micro,
    /// A BTreeMap of 1024 keys under one lock: 80% lookups, 20% updates.
    Kv,
    /// A compute thread sharing its CPU with W waiters: its slowdown per
    /// waiting policy.
    Corunner,
}

/// Thread placement.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pin {
    /// Pin thread i round-robin along the installed route.
    Route,
    /// Let the scheduler place threads.
    None,
}

/// Arguments of `ron bench`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print every lock name (and co-runner policy) and exit.
    #[arg(long)]
    pub list: bool,
    /// Workload.
    #[arg(long, value_enum, default_value_t = Workload::Micro)]
    pub workload: Workload,
    /// Locks, comma-separated (`all`, `default`, or names from `--list`).
    #[arg(long, default_value = "default", value_name = "LIST")]
    pub locks: String,
    /// Thread counts, comma-separated.
    #[arg(long, default_value = "1,2,8,32", value_name = "LIST")]
    pub threads: String,
    /// Mean non-critical sections in ns, comma-separated (+-15% jitter).
    #[arg(long, default_value = "0,1000", value_name = "LIST")]
    pub ncs: String,
    /// Cache lines read and written in each critical section (micro).
    #[arg(long, default_value_t = 2, value_name = "K")]
    pub cs_lines: usize,
    /// Measured seconds per point (co-runner: per phase).
    #[arg(long, default_value_t = 0.25, value_name = "S")]
    pub duration: f64,
    /// Warm-up seconds per point.
    #[arg(long, default_value_t = 0.05, value_name = "S")]
    pub warmup: f64,
    /// Thread placement.
    #[arg(long, value_enum, default_value_t = Pin::Route)]
    pub pin: Pin,
    /// Do not install the calibrated (or topology) route first.
    #[arg(long)]
    pub no_install: bool,
    /// Seed of the nCS jitter and key generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Co-runner: waiters sharing the compute thread's CPU, comma-separated.
    #[arg(long, default_value = "1,3", value_name = "LIST")]
    pub waiters: String,
    /// Co-runner: waiting policies, comma-separated (`all` or names from
    /// `--list`).
    #[arg(long, default_value = "all", value_name = "LIST")]
    pub policies: String,
    /// Output format on stdout (with `--out`: the file's format; default
    /// from its extension, .csv or else JSON).
    #[arg(long, value_enum)]
    pub format: Option<Format>,
    /// Also write the results to FILE (stdout then shows the table).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

fn bench_err(e: BenchError) -> CliError {
    CliError::usage(e.to_string())
}

/// Runs `ron bench`.
pub fn run(args: Args) -> CliResult {
    if args.list {
        print_list();
        return Ok(());
    }
    let duration = args::seconds("--duration", args.duration, false)?;
    let warmup = args::seconds("--warmup", args.warmup, true)?;
    if args.workload == Workload::Corunner {
        return run_corunner_cmd(&args, duration);
    }
    let locks = registry::resolve(&args.locks).map_err(bench_err)?;
    let threads = args::positive_list("--threads", &args.threads, MAX_THREADS)?;
    let ncs = args::ns_list("--ncs", &args.ncs)?;
    let pinning = match args.pin {
        Pin::Route => Pinning::Route,
        Pin::None => Pinning::None,
    };
    let grid = Grid {
        locks,
        threads,
        ncs_ns: ncs,
        cs_lines: args.cs_lines,
        duration,
        warmup,
        pinning,
        seed: args.seed,
        workload: match args.workload {
            Workload::Kv => LoopWorkload::Kv,
            _ => LoopWorkload::Micro,
        },
    };
    grid.validate().map_err(bench_err)?;
    let source = install_route(args.no_install);
    let header = format!(
        "ron bench: workload {}, {} points x ({:.2} s + {:.2} s warm-up), cs-lines {}, threads {}, route from {source}; {} CPUs; TSC {:.3} ticks/ns, busy loop {:.3} iters/ns",
        grid.workload.name(),
        grid.points(),
        duration.as_secs_f64(),
        warmup.as_secs_f64(),
        if grid.workload == LoopWorkload::Kv {
            0
        } else {
            grid.cs_lines
        },
        if pinning == Pinning::Route {
            "pinned along the route"
        } else {
            "unpinned"
        },
        ron_bench::pin::cpu_order().len(),
        clock::ticks_per_ns(),
        clock::iters_per_ns(),
    );
    let expected = (duration + warmup) * grid.points() as u32;
    let pb = progress::bar(grid.points() as u64, expected, "bench");
    let rows = grid
        .run(|done, _, label| {
            pb.set_position(done as u64);
            pb.set_message(label.to_string());
        })
        .map_err(bench_err)?;
    pb.finish_and_clear();
    emit(
        &args,
        &header,
        &rows,
        report::bench_table,
        report::bench_csv,
    )?;
    if let Some(bad) = rows.iter().find(|r| !r.exclusion_ok) {
        return Err(CliError::failed(format!(
            "mutual exclusion violated: lock {} at {} threads lost updates",
            bad.lock, bad.threads
        )));
    }
    Ok(())
}

/// Installs the calibrated route (or the topology fallback); returns a
/// description of its source.
fn install_route(skip: bool) -> String {
    if skip {
        return if ron_core::route::is_installed() {
            "an earlier install".into()
        } else {
            "nowhere (identity order, --no-install)".into()
        };
    }
    let r = ron_topo::install();
    match r.fallback_reason {
        Some(why) => format!("{} (calibration not used: {why})", r.source),
        None => r.source.to_string(),
    }
}

fn run_corunner_cmd(args: &Args, duration: Duration) -> CliResult {
    let policies = corunner::resolve(&args.policies).map_err(bench_err)?;
    let waiters = args::positive_list("--waiters", &args.waiters, 1024)?;
    let source = install_route(args.no_install);
    let order = ron_bench::pin::cpu_order();
    let header = format!(
        "ron bench --workload corunner: compute thread + W waiters on CPU {}, lock held on CPU {}; {:.2} s alone + {:.2} s shared per row; route from {source}",
        order[0],
        order[1 % order.len()],
        duration.as_secs_f64(),
        duration.as_secs_f64()
    );
    let total = policies.len() * waiters.len();
    let pb = progress::bar(total as u64, duration * 2 * total as u32, "corunner");
    let rows = run_corunner(&policies, &waiters, duration, |done, _, label| {
        pb.set_position(done as u64);
        pb.set_message(label.to_string());
    })
    .map_err(bench_err)?;
    pb.finish_and_clear();
    emit(
        args,
        &header,
        &rows,
        report::corunner_table,
        report::corunner_csv,
    )
}

/// Prints (and writes) rows in the requested formats.
fn emit<R: serde::Serialize>(
    args: &Args,
    header: &str,
    rows: &[R],
    table: fn(&[R]) -> String,
    csv: fn(&[R]) -> String,
) -> CliResult {
    let render = |f: Format| -> Result<String, CliError> {
        Ok(match f {
            Format::Table => format!("{header}\n{}", table(rows)),
            Format::Csv => csv(rows),
            Format::Json => {
                let mut s = serde_json::to_string_pretty(rows)
                    .map_err(|e| CliError::failed(format!("cannot encode JSON: {e}")))?;
                s.push('\n');
                s
            }
        })
    };
    match &args.out {
        Some(path) => {
            let f =
                args.format
                    .unwrap_or_else(|| match path.extension().and_then(|e| e.to_str()) {
                        Some(e) if e.eq_ignore_ascii_case("csv") => Format::Csv,
                        Some(e)
                            if e.eq_ignore_ascii_case("txt") || e.eq_ignore_ascii_case("md") =>
                        {
                            Format::Table
                        }
                        _ => Format::Json,
                    });
            args::write_file(path, &render(f)?)?;
            print!("{}", render(Format::Table)?);
            println!("(written to {})", path.display());
        }
        None => print!("{}", render(args.format.unwrap_or(Format::Table))?),
    }
    Ok(())
}

fn print_list() {
    let cells: Vec<Vec<String>> = registry::registry()
        .iter()
        .map(|e| {
            vec![
                e.info.name.to_string(),
                match e.info.kind {
                    LockKind::Ron => "ron",
                    LockKind::Baseline => "baseline",
                    LockKind::Peer => "peer",
                }
                .to_string(),
                e.info.type_name.to_string(),
                e.info.about.to_string(),
            ]
        })
        .collect();
    println!("locks (--locks; `all` = every one, `default` = {}):", {
        let d: Vec<&str> = registry::defaults().iter().map(|e| e.name()).collect();
        d.join(",")
    });
    print!(
        "{}",
        report::table(&["name", "kind", "type", "description"], &cells)
    );
    println!("\nco-runner policies (--workload corunner --policies):");
    let cells: Vec<Vec<String>> = corunner::policies()
        .iter()
        .map(|p| vec![p.name.to_string(), p.type_name.to_string()])
        .collect();
    print!("{}", report::table(&["policy", "type"], &cells));
}
