//! [`RonTicket`]: RON Algorithm 2, a ticket lock per slot and a route-ordered
//! handover between slots, with one slot per CPU from a pool
//! ([`RonTicketInline`]: the same protocol with `S` slots in the lock).
//!
//! Each slot is a small ticket lock (`tickets`, `serving`) plus a `grant`
//! word. A waiter takes a ticket in its slot (`tickets += 1`, which also
//! counts it as waiting: waiters = `tickets - serving`), waits until its
//! ticket is served (it is the slot's *head*), then waits for the slot's
//! grant or for the lock word to be free. The holder's unlock walks the slots
//! along the route from its own slot + 1 (own slot last) and grants the first
//! one with `tickets != serving`, keeping `in_use` true; with no waiter it
//! frees `in_use`. The head that becomes owner advances `serving`, which
//! makes the next ticket holder its slot's head.
//!
//! A grant word names the ticket it admits (its low 24 bits, the *tag*),
//! so a head takes its grant with a load: nothing to clear, no
//! read-modify-write on the handover (the slot's next head tells a spent
//! grant by its tag). Two rules keep tags unambiguous: a head reads the
//! grant word only after its predecessor's `serving` store (Release and
//! Acquire), so it sees the word its predecessor left or a later one; and
//! a head admitted by a free `in_use` clears a grant word left set, so the
//! word a head can see names its predecessor, nobody, or itself, never a
//! ticket `2^24` back. (The model checkers build the lock with 1-bit tags,
//! where leaving the word set is caught: shuttle's `ron_ticket` tests fail.)
//!
//! ## Where the slots live
//! [`RonTicket`] is 8 bytes: `in_use` and the 32-bit index of a *block*
//! of [`BLOCK_SLOTS`] ticket slots in a
//! process-wide pool (0: none), of which it uses the first
//! [`active_slots()`](crate::ron_raw::active_slots): one per CPU of the
//! installed route (rounded up to a power of two, at most 256). A lock
//! holds a block only while it has registered waiters: the first waiter
//! claims one, every waiter holds a reference from before it takes its
//! ticket until after it advances `serving` (and, once it owns the lock,
//! through its critical section to its release, which then scans and
//! grants with it: `owner_ref` says so), a releaser without one takes one
//! for its scan, and the last reference returns the block.
//!
//! **References travel with the grant.** The lock may be freed by its
//! last user as soon as it is available, and a last reference's drop
//! writes the lock (it detaches the block), so no release may drop a
//! reference after its grant or free. Nor does a grant drop one before:
//! that would put a decrement of the block's count, a line every arrival
//! also writes, on every handover. A grant passes the releaser's reference
//! to the grantee inside the grant word (`grant` = 1 + references passed),
//! together with the *bank* of the releaser's slot: the references earlier
//! grants passed to it. The new owner adds what it receives to its own
//! slot's bank (`banked`, touched only by the lock's holder) and drops the
//! bank in one decrement once it holds more than [`BANK_MAX`], while it
//! still holds its own reference (so never the last). A release that frees
//! the lock drops its reference with every slot's bank in one decrement
//! before the free (a guard-less release, such as lock_api 0.4's, does not
//! know its slot and leaves its bank there; the next free collects it).
//!
//! The claim/use/return protocol is the pool's ([`pool`]), shared with
//! `RonRaw`; a held block is never detached, so every ticket out is in
//! the block the lock names, where every releaser scans. A returned
//! block needs no cleaning: every ticket taken in it was served
//! (`tickets == serving`, no grant) and every bank emptied before its
//! last reference was dropped, and the pool's Release/Acquire chain
//! (drop, claim, publish, look-up) carries those values to the next
//! lock's users.
//! [`RonTicketInline<S>`] keeps `S` slots in the lock instead
//! (`128 * (S + 1)` bytes; no pool, no reference counting).
//!
//! ## States
//! | `in_use` | block | slot `s` | meaning |
//! |---|---|---|---|
//! | false | none | - | unlocked, uncontended |
//! | false | claimed | `tickets == serving`, `banked = 0` | unlocked; waiters' references not yet dropped |
//! | true | none or claimed | `tickets - serving = c`, `grant = 0` | held; `c` waiters queued FIFO in `s`; `banked` references owed to the block |
//! | true | claimed | `c > 0`, `grant` = (head's ticket, `r`) | handed to `s`: its head reads its own ticket in the grant, owns the lock and banks the `r` references passed |
//!
//! (The inline lock is always "claimed".) Taking a ticket and being counted
//! are one `fetch_add`, so an unlock never waits for a waiter that counted
//! itself but has not yet taken its ticket (the published RON-ticket's
//! unlock did, docs/design.md, "Pitfalls"). Only the head of a slot may
//! take its grant or CAS `in_use`, and `serving` only moves when that head
//! becomes owner, so a granted slot always has a head that can only leave
//! by taking the grant.
//!
//! ## Guarantees
//! * Mutual exclusion under any schedule and hint; progress.
//! * FIFO inside a slot, route order between slots: with `n` slots
//!   (`active_slots()` pooled, `S` inline), a registered waiter with `q`
//!   waiters ahead of it in its slot is overtaken by at most
//!   `q + (q + 1) * (n - 1) + 1` acquisitions (each service of its slot is
//!   preceded by at most one grant to each other slot; `+ 1` for a racing
//!   fast-path acquisition). With one thread per slot that is `n`.
//! * Pool exhausted (no free block among
//!   [`POOL_MAX_BLOCKS`](crate::ron_raw::POOL_MAX_BLOCKS), or the limit set
//!   with [`set_pool_limit`]): a waiter of a lock without a block waits
//!   *unregistered* (test-and-test-and-set on `in_use` with its relax
//!   policy) and tries to register again every
//!   [`UNREGISTERED_LOOKS`] looks. Unregistered it has **no bound**
//!   (registered waiters' handovers pass it by; it gets the lock when a
//!   release finds no registered waiter), only progress as long as the
//!   registered waiters run out. A lock that has a block takes every
//!   waiter in; only a lock contended while more than
//!   `POOL_MAX_BLOCKS` locks are contended meets an empty pool.
//! * Panics: a waiter whose `Relax` policy panics after taking its ticket
//!   aborts the process (a ticket cannot be given back without waiting for
//!   its turn); before that (and unregistered) it holds nothing but its
//!   block reference, dropped as it unwinds. An unlock whose CPU hint panics
//!   releases the lock (scanning from slot 0) before it unwinds
//!   (`docs/panic-safety.md`).
//!
//! ## Cost
//! `RonTicket`: 8 bytes per lock; a claimed block is
//! `128 * (BLOCK_SLOTS + 1)` bytes (32,896 with `std`, of which a lock
//! touches the count's line and its first `active_slots()` slots).
//! Uncontended lock+unlock: a load and a CAS, a load of the owner flag
//! and of the block index, one release store. Contended: a waiter adds a
//! reference-count increment on the block's first line when it arrives;
//! the decrements are banked and paid once per [`BANK_MAX`] handovers or
//! at the free, so a handover writes only the grantee's slot; a release
//! scans `n` slots (two loads each, and a third for the banks when it
//! frees).
//! `RonTicketInline<S>`: `128 * (S + 1)` bytes; uncontended a load and a
//! CAS, a scan of `S` slots and a release store.
//!
//! ```
//! use ron_core::RonTicket;
//! let m: lock_api::Mutex<RonTicket, u32> = lock_api::Mutex::new(0);
//! std::thread::scope(|s| {
//!     for _ in 0..3 {
//!         s.spawn(|| for _ in 0..500 { *m.lock() += 1 });
//!     }
//! });
//! assert_eq!(*m.lock(), 1500);
//! assert_eq!(core::mem::size_of::<ron_core::RonTicket>(), 8);
//! ```

use core::marker::PhantomData;

use crossbeam_utils::CachePadded;

use crate::flag::TasFlag;
use crate::in_use::InUse;
use crate::relax::{DefaultRelax, Relax};
#[cfg(all(not(loom), not(all(feature = "std", not(shuttle), not(ron_vm)))))]
use crate::ron_raw::pool::POOL_BLOCKS;
use crate::ron_raw::pool::{self, BLOCK_SLOTS, Block, BlockRef, BlockSlots, Pool, PoolPaths};
#[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
use crate::ron_raw::pool::{GROW_CHUNKS, POOL_BLOCKS};
use crate::sync::{AtomicBool, AtomicU32, Ordering};
use crate::token::PlaceToken;
use crate::unwind::AbortOnUnwind;

/// Looks (relax steps) an unregistered waiter (pool exhausted) spends
/// on `in_use` before it tries to register again.
pub const UNREGISTERED_LOOKS: u32 = 128;

/// Block references a pooled owner banks in its slot before it drops
/// them (one contended decrement per this many handovers, at most).
#[cfg(not(loom))]
pub const BANK_MAX: u32 = 64;
/// Block references a pooled owner banks (small under loom, so that the
/// models reach the paying path).
#[cfg(loom)]
pub const BANK_MAX: u32 = 1;

/// Bits of a grant word that name the ticket it admits (its low bits).
#[cfg(not(any(loom, shuttle)))]
const TAG_BITS: u32 = 24;
/// Bits of a grant word that name the ticket it admits: one under the
/// model checkers, so that a head that could take a grant two tickets old
/// (a free admission that left the grant word set) is caught.
#[cfg(any(loom, shuttle))]
const TAG_BITS: u32 = 1;
const TAG_MASK: u32 = (1 << TAG_BITS) - 1;
/// Set in every grant word a releaser stores (0 is "none").
const GRANTED: u32 = 0x80;
/// The block references a grant word passes on.
const REFS_MASK: u32 = 0x7F;
// A grant passes at most `BANK_MAX + 1` references.
const _: () = assert!(BANK_MAX < REFS_MASK);

/// The grant word admitting `ticket` with `refs` block references.
#[inline]
fn grant_word(ticket: u32, refs: u32) -> u32 {
    ((ticket & TAG_MASK) << 8) | GRANTED | refs
}

/// One slot: a ticket lock, a grant word and a bank of block references,
/// alone on its cache lines.
struct TicketSlot {
    tickets: AtomicU32,
    serving: AtomicU32,
    /// The last grant to this slot ([`grant_word`]: the ticket it admits
    /// and the block references it passes), or 0 (none since the slot's
    /// last admission by a free `in_use`). A head takes a grant by
    /// reading its own ticket in it: nothing to clear.
    grant: AtomicU32,
    /// Block references the lock's owners banked here (pooled only): read
    /// and written only by the lock's holder.
    banked: AtomicU32,
}

impl TicketSlot {
    crate::sync::const_fn_unless_loom! {
        fn new() -> Self {
            TicketSlot {
                tickets: AtomicU32::new(0),
                serving: AtomicU32::new(0),
                grant: AtomicU32::new(0),
                banked: AtomicU32::new(0),
            }
        }
    }

    #[inline]
    fn has_waiters(&self) -> bool {
        // Relaxed: a stale answer only delays a waiter (it also polls
        // `in_use`) or grants a slot whose head is guaranteed to exist.
        self.tickets.load(Ordering::Relaxed) != self.serving.load(Ordering::Relaxed)
    }

    /// Hands the lock to this slot's head with `refs` block references
    /// (the caller holds the lock, keeps `in_use` true, and saw a ticket
    /// out in this slot).
    #[inline]
    fn grant(&self, refs: u32) {
        // Relaxed: we hold the lock, and the head's `serving` store (our
        // predecessor's) reached us through the lock's Release/Acquire.
        let head = self.serving.load(Ordering::Relaxed);
        // Release: passes our critical section (and the bank's values) to
        // the head's Acquire load of `grant`.
        self.grant.store(grant_word(head, refs), Ordering::Release);
    }

    /// Empties the bank: the references it held (the caller holds the lock).
    #[inline]
    fn take_bank(&self) -> u32 {
        // Relaxed (both): only the lock's holder touches the bank, and the
        // lock's own Release/Acquire (grant, `in_use`) orders its holders.
        // The store is skipped when empty: the line stays shared with the
        // slot's waiters.
        let b = self.banked.load(Ordering::Relaxed);
        if b != 0 {
            self.banked.store(0, Ordering::Relaxed);
        }
        b
    }

    /// Takes a ticket (and is counted as waiting): the ticket to wait for.
    #[inline]
    fn take_ticket(&self) -> u32 {
        // Relaxed: the ticket only orders waiters of this slot; the data
        // handover is through `grant`/`in_use`.
        self.tickets.fetch_add(1, Ordering::Relaxed)
    }

    /// Waits with `ticket` until the caller owns the lock (by this slot's
    /// grant or a free `in_use`), then makes the next ticket the head; the
    /// block references the grant passed on (0 after a free `in_use`).
    #[inline]
    fn wait_turn<R: Relax>(&self, in_use: &TasFlag, ticket: u32, relax: &mut R) -> u32 {
        // Acquire: pairs with our predecessor's Release store of
        // `serving`, so the grant word we read next is the one it left
        // (its own grant, or 0 after a free admission) or a later one.
        // mutants: survives the loom models (a head reading a grant word
        // two admissions old, which a 1-bit tag would alias, takes three
        // admissions in one slot racing a fourth acquisition, beyond
        // their bounds); it is what bounds a head's read to the last two
        // grant words formally, where 24-bit tags alias only after 2^24.
        while self.serving.load(Ordering::Acquire) != ticket {
            relax.relax();
            #[cfg(all(ron_vm, not(loom), not(shuttle)))]
            crate::relax::vm_idle(relax, crate::sync::vm_addr(&self.serving));
        }
        let mine = grant_word(ticket, 0);
        let refs = loop {
            // Acquire: pairs with the holder's Release store of `grant`.
            // After our predecessor's admission the word holds its grant,
            // 0, or ours: only ours carries our ticket's tag.
            let g = self.grant.load(Ordering::Acquire);
            if g & !REFS_MASK == mine {
                crate::coverage::hit!("ron_ticket.grant_taken");
                break g & REFS_MASK;
            }
            if g != 0 {
                crate::coverage::hit!("ron_ticket.grant_not_ours");
            }
            if in_use.take_if_free() {
                crate::coverage::hit!("ron_ticket.free_taken");
                // The word may hold our predecessor's grant, whose tag a
                // head `1 << TAG_BITS` tickets on would take for its own
                // if every admission in between were free like ours.
                // Relaxed (both): we own the lock (nobody else writes the
                // word now); our `serving` Release below publishes the
                // clearing to the next head. Stored only when set: the
                // line stays shared with this slot's waiters.
                if self.grant.load(Ordering::Relaxed) != 0 {
                    crate::coverage::hit!("ron_ticket.free_cleared_grant");
                    self.grant.store(0, Ordering::Relaxed);
                }
                break 0;
            }
            relax.relax();
        };
        // Release: the next head of this slot reads the grant word after
        // it (see the first loop).
        // mutants: as the Acquire load of `serving` above.
        self.serving
            .store(ticket.wrapping_add(1), Ordering::Release);
        refs
    }
}

/// The first slot with a queued waiter among `n` (`slot(i)` for `i < n`)
/// after `from` around the ring (`from` itself last).
#[inline]
fn next_waiting<'s>(
    n: usize,
    from: usize,
    slot: impl Fn(usize) -> &'s TicketSlot,
) -> Option<usize> {
    (1..=n)
        .map(|i| (from + i) % n)
        .find(|&t| slot(t).has_waiters())
}

/// Grants the first slot with a queued waiter among `n` after `from` (as
/// [`next_waiting`]): whether it found one. The caller holds the lock and
/// keeps `in_use` true.
#[inline]
fn grant_next<'s>(n: usize, from: usize, slot: impl Fn(usize) -> &'s TicketSlot) -> bool {
    match next_waiting(n, from, &slot) {
        Some(t) => {
            slot(t).grant(0);
            true
        }
        None => false,
    }
}

/// The slots of a pooled [`RonTicket`] block: [`BLOCK_SLOTS`] ticket
/// slots (opaque).
pub struct TicketSlots {
    slots: [CachePadded<TicketSlot>; BLOCK_SLOTS],
}

impl pool::sealed::Sealed for TicketSlots {}

impl BlockSlots for TicketSlots {
    #[cfg(not(loom))]
    const FREE: Self = TicketSlots {
        slots: [const { CachePadded::new(TicketSlot::new()) }; BLOCK_SLOTS],
    };
    #[cfg(loom)]
    fn free() -> Self {
        TicketSlots {
            slots: core::array::from_fn(|_| CachePadded::new(TicketSlot::new())),
        }
    }
    /// Nothing to clean: every ticket taken in a block was served before
    /// its last reference was dropped (module docs).
    fn clean_within(&self, _n: usize) {}
    const PATHS: &'static PoolPaths = &PoolPaths::named([
        "ron_ticket.pool_claim",
        "ron_ticket.pool_reuse",
        "ron_ticket.pool_use",
        "ron_ticket.pool_stale",
        "ron_ticket.pool_closed_seen",
        "ron_ticket.pool_return",
        "ron_ticket.pool_reopened",
        "ron_ticket.pool_reclosed",
        "ron_ticket.pool_publish_lost",
        "ron_ticket.pool_exhausted",
        "ron_ticket.pool_grow",
    ]);
}

impl TicketSlots {
    /// Slot `s` (reduced modulo [`BLOCK_SLOTS`]).
    #[inline]
    fn slot(&self, s: usize) -> &TicketSlot {
        &self.slots[s % BLOCK_SLOTS]
    }
}

#[cfg(not(loom))]
static BLOCKS: [Block<TicketSlots>; POOL_BLOCKS] = [const { Block::new_of() }; POOL_BLOCKS];
#[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
static CHUNKS: [crate::sync::AtomicPtr<Block<TicketSlots>>; GROW_CHUNKS] =
    [const { crate::sync::AtomicPtr::new(core::ptr::null_mut()) }; GROW_CHUNKS];
#[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
static GLOBAL: Pool<'static, TicketSlots> = Pool::growing(&BLOCKS, &CHUNKS);
#[cfg(all(not(loom), not(all(feature = "std", not(shuttle), not(ron_vm)))))]
static GLOBAL: Pool<'static, TicketSlots> = Pool::new_in(&BLOCKS);

#[cfg(loom)]
loom::lazy_static! {
    static ref LOOM_BLOCKS: std::vec::Vec<Block<TicketSlots>> =
        (0..2).map(|_| Block::new_of()).collect();
    static ref LOOM_GLOBAL: Pool<'static, TicketSlots> = Pool::new_in(&LOOM_BLOCKS);
}

/// The process-wide pool of [`RonTicket`] blocks (sized and grown as
/// `RonRaw`'s, [`pool`]; under loom, 2 blocks per
/// execution).
pub fn global() -> &'static Pool<'static, TicketSlots> {
    #[cfg(not(loom))]
    return &GLOBAL;
    #[cfg(loom)]
    return &LOOM_GLOBAL;
}

/// Uses at most `n` blocks of [`RonTicket`]'s pool for new claims (0: no
/// `RonTicket` registers any more; its waiters wait unregistered, see the
/// [module docs](self)).
pub fn set_pool_limit(n: usize) {
    global().set_limit(n);
}

/// RON-ticket: per-slot ticket locks handed over along the route, one slot
/// per CPU, the slots pooled: 8 bytes per lock.
///
/// * **States:** `in_use`, the block index, and per slot its ticket
///   counters and `grant`; table in the [module docs](self).
/// * **Guarantees:** mutual exclusion under any schedule and hint;
///   progress; FIFO inside a slot, route order between slots: a registered
///   waiter with `q` waiters ahead in its slot is overtaken by at most
///   `q + (q + 1) * (n - 1) + 1` acquisitions, `n` =
///   [`active_slots()`](crate::ron_raw::active_slots). No bound while the
///   pool is exhausted (the waiter waits unregistered and retries).
/// * **Panics:** a `Relax` panic after taking a ticket aborts the process;
///   an unlock whose CPU hint panics releases the lock first.
/// * **Cost:** 8 bytes, plus a pooled block while contended; a load and a
///   CAS, a load and a store uncontended.
pub struct RonTicket<R: Relax = DefaultRelax> {
    in_use: TasFlag,
    /// Whether the owner acquired in the lock's block and kept its block
    /// reference for its release (read and written only by the owner; set
    /// across grants between such owners, cleared before a free).
    owner_ref: AtomicBool,
    /// The index of the lock's block in [`global`] (0: none).
    home: AtomicU32,
    _relax: PhantomData<fn() -> R>,
}

impl<R: Relax> RonTicket<R> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            RonTicket {
                in_use: TasFlag::new(),
                owner_ref: AtomicBool::new(false),
                home: AtomicU32::new(0),
                _relax: PhantomData,
            }
        }
    }

    crate::in_use::slotted_entry_points!(pool::active_slots());

    /// The fast path: a load of `in_use`, then the CAS only when it looked
    /// free. An arrival that finds the lock held reads the line the slot
    /// heads poll (it stays shared) and goes to wait in its slot.
    #[inline]
    fn try_fast(&self) -> bool {
        if self.in_use.is_held() {
            crate::coverage::hit!("ron_ticket.fast_saw_held");
            return false;
        }
        self.in_use.try_take()
    }

    #[cold]
    fn acquire_slow(&self, s: usize, on_wait: impl FnOnce()) -> PlaceToken {
        self.acquire_slow_in(global(), s, on_wait)
    }

    /// The slow path with blocks from `pool`.
    fn acquire_slow_in<'a>(
        &'a self,
        pool: &Pool<'a, TicketSlots>,
        s: usize,
        on_wait: impl FnOnce(),
    ) -> PlaceToken {
        // User code before taking a ticket: a panic here leaves nothing behind.
        let mut relax = R::default();
        let mut on_wait = Some(on_wait);
        loop {
            if let Some(room) = pool::enter(&self.home, pool, self as *const Self as usize) {
                let slot = room.slot(s);
                let ticket = slot.take_ticket();
                crate::coverage::hit!("ron_ticket.pooled_ticket");
                // A ticket cannot be given back without waiting for its
                // turn (the next ticket waits for ours to be served), which
                // deadlocks if this thread holds the lock: a panic in
                // `relax` (or `on_wait`) aborts.
                let queued = AbortOnUnwind::new("RonTicket");
                if let Some(f) = on_wait.take() {
                    f();
                }
                let refs = slot.wait_turn(&self.in_use, ticket, &mut relax);
                queued.disarm();
                if refs != 0 {
                    Self::bank(&room, slot, refs);
                }
                // The owner keeps its reference for its release (which
                // then needs no look-up), after `serving` moved. The flag
                // is usually set already (a grant from an owner that kept
                // its own leaves it set): the lock's line, which heads
                // poll, is written only when it changes.
                // Relaxed: only owners touch the flag, in turn.
                if !self.owner_ref.load(Ordering::Relaxed) {
                    self.owner_ref.store(true, Ordering::Relaxed);
                }
                room.keep();
                return PlaceToken::at(s);
            }
            // No block to be had: wait unregistered for a while (TTAS),
            // then try to register again. A panic here holds nothing.
            crate::coverage::hit!("ron_ticket.unregistered");
            if let Some(f) = on_wait.take() {
                f();
            }
            for _ in 0..UNREGISTERED_LOOKS {
                if self.in_use.take_if_free() {
                    crate::coverage::hit!("ron_ticket.unregistered_took");
                    return PlaceToken::at(s);
                }
                relax.relax();
            }
        }
    }

    /// Banks the `refs` block references a grant passed to the new owner
    /// (which holds the lock and `room`) in its slot, or drops them with
    /// the bank once it holds more than [`BANK_MAX`].
    #[inline]
    fn bank(room: &BlockRef<'_, TicketSlots>, slot: &TicketSlot, refs: u32) {
        let b = slot.take_bank() + refs;
        if b > BANK_MAX {
            crate::coverage::hit!("ron_ticket.bank_paid");
            // Not the last references: we hold `room`.
            room.drop_more(b);
        } else {
            crate::coverage::hit!("ron_ticket.banked");
            // Relaxed: as `take_bank`.
            slot.banked.store(b, Ordering::Relaxed);
        }
    }

    /// Releases the lock: grants the next slot with a queued waiter along
    /// the route after the acquirer's slot, or frees it.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: PlaceToken) {
        // SAFETY: forwarded contract; the lock's blocks come from `global`.
        unsafe { self.release_in_pool(global(), token) }
    }

    /// [`release`](Self::release) with blocks from `pool`.
    ///
    /// Every block reference is dropped while we still hold the lock:
    /// once a grant or the free makes the lock available, its last user
    /// may free it, and a last reference's drop writes the lock (it
    /// detaches the block from `home`).
    ///
    /// # Safety
    /// As [`release`](Self::release), and `pool` is the lock's pool.
    #[inline]
    unsafe fn release_in_pool<'a>(&'a self, pool: &Pool<'a, TicketSlots>, token: PlaceToken) {
        // Relaxed: only owners touch the flag, in turn (the lock's own
        // Release/Acquire orders them).
        // The flag stays set across a grant (the grantee is registered and
        // keeps its reference in turn) and is cleared before a free.
        let kept = if self.owner_ref.load(Ordering::Relaxed) {
            crate::coverage::hit!("ron_ticket.release_kept_ref");
            // SAFETY: the flag says this acquisition kept its reference to
            // the lock's block (`acquire_slow_in`); we own the lock, so it
            // is ours to take back, once.
            unsafe { pool::adopt(&self.home, pool) }
        } else {
            None
        };
        // SeqCst: ordered with the waiters' `enter` (SeqCst), as a
        // releaser's look-up in the pool; a stale 0 frees the lock, which a
        // registered waiter sees at its next look at `in_use`.
        // mutants: the waiting bound only (a missed waiter takes the freed
        // lock at its next look; exclusion and progress stand).
        if kept.is_none() && self.home.load(Ordering::SeqCst) == 0 {
            crate::coverage::hit!("ron_ticket.freed_no_block");
            self.in_use.free();
            return;
        }
        // The hint (user code) is asked first; if it panics the release
        // runs from slot 0 and takes `kept` all the same.
        let kept = core::cell::Cell::new(kept);
        token.release_from_slot_of(pool::active_slots(), |from| {
            self.release_from(pool, kept.take(), from, token.index())
        });
    }

    /// The release with a block, scanning from slot `from` + 1 in the
    /// block `kept` (the owner's reference) or a fresh look-up. A grant
    /// passes our reference and the bank of our slot `own` (the
    /// acquisition's, if known) to the grantee; a free first drops them
    /// with every slot's bank.
    #[cold]
    fn release_from<'a>(
        &'a self,
        pool: &Pool<'a, TicketSlots>,
        kept: Option<BlockRef<'a, TicketSlots>>,
        from: usize,
        own: Option<usize>,
    ) {
        // A reference keeps the block this lock's while we scan.
        let room = match kept {
            Some(r) => Some(r),
            None => pool::current(&self.home, pool),
        };
        let n = pool::active_slots();
        if let Some(room) = room {
            let slots = room.slots();
            let mine = own.map_or(0, |s| slots.slot(s).take_bank());
            if let Some(t) = next_waiting(n, from, |t| slots.slot(t)) {
                // Our reference and bank go to the grantee: nothing of
                // the block's count is written here. (A drop after the
                // grant could be the block's last, whose return writes
                // the lock, which may be freed by then; a drop before it
                // would put a contended RMW on every handover.) Slot `t`
                // has a ticket out, whose holder keeps its own reference
                // until our grant serves it, so the block stays this
                // lock's until the grant is taken.
                room.keep();
                crate::coverage::hit!("ron_ticket.granted");
                slots.slot(t).grant(1 + mine);
                return;
            }
            crate::coverage::hit!("ron_ticket.freed_after_scan");
            // Every bank (a guard-less release leaves its owner's behind):
            // a freed lock owes nothing, so its block can go back.
            let others: u32 = (0..n).map(|t| slots.slot(t).take_bank()).sum();
            if others != 0 {
                crate::coverage::hit!("ron_ticket.bank_collected");
            }
            if self.owner_ref.load(Ordering::Relaxed) {
                // Relaxed: as above; the free below publishes it.
                self.owner_ref.store(false, Ordering::Relaxed);
            }
            // Possibly the block's last references: its return writes
            // `home`, which must happen while we hold the lock.
            room.drop_with(mine + others);
        } else {
            crate::coverage::hit!("ron_ticket.freed_after_scan");
        }
        self.in_use.free();
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.in_use.is_held()
    }

    /// Whether the lock holds a pooled block (a snapshot): for the loom
    /// models only, which exist only with `--cfg loom`.
    #[cfg(loom)]
    #[doc(hidden)]
    pub fn has_block(&self) -> bool {
        self.home.load(Ordering::Relaxed) != 0 // a snapshot by contract
    }
}

crate::raw_impl::impl_default_debug! {
    impl [R: Relax] for RonTicket<R>, debug "RonTicket" { slots: pool::active_slots() }
}

#[cfg(not(loom))]
// SAFETY: by the state table in the module docs, the holder, a pending
// `grant` of one slot or nobody owns the lock at every moment. `lock` and
// `try_lock` return a guard only after taking ownership one of two ways: the
// CAS `in_use` false -> true (Acquire, pairing with the Release store that
// freed it), or, as the head of slot `s` of the lock's block (the one
// waiter whose ticket `s` serves; tickets come from one `fetch_add` each),
// the CAS `grant` true -> false (Acquire, pairing with the holder's Release
// store of `grant`). The holder sets `grant` only on a slot with a ticket
// out, only while it holds a reference to the block the lock names (so the
// block cannot change lock under it; the grant passes that reference on),
// and keeps `in_use` true; only a head
// may take a grant or CAS `in_use`; `serving` moves only when that head owns
// the lock, so a granted slot's head can leave only by taking the grant.
// Every waiter holds its block reference from before its ticket to after
// its `serving` store, and a referenced block is never detached or claimed
// by another lock (`pool`), so every ticket out is in the lock's block and
// every block returned has all its tickets served. The slot is only a
// place to wait: a wrong, out-of-range or stale CPU hint changes where the
// unlock's scan starts, never who owns the lock. A `Relax` panic after
// taking a ticket aborts the process (the ticket cannot be given back), so
// `lock` never unwinds with a ticket out; before it (or unregistered) the
// unwind drops only a block reference. `unlock` asks the CPU hint only for
// a fast-path guard that finds a block (`PlaceToken::NONE`); if the hint
// panics it releases from slot 0 first, so it never unwinds holding the
// lock. A forgotten guard leaves the lock held; nothing dangles (tickets
// are counters, references are dropped before `lock` returns).
unsafe impl<R: Relax> lock_api::RawMutex for RonTicket<R> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();
    type Guard = PlaceToken;

    #[inline]
    fn lock(&self) -> PlaceToken {
        self.acquire()
    }

    #[inline]
    fn try_lock(&self) -> Option<PlaceToken> {
        self.try_acquire()
    }

    #[inline]
    unsafe fn unlock(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`, as
        // `RawMutex::unlock` requires.
        unsafe { self.release(guard) }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.is_held()
    }
}

#[cfg(not(loom))]
// SAFETY: `unlock_fair` is `release`, which already grants the next slot
// with a queued waiter; the `RawMutex` argument above covers it.
unsafe impl<R: Relax> lock_api::RawMutexFair for RonTicket<R> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }
}

/// RON-ticket with its `S` slots in the lock: the protocol of
/// [`RonTicket`] (module docs) without the pool, for a slot count fixed
/// when the program is built.
///
/// * **Guarantees:** as [`RonTicket`], with `n = S`: a waiter with `q`
///   waiters ahead in its slot is overtaken by at most
///   `q + (q + 1) * (S - 1) + 1` acquisitions; no pool, so no exhaustion.
/// * **Panics:** as [`RonTicket`].
/// * **Cost:** `128 * (S + 1)` bytes; a load and a CAS, a scan of `S`
///   slots and a store uncontended.
///
/// ```
/// use ron_core::RonTicketInline;
/// let m: lock_api::Mutex<RonTicketInline<4>, u32> = lock_api::Mutex::new(0);
/// *m.lock() += 1;
/// assert_eq!(m.into_inner(), 1);
/// ```
pub struct RonTicketInline<const S: usize, R: Relax = DefaultRelax> {
    in_use: InUse,
    slots: [CachePadded<TicketSlot>; S],
    _relax: PhantomData<fn() -> R>,
}

impl<const S: usize, R: Relax> RonTicketInline<S, R> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            const { assert!(S >= 1, "a RON lock needs at least one slot") };
            RonTicketInline {
                in_use: InUse::new(),
                slots: crate::sync::array_init!(S, CachePadded::new(TicketSlot::new())),
                _relax: PhantomData,
            }
        }
    }

    crate::in_use::slotted_entry_points!();

    /// The fast path: a load of `in_use`, then the CAS only when it looked
    /// free.
    #[inline]
    fn try_fast(&self) -> bool {
        if self.in_use.is_held() {
            crate::coverage::hit!("ron_ticket.fast_saw_held");
            return false;
        }
        self.in_use.try_take()
    }

    #[cold]
    fn acquire_slow(&self, s: usize, on_wait: impl FnOnce()) -> PlaceToken {
        let slot = &self.slots[s];
        // User code before taking a ticket: a panic here leaves nothing behind.
        let mut relax = R::default();
        let ticket = slot.take_ticket();
        // A ticket cannot be given back without waiting for its turn: a
        // panic in `relax` (or `on_wait`) aborts.
        let queued = AbortOnUnwind::new("RonTicketInline");
        on_wait();
        slot.wait_turn(&self.in_use, ticket, &mut relax);
        queued.disarm();
        PlaceToken::at(s)
    }

    /// Releases the lock: grants the next slot with a queued waiter along
    /// the route after the acquirer's slot, or frees it.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: PlaceToken) {
        token.release_from_slot::<S>(|from| {
            if !grant_next(S, from, |t| &self.slots[t]) {
                self.in_use.free();
            }
        });
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.in_use.is_held()
    }
}

crate::raw_impl::impl_default_debug! {
    impl [const S: usize, R: Relax] for RonTicketInline<S, R>, debug "RonTicketInline" { slots: S }
}

#[cfg(not(loom))]
// SAFETY: as for `RonTicket` (above), with the slots in the lock instead
// of a pooled block: the holder, a pending `grant` of one slot or nobody
// owns the lock at every moment; ownership passes only by the CAS of
// `in_use` (Acquire, paired with its Release free) or the head's CAS of its
// slot's `grant` (Acquire, paired with the holder's Release store, made
// only on a slot with a ticket out while `in_use` stays true). A `Relax`
// panic after taking a ticket aborts; a panicking hint in `unlock`
// releases from slot 0 first.
unsafe impl<const S: usize, R: Relax> lock_api::RawMutex for RonTicketInline<S, R> {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = Self::new();
    type Guard = PlaceToken;

    #[inline]
    fn lock(&self) -> PlaceToken {
        self.acquire()
    }

    #[inline]
    fn try_lock(&self) -> Option<PlaceToken> {
        self.try_acquire()
    }

    #[inline]
    unsafe fn unlock(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.is_held()
    }
}

#[cfg(not(loom))]
// SAFETY: `unlock_fair` is `release`; the `RawMutex` argument covers it.
unsafe impl<const S: usize, R: Relax> lock_api::RawMutexFair for RonTicketInline<S, R> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }
}
