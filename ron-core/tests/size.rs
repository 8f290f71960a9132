//! Bytes per lock, as documented on each type and recorded in
//! `ron_testkit::for_each_lock!` (`bytes`: the full-size type; a type with
//! a slot count takes 128 bytes per slot).
#![cfg(not(loom))]

use core::mem::size_of;
use ron_testkit::for_each_lock;

/// Every lock of the list has the size its record states; one with a slot
/// count `S` grows by 128 bytes per slot.
#[test]
fn bytes_per_lock() {
    macro_rules! check {
        ($id:ident, $ty:ty, { name: $n:literal, type_name: $tn:literal, kind: $k:ident, generic: $gen:tt, fair: $f:tt, timed: $t:tt, fifo_abort: $a:tt, bound: $b:tt, std: $s:tt, bytes: $bytes:literal, $($rest:tt)* }) => {
            if $n != "ron-raw" || cfg!(target_pointer_width = "64") {
                assert_eq!(size_of::<$ty>(), $bytes, "{}", $tn);
            }
            check!(@slots $gen, $bytes);
        };
        (@slots none, $bytes:literal) => {};
        (@slots $gen:ident, $bytes:literal) => {
            // Full size is 16 slots.
            let per = |s: usize| $bytes + 128 * s - 128 * 16;
            assert_eq!(size_of::<ron_core::$gen<1>>(), per(1), "{}<1>", stringify!($gen));
            assert_eq!(size_of::<ron_core::$gen<2>>(), per(2), "{}<2>", stringify!($gen));
            assert_eq!(size_of::<ron_core::$gen<3>>(), per(3), "{}<3>", stringify!($gen));
            assert_eq!(size_of::<ron_core::$gen<64>>(), per(64), "{}<64>", stringify!($gen));
            assert_eq!(size_of::<ron_core::$gen<65>>(), per(65), "{}<65>", stringify!($gen));
            assert_eq!(size_of::<ron_core::$gen<256>>(), per(256), "{}<256>", stringify!($gen));
        };
    }
    for_each_lock!(check);
    // Parameter variants beyond the list's full size.
    use ron_core::{CBoMcs, Cna, Fsl};
    assert_eq!(size_of::<Cna<0, false>>(), 8);
    assert_eq!(size_of::<CBoMcs<2>>(), 128 * 3);
    assert_eq!(size_of::<Fsl<1, 4>>(), 128 * 5);
    // A pooled block: one slot per CPU up to 256 CPUs (16 without std and
    // under Miri, where a 256-slot static pool would only slow it down).
    let block_slots = if cfg!(miri) { 16 } else { 256 };
    assert_eq!(ron_core::ron_raw::BLOCK_SLOTS, block_slots);
    assert!(ron_core::ron_raw::active_slots() <= 256);
    assert_eq!(ron_core::ron_raw::DEFAULT_SLOTS, 16);
}

#[test]
fn guard_state_is_one_word_and_send() {
    fn send<T: Send>() {}
    send::<ron_core::PlaceToken>();
    assert_eq!(size_of::<ron_core::PlaceToken>(), 4);
}

#[test]
fn guards_are_small() {
    use lock_api::RawMutex;
    use ron_core::{Cna, Mcs, Ticket};
    assert_eq!(size_of::<<Mcs as RawMutex>::Guard>(), 0);
    assert_eq!(size_of::<<Cna as RawMutex>::Guard>(), 0);
    assert_eq!(size_of::<<Ticket as RawMutex>::Guard>(), 0);
}

#[test]
fn ron_raw_is_8_bytes() {
    use ron_core::{RonMutex, RonRaw};
    // The lock word and a 32-bit block index, 8-aligned: both on one line.
    assert_eq!(size_of::<RonRaw>(), 8);
    assert_eq!(core::mem::align_of::<RonRaw>(), 8);
    // As small as parking_lot's `Mutex<u64>` (16 bytes).
    assert_eq!(size_of::<lock_api::Mutex<RonRaw, u64>>(), 16);
    assert_eq!(size_of::<RonMutex<u64>>(), 16);
    // The default: `in_use` and a 32-bit block index, as small.
    assert_eq!(size_of::<ron_core::RonGrant>(), 8);
    // A pooled block: its slots and its count's line (plus a flag in builds
    // that count paths); 256 slots with std (32,896 bytes, of which a lock
    // touches only the first `active_slots()`), 16 without.
    if !ron_core::coverage::ENABLED {
        let slots = ron_core::ron_raw::BLOCK_SLOTS;
        assert_eq!(
            size_of::<ron_core::ron_raw::pool::Block>(),
            128 * (slots + 1)
        );
    }
}
