//! Axis ticks drawn by hand: plotters' automatic ticks overlap on log axes
//! and put fractions on integer axes, so the tick positions are chosen here
//! (the data's own x values; 1-2-5 steps for y) and labels that would
//! overlap are dropped.

use plotters::coord::Shift;
use plotters::prelude::*;
use plotters::style::text_anchor::{HPos, Pos, VPos};

/// Nice linear ticks (1, 2, 5 x 10^k steps), at most about `max` of them,
/// covering `[lo, hi]`.
pub fn linear_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    if hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater)
        || !lo.is_finite()
        || !hi.is_finite()
    {
        return vec![lo];
    }
    let raw = (hi - lo) / max.max(1) as f64;
    let mag = 10f64.powf(raw.log10().floor());
    let step = [1.0, 2.0, 5.0, 10.0]
        .iter()
        .map(|m| m * mag)
        .find(|s| *s >= raw)
        .unwrap_or(10.0 * mag);
    let mut v = (lo / step).ceil() * step;
    let mut out = Vec::new();
    while v <= hi + step * 1e-9 && out.len() < 100 {
        out.push(if v.abs() < step * 1e-9 { 0.0 } else { v });
        v += step;
    }
    out
}

/// Log ticks: 1, 2, 5 x 10^k inside `[lo, hi]` (both > 0); only powers of
/// ten when that gives more than `max`, every whole multiple of a power of
/// ten when the range spans less than a decade.
pub fn log_ticks(lo: f64, hi: f64, max: usize) -> Vec<f64> {
    if lo <= 0.0 || hi.partial_cmp(&lo) != Some(std::cmp::Ordering::Greater) {
        return vec![lo.max(f64::MIN_POSITIVE)];
    }
    let (a, b) = (lo.log10().floor() as i32, hi.log10().ceil() as i32);
    let pick = |mults: &[f64]| -> Vec<f64> {
        (a..=b)
            .flat_map(|e| mults.iter().map(move |m| m * 10f64.powi(e)))
            .filter(|v| *v >= lo * (1.0 - 1e-9) && *v <= hi * (1.0 + 1e-9))
            .collect()
    };
    let fine = pick(&[1.0, 2.0, 5.0]);
    if fine.len() < 3 {
        // Less than a decade: every whole multiple.
        pick(&[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0])
    } else if fine.len() <= max {
        fine
    } else {
        pick(&[1.0])
    }
}

/// Draws tick labels at pixel positions along an axis, skipping any label
/// that would overlap the previous one.
pub fn draw_labels<DB: DrawingBackend>(
    root: &DrawingArea<DB, Shift>,
    labels: &[((i32, i32), String)],
    horizontal: bool,
    size: u32,
) -> Result<(), String> {
    let style = TextStyle::from(("sans-serif", size).into_font()).pos(if horizontal {
        Pos::new(HPos::Center, VPos::Top)
    } else {
        Pos::new(HPos::Right, VPos::Center)
    });
    let char_w = (size as i32 * 6) / 10;
    let mut last: Option<i32> = None;
    let mut sorted: Vec<&((i32, i32), String)> = labels.iter().collect();
    sorted.sort_by_key(|((x, y), _)| if horizontal { *x } else { -*y });
    for ((x, y), text) in sorted {
        let (at, extent) = if horizontal {
            (*x, char_w * text.chars().count() as i32 + 8)
        } else {
            (-*y, size as i32 + 4)
        };
        if last.is_some_and(|l| at - l < extent) {
            continue;
        }
        last = Some(at);
        let (px, py) = if horizontal {
            (*x, *y + 6)
        } else {
            (*x - 6, *y)
        };
        root.draw(&Text::new(text.clone(), (px, py), style.clone()))
            .map_err(|e| e.to_string())?;
        let tick = if horizontal {
            vec![(*x, *y), (*x, *y + 4)]
        } else {
            vec![(*x - 4, *y), (*x, *y)]
        };
        root.draw(&PathElement::new(tick, BLACK.stroke_width(1)))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ticks_are_nice() {
        assert_eq!(
            linear_ticks(0.0, 10.0, 5),
            vec![0.0, 2.0, 4.0, 6.0, 8.0, 10.0]
        );
        assert_eq!(linear_ticks(-1.0, 1.0, 4), vec![-1.0, -0.5, 0.0, 0.5, 1.0]);
        assert_eq!(
            log_ticks(1.0, 100.0, 10),
            vec![1.0, 2.0, 5.0, 10.0, 20.0, 50.0, 100.0]
        );
        assert_eq!(
            log_ticks(1.0, 1e6, 5),
            vec![1.0, 10.0, 100.0, 1e3, 1e4, 1e5, 1e6]
        );
    }
}
