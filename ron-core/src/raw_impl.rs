//! `lock_api` glue shared by every lock of the crate.
//!
//! Each lock exposes the same inherent protocol (`acquire`, `try_acquire`,
//! `release`, `is_held`, and `release_fair` where it hands over fairly);
//! this macro turns it into `lock_api::RawMutex` (+ `RawMutexFair`), and
//! gives the type `Default` (= `new()`) and a `Debug` that shows its
//! parameters and whether it is held. Under `cfg(loom)` the `lock_api` and
//! `Default` impls are compiled out: `RawMutex::INIT` must be a constant,
//! loom's atomics are not `const`, and loom models call `new()` themselves.

/// Implements `lock_api::RawMutex` (and optionally `RawMutexFair`),
/// `Default` and `Debug` for a type with the inherent lock protocol.
///
/// `debug "Name" { field: value, ... }` names the type and the parameters
/// its `Debug` shows before `locked`; `debug custom` leaves `Debug` to the
/// type.
macro_rules! impl_raw_mutex {
    (
        impl [$($gen:tt)*] for $ty:ty, guard = $guard:ty,
        debug $name:tt { $($field:ident : $value:expr),* $(,)? } $(, $fair:ident)?
    ) => {
        impl<$($gen)*> core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct($name)
                    $(.field(stringify!($field), &$value))*
                    .field("locked", &self.is_held())
                    .finish()
            }
        }
        $crate::raw_impl::impl_raw_mutex!(impl [$($gen)*] for $ty, guard = $guard, debug custom $(, $fair)?);
    };
    (
        impl [$($gen:tt)*] for $ty:ty, guard = $guard:ty, debug custom $(, $fair:ident)?
    ) => {
        #[cfg(not(loom))]
        impl<$($gen)*> Default for $ty {
            fn default() -> Self {
                Self::new()
            }
        }

        #[cfg(not(loom))]
        // SAFETY: `acquire`/`try_acquire` return a guard only after this
        // thread took ownership with an Acquire read-modify-write that at
        // most one thread can win (see the type's state table), and
        // `release` hands ownership on with a Release store; exclusion
        // never depends on the CPU hint. The only panics come from user
        // code (a `Relax` policy, the hint provider): an `acquire` that
        // unwinds has deregistered and owns nothing (or aborts the process,
        // for the FIFO queue and ticket locks), and a `release` that unwinds
        // (a panicking hint) has released the lock first (see
        // `unwind.rs`). A forgotten guard leaves the lock held and nothing
        // dangling; moving or dropping a held lock that is exclusively
        // owned is plain memory.
        unsafe impl<$($gen)*> lock_api::RawMutex for $ty {
            #[allow(clippy::declare_interior_mutable_const)]
            const INIT: Self = Self::new();
            type Guard = $guard;

            #[inline]
            fn lock(&self) -> $guard {
                self.acquire()
            }

            #[inline]
            fn try_lock(&self) -> Option<$guard> {
                self.try_acquire()
            }

            #[inline]
            unsafe fn unlock(&self, guard: $guard) {
                // SAFETY: the caller holds the lock with `guard`, as
                // `RawMutex::unlock` requires.
                unsafe { self.release(guard) }
            }

            #[inline]
            fn is_locked(&self) -> bool {
                self.is_held()
            }
        }
        $crate::raw_impl::impl_raw_mutex!(@fair [$($gen)*] $ty, $guard $(, $fair)?);
    };
    (@fair [$($gen:tt)*] $ty:ty, $guard:ty) => {};
    (@fair [$($gen:tt)*] $ty:ty, $guard:ty, fair) => {
        #[cfg(not(loom))]
        // SAFETY: `release_fair` has the same contract as `release` and
        // hands the lock to a waiter when there is one.
        unsafe impl<$($gen)*> lock_api::RawMutexFair for $ty {
            #[inline]
            unsafe fn unlock_fair(&self, guard: $guard) {
                // SAFETY: the caller holds the lock with `guard`.
                unsafe { self.release_fair(guard) }
            }
        }
    };
}
pub(crate) use impl_raw_mutex;
