//! Sleeping on a 32-bit word until another thread changes it and wakes
//! the sleepers (`std` only): the futex on Linux, the virtual machine's
//! futex under `cfg(ron_vm)` (a sleeper costs no CPU time; a lost wake-up
//! stops the run), a poll of the word (spin, then yield) elsewhere and
//! under loom and shuttle, where a lost wake-up then shows up as a waiter
//! that polls forever.
//!
//! `wait` may always return early (a signal, a spurious wake-up, the
//! deadline): callers re-check their condition in a loop.
//!
//! Also the asymmetric fence of a sleeper's Dekker check ([`light_fence`],
//! [`heavy_fence`]): on Linux the heavy side is `membarrier(2)`
//! (`MEMBARRIER_CMD_PRIVATE_EXPEDITED`), which runs a full memory barrier
//! on every CPU running a thread of this process, so the light side, on
//! the hot path, is only a compiler fence. Where `membarrier` cannot be
//! registered (an old kernel, a seccomp filter), elsewhere, and under
//! loom, shuttle and Miri, both sides are `fence(SeqCst)`. The VM models
//! the registered Linux build: the heavy side is the VM's priced
//! `membarrier`, the light side a fence (free in the VM).

use crate::sync::AtomicU32;
use crate::sync::Ordering;
use crate::timed::Deadline;

/// Sleeps while `*word == seen`, until `deadline` (may return early).
#[cfg(all(target_os = "linux", not(loom), not(shuttle), not(ron_vm)))]
pub(crate) fn wait(word: &AtomicU32, seen: u32, deadline: Deadline) {
    let ts;
    let ts_ptr = match deadline.remaining() {
        None => core::ptr::null(),
        Some(left) if left.is_zero() => return,
        Some(left) => {
            ts = libc::timespec {
                tv_sec: libc::time_t::try_from(left.as_secs()).unwrap_or(libc::time_t::MAX),
                tv_nsec: left.subsec_nanos().into(),
            };
            &ts as *const libc::timespec
        }
    };
    // SAFETY: FUTEX_WAIT reads the aligned u32 behind `word` (an
    // `AtomicU32` has the layout of `u32`) and compares it with `seen`
    // atomically in the kernel; `ts_ptr` is null or points to a timespec
    // that lives until the call returns. Every result (woken, EAGAIN:
    // value changed, EINTR, ETIMEDOUT) is a return to the caller's loop.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAIT | libc::FUTEX_PRIVATE_FLAG,
            seen,
            ts_ptr,
        );
    }
}

/// Wakes up to `n` threads sleeping on `word`.
#[cfg(all(target_os = "linux", not(loom), not(shuttle), not(ron_vm)))]
pub(crate) fn wake(word: &AtomicU32, n: u32) {
    let n = i32::try_from(n).unwrap_or(i32::MAX);
    // SAFETY: FUTEX_WAKE only uses the address as a key.
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.as_ptr(),
            libc::FUTEX_WAKE | libc::FUTEX_PRIVATE_FLAG,
            n,
        );
    }
}

/// Sleeps on the VM's futex while `*word == seen`, until `deadline` (may
/// return early).
#[cfg(all(ron_vm, not(loom), not(shuttle)))]
pub(crate) fn wait(word: &AtomicU32, seen: u32, deadline: Deadline) {
    let timeout = match deadline.remaining() {
        None => None,
        Some(left) if left.is_zero() => return,
        Some(left) => Some(left),
    };
    word.futex_wait(seen, timeout);
}

/// Wakes up to `n` threads sleeping on `word` in the VM.
#[cfg(all(ron_vm, not(loom), not(shuttle)))]
pub(crate) fn wake(word: &AtomicU32, n: u32) {
    word.futex_wake(n);
}

/// Polls `*word` until it changes or `deadline` passes.
#[cfg(not(any(
    all(target_os = "linux", not(loom), not(shuttle), not(ron_vm)),
    all(ron_vm, not(loom), not(shuttle))
)))]
pub(crate) fn wait(word: &AtomicU32, seen: u32, deadline: Deadline) {
    let mut relax = crate::relax::SpinThenYield::default();
    // Relaxed: only waits for the word to change; callers re-check their
    // condition with their own orderings (the condvar relocks its mutex,
    // RonPark takes the lock word with an Acquire CAS).
    while word.load(Ordering::Relaxed) == seen && !deadline.expired() {
        crate::relax::Relax::relax(&mut relax);
    }
}

/// Pollers need no wake-up.
#[cfg(not(any(
    all(target_os = "linux", not(loom), not(shuttle), not(ron_vm)),
    all(ron_vm, not(loom), not(shuttle))
)))]
pub(crate) fn wake(_word: &AtomicU32, _n: u32) {}

/// Whether this build may use `membarrier(2)` for [`heavy_fence`].
const MEMBARRIER_BUILD: bool = cfg!(all(
    target_os = "linux",
    not(loom),
    not(shuttle),
    not(ron_vm),
    not(miri)
));

/// [`ASYM`]: registration not tried yet.
const ASYM_UNKNOWN: u8 = 0;
/// [`ASYM`]: the process is registered for expedited private membarriers.
const ASYM_MEMBARRIER: u8 = 1;
/// [`ASYM`]: membarrier is unavailable; both sides fence.
const ASYM_FENCE: u8 = 2;

/// Which asymmetric fence this process uses; it leaves `ASYM_UNKNOWN`
/// once, in the first [`heavy_fence`], and never changes again. A plain
/// `core` atomic even under loom or shuttle: those builds never leave
/// `ASYM_UNKNOWN` (`MEMBARRIER_BUILD` is false), so it is no part of any
/// model.
static ASYM: core::sync::atomic::AtomicU8 = core::sync::atomic::AtomicU8::new(ASYM_UNKNOWN);

/// The cheap side of the asymmetric fence: orders this thread's earlier
/// stores before its later loads as seen by a thread that runs
/// [`heavy_fence`], as `fence(SeqCst)` on both sides would.
///
/// With `membarrier` registered it is a compiler fence: the other side's
/// `membarrier` runs a full barrier on this thread's CPU if it is running
/// (between two of its instructions, in program order), and a context
/// switch is one if it is not. Where registration failed it is a real
/// `fence(SeqCst)`. The first fence of the process (either side) decides,
/// once, in [`asym_mode`]; every [`heavy_fence`] after that decision
/// issues a `membarrier` if it was the registration, so no light side's
/// compiler fence ever pairs with a heavy side's plain fence.
#[inline]
pub(crate) fn light_fence() {
    // Relaxed: the value only picks which fence runs (see above).
    let mode = if MEMBARRIER_BUILD {
        ASYM.load(core::sync::atomic::Ordering::Relaxed)
    } else {
        ASYM_FENCE
    };
    if mode == ASYM_MEMBARRIER || (mode == ASYM_UNKNOWN && asym_mode() == ASYM_MEMBARRIER) {
        core::sync::atomic::compiler_fence(core::sync::atomic::Ordering::SeqCst);
    } else {
        crate::sync::fence(Ordering::SeqCst);
    }
}

/// The expensive side of the asymmetric fence (see [`light_fence`]): a
/// `membarrier` if the process is registered, else `fence(SeqCst)`; also
/// a `fence(SeqCst)` for this thread itself.
pub(crate) fn heavy_fence() {
    // This thread's own order: its earlier stores before its later loads.
    crate::sync::fence(Ordering::SeqCst);
    // The VM prices the registered build's membarrier (its order is
    // sequentially consistent already).
    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    ron_vm::membarrier();
    #[cfg(all(target_os = "linux", not(loom), not(shuttle), not(ron_vm), not(miri)))]
    if asym_mode() == ASYM_MEMBARRIER {
        // SAFETY: membarrier takes two integers and touches no memory of
        // ours; the process is registered, so the command runs a full
        // barrier on every CPU running one of its threads.
        unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                CMD_PRIVATE_EXPEDITED,
                0 as libc::c_long,
            )
        };
    }
}

/// `MEMBARRIER_CMD_PRIVATE_EXPEDITED` (linux/membarrier.h).
#[cfg(all(target_os = "linux", not(loom), not(shuttle), not(ron_vm), not(miri)))]
const CMD_PRIVATE_EXPEDITED: libc::c_long = 1 << 3;
/// `MEMBARRIER_CMD_REGISTER_PRIVATE_EXPEDITED` (linux/membarrier.h).
#[cfg(all(target_os = "linux", not(loom), not(shuttle), not(ron_vm), not(miri)))]
const CMD_REGISTER_PRIVATE_EXPEDITED: libc::c_long = 1 << 4;

/// The process's asymmetric fence, registering `membarrier` on first use
/// (`ASYM_FENCE` in builds without it).
#[cold]
#[inline(never)]
fn asym_mode() -> u8 {
    #[cfg(all(target_os = "linux", not(loom), not(shuttle), not(ron_vm), not(miri)))]
    {
        use core::sync::atomic::Ordering::Relaxed;
        // Relaxed: the value only picks the fence; ASYM leaves
        // ASYM_UNKNOWN once, by the CAS below, and never changes again.
        let mode = ASYM.load(Relaxed);
        if mode != ASYM_UNKNOWN {
            return mode;
        }
        // SAFETY: membarrier takes two integers and touches no memory of
        // ours; registering twice (two threads racing here) is allowed.
        let r = unsafe {
            libc::syscall(
                libc::SYS_membarrier,
                CMD_REGISTER_PRIVATE_EXPEDITED,
                0 as libc::c_long,
            )
        };
        let ours = if r == 0 { ASYM_MEMBARRIER } else { ASYM_FENCE };
        // Relaxed: as above. The first decision stands: a thread that lost
        // the race takes the winner's.
        match ASYM.compare_exchange(ASYM_UNKNOWN, ours, Relaxed, Relaxed) {
            Ok(_) => ours,
            Err(now) => now,
        }
    }
    #[cfg(not(all(target_os = "linux", not(loom), not(shuttle), not(ron_vm), not(miri))))]
    ASYM_FENCE
}
