//! Virtual time for instrumented code: an `Instant` read from the calling
//! virtual thread's clock.

use core::time::Duration;

use crate::exec::now_ns;

/// A point in virtual time (ns); a monotonic wall clock outside a VM.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub struct Instant(u64);

impl Instant {
    /// The calling virtual thread's clock now.
    pub fn now() -> Self {
        Instant(now_ns())
    }

    /// Virtual time since `self`.
    pub fn elapsed(&self) -> Duration {
        Duration::from_nanos(now_ns().saturating_sub(self.0))
    }

    /// `self + d`, or `None` if that is not representable.
    pub fn checked_add(&self, d: Duration) -> Option<Instant> {
        let ns = u64::try_from(d.as_nanos()).ok()?;
        self.0.checked_add(ns).map(Instant)
    }

    /// Virtual time from `earlier` to `self`, zero if `earlier` is later.
    pub fn saturating_duration_since(&self, earlier: Instant) -> Duration {
        Duration::from_nanos(self.0.saturating_sub(earlier.0))
    }
}
