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
//! | [`SpinThenYield`] | `Backoff` for 7 rounds (127 pauses), then yield (`std`) | the default before [`SpinWhileAlone`]; kept to compare with |
//! | [`SpinWhileAlone`] | one `pause` per look while the CPU looks like the waiter's own; a timed `sched_yield` every so often tells (`std`) | the default with `std` |
//!
//! ## Whether a waiter has a CPU of its own
//! [`SpinWhileAlone`] asks the scheduler: after 128 looks it yields once and
//! times the yield with the clock. A `sched_yield` with nothing else
//! runnable on the CPU returns at once (about 0.5 us on a 2-CPU AMD EPYC
//! guest); one that ran another thread returns after that thread's turn
//! (3.5 us and up there, a time slice when it does not yield back). A
//! yield shorter than [`FAST_YIELD_NS`] means the CPU is the waiter's own:
//! it spins again, twice as many looks before the next probe (up to
//! 16384). A longer one means the CPU is shared: it yields on every look,
//! timing each, and goes back to spinning after a fast one. So with one
//! thread per CPU a waiter spins (a yield per doubling of its wait), and
//! when threads outnumber CPUs it behaves as [`SpinThenYield`] after its
//! first 128 looks. The VM prices a yield the same way (a fixed cost,
//! one thread per virtual CPU), so the same code spins there.
//!
//! None of them parks: a waiter never sleeps in the kernel, so a lock built
//! on them keeps its handover order, but a holder that is descheduled
//! (priority inversion, oversubscription) stalls its waiters for the rest of
//! its time slice. `Yield` and `SpinThenYield` shorten that stall; they do
//! not remove it.
//!
//! Without `std`, [`DefaultRelax`] is [`Backoff`]; with `std` it is
//! [`SpinWhileAlone`]. Under `cfg(loom)` every policy is a loom yield point.

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

/// A yield that returns sooner than this (ns) ran no other thread: the
/// waiter's CPU is its own ([`SpinWhileAlone`]).
pub const FAST_YIELD_NS: u64 = 2_000;

/// Looks of [`SpinWhileAlone`] before its first timed yield.
#[cfg(feature = "std")]
const FIRST_BUDGET: u32 = 128;
/// The most looks between two timed yields of [`SpinWhileAlone`].
#[cfg(feature = "std")]
const MAX_BUDGET: u32 = 1 << 14;

/// Spins (one `pause` per look) while the waiter's CPU looks like its own,
/// yields on every look while it looks shared (`std` only). The signal is
/// how long a `sched_yield` takes, measured with the clock: see
/// ["Whether a waiter has a CPU of its own"](self#whether-a-waiter-has-a-cpu-of-its-own).
#[cfg(feature = "std")]
#[derive(Debug)]
#[cfg_attr(any(loom, shuttle), allow(dead_code))]
pub struct SpinWhileAlone {
    /// Looks spun since the last timed yield.
    looks: u32,
    /// Looks to spin before the next timed yield.
    budget: u32,
    /// The last timed yield ran another thread: yield on every look.
    shared: bool,
}

#[cfg(feature = "std")]
impl Default for SpinWhileAlone {
    fn default() -> Self {
        SpinWhileAlone {
            looks: 0,
            budget: FIRST_BUDGET,
            shared: false,
        }
    }
}

#[cfg(feature = "std")]
impl SpinWhileAlone {
    /// Whether the CPU looks shared at the moment (the last timed yield
    /// was slow).
    pub fn looks_shared(&self) -> bool {
        self.shared
    }

    /// One `sched_yield`, timed: whether it returned within
    /// [`FAST_YIELD_NS`] (no other thread ran).
    #[cfg(not(any(loom, shuttle)))]
    #[inline]
    fn timed_yield() -> bool {
        let t = crate::sync::Instant::now();
        crate::sync::yield_now();
        t.elapsed().as_nanos() < u128::from(FAST_YIELD_NS)
    }
}

#[cfg(feature = "std")]
impl Relax for SpinWhileAlone {
    #[inline]
    fn relax(&mut self) {
        #[cfg(any(loom, shuttle))]
        crate::sync::spin_loop();
        #[cfg(not(any(loom, shuttle)))]
        {
            if !self.shared && self.looks < self.budget {
                self.looks += 1;
                crate::sync::spin_loop();
                return;
            }
            let fast = Self::timed_yield();
            if self.shared {
                if fast {
                    // Nobody else ran: the CPU is ours again.
                    *self = Self::default();
                }
            } else if fast {
                self.looks = 0;
                self.budget = (self.budget * 2).min(MAX_BUDGET);
            } else {
                self.shared = true;
            }
        }
    }

    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    fn vm_pacing(&self) -> Option<ron_vm::Pacing> {
        Some(if self.shared {
            ron_vm::Pacing {
                pauses: 1,
                max_pauses: 0,
                then_yield: true,
            }
        } else {
            ron_vm::Pacing {
                pauses: 1,
                max_pauses: 1,
                then_yield: false,
            }
        })
    }

    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    fn vm_skip(&mut self, n: u64) {
        // Skipped looks are pauses (the VM skips whole looks at the pacing
        // above); a timed yield falls due at the next relax at the latest.
        if !self.shared {
            let n = u32::try_from(n).unwrap_or(u32::MAX);
            self.looks = self.looks.saturating_add(n).min(self.budget);
        }
    }
}

/// The policy used when a lock's type does not name one.
#[cfg(feature = "std")]
pub type DefaultRelax = SpinWhileAlone;
/// The policy used when a lock's type does not name one.
#[cfg(not(feature = "std"))]
pub type DefaultRelax = Backoff;
