//! The reader-writer grid: every (lock, threads, read %, nCS) point of
//! [`rw`](crate::workload::rw), run `repeat` times, the locks interleaved
//! within each repeat.

use super::rounds::run_rounds;
use crate::error::BenchError;
use crate::limits;
use crate::stop;
use crate::workload::rw::{RwConfig, RwEntry, RwRow, RwStats, add_ratios};

/// A reader-writer grid: the whole grid once per repeat (so slow drift
/// spreads over all locks).
#[derive(Debug, Clone)]
pub struct RwGrid {
    /// Locks to run.
    pub locks: Vec<&'static RwEntry>,
    /// Thread counts.
    pub threads: Vec<usize>,
    /// Read percentages.
    pub read_pct: Vec<u32>,
    /// Mean non-critical sections (ns).
    pub ncs_ns: Vec<f64>,
    /// Everything else (threads, read % and nCS are replaced per point).
    pub base: RwConfig,
    /// Runs per point (at least 1).
    pub repeat: usize,
}

/// What a reader-writer grid produced.
#[derive(Debug, Clone, Default)]
pub struct RwOutcome {
    /// One row per point measured, in grid order.
    pub rows: Vec<RwRow>,
    /// Whether a [`stop::request`] cut the grid short.
    pub interrupted: bool,
}

impl RwGrid {
    /// Number of points.
    pub fn points(&self) -> usize {
        self.locks.len() * self.threads.len() * self.read_pct.len() * self.ncs_ns.len()
    }

    /// Number of runs (points x repeats).
    pub fn runs(&self) -> usize {
        self.points() * self.repeat
    }

    /// Checks every parameter.
    pub fn validate(&self) -> Result<(), BenchError> {
        if self.points() == 0 {
            return Err(BenchError::Invalid(
                "empty grid: give at least one lock, thread count, read percentage and nCS".into(),
            ));
        }
        limits::repeat(self.repeat)?;
        for cfg in self.configs() {
            cfg.validate()?;
        }
        Ok(())
    }

    /// The configuration of every (threads, read %, nCS) point, in grid
    /// order.
    fn configs(&self) -> Vec<RwConfig> {
        let mut out = Vec::new();
        for &threads in &self.threads {
            for &read_pct in &self.read_pct {
                for &ncs_ns in &self.ncs_ns {
                    let mut cfg = RwConfig {
                        read_pct,
                        ..self.base.clone()
                    };
                    cfg.base.threads = threads;
                    cfg.base.ncs_ns = ncs_ns;
                    out.push(cfg);
                }
            }
        }
        out
    }

    /// Runs every point, calling `progress(done, total, label)` before
    /// each run; returns the rows with their ratios to parking_lot.
    pub fn run(&self, progress: impl FnMut(usize, usize, &str)) -> Result<RwOutcome, BenchError> {
        self.validate()?;
        let mut points: Vec<(&RwEntry, RwConfig, Vec<RwStats>)> = Vec::new();
        for cfg in self.configs() {
            for lock in &self.locks {
                points.push((lock, cfg.clone(), Vec::new()));
            }
        }
        let interrupted = run_rounds(
            &mut points,
            self.repeat,
            progress,
            |(lock, cfg, _)| {
                format!(
                    "{} t={} read={}% ncs={}",
                    lock.name, cfg.base.threads, cfg.read_pct, cfg.base.ncs_ns
                )
            },
            |(lock, cfg, runs)| {
                let s = (lock.run)(cfg);
                // A run cut short during its warm-up measured nothing.
                if !(s.total() == 0 && stop::requested()) {
                    runs.push(s);
                }
            },
        );
        let mut rows: Vec<RwRow> = points
            .iter()
            .filter(|(_, _, runs)| !runs.is_empty())
            .map(|(lock, cfg, runs)| RwRow::from_runs(lock.name, cfg, runs))
            .collect();
        add_ratios(&mut rows);
        Ok(RwOutcome { rows, interrupted })
    }
}
