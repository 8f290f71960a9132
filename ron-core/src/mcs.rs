//! [`Mcs`]: the MCS queue lock, local spinning, in the waiters-only
//! (qspinlock) shape (docs/design.md, "Why lock_api 0.5 and a stateful guard").
//!
//! Waiters form a FIFO queue of nodes on their own stacks; each spins on a
//! flag in its own node until it is the queue *head*, and only the head
//! spins on the lock word. The head passes the head role to its successor
//! as soon as it owns the lock, so its node is dead before `lock()` returns:
//! the guard is a zero-size token, `unlock` just clears the lock bit,
//! `mem::forget` of a guard leaves the lock held and nothing dangling, and a
//! thread may hold any number of `Mcs` locks. The protocol and the argument
//! that no node outlives its `acquire` call are in `mcs_queue.rs` (shared
//! with [`Cna`](crate::Cna) and [`CBoMcs`](crate::CBoMcs), whose lock words
//! follow this table too).
//!
//! ## States
//! The lock word is `tail | LOCKED`: `tail` is the address of the last
//! queued waiter's node (0 when nobody waits), `LOCKED` (bit 0) says held.
//!
//! | row | `tail` | `LOCKED` | meaning |
//! |---|---|---|---|
//! | free | 0 | 0 | unlocked, nobody queued: the fast path CAS `0 -> LOCKED` takes it |
//! | held | 0 | 1 | held, nobody queued |
//! | held, queued | `t` | 1 | held; waiters queued, the first one (the *head*) spins on the word |
//! | handing over | `t` | 0 | free, waiters queued: only the head may set `LOCKED` (fast paths CAS from 0 only) |
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

/// MCS queue lock: FIFO with local spinning in one word, for when the
/// order must be strict. States, guarantees and cost: the
/// [module docs](self).
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

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.q.is_held()
    }
}

crate::raw_impl::impl_default_debug! {
    impl [R: Relax] for Mcs<R>, debug "Mcs" {}
}

#[cfg(not(loom))]
// SAFETY: state table rows "free" -> "held" (the CAS 0 -> `LOCKED` of the
// fast path and `try_lock`) and "handing over" -> "held, queued" (the one
// queue head sets `LOCKED`); both Acquire, pairing with the holder's Release
// `fetch_and` that cleared the bit. One thread is the head at a time: the
// head role passes along the queue by a Release store to the successor's
// node, read with Acquire. The queue nodes live on the waiters' stacks only
// inside `lock`: the head hands its role on before `lock` returns, so the
// guard is `()` and a forgotten guard leaves only the lock held, nothing
// dangling (`mcs_queue.rs`). A `Relax` panic while queued aborts the process
// (a linked node must not die), so `lock` never unwinds with a node in the
// queue. `unlock` runs no user code and ignores the CPU hint.
unsafe impl<R: Relax> lock_api::RawMutex for Mcs<R> {
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
        // SAFETY: the caller holds the lock with `guard`, as
        // `RawMutex::unlock` requires.
        unsafe { self.release(guard) }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.is_held()
    }
}

#[cfg(not(loom))]
// SAFETY: `unlock_fair` is `unlock`: the queue head takes the lock next, in
// FIFO order; the `RawMutex` argument above covers it.
unsafe impl<R: Relax> lock_api::RawMutexFair for Mcs<R> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: ()) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }
}
