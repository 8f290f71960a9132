//! Co-runner cost: what waiting threads take from a thread that shares
//! their CPU.
//!
//! A holder thread on another CPU takes the lock and keeps it. `W` waiter
//! threads, pinned to the same CPU as a compute thread, block on the lock;
//! the compute thread does fixed units of work (1 us busy loops). Its rate
//! is compared with its rate alone on that CPU, measured just before.
//! Spinning waiters get their fair share of the CPU, so a compute thread
//! sharing with `W` spinners is slowed by about `W / (W + 1)`; waiters that
//! yield or park should cost it little.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use ron_core::relax::{Backoff, Spin, SpinThenYield, SpinWhileAlone};
use ron_core::ron_raw::DEFAULT_SLOTS as S;

use crate::clock;
use crate::error::BenchError;
use crate::limits;
use crate::mutex::{BenchMutex, MutexFamily, Raw};
use crate::pin;

/// Parameters of one co-runner measurement.
#[derive(Debug, Clone)]
pub struct CorunnerConfig {
    /// Waiting threads sharing the compute thread's CPU (1..=1024).
    pub waiters: usize,
    /// Length of each of the two phases (alone, shared).
    pub duration: Duration,
}

impl CorunnerConfig {
    /// Checks the ranges.
    pub fn validate(&self) -> Result<(), BenchError> {
        limits::waiters(self.waiters)?;
        limits::duration(self.duration)
    }
}

/// What one co-runner measurement found.
#[derive(Debug, Clone, Copy)]
pub struct CorunnerStats {
    /// Work units per second of the compute thread alone.
    pub alone_per_s: f64,
    /// Work units per second with the waiters on its CPU.
    pub shared_per_s: f64,
    /// CPU of the compute thread and the waiters.
    pub compute_cpu: usize,
    /// CPU of the lock holder.
    pub holder_cpu: usize,
}

impl CorunnerStats {
    /// `1 - shared / alone`: the fraction of its speed the compute thread
    /// lost.
    pub fn slowdown(&self) -> f64 {
        if self.alone_per_s > 0.0 {
            1.0 - self.shared_per_s / self.alone_per_s
        } else {
            0.0
        }
    }
}

/// A waiting policy compared by the co-runner workload.
#[derive(Debug)]
pub struct CorunnerPolicy {
    /// Name on the command line and in the output.
    pub name: &'static str,
    /// The lock type that waits.
    pub type_name: &'static str,
    /// Runs one measurement.
    pub run: fn(&CorunnerConfig) -> CorunnerStats,
}

/// The policies compared: nxtRON with each relax policy, RonRaw (its own
/// spin-then-leave waiting), RonPark (spin, then sleep on a futex) and
/// parking_lot (the parking reference).
#[rustfmt::skip]
pub fn policies() -> &'static [CorunnerPolicy] {
    use ron_core::{NxtRonInline, RonGrant, RonPark, RonRaw};
    const P: &[CorunnerPolicy] = &[
        CorunnerPolicy { name: "spin", type_name: "NxtRonInline<16, Spin>", run: run::<Raw<NxtRonInline<S, Spin>>> },
        CorunnerPolicy { name: "backoff", type_name: "NxtRonInline<16, Backoff>", run: run::<Raw<NxtRonInline<S, Backoff>>> },
        CorunnerPolicy { name: "spin-then-yield", type_name: "NxtRonInline<16, SpinThenYield>", run: run::<Raw<NxtRonInline<S, SpinThenYield>>> },
        CorunnerPolicy { name: "spin-while-alone", type_name: "NxtRonInline<16, SpinWhileAlone>", run: run::<Raw<NxtRonInline<S, SpinWhileAlone>>> },
        CorunnerPolicy { name: "ron-grant", type_name: "RonGrant", run: run::<Raw<RonGrant>> },
        CorunnerPolicy { name: "ron-raw", type_name: "RonRaw", run: run::<Raw<RonRaw>> },
        CorunnerPolicy { name: "ron-park", type_name: "RonPark", run: run::<Raw<RonPark>> },
        CorunnerPolicy { name: "parking_lot", type_name: "parking_lot::Mutex", run: run::<Raw<parking_lot::RawMutex>> },
    ];
    P
}

/// Resolves a comma-separated list of policy names (`all` = every one).
pub fn resolve(list: &str) -> Result<Vec<&'static CorunnerPolicy>, BenchError> {
    let mut out: Vec<&'static CorunnerPolicy> = Vec::new();
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let found: Vec<&'static CorunnerPolicy> = if part.eq_ignore_ascii_case("all") {
            policies().iter().collect()
        } else {
            let p = policies()
                .iter()
                .find(|p| crate::names::name_key(p.name) == crate::names::name_key(part))
                .ok_or_else(|| BenchError::UnknownPolicy {
                    name: part.to_string(),
                    known: policies()
                        .iter()
                        .map(|p| p.name)
                        .collect::<Vec<_>>()
                        .join(", "),
                })?;
            vec![p]
        };
        for p in found {
            if !out.iter().any(|x| std::ptr::eq(*x, p)) {
                out.push(p);
            }
        }
    }
    if out.is_empty() {
        return Err(BenchError::Invalid(
            "--policies: no policy given (names from --list or `all`), got an empty list".into(),
        ));
    }
    Ok(out)
}

/// Runs the compute loop (1 us units) until `stop`; returns units/s.
fn compute(stop: &AtomicBool) -> f64 {
    let start = Instant::now();
    let mut n = 0u64;
    // Relaxed: a stop request; the count travels back through `join`.
    while !stop.load(Ordering::Relaxed) {
        clock::spin_ns(1000.0);
        n += 1;
    }
    let el = start.elapsed().as_secs_f64();
    n as f64 / el
}

/// The compute thread alone on `cpu` for `d`: units/s.
fn alone(cpu: usize, d: Duration) -> f64 {
    let stop = AtomicBool::new(false);
    std::thread::scope(|s| {
        let h = s.spawn(|| {
            pin::pin_current(cpu);
            compute(&stop)
        });
        // A stop request (Ctrl-C) ends the phase early; the grid drops
        // such a run.
        crate::stop::sleep(d);
        stop.store(true, Ordering::Relaxed); // see `compute`
        h.join().expect("compute thread panicked")
    })
}

/// One measurement with lock family `F`.
pub fn run<F: MutexFamily>(cfg: &CorunnerConfig) -> CorunnerStats {
    clock::calibrate();
    let order = pin::cpu_order();
    let compute_cpu = order[0];
    let holder_cpu = order[1 % order.len()];
    let alone_per_s = alone(compute_cpu, cfg.duration);

    let mutex = F::Mutex::<u64>::new(0);
    let held = AtomicBool::new(false);
    let release = AtomicBool::new(false);
    let stop = AtomicBool::new(false);
    let shared_per_s = std::thread::scope(|s| {
        s.spawn(|| {
            pin::pin_current(holder_cpu);
            let mut g = mutex.lock();
            // SeqCst: simple flags between a handful of threads; cost is
            // irrelevant here.
            held.store(true, Ordering::SeqCst);
            while !release.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(1));
            }
            *g += 1;
        });
        while !held.load(Ordering::SeqCst) {
            std::thread::yield_now();
        }
        for _ in 0..cfg.waiters {
            s.spawn(|| {
                pin::pin_current(compute_cpu);
                *mutex.lock() += 1;
            });
        }
        // Let the waiters reach their steady waiting state.
        std::thread::sleep(Duration::from_millis(20));
        let h = s.spawn(|| {
            pin::pin_current(compute_cpu);
            compute(&stop)
        });
        crate::stop::sleep(cfg.duration);
        stop.store(true, Ordering::SeqCst);
        let r = h.join().expect("compute thread panicked");
        release.store(true, Ordering::SeqCst);
        r
    });
    CorunnerStats {
        alone_per_s,
        shared_per_s,
        compute_cpu,
        holder_cpu,
    }
}
