//! Same inputs, same output, byte for byte; the seed matters.

mod common;

use ron_vm::Costs;
use ron_vm_bench::locks::{RelaxKind, run_named};
use ron_vm_bench::report::{Format, Row, RowKey, render};
use ron_vm_bench::{Placement, Point};

/// Held by each test for its whole run (each run has a process of its
/// own, so this only keeps the tests' runs from interleaving).
static ONE_TEST_AT_A_TIME: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn one_at_a_time() -> std::sync::MutexGuard<'static, ()> {
    ONE_TEST_AT_A_TIME.lock().unwrap_or_else(|e| e.into_inner())
}

fn csv(lock: &str, seed: u64, placement: Placement) -> String {
    csv_with(lock, seed, placement, Costs::default())
}

fn csv_with(lock: &str, seed: u64, placement: Placement, costs: Costs) -> String {
    let vm = common::two_socket(24);
    let p = Point {
        workload: ron_vm_bench::Workload::Micro,
        start_skew_ns: 0.0,
        cpus: vm.place(16, placement, seed),
        ncs_ns: 300.0,
        cs_lines: 2,
        acquisitions: 1500,
        seed,
        costs,
    };
    let s = run_named(lock, 16, RelaxKind::Default, &vm, &p).unwrap();
    let key = RowKey {
        machine: &vm.name,
        workload: "micro",
        lock,
        relax: "default",
        groups: "socket",
        line_model: "directory",
        mlp: 10,
        slots: 16,
        placement: placement.name(),
        ncs_ns: 300.0,
        cs_lines: 2,
        seed,
        wall: false,
    };
    render(&[Row::new(&key, &s)], Format::Csv) + &render(&[Row::new(&key, &s)], Format::Json)
}

#[test]
fn same_seed_same_bytes() {
    let _turn = one_at_a_time();
    for lock in ["ron-raw", "nxt-ron", "mcs", "ttas", "ticket", "sh-ron"] {
        for placement in [Placement::Route, Placement::Random] {
            let a = csv(lock, 3, placement);
            assert_eq!(a, csv(lock, 3, placement), "{lock} {placement:?}");
        }
    }
}

#[test]
fn the_seed_changes_the_run() {
    let _turn = one_at_a_time();
    assert_ne!(
        csv("mcs", 3, Placement::Route),
        csv("mcs", 4, Placement::Route)
    );
}

/// Suspending spinners (`Costs::suspend_spinners`, on by default) is an
/// optimisation of the executor only: every lock gives the same rows byte
/// for byte without it.
#[test]
fn suspending_spinners_changes_nothing() {
    let _turn = one_at_a_time();
    for lock in ron_vm_bench::locks::NAMES {
        let without = Costs {
            suspend_spinners: false,
            ..Costs::default()
        };
        assert_eq!(
            csv(lock, 5, Placement::Route),
            csv_with(lock, 5, Placement::Route, without),
            "{lock}"
        );
    }
}

/// Every relax policy of ron-core tells the VM its pacing correctly: the
/// locks whose waiting loops let the VM skip idle looks (ticket, TTAS, MCS,
/// CNA, RON-ticket, shRON) give the same run with and without suspension
/// under `Spin`, `Backoff`, `Yield`, `SpinThenYield` and `SpinWhileAlone`.
#[test]
fn skipped_looks_match_every_relax_policy() {
    let _turn = one_at_a_time();
    use rc::relax::{Backoff, Spin, SpinThenYield, SpinWhileAlone, Yield};
    use ron_core as rc;

    fn both<L: lock_api::RawMutex + 'static>(what: &str, sleeps: bool) {
        let vm = common::two_socket(24);
        let stats = |suspend_spinners| {
            let p = Point {
                workload: ron_vm_bench::Workload::Micro,
                start_skew_ns: 0.0,
                cpus: vm.place(16, Placement::Route, 7),
                ncs_ns: 300.0,
                cs_lines: 2,
                acquisitions: 1200,
                seed: 7,
                costs: Costs {
                    suspend_spinners,
                    ..Costs::default()
                },
            };
            let mut s = ron_vm_bench::workload::run::<L>(&vm, &p);
            (s.wall_s, s.cpu_s) = (0.0, 0.0);
            let switches = std::mem::take(&mut s.switches);
            (s, switches)
        };
        let (with, sw_with) = stats(true);
        let (without, sw_without) = stats(false);
        assert_eq!(with, without, "{what}");
        // The queue and ticket locks' waiters sleep through looks (an
        // unclaimed shRON waiter, the only one of shRON's that may, is rare).
        assert!(
            !sleeps || sw_with < sw_without,
            "{what}: {sw_with} vs {sw_without} switches"
        );
    }
    // `sleeps`: whether this policy lets the VM suspend the queue and
    // ticket locks' waiters in these short waits. `SpinWhileAlone` paces
    // only once its first timed yield found the CPU its own (after 128
    // looks), which these waits rarely reach: it is checked for equality
    // only.
    macro_rules! each_policy {
        ($($p:ty => $sleeps:expr),*) => {$(
            let p = stringify!($p);
            both::<rc::Ticket<$p>>(&format!("ticket {p}"), $sleeps);
            both::<rc::Ttas<$p>>(&format!("ttas {p}"), $sleeps);
            both::<rc::Mcs<$p>>(&format!("mcs {p}"), $sleeps);
            both::<rc::Cna<16, true, $p>>(&format!("cna {p}"), $sleeps);
            both::<rc::RonTicketInline<16, $p>>(&format!("ron-ticket {p}"), $sleeps);
            both::<rc::ShRon<$p>>(&format!("sh-ron {p}"), false);
        )*};
    }
    each_policy!(
        Spin => true,
        Backoff => true,
        Yield => true,
        SpinThenYield => true,
        SpinWhileAlone => false
    );
}

/// The locks with process-wide state (`ron-raw`'s slot-block pool, which
/// the RON locks share or will, `sh-ron`'s wait table) and those whose
/// runs depend on addresses (`cna` seeds its draw from its queue node's
/// stack address): a run gives the same row whatever ran before it in the
/// process, so two passes over them in opposite orders give the same rows.
#[test]
fn what_ran_before_changes_nothing() {
    let _turn = one_at_a_time();
    const LOCKS: &[&str] = &[
        "ron-raw",
        "sh-ron",
        "cna",
        "ron-ticket",
        "nxt-ron",
        "ron-plock",
    ];
    let vm = common::two_socket(64);
    let row = |lock: &str| {
        let p = Point {
            workload: ron_vm_bench::Workload::Micro,
            start_skew_ns: 1000.0,
            cpus: vm.place(64, Placement::Random, 2),
            ncs_ns: 0.0,
            cs_lines: 2,
            acquisitions: 1500,
            seed: 2,
            costs: Costs::default(),
        };
        let mut s = run_named(lock, 64, RelaxKind::Spin, &vm, &p).unwrap();
        (s.wall_s, s.cpu_s, s.switches) = (0.0, 0.0, 0);
        s
    };
    let forward: Vec<_> = LOCKS.iter().map(|l| row(l)).collect();
    let backward: Vec<_> = LOCKS.iter().rev().map(|l| row(l)).collect();
    for (i, lock) in LOCKS.iter().enumerate() {
        assert_eq!(forward[i], backward[LOCKS.len() - 1 - i], "{lock}");
    }
}
