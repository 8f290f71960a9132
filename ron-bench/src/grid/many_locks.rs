//! The many-locks grid: every (lock, threads, number of locks) point of
//! [`many_locks`](crate::workload::many_locks), run `repeat` times.

use super::rounds::run_rounds;
use crate::error::BenchError;
use crate::limits;
use crate::registry::LockEntry;
use crate::stop;
use crate::workload::many_locks::{ManyLocksConfig, ManyLocksRow, ManyLocksStats, add_ratios};
use serde::{Deserialize, Serialize};

/// A point that was not run, for the notes of the output.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct SkippedPoint {
    /// Lock name.
    pub lock: String,
    /// Number of locks.
    pub n_locks: usize,
    /// Why.
    pub reason: String,
}

/// A many-locks grid: every (lock, threads, locks) point, `repeat` times,
/// the whole grid once per repeat (so slow drift spreads over all locks).
#[derive(Debug, Clone)]
pub struct ManyLocksGrid {
    /// Locks to run.
    pub locks: Vec<&'static LockEntry>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Lock counts.
    pub n_locks: Vec<usize>,
    /// Everything else (its `threads` and `n_locks` are replaced per point).
    pub base: ManyLocksConfig,
    /// Runs per point (at least 1).
    pub repeat: usize,
}

/// What a many-locks grid produced.
#[derive(Debug, Clone, Default)]
pub struct ManyLocksOutcome {
    /// One row per point measured, in grid order.
    pub rows: Vec<ManyLocksRow>,
    /// Points skipped for their memory, once each.
    pub skipped: Vec<SkippedPoint>,
    /// Whether a [`stop::request`] cut the grid short.
    pub interrupted: bool,
}

impl ManyLocksGrid {
    /// Number of points (skipped ones included).
    pub fn points(&self) -> usize {
        self.locks.len() * self.threads.len() * self.n_locks.len()
    }

    /// Number of runs (points x repeats).
    pub fn runs(&self) -> usize {
        self.points() * self.repeat
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), BenchError> {
        if self.locks.is_empty() || self.threads.is_empty() || self.n_locks.is_empty() {
            return Err(BenchError::Invalid(
                "empty grid: give at least one lock, thread count and lock count".into(),
            ));
        }
        limits::repeat(self.repeat)?;
        for &t in &self.threads {
            for &n in &self.n_locks {
                self.config(t, n).validate()?;
            }
        }
        Ok(())
    }

    fn config(&self, threads: usize, n_locks: usize) -> ManyLocksConfig {
        ManyLocksConfig {
            threads,
            n_locks,
            ..self.base.clone()
        }
    }

    /// Runs every point, calling `progress(done, total, label)` before
    /// each run; returns the rows (with their ratios to parking_lot) and
    /// the skipped points.
    pub fn run(
        &self,
        progress: impl FnMut(usize, usize, &str),
    ) -> Result<ManyLocksOutcome, BenchError> {
        self.validate()?;
        let mut points: Vec<(&LockEntry, ManyLocksConfig, Vec<ManyLocksStats>)> = Vec::new();
        for &t in &self.threads {
            for &n in &self.n_locks {
                for lock in &self.locks {
                    points.push((lock, self.config(t, n), Vec::new()));
                }
            }
        }
        let mut skipped: Vec<SkippedPoint> = Vec::new();
        let interrupted = run_rounds(
            &mut points,
            self.repeat,
            progress,
            |(lock, cfg, _)| format!("{} t={} n={}", lock.name(), cfg.threads, cfg.n_locks),
            |(lock, cfg, runs)| {
                match (lock.many_locks)(cfg) {
                    // A run cut short during its warm-up measured nothing.
                    Ok(s) if s.per_thread.iter().sum::<u64>() == 0 && stop::requested() => {}
                    Ok(s) => runs.push(s),
                    Err(sk) => {
                        if !skipped
                            .iter()
                            .any(|p| p.lock == lock.name() && p.n_locks == cfg.n_locks)
                        {
                            skipped.push(SkippedPoint {
                                lock: lock.name().to_string(),
                                n_locks: cfg.n_locks,
                                reason: sk.reason,
                            });
                        }
                    }
                }
            },
        );
        let mut rows: Vec<ManyLocksRow> = points
            .iter()
            .filter(|(_, _, runs)| !runs.is_empty())
            .map(|(lock, cfg, runs)| ManyLocksRow::from_runs(lock.name(), cfg, runs))
            .collect();
        add_ratios(&mut rows);
        Ok(ManyLocksOutcome {
            rows,
            skipped,
            interrupted,
        })
    }
}
