//! The reader-writer conformance suite (`ron_testkit::rw_conformance`,
//! std's and parking_lot's `RwLock` test shapes) over every reader-writer
//! lock: `RonRw` through lock_api 0.5, and (feature `lock_api_04`) through
//! its 0.4 impl; also over a reader-writer lock biased from the start (its
//! readers in the table) with two groups installed.
#![cfg(not(any(loom, shuttle)))]

use ron_core::RonRw;
use ron_testkit::rw_conformance_tests;

rw_conformance_tests!(ron_rw, RonRw, downgrade, upgradable, timed);

/// `RonRw` through `lock_api` 0.4, seen as a 0.5 lock (stateless guards):
/// what the suite checks is the 0.4 impl.
#[cfg(feature = "lock_api_04")]
mod via04 {
    use lock_api_04::{
        RawRwLock as R04, RawRwLockDowngrade as D04, RawRwLockTimed as T04, RawRwLockUpgrade as U04,
    };

    pub struct Via04(ron_core::RonRw);

    // SAFETY: every method is the 0.4 impl's; guard states are `()`.
    unsafe impl lock_api::RawRwLock for Via04 {
        #[allow(clippy::declare_interior_mutable_const)]
        const INIT: Self = Via04(<ron_core::RonRw as lock_api_04::RawRwLock>::INIT);
        type SharedGuard = ();
        type ExclusiveGuard = ();
        fn lock_shared(&self) {
            R04::lock_shared(&self.0)
        }
        fn try_lock_shared(&self) -> Option<()> {
            R04::try_lock_shared(&self.0).then_some(())
        }
        unsafe fn unlock_shared(&self, _: ()) {
            // SAFETY: the caller holds shared access.
            unsafe { R04::unlock_shared(&self.0) }
        }
        fn lock_exclusive(&self) {
            R04::lock_exclusive(&self.0)
        }
        fn try_lock_exclusive(&self) -> Option<()> {
            R04::try_lock_exclusive(&self.0).then_some(())
        }
        unsafe fn unlock_exclusive(&self, _: ()) {
            // SAFETY: the caller holds exclusive access.
            unsafe { R04::unlock_exclusive(&self.0) }
        }
        fn is_locked(&self) -> bool {
            R04::is_locked(&self.0)
        }
        fn is_locked_exclusive(&self) -> bool {
            R04::is_locked_exclusive(&self.0)
        }
    }

    // SAFETY: as above.
    unsafe impl lock_api::RawRwLockDowngrade for Via04 {
        unsafe fn downgrade(&self, _: ()) {
            // SAFETY: the caller holds exclusive access.
            unsafe { D04::downgrade(&self.0) }
        }
    }

    // SAFETY: as above.
    unsafe impl lock_api::RawRwLockTimed for Via04 {
        type Duration = std::time::Duration;
        type Instant = std::time::Instant;
        fn try_lock_shared_for(&self, t: Self::Duration) -> Option<()> {
            T04::try_lock_shared_for(&self.0, t).then_some(())
        }
        fn try_lock_shared_until(&self, t: Self::Instant) -> Option<()> {
            T04::try_lock_shared_until(&self.0, t).then_some(())
        }
        fn try_lock_exclusive_for(&self, t: Self::Duration) -> Option<()> {
            T04::try_lock_exclusive_for(&self.0, t).then_some(())
        }
        fn try_lock_exclusive_until(&self, t: Self::Instant) -> Option<()> {
            T04::try_lock_exclusive_until(&self.0, t).then_some(())
        }
    }

    // SAFETY: as above.
    unsafe impl lock_api::RawRwLockUpgrade for Via04 {
        type UpgradableGuard = ();
        fn lock_upgradable(&self) {
            U04::lock_upgradable(&self.0)
        }
        fn try_lock_upgradable(&self) -> Option<()> {
            U04::try_lock_upgradable(&self.0).then_some(())
        }
        unsafe fn unlock_upgradable(&self, _: ()) {
            // SAFETY: the caller holds upgradable access.
            unsafe { U04::unlock_upgradable(&self.0) }
        }
        unsafe fn upgrade(&self, _: ()) {
            // SAFETY: as above.
            unsafe { U04::upgrade(&self.0) }
        }
        unsafe fn try_upgrade(&self, _: ()) -> Result<(), ()> {
            // SAFETY: as above.
            if unsafe { U04::try_upgrade(&self.0) } {
                Ok(())
            } else {
                Err(())
            }
        }
    }

    ron_testkit::rw_conformance_tests!(ron_rw_04, Via04, downgrade, upgradable, timed);
}

/// `RonRw` used so that it is biased (readers in the table) for most of
/// the suite: reads are made contended first.
mod biased {
    use std::sync::atomic::{AtomicBool, Ordering};

    use ron_core::RonRw;

    /// Makes `l` biased: contended reads until it is (with a cap).
    fn bias(l: &RonRw) {
        let stop = AtomicBool::new(false);
        std::thread::scope(|s| {
            s.spawn(|| {
                // Relaxed: a stop flag.
                while !stop.load(Ordering::Relaxed) {
                    let t = l.read_in(1);
                    std::thread::yield_now();
                    // SAFETY: just acquired with `t`.
                    unsafe { l.unread(t) };
                }
            });
            for _ in 0..200_000 {
                if l.is_biased() {
                    break;
                }
                let t = l.read_in(0);
                std::thread::yield_now();
                // SAFETY: just acquired with `t`.
                unsafe { l.unread(t) };
            }
            stop.store(true, Ordering::Relaxed);
        });
    }

    #[test]
    fn reads_bias_the_lock_and_a_write_revokes() {
        let l = RonRw::new();
        bias(&l);
        assert!(l.is_biased(), "contended reads never biased the lock");
        let a = l.read_in(0);
        let b = l.read_in(5);
        assert_ne!(a.slot(), None, "a biased read was counted centrally");
        assert_ne!(a.slot(), b.slot(), "two groups share a slot");
        assert!(!l.try_write(), "try_write with table readers in");
        assert!(l.is_biased(), "a failed try_write must give the bias back");
        // SAFETY: acquired above.
        unsafe {
            l.unread(a);
            l.unread(b);
        }
        assert!(!l.is_held());
        l.write();
        assert!(!l.is_biased());
        // SAFETY: exclusive access held (taken above).
        unsafe { l.unwrite() };
    }

    /// Readers counted in the table migrate (unlock from another group's
    /// point of view) and a writer still waits for them.
    #[test]
    fn table_readers_exclude_a_writer() {
        let l = std::sync::Arc::new(RonRw::new());
        bias(&l);
        let t = l.read_in(3);
        assert!(t.slot().is_some());
        let l2 = std::sync::Arc::clone(&l);
        let done = std::sync::Arc::new(AtomicBool::new(false));
        let d2 = std::sync::Arc::clone(&done);
        let w = std::thread::spawn(move || {
            l2.write();
            d2.store(true, Ordering::SeqCst);
            // SAFETY: exclusive access held (taken above).
            unsafe { l2.unwrite() };
        });
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(
            !done.load(Ordering::SeqCst),
            "a writer got in past a table reader"
        );
        // SAFETY: acquired above.
        unsafe { l.unread(t) };
        w.join().unwrap();
        assert!(done.load(Ordering::SeqCst));
    }
}
