//! Timed waiting shared by the locks whose waiters can give up
//! (`lock_api::RawMutexTimed`, `std` only).
//!
//! A lock opts in by having an inherent
//! `fn try_acquire_until(&self, deadline: Deadline) -> Option<Guard>` and
//! invoking the crate-private `impl_raw_mutex_timed!`; the macro turns `try_lock_for` and
//! `try_lock_until` into a [`Deadline`] and calls it. Locks whose waiting
//! is a plain retry loop (nothing registered, nothing to undo) write their
//! `try_acquire_until` with the crate-private `retry_until`.
//!
//! A lock whose waiter registers somewhere while it waits (a slot count, a
//! claimed flag, a queue node) writes its own loop: take the lock or look
//! at [`Deadline::expired`] between two relax steps, and on expiry undo the
//! registration before returning `None`, exactly as a waiter that leaves
//! its slot between rounds already does.
//!
//! Contract kept by every user: a `None` is returned only after the
//! deadline has passed (`lock_api` forbids an early failure), and a failed
//! attempt leaves the lock in a state where nobody waits on its behalf: no
//! grant can be handed to a thread that has left.

use std::time::Duration;

// Under `ron_vm` deadlines run on the VM's virtual clock (the host's would
// make a timed wait depend on how fast the host simulates it).
#[cfg(ron_vm)]
use crate::sync::Instant;
#[cfg(not(ron_vm))]
use std::time::Instant;

use crate::relax::Relax;

/// When a timed acquisition gives up: an instant, or never (a timeout too
/// large for `Instant`, as `lock_api` allows).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Deadline(Option<Instant>);

impl Deadline {
    /// `timeout` from now; never if that instant cannot be represented.
    #[inline]
    pub fn after(timeout: Duration) -> Self {
        Deadline(Instant::now().checked_add(timeout))
    }

    /// At `instant` (possibly in the past: then one attempt is made).
    #[cfg(not(ron_vm))]
    #[inline]
    pub fn at(instant: Instant) -> Self {
        Deadline(Some(instant))
    }

    /// At host instant `instant`, taken as that far from the virtual now
    /// (deadlines run on the VM's clock under `ron_vm`).
    #[cfg(ron_vm)]
    #[inline]
    pub fn at(instant: std::time::Instant) -> Self {
        Self::after(instant.saturating_duration_since(std::time::Instant::now()))
    }

    /// Never gives up.
    pub const NEVER: Deadline = Deadline(None);

    /// The instant, or `None` for never.
    #[inline]
    pub fn instant(self) -> Option<Instant> {
        self.0
    }

    /// Whether the deadline has passed (reads the clock).
    #[inline]
    pub fn expired(self) -> bool {
        self.0.is_some_and(|at| Instant::now() >= at)
    }

    /// Time left, `None` for never, zero once expired.
    #[inline]
    pub fn remaining(self) -> Option<Duration> {
        self.0
            .map(|at| at.saturating_duration_since(Instant::now()))
    }
}

/// Calls `attempt` until it returns `Some` or `deadline` has passed,
/// relaxing with `R` between attempts. Returns `None` only after the
/// deadline (and after at least one attempt).
#[inline]
pub(crate) fn retry_until<G, R: Relax>(
    deadline: Deadline,
    mut attempt: impl FnMut() -> Option<G>,
) -> Option<G> {
    let mut relax = R::default();
    loop {
        if let Some(g) = attempt() {
            return Some(g);
        }
        if deadline.expired() {
            return None;
        }
        relax.relax();
    }
}

/// Implements `lock_api::RawMutexTimed` (std `Duration` / `Instant`) for a
/// type that already implements `RawMutex` and has an inherent
/// `try_acquire_until(&self, Deadline) -> Option<Guard>`.
macro_rules! impl_raw_mutex_timed {
    (impl [$($gen:tt)*] for $ty:ty) => {
        #[cfg(not(loom))]
        // SAFETY: `try_acquire_until` returns a guard only for an
        // acquisition made by the same protocol as `lock`, and returns
        // `None` only after undoing any waiting state, so the `RawMutex`
        // contract carries over.
        unsafe impl<$($gen)*> lock_api::RawMutexTimed for $ty {
            type Duration = std::time::Duration;
            type Instant = std::time::Instant;

            #[inline]
            fn try_lock_for(&self, timeout: std::time::Duration) -> Option<Self::Guard> {
                self.try_acquire_until($crate::timed::Deadline::after(timeout))
            }

            #[inline]
            fn try_lock_until(&self, timeout: std::time::Instant) -> Option<Self::Guard> {
                self.try_acquire_until($crate::timed::Deadline::at(timeout))
            }
        }
    };
}
pub(crate) use impl_raw_mutex_timed;
