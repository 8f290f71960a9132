//! The process-wide route table and group table.
#![cfg(not(loom))]

use ron_core::route::{self, RouteError};

#[test]
fn route_validation_install_and_lookup() {
    assert_eq!(route::validate(&[]), Err(RouteError::Empty));
    assert_eq!(
        route::validate(&[0, 1, 1]),
        Err(RouteError::Duplicate { cpu: 1 })
    );
    assert_eq!(
        route::validate(&[0, route::MAX_CPUS]),
        Err(RouteError::CpuOutOfRange {
            cpu: route::MAX_CPUS
        })
    );
    assert!(route::install(&[2, 0, 2]).is_err());
    assert!(
        !route::is_installed(),
        "a refused route must change nothing"
    );

    // Sparse ids are fine: CPUs 8, 2, 5 in that order.
    route::install(&[8, 2, 5]).unwrap();
    assert_eq!(route::len(), 3);
    assert_eq!(route::position(8), Some(0));
    assert_eq!(route::position(5), Some(2));
    assert_eq!(route::position(3), None);
    assert_eq!(route::cpu_at(1), Some(2));
    assert_eq!(route::cpu_at(3), None);
    let mut out = [0; 8];
    assert_eq!(route::copy_to(&mut out), 3);
    assert_eq!(&out[..3], &[8, 2, 5]);
    // Slots are contiguous arcs of the route.
    assert_eq!(route::slot_of(8, 3), 0);
    assert_eq!(route::slot_of(2, 3), 1);
    assert_eq!(route::slot_of(5, 3), 2);
    // Unknown or huge CPU ids still map into range.
    for cpu in [3, 4095, 4096, usize::MAX] {
        assert!(route::slot_of(cpu, 7) < 7);
    }
    assert_eq!(route::slot_of(usize::MAX, 0), 0);

    // Replacing drops CPUs that left the route.
    let generation = route::generation();
    route::install(&[0, 1]).unwrap();
    assert_eq!(route::position(8), None);
    assert_eq!(route::position(1), Some(1));
    assert!(route::generation() > generation);
    route::clear();
    assert!(!route::is_installed());
    assert_eq!(route::slot_of(9, 4), 1, "identity order: cpu % slots");
}

#[test]
fn group_table() {
    use ron_core::groups;
    groups::install(&[0, 0, 1, 1, 2]).unwrap();
    assert_eq!(groups::group_of(1), 0);
    assert_eq!(groups::group_of(4), 2);
    assert_eq!(groups::group_of(100_000), 0);
    assert_eq!(groups::count(), 3);
    assert!(groups::install(&[groups::MAX_GROUPS]).is_err());
}
