//! Miri workload for `RonRw`: a few threads reading, writing, upgrading
//! and downgrading a plain (non-atomic) value, on an unbiased lock and on
//! a biased one (readers in the visible-readers table, writers revoking).
//! Miri reports a data race on the value if any ordering on the handover
//! or the reader-publication path is too weak for the executions it runs
//! (`.ci/miri` runs it under one scheduler seed, `.ci/miri N` under N).
#![cfg(not(any(loom, shuttle)))]

use std::cell::UnsafeCell;
use std::sync::Arc;

use ron_core::RonRw;

struct Shared {
    lock: RonRw,
    value: UnsafeCell<u64>,
}

// SAFETY: `value` is only accessed under `lock` (what Miri checks).
unsafe impl Sync for Shared {}

fn workload(biased: bool) {
    let s = Arc::new(Shared {
        lock: RonRw::new(),
        value: UnsafeCell::new(0),
    });
    if biased {
        assert!(s.lock.bias_now());
    }
    let hs: Vec<_> = (0..4usize)
        .map(|t| {
            let s = Arc::clone(&s);
            std::thread::spawn(move || {
                for i in 0..6usize {
                    let l = &s.lock;
                    match (t + i) % 4 {
                        0 | 1 => {
                            let r = l.read_in(t);
                            // SAFETY: shared access held.
                            std::hint::black_box(unsafe { *s.value.get() });
                            std::thread::yield_now();
                            // SAFETY: held with `r`.
                            unsafe { l.unread(r) };
                        }
                        2 => {
                            l.write();
                            // SAFETY: exclusive access held.
                            unsafe { *s.value.get() += 1 };
                            // SAFETY: exclusive access held (taken above).
                            let r = unsafe { l.downgrade() };
                            // SAFETY: shared access held.
                            std::hint::black_box(unsafe { *s.value.get() });
                            // SAFETY: held with `r`.
                            unsafe { l.unread(r) };
                        }
                        _ => {
                            let u = l.read_upgradable();
                            // SAFETY: upgradable (shared) access held.
                            std::hint::black_box(unsafe { *s.value.get() });
                            // SAFETY: held with `u`.
                            unsafe { l.upgrade(u) };
                            // SAFETY: exclusive access held.
                            unsafe { *s.value.get() += 1 };
                            // SAFETY: exclusive access held (taken above).
                            unsafe { l.unwrite() };
                        }
                    }
                    if biased && i == 3 {
                        let _ = s.lock.bias_now();
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    // SAFETY: all threads joined.
    assert_eq!(unsafe { *s.value.get() }, 12);
    assert!(!s.lock.is_held());
}

#[test]
fn unbiased() {
    workload(false);
}

#[test]
fn biased() {
    workload(true);
}
