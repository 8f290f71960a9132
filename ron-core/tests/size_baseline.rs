//! Bytes per lock of the baseline and compact locks, as their docs state.
#![cfg(not(loom))]

use core::mem::size_of;
use ron_core::{CBoMcs, Cna, Fsl, Mcs, ShRon, Tas, Ticket, Ttas};

#[test]
fn bytes_per_lock() {
    assert_eq!(size_of::<Tas>(), 1);
    assert_eq!(size_of::<Ttas>(), 1);
    assert_eq!(size_of::<Ticket>(), 8);
    assert_eq!(size_of::<Mcs>(), 8);
    assert_eq!(size_of::<Cna>(), 8);
    assert_eq!(size_of::<Cna<0, false>>(), 8);
    assert_eq!(size_of::<ShRon>(), 8);
    assert_eq!(size_of::<CBoMcs>(), 1152); // 128 * (8 + 1)
    assert_eq!(size_of::<CBoMcs<2>>(), 128 * 3);
    assert_eq!(size_of::<Fsl<4>>(), 2176); // 128 * (16 + 1)
    assert_eq!(size_of::<Fsl<1, 4>>(), 128 * 5);
}

#[test]
fn guards_are_small() {
    use lock_api::RawMutex;
    assert_eq!(size_of::<<Mcs as RawMutex>::Guard>(), 0);
    assert_eq!(size_of::<<Cna as RawMutex>::Guard>(), 0);
    assert_eq!(size_of::<<Ticket as RawMutex>::Guard>(), 0);
}
