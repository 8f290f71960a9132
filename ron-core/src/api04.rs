//! `lock_api` 0.4 next to 0.5 (feature `lock_api_04`).
//!
//! Most of the ecosystem takes a `lock_api` 0.4 raw lock type parameter
//! (`lock_api::Mutex<R, T>` of 0.4, and crates generic over
//! `R: lock_api::RawMutex`). 0.4's `unlock` takes no guard state, while a
//! ron lock's 0.5 guard carries a [`PlaceToken`] for
//! some locks. Every lock gets a 0.4 path here, by one of two mechanisms,
//! and no protocol code is duplicated: both call the lock's 0.5 impl.
//!
//! | lock | 0.4 type | mechanism | extra bytes |
//! |---|---|---|---|
//! | `Tas`, `Ttas`, `Mcs`, `Ticket`, `Cna` | the lock itself | its 0.5 guard is `()`: nothing to keep | 0 |
//! | `RonRaw`, `RonInline`, `Ron`, `RonTicket`, `RonPlock`, `NxtRon`, `ShRon`, `RonPark` | the lock itself | the token is dropped at lock and the unlock passes [`PlaceToken::NONE`]: the unlock of these locks uses the token only to choose where its handover scan starts, and `NONE` (what a fast-path acquisition gets) makes it start at the releasing thread's current CPU | 0 |
//! | every lock, `CBoMcs` and `Fsl` only this way | [`Api04<L>`] | the owner stores its 0.5 guard in the wrapper while it holds the lock, and the unlock takes it back | `size_of::<L::Guard>()` plus padding: 0 for `()` guards, 4 (8 with padding next to an 8-byte lock) for a `PlaceToken` |
//!
//! `CBoMcs` and `Fsl` have no direct impl: their token names the local
//! (group) lock the acquisition went through, which the unlock must
//! release; a guess would release the wrong one. Through [`Api04`] they
//! keep their exact token.
//!
//! With the direct impls, the waiting bounds the slot locks state hold as
//! for a fast-path acquisition in 0.5 (the handover scan starts where the
//! releasing thread runs, which is where it waited unless it migrated).
//! Wrap a bounded lock in [`Api04`] to keep the exact token.
//!
//! `RawMutexFair` and (with `std`) `RawMutexTimed` come with every
//! `RawMutex` impl whose lock has them in 0.5.

use core::cell::UnsafeCell;
use core::mem::MaybeUninit;

/// Any `lock_api` 0.5 raw mutex as a `lock_api` 0.4 one: the holder keeps
/// its 0.5 guard state in the wrapper while it holds the lock.
///
/// `size_of::<Api04<L>>()` is `L`'s size plus `L::Guard`'s, with padding.
/// See the [module docs](self) for when to use it instead of a lock's
/// direct 0.4 impl.
pub struct Api04<L: lock_api::RawMutex> {
    raw: L,
    /// The guard state of the current holder: initialised by `lock` after
    /// the acquisition, read out by `unlock` before the release. Only the
    /// thread that holds `raw` (or the one it handed its 0.4 guard to)
    /// touches it.
    guard: UnsafeCell<MaybeUninit<L::Guard>>,
}

// SAFETY: moving the wrapper moves `raw` (Send) and possibly a stored guard
// state (Send).
unsafe impl<L: lock_api::RawMutex + Send> Send for Api04<L> where L::Guard: Send {}
// SAFETY: `guard` is written only after an acquisition of `raw` and read
// only before its release, by the holder: the lock's Acquire / Release
// orders these accesses between successive holders, so they never race.
// The guard state may be written on one thread and read on another (a
// guard sent away), hence `L::Guard: Send`.
unsafe impl<L: lock_api::RawMutex + Sync> Sync for Api04<L> where L::Guard: Send {}

impl<L: lock_api::RawMutex> Api04<L> {
    /// The wrapped lock (for its inherent API and diagnostics).
    pub fn inner(&self) -> &L {
        &self.raw
    }
}

impl<L: lock_api::RawMutex> core::fmt::Debug for Api04<L>
where
    L: core::fmt::Debug,
{
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_tuple("Api04").field(&self.raw).finish()
    }
}

// SAFETY: `lock` / `try_lock` return after `raw`'s acquisition (Acquire)
// and store its guard state; `unlock` takes the state back (written by the
// holder's own acquisition, see the Sync argument) and hands it to `raw`'s
// unlock (Release), exactly as the 0.5 contract requires. A forgotten 0.4
// guard leaves the lock held and the state in place; dropping the wrapper
// drops `raw` (allowed while held) and never the state (MaybeUninit).
// A panic in `raw.lock()` happens before anything is stored.
unsafe impl<L: lock_api::RawMutex> lock_api_04::RawMutex for Api04<L>
where
    L::Guard: Send,
{
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Api04 {
        raw: L::INIT,
        guard: UnsafeCell::new(MaybeUninit::uninit()),
    };
    type GuardMarker = lock_api_04::GuardSend;

    #[inline]
    fn lock(&self) {
        let g = self.raw.lock();
        // SAFETY: we hold `raw`; nobody else touches `guard` until we
        // release it.
        unsafe { (*self.guard.get()).write(g) };
    }

    #[inline]
    fn try_lock(&self) -> bool {
        match self.raw.try_lock() {
            Some(g) => {
                // SAFETY: as in `lock`.
                unsafe { (*self.guard.get()).write(g) };
                true
            }
            None => false,
        }
    }

    #[inline]
    unsafe fn unlock(&self) {
        // SAFETY: the caller holds the lock (0.4 contract), so `guard` was
        // initialised by its acquisition and only the holder touches it.
        let g = unsafe { (*self.guard.get()).assume_init_read() };
        // SAFETY: `g` is the state of the acquisition being released.
        unsafe { self.raw.unlock(g) }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.raw.is_locked()
    }
}

// SAFETY: as for `RawMutex`; `bump` runs 0.5's `bump` on the stored state
// in place, which unwinds only with the lock held and the state valid (0.5
// contract), so the 0.4 guard that unwinds still unlocks correctly.
unsafe impl<L: lock_api::RawMutexFair> lock_api_04::RawMutexFair for Api04<L>
where
    L::Guard: Send,
{
    #[inline]
    unsafe fn unlock_fair(&self) {
        // SAFETY: as in `unlock`.
        let g = unsafe { (*self.guard.get()).assume_init_read() };
        // SAFETY: as in `unlock`.
        unsafe { self.raw.unlock_fair(g) }
    }

    #[inline]
    unsafe fn bump(&self) {
        // SAFETY: the caller holds the lock: the state is initialised and
        // ours alone; 0.5's `bump` leaves it valid on return and on unwind.
        unsafe { self.raw.bump((*self.guard.get()).assume_init_mut()) }
    }
}

#[cfg(feature = "std")]
// SAFETY: as for `RawMutex`: a successful timed attempt stores its state
// like `lock`; a failed one acquired nothing and stores nothing.
unsafe impl<L: lock_api::RawMutexTimed> lock_api_04::RawMutexTimed for Api04<L>
where
    L::Guard: Send,
{
    type Duration = L::Duration;
    type Instant = L::Instant;

    #[inline]
    fn try_lock_for(&self, timeout: L::Duration) -> bool {
        match self.raw.try_lock_for(timeout) {
            Some(g) => {
                // SAFETY: as in `lock`.
                unsafe { (*self.guard.get()).write(g) };
                true
            }
            None => false,
        }
    }

    #[inline]
    fn try_lock_until(&self, timeout: L::Instant) -> bool {
        match self.raw.try_lock_until(timeout) {
            Some(g) => {
                // SAFETY: as in `lock`.
                unsafe { (*self.guard.get()).write(g) };
                true
            }
            None => false,
        }
    }
}

/// The direct 0.4 impl of a lock whose 0.4 unlock can rebuild its guard
/// state: `$g` is that state (`()`, or `PlaceToken::NONE`).
macro_rules! direct {
    (impl [$($gen:tt)*] for $ty:ty, guard = $g:expr) => {
        // SAFETY: every method calls the lock's own 0.5 method; the 0.5
        // acquisition's state is dropped (it is `()`, or a `PlaceToken`,
        // `Copy` and without drop) and the unlock passes `$g`, which is
        // valid state for any acquisition of this lock (see the module
        // docs: `()` is the only state, or the token only picks where the
        // handover scan starts and `NONE` is what a fast-path acquisition
        // gets).
        unsafe impl<$($gen)*> lock_api_04::RawMutex for $ty {
            #[allow(clippy::declare_interior_mutable_const)]
            const INIT: Self = <Self as lock_api::RawMutex>::INIT;
            type GuardMarker = lock_api_04::GuardSend;

            #[inline]
            fn lock(&self) {
                let _state = lock_api::RawMutex::lock(self);
            }

            #[inline]
            fn try_lock(&self) -> bool {
                lock_api::RawMutex::try_lock(self).is_some()
            }

            #[inline]
            unsafe fn unlock(&self) {
                // SAFETY: the caller holds the lock; `$g` is valid state
                // for its acquisition (see above).
                unsafe { lock_api::RawMutex::unlock(self, $g) }
            }

            #[inline]
            fn is_locked(&self) -> bool {
                lock_api::RawMutex::is_locked(self)
            }
        }

        // SAFETY: as above; `bump` is 0.5's, which unwinds only with the
        // lock held (and the state, rebuilt on each unlock, is not kept).
        unsafe impl<$($gen)*> lock_api_04::RawMutexFair for $ty {
            #[inline]
            unsafe fn unlock_fair(&self) {
                // SAFETY: as in `unlock`.
                unsafe { lock_api::RawMutexFair::unlock_fair(self, $g) }
            }

            #[inline]
            unsafe fn bump(&self) {
                let mut state = $g;
                // SAFETY: as in `unlock`.
                unsafe { lock_api::RawMutexFair::bump(self, &mut state) }
            }
        }

    };
    (timed impl [$($gen:tt)*] for $ty:ty) => {
        #[cfg(feature = "std")]
        // SAFETY: the lock's 0.5 timed attempt; its state is dropped as in
        // `lock`.
        unsafe impl<$($gen)*> lock_api_04::RawMutexTimed for $ty {
            type Duration = std::time::Duration;
            type Instant = std::time::Instant;

            #[inline]
            fn try_lock_for(&self, timeout: std::time::Duration) -> bool {
                lock_api::RawMutexTimed::try_lock_for(self, timeout).is_some()
            }

            #[inline]
            fn try_lock_until(&self, timeout: std::time::Instant) -> bool {
                lock_api::RawMutexTimed::try_lock_until(self, timeout).is_some()
            }
        }
    };
}

use crate::relax::Relax;
use crate::token::PlaceToken;

direct!(impl [R: Relax] for crate::Tas<R>, guard = ());
direct!(timed impl [R: Relax] for crate::Tas<R>);
direct!(impl [R: Relax] for crate::Ttas<R>, guard = ());
direct!(timed impl [R: Relax] for crate::Ttas<R>);
direct!(impl [R: Relax] for crate::Mcs<R>, guard = ());
direct!(impl [R: Relax] for crate::Ticket<R>, guard = ());
direct!(
    impl [const FLUSH_LOG2: u32, const SHUFFLE_REDUCTION: bool, R: Relax]
    for crate::Cna<FLUSH_LOG2, SHUFFLE_REDUCTION, R>, guard = ()
);
direct!(impl [] for crate::RonRaw, guard = PlaceToken::NONE);
direct!(timed impl [] for crate::RonRaw);
direct!(impl [] for crate::RonGrant, guard = PlaceToken::NONE);
direct!(timed impl [] for crate::RonGrant);
direct!(impl [const S: usize] for crate::RonInline<S>, guard = PlaceToken::NONE);
direct!(timed impl [const S: usize] for crate::RonInline<S>);
direct!(impl [const S: usize, R: Relax] for crate::Ron<S, R>, guard = PlaceToken::NONE);
direct!(timed impl [const S: usize, R: Relax] for crate::Ron<S, R>);
direct!(impl [R: Relax] for crate::RonTicket<R>, guard = PlaceToken::NONE);
direct!(impl [R: Relax] for crate::RonPlock<R>, guard = PlaceToken::NONE);
direct!(impl [R: Relax] for crate::NxtRon<R>, guard = PlaceToken::NONE);
direct!(impl [const S: usize, R: Relax] for crate::RonTicketInline<S, R>, guard = PlaceToken::NONE);
direct!(impl [const S: usize, R: Relax] for crate::RonPlockInline<S, R>, guard = PlaceToken::NONE);
direct!(impl [const S: usize, R: Relax] for crate::NxtRonInline<S, R>, guard = PlaceToken::NONE);
direct!(impl [R: Relax] for crate::ShRon<R>, guard = PlaceToken::NONE);
#[cfg(feature = "std")]
direct!(impl [const S: usize] for crate::RonPark<S>, guard = PlaceToken::NONE);
#[cfg(feature = "std")]
direct!(timed impl [const S: usize] for crate::RonPark<S>);

/// A `lock_api` 0.4 mutex over [`RonGrant`](crate::RonGrant), the default.
pub type RonMutex04<T> = lock_api_04::Mutex<crate::RonGrant, T>;
