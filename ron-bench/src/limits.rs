//! The ranges every benchmark parameter must lie in, and their checks: the
//! one place the workloads and grids validate against (this module imports
//! nothing of the crate but its error). Each message names the `ron bench`
//! option, says what is wrong and what was given.

use std::time::Duration;

use crate::error::BenchError;

/// Most threads of one run.
pub const MAX_THREADS: usize = 4096;
/// Longest measured duration (or warm-up) of one run.
pub const MAX_DURATION: Duration = Duration::from_secs(3600);
/// Most runs per point a grid accepts.
pub const MAX_REPEAT: usize = 1000;
/// Most cache lines one critical section of the micro workload touches.
pub const MAX_CS_LINES: usize = 1 << 16;
/// Most locks of one many-locks run.
pub const MAX_LOCKS: usize = 1 << 28;
/// Most waiters sharing the compute thread's CPU in a co-runner run.
pub const MAX_WAITERS: usize = 1024;
/// Longest mean non-critical section (ns).
pub const MAX_NCS_NS: f64 = 1e9;

fn invalid(msg: String) -> Result<(), BenchError> {
    Err(BenchError::Invalid(msg))
}

/// `value` (of option `flag`) lies in `1..=max`.
pub fn count(flag: &str, value: usize, max: usize) -> Result<(), BenchError> {
    if value == 0 || value > max {
        return invalid(format!("{flag}: must be in 1..={max}, got {value}"));
    }
    Ok(())
}

/// A thread count.
pub fn threads(t: usize) -> Result<(), BenchError> {
    count("--threads", t, MAX_THREADS)
}

/// A run count per point.
pub fn repeat(r: usize) -> Result<(), BenchError> {
    count("--repeat", r, MAX_REPEAT)
}

/// A number of locks.
pub fn n_locks(n: usize) -> Result<(), BenchError> {
    count("--n-locks", n, MAX_LOCKS)
}

/// A number of co-runner waiters.
pub fn waiters(w: usize) -> Result<(), BenchError> {
    count("--waiters", w, MAX_WAITERS)
}

/// Cache lines per critical section.
pub fn cs_lines(k: usize) -> Result<(), BenchError> {
    if k > MAX_CS_LINES {
        return invalid(format!(
            "--cs-lines: must be at most {MAX_CS_LINES}, got {k}"
        ));
    }
    Ok(())
}

/// A read percentage of the reader-writer workloads.
pub fn read_pct(p: u32) -> Result<(), BenchError> {
    if p > 100 {
        return invalid(format!("--read-pct: must be in 0..=100, got {p}"));
    }
    Ok(())
}

/// A mean non-critical section in ns.
pub fn ncs_ns(n: f64) -> Result<(), BenchError> {
    if !(n.is_finite() && (0.0..=MAX_NCS_NS).contains(&n)) {
        return invalid(format!("--ncs: must be in 0..=1e9 ns, got {n}"));
    }
    Ok(())
}

/// A measured duration: above zero, at most [`MAX_DURATION`].
pub fn duration(d: Duration) -> Result<(), BenchError> {
    if d.is_zero() || d > MAX_DURATION {
        return invalid(format!(
            "--duration: must be in (0, {}] s, got {} s",
            MAX_DURATION.as_secs(),
            d.as_secs_f64()
        ));
    }
    Ok(())
}

/// A warm-up: at most [`MAX_DURATION`].
pub fn warmup(d: Duration) -> Result<(), BenchError> {
    if d > MAX_DURATION {
        return invalid(format!(
            "--warmup: must be at most {} s, got {} s",
            MAX_DURATION.as_secs(),
            d.as_secs_f64()
        ));
    }
    Ok(())
}
