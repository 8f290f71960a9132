//! The process-wide visible-readers table of [`RonRw`](crate::RonRw).
//!
//! A reader-writer lock whose readers all increment one counter makes that
//! counter's cache line travel to every reading core: reads do not scale.
//! In the spirit of BRAVO (Dice and Kogan, USENIX ATC'19), a [`RonRw`](crate::RonRw)
//! whose read traffic is heavy lets its readers announce themselves here
//! instead: cache-line-sized slots per lock, one per CPU of the route up to
//! [`LOCK_SLOTS`] (neighbours on the route share one beyond that), so
//! readers on different CPUs write different lines, and a lock pays for the
//! table only while it is biased towards readers (the lock itself adds 4
//! bytes, its table id).
//!
//! * [`TABLE_SLOTS`] slots of 128 bytes (512 KiB of zeroed static memory;
//!   pages the process never touches cost nothing).
//! * A slot is one `u64`: the lock id that last claimed it in the high
//!   half, a reader count in the low half; `0` is a slot never used. A
//!   reader of the lock whose id the slot carries joins it with one
//!   `fetch_add` and leaves with one `fetch_sub`; the slot keeps its id
//!   when its count drops to zero (idle), so the next reader of that lock
//!   pays one RMW too. A reader finding a slot with another lock's id
//!   claims it with a CAS if that slot is idle; a slot busy with another
//!   lock's readers is a collision and the reader takes the lock's central
//!   counter instead. A reader whose `fetch_add` raced with a claim (the
//!   result carries another id) takes its count back at once; the other
//!   lock's writer may see that count for that moment and wait for it.
//! * A lock's id also fixes its number of slots, [`slots_of`]`(id)`: the
//!   installed route's CPUs when the lock was first biased, rounded up to
//!   a power of two, at most [`LOCK_SLOTS`] (32 with no route installed).
//!   The slots of lock `id` are that many consecutive ones from a hash of
//!   `id`; a reader on CPU `c` uses number
//!   [`route::slot_of`](crate::route::slot_of)`(c, slots_of(id))` (its
//!   share of the route, so CPUs that share a slot are route neighbours;
//!   any `c` is safe), and a writer that revokes the bias checks all of
//!   them: on a 2-CPU machine a revocation loads 2 lines, on 256 CPUs
//!   256, prefetched first so that their misses overlap (a scan's loads
//!   are independent). The table holds 16 locks of 256 slots side by side; the slots
//!   of more locks overlap, and a reader that finds its slot busy with
//!   another lock's readers counts in centrally (correct, only slower).
//! * Ids are handed out once per lock (the first time it is biased) and
//!   never reused: a slot left counted by a forgotten read guard keeps
//!   only its own lock read-locked, as a forgotten guard must. After
//!   2^28 - 1 ids the table is closed and new locks stay unbiased.

use crossbeam_utils::CachePadded;

use crate::sync::{AtomicU64, Ordering};

/// Slots in the process-wide table.
#[cfg(not(any(loom, miri)))]
pub const TABLE_SLOTS: usize = 4096;
/// Slots in the process-wide table (fewer under Miri, which interprets
/// every byte of it: the tests install no route, so a lock there uses 32).
#[cfg(all(miri, not(loom)))]
pub const TABLE_SLOTS: usize = 1024;
/// Slots in the process-wide table (small under loom).
#[cfg(loom)]
pub const TABLE_SLOTS: usize = 4;

/// Slots of a lock biased while no route is installed (readers then use
/// the slot of their CPU id modulo this).
const DEFAULT_SLOTS: usize = if LOCK_SLOTS < 32 { LOCK_SLOTS } else { 32 };

/// Most slots one lock's readers spread over: a writer revoking the bias
/// loads this many lines.
#[cfg(not(loom))]
pub const LOCK_SLOTS: usize = 256;
// A revocation's scan is one window of misses (`sync::prefetch_lines`).
const _: () = assert!(LOCK_SLOTS <= crate::sync::PREFETCH_WINDOW);
/// Most slots one lock's readers spread over (small under loom).
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

    /// The table index of slot number `n` of lock `id` (any `n`: taken
    /// modulo the lock's slots).
    #[inline]
    pub(crate) fn index(id: u32, n: usize) -> usize {
        // Fibonacci hashing spreads consecutive ids over the table.
        let base = (id as usize).wrapping_mul(0x9E37_79B9) % TABLE_SLOTS;
        (base + (n & (slots_of(id) - 1))) % TABLE_SLOTS
    }

    /// Counts a reader of lock `id` in slot `i`; `false` (and nothing
    /// left changed) if the slot is busy with another lock's readers or
    /// its count is implausibly high (forgotten guards).
    #[inline]
    pub(crate) fn enter(&self, i: usize, id: u32) -> bool {
        let slot = &self.slots[i % TABLE_SLOTS];
        let tag = (id as u64) << 32;
        // Relaxed: steers between join and claim; the RMWs decide.
        let v = slot.load(Ordering::Relaxed);
        if v & !COUNT_MASK == tag {
            // Relaxed (both RMWs): the reader's ordering against writers
            // comes from the SeqCst fence it runs next (the publication
            // race, `ron_rw.rs`), and its data from the lock word's Acquire.
            let old = slot.fetch_add(1, Ordering::Relaxed);
            if old & !COUNT_MASK == tag && old & COUNT_MASK < COUNT_LIMIT {
                crate::coverage::hit!("reader_table.join");
                return true;
            }
            crate::coverage::hit!("reader_table.join_raced");
            // Claimed by another lock since our look (or full): take the
            // count back (it never made this lock's reader visible).
            slot.fetch_sub(1, Ordering::Relaxed);
            return false;
        }
        if v & COUNT_MASK != 0 {
            crate::coverage::hit!("reader_table.busy");
            return false; // busy with another lock's readers
        }
        // Relaxed: as above; an idle slot (count 0) of any lock is ours to
        // take, and the CAS fails if anyone counted in meanwhile.
        let claimed = slot
            .compare_exchange(v, tag | 1, Ordering::Relaxed, Ordering::Relaxed)
            .is_ok();
        if claimed {
            crate::coverage::hit!("reader_table.claim");
        }
        claimed
    }

    /// Takes back a reader that [`enter`](Self::enter) counted in slot `i`
    /// (the slot keeps its lock's id).
    #[inline]
    pub(crate) fn leave(&self, i: usize) {
        let slot = &self.slots[i % TABLE_SLOTS];
        // Release: the reader's critical section happens before a writer's
        // Acquire load that sees the count drop (every other change of the
        // slot is an RMW, so the release sequence reaches that load).
        let old = slot.fetch_sub(1, Ordering::Release);
        debug_assert!(old & COUNT_MASK > 0, "a table slot left below zero");
    }

    /// Whether slot number `g` of lock `id` counts readers of it
    /// (Acquire: a `false` happens after the `leave` of every reader
    /// counted there before, through the slot's chain of RMWs).
    #[inline]
    fn busy(&self, id: u32, g: usize) -> bool {
        // Acquire: pairs with `leave`'s Release.
        let v = self.slots[Self::index(id, g)].load(Ordering::Acquire);
        v & !COUNT_MASK == (id as u64) << 32 && v & COUNT_MASK != 0
    }

    /// Whether any reader of lock `id` is counted in its slots (a
    /// `false` happens after every counted reader's `leave`).
    #[inline]
    pub(crate) fn occupied(&self, id: u32) -> bool {
        self.prefetch(id);
        (0..slots_of(id)).any(|g| self.busy(id, g))
    }

    /// Prefetches the lines of lock `id`'s slots before a scan of them:
    /// the scan's loads are independent, so their misses may overlap.
    #[inline]
    fn prefetch(&self, id: u32) {
        crate::sync::prefetch_lines((0..slots_of(id)).map(|g| &*self.slots[Self::index(id, g)]));
    }

    /// Waits until the readers of lock `id` counted before the caller's
    /// `SeqCst` fence have left: one pass over the lock's slots, waiting at
    /// each busy slot until it reads empty once. That is enough: such a
    /// reader's count is in every value the caller reads after its fence,
    /// and only leaves; a reader counted after the fence backs off (it
    /// sees the writer's flag) and only adds a count it takes back, so an
    /// empty read means the former have all left. `step` runs between
    /// looks, and `false` from it gives up (`None`); else whether any slot
    /// was busy.
    pub(crate) fn wait_empty(&self, id: u32, mut step: impl FnMut() -> bool) -> Option<bool> {
        let mut found = false;
        self.prefetch(id);
        for g in 0..slots_of(id) {
            while self.busy(id, g) {
                found = true;
                crate::coverage::hit!("reader_table.wait_slot");
                if !step() {
                    return None;
                }
            }
        }
        Some(found)
    }
}

/// Above this count a slot refuses new readers (only forgotten guards
/// get there): a count can then never carry into the id.
const COUNT_LIMIT: u64 = COUNT_MASK / 2;

/// Bits of an id that give its number of slots (log2).
const SLOTS_BITS: u32 = 4;

/// The number of table slots lock `id` uses (a power of two, at most
/// [`LOCK_SLOTS`]).
#[inline]
pub fn slots_of(id: u32) -> usize {
    (1usize << (id & ((1 << SLOTS_BITS) - 1))).min(LOCK_SLOTS)
}

/// Slots for a lock biased now: one per CPU of the installed route (a
/// power of two, at most [`LOCK_SLOTS`]), else [`DEFAULT_SLOTS`].
fn slots_now() -> usize {
    match crate::route::len() {
        0 => DEFAULT_SLOTS,
        n => n.next_power_of_two().min(LOCK_SLOTS),
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

/// The next lock serial (plain `core` atomic also under loom and shuttle:
/// ids only need to be unique, and this is no part of the protocol).
static NEXT_ID: core::sync::atomic::AtomicU32 = core::sync::atomic::AtomicU32::new(1);

/// A fresh lock id (never 0; its low bits give [`slots_of`]), or `None`
/// once all are used.
pub(crate) fn new_id() -> Option<u32> {
    use core::sync::atomic::Ordering as O;
    const LAST: u32 = u32::MAX >> SLOTS_BITS;
    // Relaxed: uniqueness comes from the RMW alone.
    let mut n = NEXT_ID.load(O::Relaxed);
    loop {
        if n >= LAST {
            return None;
        }
        match NEXT_ID.compare_exchange_weak(n, n + 1, O::Relaxed, O::Relaxed) {
            Ok(_) => break,
            Err(cur) => n = cur,
        }
    }
    Some((n << SLOTS_BITS) | slots_now().trailing_zeros())
}
