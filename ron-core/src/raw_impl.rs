//! The mechanical part of every lock's `lock_api` glue: `Default` (=
//! `new()`) and a `Debug` that shows the lock's parameters and whether it
//! is held. Each lock writes its own `unsafe impl lock_api::RawMutex` (and
//! `RawMutexFair`) by hand in its file, with a SAFETY argument for that
//! lock. Under `cfg(loom)` `Default` is compiled out, as the `RawMutex`
//! impls are: `RawMutex::INIT` must be a constant, loom's atomics are not
//! `const`, and loom models call `new()` themselves.

/// Implements `Default` (= `new()`) and `Debug` for a lock type with an
/// inherent `new()` and `is_held()`.
///
/// `debug "Name" { field: value, ... }` names the type and the parameters
/// its `Debug` shows before `locked`; `debug custom` leaves `Debug` to the
/// type.
macro_rules! impl_default_debug {
    (
        impl [$($gen:tt)*] for $ty:ty,
        debug $name:tt { $($field:ident : $value:expr),* $(,)? }
    ) => {
        impl<$($gen)*> core::fmt::Debug for $ty {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                f.debug_struct($name)
                    $(.field(stringify!($field), &$value))*
                    .field("locked", &self.is_held())
                    .finish()
            }
        }
        $crate::raw_impl::impl_default_debug!(impl [$($gen)*] for $ty, debug custom);
    };
    (impl [$($gen:tt)*] for $ty:ty, debug custom) => {
        #[cfg(not(loom))]
        impl<$($gen)*> Default for $ty {
            fn default() -> Self {
                Self::new()
            }
        }
    };
}
pub(crate) use impl_default_debug;
