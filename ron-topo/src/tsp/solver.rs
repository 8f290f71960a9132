//! The solver behind [`solve`] (see the [module docs](super)).

use std::time::{Duration, Instant};

use super::held_karp::{HELD_KARP_MAX_N, held_karp};
use super::{Route, is_permutation, local_search};
use crate::matrix::LatencyMatrix;

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
