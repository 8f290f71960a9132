//! `ron_core::Condvar` (`lock_api::Condvar` over `RonCondvar`) on every
//! lock of `ron_testkit::for_each_lock!` (and with one slot, for those that
//! take a slot count), in the shapes of std's condvar tests: notify_one,
//! notify_all with many waiters, wait_while, a ping-pong that would hang on
//! a lost wake-up, a bounded producer-consumer queue, and (for the locks
//! with `RawMutexTimed`) wait_for / wait_while_for / wait_until.
//!
//! Waiting is always on a condition (spurious wake-ups are allowed), and no
//! assertion depends on speed: the only clock checks are the lower bounds
//! that a timed-out wait promises. A lost wake-up hangs a check, which the
//! conformance watchdog turns into a failure (the long loops report
//! progress to it, so a slow machine does not).

use std::collections::VecDeque;
use std::sync::Arc;
use std::time::{Duration, Instant};

use lock_api::{Mutex, RawMutex, RawMutexTimed};
use ron_core::Condvar;
use ron_testkit::conformance::{progress, with_watchdog};
use ron_testkit::{for_each_lock, if_lock};

/// A lock that a condvar test can run on.
trait Lock: RawMutex + Send + Sync + 'static {}
impl<R: RawMutex + Send + Sync + 'static> Lock for R {}

/// One waiter, one notifier: the waiter sees the flag the notifier set.
fn notify_one<R: Lock>() {
    with_watchdog("condvar notify_one", || {
        let pair = Arc::new((Mutex::<R, bool>::new(false), Condvar::<R>::new()));
        let p2 = Arc::clone(&pair);
        let h = std::thread::spawn(move || {
            let (m, cv) = &*p2;
            *m.lock() = true;
            cv.notify_one();
        });
        let (m, cv) = &*pair;
        let mut g = m.lock();
        while !*g {
            cv.wait(&mut g);
        }
        drop(g);
        h.join().unwrap();
    });
}

/// `n` waiters all block until one `notify_all` (std's `notify_all` test):
/// every waiter registers in a counter, the notifier waits (on a second
/// condvar) until all did, then flips the flag once.
fn notify_all<R: Lock>(n: usize) {
    with_watchdog("condvar notify_all", move || {
        struct State {
            waiting: usize,
            go: bool,
            woken: usize,
        }
        let m = Arc::new(Mutex::<R, State>::new(State {
            waiting: 0,
            go: false,
            woken: 0,
        }));
        let (cv, all_in) = (Arc::new(Condvar::<R>::new()), Arc::new(Condvar::<R>::new()));
        let hs: Vec<_> = (0..n)
            .map(|_| {
                let (m, cv, all_in) = (Arc::clone(&m), Arc::clone(&cv), Arc::clone(&all_in));
                std::thread::spawn(move || {
                    let mut g = m.lock();
                    g.waiting += 1;
                    if g.waiting == n {
                        all_in.notify_one();
                    }
                    cv.wait_while(&mut g, |s| !s.go);
                    g.woken += 1;
                })
            })
            .collect();
        let mut g = m.lock();
        all_in.wait_while(&mut g, |s| s.waiting < n);
        g.go = true;
        cv.notify_all();
        drop(g);
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(m.lock().woken, n);
    });
}

/// `notify_one` repeated until every waiter got through: each notify lets
/// at least one waiter run (or none is left waiting).
fn notify_one_each<R: Lock>(n: usize) {
    with_watchdog("condvar notify_one each", move || {
        // (tokens available, threads done)
        let m = Arc::new(Mutex::<R, (usize, usize)>::new((0, 0)));
        let cv = Arc::new(Condvar::<R>::new());
        let done_cv = Arc::new(Condvar::<R>::new());
        let hs: Vec<_> = (0..n)
            .map(|_| {
                let (m, cv, done_cv) = (Arc::clone(&m), Arc::clone(&cv), Arc::clone(&done_cv));
                std::thread::spawn(move || {
                    let mut g = m.lock();
                    cv.wait_while(&mut g, |s| s.0 == 0);
                    g.0 -= 1;
                    g.1 += 1;
                    done_cv.notify_one();
                })
            })
            .collect();
        for i in 0..n {
            let mut g = m.lock();
            g.0 += 1;
            cv.notify_one();
            // Wait until that token was taken before handing out the next:
            // a lost notify_one would leave it untaken forever.
            done_cv.wait_while(&mut g, |s| s.1 <= i);
        }
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(*m.lock(), (0, n));
    });
}

/// Two threads hand a turn back and forth `rounds` times through one
/// condvar and `notify_all`: a lost wake-up stops the game.
fn ping_pong<R: Lock>(rounds: u32) {
    with_watchdog("condvar ping_pong", move || {
        let pair = Arc::new((Mutex::<R, u32>::new(0), Condvar::<R>::new()));
        let p2 = Arc::clone(&pair);
        let h = std::thread::spawn(move || {
            let (m, cv) = &*p2;
            for i in 0..rounds {
                let mut g = m.lock();
                cv.wait_while(&mut g, |t| *t != 2 * i + 1);
                *g += 1;
                progress();
                cv.notify_all();
            }
        });
        let (m, cv) = &*pair;
        for i in 0..rounds {
            let mut g = m.lock();
            cv.wait_while(&mut g, |t| *t != 2 * i);
            *g += 1;
            cv.notify_one();
        }
        h.join().unwrap();
        assert_eq!(*m.lock(), 2 * rounds);
    });
}

/// A bounded queue (capacity 4) with `not_empty` / `not_full` condvars,
/// 3 producers and 3 consumers: every item arrives exactly once.
fn producer_consumer<R: Lock>() {
    const PER: u64 = 2_000;
    const CAP: usize = 4;
    with_watchdog("condvar producer_consumer", || {
        let q = Arc::new(Mutex::<R, (VecDeque<u64>, u32)>::new((VecDeque::new(), 0)));
        let not_empty = Arc::new(Condvar::<R>::new());
        let not_full = Arc::new(Condvar::<R>::new());
        let producers: Vec<_> = (0..3u64)
            .map(|p| {
                let (q, not_empty, not_full) = (
                    Arc::clone(&q),
                    Arc::clone(&not_empty),
                    Arc::clone(&not_full),
                );
                std::thread::spawn(move || {
                    for i in 0..PER {
                        let mut g = q.lock();
                        not_full.wait_while(&mut g, |s| s.0.len() == CAP);
                        g.0.push_back(p * PER + i);
                        progress();
                        not_empty.notify_one();
                    }
                    let mut g = q.lock();
                    g.1 += 1;
                    not_empty.notify_all();
                })
            })
            .collect();
        let consumers: Vec<_> = (0..3)
            .map(|_| {
                let (q, not_empty, not_full) = (
                    Arc::clone(&q),
                    Arc::clone(&not_empty),
                    Arc::clone(&not_full),
                );
                std::thread::spawn(move || {
                    let mut got = Vec::new();
                    loop {
                        let mut g = q.lock();
                        not_empty.wait_while(&mut g, |s| s.0.is_empty() && s.1 < 3);
                        match g.0.pop_front() {
                            Some(v) => {
                                got.push(v);
                                not_full.notify_one();
                            }
                            None => return got,
                        }
                    }
                })
            })
            .collect();
        for h in producers {
            h.join().unwrap();
        }
        let mut all: Vec<u64> = consumers
            .into_iter()
            .flat_map(|h| h.join().unwrap())
            .collect();
        all.sort_unstable();
        assert_eq!(
            all,
            (0..3 * PER).collect::<Vec<_>>(),
            "items lost or duplicated"
        );
    });
}

/// Notifying with nobody waiting is harmless and buffers nothing that would
/// break a later wait's condition loop.
fn notify_without_waiters<R: Lock>() {
    with_watchdog("condvar notify_without_waiters", || {
        let m = Mutex::<R, u32>::new(0);
        let cv = Condvar::<R>::new();
        assert!(
            !cv.notify_one(),
            "spurious wake-ups allowed: notify_one says false"
        );
        assert_eq!(
            cv.notify_all(),
            0,
            "spurious wake-ups allowed: notify_all says 0"
        );
        let mut g = m.lock();
        *g += 1;
        drop(g);
        assert!(!m.is_locked());
    });
}

/// The timed locks use std's clock types.
trait TimedLock: Lock + RawMutexTimed<Duration = Duration, Instant = Instant> {}
impl<R: Lock + RawMutexTimed<Duration = Duration, Instant = Instant>> TimedLock for R {}

/// `wait_for` with nobody notifying times out, not before its timeout, and
/// holds the lock again; `wait_while_for` returns early (not timed out)
/// once another thread makes the condition false; `wait_until` in the past
/// times out at once.
fn wait_timeout<R: TimedLock>() {
    with_watchdog("condvar wait_timeout", || {
        let pair = Arc::new((Mutex::<R, bool>::new(false), Condvar::<R>::new()));
        let (m, cv) = &*pair;
        let mut g = m.lock();
        for timeout in [
            Duration::ZERO,
            Duration::from_millis(1),
            Duration::from_millis(20),
        ] {
            let t0 = Instant::now();
            let r = cv.wait_for(&mut g, timeout);
            if r.timed_out() {
                assert!(
                    t0.elapsed() >= timeout,
                    "wait_for({timeout:?}) timed out early"
                );
            }
            assert!(m.is_locked(), "wait_for returned without the lock");
        }
        let t0 = Instant::now();
        let r = cv.wait_while_for(&mut g, |ready| !*ready, Duration::from_millis(20));
        assert!(
            r.timed_out(),
            "wait_while_for: condition still true, so it timed out"
        );
        assert!(
            t0.elapsed() >= Duration::from_millis(20),
            "wait_while_for timed out early"
        );
        let r = cv.wait_until(&mut g, Instant::now() - Duration::from_millis(1));
        assert!(r.timed_out(), "wait_until(past) must time out");
        drop(g);

        let p2 = Arc::clone(&pair);
        let h = std::thread::spawn(move || {
            let (m, cv) = &*p2;
            *m.lock() = true;
            cv.notify_all();
        });
        let mut g = m.lock();
        // Generous: a loaded machine may be slow to run the notifier.
        let r = cv.wait_while_for(&mut g, |ready| !*ready, Duration::from_secs(600));
        assert!(
            !r.timed_out(),
            "the condition became false before the deadline"
        );
        assert!(*g);
        drop(g);
        h.join().unwrap();
        assert!(!m.is_locked());
    });
}

macro_rules! condvar_tests {
    ($name:ident, $lock:ty $(, $timed:ident)?) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;

            #[test]
            fn notify_one() {
                super::notify_one::<$lock>();
            }
            #[test]
            fn notify_all_10_waiters() {
                super::notify_all::<$lock>(10);
            }
            #[test]
            fn notify_one_each_of_8_waiters() {
                super::notify_one_each::<$lock>(8);
            }
            #[test]
            fn ping_pong_500() {
                super::ping_pong::<$lock>(500);
            }
            #[test]
            fn producer_consumer() {
                super::producer_consumer::<$lock>();
            }
            #[test]
            fn notify_without_waiters() {
                super::notify_without_waiters::<$lock>();
            }
            condvar_tests!(@timed $lock $(, $timed)?);
        }
    };
    (@timed $lock:ty) => {};
    (@timed $lock:ty, timed) => {
        #[test]
        fn wait_timeout() {
            super::wait_timeout::<$lock>();
        }
    };
}

/// The condvar tests of one lock (full size, and with one slot when it
/// takes a slot count); `wait_timeout` for the timed locks.
macro_rules! each {
    ($id:ident, $ty:ty, $rec:tt) => {
        mod $id {
            use super::*;
            if_lock!(timed in $rec => {
                condvar_tests!(full, $ty, timed);
            } else {
                condvar_tests!(full, $ty);
            });
            each!(@s1 $rec);
        }
    };
    (@s1 { name: $n:tt, type_name: $t:tt, kind: $k:tt, generic: none, $($rest:tt)* }) => {};
    (@s1 { name: $n:tt, type_name: $t:tt, kind: $k:tt, generic: $gen:ident, fair: $f:tt, timed: true, $($rest:tt)* }) => {
        condvar_tests!(s1, ron_core::$gen<1>, timed);
    };
    (@s1 { name: $n:tt, type_name: $t:tt, kind: $k:tt, generic: $gen:ident, $($rest:tt)* }) => {
        condvar_tests!(s1, ron_core::$gen<1>);
    };
}

for_each_lock!(each);
