//! The route solver: a shortest closed tour over a (possibly asymmetric)
//! latency matrix.
//!
//! The cost of a route `r` is `sum of L[r[i]][r[i+1]]` around the cycle,
//! i.e. what a lock pays per lap when it is handed along the route under full
//! contention. [`solve`]:
//!
//! 1. `n <= exact_up_to` (16 by default): exact [`held_karp`].
//! 2. Otherwise a constructive start: the best of nearest-neighbour tours
//!    (from several start nodes) and the caller's initial order (usually the
//!    topology order, see [`crate::Topology::route`]).
//! 3. Iterated local search ([`local_search`]): Or-opt (segments of 1-3,
//!    both orientations with the reversal cost counted), Or-3opt segment
//!    exchange (orientation-preserving, exact for asymmetric costs) and 2-opt
//!    with the reversal cost counted, on neighbour lists, iterated with local
//!    double-bridge kicks until the time budget or the iteration limit.
//!
//! The result is rotated to start at index 0, so equal tours print equally.
//! With `max_iterations` set (and a time limit that does not bind) the
//! result depends only on the matrix and the seed.

mod held_karp;
pub mod local_search;

use std::time::{Duration, Instant};

pub use held_karp::{HELD_KARP_MAX_N, held_karp};

use crate::matrix::LatencyMatrix;

/// A closed tour over matrix indices and its cost.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Route {
    /// Indices `0..n` in tour order (a permutation).
    pub order: Vec<usize>,
    /// `sum of L[order[i]][order[i+1]]` around the cycle, in ns.
    pub cost: f64,
}

impl Route {
    /// The route as OS CPU ids (through [`LatencyMatrix::cpus`]).
    pub fn cpu_ids(&self, m: &LatencyMatrix) -> Vec<usize> {
        self.order
            .iter()
            .filter_map(|&i| m.cpus().get(i).copied())
            .collect()
    }
}

/// Options of [`solve`].
#[derive(Debug, Clone)]
pub struct SolveOptions {
    /// Wall-clock budget of the whole call (the search stops slightly early
    /// to stay within it; Held-Karp instances ignore it).
    pub time_limit: Duration,
    /// Seed of the kick generator.
    pub seed: u64,
    /// Stop after this many ILS iterations (deterministic runs), if set.
    pub max_iterations: Option<u64>,
    /// A starting tour (indices), e.g. the topology order; ignored unless it
    /// is a permutation of `0..n`.
    pub initial: Option<Vec<usize>>,
    /// Candidate list length (nearest successors / predecessors per node).
    pub neighbours: usize,
    /// Largest `n` solved exactly by Held-Karp (capped at [`HELD_KARP_MAX_N`]).
    pub exact_up_to: usize,
}

impl Default for SolveOptions {
    fn default() -> Self {
        SolveOptions {
            time_limit: Duration::from_secs(1),
            seed: 0x5eed,
            max_iterations: None,
            initial: None,
            neighbours: 12,
            exact_up_to: HELD_KARP_MAX_N,
        }
    }
}

/// Whether `p` is a permutation of `0..n`.
pub fn is_permutation(p: &[usize], n: usize) -> bool {
    if p.len() != n {
        return false;
    }
    let mut seen = vec![false; n];
    for &x in p {
        if x >= n || seen[x] {
            return false;
        }
        seen[x] = true;
    }
    true
}

/// The topology order as a start tour over `m`'s indices: the matrix
/// indices sorted by their CPU's position in `cpu_route` (e.g.
/// [`crate::Topology::route`]); CPUs the route does not name follow in
/// index order. Pass it as [`SolveOptions::initial`].
///
/// ```
/// let m = ron_topo::LatencyMatrix::from_fn(3, |i, j| (i != j) as u8 as f64)
///     .unwrap()
///     .with_cpus(vec![4, 2, 9])
///     .unwrap();
/// assert_eq!(ron_topo::tsp::order_from_cpus(&m, &[9, 4]), vec![2, 0, 1]);
/// ```
pub fn order_from_cpus(m: &LatencyMatrix, cpu_route: &[usize]) -> Vec<usize> {
    let rank: std::collections::HashMap<usize, usize> =
        cpu_route.iter().enumerate().map(|(p, &c)| (c, p)).collect();
    let mut idx: Vec<usize> = (0..m.n()).collect();
    idx.sort_by_key(|&i| {
        let cpu = m.cpus().get(i).copied().unwrap_or(usize::MAX);
        (rank.get(&cpu).copied().unwrap_or(usize::MAX), i)
    });
    idx
}

/// Rotates `order` so it starts at index 0.
fn normalize(mut order: Vec<usize>) -> Vec<usize> {
    if let Some(p) = order.iter().position(|&x| x == 0) {
        order.rotate_left(p);
    }
    order
}

/// Nearest-neighbour tour from `start`: always go to the cheapest unvisited
/// successor (ties to the lowest index).
pub fn nearest_neighbour(m: &LatencyMatrix, start: usize) -> Vec<usize> {
    let n = m.n();
    let d = m.as_slice();
    let mut seen = vec![false; n];
    let mut order = Vec::with_capacity(n);
    let mut cur = start.min(n - 1);
    seen[cur] = true;
    order.push(cur);
    for _ in 1..n {
        let row = &d[cur * n..(cur + 1) * n];
        let mut best = usize::MAX;
        let mut best_w = f64::INFINITY;
        for (j, &w) in row.iter().enumerate() {
            if !seen[j] && (best == usize::MAX || w < best_w) {
                best = j;
                best_w = w;
            }
        }
        seen[best] = true;
        order.push(best);
        cur = best;
    }
    order
}

/// Finds a short closed tour of `m` (see the module docs).
///
/// ```
/// use ron_topo::{LatencyMatrix, tsp::{solve, SolveOptions}};
/// // Two clusters {0, 2} and {1, 3}: the route keeps each together.
/// let m = LatencyMatrix::from_fn(4, |i, j| {
///     if i == j { 0.0 } else if i % 2 == j % 2 { 10.0 } else { 100.0 }
/// }).unwrap();
/// let r = solve(&m, &SolveOptions::default());
/// assert_eq!(r.cost, 220.0);
/// assert_eq!(r.order[0], 0);
/// ```
pub fn solve(m: &LatencyMatrix, opts: &SolveOptions) -> Route {
    let n = m.n();
    if n <= opts.exact_up_to.min(HELD_KARP_MAX_N)
        && let Some(r) = held_karp(m)
    {
        return Route {
            order: normalize(r.order),
            cost: r.cost,
        };
    }
    // The ILS checks the clock once per iteration and a final pass follows,
    // so it aims 2 % (at most 20 ms) early to keep the whole call within
    // `time_limit`.
    let margin = (opts.time_limit / 50).min(Duration::from_millis(20));
    let deadline = Instant::now() + opts.time_limit.saturating_sub(margin);
    // Constructive start.
    let mut best: Vec<usize> = (0..n).collect();
    let mut best_cost = m.tour_cost(&best);
    if let Some(init) = &opts.initial
        && is_permutation(init, n)
    {
        let c = m.tour_cost(init);
        if c < best_cost {
            best.clone_from(init);
            best_cost = c;
        }
    }
    let starts = n.min(16);
    for k in 0..starts {
        let s = k * n / starts;
        let t = nearest_neighbour(m, s);
        let c = m.tour_cost(&t);
        if c < best_cost {
            best = t;
            best_cost = c;
        }
    }
    let params = local_search::IlsParams {
        neighbours: opts.neighbours.max(4),
        deadline,
        max_iterations: opts.max_iterations,
        seed: opts.seed,
        two_opt: true,
    };
    let (order, _) =
        local_search::iterated_local_search(m.as_slice(), n, m.is_symmetric(), &best, &params);
    let order = normalize(order);
    let cost = m.tour_cost(&order);
    Route { order, cost }
}
