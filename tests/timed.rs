//! `lock_api::RawMutexTimed` on every ron-core lock that implements it:
//! `try_lock_for` gives up while another thread holds the lock (and not
//! before its timeout), `try_lock_until` with a past instant is one
//! attempt, a waiter that gives up leaves the lock fully usable, and timed
//! waiters mixed with plain ones keep mutual exclusion.
//!
//! No assertion depends on speed: the only clock checks are the lower
//! bounds `lock_api` promises (a failed attempt never returns early).

use std::sync::Arc;
use std::sync::Barrier;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lock_api::{Mutex, RawMutexTimed};
use ron_core::{Ron, RonPark, Tas, Ttas};
use ron_suite::Unsynced;
use ron_suite::conformance::with_watchdog;

/// The timed locks under test use std's clock types.
trait StdTimed: RawMutexTimed<Duration = Duration, Instant = Instant> + Send + Sync + 'static {}
impl<R: RawMutexTimed<Duration = Duration, Instant = Instant> + Send + Sync + 'static> StdTimed
    for R
{
}

/// While another thread holds the lock, `try_lock_for` fails, and not
/// before its timeout; once the holder lets go, the lock works as before.
fn gives_up_while_held<R: StdTimed>() {
    with_watchdog("gives_up_while_held", || {
        let m = Arc::new(Mutex::<R, u64>::new(0));
        let held = Arc::new(Barrier::new(2));
        let done = Arc::new(Barrier::new(2));
        let holder = {
            let (m, held, done) = (Arc::clone(&m), Arc::clone(&held), Arc::clone(&done));
            std::thread::spawn(move || {
                let mut g = m.lock();
                held.wait();
                done.wait();
                *g += 1;
            })
        };
        held.wait();
        for timeout in [
            Duration::ZERO,
            Duration::from_millis(1),
            Duration::from_millis(30),
        ] {
            let t0 = Instant::now();
            assert!(
                m.try_lock_for(timeout).is_none(),
                "try_lock_for({timeout:?}) took a held lock"
            );
            assert!(
                t0.elapsed() >= timeout,
                "try_lock_for({timeout:?}) gave up early"
            );
        }
        let past = Instant::now() - Duration::from_millis(5);
        assert!(
            m.try_lock_until(past).is_none(),
            "try_lock_until(past) took a held lock"
        );
        let until = Instant::now() + Duration::from_millis(10);
        assert!(m.try_lock_until(until).is_none());
        assert!(Instant::now() >= until, "try_lock_until gave up early");
        done.wait();
        holder.join().unwrap();
        // The lock is free and fully usable.
        assert!(!m.is_locked(), "a timed-out waiter left the lock held");
        {
            let mut g = m
                .try_lock_until(past)
                .expect("try_lock_until(past) on a free lock");
            *g += 1;
        }
        *m.try_lock_for(Duration::ZERO)
            .expect("try_lock_for(0) on a free lock") += 1;
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..500 {
                        *m.lock() += 1;
                    }
                });
            }
        });
        assert_eq!(*m.lock(), 2003);
    });
}

/// A waiter with a long timeout gets the lock when the holder releases it.
fn succeeds_when_released<R: StdTimed>() {
    with_watchdog("succeeds_when_released", || {
        let m = Arc::new(Mutex::<R, u64>::new(0));
        let g = m.lock();
        let waiting = Arc::new(Barrier::new(2));
        let waiter = {
            let (m, waiting) = (Arc::clone(&m), Arc::clone(&waiting));
            std::thread::spawn(move || {
                waiting.wait();
                // Generous: a loaded machine may take long to run the holder.
                let mut g = m.try_lock_for(Duration::from_secs(600)).expect("timed out");
                *g += 1;
            })
        };
        waiting.wait();
        drop(g);
        waiter.join().unwrap();
        assert_eq!(*m.lock(), 1);
        // A timeout too large for `Instant` means "wait forever".
        *m.try_lock_for(Duration::MAX)
            .expect("try_lock_for(MAX) on a free lock") += 1;
        assert_eq!(*m.lock(), 2);
    });
}

/// Threads mixing `lock`, `try_lock_for` with short timeouts and
/// `try_lock_until`: exact count of successful critical sections, and a
/// free, working lock at the end (timed-out waiters left nothing behind).
fn mixed_contention<R: StdTimed>(threads: usize) {
    with_watchdog("mixed_contention", move || {
        let m = Arc::new(Mutex::<R, Unsynced>::new(Unsynced::new()));
        let wins = Arc::new(AtomicU64::new(0));
        std::thread::scope(|s| {
            for t in 0..threads {
                let (m, wins) = (&m, &wins);
                s.spawn(move || {
                    for i in 0..300u32 {
                        let g = match (i + t as u32) % 4 {
                            0 => Some(m.lock()),
                            1 => m.try_lock_for(Duration::from_micros(u64::from(i % 50))),
                            2 => m.try_lock_until(Instant::now() + Duration::from_micros(20)),
                            _ => m.try_lock_for(Duration::ZERO),
                        };
                        if let Some(g) = g {
                            // SAFETY: `g` holds the lock.
                            unsafe { g.bump() };
                            // Relaxed: a count read after the threads joined.
                            wins.fetch_add(1, Ordering::Relaxed);
                        }
                    }
                });
            }
        });
        assert!(!m.is_locked(), "lock held after every thread finished");
        assert_eq!(m.lock().get(), wins.load(Ordering::Relaxed));
        assert!(m.try_lock_for(Duration::ZERO).is_some());
    });
}

macro_rules! timed_tests {
    ($name:ident, $lock:ty) => {
        mod $name {
            use super::*;

            #[test]
            fn gives_up_while_held() {
                super::gives_up_while_held::<$lock>();
            }
            #[test]
            fn succeeds_when_released() {
                super::succeeds_when_released::<$lock>();
            }
            #[test]
            fn mixed_contention_4_threads() {
                super::mixed_contention::<$lock>(4);
            }
            #[test]
            fn mixed_contention_16_threads_oversubscribed() {
                super::mixed_contention::<$lock>(16);
            }
        }
    };
}

timed_tests!(tas, Tas);
timed_tests!(ttas, Ttas);
timed_tests!(ron_1, Ron<1>);
timed_tests!(ron_2, Ron<2>);
timed_tests!(ron_64, Ron<64>);
timed_tests!(ron_park, RonPark);
timed_tests!(ron_park_1, RonPark<1>);
timed_tests!(ron_park_64, RonPark<64>);
use ron_core::{RonInline, RonRaw};
timed_tests!(ron_raw, RonRaw);
timed_tests!(ron_inline, RonInline);
timed_tests!(ron_inline_2, RonInline<2>);
