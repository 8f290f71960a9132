//! A process-wide request to stop measuring (a Ctrl-C handler makes it):
//! the run in progress ends its measured window at once, keeping what it
//! measured, and the grids start no further run.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

static REQUESTED: AtomicBool = AtomicBool::new(false);

/// Longest time a waiting run takes to notice a request.
const POLL: Duration = Duration::from_millis(5);

/// Asks the run in progress to stop; returns whether a stop had already
/// been asked for (a second Ctrl-C).
pub fn request() -> bool {
    // Relaxed: a request flag; the measurements travel through joins.
    REQUESTED.swap(true, Ordering::Relaxed)
}

/// Whether a stop was asked for.
pub fn requested() -> bool {
    // Relaxed: see `request`.
    REQUESTED.load(Ordering::Relaxed)
}

/// Sleeps for `d`, or less when a stop is asked for; returns whether it
/// slept the whole of `d`.
pub fn sleep(d: Duration) -> bool {
    let end = Instant::now() + d;
    loop {
        if requested() {
            return false;
        }
        let now = Instant::now();
        if now >= end {
            return true;
        }
        std::thread::sleep((end - now).min(POLL));
    }
}
