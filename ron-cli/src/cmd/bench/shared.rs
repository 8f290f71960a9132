//! What the workloads of `ron bench` share: the run's metadata, the route
//! install, Ctrl-C, and printing and saving rows.

use std::path::Path;
use std::time::Duration;

use ron_bench::clock;
use ron_bench::pin::Pinning;
use ron_bench::report::{Report, RunMeta};
use ron_bench::workload::MAX_THREADS;
use ron_bench::{BenchError, stop};
use serde::Serialize;

use super::options::Args;
use crate::args;
use crate::error::{CliError, CliResult};
use crate::output::{self, Format, Render};

pub(super) fn bench_err(e: BenchError) -> CliError {
    CliError::usage(e.to_string())
}

/// Ctrl-C cuts the run in progress short and ends the grid (the rows
/// measured so far are printed, marked interrupted); a second Ctrl-C
/// aborts at once. Both exit with 130, as a shell reports SIGINT.
pub(super) fn catch_ctrl_c() {
    // An error (a handler already set) only loses the graceful stop.
    let _ = ctrlc::set_handler(|| {
        if stop::request() {
            eprintln!("error: interrupted twice: aborted without printing the rows measured");
            std::process::exit(130);
        }
    });
}

/// The metadata and header of a finished grid: when Ctrl-C stopped it,
/// marked interrupted (the header gets a line saying so).
pub(super) fn mark_interrupted(
    mut meta: RunMeta,
    header: String,
    interrupted: bool,
) -> (RunMeta, String) {
    meta.interrupted = interrupted;
    if interrupted {
        let header = format!(
            "{header}interrupted by Ctrl-C: the run in progress was stopped and the rest not run\n"
        );
        (meta, header)
    } else {
        (meta, header)
    }
}

/// The error that ends a run stopped by Ctrl-C: how much was measured.
/// `last` says what became of the run in progress.
pub(super) fn interrupted(args: &Args, measured: usize, points: usize, last: &str) -> CliError {
    CliError::interrupted(format!(
        "interrupted by Ctrl-C: {measured} of {points} point{} measured, {last} (rows above{})",
        if points == 1 { "" } else { "s" },
        if args.out.is_some() {
            " and in --out"
        } else {
            ""
        }
    ))
}

/// The header lines every grid shares after its first: points x runs x
/// (duration + warm-up), placement and route; then the CPU model and count,
/// a line the caller ends (with [`clock_note`], or a note of its own).
pub(super) fn grid_lines(
    points: usize,
    repeat: usize,
    duration: Duration,
    warmup: Duration,
    pinning: Pinning,
    meta: &RunMeta,
) -> String {
    format!(
        "{} point{} x {} run{} x ({} + {} warm-up); threads {}; route from {}\n{}, {} CPU{}",
        points,
        plural(points),
        repeat,
        plural(repeat),
        args::show_duration(duration),
        args::show_duration(warmup),
        if pinning == Pinning::Route {
            "pinned along the route"
        } else {
            "unpinned"
        },
        meta.route_source,
        meta.cpu_model,
        meta.cpus,
        plural(meta.cpus),
    )
}

/// The clock's calibration, ending a header line.
pub(super) fn clock_note() -> String {
    format!(
        "; TSC {:.3} ticks/ns, busy loop {:.3} iterations/ns",
        clock::ticks_per_ns(),
        clock::iters_per_ns(),
    )
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "" } else { "s" }
}

/// Prints the rows with `footer` under them: on stdout after a blank line
/// under a table, on stderr when stdout is CSV or JSON.
pub(super) fn print_with_footer<R: Render + Serialize + Clone>(
    args: &Args,
    meta: &RunMeta,
    rows: &[R],
    header: &str,
    footer: &str,
) -> CliResult {
    print_rows(args, meta, rows, header, &format!("\n{footer}"))?;
    if args.format != Format::Table {
        eprint!("{footer}");
    }
    Ok(())
}

/// How a grid of `points` ends once its rows are out: an error for the
/// first row that `violation` says failed its exclusion check, then one
/// for a grid cut short by Ctrl-C.
pub(super) fn finish<R>(
    args: &Args,
    rows: &[R],
    points: usize,
    was_interrupted: bool,
    violation: impl Fn(&R) -> Option<String>,
) -> CliResult {
    if let Some(v) = rows.iter().find_map(violation) {
        return Err(CliError::failed(v));
    }
    if was_interrupted {
        return Err(interrupted(
            args,
            rows.len(),
            points,
            "the last one cut short",
        ));
    }
    Ok(())
}

/// The `--threads` list, `default` when it is not given.
pub(super) fn thread_counts(args: &Args, default: &str) -> Result<Vec<usize>, CliError> {
    args::positive_list(
        "--threads",
        args.threads.as_deref().unwrap_or(default),
        MAX_THREADS,
    )
}

/// Writes rows to `out` in the format of its extension.
pub(super) fn save<R: Render + Serialize + Clone>(
    out: &Path,
    meta: &RunMeta,
    rows: &[R],
    header: &str,
) -> CliResult {
    let text = output::render(
        Format::of_out(out)?,
        &format!("{header}\n"),
        rows,
        "",
        &report(meta, rows),
    )?;
    output::write_file(out, &text)
}

/// The JSON document of a run: its metadata and its rows.
fn report<R: Clone>(meta: &RunMeta, rows: &[R]) -> Report<R> {
    Report {
        meta: meta.clone(),
        rows: rows.to_vec(),
    }
}

/// Prints the rows on stdout: a table between `header` and `footer`, or
/// CSV, or JSON with the run's metadata.
pub(super) fn print_rows<R: Render + Serialize + Clone>(
    args: &Args,
    meta: &RunMeta,
    rows: &[R],
    header: &str,
    footer: &str,
) -> CliResult {
    let text = output::render(
        args.format,
        &format!("{header}\n"),
        rows,
        footer,
        &report(meta, rows),
    )?;
    output::stdout(&text)
}

/// Writes the rows to `--out`, if given, and says so.
pub(super) fn save_out<R: Render + Serialize + Clone>(
    args: &Args,
    meta: &RunMeta,
    rows: &[R],
    header: &str,
) -> CliResult {
    if let Some(out) = &args.out {
        save(out, meta, rows, header)?;
        output::status(&format!("wrote {}", out.display()));
    }
    Ok(())
}

/// The run's metadata.
pub(super) fn run_meta(
    source: &str,
    calibration: Option<ron_topo::Fingerprint>,
    repeat: usize,
    cpus: usize,
) -> RunMeta {
    RunMeta {
        tool: "ron".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        command_line: std::env::args().collect(),
        date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        cpu_model: ron_topo::calibration::cpu_model(),
        cpus,
        route_source: source.to_string(),
        calibration,
        repeat,
        interrupted: false,
    }
}

/// Installs the calibrated route (or the topology fallback); returns a
/// description of its source and the calibration's fingerprint.
pub(super) fn install_route(skip: bool) -> (String, Option<ron_topo::Fingerprint>) {
    if skip {
        return (
            if ron_core::route::is_installed() {
                "an earlier install".into()
            } else {
                "nowhere (identity order, --no-install)".into()
            },
            None,
        );
    }
    let r = ron_topo::install();
    let fp = match &r.source {
        ron_topo::RouteSource::Calibration(p) => {
            ron_topo::Calibration::read(p).ok().map(|c| c.fingerprint)
        }
        _ => None,
    };
    let text = match r.fallback_reason {
        Some(why) => {
            let file = r
                .calibration_path
                .as_ref()
                .map_or_else(String::new, |p| format!("{}: ", p.display()));
            output::warning(&format!(
                "{file}calibration not used ({why}); the route comes from {}",
                r.source
            ));
            format!("{} (calibration not used: {why})", r.source)
        }
        None => r.source.to_string(),
    };
    (text, fp)
}
