//! With two threads per CPU (the VM's scheduler at work), runs repeat
//! byte for byte and suspending idle waiters changes nothing.

mod common;

use ron_vm::Costs;
use ron_vm_bench::locks::{RelaxKind, run_named};
use ron_vm_bench::{Placement, Point};

/// With two threads per CPU (the VM's scheduler at work, 20 us slices so
/// that a short run preempts often), the same seed gives the same bytes,
/// and suspending idle waiters changes nothing: the scheduler ends a
/// suspension where a look must run for real (a preemption point, a yield
/// with a thread queued), and a waiter that left its CPU since its last
/// look is not suspended (another thread of its CPU may have written the
/// line the CPU still holds).
#[test]
fn oversubscribed_runs_repeat_and_suspension_changes_nothing() {
    let over = |lock: &str, suspend_spinners: bool| {
        let costs = Costs {
            slice_ns: 20_000.0,
            suspend_spinners,
            ..Costs::default()
        };
        let vm = common::two_socket(12);
        let p = Point {
            workload: ron_vm_bench::Workload::Micro,
            start_skew_ns: 0.0,
            cpus: vm.place(24, Placement::Random, 9),
            ncs_ns: 300.0,
            cs_lines: 2,
            acquisitions: 1200,
            seed: 9,
            costs,
        };
        let mut out = String::new();
        for relax in [RelaxKind::Default, RelaxKind::Spin] {
            let mut s = run_named(lock, 16, relax, &vm, &p).unwrap();
            (s.wall_s, s.cpu_s, s.switches) = (0.0, 0.0, 0);
            out += &format!("{s:?}\n");
        }
        out
    };
    for lock in [
        "ron-park",
        "nxt-ron",
        "mcs",
        "ttas",
        "ticket",
        "cna",
        "ron-ticket",
    ] {
        let a = over(lock, true);
        assert_eq!(a, over(lock, true), "{lock}: same seed, same bytes");
        assert_eq!(a, over(lock, false), "{lock}: with and without suspension");
    }
}
