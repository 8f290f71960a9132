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
//!
//! Under `cfg(ron_vm)` (the virtual-machine harness in `vm/`, never a normal
//! build) the atomics, `spin_loop`, `yield_now`, the clock, the backoff and
//! thread-local state come from `ron-vm`: every operation is priced on a
//! virtual many-core machine and thread-locals are per virtual thread.

#[cfg(loom)]
#[allow(unused_imports)]
pub(crate) use loom::cell::UnsafeCell;
#[cfg(loom)]
#[allow(unused_imports)]
pub(crate) use loom::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, fence,
};

#[cfg(all(shuttle, not(loom)))]
#[allow(unused_imports)]
pub(crate) use shuttle::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, fence,
};

#[cfg(not(any(loom, shuttle, ron_vm)))]
#[allow(unused_imports)]
pub(crate) use core::sync::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, fence,
};
#[cfg(all(ron_vm, not(loom), not(shuttle)))]
#[allow(unused_imports)]
pub(crate) use ron_vm::atomic::{
    AtomicBool, AtomicPtr, AtomicU8, AtomicU32, AtomicU64, AtomicUsize, fence,
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
    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    ron_vm::pause();
    #[cfg(not(any(loom, shuttle, ron_vm)))]
    core::hint::spin_loop();
}

/// Gives the CPU away: `std::thread::yield_now`, or the VM's.
#[cfg(all(feature = "std", not(loom), not(shuttle)))]
#[inline]
pub(crate) fn yield_now() {
    #[cfg(ron_vm)]
    ron_vm::yield_now();
    #[cfg(not(ron_vm))]
    std::thread::yield_now();
}

#[cfg(all(feature = "std", ron_vm))]
pub(crate) use ron_vm::Instant;
/// The clock of time-based waits: `std`'s, or the VM's virtual clock.
#[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
pub(crate) use std::time::Instant;

/// Thread-local state: `std`'s, or per virtual thread under the VM (whose
/// threads all share one OS thread).
#[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
pub(crate) use std::thread_local;
#[cfg(ron_vm)]
macro_rules! vm_thread_local {
    ($(#[$m:meta])* static $name:ident: $t:ty = const { $init:expr };) => {
        $(#[$m])*
        static $name: ron_vm::FiberLocal<$t> = ron_vm::FiberLocal::new(|| $init);
    };
}
#[cfg(ron_vm)]
pub(crate) use vm_thread_local as thread_local;

/// Under the VM: the address an atomic's accesses are charged to.
#[cfg(all(ron_vm, not(loom), not(shuttle)))]
#[inline]
pub(crate) fn vm_addr<T>(atomic: &T) -> usize {
    core::ptr::from_ref(atomic) as usize
}

/// Lines [`prefetch_lines`] issues to the VM as one window of misses: the
/// longest scan a caller makes in one go (a lock's table slots, a pooled
/// block's slot words, both at most 256; checked where they are defined).
/// A longer run is issued in parts.
pub(crate) const PREFETCH_WINDOW: usize = 256;

/// Announces loads of the cache lines of `atomics`, which the caller is
/// about to make and whose addresses do not depend on each other's values
/// (a scan): a software prefetch of each line (`prefetcht0` on x86_64;
/// nothing elsewhere, and nothing under loom or shuttle), so their misses
/// overlap instead of following one another. Under the VM the loads are
/// issued together (`ron_vm::access_all`: up to its outstanding-miss
/// limit at once), as a core's prefetches are; the caller's loads after
/// it are then priced as the hits or misses they are.
#[inline]
#[allow(unused_variables)]
pub(crate) fn prefetch_lines<'a, T: 'a>(atomics: impl Iterator<Item = &'a T>) {
    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    {
        // One window for a whole scan, as a core's prefetches are.
        const _: () = assert!(PREFETCH_WINDOW <= ron_vm::ACCESS_ALL_MAX);
        let mut addrs = [0usize; PREFETCH_WINDOW];
        let mut n = 0;
        for a in atomics {
            addrs[n] = vm_addr(a);
            n += 1;
            if n == addrs.len() {
                ron_vm::access_all(&addrs, ron_vm::Access::Load);
                n = 0;
            }
        }
        if n > 0 {
            ron_vm::access_all(&addrs[..n], ron_vm::Access::Load);
        }
    }
    #[cfg(all(target_arch = "x86_64", not(any(loom, shuttle, ron_vm, miri))))]
    for a in atomics {
        // SAFETY: a prefetch is a hint that never faults nor changes memory
        // (any address is allowed); `a` is a live reference besides.
        unsafe {
            core::arch::x86_64::_mm_prefetch::<{ core::arch::x86_64::_MM_HINT_T0 }>(
                core::ptr::from_ref(a).cast::<i8>(),
            );
        }
    }
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
