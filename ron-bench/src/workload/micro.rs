//! The seeds' microbenchmark: the critical section reads and writes `K`
//! cache lines of shared data.

use crate::mutex::MutexFamily;
use crate::workload::{LoopConfig, RunStats, drive};

pub use crate::limits::MAX_CS_LINES;

/// Parameters of the microbenchmark.
#[derive(Debug, Clone, Default)]
pub struct MicroConfig {
    /// Threads, nCS, duration, pinning, seed.
    pub base: LoopConfig,
    /// Cache lines read and written per critical section.
    pub cs_lines: usize,
}

/// One 64-byte cache line of shared data.
#[derive(Clone, Copy, Default)]
#[repr(align(64))]
struct Line([u64; 8]);

/// Runs the microbenchmark with lock family `F`.
///
/// Each critical section increments the first word of every line; at the
/// end every line must hold the total number of acquisitions, which
/// [`RunStats::exclusion_ok`] reports.
pub fn run<F: MutexFamily>(cfg: &MicroConfig) -> RunStats {
    let lines = vec![Line::default(); cfg.cs_lines.min(MAX_CS_LINES)];
    let (mut stats, lines, all) = drive::<F, _, _>(&cfg.base, lines, |lines: &mut Vec<Line>, _| {
        for l in lines.iter_mut() {
            l.0[0] = std::hint::black_box(l.0[0]).wrapping_add(1);
        }
    });
    stats.exclusion_ok = lines.iter().all(|l| l.0[0] == all);
    stats
}
