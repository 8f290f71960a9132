//! Fairness and latency metrics of a run.

use hdrhistogram::Histogram;

/// Share of all acquisitions taken by the busier half of the threads:
/// 0.5 is perfectly fair, 1.0 means half the threads starved. With an odd
/// thread count the middle thread counts half. 0.5 when nothing was counted.
///
/// ```
/// use ron_bench::metrics::fairness_factor;
/// assert_eq!(fairness_factor(&[10, 10, 10, 10]), 0.5);
/// assert_eq!(fairness_factor(&[30, 10, 0, 0]), 1.0);
/// ```
pub fn fairness_factor(counts: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return 0.5;
    }
    let mut sorted = counts.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let half = sorted.len() / 2;
    let mut top = sorted[..half].iter().sum::<u64>() as f64;
    if sorted.len() % 2 == 1 {
        top += 0.5 * sorted[half] as f64;
    }
    top / total as f64
}

/// Coefficient of variation of the counts: population standard deviation
/// divided by the mean (0 when the mean is 0).
///
/// ```
/// use ron_bench::metrics::cv;
/// assert_eq!(cv(&[5, 5, 5]), 0.0);
/// assert!((cv(&[0, 2]) - 1.0).abs() < 1e-12);
/// ```
pub fn cv(counts: &[u64]) -> f64 {
    if counts.is_empty() {
        return 0.0;
    }
    let n = counts.len() as f64;
    let mean = counts.iter().sum::<u64>() as f64 / n;
    if mean == 0.0 {
        return 0.0;
    }
    let var = counts
        .iter()
        .map(|&c| (c as f64 - mean).powi(2))
        .sum::<f64>()
        / n;
    var.sqrt() / mean
}

/// Acquire-latency percentiles in ns.
#[derive(Debug, Clone, Copy, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Percentiles {
    /// Median.
    pub p50_ns: f64,
    /// 99th percentile.
    pub p99_ns: f64,
    /// 99.9th percentile.
    pub p999_ns: f64,
}

/// A latency histogram in clock ticks (see [`crate::clock`]): 1 tick to
/// ~10^12 ticks, 2 significant digits (1% resolution, ~30 KiB).
pub fn tick_histogram() -> Histogram<u64> {
    Histogram::new_with_bounds(1, 1 << 40, 2).expect("static histogram bounds are valid")
}

/// The percentiles of a tick histogram, converted to ns with
/// `ticks_per_ns`; all zero for an empty histogram.
pub fn percentiles(h: &Histogram<u64>, ticks_per_ns: f64) -> Percentiles {
    if h.is_empty() {
        return Percentiles::default();
    }
    let q = |x: f64| h.value_at_quantile(x) as f64 / ticks_per_ns;
    Percentiles {
        p50_ns: q(0.50),
        p99_ns: q(0.99),
        p999_ns: q(0.999),
    }
}
