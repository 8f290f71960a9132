//! The conformance suite (`ron_testkit::conformance`) over every lock of
//! `ron_testkit::for_each_lock!`: the full-size type, and for a lock with a
//! slot count `S` also `S` in {1, 2, 3, 64, 65, 256}; plus the parameter
//! variants of the compact and cohort locks. The group table is set to
//! `cpu % 2` (process-wide, installed once; it only changes hints) so that
//! CNA and the cohort locks see two groups.
#![cfg(not(any(loom, shuttle)))]

use ron_core::{CBoMcs, Cna, Fsl, ShRon};
use ron_testkit::{conformance_tests, for_each_lock};

/// Installs two groups (`cpu % 2`) once; every test calls it first.
fn two_groups() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let g: Vec<usize> = (0..ron_core::route::MAX_CPUS).map(|c| c % 2).collect();
        ron_core::groups::install(&g).unwrap();
    });
}

/// One module per lock: the suite over its full-size type, and over a
/// sweep of slot counts when it has one.
macro_rules! suite {
    ($id:ident, $ty:ty, $rec:tt) => {
        mod $id {
            #[allow(unused_imports)]
            use super::*;
            suite!(@one full, $ty, $rec);
            ron_testkit::if_lock!(generic in $rec => {
                suite!(@slots $rec);
            });
        }
    };
    (@slots { name: $n:tt, type_name: $t:tt, kind: $k:tt, generic: $gen:ident, $($rest:tt)* }) => {
        suite!(@one s1, ron_core::$gen<1>, { name: $n, type_name: $t, kind: $k, generic: $gen, $($rest)* });
        suite!(@one s2, ron_core::$gen<2>, { name: $n, type_name: $t, kind: $k, generic: $gen, $($rest)* });
        suite!(@one s3, ron_core::$gen<3>, { name: $n, type_name: $t, kind: $k, generic: $gen, $($rest)* });
        suite!(@one s64, ron_core::$gen<64>, { name: $n, type_name: $t, kind: $k, generic: $gen, $($rest)* });
        suite!(@one s65, ron_core::$gen<65>, { name: $n, type_name: $t, kind: $k, generic: $gen, $($rest)* });
        suite!(@one s256, ron_core::$gen<256>, { name: $n, type_name: $t, kind: $k, generic: $gen, $($rest)* });
    };
    (@one $m:ident, $ty:ty, $rec:tt) => {
        ron_testkit::if_lock!(fair in $rec => {
            conformance_tests!($m, $ty, setup = super::two_groups, fair);
        } else {
            conformance_tests!($m, $ty, setup = super::two_groups);
        });
    };
}

for_each_lock!(suite);

// Parameter variants beyond the list's full size.
conformance_tests!(cna_no_shuffle_reduction_flush_4, Cna<2, false>, setup = two_groups, fair);
conformance_tests!(cna_flush_1, Cna<0, false>, setup = two_groups, fair);
conformance_tests!(cbo_mcs_2, CBoMcs<2>, setup = two_groups, fair);
conformance_tests!(fsl_1, Fsl<1>, setup = two_groups, fair);
conformance_tests!(fsl_2, Fsl<2>, setup = two_groups, fair);
conformance_tests!(fsl_4_of_2, Fsl<4, 2>, setup = two_groups, fair);

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

/// ron-testkit depends on ron-core and ron-core dev-depends on it: the
/// lock types of the list must be this ron-core's, not a second copy's
/// (whose process-wide route, groups and hints would be separate). A
/// second copy fails to compile here.
#[test]
fn the_list_names_this_ron_core() {
    let raw: ron_core::RonRaw = ron_testkit::__rc::RonRaw::new();
    let g = raw.acquire();
    // SAFETY: just acquired.
    unsafe { raw.release(g) };
    let info: &'static str = std::any::type_name::<ron_testkit::__rc::RonRaw>();
    assert_eq!(info, std::any::type_name::<ron_core::RonRaw>());
}
