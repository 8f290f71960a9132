//! Cheap timestamps and a calibrated busy-wait.
//!
//! The critical-section timestamps are taken on every acquisition, so they
//! must cost little: on x86-64 they read the TSC (`rdtsc`, about 20 cycles,
//! invariant and synchronised across cores on every CPU with
//! `constant_tsc`/`nonstop_tsc`); elsewhere they fall back to
//! [`Instant`] (a vDSO call, ~20 ns). [`ticks_per_ns`] converts ticks to ns
//! (measured once against [`Instant`]).
//!
//! The non-critical section is a calibrated spin loop ([`spin_ns`]), not a
//! loop around `Instant::now()`, whose own cost would distort a 100 ns
//! non-critical section.

use std::hint::black_box;
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// A timestamp in ticks (TSC cycles on x86-64, ns elsewhere).
#[inline(always)]
pub fn now() -> u64 {
    #[cfg(target_arch = "x86_64")]
    {
        // SAFETY: `rdtsc` is available on every x86-64 CPU and has no
        // preconditions; it only reads the time-stamp counter.
        unsafe { core::arch::x86_64::_rdtsc() }
    }
    #[cfg(not(target_arch = "x86_64"))]
    {
        epoch().elapsed().as_nanos() as u64
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn epoch() -> Instant {
    static EPOCH: OnceLock<Instant> = OnceLock::new();
    *EPOCH.get_or_init(Instant::now)
}

/// Ticks of [`now`] per nanosecond (measured once, over ~20 ms).
pub fn ticks_per_ns() -> f64 {
    static TPN: OnceLock<f64> = OnceLock::new();
    *TPN.get_or_init(|| {
        if cfg!(not(target_arch = "x86_64")) {
            return 1.0;
        }
        let i0 = Instant::now();
        let t0 = now();
        while i0.elapsed() < Duration::from_millis(20) {
            std::hint::spin_loop();
        }
        let t1 = now();
        let ns = i0.elapsed().as_nanos() as f64;
        let r = (t1.wrapping_sub(t0)) as f64 / ns;
        if r.is_finite() && r > 0.0 { r } else { 1.0 }
    })
}

/// Converts a tick difference to nanoseconds.
#[inline]
pub fn ticks_to_ns(ticks: u64) -> f64 {
    ticks as f64 / ticks_per_ns()
}

/// One iteration of the busy-wait loop: a dependent add the optimiser cannot
/// remove.
#[inline(always)]
fn spin_iters(n: u64) {
    let mut x = 0u64;
    for i in 0..n {
        x = black_box(x.wrapping_add(i));
    }
    black_box(x);
}

/// Busy-wait loop iterations per nanosecond on this machine (calibrated
/// once, by [`measure_iters_per_ns`]; every [`spin_ns`] uses this value).
pub fn iters_per_ns() -> f64 {
    static IPN: OnceLock<f64> = OnceLock::new();
    *IPN.get_or_init(measure_iters_per_ns)
}

/// Measures the busy-wait loop's iterations per nanosecond now: the
/// fastest of several 2 ms trials, so that a busy machine errs towards
/// shorter, not longer, waits. A run can call it again at its end and
/// compare with [`iters_per_ns`] to see whether the machine's speed changed
/// meanwhile (then its `spin_ns` waits were off by the same factor).
pub fn measure_iters_per_ns() -> f64 {
    let mut n = 1_000u64;
    // Grow the trial until it takes about 2 ms.
    loop {
        let t = Instant::now();
        spin_iters(n);
        if t.elapsed() >= Duration::from_millis(2) || n >= 1 << 34 {
            break;
        }
        n *= 2;
    }
    let mut best = f64::INFINITY;
    for _ in 0..7 {
        let t = Instant::now();
        spin_iters(n);
        best = best.min(t.elapsed().as_nanos() as f64);
    }
    let r = n as f64 / best.max(1.0);
    if r.is_finite() && r > 0.0 { r } else { 1.0 }
}

/// How far off the `spin_ns` waits of a run were, as a fraction, when the
/// busy loop ran at `calibrated` iterations/ns at the start (the value
/// every wait used) and at `now` at the end: `Some(0.45)` when the waits
/// were about 45 % shorter or longer than asked, `None` within `tolerance`.
///
/// ```
/// use ron_bench::clock::spin_drift;
/// assert_eq!(spin_drift(3.7, 3.6, 0.15), None);
/// let off = spin_drift(2.0, 4.0, 0.15).unwrap();
/// assert!((off - 0.5).abs() < 1e-9);
/// ```
pub fn spin_drift(calibrated: f64, now: f64, tolerance: f64) -> Option<f64> {
    if !(calibrated > 0.0 && now > 0.0) {
        return None;
    }
    let off = (1.0 - calibrated / now).abs();
    (off > tolerance).then_some(off)
}

/// Busy-waits for about `ns` nanoseconds without reading a clock.
#[inline]
pub fn spin_ns(ns: f64) {
    if ns > 0.0 {
        spin_iters((ns * iters_per_ns()) as u64);
    }
}

/// CPU time (user + system) this process has used so far, all threads,
/// from `getrusage(RUSAGE_SELF)`; `None` where that is not available.
///
/// The difference over a measured window, divided by the window's length,
/// is how many CPUs the run kept busy: what waiting costs the machine.
pub fn process_cpu_time() -> Option<Duration> {
    #[cfg(unix)]
    {
        let mut ru = std::mem::MaybeUninit::<libc::rusage>::zeroed();
        // SAFETY: `ru` points to writable memory of the size of a `rusage`,
        // which `getrusage` fills completely when it returns 0; the pointer
        // is not kept after the call.
        let rc = unsafe { libc::getrusage(libc::RUSAGE_SELF, ru.as_mut_ptr()) };
        if rc != 0 {
            return None;
        }
        // SAFETY: `getrusage` returned 0, so it initialised the struct (and
        // it was zeroed before, so every field is a valid integer anyway).
        let ru = unsafe { ru.assume_init() };
        let tv = |t: libc::timeval| {
            Duration::from_secs(t.tv_sec.max(0) as u64)
                + Duration::from_micros(t.tv_usec.clamp(0, 999_999) as u64)
        };
        Some(tv(ru.ru_utime) + tv(ru.ru_stime))
    }
    #[cfg(not(unix))]
    {
        None
    }
}

/// Forces both calibrations (call before timing anything).
pub fn calibrate() {
    let _ = ticks_per_ns();
    let _ = iters_per_ns();
}
