//! A contention episode of a lock with pooled slots starts with its first
//! waiter claiming a block and cleaning the slot lines of the route's
//! CPUs (256 on a 256-CPU machine). While it cleans, the holder takes the
//! lock again and again on its own CPU; the cleaning's loads must overlap
//! (a core's independent misses do; the VM prices them one after another
//! unless the code announces them), or on a many-core machine the holder
//! keeps the lock for thousands of acquisitions before any waiter can
//! register.

mod common;

use ron_vm_bench::Workload;
use ron_vm_bench::locks::RelaxKind;

#[test]
fn the_first_waiters_of_an_episode_get_the_lock() {
    let vm = common::one_socket_chiplets(256, 8);
    for lock in ["nxt-ron", "ron-plock"] {
        let s = common::point_seeded(
            &vm,
            Workload::Micro,
            lock,
            RelaxKind::Spin,
            8,
            0.0,
            2,
            1500,
            1,
        );
        assert!(s.exclusion_ok, "{lock} lost an update");
        let served = s.per_thread.iter().filter(|&&n| n > 0).count();
        assert_eq!(
            served, 8,
            "{lock}: threads served in the window {:?}",
            s.per_thread
        );
    }
}
