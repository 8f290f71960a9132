//! Closed-form checks of the lock-policy simulator: the RON paper's two
//! worked examples (exact numbers) and the full-contention identities.

use ron_sim::{
    Costs, CostsExt, CpuSelection, PolicyKind, PolicyParams, SimConfig, Simulator, rng::SplitMix64,
};

/// Paper example (a): A..F = 0..5; west {A, B, C, D}, east {E, F}; 1 inside
/// a part, d(x) + d(y) across, d = 2 for A, D, E and 3 for B, C, F.
fn example_a() -> Costs {
    let d = [2.0, 3.0, 3.0, 2.0, 2.0, 3.0];
    let part = |x: usize| usize::from(x >= 4);
    Costs::from_fn(6, |x, y| {
        if x == y {
            0.0
        } else if part(x) == part(y) {
            1.0
        } else {
            d[x] + d[y]
        }
    })
    .unwrap()
}

/// Paper example (b): 8 cores, groups {0..3} and {4..7}, 1 inside, 3 across.
fn example_b() -> Costs {
    Costs::from_fn(8, |x, y| {
        if x == y {
            0.0
        } else if x / 4 == y / 4 {
            1.0
        } else {
            3.0
        }
    })
    .unwrap()
}

const A: usize = 0;
const B: usize = 1;
const C: usize = 2;
const D: usize = 3;
const E: usize = 4;
const F: usize = 5;

#[test]
fn example_a_order_costs() {
    let c = example_a();
    assert_eq!(c.path_cost(&[A, D, B, C, F, E]), 10.0);
    assert_eq!(c.path_cost(&[A, B, C, D, E, F]), 8.0);
}

#[test]
fn example_a_policies_follow_the_orders() {
    let sim = Simulator::new(example_a(), vec![A, B, C, D, E, F]).unwrap();
    let p = PolicyParams::default();
    // A holds; D, B, C, F, E request in that order.
    let fifo = sim
        .drain_order(PolicyKind::Fifo, &p, A, &[D, B, C, F, E])
        .unwrap();
    assert_eq!(fifo, vec![A, D, B, C, F, E]);
    assert_eq!(sim.costs().path_cost(&fifo), 10.0);
    let ron = sim
        .drain_order(PolicyKind::Ron, &p, A, &[D, B, C, F, E])
        .unwrap();
    assert_eq!(ron, vec![A, B, C, D, E, F]);
    assert_eq!(sim.costs().path_cost(&ron), 8.0);
}

#[test]
fn example_a_full_contention_pays_the_tour() {
    let sim = Simulator::new(example_a(), vec![A, B, C, D, E, F]).unwrap();
    let cfg = SimConfig {
        threads: 6,
        ncs_ns: 0.0,
        duration_ns: 2e5,
        ..SimConfig::default()
    };
    let r = sim.run(PolicyKind::Ron, &cfg).unwrap();
    // A tour of A..F costs 8 + F->A (3 + 2) = 13: 13/6 per handover.
    let want = 13.0 / 6.0;
    assert!(
        (r.handover_mean_ns - want).abs() < 0.01,
        "{} vs {want}",
        r.handover_mean_ns
    );
}

#[test]
fn example_b_fifo_10_ron_6() {
    let route = vec![3, 0, 1, 2, 5, 6, 7, 4];
    let sim = Simulator::new(example_b(), route).unwrap();
    let p = PolicyParams::default();
    let fifo = sim
        .drain_order(PolicyKind::Fifo, &p, 3, &[1, 5, 2, 6])
        .unwrap();
    assert_eq!(fifo, vec![3, 1, 5, 2, 6]);
    assert_eq!(sim.costs().path_cost(&fifo), 10.0);
    let ron = sim
        .drain_order(PolicyKind::Ron, &p, 3, &[1, 5, 2, 6])
        .unwrap();
    assert_eq!(ron, vec![3, 1, 2, 5, 6]);
    assert_eq!(sim.costs().path_cost(&ron), 6.0);
    // The identity order reaches 5 and 6 first from 3: 3,5,6,1,2 = 3+1+3+1.
    let id = sim
        .drain_order(PolicyKind::RonIdentity, &p, 3, &[1, 5, 2, 6])
        .unwrap();
    assert_eq!(id, vec![3, 5, 6, 1, 2]);
    assert_eq!(sim.costs().path_cost(&id), 8.0);
    // CNA and cohort keep the holder's group first, then the other group.
    for k in [PolicyKind::Cna, PolicyKind::Cohort] {
        let o = sim.drain_order(k, &p, 3, &[1, 5, 2, 6]).unwrap();
        assert_eq!(o, vec![3, 1, 2, 5, 6], "{k}");
    }
}

/// A random asymmetric matrix with two-level structure.
fn random_matrix(n: usize, seed: u64) -> Costs {
    let mut rng = SplitMix64::new(seed);
    let mut rows = vec![vec![0.0; n]; n];
    for (i, row) in rows.iter_mut().enumerate() {
        for (j, v) in row.iter_mut().enumerate() {
            if i != j {
                let base = if i / 4 == j / 4 { 20.0 } else { 120.0 };
                *v = base + 30.0 * rng.next_f64();
            }
        }
    }
    Costs::from_rows(rows).unwrap()
}

#[test]
fn ron_full_contention_follows_the_route_exactly() {
    let n = 16;
    let costs = random_matrix(n, 7);
    let mut route: Vec<usize> = (0..n).collect();
    SplitMix64::new(3).shuffle(&mut route);
    let tour = costs.tour_cost(&route);
    let sim = Simulator::new(costs.clone(), route.clone()).unwrap();
    let cfg = SimConfig {
        threads: n,
        ncs_ns: 0.0,
        duration_ns: 1e6,
        ..SimConfig::default()
    };
    let (r, trace) = sim.run_traced(PolicyKind::Ron, &cfg).unwrap();
    let mut next = vec![0; n];
    for k in 0..n {
        next[route[k]] = route[(k + 1) % n];
    }
    // After the first lap every handover goes to the route successor.
    for w in trace[2 * n..].windows(2) {
        assert_eq!(w[1].cpu, next[w[0].cpu]);
        assert!(w[1].direct);
    }
    let want = tour / n as f64;
    assert!(
        (r.handover_mean_ns - want).abs() / want < 0.01,
        "{} vs {want}",
        r.handover_mean_ns
    );
    assert!(r.fairness_factor < 0.51, "{}", r.fairness_factor);
}

#[test]
fn fifo_approaches_the_mean_off_diagonal() {
    let n = 48;
    let costs = random_matrix(n, 11);
    let sim = Simulator::new(costs.clone(), (0..n).collect()).unwrap();
    // nCS long enough for the jitter to reorder the queue, short enough
    // that every thread is back before its turn: still full contention.
    let cfg = SimConfig {
        threads: n,
        cs_ns: 50.0,
        ncs_ns: 2000.0,
        duration_ns: 4e6,
        ..SimConfig::default()
    };
    let r = sim.run(PolicyKind::Fifo, &cfg).unwrap();
    let want = costs.fifo_mean();
    assert!(
        (r.handover_mean_ns - want).abs() / want < 0.03,
        "{} vs {want}",
        r.handover_mean_ns
    );
    assert!(r.direct_share > 0.99);
}

#[test]
fn fifo_with_nothing_to_reorder_is_a_random_tour() {
    // nCS = 0: the first arrival order repeats forever; its mean is that
    // cycle's cost / n, exactly.
    let n = 10;
    let costs = random_matrix(n, 5);
    let sim = Simulator::new(costs.clone(), (0..n).collect()).unwrap();
    let cfg = SimConfig {
        threads: n,
        cpus: CpuSelection::First,
        ncs_ns: 0.0,
        duration_ns: 5e5,
        ..SimConfig::default()
    };
    let (r, trace) = sim.run_traced(PolicyKind::Fifo, &cfg).unwrap();
    let lap: Vec<usize> = trace[n..2 * n].iter().map(|a| a.cpu).collect();
    let want = costs.tour_cost(&lap) / n as f64;
    assert!((r.handover_mean_ns - want).abs() / want < 0.01);
}
