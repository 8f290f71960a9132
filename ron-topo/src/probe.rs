//! The core-to-core latency probe.
//!
//! For an ordered pair `(a, b)` two threads are spawned, pinned with
//! `core_affinity` to CPUs `a` (initiator) and `b` (responder). They bounce
//! one cache line (a `CachePadded` atomic counter): the initiator writes an
//! odd value and spins until the responder answers with the next even one.
//! A *sample* times [`BATCH`] such round trips with one pair of clock reads
//! (amortising the ~20 ns clock overhead) and records `elapsed / (2 *
//! BATCH)`, the one-way handover latency. After `warmup_rounds` unrecorded
//! samples, `rounds` samples are taken and their median is the entry
//! `L[a][b]` (the median trims outliers such as interrupts). The entry is a
//! round trip over two, initiated from `a`: any asymmetry comes from which
//! side starts, as in the recorded matrices of `shared/data`.
//!
//! Modes:
//! - [`ProbeMode::Full`]: all `n (n - 1)` ordered pairs.
//! - [`ProbeMode::Sampled`]: pairs are classed by `(L3 group of a, L3 group
//!   of b, same core?)`; a few pairs per class (chosen with a seeded PRNG)
//!   are measured and every pair of the class gets the class median. This
//!   scales to hundreds of CPUs, where the full probe takes minutes.
//!
//! The output format is deterministic: CPU ids ascending, the pair order
//! fixed, metadata filled in. The probe reports progress through a callback
//! and stops with [`ProbeError::Cancelled`] when the cancel flag is set.

use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use crossbeam_utils::CachePadded;
use rand::SeedableRng;
use rand::seq::IndexedRandom;
use rand_pcg::Pcg64Mcg;

use crate::matrix::{LatencyMatrix, MatrixError, MatrixMeta};
use crate::topology::Topology;

/// Round trips timed per sample.
pub const BATCH: u32 = 8;

/// How long one side may wait for the other before the pair is abandoned
/// (pinning failed silently, or the machine is badly oversubscribed).
const STALL_TIMEOUT: Duration = Duration::from_secs(5);

/// Which pairs to measure.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProbeMode {
    /// Every ordered pair.
    Full,
    /// `pairs_per_class` ordered pairs per (L3 group, L3 group, same core)
    /// class, the rest filled in with the class median.
    Sampled {
        /// Pairs measured per class (at least 1).
        pairs_per_class: usize,
    },
}

/// Options of [`probe`].
#[derive(Debug, Clone)]
pub struct ProbeOptions {
    /// Which pairs to measure.
    pub mode: ProbeMode,
    /// Recorded samples per pair (the median is kept).
    pub rounds: u32,
    /// Unrecorded warm-up samples per pair.
    pub warmup_rounds: u32,
    /// CPUs to probe; `None` = every CPU this process may run on.
    pub cpus: Option<Vec<usize>>,
    /// Seed for the choice of sampled pairs.
    pub seed: u64,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions {
            mode: ProbeMode::Full,
            rounds: 200,
            warmup_rounds: 50,
            cpus: None,
            seed: 0,
        }
    }
}

/// Why the probe stopped.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    /// Fewer than two CPUs to probe.
    #[error("need at least 2 CPUs to probe, have {0}")]
    NotEnoughCpus(usize),
    /// A CPU is not in the topology or not allowed for this process.
    #[error("CPU {0} is not available to this process")]
    UnknownCpu(usize),
    /// A thread could not be pinned.
    #[error("could not pin a thread to CPU {0}")]
    PinFailed(usize),
    /// A pair did not answer within the stall timeout.
    #[error("ping-pong between CPU {from} and CPU {to} stalled")]
    Stalled {
        /// Initiator CPU.
        from: usize,
        /// Responder CPU.
        to: usize,
    },
    /// A probe thread panicked or could not be spawned.
    #[error("probe thread failed: {0}")]
    Thread(String),
    /// The cancel flag was set.
    #[error("probe cancelled")]
    Cancelled,
    /// The result did not form a valid matrix.
    #[error(transparent)]
    Matrix(#[from] MatrixError),
}

/// Outcome of one side's wait.
enum Wait {
    Ok,
    Cancelled,
    Stalled,
}

/// Asks the other side of a pair to give up.
fn raise(flag: &AtomicBool) {
    // Relaxed: an advisory stop flag; nothing is published with it, and a
    // late read only delays the other side's stop by one check.
    flag.store(true, Ordering::Relaxed);
}

/// Spins until `line` holds `want`.
#[inline]
fn wait_for(line: &AtomicU64, want: u64, cancel: &AtomicBool, abort: &AtomicBool) -> Wait {
    let mut spins: u32 = 0;
    let mut start: Option<Instant> = None;
    // Acquire pairs with the other side's Release store of `want`, so
    // everything it wrote before is visible (nothing else is shared here).
    while line.load(Ordering::Acquire) != want {
        std::hint::spin_loop();
        spins = spins.wrapping_add(1);
        if spins.is_multiple_of(4096) {
            // Relaxed: the flags are advisory stop requests; a late read
            // only delays the stop by one more check.
            if cancel.load(Ordering::Relaxed) {
                return Wait::Cancelled;
            }
            // Relaxed: as above.
            if abort.load(Ordering::Relaxed) {
                return Wait::Stalled;
            }
            let s = *start.get_or_insert_with(Instant::now);
            if s.elapsed() > STALL_TIMEOUT {
                return Wait::Stalled;
            }
        }
    }
    Wait::Ok
}

/// Measures the one-way latency from CPU `a` to CPU `b` (ns, median).
fn measure_pair(
    a: usize,
    b: usize,
    opts: &ProbeOptions,
    cancel: &AtomicBool,
) -> Result<f64, ProbeError> {
    let line = CachePadded::new(AtomicU64::new(0));
    let abort = AtomicBool::new(false);
    let total = u64::from(opts.warmup_rounds) + u64::from(opts.rounds.max(1));
    let trips = total * u64::from(BATCH);
    let (line, abort) = (&line, &abort);
    std::thread::scope(|s| {
        let responder = s.spawn(move || -> Result<(), ProbeError> {
            if !core_affinity::set_for_current(core_affinity::CoreId { id: b }) {
                raise(abort);
                return Err(ProbeError::PinFailed(b));
            }
            for r in 0..trips {
                match wait_for(line, 2 * r + 1, cancel, abort) {
                    Wait::Ok => {}
                    Wait::Cancelled => return Err(ProbeError::Cancelled),
                    Wait::Stalled => {
                        raise(abort);
                        return Err(ProbeError::Stalled { from: a, to: b });
                    }
                }
                // Release: publishes the answer to the initiator's Acquire.
                line.store(2 * r + 2, Ordering::Release);
            }
            Ok(())
        });
        let initiator = s.spawn(move || -> Result<Vec<f64>, ProbeError> {
            if !core_affinity::set_for_current(core_affinity::CoreId { id: a }) {
                raise(abort);
                return Err(ProbeError::PinFailed(a));
            }
            let mut samples = Vec::with_capacity(opts.rounds as usize);
            let mut r: u64 = 0;
            for k in 0..total {
                let t0 = Instant::now();
                for _ in 0..BATCH {
                    // Release: pairs with the responder's Acquire wait.
                    line.store(2 * r + 1, Ordering::Release);
                    match wait_for(line, 2 * r + 2, cancel, abort) {
                        Wait::Ok => {}
                        Wait::Cancelled => return Err(ProbeError::Cancelled),
                        Wait::Stalled => {
                            raise(abort);
                            return Err(ProbeError::Stalled { from: a, to: b });
                        }
                    }
                    r += 1;
                }
                let dt = t0.elapsed().as_secs_f64() * 1e9;
                if k >= u64::from(opts.warmup_rounds) {
                    samples.push(dt / (2.0 * f64::from(BATCH)));
                }
            }
            Ok(samples)
        });
        let init = initiator
            .join()
            .map_err(|_| ProbeError::Thread("initiator panicked".into()))?;
        let resp = responder
            .join()
            .map_err(|_| ProbeError::Thread("responder panicked".into()))?;
        let mut samples = init?;
        resp?;
        Ok(ron_stats::median(&mut samples))
    })
}

/// The CPUs [`probe`] uses by default: those this process may run on.
pub fn available_cpus() -> Vec<usize> {
    let mut v: Vec<usize> = core_affinity::get_core_ids()
        .map(|ids| ids.into_iter().map(|c| c.id).collect())
        .unwrap_or_default();
    v.sort_unstable();
    v.dedup();
    v
}

/// Measures the latency matrix (see the module docs). `progress(done,
/// total)` is called after every measured pair; setting `cancel` stops the
/// probe with [`ProbeError::Cancelled`].
pub fn probe(
    topo: &Topology,
    opts: &ProbeOptions,
    progress: &mut dyn FnMut(usize, usize),
    cancel: &AtomicBool,
) -> Result<LatencyMatrix, ProbeError> {
    let mut cpus = opts.cpus.clone().unwrap_or_else(available_cpus);
    cpus.sort_unstable();
    cpus.dedup();
    if cpus.len() < 2 {
        return Err(ProbeError::NotEnoughCpus(cpus.len()));
    }
    if cpus.len() > crate::matrix::MAX_N {
        return Err(MatrixError::TooLarge {
            n: cpus.len(),
            max: crate::matrix::MAX_N,
        }
        .into());
    }
    let allowed = available_cpus();
    if let Some(&bad) = cpus.iter().find(|c| !allowed.contains(c)) {
        return Err(ProbeError::UnknownCpu(bad));
    }
    let n = cpus.len();
    // Class of each ordered pair: (L3 of a, L3 of b, same core).
    let info = |c: usize| topo.cpu(c).map(|i| (i.l3, i.core));
    let mut classes: BTreeMap<(usize, usize, bool), Vec<(usize, usize)>> = BTreeMap::new();
    for i in 0..n {
        for j in 0..n {
            if i == j {
                continue;
            }
            let key = match (info(cpus[i]), info(cpus[j])) {
                (Some((la, ca)), Some((lb, cb))) => (la, lb, ca == cb),
                // Unknown to the topology: its own class, always measured.
                _ => (usize::MAX - i, usize::MAX - j, false),
            };
            classes.entry(key).or_default().push((i, j));
        }
    }
    let pairs: Vec<(usize, usize)> = match opts.mode {
        ProbeMode::Full => classes.values().flatten().copied().collect(),
        ProbeMode::Sampled { pairs_per_class } => {
            let mut rng = Pcg64Mcg::seed_from_u64(opts.seed);
            let k = pairs_per_class.max(1);
            let mut v = Vec::new();
            for members in classes.values() {
                v.extend(members.choose_multiple(&mut rng, k).copied());
            }
            v
        }
    };
    let mut pairs = pairs;
    pairs.sort_unstable();
    let total = pairs.len();
    let mut measured: BTreeMap<(usize, usize), f64> = BTreeMap::new();
    progress(0, total);
    for (done, &(i, j)) in pairs.iter().enumerate() {
        // Relaxed: an advisory stop request, checked once per pair.
        if cancel.load(Ordering::Relaxed) {
            return Err(ProbeError::Cancelled);
        }
        let v = measure_pair(cpus[i], cpus[j], opts, cancel)?;
        measured.insert((i, j), v);
        progress(done + 1, total);
    }
    let mut rows = vec![vec![0.0; n]; n];
    for members in classes.values() {
        let mut vals: Vec<f64> = members
            .iter()
            .filter_map(|p| measured.get(p).copied())
            .collect();
        let fill = ron_stats::median(&mut vals);
        for &(i, j) in members {
            // Rounded to 0.01 ns: finer digits are noise and would make
            // the CSV/JSON output needlessly long.
            let v = measured.get(&(i, j)).copied().unwrap_or(fill);
            rows[i][j] = (v * 100.0).round() / 100.0;
        }
    }
    let meta = MatrixMeta {
        source: "probe".into(),
        mode: match opts.mode {
            ProbeMode::Full => "full".into(),
            ProbeMode::Sampled { pairs_per_class } => format!("sampled:{pairs_per_class}"),
        },
        rounds: opts.rounds,
        warmup_rounds: opts.warmup_rounds,
        statistic: format!("median of {BATCH}-round-trip samples, one-way = round trip / 2"),
    };
    Ok(LatencyMatrix::from_rows(rows)?
        .with_cpus(cpus)?
        .with_meta(meta))
}
