//! [`OneCounterRw`]: a plain reader-writer lock with one reader count on
//! one cache line, written only as the comparison baseline of the VM's
//! reader-writer table (`vm-rw`). It is the shape of most shipped
//! spinning reader-writer locks (spin's, the fast path of parking_lot's):
//! every reader writes the one line, so reads do not scale with CPUs.
//! Not for use outside the VM: its atomics are ron-vm's instrumented ones.
//!
//! # State
//! One `u32`: bit 0 `WRITER` (a writer holds the lock), bit 1 `WAITING`
//! (a writer waits: new readers hold back, writer preference), bits 2..
//! the readers inside (4 per reader).
//!
//! | state | who may enter |
//! |---|---|
//! | 0 | anyone: a reader CASes `+4`, a writer CASes `WRITER` |
//! | readers, no `WAITING` | readers (CAS `+4`); a writer sets `WAITING` and waits for the count to drain |
//! | readers, `WAITING` | nobody new: the readers inside leave (`-4`), then a waiting writer CASes `WAITING` away and `WRITER` in |
//! | `WRITER` | nobody: its release clears `WRITER` |
//!
//! # Guarantees
//! Mutual exclusion between a writer and anyone else; any number of
//! readers together. Writer preference: a waiting writer stops new readers,
//! so writers do not starve; readers may wait while writers follow one
//! another (no phase bound, unlike `RonRw`). Uncontended: one load and one
//! CAS for a reader or a writer, one RMW to release.

use std::sync::atomic::Ordering;

use ron_vm::atomic::AtomicU32;

const WRITER: u32 = 1;
const WAITING: u32 = 2;
const READER: u32 = 4;

/// Looks per `spin_while` call (a wait re-enters until it is over).
const SPINS: u32 = 1 << 16;

/// A reader-writer lock with one reader count (the comparison baseline of
/// the VM's reader-writer table; see the [module docs](self)). 4 bytes.
#[derive(Debug, Default)]
pub struct OneCounterRw {
    state: AtomicU32,
}

impl OneCounterRw {
    /// Waits (a pause per look) until `ready(state)`; returns that state.
    fn wait_until(&self, ready: impl Fn(u32) -> bool) -> u32 {
        loop {
            // Relaxed: a look; the CAS that follows acquires.
            if let Some((_, s)) = self
                .state
                .spin_while(SPINS, Ordering::Relaxed, |s| !ready(s))
            {
                return s;
            }
        }
    }
}

// SAFETY: a reader enters only by a CAS from a state without `WRITER`
// (and without `WAITING`), adding its count; a writer enters only by a CAS
// from a state with no reader and no `WRITER`, so a writer excludes every
// other holder. Entering CASes are Acquire and releasing RMWs Release, so
// each critical section happens before the next conflicting one.
unsafe impl lock_api::RawRwLock for OneCounterRw {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = OneCounterRw {
        state: AtomicU32::new(0),
    };
    type SharedGuard = ();
    type ExclusiveGuard = ();

    fn lock_shared(&self) {
        // Relaxed: a first guess for the CAS.
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s & (WRITER | WAITING) != 0 {
                s = self.wait_until(|s| s & (WRITER | WAITING) == 0);
            }
            // Acquire: pairs with the last writer's Release.
            match self.state.compare_exchange_weak(
                s,
                s + READER,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return,
                Err(cur) => s = cur,
            }
        }
    }

    fn try_lock_shared(&self) -> Option<()> {
        // Relaxed: a first guess for the CAS.
        let mut s = self.state.load(Ordering::Relaxed);
        while s & (WRITER | WAITING) == 0 {
            // Acquire: as in `lock_shared`.
            match self.state.compare_exchange_weak(
                s,
                s + READER,
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(()),
                Err(cur) => s = cur,
            }
        }
        None
    }

    unsafe fn unlock_shared(&self, _: ()) {
        // Release: the reader's section happens before the next writer's entry.
        self.state.fetch_sub(READER, Ordering::Release);
    }

    fn lock_exclusive(&self) {
        // Relaxed: a first guess for the CAS.
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s & !WAITING == 0 {
                // Acquire: pairs with the Release of the last holder.
                match self.state.compare_exchange_weak(
                    s,
                    WRITER,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return,
                    Err(cur) => s = cur,
                }
                continue;
            }
            if s & WAITING == 0 {
                // Relaxed: only holds back new readers; entry is the CAS above.
                s = self.state.fetch_or(WAITING, Ordering::Relaxed) | WAITING;
                continue;
            }
            s = self.wait_until(|s| s & !WAITING == 0 || s & WAITING == 0);
        }
    }

    fn try_lock_exclusive(&self) -> Option<()> {
        // Acquire: as in `lock_exclusive`.
        self.state
            .compare_exchange(0, WRITER, Ordering::Acquire, Ordering::Relaxed)
            .ok()
            .map(|_| ())
    }

    unsafe fn unlock_exclusive(&self, _: ()) {
        // Release: the writer's section happens before the next entry.
        self.state.fetch_and(!WRITER, Ordering::Release);
    }

    fn is_locked(&self) -> bool {
        // Relaxed: a snapshot by contract.
        self.state.load(Ordering::Relaxed) & !WAITING != 0
    }

    fn is_locked_exclusive(&self) -> bool {
        // Relaxed: a snapshot by contract.
        self.state.load(Ordering::Relaxed) & WRITER != 0
    }
}

/// Any mutex as a reader-writer lock whose readers also take it
/// exclusively: the bound of no read parallelism at all (`vm-rw`'s `ttas`
/// is `Exclusive<ron_core::Ttas>`).
#[derive(Debug)]
pub struct Exclusive<M>(M);

// SAFETY: every mode takes the inner mutex, which excludes all others.
unsafe impl<M: lock_api::RawMutex> lock_api::RawRwLock for Exclusive<M> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Exclusive(M::INIT);
    type SharedGuard = M::Guard;
    type ExclusiveGuard = M::Guard;

    fn lock_shared(&self) -> M::Guard {
        self.0.lock()
    }

    fn try_lock_shared(&self) -> Option<M::Guard> {
        self.0.try_lock()
    }

    unsafe fn unlock_shared(&self, g: M::Guard) {
        // SAFETY: the caller holds the lock with guard `g`.
        unsafe { self.0.unlock(g) }
    }

    fn lock_exclusive(&self) -> M::Guard {
        self.0.lock()
    }

    fn try_lock_exclusive(&self) -> Option<M::Guard> {
        self.0.try_lock()
    }

    unsafe fn unlock_exclusive(&self, g: M::Guard) {
        // SAFETY: as in `unlock_shared`.
        unsafe { self.0.unlock(g) }
    }

    fn is_locked(&self) -> bool {
        self.0.is_locked()
    }

    fn is_locked_exclusive(&self) -> bool {
        self.0.is_locked()
    }
}
