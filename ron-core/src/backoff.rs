//! Exponential backoff for the relax policies ([`crate::relax`]):
//! crossbeam-utils' `Backoff`, or under the VM the same steps and limits on
//! the VM's pauses and yields, with the pacing the VM needs to skip looks.

/// crossbeam-utils' exponential backoff.
#[cfg(not(ron_vm))]
pub(crate) use crossbeam_utils::Backoff;

/// crossbeam-utils 0.8's `Backoff` (same limits and steps) on VM pauses.
#[cfg(ron_vm)]
#[derive(Debug, Default)]
pub(crate) struct Backoff {
    step: core::cell::Cell<u32>,
}

#[cfg(ron_vm)]
impl Backoff {
    const SPIN_LIMIT: u32 = 6;
    const YIELD_LIMIT: u32 = 10;

    /// 2^step pauses (step capped at 6).
    #[inline]
    pub(crate) fn spin(&self) {
        for _ in 0..1u32 << self.step.get().min(Self::SPIN_LIMIT) {
            ron_vm::pause();
        }
        if self.step.get() <= Self::SPIN_LIMIT {
            self.step.set(self.step.get() + 1);
        }
    }

    /// The pacing of the next `spin`s (see `ron_vm::Pacing`).
    #[cfg(not(any(loom, shuttle)))]
    pub(crate) fn spin_pacing(&self) -> ron_vm::Pacing {
        ron_vm::Pacing {
            pauses: 1 << self.step.get().min(Self::SPIN_LIMIT),
            max_pauses: 1 << Self::SPIN_LIMIT,
            then_yield: false,
        }
    }

    /// The state after `n` more `spin`s.
    #[cfg(not(any(loom, shuttle)))]
    pub(crate) fn skip_spins(&self, n: u64) {
        let step = (self.step.get() as u64 + n).min(Self::SPIN_LIMIT as u64 + 1);
        self.step.set(step as u32);
    }

    /// The pacing of the next `snooze`s (see `ron_vm::Pacing`).
    #[cfg(all(feature = "std", not(any(loom, shuttle))))]
    pub(crate) fn snooze_pacing(&self) -> ron_vm::Pacing {
        ron_vm::Pacing {
            pauses: 1 << self.step.get().min(Self::SPIN_LIMIT + 1),
            max_pauses: 1 << Self::SPIN_LIMIT,
            then_yield: true,
        }
    }

    /// The state after `n` more `snooze`s.
    #[cfg(all(feature = "std", not(any(loom, shuttle))))]
    pub(crate) fn skip_snoozes(&self, n: u64) {
        let step = (self.step.get() as u64 + n).min(Self::YIELD_LIMIT as u64 + 1);
        self.step.set(step as u32);
    }

    /// 2^step pauses while step <= 6, then a yield per call.
    #[cfg(feature = "std")]
    #[inline]
    pub(crate) fn snooze(&self) {
        if self.step.get() <= Self::SPIN_LIMIT {
            for _ in 0..1u32 << self.step.get() {
                ron_vm::pause();
            }
        } else {
            ron_vm::yield_now();
        }
        if self.step.get() <= Self::YIELD_LIMIT {
            self.step.set(self.step.get() + 1);
        }
    }
}
