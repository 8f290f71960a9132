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
