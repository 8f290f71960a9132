//! Placement and arrival: the route placement follows the route, the
//! random one is a seeded set of distinct CPUs, and a FIFO queue lock
//! started along the route at t = 0 inherits the route, which a random
//! placement with a random start does not give it (the report's "MCS along
//! the route and at random").

mod common;

use ron_vm::Costs;
use ron_vm_bench::locks::{RelaxKind, run_named};
use ron_vm_bench::{Placement, Point, Workload};

#[test]
fn route_placement_follows_the_route() {
    let vm = common::two_socket(24);
    assert_eq!(vm.place(16, Placement::Route, 1), vm.route[..16].to_vec());
    // Beyond one thread per CPU, thread i shares the CPU of thread i % n.
    let p = vm.place(30, Placement::Route, 1);
    assert_eq!(p[..24], vm.route[..]);
    assert_eq!(p[24..], vm.route[..6]);
}

#[test]
fn random_placement_is_seeded_and_distinct() {
    let vm = common::two_socket(24);
    let a = vm.place(16, Placement::Random, 3);
    let mut distinct = a.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 16, "{a:?}");
    assert!(a.iter().all(|&c| c < 24), "{a:?}");
    assert_eq!(
        a,
        vm.place(16, Placement::Random, 3),
        "same seed, same CPUs"
    );
    assert_ne!(a, vm.place(16, Placement::Random, 4), "the seed matters");
    assert_ne!(a, vm.place(16, Placement::Route, 3));
}

fn mcs_mlocks(placement: Placement, start_skew_ns: f64, seed: u64) -> f64 {
    let vm = common::two_socket(24);
    let p = Point {
        workload: Workload::Micro,
        start_skew_ns,
        cpus: vm.place(24, placement, seed),
        ncs_ns: 0.0,
        cs_lines: 2,
        acquisitions: 3000,
        seed,
        costs: Costs::default(),
    };
    run_named("mcs", 24, RelaxKind::Spin, &vm, &p)
        .unwrap()
        .mlocks_per_s
}

#[test]
fn mcs_inherits_the_route_only_from_an_ordered_start() {
    let along = mcs_mlocks(Placement::Route, 0.0, 1);
    let mut random: Vec<f64> = (1..=5)
        .map(|seed| mcs_mlocks(Placement::Random, 1000.0, seed))
        .collect();
    random.sort_by(f64::total_cmp);
    let median = random[2];
    eprintln!("mcs along the route {along:.3}, at random (median of 5) {median:.3} Mlocks/s");
    assert!(
        along > 1.2 * median,
        "along the route {along} vs at random {median}"
    );
}
