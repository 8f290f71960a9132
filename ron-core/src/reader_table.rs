//! The process-wide visible-readers table of [`RonRw`](crate::RonRw).
//!
//! A reader-writer lock whose readers all increment one counter makes that
//! counter's cache line travel to every reading core: reads do not scale.
//! In the spirit of BRAVO (Dice and Kogan, USENIX ATC'19), a [`RonRw`](crate::RonRw)
//! whose read traffic is heavy lets its readers announce themselves here
//! instead: one cache-line-sized slot per (lock, reader group), so readers
//! in different groups write different lines, and a lock pays for the
//! table only while it is biased towards readers (the lock itself adds 4
//! bytes, its table id).
//!
//! * [`TABLE_SLOTS`] slots of 128 bytes (128 KiB of zeroed static memory,
//!   pages the process never touches cost nothing).
//! * A slot is one `u64`: the owning lock's id in the high half, a reader
//!   count in the low half; `0` is free. A reader claims a free slot or
//!   joins one tagged with its lock's id (one CAS); a slot tagged by
//!   another lock is a collision and the reader takes the lock's central
//!   counter instead. The last reader out frees the slot.
//! * The slots of lock `id` are [`LOCK_SLOTS`] consecutive ones from a hash
//!   of `id`; a reader of group `g` uses number `g % LOCK_SLOTS`, and a
//!   writer that revokes the bias checks all [`LOCK_SLOTS`] of them.
//! * Ids are handed out once per lock (the first time it is biased) and
//!   never reused: a slot left counted by a forgotten read guard keeps
//!   only its own lock read-locked, as a forgotten guard must. After
//!   `u32::MAX - 1` ids the table is closed and new locks stay unbiased.

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicU64, Ordering};

/// Slots in the process-wide table.
#[cfg(not(loom))]
pub const TABLE_SLOTS: usize = 1024;
/// Slots in the process-wide table (small under loom).
#[cfg(loom)]
pub const TABLE_SLOTS: usize = 4;

/// Slots one lock's readers spread over (reader groups per lock): a writer
/// revoking the bias loads this many lines.
#[cfg(not(loom))]
pub const LOCK_SLOTS: usize = 32;
/// Slots one lock's readers spread over (small under loom).
#[cfg(loom)]
pub const LOCK_SLOTS: usize = 2;

const COUNT_MASK: u64 = u32::MAX as u64;

/// The table (see the [module docs](self)).
pub(crate) struct ReaderTable {
    slots: [CachePadded<AtomicU64>; TABLE_SLOTS],
}

impl ReaderTable {
    crate::sync::const_fn_unless_loom! {
        /// An empty table.
        fn new() -> ReaderTable {
            ReaderTable {
                slots: crate::sync::array_init!(TABLE_SLOTS, CachePadded::new(AtomicU64::new(0))),
            }
        }
    }

    /// The slot of lock `id` for reader group `group` (any value).
    #[inline]
    pub(crate) fn index(id: u32, group: usize) -> usize {
        // Fibonacci hashing spreads consecutive ids over the table.
        let base = (id as usize).wrapping_mul(0x9E37_79B9) % TABLE_SLOTS;
        (base + group % LOCK_SLOTS) % TABLE_SLOTS
    }

    /// Counts a reader of lock `id` in slot `i`; `false` (and nothing
    /// changed) if the slot belongs to another lock or its count is full.
    #[inline]
    pub(crate) fn enter(&self, i: usize, id: u32) -> bool {
        let slot = &self.slots[i % TABLE_SLOTS];
        let tag = (id as u64) << 32;
        // Relaxed: a first guess for the CAS, which decides.
        let mut v = slot.load(Ordering::Relaxed);
        loop {
            let new = if v == 0 {
                tag | 1
            } else if v & !COUNT_MASK == tag && v & COUNT_MASK < COUNT_MASK {
                v + 1
            } else {
                return false;
            };
            // Relaxed: the reader's ordering against writers comes from
            // the SeqCst fence it runs next (the publication race,
            // `ron_rw.rs`), and its data from the lock word's Acquire.
            match slot.compare_exchange_weak(v, new, Ordering::Relaxed, Ordering::Relaxed) {
                Ok(_) => return true,
                Err(cur) => v = cur,
            }
        }
    }

    /// Takes back a reader that [`enter`](Self::enter) counted in slot `i`
    /// for lock `id`; the last one frees the slot.
    #[inline]
    pub(crate) fn leave(&self, i: usize, id: u32) {
        let slot = &self.slots[i % TABLE_SLOTS];
        let tag = (id as u64) << 32;
        // Relaxed: a first guess for the CAS.
        let mut v = slot.load(Ordering::Relaxed);
        loop {
            debug_assert!(v & !COUNT_MASK == tag && v & COUNT_MASK > 0);
            let new = if v == tag | 1 { 0 } else { v - 1 };
            // Release: the reader's critical section happens before a
            // writer's Acquire load that sees the count drop.
            match slot.compare_exchange_weak(v, new, Ordering::Release, Ordering::Relaxed) {
                Ok(_) => return,
                Err(cur) => v = cur,
            }
        }
    }

    /// Whether any reader of lock `id` is counted in its slots (Acquire:
    /// a `false` happens after every counted reader's `leave`).
    #[inline]
    pub(crate) fn occupied(&self, id: u32) -> bool {
        let tag = (id as u64) << 32;
        (0..LOCK_SLOTS).any(|g| {
            // Acquire: pairs with `leave`'s Release.
            let v = self.slots[Self::index(id, g)].load(Ordering::Acquire);
            v & !COUNT_MASK == tag && v & COUNT_MASK != 0
        })
    }
}

#[cfg(not(loom))]
static TABLE: ReaderTable = ReaderTable::new();

#[cfg(loom)]
loom::lazy_static! {
    static ref TABLE: ReaderTable = ReaderTable::new();
}

/// The process-wide table (under loom, one per execution).
#[inline]
pub(crate) fn global() -> &'static ReaderTable {
    &TABLE
}

/// The next lock id (plain `core` atomic also under loom and shuttle: ids
/// only need to be unique, and this is no part of the protocol).
static NEXT_ID: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(1);

/// A fresh lock id, or `None` once all are used.
pub(crate) fn new_id() -> Option<u32> {
    use core::sync::atomic::Ordering as O;
    // Relaxed: uniqueness comes from the RMW alone.
    let mut n = NEXT_ID.load(O::Relaxed);
    loop {
        if n == u32::MAX {
            return None;
        }
        match NEXT_ID.compare_exchange_weak(n, n + 1, O::Relaxed, O::Relaxed) {
            Ok(_) => return Some(n),
            Err(cur) => n = cur,
        }
    }
}
