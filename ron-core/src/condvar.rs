//! [`RonCondvar`]: a condition variable for every lock of the crate, as
//! `lock_api` 0.5's `RawCondvar` (+ `RawCondvarTimed` for the locks with
//! `RawMutexTimed`); [`Condvar<M>`] is the ready-made
//! `lock_api::Condvar<RonCondvar<M>>`.
//!
//! ```
//! use ron_core::{Condvar, RonRaw};
//! use lock_api::Mutex;
//! use std::sync::Arc;
//!
//! let pair = Arc::new((Mutex::<RonRaw, bool>::new(false), Condvar::<RonRaw>::new()));
//! let pair2 = Arc::clone(&pair);
//! std::thread::spawn(move || {
//!     let (m, cv) = &*pair2;
//!     *m.lock() = true;
//!     cv.notify_one();
//! });
//! let (m, cv) = &*pair;
//! let mut ready = m.lock();
//! cv.wait_while(&mut ready, |r| !*r);
//! assert!(*ready);
//! ```
//!
//! ## Protocol (a sequence counter)
//! | field | meaning | written by |
//! |---|---|---|
//! | `seq` | notifications so far (wrapping) | `+1` by every `notify_*` |
//! | `waiters` | threads between registering and waking | `+1` by a waiter before it unlocks, `-1` once it woke |
//!
//! * `wait`: `waiters += 1`, read `seq`, unlock the mutex, sleep while
//!   `seq` still holds the value read, `waiters -= 1`, relock.
//! * `notify_one` / `notify_all`: `seq += 1`, then, only if `waiters != 0`,
//!   wake one / every sleeper.
//!
//! Every access to `seq` and `waiters` is Relaxed: the mutex orders them,
//! as in `std`'s futex condvar. A waiter registers and reads `seq` before
//! it unlocks, and the condition it waits for can only change in a
//! critical section after that unlock, so a notification that announces
//! the change happens after the registration and the read (the unlock
//! synchronizes with the next lock). By coherence alone the notifier then
//! reads `waiters` at the waiter's increment or later (never below 1 before
//! the waiter woke: every decrement follows its own increment) and wakes
//! the sleepers, and its `seq` increment comes after the value the waiter
//! sleeps on, so the futex (which re-checks the word under the kernel's
//! lock) either returns at once or is woken. A notification not ordered
//! after the unlock may be ordered before the wait and need not wake it;
//! `SeqCst` counters would not change that for any caller, because the
//! waiter reads its condition before it registers: a condition changed
//! outside the mutex loses wake-ups under any ordering.
//!
//! ## How a waiter sleeps
//! * Linux with `std`: `futex(FUTEX_WAIT_PRIVATE)` on `seq` (the kernel
//!   re-checks the value under its own lock, so a notify between the read
//!   and the sleep is not lost); `notify_*` call `FUTEX_WAKE_PRIVATE` with 1
//!   or all, and skip the syscall when nobody waits. Timed waits pass the
//!   time left to the kernel.
//! * Elsewhere with `std`: the waiter polls `seq`, spinning briefly, then
//!   yielding the CPU (`crossbeam_utils::Backoff::snooze`) between looks.
//! * Without `std`: the waiter polls `seq` with exponential backoff (no
//!   sleeping is possible without an OS); no timed waits (no clock).
//!
//! ## Spurious wake-ups
//! Allowed, as with `std::sync::Condvar`: a wait may return without a
//! notification (a signal interrupting the futex, a notification meant for
//! an earlier waiter, the counter wrapping after 2^32 notifications during
//! one wait). Always wait in a loop on the condition (`wait_while`). Hence
//! `notify_one` returns `false` and `notify_all` returns `0`, as
//! `lock_api` requires of an implementation with spurious wake-ups.
//! `notify_all` wakes every waiter at once; they then queue on the mutex.
//!
//! ## Panics
//! A condvar never panics itself. If the mutex's `unlock` unwinds (the
//! mutex was released, as `lock_api` requires), the wait relocks before the
//! panic continues; if relocking panics, the process aborts (a panic while
//! unwinding), because the caller's guard could not be restored.
//!
//! Any number of mutexes may be used with one condvar at a time.

use core::marker::PhantomData;

use crate::sync::{AtomicU32, Ordering};
#[cfg(feature = "std")]
use crate::timed::Deadline;

/// A condition variable usable with any lock `M` of the crate (any
/// `lock_api::RawMutex`); see the [module docs](self).
pub struct RonCondvar<M> {
    seq: AtomicU32,
    waiters: AtomicU32,
    _mutex: PhantomData<fn(M)>,
}

/// `lock_api::Condvar` over [`RonCondvar`]: `Condvar<RonRaw>` pairs with
/// `lock_api::Mutex<RonRaw, T>`.
#[cfg(not(loom))]
pub type Condvar<M> = lock_api::Condvar<RonCondvar<M>>;

impl<M> RonCondvar<M> {
    crate::sync::const_fn_unless_loom! {
        /// A condvar nobody waits on.
        pub fn new() -> Self {
            RonCondvar { seq: AtomicU32::new(0), waiters: AtomicU32::new(0), _mutex: PhantomData }
        }
    }

    /// Registers as a waiter and returns the `seq` value to sleep on.
    #[inline]
    fn register(&self) -> u32 {
        // Relaxed (both): the mutex unlock that follows orders them before
        // every notification that must wake us (module docs, "Protocol").
        self.waiters.fetch_add(1, Ordering::Relaxed);
        self.seq.load(Ordering::Relaxed)
    }

    /// The core of `wait`, for a mutex given as closures: registers, calls
    /// `unlock` (which must release the caller's mutex), sleeps until a
    /// notification or a spurious wake-up, and returns; the caller then
    /// relocks. If `unlock` unwinds, the registration is undone first.
    pub fn wait_with(&self, unlock: impl FnOnce()) {
        let seen = self.register();
        let registered = Registered(self);
        unlock();
        self.sleep(seen);
        drop(registered);
    }

    /// As [`wait_with`](Self::wait_with), giving up at `deadline`; true if
    /// the deadline has passed when it returns.
    #[cfg(feature = "std")]
    pub fn wait_with_until(&self, unlock: impl FnOnce(), deadline: Deadline) -> bool {
        let seen = self.register();
        let registered = Registered(self);
        unlock();
        self.sleep_until(seen, deadline);
        drop(registered);
        deadline.expired()
    }

    /// Notifies one waiter (more may wake: spurious wake-ups are allowed).
    pub fn notify_one_raw(&self) {
        if self.bump() {
            crate::coverage::hit!("condvar.notify_wakes");
            sleep::wake(&self.seq, 1);
        } else {
            crate::coverage::hit!("condvar.notify_skips");
        }
    }

    /// Notifies every waiter.
    pub fn notify_all_raw(&self) {
        if self.bump() {
            crate::coverage::hit!("condvar.notify_wakes");
            sleep::wake(&self.seq, u32::MAX);
        } else {
            crate::coverage::hit!("condvar.notify_skips");
        }
    }

    /// `seq += 1`; whether anybody waits.
    #[inline]
    fn bump(&self) -> bool {
        // Relaxed (both): a waiter this notification must wake registered
        // before its unlock, which happens before us: coherence alone shows
        // us its increment and puts our bump after its `seq` read.
        self.seq.fetch_add(1, Ordering::Relaxed);
        self.waiters.load(Ordering::Relaxed) != 0
    }

    /// Sleeps while `seq == seen` (or returns spuriously).
    fn sleep(&self, seen: u32) {
        // Relaxed: a path counter's peek (verification builds only).
        #[cfg(any(loom, miri, shuttle, ron_coverage))]
        if self.seq.load(Ordering::Relaxed) == seen {
            crate::coverage::hit!("condvar.sleeps");
        }
        #[cfg(feature = "std")]
        self.sleep_until(seen, Deadline::NEVER);
        #[cfg(not(feature = "std"))]
        {
            let mut backoff = crate::relax::Backoff::default();
            // Relaxed: only waits for the value to change; the caller then
            // relocks the mutex, which orders the data.
            while self.seq.load(Ordering::Relaxed) == seen {
                crate::relax::Relax::relax(&mut backoff);
            }
        }
    }

    #[cfg(feature = "std")]
    fn sleep_until(&self, seen: u32, deadline: Deadline) {
        sleep::wait(&self.seq, seen, deadline);
    }
}

/// Undoes a waiter's registration when dropped (also on unwind).
struct Registered<'a, M>(&'a RonCondvar<M>);

impl<M> Drop for Registered<'_, M> {
    fn drop(&mut self) {
        // Relaxed: it follows our sleep, so it only lets notifiers skip a
        // wake-up that nobody needs any more.
        self.0.waiters.fetch_sub(1, Ordering::Relaxed);
    }
}

impl<M> Default for RonCondvar<M> {
    fn default() -> Self {
        Self::new()
    }
}

impl<M> core::fmt::Debug for RonCondvar<M> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("RonCondvar")
            .field("waiters", &self.waiters.load(Ordering::Relaxed)) // a snapshot
            .finish()
    }
}

#[cfg(not(loom))]
impl<M: lock_api::RawMutex> RonCondvar<M> {
    /// Relocks `mutex` into `guard` (whose state was moved out).
    ///
    /// # Safety
    /// `*guard` holds no live acquisition: it was moved out with `ptr::read`.
    unsafe fn relock(mutex: &M, guard: *mut M::Guard) {
        // The caller's guard must hold the lock again when `wait` returns or
        // unwinds; if relocking itself panics, nothing can restore that.
        let bomb = crate::unwind::AbortOnUnwind::because(
            "RonCondvar",
            "relocking the mutex after a wait panicked",
        );
        let fresh = mutex.lock();
        bomb.disarm();
        // SAFETY: `guard` is valid for writes (the caller's `&mut`) and
        // holds a moved-out value, so overwriting drops nothing live.
        unsafe { guard.write(fresh) };
    }

    /// Unlocks `mutex` with the state in `guard`, runs `wait`, and relocks
    /// into `guard`, also when `unlock` unwinds.
    ///
    /// # Safety
    /// As `RawCondvar::wait`: the caller holds `mutex` with `guard`.
    unsafe fn unlock_wait_relock<T>(
        mutex: &M,
        guard: &mut M::Guard,
        wait: impl FnOnce(&mut dyn FnMut()) -> T,
    ) -> T {
        struct Relock<'a, M: lock_api::RawMutex> {
            mutex: &'a M,
            guard: *mut M::Guard,
        }
        impl<M: lock_api::RawMutex> Drop for Relock<'_, M> {
            fn drop(&mut self) {
                // SAFETY: armed only after the guard state was moved out
                // (see below); the pointer comes from the caller's `&mut`.
                unsafe { RonCondvar::<M>::relock(self.mutex, self.guard) }
            }
        }
        let gp: *mut M::Guard = guard;
        let mut state = None;
        let mut unlock = || {
            // SAFETY: the caller holds `mutex` with `*gp`; we move the
            // state out and hand it to `unlock`, which consumes it. The
            // `Relock` armed right after restores `*gp` on every path.
            let g = unsafe { gp.read() };
            state = Some(Relock { mutex, guard: gp });
            // SAFETY: as above: `g` is the state of the caller's
            // acquisition of `mutex`.
            unsafe { mutex.unlock(g) };
        };
        let r = wait(&mut unlock);
        drop(state);
        r
    }
}

#[cfg(not(loom))]
// SAFETY: `wait` registers before it unlocks, so every notify after the
// unlock is seen (module docs); it relocks before returning, also when the
// mutex's unlock unwinds, and aborts if relocking fails. It works with any
// number of mutexes at once.
unsafe impl<M: lock_api::RawMutex> lock_api::RawCondvar for RonCondvar<M> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();
    type RawMutex = M;

    unsafe fn wait(&self, mutex: &M, guard: &mut M::Guard) {
        // SAFETY: forwarded contract: the caller holds `mutex` with `guard`.
        unsafe { Self::unlock_wait_relock(mutex, guard, |unlock| self.wait_with(unlock)) }
    }

    fn notify_one(&self) -> bool {
        self.notify_one_raw();
        false // spurious wake-ups are possible: no count is exact
    }

    fn notify_all(&self) -> usize {
        self.notify_all_raw();
        0 // as above
    }
}

#[cfg(all(feature = "std", not(loom)))]
// SAFETY: as for `RawCondvar`; `wait_until` only adds a deadline to the
// sleep.
unsafe impl<M> lock_api::RawCondvarTimed for RonCondvar<M>
where
    M: lock_api::RawMutexTimed<Duration = std::time::Duration, Instant = std::time::Instant>,
{
    fn checked_duration_to_instant(timeout: &std::time::Duration) -> Option<std::time::Instant> {
        std::time::Instant::now().checked_add(*timeout)
    }

    unsafe fn wait_until(
        &self,
        mutex: &M,
        guard: &mut M::Guard,
        timeout: &std::time::Instant,
    ) -> bool {
        let deadline = Deadline::at(*timeout);
        // SAFETY: forwarded contract: the caller holds `mutex` with `guard`.
        unsafe {
            Self::unlock_wait_relock(mutex, guard, |unlock| {
                self.wait_with_until(unlock, deadline)
            })
        }
    }
}

/// Sleeping on `seq`: the futex on Linux, polling elsewhere and under loom.
#[cfg(feature = "std")]
use crate::futex as sleep;

/// Without `std` nobody sleeps: waiters poll `seq`.
#[cfg(not(feature = "std"))]
mod sleep {
    use super::AtomicU32;

    /// Pollers need no wake-up.
    pub(super) fn wake(_seq: &AtomicU32, _n: u32) {}
}
