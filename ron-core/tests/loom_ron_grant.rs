//! Loom models of `RonGrant`'s waiting over the plock grant, on its own
//! pool of blocks: the registered round and its handover, the leave that
//! takes a grant, parking (the watch, a sleeper, the release's wake-up),
//! a timed give-up, the unregistered look that loses a race and
//! registers, the ones that find the lock held (with another waiter
//! registered, or not), the looks of a thread that arrives again after
//! granting the lock, and the unregistered round of an exhausted pool.
//!
//! Run: `RUSTFLAGS="--cfg loom" CARGO_TARGET_DIR=target/loom cargo test -p
//! ron-core --release --test loom_ron_grant -- --nocapture` (the table of
//! path counts per model goes to stderr).
//!
//! Under loom a waiter's registered budget is 2 looks, and every wait that
//! did not take the lock counts as long (it parks), so the models reach
//! the parking paths with a few critical sections. Critical sections yield
//! (`cs_yields`), so that waiters register while the lock is held. Each
//! model checks mutual exclusion through a `loom::cell::UnsafeCell` (loom
//! reports two unsynchronized accesses), the final counts, that every lock
//! ends free and without its block, and that the pool is whole again; then,
//! over all its executions, that the paths it is named after were reached.
#![cfg(loom)]

mod common;

use std::sync::Mutex;

use common::{Pooled as Model, PooledLock};
use loom::cell::UnsafeCell;
use loom::sync::Arc;
use loom::thread;
use ron_core::ron_grant::with_pool;
use ron_core::ron_raw::pool::{Block, Pool};
use ron_core::{RonGrant, coverage};

/// Every path the models count, in the order of the table.
const PATHS: [&str; 20] = [
    "ron_grant.executions",
    "ron_grant.registered",
    "ron_grant.grant_taken",
    "ron_grant.free_taken",
    "ron_grant.left_with_grant",
    "ron_grant.left_took_free",
    "ron_grant.unregistered_took",
    "ron_grant.unregistered_lost",
    "ron_grant.unregistered_saw_queue",
    "ron_grant.unregistered_held",
    "ron_grant.unregistered_round",
    "ron_grant.looks_beside_block",
    "ron_grant.gave_up",
    "nxt_ron.granted",
    "nxt_ron.banked",
    "nxt_ron.release_kept_ref",
    "ron_raw.park_watch",
    "ron_raw.park_sleep",
    "ron_raw.park_wake",
    "ron_raw.release_wakes",
];

/// Executions explored by the three-thread models (depth-first within their
/// preemption bound; a complete search takes hours).
const CAP_3: usize = 20_000;

/// The counters are process-wide and the harness runs tests on several
/// threads: one model at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn counts() -> Vec<(&'static str, u64)> {
    PATHS.iter().map(|&p| (p, coverage::count(p))).collect()
}

/// Prints a model's row of path counts and asserts that every path in
/// `must` was reached.
fn report(name: &str, counts: &[(&str, u64)], must: &[&str]) {
    let row: Vec<String> = counts
        .iter()
        .map(|(p, n)| format!("{}={n}", p.trim_start_matches("ron_grant.")))
        .collect();
    eprintln!("loom_ron_grant {name}: {}", row.join(" "));
    for p in must {
        let n = counts.iter().find(|(q, _)| q == p).map_or(0, |c| c.1);
        assert!(n > 0, "{name}: path {p} never reached");
    }
}

/// Explores `model` over `RonGrant` (one model at a time: the counters
/// are process-wide), then reports its path counts.
fn run(name: &str, model: Model, must: &[&str]) {
    let counts = {
        let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
        coverage::reset();
        model.explore::<RonGrant>("ron_grant.executions");
        counts()
    };
    report(name, &counts, must);
}

/// A holder yields in its critical section while a waiter of another slot
/// registers: the release grants the waiter's slot (`nxt_ron.granted`),
/// the waiter takes the grant and banks the reference it brought, and its
/// own release uses the reference it kept. A waiter whose round ends as
/// the grant arrives leaves with it (`left_with_grant`).
#[test]
fn handover_to_registered_waiter() {
    run(
        "handover_to_registered_waiter",
        Model {
            blocks: 1,
            locks: 1,
            plan: &[&[(0, 0)], &[(0, 1)]],
            cs_yields: 3,
            preemptions: 2,
            max_executions: None,
        },
        &[
            "ron_grant.registered",
            "ron_grant.grant_taken",
            "ron_grant.left_with_grant",
            "ron_grant.free_taken",
            "nxt_ron.granted",
            "nxt_ron.banked",
            "nxt_ron.release_kept_ref",
        ],
    );
}

/// Three threads of one lock without a block: the waiters that arrive
/// with nobody registered look unregistered (one look under loom), and
/// their looks end in a register: a look whose CAS loses the race for the
/// freed lock (`unregistered_lost`), one that finds the lock held with
/// another waiter registered meanwhile (`unregistered_saw_queue`: the lock
/// will go by grant), or one that finds it held with nobody registered
/// (`unregistered_held`); each then takes the grant or the freed lock.
#[test]
fn unregistered_looks_end() {
    run(
        "unregistered_looks_end",
        Model {
            blocks: 1,
            locks: 1,
            plan: &[&[(0, 0)], &[(0, 1)], &[(0, 2)]],
            cs_yields: 0,
            preemptions: 3,
            max_executions: Some(CAP_3),
        },
        &[
            "ron_grant.unregistered_took",
            "ron_grant.unregistered_lost",
            "ron_grant.unregistered_saw_queue",
            "ron_grant.unregistered_held",
            "ron_grant.registered",
        ],
    );
}

/// Two threads, one of them twice: the first holder's release grants the
/// registered waiter, and the first holder, arriving again while the
/// grantee holds the lock, finds a block whose only marked slot is the
/// grantee's emptied one (`looks_beside_block`): nobody is registered,
/// so it looks unregistered instead of registering behind the grantee.
#[test]
fn rearrival_after_a_grant_looks() {
    run(
        "rearrival_after_a_grant_looks",
        Model {
            blocks: 1,
            locks: 1,
            plan: &[&[(0, 0), (0, 0)], &[(0, 1)]],
            cs_yields: 3,
            preemptions: 2,
            max_executions: None,
        },
        &[
            "ron_grant.registered",
            "ron_grant.grant_taken",
            "nxt_ron.granted",
            "ron_grant.looks_beside_block",
        ],
    );
}

/// Three threads of one lock: a waiter whose round ended parks, taking the
/// watch (nobody holds it) or sleeping (the other waiter holds it); the
/// watcher, leaving with the lock, wakes the sleeper, and a release that
/// frees the lock while the sleeper holds the block wakes it too.
#[test]
fn park_watch_sleep_wake() {
    run(
        "park_watch_sleep_wake",
        Model {
            blocks: 1,
            locks: 1,
            plan: &[&[(0, 0)], &[(0, 1)], &[(0, 0)]],
            cs_yields: 6,
            preemptions: 1,
            max_executions: Some(CAP_3),
        },
        &[
            "ron_raw.park_watch",
            "ron_raw.park_sleep",
            "ron_raw.park_wake",
            "ron_raw.release_wakes",
        ],
    );
}

/// Two locks, one block: while lock 0 holds the block, a waiter of lock 1
/// finds none to claim and waits unregistered (TTAS), taking lock 1 when
/// it is freed.
#[test]
fn pool_exhausted_waits_unregistered() {
    run(
        "pool_exhausted_waits_unregistered",
        Model {
            blocks: 1,
            locks: 2,
            plan: &[&[(0, 0), (1, 0)], &[(0, 1)], &[(1, 1)]],
            cs_yields: 3,
            preemptions: 1,
            max_executions: Some(CAP_3),
        },
        &["ron_grant.unregistered_round", "ron_grant.registered"],
    );
}

/// A waiter gives up (`try_acquire_in_while`, after its first round)
/// while the holder may grant its slot: it takes the grant in its round or
/// on leaving, or takes the freed lock, or gives up. Either way the lock
/// is free afterwards, the counts add up, and the pool is whole.
#[test]
fn give_up_races_grant() {
    /// The lock and the counter it protects.
    struct One {
        lock: RonGrant,
        count: UnsafeCell<usize>,
    }
    // SAFETY: `count` is only touched while `lock` is held; the model
    // checks exactly that.
    unsafe impl Sync for One {}
    // SAFETY: as above.
    unsafe impl Send for One {}

    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    coverage::reset();
    let mut b = loom::model::Builder::new();
    b.preemption_bound = Some(2);
    b.max_branches = 100_000;
    b.max_permutations = Some(CAP_3);
    b.checkpoint_interval = 1000;
    b.check(|| {
        coverage::record("ron_grant.executions");
        let blocks: &'static [Block] = Box::leak(vec![Block::new()].into_boxed_slice());
        let pool: &'static Pool<'static> = Box::leak(Box::new(Pool::new_in(blocks)));
        let one = Arc::new(One {
            lock: RonGrant::new(),
            count: UnsafeCell::new(0),
        });
        let t = with_pool::acquire_in(&one.lock, pool, 0);
        // SAFETY: held.
        one.count.with_mut(|c| unsafe { *c += 1 });
        let waiter = {
            let one = one.clone();
            thread::spawn(move || {
                // Gives up after its first round.
                let got = with_pool::try_acquire_in_while(&one.lock, pool, 1, || false);
                match got {
                    Some(t) => {
                        // SAFETY: held.
                        one.count.with_mut(|c| unsafe { *c += 1 });
                        // SAFETY: we hold it with `t`.
                        unsafe { with_pool::release(&one.lock, pool, t) };
                        1
                    }
                    None => 0,
                }
            })
        };
        for _ in 0..3 {
            thread::yield_now();
        }
        // SAFETY: we hold it with `t`.
        unsafe { with_pool::release(&one.lock, pool, t) };
        let got = waiter.join().unwrap();
        // SAFETY: the waiter joined.
        assert_eq!(one.count.with(|c| unsafe { *c }), 1 + got);
        assert!(one.lock.ends_free(pool), "lock left held");
        assert!(!PooledLock::has_block(&one.lock), "lock kept its block");
        assert_eq!(pool.in_use(), 0, "a block was not returned");
        assert_eq!(blocks[0].occupied_slots(), 0, "a slot count left behind");
    });
    report(
        "give_up_races_grant",
        &counts(),
        &[
            "ron_grant.gave_up",
            "ron_grant.left_with_grant",
            "nxt_ron.granted",
        ],
    );
}
