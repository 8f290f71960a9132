//! The kinds of result rows that `ron` computes itself (the benchmark rows
//! come from `ron_bench::report`): the subcommands fill them in, `output`
//! renders them.

use ron_sim::SimReport;
use serde::Serialize;

/// Whether a difference exceeds the noise.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// New is faster, beyond the noise.
    Faster,
    /// New is slower, beyond the noise.
    Slower,
    /// The difference is within twice the combined standard deviation.
    WithinNoise,
    /// A single run on one side: no spread to judge by.
    OneRun,
}

impl std::fmt::Display for Verdict {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(match self {
            Verdict::Faster => "faster",
            Verdict::Slower => "slower",
            Verdict::WithinNoise => "within noise",
            Verdict::OneRun => "? (1 run)",
        })
    }
}

/// One point of `ron compare`, present in both runs.
#[derive(Debug, Clone, Serialize)]
pub struct CompareRow {
    /// Lock.
    pub lock: String,
    /// Workload.
    pub workload: String,
    /// Threads.
    pub threads: usize,
    /// Mean non-critical section (ns).
    pub ncs_ns: f64,
    /// Old throughput (Mlocks/s).
    pub old_mlocks_per_s: f64,
    /// New throughput (Mlocks/s).
    pub new_mlocks_per_s: f64,
    /// new / old.
    pub ratio: Option<f64>,
    /// Standard deviation of the ratio.
    pub ratio_sd: Option<f64>,
    /// Beyond the noise?
    pub verdict: Verdict,
}

/// One row of `ron simulate`: a [`SimReport`] plus its ratios to FIFO.
#[derive(Serialize, Debug, Clone)]
pub struct SimRow {
    /// The simulation's measurements.
    #[serde(flatten)]
    pub report: SimReport,
    /// throughput / FIFO's throughput at the same threads and nCS.
    pub throughput_vs_fifo: Option<f64>,
    /// handover mean / FIFO's handover mean at the same threads and nCS.
    pub handover_vs_fifo: Option<f64>,
}
