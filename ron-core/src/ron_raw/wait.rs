//! The waiting policy of `RonRaw` and `RonInline`: how long a waiter
//! spins unregistered, spins registered, when it gives its CPU away, and
//! when it judges a handover stale (the [`Watch`]). Nothing here decides
//! who owns the lock; that is the lock word's job ([`word`](super::word)).

use super::encoding::{FREE, HANDED, TAG};
#[cfg(any(not(feature = "std"), loom, shuttle))]
use crate::sync::spin_loop;

/// Looks a waiter spends unregistered (TTAS) before it registers.
#[cfg(not(loom))]
pub const UNREGISTERED_LOOKS: u32 = 64;
/// Looks a waiter spends unregistered (TTAS) before it registers.
#[cfg(loom)]
pub const UNREGISTERED_LOOKS: u32 = 1;
/// Longest backoff (pauses between two looks) of the unregistered looks.
pub const UNREGISTERED_PAUSE_MAX: u32 = 16;
/// Registered spins of a thread's first round; later rounds adapt
/// between [`REGISTERED_SPINS_MIN`] and [`REGISTERED_SPINS_MAX`] (see the
/// [module docs](super)). A thread registers only after its CPU looked
/// its own (the first round's question), so its first round may be long
/// (measured against a first round of 128: `docs/design.md`, "The
/// registered budget's start").
#[cfg(not(loom))]
pub const REGISTERED_SPINS: u32 = 2048;
/// Doorbell spins of a registered waiter's first round.
#[cfg(loom)]
pub const REGISTERED_SPINS: u32 = 2;
/// Shortest registered spin: used while yields show the CPU is oversubscribed.
pub const REGISTERED_SPINS_MIN: u32 = 64;
/// Longest registered spin: reached while yields return at once (a CPU each).
pub const REGISTERED_SPINS_MAX: u32 = 16384;
/// What a yield that came back at once multiplies the next round's budget
/// by (up to [`REGISTERED_SPINS_MAX`]); a slow one divides it by 4.
pub const BUDGET_GROWTH: u32 = 8;
/// How often (ns) a thread that releases a contended `RonRaw` takes a
/// *fair turn*, parking_lot's "eventual fairness" (a fair unlock about
/// every 0.5 ms). It only concerns threads that outnumber CPUs:
///
/// * a release that would hand the lock along the route while the lock
///   has a parking watcher hands it to the watcher instead (see
///   [`RonRaw`](super::RonRaw)'s fair turns), so that the registered
///   waiters do not pass it among themselves while the others sleep;
/// * a release that frees the lock while its waiters are all off the CPU
///   (they hold the lock's block, none is registered) then gives its CPU
///   away, so that they get to run and take the lock instead of this
///   thread taking it back by the fast path for the rest of its time
///   slice: a yield, or a short sleep where at least [`FAIR_SLEEP_CROWD`]
///   waiters per CPU hold the block (there a yield does not hand the CPU
///   over: Linux's EEVDF scheduler pushes a yielding thread's deadline a
///   slice further on every yield, so waiters that yield often queue
///   behind the one thread that never does). Handing such a release to
///   the watcher too was measured and not kept: on 2 CPUs at 32 and 128
///   threads it ran 0.32-0.70x the pause alone (the watcher is often
///   off the CPU, and the lock waits [`PATIENCE_NS`] for a takeover).
///
/// The clock is read only at every 64th contended release (a clock read
/// on each would cost the barging thread more than the pauses do).
pub const FAIR_EVERY_NS: u64 = 500_000;
/// Releases with unseen waiters between two clock reads (see
/// [`FAIR_EVERY_NS`]).
#[cfg(all(feature = "std", not(loom), not(shuttle), not(miri)))]
const FAIR_CHECK_EVERY: u32 = 64;

#[cfg(all(feature = "std", not(loom), not(shuttle), not(miri)))]
crate::sync::thread_local! {
    /// Releases with unseen waiters since the last clock read, and the
    /// time of this thread's last fairness pause.
    static FAIR: core::cell::Cell<(u32, Option<crate::sync::Instant>)> =
        const { core::cell::Cell::new((0, None)) };
}

/// Waiters per CPU (holding the lock's block) from which the fairness
/// pause of [`FAIR_EVERY_NS`] is a sleep rather than a yield: with fewer,
/// the waiters of each CPU get their turn from yields well enough, and a
/// sleeping releaser only moves the lock to another CPU more often
/// (measured on 2 CPUs, 8 threads, nCS 0: 0.61 to 0.77 of parking_lot's
/// throughput with a sleep, 0.95 to 1.01 with a yield).
pub const FAIR_SLEEP_CROWD: usize = 4;

/// The pause [`fair_pause`] sleeps: the shortest sleep there is
/// (Linux rounds it up to the thread's timer slack, 50 µs by default).
#[cfg(all(feature = "std", not(loom), not(shuttle), not(miri), not(ron_vm)))]
const FAIR_SLEEP: core::time::Duration = core::time::Duration::from_nanos(1);

/// Whether this contended release is the thread's fair turn (see
/// [`FAIR_EVERY_NS`]): true once every `FAIR_EVERY_NS` (the clock is
/// checked every [`FAIR_CHECK_EVERY`] calls).
///
/// Never without `std` (no clock) and under Miri; always under shuttle,
/// and under loom when a model asks (`loom_fair_turns`, a `cfg(loom)`
/// item), so that the models reach the handover to the watcher.
#[inline]
pub(crate) fn fair_turn_due() -> bool {
    #[cfg(all(feature = "std", not(loom), not(shuttle), not(miri)))]
    {
        FAIR.with(|f| {
            let (n, last) = f.get();
            if n + 1 < FAIR_CHECK_EVERY {
                f.set((n + 1, last));
                return false;
            }
            let now = crate::sync::Instant::now();
            let due = last.is_none_or(|t| {
                now.saturating_duration_since(t).as_nanos() as u64 >= FAIR_EVERY_NS
            });
            f.set((0, if due { Some(now) } else { last }));
            due
        })
    }
    #[cfg(loom)]
    {
        LOOM_FAIR_TURNS.load(std::sync::atomic::Ordering::SeqCst)
    }
    #[cfg(not(any(all(feature = "std", not(loom), not(shuttle), not(miri)), loom)))]
    {
        cfg!(shuttle)
    }
}

/// Under loom: whether every release is a fair turn (see
/// `loom_fair_turns`).
#[cfg(loom)]
static LOOM_FAIR_TURNS: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Under loom, makes every release of a lock with a watcher a fair turn
/// (`on`), or none (the default, so that the other models keep their
/// paths). Set outside `loom::model`: the same for every execution.
#[cfg(loom)]
#[doc(hidden)]
pub fn loom_fair_turns(on: bool) {
    LOOM_FAIR_TURNS.store(on, std::sync::atomic::Ordering::SeqCst);
}

/// The pause of a fair turn ([`fair_turn_due`]): gives the CPU away, so
/// that the waiters of this CPU run and take the lock. With at least
/// [`FAIR_SLEEP_CROWD`] waiters per CPU (`waiters` is asked then) it
/// sleeps for a moment, otherwise it yields.
///
/// Why a sleep in a crowd: a `sched_yield` does not take the CPU from a
/// thread that keeps running when the threads beside it yield too. Linux's
/// EEVDF scheduler pushes a yielding thread's deadline one slice further on
/// every yield, so waiters that yield often queue behind the one thread
/// that never does. Measured with `ron bench --threads 128 --ncs 0` on 2
/// CPUs: with a yield here, one thread made 30 to 65 % of all acquisitions
/// in most runs (fairness factor 0.72 to 0.95); with the sleep, 0.53 to
/// 0.62. A sleeping thread leaves the run queue, so its CPU's waiters run
/// and take the lock.
///
/// Does nothing without `std` (no scheduler to ask) and under the model
/// checkers and Miri; always yields in the virtual machine.
#[inline]
pub(crate) fn fair_pause(waiters: impl FnOnce() -> u32) {
    #[cfg(all(feature = "std", not(loom), not(shuttle), not(miri), not(ron_vm)))]
    if waiters() as usize >= FAIR_SLEEP_CROWD * super::park::cpus() {
        crate::coverage::hit!("ron_raw.fair_sleep");
        std::thread::sleep(FAIR_SLEEP);
    } else {
        crate::coverage::hit!("ron_raw.fair_yield");
        crate::sync::yield_now();
    }
    #[cfg(all(feature = "std", not(loom), not(shuttle), not(miri), ron_vm))]
    {
        let _ = waiters;
        crate::coverage::hit!("ron_raw.fair_yield");
        crate::sync::yield_now();
    }
    #[cfg(not(all(feature = "std", not(loom), not(shuttle), not(miri))))]
    let _ = waiters;
}

/// How long (ns) a waiter of another slot watches one unchanged `HANDED`
/// value before it takes the handover over (`std`). A running grantee takes
/// its handover within about a microsecond; a grantee that was preempted
/// while registered would hold everyone up for a scheduler round.
pub const PATIENCE_NS: u64 = 10_000;
/// Longest gap (ns) between two looks of one waiter across which it still
/// counts a `HANDED` value as watched without a break. A waiter back from a
/// longer yield (or preemption) starts watching anew: the word's 16-bit
/// `seq` repeats after 65,536 handovers, and each handover costs at least a
/// few cache-line transfers and atomic read-modify-writes (over 25 ns), so
/// 65,536 of them take well over this horizon. Within it an unchanged word
/// is therefore one and the same handover; a new one is never judged stale
/// by an observation that predates it.
pub const WATCH_HORIZON_NS: u64 = 500_000;
/// Looks at one unchanged `HANDED` value after which a waiter of another
/// slot takes the handover over (without `std`, where there is no clock).
#[cfg(not(any(loom, miri)))]
pub const PATIENCE: u32 = 64;
/// Looks at one unchanged `HANDED` value after which a waiter of another
/// slot takes the handover over. Under loom and Miri the watch counts looks
/// even with `std`: loom has no clock, and Miri's virtual clock advances
/// about 100 us per look, which would make every handover stale at its
/// second look (or, with [`WATCH_HORIZON_NS`], never).
#[cfg(any(loom, miri))]
pub const PATIENCE: u32 = 1;

/// Tracks how long one `HANDED` value has stayed in the lock word, as seen
/// by one waiter.
pub(crate) struct Watch {
    last: u32,
    looks: u32,
    /// First look at `last` in the current unbroken watch.
    #[cfg(all(feature = "std", not(loom), not(miri), not(shuttle)))]
    since: Option<crate::sync::Instant>,
    /// The latest look at a `HANDED` word.
    #[cfg(all(feature = "std", not(loom), not(miri), not(shuttle)))]
    seen: Option<crate::sync::Instant>,
}

impl Watch {
    pub(crate) fn new() -> Self {
        Watch {
            last: FREE,
            looks: 0,
            #[cfg(all(feature = "std", not(loom), not(miri), not(shuttle)))]
            since: None,
            #[cfg(all(feature = "std", not(loom), not(miri), not(shuttle)))]
            seen: None,
        }
    }

    /// Records a look at `word`; true once the same `HANDED` word has been
    /// watched for [`PATIENCE_NS`] (with `std`) or [`PATIENCE`] looks in a
    /// row. With `std` the watch spans yields (a waiter that saw a handover
    /// before it yielded and sees the same one after the yield takes it at
    /// once) but not gaps longer than [`WATCH_HORIZON_NS`].
    #[inline]
    pub(crate) fn stale(&mut self, word: u32) -> bool {
        #[cfg(all(feature = "std", not(loom), not(miri), not(shuttle)))]
        if word & TAG == HANDED {
            return self.stale_at(word, crate::sync::Instant::now());
        }
        if word != self.last {
            self.last = word;
            self.looks = 0;
            return false;
        }
        self.looks = self.looks.saturating_add(1);
        self.looks >= PATIENCE
    }

    /// Whether the word of the latest look (the last one given to
    /// [`stale`](Self::stale)) was a handover.
    #[inline]
    pub(crate) fn saw_handover(&self) -> bool {
        self.last & TAG == HANDED
    }

    /// [`stale`](Self::stale) for a `HANDED` word looked at at time `now`.
    #[cfg(all(feature = "std", not(loom), not(miri), not(shuttle)))]
    pub(crate) fn stale_at(&mut self, word: u32, now: crate::sync::Instant) -> bool {
        let horizon = core::time::Duration::from_nanos(WATCH_HORIZON_NS);
        let broken = self
            .seen
            .is_none_or(|t| now.saturating_duration_since(t) > horizon);
        self.seen = Some(now);
        match self.since {
            Some(since) if word == self.last && !broken => {
                now.saturating_duration_since(since).as_nanos() as u64 >= PATIENCE_NS
            }
            _ => {
                self.last = word;
                self.looks = 0;
                self.since = Some(now);
                false
            }
        }
    }
}

#[cfg(all(feature = "std", not(loom), not(shuttle)))]
crate::sync::thread_local! {
    /// The registered spin budget this thread's last `RonRaw` round ended
    /// with: its next wait starts there instead of at [`REGISTERED_SPINS`], so
    /// a thread that waits long every time (many waiters, one CPU each)
    /// does not climb from a short round through yields and
    /// re-registrations on every acquisition.
    static BUDGET: core::cell::Cell<u32> = const { core::cell::Cell::new(REGISTERED_SPINS) };
}

/// Shared rounds (`RonGrant`'s, in `plock.rs`) in which a thread skips
/// the short spin before its first yield after a spin that did not take
/// the lock: where spins miss (a lock held by threads that are not
/// running) they cost the CPU that the holder may be waiting for, and
/// one round in `SHARED_SPIN_SKIP + 1` asks again.
#[cfg(all(feature = "std", not(loom), not(shuttle)))]
pub(crate) const SHARED_SPIN_SKIP: u8 = 8;

#[cfg(all(feature = "std", not(loom), not(shuttle)))]
crate::sync::thread_local! {
    /// Shared rounds left that skip the spin ([`SHARED_SPIN_SKIP`]).
    static SHARED_SPIN_SKIPS: core::cell::Cell<u8> = const { core::cell::Cell::new(0) };
}

/// Whether this shared round should spin before its first yield: no
/// while the countdown of [`SHARED_SPIN_SKIP`] runs (this call counts one
/// off it).
#[cfg(all(feature = "std", not(loom), not(shuttle)))]
pub(crate) fn shared_spin_due() -> bool {
    SHARED_SPIN_SKIPS.with(|c| match c.get() {
        0 => true,
        n => {
            c.set(n - 1);
            false
        }
    })
}

/// Records that a shared round's spin did not take the lock: the next
/// [`SHARED_SPIN_SKIP`] shared rounds skip theirs.
#[cfg(all(feature = "std", not(loom), not(shuttle)))]
pub(crate) fn shared_spin_missed() {
    SHARED_SPIN_SKIPS.with(|c| c.set(SHARED_SPIN_SKIP));
}

/// Never without `std` (no shared rounds: a CPU never looks shared there).
#[cfg(not(all(feature = "std", not(loom), not(shuttle))))]
pub(crate) fn shared_spin_due() -> bool {
    false
}

/// Nothing to record without `std`.
#[cfg(not(all(feature = "std", not(loom), not(shuttle))))]
pub(crate) fn shared_spin_missed() {}

/// The registered spin budget to start a wait with: the one this thread's
/// last round ended with ([`REGISTERED_SPINS`] at first, and always without
/// `std`).
#[inline]
pub(crate) fn first_budget() -> u32 {
    #[cfg(all(feature = "std", not(loom), not(shuttle)))]
    {
        BUDGET.with(|b| b.get())
    }
    #[cfg(not(all(feature = "std", not(loom), not(shuttle))))]
    {
        REGISTERED_SPINS
    }
}

/// Yields the CPU and returns the next round's registered spin budget:
/// times [`BUDGET_GROWTH`] (up to [`REGISTERED_SPINS_MAX`]) when the yield came back within
/// [`FAST_YIELD_NS`](crate::relax::FAST_YIELD_NS) (nobody else was
/// runnable), quartered (down to [`REGISTERED_SPINS_MIN`]) when another
/// thread ran meanwhile.
#[cfg(all(feature = "std", not(loom), not(shuttle)))]
pub(crate) fn give_cpu_away(spins: u32) -> u32 {
    let next = if yield_cpu() {
        (spins * BUDGET_GROWTH).min(REGISTERED_SPINS_MAX)
    } else {
        (spins / 4).max(REGISTERED_SPINS_MIN)
    };
    BUDGET.with(|b| b.set(next));
    next
}

/// Whether this thread's last verdict on its CPU is "shared" (the
/// thread's one verdict, in [`relax`](crate::relax)).
#[cfg(all(feature = "std", not(loom), not(shuttle)))]
pub(crate) fn cpu_looked_shared() -> bool {
    crate::relax::cpu_looked_shared()
}

/// Records that this thread's CPU looks shared (the lock's waiters
/// outnumber the CPUs), for [`cpu_looked_shared`]; the next quick yield
/// clears it.
#[cfg(all(feature = "std", not(loom), not(shuttle)))]
pub(crate) fn mark_cpu_shared() {
    crate::relax::mark_cpu_shared();
}

/// Nothing to record without `std` (and under loom and shuttle).
#[cfg(any(not(feature = "std"), loom, shuttle))]
pub(crate) fn mark_cpu_shared() {}

/// Yields the CPU, timed ([`relax::timed_yield`](crate::relax::timed_yield):
/// the thread's one verdict on its CPU); returns whether the yield came
/// back within [`FAST_YIELD_NS`](crate::relax::FAST_YIELD_NS) (nobody else
/// was runnable here) and records the answer for [`cpu_looked_shared`].
#[cfg(all(feature = "std", not(loom), not(shuttle)))]
pub(crate) fn yield_cpu() -> bool {
    !crate::relax::timed_yield().1
}

/// Whether a wait should first ask the scheduler (one timed yield,
/// [`yield_cpu`]) whether its CPU is shared: when this thread's CPU did
/// not look shared and it has no verdict younger than
/// [`KEEP_OWN_NS`](crate::relax::KEEP_OWN_NS) that the CPU is its own.
/// Without the question a waiter on a CPU it shares with other runnable
/// threads registers and spins whenever its wait ends before its first
/// round does (no yield, so nothing learnt): its handovers keep the lock
/// moving between CPUs while those threads wait for a time slice
/// (measured in `docs/design.md`, "`RonRaw` asks before its first
/// registration"). A thread that waits again and again on a CPU of its
/// own yields about once per `KEEP_OWN_NS`.
#[cfg(all(feature = "std", not(loom), not(shuttle), not(miri)))]
pub(crate) fn verdict_due() -> bool {
    !cpu_looked_shared() && crate::relax::own_cpu_within(crate::relax::KEEP_OWN_NS).is_none()
}

/// Never without `std` (no scheduler to ask), under loom and shuttle (no
/// clock), and under Miri, whose virtual clock makes every yield look
/// slow (the waits there keep the paths they had: registered first).
#[cfg(any(not(feature = "std"), loom, shuttle, miri))]
pub(crate) fn verdict_due() -> bool {
    false
}

/// Without `std` there is no scheduler to ask (and under shuttle, whose
/// schedules must replay, no clock): back off and keep the budget.
#[cfg(all(any(not(feature = "std"), shuttle), not(loom)))]
pub(crate) fn give_cpu_away(spins: u32) -> u32 {
    for _ in 0..64 {
        spin_loop();
    }
    spins
}

/// Under loom: one yield point (64 would only multiply the schedules).
#[cfg(loom)]
pub(crate) fn give_cpu_away(spins: u32) -> u32 {
    spin_loop();
    spins
}

/// Without `std` (and under loom or shuttle) a CPU never looks shared.
#[cfg(any(not(feature = "std"), loom, shuttle))]
pub(crate) fn cpu_looked_shared() -> bool {
    false
}

/// Never called without `std` ([`cpu_looked_shared`] is false there).
#[cfg(any(not(feature = "std"), loom, shuttle))]
pub(crate) fn yield_cpu() -> bool {
    true
}

// Plain unit tests: not under loom or shuttle, whose atomics need their runtime.
#[cfg(all(test, not(loom), not(shuttle)))]
mod tests {
    use super::super::encoding::{FREE, LOCKED, handed};
    use super::*;

    #[cfg(feature = "std")]
    #[test]
    fn a_missed_shared_spin_skips_the_next_shared_rounds_spins() {
        // A new thread: its countdown starts at zero.
        std::thread::spawn(|| {
            assert!(shared_spin_due(), "a thread's first shared round spins");
            shared_spin_missed();
            for round in 0..SHARED_SPIN_SKIP {
                assert!(
                    !shared_spin_due(),
                    "round {round} after a miss skips its spin"
                );
            }
            assert!(shared_spin_due(), "the round after the skips spins again");
            assert!(
                shared_spin_due(),
                "and so does the next, with no miss between"
            );
        })
        .join()
        .unwrap();
    }

    #[cfg(all(feature = "std", not(miri)))]
    #[test]
    fn watch_spans_short_gaps_only() {
        use core::time::Duration;
        use std::time::Instant;
        let ns = Duration::from_nanos;
        let t0 = Instant::now();
        let w = handed(1, 7);
        // Watched without a break: stale after PATIENCE_NS.
        let mut watch = Watch::new();
        assert!(!watch.stale_at(w, t0));
        assert!(!watch.stale_at(w, t0 + ns(PATIENCE_NS - 1)));
        assert!(watch.stale_at(w, t0 + ns(PATIENCE_NS)));
        // Across a short yield: still the same watch.
        let mut watch = Watch::new();
        assert!(!watch.stale_at(w, t0));
        assert!(watch.stale_at(w, t0 + ns(WATCH_HORIZON_NS)));
        // Across a gap beyond the horizon (the word may have wrapped): a
        // new watch, however long ago the first look was.
        let mut watch = Watch::new();
        assert!(!watch.stale_at(w, t0));
        let back = t0 + ns(WATCH_HORIZON_NS + 1);
        assert!(!watch.stale_at(w, back));
        assert!(!watch.stale_at(w, back + ns(PATIENCE_NS - 1)));
        assert!(watch.stale_at(w, back + ns(PATIENCE_NS)));
        // A different handover (or a LOCKED word between) restarts the watch.
        let mut watch = Watch::new();
        assert!(!watch.stale_at(w, t0));
        assert!(!watch.stale_at(handed(1, 8), t0 + ns(PATIENCE_NS)));
        let mut watch = Watch::new();
        assert!(!watch.stale_at(w, t0));
        assert!(!watch.stale(LOCKED));
        assert!(!watch.stale_at(w, t0 + ns(PATIENCE_NS)));
    }

    #[cfg(all(feature = "std", not(miri)))]
    #[test]
    fn a_thread_asks_until_it_has_a_verdict() {
        // A new thread has none; one whose CPU looked shared does not ask
        // (its shared round yields anyway).
        std::thread::spawn(|| {
            assert!(verdict_due());
            mark_cpu_shared();
            assert!(!verdict_due());
        })
        .join()
        .unwrap();
    }

    #[test]
    fn watch_counts_looks_at_other_words() {
        let mut watch = Watch::new();
        assert!(!watch.stale(LOCKED));
        for _ in 1..PATIENCE {
            assert!(!watch.stale(LOCKED));
        }
        assert!(watch.stale(LOCKED));
        assert!(!watch.stale(FREE));
    }
}
