//! The futex model on machines whose costs are computable by hand: a
//! sleeper costs no CPU time and is not scheduled, a wake makes it
//! runnable `Costs::wake_ns` later, a timer wakes it, and a sleeper nobody
//! wakes stops the run.

use std::cell::Cell;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::Arc;
use std::time::Duration;

use ron_vm::atomic::AtomicU32;
use ron_vm::{Costs, Machine, Vm};

fn uniform(n: usize, ns: f64) -> Machine {
    Machine::from_fn(n, |a, b| if a == b { 0.0 } else { ns }).unwrap()
}

/// ps of `ns` ns.
fn ps(ns: f64) -> u64 {
    ron_vm::ns_to_ps(ns)
}

/// Waiter and worker on one CPU: while the waiter sleeps, the worker runs
/// its whole work without interruption, paying only the switch it starts
/// with and its wake syscall; the waiter runs after the worker finishes.
#[test]
fn a_sleeper_costs_the_thread_that_works_nothing() {
    let c = Costs::default();
    let mut vm = Vm::new(uniform(2, 50.0), c.clone());
    let word = Arc::new(AtomicU32::new(0));
    let (woke_at, wake_called_at) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    let (w, at) = (Arc::clone(&word), Rc::clone(&woke_at));
    vm.spawn(0, move || {
        assert!(w.futex_wait(0, None));
        at.set(ron_vm::now_ps());
    });
    let (w, called) = (Arc::clone(&word), Rc::clone(&wake_called_at));
    vm.spawn(0, move || {
        ron_vm::work(10_000.0);
        called.set(ron_vm::now_ps());
        assert_eq!(w.futex_wake(1), 1);
        ron_vm::work(5_000.0);
    });
    let r = vm.run();
    // The waiter: a cold load of the word, then the syscall; the worker
    // starts a switch later.
    let asleep = ps(c.cold_ns) + ps(c.yield_ns);
    let start = asleep + ps(c.switch_ns);
    assert_eq!(wake_called_at.get(), start + ps(10_000.0));
    let worker_end = start + ps(10_000.0) + ps(c.yield_ns) + ps(5_000.0);
    assert_eq!(ps(r.end_ns[1]), worker_end, "the worker ran undisturbed");
    // The woken waiter waits for the CPU: the worker's end and a switch
    // (later than the wake-up latency).
    assert!(worker_end + ps(c.switch_ns) > wake_called_at.get() + ps(c.wake_ns));
    assert_eq!(woke_at.get(), worker_end + ps(c.switch_ns));
}

/// A sleeper on an idle CPU runs `wake_ns` after the wake; the waker pays
/// one syscall.
#[test]
fn a_wake_costs_the_wake_up_latency() {
    let c = Costs::default();
    let mut vm = Vm::new(uniform(2, 50.0), c.clone());
    let word = Arc::new(AtomicU32::new(0));
    let woke_at = Rc::new(Cell::new(0));
    let (w, at) = (Arc::clone(&word), Rc::clone(&woke_at));
    vm.spawn(0, move || {
        w.futex_wait(0, None);
        at.set(ron_vm::now_ps());
    });
    let w = Arc::clone(&word);
    vm.spawn(1, move || {
        ron_vm::work(5_000.0);
        w.futex_wake(1);
    });
    let r = vm.run();
    assert_eq!(woke_at.get(), ps(5_000.0) + ps(c.wake_ns));
    assert_eq!(ps(r.end_ns[1]), ps(5_000.0) + ps(c.yield_ns));
}

/// A word that already changed: no sleep, one load and one syscall.
#[test]
fn a_changed_word_returns_at_once() {
    let c = Costs::default();
    let mut vm = Vm::new(uniform(1, 0.0), c.clone());
    let word = Arc::new(AtomicU32::new(7));
    vm.spawn(0, move || {
        word.futex_wait(0, None);
    });
    let r = vm.run();
    assert_eq!(ps(r.end_ns[0]), ps(c.cold_ns) + ps(c.yield_ns));
}

/// A timed sleep nobody ends: its timer wakes it at the timeout, and it
/// runs `wake_ns` later; a wake after that finds nobody.
#[test]
fn a_timer_ends_a_sleep() {
    let c = Costs::default();
    let mut vm = Vm::new(uniform(2, 50.0), c.clone());
    let word = Arc::new(AtomicU32::new(0));
    let woke_at = Rc::new(Cell::new(0));
    let (w, at) = (Arc::clone(&word), Rc::clone(&woke_at));
    vm.spawn(0, move || {
        w.futex_wait(0, Some(Duration::from_nanos(3_000)));
        at.set(ron_vm::now_ps());
    });
    let w = Arc::clone(&word);
    vm.spawn(1, move || {
        ron_vm::work(20_000.0);
        assert_eq!(w.futex_wake(1), 0);
    });
    vm.run();
    let asleep = ps(c.cold_ns) + ps(c.yield_ns);
    assert_eq!(woke_at.get(), asleep + ps(3_000.0) + ps(c.wake_ns));
}

/// Waiters are woken first to sleep first, `n` at a time.
#[test]
fn wakes_go_in_sleep_order() {
    let mut vm = Vm::new(uniform(4, 50.0), Costs::default());
    let word = Arc::new(AtomicU32::new(0));
    let order = Rc::new(std::cell::RefCell::new(Vec::new()));
    for t in 0..3 {
        let (w, o) = (Arc::clone(&word), Rc::clone(&order));
        vm.spawn(t, move || {
            ron_vm::work(100.0 * (3 - t) as f64); // sleep in order 2, 1, 0
            w.futex_wait(0, None);
            o.borrow_mut().push(t);
        });
    }
    let w = Arc::clone(&word);
    vm.spawn(3, move || {
        ron_vm::work(10_000.0);
        assert_eq!(w.futex_wake(1), 1);
        ron_vm::work(10_000.0);
        assert_eq!(w.futex_wake(5), 2);
    });
    vm.run();
    assert_eq!(order.borrow()[0], 2);
    let mut rest = order.borrow()[1..].to_vec();
    rest.sort_unstable();
    assert_eq!(rest, vec![0, 1]);
}

/// A sleeper nobody wakes, with nothing else to run, stops the run.
#[test]
fn a_lost_wake_up_stops_the_run() {
    let mut vm = Vm::new(uniform(2, 50.0), Costs::default());
    let word = Arc::new(AtomicU32::new(0));
    vm.spawn(0, move || {
        word.futex_wait(0, None);
    });
    vm.spawn(1, || ron_vm::work(1_000.0));
    let p = catch_unwind(AssertUnwindSafe(|| vm.run())).expect_err("lost wake-up");
    let msg = p.downcast_ref::<String>().cloned().unwrap_or_default();
    assert!(msg.contains("lost wake-up"), "{msg}");
}

/// Outside a VM the calls do nothing.
#[test]
fn outside_a_vm_nothing_happens() {
    let w = AtomicU32::new(0);
    assert!(!w.futex_wait(0, None));
    assert_eq!(w.futex_wake(1), 0);
}

/// `membarrier`: the caller pays a syscall and one IPI per other CPU that
/// runs a thread (a sleeper's CPU is idle and not counted); each running
/// thread interrupted loses the handler's time.
#[test]
fn a_membarrier_costs_an_ipi_per_running_cpu() {
    let c = Costs::default();
    let mut vm = Vm::new(uniform(4, 50.0), c.clone());
    let word = Arc::new(AtomicU32::new(0));
    let (interrupted, woke_at) = (Rc::new(Cell::new(0)), Rc::new(Cell::new(0)));
    let (w, k) = (Arc::clone(&word), Rc::clone(&interrupted));
    vm.spawn(0, move || {
        ron_vm::work(1_000.0);
        k.set(ron_vm::membarrier());
        w.futex_wake(1);
    });
    for cpu in 1..3 {
        let line = Arc::new(AtomicU32::new(0));
        vm.spawn(cpu, move || {
            ron_vm::work(5_000.0);
            line.load(std::sync::atomic::Ordering::SeqCst);
        });
    }
    let (w, at) = (Arc::clone(&word), Rc::clone(&woke_at));
    vm.spawn(3, move || {
        w.futex_wait(0, None);
        at.set(ron_vm::now_ps());
    });
    let r = vm.run();
    assert_eq!(interrupted.get(), 2);
    let barrier_done = ps(1_000.0) + ps(c.yield_ns) + 2 * ps(c.ipi_ns);
    assert_eq!(ps(r.end_ns[0]), barrier_done + ps(c.yield_ns));
    for t in 1..3 {
        // Their work, the handler, then a cold load.
        assert_eq!(
            ps(r.end_ns[t]),
            ps(5_000.0) + ps(c.ipi_handler_ns) + ps(c.cold_ns)
        );
    }
    assert_eq!(woke_at.get(), barrier_done + ps(c.wake_ns));
    // Outside a VM it is a fence.
    assert_eq!(ron_vm::membarrier(), 0);
}
