//! [`Costs`]: the simulator's plain view of a latency matrix.

use super::SimError;

/// The largest matrix the simulator accepts (CPUs). Recorded matrices go up
/// to 384; the limit only keeps a mistyped file from allocating gigabytes.
pub const MAX_CPUS: usize = 4096;

/// An `n x n` handover cost matrix in nanoseconds, row-major:
/// `get(from, to)` is what it costs to move the lock (and the data it
/// guards) from CPU `from` to CPU `to`. Asymmetric matrices are allowed;
/// the diagonal is whatever the source says (recorded ones hold 0).
///
/// Independent of `ron_topo` on purpose: build it from rows, from a flat
/// vector, or from a `ron_topo::LatencyMatrix` with `From`.
///
/// ```
/// use ron_bench::sim::Costs;
/// let c = Costs::from_rows(&[vec![0.0, 2.0], vec![3.0, 0.0]]).unwrap();
/// assert_eq!(c.n(), 2);
/// assert_eq!(c.get(1, 0), 3.0);
/// assert_eq!(c.tour_cost(&[0, 1]), 5.0);
/// ```
#[derive(Clone, Debug, PartialEq)]
pub struct Costs {
    n: usize,
    data: Vec<f64>,
}

impl Costs {
    /// Builds from a row-major vector of `n * n` values, validating that
    /// `n` is in `1..=MAX_CPUS` and that every value is finite and `>= 0`.
    pub fn new(n: usize, data: Vec<f64>) -> Result<Self, SimError> {
        if n == 0 {
            return Err(SimError::BadMatrix("the matrix is empty".into()));
        }
        if n > MAX_CPUS {
            return Err(SimError::BadMatrix(format!(
                "{n} CPUs is more than the {MAX_CPUS} the simulator accepts"
            )));
        }
        if data.len() != n * n {
            return Err(SimError::BadMatrix(format!(
                "{} values do not make a {n} x {n} matrix",
                data.len()
            )));
        }
        if let Some(k) = data.iter().position(|v| !v.is_finite() || *v < 0.0) {
            return Err(SimError::BadMatrix(format!(
                "entry ({}, {}) = {} is not a finite non-negative latency",
                k / n,
                k % n,
                data[k]
            )));
        }
        Ok(Costs { n, data })
    }

    /// Builds from rows (`rows[from][to]`); every row must have `rows.len()`
    /// entries.
    pub fn from_rows(rows: &[Vec<f64>]) -> Result<Self, SimError> {
        let n = rows.len();
        if let Some((i, r)) = rows.iter().enumerate().find(|(_, r)| r.len() != n) {
            return Err(SimError::BadMatrix(format!(
                "row {i} has {} values, expected {n} (the matrix must be square)",
                r.len()
            )));
        }
        Costs::new(n, rows.iter().flatten().copied().collect())
    }

    /// Builds from a function of `(from, to)`; handy for synthetic
    /// topologies in tests and examples.
    pub fn from_fn(n: usize, f: impl Fn(usize, usize) -> f64) -> Result<Self, SimError> {
        let mut data = Vec::with_capacity(n.saturating_mul(n).min(MAX_CPUS * MAX_CPUS));
        for i in 0..n {
            for j in 0..n {
                data.push(f(i, j));
            }
        }
        Costs::new(n, data)
    }

    /// Number of CPUs.
    pub fn n(&self) -> usize {
        self.n
    }

    /// Cost of a handover from CPU `from` to CPU `to` (ns). Panics when an
    /// index is `>= n()`, like slice indexing.
    #[inline]
    pub fn get(&self, from: usize, to: usize) -> f64 {
        assert!(from < self.n && to < self.n, "CPU index out of range");
        self.data[from * self.n + to]
    }

    /// The mean off-diagonal cost: what a FIFO lock pays per handover on
    /// average when successive owners are unrelated. 0 for `n == 1`.
    pub fn mean_off_diagonal(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let mut sum = 0.0;
        for i in 0..self.n {
            for j in 0..self.n {
                if i != j {
                    sum += self.get(i, j);
                }
            }
        }
        sum / (self.n * (self.n - 1)) as f64
    }

    /// The median off-diagonal cost, taking the larger of the two directions
    /// of each pair (the grouping rule's yardstick). 0 for `n == 1`.
    pub fn median_pair(&self) -> f64 {
        let mut v = Vec::with_capacity(self.n * (self.n.saturating_sub(1)) / 2);
        for i in 0..self.n {
            for j in i + 1..self.n {
                v.push(self.get(i, j).max(self.get(j, i)));
            }
        }
        if v.is_empty() {
            return 0.0;
        }
        v.sort_by(f64::total_cmp);
        let m = v.len() / 2;
        if v.len() % 2 == 1 {
            v[m]
        } else {
            (v[m - 1] + v[m]) / 2.0
        }
    }

    /// Cost of visiting `order` as an open path: the sum of
    /// `get(order[k], order[k + 1])`. Indices must be `< n()`.
    pub fn path_cost(&self, order: &[usize]) -> f64 {
        order.windows(2).map(|w| self.get(w[0], w[1])).sum()
    }

    /// Cost of `order` as a closed tour (the path plus the way back from the
    /// last CPU to the first): what one lap of a route costs.
    pub fn tour_cost(&self, order: &[usize]) -> f64 {
        match (order.first(), order.last()) {
            (Some(&a), Some(&z)) if order.len() > 1 => self.path_cost(order) + self.get(z, a),
            _ => 0.0,
        }
    }

    /// The costs restricted to `cpus` (in that order): entry `(a, b)` of the
    /// result is `get(cpus[a], cpus[b])`. Indices must be `< n()`.
    pub fn submatrix(&self, cpus: &[usize]) -> Result<Costs, SimError> {
        if let Some(c) = cpus.iter().find(|&&c| c >= self.n) {
            return Err(SimError::BadConfig(format!(
                "CPU {c} is outside the {}-CPU matrix",
                self.n
            )));
        }
        Costs::from_fn(cpus.len(), |a, b| self.get(cpus[a], cpus[b]))
    }

    /// Checks that `route` is a permutation of `0..n()`.
    pub fn check_route(&self, route: &[usize]) -> Result<(), SimError> {
        if route.len() != self.n {
            return Err(SimError::BadRoute(format!(
                "the route has {} entries for {} CPUs",
                route.len(),
                self.n
            )));
        }
        let mut seen = vec![false; self.n];
        for &c in route {
            if c >= self.n {
                return Err(SimError::BadRoute(format!(
                    "CPU {c} is outside the {}-CPU matrix",
                    self.n
                )));
            }
            if std::mem::replace(&mut seen[c], true) {
                return Err(SimError::BadRoute(format!("CPU {c} appears twice")));
            }
        }
        Ok(())
    }
}

impl From<&ron_topo::LatencyMatrix> for Costs {
    /// The matrix's entries by index (`ron_topo` has validated them: square,
    /// finite, non-negative). CPU ids are not carried: the simulator works
    /// on indices `0..n`, as the route does.
    fn from(m: &ron_topo::LatencyMatrix) -> Self {
        Costs {
            n: m.n(),
            data: m.as_slice().to_vec(),
        }
    }
}
