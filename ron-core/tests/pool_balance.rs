//! Every block reference a pooled lock hands around comes back: after a
//! contended run in which unlocks pass the acquisition's guard, no guard
//! (`PlaceToken::NONE`, as lock_api 0.4's `unlock` does) or a wrong one
//! (a thread that migrated), the idle lock holds no block and the pool
//! has every block back. A lost reference would leave the block attached
//! to the idle lock; an extra drop would return it while still in use.
//!
//! `RonTicket`, `NxtRon` and `RonPlock` bank references in their owners'
//! slots and pass them with their grants (`ron_ticket` module docs,
//! `plock`'s "The bank"), so a guard-less release leaves a bank behind
//! that a later free must collect.
//!
//! One binary: the pool is process-wide.
#![cfg(all(feature = "std", not(loom), not(miri)))]

use std::sync::atomic::{AtomicU64, Ordering};

use ron_core::{NxtRon, PlaceToken, RonPlock, RonTicket};

const THREADS: usize = 4;
/// Contended bursts; the pool is checked after each.
const BURSTS: usize = 40;
const ROUNDS: usize = 500;

/// The pooled locks under test, and their pools.
trait Pooled: Sync {
    fn new() -> Self;
    fn acquire_in(&self, slot: usize) -> PlaceToken;
    /// # Safety
    /// The caller holds the lock.
    unsafe fn release(&self, t: PlaceToken);
    fn is_held(&self) -> bool;
    fn blocks_in_use() -> usize;
}

macro_rules! pooled {
    ($t:ty, $pool:expr) => {
        impl Pooled for $t {
            fn new() -> Self {
                <$t>::new()
            }
            fn acquire_in(&self, slot: usize) -> PlaceToken {
                <$t>::acquire_in(self, slot)
            }
            unsafe fn release(&self, t: PlaceToken) {
                // SAFETY: forwarded contract.
                unsafe { <$t>::release(self, t) }
            }
            fn is_held(&self) -> bool {
                <$t>::is_held(self)
            }
            fn blocks_in_use() -> usize {
                $pool.in_use()
            }
        }
    };
}
pooled!(RonTicket, ron_core::ron_ticket::global());
pooled!(NxtRon, ron_core::ron_raw::pool::global());
pooled!(RonPlock, ron_core::ron_raw::pool::global());

#[test]
fn ron_ticket_returns_every_block() {
    returns_every_block::<RonTicket>();
}

#[test]
fn nxt_ron_returns_every_block() {
    returns_every_block::<NxtRon>();
}

#[test]
fn ron_plock_returns_every_block() {
    returns_every_block::<RonPlock>();
}

/// `NxtRon` and `RonPlock` share a pool, and each test checks that its
/// pool is empty: one test at a time.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn returns_every_block<L: Pooled>() {
    let _serial = SERIAL.lock().unwrap_or_else(|e| e.into_inner());
    let lock = L::new();
    let count = AtomicU64::new(0);
    for burst in 0..BURSTS {
        let start = std::sync::Barrier::new(THREADS);
        std::thread::scope(|s| {
            for id in 0..THREADS {
                let (lock, count, start) = (&lock, &count, &start);
                s.spawn(move || {
                    start.wait();
                    for i in 0..ROUNDS {
                        // Wait in a slot of this thread's own (as a CPU
                        // hint would give), so that waiters spread over
                        // slots.
                        let t = lock.acquire_in(id);
                        // Relaxed: the lock orders the increments.
                        let v = count.load(Ordering::Relaxed);
                        // Hold the lock a while, so that the others queue.
                        for _ in 0..50 {
                            std::hint::spin_loop();
                        }
                        count.store(v + 1, Ordering::Relaxed);
                        let token = match (i + id + burst) % 3 {
                            0 => t,
                            1 => PlaceToken::NONE,
                            _ => PlaceToken::at(i),
                        };
                        // SAFETY: held; any token is safe to pass.
                        unsafe { lock.release(token) };
                    }
                });
            }
        });
        assert!(!lock.is_held(), "lock left held");
        assert_eq!(
            L::blocks_in_use(),
            0,
            "burst {burst}: a block is still claimed after the lock went idle"
        );
    }
    assert_eq!(
        count.load(Ordering::Relaxed),
        (BURSTS * THREADS * ROUNDS) as u64
    );
}
