//! Result rows, their aggregation over repeats, and the run metadata.
//!
//! The JSON of `ron bench` is a [`Report`]: `{"meta": RunMeta, "rows":
//! [...]}` with [`BenchRow`]s (or [`CorunnerRow`]s for `--workload
//! corunner`). Field names are stable: tools, `ron plot` and `ron compare`
//! read them; new fields may be added (with serde defaults, so older files
//! still read). [`read_bench_rows`] also reads the plain array of rows that
//! older versions wrote. Rendering (table, CSV, JSON) lives in `ron-cli`.

use serde::{Deserialize, Serialize};

use crate::registry::LockEntry;
use crate::workload::RunStats;
use crate::workload::corunner::{CorunnerPolicy, CorunnerStats};

/// The ratio helpers of the reports (defined in ron-stats).
pub use ron_stats::{RoundRatios, mean_sd, ratio, ratio_sd, round_ratios};

fn one() -> usize {
    1
}

/// Metadata of one `ron bench` run, stored with its rows.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq, Default)]
#[serde(default)]
pub struct RunMeta {
    /// The tool that wrote the file (`ron`).
    pub tool: String,
    /// Its version.
    pub version: String,
    /// The command line, one argument per entry.
    pub command_line: Vec<String>,
    /// Start of the run, RFC 3339 UTC.
    pub date: String,
    /// CPU model of the machine.
    pub cpu_model: String,
    /// CPUs this process may run on.
    pub cpus: usize,
    /// Where the installed route came from.
    pub route_source: String,
    /// The calibration's machine fingerprint, when the route came from one.
    pub calibration: Option<ron_topo::Fingerprint>,
    /// Runs per point.
    pub repeat: usize,
    /// Whether the run was cut short (Ctrl-C or an error): the rows are
    /// those measured until then.
    pub interrupted: bool,
}

/// A run's metadata and rows: the JSON document `ron bench` writes.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct Report<R> {
    /// How, where and when the rows were measured.
    pub meta: RunMeta,
    /// The rows.
    pub rows: Vec<R>,
}

/// Reads `ron bench` JSON: a [`Report`] or (older files) a bare array of
/// rows; the metadata is `None` for the latter.
pub fn read_bench_rows(text: &str) -> Result<(Option<RunMeta>, Vec<BenchRow>), serde_json::Error> {
    let v: serde_json::Value = serde_json::from_str(text)?;
    if v.is_array() {
        return Ok((None, serde_json::from_value(v)?));
    }
    let r: Report<BenchRow> = serde_json::from_value(v)?;
    Ok((Some(r.meta), r.rows))
}

/// One (workload, lock, threads, nCS) point of a lock-loop benchmark,
/// aggregated over its repeats.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct BenchRow {
    /// `micro`, `kv`, `kv-update` or `ron-micro`.
    pub workload: String,
    /// Lock name (the command-line name).
    pub lock: String,
    /// Threads.
    pub threads: usize,
    /// Mean non-critical section (ns).
    pub ncs_ns: f64,
    /// Cache lines read and written per critical section (0 for `kv`).
    pub cs_lines: usize,
    /// Measured window of one run (s; mean over the repeats).
    pub duration_s: f64,
    /// Whether threads were pinned along the route.
    pub pinned: bool,
    /// Seed of the jitter and key generators.
    pub seed: u64,
    /// Runs behind this row.
    #[serde(default = "one")]
    pub repeats: usize,
    /// Million acquisitions (= operations) per second, mean over the runs.
    pub mlocks_per_s: f64,
    /// Sample standard deviation of `mlocks_per_s` over the runs (0 for one
    /// run).
    #[serde(default)]
    pub mlocks_per_s_sd: f64,
    /// Slowest run's `mlocks_per_s`.
    #[serde(default)]
    pub mlocks_per_s_min: f64,
    /// Fastest run's `mlocks_per_s`.
    #[serde(default)]
    pub mlocks_per_s_max: f64,
    /// Acquisitions counted, all runs.
    pub total: u64,
    /// Busier half's share of the acquisitions (0.5 = fair, 1.0 = half the
    /// threads starved); `None` when nothing was acquired.
    pub fairness_factor: Option<f64>,
    /// Coefficient of variation of the per-thread counts (`None` when
    /// nothing was acquired).
    pub cv: Option<f64>,
    /// Acquire latency, median (ns; mean over the runs; `None` when
    /// nothing was acquired).
    pub p50_ns: Option<f64>,
    /// Acquire latency, 99th percentile (as `p50_ns`).
    pub p99_ns: Option<f64>,
    /// Acquire latency, 99.9th percentile (as `p50_ns`).
    pub p999_ns: Option<f64>,
    /// Mean handover time between different threads (ns; `None` without
    /// handovers).
    pub handover_ns: Option<f64>,
    /// Median handover time (ns; mean over the runs; `None` without
    /// handovers).
    #[serde(default)]
    pub handover_p50_ns: Option<f64>,
    /// Handovers counted, all runs.
    pub handovers: u64,
    /// CPU seconds the process used per wall-clock second of measurement
    /// (`getrusage`): how many CPUs the lock kept busy. `None` where not
    /// measurable.
    #[serde(default)]
    pub cpu_per_wall: Option<f64>,
    /// CPU nanoseconds the process used per acquisition: the cost of one
    /// lock operation including everybody's waiting.
    #[serde(default)]
    pub cpu_ns_per_lock: Option<f64>,
    /// Throughput / the best peer's at the same point (`None` without a
    /// peer in the run).
    pub vs_best_peer: Option<f64>,
    /// Standard deviation of `vs_best_peer`.
    #[serde(default)]
    pub vs_best_peer_sd: Option<f64>,
    /// The best peer at this point.
    pub best_peer: Option<String>,
    /// Throughput / parking_lot's at the same point.
    pub vs_parking_lot: Option<f64>,
    /// Standard deviation of `vs_parking_lot`.
    #[serde(default)]
    pub vs_parking_lot_sd: Option<f64>,
    /// The ratio to parking_lot round by round.
    #[serde(flatten)]
    pub per_round: PerRound,
    /// Whether the final shared data matched the acquisition count, in
    /// every run.
    pub exclusion_ok: bool,
    /// `ron-micro`: mean time of the critical section's data accesses (ns;
    /// mean over the runs); `None` for the other workloads.
    #[serde(default)]
    pub cs_data_ns: Option<f64>,
    /// `ron-micro`: mean number of threads waiting when the lock was
    /// acquired (mean over the runs); `None` for the other workloads.
    #[serde(default)]
    pub waiters: Option<f64>,
    /// Acquisitions per thread, all runs.
    pub per_thread: Vec<u64>,
    /// `mlocks_per_s` of each run, in round order.
    #[serde(default)]
    pub runs_mlocks_per_s: Vec<f64>,
}

/// A row's ratio to parking_lot round by round: its run over parking_lot's
/// run of the same round (the repeats are rounds over the whole grid, so
/// the two runs are seconds apart and share the machine's phase), over
/// the rounds. All `None` without parking_lot, or with rows of unequal
/// rounds.
#[derive(Debug, Clone, Copy, Serialize, Deserialize, PartialEq, Default)]
pub struct PerRound {
    /// Median of the per-round ratios.
    #[serde(default)]
    pub vs_parking_lot_median: Option<f64>,
    /// Lowest of them.
    #[serde(default)]
    pub vs_parking_lot_min: Option<f64>,
    /// Highest of them.
    #[serde(default)]
    pub vs_parking_lot_max: Option<f64>,
}

impl PerRound {
    /// From a row's runs and parking_lot's at the same point, each in
    /// round order.
    pub fn of(runs: &[f64], parking_lot: &[f64]) -> PerRound {
        match round_ratios(runs, parking_lot) {
            Some(x) => PerRound {
                vs_parking_lot_median: Some(x.median),
                vs_parking_lot_min: Some(x.min),
                vs_parking_lot_max: Some(x.max),
            },
            None => PerRound::default(),
        }
    }

    /// The three together, when all are there.
    pub fn ratios(&self) -> Option<RoundRatios> {
        Some(RoundRatios {
            median: self.vs_parking_lot_median?,
            min: self.vs_parking_lot_min?,
            max: self.vs_parking_lot_max?,
        })
    }
}

/// Where a point of a grid is: the identity of a [`BenchRow`] without its
/// measurements.
#[derive(Debug, Clone, Copy)]
pub struct PointId<'a> {
    /// `micro` or `kv`.
    pub workload: &'a str,
    /// The lock.
    pub lock: &'a LockEntry,
    /// Threads.
    pub threads: usize,
    /// Mean non-critical section (ns).
    pub ncs_ns: f64,
    /// Cache lines per critical section (0 for `kv`).
    pub cs_lines: usize,
    /// Whether threads were pinned.
    pub pinned: bool,
    /// Seed.
    pub seed: u64,
}

impl BenchRow {
    /// A row from the runs of one point (ratios filled by [`add_ratios`]).
    /// `runs` must not be empty.
    pub fn from_runs(id: &PointId<'_>, runs: &[RunStats]) -> Self {
        let k = runs.len().max(1) as f64;
        let tput: Vec<f64> = runs.iter().map(RunStats::mlocks_per_s).collect();
        let (mean, sd) = mean_sd(&tput);
        let mut per_thread = vec![0u64; id.threads];
        for r in runs {
            for (a, b) in per_thread.iter_mut().zip(&r.per_thread) {
                *a += b;
            }
        }
        let total: u64 = per_thread.iter().sum();
        let avg = |f: fn(&RunStats) -> f64| runs.iter().map(f).sum::<f64>() / k;
        let handovers: u64 = runs.iter().map(|r| r.handovers).sum();
        let ho_sum: f64 = runs
            .iter()
            .map(|r| r.handover_ns * r.handovers as f64)
            .sum();
        let wall: f64 = runs.iter().map(|r| r.elapsed_s).sum();
        let cpu: Option<f64> = runs.iter().map(|r| r.cpu_s).sum();
        BenchRow {
            workload: id.workload.to_string(),
            lock: id.lock.name().to_string(),
            threads: id.threads,
            ncs_ns: id.ncs_ns,
            cs_lines: id.cs_lines,
            duration_s: wall / k,
            pinned: id.pinned,
            seed: id.seed,
            repeats: runs.len(),
            mlocks_per_s: mean,
            mlocks_per_s_sd: sd,
            mlocks_per_s_min: tput.iter().copied().reduce(f64::min).unwrap_or(0.0),
            mlocks_per_s_max: tput.iter().copied().reduce(f64::max).unwrap_or(0.0),
            total,
            fairness_factor: (total > 0).then(|| crate::metrics::fairness_factor(&per_thread)),
            cv: (total > 0).then(|| crate::metrics::cv(&per_thread)),
            p50_ns: (total > 0).then(|| avg(|r| r.latency.p50_ns)),
            p99_ns: (total > 0).then(|| avg(|r| r.latency.p99_ns)),
            p999_ns: (total > 0).then(|| avg(|r| r.latency.p999_ns)),
            handover_ns: (handovers > 0).then(|| ho_sum / handovers as f64),
            handover_p50_ns: (handovers > 0).then(|| avg(|r| r.handover_p50_ns)),
            handovers,
            cpu_per_wall: cpu.and_then(|c| ratio(c, wall)),
            cpu_ns_per_lock: cpu.and_then(|c| ratio(c * 1e9, total as f64)),
            vs_best_peer: None,
            vs_best_peer_sd: None,
            best_peer: None,
            vs_parking_lot: None,
            vs_parking_lot_sd: None,
            per_round: PerRound::default(),
            exclusion_ok: runs.iter().all(|r| r.exclusion_ok),
            cs_data_ns: mean_of(runs, |r| r.cs_data_ns),
            waiters: mean_of(runs, |r| r.waiters),
            per_thread,
            runs_mlocks_per_s: tput,
        }
    }
}

/// The mean of `f` over the runs that have it (`None` when none has).
fn mean_of(runs: &[RunStats], f: fn(&RunStats) -> Option<f64>) -> Option<f64> {
    let v: Vec<f64> = runs.iter().filter_map(f).collect();
    (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
}

/// Fills the `vs_*` fields and `best_peer` of every row from the peers
/// (`is_peer(name)`) at the same (workload, threads, nCS, cs_lines).
pub fn add_ratios(rows: &mut [BenchRow], is_peer: impl Fn(&str) -> bool) {
    let key = |r: &BenchRow| {
        (
            r.workload.clone(),
            r.threads,
            r.ncs_ns.to_bits(),
            r.cs_lines,
        )
    };
    let snapshot: Vec<BenchRow> = rows.to_vec();
    for r in rows.iter_mut() {
        let k = key(r);
        let same = snapshot.iter().filter(|o| key(o) == k);
        let best = same
            .clone()
            .filter(|o| is_peer(&o.lock))
            .max_by(|a, b| a.mlocks_per_s.total_cmp(&b.mlocks_per_s));
        let vs = |o: &BenchRow| {
            (
                ratio(r.mlocks_per_s, o.mlocks_per_s),
                ratio_sd(
                    r.mlocks_per_s,
                    r.mlocks_per_s_sd,
                    o.mlocks_per_s,
                    o.mlocks_per_s_sd,
                ),
            )
        };
        (r.vs_best_peer, r.vs_best_peer_sd, r.best_peer) = match best {
            Some(b) if ratio(1.0, b.mlocks_per_s).is_some() => {
                let (v, sd) = vs(b);
                (v, sd, Some(b.lock.clone()))
            }
            _ => (None, None, None),
        };
        let parking_lot = same.clone().find(|o| o.lock == "parking_lot");
        (r.vs_parking_lot, r.vs_parking_lot_sd) = match parking_lot {
            Some(p) => vs(p),
            None => (None, None),
        };
        r.per_round = parking_lot
            .map(|p| PerRound::of(&r.runs_mlocks_per_s, &p.runs_mlocks_per_s))
            .unwrap_or_default();
    }
}

/// One co-runner measurement.
#[derive(Debug, Clone, Serialize, Deserialize, PartialEq)]
pub struct CorunnerRow {
    /// Always `corunner`.
    pub workload: String,
    /// Waiting policy name.
    pub policy: String,
    /// The lock type that waits.
    pub lock_type: String,
    /// Waiters sharing the compute thread's CPU.
    pub waiters: usize,
    /// Length of each phase (s).
    pub duration_s: f64,
    /// Compute work units (1 us) per second alone.
    pub alone_units_per_s: f64,
    /// Compute work units per second with the waiters.
    pub shared_units_per_s: f64,
    /// `1 - shared / alone`.
    pub slowdown: f64,
    /// The waiters' fair share of the CPU, `W / (W + 1)`: what pure
    /// spinning costs.
    pub waiters_share: f64,
    /// CPU of the compute thread and waiters.
    pub compute_cpu: usize,
    /// CPU of the lock holder.
    pub holder_cpu: usize,
}

impl CorunnerRow {
    /// A row from one measurement.
    pub fn new(p: &CorunnerPolicy, waiters: usize, duration_s: f64, s: &CorunnerStats) -> Self {
        CorunnerRow {
            workload: "corunner".into(),
            policy: p.name.into(),
            lock_type: p.type_name.into(),
            waiters,
            duration_s,
            alone_units_per_s: s.alone_per_s,
            shared_units_per_s: s.shared_per_s,
            slowdown: s.slowdown(),
            waiters_share: waiters as f64 / (waiters as f64 + 1.0),
            compute_cpu: s.compute_cpu,
            holder_cpu: s.holder_cpu,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_acquisition_has_no_fairness() {
        let lock = &crate::registry::registry()[0];
        let id = PointId {
            workload: "micro",
            lock,
            threads: 2,
            ncs_ns: 0.0,
            cs_lines: 1,
            pinned: false,
            seed: 1,
        };
        let idle = RunStats {
            per_thread: vec![0, 0],
            elapsed_s: 0.1,
            exclusion_ok: true,
            cpu_s: Some(0.05),
            ..RunStats::default()
        };
        let r = BenchRow::from_runs(&id, &[idle.clone(), idle]);
        assert_eq!(r.fairness_factor, None);
        assert_eq!(r.cv, None);
        assert_eq!(r.cpu_ns_per_lock, None);
        assert_eq!(r.cpu_per_wall, Some(0.5));
        assert_eq!(r.repeats, 2);
    }

    #[test]
    fn per_round_ratios_pair_the_rounds() {
        let reg = crate::registry::registry();
        let row = |name: &str, counts: &[u64]| {
            let lock = reg.iter().find(|e| e.name() == name).unwrap();
            let id = PointId {
                workload: "micro",
                lock,
                threads: 1,
                ncs_ns: 0.0,
                cs_lines: 1,
                pinned: false,
                seed: 1,
            };
            let runs: Vec<RunStats> = counts
                .iter()
                .map(|&c| RunStats {
                    per_thread: vec![c * 1_000_000],
                    elapsed_s: 1.0,
                    exclusion_ok: true,
                    ..RunStats::default()
                })
                .collect();
            BenchRow::from_runs(&id, &runs)
        };
        // Round 1 ran slow for both locks, round 3 fast for both: the
        // per-round ratios are 1.0, 0.5 and 1.0.
        let mut rows = vec![row("ron-grant", &[2, 4, 8]), row("parking_lot", &[2, 8, 8])];
        add_ratios(&mut rows, |n| n == "parking_lot");
        let r = &rows[0];
        assert_eq!(r.runs_mlocks_per_s, vec![2.0, 4.0, 8.0]);
        assert_eq!(r.per_round.vs_parking_lot_median, Some(1.0));
        assert_eq!(
            (
                r.per_round.vs_parking_lot_min,
                r.per_round.vs_parking_lot_max
            ),
            (Some(0.5), Some(1.0))
        );
        // The ratio of the means weighs the fast round most.
        assert_eq!(r.vs_parking_lot, Some(14.0 / 18.0));
        // Rows of unequal rounds are not paired.
        let mut rows = vec![row("ron-grant", &[2, 4]), row("parking_lot", &[2, 8, 8])];
        add_ratios(&mut rows, |n| n == "parking_lot");
        assert_eq!(rows[0].per_round, PerRound::default());
    }

    #[test]
    fn spread_and_ratio_spread() {
        assert_eq!(mean_sd(&[1.0, 3.0]), (2.0, 2f64.sqrt()));
        assert_eq!(mean_sd(&[4.0]), (4.0, 0.0));
        let sd = ratio_sd(2.0, 0.2, 1.0, 0.1).unwrap();
        assert!((sd - 2.0 * (0.01f64 + 0.01).sqrt()).abs() < 1e-12);
        assert_eq!(ratio_sd(1.0, 0.1, 0.0, 0.0), None);
    }
}
