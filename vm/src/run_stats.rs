//! What one run on the virtual machine measured: the record a run
//! returns (across the process boundary of `fixed::isolated`),
//! and the figures derived from it.

/// What a run measured (virtual times unless named `wall`).
#[derive(Debug, Clone, PartialEq)]
pub struct RunStats {
    /// Acquisitions in all.
    pub total: u64,
    /// Acquisitions in the measured window (the first 10 % are warm-up and
    /// the last `threads` are the drain, when fewer threads compete).
    pub window_acquisitions: u64,
    /// The measured window (virtual ns).
    pub window_ns: f64,
    /// Million acquisitions per virtual second in the window.
    pub mlocks_per_s: f64,
    /// Mean time from a release to the next acquisition by another thread (ns).
    pub handover_ns: f64,
    /// Median of the same (ns).
    pub handover_p50_ns: f64,
    /// Handovers in the window.
    pub handovers: u64,
    /// Acquire latency percentiles (ns): 50, 99, 99.9.
    pub latency_ns: [f64; 3],
    /// Acquisitions per thread in the window.
    pub per_thread: Vec<u64>,
    /// Whether every data line counted every acquisition.
    pub exclusion_ok: bool,
    /// Wall-clock seconds the simulation took.
    pub wall_s: f64,
    /// CPU seconds the simulation took (its thread's CPU time: on a loaded
    /// host this is the cost of the simulation, the wall time is not).
    pub cpu_s: f64,
    /// Fiber switches of the executor.
    pub switches: u64,
    /// What the cost model charged over the whole run.
    pub memory: ron_vm::CostStats,
    /// Line transfers (misses: a line moved between CPUs or fetched cold)
    /// in the measured window, of every line the run touched: the lock's
    /// and the critical section's data.
    pub window_transfers: u64,
    /// Per acquisition in the window: threads waiting when it was taken,
    /// and the time (ns) the critical section's data accesses took.
    pub cs_samples: Vec<(u32, f64)>,
    /// With [`crate::workload::measure_lines`] on: the lines that cost the
    /// window most, by the time their requesters waited (at most
    /// [`LINES_KEPT`]); empty otherwise.
    pub lines: Vec<LineShare>,
    /// With [`crate::workload::measure_lines`] on: every line of the
    /// window summed by kind (lock, data, other): transfers and the time
    /// their requesters waited (ps); zeros otherwise.
    pub kind_totals: [(u64, u64); 3],
}

/// Lines kept in [`RunStats::lines`].
pub const LINES_KEPT: usize = 8;

/// What one cache line cost a run's measured window.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineShare {
    /// Whose line it is.
    pub kind: LineKind,
    /// The line's first byte.
    pub addr: u64,
    /// Its transfers in the window.
    pub transfers: u64,
    /// Time their requesters waited (ps).
    pub wait_ps: u64,
}

/// Whose line a [`LineShare`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LineKind {
    /// The lock itself (its own bytes).
    Lock,
    /// A data line of the critical section.
    Data,
    /// Anything else: a pool block, a shared table, a queue node.
    Other,
}

impl LineKind {
    /// The name printed.
    pub fn name(self) -> &'static str {
        match self {
            LineKind::Lock => "lock",
            LineKind::Data => "data",
            LineKind::Other => "other",
        }
    }

    /// As a number (encoding across the process boundary).
    pub(crate) fn code(self) -> u64 {
        self as u64
    }

    /// The inverse of [`code`](Self::code).
    #[cfg_attr(not(all(unix, not(ron_coverage))), allow(dead_code))]
    pub(crate) fn from_code(c: u64) -> Option<LineKind> {
        [LineKind::Lock, LineKind::Data, LineKind::Other]
            .get(c as usize)
            .copied()
    }
}

impl RunStats {
    /// The busier half's share of the acquisitions (0.5 = fair).
    pub fn fairness_factor(&self) -> f64 {
        ron_stats::fairness_factor(&self.per_thread)
    }

    /// Coefficient of variation of the per-thread counts.
    pub fn cv(&self) -> f64 {
        ron_stats::cv(&self.per_thread)
    }

    /// Mean data-access time in the critical section (ns).
    pub fn cs_data_ns(&self) -> f64 {
        let n = self.cs_samples.len().max(1) as f64;
        self.cs_samples.iter().map(|s| s.1).sum::<f64>() / n
    }

    /// Line transfers per handover in the window (all lines: the lock's
    /// and at most `K` data lines per handover; 0 without handovers).
    pub fn transfers_per_handover(&self) -> f64 {
        if self.handovers == 0 {
            0.0
        } else {
            self.window_transfers as f64 / self.handovers as f64
        }
    }

    /// Mean number of threads waiting when the lock was taken.
    pub fn waiters(&self) -> f64 {
        let n = self.cs_samples.len().max(1) as f64;
        self.cs_samples.iter().map(|s| s.0 as f64).sum::<f64>() / n
    }
}
