//! `RonRw` under shuttle's PCT and random schedulers: 6 threads doing a
//! random mix of reads (in random reader groups: readers that land in
//! shared and in separate table slots), writes, `try_*`, upgradable reads
//! that upgrade or not, and downgrades, while one of them biases the lock
//! at random moments (readers then go through the visible-readers table
//! and every write revokes).
//!
//! Run: `RUSTFLAGS="--cfg shuttle" CARGO_TARGET_DIR=target/shuttle cargo
//! test -p ron-core --release --test shuttle_rw -- --nocapture`
//! (`RON_SHUTTLE_SCALE=N` multiplies the iterations).
//!
//! Checks: an occupancy word (a writer with anyone else fails), a plain
//! counter read-yield-written by writers (lost updates fail the total),
//! the lock free at the end, and the table, revocation and phase paths
//! reached (`ron_core::coverage`).
#![cfg(shuttle)]

use std::cell::UnsafeCell;
use std::time::Instant;

use ron_core::{RonRw, coverage};
use shuttle::scheduler::{PctScheduler, RandomScheduler};
use shuttle::sync::Arc;
use shuttle::sync::atomic::{AtomicUsize, Ordering};
use shuttle::thread;
use shuttle::{Config, Runner};

const WRITER: usize = 1 << 20;

struct Shared {
    lock: RonRw,
    occ: AtomicUsize,
    value: UnsafeCell<u64>,
    writes: AtomicUsize,
}

// SAFETY: `value` is accessed under `lock` only (what the test checks).
unsafe impl Sync for Shared {}

impl Shared {
    fn read_in(&self) {
        let was = self.occ.fetch_add(1, Ordering::Relaxed); // an occupancy count
        assert!(was < WRITER, "a reader inside with a writer");
    }
    fn read_out(&self) {
        self.occ.fetch_sub(1, Ordering::Relaxed); // as above
    }
    fn write_cs(&self) {
        let was = self.occ.fetch_add(WRITER, Ordering::Relaxed); // as above
        assert_eq!(was, 0, "a writer inside with others");
        // SAFETY: exclusive access held (checked above).
        unsafe {
            let v = *self.value.get();
            thread::yield_now();
            *self.value.get() = v + 1;
        }
        self.occ.fetch_sub(WRITER, Ordering::Relaxed); // as above
        self.writes.fetch_add(1, Ordering::Relaxed); // a count
    }
}

fn xorshift(x: &mut u64) -> u64 {
    *x ^= *x << 13;
    *x ^= *x >> 7;
    *x ^= *x << 17;
    *x
}

fn mixed(threads: usize, ops: usize) {
    let s = Arc::new(Shared {
        lock: RonRw::new(),
        occ: AtomicUsize::new(0),
        value: UnsafeCell::new(0),
        writes: AtomicUsize::new(0),
    });
    let hs: Vec<_> = (0..threads)
        .map(|t| {
            let s = Arc::clone(&s);
            thread::spawn(move || {
                let mut x = (t as u64 + 1) * 0x9E37_79B9;
                for _ in 0..ops {
                    let l = &s.lock;
                    match xorshift(&mut x) % 10 {
                        0..=3 => {
                            let r = l.read_in(xorshift(&mut x) as usize % 3);
                            s.read_in();
                            thread::yield_now();
                            s.read_out();
                            // SAFETY: acquired above.
                            unsafe { l.unread(r) };
                        }
                        4 => {
                            if let Some(r) = l.try_read() {
                                s.read_in();
                                s.read_out();
                                // SAFETY: acquired above.
                                unsafe { l.unread(r) };
                            }
                        }
                        5 => {
                            l.write();
                            s.write_cs();
                            // SAFETY: exclusive access held (taken above).
                            unsafe { l.unwrite() };
                        }
                        6 => {
                            if l.try_write() {
                                s.write_cs();
                                // SAFETY: exclusive access held (taken above).
                                unsafe { l.unwrite() };
                            }
                        }
                        7 => {
                            let u = l.read_upgradable();
                            s.read_in();
                            s.read_out();
                            let upgraded = if xorshift(&mut x) % 2 == 0 {
                                // SAFETY: `u` is held.
                                unsafe { l.try_upgrade(u) }
                            } else {
                                // SAFETY: `u` is held.
                                unsafe { l.upgrade(u) };
                                true
                            };
                            if upgraded {
                                s.write_cs();
                                // SAFETY: exclusive access held (taken above).
                                unsafe { l.unwrite() };
                            } else {
                                // SAFETY: still upgradable with `u`.
                                unsafe { l.unread_upgradable(u) };
                            }
                        }
                        8 => {
                            l.write();
                            s.write_cs();
                            // SAFETY: exclusive access held (taken above).
                            let r = unsafe { l.downgrade() };
                            s.read_in();
                            s.read_out();
                            // SAFETY: held with `r`.
                            unsafe { l.unread(r) };
                        }
                        _ => {
                            let _ = l.bias_now();
                        }
                    }
                }
            })
        })
        .collect();
    for h in hs {
        h.join().unwrap();
    }
    // SAFETY: every thread has joined.
    let v = unsafe { *s.value.get() };
    assert_eq!(v as usize, s.writes.load(Ordering::Relaxed), "lost update");
    assert!(!s.lock.is_held(), "lock left held");
    assert!(s.lock.try_write(), "lock not free at the end");
    // SAFETY: exclusive access held (taken above).
    unsafe { s.lock.unwrite() };
}

fn scale() -> usize {
    std::env::var("RON_SHUTTLE_SCALE")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1)
}

#[test]
fn mixed_ops_6_threads() {
    coverage::reset();
    let mut config = Config::new();
    config.silence_warnings = true;
    let n = 5000 * scale();
    let t0 = Instant::now();
    let f = || mixed(6, 12);
    Runner::new(PctScheduler::new(3, n), config.clone()).run(f);
    Runner::new(RandomScheduler::new(n), config).run(f);
    println!(
        "mixed_ops_6_threads: {n} PCT + {n} random executions in {:.1?}",
        t0.elapsed()
    );
    for p in [
        "ron_rw.biased",
        "ron_rw.read_table",
        "ron_rw.read_table_backoff",
        "ron_rw.revoke",
        "ron_rw.revoke_waits",
        "ron_rw.read_waits_phase",
        "ron_rw.write_queued",
        "ron_rw.write_waits_readers",
        "ron_rw.upgrade",
        "ron_rw.downgrade",
    ] {
        let hits = coverage::count(p);
        println!("  {p:<32} {hits}");
        assert!(hits > 0, "path {p} never reached");
    }
}
