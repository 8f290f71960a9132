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

/// The ticket lock itself, written once: [`Ticket`] and each level of
/// [`Fsl`](crate::Fsl) are one. States and guarantees: the module docs.
pub(crate) struct TicketCore {
    next: AtomicU32,
    serving: AtomicU32,
}

impl TicketCore {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked ticket lock.
        pub(crate) fn new() -> Self {
            TicketCore { next: AtomicU32::new(0), serving: AtomicU32::new(0) }
        }
    }

    /// Takes a ticket and waits for it to be served; `lock` names the lock
    /// in the abort message if `R` panics while we hold a ticket.
    #[inline]
    pub(crate) fn acquire<R: Relax>(&self, lock: &'static str) {
        // Relaxed: the ticket only orders waiters; ownership is taken by
        // the Acquire load of `serving` below.
        let t = self.next.fetch_add(1, Ordering::Relaxed);
        // Acquire: pairs with the Release store of `serving` in `release`.
        if self.serving.load(Ordering::Acquire) != t {
            self.wait_for::<R>(t, lock);
        }
    }

    /// Waits for ticket `t`. Our ticket is taken and cannot be given back
    /// without waiting for our turn (the next ticket waits for ours to be
    /// served), which deadlocks if this thread holds the lock: a panic in
    /// the relax policy aborts the process.
    #[cold]
    fn wait_for<R: Relax>(&self, t: u32, lock: &'static str) {
        let ticketed = AbortOnUnwind::new(lock);
        let mut relax = R::default();
        // Acquire: as in `acquire`.
        while self.serving.load(Ordering::Acquire) != t {
            relax.relax();
            #[cfg(all(ron_vm, not(loom), not(shuttle)))]
            crate::relax::vm_idle(&mut relax, crate::sync::vm_addr(&self.serving));
        }
        ticketed.disarm();
    }

    /// Takes the lock if nobody holds or waits for it.
    #[inline]
    pub(crate) fn try_acquire(&self) -> bool {
        // Acquire: if `s` was written by an unlock, its critical section
        // happens-before ours. mutants: not load-bearing alone: the Acquire
        // RMW in `confirm_served` reads the same unlock's store, so loom
        // kills neither of the two alone; on x86 both compile the same.
        let s = self.serving.load(Ordering::Acquire);
        // `serving <= next` always, so `next == s` at the CAS means nobody
        // holds or waits and ticket `s` (ours now) is served. Acquire on
        // success: nothing of our critical section (nor the check below)
        // moves above taking the ticket. mutants: not load-bearing: `next`
        // carries no data (its other writers are Relaxed) and the Acquire
        // RMW in `confirm_served` comes before the critical section.
        if self
            .next
            .compare_exchange(s, s.wrapping_add(1), Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        confirm_served(&self.serving, s);
        true
    }

    /// Whether tickets beyond the holder's are out (called by the holder).
    #[inline]
    pub(crate) fn has_waiters(&self) -> bool {
        // Relaxed: a taken ticket stays taken; its owner waits for `serving`.
        let n = self.next.load(Ordering::Relaxed);
        n.wrapping_sub(self.serving.load(Ordering::Relaxed)) > 1
    }

    /// Serves the next ticket.
    ///
    /// # Safety
    /// The caller holds the lock.
    #[inline]
    pub(crate) unsafe fn release(&self) {
        // Relaxed: only the holder writes `serving`.
        let s = self.serving.load(Ordering::Relaxed);
        // Release: publishes the critical section to the next ticket's owner.
        self.serving.store(s.wrapping_add(1), Ordering::Release);
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub(crate) fn is_held(&self) -> bool {
        // Relaxed: a snapshot by contract.
        self.next.load(Ordering::Relaxed) != self.serving.load(Ordering::Relaxed)
    }
}

/// FIFO ticket lock in 8 bytes, for when the order must be strict and the
/// lock small. States, guarantees and cost: the [module docs](self).
pub struct Ticket<R: Relax = DefaultRelax> {
    core: TicketCore,
    _relax: PhantomData<fn() -> R>,
}

impl<R: Relax> Ticket<R> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            Ticket { core: TicketCore::new(), _relax: PhantomData }
        }
    }

    /// Takes a ticket and waits for it to be served.
    #[inline]
    pub fn acquire(&self) {
        self.core.acquire::<R>("Ticket");
    }

    /// Takes the lock if nobody holds or waits for it.
    #[inline]
    pub fn try_acquire(&self) -> Option<()> {
        self.core.try_acquire().then_some(())
    }

    /// Releases the lock to the next ticket.
    ///
    /// # Safety
    /// The caller holds the lock.
    #[inline]
    pub unsafe fn release(&self, _guard: ()) {
        // SAFETY: forwarded contract.
        unsafe { self.core.release() }
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.core.is_held()
    }
}

crate::raw_impl::impl_default_debug! {
    impl [R: Relax] for Ticket<R>, debug "Ticket" {}
}

#[cfg(not(loom))]
// SAFETY: state table rows `0` and `k >= 1`. `lock` takes a ticket with a
// Relaxed `fetch_add` (no two threads get the same ticket: it is one RMW) and
// owns the lock from the moment an Acquire load of `serving` returns that
// ticket; `serving` is written only by the holder's `unlock` (a Release store
// of ticket + 1), so exactly one thread is served at a time and each critical
// section happens-before the next. `try_lock` owns the lock only if its CAS
// on `next` took the served ticket `s` on an empty queue, confirmed by an
// Acquire RMW on `serving` (a 2^32 wrap during a stall cannot hand it a stale
// ticket). A `Relax` panic while holding a ticket aborts the process (the
// ticket cannot be given back), so `lock` never unwinds with a ticket out;
// `unlock` runs no user code and ignores the CPU hint. A forgotten guard
// leaves the lock held, nothing dangling.
unsafe impl<R: Relax> lock_api::RawMutex for Ticket<R> {
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
// SAFETY: `unlock_fair` is `unlock`, which already serves the next ticket
// in FIFO order; the `RawMutex` argument above covers it.
unsafe impl<R: Relax> lock_api::RawMutexFair for Ticket<R> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: ()) {
        // SAFETY: the caller holds the lock.
        unsafe { self.release(guard) }
    }
}

/// After `try_acquire` took ticket `s` by a CAS on `next`: makes sure `s` is
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
fn confirm_served(serving: &AtomicU32, s: u32) {
    // Acquire: see above. Adding 0 leaves the value to the holder's store.
    // mutants: load-bearing only after a 2^32 wrap during a stall, which no
    // model reaches; otherwise `try_acquire`'s Acquire load covers it.
    if serving.fetch_add(0, Ordering::Acquire) != s {
        wait_served(serving, s);
    }
}

#[cold]
fn wait_served(serving: &AtomicU32, s: u32) {
    // Acquire: pairs with the Release store of the ticket before ours.
    // mutants: reached only after a 2^32 wrap during a stall (no model).
    while serving.load(Ordering::Acquire) != s {
        crate::sync::spin_loop();
    }
}
