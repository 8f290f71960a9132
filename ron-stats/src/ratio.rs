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

/// The median, lowest and highest of per-round ratios; shown as
/// `median (lowest-highest)`, two decimals each.
///
/// ```
/// let r = ron_stats::round_ratios(&[2.0, 1.0, 6.0], &[2.0, 2.0, 4.0]).unwrap();
/// assert_eq!(r.to_string(), "1.00 (0.50-1.50)");
/// ```
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct RoundRatios {
    /// Median of `a[i] / b[i]` over the rounds.
    pub median: f64,
    /// Lowest of them.
    pub min: f64,
    /// Highest of them.
    pub max: f64,
}

impl core::fmt::Display for RoundRatios {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        write!(f, "{:.2} ({:.2}-{:.2})", self.median, self.min, self.max)
    }
}

/// The ratios `a[i] / b[i]` of two series measured in the same rounds
/// (round `i` of both side by side, so a slow phase of the machine
/// weighs on both): their median, lowest and highest. `None` when the
/// series differ in length, are empty, or some `b[i]` is not a positive
/// finite number.
///
/// ```
/// use ron_stats::round_ratios;
/// let r = round_ratios(&[2.0, 1.0, 6.0], &[2.0, 2.0, 4.0]).unwrap();
/// assert_eq!((r.median, r.min, r.max), (1.0, 0.5, 1.5));
/// assert!(round_ratios(&[1.0], &[1.0, 2.0]).is_none());
/// assert!(round_ratios(&[1.0], &[0.0]).is_none());
/// ```
pub fn round_ratios(a: &[f64], b: &[f64]) -> Option<RoundRatios> {
    if a.len() != b.len() || a.is_empty() {
        return None;
    }
    let mut r: Vec<f64> = a
        .iter()
        .zip(b)
        .map(|(&x, &y)| ratio(x, y))
        .collect::<Option<_>>()?;
    let min = r.iter().copied().fold(f64::INFINITY, f64::min);
    let max = r.iter().copied().fold(f64::NEG_INFINITY, f64::max);
    Some(RoundRatios {
        median: crate::metrics::median(&mut r),
        min,
        max,
    })
}
