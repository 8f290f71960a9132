//! Relax policies: what a waiter does between two looks at the lock.
//!
//! A spinning thread is not free: it takes fetch bandwidth and execution
//! slots from its SMT sibling and, when threads outnumber CPUs, the whole
//! time slice of a thread that could have run instead (possibly the lock
//! holder). Every lock in this crate takes a policy as a type parameter:
//!
//! | policy | what it does | use when |
//! |---|---|---|
//! | [`Spin`] | one `pause` per look | one thread per CPU, short critical sections, no co-runners |
//! | [`Backoff`] | bounded exponential pauses (1, 2, 4 .. 64) | as `Spin`, with fewer coherence misses under contention |
//! | [`Yield`] | `sched_yield` per look (`std`) | heavy oversubscription |
//! | [`SpinThenYield`] | `Backoff` for 7 rounds (127 pauses), then yield (`std`) | the default with `std` |
//!
//! None of them parks: a waiter never sleeps in the kernel, so a lock built
//! on them keeps its handover order, but a holder that is descheduled
//! (priority inversion, oversubscription) stalls its waiters for the rest of
//! its time slice. `Yield` and `SpinThenYield` shorten that stall; they do
//! not remove it.
//!
//! Without `std`, [`DefaultRelax`] is [`Backoff`]; with `std` it is
//! [`SpinThenYield`]. Under `cfg(loom)` every policy is a loom yield point.

use crate::sync::Backoff as CbBackoff;

/// A waiting strategy; `relax` is called once per failed look at the lock.
///
/// # Panics
/// `R::default()` runs before a waiter publishes anything, so a panic there
/// just unwinds (except in `Ticket` and `Fsl`, which build the policy only
/// once their ticket turns out not to be served, keeping it off the
/// uncontended path: there it aborts, as `relax` does). `relax` runs while
/// the waiter is registered, queued or holds a ticket; if it panics:
/// * `Tas`, `Ttas`: nothing to undo, the panic unwinds.
/// * `Ron`, `RonPlock`, `NxtRon`, `ShRon`, and `CBoMcs` while it waits for
///   its global lock: the waiter leaves its slot, row or group lock (if the
///   lock was handed to it meanwhile, it takes it and hands it on), then
///   the panic unwinds; the lock stays usable.
/// * `Ticket`, `Fsl`, `RonTicket`, `Mcs`, `Cna`, `CBoMcs` (in its group's
///   queue): the process aborts, with a message on stderr under `std`. A
///   waiter cannot leave a FIFO queue without waiting for its turn (which
///   deadlocks if the thread holds the lock), and a queue node on a dying
///   stack frame would be undefined behaviour.
///
/// The policies of this module never panic. See `docs/panic-safety.md`.
pub trait Relax: Default {
    /// Waits a little before the caller looks at the lock again.
    fn relax(&mut self);

    /// Under the VM only (`cfg(ron_vm)`): how the next relaxes spend their
    /// time, so that the VM may skip looks that cannot see anything new;
    /// `None` (the default) runs every look.
    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    #[doc(hidden)]
    fn vm_pacing(&self) -> Option<ron_vm::Pacing> {
        None
    }

    /// Under the VM only: the state after `n` more relaxes that the VM
    /// skipped (as paced by [`vm_pacing`](Relax::vm_pacing)).
    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    #[doc(hidden)]
    fn vm_skip(&mut self, n: u64) {
        let _ = n;
    }
}

/// Busy-waits with one CPU `pause` per look.
#[derive(Debug, Default, Clone, Copy)]
pub struct Spin;

impl Relax for Spin {
    #[inline(always)]
    fn relax(&mut self) {
        crate::sync::spin_loop();
    }

    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    fn vm_pacing(&self) -> Option<ron_vm::Pacing> {
        Some(ron_vm::Pacing {
            pauses: 1,
            max_pauses: 1,
            then_yield: false,
        })
    }
}

/// Bounded exponential backoff: 1, 2, 4, .. 64 pauses per look
/// (`crossbeam_utils::Backoff::spin`; the cap keeps the reaction time to a
/// release under about a microsecond).
#[derive(Debug, Default)]
pub struct Backoff(#[cfg_attr(any(loom, shuttle), allow(dead_code))] CbBackoff);

impl Relax for Backoff {
    #[inline]
    fn relax(&mut self) {
        #[cfg(any(loom, shuttle))]
        crate::sync::spin_loop();
        #[cfg(not(any(loom, shuttle)))]
        self.0.spin();
    }

    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    fn vm_pacing(&self) -> Option<ron_vm::Pacing> {
        Some(self.0.spin_pacing())
    }

    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    fn vm_skip(&mut self, n: u64) {
        self.0.skip_spins(n);
    }
}

/// Gives the CPU back to the scheduler on every look (`std` only).
#[cfg(feature = "std")]
#[derive(Debug, Default, Clone, Copy)]
pub struct Yield;

#[cfg(feature = "std")]
impl Relax for Yield {
    #[inline]
    fn relax(&mut self) {
        #[cfg(any(loom, shuttle))]
        crate::sync::spin_loop();
        #[cfg(not(any(loom, shuttle)))]
        crate::sync::yield_now();
    }

    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    fn vm_pacing(&self) -> Option<ron_vm::Pacing> {
        Some(ron_vm::Pacing {
            pauses: 1,
            max_pauses: 0,
            then_yield: true,
        })
    }
}

/// Exponential backoff for 7 rounds (127 pauses in all), then a
/// `sched_yield` per look (`crossbeam_utils::Backoff::snooze`; `std` only).
#[cfg(feature = "std")]
#[derive(Debug, Default)]
pub struct SpinThenYield(#[cfg_attr(any(loom, shuttle), allow(dead_code))] CbBackoff);

#[cfg(feature = "std")]
impl Relax for SpinThenYield {
    #[inline]
    fn relax(&mut self) {
        #[cfg(any(loom, shuttle))]
        crate::sync::spin_loop();
        #[cfg(not(any(loom, shuttle)))]
        self.0.snooze();
    }

    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    fn vm_pacing(&self) -> Option<ron_vm::Pacing> {
        Some(self.0.snooze_pacing())
    }

    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    fn vm_skip(&mut self, n: u64) {
        self.0.skip_snoozes(n);
    }
}

/// The policy used when a lock's type does not name one.
#[cfg(feature = "std")]
pub type DefaultRelax = SpinThenYield;
/// The policy used when a lock's type does not name one.
#[cfg(not(feature = "std"))]
pub type DefaultRelax = Backoff;
