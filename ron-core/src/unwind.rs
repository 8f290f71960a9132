//! Unwind guards: what a lock does when user code panics in the middle of
//! one of its operations.
//!
//! Two kinds of user code run inside the locks of this crate: a
//! [`Relax`](crate::relax::Relax) policy (`R::default()` and `relax()`,
//! while a thread waits) and the CPU hint provider
//! ([`hint::set_provider`](crate::hint::set_provider), asked on the slow
//! path and by some unlocks). Either may panic. The locks call them, where
//! they can, before publishing any state (a panic then leaves nothing
//! behind); where they cannot, one of the two guards below is armed around
//! the call:
//!
//! * [`OnUnwind`] runs a clean-up closure if the call unwinds: a slot lock
//!   deregisters the waiter (taking and passing on a grant it would
//!   otherwise strand), an unlock releases without asking the hint.
//! * [`AbortOnUnwind`] aborts the process if the call unwinds: a FIFO queue
//!   or ticket lock cannot take a waiter out of the queue without waiting
//!   for its turn, which deadlocks when the panicking thread holds the lock
//!   itself, and a dead queue node or an unserved ticket left behind would
//!   break the lock (or memory safety) for everyone.
//!
//! Both are disarmed on the normal path by `mem::forget`-like means, so they
//! cost no instruction there; their `Drop` only ever runs during unwinding.
//! `docs/panic-safety.md` lists which lock does what.

use core::mem::ManuallyDrop;

/// Runs a closure if dropped, i.e. if the code it guards unwinds; the
/// normal path calls [`disarm`](Self::disarm).
#[must_use = "a guard that is dropped at once guards nothing"]
pub(crate) struct OnUnwind<F: FnOnce()> {
    f: ManuallyDrop<F>,
}

impl<F: FnOnce()> OnUnwind<F> {
    /// Arms the guard: `f` runs if the guard is dropped.
    #[inline(always)]
    pub(crate) fn new(f: F) -> Self {
        OnUnwind {
            f: ManuallyDrop::new(f),
        }
    }

    /// The guarded code returned normally: drops `f` without running it.
    #[inline(always)]
    pub(crate) fn disarm(self) {
        let mut this = ManuallyDrop::new(self);
        // SAFETY: `this` is never dropped (ManuallyDrop), so `f` is dropped
        // exactly once, here, and never used again.
        unsafe { ManuallyDrop::drop(&mut this.f) }
    }
}

impl<F: FnOnce()> Drop for OnUnwind<F> {
    #[cold]
    fn drop(&mut self) {
        // SAFETY: `drop` runs at most once and `f` is not used after this;
        // `disarm` forgets the guard, so it never reaches here after it.
        let f = unsafe { ManuallyDrop::take(&mut self.f) };
        f();
    }
}

/// Aborts the process if dropped, i.e. if the code it guards unwinds; the
/// normal path calls [`disarm`](Self::disarm). `lock` names the lock type
/// in the message, `why` says what could not be undone.
#[must_use = "a guard that is dropped at once guards nothing"]
pub(crate) struct AbortOnUnwind {
    lock: &'static str,
    why: &'static str,
}

/// The reason of the FIFO queue and ticket locks.
const QUEUED: &str = "a panic in user code (the Relax policy) unwound through \
     a thread waiting in the lock's FIFO queue, which it cannot leave without \
     waiting for its turn";

impl AbortOnUnwind {
    /// Arms the guard for a waiter queued in `lock` (a type name).
    #[inline(always)]
    pub(crate) const fn new(lock: &'static str) -> Self {
        AbortOnUnwind { lock, why: QUEUED }
    }

    /// Arms the guard with another reason (`why`, one clause).
    #[inline(always)]
    #[cfg_attr(loom, allow(dead_code))] // the condvar's relock is not built under loom
    pub(crate) const fn because(lock: &'static str, why: &'static str) -> Self {
        AbortOnUnwind { lock, why }
    }

    /// The guarded code returned normally.
    #[inline(always)]
    pub(crate) fn disarm(self) {
        core::mem::forget(self);
    }
}

impl Drop for AbortOnUnwind {
    #[cold]
    fn drop(&mut self) {
        abort(self.lock, self.why);
    }
}

/// With `std`: one line on stderr, then `std::process::abort`.
#[cfg(feature = "std")]
#[cold]
#[inline(never)]
fn abort(lock: &str, why: &str) -> ! {
    std::eprintln!("ron-core: {lock}: {why}; aborting");
    std::process::abort()
}

/// Without `std`: a panic while unwinding, which the runtime turns into an
/// abort ("panic in a destructor during cleanup").
#[cfg(not(feature = "std"))]
#[cold]
#[inline(never)]
fn abort(lock: &str, why: &str) -> ! {
    panic!("ron-core: {}: {}; aborting", lock, why)
}
