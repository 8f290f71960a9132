//! Loom models of `RonCondvar`: a wait racing a notify.
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p ron-core --release --test loom_condvar`.
//!
//! Under loom the futex is replaced by a poll of the sequence counter with
//! a loom yield per look, so a lost wake-up shows up as a waiter that polls
//! forever (loom fails the model on its branch limit). Every model waits on
//! a condition guarded by a `Ttas`, checks the data through a
//! `loom::cell::UnsafeCell`, and counts the paths it is named after: a
//! waiter that really waited (`condvar.sleeps`), a notify that found a
//! waiter registered (`condvar.notify_wakes`) and one that found none
//! (`condvar.notify_skips`).
#![cfg(loom)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use ron_core::{RonCondvar, Ttas, coverage};

struct Shared {
    lock: Ttas,
    cv: RonCondvar<Ttas>,
    ready: UnsafeCell<u32>,
}

// SAFETY: `ready` is only touched while `lock` is held; loom checks it.
unsafe impl Sync for Shared {}

impl Shared {
    fn new() -> Arc<Self> {
        Arc::new(Shared {
            lock: Ttas::new(),
            cv: RonCondvar::new(),
            ready: UnsafeCell::new(0),
        })
    }

    /// Waits (lock held on entry and exit) until `ready >= n`.
    fn wait_for_ready(&self, n: u32) {
        // SAFETY: the lock is held.
        while self.ready.with(|r| unsafe { *r }) < n {
            // SAFETY: we hold the lock; `wait_with` unlocks exactly once.
            self.cv.wait_with(|| unsafe { self.lock.release(()) });
            self.lock.acquire();
        }
    }

    /// `ready += 1` under the lock, then notify (inside or after the lock).
    fn set_ready(&self, all: bool, inside: bool) {
        self.lock.acquire();
        // SAFETY: the lock is held.
        self.ready.with_mut(|r| unsafe { *r += 1 });
        let notify = || {
            if all {
                self.cv.notify_all_raw()
            } else {
                self.cv.notify_one_raw()
            }
        };
        if inside {
            notify();
        }
        // SAFETY: we hold the lock.
        unsafe { self.lock.release(()) };
        if !inside {
            notify();
        }
    }
}

/// One waiter, one notifier.
fn one_waiter(all: bool, inside: bool) {
    loom::model(move || {
        let s = Shared::new();
        let s2 = s.clone();
        let h = thread::spawn(move || s2.set_ready(all, inside));
        s.lock.acquire();
        s.wait_for_ready(1);
        // SAFETY: we hold the lock.
        unsafe { s.lock.release(()) };
        h.join().unwrap();
    });
}

/// Two waiters, one `notify_all` (bounded to one preemption: three
/// threads explored exhaustively take too long).
fn two_waiters_notify_all() {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(1);
    b.max_branches = 50_000;
    b.check(|| {
        let s = Shared::new();
        let hs: Vec<_> = (0..2)
            .map(|_| {
                let s = s.clone();
                thread::spawn(move || {
                    s.lock.acquire();
                    s.wait_for_ready(1);
                    // SAFETY: we hold the lock.
                    unsafe { s.lock.release(()) };
                })
            })
            .collect();
        s.set_ready(true, false);
        for h in hs {
            h.join().unwrap();
        }
    });
}

#[test]
fn wait_races_notify() {
    // One test function: the path counters are process-wide, so the models
    // run one after another and each reads its own counts.
    type Model = (&'static str, fn());
    let models: [Model; 5] = [
        ("notify_one after unlock", || one_waiter(false, false)),
        ("notify_one under the lock", || one_waiter(false, true)),
        ("notify_all after unlock", || one_waiter(true, false)),
        ("notify_all under the lock", || one_waiter(true, true)),
        ("two waiters, notify_all", two_waiters_notify_all),
    ];
    for (name, run) in models {
        coverage::reset();
        run();
        let sleeps = coverage::count("condvar.sleeps");
        let wakes = coverage::count("condvar.notify_wakes");
        let skips = coverage::count("condvar.notify_skips");
        println!("{name}: waits {sleeps}, notifies that woke {wakes}, that skipped {skips}");
        assert!(sleeps > 0, "{name}: no waiter ever waited");
        assert!(wakes > 0, "{name}: no notify ever found a waiter");
        assert!(skips > 0, "{name}: no notify ever came before the wait");
    }
}
