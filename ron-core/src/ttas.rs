//! [`Ttas`]: test-and-test-and-set, the shape of glibc's `pthread_spin_lock`
//! (the RON paper's "Plock").
//!
//! One byte. The fast path is one CAS `false -> true`; a waiter then spins
//! on plain loads (the line stays shared in every waiter's cache) and only
//! tries the CAS again when it reads `false`. When the holder unlocks every
//! waiter sees it at once and the nearest one usually wins: good throughput,
//! no order, and an unbounded wait for an unlucky (or far away) thread.
//!
//! ## States
//! | `locked` | meaning | who clears it |
//! |---|---|---|
//! | false | unlocked | - |
//! | true | held | the holder, with a Release store |
//!
//! ## Guarantees
//! * Mutual exclusion: only the CAS that reads `false` takes the lock.
//! * Progress (deadlock-freedom).
//! * No bounded waiting.
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
//! No per-thread or per-process memory. Ignores the CPU hint (it is RON with
//! one slot, see [`route`](crate::route)).
//!
//! ```
//! use ron_core::Ttas;
//! let m: lock_api::Mutex<Ttas, Vec<u32>> = lock_api::Mutex::new(Vec::new());
//! m.lock().push(7);
//! assert_eq!(*m.lock(), [7]);
//! ```

use core::marker::PhantomData;

use crate::relax::{DefaultRelax, Relax};
use crate::sync::{AtomicBool, Ordering};

/// Test-and-test-and-set spinlock; see the [module docs](self).
pub struct Ttas<R: Relax = DefaultRelax> {
    locked: AtomicBool,
    _relax: PhantomData<fn() -> R>,
}

impl<R: Relax> Ttas<R> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            Ttas { locked: AtomicBool::new(false), _relax: PhantomData }
        }
    }

    /// Acquires the lock, spinning on loads with `R` between looks.
    #[inline]
    pub fn acquire(&self) {
        if self.try_fast() {
            return;
        }
        self.acquire_slow();
    }

    #[inline]
    fn try_fast(&self) -> bool {
        // Acquire: pairs with the Release store in `release`.
        self.locked
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    #[cold]
    fn acquire_slow(&self) {
        let mut relax = R::default();
        loop {
            // Relaxed peek: only decides when to try the CAS (which has the Acquire).
            if !self.locked.load(Ordering::Relaxed) && self.try_fast() {
                return;
            }
            relax.relax();
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
        // Release: publishes the critical section to the next CAS winner.
        self.locked.store(false, Ordering::Release);
    }

    /// Same as [`release`](Self::release): there is no waiter list to hand
    /// the lock to, so a fair unlock cannot pass it on directly; every
    /// waiter (and the releaser) races for it as after any unlock.
    ///
    /// # Safety
    /// As for [`release`](Self::release).
    #[inline]
    pub unsafe fn release_fair(&self, guard: ()) {
        // SAFETY: same contract.
        unsafe { self.release(guard) }
    }

    /// Tries to take the lock until `deadline`, spinning with `R` between
    /// attempts; `None` only once the deadline has passed. A waiter holds
    /// no state, so giving up leaves nothing behind.
    #[cfg(feature = "std")]
    pub fn try_acquire_until(&self, deadline: crate::timed::Deadline) -> Option<()> {
        crate::timed::retry_until::<(), R>(deadline, || {
            // Relaxed peek: only decides when to try the CAS (which has the Acquire).
            (!self.locked.load(Ordering::Relaxed) && self.try_fast()).then_some(())
        })
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.locked.load(Ordering::Relaxed) // a snapshot by contract
    }
}

crate::raw_impl::impl_raw_mutex! {
    impl [R: Relax] for Ttas<R>, guard = (), debug "Ttas" {}, fair
}

#[cfg(feature = "std")]
crate::timed::impl_raw_mutex_timed! {
    impl [R: Relax] for Ttas<R>
}
