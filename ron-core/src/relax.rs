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
//! it spins, one pause per look, and asks again after [`REPROBE_NS`]
//! (1 ms; a spinner that was preempted asks on its first look back). The
//! verdict "own" also answers the first question of the thread's next
//! waits, without a yield, for [`KEEP_OWN_NS`] (100 us): a thread taking
//! a contended lock over and over yields about once per 100 us instead
//! of once per wait. A
//! longer one means the CPU is shared: it yields on every look, timing
//! each; after a fast one it spins 128 looks and asks again (two fast
//! yields in a row to spin for long). So with one thread per CPU a waiter
//! spins (a yield in a wait longer than 128 looks unless the thread's
//! last one was less than 100 us ago, one more per ms),
//! and when threads outnumber CPUs it yields on every look after its
//! first 128, as [`SpinThenYield`] does after its 127 pauses.
//! The VM prices a yield the same way (a fixed cost, one thread per
//! virtual CPU), so the same code spins there.
//!
//! None of them parks: a waiter never sleeps in the kernel, so a lock built
//! on them keeps its handover order, but a holder that is descheduled
//! (priority inversion, oversubscription) stalls its waiters for the rest of
//! its time slice. `Yield` and `SpinThenYield` shorten that stall; they do
//! not remove it.
//!
//! A policy also tells a FIFO lock whether to queue at all
//! ([`Relax::queue_now`]): `RonTicket` asks before it takes a ticket, and
//! a waiter whose CPU [`SpinWhileAlone`] found shared waits unqueued for
//! up to [`UNQUEUED_NS`] first, since a ticket holder that is off the CPU
//! stalls every handover that reaches it.
//!
//! Without `std`, [`DefaultRelax`] is [`Backoff`]; with `std` it is
//! [`SpinWhileAlone`]. Under `cfg(loom)` every policy is a loom yield point.

use crate::backoff::Backoff as CbBackoff;

/// A waiting strategy; `relax` is called once per failed look at the lock.
///
/// # Panics
/// `R::default()` (and `queue_now`) runs before a waiter publishes
/// anything, so a panic there just unwinds (except in `Ticket` and `Fsl`,
/// which build the policy only once their ticket turns out not to be
/// served, keeping it off the uncontended path: there it aborts, as
/// `relax` does). `relax` runs while
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

    /// Whether a waiter should queue now (take a ticket, register in its
    /// slot) rather than first wait *unqueued* for up to [`UNQUEUED_NS`]
    /// (test-and-test-and-set with this policy). A queued
    /// waiter that is not running stalls every handover that reaches it,
    /// so a waiter whose CPU is shared had better not queue. `true` by
    /// default; [`SpinWhileAlone`] says `false` while its thread's last
    /// verdict found the CPU shared. Asked once per contended acquisition
    /// by [`RonTicket`](crate::RonTicket), whose FIFO slots would otherwise
    /// hand the lock to ticket holders that are off the CPU.
    fn queue_now(&self) -> bool {
        true
    }

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

/// One `sched_yield`, timed: when it returned, and whether it ran another
/// thread (it took [`FAST_YIELD_NS`] or more: the CPU is shared). The
/// signal of [`SpinWhileAlone`] and of `RonRw`'s polite writers. The
/// verdict is kept for the thread ([`own_cpu_within`]).
#[cfg(all(feature = "std", not(any(loom, shuttle))))]
#[inline]
pub(crate) fn timed_yield() -> (crate::sync::Instant, bool) {
    let t = crate::sync::Instant::now();
    crate::sync::yield_now();
    let now = crate::sync::Instant::now();
    let shared = now.saturating_duration_since(t).as_nanos() >= u128::from(FAST_YIELD_NS);
    CPU_VERDICT.with(|c| {
        c.set(if shared {
            Verdict::Shared
        } else {
            Verdict::Own(now)
        })
    });
    (now, shared)
}

#[cfg(all(feature = "std", not(any(loom, shuttle))))]
crate::sync::thread_local! {
    /// This thread's last verdict on its CPU: from its last
    /// [`timed_yield`], or `Shared` from [`mark_cpu_shared`] (`Unknown`:
    /// never asked).
    static CPU_VERDICT: core::cell::Cell<Verdict> = const { core::cell::Cell::new(Verdict::Unknown) };
}

/// When this thread's last [`timed_yield`] found its CPU its own, if that
/// was less than `max_age_ns` ago (the clock is read only when it did).
#[cfg(all(feature = "std", not(any(loom, shuttle))))]
#[inline]
pub(crate) fn own_cpu_within(max_age_ns: u64) -> Option<crate::sync::Instant> {
    let Verdict::Own(since) = CPU_VERDICT.with(core::cell::Cell::get) else {
        return None;
    };
    let age = crate::sync::Instant::now().saturating_duration_since(since);
    (age.as_nanos() < u128::from(max_age_ns)).then_some(since)
}

/// Whether this thread's last verdict on its CPU is "shared" (a slow
/// [`timed_yield`], or [`mark_cpu_shared`] since).
#[cfg(all(feature = "std", not(any(loom, shuttle))))]
#[inline]
pub(crate) fn cpu_looked_shared() -> bool {
    matches!(CPU_VERDICT.with(core::cell::Cell::get), Verdict::Shared)
}

/// Records the verdict "shared" for this thread's CPU without a yield
/// (`RonRaw` counted more of its waiters than CPUs); the next fast
/// [`timed_yield`] replaces it.
#[cfg(all(feature = "std", not(any(loom, shuttle))))]
#[inline]
pub(crate) fn mark_cpu_shared() {
    CPU_VERDICT.with(|c| c.set(Verdict::Shared));
}

/// [`SpinWhileAlone`] asks again after this long (ns) of spinning on a CPU
/// it found its own: about a time slice, so a spinner that was preempted
/// (its CPU became shared) asks on its first look back. (Under the VM a
/// question that falls due while the VM skips a waiter's looks is asked
/// at the look after the skip: waits under 1 ms run the same with and
/// without the skipping.)
pub const REPROBE_NS: u64 = 1_000_000;

/// How long (ns) a thread's verdict "my CPU is my own" carries over to its
/// next waits: their first question is answered without a yield while
/// the verdict is younger than this (within one wait, [`REPROBE_NS`]
/// applies). Far shorter than a time slice, so a thread preempted since it
/// asked asks again; long enough to span the waits of a thread that takes
/// a contended lock over and over (16 threads on 16 CPUs: one every few
/// microseconds). Measured on a 16-CPU Xeon (`docs/hardware.md`), with the
/// verdict carried over for 1 ms: the slotted RON locks ran 0.87-1.03x
/// MCS at 4 and 16 threads, against 0.71-0.84x with a yield in every
/// wait; but at 32 threads (2 per CPU) `RonTicket` and MCS, collapsed
/// either way, ran half as fast again, so a verdict now carries over for
/// a tenth of that.
pub const KEEP_OWN_NS: u64 = 100_000;

/// Looks of [`SpinWhileAlone`] before its first timed yield.
#[cfg(all(feature = "std", not(any(loom, shuttle))))]
const FIRST_LOOKS: u32 = 128;
/// [`SpinWhileAlone`] reads the clock once per this many looks.
#[cfg(all(feature = "std", not(any(loom, shuttle))))]
const CLOCK_EVERY: u32 = 32;

/// The clock of [`SpinWhileAlone`]'s verdicts (none under loom and
/// shuttle, where every policy is a yield point).
#[cfg(all(feature = "std", not(any(loom, shuttle))))]
type Clock = crate::sync::Instant;
#[cfg(all(feature = "std", any(loom, shuttle)))]
type Clock = ();

/// Where a [`SpinWhileAlone`] waiter stands.
#[cfg(feature = "std")]
#[derive(Debug, Clone, Copy)]
#[cfg_attr(any(loom, shuttle), allow(dead_code))]
enum Verdict {
    /// The first looks of a wait: spinning, not asked yet.
    Unknown,
    /// The last timed yield was fast (at this time): spinning.
    Own(Clock),
    /// The last timed yield ran another thread: a timed yield per look.
    Shared,
}

/// Spins (one `pause` per look) while the waiter's CPU looks like its own,
/// yields on every look while it looks shared (`std` only). The signal is
/// how long a `sched_yield` takes, measured with the clock: see
/// ["Whether a waiter has a CPU of its own"](self#whether-a-waiter-has-a-cpu-of-its-own).
#[cfg(feature = "std")]
#[derive(Debug)]
#[cfg_attr(any(loom, shuttle), allow(dead_code))]
pub struct SpinWhileAlone {
    /// Looks so far in this wait (wrapping).
    looks: u32,
    verdict: Verdict,
}

#[cfg(feature = "std")]
impl Default for SpinWhileAlone {
    fn default() -> Self {
        SpinWhileAlone {
            looks: 0,
            verdict: Verdict::Unknown,
        }
    }
}

#[cfg(feature = "std")]
impl SpinWhileAlone {
    /// Whether the CPU looks shared at the moment (the last timed yield
    /// ran another thread).
    pub fn looks_shared(&self) -> bool {
        matches!(self.verdict, Verdict::Shared)
    }

    /// One `sched_yield`, timed ([`timed_yield`]): `Own(now)` if no other
    /// thread ran, else `Shared`. The verdict is kept for the thread's
    /// next waits ([`first_verdict`](Self::first_verdict)).
    #[cfg(not(any(loom, shuttle)))]
    #[inline]
    fn ask() -> Verdict {
        match timed_yield() {
            (now, false) => Verdict::Own(now),
            (_, true) => Verdict::Shared,
        }
    }

    /// The first question of a wait: the thread's last verdict if it found
    /// the CPU its own less than [`KEEP_OWN_NS`] ago (so a thread that
    /// waits again and again on a CPU of its own yields about once per
    /// `KEEP_OWN_NS`, not once per wait: that yield only delays the
    /// handover it waits for), else a timed yield ([`ask`](Self::ask)).
    #[cfg(not(any(loom, shuttle)))]
    #[inline]
    fn first_verdict() -> Verdict {
        if let Some(since) = own_cpu_within(KEEP_OWN_NS) {
            crate::coverage::hit!("relax.own_cpu_kept");
            return Verdict::Own(since);
        }
        Self::ask()
    }
}

#[cfg(feature = "std")]
impl Relax for SpinWhileAlone {
    // Not under loom or shuttle: the models keep the queued paths they
    // count (the unqueued wait is the pool-exhausted one, which they reach
    // with a pool limit).
    #[inline]
    fn queue_now(&self) -> bool {
        #[cfg(not(any(loom, shuttle)))]
        {
            !cpu_looked_shared()
        }
        #[cfg(any(loom, shuttle))]
        {
            true
        }
    }

    #[inline]
    fn relax(&mut self) {
        #[cfg(any(loom, shuttle))]
        crate::sync::spin_loop();
        #[cfg(not(any(loom, shuttle)))]
        {
            self.looks = self.looks.wrapping_add(1);
            match self.verdict {
                Verdict::Unknown if self.looks < FIRST_LOOKS => crate::sync::spin_loop(),
                Verdict::Unknown => self.verdict = Self::first_verdict(),
                Verdict::Shared => {
                    // One fast yield while shared (a scheduler may return
                    // at once to a thread it still favours) is not enough
                    // to spin: spin the first looks again, then ask again.
                    if let Verdict::Own(_) = Self::ask() {
                        *self = Self::default();
                    }
                }
                Verdict::Own(since)
                    if !self.looks.is_multiple_of(CLOCK_EVERY)
                        || crate::sync::Instant::now()
                            .saturating_duration_since(since)
                            .as_nanos()
                            < u128::from(REPROBE_NS) =>
                {
                    crate::sync::spin_loop()
                }
                _ => self.verdict = Self::ask(),
            }
        }
    }

    // Under the VM, looks may only be skipped where every further relax
    // is the same: while the waiter spins on a CPU found its own (a new
    // question falls due only after `REPROBE_NS`, longer than the waits
    // the VM's suspension tests run). Before the first question and while
    // the CPU looks shared, every look runs.
    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    fn vm_pacing(&self) -> Option<ron_vm::Pacing> {
        match self.verdict {
            Verdict::Own(_) => Some(ron_vm::Pacing {
                pauses: 1,
                max_pauses: 1,
                then_yield: false,
            }),
            Verdict::Unknown | Verdict::Shared => None,
        }
    }

    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    fn vm_skip(&mut self, n: u64) {
        self.looks = self.looks.wrapping_add(n as u32);
    }
}

/// How long (ns) a waiter whose policy says not to queue
/// ([`Relax::queue_now`]) waits unqueued before it queues all the same.
///
/// A time, not a number of looks: waits that outlast 1 ms are rare enough
/// not to convoy, while queuing after a fixed number of unqueued looks
/// collapsed again; 10 and 100 ms measured no better (`docs/design.md`,
/// "`RonTicket` when threads outnumber CPUs"). It bounds how long a waiter
/// on a CPU that stays shared (a co-runner that never sleeps) goes without
/// the lock's waiting bound: after it, it queues and has it.
pub const UNQUEUED_NS: u64 = 1_000_000;

/// The unqueued part of a wait ([`Relax::queue_now`]): while it lasts, a
/// `RonTicket` waiter looks at the lock between relaxes instead of taking
/// a ticket (its pool-exhausted path).
#[derive(Debug)]
pub(crate) struct Unqueued {
    #[cfg(all(feature = "std", not(any(loom, shuttle))))]
    until: Option<crate::sync::Instant>,
}

impl Unqueued {
    /// The unqueued part of a wait whose policy is `relax`: [`UNQUEUED_NS`]
    /// from now if it says not to queue, else none.
    #[inline]
    pub(crate) fn of<R: Relax>(relax: &R) -> Unqueued {
        Self::lasting(relax.queue_now(), UNQUEUED_NS)
    }

    /// `ns` from now if `!queue`, else none (without `std`, and under loom
    /// and shuttle, none: no clock).
    #[inline]
    pub(crate) fn lasting(queue: bool, ns: u64) -> Unqueued {
        #[cfg(all(feature = "std", not(any(loom, shuttle))))]
        {
            Unqueued {
                until: if queue {
                    None
                } else {
                    crate::sync::Instant::now().checked_add(core::time::Duration::from_nanos(ns))
                },
            }
        }
        #[cfg(not(all(feature = "std", not(any(loom, shuttle)))))]
        {
            let _ = (queue, ns);
            Unqueued {}
        }
    }

    /// Whether the waiter should still wait unqueued (a clock read while it
    /// lasts; once over, it stays over).
    #[inline]
    pub(crate) fn lasts(&mut self) -> bool {
        #[cfg(all(feature = "std", not(any(loom, shuttle))))]
        {
            if let Some(until) = self.until {
                if crate::sync::Instant::now() < until {
                    return true;
                }
                self.until = None;
            }
        }
        false
    }
}

/// The policy used when a lock's type does not name one.
#[cfg(feature = "std")]
pub type DefaultRelax = SpinWhileAlone;
/// The policy used when a lock's type does not name one.
#[cfg(not(feature = "std"))]
pub type DefaultRelax = Backoff;

/// Under the VM: called by a waiting loop right after its relax, when a
/// look that waits loads the atomic at `watched` once and nothing else
/// reaches the VM, and with the value left by the last look (a failed RMW
/// included) the next look waits again; lets the VM skip the looks that
/// cannot see a new value and advances `relax` past them
/// (`ron_vm::park_looks`). A policy that does not describe its pacing
/// (`Relax::vm_pacing`) runs every look.
#[cfg(all(ron_vm, not(loom), not(shuttle)))]
#[inline]
pub(crate) fn vm_idle<R: Relax>(relax: &mut R, watched: usize) {
    if let Some(p) = relax.vm_pacing() {
        let n = ron_vm::park_looks(watched, p);
        if n > 0 {
            relax.vm_skip(n);
        }
    }
}

#[cfg(all(test, feature = "std", not(any(loom, shuttle, miri, ron_vm))))]
mod tests {
    use super::*;
    use core::time::Duration;

    /// The verdict of a wait's first question after `FIRST_LOOKS` looks,
    /// with the thread's kept verdict set to `kept` before the wait.
    fn first_verdict_with(kept: Option<crate::sync::Instant>) -> Verdict {
        CPU_VERDICT.with(|c| c.set(kept.map_or(Verdict::Unknown, Verdict::Own)));
        let mut r = SpinWhileAlone::default();
        for _ in 0..FIRST_LOOKS {
            r.relax();
        }
        r.verdict
    }

    #[test]
    fn a_recent_own_verdict_answers_the_next_wait_without_a_yield() {
        let since = crate::sync::Instant::now();
        // A verdict just taken: kept as is (a question would have timed a
        // new yield, with a later timestamp, or found the CPU shared).
        match first_verdict_with(Some(since)) {
            Verdict::Own(t) => assert_eq!(t, since, "the wait asked again"),
            v => panic!("kept verdict not used: {v:?}"),
        }
    }

    #[test]
    fn an_old_or_shared_verdict_is_asked_again() {
        let old = crate::sync::Instant::now()
            .checked_sub(Duration::from_nanos(2 * KEEP_OWN_NS))
            .expect("the clock runs longer than 200 us");
        match first_verdict_with(Some(old)) {
            Verdict::Own(t) => assert!(t > old, "an old verdict was kept"),
            Verdict::Shared => {}
            Verdict::Unknown => panic!("no question after FIRST_LOOKS looks"),
        }
        // No kept verdict: a question, whose answer is kept (or cleared).
        let v = first_verdict_with(None);
        assert!(!matches!(v, Verdict::Unknown), "no question asked");
        let kept = own_cpu_within(u64::MAX);
        match v {
            Verdict::Own(t) => assert_eq!(kept, Some(t)),
            _ => assert_eq!(kept, None),
        }
    }

    #[test]
    fn a_waiter_queues_unless_its_cpu_looked_shared() {
        std::thread::spawn(|| {
            // A new thread has no verdict: it queues.
            assert!(SpinWhileAlone::default().queue_now());
            mark_cpu_shared();
            assert!(!SpinWhileAlone::default().queue_now());
            // The other policies always queue.
            assert!(Spin.queue_now() && Backoff::default().queue_now());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn the_unqueued_wait_lasts_its_time_then_ends_for_good() {
        assert!(!Unqueued::lasting(true, 3_600_000_000_000).lasts());
        assert!(!Unqueued::lasting(false, 0).lasts());
        let mut u = Unqueued::lasting(false, 3_600_000_000_000);
        assert!(u.lasts() && u.lasts());
        // Once its time is up (here: moved into the past), it is over.
        u.until = crate::sync::Instant::now().checked_sub(Duration::from_nanos(1));
        assert!(!u.lasts());
        assert!(u.until.is_none());
    }
}
