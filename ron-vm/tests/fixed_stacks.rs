//! `Vm::fixed_stacks`: every run puts virtual thread `i`'s stack at the
//! same addresses, whatever the process mapped in between.

use std::cell::RefCell;
use std::rc::Rc;

/// The address of a local of each virtual thread, in spawn order.
fn stack_addresses(fixed: bool) -> Vec<usize> {
    let m = ron_vm::Machine::from_fn(4, |a, b| if a == b { 0.0 } else { 50.0 }).unwrap();
    let mut vm = ron_vm::Vm::new(m, ron_vm::Costs::default()).fixed_stacks(fixed);
    let seen = Rc::new(RefCell::new(vec![0; 4]));
    for t in 0..4 {
        let seen = Rc::clone(&seen);
        vm.spawn(t, move || {
            let local = 0u64;
            seen.borrow_mut()[t] = std::hint::black_box(&local) as *const u64 as usize;
        });
    }
    vm.run();
    Rc::try_unwrap(seen).unwrap().into_inner()
}

#[test]
fn fixed_stacks_repeat_their_addresses() {
    let first = stack_addresses(true);
    // Mappings and allocations in between move ordinary stacks, not these.
    let keep: Vec<Vec<u8>> = (0..8).map(|i| vec![0u8; (1 << 20) + i * 4096]).collect();
    let ordinary = stack_addresses(false);
    let again = stack_addresses(true);
    drop(keep);
    assert_eq!(first, again);
    let mut distinct = first.clone();
    distinct.sort_unstable();
    distinct.dedup();
    assert_eq!(distinct.len(), 4, "one stack per thread: {first:x?}");
    // Not the ordinary stacks (which lie wherever the OS mapped them).
    assert!(ordinary.iter().all(|a| !first.contains(a)));
}
