//! The classic shapes at nCS = 0 on 2-socket machines (Anderson 1990,
//! Mellor-Crummey & Scott 1991, David et al. SOSP'13): TTAS and ticket
//! throughput falls as threads grow (every release is re-read by every
//! spinner), MCS stays flat (each waiter spins on its own line; a handover
//! moves a constant number of lines). Under the relay line model (re-reads
//! one transfer after the other) TTAS and ticket lose more than half from
//! the first to the last point; under the directory model (re-reads
//! overlap but for the home's occupancy) the fall is milder, and the test
//! asks for a quarter.

mod common;

use ron_vm::Costs;
use ron_vm_bench::VirtualMachine;
use ron_vm_bench::locks::RelaxKind;

fn curve(costs: &Costs, vm: &VirtualMachine, lock: &str, threads: &[usize], acq: u64) -> Vec<f64> {
    let v: Vec<f64> = threads
        .iter()
        .map(|&t| {
            common::point_with(costs.clone(), vm, lock, 16, RelaxKind::Spin, t, 0.0, 2, acq)
                .mlocks_per_s
        })
        .collect();
    eprintln!(
        "{} {lock} ({}): threads {threads:?} -> Mlocks/s {v:.3?}",
        vm.name,
        costs.line_model.name()
    );
    v
}

fn check(vm: &VirtualMachine, threads: &[usize], acq: u64) {
    for (costs, fall) in [(Costs::relay(), 0.5), (Costs::default(), 0.75)] {
        check_with(&costs, fall, vm, threads, acq);
    }
}

fn check_with(costs: &Costs, fall: f64, vm: &VirtualMachine, threads: &[usize], acq: u64) {
    for lock in ["ttas", "ticket"] {
        let c = curve(costs, vm, lock, threads, acq);
        assert!(
            c.windows(2).all(|w| w[1] < 1.1 * w[0]) && c[c.len() - 1] < fall * c[0],
            "{} ({}): {lock} should fall as threads grow: {c:?}",
            vm.name,
            costs.line_model.name()
        );
    }
    let mcs = curve(costs, vm, "mcs", threads, acq);
    let (lo, hi) = mcs
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
    // Flat once the lock spans both sockets (the first point may be on one).
    let spread = mcs[1..]
        .iter()
        .fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
    assert!(
        spread.1 <= 1.25 * spread.0,
        "{}: mcs should stay flat: {mcs:?}",
        vm.name
    );
    assert!(hi <= 3.0 * lo, "{}: mcs {mcs:?}", vm.name);
}

#[test]
fn synthetic_two_socket() {
    check(&common::two_socket(32), &[4, 16, 32], 1500);
}

#[test]
fn recorded_two_socket_matrices() {
    for stem in ["intel-xeon-platinum-8375c-2s", "amd-epyc-7742-2s"] {
        if let Some(vm) = common::recorded(stem) {
            check(&vm, &[8, 32, 64], 1000);
        }
    }
}
