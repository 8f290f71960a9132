//! A benchmark grid: every (lock, threads, nCS) point, in an order that
//! interleaves the locks in time (so slow drift of the machine spreads over
//! all of them).

use std::time::Duration;

use crate::error::BenchError;
use crate::pin::Pinning;
use crate::registry::LockEntry;
use crate::report::{self, BenchRow, CorunnerRow};
use crate::workload::corunner::{CorunnerConfig, CorunnerPolicy};
use crate::workload::micro::{MAX_CS_LINES, MicroConfig};
use crate::workload::{LoopConfig, MAX_DURATION};

/// Which lock-loop workload a grid runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopWorkload {
    /// The microbenchmark (K cache lines per critical section).
    Micro,
    /// The key-value map.
    Kv,
}

impl LoopWorkload {
    /// Name in the rows.
    pub fn name(self) -> &'static str {
        match self {
            LoopWorkload::Micro => "micro",
            LoopWorkload::Kv => "kv",
        }
    }
}

/// A lock-loop benchmark grid.
#[derive(Debug, Clone)]
pub struct Grid {
    /// Locks to run.
    pub locks: Vec<&'static LockEntry>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Mean non-critical sections (ns).
    pub ncs_ns: Vec<f64>,
    /// Cache lines per critical section (micro only).
    pub cs_lines: usize,
    /// Measured duration per point.
    pub duration: Duration,
    /// Warm-up per point.
    pub warmup: Duration,
    /// Thread placement.
    pub pinning: Pinning,
    /// Seed.
    pub seed: u64,
    /// Workload.
    pub workload: LoopWorkload,
}

impl Grid {
    /// Number of points.
    pub fn points(&self) -> usize {
        self.locks.len() * self.threads.len() * self.ncs_ns.len()
    }

    /// Checks every parameter (one-line messages).
    pub fn validate(&self) -> Result<(), BenchError> {
        if self.locks.is_empty() || self.threads.is_empty() || self.ncs_ns.is_empty() {
            return Err(BenchError::Invalid(
                "empty grid: give at least one lock, thread count and nCS".into(),
            ));
        }
        if self.cs_lines > MAX_CS_LINES {
            return Err(BenchError::Invalid(format!(
                "cs-lines must be at most {MAX_CS_LINES}, got {}",
                self.cs_lines
            )));
        }
        for &t in &self.threads {
            for &n in &self.ncs_ns {
                self.config(t, n).validate()?;
            }
        }
        Ok(())
    }

    fn config(&self, threads: usize, ncs_ns: f64) -> LoopConfig {
        LoopConfig {
            threads,
            ncs_ns,
            duration: self.duration,
            warmup: self.warmup,
            pinning: self.pinning,
            seed: self.seed,
        }
    }

    /// Runs every point, calling `progress(done, total, label)` before each
    /// one, and returns the rows with their ratios filled in.
    pub fn run(
        &self,
        mut progress: impl FnMut(usize, usize, &str),
    ) -> Result<Vec<BenchRow>, BenchError> {
        self.validate()?;
        let total = self.points();
        let mut rows = Vec::with_capacity(total);
        for &t in &self.threads {
            for &n in &self.ncs_ns {
                let base = self.config(t, n);
                for lock in &self.locks {
                    progress(rows.len(), total, &format!("{} t={t} ncs={n}", lock.name()));
                    let (stats, lines) = match self.workload {
                        LoopWorkload::Micro => (
                            (lock.micro)(&MicroConfig {
                                base: base.clone(),
                                cs_lines: self.cs_lines,
                            }),
                            self.cs_lines,
                        ),
                        LoopWorkload::Kv => ((lock.kv)(&base), 0),
                    };
                    rows.push(BenchRow::new(
                        self.workload.name(),
                        lock,
                        t,
                        n,
                        lines,
                        self.pinning == Pinning::Route,
                        self.seed,
                        &stats,
                    ));
                }
            }
        }
        progress(total, total, "done");
        report::add_ratios(&mut rows, |name| {
            self.locks.iter().any(|l| l.name() == name && l.is_peer())
        });
        Ok(rows)
    }
}

/// Runs the co-runner measurement for every (policy, waiters) pair.
pub fn run_corunner(
    policies: &[&'static CorunnerPolicy],
    waiters: &[usize],
    duration: Duration,
    mut progress: impl FnMut(usize, usize, &str),
) -> Result<Vec<CorunnerRow>, BenchError> {
    if duration.is_zero() || duration > MAX_DURATION {
        return Err(BenchError::Invalid(format!(
            "duration must be in (0, {}] s, got {} s",
            MAX_DURATION.as_secs(),
            duration.as_secs_f64()
        )));
    }
    let total = policies.len() * waiters.len();
    let mut rows = Vec::with_capacity(total);
    for &w in waiters {
        for p in policies {
            let cfg = CorunnerConfig {
                waiters: w,
                duration,
            };
            cfg.validate()?;
            progress(rows.len(), total, &format!("{} waiters={w}", p.name));
            let s = (p.run)(&cfg);
            rows.push(CorunnerRow::new(p, w, duration.as_secs_f64(), &s));
        }
    }
    progress(total, total, "done");
    Ok(rows)
}
