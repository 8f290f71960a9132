//! The process-wide pool of `RonRaw` blocks grows with `std`: more locks
//! with registered waiters at once than [`POOL_BLOCKS`] all get a block
//! (chunks of [`GROW_CHUNK`] are allocated), and a pool capped with
//! `set_pool_limit` degrades to waiting unregistered, never to an error
//! or a hang.
//!
//! One test in its own binary: the pool is process-wide.
#![cfg(all(feature = "std", not(loom), not(miri)))]

use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};

use ron_core::RonRaw;
use ron_core::ron_raw::pool::{self, GROW_CHUNK, POOL_BLOCKS, POOL_MAX_BLOCKS, set_pool_limit};

/// Aborts the process if the test hangs (a waiter that never gets a
/// block would leave the main thread polling forever).
fn watchdog(done: &'static AtomicBool) {
    std::thread::spawn(move || {
        let t0 = std::time::Instant::now();
        while !done.load(Ordering::Relaxed) {
            if t0.elapsed() > std::time::Duration::from_secs(300) {
                eprintln!("pool_growth: hung (waiters never got their blocks)");
                std::process::abort();
            }
            std::thread::sleep(std::time::Duration::from_millis(50));
        }
    });
}

#[test]
fn pool_grows_then_caps() {
    static DONE: AtomicBool = AtomicBool::new(false);
    watchdog(&DONE);
    assert_eq!(POOL_MAX_BLOCKS, POOL_BLOCKS + 15 * GROW_CHUNK);
    let g = pool::global();
    assert_eq!(g.allocated(), POOL_BLOCKS);

    // More contended locks at once than static blocks: each lock is held
    // here and has one waiter, which registers and keeps its lock's block
    // until it gets the lock.
    let n = POOL_BLOCKS + 8;
    let locks: Vec<RonRaw> = (0..n).map(|_| RonRaw::new()).collect();
    let tokens: Vec<_> = locks.iter().map(|l| l.acquire()).collect();
    let entered = AtomicUsize::new(0);
    std::thread::scope(|s| {
        for (i, l) in locks.iter().enumerate() {
            let entered = &entered;
            s.spawn(move || {
                let t = l.acquire_in(i);
                entered.fetch_add(1, Ordering::Relaxed);
                // SAFETY: we hold the lock with `t`.
                unsafe { l.release(t) };
            });
        }
        // Each waiter holds its lock's block (a lock has one block at a
        // time), so the pool's count reaches `n` once every lock has one.
        while g.in_use() < n {
            std::thread::yield_now();
        }
        assert_eq!(g.allocated(), POOL_BLOCKS + GROW_CHUNK, "one chunk grown");
        assert_eq!(
            entered.load(Ordering::Relaxed),
            0,
            "a waiter got a held lock"
        );
        for (l, t) in locks.iter().zip(tokens) {
            // SAFETY: we hold each lock with its token.
            unsafe { l.release(t) };
        }
    });
    assert_eq!(entered.load(Ordering::Relaxed), n);
    assert_eq!(g.in_use(), 0, "blocks left claimed");

    // Capped at no block: contention still works, waiting unregistered.
    set_pool_limit(0);
    let l = RonRaw::new();
    let count = AtomicUsize::new(0);
    let t = l.acquire();
    std::thread::scope(|s| {
        for i in 0..8 {
            let (l, count) = (&l, &count);
            s.spawn(move || {
                for _ in 0..200 {
                    let t = l.acquire_in(i);
                    // Relaxed: read after the threads joined.
                    count.fetch_add(1, Ordering::Relaxed);
                    // SAFETY: we hold the lock with `t`.
                    unsafe { l.release(t) };
                }
            });
        }
        for _ in 0..100 {
            std::thread::yield_now();
        }
        assert_eq!(g.in_use(), 0, "a capped pool handed out a block");
        // SAFETY: we hold the lock with `t`.
        unsafe { l.release(t) };
    });
    assert_eq!(count.load(Ordering::Relaxed), 1600);
    assert_eq!(g.in_use(), 0);
    set_pool_limit(usize::MAX);
    DONE.store(true, Ordering::Relaxed);
}
