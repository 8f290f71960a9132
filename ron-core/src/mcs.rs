//! [`Mcs`]: the MCS queue lock, local spinning, in the waiters-only
//! (qspinlock) shape (docs/design.md, "Why lock_api 0.5 and a stateful guard").
//!
//! Waiters form a FIFO queue of nodes on their own stacks; each spins on a
//! flag in its own node until it is the queue *head*, and only the head
//! spins on the lock word. The head passes the head role to its successor
//! as soon as it owns the lock, so its node is dead before `lock()` returns:
//! the guard is a zero-size token, `unlock` just clears the lock bit,
//! `mem::forget` of a guard leaves the lock held and nothing dangling, and a
//! thread may hold any number of `Mcs` locks. The protocol, its state table
//! and the argument that no node outlives its `acquire` call are in
//! `mcs_queue.rs` (shared with [`Cna`](crate::Cna) and
//! [`CBoMcs`](crate::CBoMcs)).
//!
//! ## States
//! | lock word | meaning |
//! |---|---|
//! | `0` | unlocked, no waiter |
//! | `LOCKED` | held, no waiter |
//! | `tail \| LOCKED` | held; waiters queued, the head spins on the word |
//! | `tail` | just released with waiters queued: only the head may take it |
//!
//! ## Guarantees
//! * Mutual exclusion: `LOCKED` is set only by a CAS from 0 or by the one
//!   queue head while the bit is clear.
//! * Progress and FIFO: once queued (its tail swap), a waiter with `q`
//!   waiters ahead enters after exactly `q` other acquisitions; the fast
//!   path and `try_lock` only succeed on an empty queue, so nobody barges
//!   (bounded waiting, bound `q`). Under oversubscription a descheduled
//!   head stalls the queue for its time slice (FIFO's price).
//! * Panics: a waiter whose `Relax` policy panics while its node is queued
//!   aborts the process (with a message on stderr under `std`): the node
//!   cannot leave the queue without waiting for its turn, and must not die
//!   while linked. Unlock runs no user code (`docs/panic-safety.md`).
//!
//! ## Cost
//! Bytes per lock: **8** (one word). Per waiting thread: one 128-byte node
//! on its stack, only while it waits. Uncontended lock + unlock: one CAS and
//! one `fetch_and`. Ignores the CPU hint.
//!
//! ```
//! use ron_core::Mcs;
//! let locks: Vec<lock_api::Mutex<Mcs, u32>> = (0..8).map(|_| lock_api::Mutex::new(0)).collect();
//! // Nesting: hold all eight at once.
//! let mut guards: Vec<_> = locks.iter().map(|l| l.lock()).collect();
//! for g in &mut guards {
//!     **g += 1;
//! }
//! drop(guards);
//! assert!(locks.iter().all(|l| *l.lock() == 1));
//! ```

use core::marker::PhantomData;

use crate::mcs_queue::McsQueue;
use crate::relax::{DefaultRelax, Relax};

/// MCS queue lock (waiters-only queue); see the [module docs](self).
pub struct Mcs<R: Relax = DefaultRelax> {
    q: McsQueue,
    _relax: PhantomData<fn() -> R>,
}

impl<R: Relax> Mcs<R> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            Mcs { q: McsQueue::new(), _relax: PhantomData }
        }
    }

    /// Acquires the lock, queueing FIFO behind earlier waiters.
    #[inline]
    pub fn acquire(&self) {
        if !self.q.try_fast() {
            self.q.acquire_slow::<R>(None, "Mcs");
        }
    }

    /// Takes the lock if it is free and nobody waits.
    #[inline]
    pub fn try_acquire(&self) -> Option<()> {
        self.q.try_fast().then_some(())
    }

    /// Releases the lock (the queue head takes it next).
    ///
    /// # Safety
    /// The caller holds the lock.
    #[inline]
    pub unsafe fn release(&self, _guard: ()) {
        // SAFETY: forwarded contract.
        unsafe { self.q.release() }
    }

    /// Same as [`release`](Self::release): the queue is already FIFO.
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
        self.q.is_held()
    }
}

crate::raw_impl::impl_raw_mutex! {
    impl [R: Relax] for Mcs<R>, guard = (), debug "Mcs" {}, fair
}
