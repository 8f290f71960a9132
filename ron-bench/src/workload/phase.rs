//! The phases a workload's threads go through (warm-up, measured window,
//! stop) and the timed window that moves them on, written once for every
//! workload that runs threads against a lock.

use std::sync::atomic::{AtomicU8, Ordering};
use std::time::{Duration, Instant};

use crate::{clock, stop};

/// Threads run but count nothing.
pub(crate) const WARMUP: u8 = 0;
/// Threads count what they do.
pub(crate) const MEASURE: u8 = 1;
/// Threads return what they counted.
pub(crate) const STOP: u8 = 2;

/// The phase word the threads read on every iteration.
pub(crate) struct Phase(AtomicU8);

impl Phase {
    /// Starts in [`WARMUP`].
    pub(crate) fn new() -> Self {
        Phase(AtomicU8::new(WARMUP))
    }

    /// The current phase.
    #[inline]
    pub(crate) fn get(&self) -> u8 {
        // Relaxed: the phase only steers when to count and stop; the
        // results travel through `join`.
        self.0.load(Ordering::Relaxed)
    }

    /// Run by the coordinating thread once the workers are released: the
    /// warm-up, then the measured window, then [`STOP`]. A stop request
    /// (Ctrl-C) ends the warm-up or the measured window at once; one
    /// during the warm-up measures nothing. Returns the measured window's
    /// length and the CPU seconds the process used in it (`None` where
    /// unavailable).
    pub(crate) fn run_window(
        &self,
        warmup: Duration,
        duration: Duration,
    ) -> (Duration, Option<f64>) {
        if !stop::sleep(warmup) {
            self.set(STOP);
            return (Duration::ZERO, None);
        }
        self.set(MEASURE);
        let cpu0 = clock::process_cpu_time();
        let start = Instant::now();
        stop::sleep(duration);
        self.set(STOP);
        let elapsed = start.elapsed();
        let cpu_s = match (cpu0, clock::process_cpu_time()) {
            (Some(a), Some(b)) => Some(b.saturating_sub(a).as_secs_f64()),
            _ => None,
        };
        (elapsed, cpu_s)
    }

    fn set(&self, phase: u8) {
        // Relaxed: see `get`.
        self.0.store(phase, Ordering::Relaxed);
    }
}
