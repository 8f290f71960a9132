//! The RON paper's microbenchmark (its Algorithm 4): the critical section
//! reads and writes 100 shared 4-byte integers (one contiguous array, 400
//! bytes: 7 cache lines), then the thread waits nCS ns +-15 % outside it.
//!
//! Per acquisition the run records, as the paper does, the time of the
//! data accesses inside the critical section (the clock read before and
//! after the 100 reads and writes) and the number of threads waiting for
//! the lock at that moment (a shared counter incremented before `lock()`
//! and decremented once the lock is held). That counter adds one
//! read-modify-write of a shared cache line on each side of every
//! acquisition, as in the paper's own measurement; the other workloads do
//! not have it, so their throughput is not comparable with this one's.

use std::hint::black_box;

use crate::mutex::MutexFamily;
use crate::workload::{LoopConfig, RunStats, drive_probed};

/// Shared integers read and written per critical section.
pub const INTS: usize = 100;

/// The shared data: 100 contiguous 4-byte integers, starting on a cache
/// line.
#[derive(Clone, Copy)]
#[repr(align(64))]
struct Ints([u32; INTS]);

/// Runs the RON paper's microbenchmark with lock family `F`.
///
/// Each critical section increments all 100 integers; at the end every
/// one must equal the number of acquisitions (modulo 2^32), which
/// [`RunStats::exclusion_ok`] reports. [`RunStats::cs_data_ns`] and
/// [`RunStats::waiters`] hold the means over the measured acquisitions.
pub fn run<F: MutexFamily>(cfg: &LoopConfig) -> RunStats {
    let (mut stats, ints, all) =
        drive_probed::<F, _, _>(cfg, Ints([0; INTS]), |d: &mut Ints, _| {
            for x in d.0.iter_mut() {
                // One read and one write per integer, not folded into
                // wider operations by the optimizer.
                *x = black_box(*x).wrapping_add(1);
            }
        });
    // Truncation intended: the integers count modulo 2^32.
    stats.exclusion_ok = ints.0.iter().all(|&x| x == all as u32);
    stats
}
