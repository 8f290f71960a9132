//! The VM against the policy simulator's prices (`ron simulate`) where both
//! model the same thing: every CPU contends, nCS (2 us) is much larger than
//! the critical section (K = 0: no data lines), so a FIFO lock's handover
//! is one transfer of the lock line to an arbitrary CPU (the matrix's FIFO
//! mean) and a RON lock with one slot per CPU hands over to the next CPU
//! along the route (tour cost / n). Measured: `Ticket` agrees with the FIFO
//! mean within 10 % (here the holder releases before the next request for
//! the line arrives, so the line transfer is the whole handover). The RON
//! locks pay a residual the policy simulator leaves out (the slot, bitmap
//! and in-use lines move at every handover, and waiters re-read them); the
//! test prints it and checks that no RON handover is cheaper than the hop
//! the policy prices. (With K >= 1 a ticket release is re-read by every
//! spinner, one transfer after the other, and its handover grows to
//! microseconds: the coherence storm of `shapes.rs`.)

mod common;

use ron_vm_bench::VirtualMachine;
use ron_vm_bench::locks::{RelaxKind, slots_per_cpu};

fn check(vm: &VirtualMachine, acq: u64) {
    let n = vm.n();
    let fifo = vm.matrix.fifo_mean();
    let hop = vm.matrix.tour_cost(&vm.route) / n as f64;
    let slots = slots_per_cpu(n);
    let handover = |lock: &str| {
        let s = common::point(vm, lock, slots, RelaxKind::Spin, n, 2000.0, 0, acq);
        assert!(s.exclusion_ok);
        s.handover_ns
    };
    let ticket = handover("ticket");
    let ron_ticket = handover("ron-ticket");
    let nxt_ron = handover("nxt-ron");
    eprintln!(
        "{}: FIFO mean {fifo:.1} ns, ticket {ticket:.1} ns (residual {:+.1}); tour / n {hop:.1} ns, ron-ticket {ron_ticket:.1} ns (residual {:+.1}), nxt-ron {nxt_ron:.1} ns (residual {:+.1})",
        vm.name,
        ticket - fifo,
        ron_ticket - hop,
        nxt_ron - hop
    );
    assert!(
        (ticket - fifo).abs() <= 0.1 * fifo,
        "{}: ticket handover {ticket:.1} ns is not within 10 % of the FIFO mean {fifo:.1} ns",
        vm.name
    );
    for (lock, h) in [("ron-ticket", ron_ticket), ("nxt-ron", nxt_ron)] {
        assert!(h >= 0.9 * hop, "{}: {lock} {h} < tour / n {hop}", vm.name);
    }
}

#[test]
fn recorded_two_socket_matrices() {
    for (stem, acq) in [
        ("intel-xeon-platinum-8375c-2s", 1500),
        ("amd-epyc-7742-2s", 600),
    ] {
        if let Some(vm) = common::recorded(stem) {
            check(&vm, acq);
        }
    }
}
