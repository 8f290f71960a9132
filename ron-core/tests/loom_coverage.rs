//! Loom models of `NxtRon`, `RonPlock` and `ShRon` that reach the paths
//! they are named after, and count them (`ron_core::coverage`).
//!
//! Run: `RUSTFLAGS="--cfg loom" cargo test -p ron-core --release --test
//! loom_coverage -- --nocapture` (prints the counts per model).
//!
//! The models of `loom.rs` / `loom_queue.rs` keep critical sections
//! empty, so with one preemption most schedules never see a waiter
//! registered while the lock is held. Here the holder waits inside its
//! critical section (yielding) until the waiters say they registered (the
//! `on_wait` hook of `acquire_in_observed`, or a claimed ShRon row), so
//! every schedule goes through the handover: waiters register, two of them
//! in one slot, the unlock grants a slot, the grantee takes it, the last
//! unlock frees, and the holder comes back for a second round while
//! handovers are still in flight. Every model checks mutual exclusion (a
//! `loom::cell::UnsafeCell` counter), the final count, that the lock is
//! free at the end and, for ShRon, that the column went back to the table;
//! then it asserts that each path it is named after was reached at least
//! once over the explored schedules.
#![cfg(loom)]

mod common;

use std::sync::Mutex;

use common::Shared;
use loom::sync::Arc;
use loom::thread;
use ron_core::sh_ron::ShTable;
use ron_core::{
    NxtRon, NxtRonInline, PlaceToken, Ron, RonPlock, RonPlockInline, RonTicket, RonTicketInline,
    ShRon, coverage,
};

/// Preemption bound of the two-thread models.
const BOUND_2: usize = 2;
/// Preemption bound of the three-thread models: the holder's wait inside
/// its critical section already forces the waiters to run and register
/// there; preemptions on top multiply the schedules of their spin loops
/// (one preemption: minutes per model).
const BOUND_3: usize = 0;

/// The path counters are process-wide: one model at a time.
static SERIAL: Mutex<()> = Mutex::new(());

/// Explores `model` with `bound` preemptions after resetting the counters,
/// prints every counter of the `prefixes` and asserts each of `must`.
fn explore<F>(name: &str, bound: usize, prefixes: &[&str], must: &[&str], model: F)
where
    F: Fn() + Sync + Send + 'static,
{
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    coverage::reset();
    let runs = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let r = runs.clone();
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(bound);
    b.max_branches = 100_000;
    b.check(move || {
        r.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        model()
    });
    let counts: Vec<(&str, u64)> = coverage::snapshot()
        .filter(|(n, _)| prefixes.iter().any(|p| n.starts_with(p)))
        .collect();
    let runs = runs.load(std::sync::atomic::Ordering::Relaxed);
    println!("{name}: {runs} executions, paths {counts:?}");
    for path in must {
        assert!(
            coverage::count(path) > 0,
            "{name}: path {path} never reached in {runs} executions ({counts:?})"
        );
    }
}

/// The slotted locks under test.
trait Slotted: Send + Sync + 'static {
    fn create() -> Self;
    fn lock_observed(&self, slot: usize, on_wait: impl FnOnce()) -> PlaceToken;
    fn try_lock(&self) -> Option<PlaceToken>;
    /// # Safety
    /// The caller holds the lock.
    unsafe fn unlock(&self, t: PlaceToken);
}

macro_rules! slotted {
    ($($t:ty),*) => {$(
        impl Slotted for $t {
            fn create() -> Self {
                <$t>::new()
            }
            fn lock_observed(&self, slot: usize, on_wait: impl FnOnce()) -> PlaceToken {
                self.acquire_in_observed(slot, on_wait)
            }
            fn try_lock(&self) -> Option<PlaceToken> {
                self.try_acquire()
            }
            unsafe fn unlock(&self, t: PlaceToken) {
                // SAFETY: forwarded contract.
                unsafe { self.release(t) }
            }
        }
    )*};
}
slotted!(
    NxtRonInline<2>,
    RonPlockInline<2>,
    RonTicketInline<2>,
    Ron<2>,
    NxtRon,
    RonPlock,
    RonTicket
);

/// The holder takes the lock in `holder_slot`; two waiters arrive in
/// `waiter_slots` and register while it holds; it hands over, then (if
/// `again`) comes back for a second round while the waiters hand the lock
/// on.
fn handover_model<L: Slotted>(holder_slot: usize, waiter_slots: [usize; 2], again: bool) {
    let s = Shared::with(L::create());
    let t = s.lock.lock_observed(holder_slot, || ());
    let hs: Vec<_> = waiter_slots
        .into_iter()
        .map(|slot| {
            let s = s.clone();
            thread::spawn(move || {
                let t = s.lock.lock_observed(slot, || {
                    s.register();
                });
                s.bump_yielding();
                // SAFETY: held.
                unsafe { s.lock.unlock(t) };
            })
        })
        .collect();
    s.wait_for_waiters(2);
    s.bump_yielding();
    // SAFETY: held.
    unsafe { s.lock.unlock(t) };
    if again {
        // Second round, racing the handovers in flight.
        let t = s.lock.lock_observed(holder_slot, || ());
        if t.index().is_some() {
            // Not the fast path: the holder waited in its slot again.
            coverage::record("model.second_round_waited");
        }
        s.bump_yielding();
        // SAFETY: held.
        unsafe { s.lock.unlock(t) };
    }
    for h in hs {
        h.join().unwrap();
    }
    assert_eq!(s.total(), 3 + usize::from(again));
    let t = s.lock.try_lock().expect("lock left held");
    // SAFETY: just taken.
    unsafe { s.lock.unlock(t) };
}

/// One waiter registers while the lock is held; the holder lets go without
/// waiting for it (the waiter may also find the lock free).
fn racing_model<L: Slotted>() {
    let s = Shared::with(L::create());
    let s2 = s.clone();
    let h = thread::spawn(move || {
        let t = s2.lock.lock_observed(1, || ());
        s2.bump_yielding();
        // SAFETY: held.
        unsafe { s2.lock.unlock(t) };
    });
    let t = s.lock.lock_observed(0, || ());
    s.bump_yielding();
    // SAFETY: held.
    unsafe { s.lock.unlock(t) };
    h.join().unwrap();
    assert_eq!(s.total(), 2);
    assert!(s.lock.try_lock().is_some(), "lock left held");
}

macro_rules! plock_models {
    ($m:ident, $t:ty, $p:literal) => {
        mod $m {
            use super::*;

            /// Two waiters share slot 1 (the holder is in slot 0) and
            /// register while the lock is held: the unlock grants slot 1,
            /// one waiter takes the grant; the holder comes back, waits in
            /// slot 0 and is granted in turn (a second round).
            #[test]
            fn two_waiters_one_slot() {
                explore(
                    concat!($p, "two_waiters_one_slot"),
                    BOUND_3,
                    &[$p, "slots.", "model."],
                    &[
                        concat!($p, "fast_saw_held"),
                        concat!($p, "registered"),
                        concat!($p, "slot_shared"),
                        concat!($p, "granted"),
                        concat!($p, "grant_taken"),
                        "slots.grant_taken_shared",
                        "model.second_round_waited",
                    ],
                    || handover_model::<$t>(0, [1, 1], true),
                );
            }

            /// As above without the second round: the first grantee's
            /// unlock finds only its slot-mate and grants its own slot.
            #[test]
            fn slot_mate_granted() {
                explore(
                    concat!($p, "slot_mate_granted"),
                    BOUND_3,
                    &[$p, "slots."],
                    &[
                        concat!($p, "slot_shared"),
                        concat!($p, "granted"),
                        concat!($p, "granted_own_slot"),
                        concat!($p, "grant_taken"),
                    ],
                    || handover_model::<$t>(0, [1, 1], false),
                );
            }

            /// Waiters in slots 0 (the holder's) and 1: the scan visits slot
            /// 1 first and the holder's own slot last; second round.
            #[test]
            fn waiters_in_both_slots() {
                explore(
                    concat!($p, "waiters_in_both_slots"),
                    BOUND_3,
                    &[$p, "slots.", "model."],
                    &[
                        concat!($p, "registered"),
                        concat!($p, "granted"),
                        concat!($p, "granted_own_slot"),
                        concat!($p, "grant_taken"),
                        "slots.grant_taken_alone",
                        "model.second_round_waited",
                    ],
                    || handover_model::<$t>(0, [0, 1], true),
                );
            }

            /// A waiter registering while the holder unlocks: it takes a
            /// grant, or finds the lock free and takes it by CAS.
            #[test]
            fn waiter_races_unlock() {
                explore(
                    concat!($p, "waiter_races_unlock"),
                    BOUND_2,
                    &[$p, "slots."],
                    &[
                        concat!($p, "registered"),
                        concat!($p, "grant_taken"),
                        concat!($p, "free_taken"),
                        concat!($p, "granted"),
                    ],
                    racing_model::<$t>,
                );
            }
        }
    };
}

plock_models!(nxt_ron, NxtRonInline<2>, "nxt_ron.");
plock_models!(ron_plock, RonPlockInline<2>, "ron_plock.");

/// NxtRon only: an unlock that finds the bitmap empty frees at once.
#[test]
fn nxt_ron_freed_no_mark() {
    explore(
        "nxt_ron.freed_no_mark",
        BOUND_2,
        &["nxt_ron.", "slots."],
        &["nxt_ron.freed_no_mark", "nxt_ron.free_taken"],
        racing_model::<NxtRonInline<2>>,
    );
}

/// NxtRon only: a waiter that takes the lock leaves its bit set, and a
/// later unlock's scan finds its slot empty and clears the bit.
#[test]
fn nxt_ron_stale_bit_cleared() {
    explore(
        "nxt_ron.stale_bit_cleared",
        BOUND_2,
        &["nxt_ron.", "slots."],
        &["nxt_ron.stale_bit_cleared", "nxt_ron.freed_after_scan"],
        racing_model::<NxtRonInline<2>>,
    );
}

/// The pooled locks (`RonTicket`, `NxtRon`, `RonPlock`): the lock has no
/// block; a waiter arrives while it is held, claims one and registers; the
/// holder hands over to it and comes straight back, racing the waiter's
/// handover and the return of the block by the waiter's last reference
/// (the holder uses the block, finds it closed or detached, or claims one
/// again). At the end every block is back in the pool and the lock holds
/// none.
mod pooled {
    use super::*;

    /// Preemption bound of the return races: the owner keeps its block
    /// reference until its release, and every release drops it before the
    /// grant or the free, so an entry meets a return only if it is
    /// preempted inside the release's few steps while the lock is held.
    /// These models reach the claim, use and return; the entry racing a
    /// return (a stale index, a block claimed again) is required of the
    /// same generic pool code by `loom_ron_raw`'s pool models. (Before the
    /// releases dropped their references first, `nxt_ron`'s bitmap fast
    /// release returned the block after freeing the lock, which left that
    /// race open here too: see `last_user_frees` for why it had to go.)
    const BOUND_POOL: usize = 3;

    /// What the model needs beyond [`Slotted`].
    trait Pooled: Slotted {
        fn has_block(&self) -> bool;
        fn blocks_in_use() -> usize;
        /// Caps the lock type's pool (per execution under loom).
        fn set_limit(n: usize);
    }

    impl Pooled for RonTicket {
        fn has_block(&self) -> bool {
            RonTicket::has_block(self)
        }
        fn blocks_in_use() -> usize {
            ron_core::ron_ticket::global().in_use()
        }
        fn set_limit(n: usize) {
            ron_core::ron_ticket::set_pool_limit(n);
        }
    }

    macro_rules! plock_pooled {
        ($($t:ty),*) => {$(
            impl Pooled for $t {
                fn has_block(&self) -> bool {
                    <$t>::has_block(self)
                }
                fn blocks_in_use() -> usize {
                    ron_core::ron_raw::pool::global().in_use()
                }
                fn set_limit(n: usize) {
                    ron_core::ron_raw::set_pool_limit(n);
                }
            }
        )*};
    }
    plock_pooled!(NxtRon, RonPlock);

    fn model<L: Pooled>() {
        let s = Shared::with(L::create());
        let t = s.lock.lock_observed(0, || ());
        let s2 = s.clone();
        let h = thread::spawn(move || {
            let t = s2.lock.lock_observed(1, || s2.register());
            s2.bump_yielding();
            // SAFETY: held.
            unsafe { s2.lock.unlock(t) };
        });
        s.wait_for_waiters(1);
        s.bump_yielding();
        // SAFETY: held.
        unsafe { s.lock.unlock(t) };
        // Straight back: races the handover and the block's return.
        let t = s.lock.lock_observed(0, || ());
        if t.index().is_some() {
            coverage::record("model.second_round_waited");
        }
        s.bump_yielding();
        // SAFETY: held.
        unsafe { s.lock.unlock(t) };
        h.join().unwrap();
        assert_eq!(s.total(), 3);
        let t = s.lock.try_lock().expect("lock left held");
        // SAFETY: just taken.
        unsafe { s.lock.unlock(t) };
        assert!(!s.lock.has_block(), "a block left attached to an idle lock");
        assert_eq!(L::blocks_in_use(), 0, "a block not returned to the pool");
    }

    /// The waiter is the lock's last user: once its unlock returns, the
    /// lock may be freed (a count beside it said so), while the holder
    /// that granted it the lock may still be inside its own unlock. No
    /// reference may then be left to drop: a last reference's drop writes
    /// the lock (it detaches the block from the lock's index), so every
    /// release drops its reference before the grant or the free that makes
    /// the lock available. A release that drops after it fails here: the
    /// last user finds the block still attached.
    ///
    /// With `guardless`, the last user unlocks with [`PlaceToken::NONE`]
    /// (as lock_api 0.4's guard-less unlock does), so its release does not
    /// know its slot: the references its grant brought stay banked in its
    /// slot (`RonTicket`, `NxtRon`, `RonPlock`), and the free must collect
    /// them, or the block stays attached to the idle lock, counted by
    /// references nobody holds.
    fn last_user_frees<L: Pooled>(guardless: bool) {
        let s = Shared::with(L::create());
        let t = s.lock.lock_observed(0, || ());
        let s2 = s.clone();
        let h = thread::spawn(move || {
            let t = s2.lock.lock_observed(1, || s2.register());
            // No yield: a yield would let the granting holder finish.
            s2.bump();
            let t = if guardless { PlaceToken::NONE } else { t };
            // SAFETY: held; any token is safe to pass.
            unsafe { s2.lock.unlock(t) };
            assert!(
                !s2.lock.has_block(),
                "the last user's unlock returned with a block reference still to drop"
            );
        });
        s.wait_for_waiters(1);
        s.bump_yielding();
        // SAFETY: held.
        unsafe { s.lock.unlock(t) };
        h.join().unwrap();
        assert_eq!(s.total(), 2);
        assert!(!s.lock.has_block(), "a block left attached to an idle lock");
        assert_eq!(L::blocks_in_use(), 0, "a block not returned to the pool");
    }

    #[test]
    fn ron_ticket_last_user_frees() {
        explore(
            "pooled::ron_ticket_last_user_frees",
            BOUND_POOL,
            &["ron_ticket."],
            &[
                "ron_ticket.granted",
                "ron_ticket.grant_taken",
                "ron_ticket.banked",
                "ron_ticket.pool_return",
            ],
            || last_user_frees::<RonTicket>(false),
        );
    }

    #[test]
    fn ron_ticket_last_user_frees_guardless() {
        explore(
            "pooled::ron_ticket_last_user_frees_guardless",
            BOUND_POOL,
            &["ron_ticket."],
            &[
                "ron_ticket.granted",
                "ron_ticket.banked",
                "ron_ticket.bank_collected",
                "ron_ticket.pool_return",
            ],
            || last_user_frees::<RonTicket>(true),
        );
    }

    #[test]
    fn nxt_ron_last_user_frees() {
        explore(
            "pooled::nxt_ron_last_user_frees",
            BOUND_POOL,
            &["nxt_ron.", "ron_raw.pool"],
            &[
                "nxt_ron.granted",
                "nxt_ron.grant_taken",
                "nxt_ron.banked",
                "ron_raw.pool_return",
            ],
            || last_user_frees::<NxtRon>(false),
        );
    }

    #[test]
    fn nxt_ron_last_user_frees_guardless() {
        explore(
            "pooled::nxt_ron_last_user_frees_guardless",
            BOUND_POOL,
            &["nxt_ron.", "ron_raw.pool"],
            &[
                "nxt_ron.granted",
                "nxt_ron.grant_taken",
                "nxt_ron.banked",
                "nxt_ron.bank_collected",
                "ron_raw.pool_return",
            ],
            || last_user_frees::<NxtRon>(true),
        );
    }

    #[test]
    fn ron_plock_last_user_frees() {
        explore(
            "pooled::ron_plock_last_user_frees",
            BOUND_POOL,
            &["ron_plock.", "ron_raw.pool"],
            &[
                "ron_plock.granted",
                "ron_plock.grant_taken",
                "ron_plock.banked",
                "ron_raw.pool_return",
            ],
            || last_user_frees::<RonPlock>(false),
        );
    }

    #[test]
    fn ron_plock_last_user_frees_guardless() {
        explore(
            "pooled::ron_plock_last_user_frees_guardless",
            BOUND_POOL,
            &["ron_plock.", "ron_raw.pool"],
            &[
                "ron_plock.granted",
                "ron_plock.grant_taken",
                "ron_plock.banked",
                "ron_plock.bank_collected",
                "ron_raw.pool_return",
            ],
            || last_user_frees::<RonPlock>(true),
        );
    }

    /// The waiter comes back for a second round in its slot while the
    /// holder, granted the lock in its own slot, holds it: the second
    /// grant to the waiter's slot finds a reference banked there by the
    /// first, which makes more than `BANK_MAX` (1 under loom), so the
    /// waiter drops the slot's bank; the last free collects the holder's
    /// bank from the other slot. The lock ends free with no block.
    fn bank_paid<L: Pooled>() {
        let s = Shared::with(L::create());
        let t = s.lock.lock_observed(0, || ());
        let s2 = s.clone();
        let h = thread::spawn(move || {
            for _ in 0..2 {
                let t = s2.lock.lock_observed(1, || s2.register());
                s2.bump();
                // SAFETY: held.
                unsafe { s2.lock.unlock(t) };
            }
        });
        s.wait_for_waiters(1);
        s.bump();
        // SAFETY: held.
        unsafe { s.lock.unlock(t) };
        let t = s.lock.lock_observed(0, || ());
        // The waiter's second round registers (or has run) meanwhile.
        s.wait_for_waiters(2);
        s.bump();
        // SAFETY: held.
        unsafe { s.lock.unlock(t) };
        h.join().unwrap();
        assert_eq!(s.total(), 4);
        assert!(!s.lock.has_block(), "a block left attached to an idle lock");
        assert_eq!(L::blocks_in_use(), 0, "a block not returned to the pool");
    }

    #[test]
    fn nxt_ron_bank_paid() {
        explore(
            "pooled::nxt_ron_bank_paid",
            BOUND_2,
            &["nxt_ron.", "ron_raw.pool"],
            &[
                "nxt_ron.banked",
                "nxt_ron.bank_paid",
                "nxt_ron.bank_collected",
                "nxt_ron.bank_scanned",
                "ron_raw.pool_return",
            ],
            bank_paid::<NxtRon>,
        );
    }

    #[test]
    fn ron_plock_bank_paid() {
        explore(
            "pooled::ron_plock_bank_paid",
            BOUND_2,
            &["ron_plock.", "ron_raw.pool"],
            &[
                "ron_plock.banked",
                "ron_plock.bank_paid",
                "ron_plock.bank_collected",
                "ron_plock.bank_scanned",
                "ron_raw.pool_return",
            ],
            bank_paid::<RonPlock>,
        );
    }

    /// The pool is exhausted (limit 0): the waiter waits unregistered on
    /// `in_use` and takes the lock when the holder, finding no block,
    /// frees it.
    fn exhausted<L: Pooled>() {
        L::set_limit(0);
        let s = Shared::with(L::create());
        let t = s.lock.lock_observed(0, || ());
        let s2 = s.clone();
        let h = thread::spawn(move || {
            let t = s2.lock.lock_observed(1, || s2.register());
            s2.bump_yielding();
            // SAFETY: held.
            unsafe { s2.lock.unlock(t) };
        });
        s.wait_for_waiters(1);
        s.bump_yielding();
        // SAFETY: held.
        unsafe { s.lock.unlock(t) };
        h.join().unwrap();
        assert_eq!(s.total(), 2);
        assert!(!s.lock.has_block());
        s.lock.try_lock().expect("lock left held");
    }

    #[test]
    fn ron_ticket_exhausted() {
        explore(
            "pooled::ron_ticket_exhausted",
            BOUND_2,
            &["ron_ticket."],
            &[
                "ron_ticket.pool_exhausted",
                "ron_ticket.unregistered",
                "ron_ticket.unregistered_took",
            ],
            exhausted::<RonTicket>,
        );
    }

    #[test]
    fn nxt_ron_exhausted() {
        explore(
            "pooled::nxt_ron_exhausted",
            BOUND_2,
            &["nxt_ron.", "ron_raw.pool"],
            &[
                "ron_raw.pool_exhausted",
                "nxt_ron.unregistered",
                "nxt_ron.free_taken",
            ],
            exhausted::<NxtRon>,
        );
    }

    #[test]
    fn ron_ticket() {
        explore(
            "pooled::ron_ticket",
            BOUND_POOL,
            &["ron_ticket.", "model."],
            &[
                "ron_ticket.pool_claim",
                "ron_ticket.pooled_ticket",
                "ron_ticket.pool_use",
                "ron_ticket.granted",
                "ron_ticket.grant_taken",
                "ron_ticket.pool_return",
                "ron_ticket.freed_no_block",
                "ron_ticket.release_kept_ref",
                "ron_ticket.banked",
                "ron_ticket.bank_paid",
                "model.second_round_waited",
            ],
            model::<RonTicket>,
        );
    }

    #[test]
    fn nxt_ron() {
        explore(
            "pooled::nxt_ron",
            BOUND_POOL,
            &["nxt_ron.", "ron_raw.pool", "model."],
            &[
                "ron_raw.pool_claim",
                "nxt_ron.registered",
                "ron_raw.pool_use",
                "nxt_ron.granted",
                "nxt_ron.grant_taken",
                "ron_raw.pool_return",
                "nxt_ron.freed_no_mark",
                "nxt_ron.release_kept_ref",
                "nxt_ron.banked",
                "nxt_ron.bank_collected",
                "model.second_round_waited",
            ],
            model::<NxtRon>,
        );
    }

    #[test]
    fn ron_plock() {
        explore(
            "pooled::ron_plock",
            BOUND_POOL,
            &["ron_plock.", "ron_raw.pool", "model."],
            &[
                "ron_raw.pool_claim",
                "ron_plock.registered",
                "ron_raw.pool_use",
                "ron_plock.granted",
                "ron_plock.grant_taken",
                "ron_raw.pool_return",
                "ron_plock.release_kept_ref",
                "ron_plock.banked",
                "ron_plock.bank_collected",
                "model.second_round_waited",
            ],
            model::<RonPlock>,
        );
    }
}

/// `RonTicket` and `Ron`: the waiters arrive while the lock is held, so
/// their fast path finds it held and writes nothing (the test before the
/// CAS); they wait in slot 1 (two of them: a ticket queue, a claim and a
/// waiter on `in_use`), are handed the lock, and the holder comes back.
mod fast_path {
    use super::*;

    #[test]
    fn ron_ticket() {
        explore(
            "fast_path::ron_ticket",
            BOUND_3,
            &["ron_ticket.", "model."],
            &["ron_ticket.fast_saw_held", "model.second_round_waited"],
            || handover_model::<RonTicketInline<2>>(0, [1, 1], true),
        );
    }

    #[test]
    fn ron() {
        explore(
            "fast_path::ron",
            BOUND_3,
            &["ron.", "model."],
            &[
                "ron.fast_saw_held",
                "ron.grant_taken",
                "model.second_round_waited",
            ],
            || handover_model::<Ron<2>>(0, [1, 1], true),
        );
    }
}

mod sh_ron {
    use super::*;

    type Sh = ShRon<ron_core::relax::Spin>;

    fn lock_in(l: &Sh, row: usize) -> PlaceToken {
        l.acquire_in(row)
    }

    /// Waiters that reached their row so far (claimed it or found it taken),
    /// from the path counters (ShRon has no `on_wait` hook).
    fn rows_reached() -> u64 {
        coverage::count("sh_ron.row_claimed") + coverage::count("sh_ron.row_shared")
    }

    /// Inside the critical section: yields until `n` more waiters than at
    /// `base` reached their row.
    fn wait_for_rows(base: u64, n: u64) {
        while rows_reached() < base + n {
            thread::yield_now();
        }
    }

    /// The holder takes the lock in row 0; two waiters arrive in
    /// `waiter_rows` and claim (or share) rows while it holds, which the
    /// holder sees in the table; it hands over and comes back for a
    /// second round. Then the lock is dropped and its column must be free.
    fn handover(waiter_rows: [usize; 2]) {
        let table: &'static ShTable = Box::leak(Box::new(ShTable::new()));
        let s = Shared::with(Sh::new_in(table));
        let base = rows_reached();
        let t = lock_in(&s.lock, 0);
        let hs: Vec<_> = waiter_rows
            .into_iter()
            .map(|row| {
                let s = s.clone();
                thread::spawn(move || {
                    let t = lock_in(&s.lock, row);
                    s.bump_yielding();
                    // SAFETY: held.
                    unsafe { s.lock.release(t) };
                })
            })
            .collect();
        wait_for_rows(base, 2);
        s.bump_yielding();
        // SAFETY: held.
        unsafe { s.lock.release(t) };
        let t = lock_in(&s.lock, 0);
        if t.index().is_some() {
            coverage::record("model.second_round_waited");
        }
        s.bump_yielding();
        // SAFETY: held.
        unsafe { s.lock.release(t) };
        for h in hs {
            h.join().unwrap();
        }
        assert_eq!(s.total(), 4);
        let t = s.lock.try_acquire().expect("lock left held");
        // SAFETY: just taken.
        unsafe { s.lock.release(t) };
        drop(s);
        assert_eq!(table.claimed_columns(), 0, "column not given back");
    }

    /// Two waiters in row 1: one claims it, the other shares it and waits
    /// on IN_USE alone; the holder grants row 1, the claimer takes the
    /// grant; the column is claimed on first contention and given back on
    /// drop.
    #[test]
    fn two_waiters_one_row() {
        explore(
            "sh_ron.two_waiters_one_row",
            BOUND_3,
            &["sh_ron.", "model."],
            &[
                "model.second_round_waited",
                "sh_ron.fast_saw_held",
                "sh_ron.column_claimed",
                "sh_ron.row_claimed",
                "sh_ron.row_shared",
                "sh_ron.granted",
                "sh_ron.grant_taken",
                "sh_ron.reclaim",
                "sh_ron.column_freed",
            ],
            || handover([1, 1]),
        );
    }

    /// Waiters in rows 0 (the holder's) and 1: both claim; the scan grants
    /// row 1 first, the holder's own row last.
    #[test]
    fn waiters_in_both_rows() {
        explore(
            "sh_ron.waiters_in_both_rows",
            BOUND_3,
            &["sh_ron.", "model."],
            &[
                "model.second_round_waited",
                "sh_ron.column_claimed",
                "sh_ron.row_claimed",
                "sh_ron.granted",
                "sh_ron.grant_taken",
                "sh_ron.column_freed",
            ],
            || handover([0, 1]),
        );
    }

    /// A waiter claims its row while the holder unlocks: counted before
    /// the unlock read the word, it is granted; counted after the free, it
    /// takes the free lock itself (a claimer never looks at `IN_USE`
    /// again once counted, so this is the only way it takes a free lock).
    #[test]
    fn claim_races_unlock() {
        explore(
            "sh_ron.claim_races_unlock",
            BOUND_2,
            &["sh_ron."],
            &[
                "sh_ron.row_claimed",
                "sh_ron.granted",
                "sh_ron.grant_taken",
                "sh_ron.free_taken_claimer",
            ],
            || {
                let table: &'static ShTable = Box::leak(Box::new(ShTable::new()));
                let s = Shared::with(Sh::new_in(table));
                s.lock.claim_column().expect("a column");
                let t = lock_in(&s.lock, 0);
                let s2 = s.clone();
                let h = thread::spawn(move || {
                    let t = lock_in(&s2.lock, 1);
                    s2.bump_yielding();
                    // SAFETY: held.
                    unsafe { s2.lock.release(t) };
                });
                s.bump_yielding();
                // SAFETY: held.
                unsafe { s.lock.release(t) };
                h.join().unwrap();
                assert_eq!(s.total(), 2);
                let t = s.lock.try_acquire().expect("lock left held");
                // SAFETY: just taken.
                unsafe { s.lock.release(t) };
            },
        );
    }

    /// Two first contenders race to install the lock's column: the loser
    /// gives its freshly claimed column back.
    #[test]
    fn column_race() {
        explore(
            "sh_ron.column_race",
            BOUND_2,
            &["sh_ron."],
            &["sh_ron.column_claimed", "sh_ron.column_race_lost"],
            || {
                let table: &'static ShTable = Box::leak(Box::new(ShTable::new()));
                let l = Arc::new(Sh::new_in(table));
                let l2 = l.clone();
                let h = thread::spawn(move || l2.claim_column());
                let mine = l.claim_column();
                let theirs = h.join().unwrap();
                assert_eq!(mine, theirs, "two columns for one lock");
                assert_eq!(table.claimed_columns(), 1);
                drop(l);
                assert_eq!(table.claimed_columns(), 0, "column not given back");
            },
        );
    }

    /// A column goes back to the table with a history (a claimer pending,
    /// granted and cleared in row 1) and is reused by another lock whose
    /// holder never synchronized with that history except through the
    /// table (`free`'s Release, `alloc`'s Acquire): its unlock must not see
    /// the old PENDING bit and grant row 1 to nobody. Since the grant is a
    /// CAS that re-checks PENDING, loom (where an RMW reads the latest
    /// write) no longer fails on a weakened pair alone; the model fails
    /// (Z spins forever) when the grant decides on its plain load, as the
    /// `load` + `fetch_or` grant did, with the pair weakened
    /// (docs/mutants.md).
    #[test]
    fn column_reused_after_drop() {
        explore(
            "sh_ron.column_reused_after_drop",
            BOUND_3,
            &["sh_ron."],
            &["sh_ron.table_full", "sh_ron.column_freed", "sh_ron.granted"],
            || {
                let table: &'static ShTable = Box::leak(Box::new(ShTable::new()));
                // Every column but one taken: A's column is the one B reuses.
                let hogs: Vec<Sh> = (1..ron_core::sh_ron::MAX_COLUMNS)
                    .map(|_| {
                        let l = Sh::new_in(table);
                        assert!(l.claim_column().is_some());
                        l
                    })
                    .collect();
                let a = Arc::new(Sh::new_in(table));
                let b = Arc::new(Sh::new_in(table));
                let base = rows_reached();
                // Y: holds A while main claims row 1 in it, grants it, then
                // holds B, waits for B's column (A's, once A is dropped) and
                // for Z to claim row 0, and unlocks B.
                let (a2, b2) = (a.clone(), b.clone());
                let y = thread::spawn(move || {
                    let t = a2.try_acquire().expect("A is fresh");
                    wait_for_rows(base, 1);
                    // SAFETY: held.
                    unsafe { a2.release(t) };
                    drop(a2);
                    let t = b2.try_acquire().expect("B is fresh");
                    while b2.claim_column().is_none() {
                        thread::yield_now();
                    }
                    wait_for_rows(base, 2);
                    // SAFETY: held.
                    unsafe { b2.release(t) };
                });
                // Z: waits in row 0 of B once B has its column.
                let b3 = b.clone();
                let z = thread::spawn(move || {
                    while b3.column_index().is_none() {
                        thread::yield_now();
                    }
                    let t = lock_in(&b3, 0);
                    // SAFETY: held.
                    unsafe { b3.release(t) };
                });
                while !a.is_held() {
                    thread::yield_now();
                }
                let t = lock_in(&a, 1);
                // SAFETY: held.
                unsafe { a.release(t) };
                // Drop A (its column goes back) once Y let go of it.
                let mut a = a;
                let a = loop {
                    match Arc::try_unwrap(a) {
                        Ok(a) => break a,
                        Err(again) => {
                            thread::yield_now();
                            a = again;
                        }
                    }
                };
                drop(a);
                y.join().unwrap();
                z.join().unwrap();
                let t = b.try_acquire().expect("B left held");
                // SAFETY: just taken.
                unsafe { b.release(t) };
                drop(hogs);
            },
        );
    }

    /// With every column taken a contended lock works as a TTAS lock.
    #[test]
    fn table_full() {
        explore(
            "sh_ron.table_full",
            BOUND_2,
            &["sh_ron."],
            &["sh_ron.table_full", "sh_ron.free_taken_unclaimed"],
            || {
                let table: &'static ShTable = Box::leak(Box::new(ShTable::new()));
                let hogs: Vec<Sh> = (0..ron_core::sh_ron::MAX_COLUMNS)
                    .map(|_| {
                        let l = Sh::new_in(table);
                        assert!(l.claim_column().is_some());
                        l
                    })
                    .collect();
                let s = Shared::with(Sh::new_in(table));
                let t = lock_in(&s.lock, 0);
                let s2 = s.clone();
                let h = thread::spawn(move || {
                    s2.register();
                    let t = lock_in(&s2.lock, 1);
                    s2.bump_yielding();
                    // SAFETY: held.
                    unsafe { s2.lock.release(t) };
                });
                s.wait_for_waiters(1);
                s.bump_yielding();
                // SAFETY: held.
                unsafe { s.lock.release(t) };
                h.join().unwrap();
                assert_eq!(s.total(), 2);
                assert_eq!(s.lock.column_index(), None);
                drop(hogs);
                assert_eq!(table.claimed_columns(), 0);
            },
        );
    }
}

/// RonRaw's `acquire` (the CPU-hint entry, which has its own fast-path
/// CAS; the other models enter through `acquire_in`): two threads whose
/// critical sections yield, so the second waits, registers and is handed
/// the lock. (RonRaw's own paths are counted by its own models.)
#[test]
fn ron_raw_acquire_by_hint() {
    explore(
        "ron_raw.acquire_by_hint",
        BOUND_2,
        &["ron_raw."],
        &[],
        || {
            let s = Shared::with(ron_core::RonInline::<2>::new());
            let s2 = s.clone();
            let h = thread::spawn(move || {
                let t = s2.lock.acquire();
                s2.bump_yielding();
                // SAFETY: held.
                unsafe { s2.lock.release(t) };
            });
            let t = s.lock.acquire();
            s.bump_yielding();
            // SAFETY: held.
            unsafe { s.lock.release(t) };
            h.join().unwrap();
            assert_eq!(s.total(), 2);
            let t = s.lock.try_acquire().expect("lock left held");
            // SAFETY: just taken.
            unsafe { s.lock.release(t) };
        },
    );
}

/// A waiter whose relax policy panics takes a grant while it unwinds and
/// hands the lock to a third thread that is ordered after the holder only
/// through the lock. Kills a weakened Acquire on the unwind's grant-taking
/// RMW (`Slots::leave`, `ShRon::unclaim_on_unwind`), which the
/// `loom_unwind` models cannot: there the holder itself takes the lock
/// last, after joining the waiter.
mod unwind_hands_on {
    use super::*;
    use ron_core::relax::Relax;
    use std::panic::{AssertUnwindSafe, catch_unwind};

    /// Panics on its first call: the waiter has registered (or claimed its
    /// row) and looked once.
    #[derive(Default)]
    struct PanicRelax;

    impl Relax for PanicRelax {
        fn relax(&mut self) {
            panic!("relax panics (model)");
        }
    }

    /// The locks under test.
    trait UnwindLock: Send + Sync + 'static {
        fn create() -> Self;
        fn lock_in(&self, slot: usize) -> PlaceToken;
        fn try_lock(&self) -> Option<PlaceToken>;
        /// # Safety
        /// The caller holds the lock.
        unsafe fn unlock(&self, t: PlaceToken);
    }

    macro_rules! unwind_lock {
        ($($t:ty => $create:expr, $lock_in:expr);*) => {$(
            impl UnwindLock for $t {
                fn create() -> Self {
                    $create
                }
                fn lock_in(&self, slot: usize) -> PlaceToken {
                    $lock_in(self, slot)
                }
                fn try_lock(&self) -> Option<PlaceToken> {
                    self.try_acquire()
                }
                unsafe fn unlock(&self, t: PlaceToken) {
                    // SAFETY: forwarded contract.
                    unsafe { self.release(t) }
                }
            }
        )*};
    }
    unwind_lock!(
        NxtRonInline<2, PanicRelax> => NxtRonInline::new(), |l: &Self, s| l.acquire_in_observed(s, || ());
        RonPlockInline<2, PanicRelax> => RonPlockInline::new(), |l: &Self, s| l.acquire_in_observed(s, || ());
        NxtRon<PanicRelax> => NxtRon::new(), |l: &Self, s| l.acquire_in_observed(s, || ());
        RonPlock<PanicRelax> => RonPlock::new(), |l: &Self, s| l.acquire_in_observed(s, || ());
        ShRon<PanicRelax> => ShRon::new_in(Box::leak(Box::new(ShTable::new()))),
            |l: &Self, s| l.acquire_in(s)
    );

    /// Silences the model's own panic (printed once per schedule
    /// otherwise); every other panic goes to the default hook.
    fn quiet_relax_panics() {
        static ONCE: std::sync::Once = std::sync::Once::new();
        ONCE.call_once(|| {
            let default = std::panic::take_hook();
            std::panic::set_hook(Box::new(move |info| {
                if info.payload().downcast_ref::<&str>() != Some(&"relax panics (model)") {
                    default(info);
                }
            }));
        });
    }

    /// Main holds the lock (fast path) and unlocks; W waits in slot 1 and
    /// its relax panics after one look, so main's grant races W's unwind;
    /// X tries the lock once. Main's critical section runs after both were
    /// spawned, so only the lock orders it before X's: through main's
    /// free, or, when W's unwind took the grant, through the grant and W's
    /// release (loom reports the counter's race if that chain breaks).
    /// Checks the count and that the lock is free at the end.
    fn model<L: UnwindLock>() {
        quiet_relax_panics();
        let s = Shared::with(L::create());
        let t = s.lock.try_lock().expect("a fresh lock");
        let s2 = s.clone();
        let w = thread::spawn(move || {
            match catch_unwind(AssertUnwindSafe(|| s2.lock.lock_in(1))) {
                Ok(t) => {
                    // Granted before its relax ran.
                    s2.bump_yielding();
                    // SAFETY: held.
                    unsafe { s2.lock.unlock(t) };
                    1
                }
                Err(_) => 0,
            }
        });
        let s3 = s.clone();
        let x = thread::spawn(move || {
            let Some(t) = s3.lock.try_lock() else {
                return 0;
            };
            s3.bump_yielding();
            // SAFETY: held.
            unsafe { s3.lock.unlock(t) };
            1
        });
        s.bump_yielding();
        // SAFETY: held.
        unsafe { s.lock.unlock(t) };
        let theirs = w.join().unwrap() + x.join().unwrap();
        assert_eq!(s.total(), 1 + theirs);
        let t = s.lock.try_lock().expect("lock left held");
        // SAFETY: just taken.
        unsafe { s.lock.unlock(t) };
    }

    #[test]
    fn nxt_ron() {
        explore(
            "unwind_hands_on::nxt_ron",
            1,
            &["plock.unwind", "nxt_ron.granted"],
            &["plock.unwind_took_grant", "plock.unwind_left"],
            model::<NxtRonInline<2, PanicRelax>>,
        );
    }

    #[test]
    fn ron_plock() {
        explore(
            "unwind_hands_on::ron_plock",
            1,
            &["plock.unwind", "ron_plock.granted"],
            &["plock.unwind_took_grant", "plock.unwind_left"],
            model::<RonPlockInline<2, PanicRelax>>,
        );
    }

    /// The pooled lock: an unwind that takes the grant also holds the
    /// granting release's block reference besides its own; it drops its
    /// own before handing the lock on, so the block goes back to the pool
    /// (a reference counted twice or lost shows here).
    fn pooled_model<L: UnwindLock>() {
        model::<L>();
        assert_eq!(
            ron_core::ron_raw::pool::global().in_use(),
            0,
            "a block not returned to the pool"
        );
    }

    #[test]
    fn nxt_ron_pooled() {
        explore(
            "unwind_hands_on::nxt_ron_pooled",
            1,
            &["plock.unwind", "nxt_ron.granted", "ron_raw.pool_return"],
            &[
                "plock.unwind_took_grant",
                "plock.unwind_left",
                "ron_raw.pool_return",
            ],
            pooled_model::<NxtRon<PanicRelax>>,
        );
    }

    #[test]
    fn ron_plock_pooled() {
        explore(
            "unwind_hands_on::ron_plock_pooled",
            1,
            &["plock.unwind", "ron_plock.granted", "ron_raw.pool_return"],
            &[
                "plock.unwind_took_grant",
                "plock.unwind_left",
                "ron_raw.pool_return",
            ],
            pooled_model::<RonPlock<PanicRelax>>,
        );
    }

    #[test]
    fn sh_ron() {
        explore(
            "unwind_hands_on::sh_ron",
            1,
            &["sh_ron.unwind", "sh_ron.granted"],
            &["sh_ron.unwind_took_grant", "sh_ron.unwind_left"],
            model::<ShRon<PanicRelax>>,
        );
    }
}
