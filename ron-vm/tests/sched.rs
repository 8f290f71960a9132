//! The scheduler on machines whose costs are computable by hand: threads
//! that share a CPU run in turn, in time slices that end at the first
//! preemption point after the slice, `sched_yield` hands the CPU to a
//! runnable queued thread, and a run is the same byte for byte each time.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering::SeqCst;

use ron_vm::atomic::AtomicU32;
use ron_vm::{Costs, Machine, Vm};

fn ps(ns: f64) -> u64 {
    ron_vm::ns_to_ps(ns)
}

/// One cache line per value.
#[repr(align(128))]
struct Line<T>(T);

/// Two CPU-bound threads on one CPU, each 6 chunks of 1 ms of work, each
/// chunk followed by a load of its own line (free the first time: cold
/// misses cost 0 here; a hit `h` = 1 ns after). With 3 ms slices:
///
/// * A runs chunks 1-3; its load at `3 ms + h` is past its slice with B
///   runnable: preempted there. B starts at `S1 = 3 ms + h + sw`.
/// * B runs chunks 1-3 (loads: 0, h); preempted at `S1 + 3 ms + h`;
///   A resumes at `S2 = S1 + 3 ms + h + sw`.
/// * A: its pending load (h), chunks 4-6 with two loads (2h): preempted
///   before its last load at `S2 + 3 ms + 3h`; `S3 = that + sw`.
/// * B the same: `S4 = S3 + 3 ms + 3h + sw`; A runs its last load and
///   ends at `S4 + h`; B then ends at `S4 + h + sw + h`.
#[test]
fn threads_sharing_a_cpu_take_turns_in_slices() {
    let costs = Costs {
        cold_ns: 0.0,
        ..Costs::default()
    };
    let (h, sw, slice) = (ps(costs.hit_ns), ps(costs.switch_ns), ps(costs.slice_ns));
    assert_eq!(slice, ps(3e6));
    let mut vm = Vm::new(Machine::new(1, vec![0.0]).unwrap(), costs);
    for _ in 0..2 {
        let line = Arc::new(Line(AtomicU32::new(0)));
        vm.spawn(0, move || {
            for _ in 0..6 {
                ron_vm::work(1e6);
                line.0.load(SeqCst);
            }
        });
    }
    let r = vm.run();
    let ms = ps(1e6);
    let s1 = 3 * ms + h + sw;
    let s2 = s1 + 3 * ms + h + sw;
    let s3 = s2 + 3 * ms + 3 * h + sw;
    let s4 = s3 + 3 * ms + 3 * h + sw;
    assert_eq!(ps(r.end_ns[0]), s4 + h);
    assert_eq!(ps(r.end_ns[1]), s4 + h + sw + h);
}

/// `sched_yield` with a runnable thread queued: the caller pays the yield,
/// the other thread runs after a switch, and the caller runs again when
/// that one ends (a switch later). Without one queued it only costs the
/// yield.
#[test]
fn a_yield_hands_the_cpu_to_the_queued_thread() {
    let c = Costs::default();
    let (y, sw) = (ps(c.yield_ns), ps(c.switch_ns));
    let mut vm = Vm::new(Machine::new(2, vec![0.0, 10.0, 10.0, 0.0]).unwrap(), c);
    let log = Rc::new(RefCell::new(Vec::new()));
    let l = Rc::clone(&log);
    vm.spawn(0, move || {
        ron_vm::yield_now();
        l.borrow_mut().push(("a", ron_vm::now_ps()));
    });
    let l = Rc::clone(&log);
    vm.spawn(0, move || {
        l.borrow_mut().push(("b", ron_vm::now_ps()));
        ron_vm::work(10_000.0);
    });
    // Alone on CPU 1: a yield costs the yield only.
    vm.spawn(1, ron_vm::yield_now);
    let r = vm.run();
    let b_starts = y + sw;
    let a_again = b_starts + ps(10_000.0) + sw;
    assert_eq!(*log.borrow(), vec![("b", b_starts), ("a", a_again)]);
    assert_eq!(ps(r.end_ns[2]), y);
}

/// A waiter that sleeps on a futex gives its CPU to the next thread at
/// once (no slice to wait for): the worker starts a syscall and a switch
/// after the waiter's wait began.
#[test]
fn a_sleeper_gives_its_cpu_away_at_once() {
    let c = Costs::default();
    let mut vm = Vm::new(Machine::new(1, vec![0.0]).unwrap(), c.clone());
    let word = Arc::new(AtomicU32::new(0));
    let started = Rc::new(RefCell::new(0));
    let w = Arc::clone(&word);
    vm.spawn(0, move || {
        w.futex_wait(0, None);
    });
    let (w, s) = (Arc::clone(&word), Rc::clone(&started));
    vm.spawn(0, move || {
        *s.borrow_mut() = ron_vm::now_ps();
        w.futex_wake(1);
    });
    vm.run();
    assert_eq!(
        *started.borrow(),
        ps(c.cold_ns) + ps(c.yield_ns) + ps(c.switch_ns)
    );
}

/// A TTAS lock taken by four threads per CPU on three CPUs, waiters
/// spinning (suspended by `spin_while`) or paced by a relax policy that
/// ends in yields (`park_looks`): mutual exclusion, every thread served,
/// the same trace twice, and the same trace whether the VM suspends
/// waiters or runs every look (the scheduler cuts a suspension where a
/// look must run for real).
#[test]
fn oversubscribed_runs_keep_exclusion_and_repeat_byte_for_byte() {
    for paced in [false, true] {
        let b = oversubscribed(false, paced);
        let a = oversubscribed(true, paced);
        assert_eq!(a, oversubscribed(true, paced), "paced {paced}");
        assert_eq!(a, b, "paced {paced}");
    }
}

fn oversubscribed(suspend: bool, paced: bool) -> String {
    {
        let costs = Costs {
            slice_ns: 20_000.0,
            suspend_spinners: suspend,
            ..Costs::default()
        };
        let m =
            Machine::from_fn(3, |a, b| if a == b { 0.0 } else { 40.0 + (a + b) as f64 }).unwrap();
        let mut vm = Vm::new(m, costs);
        let word = Arc::new(Line(AtomicU32::new(0)));
        let data = Arc::new(Line(AtomicU32::new(0)));
        let trace = Rc::new(RefCell::new(String::new()));
        for t in 0..12 {
            let (word, data, trace) = (Arc::clone(&word), Arc::clone(&data), Rc::clone(&trace));
            vm.spawn(t % 3, move || {
                for round in 0..40 {
                    ron_vm::work(((t * 37 + round * 11) % 300) as f64);
                    loop {
                        if word.0.load(SeqCst) == 0
                            && word.0.compare_exchange(0, 1, SeqCst, SeqCst).is_ok()
                        {
                            break;
                        }
                        if paced {
                            // Pauses doubling from 1 to 8, then yields;
                            // `p`: the pauses of the next relax (a yield
                            // past 8).
                            let mut p = 1u32;
                            let step = |p: &mut u32| {
                                if *p <= 8 {
                                    *p *= 2;
                                }
                            };
                            while word.0.load(SeqCst) != 0 {
                                if p <= 8 {
                                    for _ in 0..p {
                                        ron_vm::pause();
                                    }
                                } else {
                                    ron_vm::yield_now();
                                }
                                step(&mut p);
                                let pacing = ron_vm::Pacing {
                                    pauses: p,
                                    max_pauses: 8,
                                    then_yield: true,
                                };
                                let addr = std::ptr::from_ref(&word.0) as usize;
                                for _ in 0..ron_vm::park_looks(addr, pacing) {
                                    step(&mut p);
                                }
                            }
                        } else if word.0.spin_while(8, SeqCst, |v| v != 0).is_none() {
                            ron_vm::yield_now();
                        }
                    }
                    let _ = writeln!(trace.borrow_mut(), "{t} {}", ron_vm::now_ps());
                    let v = data.0.load(SeqCst);
                    ron_vm::work(100.0);
                    data.0.store(v + 1, SeqCst);
                    word.0.store(0, SeqCst);
                }
            });
        }
        let r = vm.run();
        assert_eq!(data.0.load(SeqCst), 12 * 40, "mutual exclusion");
        let out = trace.borrow().clone();
        for t in 0..12 {
            assert_eq!(
                out.lines()
                    .filter(|l| l.split(' ').next() == Some(&t.to_string()))
                    .count(),
                40
            );
        }
        format!("{out}end {:?}\nstats {:?}", r.end_ns, r.stats)
    }
}

/// A futex wake that queues a thread on a CPU whose running thread is a
/// suspended spinner ends the suspension where the spinner's slice is over
/// (its first look after it), as running every look would: the woken
/// thread runs about 3 ms after the spinner started, long before the
/// spinner's wait ends; same trace with and without suspension.
#[test]
fn a_wake_onto_a_spinning_cpu_preempts_the_spinner_at_its_slice() {
    let run = |suspend_spinners: bool| {
        let c = Costs {
            suspend_spinners,
            ..Costs::default()
        };
        let mut vm = Vm::new(Machine::new(2, vec![0.0, 40.0, 40.0, 0.0]).unwrap(), c);
        let sleep = Arc::new(Line(AtomicU32::new(0)));
        let word = Arc::new(Line(AtomicU32::new(0)));
        let log = Rc::new(RefCell::new(Vec::new()));
        let (s, l) = (Arc::clone(&sleep), Rc::clone(&log));
        vm.spawn(0, move || {
            s.0.futex_wait(0, None);
            l.borrow_mut().push(("woken runs", ron_vm::now_ps()));
        });
        let (w, l) = (Arc::clone(&word), Rc::clone(&log));
        vm.spawn(0, move || {
            l.borrow_mut().push(("spinner starts", ron_vm::now_ps()));
            while w.0.spin_while(u32::MAX, SeqCst, |v| v == 0).is_none() {}
            l.borrow_mut().push(("spinner sees", ron_vm::now_ps()));
        });
        let (s, w) = (Arc::clone(&sleep), Arc::clone(&word));
        vm.spawn(1, move || {
            ron_vm::work(50_000.0);
            s.0.futex_wake(1);
            ron_vm::work(5e6);
            w.0.store(1, SeqCst);
        });
        let r = vm.run();
        let out = log.borrow().clone();
        (out, r.end_ns, r.stats)
    };
    let with = run(true);
    assert_eq!(with, run(false));
    let log = &with.0;
    let (start, woken) = (log[0].1, log[1].1);
    assert_eq!(log[1].0, "woken runs");
    assert!(
        woken >= start + ps(3e6) && woken < start + ps(3e6) + ps(2_000.0),
        "{log:?}"
    );
    assert_eq!(log[2].0, "spinner sees");
}
