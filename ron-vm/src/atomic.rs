//! Instrumented atomics: `core` atomics that report every operation to the
//! VM first (see [`access`](crate::access)), for code compiled against the
//! VM (ron-core's `cfg(ron_vm)` backend). All virtual threads share one OS
//! thread, so the real operation runs on the inner `core` atomic right after
//! the hook, with no other virtual thread in between: the VM is
//! sequentially consistent, and the `Ordering` arguments only reach the
//! inner atomic. Outside a VM they behave exactly as `core` atomics.

use core::sync::atomic::{self as ca, Ordering};

use crate::exec::{on_load, on_rmw, on_store};

macro_rules! instrumented {
    ($(#[$m:meta])* $name:ident, $t:ty, [$($fetch:ident),*]) => {
        $(#[$m])*
        #[derive(Default)]
        #[repr(transparent)]
        pub struct $name(ca::$name);

        impl $name {
            /// A new atomic holding `v`.
            pub const fn new(v: $t) -> Self {
                $name(ca::$name::new(v))
            }
            #[inline]
            fn addr(&self) -> usize {
                self as *const Self as usize
            }
            /// An instrumented load.
            #[inline]
            pub fn load(&self, order: Ordering) -> $t {
                on_load(self.addr());
                self.0.load(order)
            }
            /// Spins on this atomic: up to `spins` looks, each an
            /// instrumented load followed, while `waiting(value)`, by a
            /// pause. Returns the index of the look that ended the wait and
            /// the value it read, or `None` after `spins` looks. The VM may
            /// skip looks that cannot see a new value (see
            /// [`spin_while`](crate::spin_while)), so `waiting` must be a pure
            /// function of the value.
            #[inline]
            pub fn spin_while(
                &self,
                spins: u32,
                order: Ordering,
                mut waiting: impl FnMut($t) -> bool,
            ) -> Option<(u32, $t)> {
                let mut last = None;
                let k = crate::exec::spin_while(self.addr(), spins, || {
                    let v = self.0.load(order);
                    last = Some(v);
                    waiting(v)
                })?;
                last.map(|v| (k, v))
            }
            /// An instrumented store.
            #[inline]
            pub fn store(&self, v: $t, order: Ordering) {
                on_store(self.addr());
                self.0.store(v, order)
            }
            /// An instrumented swap (an RMW).
            #[inline]
            pub fn swap(&self, v: $t, order: Ordering) -> $t {
                on_rmw(self.addr());
                self.0.swap(v, order)
            }
            /// An instrumented CAS (an RMW, also when it fails).
            #[inline]
            pub fn compare_exchange(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                on_rmw(self.addr());
                self.0.compare_exchange(current, new, success, failure)
            }
            /// An instrumented CAS that never fails spuriously (an RMW).
            #[inline]
            pub fn compare_exchange_weak(
                &self,
                current: $t,
                new: $t,
                success: Ordering,
                failure: Ordering,
            ) -> Result<$t, $t> {
                on_rmw(self.addr());
                self.0.compare_exchange(current, new, success, failure)
            }
            $(
                /// An instrumented fetch-and-op (an RMW).
                #[inline]
                pub fn $fetch(&self, v: $t, order: Ordering) -> $t {
                    on_rmw(self.addr());
                    self.0.$fetch(v, order)
                }
            )*
            /// The value, from exclusive access (no traffic).
            pub fn into_inner(self) -> $t {
                self.0.into_inner()
            }
            /// The value, mutably, from exclusive access (no traffic).
            pub fn get_mut(&mut self) -> &mut $t {
                self.0.get_mut()
            }
            /// A raw pointer to the value (accesses through it are not charged).
            pub const fn as_ptr(&self) -> *mut $t {
                self.0.as_ptr()
            }
        }

        impl core::fmt::Debug for $name {
            fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
                // Relaxed: a debugging snapshot, not charged.
                core::fmt::Debug::fmt(&self.0.load(Ordering::Relaxed), f)
            }
        }
    };
}

instrumented!(
    /// An instrumented `AtomicBool`.
    AtomicBool, bool, [fetch_and, fetch_or, fetch_xor]
);
instrumented!(
    /// An instrumented `AtomicU8`.
    AtomicU8, u8, [fetch_add, fetch_sub, fetch_and, fetch_or, fetch_xor]
);
instrumented!(
    /// An instrumented `AtomicU32`.
    AtomicU32, u32, [fetch_add, fetch_sub, fetch_and, fetch_or, fetch_xor]
);
instrumented!(
    /// An instrumented `AtomicU64`.
    AtomicU64, u64, [fetch_add, fetch_sub, fetch_and, fetch_or, fetch_xor]
);
instrumented!(
    /// An instrumented `AtomicUsize`.
    AtomicUsize, usize, [fetch_add, fetch_sub, fetch_and, fetch_or, fetch_xor]
);

impl AtomicU32 {
    /// `FUTEX_WAIT` on this word: sleeps while it holds `seen`, until a
    /// [`futex_wake`](Self::futex_wake) or `timeout` (see
    /// [`futex_wait`](crate::futex_wait)); false outside a VM.
    pub fn futex_wait(&self, seen: u32, timeout: Option<core::time::Duration>) -> bool {
        // Relaxed: the VM runs one operation at a time (the kernel's
        // compare is atomic with its sleep).
        crate::exec::futex_wait(
            self.addr(),
            || self.0.load(Ordering::Relaxed) == seen,
            timeout,
        )
    }

    /// `FUTEX_WAKE` on this word: wakes up to `n` sleepers (see
    /// [`futex_wake`](crate::futex_wake)); how many it woke.
    pub fn futex_wake(&self, n: u32) -> u32 {
        crate::exec::futex_wake(self.addr(), n)
    }
}

/// An instrumented `AtomicPtr<T>`.
#[repr(transparent)]
pub struct AtomicPtr<T>(ca::AtomicPtr<T>);

impl<T> AtomicPtr<T> {
    /// A new atomic holding `p`.
    pub const fn new(p: *mut T) -> Self {
        AtomicPtr(ca::AtomicPtr::new(p))
    }
    #[inline]
    fn addr(&self) -> usize {
        self as *const Self as usize
    }
    /// An instrumented load.
    #[inline]
    pub fn load(&self, order: Ordering) -> *mut T {
        on_load(self.addr());
        self.0.load(order)
    }
    /// An instrumented store.
    #[inline]
    pub fn store(&self, p: *mut T, order: Ordering) {
        on_store(self.addr());
        self.0.store(p, order)
    }
    /// An instrumented swap (an RMW).
    #[inline]
    pub fn swap(&self, p: *mut T, order: Ordering) -> *mut T {
        on_rmw(self.addr());
        self.0.swap(p, order)
    }
    /// An instrumented CAS (an RMW, also when it fails).
    #[inline]
    pub fn compare_exchange(
        &self,
        current: *mut T,
        new: *mut T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<*mut T, *mut T> {
        on_rmw(self.addr());
        self.0.compare_exchange(current, new, success, failure)
    }
    /// An instrumented CAS that never fails spuriously (an RMW).
    #[inline]
    pub fn compare_exchange_weak(
        &self,
        current: *mut T,
        new: *mut T,
        success: Ordering,
        failure: Ordering,
    ) -> Result<*mut T, *mut T> {
        on_rmw(self.addr());
        self.0.compare_exchange(current, new, success, failure)
    }
}

impl<T> Default for AtomicPtr<T> {
    fn default() -> Self {
        Self::new(core::ptr::null_mut())
    }
}

impl<T> core::fmt::Debug for AtomicPtr<T> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        // Relaxed: a debugging snapshot, not charged.
        core::fmt::Debug::fmt(&self.0.load(Ordering::Relaxed), f)
    }
}

/// A fence: free in the VM (it is sequentially consistent already); the
/// real fence still runs so that code outside a VM keeps its meaning.
#[inline]
pub fn fence(order: Ordering) {
    ca::fence(order)
}

/// One busy-wait iteration: [`pause`](crate::pause).
#[inline]
pub fn spin_loop() {
    crate::exec::pause()
}
