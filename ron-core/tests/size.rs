//! Bytes per lock, as documented on each type.
#![cfg(not(loom))]

use core::mem::size_of;
use ron_core::{NxtRon, Ron, RonInline, RonPlock, RonRaw, RonTicket};

#[test]
fn ron_family_is_128_bytes_per_slot_plus_lock_word() {
    for (size, slots) in [
        (size_of::<Ron<1>>(), 1),
        (size_of::<Ron<64>>(), 64),
        (size_of::<RonPlock<3>>(), 3),
        (size_of::<RonPlock<256>>(), 256),
        (size_of::<NxtRon<65>>(), 65),
        (size_of::<RonTicket<2>>(), 2),
        (size_of::<RonInline<1>>(), 1),
        (size_of::<RonInline<256>>(), 256),
    ] {
        assert_eq!(size, 128 * (slots + 1), "{slots} slots");
    }
    assert_eq!(size_of::<RonInline>(), 2176, "default RonInline (16 slots)");
    assert_eq!(ron_core::ron_raw::BLOCK_SLOTS, 16);
    assert_eq!(ron_core::ron_raw::DEFAULT_SLOTS, 16);
}

#[test]
fn guard_state_is_one_word_and_send() {
    fn send<T: Send>() {}
    send::<ron_core::SlotToken>();
    assert_eq!(size_of::<ron_core::SlotToken>(), 4);
}

#[test]
fn ron_raw_is_at_most_16_bytes() {
    assert!(
        size_of::<RonRaw>() <= 16,
        "RonRaw takes {} bytes",
        size_of::<RonRaw>()
    );
    if cfg!(target_pointer_width = "64") {
        assert_eq!(size_of::<RonRaw>(), 16);
    }
    // A pooled block: 16 slots and its count's line, what the inline lock
    // takes (plus a flag in builds that count paths).
    if !ron_core::coverage::ENABLED {
        assert_eq!(size_of::<ron_core::ron_raw::pool::Block>(), 2176);
    }
}
