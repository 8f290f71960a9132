//! `ron plot`: throughput curves from `ron bench` / `ron simulate` JSON, or
//! a latency heatmap with a route drawn over it.
//!
//! * `--input FILE.json --out FILE.svg|png`: the format is detected from
//!   the rows' fields: `ron bench` rows (`lock`, `mlocks_per_s`) give
//!   throughput vs threads, one line per lock, one panel per (workload,
//!   nCS); `ron simulate` rows (`policy`, `throughput_per_s`) give
//!   throughput vs nCS, one line per policy, one panel per thread count;
//!   co-runner rows (`policy`, `slowdown`) give slowdown vs waiters.
//! * `--matrix FILE.csv [--route ...] --out FILE.png|svg`: the matrix as a
//!   heatmap in CPU order with the tour drawn through the cells it uses,
//!   next to the matrix reordered along the route (where the tour is the
//!   superdiagonal and the topology's blocks show).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::time::Duration;

use plotters::coord::Shift;
use plotters::prelude::*;
use ron_topo::{LatencyMatrix, SolveOptions, tsp};
use serde_json::Value;

use crate::args;
use crate::error::{CliError, CliResult};

/// Arguments of `ron plot`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// JSON rows from `ron bench --format json` or `ron simulate --format
    /// json`.
    #[arg(long, value_name = "FILE", conflicts_with = "matrix")]
    pub input: Option<PathBuf>,
    /// Latency matrix (CSV, or ron-topo JSON) to draw as a heatmap.
    #[arg(long, value_name = "FILE")]
    pub matrix: Option<PathBuf>,
    /// Route to draw over the heatmap: CPU ids comma-separated, or a JSON
    /// file with a `route` field (`ron route --format json`, a calibration
    /// file). Default: solved here (1 s).
    #[arg(long, value_name = "LIST|FILE", requires = "matrix")]
    pub route: Option<String>,
    /// Output image: `.svg` or `.png`.
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
    /// Title (default: from the input file name).
    #[arg(long)]
    pub title: Option<String>,
}

/// Runs `ron plot`.
pub fn run(args: Args) -> CliResult {
    let svg = match args.out.extension().and_then(|e| e.to_str()) {
        Some(e) if e.eq_ignore_ascii_case("svg") => true,
        Some(e) if e.eq_ignore_ascii_case("png") => false,
        _ => {
            return Err(CliError::usage(format!(
                "--out: {} must end in .svg or .png",
                args.out.display()
            )));
        }
    };
    if let Some(dir) = args
        .out
        .parent()
        .filter(|d| !d.as_os_str().is_empty() && !d.is_dir())
    {
        return Err(CliError::usage(format!(
            "--out: directory {} does not exist",
            dir.display()
        )));
    }
    match (&args.input, &args.matrix) {
        (Some(input), None) => {
            let chart = read_curves(input)?;
            let title = args.title.clone().unwrap_or_else(|| stem(input));
            let size = chart_size(chart.panels.len());
            let res = if svg {
                draw_curves(
                    SVGBackend::new(&args.out, size).into_drawing_area(),
                    &title,
                    &chart,
                )
            } else {
                draw_curves(
                    BitMapBackend::new(&args.out, size).into_drawing_area(),
                    &title,
                    &chart,
                )
            };
            res.map_err(|e| draw_failed(&args.out, e))?;
        }
        (None, Some(mpath)) => {
            let m = args::read_matrix(mpath)?;
            let order = route_order(&m, args.route.as_deref())?;
            let title = args.title.clone().unwrap_or_else(|| stem(mpath));
            let size = (1500, 780);
            let res = if svg {
                draw_heatmap(
                    SVGBackend::new(&args.out, size).into_drawing_area(),
                    &title,
                    &m,
                    &order,
                )
            } else {
                draw_heatmap(
                    BitMapBackend::new(&args.out, size).into_drawing_area(),
                    &title,
                    &m,
                    &order,
                )
            };
            res.map_err(|e| draw_failed(&args.out, e))?;
        }
        _ => {
            return Err(CliError::usage(
                "give either --input FILE.json or --matrix FILE.csv",
            ));
        }
    }
    println!("wrote {}", args.out.display());
    Ok(())
}

fn stem(p: &Path) -> String {
    p.file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default()
}

fn chart_size(panels: usize) -> (u32, u32) {
    let cols = panels.clamp(1, 3) as u32;
    let rows = panels.div_ceil(3).max(1) as u32;
    (560 * cols, 420 * rows + 40)
}

fn draw_failed(out: &Path, e: String) -> CliError {
    CliError::failed(format!("cannot draw {}: {e}", out.display()))
}

/// Viridis, interpolated between five stops; `t` in `[0, 1]`.
fn viridis(t: f64) -> RGBColor {
    const STOPS: [(f64, f64, f64); 5] = [
        (68.0, 1.0, 84.0),
        (59.0, 82.0, 139.0),
        (33.0, 145.0, 140.0),
        (94.0, 201.0, 98.0),
        (253.0, 231.0, 37.0),
    ];
    let t = if t.is_finite() {
        t.clamp(0.0, 1.0)
    } else {
        0.0
    };
    let x = t * (STOPS.len() - 1) as f64;
    let i = (x.floor() as usize).min(STOPS.len() - 2);
    let f = x - i as f64;
    let (a, b) = (STOPS[i], STOPS[i + 1]);
    let mix = |p: f64, q: f64| (p + (q - p) * f).round() as u8;
    RGBColor(mix(a.0, b.0), mix(a.1, b.1), mix(a.2, b.2))
}

/// A named curve.
type Series = (String, Vec<(f64, f64)>);

/// One panel of curves.
struct Panel {
    title: String,
    series: Vec<(String, Vec<(f64, f64)>)>,
}

/// Curves read from a JSON file.
struct Curves {
    x_label: String,
    y_label: String,
    log_x: bool,
    panels: Vec<Panel>,
}

fn num(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}

fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}

fn read_curves(path: &Path) -> Result<Curves, CliError> {
    let data = std::fs::read_to_string(path)
        .map_err(|e| CliError::usage(format!("cannot read {}: {e}", path.display())))?;
    let rows: Vec<Value> = serde_json::from_str(&data).map_err(|e| {
        CliError::usage(format!("{}: not a JSON array of rows: {e}", path.display()))
    })?;
    let first = rows
        .first()
        .ok_or_else(|| CliError::usage(format!("{}: no rows to plot", path.display())))?;
    // (panel key, panel title, series, x, y) per row.
    type Pt = (String, String, String, f64, f64);
    let (points, curves): (Vec<Pt>, Curves) =
        if first.get("lock").is_some() && first.get("mlocks_per_s").is_some() {
            let pts = rows
                .iter()
                .filter_map(|r| {
                    let w = text(r, "workload").unwrap_or_else(|| "micro".into());
                    let ncs = num(r, "ncs_ns")?;
                    let k = num(r, "cs_lines").unwrap_or(0.0);
                    let title = if w == "kv" {
                        format!("kv, nCS {ncs:.0} ns")
                    } else {
                        format!("{w}, nCS {ncs:.0} ns, {k:.0} lines")
                    };
                    Some((
                        format!("{w}/{:020.3}/{k}", ncs),
                        title,
                        text(r, "lock")?,
                        num(r, "threads")?,
                        num(r, "mlocks_per_s")?,
                    ))
                })
                .collect();
            (
                pts,
                Curves {
                    x_label: "threads".into(),
                    y_label: "million locks/s".into(),
                    log_x: true,
                    panels: vec![],
                },
            )
        } else if first.get("policy").is_some() && first.get("throughput_per_s").is_some() {
            let pts: Vec<Pt> = rows
                .iter()
                .filter_map(|r| {
                    let t = num(r, "threads")?;
                    let cs = num(r, "cs_ns").unwrap_or(0.0);
                    Some((
                        format!("{:08}/{cs}", t as u64),
                        format!("{t:.0} threads, CS {cs:.0} ns (simulated)"),
                        text(r, "policy")?,
                        num(r, "ncs_ns")?,
                        num(r, "throughput_per_s")? / 1e6,
                    ))
                })
                .collect();
            let log_x = pts.iter().all(|p| p.3 > 0.0);
            (
                pts,
                Curves {
                    x_label: "nCS (ns)".into(),
                    y_label: "million admissions/s".into(),
                    log_x,
                    panels: vec![],
                },
            )
        } else if first.get("policy").is_some() && first.get("slowdown").is_some() {
            let pts = rows
                .iter()
                .filter_map(|r| {
                    Some((
                        "corunner".to_string(),
                        "co-runner slowdown".to_string(),
                        text(r, "policy")?,
                        num(r, "waiters")?,
                        100.0 * num(r, "slowdown")?,
                    ))
                })
                .collect();
            (
                pts,
                Curves {
                    x_label: "waiters sharing the CPU".into(),
                    y_label: "compute slowdown (%)".into(),
                    log_x: false,
                    panels: vec![],
                },
            )
        } else {
            return Err(CliError::usage(format!(
                "{}: unknown rows (expected `ron bench` or `ron simulate` JSON)",
                path.display()
            )));
        };
    let mut curves = curves;
    let mut panels: BTreeMap<String, (String, Vec<Series>)> = BTreeMap::new();
    for (key, title, series, x, y) in points {
        let p = panels.entry(key).or_insert_with(|| (title, Vec::new()));
        match p.1.iter_mut().find(|s| s.0 == series) {
            Some(s) => s.1.push((x, y)),
            None => p.1.push((series, vec![(x, y)])),
        }
    }
    for (_, (title, mut series)) in panels {
        for s in &mut series {
            s.1.sort_by(|a, b| a.0.total_cmp(&b.0));
        }
        curves.panels.push(Panel { title, series });
    }
    if curves.panels.is_empty() {
        return Err(CliError::usage(format!(
            "{}: no plottable rows",
            path.display()
        )));
    }
    Ok(curves)
}

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

fn draw_curves<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    c: &Curves,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let root = root.titled(title, ("sans-serif", 26)).map_err(err)?;
    let cols = c.panels.len().clamp(1, 3);
    let rows = c.panels.len().div_ceil(3).max(1);
    let areas = root.split_evenly((rows, cols));
    // One color per series name, the same in every panel.
    let mut names: Vec<&str> = Vec::new();
    for p in &c.panels {
        for s in &p.series {
            if !names.contains(&s.0.as_str()) {
                names.push(&s.0);
            }
        }
    }
    for (p, area) in c.panels.iter().zip(areas) {
        let pts = p.series.iter().flat_map(|s| s.1.iter());
        let (mut x0, mut x1, mut y1) = (f64::INFINITY, f64::NEG_INFINITY, 0.0f64);
        for &(x, y) in pts {
            x0 = x0.min(x);
            x1 = x1.max(x);
            y1 = y1.max(y);
        }
        if x1 <= x0 {
            x1 = x0 + 1.0;
        }
        let y1 = if y1 > 0.0 { y1 * 1.1 } else { 1.0 };
        let mut b = ChartBuilder::on(&area);
        b.caption(&p.title, ("sans-serif", 18))
            .margin(12)
            .x_label_area_size(40)
            .y_label_area_size(60);
        let style = |chart_series: &(String, Vec<(f64, f64)>)| {
            let i = names.iter().position(|n| *n == chart_series.0).unwrap_or(0);
            Palette99::pick(i).to_rgba().stroke_width(2)
        };
        if c.log_x && x0 > 0.0 {
            let mut chart = b
                .build_cartesian_2d((x0 * 0.9..x1 * 1.1).log_scale(), 0.0..y1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc(&c.x_label)
                .y_desc(&c.y_label)
                .x_label_formatter(&|v| format!("{v:.0}"))
                .draw()
                .map_err(err)?;
            for s in &p.series {
                let st = style(s);
                chart
                    .draw_series(LineSeries::new(s.1.iter().copied(), st))
                    .map_err(err)?
                    .label(&s.0)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], st));
                chart
                    .draw_series(
                        s.1.iter()
                            .map(|&(x, y)| Circle::new((x, y), 3, st.filled())),
                    )
                    .map_err(err)?;
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperRight)
                .draw()
                .map_err(err)?;
        } else {
            let pad = (x1 - x0) * 0.05;
            let mut chart = b
                .build_cartesian_2d(x0 - pad..x1 + pad, 0.0..y1)
                .map_err(err)?;
            chart
                .configure_mesh()
                .x_desc(&c.x_label)
                .y_desc(&c.y_label)
                .draw()
                .map_err(err)?;
            for s in &p.series {
                let st = style(s);
                chart
                    .draw_series(LineSeries::new(s.1.iter().copied(), st))
                    .map_err(err)?
                    .label(&s.0)
                    .legend(move |(x, y)| PathElement::new(vec![(x, y), (x + 18, y)], st));
                chart
                    .draw_series(
                        s.1.iter()
                            .map(|&(x, y)| Circle::new((x, y), 3, st.filled())),
                    )
                    .map_err(err)?;
            }
            chart
                .configure_series_labels()
                .background_style(WHITE.mix(0.85))
                .border_style(BLACK)
                .position(SeriesLabelPosition::UpperRight)
                .draw()
                .map_err(err)?;
        }
    }
    root.present().map_err(err)?;
    Ok(())
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
        Some(s) if Path::new(s).is_file() => {
            let text = std::fs::read_to_string(s)
                .map_err(|e| CliError::usage(format!("--route: cannot read {s}: {e}")))?;
            let v: Value = serde_json::from_str(&text)
                .map_err(|e| CliError::usage(format!("--route: {s} is not JSON: {e}")))?;
            v.get("route")
                .and_then(Value::as_array)
                .and_then(|a| a.iter().map(|x| x.as_u64().map(|u| u as usize)).collect())
                .ok_or_else(|| {
                    CliError::usage(format!("--route: {s} has no `route` array of CPU ids"))
                })?
        }
        Some(s) => args::positive_list_allow_zero("--route", s)?,
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

fn draw_heatmap<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    m: &LatencyMatrix,
    order: &[usize],
) -> Result<(), String> {
    let n = m.n();
    let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
    for i in 0..n {
        for j in 0..n {
            if i != j {
                lo = lo.min(m.get(i, j));
                hi = hi.max(m.get(i, j));
            }
        }
    }
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        hi = lo + 1.0;
    }
    let cost = m.tour_cost(order);
    root.fill(&WHITE).map_err(err)?;
    let root = root
        .titled(
            &format!(
                "{title}: {n} CPUs, route {:.1} ns/handover, FIFO mean {:.1} ns; colour {lo:.0} ns (dark) .. {hi:.0} ns (bright)",
                cost / n as f64,
                m.fifo_mean()
            ),
            ("sans-serif", 20),
        )
        .map_err(err)?;
    let (left, right) = root.split_horizontally(root.dim_in_pixel().0 / 2);
    let color = |v: f64| viridis((v - lo) / (hi - lo));
    let cpus = m.cpus().to_vec();
    let label_every = n.div_ceil(16).max(1);
    for (panel, area) in [(0, left), (1, right)] {
        // Panel 0: CPU order; panel 1: route order.
        let idx: Vec<usize> = if panel == 0 {
            (0..n).collect()
        } else {
            order.to_vec()
        };
        let caption = if panel == 0 {
            "CPU order, tour drawn (from row to column)"
        } else {
            "reordered along the route (tour = superdiagonal)"
        };
        let mut chart = ChartBuilder::on(&area)
            .caption(caption, ("sans-serif", 16))
            .margin(14)
            .x_label_area_size(36)
            .y_label_area_size(44)
            .build_cartesian_2d(0f64..n as f64, n as f64..0f64)
            .map_err(err)?;
        let lab = |v: &f64| {
            let k = v.floor() as usize;
            if k < n && k.is_multiple_of(label_every) {
                cpus[idx[k]].to_string()
            } else {
                String::new()
            }
        };
        chart
            .configure_mesh()
            .disable_mesh()
            .x_desc("to CPU")
            .y_desc("from CPU")
            .x_labels(n.min(32))
            .y_labels(n.min(32))
            .x_label_formatter(&lab)
            .y_label_formatter(&lab)
            .draw()
            .map_err(err)?;
        chart
            .draw_series((0..n).flat_map(|r| {
                let idx = &idx;
                (0..n).map(move |c| {
                    let (a, b) = (idx[r], idx[c]);
                    let fill = if a == b {
                        RGBColor(40, 40, 40)
                    } else {
                        color(m.get(a, b))
                    };
                    Rectangle::new(
                        [(c as f64, r as f64), (c as f64 + 1.0, r as f64 + 1.0)],
                        fill.filled(),
                    )
                })
            }))
            .map_err(err)?;
        // Position of each matrix index in this panel.
        let mut at = vec![0usize; n];
        for (p, &i) in idx.iter().enumerate() {
            at[i] = p;
        }
        let cells: Vec<(f64, f64)> = (0..=n)
            .map(|k| {
                let (a, b) = (order[k % n], order[(k + 1) % n]);
                (at[b] as f64 + 0.5, at[a] as f64 + 0.5)
            })
            .collect();
        chart
            .draw_series(std::iter::once(PathElement::new(
                cells.clone(),
                RED.mix(0.9).stroke_width(2),
            )))
            .map_err(err)?;
        let r = ((area.dim_in_pixel().0 as usize / (n + 4)) / 4).clamp(2, 6) as i32;
        chart
            .draw_series(
                cells
                    .iter()
                    .take(n)
                    .map(|&p| Circle::new(p, r, WHITE.stroke_width(2))),
            )
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}
