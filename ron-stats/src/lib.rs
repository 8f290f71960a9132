//! The numbers every part of the ron lock family reports, defined once:
//! the benchmark harness (ron-bench), the policy simulator (ron-sim) and
//! the examples use these, so a fairness factor means the same thing in
//! every table.
//!
//! * [`metrics`]: fairness factor, coefficient of variation, median,
//!   nearest-rank percentile and Spearman's rank correlation.
//! * [`ratio`](mod@ratio): ratios with their spread, mean and standard
//!   deviation of repeated runs.
//! * [`rng`]: SplitMix64, a seeded generator with the same stream on every
//!   platform.
//!
//! No dependencies, so anything (including a harness outside this
//! workspace) can use it for free.

pub mod metrics;
pub mod ratio;
pub mod rng;

pub use metrics::{cv, fairness_factor, median, percentile, spearman};
pub use ratio::{RoundRatios, mean_sd, ratio, ratio_sd, round_ratios};
pub use rng::SplitMix64;
