//! Exact Held-Karp dynamic programme for small instances.
//!
//! `dp[S][j]` is the cheapest path that starts at index 0, visits exactly the
//! set `S` of the other indices and ends at `j in S`;
//! `dp[S][j] = min over i in S \ {j} of dp[S \ {j}][i] + L[i][j]`, and the
//! tour cost is `min over j of dp[all][j] + L[j][0]`. Time `O(2^n n^2)`,
//! memory `O(2^n n)`: at [`HELD_KARP_MAX_N`] = 16 that is ~4 MiB and a few
//! milliseconds in release builds. It is correct for asymmetric matrices
//! and is the oracle the tests check the heuristic against.

use super::Route;
use crate::matrix::LatencyMatrix;

/// Largest instance [`held_karp`] accepts.
pub const HELD_KARP_MAX_N: usize = 16;

/// The optimal closed tour of `m`, starting at index 0, or `None` when
/// `m.n() > HELD_KARP_MAX_N`.
///
/// ```
/// use ron_topo::{LatencyMatrix, tsp::held_karp};
/// let m = LatencyMatrix::from_rows(vec![
///     vec![0.0, 1.0, 9.0],
///     vec![9.0, 0.0, 1.0],
///     vec![1.0, 9.0, 0.0],
/// ]).unwrap();
/// let r = held_karp(&m).unwrap();
/// assert_eq!(r.order, vec![0, 1, 2]);
/// assert_eq!(r.cost, 3.0);
/// ```
pub fn held_karp(m: &LatencyMatrix) -> Option<Route> {
    let n = m.n();
    if n > HELD_KARP_MAX_N {
        return None;
    }
    if n <= 2 {
        let order: Vec<usize> = (0..n).collect();
        let cost = m.tour_cost(&order);
        return Some(Route { order, cost });
    }
    let d = m.as_slice();
    let k = n - 1; // nodes 1..n are bits 0..k
    let states = 1usize << k;
    let mut dp = vec![f64::INFINITY; states * k];
    let mut parent = vec![u8::MAX; states * k];
    for j in 0..k {
        dp[(1 << j) * k + j] = d[j + 1];
    }
    for mask in 1..states {
        for j in 0..k {
            if mask & (1 << j) == 0 {
                continue;
            }
            let cur = dp[mask * k + j];
            if !cur.is_finite() {
                continue;
            }
            let row = &d[(j + 1) * n..(j + 2) * n];
            for (nxt, &w) in row.iter().enumerate().skip(1) {
                let bit = 1 << (nxt - 1);
                if mask & bit != 0 {
                    continue;
                }
                let idx = (mask | bit) * k + (nxt - 1);
                let cand = cur + w;
                if cand < dp[idx] {
                    dp[idx] = cand;
                    parent[idx] = j as u8;
                }
            }
        }
    }
    let full = states - 1;
    let mut best = f64::INFINITY;
    let mut last = 0;
    for j in 0..k {
        let c = dp[full * k + j] + d[(j + 1) * n];
        if c < best {
            best = c;
            last = j;
        }
    }
    let mut order = Vec::with_capacity(n);
    let mut mask = full;
    let mut j = last;
    loop {
        order.push(j + 1);
        let p = parent[mask * k + j];
        mask &= !(1 << j);
        if p == u8::MAX || mask == 0 {
            break;
        }
        j = p as usize;
    }
    order.push(0);
    order.reverse();
    let cost = m.tour_cost(&order);
    Some(Route { order, cost })
}
