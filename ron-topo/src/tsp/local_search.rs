//! Local search valid for asymmetric costs, and the iterated local search
//! (ILS) around it.
//!
//! The tour is an array `t` with its inverse `pos`. Three move families are
//! searched from every "active" node `a` (a work queue with don't-look bits;
//! a node becomes active again when one of its tour edges changes):
//!
//! - **Or-opt**: move a segment of 1-3 nodes that starts or ends at `a` to
//!   another edge, either in its orientation or reversed; the reversed form
//!   counts the segment's reversed inner edges, so it is exact for
//!   asymmetric matrices.
//! - **Or-3opt (segment exchange)**: remove `(a,a')`, `(b,b')`, `(c,c')` in
//!   tour order and reconnect `a -> b'..c -> a'..b -> c'`. Both moved pieces
//!   keep their orientation, so it is exact for asymmetric costs and
//!   generalises Or-opt to segments of any length. Candidates: `b'` among the
//!   nearest successors of `a`, `c` among the nearest predecessors of `a'`,
//!   and the partial gain `L[a][a'] - L[a][b']` must be positive.
//! - **2-opt**: replace `(a,a')`, `(c,c')` by `(a,c)`, `(a',c')` and reverse
//!   `a'..c`. The reversed path's cost change is read from prefix sums of the
//!   forward and backward edge costs, so the move is exact for asymmetric
//!   matrices too (where it rarely helps; for symmetric ones the term is 0).
//!
//! Candidate lists hold the `K` nearest successors and predecessors of each
//! node. Moves are first-improvement and are applied in `O(n)` (rebuilding
//! the array), which is cheap for the at most 4096, usually <= 256, CPUs.
//!
//! ILS: from the local optimum, apply a random kick, re-optimise only
//! around the touched nodes, and keep the result if it is no worse than the
//! current tour (equal cost is accepted to drift across plateaus, common in
//! latency matrices) or within 0.15 mean edges (`ACCEPT_SLACK`) of the best. The kick is a
//! local *double bridge* generalised to three short segments: `a S1 S2 S3`
//! becomes `a S3 S2 S1` (orientation kept). The plain double bridge
//! `A B C D -> A C B D` is itself one Or-3opt move, so the local search
//! would often undo it at once; the three-segment form changes four edges.
//! The best tour seen is returned. Randomness comes from a
//! seeded PCG, so a run with an iteration limit is fully deterministic.

use std::collections::VecDeque;
use std::time::Instant;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;

/// Length of the longest Or-opt segment.
const OR_OPT_MAX: usize = 3;
/// Acceptance threshold of the ILS, as a fraction of the best tour's mean
/// edge: a kicked tour is kept when it is no worse than the current one, or
/// within this slack of the best tour (a small drift that lets the search
/// leave deep local optima; ft70 needed it). The best tour is kept apart.
/// Tuned on the TSPLIB and recorded CPU matrices: 0 leaves ft70 0.09 %
/// above optimum on most seeds, 0.15 finds the optimum or within 0.01 %.
const ACCEPT_SLACK: f64 = 0.15;
/// Longest segment moved by a kick.
const KICK_MAX_SEGMENT: usize = 30;

/// Local search state over a row-major `n x n` cost array.
pub(crate) struct Search<'a> {
    d: &'a [f64],
    n: usize,
    t: Vec<usize>,
    pos: Vec<usize>,
    out_nbr: Vec<Vec<usize>>,
    in_nbr: Vec<Vec<usize>>,
    /// Prefix sums over the doubled tour: `fwd[k]` = cost of `t2[0..=k]`
    /// walked forward, `bwd[k]` walked backward (empty when symmetric).
    fwd: Vec<f64>,
    bwd: Vec<f64>,
    symmetric: bool,
    use_two_opt: bool,
    cost: f64,
    queue: VecDeque<usize>,
    queued: Vec<bool>,
    eps: f64,
    scratch: Vec<usize>,
}

impl<'a> Search<'a> {
    /// Sets up the search on `d` (row-major `n x n`) from tour `start`.
    pub(crate) fn new(
        d: &'a [f64],
        n: usize,
        k: usize,
        symmetric: bool,
        two_opt: bool,
        start: &[usize],
    ) -> Self {
        let k = k.min(n.saturating_sub(1));
        let mut out_nbr = Vec::with_capacity(n);
        let mut in_nbr = Vec::with_capacity(n);
        let mut idx: Vec<usize> = Vec::with_capacity(n);
        for a in 0..n {
            idx.clear();
            idx.extend((0..n).filter(|&b| b != a));
            idx.sort_by(|&x, &y| d[a * n + x].total_cmp(&d[a * n + y]).then(x.cmp(&y)));
            out_nbr.push(idx[..k].to_vec());
            idx.sort_by(|&x, &y| d[x * n + a].total_cmp(&d[y * n + a]).then(x.cmp(&y)));
            in_nbr.push(idx[..k].to_vec());
        }
        let mean = if n > 1 {
            d.iter().sum::<f64>() / (n * (n - 1)) as f64
        } else {
            0.0
        };
        let mut s = Search {
            d,
            n,
            t: start.to_vec(),
            pos: vec![0; n],
            out_nbr,
            in_nbr,
            fwd: Vec::new(),
            bwd: Vec::new(),
            symmetric,
            use_two_opt: two_opt,
            cost: 0.0,
            queue: VecDeque::with_capacity(n),
            queued: vec![false; n],
            eps: 1e-9 * mean.max(1.0),
            scratch: Vec::with_capacity(n),
        };
        s.refresh();
        s
    }

    #[inline]
    fn w(&self, a: usize, b: usize) -> f64 {
        self.d[a * self.n + b]
    }

    #[inline]
    fn succ(&self, a: usize) -> usize {
        let p = self.pos[a] + 1;
        self.t[if p == self.n { 0 } else { p }]
    }

    #[inline]
    fn pred(&self, a: usize) -> usize {
        let p = self.pos[a];
        self.t[if p == 0 { self.n - 1 } else { p - 1 }]
    }

    /// Offset of `x` after `a` along the tour (0 for `a` itself).
    #[inline]
    fn off(&self, a: usize, x: usize) -> usize {
        (self.pos[x] + self.n - self.pos[a]) % self.n
    }

    /// Recomputes `pos`, the prefix sums and the cost after `t` changed.
    fn refresh(&mut self) {
        let n = self.n;
        for (i, &c) in self.t.iter().enumerate() {
            self.pos[c] = i;
        }
        let mut cost = 0.0;
        for i in 0..n {
            cost += self.w(self.t[i], self.t[(i + 1) % n]);
        }
        self.cost = cost;
        if self.use_two_opt && !self.symmetric {
            self.fwd.clear();
            self.bwd.clear();
            self.fwd.push(0.0);
            self.bwd.push(0.0);
            for k in 0..2 * n {
                let a = self.t[k % n];
                let b = self.t[(k + 1) % n];
                let f = self.fwd[k] + self.w(a, b);
                let r = self.bwd[k] + self.w(b, a);
                self.fwd.push(f);
                self.bwd.push(r);
            }
        }
    }

    pub(crate) fn cost(&self) -> f64 {
        self.cost
    }

    pub(crate) fn tour(&self) -> &[usize] {
        &self.t
    }

    /// Replaces the tour (e.g. to revert a rejected kick).
    pub(crate) fn set_tour(&mut self, t: &[usize]) {
        self.t.clear();
        self.t.extend_from_slice(t);
        self.refresh();
    }

    fn push(&mut self, a: usize) {
        if !self.queued[a] {
            self.queued[a] = true;
            self.queue.push_back(a);
        }
    }

    fn push_with_neighbours(&mut self, a: usize) {
        let p = self.pred(a);
        let s = self.succ(a);
        self.push(p);
        self.push(a);
        self.push(s);
    }

    /// Marks every node active.
    pub(crate) fn activate_all(&mut self) {
        for i in 0..self.n {
            let c = self.t[i];
            self.push(c);
        }
    }

    /// Runs local search until no active node has an improving move.
    pub(crate) fn optimize(&mut self) {
        if self.n < 5 {
            self.queue.clear();
            self.queued.iter_mut().for_each(|q| *q = false);
            self.brute_small();
            return;
        }
        while let Some(a) = self.queue.pop_front() {
            self.queued[a] = false;
            let improved = self.try_or_opt(a)
                || self.try_or3opt(a)
                || (self.use_two_opt && self.try_two_opt(a));
            if improved {
                self.push(a);
            }
        }
    }

    /// Exhaustive search over tours for `n < 5` (at most 24 orders).
    fn brute_small(&mut self) {
        let n = self.n;
        if n <= 2 {
            return;
        }
        let mut best = self.t.clone();
        let mut best_cost = self.cost;
        let mut perm: Vec<usize> = self.t.clone();
        // Fix perm[0] and permute the rest (Heap's algorithm, at most 3! orders).
        let rest = n - 1;
        let mut c = vec![0usize; rest];
        let mut i = 0;
        while i < rest {
            if c[i] < i {
                if i % 2 == 0 {
                    perm.swap(1, 1 + i);
                } else {
                    perm.swap(1 + c[i], 1 + i);
                }
                let cost: f64 = (0..n).map(|k| self.w(perm[k], perm[(k + 1) % n])).sum();
                if cost < best_cost - self.eps {
                    best_cost = cost;
                    best.clone_from(&perm);
                }
                c[i] += 1;
                i = 0;
            } else {
                c[i] = 0;
                i += 1;
            }
        }
        self.set_tour(&best);
    }

    /// Or-opt: segments of 1..=3 nodes starting or ending at `a`.
    fn try_or_opt(&mut self, a: usize) -> bool {
        let n = self.n;
        for len in 1..=OR_OPT_MAX.min(n.saturating_sub(3)) {
            for anchor_end in [false, true] {
                if len == 1 && anchor_end {
                    continue;
                }
                // Segment s0..se (forward along the tour).
                let s0 = if anchor_end {
                    self.t[(self.pos[a] + n + 1 - len) % n]
                } else {
                    a
                };
                let se = self.t[(self.pos[s0] + len - 1) % n];
                if self.try_move_segment(s0, se, len) {
                    return true;
                }
            }
        }
        false
    }

    /// Cost of the inner edges of `s0..se` walked backward minus forward.
    fn seg_reversal_delta(&self, s0: usize, len: usize) -> f64 {
        if self.symmetric {
            return 0.0;
        }
        let mut delta = 0.0;
        let mut x = s0;
        for _ in 1..len {
            let y = self.succ(x);
            delta += self.w(y, x) - self.w(x, y);
            x = y;
        }
        delta
    }

    fn try_move_segment(&mut self, s0: usize, se: usize, len: usize) -> bool {
        let p = self.pred(s0);
        let nx = self.succ(se);
        let removed = self.w(p, s0) + self.w(se, nx) - self.w(p, nx);
        let rev = self.seg_reversal_delta(s0, len);
        // Candidate insertion edges (x, succ(x)), x outside the segment.
        let in_seg = |s: &Self, x: usize| s.off(s0, x) < len;
        let mut best: Option<(f64, usize, bool)> = None;
        let consider = |s: &Self, x: usize, best: &mut Option<(f64, usize, bool)>| {
            if in_seg(s, x) || x == p {
                return;
            }
            let y = s.succ(x);
            let fwd = s.w(x, s0) + s.w(se, y) - s.w(x, y) - removed;
            let bwd = s.w(x, se) + s.w(s0, y) - s.w(x, y) - removed + rev;
            for (delta, reversed) in [(fwd, false), (bwd, true)] {
                if delta < -s.eps && best.is_none_or(|(b, _, _)| delta < b) {
                    *best = Some((delta, x, reversed));
                }
            }
        };
        for i in 0..self.in_nbr[s0].len() {
            let x = self.in_nbr[s0][i];
            consider(self, x, &mut best);
            let x2 = self.in_nbr[se][i];
            consider(self, x2, &mut best);
            let y = self.out_nbr[se][i];
            let x3 = self.pred(y);
            consider(self, x3, &mut best);
            let y4 = self.out_nbr[s0][i];
            let x4 = self.pred(y4);
            consider(self, x4, &mut best);
        }
        let Some((_, x, reversed)) = best else {
            return false;
        };
        // Rebuild: walk from nx to p (everything outside the segment),
        // inserting the segment after x.
        let n = self.n;
        let mut seg: Vec<usize> = (0..len).map(|k| self.t[(self.pos[s0] + k) % n]).collect();
        if reversed {
            seg.reverse();
        }
        self.scratch.clear();
        let start = self.pos[nx];
        for k in 0..n - len {
            let c = self.t[(start + k) % n];
            self.scratch.push(c);
            if c == x {
                self.scratch.extend_from_slice(&seg);
            }
        }
        let y = self.succ(x);
        std::mem::swap(&mut self.t, &mut self.scratch);
        self.refresh();
        for c in [p, nx, x, y, s0, se] {
            self.push(c);
        }
        true
    }

    /// Or-3opt segment exchange from `a` (see the module docs).
    fn try_or3opt(&mut self, a: usize) -> bool {
        let n = self.n;
        let a1 = self.succ(a);
        let w_aa1 = self.w(a, a1);
        for i in 0..self.out_nbr[a].len() {
            let b1 = self.out_nbr[a][i];
            let g1 = w_aa1 - self.w(a, b1);
            if g1 <= self.eps {
                break; // sorted: later candidates are no closer
            }
            let j = self.off(a, b1);
            if j < 2 {
                continue;
            }
            let b = self.pred(b1);
            let w_bb1 = self.w(b, b1);
            for q in 0..self.in_nbr[a1].len() {
                let c = self.in_nbr[a1][q];
                let k = self.off(a, c);
                if k < j {
                    continue;
                }
                let c1 = self.succ(c);
                let delta =
                    self.w(a, b1) + self.w(c, a1) + self.w(b, c1) - w_aa1 - w_bb1 - self.w(c, c1);
                if delta < -self.eps {
                    // New tour: a, b1..c, a1..b, c1..pred(a).
                    self.scratch.clear();
                    let pa = self.pos[a];
                    self.scratch.push(a);
                    for m in j..=k {
                        self.scratch.push(self.t[(pa + m) % n]);
                    }
                    for m in 1..j {
                        self.scratch.push(self.t[(pa + m) % n]);
                    }
                    for m in k + 1..n {
                        self.scratch.push(self.t[(pa + m) % n]);
                    }
                    std::mem::swap(&mut self.t, &mut self.scratch);
                    self.refresh();
                    for x in [a, a1, b, b1, c, c1] {
                        self.push(x);
                    }
                    return true;
                }
            }
        }
        false
    }

    /// 2-opt with the reversal cost counted (see the module docs).
    fn try_two_opt(&mut self, a: usize) -> bool {
        let n = self.n;
        let a1 = self.succ(a);
        let w_aa1 = self.w(a, a1);
        for i in 0..self.out_nbr[a].len() {
            let c = self.out_nbr[a][i];
            let g1 = w_aa1 - self.w(a, c);
            if g1 <= self.eps {
                break;
            }
            let l = self.off(a, c);
            if l < 2 || l > n - 2 {
                continue;
            }
            let c1 = self.succ(c);
            let mut delta = self.w(a, c) + self.w(a1, c1) - w_aa1 - self.w(c, c1);
            if !self.symmetric {
                let u = self.pos[a] + 1;
                let v = self.pos[a] + l;
                delta += (self.bwd[v] - self.bwd[u]) - (self.fwd[v] - self.fwd[u]);
            }
            if delta < -self.eps {
                let u = self.pos[a] + 1;
                let (mut lo, mut hi) = (u, u + l - 1);
                while lo < hi {
                    self.t.swap(lo % n, hi % n);
                    lo += 1;
                    hi -= 1;
                }
                self.refresh();
                for x in [a, a1, c, c1] {
                    self.push(x);
                }
                return true;
            }
        }
        false
    }

    /// Random local double bridge: `a B C rest` -> `a C B rest` with short
    /// `B` and `C`; the touched nodes become active.
    pub(crate) fn kick(&mut self, rng: &mut Pcg64Mcg) {
        let n = self.n;
        if n < 8 {
            return;
        }
        // Three short consecutive segments S1 S2 S3 after node t[p] are
        // reversed in order (each keeps its orientation): four edges change,
        // which no single Or-3opt move of the local search can undo.
        let max_len = (n / 4).clamp(1, KICK_MAX_SEGMENT);
        let p = rng.random_range(0..n);
        let l1 = rng.random_range(1..=max_len);
        let l2 = rng.random_range(1..=max_len);
        let l3 = rng.random_range(1..=max_len);
        let (e1, e2, e3) = (l1, l1 + l2, l1 + l2 + l3);
        self.scratch.clear();
        self.scratch.push(self.t[p]);
        for range in [e2 + 1..=e3, e1 + 1..=e2, 1..=e1] {
            for m in range {
                self.scratch.push(self.t[(p + m) % n]);
            }
        }
        for m in e3 + 1..n {
            self.scratch.push(self.t[(p + m) % n]);
        }
        let touched = [0, 1, e1, e1 + 1, e2, e2 + 1, e3, e3 + 1].map(|m| self.t[(p + m) % n]);
        std::mem::swap(&mut self.t, &mut self.scratch);
        self.refresh();
        for x in touched {
            self.push_with_neighbours(x);
        }
    }
}

/// Iterated local search from `start`; returns the best tour and its cost.
pub(crate) struct IlsParams {
    pub(crate) neighbours: usize,
    pub(crate) deadline: Instant,
    pub(crate) max_iterations: Option<u64>,
    pub(crate) seed: u64,
    pub(crate) two_opt: bool,
}

pub(crate) fn iterated_local_search(
    d: &[f64],
    n: usize,
    symmetric: bool,
    start: &[usize],
    p: &IlsParams,
) -> (Vec<usize>, f64) {
    let mut rng = Pcg64Mcg::seed_from_u64(p.seed);
    let mut s = Search::new(d, n, p.neighbours, symmetric, p.two_opt, start);
    s.activate_all();
    s.optimize();
    let mut best = s.tour().to_vec();
    let mut best_cost = s.cost();
    if n < 8 {
        return (best, best_cost);
    }
    let mut cur = best.clone();
    let mut cur_cost = best_cost;
    let mut iter: u64 = 0;
    loop {
        if p.max_iterations.is_some_and(|m| iter >= m) {
            break;
        }
        // Reading the clock every iteration costs ~20 ns, far below one
        // iteration; checking it keeps the budget tight.
        if Instant::now() >= p.deadline {
            break;
        }
        iter += 1;
        s.kick(&mut rng);
        s.optimize();
        let c = s.cost();
        let thr = best_cost * ACCEPT_SLACK / n as f64;
        if c <= cur_cost + s.eps || c <= best_cost + thr {
            cur.clear();
            cur.extend_from_slice(s.tour());
            cur_cost = c;
            if c < best_cost - s.eps {
                best.clone_from(&cur);
                best_cost = c;
            }
        } else {
            s.set_tour(&cur);
        }
    }
    (best, best_cost)
}
