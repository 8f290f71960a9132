//! The conformance suite over the baseline and compact locks: Tas, Ttas,
//! Ticket, Mcs, Cna, CBoMcs, Fsl, ShRon. CNA and the cohort lock run with the
//! group table set to `cpu % 2` (process-wide, installed once at test start;
//! it only changes hints).

use ron_core::{CBoMcs, Cna, Fsl, Mcs, ShRon, Tas, Ticket, Ttas};
use ron_suite::conformance_tests;

/// Installs two groups (`cpu % 2`) once; every test calls it first.
fn two_groups() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let g: Vec<usize> = (0..ron_core::route::MAX_CPUS).map(|c| c % 2).collect();
        ron_core::groups::install(&g).unwrap();
    });
}

/// The suite (same checks and counts as `conformance_tests!`) with
/// [`two_groups`] installed before each check.
macro_rules! grouped_tests {
    ($name:ident, $lock:ty) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            use ron_suite::conformance as c;

            #[test]
            fn mutual_exclusion_4_threads() {
                two_groups();
                c::mutual_exclusion::<$lock>(4, 2_000);
            }
            #[test]
            fn mutual_exclusion_32_threads_oversubscribed() {
                two_groups();
                c::mutual_exclusion::<$lock>(32, 250);
            }
            #[test]
            fn try_lock_semantics() {
                two_groups();
                c::try_lock_semantics::<$lock>();
            }
            #[test]
            fn nested_8_locks() {
                two_groups();
                c::nested::<$lock>();
            }
            #[test]
            fn guards_forget_and_move() {
                two_groups();
                c::guards_forget_and_move::<$lock>();
            }
            #[test]
            fn migration() {
                two_groups();
                c::migration::<$lock>();
            }
            #[test]
            fn unlock_fair_and_bump() {
                two_groups();
                c::unlock_fair_and_bump::<$lock>();
            }
        }
    };
}

conformance_tests!(tas, Tas);
conformance_tests!(ttas, Ttas);
conformance_tests!(ticket, Ticket, fair);
conformance_tests!(mcs, Mcs);
grouped_tests!(cna_default, Cna);
grouped_tests!(cna_no_shuffle_reduction_flush_4, Cna<2, false>);
grouped_tests!(cna_flush_1, Cna<0, false>);
grouped_tests!(cbo_mcs_default, CBoMcs);
grouped_tests!(cbo_mcs_2, CBoMcs<2>);
conformance_tests!(fsl_1, Fsl<1>, fair);
conformance_tests!(fsl_2, Fsl<2>, fair);
conformance_tests!(fsl_4, Fsl<4>, fair);
conformance_tests!(fsl_4_of_2, Fsl<4, 2>, fair);
conformance_tests!(sh_ron, ShRon, fair);

/// Many ShRon locks contended and dropped: columns come back (the table
/// does not run out) and a dropped held lock returns its column.
#[test]
fn sh_ron_columns_are_returned() {
    use lock_api::Mutex;
    for _ in 0..200 {
        let m = Mutex::<ShRon, u64>::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..200 {
                        *m.lock() += 1;
                    }
                });
            }
        });
        std::mem::forget(m.lock()); // held at drop: the column must come back
        drop(m);
    }
    // After all those drops a fresh lock still gets a low column when contended.
    let m = Mutex::<ShRon, u64>::new(0);
    std::thread::scope(|s| {
        for _ in 0..4 {
            s.spawn(|| {
                for _ in 0..2000 {
                    *m.lock() += 1;
                }
            });
        }
    });
    assert_eq!(*m.lock(), 8000);
    // SAFETY: only reads the raw lock's column index; nothing is unlocked
    // or relocked through the reference.
    if let Some(c) = unsafe { m.raw() }.column_index() {
        assert!(c < 1024, "columns leaked: got column {c}");
    }
}
