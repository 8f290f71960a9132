//! The CPU hint: which CPU the calling thread is (probably) running on.
//!
//! **The hint is only a locality hint.** A thread may migrate between reading
//! it and spinning, or between lock and unlock; two threads may share a CPU;
//! an embedder's provider may return anything. No lock in this crate relies
//! on the hint for mutual exclusion or progress; a wrong hint only costs
//! speed.
//!
//! Locks call it on their slow path (to pick a slot, row or group before
//! waiting), in `try_lock` of `CBoMcs` and `Fsl`, and in the unlock of a
//! fast-path acquisition of `Ron`, `RonPlock`, `RonTicket` (always) and
//! `NxtRon`, `ShRon`, `RonRaw` (when waiters are registered), where it
//! picks the slot the successor scan starts from. A provider may panic: the
//! locks ask it before changing any state, and an unlock whose hint panics
//! first releases the lock (scanning from slot 0), so the unlock unwinds
//! with the lock released, never held. A provider should still not panic:
//! a panicking unlock inside a `Drop` during unwinding aborts the process.
//!
//! Sources, in order:
//! 1. a provider registered with [`set_provider`] (the `no_std` way to teach
//!    the crate about CPUs; tests also use it to feed garbage);
//! 2. with `std` on Linux, `sched_getcpu()` (a vDSO call, no syscall),
//!    cached per thread and refreshed every [`REFRESH_EVERY`] lookups;
//! 3. with `std` elsewhere (and under Miri, which cannot call
//!    `sched_getcpu`), a stable per-thread number;
//! 4. without `std`, CPU 0.
//!
//! Under the model checkers the built-in source is deterministic, so that
//! schedules replay: CPU 0 under loom, the shuttle thread id under shuttle.
//!
//! ```
//! fn my_cpu() -> usize { 3 }
//! ron_core::hint::set_provider(my_cpu);
//! assert_eq!(ron_core::hint::current_cpu(), 3);
//! ron_core::hint::clear_provider();
//! ```

use core::sync::atomic::{AtomicPtr, Ordering};

/// A function returning the id of the CPU the caller runs on.
pub type Provider = fn() -> usize;

/// How many lookups a thread serves from its cache before asking the OS again.
pub const REFRESH_EVERY: u32 = 64;

static PROVIDER: AtomicPtr<()> = AtomicPtr::new(core::ptr::null_mut());

/// Registers `provider` as the source of CPU hints for the whole process,
/// replacing any earlier one.
pub fn set_provider(provider: Provider) {
    // Release: a thread that loads the pointer (Acquire) may call it.
    PROVIDER.store(provider as *mut (), Ordering::Release);
}

/// Removes a registered provider; the built-in source applies again.
pub fn clear_provider() {
    PROVIDER.store(core::ptr::null_mut(), Ordering::Release); // see set_provider
}

/// The CPU the caller is probably running on. Any value is possible
/// (including ids above the machine's CPU count); see the module docs.
#[inline]
pub fn current_cpu() -> usize {
    let p = PROVIDER.load(Ordering::Acquire); // pairs with set_provider
    if !p.is_null() {
        // SAFETY: the only non-null values ever stored in PROVIDER are
        // `Provider` function pointers cast to `*mut ()` by `set_provider`,
        // and function pointers are never deallocated.
        let f = unsafe { core::mem::transmute::<*mut (), Provider>(p) };
        return f();
    }
    // Under the VM harness a virtual thread runs on its virtual CPU.
    #[cfg(ron_vm)]
    if ron_vm::in_vm() {
        return ron_vm::current_cpu();
    }
    builtin()
}

/// Under loom every schedule must replay exactly: no OS lookups.
#[cfg(loom)]
fn builtin() -> usize {
    0
}

/// Under shuttle too (a failing schedule is replayed from its seed), but
/// its threads are many: each gets its own stable id, as if pinned to a
/// CPU of its own, so the locks see several slots. Tests that want threads
/// to share a slot use `acquire_in`.
#[cfg(all(shuttle, not(loom)))]
fn builtin() -> usize {
    usize::from(shuttle::thread::current().id())
}

#[cfg(all(
    feature = "std",
    target_os = "linux",
    not(loom),
    not(shuttle),
    not(miri)
))]
fn builtin() -> usize {
    use std::cell::Cell;
    std::thread_local! {
        /// (cached cpu, lookups left before the next refresh)
        static CACHE: Cell<(usize, u32)> = const { Cell::new((0, 0)) };
    }
    CACHE
        .try_with(|c| {
            let (cpu, left) = c.get();
            if left > 0 {
                c.set((cpu, left - 1));
                return cpu;
            }
            // SAFETY: sched_getcpu has no preconditions; it returns -1 on error.
            let fresh = unsafe { libc::sched_getcpu() };
            let cpu = if fresh >= 0 {
                fresh as usize
            } else {
                thread_number()
            };
            c.set((cpu, REFRESH_EVERY - 1));
            cpu
        })
        .unwrap_or(0)
}

// Miri has no shim for `sched_getcpu` ("unsupported operation: can't call
// foreign function"), so under `cfg(miri)` the stable per-thread number
// stands in for it, as on other OSes: the hint is only a hint, and distinct
// threads still land in distinct slots (`.ci/miri`).
#[cfg(all(
    feature = "std",
    any(not(target_os = "linux"), miri),
    not(loom),
    not(shuttle)
))]
fn builtin() -> usize {
    thread_number()
}

#[cfg(all(not(feature = "std"), not(loom), not(shuttle)))]
fn builtin() -> usize {
    0
}

/// A small number that is stable for the life of the calling thread.
#[cfg(feature = "std")]
pub fn thread_number() -> usize {
    use core::sync::atomic::AtomicUsize;
    use std::cell::Cell;
    static NEXT: AtomicUsize = AtomicUsize::new(0);
    std::thread_local! {
        static ID: Cell<usize> = const { Cell::new(usize::MAX) };
    }
    ID.try_with(|id| {
        if id.get() == usize::MAX {
            // Relaxed: only uniqueness matters, which the RMW gives.
            id.set(NEXT.fetch_add(1, Ordering::Relaxed));
        }
        id.get()
    })
    .unwrap_or(0)
}
