//! `RonReentrantMutex` with a registered thread-id provider (the `no_std`
//! hook; its own process, since a provider is set once).
#![cfg(not(any(loom, shuttle)))]

use std::num::NonZeroUsize;
use std::sync::atomic::{AtomicUsize, Ordering};

use ron_core::RonReentrantMutex;
use ron_core::reentrant::set_thread_id_provider;

static CALLS: AtomicUsize = AtomicUsize::new(0);
static NEXT: AtomicUsize = AtomicUsize::new(1);

/// Ids 1, 2, ... handed out per thread (as an RTOS task id would be).
fn task_id() -> NonZeroUsize {
    std::thread_local!(static ID: usize = NEXT.fetch_add(1, Ordering::Relaxed));
    CALLS.fetch_add(1, Ordering::Relaxed);
    NonZeroUsize::new(ID.with(|id| *id)).unwrap()
}

#[test]
fn provider_ids_are_used() {
    // SAFETY: `task_id` gives each thread its own nonzero id for life, and
    // no RonReentrantMutex was locked before in this process.
    unsafe { set_thread_id_provider(task_id) }.unwrap();
    // SAFETY: as above.
    let again = unsafe { set_thread_id_provider(task_id) };
    assert!(again.is_err(), "set once");
    let m = RonReentrantMutex::new(std::cell::Cell::new(0u64));
    let before = CALLS.load(Ordering::Relaxed);
    {
        let a = m.lock();
        let b = m.lock();
        a.set(b.get() + 1);
    }
    assert!(
        CALLS.load(Ordering::Relaxed) >= before + 2,
        "provider asked"
    );
    let m = std::sync::Arc::new(m);
    std::thread::scope(|s| {
        for _ in 0..4 {
            let m = &m;
            s.spawn(move || {
                for _ in 0..1000 {
                    let g = m.lock();
                    let h = m.lock();
                    g.set(h.get() + 1);
                }
            });
        }
    });
    assert_eq!(m.lock().get(), 4001);
}
