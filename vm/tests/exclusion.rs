//! Every lock keeps mutual exclusion on the virtual machine (the data
//! lines count every acquisition), with one thread per CPU and with the
//! CPU hint of every thread, at two slot counts.

mod common;

use ron_vm_bench::locks::{NAMES, RelaxKind};

#[test]
fn every_lock_counts_every_acquisition() {
    let vm = common::two_socket(16);
    for &lock in NAMES {
        for relax in [RelaxKind::Default, RelaxKind::Spin] {
            let s = common::point(&vm, lock, 16, relax, 12, 200.0, 2, 600);
            assert!(s.exclusion_ok, "{lock} ({relax:?}) lost an update");
            assert_eq!(s.total, 600, "{lock}");
            assert!(s.handovers > 0, "{lock} ({relax:?}) never changed hands");
        }
    }
}

/// Every lock keeps mutual exclusion with two threads per CPU: the VM's
/// scheduler preempts threads anywhere in the protocol (at their memory
/// accesses once their slice is over; slices of 20 us here so that a
/// short run preempts often), waiters yield or sleep to the thread queued
/// on their CPU, and the threads that start queued get to run.
#[test]
fn every_lock_counts_every_acquisition_oversubscribed() {
    let vm = common::two_socket(8);
    let costs = ron_vm::Costs {
        slice_ns: 20_000.0,
        ..ron_vm::Costs::default()
    };
    let mut served = 0;
    for &lock in NAMES {
        for relax in [RelaxKind::Default, RelaxKind::Spin] {
            let s = common::point_with(costs.clone(), &vm, lock, 16, relax, 16, 200.0, 2, 800);
            assert!(s.exclusion_ok, "{lock} ({relax:?}) lost an update");
            assert_eq!(s.total, 800, "{lock}");
            assert_eq!(s.per_thread.len(), 16, "{lock}");
            assert!(s.handovers > 0, "{lock} ({relax:?}) never changed hands");
            served += usize::from(s.per_thread[8..].iter().sum::<u64>() > 0);
        }
    }
    assert!(
        served > NAMES.len(),
        "the threads that start queued took the lock in only {served} of {} runs",
        2 * NAMES.len()
    );
}
