//! Turning result rows (`ron bench`, `ron simulate`, co-runner; JSON or
//! CSV) into panels of curves.

use std::collections::BTreeMap;
use std::path::Path;

use crate::error::CliError;
use crate::input::{self, num, text};

/// A named curve: points `(x, y, y standard deviation)`.
pub type Series = (String, Vec<(f64, f64, f64)>);

/// One panel of curves.
pub struct Panel {
    /// Panel title (the workload of its points).
    pub title: String,
    /// The curves.
    pub series: Vec<Series>,
}

/// Curves read from a result file.
pub struct Curves {
    /// X axis description.
    pub x_label: String,
    /// Y axis description.
    pub y_label: String,
    /// Whether x is spread logarithmically (thread counts, nCS).
    pub log_x: bool,
    /// Whether x takes whole numbers only.
    pub integer_x: bool,
    /// The machine, from the file's metadata (`CPU model, N CPUs`).
    pub machine: Option<String>,
    /// The panels.
    pub panels: Vec<Panel>,
}

/// Reads `path` (JSON or CSV) into curves.
pub fn read_curves(path: &Path) -> Result<Curves, CliError> {
    let (meta, rows) = input::read_rows(path)?;
    let first = rows
        .first()
        .ok_or_else(|| CliError::usage(format!("{}: no rows to plot", path.display())))?;
    let machine = meta.as_ref().and_then(|m| {
        let model = text(m, "cpu_model")?;
        let cpus = num(m, "cpus")? as usize;
        Some(format!(
            "{model}, {cpus} CPU{}",
            if cpus == 1 { "" } else { "s" }
        ))
    });
    // (panel key, panel title, series, x, y, sd) per row.
    type Pt = (String, String, String, f64, f64, f64);
    let (points, mut curves): (Vec<Pt>, Curves) =
        if first.get("lock").is_some() && first.get("mlocks_per_s").is_some() {
            let pts = rows
                .iter()
                .filter_map(|r| {
                    let w = text(r, "workload").unwrap_or_else(|| "micro".into());
                    let ncs = num(r, "ncs_ns")?;
                    let k = num(r, "cs_lines").unwrap_or(0.0);
                    let title = if w == "kv" {
                        format!("kv map, nCS {ncs:.0} ns")
                    } else {
                        format!(
                            "micro, {k:.0} cache line{} per CS, nCS {ncs:.0} ns",
                            if k == 1.0 { "" } else { "s" }
                        )
                    };
                    Some((
                        format!("{w}/{ncs:020.3}/{k}"),
                        title,
                        text(r, "lock")?,
                        num(r, "threads")?,
                        num(r, "mlocks_per_s")?,
                        num(r, "mlocks_per_s_sd").unwrap_or(0.0),
                    ))
                })
                .collect();
            (
                pts,
                Curves {
                    x_label: "threads".into(),
                    y_label: "million acquisitions/s".into(),
                    log_x: true,
                    integer_x: true,
                    machine,
                    panels: vec![],
                },
            )
        } else if first.get("policy").is_some() && first.get("throughput_per_s").is_some() {
            let pts: Vec<Pt> = rows
                .iter()
                .filter_map(|r| {
                    let t = num(r, "threads")?;
                    let cs = num(r, "cs_ns").unwrap_or(0.0);
                    let m = text(r, "matrix").unwrap_or_default();
                    Some((
                        format!("{m}/{:08}/{cs}", t as u64),
                        format!("{m}: {t:.0} threads, CS {cs:.0} ns (simulated)"),
                        text(r, "policy")?,
                        num(r, "ncs_ns")?,
                        num(r, "throughput_per_s")? / 1e6,
                        0.0,
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
                    integer_x: false,
                    machine,
                    panels: vec![],
                },
            )
        } else if first.get("policy").is_some() && first.get("slowdown").is_some() {
            let pts = rows
                .iter()
                .filter_map(|r| {
                    Some((
                        "corunner".to_string(),
                        "compute thread sharing its CPU with W lock waiters".to_string(),
                        text(r, "policy")?,
                        num(r, "waiters")?,
                        100.0 * num(r, "slowdown")?,
                        0.0,
                    ))
                })
                .collect();
            (
                pts,
                Curves {
                    x_label: "waiters sharing the CPU".into(),
                    y_label: "compute slowdown (%)".into(),
                    log_x: false,
                    integer_x: true,
                    machine,
                    panels: vec![],
                },
            )
        } else {
            return Err(CliError::usage(format!(
                "{}: unknown rows (expected `ron bench` or `ron simulate` output)",
                path.display()
            )));
        };
    let mut panels: BTreeMap<String, (String, Vec<Series>)> = BTreeMap::new();
    for (key, title, series, x, y, sd) in points {
        if !(x.is_finite() && y.is_finite()) {
            continue;
        }
        let p = panels.entry(key).or_insert_with(|| (title, Vec::new()));
        match p.1.iter_mut().find(|s| s.0 == series) {
            Some(s) => s.1.push((x, y, sd)),
            None => p.1.push((series, vec![(x, y, sd)])),
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

/// The distinct values of `v` (sorted), for tick positions.
pub fn distinct(mut v: Vec<f64>) -> Vec<f64> {
    v.sort_by(f64::total_cmp);
    v.dedup();
    v
}

/// Every x of every series of the panel.
pub fn xs(p: &Panel) -> Vec<f64> {
    distinct(
        p.series
            .iter()
            .flat_map(|s| s.1.iter().map(|q| q.0))
            .collect(),
    )
}
