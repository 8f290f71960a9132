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

use crate::sync::{AtomicBool, Ordering};

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
