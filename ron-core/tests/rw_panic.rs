//! `RonRw` when the CPU hint provider panics (its own process: the
//! provider is process-wide). A biased lock asks the hint on every read,
//! before the reader publishes anything: the panic leaves no count behind,
//! and the lock keeps working once the provider behaves. A writer that
//! must wait asks it too (the CPU that may take a run of writer phases),
//! before it changes anything.
#![cfg(not(any(loom, shuttle, miri)))]

use ron_core::RonRw;
use ron_core::hint;

fn panicking_hint() -> usize {
    panic!("hint provider panics")
}

#[test]
fn read_whose_hint_panics_leaves_nothing() {
    let l = RonRw::new();
    assert!(l.bias_now());
    let held = l.read_in(2); // another reader stays in the table
    hint::set_provider(panicking_hint);
    let r = std::panic::catch_unwind(|| l.read());
    hint::clear_provider();
    assert!(r.is_err(), "the hint was not asked");
    // Only `held` is in: after it leaves, a writer gets in at once.
    assert!(!l.try_write(), "a writer got in past a reader");
    assert!(l.is_held());
    // SAFETY: acquired above.
    unsafe { l.unread(held) };
    assert!(!l.is_held(), "the panicking read left a count");
    assert!(l.try_write());
    // SAFETY: exclusive access held (taken above).
    unsafe { l.unwrite() };
    let t = l.read();
    // SAFETY: acquired above.
    unsafe { l.unread(t) };
    assert!(!l.is_held());

    // A writer that finds the writers' queue held waits: it asks the hint.
    let u = l.read_upgradable();
    hint::set_provider(panicking_hint);
    let w = std::panic::catch_unwind(|| l.write());
    hint::clear_provider();
    assert!(w.is_err(), "the waiting writer did not ask the hint");
    // SAFETY: acquired above.
    unsafe { l.unread_upgradable(u) };
    assert!(!l.is_held(), "the panicking write left the lock held");
    l.write();
    // SAFETY: exclusive access held (taken above).
    unsafe { l.unwrite() };
    assert!(!l.is_held());
}
