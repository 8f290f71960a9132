//! Stress: every lock of `ron_testkit::for_each_lock!` at 2, 8, 32 and 128 threads on whatever this
//! machine has (2 cores in CI), with randomized critical sections, random
//! sleeps and yields, random re-pinning (thread migration), nested locks in
//! a fixed order and a non-atomic counter in the protected data.
//!
//! `RON_STRESS_SECS=60 cargo test --release --test stress -- --ignored --nocapture stress`
//!
//! Fails on a lost update (the non-atomic counters disagree with the
//! acquisitions counted per thread), on two threads inside at once (the
//! occupancy check in `Unsynced`), or when a thread makes no progress for
//! [`STALL`] (the watchdog names the lock and how many threads wait).

use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use lock_api::{Mutex, RawMutex};
use ron_testkit::{Unsynced, for_each_lock};

const THREADS: [usize; 4] = [2, 8, 32, 128];
const STALL: Duration = Duration::from_secs(10);

fn xorshift(s: &mut u64) -> u64 {
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    *s
}

/// One (lock, threads) point: returns acquisitions of the outer lock.
fn point<R: RawMutex + Send + Sync + 'static>(name: &str, threads: usize, dur: Duration) -> u64 {
    let outer = Mutex::<R, Unsynced>::new(Unsynced::new());
    let inner = Mutex::<R, Unsynced>::new(Unsynced::new());
    let stop = AtomicBool::new(false);
    let epoch = Instant::now();
    // Per thread: milliseconds since `epoch` of its last acquisition.
    let last: Vec<AtomicU64> = (0..threads).map(|_| AtomicU64::new(0)).collect();
    let cores = core_affinity::get_core_ids().unwrap_or_default();
    let (mut outer_n, mut inner_n) = (0u64, 0u64);
    std::thread::scope(|s| {
        let handles: Vec<_> = (0..threads)
            .map(|t| {
                let (outer, inner, stop, last, cores) = (&outer, &inner, &stop, &last, &cores);
                s.spawn(move || {
                    let mut rng =
                        0x9E37_79B9_7F4A_7C15u64 ^ (t as u64 + 1).wrapping_mul(0xD6E8_FEB8);
                    let (mut o, mut i) = (0u64, 0u64);
                    // Relaxed: a stop flag, no data.
                    while !stop.load(Ordering::Relaxed) || o == 0 {
                        let r = xorshift(&mut rng);
                        let g = outer.lock();
                        // SAFETY: `g` holds the lock guarding this counter.
                        unsafe { g.bump() };
                        if r.is_multiple_of(4) {
                            // Nested, always outer then inner.
                            let h = inner.lock();
                            // SAFETY: `h` holds the inner lock.
                            unsafe { h.bump() };
                            i += 1;
                            drop(h);
                        }
                        for _ in 0..(r >> 8) % 64 {
                            std::hint::spin_loop();
                        }
                        drop(g);
                        o += 1;
                        // Relaxed: a progress timestamp read by the watchdog only.
                        last[t].store(epoch.elapsed().as_millis() as u64, Ordering::Relaxed);
                        match (r >> 20) % 1024 {
                            0..=63 => std::thread::yield_now(),
                            64..=65 => std::thread::sleep(Duration::from_micros(50)),
                            66..=69 if !cores.is_empty() => {
                                let c = cores[(r >> 32) as usize % cores.len()];
                                core_affinity::set_for_current(c);
                            }
                            _ => {}
                        }
                    }
                    (o, i)
                })
            })
            .collect();
        // Watchdog (this thread): stop after `dur`, then wait for the drain.
        loop {
            std::thread::sleep(Duration::from_millis(50));
            let now = epoch.elapsed();
            if now >= dur {
                stop.store(true, Ordering::Relaxed); // see the loop
            }
            let now_ms = now.as_millis() as u64;
            let stalled: Vec<usize> = (0..threads)
                .filter(|&t| {
                    let l = last[t].load(Ordering::Relaxed); // a timestamp
                    !handles[t].is_finished() && now_ms.saturating_sub(l) > STALL.as_millis() as u64
                })
                .collect();
            if !stalled.is_empty() {
                let waiting = handles.iter().filter(|h| !h.is_finished()).count();
                eprintln!(
                    "WATCHDOG: {name} x{threads}: {} threads made no progress for {STALL:?} \
                     ({waiting} threads still waiting; lock held: {})",
                    stalled.len(),
                    outer.is_locked()
                );
                std::process::exit(101);
            }
            if handles.iter().all(|h| h.is_finished()) {
                break;
            }
        }
        for h in handles {
            let (o, i) = h.join().expect("stress thread panicked");
            outer_n += o;
            inner_n += i;
        }
    });
    assert_eq!(
        outer.lock().get(),
        outer_n,
        "{name} x{threads}: lost updates (outer)"
    );
    assert_eq!(
        inner.lock().get(),
        inner_n,
        "{name} x{threads}: lost updates (inner)"
    );
    assert!(
        !outer.is_locked() && !inner.is_locked(),
        "{name}: held after the run"
    );
    outer_n
}

type Point = fn(&str, usize, Duration) -> u64;

#[test]
#[ignore = "long: run with --ignored (see .ci/stress)"]
fn stress() {
    let mut locks: Vec<(&str, Point)> = Vec::new();
    macro_rules! add {
        ($id:ident, $ty:ty, { name: $n:literal, type_name: $tn:literal, $($rest:tt)* }) => {
            locks.push(($tn, point::<$ty>));
        };
    }
    for_each_lock!(add);
    let total: f64 = std::env::var("RON_STRESS_SECS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(60.0);
    // 70% of the budget is run time; the rest covers spawning and draining
    // (FIFO locks at 128 threads drain slowly on 2 cores).
    let per = Duration::from_secs_f64(total * 0.7 / (locks.len() * THREADS.len()) as f64);
    let t0 = Instant::now();
    println!(
        "stress: {} locks x {THREADS:?} threads, {per:?} per point",
        locks.len()
    );
    println!(
        "{:<14} {:>7} {:>12} {:>9} {:>12}",
        "lock", "threads", "acquisitions", "secs", "per sec"
    );
    for (name, run) in locks {
        for &t in &THREADS {
            let start = Instant::now();
            let n = run(name, t, per);
            let secs = start.elapsed().as_secs_f64();
            println!(
                "{name:<14} {t:>7} {n:>12} {secs:>9.2} {:>12.0}",
                n as f64 / secs
            );
        }
    }
    println!(
        "stress: total {:.1} s (budget {total} s)",
        t0.elapsed().as_secs_f64()
    );
}
