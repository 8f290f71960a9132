//! The last user of a lock may free it as soon as it holds the lock for
//! the last time, while an earlier owner is still inside its `unlock`:
//! an unlock must not touch the lock's memory once the lock can be taken
//! by another thread (the rule `std`'s and parking_lot's mutexes keep; the
//! shape of a reference count guarded by the lock it sits beside).
//!
//! Each round boxes a lock beside a plain count of the acquisitions left;
//! two threads lock it four times each, yield inside the critical section
//! (so the other waits and, in the RON family, registers in a pooled
//! block), and the thread whose acquisition takes the count to zero frees
//! the box right after its own unlock. Natively it checks that exactly one
//! acquisition freed the box (a lost or doubled update of the count shows
//! there). Run under Miri (`cargo +nightly miri test -p ron-core --test
//! free_after_unlock`), an unlock that reads or writes the lock after
//! making it available is a use after free, if the schedule hits its
//! window; it missed the pooled locks' window of a few instructions in 8
//! seeds, so `.ci/miri` does not run it, and the loom models
//! `loom_coverage`'s `pooled::*_last_user_frees` check those locks.
#![cfg(not(loom))]

use std::cell::UnsafeCell;
use std::sync::atomic::{AtomicUsize, Ordering};

use lock_api::RawMutex;
use ron_testkit::for_each_lock;

/// Rounds per lock type (Miri runs ~10^4 times slower).
const ROUNDS: usize = if cfg!(miri) { 12 } else { 300 };
/// Threads per round.
const THREADS: usize = 2;
/// Acquisitions per thread and round.
const EACH: usize = 4;

/// A lock beside the number of acquisitions still to come.
struct Shared<R> {
    lock: R,
    left: UnsafeCell<usize>,
}

/// A pointer to a round's box, sent to its threads.
struct Ptr<R>(*mut Shared<R>);

impl<R> Clone for Ptr<R> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<R> Copy for Ptr<R> {}

// SAFETY: the box outlives every use: only the thread that takes `left` to
// zero frees it, after its own last use, and every other thread's last
// access to the box is its unlock before that acquisition.
unsafe impl<R> Send for Ptr<R> {}

/// One round: `THREADS` threads, the last acquisition frees the lock.
fn round<R: RawMutex + Send + Sync>() {
    let shared = Box::into_raw(Box::new(Shared {
        lock: R::INIT,
        left: UnsafeCell::new(THREADS * EACH),
    }));
    let ptr = Ptr(shared);
    let frees = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for _ in 0..THREADS {
            let frees = &frees;
            s.spawn(move || {
                let ptr = ptr;
                for _ in 0..EACH {
                    // SAFETY: the box is alive: this thread has
                    // acquisitions to come, so `left` is not zero yet.
                    let sh = unsafe { &*ptr.0 };
                    let g = sh.lock.lock();
                    // SAFETY: we hold the lock guarding `left`.
                    let last = unsafe {
                        *sh.left.get() -= 1;
                        *sh.left.get() == 0
                    };
                    std::thread::yield_now();
                    // SAFETY: `g` is this thread's acquisition.
                    unsafe { sh.lock.unlock(g) };
                    if last {
                        // SAFETY: every acquisition is done and each
                        // other thread's last access to the box was its
                        // unlock; the lock must not be touched after that.
                        drop(unsafe { Box::from_raw(ptr.0) });
                        // Relaxed: read after the threads are joined.
                        frees.fetch_add(1, Ordering::Relaxed);
                    }
                }
            });
        }
    });
    assert_eq!(
        frees.load(Ordering::Relaxed), // joined: every write is visible
        1,
        "the count reached zero {} times under {}",
        frees.load(Ordering::Relaxed),
        std::any::type_name::<R>()
    );
}

/// One test per lock of the list (its small type).
macro_rules! free_test {
    ($id:ident, $ty:ty, $rec:tt) => {
        #[test]
        fn $id() {
            for _ in 0..ROUNDS {
                round::<$ty>();
            }
        }
    };
}

for_each_lock!(free_test, small);
