//! Sleeping on a 32-bit word until another thread changes it and wakes
//! the sleepers (`std` only): the futex on Linux, the virtual machine's
//! futex under `cfg(ron_vm)` (a sleeper costs no CPU time; a lost wake-up
//! stops the run), a poll of the word (spin, then yield) elsewhere and
//! under loom and shuttle, where a lost wake-up then shows up as a waiter
//! that polls forever.
//!
//! `wait` may always return early (a signal, a spurious wake-up, the
//! deadline): callers re-check their condition in a loop.

use crate::sync::AtomicU32;
// The polling `wait` (loom, shuttle, non-Linux) loads the word.
#[cfg(not(any(
    all(target_os = "linux", not(loom), not(shuttle), not(ron_vm)),
    all(ron_vm, not(loom), not(shuttle))
)))]
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
pub(crate) fn wake(word: &AtomicU32, n: u32) {
    wake_at(word, n);
}

/// Wakes up to `n` threads sleeping on the word at `word`. Only the
/// address is used (as the kernel's `FUTEX_WAKE` uses it), so the word may
/// have been freed since: a lock's release may wake after it freed the
/// lock, as `std`'s mutex does; a waiter of a new word at that address
/// then wakes spuriously, which every futex waiter tolerates.
#[cfg(all(target_os = "linux", not(loom), not(shuttle), not(ron_vm)))]
pub(crate) fn wake_at(word: *const AtomicU32, n: u32) {
    let n = i32::try_from(n).unwrap_or(i32::MAX);
    // SAFETY: FUTEX_WAKE only uses the address as a key and reads no
    // memory (`AtomicU32` has `u32`'s layout).
    unsafe {
        libc::syscall(
            libc::SYS_futex,
            word.cast::<u32>(),
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

/// Wakes up to `n` threads sleeping on the word at `word` in the VM (the
/// address only, as above).
#[cfg(all(ron_vm, not(loom), not(shuttle)))]
pub(crate) fn wake_at(word: *const AtomicU32, n: u32) {
    ron_vm::futex_wake(word as usize, n);
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
pub(crate) fn wake_at(_word: *const AtomicU32, _n: u32) {}
