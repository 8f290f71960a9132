//! The route solver: for any matrix up to 64 x 64 with finite costs,
//! `solve` returns a permutation starting at index 0 whose reported cost is
//! the true cycle cost and is no worse than the nearest-neighbour tour from
//! index 0 (one of its constructive starts). Up to 8 CPUs the result is
//! also checked against brute force (it is exact there: Held-Karp).
//!
//! Input: byte 0 = size (1..=64), byte 1 = value scale, byte 2 = seed; then
//! two bytes per entry, row-major, extended by a generator seeded from the
//! input when the input is short.
#![no_main]

use std::time::Duration;

use libfuzzer_sys::fuzz_target;
use ron_topo::LatencyMatrix;
use ron_topo::tsp::{SolveOptions, is_permutation, nearest_neighbour, solve};

/// The cycle cost summed here, independently of the crate.
fn cycle_cost(rows: &[Vec<f64>], order: &[usize]) -> f64 {
    let n = order.len();
    (0..n).map(|k| rows[order[k]][order[(k + 1) % n]]).sum()
}

fn tol(x: f64) -> f64 {
    1e-9 * x.abs().max(1.0)
}

/// The optimum by enumerating every tour that starts at 0.
fn brute_force(rows: &[Vec<f64>]) -> f64 {
    fn go(rows: &[Vec<f64>], tour: &mut Vec<usize>, used: &mut [bool], best: &mut f64) {
        let n = rows.len();
        if tour.len() == n {
            *best = best.min(cycle_cost(rows, tour));
            return;
        }
        for c in 1..n {
            if !used[c] {
                used[c] = true;
                tour.push(c);
                go(rows, tour, used, best);
                tour.pop();
                used[c] = false;
            }
        }
    }
    let mut best = f64::INFINITY;
    let mut used = vec![false; rows.len()];
    used[0] = true;
    go(rows, &mut vec![0], &mut used, &mut best);
    best
}

fuzz_target!(|data: &[u8]| {
    if data.len() < 3 {
        return;
    }
    let n = 1 + usize::from(data[0]) % 64;
    // Scales from sub-nanosecond to about 0.65 s per entry: u16 * 1e4
    // stays within ron-topo's bound on a latency
    // (`matrix::MAX_LATENCY_NS`, 1 s) and far from overflow summed over
    // 64 edges.
    let scale = [1.0, 0.001, 0.37, 10.0, 1e4][usize::from(data[1]) % 5];
    let mut state = data.iter().fold(0x9E37_79B9_7F4A_7C15u64, |h, &b| {
        (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01B3)
    });
    let mut bytes = data[3..].iter().copied();
    let mut next = || -> u16 {
        match (bytes.next(), bytes.next()) {
            (Some(a), Some(b)) => u16::from_le_bytes([a, b]),
            _ => {
                state ^= state << 13;
                state ^= state >> 7;
                state ^= state << 17;
                (state >> 48) as u16
            }
        }
    };
    let rows: Vec<Vec<f64>> = (0..n)
        .map(|i| {
            (0..n)
                .map(|j| {
                    if i == j {
                        0.0
                    } else {
                        f64::from(next()) * scale
                    }
                })
                .collect()
        })
        .collect();
    let m = LatencyMatrix::from_rows(rows.clone()).expect("finite non-negative matrix");
    let opts = SolveOptions {
        // The iteration cap binds long before the time limit: deterministic.
        time_limit: Duration::from_secs(5),
        max_iterations: Some(3),
        seed: u64::from(data[2]),
        ..SolveOptions::default()
    };
    let r = solve(&m, &opts);
    assert!(
        is_permutation(&r.order, n),
        "not a permutation: {:?}",
        r.order
    );
    assert_eq!(r.order[0], 0, "not rotated to start at 0");
    let truth = cycle_cost(&rows, &r.order);
    assert!(
        (r.cost - truth).abs() <= tol(truth),
        "reported {} true {truth}",
        r.cost
    );
    let nn = cycle_cost(&rows, &nearest_neighbour(&m, 0));
    assert!(
        r.cost <= nn + tol(nn),
        "cost {} worse than nearest neighbour {nn}",
        r.cost
    );
    if n <= 8 {
        let best = brute_force(&rows);
        assert!(
            (r.cost - best).abs() <= tol(best),
            "cost {} optimum {best}",
            r.cost
        );
    }
});
