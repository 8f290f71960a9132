//! ron locks where the ecosystem is, `lock_api` 0.4 (ron-core's
//! `lock_api_04` feature): `lock_api_04::Mutex` over ron locks, and a real
//! crate generic over a 0.4 raw lock, tracing-mutex's `TracingWrapper<R:
//! lock_api::RawMutex>` (lock-order cycle detection), over `RonRaw`, over
//! `Api04<CBoMcs>`, and as a 0.4 `RawRwLock` over `RonRw`.

use std::sync::Arc;

use ron_core::api04::Api04;
use tracing_mutex::lockapi::TracingWrapper;

type Traced<T> = lock_api_04::Mutex<TracingWrapper<ron_core::RonRaw>, T>;

#[test]
fn tracing_mutex_over_ron_raw_counts_and_excludes() {
    let m = Arc::new(Traced::new(0u64));
    std::thread::scope(|s| {
        for _ in 0..4 {
            let m = &m;
            s.spawn(move || {
                for _ in 0..5000 {
                    *m.lock() += 1;
                }
            });
        }
    });
    assert_eq!(*m.lock(), 20_000);
    let g = m.lock();
    // (Not `try_lock` on this thread: tracing-mutex reports that as a
    // self-cycle.)
    let m2 = Arc::clone(&m);
    assert!(
        std::thread::spawn(move || m2.try_lock().is_none())
            .join()
            .unwrap()
    );
    drop(g);
    assert!(!m.is_locked());
}

#[test]
fn tracing_mutex_over_ron_raw_reports_a_lock_order_cycle() {
    let a = Traced::new(());
    let b = Traced::new(());
    {
        let _ga = a.lock();
        let _gb = b.lock(); // records a -> b
    }
    let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let _gb = b.lock();
        let _ga = a.lock(); // b -> a closes a cycle: tracing-mutex panics
    }));
    assert!(r.is_err(), "tracing-mutex did not see the cycle");
    // The ron locks are free again (the panic released b's guard, and a's
    // acquisition never happened).
    assert!(!a.is_locked() && !b.is_locked());
}

#[test]
fn tracing_mutex_over_api04_cbo_mcs() {
    let m = Arc::new(lock_api_04::Mutex::<
        TracingWrapper<Api04<ron_core::CBoMcs<2>>>,
        u64,
    >::new(0));
    std::thread::scope(|s| {
        for _ in 0..4 {
            let m = &m;
            s.spawn(move || {
                for _ in 0..2000 {
                    *m.lock() += 1;
                }
            });
        }
    });
    assert_eq!(*m.lock(), 8000);
}

#[test]
fn tracing_mutex_over_ron_rw() {
    let l = Arc::new(lock_api_04::RwLock::<TracingWrapper<ron_core::RonRw>, u64>::new(0));
    std::thread::scope(|s| {
        for t in 0..4 {
            let l = &l;
            s.spawn(move || {
                for i in 0..2000 {
                    if (i + t) % 10 == 0 {
                        *l.write() += 1;
                    } else {
                        std::hint::black_box(*l.read());
                    }
                }
            });
        }
    });
    assert_eq!(*l.read(), 800);
    let u = l.upgradable_read();
    let mut w = lock_api_04::RwLockUpgradableReadGuard::upgrade(u);
    *w += 1;
    let r = lock_api_04::RwLockWriteGuard::downgrade(w);
    assert_eq!(*r, 801);
    drop(r);
    assert!(!l.is_locked());
}
