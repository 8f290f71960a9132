//! Criterion benches of the reader-writer lock against its peers:
//!
//! * `rw_uncontended/{read,write}/<lock>`: one read (or write) lock and
//!   unlock of a `RwLock<u64>` no other thread touches.
//! * `rw_read_mostly/<lock>`: all threads of the machine (at least 2) each
//!   doing 99 reads per write of a small critical section on one lock;
//!   the time is per operation per thread.
//!
//! `cargo bench --bench rw`; filter with `cargo bench --bench rw --
//! rw_uncontended`.
#![allow(missing_docs)]

use std::hint::black_box;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use criterion::{Criterion, criterion_group, criterion_main};

/// The operations a peer offers.
trait Rw: Send + Sync + 'static {
    const NAME: &'static str;
    fn make() -> Self;
    fn read(&self) -> u64;
    fn write(&self);
}

impl Rw for ron_core::ron_rw::RonRwLock<u64> {
    const NAME: &'static str = "ron-rw";
    fn make() -> Self {
        Self::new(0)
    }
    fn read(&self) -> u64 {
        *self.read()
    }
    fn write(&self) {
        *self.write() += 1;
    }
}

impl Rw for parking_lot::RwLock<u64> {
    const NAME: &'static str = "parking_lot";
    fn make() -> Self {
        Self::new(0)
    }
    fn read(&self) -> u64 {
        *self.read()
    }
    fn write(&self) {
        *self.write() += 1;
    }
}

impl Rw for std::sync::RwLock<u64> {
    const NAME: &'static str = "std";
    fn make() -> Self {
        Self::new(0)
    }
    fn read(&self) -> u64 {
        *self.read().unwrap()
    }
    fn write(&self) {
        *self.write().unwrap() += 1;
    }
}

fn uncontended<L: Rw>(c: &mut Criterion) {
    let l = L::make();
    c.bench_function(&format!("rw_uncontended/read/{}", L::NAME), |b| {
        b.iter(|| black_box(&l).read())
    });
    c.bench_function(&format!("rw_uncontended/write/{}", L::NAME), |b| {
        b.iter(|| black_box(&l).write())
    });
}

fn read_mostly<L: Rw>(c: &mut Criterion) {
    let threads = std::thread::available_parallelism()
        .map_or(2, |n| n.get())
        .max(2);
    c.bench_function(&format!("rw_read_mostly/{}", L::NAME), |b| {
        b.iter_custom(|iters| {
            let l = Arc::new(L::make());
            let go = Arc::new(AtomicBool::new(false));
            let hs: Vec<_> = (0..threads)
                .map(|_| {
                    let (l, go) = (Arc::clone(&l), Arc::clone(&go));
                    std::thread::spawn(move || {
                        // Relaxed: a start flag.
                        while !go.load(Ordering::Relaxed) {
                            std::hint::spin_loop();
                        }
                        let t0 = Instant::now();
                        for i in 0..iters {
                            if i % 100 == 99 {
                                l.write();
                            } else {
                                black_box(l.read());
                            }
                        }
                        t0.elapsed()
                    })
                })
                .collect();
            go.store(true, Ordering::Relaxed);
            let total: Duration = hs.into_iter().map(|h| h.join().unwrap()).sum();
            total / threads as u32
        })
    });
}

fn benches(c: &mut Criterion) {
    uncontended::<ron_core::ron_rw::RonRwLock<u64>>(c);
    uncontended::<parking_lot::RwLock<u64>>(c);
    uncontended::<std::sync::RwLock<u64>>(c);
    read_mostly::<ron_core::ron_rw::RonRwLock<u64>>(c);
    read_mostly::<parking_lot::RwLock<u64>>(c);
    read_mostly::<std::sync::RwLock<u64>>(c);
}

criterion_group! {
    name = rw;
    config = Criterion::default()
        .warm_up_time(Duration::from_millis(500))
        .measurement_time(Duration::from_secs(2));
    targets = benches
}
criterion_main!(rw);
