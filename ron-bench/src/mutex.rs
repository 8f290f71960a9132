//! One interface over every lock under test.
//!
//! Every ron-core lock (and `parking_lot`'s raw mutex) is a `lock_api` 0.5
//! `RawMutex`, driven through `lock_api::Mutex<R, T>` exactly as a user
//! would ([`Raw<R>`]). The peers that are not `lock_api` 0.5 types
//! (`std::sync::Mutex`, `spin`'s mutexes) get a one-impl adapter each. A
//! workload is written once, generic over a [`MutexFamily`], and
//! instantiated for each lock by the [registry](mod@crate::registry).

use std::marker::PhantomData;
use std::ops::DerefMut;

/// A mutex protecting a `T`, as the workloads use it.
pub trait BenchMutex<T>: Send + Sync {
    /// The guard; dropping it unlocks.
    type Guard<'a>: DerefMut<Target = T>
    where
        Self: 'a;
    /// A new unlocked mutex holding `value`.
    fn new(value: T) -> Self;
    /// Acquires the mutex.
    fn lock(&self) -> Self::Guard<'_>;
    /// Consumes the mutex and returns the data.
    fn into_inner(self) -> T;
}

/// A lock type, independent of the data it protects (a type constructor).
pub trait MutexFamily: 'static {
    /// The mutex of this family protecting a `T`.
    type Mutex<T: Send>: BenchMutex<T>;
}

/// The family of `lock_api::Mutex<R, _>` for a `lock_api` 0.5 raw mutex.
pub struct Raw<R>(PhantomData<R>);

impl<R: lock_api::RawMutex + Send + Sync + 'static> MutexFamily for Raw<R> {
    type Mutex<T: Send> = lock_api::Mutex<R, T>;
}

impl<R: lock_api::RawMutex + Send + Sync, T: Send> BenchMutex<T> for lock_api::Mutex<R, T> {
    type Guard<'a>
        = lock_api::MutexGuard<'a, R, T>
    where
        Self: 'a;

    fn new(value: T) -> Self {
        lock_api::Mutex::new(value)
    }

    #[inline]
    fn lock(&self) -> Self::Guard<'_> {
        lock_api::Mutex::lock(self)
    }

    fn into_inner(self) -> T {
        lock_api::Mutex::into_inner(self)
    }
}

/// `std::sync::Mutex` (a poisoned lock is used as is: the workloads never
/// panic while holding it).
pub struct StdMutex;

impl MutexFamily for StdMutex {
    type Mutex<T: Send> = std::sync::Mutex<T>;
}

impl<T: Send> BenchMutex<T> for std::sync::Mutex<T> {
    type Guard<'a>
        = std::sync::MutexGuard<'a, T>
    where
        Self: 'a;

    fn new(value: T) -> Self {
        std::sync::Mutex::new(value)
    }

    #[inline]
    fn lock(&self) -> Self::Guard<'_> {
        std::sync::Mutex::lock(self).unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn into_inner(self) -> T {
        std::sync::Mutex::into_inner(self).unwrap_or_else(std::sync::PoisonError::into_inner)
    }
}

/// `spin::mutex::SpinMutex` (what `spin::Mutex` is by default; named
/// explicitly so that a `use_ticket_mutex` feature elsewhere cannot change
/// it).
pub struct SpinMutex;

impl MutexFamily for SpinMutex {
    type Mutex<T: Send> = spin::mutex::SpinMutex<T>;
}

impl<T: Send> BenchMutex<T> for spin::mutex::SpinMutex<T> {
    type Guard<'a>
        = spin::mutex::SpinMutexGuard<'a, T>
    where
        Self: 'a;

    fn new(value: T) -> Self {
        spin::mutex::SpinMutex::new(value)
    }

    #[inline]
    fn lock(&self) -> Self::Guard<'_> {
        spin::mutex::SpinMutex::lock(self)
    }

    fn into_inner(self) -> T {
        spin::mutex::SpinMutex::into_inner(self)
    }
}

/// `spin::mutex::TicketMutex`.
pub struct SpinTicketMutex;

impl MutexFamily for SpinTicketMutex {
    type Mutex<T: Send> = spin::mutex::TicketMutex<T>;
}

impl<T: Send> BenchMutex<T> for spin::mutex::TicketMutex<T> {
    type Guard<'a>
        = spin::mutex::TicketMutexGuard<'a, T>
    where
        Self: 'a;

    fn new(value: T) -> Self {
        spin::mutex::TicketMutex::new(value)
    }

    #[inline]
    fn lock(&self) -> Self::Guard<'_> {
        spin::mutex::TicketMutex::lock(self)
    }

    fn into_inner(self) -> T {
        spin::mutex::TicketMutex::into_inner(self)
    }
}
