//! The discrete-event engine: [`Simulator`], [`SimConfig`], [`SimReport`].

use std::cmp::Ordering;
use std::collections::BinaryHeap;

use serde::Serialize;

use crate::policy::{self, Placement, PolicyKind, PolicyParams};
use crate::{Costs, CostsExt, SimError, groups};
use ron_stats::SplitMix64;

/// Upper bound on admissions in one run; a run that would need more is
/// refused (shorten the duration or lengthen CS) instead of running for
/// minutes.
pub const MAX_ADMISSIONS: u64 = 20_000_000;

/// Which CPUs the `T` simulated threads run on (one thread per CPU).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CpuSelection {
    /// CPUs `0..T` in the OS's numbering (the topology order of the
    /// recorded matrices: on the SMT files this takes one thread per core
    /// first, since CPU `i + n/2` is the sibling of `i`).
    First,
    /// `T` distinct CPUs drawn uniformly with this seed.
    Random(u64),
    /// Exactly these CPUs (distinct; the thread count is their number).
    List(Vec<usize>),
}

/// One simulation's inputs besides the matrix, route and policy.
#[derive(Clone, Debug, PartialEq)]
pub struct SimConfig {
    /// Number of threads `T` (ignored with [`CpuSelection::List`]).
    pub threads: usize,
    /// Which CPUs the threads run on.
    pub cpus: CpuSelection,
    /// Critical section length in ns (> 0), excluding the handover cost.
    pub cs_ns: f64,
    /// Mean non-critical section in ns (>= 0); each one is drawn uniformly
    /// in `[0.85, 1.15] * ncs_ns`.
    pub ncs_ns: f64,
    /// Simulated time in ns (> 0).
    pub duration_ns: f64,
    /// Leading fraction of the duration left out of the statistics, in
    /// `[0, 1)`, so that the start-up transient does not count.
    pub warmup_fraction: f64,
    /// Seed of the timing jitter and of the randomized policies.
    pub seed: u64,
    /// Policy tunables.
    pub params: PolicyParams,
}

impl Default for SimConfig {
    /// 8 threads on the first CPUs, CS = 100 ns, nCS = 100 ns, 20 ms
    /// simulated, 10% warm-up, seed 1.
    fn default() -> Self {
        SimConfig {
            threads: 8,
            cpus: CpuSelection::First,
            cs_ns: 100.0,
            ncs_ns: 100.0,
            duration_ns: 20e6,
            warmup_fraction: 0.1,
            seed: 1,
            params: PolicyParams::default(),
        }
    }
}

impl SimConfig {
    /// Checks every range; the error names the bad field.
    pub fn validate(&self) -> Result<(), SimError> {
        let bad = |m: &str| Err(SimError::BadConfig(m.to_string()));
        if !(self.cs_ns.is_finite() && self.cs_ns > 0.0) {
            return bad("CS must be a finite number of ns > 0");
        }
        if !(self.ncs_ns.is_finite() && self.ncs_ns >= 0.0) {
            return bad("nCS must be a finite number of ns >= 0");
        }
        if !(self.duration_ns.is_finite() && self.duration_ns > 0.0) {
            return bad("the duration must be a finite time > 0");
        }
        if !(self.warmup_fraction >= 0.0 && self.warmup_fraction < 1.0) {
            return bad("the warm-up fraction must be in [0, 1)");
        }
        if self.duration_ns / self.cs_ns > MAX_ADMISSIONS as f64 {
            return Err(SimError::BadConfig(format!(
                "duration / CS allows more than {MAX_ADMISSIONS} admissions: shorten the duration or lengthen CS"
            )));
        }
        self.params.validate()
    }
}

/// One admission, as recorded by [`Simulator::run_traced`].
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Admission {
    /// The admitted thread.
    pub thread: usize,
    /// Its CPU.
    pub cpu: usize,
    /// When it asked for the lock (ns).
    pub request_ns: f64,
    /// When it got it (ns); equal to the previous owner's release time when
    /// it was handed over.
    pub admit_ns: f64,
    /// When it released it: `admit_ns + cost_ns + cs_ns`.
    pub release_ns: f64,
    /// Handover cost paid, `L[previous owner's CPU][cpu]` (0 for the first
    /// owner).
    pub cost_ns: f64,
    /// Whether the lock went straight from a releasing owner to this waiter
    /// (false: it found the lock free).
    pub direct: bool,
}

/// What one simulation measured (the statistics cover the time after the
/// warm-up). Field names are stable: they are the CSV/JSON columns.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct SimReport {
    /// Label of the matrix (set by the caller; empty by default).
    pub matrix: String,
    /// Policy name ([`PolicyKind::name`]).
    pub policy: String,
    /// Number of threads.
    pub threads: usize,
    /// Critical section (ns).
    pub cs_ns: f64,
    /// Mean non-critical section (ns).
    pub ncs_ns: f64,
    /// Simulated time, warm-up included (ns).
    pub duration_ns: f64,
    /// Seed used.
    pub seed: u64,
    /// Admissions counted (after the warm-up).
    pub admissions: u64,
    /// Admissions per simulated second.
    pub throughput_per_s: f64,
    /// Mean handover cost over the counted admissions (ns).
    pub handover_mean_ns: f64,
    /// 99th percentile (nearest rank) of the handover cost (ns).
    pub handover_p99_ns: f64,
    /// Mean time from request to admission (ns).
    pub wait_mean_ns: f64,
    /// Share of admissions handed over directly by a releasing owner (1.0
    /// at full contention).
    pub direct_share: f64,
    /// Busier half's share of the admissions (0.5 = perfectly fair, 1.0 =
    /// half the threads starve); with odd `T` the middle thread counts half.
    pub fairness_factor: f64,
    /// Coefficient of variation (population stddev / mean) of the
    /// per-thread admission counts.
    pub cv: f64,
    /// CPUs the threads ran on (`cpus[t]`).
    pub cpus: Vec<usize>,
    /// Admissions of each thread.
    pub per_thread: Vec<u64>,
}

/// A matrix, a route and the groups derived from them, ready to run any
/// policy under any [`SimConfig`].
///
/// ```
/// use ron_sim::{Costs, PolicyKind, SimConfig, Simulator};
/// // 4 CPUs in two pairs: 10 ns inside a pair, 100 ns across.
/// let c = Costs::from_fn(4, |i, j| if i == j { 0.0 } else if i / 2 == j / 2 { 10.0 } else { 100.0 }).unwrap();
/// let sim = Simulator::new(c, vec![0, 1, 2, 3]).unwrap();
/// let cfg = SimConfig { threads: 4, ncs_ns: 0.0, duration_ns: 1e6, ..SimConfig::default() };
/// let ron = sim.run(PolicyKind::Ron, &cfg).unwrap();
/// // full contention: one lap of the route per 4 handovers, (10+100+10+100)/4
/// assert!((ron.handover_mean_ns - 55.0).abs() < 1.0);
/// ```
#[derive(Clone, Debug)]
pub struct Simulator {
    costs: Costs,
    route: Vec<usize>,
    groups: Vec<usize>,
}

impl Simulator {
    /// Checks the route and derives the groups with [`groups::cluster`].
    pub fn new(costs: Costs, route: Vec<usize>) -> Result<Self, SimError> {
        costs.check_route(&route)?;
        let groups = groups::cluster(&costs);
        Ok(Simulator {
            costs,
            route,
            groups,
        })
    }

    /// Replaces the derived groups (`groups[cpu]`, ids need not be dense).
    pub fn with_groups(mut self, groups: Vec<usize>) -> Result<Self, SimError> {
        if groups.len() != self.costs.n() {
            return Err(SimError::BadConfig(format!(
                "{} group ids for {} CPUs",
                groups.len(),
                self.costs.n()
            )));
        }
        let mut ids: Vec<usize> = groups.clone();
        ids.sort_unstable();
        ids.dedup();
        self.groups = groups
            .iter()
            .map(|g| ids.binary_search(g).unwrap_or(0))
            .collect();
        Ok(self)
    }

    /// The costs.
    pub fn costs(&self) -> &Costs {
        &self.costs
    }

    /// The route.
    pub fn route(&self) -> &[usize] {
        &self.route
    }

    /// Group id of every CPU, as CNA and cohort use them.
    pub fn groups(&self) -> &[usize] {
        &self.groups
    }

    /// The CPUs `config` puts its threads on.
    pub fn select_cpus(&self, config: &SimConfig) -> Result<Vec<usize>, SimError> {
        let n = self.costs.n();
        let t = config.threads;
        let need = |t: usize| {
            if t == 0 || t > n {
                Err(SimError::BadConfig(format!(
                    "{t} threads on a {n}-CPU matrix: use 1..={n} (one thread per CPU)"
                )))
            } else {
                Ok(())
            }
        };
        match &config.cpus {
            CpuSelection::First => {
                need(t)?;
                Ok((0..t).collect())
            }
            CpuSelection::Random(seed) => {
                need(t)?;
                let mut all: Vec<usize> = (0..n).collect();
                SplitMix64::new(*seed).shuffle(&mut all);
                all.truncate(t);
                Ok(all)
            }
            CpuSelection::List(cpus) => {
                need(cpus.len())?;
                Ok(cpus.clone())
            }
        }
    }

    /// Runs `kind` under `config`.
    pub fn run(&self, kind: PolicyKind, config: &SimConfig) -> Result<SimReport, SimError> {
        self.run_inner(kind, config, None)
    }

    /// Runs `kind` under `config` and also returns every admission, in order
    /// (warm-up included): for checking invariants.
    pub fn run_traced(
        &self,
        kind: PolicyKind,
        config: &SimConfig,
    ) -> Result<(SimReport, Vec<Admission>), SimError> {
        let mut trace = Vec::new();
        let r = self.run_inner(kind, config, Some(&mut trace))?;
        Ok((r, trace))
    }

    /// The order in which `kind` admits threads on `waiting_cpus` (which
    /// request, in that order, while `holder_cpu` holds the lock and nobody
    /// comes back): the RON paper's worked examples. The result starts with
    /// `holder_cpu`.
    ///
    /// ```
    /// use ron_sim::{Costs, PolicyKind, PolicyParams, Simulator};
    /// let c = Costs::from_fn(4, |i, j| (i as f64 - j as f64).abs()).unwrap();
    /// let sim = Simulator::new(c, vec![0, 1, 2, 3]).unwrap();
    /// let p = PolicyParams::default();
    /// assert_eq!(sim.drain_order(PolicyKind::Fifo, &p, 1, &[3, 0, 2]).unwrap(), vec![1, 3, 0, 2]);
    /// assert_eq!(sim.drain_order(PolicyKind::Ron, &p, 1, &[3, 0, 2]).unwrap(), vec![1, 2, 3, 0]);
    /// ```
    pub fn drain_order(
        &self,
        kind: PolicyKind,
        params: &PolicyParams,
        holder_cpu: usize,
        waiting_cpus: &[usize],
    ) -> Result<Vec<usize>, SimError> {
        let mut cpus = vec![holder_cpu];
        cpus.extend_from_slice(waiting_cpus);
        let place = Placement {
            costs: &self.costs,
            route: &self.route,
            cpus: &cpus,
            groups: &self.groups,
        };
        let mut p = policy::build(kind, &place, params)?;
        let mut rng = SplitMix64::new(0);
        p.acquired_free(0);
        for t in 1..cpus.len() {
            p.enqueue(t);
        }
        let mut order = vec![holder_cpu];
        let mut done = vec![false; cpus.len()];
        done[0] = true;
        let mut cur = 0;
        while let Some(t) = p.next(cur, &mut rng) {
            if t >= cpus.len() || std::mem::replace(&mut done[t], true) {
                return Err(SimError::PolicyViolation(format!(
                    "{kind} admitted thread {t}, which was not waiting"
                )));
            }
            order.push(cpus[t]);
            cur = t;
        }
        if order.len() != cpus.len() {
            return Err(SimError::PolicyViolation(format!(
                "{kind} left {} waiters behind",
                cpus.len() - order.len()
            )));
        }
        Ok(order)
    }

    fn run_inner(
        &self,
        kind: PolicyKind,
        config: &SimConfig,
        mut trace: Option<&mut Vec<Admission>>,
    ) -> Result<SimReport, SimError> {
        config.validate()?;
        let cpus = self.select_cpus(config)?;
        let place = Placement {
            costs: &self.costs,
            route: &self.route,
            cpus: &cpus,
            groups: &self.groups,
        };
        let mut policy = policy::build(kind, &place, &config.params)?;
        let t_count = cpus.len();
        let mut timing = SplitMix64::new(config.seed);
        let mut policy_rng = SplitMix64::new(config.seed ^ 0x5DEE_CE66_D1CE_5EED);
        let ncs = |rng: &mut SplitMix64| config.ncs_ns * rng.uniform(0.85, 1.15);

        let mut queue = BinaryHeap::with_capacity(2 * t_count);
        let mut seq = 0u64;
        let mut push = |q: &mut BinaryHeap<Event>, time: f64, what: What| {
            seq += 1;
            q.push(Event { time, seq, what });
        };
        // Every thread starts at a uniform point of [0, nCS + CS): inside its
        // first non-critical section, in a random order even when nCS = 0.
        for t in 0..t_count {
            let start = (config.ncs_ns + config.cs_ns) * timing.next_f64();
            push(&mut queue, start, What::Request(t));
        }

        let warmup = config.duration_ns * config.warmup_fraction;
        let mut st = Run {
            owner: None,
            last_cpu: None,
            waiting: vec![false; t_count],
            request: vec![0.0; t_count],
            counts: vec![0; t_count],
            handovers: Vec::new(),
            wait_sum: 0.0,
            direct: 0,
            total: 0,
        };

        while let Some(ev) = queue.pop() {
            if ev.time > config.duration_ns {
                break;
            }
            let now = ev.time;
            match ev.what {
                What::Request(t) => {
                    st.request[t] = now;
                    if st.owner.is_none() {
                        if policy.waiting() != 0 {
                            return Err(SimError::PolicyViolation(format!(
                                "{kind} holds {} waiters while the lock is free",
                                policy.waiting()
                            )));
                        }
                        policy.acquired_free(t);
                        let rel = st.admit(t, now, false, &cpus, &self.costs, config, warmup);
                        record(&mut trace, &st, t, &cpus, now, rel, false, &self.costs);
                        push(&mut queue, rel, What::Release(t));
                    } else {
                        st.waiting[t] = true;
                        policy.enqueue(t);
                    }
                }
                What::Release(t) => {
                    if st.owner != Some(t) {
                        return Err(SimError::PolicyViolation(format!(
                            "thread {t} released a lock it does not own"
                        )));
                    }
                    st.owner = None;
                    st.last_cpu = Some(cpus[t]);
                    if let Some(next) = policy.next(t, &mut policy_rng) {
                        if next >= t_count || !std::mem::replace(&mut st.waiting[next], false) {
                            return Err(SimError::PolicyViolation(format!(
                                "{kind} admitted thread {next}, which was not waiting"
                            )));
                        }
                        let rel = st.admit(next, now, true, &cpus, &self.costs, config, warmup);
                        record(&mut trace, &st, next, &cpus, now, rel, true, &self.costs);
                        push(&mut queue, rel, What::Release(next));
                    } else if st.waiting.iter().any(|&w| w) {
                        return Err(SimError::PolicyViolation(format!(
                            "{kind} returned no successor while threads wait"
                        )));
                    }
                    let back = now + ncs(&mut timing);
                    push(&mut queue, back, What::Request(t));
                    if st.total > MAX_ADMISSIONS {
                        return Err(SimError::BadConfig(format!(
                            "more than {MAX_ADMISSIONS} admissions: shorten the duration"
                        )));
                    }
                }
            }
        }

        let window_s = (config.duration_ns - warmup) * 1e-9;
        let admissions: u64 = st.counts.iter().sum();
        let n_h = st.handovers.len();
        let handover_mean_ns = if n_h == 0 {
            0.0
        } else {
            st.handovers.iter().sum::<f64>() / n_h as f64
        };
        let handover_p99_ns = ron_stats::percentile(&mut st.handovers, 0.99);
        let (fairness_factor, cv) = fairness(&st.counts);
        Ok(SimReport {
            matrix: String::new(),
            policy: kind.name().to_string(),
            threads: t_count,
            cs_ns: config.cs_ns,
            ncs_ns: config.ncs_ns,
            duration_ns: config.duration_ns,
            seed: config.seed,
            admissions,
            throughput_per_s: admissions as f64 / window_s,
            handover_mean_ns,
            handover_p99_ns,
            wait_mean_ns: if admissions == 0 {
                0.0
            } else {
                st.wait_sum / admissions as f64
            },
            direct_share: if admissions == 0 {
                0.0
            } else {
                st.direct as f64 / admissions as f64
            },
            fairness_factor,
            cv,
            cpus,
            per_thread: st.counts,
        })
    }
}

/// Runs `kind` on `costs` along `route` under `config` (a one-off
/// [`Simulator`]).
pub fn simulate(
    costs: &Costs,
    route: &[usize],
    kind: PolicyKind,
    config: &SimConfig,
) -> Result<SimReport, SimError> {
    Simulator::new(costs.clone(), route.to_vec())?.run(kind, config)
}

/// Fairness factor and CV of per-thread counts, as defined on
/// [`SimReport`]. No admissions at all gives `(0.5, 0.0)`.
///
/// ```
/// use ron_sim::fairness;
/// assert_eq!(fairness(&[5, 5, 5, 5]), (0.5, 0.0));
/// assert_eq!(fairness(&[10, 0]).0, 1.0);
/// ```
pub fn fairness(counts: &[u64]) -> (f64, f64) {
    (ron_stats::fairness_factor(counts), ron_stats::cv(counts))
}

#[allow(clippy::too_many_arguments)]
fn record(
    trace: &mut Option<&mut Vec<Admission>>,
    st: &Run,
    t: usize,
    cpus: &[usize],
    now: f64,
    release: f64,
    direct: bool,
    costs: &Costs,
) {
    if let Some(tr) = trace.as_deref_mut() {
        let cost = st.prev_cpu_cost(cpus[t], costs);
        tr.push(Admission {
            thread: t,
            cpu: cpus[t],
            request_ns: st.request[t],
            admit_ns: now,
            release_ns: release,
            cost_ns: cost,
            direct,
        });
    }
}

/// Mutable state of one run.
struct Run {
    owner: Option<usize>,
    /// CPU of the owner before the current one (whose cache holds the line).
    last_cpu: Option<usize>,
    waiting: Vec<bool>,
    request: Vec<f64>,
    counts: Vec<u64>,
    handovers: Vec<f64>,
    wait_sum: f64,
    direct: u64,
    total: u64,
}

impl Run {
    fn prev_cpu_cost(&self, cpu: usize, costs: &Costs) -> f64 {
        self.last_cpu.map_or(0.0, |p| costs.get(p, cpu))
    }

    /// Makes `t` the owner at `now`; returns its release time.
    #[allow(clippy::too_many_arguments)]
    fn admit(
        &mut self,
        t: usize,
        now: f64,
        direct: bool,
        cpus: &[usize],
        costs: &Costs,
        config: &SimConfig,
        warmup: f64,
    ) -> f64 {
        let cost = self.prev_cpu_cost(cpus[t], costs);
        self.owner = Some(t);
        self.total += 1;
        if now >= warmup {
            self.counts[t] += 1;
            if self.last_cpu.is_some() {
                self.handovers.push(cost);
            }
            self.wait_sum += now - self.request[t];
            if direct {
                self.direct += 1;
            }
        }
        now + cost + config.cs_ns
    }
}

#[derive(Clone, Copy, Debug)]
enum What {
    Request(usize),
    Release(usize),
}

/// A timed event; the heap pops the earliest, ties in insertion order.
#[derive(Clone, Copy, Debug)]
struct Event {
    time: f64,
    seq: u64,
    what: What,
}

impl PartialEq for Event {
    fn eq(&self, other: &Self) -> bool {
        self.cmp(other) == Ordering::Equal
    }
}

impl Eq for Event {}

impl PartialOrd for Event {
    fn partial_cmp(&self, other: &Self) -> Option<Ordering> {
        Some(self.cmp(other))
    }
}

impl Ord for Event {
    /// Reversed so that `BinaryHeap` (a max-heap) pops the earliest event.
    fn cmp(&self, other: &Self) -> Ordering {
        other
            .time
            .total_cmp(&self.time)
            .then_with(|| other.seq.cmp(&self.seq))
    }
}
