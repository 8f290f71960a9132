//! [`RonTicket`]: RON Algorithm 2, a ticket lock per slot and a route-ordered
//! handover between slots, with one slot per CPU from a pool
//! ([`RonTicketInline`]: the same protocol with `S` slots in the lock).
//!
//! Each slot is a small ticket lock whose admissions are grants: one
//! 64-bit word holds the tickets taken (`tickets`, high half) and the
//! *grant word* (low half): `next`, the tickets admitted so far (the
//! ticket of the slot's *head*), and the block references the last grant
//! passed. A waiter takes a ticket (`tickets += 1`, which also counts it
//! as waiting: waiters = `tickets - next`), waits until it is the head,
//! then waits for its admission or for the lock word to be free. The
//! holder's unlock walks the slots along the route from its own slot + 1
//! (own slot last) and grants the first one with `tickets != next`: one
//! `fetch_xor` of the grant word (`next + 1`, the references), keeping
//! `in_use` true; with no waiter it frees `in_use`. A head that takes a
//! free `in_use` counts its own admission the same way.
//!
//! The head reads its admission (`next` = its ticket + 1) and writes
//! nothing to take it: on the handover path the grantee's slot line moves
//! three times (the releaser's scan, its grant, the head's read) instead
//! of four. `next` only counts up, one admission at a time and never past
//! a waiting ticket, and a waiter's ticket comes from an RMW that read
//! the word's latest value, so `next == ticket + 1` (modulo `2^24`) is
//! only ever its own admission. The bank (below) sits on the slot's next
//! cache line.
//!
//! ## Where the slots live
//! [`RonTicket`] is 8 bytes: `in_use` and the 32-bit index of a *block*
//! of [`BLOCK_SLOTS`] ticket slots in a
//! process-wide pool (0: none), of which it uses the first
//! [`active_slots()`](crate::ron_raw::active_slots): one per CPU of the
//! installed route (rounded up to a power of two, at most 256). A lock
//! holds a block only while it has registered waiters: the first waiter
//! claims one, every waiter holds a reference from before it takes its
//! ticket until after its admission (and, once it owns the lock,
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
//! to the grantee inside the grant word (its references field), together
//! with the *bank* of the releaser's slot: the references earlier grants
//! passed to it. The new owner adds what it receives to its own
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
//! (`tickets == next`) and every bank emptied before its
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
//! | false | claimed | `tickets == next`, `banked = 0` | unlocked; waiters' references not yet dropped |
//! | true | none or claimed | `tickets - next = c` | held; `c` waiters queued FIFO in `s` (the head holds ticket `next`); `banked` references owed to the block |
//! | true | claimed | `next` = the head's ticket + 1, `tickets - next = c - 1`, grant word's references `r` | handed to `s`: its head reads its admission, owns the lock and banks the `r` references passed |
//!
//! (The inline lock is always "claimed".) Taking a ticket and being counted
//! are one `fetch_add`, so an unlock never waits for a waiter that counted
//! itself but has not yet taken its ticket (the published RON-ticket's
//! unlock did, docs/design.md, "Pitfalls"). Only the head of a slot may
//! CAS `in_use`, and `next` only moves when a holder grants the head or
//! the head takes a free `in_use`, so a granted slot's head owns the lock
//! from the grant on and can only leave by taking it.
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
//! * A waiter whose CPU looked shared (its policy's
//!   [`queue_now`](crate::relax::Relax::queue_now) says no: with the
//!   default policy, its thread's last timed yield ran another thread)
//!   waits unregistered in the same way, pooled or inline, for its first
//!   [`UNQUEUED_NS`](crate::relax::UNQUEUED_NS) (1 ms), and only then
//!   takes a ticket: no bound during that time, the bound above after it.
//!   A ticket holder that is off the CPU stalls every handover that
//!   reaches it until the scheduler runs it again, which with more threads
//!   than CPUs collapsed the lock (measured: `docs/design.md`, "`RonTicket`
//!   when threads outnumber CPUs"). With one thread per CPU the policy
//!   says to queue, and nothing changes.
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
//! at the free, so a handover writes only the grantee's slot word (one
//! `fetch_xor`); a release scans `n` slots (one load each, and the bank's
//! line of each when it frees).
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
use crate::relax::{DefaultRelax, Relax, Unqueued};
#[cfg(all(not(loom), not(all(feature = "std", not(shuttle), not(ron_vm)))))]
use crate::ron_raw::pool::POOL_BLOCKS;
use crate::ron_raw::pool::{self, BLOCK_SLOTS, Block, BlockRef, BlockSlots, Pool, PoolPaths};
#[cfg(all(feature = "std", not(loom), not(shuttle), not(ron_vm)))]
use crate::ron_raw::pool::{GROW_CHUNKS, POOL_BLOCKS};
use crate::sync::{AtomicBool, AtomicU32, AtomicU64, Ordering};
use crate::token::PlaceToken;
use crate::unwind::{AbortOnUnwind, OnUnwind};

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

/// Bits of the grant word's admission count (`next`, see [`TicketSlot`]):
/// a slot's tickets are compared modulo `2^24`, so fewer than that many
/// waiters may wait in one slot at once.
const NEXT_BITS: u32 = 24;
const NEXT_MASK: u32 = (1 << NEXT_BITS) - 1;
/// Where `next` starts in the grant word (below it: the references).
const NEXT_SHIFT: u32 = 8;
/// The block references a grant passes on.
const REFS_MASK: u32 = 0x7F;
// A grant passes at most `BANK_MAX + 1` references.
const _: () = assert!(BANK_MAX < REFS_MASK);
/// One ticket, in the slot word's high half.
const TICKET: u64 = 1 << 32;

/// The grant word with `next` admissions and `refs` block references.
#[inline]
fn grant_word(next: u32, refs: u32) -> u32 {
    ((next & NEXT_MASK) << NEXT_SHIFT) | refs
}

/// The admissions a grant word counts (modulo `2^24`): the ticket of
/// the slot's head.
#[inline]
fn next_of(grant: u32) -> u32 {
    grant >> NEXT_SHIFT
}

/// One slot: a ticket lock whose admissions are grants, and a bank of
/// block references, alone on their cache lines.
///
/// `word`: the tickets taken (high half) and the *grant word* (low half):
/// the tickets admitted so far, `next` (modulo `2^24`: the ticket of the
/// slot's head), and the block references the last grant passed. An
/// arrival takes a ticket with one `fetch_add` of the high half; a
/// holder grants the head with one `fetch_xor` of the low half, which
/// cannot carry into the tickets; a head admitted by a free `in_use`
/// counts itself in the same way. The head reads its admission and never
/// writes this line to take a grant. `banked` sits on the next line,
/// written only by the lock's holder.
#[repr(C)]
struct TicketSlot {
    word: AtomicU64,
    _line: [u8; 56],
    /// Block references the lock's owners banked here (pooled only): read
    /// and written only by the lock's holder.
    banked: AtomicU32,
}

impl TicketSlot {
    crate::sync::const_fn_unless_loom! {
        fn new() -> Self {
            TicketSlot {
                word: AtomicU64::new(0),
                _line: [0; 56],
                banked: AtomicU32::new(0),
            }
        }
    }

    #[inline]
    fn has_waiters(&self) -> bool {
        // Relaxed: a stale count of tickets only delays a waiter (it also
        // polls `in_use`); the grant word changes only under the lock,
        // whose Release/Acquire brought its last value to the holder.
        let v = self.word.load(Ordering::Relaxed);
        ((v >> 32) as u32 & NEXT_MASK) != next_of(v as u32)
    }

    /// Hands the lock to this slot's head with `refs` block references
    /// (the caller holds the lock, keeps `in_use` true, and saw a ticket
    /// out in this slot).
    #[inline]
    fn grant(&self, refs: u32) {
        // Relaxed: the grant word changes only under the lock (we hold
        // it), so this is its current value; only the tickets may move.
        let old = self.word.load(Ordering::Relaxed) as u32;
        let new = grant_word(next_of(old).wrapping_add(1), refs);
        // Release: passes our critical section (and the bank's values) to
        // the head's Acquire load of the word (arrivals' RMWs in between
        // continue the release sequence).
        self.word.fetch_xor(u64::from(old ^ new), Ordering::Release);
    }

    /// Empties the bank: the references it held (the caller holds the lock).
    #[inline]
    fn take_bank(&self) -> u32 {
        // Relaxed (both): only the lock's holder touches the bank, and the
        // lock's own Release/Acquire (grant, `in_use`) orders its holders.
        // The store is skipped when empty.
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
        // handover is through the grant word or `in_use`.
        (self.word.fetch_add(TICKET, Ordering::Relaxed) >> 32) as u32
    }

    /// Waits with `ticket` until the caller owns the lock: admitted by a
    /// grant, or, as the slot's head, by a free `in_use` (it then counts
    /// its admission itself). Returns the block references the grant
    /// passed on (0 after a free `in_use`).
    #[inline]
    fn wait_turn<R: Relax>(&self, in_use: &TasFlag, ticket: u32, relax: &mut R) -> u32 {
        let me = ticket & NEXT_MASK;
        let after = ticket.wrapping_add(1) & NEXT_MASK;
        loop {
            // Acquire: pairs with the Release `fetch_xor` of the grant
            // that admits us. `next` only counts up, one admission at a
            // time and never past a waiting ticket, and our ticket's RMW
            // read the word's latest value: so `next == after` is our own
            // admission, never an older word.
            let w = self.word.load(Ordering::Acquire) as u32;
            let next = next_of(w);
            if next == after {
                crate::coverage::hit!("ron_ticket.grant_taken");
                return w & REFS_MASK;
            }
            let head = next == me;
            if head && in_use.take_if_free() {
                crate::coverage::hit!("ron_ticket.free_taken");
                // Relaxed: we hold the lock, so the grant word is
                // stable and this is its value.
                let old = self.word.load(Ordering::Relaxed) as u32;
                // Relaxed: counts our admission, which makes the next
                // ticket the head; it passes no data (the next head
                // gets the lock by a grant or `in_use`, whose orderings
                // carry it).
                self.word
                    .fetch_xor(u64::from(old ^ grant_word(after, 0)), Ordering::Relaxed);
                return 0;
            }
            relax.relax();
            // Not yet the head, a look loads the word alone.
            #[cfg(all(ron_vm, not(loom), not(shuttle)))]
            if !head {
                crate::relax::vm_idle(relax, crate::sync::vm_addr(&self.word));
            }
        }
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

/// Runs the test hook of `acquire_in_observed` (which marks the moment
/// a waiter queues: overtakes are counted from it) after a lock taken
/// without queuing, as the fast path does: holding the lock, which
/// `give_back` releases if the hook panics.
fn observed_holding(on_wait: Option<impl FnOnce()>, give_back: impl FnOnce()) {
    if let Some(f) = on_wait {
        let held = OnUnwind::new(give_back);
        f();
        held.disarm();
    }
}

/// [`UNREGISTERED_LOOKS`] looks at `in_use` with `relax` between them,
/// taking it if free (test-and-test-and-set): the wait of a waiter that
/// holds no ticket (no block to be had, or not queuing yet). Whether it
/// took the lock.
fn look_unregistered<R: Relax>(in_use: &TasFlag, relax: &mut R) -> bool {
    for _ in 0..UNREGISTERED_LOOKS {
        if in_use.take_if_free() {
            crate::coverage::hit!("ron_ticket.unregistered_took");
            return true;
        }
        relax.relax();
    }
    false
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
/// * **States:** `in_use`, the block index, and per slot its word (tickets
///   taken, admissions, references passed) and bank; table in the
///   [module docs](self).
/// * **Guarantees:** mutual exclusion under any schedule and hint;
///   progress; FIFO inside a slot, route order between slots: a registered
///   waiter with `q` waiters ahead in its slot is overtaken by at most
///   `q + (q + 1) * (n - 1) + 1` acquisitions, `n` =
///   [`active_slots()`](crate::ron_raw::active_slots). No bound while the
///   pool is exhausted (the waiter waits unregistered and retries), nor
///   for the first millisecond of a waiter whose CPU looked shared (it
///   waits unregistered first).
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
        let mut unqueued = Unqueued::of(&relax);
        let mut on_wait = Some(on_wait);
        loop {
            let queuing = !unqueued.lasts();
            let room = if queuing {
                pool::enter(&self.home, pool, self as *const Self as usize)
            } else {
                crate::coverage::hit!("ron_ticket.unqueued");
                None
            };
            if let Some(room) = room {
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
                // then needs no look-up), after its admission. The flag
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
            // No block to be had (the pool is exhausted: the waiter waits
            // here, and the hook hears so now), or not queuing yet: wait
            // unregistered for a while (TTAS), then try again. A panic
            // here holds nothing.
            crate::coverage::hit!("ron_ticket.unregistered");
            if queuing && let Some(f) = on_wait.take() {
                f();
            }
            if look_unregistered(&self.in_use, &mut relax) {
                observed_holding(on_wait.take(), || {
                    // SAFETY: `look_unregistered` just took the lock for
                    // us, unregistered (token `at(s)`), from `pool`.
                    unsafe { self.release_in_pool(pool, PlaceToken::at(s)) }
                });
                return PlaceToken::at(s);
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
// SAFETY: by the state table in the module docs, the holder, a granted
// head (admitted, not yet returned from `lock`) or nobody owns the lock at
// every moment. `lock` and
// `try_lock` return a guard only after taking ownership one of two ways: the
// CAS `in_use` false -> true (Acquire, pairing with the Release store that
// freed it), or as the waiter whose ticket the grant word of its slot `s`
// admits (`next` = its ticket + 1, read with Acquire, pairing with the
// holder's Release `fetch_xor`; tickets come from one `fetch_add` each, and
// `next` counts admissions one at a time, so exactly one waiter reads
// itself admitted). The holder grants only a slot with a ticket out, only
// while it holds a reference to the block the lock names (so the block
// cannot change lock under it; the grant passes that reference on), and
// keeps `in_use` true; only a head (the ticket `next` names) may CAS
// `in_use`, and it then counts its own admission, so a granted slot's head
// owns the lock from the grant on. Every waiter holds its block reference
// from before its ticket to after its admission, and a referenced block is never detached or claimed
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
///   `q + (q + 1) * (S - 1) + 1` acquisitions once it holds a ticket; no
///   pool, so no exhaustion (a waiter whose CPU looked shared waits
///   unregistered for its first millisecond, as for [`RonTicket`]).
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
        let mut on_wait = Some(on_wait);
        // Not queuing yet (the CPU looks shared): look at `in_use` first,
        // holding nothing.
        let mut unqueued = Unqueued::of(&relax);
        while unqueued.lasts() {
            crate::coverage::hit!("ron_ticket.unqueued");
            if look_unregistered(&self.in_use, &mut relax) {
                observed_holding(on_wait.take(), || {
                    // SAFETY: `look_unregistered` just took the lock for
                    // us, unregistered (token `at(s)`).
                    unsafe { self.release(PlaceToken::at(s)) }
                });
                return PlaceToken::at(s);
            }
        }
        let ticket = slot.take_ticket();
        // A ticket cannot be given back without waiting for its turn: a
        // panic in `relax` (or `on_wait`) aborts.
        let queued = AbortOnUnwind::new("RonTicketInline");
        if let Some(f) = on_wait.take() {
            f();
        }
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
// of a pooled block: the holder, a granted head or nobody owns the lock at
// every moment; ownership passes only by the CAS of `in_use` (Acquire,
// paired with its Release free; only a slot's head tries it, and counts
// its own admission) or by a waiter reading its own admission in its
// slot's grant word (Acquire load, paired with the holder's Release
// `fetch_xor`, made only on a slot with a ticket out while `in_use` stays
// true; admissions are counted one at a time, so exactly one waiter reads
// itself admitted). A `Relax` panic after taking a ticket aborts; a
// panicking hint in `unlock` releases from slot 0 first.
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

#[cfg(all(test, feature = "std", not(any(loom, shuttle, ron_vm))))]
mod tests {
    use super::*;
    use core::cell::UnsafeCell;
    use std::sync::atomic::{AtomicUsize, Ordering as O};

    /// A counter that only the lock holder touches (Miri sees a data race
    /// if two ever hold the lock at once).
    struct Guarded(UnsafeCell<u64>);
    // SAFETY: touched only under the lock being tested.
    unsafe impl Sync for Guarded {}

    /// Four threads, two of which found their CPU shared (a
    /// `SpinWhileAlone` policy then says not to queue), each increment the
    /// counter under the lock; all four first meet it held: `lock(f)`
    /// acquires, calling `f` once it waits.
    fn shared_and_own_waiters(
        lock: impl Fn(&dyn Fn()) -> PlaceToken + Sync,
        unlock: impl Fn(PlaceToken) + Sync,
    ) {
        const THREADS: usize = 4;
        const EACH: u64 = if cfg!(miri) { 10 } else { 2_000 };
        let n = Guarded(UnsafeCell::new(0));
        let waiting = AtomicUsize::new(0);
        let held = lock(&|| {});
        std::thread::scope(|sc| {
            for i in 0..THREADS {
                let (n, lock, unlock, waiting) = (&n, &lock, &unlock, &waiting);
                sc.spawn(move || {
                    if i % 2 == 0 {
                        crate::relax::mark_cpu_shared();
                    }
                    for k in 0..EACH {
                        let t = lock(&|| {
                            if k == 0 {
                                // Relaxed: a count; nothing is published by it.
                                waiting.fetch_add(1, O::Relaxed);
                            }
                        });
                        // SAFETY: we hold the lock.
                        unsafe { *n.0.get() += 1 };
                        unlock(t);
                    }
                });
            }
            // Every thread waits for the lock we hold before we let go (the
            // shared ones queue after `UNQUEUED_NS`, and the hook hears
            // of them then).
            // Relaxed: the count only decides when to let go.
            while waiting.load(O::Relaxed) < THREADS {
                std::thread::yield_now();
            }
            unlock(held);
        });
        // SAFETY: every thread has finished.
        assert_eq!(unsafe { *n.0.get() }, THREADS as u64 * EACH);
    }

    #[test]
    fn waiters_whose_cpu_looked_shared_wait_unqueued_and_exclude() {
        let pooled = RonTicket::<DefaultRelax>::new();
        shared_and_own_waiters(
            |f| pooled.acquire_in_observed(0, f),
            // SAFETY: the token of our own acquisition, which we hold.
            |t| unsafe { pooled.release(t) },
        );
        let inline = RonTicketInline::<4, DefaultRelax>::new();
        shared_and_own_waiters(
            |f| inline.acquire_in_observed(1, f),
            // SAFETY: as above.
            |t| unsafe { inline.release(t) },
        );
        // The shared threads met the lock held and waited unqueued (their
        // first `UNQUEUED_NS`): counted where the path counters are in.
        if crate::coverage::ENABLED {
            assert!(crate::coverage::count("ron_ticket.unqueued") > 0);
        }
    }
}
