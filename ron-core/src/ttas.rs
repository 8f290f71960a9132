//! [`Ttas`]: test-and-test-and-set, the shape of glibc's `pthread_spin_lock`
//! (the RON paper's pthread-spinlock baseline; "plock" in this crate means
//! RON Algorithm 3, see [`plock`](crate::plock)).
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

use crate::flag::TasFlag;
use crate::relax::{DefaultRelax, Relax};

/// Test-and-test-and-set spinlock: the smallest lock (one byte) when no
/// order among waiters is needed. States, guarantees and cost: the
/// [module docs](self).
pub struct Ttas<R: Relax = DefaultRelax> {
    locked: TasFlag,
    _relax: PhantomData<fn() -> R>,
}

impl<R: Relax> Ttas<R> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            Ttas { locked: TasFlag::new(), _relax: PhantomData }
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

    /// One CAS on the flag (Acquire on success: see `flag.rs`).
    #[inline]
    fn try_fast(&self) -> bool {
        self.locked.try_take()
    }

    /// The waiting loop after a failed `try_fast`: a load, the CAS only when
    /// the load saw the lock free, `R` in between. A panicking `R` unwinds
    /// with nothing taken (CBoMcs relies on this for its global lock).
    #[cold]
    pub(crate) fn acquire_slow(&self) {
        let mut relax = R::default();
        loop {
            if self.locked.take_if_free() {
                return;
            }
            relax.relax();
            #[cfg(all(ron_vm, not(loom), not(shuttle)))]
            crate::relax::vm_idle(&mut relax, self.locked.vm_addr());
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
        crate::timed::retry_until::<(), R>(deadline, || self.locked.take_if_free().then_some(()))
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.locked.is_held()
    }
}

crate::raw_impl::impl_default_debug! {
    impl [R: Relax] for Ttas<R>, debug "Ttas" {}
}

#[cfg(not(loom))]
// SAFETY: state table rows `false` and `true`. `lock` and `try_lock` return
// only after their own CAS `false -> true` succeeded (Acquire on success; the
// waiters' plain loads only decide when to try it), and one `true` admits one
// CAS winner until the holder's `unlock` stores `false` (Release), so at most
// one guard exists at a time and each critical section happens-before the
// next. Waiting publishes nothing: a `Relax` policy that panics unwinds out
// of `lock` owning nothing. `unlock` runs no user code and ignores the CPU
// hint. A forgotten guard leaves the lock held, nothing dangling; moving the
// lock while unlocked is plain memory.
unsafe impl<R: Relax> lock_api::RawMutex for Ttas<R> {
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
unsafe impl<R: Relax> lock_api::RawMutexFair for Ttas<R> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: ()) {
        // SAFETY: the caller holds the lock.
        unsafe { self.release(guard) }
    }
}

#[cfg(feature = "std")]
crate::timed::impl_raw_mutex_timed! {
    impl [R: Relax] for Ttas<R>
}
