//! Throughput (or slowdown) curves: one panel per workload, one line per
//! lock or policy with the same colour and marker in every panel, error
//! bars of +- one standard deviation, and one legend outside the panels.

use plotters::coord::Shift;
use plotters::prelude::*;

use super::axes::{draw_labels, linear_ticks, log_ticks};
use super::data::{Curves, xs};
use super::style::{Marker, color, marker, short_num};

/// Width of the legend column (pixels).
const LEGEND_W: u32 = 210;

/// The picture size for `panels` panels and `names` series.
pub fn size(panels: usize, names: usize) -> (u32, u32) {
    let cols = panels.clamp(1, 2) as u32;
    let rows = panels.div_ceil(2).max(1) as u32;
    let h = (460 * rows + 50).max(60 + 24 * names as u32);
    (620 * cols + LEGEND_W, h)
}

/// Every series name, in first-seen order.
pub fn names(c: &Curves) -> Vec<String> {
    let mut names: Vec<String> = Vec::new();
    for p in &c.panels {
        for s in &p.series {
            if !names.contains(&s.0) {
                names.push(s.0.clone());
            }
        }
    }
    names
}

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Draws a marker at pixel `(x, y)`.
fn draw_marker<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    (x, y): (i32, i32),
    m: Marker,
    c: RGBColor,
) -> Result<(), String> {
    let st = c.filled();
    match m {
        Marker::Circle => root.draw(&Circle::new((x, y), 4, st)),
        Marker::Square => root.draw(&Rectangle::new([(x - 4, y - 4), (x + 4, y + 4)], st)),
        Marker::Triangle => root.draw(&Polygon::new(
            vec![(x, y - 5), (x - 5, y + 4), (x + 5, y + 4)],
            st,
        )),
    }
    .map_err(err)
}

/// Draws the chart into `root`.
pub fn draw<DB: DrawingBackend>(
    root: DrawingArea<DB, Shift>,
    title: &str,
    c: &Curves,
    log_y: bool,
) -> Result<(), String> {
    root.fill(&WHITE).map_err(err)?;
    let names = names(c);
    let (w, _) = root.dim_in_pixel();
    let (body, legend) = root.split_horizontally(w - LEGEND_W);
    let body = body.titled(title, ("sans-serif", 22)).map_err(err)?;
    let cols = c.panels.len().clamp(1, 2);
    let rows = c.panels.len().div_ceil(2).max(1);
    let areas = body.split_evenly((rows, cols));
    let tx = |x: f64| if c.log_x { x.log2() } else { x };
    let ty = |y: f64| if log_y { y.log10() } else { y };
    for (p, area) in c.panels.iter().zip(areas) {
        let px = xs(p);
        let (Some(&xmin), Some(&xmax)) = (px.first(), px.last()) else {
            continue;
        };
        let (x0, x1) = (tx(xmin), tx(xmax));
        let pad = if x1 > x0 { (x1 - x0) * 0.06 } else { 0.5 };
        let pts = p.series.iter().flat_map(|s| s.1.iter());
        let (mut lo, mut hi) = (f64::INFINITY, f64::NEG_INFINITY);
        for &(_, y, sd) in pts {
            if log_y && y <= 0.0 {
                continue;
            }
            lo = lo.min(if log_y { y } else { y - sd });
            hi = hi.max(y + sd);
        }
        if !lo.is_finite() || !hi.is_finite() {
            (lo, hi) = if log_y { (1.0, 10.0) } else { (0.0, 1.0) };
        }
        let (y0, y1) = if log_y {
            (ty(lo) - 0.08, ty(hi.max(lo * 1.01)) + 0.08)
        } else {
            // Never clamp negative values: the axis reaches them.
            let y0 = lo.min(0.0);
            let y1 = if hi > y0 {
                hi + (hi - y0) * 0.08
            } else {
                y0 + 1.0
            };
            (y0, y1)
        };
        let mut chart = ChartBuilder::on(&area)
            .caption(&p.title, ("sans-serif", 17))
            .margin(14)
            .x_label_area_size(48)
            .y_label_area_size(66)
            .build_cartesian_2d(x0 - pad..x1 + pad, y0..y1)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(0)
            .x_desc(if c.log_x {
                format!("{} (log scale)", c.x_label)
            } else {
                c.x_label.clone()
            })
            .y_desc(if log_y {
                format!("{} (log scale)", c.y_label)
            } else {
                c.y_label.clone()
            })
            .axis_desc_style(("sans-serif", 15))
            .draw()
            .map_err(err)?;
        // Grid and ticks: x at the data's own values, y at 1-2-5 steps.
        let yt: Vec<f64> = if log_y {
            log_ticks(10f64.powf(y0), 10f64.powf(y1), 8)
        } else {
            linear_ticks(y0, y1, 6)
        };
        let grey = RGBColor(225, 225, 225);
        for &v in &yt {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(x0 - pad, ty(v)), (x1 + pad, ty(v))],
                    grey.stroke_width(1),
                )))
                .map_err(err)?;
        }
        for &x in &px {
            chart
                .draw_series(std::iter::once(PathElement::new(
                    vec![(tx(x), y0), (tx(x), y1)],
                    grey.stroke_width(1),
                )))
                .map_err(err)?;
        }
        let xl: Vec<((i32, i32), String)> = px
            .iter()
            .map(|&x| {
                (
                    chart.backend_coord(&(tx(x), y0)),
                    if c.integer_x {
                        format!("{x:.0}")
                    } else {
                        short_num(x)
                    },
                )
            })
            .collect();
        let yl: Vec<((i32, i32), String)> = yt
            .iter()
            .map(|&v| (chart.backend_coord(&(x0 - pad, ty(v))), short_num(v)))
            .collect();
        for s in &p.series {
            let i = names.iter().position(|n| *n == s.0).unwrap_or(0);
            let col = color(i);
            let line: Vec<(f64, f64)> =
                s.1.iter()
                    .filter(|q| !log_y || q.1 > 0.0)
                    .map(|&(x, y, _)| (tx(x), ty(y)))
                    .collect();
            chart
                .draw_series(LineSeries::new(line.clone(), col.stroke_width(2)))
                .map_err(err)?;
            for &(x, y, sd) in &s.1 {
                if sd > 0.0 && (!log_y || y - sd > 0.0) {
                    let (a, b) = (ty(y - sd), ty(y + sd));
                    chart
                        .draw_series(std::iter::once(PathElement::new(
                            vec![(tx(x), a), (tx(x), b)],
                            col.stroke_width(1),
                        )))
                        .map_err(err)?;
                }
            }
            for &(x, y) in &line {
                let at = chart.backend_coord(&(x, y));
                draw_marker(&root, at, marker(i), col)?;
            }
        }
        draw_labels(&root, &xl, true, 13)?;
        draw_labels(&root, &yl, false, 13)?;
    }
    // The legend, outside the panels.
    let (lw, _) = legend.dim_in_pixel();
    let _ = lw;
    let font = ("sans-serif", 15).into_font();
    for (i, n) in names.iter().enumerate() {
        let y = 60 + 24 * i as i32;
        legend
            .draw(&PathElement::new(
                vec![(10, y), (44, y)],
                color(i).stroke_width(2),
            ))
            .map_err(err)?;
        let (ox, oy) = legend.get_base_pixel();
        draw_marker(&root, (ox + 27, oy + y), marker(i), color(i))?;
        legend
            .draw(&Text::new(n.clone(), (52, y - 8), font.clone()))
            .map_err(err)?;
    }
    root.present().map_err(err)?;
    Ok(())
}
