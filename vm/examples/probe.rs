//! Diagnostics of one point: `cargo run --release --example probe -- MATRIX LOCK THREADS NCS`.
use ron_vm_bench::locks::{RelaxKind, run_named, slots_per_cpu};
use ron_vm_bench::{Placement, Point, VirtualMachine};

fn main() {
    let a: Vec<String> = std::env::args().collect();
    let vm = VirtualMachine::load(std::path::Path::new(&a[1])).unwrap();
    let threads: usize = a[3].parse().unwrap();
    let p = Point {
        workload: ron_vm_bench::Workload::Micro,
        start_skew_ns: 0.0,
        cpus: vm.place(threads, Placement::Route, 1),
        ncs_ns: a[4].parse().unwrap(),
        cs_lines: a[5].parse().unwrap(),
        acquisitions: 1500,
        seed: 1,
        costs: ron_vm::Costs::default(),
    };
    let s = run_named(&a[2], slots_per_cpu(vm.n()), RelaxKind::Spin, &vm, &p).unwrap();
    println!(
        "{} handover {:.1} p50 {:.1} Mlocks/s {:.3}; per acquisition: loads {:.1} stores {:.1} rmws {:.1} transfers {:.1}; switches {}",
        a[2],
        s.handover_ns,
        s.handover_p50_ns,
        s.mlocks_per_s,
        s.memory.loads as f64 / s.total as f64,
        s.memory.stores as f64 / s.total as f64,
        s.memory.rmws as f64 / s.total as f64,
        s.memory.transfers as f64 / s.total as f64,
        s.switches
    );
}
