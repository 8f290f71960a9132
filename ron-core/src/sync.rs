//! The one place that decides between `core` atomics, loom's and shuttle's.
//!
//! All lock code imports its atomics from here, so `RUSTFLAGS="--cfg loom"`
//! swaps every protocol onto loom's model-checked atomics at once, and
//! `RUSTFLAGS="--cfg shuttle"` onto shuttle's (randomized and PCT schedules
//! of many threads; every atomic access is a schedule point, and
//! [`spin_loop`] yields to the scheduler). Loom's atomics have no
//! `const fn new`, so under loom the locks are built through their
//! non-const `new()` and the `lock_api` impls (which need `const INIT`) are
//! compiled out; shuttle's are `const`, so under shuttle everything stays.
//! When both cfgs are set, loom wins.

#[cfg(loom)]
#[allow(unused_imports)]
pub(crate) use loom::cell::UnsafeCell;
#[cfg(loom)]
#[allow(unused_imports)]
pub(crate) use loom::sync::atomic::{
    AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, fence,
};

#[cfg(all(shuttle, not(loom)))]
#[allow(unused_imports)]
pub(crate) use shuttle::sync::atomic::{
    AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, fence,
};

#[cfg(not(any(loom, shuttle)))]
#[allow(unused_imports)]
pub(crate) use core::sync::atomic::{
    AtomicBool, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, fence,
};

pub(crate) use core::sync::atomic::Ordering;

/// One iteration of a busy-wait loop: a CPU pause, or a loom / shuttle
/// yield point (under shuttle's PCT scheduler a yield also lowers the
/// spinner's priority, so a spinning waiter cannot starve the holder).
#[inline(always)]
pub(crate) fn spin_loop() {
    #[cfg(loom)]
    loom::thread::yield_now();
    #[cfg(all(shuttle, not(loom)))]
    shuttle::thread::yield_now();
    #[cfg(not(any(loom, shuttle)))]
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
