//! Parking for `RonRaw` and `RonInline` waiters (`std` only): a waiter
//! whose CPU looks shared, or whose wait grew long, sleeps on a futex
//! instead of yielding, and one waiter per lock stays awake as its
//! *watcher*. Nothing here decides who owns the lock (the lock word does);
//! this only decides who is awake to take it.
//!
//! ## Why a watcher, and not a wake-up from the release
//! A release that frees an uncontended lock is a load (the block index)
//! and a blind store of `FREE`. A release that loaded before a waiter
//! registered as a sleeper and stores after it fell asleep wakes nobody,
//! whatever orderings both sides use (an interleaving, not a reordering);
//! only a read-modify-write release (or a fence and a load after its
//! store) could see the sleeper, and that would cost every uncontended
//! unlock. So the releases stay as they are, and liveness comes from the
//! waiters: while a lock has sleepers, one of its waiters is awake (it
//! spins and yields as before, and so takes the lock like any unparked
//! waiter). When the watcher gets the lock (or gives up, or unwinds) it
//! leaves, and if it was the last watcher it wakes one sleeper, which
//! becomes the next watcher. The waker pays (one `futex` wake); the
//! sleeper pays no fence and no `membarrier`.
//!
//! ## The bucket
//! A process-wide table of [`BUCKETS`] buckets, a lock's bucket chosen by
//! a hash of its address. A bucket is one 64-bit word and a futex word:
//!
//! | bits of `word` | meaning |
//! |---|---|
//! | 0..8 | watchers: awake waiters that took the watch |
//! | 8..20 | sleepers: registered (asleep, or about to sleep) |
//! | 20..64 | the owning lock's address / 8 (0 while both counts are 0) |
//!
//! Every change is one read-modify-write of `word`, so the counts and the
//! owner change together: a bucket serves one lock at a time (a waiter
//! of another lock that hashes there does not park; it yields as before).
//! `epoch` (the futex word) counts wake-ups.
//!
//! ## Why no wake-up is lost
//! A sleeper reads `epoch`, then registers (an RMW that requires a
//! watcher, else it makes the caller the watcher), then sleeps while
//! `epoch` is unchanged. A leaving watcher's RMW reads the word after
//! every registration it counts (one location: coherence), and, when it
//! leaves no watcher behind, bumps `epoch` and wakes one thread. Each
//! counted sleeper read `epoch` before its registration (Release), which
//! the leave read (Acquire), so its read happens before the bump and
//! cannot see it: it is either in the futex queue (the wake finds one
//! thread there) or will find `epoch` changed and not sleep. A woken
//! sleeper deregisters and takes the watch if nobody holds it; a timed
//! one that then gives up leaves as a watcher does, passing the wake-up
//! on. So while a lock has sleepers it has a watcher or a wake-up in
//! flight to one, and the watcher, awake, takes the lock the next time it
//! is free or stale-handed (a release that wakes nobody still frees it).
//!
//! Wake-up order: the kernel's futex queue order (arrival order among a
//! lock's sleepers), one at a time, each when the watcher before it got
//! the lock.

#[cfg(feature = "std")]
use crossbeam_utils::CachePadded;

#[cfg(feature = "std")]
use crate::futex;
#[cfg(feature = "std")]
use crate::sync::{AtomicU32, AtomicU64, Ordering};
#[cfg(feature = "std")]
use crate::timed::Deadline;

#[cfg(feature = "std")]
/// One watcher in a bucket's word.
const WATCHER: u64 = 1;
#[cfg(feature = "std")]
/// The watcher count's mask.
const WATCHERS: u64 = 0x3F;
#[cfg(feature = "std")]
/// A release's wake-up is on its way to a sleeper.
const WAKING: u64 = 1 << 6;
#[cfg(feature = "std")]
/// One sleeper in a bucket's word.
const SLEEPER: u64 = 1 << 7;
#[cfg(feature = "std")]
/// The sleeper count's mask.
const SLEEPERS: u64 = 0xFFF << 7;
#[cfg(feature = "std")]
/// Where the owner's key starts.
const KEY_SHIFT: u32 = 19;
#[cfg(feature = "std")]
/// The fields other than the key.
const FIELDS: u64 = WATCHERS | WAKING | SLEEPERS;

#[cfg(feature = "std")]
/// Buckets of the process-wide parking table.
#[cfg(not(loom))]
pub const BUCKETS: usize = 1024;
#[cfg(feature = "std")]
/// Buckets of the parking table (one per model execution under loom).
#[cfg(loom)]
pub const BUCKETS: usize = 1;

#[cfg(feature = "std")]
struct Bucket {
    /// Watchers, sleepers and the owning lock's key (module docs).
    word: AtomicU64,
    /// The futex word: wake-ups sent (wrapping).
    epoch: AtomicU32,
}

#[cfg(feature = "std")]
impl Bucket {
    crate::sync::const_fn_unless_loom! {
        fn new() -> Bucket {
            Bucket { word: AtomicU64::new(0), epoch: AtomicU32::new(0) }
        }
    }
}

#[cfg(feature = "std")]
#[cfg(not(loom))]
static TABLE: [CachePadded<Bucket>; BUCKETS] = [const { CachePadded::new(Bucket::new()) }; BUCKETS];

#[cfg(feature = "std")]
#[cfg(not(loom))]
fn table() -> &'static [CachePadded<Bucket>] {
    &TABLE
}

#[cfg(feature = "std")]
#[cfg(loom)]
loom::lazy_static! {
    static ref LOOM_TABLE: std::vec::Vec<CachePadded<Bucket>> =
        (0..BUCKETS).map(|_| CachePadded::new(Bucket::new())).collect();
}

#[cfg(feature = "std")]
#[cfg(loom)]
fn table() -> &'static [CachePadded<Bucket>] {
    &LOOM_TABLE
}

#[cfg(feature = "std")]
/// How long a sleeper may sleep.
#[derive(Clone, Copy)]
pub(crate) enum SleepLimit {
    /// Until woken (`lock`).
    Never,
    /// Until woken or `Deadline` (`try_lock_for`, `try_lock_until`).
    Until(Deadline),
    /// Not at all: the wait must ask a closure, which a sleeper cannot
    /// (`try_acquire_in_while`); the waiter yields instead.
    Ask,
}

/// What [`Parking::park`] did.
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
pub(crate) enum Parked {
    /// Slept (woken, timed out, or the epoch had moved): look at once.
    Slept,
    /// This waiter holds the lock's watch: stay awake (yield).
    #[cfg_attr(not(feature = "std"), allow(dead_code))] // no parking without `std`
    Watching,
    /// Could not park (the bucket serves another lock, a count is full,
    /// or the limit is `Ask`): yield as an unparked waiter.
    Not,
}

#[cfg(feature = "std")]
/// One waiter's parking state for one acquisition; leaves the watch when
/// dropped (the acquisition returned, gave up or unwound), waking the
/// next sleeper if it was the last watcher.
pub(crate) struct Parking {
    /// The lock's address (its key in the bucket).
    addr: usize,
    /// Whether this waiter holds the watch.
    watching: bool,
}

#[cfg(feature = "std")]
impl Parking {
    /// Parking state for a waiter of the lock at `addr`.
    pub(crate) fn new(addr: usize) -> Parking {
        Parking {
            addr,
            watching: false,
        }
    }

    /// The lock's key in a bucket word, `None` if the address does not fit.
    fn key(&self) -> Option<u64> {
        let k = (self.addr >> 3) as u64;
        (k != 0 && k < 1 << (64 - KEY_SHIFT)).then_some(k << KEY_SHIFT)
    }

    fn bucket(&self) -> &'static Bucket {
        let t = table();
        let h = (self.addr >> 3).wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as usize);
        &t[(h >> 20) % t.len()]
    }

    /// Sleeps until woken if the lock has a watcher; else takes the watch
    /// (and returns at once). A watcher stays one (returns `Watching`).
    pub(crate) fn park(&mut self, limit: SleepLimit) -> Parked {
        if self.watching {
            return Parked::Watching;
        }
        let deadline = match limit {
            SleepLimit::Never => Deadline::NEVER,
            SleepLimit::Until(d) => d,
            SleepLimit::Ask => return Parked::Not,
        };
        let Some(key) = self.key() else {
            return Parked::Not;
        };
        let b = self.bucket();
        // Read before registering (see the module docs): a leave that
        // counts us bumps `epoch` after this read, so we cannot sleep
        // through it. Relaxed: ordered before the registration's Release.
        let epoch = b.epoch.load(Ordering::Relaxed);
        // AcqRel: the Release half orders the `epoch` read above before
        // the registration, for the leave that reads it (Acquire).
        // mutants: the Release half is a load-buffering order (the
        // `epoch` read against the leave's bump), which loom does not
        // explore; x86 keeps it anyway.
        let old = update(&b.word, Ordering::AcqRel, |w| {
            if w == 0 {
                return Some(key | WATCHER);
            }
            if w & !FIELDS != key {
                return None;
            }
            if w & WATCHERS == 0 {
                Some(w + WATCHER)
            } else if w & SLEEPERS != SLEEPERS {
                Some(w + SLEEPER)
            } else {
                None
            }
        });
        let Ok(old) = old else {
            crate::coverage::hit!("ron_raw.park_busy");
            return Parked::Not;
        };
        if old & WATCHERS == 0 {
            crate::coverage::hit!("ron_raw.park_watch");
            self.watching = true;
            return Parked::Watching;
        }
        crate::coverage::hit!("ron_raw.park_sleep");
        futex::wait(&b.epoch, epoch, deadline);
        // Deregister; take the watch if nobody holds it (we were woken to
        // take it, or its last holder left while we slept). Relaxed: the
        // counts are one location, so the RMW sees the latest value
        // whatever its ordering; the lock's data is ordered by the lock
        // word's CAS, and our next registration or leave has its own.
        let old = update(&b.word, Ordering::Relaxed, |w| {
            let w = (w - SLEEPER) & !WAKING;
            Some(if w & WATCHERS == 0 { w + WATCHER } else { w })
        })
        .unwrap_or_else(|w| w);
        if old & WATCHERS == 0 {
            crate::coverage::hit!("ron_raw.park_woken_watch");
            self.watching = true;
        }
        Parked::Slept
    }

    /// Whether this waiter holds the lock's watch (a handover to the
    /// watcher is then its own).
    #[inline]
    pub(crate) fn is_watching(&self) -> bool {
        self.watching
    }

    /// Leaves the watch (if held): the caller has the lock or stops
    /// waiting. Wakes one sleeper if no watcher is left.
    #[inline]
    pub(crate) fn leave(&mut self) {
        if self.watching {
            self.watching = false;
            self.leave_watch();
        }
    }

    #[cold]
    fn leave_watch(&self) {
        let b = self.bucket();
        // AcqRel: the Acquire half reads every registration counted (and
        // with it the `epoch` read each made before registering), so the
        // bump below comes after those reads.
        // mutants: the other end of the registration's load-buffering
        // pair (see `park`), which loom does not explore.
        let old = update(&b.word, Ordering::AcqRel, |w| {
            let w = w - WATCHER;
            Some(if w & FIELDS == 0 { 0 } else { w })
        })
        .unwrap_or_else(|w| w);
        let new = old - WATCHER;
        if new & WATCHERS == 0 && new & SLEEPERS != 0 {
            crate::coverage::hit!("ron_raw.park_wake");
            // Relaxed: the futex compares the value; the order that
            // matters is the registration's before this (above).
            b.epoch.fetch_add(1, Ordering::Relaxed);
            futex::wake(&b.epoch, 1);
        }
    }
}

#[cfg(feature = "std")]
/// After a release of the lock at `addr` that freed it: wakes one of its
/// sleepers, unless none sleeps or a wake-up is already on its way (the
/// woken sleeper clears `WAKING` when it deregisters). This is what keeps
/// the woken waiters coming while the lock is busy; the watcher (module
/// docs) is what makes sure one comes even when a release misses them.
#[cfg(feature = "std")]
#[inline]
pub(crate) fn wake_sleeper(addr: usize) {
    let me = Parking::new(addr);
    let Some(key) = me.key() else {
        return;
    };
    let b = me.bucket();
    // Relaxed: a look that spares the RMW; the RMW decides.
    let w = b.word.load(Ordering::Relaxed);
    if w & !FIELDS != key || w & SLEEPERS == 0 || w & WAKING != 0 {
        return;
    }
    wake_sleeper_slow(b, key);
}

#[cfg(feature = "std")]
#[cold]
#[inline(never)]
fn wake_sleeper_slow(b: &Bucket, key: u64) {
    // Relaxed: a sleeper's wake-up needs only the futex's comparison
    // (every sleeper re-checks the lock word, whose CAS orders the data);
    // whether this one is lost does not matter for liveness (the watcher).
    if update(&b.word, Ordering::Relaxed, |w| {
        (w & !FIELDS == key && w & SLEEPERS != 0 && w & WAKING == 0).then_some(w | WAKING)
    })
    .is_ok()
    {
        crate::coverage::hit!("ron_raw.release_wakes");
        // Relaxed: as above.
        b.epoch.fetch_add(1, Ordering::Relaxed);
        futex::wake(&b.epoch, 1);
    }
}

#[cfg(feature = "std")]
/// Whether the lock at `addr` has a watcher now (a snapshot: the watcher
/// may leave right after it, and a handover to it is then taken over by
/// another waiter after `PATIENCE_NS`).
#[inline]
pub(crate) fn watched(addr: usize) -> bool {
    let me = Parking::new(addr);
    let Some(key) = me.key() else {
        return false;
    };
    // Relaxed: a snapshot that only steers (see above).
    let w = me.bucket().word.load(Ordering::Relaxed);
    w & !FIELDS == key && w & WATCHERS != 0
}

/// `fetch_update` by hand (the VM's atomics have none): applies `f` to
/// the word with a CAS loop; `Err` with the value seen if `f` said no.
/// `order` is the successful CAS's ordering; failed ones and the first
/// load are Relaxed (they only feed `f`, and the next CAS checks).
#[cfg(feature = "std")]
fn update(
    word: &AtomicU64,
    order: Ordering,
    mut f: impl FnMut(u64) -> Option<u64>,
) -> Result<u64, u64> {
    // Relaxed: a guess for `f`; the CAS below decides.
    let mut w = word.load(Ordering::Relaxed);
    loop {
        let Some(new) = f(w) else {
            return Err(w);
        };
        // Relaxed on failure: the value seen only feeds `f` again.
        match word.compare_exchange_weak(w, new, order, Ordering::Relaxed) {
            Ok(old) => return Ok(old),
            Err(seen) => w = seen,
        }
    }
}

#[cfg(feature = "std")]
impl Drop for Parking {
    fn drop(&mut self) {
        self.leave();
    }
}

/// Without `std` nobody sleeps: the waiter backs off as before.
#[cfg(not(feature = "std"))]
#[derive(Clone, Copy)]
pub(crate) enum SleepLimit {
    /// Until woken.
    Never,
    /// Not at all.
    Ask,
}

/// Without `std` there is no futex: [`park`](Parking::park) never parks.
#[cfg(not(feature = "std"))]
pub(crate) struct Parking;

#[cfg(not(feature = "std"))]
impl Parking {
    pub(crate) fn new(_addr: usize) -> Parking {
        Parking
    }

    pub(crate) fn park(&mut self, _limit: SleepLimit) -> Parked {
        Parked::Not
    }

    pub(crate) fn is_watching(&self) -> bool {
        false
    }
}

/// How long (ns) a wait may last before its waiter parks even though its
/// CPU did not look shared: a holder that keeps the lock this long (a
/// preempted holder, a long critical section) would keep a spinning
/// waiter's CPU busy for nothing, and a wake-up (a few microseconds) is
/// then a small part of the wait.
pub const PARK_AFTER_NS: u64 = 1_000_000;

/// When a wait began (read once, at its first yield), to judge it long.
pub(crate) struct WaitClock {
    #[cfg(all(feature = "std", not(loom), not(shuttle)))]
    since: Option<crate::sync::Instant>,
}

impl WaitClock {
    pub(crate) fn new() -> WaitClock {
        WaitClock {
            #[cfg(all(feature = "std", not(loom), not(shuttle)))]
            since: None,
        }
    }

    /// Whether the wait has lasted [`PARK_AFTER_NS`] (its first call
    /// starts the clock). Under loom and shuttle every wait is long, so
    /// that the models reach the parking paths.
    pub(crate) fn long(&mut self) -> bool {
        #[cfg(all(feature = "std", not(loom), not(shuttle)))]
        {
            let now = crate::sync::Instant::now();
            let since = *self.since.get_or_insert(now);
            now.saturating_duration_since(since).as_nanos() as u64 >= PARK_AFTER_NS
        }
        #[cfg(not(all(feature = "std", not(loom), not(shuttle))))]
        {
            cfg!(any(loom, shuttle))
        }
    }
}

/// The bucket word of the lock at `addr`, with the key stripped if it is
/// that lock's (for tests: `(watchers, sleepers)`, or `None` while the
/// bucket serves another lock or nobody).
#[cfg(all(test, feature = "std", not(loom), not(shuttle)))]
pub(crate) fn counts(addr: usize) -> Option<(u64, u64)> {
    let p = Parking::new(addr);
    let w = p.bucket().word.load(Ordering::Relaxed);
    (w != 0 && Some(w & !FIELDS) == p.key()).then_some((w & WATCHERS, (w & SLEEPERS) >> 7))
}

/// CPUs the lock's waiters share: the installed route's length, else what
/// the process may use. More waiters than that (counted by the block's
/// references, which include a releaser's during its scan: with one
/// thread per CPU they reach the CPU count, never more) means a CPU is
/// shared, whatever a yield measured. Never
/// reached under loom, shuttle and Miri (`usize::MAX`), and without `std`.
pub(crate) fn cpus() -> usize {
    #[cfg(all(feature = "std", not(loom), not(shuttle), not(miri)))]
    {
        static AVAILABLE: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
        match crate::route::len() {
            0 => *AVAILABLE
                .get_or_init(|| std::thread::available_parallelism().map_or(1, |n| n.get())),
            n => n,
        }
    }
    #[cfg(not(all(feature = "std", not(loom), not(shuttle), not(miri))))]
    {
        usize::MAX
    }
}

/// The park/wake protocol alone, under loom (run: `RUSTFLAGS="--cfg loom"
/// CARGO_TARGET_DIR=target/loom cargo test -p ron-core --release --lib
/// park`): the futex is a poll of `epoch` there, so a lost wake-up is a
/// sleeper that polls forever, which fails the model.
#[cfg(all(test, loom, feature = "std"))]
mod loom_tests {
    use super::*;

    /// A watcher leaves while a waiter of the same lock registers and
    /// sleeps: whatever the interleaving, the waiter ends up holding the
    /// watch (at once, or woken by the leave), and the bucket is clean
    /// once both left. Kills the sleeper that reads `epoch` after it
    /// registers (the leave's bump can fall between the two).
    #[test]
    fn leaving_watcher_wakes_the_sleeper() {
        loom::model(|| {
            let addr = 0x1000;
            let mut w = Parking::new(addr);
            assert_eq!(w.park(SleepLimit::Never), Parked::Watching);
            let h = loom::thread::spawn(move || {
                let mut s = Parking::new(addr);
                let r = s.park(SleepLimit::Never);
                assert!(s.watching, "{r:?} without the watch");
            });
            drop(w);
            h.join().unwrap();
            assert_eq!(table()[0].word.load(Ordering::Relaxed), 0);
        });
    }

    /// Two sleepers and a watcher: the leave wakes one, which takes the
    /// watch and, leaving, wakes the other (one at a time, none lost).
    #[test]
    fn wake_ups_chain_through_the_sleepers() {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(1);
        b.max_branches = 100_000;
        b.check(|| {
            let addr = 0x1000;
            let mut w = Parking::new(addr);
            assert_eq!(w.park(SleepLimit::Never), Parked::Watching);
            let hs: std::vec::Vec<_> = (0..2)
                .map(|_| {
                    loom::thread::spawn(move || {
                        let mut s = Parking::new(addr);
                        while !s.watching {
                            s.park(SleepLimit::Never);
                        }
                    })
                })
                .collect();
            drop(w);
            for h in hs {
                h.join().unwrap();
            }
            assert_eq!(table()[0].word.load(Ordering::Relaxed), 0);
        });
    }
}
