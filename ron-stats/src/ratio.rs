//! Ratios with their spread, and the mean and spread of repeated runs: the
//! "x times as fast +- sd" of every report.

/// `a / b`, or `None` when `b` is not a positive finite number or the
/// result is not finite.
///
/// ```
/// use ron_stats::ratio;
/// assert_eq!(ratio(3.0, 2.0), Some(1.5));
/// assert_eq!(ratio(1.0, 0.0), None);
/// ```
pub fn ratio(a: f64, b: f64) -> Option<f64> {
    if b > 0.0 && b.is_finite() {
        Some(a / b).filter(|r| r.is_finite())
    } else {
        None
    }
}

/// Mean and sample standard deviation (0 for fewer than two values).
///
/// ```
/// use ron_stats::mean_sd;
/// assert_eq!(mean_sd(&[2.0, 4.0]), (3.0, 2f64.sqrt()));
/// assert_eq!(mean_sd(&[5.0]), (5.0, 0.0));
/// ```
pub fn mean_sd(xs: &[f64]) -> (f64, f64) {
    if xs.is_empty() {
        return (0.0, 0.0);
    }
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    if xs.len() < 2 {
        return (mean, 0.0);
    }
    let var = xs.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (n - 1.0);
    (mean, var.sqrt())
}

/// Standard deviation of `a / b` from those of `a` and `b` (first-order
/// error propagation, as hyperfine does for its "x times as fast").
///
/// ```
/// use ron_stats::ratio_sd;
/// assert_eq!(ratio_sd(2.0, 0.0, 1.0, 0.0), Some(0.0));
/// assert_eq!(ratio_sd(1.0, 0.1, 0.0, 0.0), None);
/// ```
pub fn ratio_sd(a: f64, sa: f64, b: f64, sb: f64) -> Option<f64> {
    let r = ratio(a, b)?;
    if a == 0.0 {
        return ratio(sa, b);
    }
    Some(r.abs() * ((sa / a).powi(2) + (sb / b).powi(2)).sqrt())
}
