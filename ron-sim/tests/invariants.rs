//! Invariants of the lock-policy simulator: one owner at a time, only
//! waiting threads are admitted, determinism for a seed, errors (not
//! panics) for bad inputs.

use ron_sim::{
    Costs, CpuSelection, PolicyKind, PolicyParams, SimConfig, SimError, Simulator, fairness,
    groups, rng::SplitMix64, simulate,
};

fn two_level(n: usize, group: usize) -> Costs {
    Costs::from_fn(n, |i, j| {
        if i == j {
            0.0
        } else if i / group == j / group {
            15.0 + (i + j) as f64 % 3.0
        } else {
            110.0 + (i * 7 + j) as f64 % 11.0
        }
    })
    .unwrap()
}

fn sim(n: usize) -> Simulator {
    let mut route: Vec<usize> = (0..n).collect();
    route.reverse();
    Simulator::new(two_level(n, 4), route).unwrap()
}

#[test]
fn every_policy_keeps_the_invariants() {
    let s = sim(24);
    for kind in PolicyKind::ALL {
        for (threads, ncs, cpus) in [
            (24, 0.0, CpuSelection::First),
            (24, 500.0, CpuSelection::First),
            (9, 3000.0, CpuSelection::Random(4)),
            (1, 50.0, CpuSelection::First),
        ] {
            let cfg = SimConfig {
                threads,
                cpus,
                ncs_ns: ncs,
                duration_ns: 2e5,
                params: PolicyParams {
                    cna_threshold: 5,
                    cohort_threshold: 3,
                    ..PolicyParams::default()
                },
                ..SimConfig::default()
            };
            let (r, trace) = s.run_traced(kind, &cfg).unwrap();
            assert!(!trace.is_empty());
            let mut last_release = vec![f64::NEG_INFINITY; threads];
            let mut prev: Option<&ron_sim::Admission> = None;
            for a in &trace {
                // The admitted thread was waiting: it asked after its last
                // release and no later than now.
                assert!(a.request_ns >= last_release[a.thread], "{kind}");
                assert!(a.request_ns <= a.admit_ns, "{kind}");
                // One owner at a time.
                if let Some(p) = prev {
                    assert!(a.admit_ns >= p.release_ns, "{kind}: overlap");
                    if a.direct {
                        assert_eq!(a.admit_ns, p.release_ns, "{kind}");
                    } else {
                        assert_eq!(a.admit_ns, a.request_ns, "{kind}");
                    }
                    assert_eq!(a.cost_ns, s.costs().get(p.cpu, a.cpu), "{kind}");
                }
                assert!((a.release_ns - (a.admit_ns + a.cost_ns + cfg.cs_ns)).abs() < 1e-6);
                last_release[a.thread] = a.release_ns;
                prev = Some(a);
            }
            assert_eq!(r.per_thread.len(), threads);
            assert!(r.fairness_factor >= 0.5 - 1e-12 && r.fairness_factor <= 1.0);
            assert!(r.handover_p99_ns >= r.handover_mean_ns || r.admissions < 100);
        }
    }
}

#[test]
fn a_seed_gives_the_same_run() {
    let s = sim(16);
    for kind in PolicyKind::ALL {
        let cfg = SimConfig {
            threads: 16,
            ncs_ns: 300.0,
            duration_ns: 2e5,
            seed: 42,
            ..SimConfig::default()
        };
        assert_eq!(s.run(kind, &cfg).unwrap(), s.run(kind, &cfg).unwrap());
        let other = SimConfig { seed: 43, ..cfg };
        assert_ne!(
            s.run(kind, &other).unwrap().per_thread,
            s.run(
                kind,
                &SimConfig {
                    seed: 42,
                    ..other.clone()
                }
            )
            .unwrap()
            .per_thread,
            "{kind}: the seed should matter"
        );
    }
}

#[test]
fn fairness_factor_and_cv() {
    assert_eq!(fairness(&[3, 3, 3]), (0.5, 0.0));
    assert_eq!(fairness(&[0, 0, 8, 8]).0, 1.0);
    assert_eq!(fairness(&[7]), (0.5, 0.0));
    assert_eq!(fairness(&[]), (0.5, 0.0));
    let (f, cv) = fairness(&[1, 3]);
    assert_eq!(f, 0.75);
    assert!((cv - 0.5).abs() < 1e-12);
}

#[test]
fn groups_come_from_the_matrix() {
    let g = groups::cluster(&two_level(12, 4));
    assert_eq!(g, vec![0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2]);
    // A uniform matrix has no near pairs: every CPU is its own group.
    let flat = Costs::from_fn(5, |i, j| if i == j { 0.0 } else { 50.0 }).unwrap();
    assert_eq!(groups::cluster(&flat), vec![0, 1, 2, 3, 4]);
    assert_eq!(
        groups::along_route(&[3, 2, 1, 0, 4], 2),
        vec![1, 1, 0, 0, 2]
    );
}

#[test]
fn policy_names_round_trip() {
    for k in PolicyKind::ALL {
        assert_eq!(k.name().parse::<PolicyKind>().unwrap(), k);
    }
    assert_eq!(
        PolicyKind::parse_list("ron, fifo,ron").unwrap(),
        vec![PolicyKind::Ron, PolicyKind::Fifo]
    );
    assert_eq!(PolicyKind::parse_list("all").unwrap().len(), 6);
    assert!(matches!(
        PolicyKind::parse_list("ron,bogus"),
        Err(SimError::UnknownPolicy(_))
    ));
    assert!(PolicyKind::parse_list(" , ").is_err());
}

#[test]
fn bad_inputs_are_errors() {
    assert!(Costs::from_rows(vec![]).is_err());
    assert!(Costs::from_rows(vec![vec![0.0, 1.0], vec![1.0]]).is_err());
    assert!(Costs::from_rows(vec![vec![0.0, f64::NAN], vec![1.0, 0.0]]).is_err());
    assert!(Costs::from_rows(vec![vec![0.0, -1.0], vec![1.0, 0.0]]).is_err());
    let c = two_level(8, 4);
    assert!(matches!(
        Simulator::new(c.clone(), vec![0, 1, 2]),
        Err(SimError::BadRoute(_))
    ));
    assert!(Simulator::new(c.clone(), vec![0, 1, 2, 3, 4, 5, 6, 6]).is_err());
    assert!(Simulator::new(c.clone(), vec![0, 1, 2, 3, 4, 5, 6, 9]).is_err());
    let s = Simulator::new(c.clone(), (0..8).collect()).unwrap();
    let ok = SimConfig {
        threads: 4,
        duration_ns: 1e4,
        ..SimConfig::default()
    };
    let bad = [
        SimConfig {
            threads: 0,
            ..ok.clone()
        },
        SimConfig {
            threads: 9,
            ..ok.clone()
        },
        SimConfig {
            cs_ns: 0.0,
            ..ok.clone()
        },
        SimConfig {
            ncs_ns: -1.0,
            ..ok.clone()
        },
        SimConfig {
            ncs_ns: f64::INFINITY,
            ..ok.clone()
        },
        SimConfig {
            duration_ns: f64::NAN,
            ..ok.clone()
        },
        SimConfig {
            duration_ns: 1e30,
            ..ok.clone()
        },
        SimConfig {
            warmup_fraction: 1.0,
            ..ok.clone()
        },
        SimConfig {
            cpus: CpuSelection::List(vec![1, 1]),
            ..ok.clone()
        },
        SimConfig {
            cpus: CpuSelection::List(vec![1, 8]),
            ..ok.clone()
        },
        SimConfig {
            cpus: CpuSelection::List(vec![]),
            ..ok.clone()
        },
        SimConfig {
            params: PolicyParams {
                cna_threshold: 0,
                ..PolicyParams::default()
            },
            ..ok.clone()
        },
        SimConfig {
            params: PolicyParams {
                cohort_group_size: Some(0),
                ..PolicyParams::default()
            },
            ..ok.clone()
        },
        SimConfig {
            params: PolicyParams {
                ttas_jitter: -1.0,
                ..PolicyParams::default()
            },
            ..ok.clone()
        },
    ];
    for cfg in &bad {
        for kind in PolicyKind::ALL {
            assert!(s.run(kind, cfg).is_err(), "{kind} accepted {cfg:?}");
        }
    }
    assert!(simulate(&c, &(0..8).collect::<Vec<_>>(), PolicyKind::Ron, &ok).is_ok());
    assert!(
        s.drain_order(PolicyKind::Ron, &PolicyParams::default(), 0, &[0])
            .is_err()
    );
    assert!(s.with_groups(vec![0; 3]).is_err());
}

#[test]
fn cohort_group_size_uses_route_arcs() {
    let s = sim(16);
    let cfg = SimConfig {
        threads: 16,
        ncs_ns: 0.0,
        duration_ns: 2e5,
        params: PolicyParams {
            cohort_group_size: Some(16),
            cohort_threshold: 1_000_000,
            ..PolicyParams::default()
        },
        ..SimConfig::default()
    };
    // One group holding every CPU: cohort degenerates to FIFO.
    let a = s.run(PolicyKind::Cohort, &cfg).unwrap();
    let b = s.run(PolicyKind::Fifo, &cfg).unwrap();
    assert_eq!(a.per_thread, b.per_thread);
    assert_eq!(a.handover_mean_ns, b.handover_mean_ns);
}

#[test]
fn ttas_prefers_near_waiters() {
    // Jitter 0: the nearest waiter always wins.
    let s = sim(8);
    let p = PolicyParams {
        ttas_jitter: 0.0,
        ..PolicyParams::default()
    };
    let o = s.drain_order(PolicyKind::Ttas, &p, 0, &[5, 6, 1]).unwrap();
    assert_eq!(o[1], 1);
    let mut rng = SplitMix64::new(9);
    assert!(rng.below(5) < 5);
}
