//! [`Tas`]: the test-and-set spinlock, the simplest baseline.
//!
//! One byte. `lock` tries a `compare_exchange(false, true)` until it
//! succeeds; `unlock` stores `false`. Every look at the lock is a
//! read-modify-write (a failing `lock cmpxchg` on x86 still takes the line
//! in exclusive state, like `xchg`), so waiters keep
//! pulling the line into their caches in exclusive state: under contention
//! the holder's own unlock store queues behind them. Use [`Ttas`](crate::Ttas)
//! instead unless you are measuring exactly that cost.
//!
//! ## States
//! | `locked` | meaning | who clears it |
//! |---|---|---|
//! | false | unlocked | - |
//! | true | held | the holder, with a Release store |
//!
//! ## Guarantees
//! * Mutual exclusion: only the RMW that reads `false` takes the lock.
//! * Progress (deadlock-freedom): whenever the lock is free, some RMW wins.
//! * No bounded waiting: a waiter can lose every race forever.
//! * Panics: a panicking `Relax` policy unwinds out of `lock` with nothing
//!   to undo (a waiter publishes no state); unlock runs no user code.
//! * `RawMutexFair`: `unlock_fair` is a plain unlock (no waiter list to
//!   hand over to), so code written for fair unlocking runs unchanged but
//!   gets no handover.
//! * `RawMutexTimed` (`std`): `try_lock_for` / `try_lock_until` retry until
//!   the deadline; a waiter registers nothing, so giving up leaves the lock
//!   exactly as it was.
//!
//! ## Cost
//! Bytes per lock: **1**. Uncontended lock + unlock: one CAS and one store.
//! No per-thread or per-process memory. Ignores the CPU hint.
//!
//! ```
//! use ron_core::Tas;
//! let m: lock_api::Mutex<Tas, u32> = lock_api::Mutex::new(0);
//! std::thread::scope(|s| {
//!     for _ in 0..3 {
//!         s.spawn(|| for _ in 0..500 { *m.lock() += 1 });
//!     }
//! });
//! assert_eq!(*m.lock(), 1500);
//! ```

use core::marker::PhantomData;

use crate::flag::TasFlag;
use crate::relax::{DefaultRelax, Relax};

/// Test-and-set spinlock, the baseline that shows what every waiter's CAS
/// costs. States, guarantees and cost: the [module docs](self).
pub struct Tas<R: Relax = DefaultRelax> {
    locked: TasFlag,
    _relax: PhantomData<fn() -> R>,
}

impl<R: Relax> Tas<R> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            Tas { locked: TasFlag::new(), _relax: PhantomData }
        }
    }

    /// Acquires the lock, spinning with `R` between attempts.
    #[inline]
    pub fn acquire(&self) {
        if self.try_fast() {
            return;
        }
        self.acquire_slow();
    }

    /// One CAS on the flag (Acquire on success: see `flag.rs`).
    #[inline]
    fn try_fast(&self) -> bool {
        self.locked.try_take()
    }

    #[cold]
    fn acquire_slow(&self) {
        let mut relax = R::default();
        loop {
            relax.relax();
            if self.try_fast() {
                return;
            }
        }
    }

    /// Takes the lock if it is free.
    #[inline]
    pub fn try_acquire(&self) -> Option<()> {
        self.try_fast().then_some(())
    }

    /// Releases the lock.
    ///
    /// # Safety
    /// The caller holds the lock.
    #[inline]
    pub unsafe fn release(&self, _guard: ()) {
        // A Release store: publishes the critical section to the next CAS winner.
        self.locked.free();
    }

    /// Tries to take the lock until `deadline`, spinning with `R` between
    /// attempts; `None` only once the deadline has passed. A waiter holds
    /// no state, so giving up leaves nothing behind.
    #[cfg(feature = "std")]
    pub fn try_acquire_until(&self, deadline: crate::timed::Deadline) -> Option<()> {
        crate::timed::retry_until::<(), R>(deadline, || self.try_fast().then_some(()))
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.locked.is_held()
    }
}

crate::raw_impl::impl_default_debug! {
    impl [R: Relax] for Tas<R>, debug "Tas" {}
}

#[cfg(not(loom))]
// SAFETY: state table rows `false` and `true`. `lock` and `try_lock` return
// only after their own CAS `false -> true` succeeded (Acquire on success),
// and one `true` admits one CAS winner until the holder's `unlock` stores
// `false` (Release), so at most one guard exists at a time and each critical
// section happens-before the next. Waiting publishes nothing: a `Relax`
// policy that panics unwinds out of `lock` owning nothing and leaving
// `locked` as it was. `unlock` runs no user code and ignores the CPU hint. A
// forgotten guard leaves the lock held, nothing dangling; the lock has no
// address-dependent state, so moving it while unlocked is plain memory.
unsafe impl<R: Relax> lock_api::RawMutex for Tas<R> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();
    type Guard = ();

    #[inline]
    fn lock(&self) {
        self.acquire()
    }

    #[inline]
    fn try_lock(&self) -> Option<()> {
        self.try_acquire()
    }

    #[inline]
    unsafe fn unlock(&self, guard: ()) {
        // SAFETY: the caller holds the lock, as `RawMutex::unlock` requires.
        unsafe { self.release(guard) }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.is_held()
    }
}

#[cfg(not(loom))]
// SAFETY: `unlock_fair` is `unlock` (there is no waiter list to hand over
// to), so the `RawMutex` argument above covers it.
unsafe impl<R: Relax> lock_api::RawMutexFair for Tas<R> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: ()) {
        // SAFETY: the caller holds the lock.
        unsafe { self.release(guard) }
    }
}

#[cfg(feature = "std")]
crate::timed::impl_raw_mutex_timed! {
    impl [R: Relax] for Tas<R>
}
