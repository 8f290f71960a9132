//! `ron calibrate`: probe the core-to-core latencies, solve the route and
//! write the calibration file that `ron_topo::install()` reads.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use ron_topo::probe::{ProbeMode, ProbeOptions, available_cpus};
use ron_topo::{Calibration, Fingerprint, SolveOptions, Topology, tsp};

use crate::args;
use crate::cmd::route::join;
use crate::error::{CliError, CliResult};
use crate::progress;

/// Probe mode.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mode {
    /// Every ordered pair of CPUs.
    Full,
    /// A few pairs per (L3, L3, same-core) class; scales to hundreds of CPUs.
    Sampled,
}

/// Arguments of `ron calibrate`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Which pairs to probe.
    #[arg(long, value_enum, default_value_t = Mode::Full)]
    pub mode: Mode,
    /// Recorded samples per pair (the median is kept).
    #[arg(long, default_value_t = 200, value_name = "N")]
    pub rounds: u32,
    /// Sampled mode: pairs measured per class.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub pairs_per_class: usize,
    /// Route solver wall-clock budget in seconds.
    #[arg(long, default_value_t = 2.0, value_name = "S")]
    pub time_limit: f64,
    /// Seed of the pair sampling and the solver.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Calibration file to write (default: where `ron_topo::install()`
    /// looks: $RON_CALIBRATION, else the user cache dir).
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Runs `ron calibrate`.
pub fn run(args: Args) -> CliResult {
    if args.rounds == 0 || args.rounds > 100_000 {
        return Err(CliError::usage(format!(
            "--rounds: must be in 1..=100000, got {}",
            args.rounds
        )));
    }
    let time_limit = args::seconds("--time-limit", args.time_limit, false)?;
    let out = match args.out.clone() {
        Some(p) => p,
        None => ron_topo::install::calibration_path()
            .map(|(p, _)| p)
            .ok_or_else(|| {
                CliError::usage("no default calibration path on this platform; give --out FILE")
            })?,
    };
    let topo = Topology::detect()
        .map_err(|e| CliError::failed(format!("cannot read the topology: {e}")))?;
    let opts = ProbeOptions {
        mode: match args.mode {
            Mode::Full => ProbeMode::Full,
            Mode::Sampled => ProbeMode::Sampled {
                pairs_per_class: args.pairs_per_class.max(1),
            },
        },
        rounds: args.rounds,
        seed: args.seed,
        ..ProbeOptions::default()
    };
    let n = available_cpus().len();
    let pb = progress::bar(
        (n * n.saturating_sub(1)) as u64,
        Duration::from_secs(2),
        "probe",
    );
    let cancel = AtomicBool::new(false);
    let t0 = Instant::now();
    let matrix = ron_topo::probe(
        &topo,
        &opts,
        &mut |done, total| {
            pb.set_length(total as u64);
            pb.set_position(done as u64);
        },
        &cancel,
    )
    .map_err(|e| CliError::failed(format!("probe failed: {e}")))?;
    pb.finish_and_clear();
    let probe_s = t0.elapsed().as_secs_f64();
    let route = tsp::solve(
        &matrix,
        &SolveOptions {
            time_limit,
            seed: args.seed,
            ..SolveOptions::default()
        },
    );
    let m = matrix.n();
    let cal = Calibration::new(Fingerprint::of(&topo), matrix, &route)
        .map_err(|e| CliError::failed(format!("cannot build the calibration: {e}")))?;
    if let Some(dir) = out.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir)
            .map_err(|e| CliError::failed(format!("cannot create {}: {e}", dir.display())))?;
    }
    cal.save(&out)
        .map_err(|e| CliError::failed(format!("cannot write the calibration: {e}")))?;
    println!(
        "probed {m} CPUs ({:?} mode, {} rounds) in {probe_s:.1} s",
        args.mode, args.rounds
    );
    println!("route    {}", join(&cal.route));
    println!(
        "cost     {:.1} ns per lap ({:.1} ns per handover)",
        cal.cost,
        cal.cost / m as f64
    );
    println!(
        "identity {:.1} ns per lap ({:.1} ns per handover)",
        cal.baselines.identity_cost,
        cal.baselines.identity_cost / m as f64
    );
    println!(
        "fifo     {:.1} ns per handover (mean off-diagonal)",
        cal.baselines.fifo_mean
    );
    println!("written  {}", out.display());
    Ok(())
}
