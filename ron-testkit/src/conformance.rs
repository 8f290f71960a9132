//! The conformance suite: one set of generic checks that every
//! `lock_api::RawMutex` in the workspace must pass.
//!
//! Each check panics with a message naming what broke. The locks' own test
//! files instantiate them with [`conformance_tests!`](crate::conformance_tests).
//!
//! * [`mutual_exclusion`]: a non-atomic read-pause-write counter plus an
//!   occupancy check, with any number of threads (the suite runs 4, and 32
//!   on a 2-core machine).
//! * [`try_lock_semantics`]: fails while held, succeeds when free, and
//!   leaves no state behind (failed attempts by many threads, then normal
//!   contended use must still work).
//! * [`nested`]: threads each holding 8 locks at once.
//! * [`guards_forget_and_move`]: `lock_api::Mutex` guards, `mem::forget` of a
//!   guard (the lock stays held), and moving / dropping a held lock that is
//!   exclusively owned.
//! * [`migration`]: lock on one CPU and unlock after moving to another
//!   (`core_affinity`), with a second thread contending.
//! * [`unlock_fair_and_bump`]: `RawMutexFair` through the guards.
//!
//! Every check runs under a watchdog: a lock that loses a wakeup fails the
//! test once the suite has made no progress for [`WATCHDOG`] (or
//! `RON_WATCHDOG_SECS` seconds), instead of hanging it. The watchdog counts
//! progress (critical sections completed, see [`progress`]), not elapsed
//! time, so a slow check on a loaded machine never trips it.

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use lock_api::{Mutex, RawMutex, RawMutexFair};

/// How long the suite may go without any progress before a check is
/// declared hung (override with the `RON_WATCHDOG_SECS` environment
/// variable).
pub const WATCHDOG: Duration = Duration::from_secs(120);

/// Critical sections completed by the checks of this process (every 64th
/// [`Unsynced::bump`] and every [`progress`] call count one).
static PROGRESS: AtomicU64 = AtomicU64::new(0);

/// Tells the watchdog that a check made progress.
pub fn progress() {
    // Relaxed: a counter the watchdog compares with its last look.
    PROGRESS.fetch_add(1, Ordering::Relaxed);
}

/// The watchdog's limit: `RON_WATCHDOG_SECS` if set, else [`WATCHDOG`].
pub fn watchdog_limit() -> Duration {
    std::env::var("RON_WATCHDOG_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .map_or(WATCHDOG, Duration::from_secs)
}

/// Runs `f` on a helper thread and panics if the process made no progress
/// (see [`progress`]) for [`watchdog_limit`] while `f` ran (a lost wakeup or
/// a deadlock), or re-raises its panic. A check that is merely slow, on a
/// loaded machine, keeps counting and is never stopped.
pub fn with_watchdog<F: FnOnce() + Send + 'static>(what: &str, f: F) {
    let limit = watchdog_limit();
    let (tx, rx) = mpsc::channel();
    let h = std::thread::spawn(move || {
        f();
        let _ = tx.send(());
    });
    let started = Instant::now();
    let mut last = PROGRESS.load(Ordering::Relaxed); // compared with later looks only
    let mut since = Instant::now();
    loop {
        match rx.recv_timeout(Duration::from_secs(1)) {
            Ok(()) => return h.join().expect("check thread"),
            Err(mpsc::RecvTimeoutError::Disconnected) => {
                if let Err(p) = h.join() {
                    std::panic::resume_unwind(p);
                }
                return;
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                let now = PROGRESS.load(Ordering::Relaxed); // as above
                if now != last {
                    last = now;
                    since = Instant::now();
                } else if since.elapsed() >= limit {
                    panic!(
                        "{what}: no critical section completed anywhere in this test process \
                         for {limit:?} (running {:?}): lost wakeup or deadlock \
                         (raise the limit with RON_WATCHDOG_SECS if the machine is \
                         stopped rather than slow)",
                        started.elapsed()
                    )
                }
            }
        }
    }
}

/// Data whose updates are deliberately non-atomic: lost updates show up as
/// a wrong total, and two threads inside at once trip the occupancy check.
pub struct Unsynced {
    value: UnsafeCell<u64>,
    inside: AtomicUsize,
}

// SAFETY: every access to `value` happens inside the lock under test; the
// suite exists to check exactly that.
unsafe impl Sync for Unsynced {}

impl Default for Unsynced {
    fn default() -> Self {
        Self::new()
    }
}

impl Unsynced {
    /// A zeroed counter.
    pub const fn new() -> Self {
        Unsynced {
            value: UnsafeCell::new(0),
            inside: AtomicUsize::new(0),
        }
    }

    /// Read, pause, write: a lost update if two threads do it at once.
    ///
    /// # Safety
    /// The caller holds the lock that guards this counter.
    pub unsafe fn bump(&self) {
        // Relaxed: the count is checked only for "more than one thread
        // inside", which any ordering of RMWs on one atomic reveals.
        let was = self.inside.fetch_add(1, Ordering::Relaxed);
        assert_eq!(was, 0, "two threads inside the critical section");
        // SAFETY: the caller holds the lock (the assertion above checks it
        // as far as one atomic can).
        unsafe {
            let v = std::ptr::read_volatile(self.value.get());
            for _ in 0..4 {
                std::hint::spin_loop();
            }
            std::ptr::write_volatile(self.value.get(), v + 1);
            if v.is_multiple_of(64) {
                progress();
            }
        }
        self.inside.fetch_sub(1, Ordering::Relaxed); // as above
    }

    /// The final value (call once every thread has finished).
    pub fn get(&self) -> u64 {
        // SAFETY: called after all writers joined (documented contract).
        unsafe { std::ptr::read_volatile(self.value.get()) }
    }
}

/// `threads` threads each take the lock `iters` times and bump an
/// [`Unsynced`] counter; the total must be exact.
pub fn mutual_exclusion<R>(threads: usize, iters: usize)
where
    R: RawMutex + Send + Sync + 'static,
{
    with_watchdog("mutual_exclusion", move || {
        mutual_exclusion_checked::<R>(threads, iters, || ())
    });
}

/// As [`mutual_exclusion`] (without its watchdog), running `check` first
/// in every thread: tests of a restricted environment (an affinity mask, a
/// hint provider) assert what each thread sees there.
pub fn mutual_exclusion_checked<R>(threads: usize, iters: usize, check: fn())
where
    R: RawMutex + Send + Sync + 'static,
{
    let m = Arc::new(Mutex::<R, Unsynced>::new(Unsynced::new()));
    std::thread::scope(|s| {
        for _ in 0..threads {
            s.spawn(|| {
                check();
                for i in 0..iters {
                    let g = m.lock();
                    // SAFETY: `g` holds the lock.
                    unsafe { g.bump() };
                    drop(g);
                    if i % 64 == 0 {
                        std::thread::yield_now();
                    }
                }
            });
        }
    });
    let lock = std::any::type_name::<R>();
    assert_eq!(
        m.lock().get(),
        (threads * iters) as u64,
        "lost updates under {lock}"
    );
    assert!(
        !m.is_locked(),
        "{lock} still held after every guard dropped"
    );
}

/// `try_lock` fails while the lock is held (by this or another thread),
/// succeeds when it is free, and failed attempts leave no state behind.
pub fn try_lock_semantics<R>()
where
    R: RawMutex + Send + Sync + 'static,
{
    with_watchdog("try_lock_semantics", || {
        let m = Arc::new(Mutex::<R, u64>::new(0));
        let g = m.try_lock().expect("try_lock on a free lock");
        assert!(m.is_locked());
        assert!(m.try_lock().is_none(), "try_lock succeeded while held");
        let m2 = Arc::clone(&m);
        let other = std::thread::spawn(move || m2.try_lock().is_none())
            .join()
            .unwrap();
        assert!(other, "try_lock from another thread succeeded while held");
        // Many failed attempts from many threads while held...
        let stop = Arc::new(AtomicBool::new(false));
        let hammer: Vec<_> = (0..4)
            .map(|_| {
                let (m, stop) = (Arc::clone(&m), Arc::clone(&stop));
                std::thread::spawn(move || {
                    let mut fails = 0u64;
                    // Relaxed: a stop flag, no data.
                    while !stop.load(Ordering::Relaxed) {
                        if m.try_lock().is_none() {
                            fails += 1;
                        }
                        std::thread::yield_now();
                    }
                    fails
                })
            })
            .collect();
        std::thread::sleep(Duration::from_millis(20));
        drop(g);
        stop.store(true, Ordering::Relaxed);
        for h in hammer {
            h.join().unwrap();
        }
        // ...must leave a lock that is free and works under contention.
        assert!(!m.is_locked(), "lock held after the last guard dropped");
        std::thread::scope(|s| {
            for _ in 0..4 {
                s.spawn(|| {
                    for _ in 0..500 {
                        *m.lock() += 1;
                        if let Some(mut g) = m.try_lock() {
                            *g += 1;
                        }
                    }
                });
            }
        });
        let total = *m.lock();
        assert!((2000..=4000).contains(&total), "total {total}");
        assert!(!m.is_locked());
        assert!(m.try_lock().is_some(), "try_lock on a free lock failed");
    });
}

/// Four threads each take the same 8 locks in one order, hold all of them,
/// bump every counter, and release in reverse order (and once in forward
/// order, since a guard may be dropped in any order).
pub fn nested<R>()
where
    R: RawMutex + Send + Sync + 'static,
{
    with_watchdog("nested", || {
        let locks: Arc<Vec<Mutex<R, Unsynced>>> =
            Arc::new((0..8).map(|_| Mutex::new(Unsynced::new())).collect());
        std::thread::scope(|s| {
            for t in 0..4 {
                let locks = &locks;
                s.spawn(move || {
                    for i in 0..300 {
                        let mut guards: Vec<_> = locks.iter().map(|l| l.lock()).collect();
                        for g in &guards {
                            // SAFETY: each guard holds its lock.
                            unsafe { g.bump() };
                        }
                        if (i + t) % 2 == 0 {
                            guards.reverse();
                        }
                        drop(guards);
                    }
                });
            }
        });
        for l in locks.iter() {
            assert_eq!(l.lock().get(), 1200);
            assert!(!l.is_locked());
        }
    });
}

/// Guards through `lock_api::Mutex`; `mem::forget` of a guard leaves the
/// lock held and nothing broken; a held lock that is exclusively owned may
/// be moved and dropped.
pub fn guards_forget_and_move<R>()
where
    R: RawMutex + Send + Sync + 'static,
{
    with_watchdog("guards_forget_and_move", || {
        let m = Mutex::<R, Vec<u32>>::new(Vec::new());
        m.lock().push(1);
        {
            let mut g = m.lock();
            g.push(2);
            assert!(m.try_lock().is_none());
        }
        assert_eq!(*m.lock(), vec![1, 2]);
        // Forget a guard: the lock stays held.
        std::mem::forget(m.lock());
        assert!(m.is_locked(), "forgotten guard released the lock");
        assert!(m.try_lock().is_none(), "forgotten guard released the lock");
        // Move the held mutex (exclusively owned) and read it out.
        let moved = m;
        assert!(moved.is_locked());
        let boxed = Box::new(moved);
        assert_eq!(boxed.into_inner(), vec![1, 2]);
        // Drop a held lock in place, and many of them.
        for _ in 0..64 {
            let m = Mutex::<R, u8>::new(0);
            std::mem::forget(m.lock());
            drop(m);
        }
        // A lock that was contended, then forgotten while held, then
        // dropped: waiters must be gone first, so contend, join, forget.
        let m = Mutex::<R, u64>::new(0);
        std::thread::scope(|s| {
            for _ in 0..3 {
                s.spawn(|| {
                    for _ in 0..300 {
                        *m.lock() += 1;
                    }
                });
            }
        });
        std::mem::forget(m.lock());
        assert!(m.is_locked());
        drop(m);
        // Locks are usable after many forgotten acquisitions of others.
        let fresh = Mutex::<R, u64>::new(5);
        assert_eq!(*fresh.lock(), 5);
    });
}

/// Lock on one CPU, migrate to another, unlock; a second thread contends
/// all along. Skipped (with a message) when fewer than 2 CPUs are visible.
pub fn migration<R>()
where
    R: RawMutex + Send + Sync + 'static,
{
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    if cores.len() < 2 {
        eprintln!("migration: fewer than 2 CPUs available; skipped");
        return;
    }
    with_watchdog("migration", move || {
        let m = Arc::new(Mutex::<R, Unsynced>::new(Unsynced::new()));
        let stop = Arc::new(AtomicBool::new(false));
        let contender = {
            let (m, stop) = (Arc::clone(&m), Arc::clone(&stop));
            std::thread::spawn(move || {
                let mut n = 0u64;
                // Relaxed: a stop flag.
                while !stop.load(Ordering::Relaxed) || n == 0 {
                    // SAFETY: the guard holds the lock.
                    unsafe { m.lock().bump() };
                    n += 1;
                }
                n
            })
        };
        let mut mine = 0u64;
        for i in 0..400 {
            core_affinity::set_for_current(cores[i % 2]);
            let g = m.lock();
            core_affinity::set_for_current(cores[(i + 1) % 2]);
            // SAFETY: `g` holds the lock.
            unsafe { g.bump() };
            drop(g);
            mine += 1;
        }
        stop.store(true, Ordering::Relaxed);
        let theirs = contender.join().unwrap();
        assert_eq!(
            m.lock().get(),
            mine + theirs,
            "lost updates across migration"
        );
    });
}

/// `unlock_fair` and `bump` through the guards keep mutual exclusion.
pub fn unlock_fair_and_bump<R>()
where
    R: RawMutexFair + Send + Sync + 'static,
{
    with_watchdog("unlock_fair_and_bump", || {
        let m = Mutex::<R, Unsynced>::new(Unsynced::new());
        std::thread::scope(|s| {
            for t in 0..4 {
                let m = &m;
                s.spawn(move || {
                    for i in 0..400 {
                        let mut g = m.lock();
                        // SAFETY: `g` holds the lock.
                        unsafe { g.bump() };
                        if (i + t) % 3 == 0 {
                            lock_api::MutexGuard::bump(&mut g);
                            // SAFETY: `g` holds the lock again after `bump`.
                            unsafe { g.bump() };
                        }
                        lock_api::MutexGuard::unlock_fair(g);
                    }
                });
            }
        });
        let total = m.lock().get();
        // 4 x 400 plus one extra bump per third iteration.
        let extra: u64 = (0..4u64)
            .map(|t| (0..400u64).filter(|i| (i + t) % 3 == 0).count() as u64)
            .sum();
        assert_eq!(total, 1600 + extra);
    });
}

/// Instantiates the whole suite for one lock type, as `#[test]`s in a module.
///
/// `conformance_tests!(mod_name, LockType);` adds `fair` as a third argument
/// (`conformance_tests!(mod_name, LockType, fair);`) for `RawMutexFair`
/// types; `conformance_tests!(mod_name, LockType, setup = path, fair);`
/// calls `path()` at the start of every test (to install a process-wide
/// group table or route once).
#[macro_export]
macro_rules! conformance_tests {
    ($name:ident, $lock:ty, setup = $setup:path $(, $fair:ident)?) => {
        $crate::conformance_tests!(@suite $name, $lock, [$setup] $(, $fair)?);
    };
    ($name:ident, $lock:ty $(, $fair:ident)?) => {
        $crate::conformance_tests!(@suite $name, $lock, [] $(, $fair)?);
    };
    (@suite $name:ident, $lock:ty, [$($setup:path)?] $(, $fair:ident)?) => {
        mod $name {
            #[allow(unused_imports)]
            use super::*;
            use $crate::conformance as c;

            #[test]
            fn mutual_exclusion_4_threads() {
                $($setup();)?
                c::mutual_exclusion::<$lock>(4, 2_000);
            }
            #[test]
            fn mutual_exclusion_32_threads_oversubscribed() {
                $($setup();)?
                c::mutual_exclusion::<$lock>(32, 250);
            }
            #[test]
            fn try_lock_semantics() {
                $($setup();)?
                c::try_lock_semantics::<$lock>();
            }
            #[test]
            fn nested_8_locks() {
                $($setup();)?
                c::nested::<$lock>();
            }
            #[test]
            fn guards_forget_and_move() {
                $($setup();)?
                c::guards_forget_and_move::<$lock>();
            }
            #[test]
            fn migration() {
                $($setup();)?
                c::migration::<$lock>();
            }
            $crate::conformance_tests!(@fair $lock, [$($setup)?] $(, $fair)?);
        }
    };
    (@fair $lock:ty, [$($setup:path)?]) => {};
    (@fair $lock:ty, [$($setup:path)?], fair) => {
        #[test]
        fn unlock_fair_and_bump() {
            $($setup();)?
            $crate::conformance::unlock_fair_and_bump::<$lock>();
        }
    };
}
