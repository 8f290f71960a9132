//! Latency metrics of a run (HDR histogram percentiles); the fairness
//! metrics are ron-stats'.

use hdrhistogram::Histogram;

/// The fairness factor and coefficient of variation of per-thread counts,
/// from ron-stats (one definition for the harness, the simulator and the
/// examples).
pub use ron_stats::{cv, fairness_factor};

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
