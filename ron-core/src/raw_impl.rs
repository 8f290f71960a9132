//! `lock_api` glue shared by every lock of the crate.
//!
//! Each lock exposes the same inherent protocol (`acquire`, `try_acquire`,
//! `release`, `is_held`, and `release_fair` where it hands over fairly);
//! this macro turns it into `lock_api::RawMutex` (+ `RawMutexFair`). Under
//! `cfg(loom)` the impls are compiled out: `RawMutex::INIT` must be a
//! constant and loom's atomics are not `const`.

/// Implements `lock_api::RawMutex` (and optionally `RawMutexFair`) for a
/// type with the inherent lock protocol.
macro_rules! impl_raw_mutex {
    (
        $(#[$doc:meta])*
        impl [$($gen:tt)*] for $ty:ty, guard = $guard:ty $(, $fair:ident)?
    ) => {
        #[cfg(not(loom))]
        // SAFETY: `acquire`/`try_acquire` return a guard only after this
        // thread took ownership with an Acquire read-modify-write that at
        // most one thread can win (see the type's state table), and
        // `release` hands ownership on with a Release store; neither
        // allocates, panics or depends on the CPU hint for exclusion. A
        // forgotten guard leaves the lock held and nothing dangling; moving
        // or dropping a held lock that is exclusively owned is plain memory.
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
