//! `ron plot`: throughput curves from `ron bench` / `ron simulate` output
//! (JSON or CSV), or a latency heatmap with its route.
//!
//! * `--input FILE --out FILE.svg|png`: the kind of rows is detected from
//!   their fields: `ron bench` rows (`lock`, `mlocks_per_s`) give
//!   throughput vs threads, one line per lock, one panel per workload;
//!   `ron simulate` rows (`policy`, `throughput_per_s`) give throughput vs
//!   nCS, one panel per thread count; co-runner rows (`policy`,
//!   `slowdown`) give slowdown vs waiters. See [`data`].
//! * `--matrix FILE --out FILE.png|svg`: see [`heatmap`].
//!
//! Text uses a font embedded in the binary ([`style::register_fonts`]).

mod axes;
mod curves;
mod data;
mod heatmap;
mod style;

use std::path::{Path, PathBuf};
use std::time::Duration;

use plotters::prelude::*;
use ron_topo::{LatencyMatrix, SolveOptions, tsp};
use serde_json::Value;

use crate::args;
use crate::error::{CliError, CliResult};
use crate::output;

/// Arguments of `ron plot`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Rows from `ron bench` or `ron simulate` (JSON, or CSV ending in
    /// `.csv`).
    #[arg(long, value_name = "FILE", conflicts_with = "matrix")]
    pub input: Option<PathBuf>,
    /// Latency matrix (CSV, ron-topo JSON or a calibration file) to draw as
    /// a heatmap.
    #[arg(long, value_name = "FILE")]
    pub matrix: Option<PathBuf>,
    /// Route to draw over the heatmap: CPU ids comma-separated, or a JSON
    /// file with a `route` field (`ron route --format json`, a calibration
    /// file). Default: the calibration's route when `--matrix` is one,
    /// else solved here (1 s).
    #[arg(long, value_name = "LIST|FILE", requires = "matrix")]
    pub route: Option<String>,
    /// Output image: `.svg` or `.png` (missing directories are created).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Title (default: the input file name, and the machine when the file
    /// records it).
    #[arg(long)]
    pub title: Option<String>,
    /// Logarithmic y axis (curves).
    #[arg(long)]
    pub log_y: bool,
}

/// Above this many CPUs an SVG heatmap gets a size warning: every cell is
/// an SVG element (a 256-CPU matrix draws 131,072 of them).
const SVG_CELLS_CPUS: usize = 64;
/// About what one heatmap cell takes in an SVG file.
const SVG_BYTES_PER_CELL: f64 = 85.0;

/// Runs `ron plot`.
pub fn run(args: Args) -> CliResult {
    let svg = match args.out.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("svg") => true,
        Some(e) if e.eq_ignore_ascii_case("png") => false,
        _ => {
            return Err(CliError::usage(format!(
                "--out: must end in .svg or .png, got {}",
                args.out.display()
            )));
        }
    };
    style::register_fonts().map_err(CliError::failed)?;
    let out = &args.out;
    match (&args.input, &args.matrix) {
        (Some(input), None) => {
            let chart = data::read_curves(input)?;
            output::prepare_out(out)?;
            let title = args.title.clone().unwrap_or_else(|| match &chart.machine {
                Some(m) => format!("{} ({m})", stem(input)),
                None => stem(input),
            });
            let size = curves::size(chart.panels.len(), curves::names(&chart).len());
            let res = if svg {
                curves::draw(
                    SVGBackend::new(out, size).into_drawing_area(),
                    &title,
                    &chart,
                    args.log_y,
                )
            } else {
                curves::draw(
                    BitMapBackend::new(out, size).into_drawing_area(),
                    &title,
                    &chart,
                    args.log_y,
                )
            };
            res.map_err(|e| draw_failed(out, e))?;
        }
        (None, Some(mpath)) => {
            let m = args::read_matrix(mpath)?;
            let spec = args
                .route
                .clone()
                .or_else(|| route_in_file(mpath).map(|_| mpath.display().to_string()));
            let order = route_order(&m, spec.as_deref())?;
            if svg && m.n() > SVG_CELLS_CPUS {
                let cells = 2 * m.n() * m.n();
                output::warning(&format!(
                    "--out: an SVG heatmap of {} CPUs has {cells} cells, about {:.0} MB; a .png of the same picture is far smaller",
                    m.n(),
                    cells as f64 * SVG_BYTES_PER_CELL / 1e6
                ));
            }
            output::prepare_out(out)?;
            let title = args
                .title
                .clone()
                .unwrap_or_else(|| match machine_in_file(mpath) {
                    Some(m) => format!("{} ({m})", stem(mpath)),
                    None => stem(mpath),
                });
            let res = if svg {
                heatmap::draw(
                    SVGBackend::new(out, heatmap::SIZE).into_drawing_area(),
                    &title,
                    &m,
                    &order,
                )
            } else {
                heatmap::draw(
                    BitMapBackend::new(out, heatmap::SIZE).into_drawing_area(),
                    &title,
                    &m,
                    &order,
                )
            };
            res.map_err(|e| draw_failed(out, e))?;
        }
        _ => {
            return Err(CliError::usage(
                "--input/--matrix: give one of them (--input FILE: rows; --matrix FILE: latencies), got neither",
            ));
        }
    }
    output::status(&format!("wrote {}", out.display()));
    Ok(())
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn draw_failed(out: &Path, e: String) -> CliError {
    CliError::failed(format!("cannot draw {}: {e}", out.display()))
}

/// The CPU model of a calibration file (`fingerprint.cpu_model`), if it
/// is one (the title already counts the CPUs).
fn machine_in_file(path: &Path) -> Option<String> {
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if !is_json {
        return None;
    }
    let v: Value = serde_json::from_str(&std::fs::read_to_string(path).ok()?).ok()?;
    Some(
        v.get("fingerprint")?
            .get("cpu_model")?
            .as_str()?
            .to_string(),
    )
}

/// The `route` array of a JSON file, if it has one.
fn route_in_file(path: &Path) -> Option<Vec<usize>> {
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    if !is_json {
        return None;
    }
    let text = std::fs::read_to_string(path).ok()?;
    let v: Value = serde_json::from_str(&text).ok()?;
    v.get("route")?
        .as_array()?
        .iter()
        .map(|x| x.as_u64().map(|u| u as usize))
        .collect()
}

/// The route to draw, as matrix indices.
fn route_order(m: &LatencyMatrix, spec: Option<&str>) -> Result<Vec<usize>, CliError> {
    let n = m.n();
    let cpu_ids: Vec<usize> = match spec {
        None => {
            let r = tsp::solve(
                m,
                &SolveOptions {
                    time_limit: Duration::from_secs(1),
                    ..SolveOptions::default()
                },
            );
            return Ok(r.order);
        }
        Some(s) if Path::new(s).is_file() => route_in_file(Path::new(s)).ok_or_else(|| {
            CliError::usage(format!("--route: {s} has no `route` array of CPU ids"))
        })?,
        Some(s) => args::cpu_list("--route", s)?,
    };
    let mut order = Vec::with_capacity(n);
    for c in &cpu_ids {
        let i = m
            .cpus()
            .iter()
            .position(|x| x == c)
            .ok_or_else(|| CliError::usage(format!("--route: CPU {c} is not in the matrix")))?;
        order.push(i);
    }
    if !tsp::is_permutation(&order, n) {
        return Err(CliError::usage(format!(
            "--route: must name each of the matrix's {n} CPUs exactly once"
        )));
    }
    Ok(order)
}
