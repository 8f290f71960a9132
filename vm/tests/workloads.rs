//! The `ron-micro`, `kv` and `kv-update` workloads: every lock keeps the
//! tree valid and counts every acquisition; the waiting count and the
//! critical section's data time mean what they say.

mod common;

use ron_vm_bench::Workload;
use ron_vm_bench::locks::RelaxKind;

#[test]
fn kv_and_ron_micro_keep_exclusion() {
    let vm = common::two_socket(16);
    for workload in [Workload::Kv, Workload::KvUpdate, Workload::RonMicro] {
        for lock in ["ron-raw", "ron-ticket", "mcs", "cna", "cbo-mcs", "ttas"] {
            let s =
                common::point_seeded(&vm, workload, lock, RelaxKind::Spin, 12, 200.0, 2, 600, 3);
            assert!(
                s.exclusion_ok,
                "{lock} {workload:?}: lost update or broken tree"
            );
            assert_eq!(s.total, 600, "{lock} {workload:?}");
        }
    }
}

/// At nCS 0 every other thread waits when the lock is taken; with an nCS
/// far above what the lock needs per acquisition almost none does. (The
/// count is taken at each thread's own virtual time: a thread in its nCS
/// is not waiting.)
#[test]
fn waiters_follow_the_load() {
    let vm = common::two_socket(16);
    let at = |ncs: f64| {
        common::point_seeded(
            &vm,
            Workload::RonMicro,
            "mcs",
            RelaxKind::Spin,
            16,
            ncs,
            2,
            1500,
            1,
        )
    };
    let (busy, idle) = (at(0.0), at(200_000.0));
    eprintln!(
        "waiters: nCS 0 {:.2}, nCS 200 us {:.2}; data ns {:.1} / {:.1}",
        busy.waiters(),
        idle.waiters(),
        busy.cs_data_ns(),
        idle.cs_data_ns()
    );
    assert!(busy.waiters() > 14.0, "{}", busy.waiters());
    assert!(idle.waiters() < 0.5, "{}", idle.waiters());
    // The 7 lines of the 100 integers come from the last holder: at least
    // one transfer (40 ns within a socket on this machine), at most 7
    // one after the other across sockets.
    for s in [&busy, &idle] {
        assert!(
            s.cs_data_ns() >= 40.0 && s.cs_data_ns() <= 7.0 * 140.0,
            "{}",
            s.cs_data_ns()
        );
    }
}
