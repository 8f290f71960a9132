//! Contends one lock from many threads for a fixed time per (lock, threads)
//! and prints a table: lock, threads, million locks/s, fairness factor.
//!
//! ```text
//! cargo run --release --example contend            # 1 s per point
//! cargo run --release --example contend -- 0.25    # seconds per point
//! cargo run --release --example contend -- 1 RonRaw,parking_lot  # only these
//! cargo run --release --example contend -- 1 all 1,2,4  # these thread counts
//! ```
//!
//! Each thread loops { lock; read+write one cache line of shared data;
//! unlock }. The fairness factor (`ron_stats::fairness_factor`) is the
//! busier half's share of all acquisitions (0.5 = perfectly fair, 1.0 =
//! half the threads starved; with an odd thread count the middle thread
//! counts half).
//! All locks of one thread count run in the same process, one after
//! another, so the ratio column (vs parking_lot at the same thread count)
//! compares like with like.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use lock_api::RawMutex;

const THREADS: [usize; 4] = [2, 8, 32, 128];

/// Shared data: one cache line, read and written in every critical section.
type Line = [u64; 8];

/// A lock under test: `lock_api` raw mutexes and `std::sync::Mutex` alike.
trait Contended: Sync {
    fn with(&self, f: &mut dyn FnMut(&mut Line));
}

struct Api<R: RawMutex>(lock_api::Mutex<R, Line>);

impl<R: RawMutex + Sync + Send> Contended for Api<R> {
    fn with(&self, f: &mut dyn FnMut(&mut Line)) {
        f(&mut self.0.lock());
    }
}

/// Builds a fresh lock under test.
type MakeLock = fn() -> Box<dyn Contended>;

fn api<R: RawMutex + Sync + Send + 'static>() -> Box<dyn Contended> {
    Box::new(Api::<R>(lock_api::Mutex::new([0; 8])))
}

struct Std(std::sync::Mutex<Line>);

impl Contended for Std {
    fn with(&self, f: &mut dyn FnMut(&mut Line)) {
        f(&mut self.0.lock().unwrap_or_else(|e| e.into_inner()));
    }
}

/// Runs `threads` threads on `lock` for `dur`; returns (Mlocks/s, fairness factor).
fn contend(lock: &dyn Contended, threads: usize, dur: Duration) -> (f64, f64) {
    let stop = AtomicBool::new(false);
    let counts: Vec<u64> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                let stop = &stop;
                s.spawn(move || {
                    let mut n = 0u64;
                    // Relaxed: a stop flag, no data.
                    while !stop.load(Ordering::Relaxed) {
                        lock.with(&mut |line| {
                            for w in line.iter_mut() {
                                *w = w.wrapping_add(1);
                            }
                        });
                        n += 1;
                    }
                    n
                })
            })
            .collect();
        std::thread::sleep(dur);
        stop.store(true, Ordering::Relaxed);
        hs.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let total: u64 = counts.iter().sum();
    (
        total as f64 / dur.as_secs_f64() / 1e6,
        ron_stats::fairness_factor(&counts),
    )
}

fn main() {
    let secs: f64 = match std::env::args().nth(1).map(|s| s.parse::<f64>()) {
        None => 1.0,
        Some(Ok(s)) if s > 0.0 && s <= 60.0 => s,
        Some(_) => {
            eprintln!("contend: the argument is seconds per point, in (0, 60]");
            std::process::exit(2);
        }
    };
    let dur = Duration::from_secs_f64(secs);
    // Optional second argument: comma-separated names (or prefixes) of the
    // locks to run; parking_lot always runs, as the ratio's reference.
    let only: Option<Vec<String>> = std::env::args()
        .nth(2)
        .filter(|a| a != "all")
        .map(|a| a.split(',').map(str::to_string).collect());
    let threads: Vec<usize> = match std::env::args().nth(3) {
        None => THREADS.to_vec(),
        Some(a) => match a
            .split(',')
            .map(str::parse::<usize>)
            .collect::<Result<Vec<_>, _>>()
        {
            Ok(t) if t.iter().all(|&n| (1..=4096).contains(&n)) => t,
            _ => {
                eprintln!(
                    "contend: thread counts are a comma-separated list of 1..=4096, not {a:?}"
                );
                std::process::exit(2);
            }
        },
    };
    // Every lock of ron_testkit::for_each_lock!, then the peers.
    let mut locks: Vec<(&str, MakeLock)> = Vec::new();
    macro_rules! add {
        ($id:ident, $ty:ty, { name: $n:literal, type_name: $tn:literal, $($rest:tt)* }) => {
            locks.push(($tn, api::<$ty>));
        };
    }
    ron_testkit::for_each_lock!(add);
    locks.push(("std::sync::Mutex", || {
        Box::new(Std(std::sync::Mutex::new([0; 8])))
    }));
    locks.push(("parking_lot::Mutex", api::<parking_lot::RawMutex>));
    if let Some(only) = &only {
        locks.retain(|(name, _)| {
            name.starts_with("parking_lot") || only.iter().any(|o| name.starts_with(o.as_str()))
        });
        if locks.len() == 1 && !only.iter().any(|o| "parking_lot".starts_with(o.as_str())) {
            eprintln!("contend: no lock matches {only:?}");
            std::process::exit(2);
        }
    }
    println!(
        "{:<20} {:>7} {:>12} {:>9} {:>14}",
        "lock", "threads", "Mlocks/s", "fairness", "vs parking_lot"
    );
    for threads in threads {
        let rows: Vec<(&str, f64, f64)> = locks
            .iter()
            .map(|(name, make)| {
                let (rate, ff) = contend(make().as_ref(), threads, dur);
                (*name, rate, ff)
            })
            .collect();
        let pl = rows
            .iter()
            .find(|r| r.0 == "parking_lot::Mutex")
            .map_or(f64::NAN, |r| r.1);
        for (name, rate, ff) in rows {
            println!(
                "{name:<20} {threads:>7} {rate:>12.2} {ff:>9.2} {:>13.2}x",
                rate / pl
            );
        }
    }
}
