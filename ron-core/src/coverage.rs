//! Path counters for the verification suites: which protocol paths a loom
//! model, a Miri workload or a shuttle run actually reached.
//!
//! A verification that never reaches the path it is named after proves
//! nothing, so the models count. Lock code marks a path with
//! `crate::coverage::hit!("ron_raw.takeover")`; tests read
//! [`count`]`("ron_raw.takeover")` after a run and assert it is non-zero.
//!
//! The counters exist only under `cfg(loom)`, `cfg(miri)`, `cfg(shuttle)` or
//! `cfg(ron_coverage)`; in every other build `hit!` expands to nothing, so
//! the locks' fast paths carry no extra instruction. The module is hidden
//! from the docs: it is a test instrument, not API.
//!
//! Names are `"<lock>.<path>"` string literals. The table holds
//! [`CAPACITY`] distinct names; a name beyond that is counted nowhere (and
//! [`count`] says 0 for it, so a test notices).

/// Whether this build counts paths.
pub const ENABLED: bool = cfg!(any(loom, miri, shuttle, ron_coverage));

/// Most distinct path names the table can hold.
pub const CAPACITY: usize = 256;

#[cfg(any(loom, miri, shuttle, ron_coverage))]
mod table {
    // Plain `core` atomics even under loom or shuttle: these counters are an
    // instrument outside the model, and must not add schedule points.
    use core::sync::atomic::{AtomicPtr, AtomicU64, AtomicUsize, Ordering};

    pub(super) struct Entry {
        name: AtomicPtr<u8>,
        len: AtomicUsize,
        hits: AtomicU64,
    }

    #[allow(clippy::declare_interior_mutable_const)]
    const EMPTY: Entry = Entry {
        name: AtomicPtr::new(core::ptr::null_mut()),
        len: AtomicUsize::new(0),
        hits: AtomicU64::new(0),
    };

    pub(super) static TABLE: [Entry; super::CAPACITY] = [EMPTY; super::CAPACITY];

    impl Entry {
        pub(super) fn name(&self) -> Option<&'static str> {
            // Acquire: pairs with the Release store of `name` in `find`,
            // which comes after the store of `len`.
            let p = self.name.load(Ordering::Acquire);
            if p.is_null() {
                return None;
            }
            let len = self.len.load(Ordering::Relaxed); // ordered by the Acquire above
            // SAFETY: a non-null `name` was stored by `find` from a
            // `&'static str` whose length it stored in `len` before (Release
            // then Acquire above); static strings live forever and are UTF-8.
            Some(unsafe { core::str::from_utf8_unchecked(core::slice::from_raw_parts(p, len)) })
        }
    }

    /// The entry of `name`, claiming a free one if it has none yet.
    pub(super) fn find(name: &'static str, claim: bool) -> Option<&'static Entry> {
        for e in TABLE.iter() {
            match e.name() {
                Some(n) if n == name => return Some(e),
                Some(_) => continue,
                None if !claim => return None,
                None => {
                    // Claim the slot with a CAS on `len` (0 = free; names are
                    // non-empty), then publish the pointer. Relaxed: the
                    // Release store of `name` below publishes `len`.
                    if e.len
                        .compare_exchange(0, name.len(), Ordering::Relaxed, Ordering::Relaxed)
                        .is_ok()
                    {
                        // Release: publishes `len` with the pointer.
                        e.name.store(name.as_ptr().cast_mut(), Ordering::Release);
                        return Some(e);
                    }
                    // Lost the race for this entry: wait until its name is
                    // visible, then compare.
                    while e.name().is_none() {
                        core::hint::spin_loop();
                    }
                    if e.name() == Some(name) {
                        return Some(e);
                    }
                }
            }
        }
        None
    }

    pub(super) fn bump(e: &Entry) {
        e.hits.fetch_add(1, Ordering::Relaxed); // a counter; no data rides on it
    }

    pub(super) fn hits(e: &Entry) -> u64 {
        e.hits.load(Ordering::Relaxed) // read after the threads were joined
    }

    pub(super) fn clear(e: &Entry) {
        e.hits.store(0, Ordering::Relaxed); // test set-up, single-threaded
    }
}

/// Counts one pass through path `name` (a no-op unless [`ENABLED`]).
#[inline]
pub fn record(name: &'static str) {
    #[cfg(any(loom, miri, shuttle, ron_coverage))]
    if let Some(e) = table::find(name, true) {
        table::bump(e);
    }
    #[cfg(not(any(loom, miri, shuttle, ron_coverage)))]
    let _ = name;
}

/// How often path `name` was reached since the last [`reset`] (0 when the
/// counters are compiled out).
pub fn count(name: &str) -> u64 {
    #[cfg(any(loom, miri, shuttle, ron_coverage))]
    for e in table::TABLE.iter() {
        match e.name() {
            Some(n) if n == name => return table::hits(e),
            Some(_) => {}
            None => break,
        }
    }
    let _ = name;
    0
}

/// Sets every counter back to zero (names stay registered).
pub fn reset() {
    #[cfg(any(loom, miri, shuttle, ron_coverage))]
    for e in table::TABLE.iter() {
        table::clear(e);
    }
}

/// Every path name seen so far with its count, in first-seen order.
pub fn snapshot() -> impl Iterator<Item = (&'static str, u64)> {
    #[cfg(any(loom, miri, shuttle, ron_coverage))]
    let it = table::TABLE
        .iter()
        .map_while(|e| e.name().map(|n| (n, table::hits(e))));
    #[cfg(not(any(loom, miri, shuttle, ron_coverage)))]
    let it = core::iter::empty();
    it
}

/// Marks a protocol path: `hit!("ron_raw.takeover")`. Expands to nothing
/// unless the counters are compiled in.
#[allow(unused_macros)] // until a lock marks a path
macro_rules! hit {
    ($name:literal) => {
        #[cfg(any(loom, miri, shuttle, ron_coverage))]
        $crate::coverage::record($name);
    };
}
#[allow(unused_imports)] // until a lock marks a path
pub(crate) use hit;
