//! The workloads and the loop that drives them.
//!
//! Every lock-loop workload ([`micro`], [`kv`], [`ron_micro`]) is the same loop around a
//! different critical section: `N` threads each repeat
//! `{ lock; critical section; unlock; busy-wait nCS ns +-15% }` for a
//! warm-up and then a measured duration. [`corunner`] measures something
//! else (the cost of waiting on the CPU's other tenants), and [`many_locks`]
//! another loop: many locks, each operation on a random one; [`rw`] the
//! same loop over a reader-writer lock, each operation a read or a write.
//!
//! Per acquisition, inside the critical section, a thread reads the clock at
//! entry and stores its exit timestamp and its index in the shared data
//! (protected by the lock). The next owner therefore knows when, and by
//! whom, the lock was last released: a *handover* is counted when the
//! previous owner was another thread and the new owner had started waiting
//! before that release (so idle time of an uncontended lock is not counted
//! as handover time).

pub mod corunner;
pub mod kv;
pub mod many_locks;
pub mod micro;
mod phase;
pub mod ron_micro;
pub mod rw;

use std::sync::Barrier;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use self::phase::{MEASURE, Phase, STOP};
use crate::clock;
use crate::error::BenchError;
use crate::limits;
pub use crate::limits::{MAX_DURATION, MAX_THREADS};
use crate::metrics::{self, Percentiles};
use crate::mutex::{BenchMutex, MutexFamily};
use crate::pin::{self, Pinning};
use ron_stats::SplitMix64;

/// Parameters shared by the lock-loop workloads.
#[derive(Debug, Clone)]
pub struct LoopConfig {
    /// Number of threads (1..=[`MAX_THREADS`]).
    pub threads: usize,
    /// Mean non-critical section in ns (jittered +-15% per iteration).
    pub ncs_ns: f64,
    /// Measured duration.
    pub duration: Duration,
    /// Warm-up before the measurement (not counted).
    pub warmup: Duration,
    /// Thread placement.
    pub pinning: Pinning,
    /// Seed of the per-thread jitter and workload generators.
    pub seed: u64,
}

impl Default for LoopConfig {
    fn default() -> Self {
        LoopConfig {
            threads: 2,
            ncs_ns: 0.0,
            duration: Duration::from_millis(250),
            warmup: Duration::from_millis(50),
            pinning: Pinning::Route,
            seed: 1,
        }
    }
}

impl LoopConfig {
    /// Checks the ranges (see [`limits`]).
    pub fn validate(&self) -> Result<(), BenchError> {
        limits::threads(self.threads)?;
        limits::ncs_ns(self.ncs_ns)?;
        limits::duration(self.duration)?;
        limits::warmup(self.warmup)
    }
}

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct RunStats {
    /// Acquisitions per thread during the measured window.
    pub per_thread: Vec<u64>,
    /// Length of the measured window in seconds.
    pub elapsed_s: f64,
    /// Acquire latency (request to entry) percentiles.
    pub latency: Percentiles,
    /// Mean handover time in ns (0 when no handover was counted).
    pub handover_ns: f64,
    /// Median handover time in ns (robust to a preempted holder).
    pub handover_p50_ns: f64,
    /// Number of handovers counted.
    pub handovers: u64,
    /// Whether the shared data's final state matched the number of
    /// acquisitions (a mutual-exclusion check; `true` when not checkable).
    pub exclusion_ok: bool,
    /// CPU seconds the whole process used during the measured window
    /// (`getrusage`; `None` where unavailable): the cost of waiting.
    pub cpu_s: Option<f64>,
    /// Mean time of the critical section's data accesses (ns), for the
    /// workloads that time them ([`ron_micro`]); `None` elsewhere.
    pub cs_data_ns: Option<f64>,
    /// Mean number of threads waiting for the lock when it was acquired,
    /// for the workloads that count them ([`ron_micro`]); `None` elsewhere.
    pub waiters: Option<f64>,
}

impl RunStats {
    /// Acquisitions in the measured window, all threads.
    pub fn total(&self) -> u64 {
        self.per_thread.iter().sum()
    }

    /// Million acquisitions per second.
    pub fn mlocks_per_s(&self) -> f64 {
        if self.elapsed_s > 0.0 {
            self.total() as f64 / self.elapsed_s / 1e6
        } else {
            0.0
        }
    }

    /// [`metrics::fairness_factor`] of the per-thread counts.
    pub fn fairness_factor(&self) -> f64 {
        metrics::fairness_factor(&self.per_thread)
    }

    /// [`metrics::cv`] of the per-thread counts.
    pub fn cv(&self) -> f64 {
        metrics::cv(&self.per_thread)
    }
}

/// The data behind the lock: the workload's state plus the last release.
struct Shared<T> {
    data: T,
    /// Clock ticks at the last release.
    last_exit: u64,
    /// Index of the last owner (`usize::MAX` before the first).
    last_owner: usize,
}

/// What one thread brings back.
struct ThreadOut {
    measured: u64,
    all: u64,
    hist: hdrhistogram::Histogram<u64>,
    ho_hist: hdrhistogram::Histogram<u64>,
    handover_ticks: u64,
    handovers: u64,
    /// Probed runs: clock ticks of the data accesses, measured window.
    data_ticks: u64,
    /// Probed runs: sum of the waiting counts at acquisition.
    waiters_sum: u64,
}

/// Runs the lock loop over `data` with critical section `op` and returns
/// the measurements and the final data together with the number of
/// acquisitions made in all (warm-up and wind-down included).
pub(crate) fn drive<F, T, Op>(cfg: &LoopConfig, data: T, op: Op) -> (RunStats, T, u64)
where
    F: MutexFamily,
    T: Send,
    Op: Fn(&mut T, &mut SplitMix64) + Sync,
{
    drive_loop::<F, T, Op>(cfg, data, op, false)
}

/// [`drive`], probed as the RON paper's Algorithm 4 measures: the clock is
/// read right before and after `op` (the critical section's data accesses)
/// and, per acquisition, the number of threads waiting at that moment is
/// taken from a shared counter that every thread increments before
/// `lock()` and decrements once it holds the lock. The counter costs one
/// read-modify-write of a shared cache line on each side of every
/// acquisition (as the paper's own measurement does); [`drive`] has
/// neither. Fills [`RunStats::cs_data_ns`] and [`RunStats::waiters`].
pub(crate) fn drive_probed<F, T, Op>(cfg: &LoopConfig, data: T, op: Op) -> (RunStats, T, u64)
where
    F: MutexFamily,
    T: Send,
    Op: Fn(&mut T, &mut SplitMix64) + Sync,
{
    drive_loop::<F, T, Op>(cfg, data, op, true)
}

/// Pads the waiting counter to its own cache line, so that it shares no
/// line with the lock or the data.
#[repr(align(128))]
struct Waiting(AtomicUsize);

fn drive_loop<F, T, Op>(cfg: &LoopConfig, data: T, op: Op, probe: bool) -> (RunStats, T, u64)
where
    F: MutexFamily,
    T: Send,
    Op: Fn(&mut T, &mut SplitMix64) + Sync,
{
    clock::calibrate();
    let mutex = F::Mutex::<Shared<T>>::new(Shared {
        data,
        last_exit: 0,
        last_owner: usize::MAX,
    });
    let phase = Phase::new();
    let waiting = Waiting(AtomicUsize::new(0));
    let barrier = Barrier::new(cfg.threads + 1);
    let order = pin::cpu_order();
    let ncs = cfg.ncs_ns;

    let (outs, elapsed, cpu_s) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.threads)
            .map(|idx| {
                let (mutex, phase, barrier, op, order, waiting) =
                    (&mutex, &phase, &barrier, &op, &order, &waiting);
                let cpu = pin::cpu_for(cfg.pinning, order, idx);
                let seed = cfg.seed;
                s.spawn(move || {
                    if let Some(c) = cpu {
                        pin::pin_current(c);
                    }
                    let mut rng = SplitMix64::for_stream(seed, idx as u64);
                    let mut out = ThreadOut {
                        measured: 0,
                        all: 0,
                        hist: metrics::tick_histogram(),
                        ho_hist: metrics::tick_histogram(),
                        handover_ticks: 0,
                        handovers: 0,
                        data_ticks: 0,
                        waiters_sum: 0,
                    };
                    barrier.wait();
                    loop {
                        let ph = phase.get();
                        if ph == STOP {
                            break;
                        }
                        if probe {
                            // Relaxed: a statistic; the read-modify-write
                            // alone makes the count exact.
                            waiting.0.fetch_add(1, Ordering::Relaxed);
                        }
                        let t0 = clock::now();
                        let mut g = mutex.lock();
                        let t1 = clock::now();
                        // The others still waiting (this thread's own
                        // increment taken off). Relaxed: as above.
                        let others = if probe {
                            waiting.0.fetch_sub(1, Ordering::Relaxed) - 1
                        } else {
                            0
                        };
                        out.all += 1;
                        if ph == MEASURE {
                            out.measured += 1;
                            out.hist.saturating_record(t1.saturating_sub(t0).max(1));
                            if g.last_owner != idx
                                && g.last_owner != usize::MAX
                                && t0 <= g.last_exit
                            {
                                let ho = t1.saturating_sub(g.last_exit);
                                out.handover_ticks += ho;
                                out.ho_hist.saturating_record(ho.max(1));
                                out.handovers += 1;
                            }
                        }
                        if probe {
                            let d0 = clock::now();
                            op(&mut g.data, &mut rng);
                            let d1 = clock::now();
                            if ph == MEASURE {
                                out.data_ticks += d1.saturating_sub(d0);
                                out.waiters_sum += others as u64;
                            }
                        } else {
                            op(&mut g.data, &mut rng);
                        }
                        g.last_owner = idx;
                        g.last_exit = clock::now();
                        drop(g);
                        if ncs > 0.0 {
                            clock::spin_ns(rng.jitter(ncs, 0.15));
                        }
                    }
                    out
                })
            })
            .collect();
        barrier.wait();
        let (elapsed, cpu_s) = phase.run_window(cfg.warmup, cfg.duration);
        let outs: Vec<ThreadOut> = handles
            .into_iter()
            .map(|h| h.join().expect("benchmark thread panicked"))
            .collect();
        (outs, elapsed, cpu_s)
    });

    let tpn = clock::ticks_per_ns();
    let mut hist = metrics::tick_histogram();
    let mut ho_hist = metrics::tick_histogram();
    let mut ho_ticks = 0u64;
    let mut handovers = 0u64;
    let mut all = 0u64;
    let mut data_ticks = 0u64;
    let mut waiters_sum = 0u64;
    for o in &outs {
        data_ticks += o.data_ticks;
        waiters_sum += o.waiters_sum;
        // Same bounds on both sides: adding cannot fail.
        let _ = hist.add(&o.hist);
        let _ = ho_hist.add(&o.ho_hist);
        ho_ticks += o.handover_ticks;
        handovers += o.handovers;
        all += o.all;
    }
    let stats = RunStats {
        per_thread: outs.iter().map(|o| o.measured).collect(),
        elapsed_s: elapsed.as_secs_f64(),
        latency: metrics::percentiles(&hist, tpn),
        handover_ns: if handovers > 0 {
            ho_ticks as f64 / handovers as f64 / tpn
        } else {
            0.0
        },
        handover_p50_ns: metrics::percentiles(&ho_hist, tpn).p50_ns,
        handovers,
        exclusion_ok: true,
        cpu_s,
        cs_data_ns: None,
        waiters: None,
    };
    let measured = stats.total();
    let stats = if probe && measured > 0 {
        RunStats {
            cs_data_ns: Some(data_ticks as f64 / measured as f64 / tpn),
            waiters: Some(waiters_sum as f64 / measured as f64),
            ..stats
        }
    } else {
        stats
    };
    let shared = mutex.into_inner();
    (stats, shared.data, all)
}
