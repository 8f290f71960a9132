//! The parking lock against `parking_lot` (and the spinning `RonRaw`):
//! throughput, fairness factor and CPU seconds per acquisition, for
//! several thread counts and critical-section lengths, side by side in one
//! process.
//!
//! ```text
//! cargo run --release --example park                  # 1 s per point
//! cargo run --release --example park -- 0.5 8,32,128 0,100,1000
//! cargo run --release --example park -- 0.5 8,32,128 0,100,1000 RonPark,parking_lot
//! ```
//! (arguments: seconds per point, thread counts, nCS values, locks; the
//! last lock is the reference of the ratios.)
//!
//! Each thread loops { lock; write one cache line; spin for `ncs` ns;
//! unlock }. Fairness is the busier half's share of all acquisitions (0.5 =
//! perfectly fair). CPU seconds are the process's user + system time
//! (`/proc/self/stat`) over the point, divided by acquisitions.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use lock_api::RawMutex;

type Line = [u64; 8];

/// User + system CPU seconds of this process (all its threads, also the
/// finished ones), from `/proc/self/stat` (Linux; 0 elsewhere). Clock
/// ticks are taken as 100 per second (`CLK_TCK` on Linux).
fn cpu_secs() -> f64 {
    let Ok(stat) = std::fs::read_to_string("/proc/self/stat") else {
        return 0.0;
    };
    // Fields after the command name (which may hold spaces): the 12th and
    // 13th are utime and stime.
    let rest = &stat[stat.rfind(')').map_or(0, |i| i + 2)..];
    let f: Vec<&str> = rest.split_whitespace().collect();
    let ticks = |i: usize| f.get(i).and_then(|v| v.parse::<f64>().ok()).unwrap_or(0.0);
    (ticks(11) + ticks(12)) / 100.0
}

fn spin_for(ns: u64) {
    if ns == 0 {
        return;
    }
    let t0 = Instant::now();
    while t0.elapsed() < Duration::from_nanos(ns) {
        std::hint::spin_loop();
    }
}

/// (Mlocks/s, fairness, CPU µs per acquisition)
fn point<R: RawMutex + Send + Sync>(threads: usize, ncs: u64, dur: Duration) -> (f64, f64, f64) {
    let m = lock_api::Mutex::<R, Line>::new([0; 8]);
    let stop = AtomicBool::new(false);
    let c0 = cpu_secs();
    let t0 = Instant::now();
    let mut counts: Vec<u64> = std::thread::scope(|s| {
        let hs: Vec<_> = (0..threads)
            .map(|_| {
                s.spawn(|| {
                    let mut n = 0u64;
                    // Relaxed: a stop flag.
                    while !stop.load(Ordering::Relaxed) {
                        let mut g = m.lock();
                        g[0] += 1;
                        spin_for(ncs);
                        drop(g);
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
    let secs = t0.elapsed().as_secs_f64();
    let cpu = cpu_secs() - c0;
    let total: u64 = counts.iter().sum();
    counts.sort_unstable();
    let busy: f64 = counts[threads / 2..].iter().sum::<u64>() as f64
        - if threads % 2 == 1 {
            counts[threads / 2] as f64 / 2.0
        } else {
            0.0
        };
    let fair = busy / total.max(1) as f64;
    (
        total as f64 / secs / 1e6,
        fair,
        cpu / total.max(1) as f64 * 1e6,
    )
}

fn list(arg: Option<String>, default: &[u64]) -> Vec<u64> {
    arg.map_or(default.to_vec(), |a| {
        a.split(',').map(|x| x.parse().expect("a number")).collect()
    })
}

fn main() {
    let secs: f64 = std::env::args()
        .nth(1)
        .map_or(1.0, |s| s.parse().expect("seconds"));
    let threads = list(std::env::args().nth(2), &[8, 32, 128]);
    let ncs = list(std::env::args().nth(3), &[0, 100, 1000]);
    let dur = Duration::from_secs_f64(secs);
    type Point = fn(usize, u64, Duration) -> (f64, f64, f64);
    let all: [(&str, Point); 3] = [
        ("RonPark", point::<ron_core::RonPark>),
        ("RonRaw", point::<ron_core::RonRaw>),
        ("parking_lot", point::<parking_lot::RawMutex>),
    ];
    let locks: Vec<(&str, Point)> = match std::env::args().nth(4) {
        None => all.to_vec(),
        Some(names) => names
            .split(',')
            .map(|n| {
                *all.iter()
                    .find(|(name, _)| name.eq_ignore_ascii_case(n.trim()))
                    .unwrap_or_else(|| panic!("unknown lock {n}: RonPark, RonRaw, parking_lot"))
            })
            .collect(),
    };
    println!(
        "{:<12} {:>7} {:>6} {:>9} {:>8} {:>12} {:>9} {:>9}",
        "lock", "threads", "ncs", "Mlocks/s", "fairness", "cpu us/acq", "thr vs pl", "cpu vs pl"
    );
    for &t in &threads {
        for &n in &ncs {
            let rows: Vec<_> = locks
                .iter()
                .map(|(name, run)| (name, run(t as usize, n, dur)))
                .collect();
            let pl = rows.last().unwrap().1;
            for (name, (thr, fair, cpu)) in rows {
                println!(
                    "{name:<12} {t:>7} {n:>6} {thr:>9.3} {fair:>8.3} {cpu:>12.3} {:>9.2} {:>9.2}",
                    thr / pl.0,
                    cpu / pl.2
                );
            }
        }
    }
}
