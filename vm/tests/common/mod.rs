//! Machines and helpers shared by the validation tests.
#![allow(dead_code)]

use ron_topo::LatencyMatrix;
use ron_vm::Costs;
use ron_vm_bench::locks::{RelaxKind, run_named};
use ron_vm_bench::{Placement, Point, RunStats, VirtualMachine};

/// A synthetic 2-socket machine: `n` CPUs, 40 ns within a socket (plus a
/// little per-pair spread), 130 ns across.
pub fn two_socket(n: usize) -> VirtualMachine {
    let m = LatencyMatrix::from_fn(n, |a, b| {
        if a == b {
            0.0
        } else if (a < n / 2) == (b < n / 2) {
            40.0 + ((a * 7 + b * 13) % 5) as f64
        } else {
            130.0 + ((a * 3 + b * 5) % 7) as f64
        }
    })
    .unwrap();
    VirtualMachine::with_solved_route(format!("two-socket-{n}"), m)
}

/// A synthetic one-socket chiplet machine: `n` CPUs in chiplets of
/// `per` CPUs, 20 ns inside a chiplet, 90 to 110 ns between chiplets.
pub fn one_socket_chiplets(n: usize, per: usize) -> VirtualMachine {
    let m = LatencyMatrix::from_fn(n, |a, b| {
        if a == b {
            0.0
        } else if a / per == b / per {
            20.0 + ((a + b) % 3) as f64
        } else {
            90.0 + ((a / per + b / per) % 3) as f64 * 10.0
        }
    })
    .unwrap();
    VirtualMachine::with_solved_route(format!("chiplets-{n}"), m)
}

/// A recorded matrix by file stem, or `None` (with a message) when the
/// recorded data is not there.
pub fn recorded(stem: &str) -> Option<VirtualMachine> {
    let Some(dir) = ron_vm_bench::data_dir() else {
        eprintln!(
            "skipping {stem}: no recorded data (set RON_DATA_DIR to the directory holding latency/)"
        );
        return None;
    };
    let path = dir.join("latency").join(format!("{stem}.csv"));
    if !path.exists() {
        eprintln!("skipping {stem}: {} is absent", path.display());
        return None;
    }
    Some(VirtualMachine::load(&path).expect("recorded matrix loads"))
}

/// Runs `lock` on `vm` with `threads` threads placed at random with `seed`.
#[allow(clippy::too_many_arguments)]
pub fn point_seeded(
    vm: &VirtualMachine,
    workload: ron_vm_bench::Workload,
    lock: &str,
    relax: RelaxKind,
    threads: usize,
    ncs_ns: f64,
    cs_lines: usize,
    acquisitions: u64,
    seed: u64,
) -> RunStats {
    let p = Point {
        workload,
        start_skew_ns: 1000.0,
        cpus: vm.place(threads, Placement::Random, seed),
        ncs_ns,
        cs_lines,
        acquisitions,
        seed,
        costs: Costs::default(),
    };
    run_named(lock, 16, relax, vm, &p).expect("known lock")
}

/// Runs `lock` on `vm` with `threads` threads placed along the route.
#[allow(clippy::too_many_arguments)]
pub fn point(
    vm: &VirtualMachine,
    lock: &str,
    slots: usize,
    relax: RelaxKind,
    threads: usize,
    ncs_ns: f64,
    cs_lines: usize,
    acquisitions: u64,
) -> RunStats {
    point_with(
        Costs::default(),
        vm,
        lock,
        slots,
        relax,
        threads,
        ncs_ns,
        cs_lines,
        acquisitions,
    )
}

/// Runs `lock` on `vm` with `threads` threads placed along the route,
/// priced by `costs`.
#[allow(clippy::too_many_arguments)]
pub fn point_with(
    costs: Costs,
    vm: &VirtualMachine,
    lock: &str,
    slots: usize,
    relax: RelaxKind,
    threads: usize,
    ncs_ns: f64,
    cs_lines: usize,
    acquisitions: u64,
) -> RunStats {
    let p = Point {
        workload: ron_vm_bench::Workload::Micro,
        start_skew_ns: 0.0,
        cpus: vm.place(threads, Placement::Route, 1),
        ncs_ns,
        cs_lines,
        acquisitions,
        seed: 1,
        costs,
    };
    run_named(lock, slots, relax, vm, &p).expect("known lock")
}
