//! Threads that start together on one lock: `RonGrant`'s waiters look
//! unregistered while nobody is registered, and a holder that takes the
//! lock again at once (nCS 0) keeps it from them until one of them
//! registers. A thread's first waits end their looks after a few held
//! looks (`EARLY_HELD_LOOKS` in `plock.rs`), so the queue forms at once
//! and the start runs at the grant's rate, as `NxtRon`'s (whose waiters
//! register at once) does. With the full count (32 held looks, backoff
//! up to 16 pauses) every looker of the EPYC-class start below waited
//! out its looks together: p99 wait 56-59 us against `NxtRon`'s 9.7 us in
//! seeds 1 and 2, 0.93x and 0.97x its rate.

mod common;

use ron_vm_bench::Workload;
use ron_vm_bench::locks::RelaxKind;

#[test]
fn a_start_on_one_lock_forms_the_queue_at_once() {
    let Some(vm) = common::recorded("amd-threadripper-3990x") else {
        return;
    };
    for seed in 1..=3 {
        let run = |lock| {
            common::point_seeded(
                &vm,
                Workload::Micro,
                lock,
                RelaxKind::Spin,
                64,
                0.0,
                2,
                1500,
                seed,
            )
        };
        let (grant, nxt) = (run("ron-grant"), run("nxt-ron"));
        assert!(grant.exclusion_ok && nxt.exclusion_ok, "lost an update");
        let (p99_grant, p99_nxt) = (grant.latency_ns[1], nxt.latency_ns[1]);
        assert!(
            p99_grant < 1.5 * p99_nxt && grant.mlocks_per_s > 0.97 * nxt.mlocks_per_s,
            "seed {seed}: ron-grant {:.3} Mlocks/s, p99 wait {p99_grant:.0} ns; \
             nxt-ron {:.3} Mlocks/s, p99 {p99_nxt:.0} ns",
            grant.mlocks_per_s,
            nxt.mlocks_per_s,
        );
    }
}
