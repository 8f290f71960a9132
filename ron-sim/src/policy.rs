//! Lock admission policies: who gets the lock when its holder releases it.
//!
//! Every policy is a small type behind the [`Policy`] trait. The engine
//! tells a policy when a thread starts waiting ([`Policy::enqueue`]), when a
//! thread took a free lock without waiting ([`Policy::acquired_free`]), and
//! asks it, at each release, which waiting thread is admitted next
//! ([`Policy::next`]). Policies see threads as indices `0..T`; the
//! [`Placement`] tells them each thread's CPU, the costs, the route and the
//! groups.
//!
//! | kind | next owner at a release |
//! |---|---|
//! | [`Fifo`] | the longest waiter (ticket, MCS) |
//! | [`Ttas`] | a race: each waiter sees the release after `L[releaser][w] * (1 + jitter * u)`, `u` uniform in `[0, 1)`; the first to see it wins |
//! | [`Cna`] | the first waiter of the releaser's group in the main queue; the waiters it skips move to a secondary queue, which goes first when no local waiter is left or after `threshold` consecutive local handovers |
//! | [`Cohort`] | FIFO inside the holder's group for up to `threshold` consecutive admissions, then the next group in FIFO order of the groups (FSL / C-TKT-TKT) |
//! | [`Ron`] | the next waiting CPU along the route after the releaser's CPU (circular, one way) |
//! | [`Ron`] with [`PolicyKind::RonIdentity`] | the same along CPU ids `0, 1, .., n-1` |

use std::collections::{BTreeMap, VecDeque};
use std::fmt;
use std::str::FromStr;

use crate::{Costs, CostsExt, SimError, groups};
use ron_stats::SplitMix64;

/// The admission policies the simulator knows, by their CLI names.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum PolicyKind {
    /// FIFO (ticket, MCS): `fifo`.
    Fifo,
    /// Test-and-test-and-set, nearest waiter most likely wins: `ttas`.
    Ttas,
    /// Compact NUMA-aware lock: `cna`.
    Cna,
    /// Cohort / FSL two-level lock: `cohort`.
    Cohort,
    /// RON along the route: `ron`.
    Ron,
    /// RON along the identity order (CPU ids): `ron-identity`.
    RonIdentity,
}

impl PolicyKind {
    /// Every policy, in the order tables list them (FIFO first: the baseline).
    pub const ALL: [PolicyKind; 6] = [
        PolicyKind::Fifo,
        PolicyKind::Ttas,
        PolicyKind::Cna,
        PolicyKind::Cohort,
        PolicyKind::Ron,
        PolicyKind::RonIdentity,
    ];

    /// The stable name used on the command line and in CSV/JSON output.
    pub fn name(self) -> &'static str {
        match self {
            PolicyKind::Fifo => "fifo",
            PolicyKind::Ttas => "ttas",
            PolicyKind::Cna => "cna",
            PolicyKind::Cohort => "cohort",
            PolicyKind::Ron => "ron",
            PolicyKind::RonIdentity => "ron-identity",
        }
    }

    /// Parses a comma-separated list of names (`"ron,fifo"`; `"all"` for
    /// every policy), keeping the given order and dropping repeats.
    pub fn parse_list(s: &str) -> Result<Vec<PolicyKind>, SimError> {
        let mut out = Vec::new();
        for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
            if part.eq_ignore_ascii_case("all") {
                for k in PolicyKind::ALL {
                    if !out.contains(&k) {
                        out.push(k);
                    }
                }
                continue;
            }
            let k: PolicyKind = part.parse()?;
            if !out.contains(&k) {
                out.push(k);
            }
        }
        if out.is_empty() {
            return Err(SimError::UnknownPolicy(s.to_string()));
        }
        Ok(out)
    }
}

impl fmt::Display for PolicyKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PolicyKind {
    type Err = SimError;

    fn from_str(s: &str) -> Result<Self, SimError> {
        let s = s.trim().to_ascii_lowercase();
        let alias = match s.as_str() {
            "ticket" | "mcs" => "fifo",
            "fsl" => "cohort",
            "ron-id" | "identity" => "ron-identity",
            other => other,
        };
        PolicyKind::ALL
            .into_iter()
            .find(|k| k.name() == alias)
            .ok_or(SimError::UnknownPolicy(s))
    }
}

/// Tunables of the policies; [`Default`] gives the values the CLI uses.
#[derive(Clone, Debug, PartialEq)]
pub struct PolicyParams {
    /// CNA: consecutive same-group handovers before the secondary queue is
    /// flushed (the Linux patch uses a probabilistic ~2^16; a small count
    /// keeps the simulated remote waiters from starving in short runs).
    pub cna_threshold: u32,
    /// Cohort/FSL: consecutive admissions inside one group before the lock
    /// goes to the next group.
    pub cohort_threshold: u32,
    /// Cohort/FSL group size: `None` uses the matrix-derived groups
    /// ([`groups::cluster`]); `Some(k)` uses arcs of `k` CPUs along the
    /// route ([`groups::along_route`]).
    pub cohort_group_size: Option<usize>,
    /// TTAS race jitter: a waiter sees the release `L * (1 + jitter * u)`
    /// after it; 0 makes the nearest waiter always win, large values make
    /// the race a uniform draw.
    pub ttas_jitter: f64,
}

impl Default for PolicyParams {
    fn default() -> Self {
        PolicyParams {
            cna_threshold: 64,
            cohort_threshold: 64,
            cohort_group_size: None,
            ttas_jitter: 1.0,
        }
    }
}

impl PolicyParams {
    /// Checks ranges (thresholds >= 1, group size >= 1, jitter finite >= 0).
    pub fn validate(&self) -> Result<(), SimError> {
        if self.cna_threshold == 0 || self.cohort_threshold == 0 {
            return Err(SimError::BadConfig("thresholds must be at least 1".into()));
        }
        if self.cohort_group_size == Some(0) {
            return Err(SimError::BadConfig(
                "the cohort group size must be at least 1".into(),
            ));
        }
        if !self.ttas_jitter.is_finite() || self.ttas_jitter < 0.0 {
            return Err(SimError::BadConfig(
                "the TTAS jitter must be a finite number >= 0".into(),
            ));
        }
        Ok(())
    }
}

/// Where the simulated threads run and what the policies may know about
/// the machine: thread `t` runs on CPU `cpus[t]` (distinct CPUs).
#[derive(Clone, Debug)]
pub struct Placement<'a> {
    /// Handover costs over all CPUs of the matrix.
    pub costs: &'a Costs,
    /// The route: a permutation of `0..costs.n()`.
    pub route: &'a [usize],
    /// `cpus[t]`: the CPU of thread `t`, distinct, each `< costs.n()`.
    pub cpus: &'a [usize],
    /// Group id of every CPU (for CNA and, by default, cohort).
    pub groups: &'a [usize],
}

impl Placement<'_> {
    /// Checks the route, the CPUs (distinct, in range, at least one) and
    /// the group vector's length.
    pub fn validate(&self) -> Result<(), SimError> {
        let n = self.costs.n();
        self.costs.check_route(self.route)?;
        if self.cpus.is_empty() {
            return Err(SimError::BadConfig("at least one thread is needed".into()));
        }
        let mut seen = vec![false; n];
        for &c in self.cpus {
            if c >= n {
                return Err(SimError::BadConfig(format!(
                    "CPU {c} is outside the {n}-CPU matrix"
                )));
            }
            if std::mem::replace(&mut seen[c], true) {
                return Err(SimError::BadConfig(format!(
                    "two threads on CPU {c}: threads need distinct CPUs"
                )));
            }
        }
        if self.groups.len() != n {
            return Err(SimError::BadConfig(format!(
                "{} group ids for {n} CPUs",
                self.groups.len()
            )));
        }
        Ok(())
    }
}

/// An admission policy: the order in which waiting threads get the lock.
///
/// The engine calls [`enqueue`](Policy::enqueue) only while the lock is
/// held, [`acquired_free`](Policy::acquired_free) only when no thread waits,
/// and [`next`](Policy::next) at each release; `next` must return one of
/// the threads enqueued and not yet returned (and forget it), or `None`
/// exactly when there is none. The engine checks this.
pub trait Policy {
    /// Which policy this is.
    fn kind(&self) -> PolicyKind;
    /// Thread `t` starts waiting for the (held) lock.
    fn enqueue(&mut self, t: usize);
    /// Thread `t` took the free lock without waiting.
    fn acquired_free(&mut self, t: usize) {
        let _ = t;
    }
    /// Thread `releaser` releases the lock: the next owner among the
    /// waiting threads, removed from the waiters, or `None` if none waits.
    fn next(&mut self, releaser: usize, rng: &mut SplitMix64) -> Option<usize>;
    /// How many threads are waiting.
    fn waiting(&self) -> usize;
}

/// Builds the policy `kind` for `place` (validated first).
pub fn build(
    kind: PolicyKind,
    place: &Placement<'_>,
    params: &PolicyParams,
) -> Result<Box<dyn Policy>, SimError> {
    place.validate()?;
    params.validate()?;
    let thread_groups = |g: &[usize]| place.cpus.iter().map(|&c| g[c]).collect::<Vec<_>>();
    Ok(match kind {
        PolicyKind::Fifo => Box::new(Fifo::default()),
        PolicyKind::Ttas => Box::new(Ttas {
            cpus: place.cpus.to_vec(),
            costs: place.costs.clone(),
            jitter: params.ttas_jitter,
            waiters: Vec::new(),
        }),
        PolicyKind::Cna => Box::new(Cna::new(thread_groups(place.groups), params.cna_threshold)),
        PolicyKind::Cohort => {
            let g = match params.cohort_group_size {
                Some(k) => groups::along_route(place.route, k),
                None => place.groups.to_vec(),
            };
            Box::new(Cohort::new(thread_groups(&g), params.cohort_threshold))
        }
        PolicyKind::Ron => Box::new(Ron::new(kind, place.route, place.cpus)),
        PolicyKind::RonIdentity => {
            let identity: Vec<usize> = (0..place.costs.n()).collect();
            Box::new(Ron::new(kind, &identity, place.cpus))
        }
    })
}

/// FIFO: the longest waiter is admitted next.
#[derive(Clone, Debug, Default)]
pub struct Fifo {
    queue: VecDeque<usize>,
}

impl Policy for Fifo {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Fifo
    }
    fn enqueue(&mut self, t: usize) {
        self.queue.push_back(t);
    }
    fn next(&mut self, _releaser: usize, _rng: &mut SplitMix64) -> Option<usize> {
        self.queue.pop_front()
    }
    fn waiting(&self) -> usize {
        self.queue.len()
    }
}

/// TTAS: every waiter spins on the lock word; the release reaches waiter
/// `w` after `L[releaser][w] * (1 + jitter * u)` and the first to see it
/// wins the CAS. Nearer waiters win more often; nobody is guaranteed to win.
#[derive(Clone, Debug)]
pub struct Ttas {
    cpus: Vec<usize>,
    costs: Costs,
    jitter: f64,
    waiters: Vec<usize>,
}

impl Policy for Ttas {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Ttas
    }
    fn enqueue(&mut self, t: usize) {
        self.waiters.push(t);
    }
    fn next(&mut self, releaser: usize, rng: &mut SplitMix64) -> Option<usize> {
        let from = self.cpus[releaser];
        let mut best: Option<(f64, usize)> = None;
        for (k, &w) in self.waiters.iter().enumerate() {
            let seen = self.costs.get(from, self.cpus[w]) * (1.0 + self.jitter * rng.next_f64());
            if best.is_none_or(|(b, _)| seen < b) {
                best = Some((seen, k));
            }
        }
        best.map(|(_, k)| self.waiters.swap_remove(k))
    }
    fn waiting(&self) -> usize {
        self.waiters.len()
    }
}

/// CNA (compact NUMA-aware lock): a main FIFO queue and a secondary queue.
/// At a release the first main-queue waiter of the releaser's group is
/// admitted and the waiters ahead of it move to the secondary queue; when
/// the main queue has no such waiter, or after `threshold` consecutive
/// same-group handovers, the secondary queue is put back in front.
#[derive(Clone, Debug)]
pub struct Cna {
    group: Vec<usize>,
    threshold: u32,
    main: VecDeque<usize>,
    secondary: VecDeque<usize>,
    streak: u32,
}

impl Cna {
    /// A CNA policy for threads in groups `group[t]`.
    pub fn new(group: Vec<usize>, threshold: u32) -> Self {
        Cna {
            group,
            threshold: threshold.max(1),
            main: VecDeque::new(),
            secondary: VecDeque::new(),
            streak: 0,
        }
    }

    fn flush_secondary(&mut self) {
        while let Some(t) = self.secondary.pop_back() {
            self.main.push_front(t);
        }
    }
}

impl Policy for Cna {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Cna
    }
    fn enqueue(&mut self, t: usize) {
        self.main.push_back(t);
    }
    fn acquired_free(&mut self, _t: usize) {
        self.streak = 0;
    }
    fn next(&mut self, releaser: usize, _rng: &mut SplitMix64) -> Option<usize> {
        if self.streak >= self.threshold {
            self.streak = 0;
            self.flush_secondary();
            return self.main.pop_front();
        }
        let g = self.group[releaser];
        match self.main.iter().position(|&w| self.group[w] == g) {
            Some(k) => {
                for _ in 0..k {
                    let skipped = self.main.pop_front()?;
                    self.secondary.push_back(skipped);
                }
                self.streak += 1;
                self.main.pop_front()
            }
            None => {
                self.streak = 0;
                self.flush_secondary();
                self.main.pop_front()
            }
        }
    }
    fn waiting(&self) -> usize {
        self.main.len() + self.secondary.len()
    }
}

/// Cohort / FSL: a FIFO queue per group and a FIFO queue of groups. The
/// holder's group keeps the lock (FIFO inside the group) for up to
/// `threshold` consecutive admissions; then, or when the group has no
/// waiter left, the next group in line gets it.
#[derive(Clone, Debug)]
pub struct Cohort {
    group: Vec<usize>,
    threshold: u32,
    local: Vec<VecDeque<usize>>,
    global: VecDeque<usize>,
    in_global: Vec<bool>,
    owner_group: Option<usize>,
    batch: u32,
}

impl Cohort {
    /// A cohort policy for threads in groups `group[t]`.
    pub fn new(group: Vec<usize>, threshold: u32) -> Self {
        let ng = group.iter().max().map_or(0, |m| m + 1);
        Cohort {
            group,
            threshold: threshold.max(1),
            local: vec![VecDeque::new(); ng],
            global: VecDeque::new(),
            in_global: vec![false; ng],
            owner_group: None,
            batch: 0,
        }
    }
}

impl Policy for Cohort {
    fn kind(&self) -> PolicyKind {
        PolicyKind::Cohort
    }
    fn enqueue(&mut self, t: usize) {
        let g = self.group[t];
        self.local[g].push_back(t);
        if self.owner_group != Some(g) && !self.in_global[g] {
            self.in_global[g] = true;
            self.global.push_back(g);
        }
    }
    fn acquired_free(&mut self, t: usize) {
        self.owner_group = Some(self.group[t]);
        self.batch = 1;
    }
    fn next(&mut self, releaser: usize, _rng: &mut SplitMix64) -> Option<usize> {
        let g = self.group[releaser];
        if !self.local[g].is_empty() {
            if self.batch < self.threshold {
                self.batch += 1;
                return self.local[g].pop_front();
            }
            if !self.in_global[g] {
                self.in_global[g] = true;
                self.global.push_back(g);
            }
        }
        let Some(g2) = self.global.pop_front() else {
            self.owner_group = None;
            return None;
        };
        self.in_global[g2] = false;
        self.owner_group = Some(g2);
        self.batch = 1;
        self.local[g2].pop_front()
    }
    fn waiting(&self) -> usize {
        self.local.iter().map(VecDeque::len).sum()
    }
}

/// RON: the next waiting CPU along a route (circular, one way, starting
/// after the releaser's CPU). With the identity route this is
/// `ron-identity`.
#[derive(Clone, Debug)]
pub struct Ron {
    kind: PolicyKind,
    /// Route position of each thread's CPU.
    pos: Vec<usize>,
    /// Waiting threads by route position (positions are distinct because
    /// CPUs are).
    waiting: BTreeMap<usize, usize>,
}

impl Ron {
    /// A RON policy along `route` (a permutation of all CPUs) for threads on
    /// `cpus`; `kind` is only the label it reports.
    pub fn new(kind: PolicyKind, route: &[usize], cpus: &[usize]) -> Self {
        let mut pos_of_cpu = vec![0; route.len()];
        for (p, &c) in route.iter().enumerate() {
            pos_of_cpu[c] = p;
        }
        Ron {
            kind,
            pos: cpus.iter().map(|&c| pos_of_cpu[c]).collect(),
            waiting: BTreeMap::new(),
        }
    }
}

impl Policy for Ron {
    fn kind(&self) -> PolicyKind {
        self.kind
    }
    fn enqueue(&mut self, t: usize) {
        self.waiting.insert(self.pos[t], t);
    }
    fn next(&mut self, releaser: usize, _rng: &mut SplitMix64) -> Option<usize> {
        let p = self.pos[releaser];
        let key = self
            .waiting
            .range(p + 1..)
            .next()
            .or_else(|| self.waiting.iter().next())
            .map(|(&k, _)| k)?;
        self.waiting.remove(&key)
    }
    fn waiting(&self) -> usize {
        self.waiting.len()
    }
}
