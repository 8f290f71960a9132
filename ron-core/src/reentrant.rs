//! [`RonReentrantMutex`]: `lock_api`'s `ReentrantMutex` over [`RonGrant`],
//! with a thread-id source that works with and without `std`.
//!
//! A reentrant mutex may be locked again by the thread that holds it (each
//! lock needs its own unlock); other threads wait as for a plain
//! [`RonMutex`](crate::RonMutex). `lock_api` builds it from any raw mutex
//! and a [`GetThreadId`](lock_api::GetThreadId): the owner's id (one
//! `usize`), a recursion count (one `usize`) and the holder's [`RonGrant`]
//! guard state (a 4-byte token, padded to 8) are kept next to the lock, so
//! a `RonReentrantMutex<()>` is 32 bytes on a 64-bit target.
//!
//! The thread id ([`RonThreadId`]) comes from, in order:
//! 1. a provider registered with [`set_thread_id_provider`] (the `no_std`
//!    hook: an RTOS task id, a per-core id on a machine without
//!    preemption, ...);
//! 2. with `std`, the address of a thread-local (unique among live
//!    threads, as `parking_lot` does);
//! 3. otherwise there is none, and locking panics (before touching the
//!    lock) with a message saying to register a provider.
//!
//! ```
//! use ron_core::RonReentrantMutex;
//! use std::cell::RefCell;
//!
//! let m = RonReentrantMutex::new(RefCell::new(Vec::new()));
//! let outer = m.lock();
//! outer.borrow_mut().push(1);
//! {
//!     let inner = m.lock(); // the same thread: no deadlock
//!     inner.borrow_mut().push(2);
//! }
//! drop(outer);
//! assert_eq!(*m.lock().borrow(), vec![1, 2]);
//! ```

use core::num::NonZeroUsize;

use crate::RonGrant;
use crate::sync::{AtomicPtr, Ordering};

/// A function returning the current thread's id: nonzero, unique among
/// live threads, the same on every call from one thread.
pub type ThreadIdProvider = fn() -> NonZeroUsize;

static PROVIDER: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());

/// Why [`set_thread_id_provider`] refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ProviderAlreadySet;

impl core::fmt::Display for ProviderAlreadySet {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.write_str("a thread-id provider is already registered")
    }
}

/// Registers the process-wide source of thread ids of
/// [`RonReentrantMutex`]. It can be set once; a second call fails.
///
/// # Safety
/// `provider` must return, on every call from one thread, the same nonzero
/// id, and no two live threads may get the same id (a reentrant mutex
/// would let both in). Call it before any `RonReentrantMutex` is locked:
/// a holder recorded under the previous source must not meet ids from the
/// new one.
pub unsafe fn set_thread_id_provider(provider: ThreadIdProvider) -> Result<(), ProviderAlreadySet> {
    // Release: a thread that loads the pointer (Acquire) may call it.
    PROVIDER
        .compare_exchange(
            core::ptr::null_mut(),
            provider as *mut (),
            Ordering::Release,
            Ordering::Relaxed, // failure: nothing is read through it
        )
        .map(|_| ())
        .map_err(|_| ProviderAlreadySet)
}

/// The thread-id source of [`RonReentrantMutex`] (see the [module
/// docs](self) for where ids come from).
#[derive(Debug, Clone, Copy, Default)]
pub struct RonThreadId;

/// The current thread's id from the registered provider, or `None`.
#[inline]
fn from_provider() -> Option<NonZeroUsize> {
    let p = PROVIDER.load(Ordering::Acquire); // pairs with the registration
    if p.is_null() {
        return None;
    }
    // SAFETY: only `set_thread_id_provider` stores a non-null value, and it
    // stores a `ThreadIdProvider` fn pointer.
    let f: ThreadIdProvider = unsafe { core::mem::transmute::<*mut (), ThreadIdProvider>(p) };
    Some(f())
}

#[cfg(feature = "std")]
#[inline]
fn builtin() -> NonZeroUsize {
    std::thread_local!(static ID: u8 = const { 0 });
    // The address of a live thread-local is unique among live threads and
    // never null.
    ID.with(|id| NonZeroUsize::new(core::ptr::from_ref(id).addr()).expect("non-null"))
}

#[cfg(not(feature = "std"))]
#[cold]
fn builtin() -> NonZeroUsize {
    panic!(
        "ron-core: RonReentrantMutex needs a thread-id provider without `std`: \
         register one with ron_core::reentrant::set_thread_id_provider"
    )
}

// SAFETY: a registered provider keeps the trait's contract by the contract
// of `set_thread_id_provider`; the built-in id is the address of a
// thread-local, unique among live threads and the same for one thread;
// without either, locking panics before any id is used.
unsafe impl lock_api::GetThreadId for RonThreadId {
    const INIT: Self = RonThreadId;

    #[inline]
    fn nonzero_thread_id(&self) -> NonZeroUsize {
        from_provider().unwrap_or_else(builtin)
    }
}

/// A reentrant mutex over [`RonGrant`]: the holding thread may lock it
/// again. See the [module docs](self).
pub type RonReentrantMutex<T> = lock_api::ReentrantMutex<RonGrant, RonThreadId, T>;

/// The guard of a [`RonReentrantMutex`] (shared access: reentrancy means
/// another guard of this thread may exist).
pub type RonReentrantMutexGuard<'a, T> =
    lock_api::ReentrantMutexGuard<'a, RonGrant, RonThreadId, T>;
