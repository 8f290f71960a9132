//! `ron calibrate`: probe the core-to-core latencies, solve the route and
//! write the calibration file that `ron_topo::install()` reads. Stdout
//! shows a summary (table), the calibration itself (JSON) or its matrix
//! (CSV); the calibration file is JSON in every case.

use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use ron_topo::probe::{ProbeMode, ProbeOptions, available_cpus};
use ron_topo::{Calibration, Fingerprint, SolveOptions, Topology, tsp};

use crate::args;
use crate::cmd::route::wrap;
use crate::error::{CliError, CliResult};
use crate::output::{self, Format};
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
    /// Route solver wall-clock budget (seconds, or with a unit: 500ms).
    #[arg(long, default_value = "2s", value_name = "DURATION")]
    pub time_limit: String,
    /// Seed of the pair sampling and the solver.
    #[arg(long, default_value_t = 0x5eed)]
    pub seed: u64,
    /// Calibration file to write (default: where `ron_topo::install()`
    /// looks: $RON_CALIBRATION, else the user cache dir); missing
    /// directories are created.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Format on stdout: a summary (table), the calibration (JSON) or its
    /// matrix (CSV, readable by `--matrix` everywhere).
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// Runs `ron calibrate`.
pub fn run(args: Args) -> CliResult {
    if args.rounds == 0 || args.rounds > 100_000 {
        return Err(CliError::usage(format!(
            "--rounds: must be in 1..=100000, got {}",
            args.rounds
        )));
    }
    if args.pairs_per_class == 0 {
        return Err(CliError::usage(
            "--pairs-per-class: must be at least 1, got 0",
        ));
    }
    let time_limit = args::duration("--time-limit", &args.time_limit, false)?;
    let out = match args.out.clone() {
        Some(p) => p,
        None => ron_topo::install::calibration_path()
            .map(|(p, _)| p)
            .ok_or_else(|| {
                CliError::usage("no default calibration path on this platform; give --out FILE")
            })?,
    };
    output::prepare_out(&out)?;
    let topo = Topology::detect()
        .map_err(|e| CliError::failed(format!("cannot read the topology: {e}")))?;
    let opts = ProbeOptions {
        mode: match args.mode {
            Mode::Full => ProbeMode::Full,
            Mode::Sampled => ProbeMode::Sampled {
                pairs_per_class: args.pairs_per_class,
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
    cal.save(&out)
        .map_err(|e| CliError::failed(format!("cannot write the calibration: {e}")))?;
    let mode = match args.mode {
        Mode::Full => "full",
        Mode::Sampled => "sampled",
    };
    let text = match args.format {
        Format::Json => cal.to_json_string() + "\n",
        Format::Csv => cal.matrix.to_csv_string(),
        Format::Table => format!(
            "probed {m} CPU{} ({mode} mode, {} rounds) in {probe_s:.1} s\nroute    {}\ncost     {:.1} ns per lap ({:.1} ns per handover)\nidentity {:.1} ns per lap ({:.1} ns per handover)\nfifo     {:.1} ns per handover (mean off-diagonal)\n",
            if m == 1 { "" } else { "s" },
            args.rounds,
            wrap(&cal.route, "         "),
            cal.cost,
            cal.cost / m as f64,
            cal.baselines.identity_cost,
            cal.baselines.identity_cost / m as f64,
            cal.baselines.fifo_mean,
        ),
    };
    output::stdout(&text)?;
    output::status(&format!("wrote {}", out.display()));
    Ok(())
}
