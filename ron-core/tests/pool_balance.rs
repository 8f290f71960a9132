//! Every block reference a pooled lock hands around comes back: after a
//! contended run in which unlocks pass the acquisition's guard, no guard
//! (`PlaceToken::NONE`, as lock_api 0.4's `unlock` does) or a wrong one
//! (a thread that migrated), the idle lock holds no block and the pool
//! has every block back. A lost reference would leave the block attached
//! to the idle lock; an extra drop would return it while still in use.
//!
//! `RonTicket` banks references in its owners' slots and passes them with
//! its grants (`ron_ticket` module docs), so a guard-less release leaves
//! a bank behind that a later free must collect.
//!
//! One binary: the pool is process-wide.
#![cfg(all(feature = "std", not(loom), not(miri)))]

use std::sync::atomic::{AtomicU64, Ordering};

use ron_core::{PlaceToken, RonTicket};

const THREADS: usize = 4;
/// Contended bursts; the pool is checked after each.
const BURSTS: usize = 40;
const ROUNDS: usize = 500;

#[test]
fn ron_ticket_returns_every_block() {
    let lock = RonTicket::<ron_core::relax::DefaultRelax>::new();
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
            ron_core::ron_ticket::global().in_use(),
            0,
            "burst {burst}: a block is still claimed after the lock went idle"
        );
    }
    assert_eq!(
        count.load(Ordering::Relaxed),
        (BURSTS * THREADS * ROUNDS) as u64
    );
}
