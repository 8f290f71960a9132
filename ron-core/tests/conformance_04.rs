//! `lock_api` 0.4 (feature `lock_api_04`): the conformance suite over every
//! lock of `ron_testkit::for_each_lock!` through its 0.4 impl (the direct
//! impl where the lock has one, `Api04<L>` for `CBoMcs` and `Fsl`, and
//! `Api04` over `RonRaw` and `NxtRon` as well), and `lock_api_04::Mutex`
//! over `RonRaw`.
//!
//! The suite is written against `lock_api` 0.5, so each 0.4 lock is run
//! through [`Via04`], a 0.5 `RawMutex` whose every method is one 0.4 call:
//! what the suite checks is the 0.4 impl.
#![cfg(all(feature = "lock_api_04", not(any(loom, shuttle))))]

use ron_core::api04::Api04;
use ron_testkit::{conformance_tests, for_each_lock};

/// A `lock_api` 0.4 raw mutex seen as a 0.5 one (stateless guard).
pub struct Via04<L>(L);

// SAFETY: every method is the 0.4 lock's; a 0.4 lock that keeps mutual
// exclusion gives a 0.5 one that does (the guard state is `()`).
unsafe impl<L: lock_api_04::RawMutexFair> lock_api::RawMutex for Via04<L> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Via04(L::INIT);
    type Guard = ();

    fn lock(&self) {
        self.0.lock()
    }

    fn try_lock(&self) -> Option<()> {
        self.0.try_lock().then_some(())
    }

    unsafe fn unlock(&self, _: ()) {
        // SAFETY: the caller holds the lock (0.5 contract).
        unsafe { self.0.unlock() }
    }

    fn is_locked(&self) -> bool {
        self.0.is_locked()
    }
}

// SAFETY: as above.
unsafe impl<L: lock_api_04::RawMutexFair> lock_api::RawMutexFair for Via04<L> {
    unsafe fn unlock_fair(&self, _: ()) {
        // SAFETY: the caller holds the lock.
        unsafe { self.0.unlock_fair() }
    }

    unsafe fn bump(&self, _: &mut ()) {
        // SAFETY: the caller holds the lock.
        unsafe { self.0.bump() }
    }
}

/// Installs two groups (`cpu % 2`) once; every test calls it first.
fn two_groups() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let g: Vec<usize> = (0..ron_core::route::MAX_CPUS).map(|c| c % 2).collect();
        ron_core::groups::install(&g).unwrap();
    });
}

/// One module per lock, through its 0.4 path.
macro_rules! suite {
    (cbo_mcs, $ty:ty, $rec:tt) => {
        conformance_tests!(cbo_mcs, Via04<Api04<$ty>>, setup = two_groups, fair);
    };
    (fsl, $ty:ty, $rec:tt) => {
        conformance_tests!(fsl, Via04<Api04<$ty>>, setup = two_groups, fair);
    };
    ($id:ident, $ty:ty, $rec:tt) => {
        conformance_tests!($id, Via04<$ty>, setup = two_groups, fair);
    };
}

for_each_lock!(suite);

conformance_tests!(
    api04_ron_raw,
    Via04<Api04<ron_core::RonRaw>>,
    setup = two_groups,
    fair
);
conformance_tests!(
    api04_nxt_ron,
    Via04<Api04<ron_core::NxtRonInline<4>>>,
    setup = two_groups,
    fair
);

/// `lock_api_04::Mutex<RonRaw, T>`: guards, try_lock, timed, contention.
#[test]
fn lock_api_04_mutex_over_ron_raw() {
    use std::time::Duration;
    let m = std::sync::Arc::new(lock_api_04::Mutex::<ron_core::RonRaw, u64>::new(0));
    std::thread::scope(|s| {
        for _ in 0..4 {
            let m = &m;
            s.spawn(move || {
                for i in 0..2000 {
                    if i % 7 == 0 {
                        let mut g = m.try_lock_for(Duration::from_secs(60)).expect("60 s");
                        *g += 1;
                        lock_api_04::MutexGuard::unlock_fair(g);
                    } else {
                        *m.lock() += 1;
                    }
                }
            });
        }
    });
    assert_eq!(*m.lock(), 8000);
    let g = m.lock();
    assert!(m.try_lock().is_none());
    assert!(m.try_lock_for(Duration::from_millis(5)).is_none());
    drop(g);
    assert!(!m.is_locked());
}

/// What `Api04` costs in bytes: the lock plus its 0.5 guard state.
#[test]
fn api04_sizes() {
    use std::mem::size_of;
    assert_eq!(
        size_of::<Api04<ron_core::Ttas>>(),
        size_of::<ron_core::Ttas>()
    );
    assert_eq!(size_of::<Api04<ron_core::RonRaw>>(), 16);
    assert_eq!(
        size_of::<Api04<ron_core::CBoMcs<8>>>(),
        size_of::<ron_core::CBoMcs<8>>() + 128
    );
}
