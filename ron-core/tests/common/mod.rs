//! The harness the loom models share (`mod common;` in each `loom*.rs`):
//! [`ModelLock`], one adapter per lock type (over any slot count and relax
//! policy), [`Shared`], a lock with the `loom::cell::UnsafeCell` counter
//! it protects (loom reports two unsynchronized accesses to it as a
//! causality violation), and [`Pooled`], the models of the pooled locks
//! ([`PooledLock`]: `RonRaw`, `RonGrant`) over a pool of their own.
#![allow(dead_code)]

use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::sync::atomic::{AtomicUsize, Ordering};
use loom::thread;
use ron_core::relax::Relax;
use ron_core::ron_raw::pool::{Block, Pool};
use ron_core::sh_ron::ShTable;
use ron_core::{
    CBoMcs, Cna, Fsl, Mcs, NxtRon, NxtRonInline, PlaceToken, Ron, RonGrant, RonInline, RonPark,
    RonPlock, RonPlockInline, RonRaw, RonTicket, RonTicketInline, ShRon, Tas, Ticket, Ttas,
};

/// A lock as the models drive it: acquisition waiting in a chosen slot,
/// table row, group or local lock (`hint`), and release with the token.
pub trait ModelLock: Send + Sync + 'static {
    /// What an acquisition returns and the release takes.
    type Token;
    /// A fresh unlocked lock.
    fn create() -> Self;
    /// Acquires, waiting at `hint` (slot, row, group or local-lock index)
    /// where the lock has such a place; any value is allowed.
    fn lock_in(&self, hint: usize) -> Self::Token;
    /// One attempt.
    fn try_lock(&self) -> Option<Self::Token>;
    /// Releases.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    unsafe fn unlock(&self, token: Self::Token);
}

/// `ModelLock` for a type with `new`, `acquire_in`, `try_acquire` and
/// `release` (or `acquire` instead of `acquire_in`: `hintless`).
macro_rules! model_lock {
    ([$($gen:tt)*] $t:ty, $tok:ty, $create:expr, |$l:ident, $h:ident| $lock:expr) => {
        impl<$($gen)*> ModelLock for $t {
            type Token = $tok;
            fn create() -> Self {
                $create
            }
            fn lock_in(&self, hint: usize) -> $tok {
                let ($l, $h) = (self, hint);
                $lock
            }
            fn try_lock(&self) -> Option<$tok> {
                self.try_acquire()
            }
            unsafe fn unlock(&self, token: $tok) {
                // SAFETY: forwarded contract.
                unsafe { self.release(token) }
            }
        }
    };
}

model_lock!([const S: usize, R: Relax + 'static] Ron<S, R>, PlaceToken, Self::new(), |l, h| l.acquire_in(h));
model_lock!([const S: usize, R: Relax + 'static] RonPlockInline<S, R>, PlaceToken, Self::new(), |l, h| l.acquire_in(h));
model_lock!([const S: usize, R: Relax + 'static] NxtRonInline<S, R>, PlaceToken, Self::new(), |l, h| l.acquire_in(h));
model_lock!([const S: usize, R: Relax + 'static] RonTicketInline<S, R>, PlaceToken, Self::new(), |l, h| l.acquire_in(h));
model_lock!([R: Relax + 'static] RonPlock<R>, PlaceToken, Self::new(), |l, h| l.acquire_in(h));
model_lock!([R: Relax + 'static] NxtRon<R>, PlaceToken, Self::new(), |l, h| l.acquire_in(h));
model_lock!([R: Relax + 'static] RonTicket<R>, PlaceToken, Self::new(), |l, h| l.acquire_in(h));
model_lock!([const S: usize] RonInline<S>, PlaceToken, Self::new(), |l, h| l.acquire_in(h));
model_lock!([const S: usize] RonPark<S>, PlaceToken, Self::new(), |l, h| l.acquire_in(h));
model_lock!([] RonRaw, PlaceToken, Self::new(), |l, h| l.acquire_in(h));
// A model's own wait table, so that models do not share columns.
model_lock!([R: Relax + 'static] ShRon<R>, PlaceToken, ShRon::new_in(Box::leak(Box::new(ShTable::new()))), |l, h| l.acquire_in(h));
model_lock!([const N: usize, R: Relax + 'static] CBoMcs<N, R>, PlaceToken, Self::new(), |l, h| l.acquire_in(h));
model_lock!([const G: usize, const L: usize, R: Relax + 'static] Fsl<G, L, R>, PlaceToken, Self::new(), |l, h| l.acquire_in(h));
model_lock!([const F: u32, const SR: bool, R: Relax + 'static] Cna<F, SR, R>, (), Self::new(), |l, h| l.acquire_in(h));
model_lock!([R: Relax + 'static] Mcs<R>, (), Self::new(), |l, _h| l.acquire());
model_lock!([R: Relax + 'static] Ticket<R>, (), Self::new(), |l, _h| l.acquire());
model_lock!([R: Relax + 'static] Ttas<R>, (), Self::new(), |l, _h| l.acquire());
model_lock!([R: Relax + 'static] Tas<R>, (), Self::new(), |l, _h| l.acquire());

/// A lock and the counter it protects.
pub struct Shared<L> {
    /// The lock under test.
    pub lock: L,
    /// Touched only with `lock` held.
    pub count: UnsafeCell<usize>,
    /// Waiters that said they registered (for models whose holder waits
    /// for them, see [`Shared::wait_for_waiters`]).
    pub registered: AtomicUsize,
}

// SAFETY: `count` is only touched while `lock` is held; the models check
// exactly that (loom flags any unsynchronized access).
unsafe impl<L: Sync> Sync for Shared<L> {}

impl<L> Shared<L> {
    /// `lock` with a zero count.
    pub fn with(lock: L) -> Arc<Self> {
        Arc::new(Shared {
            lock,
            count: UnsafeCell::new(0),
            registered: AtomicUsize::new(0),
        })
    }

    /// A longer critical section: read, yield (so others run meanwhile),
    /// write. The caller holds the lock.
    pub fn bump_yielding(&self) {
        // SAFETY: the caller holds the lock (loom checks it).
        let v = self.count.with(|c| unsafe { *c });
        thread::yield_now();
        // SAFETY: as above.
        self.count.with_mut(|c| unsafe { *c = v + 1 });
    }

    /// Counts one registered waiter.
    pub fn register(&self) {
        // SeqCst: the test's own flag, not under test.
        self.registered.fetch_add(1, Ordering::SeqCst);
    }

    /// Yields until `n` waiters called [`Shared::register`].
    pub fn wait_for_waiters(&self, n: usize) {
        // SeqCst: as in `register`.
        while self.registered.load(Ordering::SeqCst) < n {
            thread::yield_now();
        }
    }

    /// The critical section: one increment. The caller holds the lock.
    pub fn bump(&self) {
        // SAFETY: the caller holds the lock (loom checks it).
        self.count.with_mut(|c| unsafe { *c += 1 });
    }

    /// The count (call after every other thread joined).
    pub fn total(&self) -> usize {
        // SAFETY: every other thread joined (the caller's contract).
        self.count.with(|c| unsafe { *c })
    }
}

impl<L: ModelLock> Shared<L> {
    /// A fresh lock with a zero count.
    pub fn new() -> Arc<Self> {
        Self::with(L::create())
    }

    /// Bumps the count and releases with `token`. The caller holds the
    /// lock with `token`.
    pub fn bump_and_release(&self, token: L::Token) {
        self.bump();
        // SAFETY: the caller holds the lock with `token`.
        unsafe { self.lock.unlock(token) };
    }

    /// Acquires waiting at `hint`, bumps, releases.
    pub fn critical(&self, hint: usize) {
        let t = self.lock.lock_in(hint);
        self.bump_and_release(t);
    }

    /// Panics unless the lock is free (takes and releases it once).
    pub fn assert_free(&self) {
        let t = self.lock.try_lock().expect("lock left held");
        // SAFETY: just acquired.
        unsafe { self.lock.unlock(t) };
    }
}

/// A `try_lock` racing an unlock, then a normal lock by the same thread
/// (exhaustive).
pub fn try_lock_races_unlock<L: ModelLock>() {
    try_lock_races_unlock_within::<L>(None);
}

/// [`try_lock_races_unlock`] within `preemptions` preemptions (`None`:
/// exhaustive). For the locks whose exhaustive search takes minutes: a
/// waiter polling a word the holder also writes multiplies the schedules.
pub fn try_lock_races_unlock_within<L: ModelLock>(preemptions: Option<usize>) {
    let mut b = loom::model::Builder::new();
    b.preemption_bound = preemptions;
    b.check(|| {
        let s = Shared::<L>::new();
        let s2 = s.clone();
        let h = thread::spawn(move || {
            let mut n = 1;
            if let Some(t) = s2.lock.try_lock() {
                s2.bump_and_release(t);
                n += 1;
            }
            s2.critical(1);
            n
        });
        s.critical(0);
        let theirs = h.join().unwrap();
        assert_eq!(s.total(), 1 + theirs);
        s.assert_free();
    });
}

// ---------------------------------------------------------------------------
// Pooled models: locks whose slots live in a block of a model's own pool
// (`RonRaw`, `RonGrant`), driven through their `with_pool` entry points.

/// A pooled lock's entry points with a model's own pool of blocks.
pub trait PooledLock: Send + Sync + 'static {
    /// A fresh unlocked lock (holding no block).
    fn create() -> Self;
    /// Acquires, waiting in slot `slot` of a block of `pool`.
    fn acquire_in(&self, pool: &'static Pool<'static>, slot: usize) -> PlaceToken;
    /// Releases.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    unsafe fn release(&self, pool: &'static Pool<'static>, token: PlaceToken);
    /// Whether the lock is free at the end of an execution (every thread
    /// joined): takes it if it is, as the lock's own model always did.
    fn ends_free(&self, pool: &'static Pool<'static>) -> bool;
    /// Whether the lock holds a block of its pool now.
    fn has_block(&self) -> bool;
}

/// Locks of one pooled model and their counters, over a pool of its own.
struct PooledWorld<L> {
    pool: &'static Pool<'static>,
    locks: Vec<L>,
    counts: Vec<UnsafeCell<usize>>,
}

// SAFETY: `counts[i]` is only touched while `locks[i]` is held; the models
// check exactly that.
unsafe impl<L: Sync> Sync for PooledWorld<L> {}
// SAFETY: as above; the pool and the locks are Send.
unsafe impl<L: Send> Send for PooledWorld<L> {}

/// A pooled model: thread `i` runs the critical sections `plan[i]`, each
/// `(lock, slot)` a critical section of that lock waiting in that slot,
/// yielding `cs_yields` times inside; `locks` locks over a pool of
/// `blocks` blocks.
pub struct Pooled {
    pub blocks: usize,
    pub locks: usize,
    pub plan: &'static [&'static [(usize, usize)]],
    pub cs_yields: usize,
    pub preemptions: usize,
    pub max_executions: Option<usize>,
}

impl Pooled {
    /// Explores the model over locks of type `L`, recording path
    /// `executions` once per execution. Each execution checks mutual
    /// exclusion (the counters are loom cells), the final counts, that
    /// every lock ends free and without its block, and that the pool is
    /// whole again. The caller resets and reads the path counters.
    pub fn explore<L: PooledLock>(&self, executions: &'static str) {
        let mut b = loom::model::Builder::new();
        b.preemption_bound = Some(self.preemptions);
        b.max_branches = 100_000;
        b.max_permutations = self.max_executions;
        b.checkpoint_interval = 1000;
        let (nblocks, locks, plan, cs_yields) =
            (self.blocks, self.locks, self.plan, self.cs_yields);
        b.check(move || {
            ron_core::coverage::record(executions);
            // Leaked: the pool must outlive the locks, and each execution
            // needs fresh loom atomics (a few KiB per execution).
            let blocks: &'static [Block] = Box::leak(
                (0..nblocks)
                    .map(|_| Block::new())
                    .collect::<Vec<_>>()
                    .into_boxed_slice(),
            );
            let pool: &'static Pool<'static> = Box::leak(Box::new(Pool::new_in(blocks)));
            let w = Arc::new(PooledWorld {
                pool,
                locks: (0..locks).map(|_| L::create()).collect(),
                counts: (0..locks).map(|_| UnsafeCell::new(0)).collect(),
            });
            let run = move |w: &PooledWorld<L>, steps: &[(usize, usize)]| {
                for &(l, slot) in steps {
                    let t = w.locks[l].acquire_in(w.pool, slot);
                    // SAFETY: lock `l` is held.
                    w.counts[l].with_mut(|c| unsafe { *c += 1 });
                    for _ in 0..cs_yields {
                        thread::yield_now();
                    }
                    // SAFETY: we hold lock `l` with `t`.
                    unsafe { w.locks[l].release(w.pool, t) };
                }
            };
            let hs: Vec<_> = plan[1..]
                .iter()
                .map(|&steps| {
                    let w = w.clone();
                    thread::spawn(move || run(&w, steps))
                })
                .collect();
            run(&w, plan[0]);
            for h in hs {
                h.join().unwrap();
            }
            for l in 0..locks {
                let want = plan
                    .iter()
                    .flat_map(|p| p.iter())
                    .filter(|s| s.0 == l)
                    .count();
                // SAFETY: every other thread joined.
                assert_eq!(w.counts[l].with(|c| unsafe { *c }), want);
                assert!(w.locks[l].ends_free(w.pool), "lock {l} left held");
                assert!(!w.locks[l].has_block(), "lock {l} kept its block");
            }
            assert_eq!(w.pool.in_use(), 0, "a block was not returned");
            for b in blocks {
                assert_eq!(b.occupied_slots(), 0, "a slot count left behind");
            }
        });
    }
}

impl PooledLock for RonRaw {
    fn create() -> Self {
        RonRaw::new()
    }
    fn acquire_in(&self, pool: &'static Pool<'static>, slot: usize) -> PlaceToken {
        ron_core::ron_raw::with_pool::acquire_in(self, pool, slot)
    }
    unsafe fn release(&self, pool: &'static Pool<'static>, token: PlaceToken) {
        // SAFETY: the caller's contract.
        unsafe { ron_core::ron_raw::with_pool::release(self, pool, token) }
    }
    fn ends_free(&self, pool: &'static Pool<'static>) -> bool {
        // Taken and kept: the execution ends here.
        ron_core::ron_raw::with_pool::try_acquire(self, pool).is_some()
    }
    fn has_block(&self) -> bool {
        ron_core::ron_raw::with_pool::has_block(self)
    }
}

impl PooledLock for RonGrant {
    fn create() -> Self {
        RonGrant::new()
    }
    fn acquire_in(&self, pool: &'static Pool<'static>, slot: usize) -> PlaceToken {
        ron_core::ron_grant::with_pool::acquire_in(self, pool, slot)
    }
    unsafe fn release(&self, pool: &'static Pool<'static>, token: PlaceToken) {
        // SAFETY: the caller's contract.
        unsafe { ron_core::ron_grant::with_pool::release(self, pool, token) }
    }
    fn ends_free(&self, pool: &'static Pool<'static>) -> bool {
        match self.try_acquire() {
            Some(t) => {
                // SAFETY: we hold it with `t`.
                unsafe { ron_core::ron_grant::with_pool::release(self, pool, t) };
                true
            }
            None => false,
        }
    }
    fn has_block(&self) -> bool {
        ron_core::ron_grant::with_pool::has_block(self)
    }
}
