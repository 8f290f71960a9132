//! Criterion benches of every lock in `ron_bench::registry` (RON locks,
//! baselines and the std / parking_lot / spin peers):
//!
//! * `uncontended/<lock>`: one `lock(); unlock()` on a lock no other thread
//!   touches (the fast path).
//! * `ping_pong/<lock>`: two threads hand a counter back and forth through
//!   the lock (each waits, lock by lock, for the other's turn); the time is
//!   per round trip.
//!
//! `cargo bench --bench locks` (a couple of minutes); filter with
//! `cargo bench --bench locks -- uncontended`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};
use ron_bench::mutex::{BenchMutex, MutexFamily};
use ron_bench::registry::{LockInfo, LockVisitor, visit_all};

struct Uncontended<'a>(&'a mut Criterion);

impl LockVisitor for Uncontended<'_> {
    fn visit<F: MutexFamily>(&mut self, info: LockInfo) {
        let m = F::Mutex::<u64>::new(0);
        let mut g = self.0.benchmark_group("uncontended");
        g.bench_function(info.name, |b| {
            b.iter(|| {
                let mut guard = black_box(&m).lock();
                *guard += 1;
            })
        });
        g.finish();
    }
}

struct PingPong<'a>(&'a mut Criterion);

/// Waits (lock by lock) until the counter has parity `turn`, then bumps it.
fn take_turn<M: BenchMutex<u64>>(m: &M, turn: u64) {
    loop {
        let mut g = m.lock();
        if *g % 2 == turn {
            *g += 1;
            return;
        }
        drop(g);
        std::hint::spin_loop();
    }
}

impl LockVisitor for PingPong<'_> {
    fn visit<F: MutexFamily>(&mut self, info: LockInfo) {
        let mut g = self.0.benchmark_group("ping_pong");
        g.bench_function(info.name, |b| {
            b.iter_custom(|iters| {
                let m = F::Mutex::<u64>::new(0);
                std::thread::scope(|s| {
                    s.spawn(|| {
                        for _ in 0..iters {
                            take_turn(&m, 1);
                        }
                    });
                    let start = Instant::now();
                    for _ in 0..iters {
                        take_turn(&m, 0);
                    }
                    start.elapsed()
                })
            })
        });
        g.finish();
    }
}

fn benches(c: &mut Criterion) {
    visit_all(&mut Uncontended(c));
    visit_all(&mut PingPong(c));
}

criterion_group! {
    name = locks;
    config = Criterion::default()
        .sample_size(20)
        .warm_up_time(Duration::from_millis(200))
        .measurement_time(Duration::from_millis(500));
    targets = benches
}
criterion_main!(locks);
