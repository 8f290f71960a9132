//! Reader-writer locks under a read ratio: the `rw` and `rw-map`
//! workloads.
//!
//! `T` threads share one reader-writer lock. Each repeats
//! `{ pick read (probability read-%) or write; lock; critical section;
//! unlock; busy-wait nCS ns +-15% }` for a warm-up and a measured window,
//! counting its reads and its writes apart:
//!
//! * [`RwShape::Lines`] (`rw`): the critical section touches `K` cache
//!   lines (as the micro workload's does); a read reads them, a write
//!   increments the first word of each and a write counter.
//! * [`RwShape::Map`] (`rw-map`): a `HashMap<u64, u64>` of [`MAP_KEYS`]
//!   keys behind the lock, the read-heavy mix of conc-map-bench: a read is
//!   one `get` of a uniform key, a write one `insert` of a uniform key of
//!   the same space (every key is present, so an insert updates).
//!
//! Both shapes check exclusion: a reader checks that what it reads is
//! whole (every line equals the write counter; a map value carries its
//! key), and at the end the write counter must equal the writes made.
//! The peers ([`rw_locks`]) are ron's [`RonRw`](ron_core::RonRw),
//! parking_lot's, std's and spin's `RwLock` and crossbeam-utils'
//! `ShardedLock`, each driven through one small adapter ([`BenchRw`]).

use std::collections::HashMap;
use std::hint::black_box;
use std::sync::Barrier;
use std::time::Duration;

use ron_stats::{SplitMix64, mean_sd, ratio, ratio_sd};
use serde::{Deserialize, Serialize};

use super::phase::{MEASURE, Phase, STOP};
use crate::clock;
use crate::error::BenchError;
use crate::limits;
use crate::names::name_key;
use crate::pin::{self, Pinning};
use crate::report::PerRound;
use crate::workload::LoopConfig;

/// Keys of the `rw-map` workload's map.
pub const MAP_KEYS: u64 = 4096;

/// A reader-writer lock protecting a `T`, as the workloads use it.
pub trait BenchRw<T>: Send + Sync {
    /// A new unlocked lock holding `value`.
    fn new(value: T) -> Self;
    /// Runs `f` under a read lock.
    fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R;
    /// Runs `f` under the write lock.
    fn write<R>(&self, f: impl FnOnce(&mut T) -> R) -> R;
    /// Consumes the lock and returns the data.
    fn into_inner(self) -> T;
}

/// A reader-writer lock type, independent of the data it protects.
pub trait RwFamily: 'static {
    /// The lock of this family protecting a `T`.
    type Lock<T: Send + Sync>: BenchRw<T>;
}

macro_rules! rw_family {
    ($($(#[$doc:meta])* $fam:ident => $ty:ident $(:: $p:ident)*, $unwrap:expr;)*) => {$(
        $(#[$doc])*
        pub struct $fam;

        impl RwFamily for $fam {
            type Lock<T: Send + Sync> = $ty $(:: $p)* <T>;
        }

        impl<T: Send + Sync> BenchRw<T> for $ty $(:: $p)* <T> {
            fn new(value: T) -> Self {
                $ty $(:: $p)* ::new(value)
            }
            #[inline]
            fn read<R>(&self, f: impl FnOnce(&T) -> R) -> R {
                let g = $unwrap(Self::read(self));
                f(&g)
            }
            #[inline]
            fn write<R>(&self, f: impl FnOnce(&mut T) -> R) -> R {
                let mut g = $unwrap(Self::write(self));
                f(&mut g)
            }
            fn into_inner(self) -> T {
                $unwrap(Self::into_inner(self))
            }
        }
    )*};
}

/// A poisoned lock is used as is: the workloads never panic holding one.
fn unpoison<G>(r: std::sync::LockResult<G>) -> G {
    r.unwrap_or_else(std::sync::PoisonError::into_inner)
}

fn same<G>(g: G) -> G {
    g
}

rw_family! {
    /// ron's [`RonRwLock`](ron_core::ron_rw::RonRwLock).
    RonRwFamily => ron_core::ron_rw::RonRwLock, same;
    /// `parking_lot::RwLock`.
    ParkingLotRw => parking_lot::RwLock, same;
    /// `std::sync::RwLock`.
    StdRw => std::sync::RwLock, unpoison;
    /// `spin::RwLock` (a spinning reader-writer lock, readers preferred).
    SpinRw => spin::RwLock, same;
    /// crossbeam-utils' `ShardedLock` (a read lock per shard, a write
    /// takes them all).
    ShardedRw => crossbeam_utils::sync::ShardedLock, unpoison;
}

/// Which critical section a run uses.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub enum RwShape {
    /// `K` cache lines read (read) or incremented (write).
    Lines,
    /// A `HashMap` of [`MAP_KEYS`] keys: `get` (read) or `insert` (write).
    Map,
}

impl RwShape {
    /// The workload's name in rows and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            RwShape::Lines => "rw",
            RwShape::Map => "rw-map",
        }
    }
}

/// Parameters of one run.
#[derive(Debug, Clone)]
pub struct RwConfig {
    /// Threads, nCS, duration, warm-up, pinning, seed (as the mutex
    /// workloads).
    pub base: LoopConfig,
    /// Critical section.
    pub shape: RwShape,
    /// Percent of operations that are reads (0..=100).
    pub read_pct: u32,
    /// Cache lines of the critical section ([`RwShape::Lines`]).
    pub cs_lines: usize,
}

impl Default for RwConfig {
    fn default() -> Self {
        RwConfig {
            base: LoopConfig {
                duration: Duration::from_millis(100),
                warmup: Duration::from_millis(20),
                ..LoopConfig::default()
            },
            shape: RwShape::Lines,
            read_pct: 99,
            cs_lines: 2,
        }
    }
}

impl RwConfig {
    /// Checks the ranges (see [`limits`]).
    pub fn validate(&self) -> Result<(), BenchError> {
        self.base.validate()?;
        limits::read_pct(self.read_pct)?;
        limits::cs_lines(self.cs_lines)
    }
}

/// What one run measured.
#[derive(Debug, Clone, Default)]
pub struct RwStats {
    /// Reads per thread in the measured window.
    pub reads: Vec<u64>,
    /// Writes per thread in the measured window.
    pub writes: Vec<u64>,
    /// Length of the measured window in seconds.
    pub elapsed_s: f64,
    /// CPU seconds of the process during the measured window.
    pub cpu_s: Option<f64>,
    /// Whether every read saw whole data and the write counter matched.
    pub exclusion_ok: bool,
}

impl RwStats {
    /// Operations (reads and writes) in the measured window.
    pub fn total(&self) -> u64 {
        self.reads.iter().chain(&self.writes).sum()
    }

    /// Million operations per second.
    pub fn mops_per_s(&self) -> f64 {
        ratio(self.total() as f64, self.elapsed_s * 1e6).unwrap_or(0.0)
    }
}

/// One 64-byte cache line of shared data.
#[derive(Clone, Copy, Default)]
#[repr(align(64))]
struct Line([u64; 8]);

/// The data of [`RwShape::Lines`].
struct LinesData {
    writes: u64,
    lines: Vec<Line>,
}

/// The data of [`RwShape::Map`].
struct MapData {
    writes: u64,
    map: HashMap<u64, u64>,
}

/// What a critical section does, read or write; `read` returns whether
/// the data it saw was whole.
trait Section: Send + Sync + Sized {
    fn read(&self, rng: &mut SplitMix64) -> bool;
    fn write(&mut self, rng: &mut SplitMix64);
    fn writes(&self) -> u64;
}

impl Section for LinesData {
    #[inline]
    fn read(&self, _: &mut SplitMix64) -> bool {
        let w = black_box(self.writes);
        self.lines.iter().all(|l| black_box(l.0[0]) == w)
    }
    #[inline]
    fn write(&mut self, _: &mut SplitMix64) {
        self.writes += 1;
        for l in &mut self.lines {
            l.0[0] = black_box(l.0[0]).wrapping_add(1);
        }
    }
    fn writes(&self) -> u64 {
        self.writes
    }
}

/// A map value: its key in the high half, the write that stored it in the
/// low half (so a reader can tell a whole value).
fn map_value(key: u64, write: u64) -> u64 {
    (key << 32) | (write & 0xffff_ffff)
}

impl Section for MapData {
    #[inline]
    fn read(&self, rng: &mut SplitMix64) -> bool {
        let k = rng.below(MAP_KEYS as usize) as u64;
        self.map.get(&k).is_some_and(|&v| v >> 32 == k)
    }
    #[inline]
    fn write(&mut self, rng: &mut SplitMix64) {
        let k = rng.below(MAP_KEYS as usize) as u64;
        self.writes += 1;
        self.map.insert(k, map_value(k, self.writes));
    }
    fn writes(&self) -> u64 {
        self.writes
    }
}

/// Runs one reader-writer workload with lock family `F`.
pub fn run<F: RwFamily>(cfg: &RwConfig) -> RwStats {
    match cfg.shape {
        RwShape::Lines => drive::<F, _>(
            cfg,
            LinesData {
                writes: 0,
                lines: vec![Line::default(); cfg.cs_lines.min(limits::MAX_CS_LINES)],
            },
        ),
        RwShape::Map => drive::<F, _>(
            cfg,
            MapData {
                writes: 0,
                map: (0..MAP_KEYS).map(|k| (k, map_value(k, 0))).collect(),
            },
        ),
    }
}

/// Per thread: (reads measured, writes measured, writes in all, torn reads).
type ThreadOut = (u64, u64, u64, u64);

fn drive<F: RwFamily, D: Section>(cfg: &RwConfig, data: D) -> RwStats {
    clock::calibrate();
    let lock = <F::Lock<D> as BenchRw<D>>::new(data);
    let phase = Phase::new();
    let barrier = Barrier::new(cfg.base.threads + 1);
    let order = pin::cpu_order();
    let (ncs, read_pct) = (cfg.base.ncs_ns, cfg.read_pct as usize);

    let (outs, elapsed, cpu_s) = std::thread::scope(|s| {
        let handles: Vec<_> = (0..cfg.base.threads)
            .map(|idx| {
                let (lock, phase, barrier) = (&lock, &phase, &barrier);
                let cpu = pin::cpu_for(cfg.base.pinning, &order, idx);
                let seed = cfg.base.seed;
                s.spawn(move || {
                    if let Some(c) = cpu {
                        pin::pin_current(c);
                    }
                    let mut rng = SplitMix64::for_stream(seed, idx as u64);
                    let mut out: ThreadOut = (0, 0, 0, 0);
                    barrier.wait();
                    loop {
                        let ph = phase.get();
                        if ph == STOP {
                            break;
                        }
                        if rng.below(100) < read_pct {
                            if !lock.read(|d| d.read(&mut rng)) {
                                out.3 += 1;
                            }
                            if ph == MEASURE {
                                out.0 += 1;
                            }
                        } else {
                            lock.write(|d| d.write(&mut rng));
                            out.2 += 1;
                            if ph == MEASURE {
                                out.1 += 1;
                            }
                        }
                        if ncs > 0.0 {
                            clock::spin_ns(rng.jitter(ncs, 0.15));
                        }
                    }
                    out
                })
            })
            .collect();
        barrier.wait();
        let (elapsed, cpu_s) = phase.run_window(cfg.base.warmup, cfg.base.duration);
        let outs: Vec<ThreadOut> = handles
            .into_iter()
            .map(|h| h.join().expect("benchmark thread panicked"))
            .collect();
        (outs, elapsed, cpu_s)
    });
    let data = lock.into_inner();
    let writes_all: u64 = outs.iter().map(|o| o.2).sum();
    let torn: u64 = outs.iter().map(|o| o.3).sum();
    RwStats {
        reads: outs.iter().map(|o| o.0).collect(),
        writes: outs.iter().map(|o| o.1).collect(),
        elapsed_s: elapsed.as_secs_f64(),
        cpu_s,
        exclusion_ok: torn == 0 && data.writes() == writes_all,
    }
}

/// A reader-writer lock of the `rw` workloads.
#[derive(Debug)]
pub struct RwEntry {
    /// Command-line name.
    pub name: &'static str,
    /// Type name.
    pub type_name: &'static str,
    /// One line for `--list`.
    pub about: &'static str,
    /// Runs the workload with this lock.
    pub run: fn(&RwConfig) -> RwStats,
}

static RW_LOCKS: [RwEntry; 5] = [
    RwEntry {
        name: "ron-rw",
        type_name: "RonRw",
        about: "ron's reader-writer lock: phase-fair word, writers queued along the route, per-group reader slots once reads are contended",
        run: run::<RonRwFamily>,
    },
    RwEntry {
        name: "parking_lot",
        type_name: "parking_lot::RwLock",
        about: "parking_lot's RwLock: one word, parks waiters (the reference of the ratios)",
        run: run::<ParkingLotRw>,
    },
    RwEntry {
        name: "std",
        type_name: "std::sync::RwLock",
        about: "std's RwLock (futex-based on Linux)",
        run: run::<StdRw>,
    },
    RwEntry {
        name: "spin",
        type_name: "spin::RwLock",
        about: "spin's RwLock: one spinning word, readers preferred",
        run: run::<SpinRw>,
    },
    RwEntry {
        name: "sharded",
        type_name: "crossbeam_utils::sync::ShardedLock",
        about: "crossbeam-utils' ShardedLock: a read lock per shard, a write takes every shard",
        run: run::<ShardedRw>,
    },
];

/// Every reader-writer lock of the `rw` workloads, in display order.
pub fn rw_locks() -> &'static [RwEntry] {
    &RW_LOCKS
}

/// The reader-writer lock called `name` (command-line or type name, any
/// case).
///
/// ```
/// use ron_bench::workload::rw::find;
/// assert_eq!(find("RonRw").unwrap().name, "ron-rw");
/// assert!(find("ron").is_err()); // a mutex, not a reader-writer lock
/// assert_eq!(find("sharded").unwrap().name, "sharded");
/// ```
pub fn find(name: &str) -> Result<&'static RwEntry, BenchError> {
    let key = name_key(name);
    RW_LOCKS
        .iter()
        .find(|e| !key.is_empty() && (name_key(e.name) == key || name_key(e.type_name) == key))
        .ok_or_else(|| BenchError::UnknownLock {
            name: name.trim().to_string(),
            known: RW_LOCKS
                .iter()
                .map(|e| e.name)
                .collect::<Vec<_>>()
                .join(", "),
        })
}

/// Resolves a comma-separated list of reader-writer lock names (`all` and
/// `default` = every one), without duplicates, in the order given.
pub fn resolve(list: &str) -> Result<Vec<&'static RwEntry>, BenchError> {
    let mut out: Vec<&'static RwEntry> = Vec::new();
    let mut push = |e: &'static RwEntry| {
        if !out.iter().any(|x| std::ptr::eq(*x, e)) {
            out.push(e);
        }
    };
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.to_ascii_lowercase().as_str() {
            "all" | "default" => RW_LOCKS.iter().for_each(&mut push),
            _ => push(find(part)?),
        }
    }
    if out.is_empty() {
        return Err(BenchError::Invalid(
            "--locks: no reader-writer lock given (names from --list, or `all`), got an empty list"
                .into(),
        ));
    }
    Ok(out)
}

/// One (lock, threads, read %, nCS) point over its repeats.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct RwRow {
    /// `rw` or `rw-map`.
    pub workload: String,
    /// Lock name (the command-line name).
    pub lock: String,
    /// Threads.
    pub threads: usize,
    /// Percent of operations that are reads.
    pub read_pct: u32,
    /// Mean non-critical section (ns).
    pub ncs_ns: f64,
    /// Cache lines of the critical section (0 for `rw-map`).
    pub cs_lines: usize,
    /// Measured window of one run (s; mean over the repeats).
    pub duration_s: f64,
    /// Whether threads were pinned along the route.
    pub pinned: bool,
    /// Seed of the generators.
    pub seed: u64,
    /// Runs behind this row.
    pub repeats: usize,
    /// Million operations (reads and writes) per second, mean over runs.
    pub mops_per_s: f64,
    /// Sample standard deviation of `mops_per_s` (0 for one run).
    pub mops_per_s_sd: f64,
    /// Slowest run's `mops_per_s`.
    pub mops_per_s_min: f64,
    /// Fastest run's `mops_per_s`.
    pub mops_per_s_max: f64,
    /// Operations counted, all runs.
    pub total: u64,
    /// Reads counted, all runs.
    pub reads: u64,
    /// Writes counted, all runs.
    pub writes: u64,
    /// Throughput / parking_lot's at the same point (`None` without
    /// parking_lot in the run).
    pub vs_parking_lot: Option<f64>,
    /// Standard deviation of `vs_parking_lot`.
    pub vs_parking_lot_sd: Option<f64>,
    /// The ratio to parking_lot round by round.
    #[serde(flatten)]
    pub per_round: PerRound,
    /// Busier half of the threads' share of the reads (0.5 = fair; `None`
    /// without reads).
    pub fairness_reads: Option<f64>,
    /// Busier half of the threads' share of the writes (0.5 = fair; `None`
    /// without writes).
    pub fairness_writes: Option<f64>,
    /// CPU nanoseconds of the process per operation.
    pub cpu_ns_per_op: Option<f64>,
    /// Whether every read saw whole data and the writes added up, in every
    /// run.
    pub exclusion_ok: bool,
    /// Reads per thread, all runs.
    pub per_thread_reads: Vec<u64>,
    /// Writes per thread, all runs.
    pub per_thread_writes: Vec<u64>,
    /// `mops_per_s` of each run, in round order.
    #[serde(default)]
    pub runs_mops_per_s: Vec<f64>,
}

impl RwRow {
    /// A row from the runs of one point (`vs_parking_lot` is filled by
    /// [`add_ratios`]). `runs` must not be empty.
    pub fn from_runs(lock: &str, cfg: &RwConfig, runs: &[RwStats]) -> RwRow {
        let k = runs.len().max(1) as f64;
        let tput: Vec<f64> = runs.iter().map(RwStats::mops_per_s).collect();
        let (mean, sd) = mean_sd(&tput);
        let sum = |f: fn(&RwStats) -> &Vec<u64>| {
            let mut v = vec![0u64; cfg.base.threads];
            for r in runs {
                for (a, b) in v.iter_mut().zip(f(r)) {
                    *a += b;
                }
            }
            v
        };
        let (pr, pw) = (sum(|r| &r.reads), sum(|r| &r.writes));
        let (reads, writes): (u64, u64) = (pr.iter().sum(), pw.iter().sum());
        let total = reads + writes;
        let cpu: Option<f64> = runs.iter().map(|r| r.cpu_s).sum();
        RwRow {
            workload: cfg.shape.name().into(),
            lock: lock.to_string(),
            threads: cfg.base.threads,
            read_pct: cfg.read_pct,
            ncs_ns: cfg.base.ncs_ns,
            cs_lines: if cfg.shape == RwShape::Lines {
                cfg.cs_lines
            } else {
                0
            },
            duration_s: runs.iter().map(|r| r.elapsed_s).sum::<f64>() / k,
            pinned: cfg.base.pinning == Pinning::Route,
            seed: cfg.base.seed,
            repeats: runs.len(),
            mops_per_s: mean,
            mops_per_s_sd: sd,
            mops_per_s_min: tput.iter().copied().reduce(f64::min).unwrap_or(0.0),
            mops_per_s_max: tput.iter().copied().reduce(f64::max).unwrap_or(0.0),
            total,
            reads,
            writes,
            vs_parking_lot: None,
            vs_parking_lot_sd: None,
            per_round: PerRound::default(),
            fairness_reads: (reads > 0).then(|| crate::metrics::fairness_factor(&pr)),
            fairness_writes: (writes > 0).then(|| crate::metrics::fairness_factor(&pw)),
            cpu_ns_per_op: cpu.and_then(|c| ratio(c * 1e9, total as f64)),
            exclusion_ok: runs.iter().all(|r| r.exclusion_ok),
            per_thread_reads: pr,
            per_thread_writes: pw,
            runs_mops_per_s: tput,
        }
    }

    /// Whether `other` is at the same point (all but the lock).
    pub fn same_point(&self, other: &RwRow) -> bool {
        self.workload == other.workload
            && self.threads == other.threads
            && self.read_pct == other.read_pct
            && self.ncs_ns.to_bits() == other.ncs_ns.to_bits()
    }
}

/// Fills `vs_parking_lot` (its spread, and the per-round ratios) of every row from the
/// parking_lot row at the same point.
pub fn add_ratios(rows: &mut [RwRow]) {
    let pl: Vec<RwRow> = rows
        .iter()
        .filter(|r| r.lock == "parking_lot")
        .cloned()
        .collect();
    for r in rows.iter_mut() {
        if let Some(p) = pl.iter().find(|p| p.same_point(r)) {
            r.vs_parking_lot = ratio(r.mops_per_s, p.mops_per_s);
            r.vs_parking_lot_sd =
                ratio_sd(r.mops_per_s, r.mops_per_s_sd, p.mops_per_s, p.mops_per_s_sd)
                    .filter(|_| r.repeats > 1 && p.repeats > 1);
            r.per_round = PerRound::of(&r.runs_mops_per_s, &p.runs_mops_per_s);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tiny(shape: RwShape, read_pct: u32) -> RwConfig {
        RwConfig {
            base: LoopConfig {
                threads: 3,
                duration: Duration::from_millis(20),
                warmup: Duration::ZERO,
                pinning: Pinning::None,
                ..LoopConfig::default()
            },
            shape,
            read_pct,
            ..RwConfig::default()
        }
    }

    #[test]
    fn every_lock_keeps_readers_and_writers_apart() {
        for e in rw_locks() {
            for shape in [RwShape::Lines, RwShape::Map] {
                let s = (e.run)(&tiny(shape, 50));
                assert!(s.exclusion_ok, "{} {shape:?}", e.name);
                assert_eq!(s.reads.len(), 3);
                assert!(s.total() > 0, "{} {shape:?}", e.name);
            }
        }
    }

    #[test]
    fn all_reads_make_no_write() {
        let s = (find("ron-rw").unwrap().run)(&tiny(RwShape::Lines, 100));
        assert_eq!(s.writes.iter().sum::<u64>(), 0);
        assert!(s.reads.iter().sum::<u64>() > 0);
        let row = RwRow::from_runs("ron-rw", &tiny(RwShape::Lines, 100), &[s]);
        assert_eq!(row.fairness_writes, None);
        assert!(row.fairness_reads.is_some());
    }

    /// The checks the runs rely on can fail: a torn line, a map value
    /// under the wrong key, and a write counter that missed a write are
    /// each caught.
    #[test]
    fn the_exclusion_checks_catch_torn_data() {
        let mut rng = SplitMix64::for_stream(1, 0);
        let mut lines = LinesData {
            writes: 0,
            lines: vec![Line::default(); 3],
        };
        lines.write(&mut rng);
        assert!(lines.read(&mut rng));
        lines.lines[1].0[0] += 1; // a write half done
        assert!(!lines.read(&mut rng));

        let mut map = MapData {
            writes: 0,
            map: (0..MAP_KEYS).map(|k| (k, map_value(k, 0))).collect(),
        };
        map.write(&mut rng);
        assert_eq!(map.writes(), 1);
        assert!((0..64).all(|_| map.read(&mut rng)));
        for v in map.map.values_mut() {
            *v = map_value(MAP_KEYS + 1, 0); // values under the wrong keys
        }
        assert!(!map.read(&mut rng));
    }

    #[test]
    fn names_resolve_and_unknown_ones_are_refused() {
        let all = resolve("all").unwrap();
        assert_eq!(all.len(), rw_locks().len());
        let two = resolve("RonRw, parking_lot,ron-rw").unwrap();
        assert_eq!(
            two.iter().map(|e| e.name).collect::<Vec<_>>(),
            ["ron-rw", "parking_lot"]
        );
        assert!(resolve("ron").is_err());
        assert!(resolve(" , ").is_err());
    }
}
