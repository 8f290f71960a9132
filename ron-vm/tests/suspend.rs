//! Suspending spinners (`Costs::suspend_spinners`) changes nothing but the
//! host time: small lock programs whose waiters spin with `spin_while` give
//! the same trace, clocks and cost counters byte for byte with and without
//! it, and with it the executor switches fibers far less.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering::SeqCst;

use ron_vm::atomic::AtomicU32;
use ron_vm::{Costs, Machine, Vm};

/// A machine of `n` CPUs in two halves: `near` ns within a half, `far`
/// across, with a per-pair spread (`spread` ns) unless it is 0.
fn machine(n: usize, near: f64, far: f64, spread: usize) -> Machine {
    Machine::from_fn(n, |a, b| {
        let base = if a == b {
            return 0.0;
        } else if (a < n / 2) == (b < n / 2) {
            near
        } else {
            far
        };
        if spread == 0 {
            base
        } else {
            base + ((a * 7 + b * 13) % spread) as f64
        }
    })
    .unwrap()
}

/// One cache line per value.
#[repr(align(128))]
struct Line<T>(T);

#[derive(Clone, Copy, Debug)]
enum Lock {
    /// Test-and-test-and-set: spin while held, 32 looks a round, then a yield.
    Ttas,
    /// Ticket: spin until `serving` is ours.
    Ticket,
    /// TTAS whose holder also hits the lock line with RMWs that change
    /// nothing (a failed CAS): waiters are woken, see the same value and
    /// go back to sleep.
    TtasNoisy,
}

/// Runs `threads` threads taking `lock` `per_thread` times each; returns
/// the trace (who acquired when), the clocks and counters, and the fiber
/// switches.
fn run(m: &Machine, lock: Lock, threads: usize, per_thread: u32, suspend: bool) -> (String, u64) {
    let costs = Costs {
        suspend_spinners: suspend,
        ..Costs::default()
    };
    let mut vm = Vm::new(m.clone(), costs);
    let word = Arc::new(Line(AtomicU32::new(0)));
    let next = Arc::new(Line(AtomicU32::new(0)));
    let data = Arc::new(Line(AtomicU32::new(0)));
    let trace = Rc::new(RefCell::new(String::new()));
    for t in 0..threads {
        let (word, next, data, trace) = (
            Arc::clone(&word),
            Arc::clone(&next),
            Arc::clone(&data),
            Rc::clone(&trace),
        );
        let cpu = (t * 5) % m.n();
        vm.spawn(cpu, move || {
            for round in 0..per_thread {
                ron_vm::work(((t * 37 + round as usize * 11) % 90) as f64);
                match lock {
                    Lock::Ttas | Lock::TtasNoisy => loop {
                        if word.0.compare_exchange(0, 1, SeqCst, SeqCst).is_ok() {
                            break;
                        }
                        if let Some((_, v)) = word.0.spin_while(32, SeqCst, |v| v != 0) {
                            assert_eq!(v, 0);
                        } else {
                            ron_vm::yield_now();
                        }
                    },
                    Lock::Ticket => {
                        let my = next.0.fetch_add(1, SeqCst);
                        while word.0.spin_while(1000, SeqCst, |v| v != my).is_none() {}
                    }
                }
                let _ = writeln!(trace.borrow_mut(), "{t} {}", ron_vm::now_ps());
                data.0.fetch_add(1, SeqCst);
                if let Lock::TtasNoisy = lock {
                    // A CAS that fails (the word is 1): an RMW on the line
                    // that leaves its value alone.
                    let _ = word.0.compare_exchange(0, 1, SeqCst, SeqCst);
                    ron_vm::work(200.0);
                }
                match lock {
                    Lock::Ticket => {
                        word.0.fetch_add(1, SeqCst);
                    }
                    _ => word.0.store(0, SeqCst),
                }
            }
        });
    }
    let r = vm.run();
    assert_eq!(
        data.0.load(SeqCst),
        threads as u32 * per_thread,
        "mutual exclusion"
    );
    let mut out = trace.borrow().clone();
    let _ = writeln!(out, "end {:?}\nstats {:?}", r.end_ns, r.stats);
    (out, r.switches)
}

#[test]
fn suspension_changes_nothing_but_the_switches() {
    let machines = [
        // Integer latencies and the default 40 ns pause: many exact ties
        // between a write and a spinner's look.
        ("uniform", machine(8, 40.0, 40.0, 0)),
        ("two halves", machine(12, 30.0, 110.0, 0)),
        ("spread", machine(16, 35.0, 120.0, 9)),
    ];
    for (name, m) in &machines {
        for lock in [Lock::Ttas, Lock::Ticket, Lock::TtasNoisy] {
            for threads in [2, 5, m.n()] {
                let (with, sw_with) = run(m, lock, threads, 40, true);
                let (without, sw_without) = run(m, lock, threads, 40, false);
                assert_eq!(with, without, "{name} {lock:?} {threads} threads");
                if threads > 2 {
                    assert!(
                        sw_with < sw_without,
                        "{name} {lock:?} {threads} threads: {sw_with} switches with suspension, {sw_without} without"
                    );
                }
            }
        }
    }
}

/// Without a VM, `spin_while` is a plain loop.
#[test]
fn outside_a_vm_it_is_a_loop() {
    let a = AtomicU32::new(5);
    assert_eq!(a.spin_while(10, SeqCst, |v| v != 5), Some((0, 5)));
    assert_eq!(a.spin_while(10, SeqCst, |v| v == 5), None);
}
