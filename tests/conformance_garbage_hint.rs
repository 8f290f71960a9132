//! The CPU hint is only a locality hint: with a provider that returns
//! garbage, every RON-family lock must still give mutual exclusion and
//! progress. The provider is process-wide, so this is its own test binary
//! and its tests run one after another (a lock serializes them).

use std::sync::Mutex as StdMutex;
use std::sync::atomic::{AtomicU64, Ordering};

use ron_core::{NxtRon, Ron, RonInline, RonPlock, RonRaw, RonTicket, hint};
use ron_suite::conformance::mutual_exclusion;

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
    hint::set_provider(p);
    f();
    hint::clear_provider();
}

macro_rules! garbage {
    ($name:ident, $lock:ty) => {
        mod $name {
            use super::*;
            #[test]
            fn out_of_range_hint() {
                with_provider(out_of_range, || mutual_exclusion::<$lock>(8, 500));
            }
            #[test]
            fn random_hint() {
                with_provider(random, || mutual_exclusion::<$lock>(8, 500));
            }
            #[test]
            fn same_slot_for_everyone() {
                with_provider(always_zero, || mutual_exclusion::<$lock>(8, 500));
            }
        }
    };
}

garbage!(ron_raw, RonRaw);
garbage!(ron_inline_3, RonInline<3>);
garbage!(nxt_ron_65, NxtRon<65>);
garbage!(ron_plock_3, RonPlock<3>);
garbage!(ron_ticket_3, RonTicket<3>);
garbage!(ron_alg1_3, Ron<3>);
garbage!(ron_alg1_64, Ron<64>);

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
        mutual_exclusion::<NxtRon<3>>(8, 500);
        done.store(true, Ordering::Relaxed);
    });
    ron_core::route::clear();
}
