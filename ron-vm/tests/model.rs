//! The executor and cost model on 2-4 CPU machines whose costs are
//! computable by hand, and the determinism of a run.

use std::cell::Cell;
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering::SeqCst;

use ron_vm::atomic::AtomicU32;
use ron_vm::{Costs, FiberLocal, Machine, Vm};

/// An atomic on a cache line of its own (64 bytes, the VM's default line).
#[repr(align(64))]
struct Line(AtomicU32);

fn uniform(n: usize, ns: f64) -> Machine {
    Machine::from_fn(n, |a, b| if a == b { 0.0 } else { ns }).unwrap()
}

/// A ping-pong between CPUs 0 and 1 on one line pays `L[0][1] + L[1][0]`
/// per round trip, plus at most a hit (1 ns) of polling on each side and
/// the writer's own hit.
#[test]
fn ping_pong_pays_both_one_way_latencies() {
    let (l01, l10) = (30.0, 50.0);
    let m = Machine::new(2, vec![0.0, l01, l10, 0.0]).unwrap();
    let mut vm = Vm::new(m, Costs::default());
    let flag = Arc::new(AtomicU32::new(0));
    const ROUNDS: u32 = 1000;
    let (f, done) = (Arc::clone(&flag), Rc::new(Cell::new((0u64, 0u64))));
    let d = Rc::clone(&done);
    vm.spawn(0, move || {
        // Warm-up round, then time ROUNDS round trips.
        f.store(1, SeqCst);
        while f.load(SeqCst) != 0 {}
        let t0 = ron_vm::now_ps();
        for _ in 0..ROUNDS {
            f.store(1, SeqCst);
            while f.load(SeqCst) != 0 {}
        }
        d.set((t0, ron_vm::now_ps()));
    });
    let f = Arc::clone(&flag);
    vm.spawn(1, move || {
        for _ in 0..=ROUNDS {
            while f.load(SeqCst) != 1 {}
            f.store(0, SeqCst);
        }
    });
    vm.run();
    let (t0, t1) = done.get();
    let per_round = (t1 - t0) as f64 / 1000.0 / ROUNDS as f64;
    let expect = l01 + l10;
    assert!(
        per_round >= expect && per_round <= expect + 3.0,
        "round trip {per_round} ns, expected {expect} (+ up to 3 ns of hits)"
    );
}

/// The times (ns after the release) at which `K` spinners on one line see
/// a release, sorted.
fn release_seen_by_spinners(costs: Costs) -> Vec<f64> {
    const K: usize = 3;
    const L: f64 = 40.0;
    let mut vm = Vm::new(uniform(K + 1, L), costs);
    let lock = Arc::new(AtomicU32::new(0));
    let release_at = Rc::new(Cell::new(0u64));
    let seen = Rc::new(std::cell::RefCell::new(Vec::new()));
    let (l, r) = (Arc::clone(&lock), Rc::clone(&release_at));
    vm.spawn(0, move || {
        l.store(1, SeqCst);
        ron_vm::work(5_000.0); // every spinner is spinning on a shared copy by now
        r.set(ron_vm::now_ps());
        l.store(0, SeqCst);
    });
    for cpu in 1..=K {
        let (l, s) = (Arc::clone(&lock), Rc::clone(&seen));
        vm.spawn(cpu, move || {
            ron_vm::work(1_000.0); // after the holder took the line
            while l.load(SeqCst) != 0 {}
            s.borrow_mut().push(ron_vm::now_ps());
        });
    }
    vm.run();
    let mut seen = seen.borrow().clone();
    seen.sort();
    assert_eq!(seen.len(), K);
    seen.iter()
        .map(|&t| (t - release_at.get()) as f64 / 1000.0)
        .collect()
}

/// Relay model: a release (store) of a line that `k` spinners share is
/// re-read by them one after the other: the `j`-th spinner sees it `j * L`
/// after the store.
#[test]
fn relay_release_with_k_spinners_pays_k_serialized_rereads() {
    let seen = release_seen_by_spinners(Costs::relay());
    for (j, &after) in seen.iter().enumerate() {
        let expect = (j + 1) as f64 * 40.0;
        assert!(
            after >= expect && after <= expect + 2.0,
            "spinner {j} saw the release {after} ns after it, expected {expect}: {seen:?}"
        );
    }
}

/// Directory model: the spinners' re-reads overlap but for the home's
/// occupancy: the `j`-th sees the release `L + j * occupancy` after it
/// (their requests reach the home at the same time, one spinner's look
/// apart at most).
#[test]
fn directory_release_with_k_spinners_overlaps_but_for_the_occupancy() {
    let occ = 7.0;
    let seen = release_seen_by_spinners(Costs {
        dir_occupancy_ns: occ,
        ..Costs::default()
    });
    for (j, &after) in seen.iter().enumerate() {
        let expect = 40.0 + j as f64 * occ;
        assert!(
            after >= expect && after <= expect + 2.0,
            "spinner {j} saw the release {after} ns after it, expected {expect}: {seen:?}"
        );
    }
}

/// The time one thread on CPU 1 takes to write `k` lines that CPU 0 wrote
/// last, issued together with `access_all`.
fn write_k_lines(k: usize, mlp: usize) -> f64 {
    const L: f64 = 50.0;
    let mut vm = Vm::new(
        uniform(2, L),
        Costs {
            mlp,
            ..Costs::default()
        },
    );
    let lines: Rc<Vec<Line>> = Rc::new((0..k).map(|_| Line(AtomicU32::new(0))).collect());
    let took = Rc::new(Cell::new(0.0));
    let l = Rc::clone(&lines);
    vm.spawn(0, move || {
        for x in l.iter() {
            x.0.store(1, SeqCst);
        }
    });
    let (l, t) = (Rc::clone(&lines), Rc::clone(&took));
    vm.spawn(1, move || {
        ron_vm::work(10_000.0); // CPU 0 owns every line by now
        let addrs: Vec<usize> = l.iter().map(|x| x as *const Line as usize).collect();
        let t0 = ron_vm::now_ps();
        ron_vm::access_all(&addrs, ron_vm::Access::Store);
        t.set((ron_vm::now_ps() - t0) as f64 / 1000.0);
    });
    vm.run();
    took.get()
}

/// Memory-level parallelism: `k` independent misses of one thread cost
/// `ceil(k / mlp)` transfers (plus a store hit), not `k`; with `mlp` 1
/// each miss is issued after the one before completes (`k` transfers and
/// `k` hits).
#[test]
fn independent_misses_overlap_up_to_the_mlp_limit() {
    for (k, mlp) in [(7, 1), (7, 4), (7, 10), (12, 10), (1, 10)] {
        let took = write_k_lines(k, mlp);
        let expect = if mlp == 1 {
            k as f64 * 51.0
        } else {
            k.div_ceil(mlp) as f64 * 50.0 + 1.0
        };
        assert!(
            (took - expect).abs() < 0.01,
            "{k} lines, mlp {mlp}: {took} ns, expected {expect}"
        );
    }
}

/// Two lines that are written by different CPUs do not wait for each other.
#[test]
fn independent_lines_do_not_serialize() {
    let mut vm = Vm::new(uniform(2, 100.0), Costs::default());
    let a = Arc::new([AtomicU32::new(0), AtomicU32::new(0)]);
    for cpu in 0..2 {
        let a = Arc::clone(&a);
        vm.spawn(cpu, move || {
            // 4 bytes apart would share a line; use two boxed, padded values.
            #[repr(align(64))]
            struct Padded(AtomicU32);
            let x = Box::new(Padded(AtomicU32::new(0)));
            for _ in 0..100 {
                x.0.fetch_add(1, SeqCst);
            }
            a[cpu].store(x.0.load(SeqCst), SeqCst);
        });
    }
    let r = vm.run();
    // 100 RMW hits of 6 ns (after one cold miss) each, not 100 transfers.
    assert!(r.makespan_ns < 1_500.0, "makespan {} ns", r.makespan_ns);
}

fn contended_run(seed: u64) -> (String, Vec<u32>) {
    let m = Machine::from_fn(4, |a, b| {
        if a == b {
            0.0
        } else {
            10.0 + (a * 7 + b * 3) as f64
        }
    })
    .unwrap();
    let mut vm = Vm::new(m, Costs::default());
    let word = Arc::new(AtomicU32::new(0));
    let order = Rc::new(std::cell::RefCell::new(Vec::new()));
    for cpu in 0..4 {
        let (w, o) = (Arc::clone(&word), Rc::clone(&order));
        vm.spawn(cpu, move || {
            let mut rng = ron_stats::SplitMix64::new(seed ^ cpu as u64);
            for _ in 0..200 {
                while w.compare_exchange(0, 1, SeqCst, SeqCst).is_err() {
                    ron_vm::pause();
                }
                o.borrow_mut().push(cpu as u32);
                w.store(0, SeqCst);
                ron_vm::work(rng.next_f64() * 300.0);
            }
        });
    }
    let r = vm.run();
    let order = order.borrow().clone();
    (format!("{r:?}"), order)
}

#[test]
fn same_seed_same_run() {
    let a = contended_run(7);
    assert_eq!(a.1.len(), 800);
    assert_eq!(a, contended_run(7));
    assert_ne!(a, contended_run(8), "the seed should matter");
}

static COUNT: FiberLocal<Cell<u32>> = FiberLocal::new(|| Cell::new(0));

#[test]
fn fiber_locals_are_per_virtual_thread() {
    let mut vm = Vm::new(uniform(3, 10.0), Costs::default());
    let sums = Rc::new(std::cell::RefCell::new(Vec::new()));
    for cpu in 0..3 {
        let s = Rc::clone(&sums);
        vm.spawn(cpu, move || {
            for _ in 0..=cpu {
                COUNT.with(|c| c.set(c.get() + 1));
                ron_vm::yield_now();
                ron_vm::on_load(0x1000); // a switch point between fibers
            }
            s.borrow_mut().push((cpu, COUNT.with(|c| c.get())));
        });
    }
    vm.run();
    let mut got = sums.borrow().clone();
    got.sort();
    assert_eq!(got, vec![(0, 1), (1, 2), (2, 3)]);
    assert_eq!(
        COUNT.with(|c| c.get()),
        0,
        "the OS thread has its own value"
    );
}

#[test]
fn a_panicking_virtual_thread_ends_the_run() {
    let r = std::panic::catch_unwind(|| {
        let mut vm = Vm::new(uniform(2, 10.0), Costs::default());
        vm.spawn(0, || {
            loop {
                ron_vm::on_load(0x40);
                ron_vm::pause();
            }
        });
        vm.spawn(1, || {
            ron_vm::work(100.0);
            panic!("boom");
        });
        vm.run()
    });
    assert!(r.is_err());
    // The VM is usable again afterwards.
    let mut vm = Vm::new(uniform(1, 0.0), Costs::default());
    vm.spawn(0, || ron_vm::work(5.0));
    assert_eq!(vm.run().makespan_ns, 5.0);
}

/// `line_costs` splits the transfers by line: in a ping-pong on one flag
/// every transfer is the flag's, and each waited for the line.
#[test]
fn line_costs_split_the_transfers_by_line() {
    assert!(ron_vm::line_costs().is_none(), "outside a VM");
    let mut vm = Vm::new(uniform(2, 40.0), Costs::default());
    let flag = Arc::new(AtomicU32::new(0));
    const ROUNDS: u32 = 100;
    let out = Rc::new(Cell::new((0u64, 0u64, 0u64, 0u64)));
    let (f, o) = (Arc::clone(&flag), Rc::clone(&out));
    vm.spawn(0, move || {
        for _ in 0..ROUNDS {
            f.store(1, SeqCst);
            while f.load(SeqCst) != 0 {}
        }
        let lines = ron_vm::line_costs().unwrap();
        let total = ron_vm::cost_stats().unwrap().transfers;
        let addr = Arc::as_ptr(&f) as u64;
        let mine = lines
            .iter()
            .find(|l| l.addr <= addr && addr < l.addr + 64)
            .unwrap();
        o.set((total, mine.transfers, mine.wait_ps, lines.len() as u64));
    });
    let f = Arc::clone(&flag);
    vm.spawn(1, move || {
        for _ in 0..ROUNDS {
            while f.load(SeqCst) != 1 {}
            f.store(0, SeqCst);
        }
    });
    vm.run();
    let (total, flag_transfers, wait_ps, lines) = out.get();
    assert_eq!(lines, 1, "one line moved");
    assert_eq!(flag_transfers, total, "every transfer is the flag's");
    assert!(
        wait_ps >= flag_transfers * 40_000 / 2,
        "{wait_ps} ps waited"
    );
}

/// `cost_stats` is a free reading of what the model charged so far: in a
/// ping-pong on one line the line moves to the other CPU twice per round
/// trip (each side's look misses once; the store that follows finds the
/// line shared and only invalidates), and reading it changes no clock.
#[test]
fn cost_stats_counts_the_transfers_so_far() {
    assert!(ron_vm::cost_stats().is_none(), "outside a VM");
    let run = |read: bool| {
        let mut vm = Vm::new(uniform(2, 40.0), Costs::default());
        let flag = Arc::new(AtomicU32::new(0));
        const ROUNDS: u64 = 500;
        let (f, out) = (Arc::clone(&flag), Rc::new(Cell::new((0u64, 0u64))));
        let o = Rc::clone(&out);
        vm.spawn(0, move || {
            f.store(1, SeqCst);
            while f.load(SeqCst) != 0 {}
            let x0 = if read {
                ron_vm::cost_stats().unwrap().transfers
            } else {
                0
            };
            for _ in 0..ROUNDS {
                f.store(1, SeqCst);
                while f.load(SeqCst) != 0 {}
            }
            let x1 = if read {
                ron_vm::cost_stats().unwrap().transfers
            } else {
                0
            };
            o.set((x1 - x0, ron_vm::now_ps()));
        });
        let f = Arc::clone(&flag);
        vm.spawn(1, move || {
            for _ in 0..=ROUNDS {
                while f.load(SeqCst) != 1 {}
                f.store(0, SeqCst);
            }
        });
        vm.run();
        let (x, end) = out.get();
        (x as f64 / ROUNDS as f64, end)
    };
    let (per_round, end) = run(true);
    assert_eq!(per_round, 2.0, "transfers per round trip");
    assert_eq!(run(false).1, end, "reading the counters changed the run");
}

/// A scan of 256 lines of which 8, far apart, were written by another CPU
/// since the scanner last read them: one call is one window, so the 8
/// misses overlap (one transfer), however far apart in the scan they lie.
#[test]
fn a_scan_longer_than_64_lines_is_one_window() {
    const L: f64 = 50.0;
    const N: usize = 256;
    let mut vm = Vm::new(uniform(2, L), Costs::default());
    let lines: Rc<Vec<Line>> = Rc::new((0..N).map(|_| Line(AtomicU32::new(0))).collect());
    let took = Rc::new(Cell::new(0.0));
    let l = Rc::clone(&lines);
    vm.spawn(0, move || {
        ron_vm::work(10_000.0); // CPU 1 has read every line by now
        for i in (0..N).step_by(N / 8) {
            l[i].0.store(1, SeqCst);
        }
    });
    let (l, t) = (Rc::clone(&lines), Rc::clone(&took));
    vm.spawn(1, move || {
        let addrs: Vec<usize> = l.iter().map(|x| x as *const Line as usize).collect();
        ron_vm::access_all(&addrs, ron_vm::Access::Load);
        ron_vm::work(20_000.0); // CPU 0 has written its 8 lines by now
        let t0 = ron_vm::now_ps();
        ron_vm::access_all(&addrs, ron_vm::Access::Load);
        t.set((ron_vm::now_ps() - t0) as f64 / 1000.0);
    });
    vm.run();
    let took = took.get();
    assert!(
        (L..2.0 * L).contains(&took),
        "256 lines, 8 misses: {took} ns, expected one transfer ({L} ns) and hits"
    );
}
