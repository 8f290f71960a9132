//! The route solver: a shortest closed tour over a (possibly asymmetric)
//! latency matrix.
//!
//! The cost of a route `r` is `sum of L[r[i]][r[i+1]]` around the cycle,
//! i.e. what a lock pays per lap when it is handed along the route under full
//! contention. `solve`:
//!
//! 1. `n <= exact_up_to` (16 by default): exact `held_karp`.
//! 2. Otherwise a constructive start: the best of nearest-neighbour tours
//!    (from several start nodes) and the caller's initial order (usually the
//!    topology order, see [`crate::Topology::route`]).
//! 3. Iterated local search (`local_search`): Or-opt (segments of 1-3,
//!    both orientations with the reversal cost counted), Or-3opt segment
//!    exchange (orientation-preserving, exact for asymmetric costs) and 2-opt
//!    with the reversal cost counted, on neighbour lists, iterated with local
//!    double-bridge kicks until the time budget or the iteration limit.
//!
//! The result is rotated to start at index 0, so equal tours print equally.
//! With `max_iterations` set (and a time limit that does not bind) the
//! result depends only on the matrix and the seed.
//!
//! [`Route`] and the helpers a calibration file needs are always built; the
//! solver itself (`solve`, `held_karp`, `local_search`) needs the `tools`
//! feature.

#[cfg(feature = "tools")]
mod held_karp;
#[cfg(feature = "tools")]
pub mod local_search;
#[cfg(feature = "tools")]
mod solver;

#[cfg(feature = "tools")]
pub use held_karp::{HELD_KARP_MAX_N, held_karp};
#[cfg(feature = "tools")]
pub use solver::{SolveOptions, nearest_neighbour, solve};

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
/// index order. Pass it as `SolveOptions::initial` (`tools` feature).
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
