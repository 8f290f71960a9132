//! The test-and-set flag, written once: the lock word of [`Tas`](crate::Tas)
//! and [`Ttas`](crate::Ttas) (and through `Ttas` the global lock of
//! [`CBoMcs`](crate::CBoMcs)), and the `in_use` word of the slotted RON
//! locks (`in_use.rs`).
//!
//! ## States
//! | flag | meaning | who clears it |
//! |---|---|---|
//! | false | free | - |
//! | true | taken | the taker (or whoever it handed ownership to), with a Release store |
//!
//! Only [`try_take`](TasFlag::try_take)'s CAS `false -> true` sets the
//! flag, so at most one thread takes it per `free`; the Acquire on that CAS
//! pairs with the Release of [`free`](TasFlag::free), so the previous
//! owner's critical section happens-before the next one's.

use crate::sync::{AtomicBool, AtomicU32, Ordering};

/// One boolean: `true` while taken. Not a lock by itself (no waiting): the
/// locks built on it decide how to wait.
pub(crate) struct TasFlag(AtomicBool);

impl TasFlag {
    crate::sync::const_fn_unless_loom! {
        /// A flag saying "free".
        pub(crate) fn new() -> Self {
            TasFlag(AtomicBool::new(false))
        }
    }

    /// One CAS `false -> true`: whether this call took the flag.
    #[inline]
    pub(crate) fn try_take(&self) -> bool {
        // A CAS rather than `swap`: the same RMW cost, and loom models it
        // soundly (loom mis-orders a spinning `swap` against the holder's
        // store: tokio-rs/loom#254, so a swap-spin model never ends).
        // Acquire: pairs with the Release store in `free`, so the previous
        // owner's critical section happens-before ours. Relaxed on failure:
        // a failed attempt takes nothing.
        self.0
            .compare_exchange(false, true, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    /// A waiter's look (test-and-test-and-set): a plain load first, so the
    /// line stays shared while the flag is taken, and the CAS only when it
    /// looked free.
    #[inline]
    pub(crate) fn take_if_free(&self) -> bool {
        // Relaxed peek: only decides whether to try the CAS, which has the Acquire.
        !self.0.load(Ordering::Relaxed) && self.try_take()
    }

    /// Frees the flag. The caller owns it.
    #[inline]
    pub(crate) fn free(&self) {
        // Release: publishes the owner's critical section to the next taker.
        self.0.store(false, Ordering::Release);
    }

    /// Under the VM: the address the flag's loads are charged to.
    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    pub(crate) fn vm_addr(&self) -> usize {
        core::ptr::from_ref(&self.0) as usize
    }

    /// Whether the flag is taken (a momentary snapshot).
    #[inline]
    pub(crate) fn is_held(&self) -> bool {
        self.0.load(Ordering::Relaxed) // a snapshot by contract
    }
}

/// A waiter's view of a test-and-set flag ([`TasFlag`] or [`TasWord`]),
/// for the protocol code both serve (`plock.rs`).
pub(crate) trait TestAndSet {
    /// See [`TasFlag::is_held`].
    fn is_held(&self) -> bool;
    /// See [`TasFlag::try_take`].
    fn try_take(&self) -> bool;
    /// See [`TasFlag::take_if_free`].
    fn take_if_free(&self) -> bool;
    /// See [`TasFlag::free`].
    fn free(&self);
}

impl TestAndSet for TasFlag {
    #[inline]
    fn is_held(&self) -> bool {
        TasFlag::is_held(self)
    }
    #[inline]
    fn try_take(&self) -> bool {
        TasFlag::try_take(self)
    }
    #[inline]
    fn take_if_free(&self) -> bool {
        TasFlag::take_if_free(self)
    }
    #[inline]
    fn free(&self) {
        TasFlag::free(self)
    }
}

/// Held, in a [`TasWord`].
const HELD: u32 = 1;
/// The owner kept its block reference for its release, in a [`TasWord`].
const KEPT: u32 = 2;

/// [`TasFlag`] as a 32-bit word, with one more bit that only the owner
/// writes: whether it kept a block reference for its release (the pooled
/// plock core, `plock.rs`). A word rather than a byte: a byte-wide `lock
/// cmpxchg` measured slower on an AMD EPYC (`docs/design.md`, "`RonGrant`:
/// `RonRaw`'s waiting over `NxtRon`'s grant", the uncontended path).
///
/// | word | meaning | who writes next |
/// |---|---|---|
/// | 0 | free | anyone: CAS `0 -> HELD` |
/// | `HELD` | taken | the owner: 0 (Release), or `HELD \| KEPT` |
/// | `HELD \| KEPT` | taken; the owner holds a block reference for its release | the owner: 0 (Release), or `HELD` |
pub(crate) struct TasWord(AtomicU32);

impl TasWord {
    crate::sync::const_fn_unless_loom! {
        /// A word saying "free".
        pub(crate) fn new() -> Self {
            TasWord(AtomicU32::new(0))
        }
    }

    /// Whether the owner kept a block reference (the owner's own record:
    /// only the owner writes the bit).
    #[inline]
    pub(crate) fn kept(&self) -> bool {
        // Relaxed: the bit is the owners' own; the lock's Release/Acquire
        // (a free, a grant) orders one owner's write before the next's read.
        self.0.load(Ordering::Relaxed) & KEPT != 0
    }

    /// Records whether the owner keeps a block reference. The caller owns
    /// the lock (nobody else writes the word while it is held).
    #[inline]
    pub(crate) fn set_kept(&self, kept: bool) {
        // Relaxed: as in `kept`; waiters only compare the word with 0.
        self.0
            .store(if kept { HELD | KEPT } else { HELD }, Ordering::Relaxed);
    }
}

impl TestAndSet for TasWord {
    #[inline]
    fn is_held(&self) -> bool {
        self.0.load(Ordering::Relaxed) != 0 // a snapshot by contract
    }

    #[inline]
    fn try_take(&self) -> bool {
        // Acquire: pairs with the Release store in `free`. Relaxed on
        // failure: a failed attempt takes nothing.
        self.0
            .compare_exchange(0, HELD, Ordering::Acquire, Ordering::Relaxed)
            .is_ok()
    }

    #[inline]
    fn take_if_free(&self) -> bool {
        // Relaxed peek: only decides whether to try the CAS, which has the Acquire.
        self.0.load(Ordering::Relaxed) == 0 && self.try_take()
    }

    #[inline]
    fn free(&self) {
        // Release: publishes the owner's critical section to the next
        // taker; clears `KEPT` with it.
        self.0.store(0, Ordering::Release);
    }
}
