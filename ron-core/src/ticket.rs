//! [`Ticket`]: the FIFO ticket lock.
//!
//! Two 32-bit counters. `lock` takes a ticket (`next += 1`) and waits until
//! `serving` equals it; `unlock` advances `serving`. Waiters are served in
//! the order they took tickets, whatever their distance from the holder, so
//! every handover pays the average core-to-core latency. Under
//! oversubscription a FIFO lock stalls whenever the next ticket's owner is
//! descheduled; the default relax policy yields so the stall ends with that
//! thread's next time slice (see [`relax`](crate::relax)).
//!
//! ## States
//! | `next - serving` | meaning |
//! |---|---|
//! | 0 | unlocked |
//! | `k >= 1` | held by the owner of ticket `serving`; `k - 1` waiters queued |
//!
//! `serving` is written only by the holder (a Release store); tickets are
//! handed out by `fetch_add`, so no two threads hold the same ticket
//! (wrapping after 2^32 acquisitions is harmless while fewer than 2^32
//! threads wait; a `try_lock` confirms its ticket with one RMW on
//! `serving`, in case it read `serving` before a wrap: see
//! `confirm_served`).
//!
//! ## Guarantees
//! * Mutual exclusion: only the owner of ticket `serving` is inside.
//! * Progress and FIFO: a waiter with `q` tickets ahead of it enters after
//!   exactly `q` other acquisitions (bounded waiting, bound `q`; a
//!   `try_lock` only succeeds on an empty queue, so it never overtakes).
//! * Panics: a `Relax` panic while waiting for a taken ticket aborts the
//!   process: the ticket cannot be given back without waiting for its turn.
//!   Unlock runs no user code (`docs/panic-safety.md`).
//!
//! ## Cost
//! Bytes per lock: **8**. Uncontended lock + unlock: one `fetch_add` and
//! one store. No per-thread or per-process memory. Ignores the CPU hint.
//!
//! ```
//! use ron_core::Ticket;
//! let m: lock_api::Mutex<Ticket, u32> = lock_api::Mutex::new(0);
//! std::thread::scope(|s| {
//!     for _ in 0..3 {
//!         s.spawn(|| for _ in 0..500 { *m.lock() += 1 });
//!     }
//! });
//! assert_eq!(*m.lock(), 1500);
//! ```

use core::marker::PhantomData;

use crate::relax::{DefaultRelax, Relax};
use crate::sync::{AtomicU32, Ordering};
use crate::unwind::AbortOnUnwind;

/// FIFO ticket lock; see the [module docs](self).
pub struct Ticket<R: Relax = DefaultRelax> {
    next: AtomicU32,
    serving: AtomicU32,
    _relax: PhantomData<fn() -> R>,
}

impl<R: Relax> Ticket<R> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            Ticket { next: AtomicU32::new(0), serving: AtomicU32::new(0), _relax: PhantomData }
        }
    }

    /// Takes a ticket and waits for it to be served.
    #[inline]
    pub fn acquire(&self) {
        // Relaxed: the ticket only orders waiters; ownership is taken by
        // the Acquire load of `serving` below.
        let t = self.next.fetch_add(1, Ordering::Relaxed);
        // Acquire: pairs with the Release store of `serving` in `release`.
        if self.serving.load(Ordering::Acquire) != t {
            self.wait_for(t);
        }
    }

    /// Waits for ticket `t`. Our ticket is taken and cannot be given back
    /// without waiting for our turn (the next ticket waits for ours to be
    /// served), which deadlocks if this thread holds the lock: a panic in
    /// the relax policy aborts the process.
    #[cold]
    fn wait_for(&self, t: u32) {
        let ticketed = AbortOnUnwind::new("Ticket");
        let mut relax = R::default();
        // Acquire: as in `acquire`.
        while self.serving.load(Ordering::Acquire) != t {
            relax.relax();
        }
        ticketed.disarm();
    }

    /// Takes the lock if nobody holds or waits for it.
    #[inline]
    pub fn try_acquire(&self) -> Option<()> {
        // Acquire: if `s` was written by a release, its critical section
        // happens-before ours.
        let s = self.serving.load(Ordering::Acquire);
        // `serving <= next` always, so `next == s` at the CAS means nobody
        // holds or waits and ticket `s` (ours now) is served. Acquire on
        // success: nothing of our critical section (nor the check below)
        // moves above taking the ticket.
        if self
            .next
            .compare_exchange(s, s.wrapping_add(1), Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return None;
        }
        confirm_served(&self.serving, s);
        Some(())
    }

    /// Releases the lock to the next ticket.
    ///
    /// # Safety
    /// The caller holds the lock.
    #[inline]
    pub unsafe fn release(&self, _guard: ()) {
        // Relaxed: only the holder writes `serving`.
        let s = self.serving.load(Ordering::Relaxed);
        // Release: publishes the critical section to the next ticket's owner.
        self.serving.store(s.wrapping_add(1), Ordering::Release);
    }

    /// Same as [`release`](Self::release): every unlock is already FIFO.
    ///
    /// # Safety
    /// As for [`release`](Self::release).
    #[inline]
    pub unsafe fn release_fair(&self, guard: ()) {
        // SAFETY: same contract.
        unsafe { self.release(guard) }
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        // Relaxed: a snapshot by contract.
        self.next.load(Ordering::Relaxed) != self.serving.load(Ordering::Relaxed)
    }
}

crate::raw_impl::impl_raw_mutex! {
    impl [R: Relax] for Ticket<R>, guard = (), debug "Ticket" {}, fair
}

/// After `try_lock` took ticket `s` by a CAS on `next`: makes sure `s` is
/// served and that we are ordered after its previous owner. The Acquire load
/// of `serving` before the CAS normally did both, but a thread stalled
/// between the load and the CAS while 2^32 acquisitions wrapped the
/// counters may have read a stale `s` (no happens-before edge to the last
/// owner, who may even still hold the lock). An RMW reads the latest value
/// of `serving`: Acquire on it pairs with the last owner's Release store.
/// In the wrap case with holders left, we hold a real ticket and wait for
/// it (plain spinning: bounded by those holders' critical sections, and
/// never this thread's own, since `serving` cannot wrap while we hold).
#[inline]
pub(crate) fn confirm_served(serving: &AtomicU32, s: u32) {
    // Acquire: see above. Adding 0 leaves the value to the holder's store.
    if serving.fetch_add(0, Ordering::Acquire) != s {
        wait_served(serving, s);
    }
}

#[cold]
fn wait_served(serving: &AtomicU32, s: u32) {
    // Acquire: pairs with the Release store of the ticket before ours.
    while serving.load(Ordering::Acquire) != s {
        crate::sync::spin_loop();
    }
}
