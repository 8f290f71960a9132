//! The one place that decides between `core` atomics and loom's.
//!
//! All lock code imports its atomics from here, so `RUSTFLAGS="--cfg loom"`
//! swaps every protocol onto loom's model-checked atomics at once. Loom's
//! atomics have no `const fn new`, so under loom the locks are built through
//! their non-const `new()` and the `lock_api` impls (which need `const INIT`)
//! are compiled out.

#[cfg(loom)]
#[allow(unused_imports)]
pub(crate) use loom::cell::UnsafeCell;
#[cfg(loom)]
#[allow(unused_imports)]
pub(crate) use loom::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, fence,
};

#[cfg(not(loom))]
#[allow(unused_imports)]
pub(crate) use core::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, fence,
};

pub(crate) use core::sync::atomic::Ordering;

/// One iteration of a busy-wait loop: a CPU pause, or a loom yield point.
#[inline(always)]
pub(crate) fn spin_loop() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(not(loom))]
    core::hint::spin_loop();
}

/// Declares a constructor that is `const` normally and non-const under loom.
macro_rules! const_fn_unless_loom {
    ($(#[$m:meta])* $vis:vis fn $name:ident() -> $ret:ty $body:block) => {
        #[cfg(not(loom))]
        $(#[$m])*
        $vis const fn $name() -> $ret $body
        #[cfg(loom)]
        $(#[$m])*
        $vis fn $name() -> $ret $body
    };
}
pub(crate) use const_fn_unless_loom;

/// Builds `[T; N]` from a constructor, in `const` context when not under loom.
macro_rules! array_init {
    ($n:expr, $init:expr) => {{
        #[cfg(not(loom))]
        {
            [const { $init }; $n]
        }
        #[cfg(loom)]
        {
            core::array::from_fn(|_| $init)
        }
    }};
}
pub(crate) use array_init;
