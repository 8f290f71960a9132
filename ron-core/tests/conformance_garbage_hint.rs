//! The CPU hint is only a locality hint: with a provider that returns
//! garbage (a huge id, a pseudo-random id per call, constant 0: every
//! thread on one CPU), every lock of `ron_testkit::for_each_lock!` must
//! still give mutual exclusion and progress. The provider is process-wide,
//! so this is its own test binary and its tests run one after another (a
//! lock serializes them). The group table is `cpu % 2` throughout.
#![cfg(not(any(loom, shuttle)))]

use std::sync::Mutex as StdMutex;
use std::sync::atomic::{AtomicU64, Ordering};

use ron_core::{NxtRonInline, RonInline, hint};
use ron_testkit::conformance::mutual_exclusion;
use ron_testkit::for_each_lock;

static SERIAL: StdMutex<()> = StdMutex::new(());

fn out_of_range() -> usize {
    usize::MAX - 3
}

fn random() -> usize {
    static STATE: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);
    // Relaxed: any value is a valid (garbage) hint; only variety matters.
    let mut x = STATE.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (x ^ (x >> 29)) as usize
}

fn always_zero() -> usize {
    0
}

fn with_provider(p: hint::Provider, f: impl FnOnce()) {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let g: Vec<usize> = (0..ron_core::route::MAX_CPUS).map(|c| c % 2).collect();
        ron_core::groups::install(&g).unwrap();
    });
    hint::set_provider(p);
    f();
    hint::clear_provider();
}

/// Three garbage providers per lock, for the full-size and the small type.
macro_rules! garbage {
    ($id:ident, $ty:ty, $rec:tt) => {
        mod $id {
            use super::*;
            #[test]
            fn out_of_range_hint() {
                with_provider(out_of_range, || mutual_exclusion::<$ty>(8, 500));
            }
            #[test]
            fn random_hint() {
                with_provider(random, || mutual_exclusion::<$ty>(8, 500));
            }
            #[test]
            fn same_slot_for_everyone() {
                with_provider(always_zero, || mutual_exclusion::<$ty>(8, 500));
            }
        }
    };
}

for_each_lock!(garbage);

mod small {
    use super::*;
    for_each_lock!(garbage, small);
}

/// A route replaced while locks are in use changes only hints.
#[test]
fn route_replaced_while_in_use() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let done = std::sync::atomic::AtomicBool::new(false);
    std::thread::scope(|s| {
        s.spawn(|| {
            let mut flip = false;
            // Relaxed: a stop flag.
            while !done.load(Ordering::Relaxed) {
                let r: Vec<usize> = if flip {
                    (0..8).rev().collect()
                } else {
                    vec![3, 1, 2, 0]
                };
                ron_core::route::install(&r).unwrap();
                flip = !flip;
                std::thread::yield_now();
            }
        });
        mutual_exclusion::<RonInline<4>>(8, 1000);
        mutual_exclusion::<NxtRonInline<3>>(8, 500);
        done.store(true, Ordering::Relaxed);
    });
    ron_core::route::clear();
}
