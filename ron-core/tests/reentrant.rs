//! `RonReentrantMutex`: reentrancy, exclusion across threads, a panic while
//! held (the built-in thread id; `reentrant_provider.rs` registers one).
#![cfg(not(any(loom, shuttle)))]

use std::cell::Cell;
use std::sync::Arc;

use ron_core::RonReentrantMutex;
use ron_testkit::Unsynced;

#[test]
fn same_thread_relocks_and_counts() {
    let m = Arc::new(RonReentrantMutex::new(Cell::new(0u32)));
    let a = m.lock();
    let b = m.lock();
    let c = m.try_lock().expect("try_lock by the owner succeeds");
    a.set(a.get() + 1);
    b.set(b.get() + 1);
    c.set(c.get() + 1);
    assert!(m.is_owned_by_current_thread());
    drop(a);
    drop(c);
    // Still held once: another thread cannot get in.
    let m2 = Arc::clone(&m);
    assert!(
        std::thread::spawn(move || m2.try_lock().is_none())
            .join()
            .unwrap()
    );
    drop(b);
    assert!(!m.is_locked(), "the last unlock releases the RonRaw");
    let m2 = Arc::clone(&m);
    assert_eq!(
        std::thread::spawn(move || m2.lock().get()).join().unwrap(),
        3
    );
}

/// Threads each take the lock, then again nested 1-3 deep, and bump a
/// non-atomic counter at every depth: lost updates or two threads inside
/// show up.
#[test]
fn excludes_other_threads() {
    let m = Arc::new(RonReentrantMutex::new(Unsynced::new()));
    std::thread::scope(|s| {
        for t in 0..6usize {
            let m = &m;
            s.spawn(move || {
                for i in 0..1500usize {
                    let depth = 1 + (i + t) % 3;
                    let guards: Vec<_> = (0..depth).map(|_| m.lock()).collect();
                    for g in &guards {
                        // SAFETY: this thread holds the lock.
                        unsafe { g.bump() };
                    }
                }
            });
        }
    });
    let expected: u64 = (0..6usize)
        .map(|t| {
            (0..1500usize)
                .map(|i| (1 + (i + t) % 3) as u64)
                .sum::<u64>()
        })
        .sum();
    assert_eq!(m.lock().get(), expected);
    assert!(!m.is_locked());
}

#[test]
fn panic_while_held_twice_releases() {
    let m = Arc::new(RonReentrantMutex::new(Cell::new(0u32)));
    let m2 = Arc::clone(&m);
    let r = std::thread::spawn(move || {
        let _a = m2.lock();
        let _b = m2.lock();
        panic!("user code panics while holding the lock twice");
    })
    .join();
    assert!(r.is_err());
    assert!(!m.is_locked(), "both guards dropped while unwinding");
    let g = m.lock();
    g.set(7);
    drop(g);
    let m2 = Arc::clone(&m);
    assert_eq!(
        std::thread::spawn(move || m2.lock().get()).join().unwrap(),
        7
    );
}

#[test]
fn size() {
    assert_eq!(std::mem::size_of::<RonReentrantMutex<()>>(), 32);
}
