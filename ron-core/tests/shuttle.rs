//! Randomized schedules of many threads, beyond loom's reach: every lock
//! of the crate under shuttle's PCT scheduler (`check_pct`, which finds
//! bugs of depth `d` with a known probability per run) and its uniformly
//! random one (`check_random`) (the small types of
//! `ron_testkit::for_each_lock!`: a lock of the list without a `TestLock`
//! impl here fails to compile), with 4 to 16 threads and thousands of
//! executions per test, where the loom models stop at 2-4 threads and one
//! preemption.
//!
//! Run: `RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR=target/shuttle cargo
//! test -p ron-core --release --test shuttle`. `RON_SHUTTLE_SCALE=N`
//! multiplies the iteration counts (default 1: about a minute on 2 cores;
//! the run time is printed per test with `--nocapture`).
//!
//! Under shuttle every atomic access is a schedule point and every spin
//! yields to the scheduler (`ron_core`'s `sync` module); the CPU hint is the
//! shuttle thread id, so schedules replay from their seed.
//!
//! What each test checks, per lock:
//! * `exclusion_*`: a critical section that reads a plain (non-atomic)
//!   counter, yields, and writes it back, inside an occupancy check: two
//!   threads inside at once fail the occupancy assertion, a lost update the
//!   final count. Slotted locks alternate `acquire` (hint) with `acquire_in`
//!   at adversarial slots (many threads per slot, out-of-range slots), and
//!   the RON family and `ShRon` unlock half the time with a token naming
//!   another slot (a thread that migrated).
//! * `try_and_nested_*`: two locks of the type taken nested in a fixed order,
//!   `try_lock` on both (a success must really own the lock), and the lock
//!   free at the end.
//!
//! A lock whose `TestLock` impl names protocol paths (`PATHS`: `RonPark`'s
//! sleeps and wake-ups) has each of its tests assert them reached
//! (`ron_core::coverage`), one such test at a time.
#![cfg(shuttle)]

use std::cell::UnsafeCell;
use std::sync::Mutex as StdMutex;
use std::time::Instant;

use lock_api::RawMutex;
use ron_core::{
    CBoMcs, Cna, Fsl, Mcs, NxtRon, NxtRonInline, PlaceToken, Ron, RonGrant, RonInline, RonPark,
    RonPlock, RonPlockInline, RonRaw, RonTicket, RonTicketInline, ShRon, Tas, Ticket, Ttas,
    coverage,
};
use ron_testkit::for_each_lock;
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::sync::Arc;
use shuttle::sync::atomic::{AtomicUsize, Ordering};
use shuttle::thread;
use shuttle::{Config, Runner};

/// Iteration multiplier from `RON_SHUTTLE_SCALE` (default 1).
fn scale() -> usize {
    std::env::var("RON_SHUTTLE_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

/// ShRon's wait table and the slot-block pools (of `RonGrant`, `RonRaw`, `NxtRon`,
/// `RonPlock`, `RonTicket`) are process-wide statics whose shuttle atomics
/// must not be touched by two shuttle runs (two test threads) at once.
static SHARED_TABLE: StdMutex<()> = StdMutex::new(());

/// The path counters are process-wide: one test with asserted paths at a
/// time, and only those reset them (no other test here reads them).
static PATH_COUNTS: StdMutex<()> = StdMutex::new(());

/// A lock under test: `lock_api::RawMutex` plus the optional slot entry.
trait TestLock: RawMutex + Send + Sync + 'static {
    /// Whether `lock_in` and `migrate` do more than the defaults.
    const SLOTTED: bool = false;
    /// Whether the lock uses process-wide state: the ShRon table or a
    /// slot-block pool.
    const TABLE: bool = false;
    /// Protocol paths (`ron_core::coverage`) every test of the lock must
    /// reach.
    const PATHS: &'static [&'static str] = &[];
    /// Lock, waiting at slot / row / group `hint` where the lock has one.
    fn lock_in(&self, _hint: usize) -> Self::Guard {
        self.lock()
    }
    /// The guard a thread that migrated to `slot` would unlock with (only
    /// where any slot is safe by contract).
    fn migrate(guard: Self::Guard, _slot: usize) -> Self::Guard {
        guard
    }
}

macro_rules! plain {
    ($($t:ty),*) => {$(impl TestLock for $t {})*};
}
plain!(Tas, Ttas, Ticket, Mcs);

impl TestLock for Cna<1, false> {
    fn lock_in(&self, hint: usize) {
        self.acquire_in(hint)
    }
}

macro_rules! grouped {
    ($($t:ty),*) => {$(
        impl TestLock for $t {
            fn lock_in(&self, hint: usize) -> PlaceToken {
                self.acquire_in(hint)
            }
        }
    )*};
}
grouped!(CBoMcs<2>, Fsl<2, 4>);

macro_rules! slotted {
    ($($t:ty),*) => {slotted!($($t => false),*);};
    ($($t:ty => $shared:expr),*) => {$(
        impl TestLock for $t {
            const SLOTTED: bool = true;
            const TABLE: bool = $shared;
            fn lock_in(&self, hint: usize) -> PlaceToken {
                self.acquire_in(hint)
            }
            fn migrate(_guard: PlaceToken, slot: usize) -> PlaceToken {
                PlaceToken::at(slot)
            }
        }
    )*};
}
slotted!(
    RonInline<4>,
    NxtRonInline<4>,
    RonPlockInline<4>,
    RonTicketInline<4>,
    Ron<4>
);
// Their slots come from a process-wide pool.
slotted!(RonGrant => true, RonRaw => true, NxtRon => true, RonPlock => true, RonTicket => true);

/// Slotted, and its sleeps and wake-ups are the paths its lost wake-ups
/// would hide in, and the hand-over to a starving waiter (every woken
/// waiter that loses starves under shuttle) one where a lock could be
/// lost: each test asserts them reached.
impl TestLock for RonPark<4> {
    const SLOTTED: bool = true;
    const PATHS: &'static [&'static str] =
        &["ron_park.sleeps", "ron_park.wakes", "ron_park.handed_over"];
    fn lock_in(&self, hint: usize) -> PlaceToken {
        self.acquire_in(hint)
    }
    fn migrate(_guard: PlaceToken, slot: usize) -> PlaceToken {
        PlaceToken::at(slot)
    }
}

impl TestLock for ShRon {
    const SLOTTED: bool = true;
    const TABLE: bool = true;
    fn lock_in(&self, hint: usize) -> PlaceToken {
        self.acquire_in(hint)
    }
    fn migrate(_guard: PlaceToken, slot: usize) -> PlaceToken {
        PlaceToken::at(slot)
    }
}

/// A lock, a plain counter it protects, and an occupancy check.
struct Shared<L> {
    lock: L,
    count: UnsafeCell<u64>,
    inside: AtomicUsize,
}

// SAFETY: `count` is only touched while `lock` is held, which the
// occupancy assertion and the final count check.
unsafe impl<L: Sync> Sync for Shared<L> {}

impl<L: TestLock> Shared<L> {
    fn new() -> Arc<Self> {
        Arc::new(Shared {
            lock: L::INIT,
            count: UnsafeCell::new(0),
            inside: AtomicUsize::new(0),
        })
    }

    /// The critical section: enter, read, yield, write, leave.
    fn body(&self) {
        let before = self.inside.fetch_add(1, Ordering::SeqCst);
        assert_eq!(before, 0, "two threads inside the critical section");
        // SAFETY: the lock is held (asserted above).
        let v = unsafe { *self.count.get() };
        thread::yield_now();
        // SAFETY: as above.
        unsafe { *self.count.get() = v + 1 };
        self.inside.fetch_sub(1, Ordering::SeqCst);
    }

    /// One acquisition by thread `t` in round `r`.
    fn round(&self, t: usize, r: usize) {
        let g = if L::SLOTTED && (t + r) % 2 == 1 {
            // Adversarial slots: threads 0, 2, 4.. share slot 0; odd
            // threads name slots far out of range.
            self.lock
                .lock_in(if t.is_multiple_of(2) { 0 } else { t * 1000 + r })
        } else {
            self.lock.lock_in(t)
        };
        self.body();
        let g = if L::SLOTTED && r % 2 == 1 {
            L::migrate(g, t + 1)
        } else {
            g
        };
        // SAFETY: we hold the lock; `migrate` only names another slot where
        // the lock's contract allows any.
        unsafe { self.lock.unlock(g) };
    }

    fn total(&self) -> u64 {
        // SAFETY: every other thread was joined.
        unsafe { *self.count.get() }
    }
}

/// `threads` threads x `rounds` acquisitions; checks the total and that the
/// lock is free at the end.
fn exclusion<L: TestLock>(threads: usize, rounds: usize) {
    let s = Shared::<L>::new();
    let hs: Vec<_> = (1..threads)
        .map(|t| {
            let s = s.clone();
            thread::spawn(move || (0..rounds).for_each(|r| s.round(t, r)))
        })
        .collect();
    (0..rounds).for_each(|r| s.round(0, r));
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(s.total(), (threads * rounds) as u64, "lost update");
    let g = s.lock.try_lock().expect("lock left held");
    // SAFETY: just acquired.
    unsafe { s.lock.unlock(g) };
}

/// Two locks nested in a fixed order, with `try_lock` on each.
fn try_and_nested<L: TestLock>(threads: usize, rounds: usize) {
    let a = Shared::<L>::new();
    let b = Shared::<L>::new();
    let tried = Arc::new(AtomicUsize::new(0));
    let work = move |t: usize, a: &Shared<L>, b: &Shared<L>, tried: &AtomicUsize| {
        for r in 0..rounds {
            if let Some(g) = b.lock.try_lock() {
                b.body();
                tried.fetch_add(1, Ordering::SeqCst);
                // SAFETY: try_lock succeeded.
                unsafe { b.lock.unlock(g) };
            }
            let ga = a.lock.lock_in(t + r);
            a.body();
            let gb = b.lock.lock_in(t);
            b.body();
            // SAFETY: both held; released innermost first.
            unsafe {
                b.lock.unlock(gb);
                a.lock.unlock(ga);
            }
            if let Some(g) = a.lock.try_lock() {
                a.body();
                tried.fetch_add(1, Ordering::SeqCst);
                // SAFETY: try_lock succeeded.
                unsafe { a.lock.unlock(g) };
            }
        }
    };
    let hs: Vec<_> = (1..threads)
        .map(|t| {
            let (a, b, tried) = (a.clone(), b.clone(), tried.clone());
            thread::spawn(move || work(t, &a, &b, &tried))
        })
        .collect();
    work(0, &a, &b, &tried);
    for h in hs {
        h.join().unwrap();
    }
    let n = (threads * rounds) as u64;
    let tries = tried.load(Ordering::SeqCst) as u64;
    assert_eq!(a.total() + b.total(), 2 * n + tries, "lost update");
    for l in [&a.lock, &b.lock] {
        let g = l.try_lock().expect("lock left held");
        // SAFETY: just acquired.
        unsafe { l.unlock(g) };
    }
}

/// Runs `f` under PCT (depth 3) and the random scheduler, `iters` each
/// (times [`scale`]), and prints the time taken. A failure panics with
/// shuttle's report, which prints the schedule to replay.
fn check<L: TestLock>(name: &str, iters: usize, f: fn()) {
    let _table = L::TABLE.then(|| SHARED_TABLE.lock().unwrap_or_else(|e| e.into_inner()));
    let _counts = (!L::PATHS.is_empty()).then(|| {
        let g = PATH_COUNTS.lock().unwrap_or_else(|e| e.into_inner());
        coverage::reset();
        g
    });
    let n = iters * scale();
    let t0 = Instant::now();
    Runner::new(PctScheduler::new(3, n), config()).run(f);
    Runner::new(RandomScheduler::new(n), config()).run(f);
    println!(
        "{name}: {n} PCT + {n} random executions in {:.1?}",
        t0.elapsed()
    );
    for &p in L::PATHS {
        let hits = coverage::count(p);
        println!("{name}: {p} {hits}");
        assert!(hits > 0, "{name}: path {p} never reached");
    }
}

/// Shuttle's configuration: the locks use Acquire/Release, which shuttle
/// runs as SeqCst (weak memory is loom's and Miri's job); it would say so
/// once per run.
fn config() -> Config {
    let mut c = Config::new();
    c.silence_warnings = true;
    c
}

/// A lock with the classic check-then-act race (load, then store): the
/// control that shows the harness catches a lock that does not exclude.
struct Broken(shuttle::sync::atomic::AtomicBool);

// SAFETY: not a mutex; only `harness_catches_a_broken_lock` uses it, and
// expects the failure.
unsafe impl RawMutex for Broken {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Broken(shuttle::sync::atomic::AtomicBool::new(false));
    type Guard = ();
    fn lock(&self) {
        while self.0.load(Ordering::SeqCst) {
            thread::yield_now();
        }
        self.0.store(true, Ordering::SeqCst);
    }
    fn try_lock(&self) -> Option<()> {
        (!self.0.swap(true, Ordering::SeqCst)).then_some(())
    }
    unsafe fn unlock(&self, _: ()) {
        self.0.store(false, Ordering::SeqCst);
    }
    fn is_locked(&self) -> bool {
        self.0.load(Ordering::SeqCst)
    }
}
impl TestLock for Broken {}

/// The control: the same check finds the broken lock's race.
#[test]
#[should_panic(expected = "two threads inside the critical section")]
fn harness_catches_a_broken_lock() {
    Runner::new(PctScheduler::new(3, 1000), config()).run(|| exclusion::<Broken>(4, 3));
}

macro_rules! suite {
    ($m:ident, $t:ty, $rec:tt) => {
        mod $m {
            use super::*;

            #[test]
            fn exclusion_4_threads() {
                check::<$t>(
                    concat!(stringify!($m), "::exclusion_4_threads"),
                    2000,
                    || exclusion::<$t>(4, 3),
                );
            }

            #[test]
            fn exclusion_16_threads() {
                check::<$t>(
                    concat!(stringify!($m), "::exclusion_16_threads"),
                    600,
                    || exclusion::<$t>(16, 2),
                );
            }

            #[test]
            fn try_and_nested_4_threads() {
                check::<$t>(
                    concat!(stringify!($m), "::try_and_nested_4_threads"),
                    1000,
                    || try_and_nested::<$t>(4, 2),
                );
            }
        }
    };
}

for_each_lock!(suite, small);
