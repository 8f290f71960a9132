//! Route solver: Held-Karp as the oracle, determinism, TSPLIB optima and the
//! recorded CPU matrices.

use std::path::PathBuf;
use std::time::Duration;

use rand::{Rng, SeedableRng};
use rand_pcg::Pcg64Mcg;
use ron_topo::tsp::{SolveOptions, held_karp, is_permutation, nearest_neighbour, solve};
use ron_topo::{LatencyMatrix, tsplib};

fn data_dir() -> Option<PathBuf> {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data");
    if d.is_dir() {
        Some(d)
    } else {
        println!(
            "SKIP: shared data not found at {} (a clone without ../shared)",
            d.display()
        );
        None
    }
}

fn random_matrix(n: usize, seed: u64, symmetric: bool) -> LatencyMatrix {
    let mut rng = Pcg64Mcg::seed_from_u64(seed);
    let mut w: Vec<f64> = (0..n * n)
        .map(|_| f64::from(rng.random_range(1u32..1000)))
        .collect();
    if symmetric {
        for i in 0..n {
            for j in 0..i {
                w[i * n + j] = w[j * n + i];
            }
        }
    }
    LatencyMatrix::from_fn(n, |i, j| if i == j { 0.0 } else { w[i * n + j] }).unwrap()
}

/// Deterministic ILS options: the iteration limit binds, never the clock.
fn ils_only(iters: u64, seed: u64) -> SolveOptions {
    SolveOptions {
        time_limit: Duration::from_secs(3600),
        seed,
        max_iterations: Some(iters),
        exact_up_to: 0,
        ..SolveOptions::default()
    }
}

fn brute_force(m: &LatencyMatrix) -> f64 {
    fn rec(m: &LatencyMatrix, path: &mut Vec<usize>, used: &mut Vec<bool>, best: &mut f64) {
        let n = m.n();
        if path.len() == n {
            *best = best.min(m.tour_cost(path));
            return;
        }
        for c in 1..n {
            if !used[c] {
                used[c] = true;
                path.push(c);
                rec(m, path, used, best);
                path.pop();
                used[c] = false;
            }
        }
    }
    let mut best = f64::INFINITY;
    let mut used = vec![false; m.n()];
    used[0] = true;
    rec(m, &mut vec![0], &mut used, &mut best);
    best
}

#[test]
fn held_karp_matches_brute_force() {
    for n in 1..=8 {
        for seed in 0..5 {
            let m = random_matrix(n, seed * 100 + n as u64, false);
            let r = held_karp(&m).unwrap();
            assert!(is_permutation(&r.order, n));
            assert_eq!(r.cost, m.tour_cost(&r.order));
            assert_eq!(r.cost, brute_force(&m), "n={n} seed={seed}");
        }
    }
    assert!(held_karp(&random_matrix(17, 1, false)).is_none());
}

#[test]
fn ils_equals_held_karp_on_small_asymmetric_and_symmetric() {
    for n in [5, 6, 8, 10, 12, 14, 16] {
        for seed in 0..4u64 {
            for symmetric in [false, true] {
                let m = random_matrix(n, seed * 31 + n as u64, symmetric);
                let exact = held_karp(&m).unwrap();
                let r = solve(&m, &ils_only(300, seed));
                assert!(is_permutation(&r.order, n));
                assert_eq!(r.order[0], 0, "route is rotated to start at index 0");
                assert!((r.cost - m.tour_cost(&r.order)).abs() < 1e-9);
                assert!(
                    (r.cost - exact.cost).abs() < 1e-9,
                    "n={n} seed={seed} symmetric={symmetric}: ILS {} vs optimum {}",
                    r.cost,
                    exact.cost
                );
            }
        }
    }
}

#[test]
fn solve_uses_exact_solver_for_small_n_and_handles_tiny() {
    for n in 1..=4 {
        let m = random_matrix(n, 7, false);
        let r = solve(&m, &SolveOptions::default());
        assert!(is_permutation(&r.order, n));
        assert_eq!(r.cost, held_karp(&m).unwrap().cost);
    }
    let m = random_matrix(16, 3, false);
    assert_eq!(
        solve(&m, &SolveOptions::default()).cost,
        held_karp(&m).unwrap().cost
    );
}

#[test]
fn same_seed_same_route() {
    let m = random_matrix(60, 9, false);
    let a = solve(&m, &ils_only(200, 42));
    let b = solve(&m, &ils_only(200, 42));
    assert_eq!(a, b);
    let nn = nearest_neighbour(&m, 0);
    assert!(a.cost <= m.tour_cost(&nn));
}

#[test]
fn initial_order_is_used_and_bad_initial_ignored() {
    // A ring where the identity order is optimal; NN is not.
    let m = random_matrix(40, 5, false);
    let mut opts = ils_only(0, 1);
    opts.initial = Some(vec![0, 0, 1]); // not a permutation: ignored
    let r = solve(&m, &opts);
    assert!(is_permutation(&r.order, 40));
}

#[test]
fn tsplib_within_one_percent() {
    let Some(data) = data_dir() else { return };
    let optima = [
        ("br17.atsp", 39.0, 17),
        ("ftv33.atsp", 1286.0, 34),
        ("ftv47.atsp", 1776.0, 48),
        ("ry48p.atsp", 14422.0, 48),
        ("ft70.atsp", 38673.0, 70),
        ("gr24.tsp", 1272.0, 24),
        ("bays29.tsp", 2020.0, 29),
        ("berlin52.tsp", 7542.0, 52),
        ("eil76.tsp", 538.0, 76),
        ("kroA100.tsp", 21282.0, 100),
    ];
    let mut total_gap = 0.0;
    for (file, opt, n) in optima {
        let inst = tsplib::read(data.join("tsplib").join(file)).unwrap();
        assert_eq!(inst.matrix.n(), n, "{file}");
        assert_eq!(inst.asymmetric, file.ends_with(".atsp"));
        let r = solve(&inst.matrix, &ils_only(1000, 0x5eed));
        assert!(is_permutation(&r.order, n));
        assert!(
            r.cost >= opt,
            "{file}: {} below the proven optimum {opt}",
            r.cost
        );
        let gap = (r.cost - opt) / opt * 100.0;
        println!("{file}: {} (optimum {opt}, gap {gap:.3} %)", r.cost);
        assert!(gap <= 1.0, "{file}: gap {gap:.3} %");
        total_gap += gap;
    }
    assert!(
        total_gap / 10.0 <= 0.3,
        "mean gap {:.3} %",
        total_gap / 10.0
    );
}

#[test]
fn recorded_cpu_matrices_route_beats_identity_and_fifo() {
    let Some(data) = data_dir() else { return };
    let expected = [
        ("amd-epyc-7742-2s.csv", 256),
        ("amd-epyc-7773x.csv", 128),
        ("amd-epyc-9654-2s.csv", 192),
        ("amd-threadripper-3990x.csv", 64),
        ("ampere-altra-q80-30.csv", 80),
        ("apple-m1-pro.csv", 10),
        ("aws-graviton3.csv", 64),
        ("intel-xeon-platinum-8275cl-2s.csv", 96),
        ("intel-xeon-platinum-8375c-2s.csv", 128),
        ("intel-xeon-w9-3475x.csv", 36),
    ];
    for (file, n) in expected {
        let m = LatencyMatrix::read_csv(data.join("latency").join(file)).unwrap();
        assert_eq!(m.n(), n, "{file}");
        let r = solve(&m, &ils_only(50, 1));
        assert!(is_permutation(&r.order, n));
        assert!(r.cost <= m.identity_cost() + 1e-9, "{file}");
        assert!(r.cost <= m.fifo_mean() * n as f64, "{file}");
        if file == "apple-m1-pro.csv" {
            assert!(!m.is_symmetric(), "the Apple matrix is directional");
            assert_eq!(r.cost, held_karp(&m).unwrap().cost);
        }
    }
}
