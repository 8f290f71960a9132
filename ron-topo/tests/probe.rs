//! The probe on this machine: shape and sanity only, never timings.

use std::sync::atomic::AtomicBool;

use ron_topo::Topology;
use ron_topo::probe::{ProbeError, ProbeMode, ProbeOptions, available_cpus, probe};

fn quick(mode: ProbeMode) -> ProbeOptions {
    ProbeOptions {
        mode,
        rounds: 15,
        warmup_rounds: 3,
        cpus: None,
        seed: 1,
    }
}

#[test]
fn full_probe_shape() {
    let cpus = available_cpus();
    if cpus.len() < 2 {
        println!("SKIP: only {} CPU(s) available", cpus.len());
        return;
    }
    let topo = Topology::detect().unwrap();
    let mut calls = Vec::new();
    let m = probe(
        &topo,
        &quick(ProbeMode::Full),
        &mut |d, t| calls.push((d, t)),
        &AtomicBool::new(false),
    )
    .unwrap();
    let n = cpus.len();
    assert_eq!(m.n(), n);
    assert_eq!(m.cpus(), &cpus[..]);
    for i in 0..n {
        for j in 0..n {
            let v = m.get(i, j);
            assert!(v.is_finite() && v >= 0.0);
            if i == j {
                assert_eq!(v, 0.0);
            } else {
                assert!(v > 0.0, "a handover takes time");
            }
        }
    }
    let total = n * (n - 1);
    assert_eq!(calls.first(), Some(&(0, total)));
    assert_eq!(calls.last(), Some(&(total, total)));
    assert_eq!(m.meta().mode, "full");
    assert_eq!(m.meta().rounds, 15);
    println!("probed matrix:\n{}", m.to_csv_string());
}

#[test]
fn sampled_probe_fills_every_pair() {
    let cpus = available_cpus();
    if cpus.len() < 2 {
        println!("SKIP: only {} CPU(s) available", cpus.len());
        return;
    }
    let topo = Topology::detect().unwrap();
    let opts = quick(ProbeMode::Sampled { pairs_per_class: 1 });
    let mut total_seen = 0;
    let m = probe(
        &topo,
        &opts,
        &mut |_, t| total_seen = t,
        &AtomicBool::new(false),
    )
    .unwrap();
    assert!(total_seen >= 1 && total_seen <= cpus.len() * (cpus.len() - 1));
    for i in 0..m.n() {
        for j in 0..m.n() {
            assert!(m.get(i, j).is_finite());
            assert_eq!(m.get(i, j) == 0.0, i == j);
        }
    }
    assert_eq!(m.meta().mode, "sampled:1");
}

#[test]
fn cancel_and_bad_cpu_lists() {
    let topo = Topology::detect().unwrap();
    let cpus = available_cpus();
    if cpus.len() >= 2 {
        let r = probe(
            &topo,
            &quick(ProbeMode::Full),
            &mut |_, _| {},
            &AtomicBool::new(true),
        );
        assert!(matches!(r, Err(ProbeError::Cancelled)));
    }
    let mut one = quick(ProbeMode::Full);
    one.cpus = Some(vec![0]);
    assert!(matches!(
        probe(&topo, &one, &mut |_, _| {}, &AtomicBool::new(false)),
        Err(ProbeError::NotEnoughCpus(1))
    ));
    // A CPU that does not exist cannot be pinned: an error, not a hang or panic.
    let mut ghost = quick(ProbeMode::Full);
    ghost.cpus = Some(vec![cpus.first().copied().unwrap_or(0), 4000]);
    assert!(matches!(
        probe(&topo, &ghost, &mut |_, _| {}, &AtomicBool::new(false)),
        Err(ProbeError::UnknownCpu(4000))
    ));
}
