//! A small multi-threaded smoke test of every lock of
//! `ron_testkit::for_each_lock!` (its small types), sized for Miri.
//!
//! `.ci/miri` runs it under Miri (`-Zmiri-permissive-provenance`); it also
//! runs natively (`cargo test -p ron-core --release --test miri_smoke`) in
//! well under a second. Each lock gets 2-5 threads and a dozen or two
//! acquisitions, with a `yield_now` inside every critical section so that
//! Miri's scheduler makes the others wait: MCS/CNA stack nodes are linked
//! and handed between threads through exposed addresses, ShRon claims
//! table columns (allocating pages) and rows and grants them, the RON
//! family registers in and grants slots, the cohort and FSL locks pass
//! their global lock within a group. Locks are driven through
//! `lock_api::RawMutexFair` only; threads choose their waiting room through
//! a CPU hint provider that returns a per-thread place (two threads sharing
//! one), or a different place every time.
//!
//! What fails it: a lost update of the plain `u64` counter (exact totals),
//! two threads inside at once, a lock still held at the end, and under
//! Miri any data race on the counter, use of a dead stack node or page,
//! or other undefined behaviour.
#![cfg(not(loom))]

use std::cell::{Cell, UnsafeCell};
use std::sync::atomic::{AtomicUsize, Ordering};

use lock_api::{RawMutex, RawMutexFair};
use ron_core::{Cna, ShRon};
use ron_testkit::{for_each_lock, if_lock};

/// Acquisitions per thread and lock (Miri runs ~10^4 times slower). Six
/// under Miri: each thread meets every pairing of the three ways to
/// acquire (`i % 3`) and the two ways to release (`i % 2`) once.
const ITERS: usize = if cfg!(miri) { 6 } else { 400 };

/// A counter whose updates are deliberately non-atomic.
struct Counter {
    value: UnsafeCell<u64>,
    inside: AtomicUsize,
}

// SAFETY: `value` is only accessed by `bump` (which requires the lock) and
// by `get` after every writer was joined.
unsafe impl Sync for Counter {}

impl Counter {
    const fn new() -> Self {
        Counter {
            value: UnsafeCell::new(0),
            inside: AtomicUsize::new(0),
        }
    }

    /// Read, yield, write: a lost update (and a Miri data race) if two
    /// threads do it at once.
    ///
    /// # Safety
    /// The caller holds the lock guarding this counter.
    unsafe fn bump(&self) {
        // Relaxed: only "more than one thread inside" is checked.
        let was = self.inside.fetch_add(1, Ordering::Relaxed);
        assert_eq!(was, 0, "two threads inside the critical section");
        // SAFETY: the caller holds the lock.
        let v = unsafe { *self.value.get() };
        std::thread::yield_now();
        // SAFETY: as above.
        unsafe { *self.value.get() = v + 1 };
        self.inside.fetch_sub(1, Ordering::Relaxed); // as above
    }

    /// The total (call after every writer was joined).
    fn get(&self) -> u64 {
        // SAFETY: all writers were joined (scoped threads), which orders
        // their writes before this read.
        unsafe { *self.value.get() }
    }
}

thread_local! {
    /// The CPU hint of this thread (see [`place_hint`]).
    static PLACE: Cell<usize> = const { Cell::new(0) };
}

/// The hint provider of this test binary: the calling thread's [`PLACE`].
fn place_hint() -> usize {
    PLACE.with(Cell::get)
}

/// Sets this thread's CPU hint (installing [`place_hint`] and two groups,
/// `cpu % 2`, once).
fn set_place(at: usize) {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let g: Vec<usize> = (0..ron_core::route::MAX_CPUS).map(|c| c % 2).collect();
        ron_core::groups::install(&g).unwrap();
        ron_core::hint::set_provider(place_hint);
    });
    PLACE.with(|p| p.set(at));
}

/// A lock of the smoke test; its guard state may move between threads.
trait Smoke: RawMutexFair + Send + Sync
where
    Self::Guard: Send,
{
    /// Acquires with CPU hint `at` (any value).
    fn lock_at(&self, at: usize) -> Self::Guard {
        set_place(at);
        self.lock()
    }
}

impl<R: RawMutexFair + Send + Sync> Smoke for R where R::Guard: Send {}

/// The lock is held by this thread while another thread contends and then
/// acquires it through a (probably contended) slow path, and exits with
/// the lock held: its guard state comes back here and is released by this
/// thread. Nothing of the exited thread's stack may still be reachable.
fn handoff_to_exiting_thread<R: Smoke>(lock: &R, at: usize)
where
    R::Guard: Send,
{
    let held = lock.lock();
    let guard = std::thread::scope(|s| {
        let waiter = s.spawn(|| lock.lock_at(at));
        for _ in 0..8 {
            std::thread::yield_now(); // let the waiter queue up
        }
        assert!(lock.try_lock().is_none(), "try_lock succeeded while held");
        // SAFETY: `held` is this thread's acquisition.
        unsafe { lock.unlock(held) };
        waiter.join().expect("waiter thread")
    });
    assert!(lock.is_locked(), "the exited thread's acquisition vanished");
    assert!(lock.try_lock().is_none(), "try_lock succeeded while held");
    // SAFETY: the waiter's acquisition, handed to us with its guard state.
    unsafe { lock.unlock(guard) };
    assert!(!lock.is_locked());
}

/// One thread per entry of `places`, each taking `lock` [`ITERS`] times:
/// through the hint (`lock`), through its place (`lock_at`), or by
/// `try_lock` (falling back to its place), released plainly or fairly.
fn hammer_on<R: Smoke>(lock: &R, places: &[usize])
where
    R::Guard: Send,
{
    let counter = Counter::new();
    std::thread::scope(|s| {
        for &at in places {
            let counter = &counter;
            s.spawn(move || {
                for i in 0..ITERS {
                    let g = match i % 3 {
                        0 => lock.lock_at(i),
                        1 => lock.lock_at(at),
                        _ => match lock.try_lock() {
                            Some(g) => g,
                            None => lock.lock_at(at),
                        },
                    };
                    // SAFETY: `g` holds the lock.
                    unsafe { counter.bump() };
                    if i % 2 == 0 {
                        // SAFETY: `g` is this thread's acquisition.
                        unsafe { lock.unlock(g) };
                    } else {
                        // SAFETY: as above.
                        unsafe { lock.unlock_fair(g) };
                    }
                }
            });
        }
    });
    assert_eq!(
        counter.get(),
        (places.len() * ITERS) as u64,
        "lost updates under {}",
        std::any::type_name::<R>()
    );
    assert!(!lock.is_locked(), "lock still held after every unlock");
    let g = lock.try_lock().expect("free lock refused try_lock");
    // SAFETY: just acquired.
    unsafe { lock.unlock(g) };
}

/// The full smoke test of one lock type: three threads, two of them
/// sharing a waiting room.
fn smoke<R: Smoke>()
where
    R::Guard: Send,
{
    let lock = R::INIT;
    handoff_to_exiting_thread(&lock, 1);
    hammer_on(&lock, &[0, 1, 1]);
}

/// One test per lock of the list (its small type).
macro_rules! smoke_test {
    ($id:ident, $ty:ty, $rec:tt) => {
        if_lock!(fair in $rec => {
            #[test]
            fn $id() {
                smoke::<$ty>();
            }
        });
    };
}

for_each_lock!(smoke_test, small);

/// The default CNA (shuffle reduction, flush after 2^16), beside the
/// list's small one.
#[test]
fn cna_default() {
    smoke::<Cna>();
}

/// CNA's reordering needs a head whose successor is of another group with
/// a linked node of the head's group behind it: five threads alternating
/// two groups, no shuffle reduction, flush after 2 local handovers.
#[test]
fn cna_reordering() {
    let lock = <Cna<1, false>>::INIT;
    handoff_to_exiting_thread(&lock, 1);
    hammer_on(&lock, &[0, 1, 0, 1, 0]);
}

/// ShRon's wait table under concurrent lock creation and drop: each thread
/// creates locks, claims columns (allocating table pages, racing on the
/// first page), contends with a helper in two rows, and drops the lock,
/// once while it is still held (allowed for an exclusively owned lock; it
/// must give its column back).
#[test]
fn sh_ron_columns_concurrent_create_drop() {
    std::thread::scope(|s| {
        for t in 0..3usize {
            s.spawn(move || {
                for round in 0..2usize {
                    let lock = ShRon::<ron_core::relax::SpinThenYield>::new();
                    let col = lock.claim_column().expect("the table has free columns");
                    assert_eq!(lock.column_index(), Some(col));
                    let counter = Counter::new();
                    std::thread::scope(|s2| {
                        for row in [t, t + 1] {
                            let (lock, counter) = (&lock, &counter);
                            s2.spawn(move || {
                                for _ in 0..4 {
                                    let g = lock.acquire_in(row);
                                    // SAFETY: `g` holds the lock.
                                    unsafe { counter.bump() };
                                    // SAFETY: `g` is this thread's acquisition.
                                    unsafe { lock.release(g) };
                                }
                            });
                        }
                    });
                    assert_eq!(counter.get(), 8);
                    assert!(!lock.is_held());
                    if round == 1 {
                        let _forgotten = lock.acquire();
                        assert!(lock.is_held());
                    }
                    drop(lock); // gives the column back, held or not
                }
            });
        }
    });
    let fresh = ShRon::<ron_core::relax::SpinThenYield>::new();
    assert!(fresh.claim_column().is_some());
    let g = fresh.acquire();
    // SAFETY: just acquired.
    unsafe { fresh.release(g) };
}
