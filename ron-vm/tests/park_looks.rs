//! `park_looks` (a waiting loop paced by a relax policy lets the VM skip
//! its idle looks) changes nothing but the host time: lock programs whose
//! waiters relax with each kind of `Pacing` give the same trace, clocks and
//! cost counters byte for byte with and without suspension, and with it
//! the executor switches fibers far less.

use std::cell::RefCell;
use std::fmt::Write as _;
use std::panic::{AssertUnwindSafe, catch_unwind};
use std::rc::Rc;
use std::sync::Arc;
use std::sync::atomic::Ordering::SeqCst;

use ron_vm::atomic::AtomicU32;
use ron_vm::{Costs, Machine, Pacing, Vm};

/// A machine of `n` CPUs in two halves (`near` / `far` ns) with a
/// per-pair spread of `spread` ns (none if 0).
fn machine(n: usize, near: f64, far: f64, spread: usize) -> Machine {
    Machine::from_fn(n, |a, b| {
        if a == b {
            return 0.0;
        }
        let base = if (a < n / 2) == (b < n / 2) {
            near
        } else {
            far
        };
        base + if spread == 0 {
            0.0
        } else {
            ((a * 7 + b * 13) % spread) as f64
        }
    })
    .unwrap()
}

/// One cache line per value.
#[repr(align(128))]
struct Line<T>(T);

fn addr(a: &AtomicU32) -> usize {
    std::ptr::from_ref(a) as usize
}

/// A relax policy that follows a [`Pacing`] as its docs say: the `i`-th
/// relax takes `pauses * 2^i` pauses up to `max_pauses`, then one yield
/// (or `max_pauses` pauses) per relax.
struct Relax {
    start: Pacing,
    pauses: u64,
}

impl Relax {
    fn new(start: Pacing) -> Self {
        Relax {
            start,
            pauses: start.pauses as u64,
        }
    }
    fn relax(&mut self) {
        let max = self.start.max_pauses as u64;
        if self.pauses <= max {
            for _ in 0..self.pauses {
                ron_vm::pause();
            }
        } else if self.start.then_yield {
            ron_vm::yield_now();
        } else {
            for _ in 0..max {
                ron_vm::pause();
            }
        }
        self.step(1);
    }
    fn step(&mut self, n: u64) {
        for _ in 0..n {
            if self.pauses > self.start.max_pauses as u64 || self.pauses == 0 {
                return;
            }
            self.pauses *= 2;
        }
    }
    fn pacing(&self) -> Pacing {
        Pacing {
            pauses: self.pauses.min(u32::MAX as u64) as u32,
            ..self.start
        }
    }
    /// Called right after `relax` in a waiting loop watching `addr`.
    fn idle(&mut self, addr: usize) {
        let n = ron_vm::park_looks(addr, self.pacing());
        self.step(n);
    }
}

const SPIN: Pacing = Pacing {
    pauses: 1,
    max_pauses: 1,
    then_yield: false,
};
const BACKOFF: Pacing = Pacing {
    pauses: 1,
    max_pauses: 64,
    then_yield: false,
};
const SPIN_THEN_YIELD: Pacing = Pacing {
    pauses: 1,
    max_pauses: 64,
    then_yield: true,
};
const YIELD: Pacing = Pacing {
    pauses: 1,
    max_pauses: 0,
    then_yield: true,
};

#[derive(Clone, Copy, Debug)]
enum Lock {
    /// Test-and-test-and-set: a look is a load, and a CAS when it saw the
    /// lock free (a failed CAS leaves the waiter owning the line).
    Ttas,
    /// Ticket: a look is a load of `serving`.
    Ticket,
    /// TTAS whose holders also write a second line of no interest to the
    /// waiters (their lines and clocks change, their looks do not).
    TtasNoise,
}

struct Shared {
    word: Line<AtomicU32>,
    next: Line<AtomicU32>,
    noise: Line<AtomicU32>,
    data: Line<AtomicU32>,
}

fn run(m: &Machine, lock: Lock, pacing: Pacing, threads: usize, suspend: bool) -> (String, u64) {
    let costs = Costs {
        suspend_spinners: suspend,
        ..Costs::default()
    };
    let mut vm = Vm::new(m.clone(), costs);
    let sh = Arc::new(Shared {
        word: Line(AtomicU32::new(0)),
        next: Line(AtomicU32::new(0)),
        noise: Line(AtomicU32::new(0)),
        data: Line(AtomicU32::new(0)),
    });
    let trace = Rc::new(RefCell::new(String::new()));
    let per_thread = 30;
    for t in 0..threads {
        let (sh, trace) = (Arc::clone(&sh), Rc::clone(&trace));
        vm.spawn((t * 5) % m.n(), move || {
            for round in 0..per_thread {
                ron_vm::work(((t * 37 + round * 11) % 90) as f64);
                let mut r = Relax::new(pacing);
                match lock {
                    // The noise (a second line that holders write) is
                    // in the critical section; the wait is TTAS's.
                    Lock::Ttas | Lock::TtasNoise => loop {
                        if sh.word.0.load(SeqCst) == 0
                            && sh.word.0.compare_exchange(0, 1, SeqCst, SeqCst).is_ok()
                        {
                            break;
                        }
                        r.relax();
                        r.idle(addr(&sh.word.0));
                    },
                    Lock::Ticket => {
                        let my = sh.next.0.fetch_add(1, SeqCst);
                        while sh.word.0.load(SeqCst) != my {
                            r.relax();
                            r.idle(addr(&sh.word.0));
                        }
                    }
                }
                let _ = writeln!(trace.borrow_mut(), "{t} {}", ron_vm::now_ps());
                sh.data.0.fetch_add(1, SeqCst);
                if let Lock::TtasNoise = lock {
                    sh.noise.0.fetch_add(1, SeqCst);
                    ron_vm::work(50.0);
                }
                match lock {
                    Lock::Ticket => {
                        sh.word.0.fetch_add(1, SeqCst);
                    }
                    _ => sh.word.0.store(0, SeqCst),
                }
            }
        });
    }
    let r = vm.run();
    assert_eq!(
        sh.data.0.load(SeqCst),
        (threads * per_thread) as u32,
        "mutual exclusion"
    );
    let mut out = trace.borrow().clone();
    let _ = writeln!(out, "end {:?}\nstats {:?}", r.end_ns, r.stats);
    (out, r.switches)
}

#[test]
fn skipping_looks_changes_nothing_but_the_switches() {
    let machines = [
        // Integer latencies and the default 40 ns pause: many exact ties
        // between a write and a waiter's look.
        ("uniform", machine(8, 40.0, 40.0, 0)),
        ("two halves", machine(12, 30.0, 110.0, 0)),
        ("spread", machine(16, 35.0, 120.0, 9)),
    ];
    let pacings = [
        ("spin", SPIN),
        ("backoff", BACKOFF),
        ("spin then yield", SPIN_THEN_YIELD),
        ("yield", YIELD),
    ];
    for lock in [Lock::Ttas, Lock::Ticket, Lock::TtasNoise] {
        for (pname, pacing) in pacings {
            let (mut sw_with, mut sw_without) = (0, 0);
            for (name, m) in &machines {
                for threads in [2, 5, m.n()] {
                    let what = format!("{name} {lock:?} {pname} {threads} threads");
                    let (with, sw) = run(m, lock, pacing, threads, true);
                    sw_with += sw;
                    let (without, sw) = run(m, lock, pacing, threads, false);
                    sw_without += sw;
                    assert_eq!(with, without, "{what}");
                }
            }
            assert!(
                sw_with < sw_without,
                "{lock:?} {pname}: {sw_with} switches with suspension, {sw_without} without"
            );
        }
    }
}

/// A waiter that is never served passes the time limit at the same look
/// (same panic) whether its idle looks are skipped or run.
#[test]
fn a_lost_wake_up_stops_the_run_the_same_way() {
    let stop = |suspend: bool| {
        let costs = Costs {
            suspend_spinners: suspend,
            max_virtual_ns: 200_000.0,
            ..Costs::default()
        };
        let mut vm = Vm::new(machine(4, 40.0, 90.0, 0), costs);
        let word = Arc::new(Line(AtomicU32::new(1))); // held, never freed
        vm.spawn(2, move || {
            let mut r = Relax::new(SPIN_THEN_YIELD);
            while word.0.load(SeqCst) != 0 {
                r.relax();
                r.idle(addr(&word.0));
            }
        });
        let p = catch_unwind(AssertUnwindSafe(|| vm.run())).expect_err("livelock");
        p.downcast_ref::<String>().cloned().unwrap_or_default()
    };
    let with = stop(true);
    assert!(with.contains("virtual time limit"), "{with}");
    assert_eq!(with, stop(false));
}

/// Outside a VM nothing is skipped.
#[test]
fn nothing_is_skipped_outside_a_vm() {
    let a = AtomicU32::new(0);
    assert_eq!(ron_vm::park_looks(addr(&a), SPIN), 0);
}
