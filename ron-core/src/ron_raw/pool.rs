//! The process-wide pools of slot blocks that the pooled RON locks borrow
//! from while they have registered waiters: `RonRaw`, `NxtRon` and
//! `RonPlock` share one pool of [`SlotTable`] blocks, `RonTicket` has its
//! own of ticket slots (a [`Pool`] is generic over the block's slot layout,
//! [`BlockSlots`]; the machinery below is the same for every layout).
//!
//! A [`Block`] is [`BLOCK_SLOTS`] route-ordered slots (the waiting rooms
//! of one lock; it uses the first [`active_slots`]),
//! a reference count and the lock's handover count. A lock holds no block
//! while it is uncontended; the first waiter that wants to register
//! *claims* a free block (a CAS of its count `0 -> 2`: one reference for
//! the lock, one for itself; the same CAS starts the block's next
//! *generation*), cleans it and *publishes* it in the lock (a CAS of the
//! lock's 32-bit `home` `0 -> (i, g)`: index `i` names the pool's block
//! `i - 1`, its own blocks first, then the grown chunks in order, and `g`
//! is the generation of the claim, in the bits above the index). Later
//! waiters *use* it: count `+1`, then check that the count they found was
//! open (no `CLOSED` flag) and that the lock still names the block in the
//! same generation (else `-1` and look again). A waiter keeps its
//! reference across its rounds until it gets the lock (or finds the block
//! detached), a releaser for its scan; the user whose drop leaves only the lock's
//! reference *returns* the block: it *closes* it (a CAS of the count
//! `1 -> CLOSED` in its generation, which fails if a user entered
//! meanwhile), detaches it from the lock (CAS `(i, g) -> 0`) and drops the
//! lock's reference with the flag; a count of 0 means free. A user whose
//! increment finds `CLOSED` set undoes it and looks again.
//!
//! | `refs` (generation `g`) | the block is | who leaves the state |
//! |---|---|---|
//! | `(g, 0)` | free | a claim: `(g + 1, 2)` |
//! | `(g, 2)`, not yet named | claimed | its publication, or `-2` when another claim was published first (free again) |
//! | `(g, n >= 1)`, named by its lock | attached: the lock's reference and `n - 1` users | a use (`+1`), a drop (`-1`), the close of a drop that left 1 |
//! | `(g, CLOSED)` | being returned | its closer: detach, then `-CLOSED` (free); a failed detach reopens it (`(g, 1)`) |
//!
//! (On top of any of these, the momentary `+1` of entries whose check
//! fails.)
//!
//! So the blocks in use follow the locks that have registered waiters at
//! that moment, and **a block is never detached while a user holds a
//! reference** to it: every registered waiter sits in the block its lock
//! names, where every releaser looks.
//!
//! An index, not a pointer, keeps `RonRaw` at 8 bytes (its lock word and
//! the index). Mapping an index to its block is a slice index for the
//! pool's own blocks and one more (Acquire) load, of the chunk's pointer,
//! for a grown one; it needs the pool, so a lock must use one pool for its
//! whole life (the process-wide one, unless a model passes its own). A
//! lock used with two pools anyway stays a lock (exclusion is the lock
//! word's): an index the other pool does not hold maps to no block (its
//! waiters there wait unregistered), and one it holds names a block that
//! may belong to another lock, which costs route order and may strand a
//! block, as any stale answer would; blocks are still type-stable atomics.
//!
//! The handover count (the `seq` of a `HANDED` word, see `word.rs`) lives
//! in the block, on the line of its reference count, which a releaser
//! touches anyway: a handover happens only while the lock has a block and
//! the releaser holds a reference to it. A claim does not reset it.
//!
//! ## Reclamation
//! Blocks are type-stable: they live in the pool for the whole process and
//! are never freed, only recycled, so a stale block index is never a
//! use-after-free, only a wasted look. And a block is never claimed by
//! another lock while anyone of the old one can still touch it: while the
//! lock names a block its count includes the lock's reference (set by
//! the claim, dropped only by whoever detached it), every user holds a
//! reference from before its check until after its last access, and a claim
//! needs a count of 0. A user whose check fails never touches the slots.
//! A user that passed its check holds the block attached: the close needs
//! the count at exactly the lock's reference, and a user that increments
//! after the close sees the flag, or (once the block is detached) its lock
//! no longer naming the block in that generation, and fails its check.
//!
//! The generation (19 bits; 1 under loom, so that the models reach its
//! wrap) keeps a delayed returner out of a later claim of its block: a
//! returner preempted between its decrement and its close closes only its
//! own claim (its CAS expects its generation). Only a wrap of the
//! generations within that delay (`1 << 19` claims of one block) lets it
//! close another lock's block whose count is at 1 (that claim's last user
//! decremented and has yet to close); its detach then fails on its own
//! lock's `home`, and it *reopens* the block (count back to 1, the
//! owner's reference). That last user's close failed on the flag: it
//! waits for the flag to go and, if its lock still names the block, closes
//! it again, so the block is returned as if the delayed returner had not
//! been there.
//!
//! An entry delayed between its load of `home` and its increment may count
//! itself, for a moment, into a later claim of the block (by another
//! lock); its check fails and it undoes the count. If that claim's last
//! user tried its close in that moment, the close failed on the count,
//! and the block stays attached to its idle lock until that lock is next
//! contended (and out of the pool for good if the lock is dropped first):
//! a stranded block, never a lost guarantee. Entering by a CAS that
//! expects the generation would close this window but costs a retry on
//! the count's line whenever entries and drops meet.
//!
//! ## What the orderings buy
//! For `RonRaw`, route order, nothing else. Exclusion is the lock word's
//! alone, and progress does not need the slots either (waiters poll the
//! lock word, and a handover to a slot nobody waits in is taken over).
//! The pool's accounting holds under any ordering: the reference count
//! changes only by read-modify-writes, which every thread sees in one
//! order, so a block is never claimed (`0 -> 2`) while anyone holds a
//! reference; and blocks are type-stable atomics, so a stale index is
//! never undefined behaviour. What the `SeqCst` of the count, the index
//! and the claim buy is that a block's slot words are seen clean by its
//! new users and that the last users' slot updates cannot land after a
//! claim's cleaning: a weakened one could leave a stale count or doorbell
//! in a fresh block (handovers to an empty slot, each taken over after
//! `PATIENCE_NS`) or let a waiter register in a block just detached (it
//! loses its route position).
//!
//! For the grant locks (`RonTicket`, `NxtRon`, `RonPlock`) the same
//! orderings are **progress**: a grant is never taken over, so a count (or
//! an unserved ticket) left behind in a fresh block would have a releaser
//! grant an empty slot and leave the lock handed to nobody. Exclusion
//! still does not depend on them (a grant is set only by the holder, under
//! a reference, and taken by one CAS). No test can tell a weakened one: loom
//! appends every store at the end of the modification order, and x86
//! compiles these read-modify-writes the same either way. `.ci/mutants`
//! lists them as annotated survivors.
//!
//! The generation needs no ordering of its own: it travels in the count's
//! read-modify-writes. A returner whose close failed on another
//! closer's flag waits for the flag to go and then reads `home` (SeqCst,
//! after the detach that preceded the flag's clearing): a stale read
//! there only closes a block whose count is 1 in the returner's
//! generation, which its own detach CAS then settles.

//! ## Size and growth
//! [`POOL_BLOCKS`] static blocks exist (about 2.2 KiB each, zero-initialised
//! static memory: pages the process never touches cost nothing). With
//! `std`, a claim that finds them all in use allocates the next chunk of
//! [`GROW_CHUNK`] blocks (at most [`GROW_CHUNKS`] chunks, published in
//! order with a CAS; a claimer that loses the race frees its unpublished
//! chunk and uses the winner's); chunks are leaked, so blocks stay
//! type-stable. [`set_pool_limit`] lets a program use fewer blocks.
//!
//! ## Exhaustion
//! When no block is free (all [`POOL_MAX_BLOCKS`] in use, or the limit
//! reached) a waiter simply waits unregistered for the round (TTAS on the
//! lock word, then a yield) and tries again next round: no error, no hang,
//! only the route order is lost. A block is needed only per lock with a
//! registered waiter at that moment, so the pool runs out only when more
//! locks than that are contended at once.

use crossbeam_utils::CachePadded;

use crate::slots::SlotTable;
#[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
use crate::sync::AtomicPtr;
use crate::sync::{AtomicU32, AtomicU64, AtomicUsize, Ordering};

/// Slots in a block (the `S` of the pooled `RonRaw`): 256 with `std`, so
/// that machines of up to 256 CPUs get one slot per CPU (waiters of one
/// slot share a doorbell, and every ring sends them all a miss); 16 without
/// `std` and under the model checkers and Miri. A lock uses only the first
/// [`active_slots`] of them, and a claim cleans only those: on a small
/// machine a block costs a few lines, not 32 KiB.
#[cfg(all(feature = "std", not(loom), not(shuttle), not(miri)))]
pub const BLOCK_SLOTS: usize = 256;
/// Slots in a block (the `S` of the pooled `RonRaw`): 16 without `std`
/// and under the model checkers and Miri (256 with `std`).
#[cfg(not(all(feature = "std", not(loom), not(shuttle), not(miri))))]
pub const BLOCK_SLOTS: usize = 16;
// A claim's clean of the slot words is one window of misses
// (`sync::prefetch_lines`).
const _: () = assert!(BLOCK_SLOTS <= crate::sync::PREFETCH_WINDOW);

/// The slots of a block a `RonRaw` uses: one per CPU of the installed
/// route (its length rounded up to a power of two), at most
/// [`BLOCK_SLOTS`]; 16 (or `BLOCK_SLOTS` if fewer) while no route is
/// installed. It only ever grows (a shorter route installed later keeps
/// the larger count), so every slot a waiter ever used lies below it, and
/// cleaning a block's first `active_slots()` slots cleans all its dirt.
#[inline]
pub fn active_slots() -> usize {
    #[cfg(any(loom, shuttle, miri))]
    {
        BLOCK_SLOTS
    }
    #[cfg(not(any(loom, shuttle, miri)))]
    {
        // Plain atomics: a process-wide setting outside any lock's protocol.
        use core::sync::atomic::{AtomicUsize as A, Ordering as O};
        static ACTIVE: A = A::new(0);
        let want = match crate::route::len() {
            0 => 16.min(BLOCK_SLOTS),
            n => n.next_power_of_two().min(BLOCK_SLOTS),
        };
        // Relaxed: the count only steers which slots waiters use; any
        // value up to BLOCK_SLOTS is safe, and it only grows.
        let cur = ACTIVE.load(O::Relaxed);
        if want <= cur {
            return cur;
        }
        ACTIVE.fetch_max(want, O::Relaxed).max(want)
    }
}

/// Static blocks of the process-wide pool (the whole pool without `std`).
pub const POOL_BLOCKS: usize = 256;

/// Blocks the process-wide pool allocates at a time once its static blocks
/// are all in use (`std` only).
pub const GROW_CHUNK: usize = 256;

/// Most chunks of [`GROW_CHUNK`] blocks the process-wide pool allocates
/// (`std` only): with the static ones at most
/// `POOL_BLOCKS + GROW_CHUNKS * GROW_CHUNK` = 4096 blocks, about 8.5 MiB.
pub const GROW_CHUNKS: usize = 15;

/// Most blocks the process-wide pool can hold: [`POOL_BLOCKS`], plus the
/// chunks it may allocate with `std`.
pub const POOL_MAX_BLOCKS: usize = if GROWS {
    POOL_BLOCKS + GROW_CHUNKS * GROW_CHUNK
} else {
    POOL_BLOCKS
};

/// Whether the process-wide pool grows: with `std`, and not under the
/// model checkers or the virtual machine (their atomics live per run).
const GROWS: bool = cfg!(all(feature = "std", not(loom), not(shuttle), not(ron_vm)));

/// Bits of a lock's block index (its `home`) that name the block: index
/// `i` names the pool's block `i - 1`, 0 none.
const INDEX_BITS: u32 = 13;

/// Most blocks a pool hands out: what [`INDEX_BITS`] can name.
const MAX_INDEX: usize = (1 << INDEX_BITS) - 1;
const _: () = assert!(POOL_MAX_BLOCKS <= MAX_INDEX);

/// Bits of a block's generation: the rest of a `home` above the index (1
/// under loom, so that the models reach a generation's wrap).
#[cfg(not(loom))]
const GEN_BITS: u32 = 32 - INDEX_BITS;
/// Bits of a block's generation (1 under loom: see above).
#[cfg(loom)]
const GEN_BITS: u32 = 1;

/// A block's reference count: the low 32 bits of its `refs` word.
const COUNT: u64 = u32::MAX as u64;

/// The `refs` word's flag for a block being returned: set (in place of the
/// lock's reference) by the returner's CAS from a count of 1, cleared once
/// the block is detached (or reopened).
const CLOSED: u64 = 1 << 32;

/// Where a block's generation sits in its `refs` word (the claims of the
/// block so far, wrapping at `GEN_BITS` bits).
const GEN_SHIFT: u32 = 40;

/// The generation of a `refs` word.
#[inline]
fn gen_of(refs: u64) -> u32 {
    (refs >> GEN_SHIFT) as u32 & ((1 << GEN_BITS) - 1)
}

/// The block index a `home` names (its generation masked off).
#[inline]
pub(crate) fn index_of(home: u32) -> u32 {
    home & MAX_INDEX as u32
}

/// The `home` of a lock whose block is the pool's block `index - 1`, in
/// generation `generation`: never 0 (`index >= 1`).
#[inline]
fn home_of(index: usize, generation: u32) -> u32 {
    index as u32 | generation << INDEX_BITS
}

pub(crate) mod sealed {
    pub trait Sealed {}
}

/// The slots of a pooled block: what one lock keeps per slot while it has
/// registered waiters. Implemented by [`SlotTable`] (`RonRaw`, `NxtRon`,
/// `RonPlock`) and by `RonTicket`'s ticket slots; sealed.
pub trait BlockSlots: Sized + Sync + sealed::Sealed + 'static {
    /// A free block's slots.
    #[cfg(not(loom))]
    #[doc(hidden)]
    #[allow(clippy::declare_interior_mutable_const)] // only to initialise blocks
    const FREE: Self;
    /// A free block's slots.
    #[cfg(loom)]
    #[doc(hidden)]
    fn free() -> Self;
    /// Readies the first `n` slots of a block just claimed (no other thread
    /// touches them) for its new lock.
    #[doc(hidden)]
    fn clean_within(&self, n: usize);
    /// The coverage counters of this layout's pool paths.
    #[doc(hidden)]
    const PATHS: &'static PoolPaths;
}

/// Names of a pool's paths for the coverage counters, per slot layout.
#[doc(hidden)]
pub struct PoolPaths {
    claim: &'static str,
    #[cfg_attr(not(any(loom, miri, shuttle, ron_coverage)), allow(dead_code))]
    reuse: &'static str,
    use_: &'static str,
    stale: &'static str,
    closed_seen: &'static str,
    ret: &'static str,
    reopened: &'static str,
    reclosed: &'static str,
    publish_lost: &'static str,
    exhausted: &'static str,
    #[cfg_attr(any(loom, shuttle, ron_vm, not(feature = "std")), allow(dead_code))]
    grow: &'static str,
}

impl PoolPaths {
    /// The names under `prefix` (one literal per layout).
    pub(crate) const fn named(names: [&'static str; 11]) -> PoolPaths {
        let [
            claim,
            reuse,
            use_,
            stale,
            closed_seen,
            ret,
            reopened,
            reclosed,
            publish_lost,
            exhausted,
            grow,
        ] = names;
        PoolPaths {
            claim,
            reuse,
            use_,
            stale,
            closed_seen,
            ret,
            reopened,
            reclosed,
            publish_lost,
            exhausted,
            grow,
        }
    }
}

/// Counts `path` (compiled away unless the coverage counters are in).
#[inline(always)]
fn mark(path: &'static str) {
    if crate::coverage::ENABLED {
        crate::coverage::record(path);
    }
}

impl sealed::Sealed for SlotTable<BLOCK_SLOTS> {}

impl BlockSlots for SlotTable<BLOCK_SLOTS> {
    #[cfg(not(loom))]
    const FREE: Self = SlotTable::new();
    #[cfg(loom)]
    fn free() -> Self {
        SlotTable::new()
    }
    fn clean_within(&self, n: usize) {
        SlotTable::clean_within(self, n)
    }
    // The names predate the other users of this layout (`NxtRon`, `RonPlock`).
    const PATHS: &'static PoolPaths = &PoolPaths::named([
        "ron_raw.pool_claim",
        "ron_raw.pool_reuse",
        "ron_raw.pool_use",
        "ron_raw.pool_stale",
        "ron_raw.pool_closed_seen",
        "ron_raw.pool_return",
        "ron_raw.pool_reopened",
        "ron_raw.pool_reclosed",
        "ron_raw.pool_publish_lost",
        "ron_raw.pool_exhausted",
        "ron_raw.pool_grow",
    ]);
}

/// One lock's waiting rooms while it is contended, its reference count and
/// the lock's handover count. `T` is the slot layout: `RonRaw`'s
/// [`SlotTable`] unless named.
pub struct Block<T: BlockSlots = SlotTable<BLOCK_SLOTS>> {
    head: CachePadded<Head>,
    slots: T,
    /// Whether the block was claimed before (counts reuse in the models).
    #[cfg(any(loom, miri, shuttle, ron_coverage))]
    claimed_before: core::sync::atomic::AtomicBool,
}

impl Block {
    crate::sync::const_fn_unless_loom! {
        /// A free block.
        pub fn new() -> Block {
            Block::new_of()
        }
    }
}

impl<T: BlockSlots> Block<T> {
    /// A free block of layout `T`.
    #[cfg(not(loom))]
    pub(crate) const fn new_of() -> Block<T> {
        Block {
            head: CachePadded::new(Head {
                refs: AtomicU64::new(0),
                handovers: AtomicU32::new(0),
            }),
            slots: T::FREE,
            #[cfg(any(miri, shuttle, ron_coverage))]
            claimed_before: core::sync::atomic::AtomicBool::new(false),
        }
    }

    /// A free block of layout `T`.
    #[cfg(loom)]
    pub(crate) fn new_of() -> Block<T> {
        Block {
            head: CachePadded::new(Head {
                refs: AtomicU64::new(0),
                handovers: AtomicU32::new(0),
            }),
            slots: T::free(),
            claimed_before: core::sync::atomic::AtomicBool::new(false),
        }
    }

    /// The block's slots (read without a reference only for a snapshot:
    /// blocks are type-stable).
    #[inline]
    pub(crate) fn slots(&self) -> &T {
        &self.slots
    }

    /// Current reference count: the waiters holding the block, plus a
    /// releaser during its scan (a snapshot: for tests, and for the
    /// fairness pause's count of waiters).
    #[doc(hidden)]
    pub fn refs(&self) -> u32 {
        (self.head.refs.load(Ordering::Relaxed) & COUNT) as u32 // a snapshot by contract
    }
}

impl Block {
    /// Slots with a registered waiter (a snapshot, for tests: 0 once every
    /// waiter is gone; a slot update that landed after a claim's cleaning
    /// would leave a count behind).
    #[doc(hidden)]
    pub fn occupied_slots(&self) -> usize {
        (0..BLOCK_SLOTS)
            .filter(|&s| !self.slots.slot_empty(s))
            .count()
    }
}

/// A block's first line: what a user and a releaser touch besides the slots.
struct Head {
    /// References: the lock's (while it names the block) and its users'
    /// (bits 0-31), the [`CLOSED`] flag, and the block's generation (from
    /// bit [`GEN_SHIFT`]).
    refs: AtomicU64,
    /// Handovers of the lock that names the block (wrapping; the `seq` of
    /// its `HANDED` words): written only by that lock's owner, while it
    /// holds a reference. Not reset by a claim.
    handovers: AtomicU32,
}

impl Default for Block {
    fn default() -> Self {
        Self::new()
    }
}

/// A set of blocks that locks claim from. The process-wide one is
/// [`global`]; loom models build their own. `T` is the blocks' slot
/// layout: `RonRaw`'s [`SlotTable`] unless named.
pub struct Pool<'a, T: BlockSlots = SlotTable<BLOCK_SLOTS>> {
    blocks: &'a [Block<T>],
    limit: AtomicUsize,
    /// Chunks of [`GROW_CHUNK`] blocks allocated (and leaked: blocks are
    /// type-stable) once `blocks` ran out; only the global pools with `std`.
    #[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
    chunks: Option<&'a [AtomicPtr<Block<T>>; GROW_CHUNKS]>,
}

impl<'a, T: BlockSlots> Pool<'a, T> {
    /// A pool over `blocks`, all of them usable.
    #[cfg(not(loom))]
    pub const fn new_in(blocks: &'a [Block<T>]) -> Self {
        Pool {
            blocks,
            limit: AtomicUsize::new(usize::MAX),
            #[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
            chunks: None,
        }
    }

    /// A pool over `blocks`, all of them usable.
    #[cfg(loom)]
    pub fn new_in(blocks: &'a [Block<T>]) -> Self {
        Pool {
            blocks,
            limit: AtomicUsize::new(usize::MAX),
        }
    }

    /// A pool over `blocks` that grows by the chunks of `chunks` (the
    /// process-wide pools).
    #[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
    pub(crate) const fn growing(
        blocks: &'a [Block<T>],
        chunks: &'a [AtomicPtr<Block<T>>; GROW_CHUNKS],
    ) -> Self {
        Pool {
            chunks: Some(chunks),
            ..Pool::new_in(blocks)
        }
    }

    /// Uses at most `n` of the pool's blocks for new claims (blocks in use
    /// stay in use).
    pub fn set_limit(&self, n: usize) {
        self.limit.store(n, Ordering::Relaxed); // a tuning knob, read by claims
    }

    /// Blocks usable for claims (allocated or not yet).
    pub fn limit(&self) -> usize {
        self.limit.load(Ordering::Relaxed).min(self.max_blocks()) // as above
    }

    /// Most blocks this pool can hold: its own, plus the chunks it may grow
    /// (and no more than a block index can name).
    fn max_blocks(&self) -> usize {
        #[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
        if self.chunks.is_some() {
            return (self.blocks.len() + GROW_CHUNKS * GROW_CHUNK).min(MAX_INDEX);
        }
        self.blocks.len().min(MAX_INDEX)
    }

    /// Blocks allocated so far: its own and the chunks it grew.
    pub fn allocated(&self) -> usize {
        self.blocks.len() + self.grown().count() * GROW_CHUNK
    }

    /// Blocks currently claimed (a snapshot).
    pub fn in_use(&self) -> usize {
        let grown = self.grown().flat_map(|c| c.iter());
        self.blocks
            .iter()
            .chain(grown)
            .filter(|b| b.refs() != 0)
            .count()
    }

    /// The block a lock's `home` names (its index: block `index - 1` of the
    /// pool's own blocks, then of the grown chunks in order; the generation
    /// above it is ignored); `None` for 0 (no block) and for an index this
    /// pool does not hold.
    #[inline]
    pub(crate) fn block(&self, home: u32) -> Option<&'a Block<T>> {
        let i = (index_of(home) as usize).checked_sub(1)?;
        match self.blocks.get(i) {
            Some(b) => Some(b),
            None => self.grown_block(i - self.blocks.len()),
        }
    }

    /// Block `j` of the grown chunks, if its chunk is published.
    fn grown_block(&self, j: usize) -> Option<&'a Block<T>> {
        self.chunk(j / GROW_CHUNK)?.get(j % GROW_CHUNK)
    }

    /// The `k`th grown chunk, if it is published.
    #[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
    fn chunk(&self, k: usize) -> Option<&'a [Block<T>]> {
        // Acquire: the chunk's blocks were initialised before the Release
        // CAS that published it.
        // mutants: as for the publishing CAS in `grow`.
        let p = self.chunks?.get(k)?.load(Ordering::Acquire);
        // SAFETY: a published chunk is a leaked `[Block<T>; GROW_CHUNK]`,
        // never freed; null means not (yet) published.
        (!p.is_null()).then(|| unsafe { core::slice::from_raw_parts(p, GROW_CHUNK) })
    }

    /// Without `std` (or under the model checkers) the pool never grows.
    #[cfg(not(all(feature = "std", not(loom), not(shuttle), not(ron_vm))))]
    fn chunk(&self, _k: usize) -> Option<&'a [Block<T>]> {
        None
    }

    /// The chunks allocated so far (published in order: the first
    /// unpublished one ends the list).
    fn grown(&self) -> impl Iterator<Item = &'a [Block<T>]> + '_ {
        (0..GROW_CHUNKS).map_while(|k| self.chunk(k))
    }

    /// Claims a free block for the lock at address `key`, with count 2 (the
    /// lock's reference and the caller's), cleaned; returns it with its
    /// index. `None` when none is free.
    fn claim(&self, key: usize) -> Option<(&'a Block<T>, u32)> {
        let limit = self.limit();
        let n = limit.min(self.blocks.len());
        if let Some(b) = Self::claim_in(&self.blocks[..n], key, 0) {
            return Some(b);
        }
        // The pool's own blocks are all in use: the grown chunks, then a
        // new chunk while the limit allows.
        let mut left = limit - n;
        let mut base = self.blocks.len();
        for chunk in self.grown() {
            if left == 0 {
                break;
            }
            let m = left.min(GROW_CHUNK);
            if let Some(b) = Self::claim_in(&chunk[..m], key, base) {
                return Some(b);
            }
            left -= m;
            base += GROW_CHUNK;
        }
        if left > 0
            && let Some((k, chunk)) = self.grow()
            && let Some(b) = Self::claim_in(
                &chunk[..left.min(GROW_CHUNK)],
                key,
                self.blocks.len() + k * GROW_CHUNK,
            )
        {
            return Some(b);
        }
        mark(T::PATHS.exhausted);
        None
    }

    /// Allocates and publishes the next chunk (or finds the one another
    /// claimer just published); returns it with its position among the
    /// chunks; `None` once all [`GROW_CHUNKS`] exist.
    #[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
    fn grow(&self) -> Option<(usize, &'a [Block<T>])> {
        let chunks = self.chunks?;
        let k = chunks
            .iter()
            // Relaxed: a guess at the first empty place; the CAS below
            // decides, and a chunk found there comes with its Acquire.
            .position(|c| c.load(Ordering::Relaxed).is_null())?;
        let new: std::boxed::Box<[Block<T>]> = (0..GROW_CHUNK).map(|_| Block::new_of()).collect();
        let p = std::boxed::Box::into_raw(new).cast::<Block<T>>();
        // Release: publishes the initialised blocks to `chunk`'s Acquire;
        // Acquire on failure: the winner's chunk, used below.
        // mutants: publishes a chunk's initialised blocks (without the
        // pair, their first use races with their initialisation); growth
        // is compiled out under loom and shuttle, and under Miri it takes
        // 256 locks contended at once: `pool_growth` runs it natively
        // only, on x86, which does not reorder these.
        match chunks[k].compare_exchange(
            core::ptr::null_mut(),
            p,
            Ordering::Release,
            Ordering::Acquire,
        ) {
            Ok(_) => {
                mark(T::PATHS.grow);
                // SAFETY: just published, leaked for good: `GROW_CHUNK` blocks.
                Some((k, unsafe { core::slice::from_raw_parts(p, GROW_CHUNK) }))
            }
            Err(theirs) => {
                // SAFETY: `p` came from `Box::into_raw` above and was never
                // published: we still own it.
                drop(unsafe {
                    std::boxed::Box::from_raw(core::ptr::slice_from_raw_parts_mut(p, GROW_CHUNK))
                });
                // SAFETY: `theirs` is a published chunk (see `chunk`).
                Some((k, unsafe {
                    core::slice::from_raw_parts(theirs, GROW_CHUNK)
                }))
            }
        }
    }

    /// Without `std` (or under the model checkers) the pool never grows.
    #[cfg(not(all(feature = "std", not(loom), not(shuttle), not(ron_vm))))]
    fn grow(&self) -> Option<(usize, &'a [Block<T>])> {
        None
    }

    /// Claims a free block among `blocks` (the pool's blocks from index
    /// `base + 1` on), probing at most 64 from a hash of `key` (exhaustion
    /// is a round of TTAS, not a scan of the pool); returns it with its
    /// index.
    fn claim_in(blocks: &'a [Block<T>], key: usize, base: usize) -> Option<(&'a Block<T>, u32)> {
        let n = blocks.len();
        if n == 0 {
            return None;
        }
        // Start at a hash of the lock's address, so that locks spread over
        // the pool; probe at most 64 blocks (exhaustion is a round of TTAS,
        // not a scan of the whole pool).
        let start = (key >> 4).wrapping_mul(0x9E37_79B9_7F4A_7C15_u64 as usize) % n;
        for i in 0..n.min(64) {
            let at = (start + i) % n;
            let b = &blocks[at];
            // Relaxed: a guess; the CAS below decides.
            let free = b.head.refs.load(Ordering::Relaxed);
            if free & (COUNT | CLOSED) != 0 {
                continue;
            }
            // The next generation, with the lock's reference and ours.
            let next = (gen_of(free) + 1) & ((1 << GEN_BITS) - 1);
            // SeqCst (Acquire at least): the last user's drop (a Release
            // decrement) happens-before our cleaning below, so none of its
            // slot writes can land after it.
            // mutants: route order (RonRaw), progress (grant locks): module docs.
            if b.head
                .refs
                .compare_exchange(
                    free,
                    u64::from(next) << GEN_SHIFT | 2,
                    Ordering::SeqCst,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                mark(T::PATHS.claim);
                #[cfg(any(loom, miri, shuttle, ron_coverage))]
                if b.claimed_before
                    .swap(true, core::sync::atomic::Ordering::Relaxed)
                {
                    mark(T::PATHS.reuse);
                }
                b.slots.clean_within(active_slots());
                // `max_blocks` keeps every index within `INDEX_BITS`.
                return Some((b, home_of(base + at + 1, next)));
            }
        }
        None
    }
}

#[cfg(not(loom))]
static BLOCKS: [Block; POOL_BLOCKS] = [const { Block::new() }; POOL_BLOCKS];
#[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
static CHUNKS: [AtomicPtr<Block>; GROW_CHUNKS] =
    [const { AtomicPtr::new(core::ptr::null_mut()) }; GROW_CHUNKS];
#[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
static GLOBAL: Pool<'static> = Pool::growing(&BLOCKS, &CHUNKS);
#[cfg(all(not(loom), not(all(feature = "std", not(shuttle), not(ron_vm)))))]
static GLOBAL: Pool<'static> = Pool::new_in(&BLOCKS);

/// The process-wide pool of `RonRaw`, `NxtRon` and `RonPlock` blocks:
/// [`POOL_BLOCKS`] static blocks, and with `std` up to [`GROW_CHUNKS`]
/// chunks of [`GROW_CHUNK`] more, allocated as the static ones run out and
/// never freed.
#[cfg(not(loom))]
pub fn global() -> &'static Pool<'static> {
    &GLOBAL
}

#[cfg(loom)]
loom::lazy_static! {
    static ref LOOM_BLOCKS: std::vec::Vec<Block> = (0..2).map(|_| Block::new()).collect();
    static ref LOOM_GLOBAL: Pool<'static> = Pool::new_in(&LOOM_BLOCKS);
}

/// The pool of `RonRaw::new()` locks: under loom, 2 blocks per execution.
#[cfg(loom)]
pub fn global() -> &'static Pool<'static> {
    &LOOM_GLOBAL
}

/// Uses at most `n` of the process-wide pool's blocks ([`POOL_MAX_BLOCKS`]
/// unless set; 0: no `RonRaw`, `NxtRon` or `RonPlock` registers any more,
/// its waiters wait unregistered). Blocks beyond `n` that were allocated
/// stay allocated. `RonTicket`'s pool has its own limit
/// (`ron_ticket::set_pool_limit`).
pub fn set_pool_limit(n: usize) {
    global().set_limit(n);
}

/// A reference to the block of one lock, held by a waiter across its
/// rounds or by a releaser for its scan; dropping it may return the block.
pub(crate) struct BlockRef<'a, T: BlockSlots = SlotTable<BLOCK_SLOTS>> {
    block: &'a Block<T>,
    /// The lock's block index.
    home: &'a AtomicU32,
    /// What `home` holds while the lock names `block`: its index in the
    /// pool and the generation of the claim that attached it.
    index: u32,
}

impl<T: BlockSlots> core::ops::Deref for BlockRef<'_, T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.block.slots
    }
}

impl<T: BlockSlots> BlockRef<'_, T> {
    /// Whether the lock still names this block (always, while this
    /// reference is held: a held block is never detached; kept for the
    /// callers that check).
    pub(crate) fn is_current(&self) -> bool {
        // Relaxed: a hint; only route order is at stake.
        self.home.load(Ordering::Relaxed) == self.index
    }

    /// The lock's handover count (see [`Block`]).
    pub(crate) fn handovers(&self) -> &AtomicU32 {
        &self.block.head.handovers
    }

    /// Keeps the reference without this value (a lock owner carrying it
    /// across its critical section, to release with it): take it back with
    /// [`adopt`].
    pub(crate) fn keep(self) {
        core::mem::forget(self);
    }
}

impl<'a, T: BlockSlots> BlockRef<'a, T> {
    /// The block's slots, with the pool's lifetime: memory as long as the
    /// pool lives (blocks are type-stable); this lock's while the caller
    /// holds this reference or knows of another.
    pub(crate) fn slots(&self) -> &'a T {
        &self.block.slots
    }
}

/// Takes back a reference kept with [`BlockRef::keep`] to the block
/// `home` names in `pool`.
///
/// # Safety
/// The caller owns a kept reference to that block (so the lock still
/// names it: a referenced block is never detached).
pub(crate) unsafe fn adopt<'a, T: BlockSlots>(
    home: &'a AtomicU32,
    pool: &Pool<'a, T>,
) -> Option<BlockRef<'a, T>> {
    // Relaxed: the caller's own reference keeps `home` unchanged since it
    // checked it (program order), so this load sees that value.
    let index = home.load(Ordering::Relaxed);
    // SAFETY: the caller's contract; `index` is `home`'s value.
    unsafe { adopt_at(home, index, pool) }
}

/// [`adopt`] with `index`, a value of `home` the caller read while it
/// owned the kept reference (so `home`'s value now: a referenced block
/// is never detached).
///
/// # Safety
/// As for [`adopt`].
pub(crate) unsafe fn adopt_at<'a, T: BlockSlots>(
    home: &'a AtomicU32,
    index: u32,
    pool: &Pool<'a, T>,
) -> Option<BlockRef<'a, T>> {
    let block = pool.block(index)?;
    Some(BlockRef { block, home, index })
}

impl<T: BlockSlots> BlockRef<'_, T> {
    /// Drops `k` more references to this block that the caller owns (kept
    /// ones it was handed: the banks of `RonTicket`, `NxtRon` and
    /// `RonPlock`): never the last, as this one is still held.
    pub(crate) fn drop_more(&self, k: u32) {
        if k == 0 {
            return;
        }
        // SeqCst (Release at least): as a drop (`Drop` below).
        // mutants: route order (RonRaw), progress (grant locks): module docs.
        let before = self
            .block
            .head
            .refs
            .fetch_sub(u64::from(k), Ordering::SeqCst);
        debug_assert!(
            before & COUNT > u64::from(k) + 1,
            "dropped a block's last references"
        );
    }

    /// Drops this reference and `k` more that the caller owns, returning
    /// the block if they were its last users' (as `k + 1` drops, in one
    /// decrement).
    pub(crate) fn drop_with(self, k: u32) {
        if k == 0 {
            return drop(self);
        }
        let refs = &self.block.head.refs;
        let k = u64::from(k);
        // SeqCst (Release at least): as a drop (`Drop` below).
        // mutants: route order (RonRaw), progress (grant locks): module docs.
        let before = refs.fetch_sub(k + 1, Ordering::SeqCst);
        if before & COUNT == k + 2 {
            // As if the last of the `k + 1` drops found the count at 2.
            self.give_back(before - k);
        }
        core::mem::forget(self);
    }
}

impl<T: BlockSlots> Drop for BlockRef<'_, T> {
    fn drop(&mut self) {
        let refs = &self.block.head.refs;
        // SeqCst (Release at least): our slot writes happen-before a later
        // claim's cleaning.
        // mutants: route order (RonRaw), progress (grant locks): module docs.
        let before = refs.fetch_sub(1, Ordering::SeqCst);
        if before & COUNT == 2 {
            self.give_back(before);
        }
    }
}

impl<T: BlockSlots> BlockRef<'_, T> {
    /// Returns the block after a drop whose decrement (`before`: the count
    /// word it found) left only the lock's reference, unless a user
    /// entered since (out of line: the drop's common case is a decrement).
    #[cold]
    #[inline(never)]
    fn give_back(&self, before: u64) {
        let refs = &self.block.head.refs;
        // Only the lock's reference is left, unless a user entered since:
        // close the block, in our generation. The CAS fails if a user
        // entered (it returns the block when it leaves), if another
        // returner closed it first, or if the block went on to another
        // claim; of several returners at most one succeeds.
        let idle = before - 1;
        let closed = idle - 1 + CLOSED;
        loop {
            // SeqCst as the decrement; Relaxed on failure: the value only
            // steers (the wait below reads the count again).
            // mutants: route order (RonRaw), progress (grant locks): module docs.
            match refs.compare_exchange(idle, closed, Ordering::SeqCst, Ordering::Relaxed) {
                Ok(_) => break,
                // (An entry's momentary count may sit on top of the flag.)
                Err(seen) if seen & !COUNT == closed => {}
                Err(_) => return,
            }
            // Closed by another returner: one of our lock's (it detaches
            // and frees the block), or (only once the generations wrapped)
            // a delayed returner of one of the block's earlier claims, which
            // reopens it once its detach fails. Wait for the outcome and
            // close again if the block is still our lock's: left to the
            // delayed returner, it would stay attached to an idle lock
            // (for good, if that lock is dropped).
            // SeqCst as the load below.
            // mutants: survives (loom_ron_raw, loom_coverage pooled): a
            // stale read only waits longer.
            while refs.load(Ordering::SeqCst) & !COUNT == closed {
                crate::sync::spin_loop();
            }
            // SeqCst: after the flag's clearing above, which a detach
            // precedes, so a detached block is seen detached.
            // mutants: survives (loom_ron_raw, loom_coverage pooled): a
            // stale index only retries the close, whose CAS then fails on
            // the freed count or on a later generation.
            if self.home.load(Ordering::SeqCst) != self.index {
                return;
            }
            mark(T::PATHS.reclosed);
        }
        // mutants: route order (RonRaw), progress (grant locks): module docs.
        if self
            .home
            .compare_exchange(self.index, 0, Ordering::SeqCst, Ordering::Relaxed)
            .is_ok()
        {
            mark(T::PATHS.ret);
            // Drops the lock's reference (the flag stood for it): free.
            // mutants: route order (RonRaw), progress (grant locks): module docs.
            refs.fetch_sub(CLOSED, Ordering::SeqCst); // as above
        } else {
            // Our lock no longer names the block: the block's generations
            // wrapped since our decrement (it was returned and claimed
            // again `1 << GEN_BITS` times) and we closed another claim's
            // block, idle at a count of 1 (its last user's decrement done,
            // its close not yet). Reopen it (the flag back into its lock's
            // reference): that user's close failed on our flag, and it
            // waits for the flag to go and closes again.
            mark(T::PATHS.reopened);
            // mutants: route order (RonRaw), progress (grant locks): module docs.
            refs.fetch_sub(CLOSED - 1, Ordering::SeqCst); // as above
        }
    }
}

/// Whether the block with index `index` of `pool` (0: none) has a
/// registered waiter, read without taking a reference: the release's fast
/// path.
///
/// The answer only steers: `false` makes the caller free the lock, which
/// every waiter, registered or not, sees at its next look at the lock word.
/// Blocks are type-stable, so a block returned (or claimed by another
/// lock) meanwhile is still a block: the answer is then merely stale, and
/// a stale answer costs route order, never exclusion.
#[inline]
pub(crate) fn anyone_registered(pool: &Pool<'_>, index: u32) -> bool {
    if index == 0 {
        return false;
    }
    let marked = pool
        .block(index)
        .is_some_and(|b| b.slots.any_marked_within(active_slots()));
    if !marked {
        crate::coverage::hit!("ron_raw.release_idle_block");
    }
    marked
}

/// Whether slot `t` of the block with index `index` of `pool` (0: none,
/// every slot empty) has no registered waiter, read without a reference
/// (a snapshot; stale answers cost route order only, as above).
#[inline]
pub(crate) fn slot_empty(pool: &Pool<'_>, index: u32, t: usize) -> bool {
    pool.block(index)
        .is_none_or(|b| b.slots.slot_empty(t % BLOCK_SLOTS))
}

/// What a lock's block index gave.
enum Found<'a, T: BlockSlots> {
    /// No block (index 0).
    Nothing,
    /// A reference to the lock's block.
    Block(BlockRef<'a, T>),
    /// An index the pool does not hold (the lock was used with another pool).
    Foreign,
}

/// A reference to the block `home` names in `pool`, if any (no claim).
fn find<'a, T: BlockSlots>(home: &'a AtomicU32, pool: &Pool<'a, T>) -> Found<'a, T> {
    loop {
        // SeqCst: ordered with the waiters' registration (SeqCst), so a
        // releaser that sees no block is ordered before their next look at
        // the lock word.
        // mutants: route order (RonRaw), progress (grant locks): module docs.
        let index = home.load(Ordering::SeqCst);
        if index == 0 {
            return Found::Nothing;
        }
        let Some(block) = pool.block(index) else {
            return Found::Foreign;
        };
        let refs = &block.head.refs;
        // SeqCst: the count and the re-check below must not be reordered
        // (a detach between them would go unnoticed).
        // mutants: route order (RonRaw), progress (grant locks): module docs.
        let before = refs.fetch_add(1, Ordering::SeqCst);
        // Open, and still named by our lock in the generation we loaded:
        // our count holds it open, so the claim we counted in is our
        // lock's (a detach precedes the free that a later claim needs).
        // mutants: route order (RonRaw), progress (grant locks): module docs.
        if before & CLOSED == 0 && home.load(Ordering::SeqCst) == index {
            mark(T::PATHS.use_);
            return Found::Block(BlockRef { block, home, index });
        }
        // Closed, or our lock's claim is over (its return detached it
        // before freeing it): ours is a plain count, undone. If it landed
        // in a later claim of the block, whose last user tried its close
        // meanwhile, that close failed on it and the block stays with its
        // idle lock until that lock is contended again: see the module
        // docs.
        mark(if before & CLOSED != 0 {
            T::PATHS.closed_seen
        } else {
            T::PATHS.stale
        });
        // mutants: route order (RonRaw), progress (grant locks): module docs.
        refs.fetch_sub(1, Ordering::SeqCst); // as for a drop
        if before & CLOSED != 0 {
            // Being returned: its returner detaches it next.
            crate::sync::spin_loop();
        }
    }
}

/// A reference to the block `home` names in `pool`, if any (no claim).
pub(crate) fn current<'a, T: BlockSlots>(
    home: &'a AtomicU32,
    pool: &Pool<'a, T>,
) -> Option<BlockRef<'a, T>> {
    match find(home, pool) {
        Found::Block(r) => Some(r),
        Found::Nothing | Found::Foreign => None,
    }
}

/// A reference to `home`'s block, claiming one from `pool` when it has none.
pub(crate) fn enter<'a, T: BlockSlots>(
    home: &'a AtomicU32,
    pool: &Pool<'a, T>,
    key: usize,
) -> Option<BlockRef<'a, T>> {
    loop {
        match find(home, pool) {
            Found::Block(r) => return Some(r),
            // Not ours to use or replace: wait unregistered.
            Found::Foreign => return None,
            Found::Nothing => {}
        }
        let (block, index) = pool.claim(key)?;
        // SeqCst (Release at least): publishes the cleaned block to the
        // users that load the index; on failure we only loop.
        // mutants: route order (RonRaw), progress (grant locks): module docs.
        match home.compare_exchange(0, index, Ordering::SeqCst, Ordering::SeqCst) {
            Ok(_) => return Some(BlockRef { block, home, index }),
            Err(_) => {
                // Another waiter published first: give ours back, use theirs.
                mark(T::PATHS.publish_lost);
                // mutants: route order (RonRaw), progress (grant locks): module docs.
                block.head.refs.fetch_sub(2, Ordering::SeqCst); // as for a drop
            }
        }
    }
}

/// The pool's protocol without a lock around it, for the loom models of
/// its races (a delayed return raced by the block's next claim): what a
/// lock's waiter does with its lock's block index.
#[cfg(loom)]
#[doc(hidden)]
pub mod model {
    use super::{AtomicU32, BlockRef, Pool};

    /// A reference to a lock's block; dropping it may return the block.
    pub struct Ref<'a>(#[allow(dead_code)] BlockRef<'a>);

    /// A reference to the block `home` (a lock's block index) names in
    /// `pool`, claiming one when it names none; `None` when the pool has
    /// none free.
    pub fn enter<'a>(home: &'a AtomicU32, pool: &Pool<'a>) -> Option<Ref<'a>> {
        super::enter(home, pool, home as *const AtomicU32 as usize).map(Ref)
    }
}
