//! A benchmark grid: every (lock, threads, nCS) point, `repeat` times, in
//! an order that interleaves the locks in time (so slow drift of the
//! machine spreads over all of them): the whole grid runs once, then again
//! for each repeat.

mod many_locks;
mod rounds;
mod rw;

pub use many_locks::{ManyLocksGrid, ManyLocksOutcome, SkippedPoint};
pub use rw::{RwGrid, RwOutcome};

use std::time::Duration;

use crate::error::BenchError;
use crate::limits;
use crate::pin::Pinning;
use crate::registry::LockEntry;
use crate::report::{self, BenchRow, CorunnerRow, PointId};
use crate::stop;
use crate::workload::LoopConfig;
use crate::workload::RunStats;
use crate::workload::corunner::{CorunnerConfig, CorunnerPolicy};
use crate::workload::micro::MicroConfig;

/// Which lock-loop workload a grid runs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LoopWorkload {
    /// The microbenchmark (K cache lines per critical section).
    Micro,
    /// The key-value map.
    Kv,
    /// The key-value map, updates only.
    KvUpdate,
    /// The RON paper's microbenchmark (100 shared integers, data time and
    /// waiters recorded).
    RonMicro,
}

/// Everything that differs between the lock-loop workloads is in this
/// `impl`: adding one is a variant and one arm in each method.
impl LoopWorkload {
    /// Name in the rows.
    pub fn name(self) -> &'static str {
        match self {
            LoopWorkload::Micro => "micro",
            LoopWorkload::Kv => "kv",
            LoopWorkload::KvUpdate => "kv-update",
            LoopWorkload::RonMicro => "ron-micro",
        }
    }

    /// One line for people: what the critical section does.
    pub fn describe(self, cs_lines: usize) -> String {
        match self {
            LoopWorkload::Micro => format!(
                "micro workload ({cs_lines} cache line{} read and written per critical section)",
                if cs_lines == 1 { "" } else { "s" }
            ),
            LoopWorkload::Kv => "kv workload (BTreeMap of 1024 keys, 80% lookups)".into(),
            LoopWorkload::KvUpdate => {
                "kv-update workload (BTreeMap of 1024 keys, updates only: 50% inserts, 50% removes)"
                    .into()
            }
            LoopWorkload::RonMicro => format!(
                "ron-micro workload (the RON paper's Algorithm 4: {} shared 4-byte integers read and written per critical section; data time and waiters recorded, with one shared counter update before and after each lock)",
                crate::workload::ron_micro::INTS
            ),
        }
    }

    /// The `cs_lines` recorded in the rows (0 where the workload has none).
    pub fn cs_lines(self, cs_lines: usize) -> usize {
        match self {
            LoopWorkload::Micro => cs_lines,
            LoopWorkload::Kv | LoopWorkload::KvUpdate | LoopWorkload::RonMicro => 0,
        }
    }

    /// Runs this workload once on `lock`.
    pub fn run(self, lock: &LockEntry, base: LoopConfig, cs_lines: usize) -> RunStats {
        match self {
            LoopWorkload::Micro => (lock.micro)(&MicroConfig { base, cs_lines }),
            LoopWorkload::Kv => (lock.kv)(&base),
            LoopWorkload::KvUpdate => (lock.kv_update)(&base),
            LoopWorkload::RonMicro => (lock.ron_micro)(&base),
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
    /// Runs per point (at least 1); rows report their mean and spread.
    pub repeat: usize,
}

pub use crate::limits::MAX_REPEAT;

/// The rows of a grid run, and whether it stopped early.
#[derive(Debug, Clone)]
pub struct GridOutcome {
    /// One row per point measured at least once, in grid order.
    pub rows: Vec<BenchRow>,
    /// Whether `stop` cut the run short.
    pub interrupted: bool,
}

impl Grid {
    /// Number of points.
    pub fn points(&self) -> usize {
        self.locks.len() * self.threads.len() * self.ncs_ns.len()
    }

    /// Number of runs (points x repeats).
    pub fn runs(&self) -> usize {
        self.points() * self.repeat
    }

    /// Checks every parameter (one-line messages).
    pub fn validate(&self) -> Result<(), BenchError> {
        if self.locks.is_empty() || self.threads.is_empty() || self.ncs_ns.is_empty() {
            return Err(BenchError::Invalid(
                "empty grid: give at least one lock, thread count and nCS".into(),
            ));
        }
        limits::repeat(self.repeat)?;
        limits::cs_lines(self.cs_lines)?;
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
    /// run, and returns the rows with their ratios filled in.
    pub fn run(
        &self,
        progress: impl FnMut(usize, usize, &str),
    ) -> Result<Vec<BenchRow>, BenchError> {
        Ok(self.run_until(progress, |_| {})?.rows)
    }

    /// [`run`](Self::run), handing the rows measured so far to `partial`
    /// after each run (to save them as they come). A [`stop::request`]
    /// cuts the run in progress short (it is kept if it measured anything)
    /// and ends the grid, keeping what was measured.
    pub fn run_until(
        &self,
        mut progress: impl FnMut(usize, usize, &str),
        mut partial: impl FnMut(&[BenchRow]),
    ) -> Result<GridOutcome, BenchError> {
        self.validate()?;
        let total = self.runs();
        let mut points: Vec<(PointId<'_>, Vec<RunStats>)> = Vec::with_capacity(self.points());
        for &t in &self.threads {
            for &n in &self.ncs_ns {
                for lock in &self.locks {
                    points.push((
                        PointId {
                            workload: self.workload.name(),
                            lock,
                            threads: t,
                            ncs_ns: n,
                            cs_lines: self.workload.cs_lines(self.cs_lines),
                            pinned: self.pinning == Pinning::Route,
                            seed: self.seed,
                        },
                        Vec::with_capacity(self.repeat),
                    ));
                }
            }
        }
        let mut done = 0;
        let mut interrupted = false;
        'rounds: for rep in 0..self.repeat {
            for i in 0..points.len() {
                let id = points[i].0;
                if stop::requested() {
                    interrupted = true;
                    break 'rounds;
                }
                progress(
                    done,
                    total,
                    &format!(
                        "{} t={} ncs={} run {}/{}",
                        id.lock.name(),
                        id.threads,
                        id.ncs_ns,
                        rep + 1,
                        self.repeat
                    ),
                );
                let base = self.config(id.threads, id.ncs_ns);
                let stats = self.workload.run(id.lock, base, self.cs_lines);
                let cut_short = stop::requested();
                if !cut_short || stats.total() > 0 {
                    points[i].1.push(stats);
                    done += 1;
                    partial(&self.rows_of(&points));
                }
                if cut_short {
                    interrupted = true;
                    break 'rounds;
                }
            }
        }
        if !interrupted {
            progress(total, total, "done");
        }
        Ok(GridOutcome {
            rows: self.rows_of(&points),
            interrupted,
        })
    }

    /// Rows of the points measured at least once, with ratios.
    fn rows_of(&self, points: &[(PointId<'_>, Vec<RunStats>)]) -> Vec<BenchRow> {
        let mut rows: Vec<BenchRow> = points
            .iter()
            .filter(|(_, runs)| !runs.is_empty())
            .map(|(id, runs)| BenchRow::from_runs(id, runs))
            .collect();
        report::add_ratios(&mut rows, |name| {
            self.locks.iter().any(|l| l.name() == name && l.is_peer())
        });
        rows
    }
}

/// The rows of a co-runner run, and whether it stopped early.
#[derive(Debug, Clone)]
pub struct CorunnerOutcome {
    /// One row per (policy, waiters) pair measured in full.
    pub rows: Vec<CorunnerRow>,
    /// Whether a [`stop::request`] ended the run early (the pair in
    /// progress is dropped: its two phases were cut unequally).
    pub interrupted: bool,
}

/// Runs the co-runner measurement for every (policy, waiters) pair.
pub fn run_corunner(
    policies: &[&'static CorunnerPolicy],
    waiters: &[usize],
    duration: Duration,
    mut progress: impl FnMut(usize, usize, &str),
) -> Result<CorunnerOutcome, BenchError> {
    limits::duration(duration)?;
    let total = policies.len() * waiters.len();
    let mut rows = Vec::with_capacity(total);
    for &w in waiters {
        for p in policies {
            let cfg = CorunnerConfig {
                waiters: w,
                duration,
            };
            cfg.validate()?;
            if stop::requested() {
                return Ok(CorunnerOutcome {
                    rows,
                    interrupted: true,
                });
            }
            progress(rows.len(), total, &format!("{} waiters={w}", p.name));
            let s = (p.run)(&cfg);
            if stop::requested() {
                return Ok(CorunnerOutcome {
                    rows,
                    interrupted: true,
                });
            }
            rows.push(CorunnerRow::new(p, w, duration.as_secs_f64(), &s));
        }
    }
    progress(total, total, "done");
    Ok(CorunnerOutcome {
        rows,
        interrupted: false,
    })
}
