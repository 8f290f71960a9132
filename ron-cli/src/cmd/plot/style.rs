//! Fonts, colours and markers shared by every picture.

use plotters::prelude::*;
use plotters::style::FontStyle;

/// Registers the embedded font (DejaVu Sans) as `sans-serif`: text needs
/// no system font and no fontconfig.
pub fn register_fonts() -> Result<(), String> {
    let bad = |_| "the embedded font is invalid".to_string();
    plotters::style::register_font("sans-serif", FontStyle::Normal, dejavu::sans::regular())
        .map_err(bad)?;
    plotters::style::register_font("sans-serif", FontStyle::Bold, dejavu::sans::bold()).map_err(bad)
}

/// Twenty colours of high mutual contrast on white (Kelly's list without
/// white and the lightest tints), so 17 locks stay apart; markers add a
/// second cue.
const PALETTE: [(u8, u8, u8); 20] = [
    (0, 114, 178),
    (213, 94, 0),
    (0, 158, 115),
    (204, 121, 167),
    (230, 159, 0),
    (86, 180, 233),
    (0, 0, 0),
    (190, 0, 50),
    (128, 62, 117),
    (129, 112, 102),
    (0, 125, 52),
    (246, 118, 142),
    (0, 83, 138),
    (147, 170, 0),
    (89, 51, 21),
    (241, 58, 19),
    (35, 44, 22),
    (179, 68, 108),
    (135, 86, 146),
    (100, 100, 100),
];

/// The colour of series `i`.
pub fn color(i: usize) -> RGBColor {
    let (r, g, b) = PALETTE[i % PALETTE.len()];
    RGBColor(r, g, b)
}

/// Marker shapes, cycled with a period prime to the palette's.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Marker {
    /// A filled circle.
    Circle,
    /// A filled square.
    Square,
    /// A filled triangle.
    Triangle,
}

/// The marker of series `i`.
pub fn marker(i: usize) -> Marker {
    [Marker::Circle, Marker::Square, Marker::Triangle][i % 3]
}

/// Viridis, interpolated between five stops; `t` in `[0, 1]`.
pub fn viridis(t: f64) -> RGBColor {
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

/// A short number for an axis label: integers without decimals, small
/// values with two significant digits.
pub fn short_num(v: f64) -> String {
    if v == 0.0 {
        "0".into()
    } else if ((v - v.round()).abs() < 1e-9 && v.abs() < 1e9) || v.abs() >= 10.0 {
        format!("{v:.0}")
    } else if v.abs() >= 1.0 {
        format!("{v:.1}")
    } else {
        format!("{v:.2}")
    }
}

/// `v` with enough decimals to tell apart values `span` apart (at most 3).
pub fn num_within(v: f64, span: f64) -> String {
    let decimals = if span > 0.0 && span.is_finite() {
        (1.0 - (span / 4.0).log10().floor()).clamp(0.0, 3.0) as usize
    } else {
        0
    };
    if decimals == 0 {
        short_num(v)
    } else {
        format!("{v:.decimals$}")
    }
}
