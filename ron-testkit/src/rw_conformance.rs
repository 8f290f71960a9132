//! The reader-writer conformance suite: the shapes of std's and
//! parking_lot's `RwLock` tests, generic over any `lock_api::RawRwLock`.
//!
//! * [`smoke`]: read, read twice, write, `try_*` against each mode (std
//!   `smoke`, `test_rwlock_try_write`).
//! * [`frob`]: threads doing random reads and writes (std `frob`), with
//!   an occupancy check: a writer inside with anyone else fails.
//! * [`rw_arc`]: one writer bumping a counter in two steps with a yield in
//!   between, readers that must never see the odd middle state (std
//!   `test_rw_arc`, parking_lot `test_rw_arc`).
//! * [`access_in_unwind`]: a read guard dropped during a panic's unwinding
//!   (std / parking_lot `test_rw_arc_access_in_unwind`), and panics while
//!   holding either mode leave the lock usable (parking_lot's
//!   `test_rw_arc_no_poison_*`).
//! * [`forget_and_move`]: forgotten guards keep their mode; a held lock
//!   exclusively owned may be moved and dropped; `into_inner`, `get_mut`.
//! * [`migration`]: read and write guards dropped on another CPU.
//! * [`downgrade`]: std `test_downgrade_basic` / `test_downgrade_atomic`
//!   (no writer gets in between the downgrade and the read), parking_lot
//!   `test_rw_downgrade`.
//! * [`upgradable`]: parking_lot `test_ruw_arc` (upgradable readers and
//!   writers bump, plain readers check), `test_rwlock_try_upgrade`.
//! * [`timed`]: `try_*_for` fails after its timeout while the other mode
//!   is held, succeeds when free; mixed timed traffic stays exclusive.
//!
//! Every check runs under the mutex suite's watchdog
//! ([`crate::conformance::with_watchdog`]).

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::Duration;

use lock_api::{
    RawRwLock, RawRwLockDowngrade, RawRwLockTimed, RawRwLockUpgrade, RwLock,
    RwLockUpgradableReadGuard, RwLockWriteGuard,
};

use crate::conformance::{progress, with_watchdog};

/// Who is inside: readers count up from 0, a writer sets a high bit; a
/// writer with anyone else, or a reader with a writer, panics.
#[derive(Default)]
pub struct Occupancy(AtomicUsize);

const WRITER: usize = 1 << 40;

impl Occupancy {
    /// A reader comes in.
    pub fn read_in(&self) {
        // Relaxed: only "a writer and someone else at once" is checked,
        // which any ordering of RMWs on one atomic reveals.
        let was = self.0.fetch_add(1, Ordering::Relaxed);
        assert!(was < WRITER, "a reader inside with a writer");
    }
    /// A reader leaves.
    pub fn read_out(&self) {
        self.0.fetch_sub(1, Ordering::Relaxed); // as above
    }
    /// A writer comes in.
    pub fn write_in(&self) {
        let was = self.0.fetch_add(WRITER, Ordering::Relaxed); // as above
        assert_eq!(was, 0, "a writer inside with others ({was:#x})");
    }
    /// A writer leaves.
    pub fn write_out(&self) {
        self.0.fetch_sub(WRITER, Ordering::Relaxed); // as above
    }
}

/// A small xorshift, per thread.
fn rng(seed: u64) -> impl FnMut() -> u64 {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    move || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    }
}

/// std `smoke` and `test_rwlock_try_write`.
pub fn smoke<R: RawRwLock + Send + Sync + 'static>() {
    with_watchdog("rw smoke", || {
        let l = RwLock::<R, u32>::new(1);
        drop(l.read());
        drop(l.write());
        drop((l.read(), l.read()));
        drop(l.write());
        {
            let _r = l.read();
            assert!(l.is_locked());
            assert!(!l.is_locked_exclusive());
            assert!(l.try_write().is_none(), "try_write with a reader in");
            assert!(l.try_read().is_some(), "try_read with a reader in");
        }
        {
            let mut w = l.write();
            *w = 2;
            assert!(l.is_locked_exclusive());
            assert!(l.try_read().is_none(), "try_read with a writer in");
            assert!(l.try_write().is_none(), "try_write with a writer in");
        }
        assert!(!l.is_locked());
        assert_eq!(*l.try_write().expect("try_write on a free lock"), 2);
        assert_eq!(*l.try_read().expect("try_read on a free lock"), 2);
    });
}

/// std `frob`: `threads` threads, `iters` random reads (probability
/// `read_pct` %) and writes each; occupancy and the write count are
/// checked.
pub fn frob<R: RawRwLock + Send + Sync + 'static>(threads: usize, iters: usize, read_pct: u64) {
    with_watchdog("rw frob", move || {
        let l = Arc::new(RwLock::<R, u64>::new(0));
        let occ = Arc::new(Occupancy::default());
        let writes = Arc::new(AtomicUsize::new(0));
        std::thread::scope(|s| {
            for t in 0..threads {
                let (l, occ, writes) = (&l, &occ, &writes);
                s.spawn(move || {
                    let mut r = rng(t as u64 + 1);
                    for i in 0..iters {
                        if r() % 100 < read_pct {
                            let g = l.read();
                            occ.read_in();
                            let v = *g;
                            std::hint::black_box(v);
                            occ.read_out();
                            drop(g);
                        } else {
                            let mut g = l.write();
                            occ.write_in();
                            *g += 1;
                            occ.write_out();
                            drop(g);
                            writes.fetch_add(1, Ordering::Relaxed); // a count
                        }
                        if i % 64 == 0 {
                            progress();
                            std::thread::yield_now();
                        }
                    }
                });
            }
        });
        assert_eq!(
            *l.read() as usize,
            writes.load(Ordering::Relaxed),
            "lost writes"
        );
        assert!(!l.is_locked());
    });
}

/// std / parking_lot `test_rw_arc`: a writer moves the value through an
/// odd middle state with a yield in it; readers never see it.
pub fn rw_arc<R: RawRwLock + Send + Sync + 'static>() {
    with_watchdog("rw arc", || {
        let l = Arc::new(RwLock::<R, u64>::new(0));
        let (tx, rx) = mpsc::channel();
        let writer = {
            let l = Arc::clone(&l);
            std::thread::spawn(move || {
                let mut w = l.write();
                for _ in 0..10 {
                    let tmp = *w;
                    *w = u64::MAX;
                    std::thread::yield_now();
                    *w = tmp + 1;
                }
                drop(w);
                tx.send(()).unwrap();
            })
        };
        let readers: Vec<_> = (0..5)
            .map(|_| {
                let l = Arc::clone(&l);
                std::thread::spawn(move || {
                    for _ in 0..200 {
                        let r = l.read();
                        assert_ne!(*r, u64::MAX, "a reader saw a writer's middle state");
                        progress();
                    }
                })
            })
            .collect();
        for r in readers {
            r.join().unwrap();
        }
        rx.recv().unwrap();
        writer.join().unwrap();
        assert_eq!(*l.read(), 10);
    });
}

/// A read guard dropped while a panic unwinds, and panics while holding
/// either mode: the lock stays usable (no poisoning in lock_api).
pub fn access_in_unwind<R: RawRwLock + Send + Sync + 'static>() {
    with_watchdog("rw access in unwind", || {
        let l = Arc::new(RwLock::<R, u32>::new(1));
        let l2 = Arc::clone(&l);
        let r = std::thread::spawn(move || {
            struct Unwinder<R: RawRwLock>(Arc<RwLock<R, u32>>);
            impl<R: RawRwLock> Drop for Unwinder<R> {
                fn drop(&mut self) {
                    let mut w = self.0.write();
                    *w += 1;
                }
            }
            let _u = Unwinder(l2);
            panic!("unwinding with a write in a destructor");
        })
        .join();
        assert!(r.is_err());
        assert_eq!(*l.read(), 2);
        for write in [false, true] {
            let l2 = Arc::clone(&l);
            let r = std::thread::spawn(move || {
                if write {
                    let _g = l2.write();
                    panic!("panic while writing");
                } else {
                    let _g = l2.read();
                    panic!("panic while reading");
                }
            })
            .join();
            assert!(r.is_err());
            assert!(!l.is_locked(), "a guard dropped in unwinding kept the lock");
            *l.write() += 1;
        }
        assert_eq!(*l.read(), 4);
    });
}

/// Forgotten guards keep their mode; a held lock that is exclusively owned
/// may be moved and dropped; `into_inner` and `get_mut`.
pub fn forget_and_move<R: RawRwLock + Send + Sync + 'static>() {
    with_watchdog("rw forget and move", || {
        let l = RwLock::<R, Vec<u32>>::new(vec![1]);
        std::mem::forget(l.read());
        assert!(l.is_locked() && !l.is_locked_exclusive());
        assert!(
            l.try_write().is_none(),
            "a forgotten read guard stopped counting"
        );
        assert_eq!(*l.read(), vec![1]);
        let mut moved = l;
        moved.get_mut().push(2);
        assert_eq!(moved.into_inner(), vec![1, 2]);
        let l = RwLock::<R, u8>::new(0);
        std::mem::forget(l.write());
        assert!(l.is_locked_exclusive());
        assert!(l.try_read().is_none());
        drop(l);
        // Many locks, read-held and forgotten, then dropped; fresh locks
        // (possibly at the same addresses) are free.
        for _ in 0..64 {
            let l = Box::new(RwLock::<R, u8>::new(0));
            std::mem::forget(l.read());
            drop(l);
            let fresh = Box::new(RwLock::<R, u8>::new(0));
            assert!(
                fresh.try_write().is_some(),
                "a fresh lock inherited a reader"
            );
        }
    });
}

/// Read and write guards dropped after moving to another CPU, with a
/// contender. Skipped (with a message) with fewer than 2 CPUs.
pub fn migration<R: RawRwLock + Send + Sync + 'static>() {
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if cores.len() < 2 {
        eprintln!("rw migration: fewer than 2 CPUs available; skipped");
        return;
    }
    with_watchdog("rw migration", move || {
        let l = Arc::new(RwLock::<R, u64>::new(0));
        let stop = Arc::new(AtomicBool::new(false));
        let contender = {
            let (l, stop) = (Arc::clone(&l), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut n = 0u64;
                // Relaxed: a stop flag.
                while !stop.load(Ordering::Relaxed) || n == 0 {
                    *l.write() += 1;
                    n += 1;
                    std::hint::black_box(*l.read());
                }
                n
            })
        };
        let mut mine = 0;
        for i in 0..400 {
            core_affinity::set_for_current(cores[i % 2]);
            let r = l.read();
            core_affinity::set_for_current(cores[(i + 1) % 2]);
            drop(r);
            let mut w = l.write();
            core_affinity::set_for_current(cores[i % 2]);
            *w += 1;
            drop(w);
            mine += 1;
            progress();
        }
        stop.store(true, Ordering::Relaxed);
        let theirs = contender.join().unwrap();
        assert_eq!(*l.read(), mine + theirs, "lost writes across migration");
        assert!(!l.is_locked());
    });
}

/// std's downgrade tests and parking_lot's `test_rw_downgrade`.
pub fn downgrade<R: RawRwLockDowngrade + Send + Sync + 'static>() {
    with_watchdog("rw downgrade", || {
        // Basic.
        let l = RwLock::<R, u32>::new(0);
        let mut w = l.write();
        *w = 5;
        let r = RwLockWriteGuard::downgrade(w);
        assert_eq!(*r, 5);
        assert!(l.try_read().is_some(), "another reader after a downgrade");
        assert!(l.try_write().is_none());
        drop(r);
        assert!(!l.is_locked());
        // Atomic: writers keep writing, a downgrader writes a mark and must
        // read it back after downgrading (no writer between).
        let l = Arc::new(RwLock::<R, u64>::new(0));
        std::thread::scope(|s| {
            for t in 0..3u64 {
                let l = &l;
                s.spawn(move || {
                    for i in 0..500u64 {
                        let mut w = l.write();
                        let mark = (t << 32) | i;
                        *w = mark;
                        let r = RwLockWriteGuard::downgrade(w);
                        assert_eq!(*r, mark, "a writer got in during a downgrade");
                        drop(r);
                        if i % 32 == 0 {
                            progress();
                        }
                    }
                });
            }
            for _ in 0..2 {
                let l = &l;
                s.spawn(move || {
                    for _ in 0..500 {
                        std::hint::black_box(*l.read());
                    }
                });
            }
        });
        assert!(!l.is_locked());
    });
}

/// parking_lot's `test_ruw_arc` and `test_rwlock_try_upgrade`.
pub fn upgradable<R: RawRwLockUpgrade + Send + Sync + 'static>() {
    with_watchdog("rw upgradable", || {
        let l = Arc::new(RwLock::<R, (u64, u64)>::new((0, 0)));
        let occ = Arc::new(Occupancy::default());
        std::thread::scope(|s| {
            // Upgradable readers that upgrade, and writers: both move
            // (a, b) to (a+1, a+1) through (a+1, b) with a yield in between.
            for t in 0..4 {
                let (l, occ) = (&l, &occ);
                s.spawn(move || {
                    for i in 0..300 {
                        let mut w = if (i + t) % 2 == 0 {
                            let u = l.upgradable_read();
                            assert!(u.0 == u.1, "an upgradable reader saw a torn pair");
                            if i % 3 == 0 {
                                match RwLockUpgradableReadGuard::try_upgrade(u) {
                                    Ok(w) => w,
                                    Err(u) => RwLockUpgradableReadGuard::upgrade(u),
                                }
                            } else {
                                RwLockUpgradableReadGuard::upgrade(u)
                            }
                        } else {
                            l.write()
                        };
                        occ.write_in();
                        w.0 += 1;
                        std::thread::yield_now();
                        w.1 = w.0;
                        occ.write_out();
                        drop(w);
                        progress();
                    }
                });
            }
            // Plain readers check the pair is never torn.
            for _ in 0..2 {
                let (l, occ) = (&l, &occ);
                s.spawn(move || {
                    for _ in 0..1000 {
                        let r = l.read();
                        occ.read_in();
                        assert_eq!(r.0, r.1, "a reader saw a torn pair");
                        occ.read_out();
                    }
                });
            }
        });
        assert_eq!(*l.read(), (1200, 1200));
        // try_upgrade fails while another reader is in, then succeeds.
        let l = RwLock::<R, u32>::new(0);
        let u = l.upgradable_read();
        assert!(l.try_upgradable_read().is_none(), "two upgradable readers");
        assert!(l.try_write().is_none());
        let r = l.read();
        let u = RwLockUpgradableReadGuard::try_upgrade(u).expect_err("upgraded past a reader");
        drop(r);
        let mut w = RwLockUpgradableReadGuard::try_upgrade(u).expect("try_upgrade alone");
        *w = 1;
        drop(w);
        let u = l.upgradable_read();
        assert_eq!(*u, 1);
        assert!(l.try_read().is_some(), "a reader next to an upgradable one");
        drop(u);
        assert!(l.try_upgradable_read().is_some());
        assert!(!l.is_locked());
    });
}

/// Timed attempts: fail after the timeout while the other mode is held,
/// succeed when free; mixed timed traffic keeps exclusion.
pub fn timed<R>()
where
    R: RawRwLockTimed<Duration = Duration> + Send + Sync + 'static,
{
    with_watchdog("rw timed", || {
        let l = Arc::new(RwLock::<R, u64>::new(0));
        let w = l.write();
        let l2 = Arc::clone(&l);
        assert!(
            std::thread::spawn(move || l2.try_read_for(Duration::from_millis(20)).is_none())
                .join()
                .unwrap(),
            "a timed read got in past a writer"
        );
        drop(w);
        let r = l.read();
        let l2 = Arc::clone(&l);
        assert!(
            std::thread::spawn(move || l2.try_write_for(Duration::from_millis(20)).is_none())
                .join()
                .unwrap(),
            "a timed write got in past a reader"
        );
        drop(r);
        assert!(!l.is_locked(), "a failed timed attempt left something held");
        let occ = Arc::new(Occupancy::default());
        let writes = AtomicUsize::new(0);
        std::thread::scope(|s| {
            for t in 0..4u64 {
                let (l, occ, writes) = (&l, &occ, &writes);
                s.spawn(move || {
                    let mut r = rng(t + 11);
                    for _ in 0..600 {
                        let d = Duration::from_micros(r() % 200);
                        if r().is_multiple_of(2) {
                            if let Some(g) = l.try_read_for(d) {
                                occ.read_in();
                                std::hint::black_box(*g);
                                occ.read_out();
                            }
                        } else if let Some(mut g) = l.try_write_for(d) {
                            occ.write_in();
                            *g += 1;
                            occ.write_out();
                            writes.fetch_add(1, Ordering::Relaxed); // a count
                        }
                        progress();
                    }
                });
            }
        });
        assert_eq!(*l.read() as usize, writes.load(Ordering::Relaxed));
        assert!(!l.is_locked());
        assert!(l.try_write_for(Duration::from_secs(60)).is_some());
    });
}

/// Instantiates the reader-writer suite for one lock type as `#[test]`s in
/// a module: `rw_conformance_tests!(name, Lock);` for a `RawRwLock`, with
/// `downgrade`, `upgradable` and `timed` as extra words for the traits the
/// lock has (`rw_conformance_tests!(name, Lock, downgrade, upgradable,
/// timed);`).
#[macro_export]
macro_rules! rw_conformance_tests {
    ($name:ident, $lock:ty $(, $extra:ident)*) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            use $crate::rw_conformance as c;

            #[test]
            fn smoke() {
                c::smoke::<$lock>();
            }
            #[test]
            fn frob_10_threads_90_pct_reads() {
                c::frob::<$lock>(10, 1_000, 90);
            }
            #[test]
            fn frob_32_threads_50_pct_reads_oversubscribed() {
                c::frob::<$lock>(32, 300, 50);
            }
            #[test]
            fn frob_4_threads_100_pct_reads() {
                c::frob::<$lock>(4, 3_000, 100);
            }
            #[test]
            fn rw_arc() {
                c::rw_arc::<$lock>();
            }
            #[test]
            fn access_in_unwind() {
                c::access_in_unwind::<$lock>();
            }
            #[test]
            fn forget_and_move() {
                c::forget_and_move::<$lock>();
            }
            #[test]
            fn migration() {
                c::migration::<$lock>();
            }
            $($crate::rw_conformance_tests!(@$extra $lock);)*
        }
    };
    (@downgrade $lock:ty) => {
        #[test]
        fn downgrade() {
            $crate::rw_conformance::downgrade::<$lock>();
        }
    };
    (@upgradable $lock:ty) => {
        #[test]
        fn upgradable() {
            $crate::rw_conformance::upgradable::<$lock>();
        }
    };
    (@timed $lock:ty) => {
        #[test]
        fn timed() {
            $crate::rw_conformance::timed::<$lock>();
        }
    };
}
