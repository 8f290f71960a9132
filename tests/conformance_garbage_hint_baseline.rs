//! The baseline and compact locks under garbage CPU hints: a huge id, a
//! pseudo-random id per call, and constant 0 (every thread on one CPU). The
//! hint provider is process-wide, so this is its own test binary and the
//! three providers run one after another in one test.

use ron_core::{CBoMcs, Cna, Fsl, Mcs, ShRon, Tas, Ticket, Ttas};
use ron_suite::conformance::mutual_exclusion;
use std::sync::atomic::{AtomicU64, Ordering};

fn huge() -> usize {
    usize::MAX - 3
}

fn random() -> usize {
    static STATE: AtomicU64 = AtomicU64::new(0x9E37_79B9_7F4A_7C15);
    // Relaxed: any value will do; the point is garbage.
    let mut x = STATE.fetch_add(0x9E37_79B9_7F4A_7C15, Ordering::Relaxed);
    x ^= x >> 31;
    x = x.wrapping_mul(0xBF58_476D_1CE4_E5B9);
    (x ^ (x >> 29)) as usize
}

fn zero() -> usize {
    0
}

fn all_locks() {
    mutual_exclusion::<Tas>(8, 500);
    mutual_exclusion::<Ttas>(8, 500);
    mutual_exclusion::<Ticket>(8, 500);
    mutual_exclusion::<Mcs>(8, 500);
    mutual_exclusion::<Cna>(8, 500);
    mutual_exclusion::<Cna<0, false>>(8, 500);
    mutual_exclusion::<CBoMcs>(8, 500);
    mutual_exclusion::<CBoMcs<2>>(8, 500);
    mutual_exclusion::<Fsl<1>>(8, 500);
    mutual_exclusion::<Fsl<2>>(8, 500);
    mutual_exclusion::<Fsl<4>>(8, 500);
    mutual_exclusion::<ShRon>(8, 500);
}

#[test]
fn garbage_hints() {
    let g: Vec<usize> = (0..ron_core::route::MAX_CPUS).map(|c| c % 2).collect();
    ron_core::groups::install(&g).unwrap();
    for (name, p) in [
        ("huge", huge as fn() -> usize),
        ("random", random),
        ("zero", zero),
    ] {
        eprintln!("hint provider: {name}");
        ron_core::hint::set_provider(p);
        all_locks();
    }
    ron_core::hint::clear_provider();
}
