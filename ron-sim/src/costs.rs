//! The simulator's cost matrix: a [`ron_topo::LatencyMatrix`] read by index
//! (`get(from, to)` is what it costs to move the lock and the data it
//! guards from CPU `from` to CPU `to`), plus the few measures only the
//! simulator needs ([`CostsExt`]).

use crate::SimError;

/// The simulator's cost matrix: `ron_topo`'s validated latency matrix
/// (square, finite, non-negative, at most [`ron_topo::matrix::MAX_N`] wide). CPU ids are
/// not used: the simulator works on indices `0..n`, as routes do.
///
/// ```
/// use ron_sim::{Costs, CostsExt};
/// let c = Costs::from_rows(vec![vec![0.0, 2.0], vec![3.0, 0.0]]).unwrap();
/// assert_eq!(c.n(), 2);
/// assert_eq!(c.get(1, 0), 3.0);
/// assert_eq!(c.tour_cost(&[0, 1]), 5.0);
/// assert_eq!(c.path_cost(&[0, 1]), 2.0);
/// ```
pub use ron_topo::LatencyMatrix as Costs;

/// What the simulator asks of a cost matrix beyond its own methods.
pub trait CostsExt {
    /// The median off-diagonal cost, taking the larger of the two
    /// directions of each pair (the grouping rule's yardstick). 0 for `n == 1`.
    fn median_pair(&self) -> f64;

    /// Cost of visiting `order` as an open path: the sum of
    /// `get(order[k], order[k + 1])`. Indices must be `< n()`.
    fn path_cost(&self, order: &[usize]) -> f64;

    /// Checks that `route` is a permutation of `0..n()`, naming the first
    /// entry that is not.
    fn check_route(&self, route: &[usize]) -> Result<(), SimError>;
}

impl CostsExt for Costs {
    fn median_pair(&self) -> f64 {
        let n = self.n();
        let mut v = Vec::with_capacity(n * n.saturating_sub(1) / 2);
        for i in 0..n {
            for j in i + 1..n {
                v.push(self.get(i, j).max(self.get(j, i)));
            }
        }
        ron_stats::median(&mut v)
    }

    fn path_cost(&self, order: &[usize]) -> f64 {
        order.windows(2).map(|w| self.get(w[0], w[1])).sum()
    }

    fn check_route(&self, route: &[usize]) -> Result<(), SimError> {
        let n = self.n();
        if route.len() != n {
            return Err(SimError::BadRoute(format!(
                "the route has {} entries for {n} CPUs",
                route.len()
            )));
        }
        let mut seen = vec![false; n];
        for &c in route {
            if c >= n {
                return Err(SimError::BadRoute(format!(
                    "CPU {c} is outside the {n}-CPU matrix"
                )));
            }
            if std::mem::replace(&mut seen[c], true) {
                return Err(SimError::BadRoute(format!("CPU {c} appears twice")));
            }
        }
        Ok(())
    }
}
