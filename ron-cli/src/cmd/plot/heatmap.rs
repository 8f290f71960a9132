//! A latency matrix as a heatmap: on the left in CPU order with the tour
//! drawn as a thin line from cell to cell, on the right reordered along
//! the route (both axes are route positions; the tour is the
//! superdiagonal and the topology's blocks show), with a colour bar in ns.
//! No per-cell text, so 256 CPUs stay readable.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};
use ron_topo::LatencyMatrix;

use super::axes::draw_labels;
use super::style::{num_within, viridis};

/// Picture size.
pub const SIZE: (u32, u32) = (1500, 760);

fn err<E: std::fmt::Display>(e: E) -> String {
    e.to_string()
}

/// Every `k`-th index gets a label, with `k` a power of two giving at most
/// 16 labels.
fn label_step(n: usize) -> usize {
    let mut k = 1;
    while n.div_ceil(k) > 16 {
        k *= 2;
    }
    k
}

/// Draws the heatmap of `m` with the route `order` (matrix indices).
pub fn draw<DB: DrawingBackend>(
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
    if !lo.is_finite() {
        (lo, hi) = (0.0, 1.0); // a 1x1 matrix has no off-diagonal entry
    }
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        hi = lo + 1.0;
    }
    let cost = m.tour_cost(order);
    root.fill(&WHITE).map_err(err)?;
    let (w, _) = root.dim_in_pixel();
    let (body, bar) = root.split_horizontally(w - 110);
    let body = body
        .titled(
            &format!(
                "{title}: {n} CPU{}, route {:.1} ns per handover, FIFO mean {:.1} ns",
                if n == 1 { "" } else { "s" },
                cost / n as f64,
                m.fifo_mean()
            ),
            ("sans-serif", 20),
        )
        .map_err(err)?;
    let (left, right) = body.split_horizontally(body.dim_in_pixel().0 / 2);
    let color = |v: f64| viridis((v - lo) / (hi - lo));
    let cpus = m.cpus().to_vec();
    let step = label_step(n);
    for (panel, area) in [(0, left), (1, right)] {
        // Panel 0: CPU order; panel 1: route order.
        let idx: Vec<usize> = if panel == 0 {
            (0..n).collect()
        } else {
            order.to_vec()
        };
        let (caption, xd, yd) = if panel == 0 {
            (
                if n <= 64 {
                    "CPU order; the red line is the route (row -> column)"
                } else {
                    "CPU order (the route: right panel)"
                },
                "to CPU",
                "from CPU",
            )
        } else {
            (
                "reordered along the route (the route is the superdiagonal)",
                "to: route position",
                "from: route position",
            )
        };
        let mut chart = ChartBuilder::on(&area)
            .caption(caption, ("sans-serif", 16))
            .margin(14)
            .x_label_area_size(44)
            .y_label_area_size(52)
            .build_cartesian_2d(0f64..n as f64, n as f64..0f64)
            .map_err(err)?;
        chart
            .configure_mesh()
            .disable_mesh()
            .x_labels(0)
            .y_labels(0)
            .x_desc(xd)
            .y_desc(yd)
            .axis_desc_style(("sans-serif", 14))
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
        // Tick labels: CPU ids (left) or route positions (right).
        let label = |k: usize| {
            if panel == 0 {
                cpus[k].to_string()
            } else {
                k.to_string()
            }
        };
        let ks: Vec<usize> = (0..n).step_by(step).collect();
        let xl: Vec<((i32, i32), String)> = ks
            .iter()
            .map(|&k| (chart.backend_coord(&(k as f64 + 0.5, n as f64)), label(k)))
            .collect();
        let yl: Vec<((i32, i32), String)> = ks
            .iter()
            .map(|&k| (chart.backend_coord(&(0.0, k as f64 + 0.5)), label(k)))
            .collect();
        draw_labels(&root, &xl, true, 12)?;
        draw_labels(&root, &yl, false, 12)?;
        if panel == 0 && n > 1 && n <= 64 {
            // The tour, cell to cell: a thin line, dots only while they fit.
            let cells: Vec<(f64, f64)> = (0..=n)
                .map(|k| {
                    let (a, b) = (order[k % n], order[(k + 1) % n]);
                    (b as f64 + 0.5, a as f64 + 0.5)
                })
                .collect();
            let width = if n > 32 { 1 } else { 2 };
            chart
                .draw_series(std::iter::once(PathElement::new(
                    cells.clone(),
                    RGBColor(230, 30, 30).mix(0.85).stroke_width(width),
                )))
                .map_err(err)?;
            if n <= 32 {
                chart
                    .draw_series(
                        cells
                            .iter()
                            .take(n)
                            .map(|&p| Circle::new(p, 4, WHITE.stroke_width(2))),
                    )
                    .map_err(err)?;
            }
        } else if panel == 1 && n > 1 && n <= 64 {
            // Outline the superdiagonal cells (the route's hops).
            chart
                .draw_series((0..n).map(|p| {
                    let c = ((p + 1) % n) as f64;
                    Rectangle::new(
                        [(c, p as f64), (c + 1.0, p as f64 + 1.0)],
                        RGBColor(230, 30, 30).stroke_width(1),
                    )
                }))
                .map_err(err)?;
        }
    }
    // Colour bar with its unit.
    let (_, bh) = bar.dim_in_pixel();
    let (top, bottom) = (70i32, bh as i32 - 70);
    let steps = 120;
    let y_of = |t: f64| bottom - ((bottom - top) as f64 * t).round() as i32;
    for s in 0..steps {
        let (t0, t1) = (s as f64 / steps as f64, (s + 1) as f64 / steps as f64);
        bar.draw(&Rectangle::new(
            [(20, y_of(t1)), (44, y_of(t0))],
            viridis((t0 + t1) / 2.0).filled(),
        ))
        .map_err(err)?;
    }
    bar.draw(&Rectangle::new(
        [(20, top - 2), (44, bottom + 1)],
        BLACK.stroke_width(1),
    ))
    .map_err(err)?;
    let style =
        TextStyle::from(("sans-serif", 13).into_font()).pos(Pos::new(HPos::Left, VPos::Center));
    for k in 0..=4 {
        let t = k as f64 / 4.0;
        let y = bottom - ((bottom - top) as f64 * t) as i32;
        bar.draw(&Text::new(
            num_within(lo + (hi - lo) * t, hi - lo),
            (50, y),
            style.clone(),
        ))
        .map_err(err)?;
    }
    bar.draw(&Text::new(
        "ns".to_string(),
        (26, top - 20),
        TextStyle::from(("sans-serif", 14).into_font()).pos(Pos::new(HPos::Left, VPos::Center)),
    ))
    .map_err(err)?;
    root.present().map_err(err)?;
    Ok(())
}
