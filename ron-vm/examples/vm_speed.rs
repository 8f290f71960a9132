//! Executor overhead: 128 virtual threads polling their own line (hits)
//! with a pause in between, so that every access switches fibers.
//! `cargo run -p ron-vm --release --example vm_speed`
use std::time::Instant;

fn main() {
    let m = ron_vm::Machine::from_fn(128, |a, b| if a == b { 0.0 } else { 100.0 }).unwrap();
    let mut vm = ron_vm::Vm::new(m, ron_vm::Costs::default());
    const OPS: u64 = 20_000;
    for cpu in 0..128 {
        vm.spawn(cpu, move || {
            let x = Box::new([0u64; 16]);
            for _ in 0..OPS {
                ron_vm::on_load(x.as_ptr() as usize);
                ron_vm::pause();
            }
        });
    }
    let t = Instant::now();
    let r = vm.run();
    let ns = t.elapsed().as_nanos() as f64;
    let ops = 128 * OPS;
    println!(
        "{ops} accesses, {} switches, {:.1} ns wall per access",
        r.switches,
        ns / ops as f64
    );
}
