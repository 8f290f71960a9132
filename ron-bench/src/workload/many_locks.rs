//! Many locks, few of them contended: the shape of matklad's lock-bench.
//!
//! `T` threads share `N` locks, each guarding a `u64`. Every operation
//! picks one of the `N` locks uniformly at random (a per-thread
//! [`SplitMix64`]), locks it, increments its counter and unlocks it; there
//! is no non-critical section. With small `N` the locks are contended; with
//! large `N` (up to 10^6) they almost never are, and what counts is the
//! uncontended path and the memory the locks take (cache and TLB misses).
//!
//! Besides throughput, a run reports the bytes per lock (`size_of` of the
//! `Mutex<u64>` the workload allocates, the counter included) and the
//! process's *resident memory* while the locks exist: the current resident
//! set size from `/proc/self/statm`, read once before the locks are
//! allocated and once after the measured window (locks still alive, worker
//! threads joined). The difference is what the `N` locks (and whatever the
//! lock type allocates on the side) made resident; free memory is handed
//! back to the system first (glibc's `malloc_trim`), so that an earlier
//! point's freed locks do not hide this point's. The current RSS is used
//! rather than `getrusage`'s peak (`ru_maxrss`), which only grows over the
//! life of the process and so would show the largest earlier point.
//!
//! A point whose locks alone would take more than a bound
//! ([`ManyLocksConfig::max_lock_bytes`], 1 GiB by default) is not run: the
//! runner returns [`Skipped`] with the reason, and the grid reports it.

use std::sync::Barrier;
use std::time::Duration;

use ron_stats::{SplitMix64, mean_sd, ratio, ratio_sd};
use serde::{Deserialize, Serialize};

use super::phase::{MEASURE, Phase, STOP};
use crate::clock;
use crate::error::BenchError;
use crate::limits;
use crate::mutex::{BenchMutex, MutexFamily};
use crate::pin::{self, Pinning};

pub use crate::limits::MAX_LOCKS;
/// Default bound on the memory the locks of one point may take (1 GiB).
pub const DEFAULT_MAX_LOCK_BYTES: u64 = 1 << 30;

/// Parameters of one many-locks run.
#[derive(Debug, Clone)]
pub struct ManyLocksConfig {
    /// Number of threads (1..=[`MAX_THREADS`](limits::MAX_THREADS)).
    pub threads: usize,
    /// Number of locks (1..=[`MAX_LOCKS`]).
    pub n_locks: usize,
    /// Measured duration.
    pub duration: Duration,
    /// Warm-up before the measurement (not counted).
    pub warmup: Duration,
    /// Thread placement.
    pub pinning: Pinning,
    /// Seed of the per-thread generators.
    pub seed: u64,
    /// A point whose locks would take more bytes than this is skipped.
    pub max_lock_bytes: u64,
}

impl Default for ManyLocksConfig {
    fn default() -> Self {
        ManyLocksConfig {
            threads: 2,
            n_locks: 1000,
            duration: Duration::from_millis(100),
            warmup: Duration::from_millis(20),
            pinning: Pinning::Route,
            seed: 1,
            max_lock_bytes: DEFAULT_MAX_LOCK_BYTES,
        }
    }
}

impl ManyLocksConfig {
    /// Checks the ranges (see [`limits`]).
    pub fn validate(&self) -> Result<(), BenchError> {
        limits::threads(self.threads)?;
        limits::n_locks(self.n_locks)?;
        limits::duration(self.duration)?;
        limits::warmup(self.warmup)
    }
}

/// What one many-locks run measured.
#[derive(Debug, Clone, Default)]
pub struct ManyLocksStats {
    /// Operations per thread during the measured window.
    pub per_thread: Vec<u64>,
    /// Length of the measured window in seconds.
    pub elapsed_s: f64,
    /// CPU seconds of the process during the measured window.
    pub cpu_s: Option<f64>,
    /// Whether the counters summed to the number of operations made.
    pub exclusion_ok: bool,
    /// `size_of` of one lock with its `u64` counter.
    pub bytes_per_lock: usize,
    /// Resident set size before the locks were allocated (bytes).
    pub rss_before: Option<u64>,
    /// Resident set size after the measured window, locks alive (bytes).
    pub rss_after: Option<u64>,
}

impl ManyLocksStats {
    /// Million operations per second.
    pub fn mops_per_s(&self) -> f64 {
        ratio(
            self.per_thread.iter().sum::<u64>() as f64,
            self.elapsed_s * 1e6,
        )
        .unwrap_or(0.0)
    }
}

/// Why a point was not run.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Skipped {
    /// `size_of` of one lock with its counter.
    pub bytes_per_lock: usize,
    /// One line for people.
    pub reason: String,
}

/// The current resident set size of this process in bytes, from
/// `/proc/self/statm` (its second field, in pages); `None` where that file
/// does not exist (not Linux).
pub fn current_rss() -> Option<u64> {
    let statm = std::fs::read_to_string("/proc/self/statm").ok()?;
    let pages: u64 = statm.split_whitespace().nth(1)?.parse().ok()?;
    // SAFETY: `sysconf` only reads a configuration value; no pointer.
    let page = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    Some(pages * u64::try_from(page).ok().filter(|&p| p > 0)?)
}

/// Returns the allocator's free memory to the system where it can (glibc's
/// `malloc_trim`), so that the locks of an earlier point, freed but kept
/// resident by the allocator, do not hide this point's from the RSS delta.
fn give_back_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `malloc_trim` only releases free heap memory; it takes no
    // pointer and is safe to call at any time.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// `size_of` of lock family `F`'s mutex around a `u64`: the bytes one lock
/// of this workload takes.
pub fn bytes_per_lock<F: MutexFamily>() -> usize {
    std::mem::size_of::<F::Mutex<u64>>()
}

/// Memory besides `size_of` that a lock may use, for the notes of the
/// output (`None` for a lock that uses nothing else).
pub fn memory_note(lock: &str) -> Option<&'static str> {
    match lock {
        "ron-grant" | "ron-raw" => Some(
            "ron-grant, ron-raw: 8 bytes a lock (a flag or word and a block index); their route-ordered slots are a block from a process-wide pool (256 static blocks, grown up to 4096 with std), held only while the lock is contended",
        ),
        "ron-ticket" => Some(
            "ron-ticket: 8 bytes a lock (its flag and a block index); its route-ordered ticket slots are a block from a process-wide pool of its own, held only while the lock is contended",
        ),
        "nxt-ron" | "ron-plock" => Some(
            "nxt-ron, ron-plock: 8 bytes a lock (its flag and a block index); their route-ordered slots are a block from the same process-wide pool, held only while the lock is contended",
        ),
        "sh-ron" => Some("sh-ron: its slot table is shared by all locks of the process"),
        _ => None,
    }
}

/// Runs the many-locks workload once with lock family `F`, or skips it
/// when its locks would take more than `cfg.max_lock_bytes`.
pub fn run<F: MutexFamily>(cfg: &ManyLocksConfig) -> Result<ManyLocksStats, Skipped> {
    let bytes = bytes_per_lock::<F>();
    let total_bytes = (bytes as u64).saturating_mul(cfg.n_locks as u64);
    if total_bytes > cfg.max_lock_bytes {
        return Err(Skipped {
            bytes_per_lock: bytes,
            reason: format!(
                "{} locks x {bytes} bytes = {:.1} MiB, more than the {:.0} MiB bound",
                cfg.n_locks,
                total_bytes as f64 / (1u64 << 20) as f64,
                cfg.max_lock_bytes as f64 / (1u64 << 20) as f64
            ),
        });
    }
    clock::calibrate();
    give_back_free_memory();
    let rss_before = current_rss();
    let locks: Vec<F::Mutex<u64>> = (0..cfg.n_locks).map(|_| BenchMutex::new(0)).collect();
    let phase = Phase::new();
    let barrier = Barrier::new(cfg.threads + 1);
    let order = pin::cpu_order();
    let n = cfg.n_locks;

    let (outs, elapsed, cpu_s) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads)
            .map(|idx| {
                let (locks, phase, barrier) = (&locks, &phase, &barrier);
                let cpu = pin::cpu_for(cfg.pinning, &order, idx);
                let seed = cfg.seed;
                s.spawn(move || {
                    if let Some(c) = cpu {
                        pin::pin_current(c);
                    }
                    let mut rng = SplitMix64::for_stream(seed, idx as u64);
                    let (mut measured, mut all) = (0u64, 0u64);
                    barrier.wait();
                    loop {
                        let ph = phase.get();
                        if ph == STOP {
                            break;
                        }
                        let mut g = locks[rng.below(n)].lock();
                        *g = std::hint::black_box(*g).wrapping_add(1);
                        drop(g);
                        all += 1;
                        if ph == MEASURE {
                            measured += 1;
                        }
                    }
                    (measured, all)
                })
            })
            .collect();
        barrier.wait();
        let (elapsed, cpu_s) = phase.run_window(cfg.warmup, cfg.duration);
        let outs: Vec<(u64, u64)> = handles
            .into_iter()
            .map(|h| h.join().expect("benchmark thread panicked"))
            .collect();
        (outs, elapsed, cpu_s)
    });
    let rss_after = current_rss();
    let all: u64 = outs.iter().map(|o| o.1).sum();
    let sum = locks
        .into_iter()
        .map(BenchMutex::into_inner)
        .fold(0u64, u64::wrapping_add);
    Ok(ManyLocksStats {
        per_thread: outs.iter().map(|o| o.0).collect(),
        elapsed_s: elapsed.as_secs_f64(),
        cpu_s,
        exclusion_ok: sum == all,
        bytes_per_lock: bytes,
        rss_before,
        rss_after,
    })
}

/// One (lock, threads, locks) point of the many-locks workload, over its
/// repeats.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct ManyLocksRow {
    /// Always `many-locks`.
    pub workload: String,
    /// Lock name (the command-line name).
    pub lock: String,
    /// Threads.
    pub threads: usize,
    /// Number of locks.
    pub n_locks: usize,
    /// Measured window of one run (s; mean over the repeats).
    pub duration_s: f64,
    /// Whether threads were pinned along the route.
    pub pinned: bool,
    /// Seed of the generators.
    pub seed: u64,
    /// Runs behind this row.
    pub repeats: usize,
    /// Million operations (lock + increment + unlock) per second, mean
    /// over the runs.
    pub mops_per_s: f64,
    /// Sample standard deviation of `mops_per_s` (0 for one run).
    pub mops_per_s_sd: f64,
    /// Slowest run's `mops_per_s`.
    pub mops_per_s_min: f64,
    /// Fastest run's `mops_per_s`.
    pub mops_per_s_max: f64,
    /// Operations counted, all runs.
    pub total: u64,
    /// Busier half's share of the operations (0.5 = fair).
    pub fairness_factor: Option<f64>,
    /// CPU nanoseconds of the process per operation.
    pub cpu_ns_per_op: Option<f64>,
    /// Throughput / parking_lot's at the same point (`None` without
    /// parking_lot in the run).
    pub vs_parking_lot: Option<f64>,
    /// Standard deviation of `vs_parking_lot`.
    pub vs_parking_lot_sd: Option<f64>,
    /// `size_of` of one lock with its `u64` counter.
    pub bytes_per_lock: usize,
    /// `bytes_per_lock * n_locks`.
    pub lock_bytes: u64,
    /// Current resident set size after the measured window, locks alive
    /// (bytes; largest over the runs; `/proc/self/statm`).
    pub rss_bytes: Option<u64>,
    /// Resident set size gained between before the locks were allocated
    /// and after the measured window (bytes; largest over the runs).
    pub rss_delta_bytes: Option<u64>,
    /// Whether the counters summed to the operations made, in every run.
    pub exclusion_ok: bool,
    /// Operations per thread, all runs.
    pub per_thread: Vec<u64>,
}

impl ManyLocksRow {
    /// A row from the runs of one point (`vs_parking_lot` is filled by
    /// [`ManyLocksGrid::run`](crate::grid::ManyLocksGrid::run)). `runs` must not be empty.
    pub fn from_runs(lock: &str, cfg: &ManyLocksConfig, runs: &[ManyLocksStats]) -> ManyLocksRow {
        let k = runs.len().max(1) as f64;
        let tput: Vec<f64> = runs.iter().map(ManyLocksStats::mops_per_s).collect();
        let (mean, sd) = mean_sd(&tput);
        let mut per_thread = vec![0u64; cfg.threads];
        for r in runs {
            for (a, b) in per_thread.iter_mut().zip(&r.per_thread) {
                *a += b;
            }
        }
        let total: u64 = per_thread.iter().sum();
        let cpu: Option<f64> = runs.iter().map(|r| r.cpu_s).sum();
        let bytes = runs.first().map_or(0, |r| r.bytes_per_lock);
        ManyLocksRow {
            workload: "many-locks".into(),
            lock: lock.to_string(),
            threads: cfg.threads,
            n_locks: cfg.n_locks,
            duration_s: runs.iter().map(|r| r.elapsed_s).sum::<f64>() / k,
            pinned: cfg.pinning == Pinning::Route,
            seed: cfg.seed,
            repeats: runs.len(),
            mops_per_s: mean,
            mops_per_s_sd: sd,
            mops_per_s_min: tput.iter().copied().reduce(f64::min).unwrap_or(0.0),
            mops_per_s_max: tput.iter().copied().reduce(f64::max).unwrap_or(0.0),
            total,
            fairness_factor: (total > 0).then(|| crate::metrics::fairness_factor(&per_thread)),
            cpu_ns_per_op: cpu.and_then(|c| ratio(c * 1e9, total as f64)),
            vs_parking_lot: None,
            vs_parking_lot_sd: None,
            bytes_per_lock: bytes,
            lock_bytes: (bytes as u64).saturating_mul(cfg.n_locks as u64),
            rss_bytes: runs.iter().filter_map(|r| r.rss_after).max(),
            rss_delta_bytes: runs
                .iter()
                .filter_map(|r| Some(r.rss_after?.saturating_sub(r.rss_before?)))
                .max(),
            exclusion_ok: runs.iter().all(|r| r.exclusion_ok),
            per_thread,
        }
    }
}

/// Fills `vs_parking_lot` (and its spread) of every row from the
/// parking_lot row at the same (threads, locks).
pub fn add_ratios(rows: &mut [ManyLocksRow]) {
    let pl: Vec<(usize, usize, f64, f64)> = rows
        .iter()
        .filter(|r| r.lock == "parking_lot")
        .map(|r| (r.threads, r.n_locks, r.mops_per_s, r.mops_per_s_sd))
        .collect();
    for r in rows.iter_mut() {
        if let Some(&(_, _, m, sd)) = pl.iter().find(|p| p.0 == r.threads && p.1 == r.n_locks) {
            r.vs_parking_lot = ratio(r.mops_per_s, m);
            r.vs_parking_lot_sd =
                ratio_sd(r.mops_per_s, r.mops_per_s_sd, m, sd).filter(|_| r.repeats > 1);
        }
    }
}
