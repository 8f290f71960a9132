//! The process-wide route: the order in which a RON lock hands itself over.
//!
//! The route is a cyclic order of CPU ids, normally a short traveling-salesman
//! tour over the measured core-to-core latencies (computed by `ron-topo`).
//! A RON lock with `S` slots maps route position `p` of `n` CPUs to slot
//! `p * S / n`, so each slot is a contiguous arc of the tour and consecutive
//! slots are cheap to hand over between.
//!
//! * One table per process, installed with [`install`] before or after locks
//!   exist; reading it is lock-free (one relaxed atomic load per lookup).
//! * Until a route is installed the identity order is used: CPU `c` maps to
//!   slot `c % S`.
//! * Installing again replaces the route while locks are in use. A waiter may
//!   then see a mix of the old and new route, which can only cost speed: the
//!   route is a locality hint, never part of any lock's safety argument.
//! * CPU ids the route does not name (offline CPUs, ids above the route's
//!   size, a wrong hint) map to slot `cpu % S`.
//!
//! ```
//! // A 4-CPU machine whose cheap pairs are (0, 2) and (1, 3).
//! ron_core::route::install(&[0, 2, 1, 3]).unwrap();
//! assert_eq!(ron_core::route::position(2), Some(1));
//! assert_eq!(ron_core::route::slot_of(1, 2), 1); // position 2 of 4 -> slot 1 of 2
//! assert!(ron_core::route::install(&[0, 0, 1]).is_err()); // not a permutation
//! ```

use core::fmt;
// The route is a hint shared by every lock, not part of a handoff protocol:
// it always uses core atomics (loom models pass their slots explicitly).
use core::sync::atomic::{AtomicBool, AtomicU32, AtomicUsize, Ordering};

/// The largest number of CPUs (and the largest CPU id + 1) a route can name.
pub const MAX_CPUS: usize = 4096;

const PRESENT: u32 = 1 << 31;
const POS_BITS: u32 = 12;
const POS_MASK: u32 = (1 << POS_BITS) - 1;

/// Per CPU id: `PRESENT | (n - 1) << 12 | position`, or 0 when not in the route.
/// Packing `n` with the position makes every lookup self-consistent even
/// while another thread installs a route of a different length.
static ENTRY: [AtomicU32; MAX_CPUS] = [const { AtomicU32::new(0) }; MAX_CPUS];
/// CPU id at each route position (valid for positions below `LEN`).
static ORDER: [AtomicU32; MAX_CPUS] = [const { AtomicU32::new(0) }; MAX_CPUS];
/// Length of the installed route; 0 means none (identity order).
static LEN: AtomicUsize = AtomicUsize::new(0);
/// Number of successful installs.
static GENERATION: AtomicUsize = AtomicUsize::new(0);
/// Serializes installers (readers never take it).
static INSTALLING: AtomicBool = AtomicBool::new(false);

/// Why a route was refused by [`install`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RouteError {
    /// The route names no CPU.
    Empty,
    /// The route is longer than [`MAX_CPUS`].
    TooLong {
        /// Length given.
        len: usize,
    },
    /// A CPU id is not below [`MAX_CPUS`].
    CpuOutOfRange {
        /// The offending id.
        cpu: usize,
    },
    /// A CPU id appears twice.
    Duplicate {
        /// The repeated id.
        cpu: usize,
    },
}

impl fmt::Display for RouteError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RouteError::Empty => write!(f, "route is empty"),
            RouteError::TooLong { len } => {
                write!(
                    f,
                    "route names {len} CPUs, more than the supported {MAX_CPUS}"
                )
            }
            RouteError::CpuOutOfRange { cpu } => {
                write!(
                    f,
                    "CPU id {cpu} is out of range (ids must be below {MAX_CPUS})"
                )
            }
            RouteError::Duplicate { cpu } => write!(f, "CPU id {cpu} appears twice in the route"),
        }
    }
}

impl core::error::Error for RouteError {}

/// Checks that `route` is a non-empty sequence of distinct CPU ids below
/// [`MAX_CPUS`].
pub fn validate(route: &[usize]) -> Result<(), RouteError> {
    if route.is_empty() {
        return Err(RouteError::Empty);
    }
    if route.len() > MAX_CPUS {
        return Err(RouteError::TooLong { len: route.len() });
    }
    let mut seen = [0u64; MAX_CPUS / 64];
    for &cpu in route {
        if cpu >= MAX_CPUS {
            return Err(RouteError::CpuOutOfRange { cpu });
        }
        let (w, b) = (cpu / 64, 1u64 << (cpu % 64));
        if seen[w] & b != 0 {
            return Err(RouteError::Duplicate { cpu });
        }
        seen[w] |= b;
    }
    Ok(())
}

/// Installs `route` (CPU ids in tour order) as the process-wide route.
///
/// Replaces any earlier route; safe while locks are in use. Returns an
/// error, and changes nothing, unless `route` is a non-empty permutation of
/// distinct ids below [`MAX_CPUS`].
pub fn install(route: &[usize]) -> Result<(), RouteError> {
    validate(route)?;
    // Acquire pairs with the Release in the unlock below: installers see each
    // other's complete tables.
    while INSTALLING
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        core::hint::spin_loop();
    }
    let old_len = LEN.load(Ordering::Relaxed); // serialized by INSTALLING
    for slot in ORDER.iter().take(old_len) {
        let cpu = slot.load(Ordering::Relaxed) as usize; // serialized by INSTALLING
        // Relaxed: readers treat every entry as a hint; no data hangs off it.
        ENTRY[cpu].store(0, Ordering::Relaxed);
    }
    let n = route.len();
    let n_bits = ((n - 1) as u32) << POS_BITS;
    for (p, &cpu) in route.iter().enumerate() {
        // Relaxed: as above, each packed entry is self-consistent on its own.
        ORDER[p].store(cpu as u32, Ordering::Relaxed);
        ENTRY[cpu].store(PRESENT | n_bits | p as u32, Ordering::Relaxed);
    }
    // Release: a reader that sees the new length (Acquire in `len`/`cpu_at`)
    // sees the ORDER entries written above.
    LEN.store(n, Ordering::Release);
    GENERATION.fetch_add(1, Ordering::Release);
    INSTALLING.store(false, Ordering::Release);
    Ok(())
}

/// Removes the installed route; the identity order applies again.
pub fn clear() {
    while INSTALLING
        .compare_exchange_weak(false, true, Ordering::Acquire, Ordering::Relaxed)
        .is_err()
    {
        core::hint::spin_loop();
    }
    let old_len = LEN.load(Ordering::Relaxed); // serialized by INSTALLING
    LEN.store(0, Ordering::Release);
    for slot in ORDER.iter().take(old_len) {
        let cpu = slot.load(Ordering::Relaxed) as usize; // serialized by INSTALLING
        ENTRY[cpu].store(0, Ordering::Relaxed); // hint only, see `install`
    }
    GENERATION.fetch_add(1, Ordering::Release);
    INSTALLING.store(false, Ordering::Release);
}

/// Route position of `cpu` and the route's length, or `None` when `cpu` is
/// not on the installed route (or none is installed).
#[inline]
pub fn position_and_len(cpu: usize) -> Option<(usize, usize)> {
    // Relaxed: a hint; the packed word is self-consistent.
    let e = ENTRY.get(cpu)?.load(Ordering::Relaxed);
    if e & PRESENT == 0 {
        return None;
    }
    Some((
        (e & POS_MASK) as usize,
        (((e & !PRESENT) >> POS_BITS) + 1) as usize,
    ))
}

/// Route position of `cpu`, or `None` when it is not on the route.
#[inline]
pub fn position(cpu: usize) -> Option<usize> {
    position_and_len(cpu).map(|(p, _)| p)
}

/// The slot (of `slots`) that `cpu` waits in: `position * slots / len` on
/// the installed route, `cpu % slots` otherwise. Always `< slots` (for
/// `slots > 0`; 0 slots gives 0).
#[inline]
pub fn slot_of(cpu: usize, slots: usize) -> usize {
    if slots <= 1 {
        return 0;
    }
    match position_and_len(cpu) {
        Some((p, n)) => (p * slots / n).min(slots - 1),
        None => cpu % slots,
    }
}

/// Length of the installed route (0 when none is installed).
#[inline]
pub fn len() -> usize {
    LEN.load(Ordering::Acquire) // pairs with the Release store in `install`
}

/// Whether a route is installed.
pub fn is_installed() -> bool {
    len() != 0
}

/// The CPU at route position `pos`, or `None` past the end.
pub fn cpu_at(pos: usize) -> Option<usize> {
    if pos >= len() {
        return None;
    }
    Some(ORDER[pos].load(Ordering::Relaxed) as usize) // LEN's Acquire ordered it
}

/// Copies the installed route into `out`; returns how many ids it wrote
/// (at most `out.len()`; 0 when none is installed).
pub fn copy_to(out: &mut [usize]) -> usize {
    let n = len().min(out.len());
    for (p, o) in out.iter_mut().enumerate().take(n) {
        *o = ORDER[p].load(Ordering::Relaxed) as usize; // LEN's Acquire ordered it
    }
    n
}

/// How many times a route has been installed or cleared in this process.
pub fn generation() -> usize {
    GENERATION.load(Ordering::Acquire) // pairs with the Release in `install`
}
