//! The reader-writer workload (`vm-rw`): every reader-writer lock keeps
//! readers and writers apart on the virtual machine (no torn or changing
//! lines under a reader, no reader or second writer under a writer, every
//! write counted), with one thread per CPU and oversubscribed; the check
//! catches a lock that lets readers in under a writer; and `RonRw`'s reads
//! spread over groups where the one-counter lock's cannot.

mod common;

use lock_api::{RawMutex, RawRwLock};
use ron_vm::Costs;
use ron_vm_bench::rw::{RW_LOCKS, RwPoint, RwStats, run_rw, run_rw_named};
use ron_vm_bench::{GroupsChoice, Placement, VirtualMachine};

fn point(vm: &VirtualMachine, threads: usize, read_pct: f64, ncs: f64, seed: u64) -> RwPoint {
    RwPoint {
        start_skew_ns: 1000.0,
        cpus: vm.place(threads, Placement::Random, seed),
        read_pct,
        ncs_ns: ncs,
        cs_lines: 2,
        ops: 1500,
        seed,
        costs: Costs::default(),
    }
}

fn check(lock: &str, s: &RwStats, what: &str) {
    assert!(s.exclusion_ok, "{lock} {what}: {} violations", s.violations);
    assert!(s.reads > 0 && s.writes > 0, "{lock} {what}: {s:?}");
}

#[test]
fn readers_and_writers_stay_apart() {
    let mut vm = common::two_socket(16);
    vm.set_groups(&GroupsChoice::L3).unwrap();
    for &lock in RW_LOCKS {
        for (read, ncs, seed) in [(50.0, 0.0, 1), (90.0, 200.0, 2), (99.0, 0.0, 3)] {
            let s = run_rw_named(lock, &vm, &point(&vm, 12, read, ncs, seed)).unwrap();
            check(lock, &s, &format!("read {read} % nCS {ncs}"));
            assert_eq!(s.per_thread.len(), 12);
        }
    }
}

/// Two threads per CPU, slices of 20 us: threads are preempted anywhere
/// in the protocol, holding a read or a write.
#[test]
fn readers_and_writers_stay_apart_oversubscribed() {
    let vm = common::two_socket(8);
    for lock in ["ron-rw", "ttas"] {
        let mut p = point(&vm, 16, 80.0, 200.0, 4);
        p.costs = Costs {
            slice_ns: 20_000.0,
            ..Costs::default()
        };
        p.ops = 800;
        let s = run_rw_named(lock, &vm, &p).unwrap();
        check(lock, &s, "oversubscribed");
        assert_eq!(s.per_thread.len(), 16);
    }
}

/// A broken lock: writers exclude each other, readers take nothing.
struct ReadersIgnoreWriters(ron_core::Ttas);

// SAFETY: not a correct reader-writer lock (readers are not excluded by
// writers), on purpose: the workload's check must see it. Nothing here is
// unsound memory-wise: the workload's data are `Cell`s on one OS thread.
unsafe impl RawRwLock for ReadersIgnoreWriters {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = ReadersIgnoreWriters(ron_core::Ttas::INIT);
    type SharedGuard = ();
    type ExclusiveGuard = ();
    fn lock_shared(&self) {}
    fn try_lock_shared(&self) -> Option<()> {
        Some(())
    }
    unsafe fn unlock_shared(&self, _: ()) {}
    fn lock_exclusive(&self) {
        self.0.lock()
    }
    fn try_lock_exclusive(&self) -> Option<()> {
        self.0.try_lock()
    }
    unsafe fn unlock_exclusive(&self, _: ()) {
        // SAFETY: the caller holds the write lock, which is the Ttas.
        unsafe { self.0.unlock(()) }
    }
    fn is_locked(&self) -> bool {
        self.0.is_locked()
    }
    fn is_locked_exclusive(&self) -> bool {
        self.0.is_locked()
    }
}

#[test]
fn the_check_sees_readers_under_a_writer() {
    let vm = common::two_socket(16);
    let s = run_rw::<ReadersIgnoreWriters>(&vm, &point(&vm, 12, 50.0, 0.0, 5));
    assert!(!s.exclusion_ok && s.violations > 0, "{s:?}");
}

/// At 100 % reads on 16 CPUs in four chiplets, `RonRw`'s readers (biased
/// onto the table) outrun the one-counter lock, whose readers all write
/// one line, and a mutex taken by readers too (virtual time, deterministic).
#[test]
fn ron_rw_reads_spread_over_groups() {
    let mut vm = common::one_socket_chiplets(16, 4);
    vm.set_groups(&GroupsChoice::L3).unwrap();
    assert_eq!(vm.groups.describe(), "l3:4x4");
    let p = point(&vm, 16, 100.0, 0.0, 6);
    let x = |lock| run_rw_named(lock, &vm, &p).unwrap().mops_per_s;
    let (ron, one, ttas) = (x("ron-rw"), x("one-counter"), x("ttas"));
    assert!(ron > 2.0 * one, "ron-rw {ron} vs one-counter {one}");
    assert!(one > ttas, "one-counter {one} vs ttas {ttas}");
}

/// `vm-rw` prints the same bytes in every process: each run has a process
/// of its own with its lock and data lines at fixed addresses, so neither
/// the runs before it nor the address-space layout (which differs from
/// process to process) change it. Before, three invocations of this
/// command printed three different tables. Skips without the recorded
/// matrices.
#[test]
fn vm_rw_prints_the_same_bytes_in_every_process() {
    let Some(dir) = ron_vm_bench::data_dir() else {
        eprintln!(
            "skipping: no recorded data (set RON_DATA_DIR to the directory holding latency/)"
        );
        return;
    };
    if !dir.join("latency/amd-epyc-7742-2s.csv").exists() {
        eprintln!("skipping: amd-epyc-7742-2s.csv is absent");
        return;
    }
    let run = || {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_vm-rw"))
            .args([
                "--data",
                dir.to_str().unwrap(),
                "--only",
                "amd-epyc-7742-2s",
            ])
            .args(["--locks", "ron-rw", "--read-pct", "50", "--ncs", "0,1000"])
            .args(["--threads", "8", "--ops", "5000", "--repeat", "1"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        out.stdout
    };
    let first = run();
    for _ in 0..2 {
        assert!(
            first == run(),
            "vm-rw printed other bytes in another process"
        );
    }
}
