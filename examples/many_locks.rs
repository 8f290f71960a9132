//! Many locks, few contended: T threads, N locks, each operation on a
//! random lock (lock, bump its counter, unlock), for a fixed time per point.
//! Prints million operations/s per lock type and its ratio to parking_lot
//! at the same point, and each type's bytes per lock.
//!
//! ```text
//! cargo run --release --example many_locks               # 0.3 s per point
//! cargo run --release --example many_locks -- 1          # seconds per point
//! cargo run --release --example many_locks -- 0.3 2,1000000 2,32
//! ```
//! (arguments: seconds per point, lock counts, thread counts.)
//! `RonInline` (2176 bytes per lock) is skipped above 100,000 locks.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use lock_api::RawMutex;

/// A set of `n` locks, each guarding a counter.
trait Locks: Sync {
    fn bump(&self, i: usize);
}

struct Api<R: RawMutex>(Vec<lock_api::Mutex<R, u64>>);
impl<R: RawMutex + Sync + Send> Locks for Api<R> {
    fn bump(&self, i: usize) {
        *self.0[i].lock() += 1;
    }
}

struct Std(Vec<std::sync::Mutex<u64>>);
impl Locks for Std {
    fn bump(&self, i: usize) {
        *self.0[i].lock().unwrap() += 1;
    }
}

struct Spin(Vec<spin::Mutex<u64>>);
impl Locks for Spin {
    fn bump(&self, i: usize) {
        *self.0[i].lock() += 1;
    }
}

/// Runs `threads` threads on `locks` for `secs`; returns million ops/s.
fn run(locks: &dyn Locks, n: usize, threads: usize, secs: f64) -> f64 {
    let stop = AtomicBool::new(false);
    let t0 = Instant::now();
    let total: u64 = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|t| {
                let stop = &stop;
                s.spawn(move || {
                    let mut x = 0x9E37_79B9_7F4A_7C15u64 ^ (t as u64 + 1);
                    let mut ops = 0u64;
                    while !stop.load(Ordering::Relaxed) {
                        for _ in 0..64 {
                            x ^= x << 13;
                            x ^= x >> 7;
                            x ^= x << 17;
                            locks.bump((x % n as u64) as usize);
                        }
                        ops += 64;
                    }
                    ops
                })
            })
            .collect();
        std::thread::sleep(Duration::from_secs_f64(secs));
        stop.store(true, Ordering::Relaxed);
        hs.into_iter().map(|h| h.join().unwrap()).sum()
    });
    total as f64 / t0.elapsed().as_secs_f64() / 1e6
}

fn list(arg: Option<String>, default: &[usize]) -> Vec<usize> {
    arg.map_or_else(
        || default.to_vec(),
        |a| a.split(',').map(|v| v.parse().expect("a number")).collect(),
    )
}

fn main() {
    let mut args = std::env::args().skip(1);
    let secs: f64 = args.next().map_or(0.3, |a| a.parse().expect("seconds"));
    let ns = list(args.next(), &[2, 64, 1000, 1_000_000]);
    let ts = list(args.next(), &[2, 8, 32]);
    println!(
        "bytes per lock (without data): RonRaw {}, RonInline {}, parking_lot {}, std {}, spin {}",
        size_of::<ron_core::RonRaw>(),
        size_of::<ron_core::RonInline>(),
        size_of::<parking_lot::RawMutex>(),
        size_of::<std::sync::Mutex<()>>(),
        size_of::<spin::Mutex<()>>(),
    );
    println!("locks\tthreads\tlock\tMops/s\tvs parking_lot");
    for &n in &ns {
        let mut sets: Vec<(&str, Box<dyn Locks>)> = vec![
            (
                "parking_lot",
                Box::new(Api::<parking_lot::RawMutex>(
                    (0..n).map(|_| lock_api::Mutex::new(0)).collect(),
                )),
            ),
            (
                "RonRaw",
                Box::new(Api::<ron_core::RonRaw>(
                    (0..n).map(|_| lock_api::Mutex::new(0)).collect(),
                )),
            ),
            (
                "std",
                Box::new(Std((0..n).map(|_| std::sync::Mutex::new(0)).collect())),
            ),
            (
                "spin",
                Box::new(Spin((0..n).map(|_| spin::Mutex::new(0)).collect())),
            ),
        ];
        if n <= 100_000 {
            sets.push((
                "RonInline",
                Box::new(Api::<ron_core::RonInline>(
                    (0..n).map(|_| lock_api::Mutex::new(0)).collect(),
                )),
            ));
        }
        for &t in &ts {
            let mut base = 0.0;
            for (name, locks) in &sets {
                let m = run(locks.as_ref(), n, t, secs);
                if *name == "parking_lot" {
                    base = m;
                }
                println!("{n}\t{t}\t{name}\t{m:.2}\t{:.2}", m / base);
            }
        }
    }
}
