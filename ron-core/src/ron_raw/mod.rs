//! [`RonRaw`], and [`RonInline`], its variant with inline slots. A TTAS
//! fast path, a route-ordered handover between *spinning* waiters written
//! into the lock word, and waiters that park on a futex when their CPU is
//! shared or their wait grows long, so that it holds up when threads
//! outnumber CPUs. It is [`RonRw`](crate::RonRw)'s writers' queue; the
//! default mutex is [`RonGrant`](crate::RonGrant), which shares its
//! waiting policy (`wait.rs`), parking (`park.rs`) and pool (`pool.rs`)
//! and hands over by nxtRON's grant instead (measured in `docs/design.md`,
//! "`RonGrant`: `RonRaw`'s waiting over `NxtRon`'s grant").
//!
//! ## Why not plain nxtRON
//! A handover lock that grants a waiter which is not running stalls everyone
//! until the scheduler runs that waiter again (milliseconds). With more
//! threads than CPUs most waiters are not running, and such locks collapse.
//! `RonRaw` changes two things:
//!
//! 1. **Ownership lives in the lock word only.** A handover writes
//!    `HANDED(slot, seq)` into the lock word (and rings the slot's doorbell);
//!    the lock then belongs to whichever thread first CASes that word to
//!    `LOCKED`. A waiter of the named slot does so at once; any other waiter
//!    that has watched the *same* `HANDED` value for [`PATIENCE_NS`] (or,
//!    without `std`, [`PATIENCE`] looks) may take it over. Safety is
//!    therefore that of a test-and-set lock: every
//!    `X -> LOCKED` transition is one CAS with one winner, from `FREE` or
//!    `HANDED` only, and only the owner writes `FREE`/`HANDED`. The slots,
//!    counts and doorbells steer *who* gets the lock, never *whether* two do.
//! 2. **Only spinning waiters are registered.** A waiter registers in its
//!    slot only while it spins on a CPU of its own, and leaves it before it
//!    yields or parks, so a handover targets a thread that was spinning a
//!    moment ago; if it got preempted right then, the running waiters take
//!    the handover over after [`PATIENCE_NS`] ([`PATIENCE`] looks without
//!    `std`). On a shared CPU a waiter never registers: it looks at the
//!    lock word a few times and parks, and releases free the lock (no
//!    handover to a thread the scheduler may not run for milliseconds).
//!
//! ## Waiting phases
//! One function of `word.rs` a phase, named in the first column.
//!
//! | phase | what the waiter does | how long | what ends it |
//! |---|---|---|---|
//! | fast path (`acquire_fast`) | one CAS `FREE -> LOCKED` | once | success, or on to the unregistered looks (or a shared round) |
//! | shared round (`wait_shared_round`) | when its thread's last yield showed the CPU shared, or more threads wait for this `RonRaw` than there are CPUs (a first round whose thread has no verdict on its CPU younger than [`KEEP_OWN_NS`](crate::relax::KEEP_OWN_NS) asks first: one timed yield, the verdict of [`relax`](crate::relax)): `SHARED_LOOKS` looks at the lock word (`word.rs`), a yield after each (no spin on a shared CPU), never registered, then *parks* (below) | every round while the CPU looks shared | taking the lock (free, or a stale handover) |
//! | unregistered looks (`look_unregistered`) | TTAS looks at the lock word, backoff doubling up to [`UNREGISTERED_PAUSE_MAX`] pauses | [`UNREGISTERED_LOOKS`] looks, first round only; none when waiters are already registered (a `RonRaw` with a block, a `RonInline` with a marked slot) | taking the lock (free, or a stale handover); on to the registered wait at once when it sees a handover in the word, else after its looks |
//! | registered wait (`wait_registered`) | registers in its slot (a `RonRaw` enters its lock's pooled block, claiming one if the lock has none, and keeps it until it gets the lock), spins on the slot's doorbell and looks at the lock word only once right after registering, whenever the doorbell rings, and once at the end of the round (so each acquisition's two writes of the word do not send every waiter a miss; the look after registering catches a release that scanned just before it registered). When the doorbell rings it first tries the handover the releaser noted beside the doorbell (one CAS, no load of the word); with slot-mates, only the one that clears the doorbell first looks | the thread's last round's budget (its first: [`REGISTERED_SPINS`] spins), adapted between [`REGISTERED_SPINS_MIN`] and [`REGISTERED_SPINS_MAX`] | taking a handover to its slot (at once), a free lock, or a stale handover; else leaves the slot, looks once more, on to yield or park |
//! | unregistered round (`wait_unregistered_round`) | when no block is to be had (pool exhausted): TTAS looks every 8 spins | as the registered wait | as the registered wait |
//! | yield or park (`yield_or_park`) | once the wait has lasted [`PARK_AFTER_NS`] (and in a shared round), *parks*: sleeps on a futex (with its deadline, if timed) while another waiter of the lock keeps its *watch*, else takes the watch; otherwise (and as the watcher) gives the CPU away: a yield back within [`FAST_YIELD_NS`](crate::relax::FAST_YIELD_NS) (nobody else runnable) multiplies the next registered wait's budget by [`BUDGET_GROWTH`], a slow one quarters it and marks the CPU shared | one `sched_yield` (without `std`: a short backoff), or a sleep until woken | a new round (a registered wait, or a shared round on a shared CPU) |
//! | give-up (timed; `ask_registered`, `look_or_give_up`) | leaves its slot, takes a handover to its slot that raced with leaving, drops its block reference, leaves the watch (waking a sleeper if it was the last watcher) | when `keep_waiting` (a deadline) says no, asked after every failed look and after a sleep | returns `None` (or the lock, if the last look took it) |
//!
//! Under contention with one thread per CPU, the waiters are registered and
//! the lock travels along the route; at low contention it behaves like a
//! TTAS lock (no handover cost, the fast path is one CAS and one store).
//! With more threads than CPUs they park, and the lock behaves like a
//! parking TTAS lock (parking_lot's shape): releases free it, running
//! threads barge, woken ones compete.
//!
//! ## Parking (`std`)
//! Sleepers and watchers are counted in a process-wide table of buckets
//! (`park.rs`), one per lock at a time, keyed by the lock's address;
//! sleepers sleep on the bucket's futex word. The release of an
//! uncontended lock stays a load and a blind store, and such a release
//! can miss a sleeper that registered after its load; so liveness does
//! not rest on releases. While a lock has sleepers, one of its waiters is
//! awake, the *watcher* (it spins and yields, and takes the lock when it
//! is free or stale-handed); when the watcher gets the lock, gives up or
//! unwinds, it leaves the watch and, the last watcher, wakes one sleeper,
//! which takes the watch. Besides, a release of a lock that holds a block
//! (sleepers keep it, so this is every release while they sleep, unless
//! the block changed under them) and frees it wakes one sleeper if none
//! is on its way: that keeps woken waiters coming while the lock is busy
//! (wake-ups follow the futex queue: arrival order). Neither side runs a
//! fence or `membarrier`; the waker pays a `futex` wake.
//!
//! **Fair turns.** Parked waiters alone would starve: registered waiters
//! (running on CPUs whose other threads sleep) pass the lock among
//! themselves by handovers, and the watcher, which looks at the lock word
//! without registering, only ever finds it handed. So once every
//! [`FAIR_EVERY_NS`] of a releasing thread (parking_lot's eventual
//! fairness), a release that would hand the lock along the route while
//! the lock has a watcher hands it to the watcher instead
//! (`HANDED(WATCH, seq)`). The watcher takes it at its next look and,
//! leaving the watch, wakes the next sleeper; the releaser's next wait
//! starts as a shared round (it parks), so its place among the running
//! waiters goes to the one woken. A release that frees the lock (nobody
//! registered) pauses instead (below). Measured (`docs/design.md`): on
//! the VM with two threads per CPU, the threads that made no acquisition
//! in a 20,000-acquisition window fell from 117-506 to 10-296 (of
//! 128-512) on the 64- to 256-CPU machines; on 2 CPUs (Intel Xeon) at 4 and 8
//! threads with nCS 0, throughput rose 1.5-1.8x. Without a watcher (one
//! thread per CPU, no sleepers) nothing changes. No user code runs
//! while a waiter sleeps; `keep_waiting` may run while it holds the watch,
//! and unwinding out of it leaves the watch (waking a sleeper if needed).
//!
//! ## What a handover costs
//! Measured on the virtual many-core machine (`docs/vm.md`), where every
//! cache-line transfer on the handover's path shows. A waiter that takes
//! its slot's handover leaves its slot's bitmap bit and (alone in its
//! slot) its doorbell set: the next scan that finds the slot empty clears
//! the bit, and the next registration clears the doorbell in the same
//! read-modify-write that counts it, so neither costs the new owner a
//! transfer before its critical section. The release writes the
//! handover's number beside the doorbell of the slot it rings, and the
//! woken waiter takes the lock with one CAS from that value instead of a
//! load and a CAS. An owner that waited holding the lock's block keeps
//! that reference for its release (its CAS writes `KEPT`): the
//! acquisition drops nothing and the release takes no reference of its
//! own, and the release counts the handover with one read-modify-write
//! of the block's head line before it rings, so that line's miss is not
//! between the doorbell and the publication. What is left on the path:
//! the release's count and ring of the grantee's doorbell, the grantee's
//! read of it, its CAS of the lock word, its slot count, the release's
//! drop of its reference, and the critical section's data.
//!
//! ## Lock word
//! | value | meaning | who may write next |
//! |---|---|---|
//! | `FREE` (0) | unlocked | anyone: CAS -> `LOCKED` |
//! | `LOCKED` (1) | held | the owner: `FREE` or `HANDED` |
//! | `KEPT` (3) | held by an owner that waited holding the lock's pooled block and kept that reference for its release (`RonRaw` only; `LOCKED` to everyone else: the owner's release reads it back, since a guard, which anyone can forge, cannot say so) | the owner: `FREE` or `HANDED`, after dropping the reference |
//! | `HANDED(s, seq)` | released to slot `s`, owned by nobody | a waiter of `s` (at once) or any waiter that watched this exact value for `PATIENCE_NS` (`PATIENCE` looks): CAS -> `LOCKED` (`KEPT` holding a block reference) |
//! | `HANDED(WATCH, seq)` | released to the parking watcher (a fair turn, below), owned by nobody | the waiter holding the lock's watch (at once) or, as above, any waiter after `PATIENCE_NS` |
//!
//! `seq` is the low 16 bits of the lock's handover count (`RonRaw`'s
//! release counts before it scans, so one whose scan finds nobody counts
//! too),
//! which only the owner writes (ordered by the lock itself: `RonInline` keeps it beside
//! the word, `RonRaw` in its pooled block, on the line of the block's
//! reference count) and which survives `FREE` periods: `HANDED(s, n)`
//! recurs only after 65,536 further handovers, never merely because the
//! lock went idle, so a waiter can judge a handover's age by how long it
//! has watched one value (see [`WATCH_HORIZON_NS`] for the wrap).
//! For `RonRaw` that holds while the lock keeps its block: a handover
//! happens only while the lock has a block and its releaser holds a
//! reference, and the block stays attached as long as a waiter holds one
//! (a registered waiter keeps its reference across its rounds). Once every
//! waiter is gone the block goes back to the pool, and the next contention
//! claims a block whose count continues from another history, so a later
//! handover may repeat a `HANDED` value that a waiter watched before the
//! block changed (one in its unregistered looks or an unregistered round,
//! which holds no reference, or one left in a block detached under it),
//! if it saw no other value between
//! its looks: that waiter may then take the new handover over before
//! [`PATIENCE_NS`] (the new count must match the old in its low 16 bits
//! and the slot too). An early takeover only costs route order (the
//! grantee finds the lock taken and waits on), never exclusion: every
//! `X -> LOCKED` is still one CAS with one winner. The slot takes 14 bits.
//! Slot words and bitmap: see [`slots`](crate::slots); here the `GRANT`
//! bit is only a doorbell (the slot's waiters spin on their own line and
//! look at the lock word when it rings, after registering and at the end
//! of their round).
//! A stale handover (its grantee preempted) is therefore noticed by
//! waiters of other slots at the end of their round, at most
//! [`REGISTERED_SPINS_MAX`] spins later, or at once by unregistered waiters.
//!
//! ## Guarantees
//! * Mutual exclusion under any schedule and any hint (TAS argument above).
//! * Progress: a `HANDED` word is taken by its slot or, after `PATIENCE`
//!   looks, by any waiter, so the lock never stays unowned while a thread
//!   waits.
//! * **No bounded-waiting guarantee.** Handovers follow the route among
//!   registered waiters, but waiters leave their slot between rounds and the
//!   fast path barges, so the bound is statistical (measured: fairness
//!   factor in `ron bench`). Use [`RonTicket`](crate::RonTicket) or
//!   [`NxtRon`](crate::NxtRon) where a bound is required.
//! * Panics: no user code runs while a waiter is registered (the CPU hint
//!   is asked before); an unlock whose hint panics releases the lock
//!   (scanning from slot 0) before it unwinds (`docs/panic-safety.md`).
//! * A holder that is descheduled stalls its waiters (as for every
//!   lock); waiters park or yield after each round, so the holder gets its
//!   CPU back quickly.
//! * Parking: a sleeper is woken by the watcher of its lock when that
//!   watcher gets the lock or leaves (and usually earlier, by a release);
//!   a timed sleeper also wakes at its deadline and gives up.
//!
//! ## Layout: 8 bytes, slots from a pool
//! `RonRaw` is the lock word (4 bytes) and the 32-bit index of its slot
//! block in the pool (0: none), 8 bytes aligned to 8, so both always share
//! a cache line; a `lock_api::Mutex<RonRaw, u64>` takes 16 bytes, as
//! parking_lot's `Mutex<u64>` does. Not cache-padded (pad it yourself if
//! neighbours would share its line). An index instead of a pointer halves
//! the lock: mapping it to the block takes the pool (the process-wide one;
//! the loom models' `with_pool` entry points take their own), a slice index for the
//! static blocks and one more load for a grown chunk's, paid only while the
//! lock has a block. The handover count moved into the block, beside its
//! reference count (see "Lock word" above for what that changes). The
//! route-ordered slots live in a process-wide [`pool`] of blocks; a lock
//! claims one only when a waiter wants to register and returns it as soon
//! as no waiter holds it (a waiter keeps it from its first registration
//! until it gets the lock), so memory follows the number of
//! locks contended *at that moment*, not the number of locks: a lock per
//! object costs 8 bytes each. This is the shape of parking_lot's global
//! table of wait queues and of [`ShRon`](crate::ShRon)'s process-wide
//! table, chosen over them because a per-lock block keeps what made the
//! inline lock fast under contention: the waiters of one lock spin on that
//! lock's own lines, and a release scans a bitmap word per 64 slots.
//! Claiming costs a CAS on the block's count and cleaning the lines of the
//! slots in use, once per contention episode; reclamation is a reference
//! count in the block,
//! safe because blocks are type-stable (see [`pool`]). Ownership never
//! depends on a block: blocks only steer *who* gets a handover.
//!
//! A block has [`BLOCK_SLOTS`] slots (256 with `std`, 16 without), of
//! which a lock uses the first [`active_slots`]: one per CPU of the
//! installed route (its length rounded up to a power of two; 16 while no
//! route is installed). One CPU per slot matters on many cores: waiters
//! that share a slot share a doorbell, so every ring sends them all a
//! miss and they race for the lock word (on the virtual 128-CPU EPYC
//! 7773X, 16 slots of 8 CPUs each made the handover about 4x slower than
//! one slot per CPU). Beyond 256 CPUs, neighbours along the route share a
//! slot. A claim cleans only the slots in use, so on a small machine a
//! block costs a few lines, not its 32 KiB.
//!
//! Uncontended lock + unlock: one CAS, one load of the block
//! index (the same 8 bytes, so the same line), one release store; while
//! the lock keeps a block (a waiter holds it across its rounds), one more
//! load, of the block's bitmap (and, for a block of a grown chunk, of the
//! chunk's pointer): a release that finds nobody registered frees the lock
//! without touching the block's count.
//!
//! ## The pool
//! | | without `std` | with `std` |
//! |---|---|---|
//! | per lock | 8 bytes (the lock word and the block's index with its claim's generation) | the same |
//! | blocks | [`POOL_BLOCKS`] (256) static | 256 static, then chunks of [`GROW_CHUNK`] (256) allocated as the static ones are all in use, up to [`GROW_CHUNKS`] (15) chunks: [`POOL_MAX_BLOCKS`] = 4096 |
//! | memory | 2176 bytes a block (16 slots): 557 KiB of zero-initialised static memory, touched only as blocks get used | 32,896 bytes a block (256 slots): 8.0 MiB of zero-initialised static memory, plus 8.0 MiB of zeroed allocation per chunk (at most 128.5 MiB in all, address space rather than resident memory); of a block in use only its first [`active_slots`] slots are touched (on a 2-CPU machine 3 lines, on a 128-CPU one 129 lines, 16 KiB), so resident memory follows the contended locks and the machine's size; chunks are never freed (blocks are type-stable) |
//! | in use | one block per lock with a registered waiter *at that moment* (a waiter keeps it from its first registration until it gets the lock) | the same |
//! | exhausted | further waiters wait unregistered on the lock word (TTAS with yields: unregistered rounds): slower handovers, never an error or a hang | the same, once 4096 blocks are in use |
//!
//! [`set_pool_limit`] caps how many blocks a program uses (allocated
//! chunks stay allocated; 0: nobody registers).
//!
//! ## Timed waiting
//! With `std`, `RonRaw` and `RonInline` implement
//! `lock_api::RawMutexTimed` (a parked timed waiter sleeps until its
//! deadline at most); [`RonRaw::try_acquire_in_while`] gives up
//! when a closure says so (without `std` too; it never sleeps, since it
//! must keep asking the closure: where it would park it yields). A waiter that gives up
//! leaves its slot and drops its block reference; a handover that had
//! chosen its slot just before is either taken by its last look (the call
//! then returns the lock) or left *orphaned*, `HANDED` to a slot nobody
//! waits in: `try_lock` and every registered waiter take such a word at
//! once, any other waiter after `PATIENCE_NS`, and `is_locked` counts it
//! free, so the lock is never lost.
//!
//! [`RonInline<S>`] is the same protocol with its `S` slots inline,
//! `128 * (S + 1)` bytes (2176 for the default 16): no claim on the first
//! contention, for a few hot locks that are contended all the time.
//!
//! ```
//! use ron_core::RonMutex;
//! let m = RonMutex::new(0u64);
//! std::thread::scope(|s| {
//!     for _ in 0..8 {
//!         s.spawn(|| for _ in 0..1000 { *m.lock() += 1 });
//!     }
//! });
//! assert_eq!(*m.lock(), 8000);
//! ```

use crate::slots::{PlaceToken, slot_hint_of};
use crate::sync::{AtomicU32, Ordering};

mod encoding;
mod inline;
pub(crate) mod park;
pub use park::PARK_AFTER_NS;
pub mod pool;
#[cfg(loom)]
#[doc(hidden)]
pub use wait::loom_fair_turns;
pub(crate) mod wait;
mod word;

pub use inline::RonInline;
pub use pool::{
    BLOCK_SLOTS, GROW_CHUNK, GROW_CHUNKS, POOL_BLOCKS, POOL_MAX_BLOCKS, Pool, active_slots,
    set_pool_limit,
};
pub use wait::{
    BUDGET_GROWTH, FAIR_EVERY_NS, FAIR_SLEEP_CROWD, PATIENCE, PATIENCE_NS, REGISTERED_SPINS,
    REGISTERED_SPINS_MAX, REGISTERED_SPINS_MIN, UNREGISTERED_LOOKS, UNREGISTERED_PAUSE_MAX,
    WATCH_HORIZON_NS,
};

/// `RonRaw`'s own threshold for a quick yield until it took the one of
/// the relax policies (a thread has one verdict on its CPU).
#[deprecated(
    since = "0.1.0",
    note = "RonRaw times its yields against `relax::FAST_YIELD_NS`"
)]
pub const QUICK_YIELD_NS: u64 = crate::relax::FAST_YIELD_NS;

/// Old name of [`UNREGISTERED_LOOKS`].
#[deprecated(since = "0.1.0", note = "renamed `UNREGISTERED_LOOKS`")]
pub const PHASE_A_LOOKS: u32 = UNREGISTERED_LOOKS;
/// Old name of [`UNREGISTERED_PAUSE_MAX`].
#[deprecated(since = "0.1.0", note = "renamed `UNREGISTERED_PAUSE_MAX`")]
pub const PHASE_A_PAUSE_MAX: u32 = UNREGISTERED_PAUSE_MAX;
/// Old name of [`REGISTERED_SPINS`].
#[deprecated(since = "0.1.0", note = "renamed `REGISTERED_SPINS`")]
pub const PHASE_B_LOOKS: u32 = REGISTERED_SPINS;
/// Old name of [`REGISTERED_SPINS_MIN`].
#[deprecated(since = "0.1.0", note = "renamed `REGISTERED_SPINS_MIN`")]
pub const PHASE_B_MIN: u32 = REGISTERED_SPINS_MIN;
/// Old name of [`REGISTERED_SPINS_MAX`].
#[deprecated(since = "0.1.0", note = "renamed `REGISTERED_SPINS_MAX`")]
pub const PHASE_B_MAX: u32 = REGISTERED_SPINS_MAX;

use encoding::FREE;
use pool::BlockRef;
use word::{Rooms, Word};

/// Slots of [`RonInline`] when the type does not name them (a
/// [`RonRaw`]'s pooled block has [`BLOCK_SLOTS`], of which it uses
/// [`active_slots`]).
pub const DEFAULT_SLOTS: usize = 16;

/// A RON lock whose handover lives in the lock word; see the [module
/// docs](self). 8 bytes (the lock word and a pooled block's index,
/// 8-aligned so that both share a line); its route-ordered slots (one per
/// CPU, up to 256) come from the [`pool`] while it is contended.
///
/// * **States:** the lock word (`FREE`, `LOCKED`, `KEPT`, `HANDED(slot, n)`) and,
///   while contended, a pooled block's slots (waiter count, doorbell,
///   bitmap); table in the [module docs](self).
/// * **Guarantees:** mutual exclusion (the lock belongs to whoever CASes
///   the word to `LOCKED`, as in a test-and-set lock; slots and the CPU
///   hint only steer); progress (a handover nobody takes is taken over
///   after [`PATIENCE_NS`], or [`PATIENCE`] looks without `std`); no
///   waiting bound (the fast path barges;
///   fairness is measured, not promised). Pool exhaustion degrades to
///   plain TTAS waiting, never to an error.
/// * **Panics:** the only user code is the CPU hint: `lock` asks it
///   before registering anything, and an unlock whose hint panics has
///   released the lock before it unwinds.
/// * **Cost:** uncontended, one CAS to lock and one load plus one store to
///   unlock. A thread that keeps freeing it while its waiters are all off
///   the CPU pauses after a release about every [`FAIR_EVERY_NS`]: a
///   yield, or a sleep of about 50 µs with [`FAIR_SLEEP_CROWD`] or more
///   waiters per CPU. An owner that waited long keeps its block until its
///   unlock, so a guard forgotten after such a wait keeps one block of the
///   pool for as long as the lock lives (as `RonTicket`'s does).
#[repr(C, align(8))]
pub struct RonRaw {
    word: Word,
    /// The index of the lock's block in its pool (0: none).
    block: AtomicU32,
}

/// A `RonRaw`'s rooms: its block, claimed from `pool` when it has none.
struct Pooled<'a> {
    home: &'a AtomicU32,
    pool: &'a Pool<'a>,
}

impl<'a> Rooms<BLOCK_SLOTS> for Pooled<'a> {
    type Room<'r>
        = BlockRef<'a>
    where
        Self: 'r;

    fn enter(&self) -> Option<BlockRef<'a>> {
        pool::enter(self.home, self.pool, self.home as *const _ as usize)
    }

    fn is_current(&self, room: &BlockRef<'a>) -> bool {
        room.is_current()
    }

    fn crowded(&self) -> bool {
        // Relaxed: a snapshot that only steers. A block is attached while
        // a waiter holds it; its index shares the lock word's line.
        self.home.load(Ordering::Relaxed) != 0
    }

    fn key(&self) -> usize {
        self.home as *const AtomicU32 as usize
    }

    fn waiters(&self) -> usize {
        // Relaxed: a snapshot that only steers. The block's count is its
        // waiters (each holds a reference while it waits), the lock's own
        // reference, and an owner's that kept its own for its release (or
        // a releaser's during its scan).
        let index = self.home.load(Ordering::Relaxed);
        self.pool
            .block(index)
            .map_or(0, |b| b.refs().saturating_sub(1) as usize)
    }

    /// The owner keeps its reference for its release (`kept_ref`): the
    /// release then needs no increment of the block's count, a line every
    /// arrival writes, and the acquisition no decrement.
    const HELD: u32 = encoding::KEPT;
}

/// `RonRaw`'s entry points with a model's own pool of blocks, for the loom
/// models only (built with `--cfg loom`; not part of the API).
#[cfg(loom)]
pub mod with_pool {
    use super::{PlaceToken, Pool, RonRaw};

    /// [`RonRaw::acquire_in`] with blocks from `pool`. A lock must use one
    /// pool for its whole life, and the pool must outlive it.
    pub fn acquire_in<'a>(lock: &'a RonRaw, pool: &'a Pool<'a>, slot: usize) -> PlaceToken {
        lock.acquire_in_pool(pool, slot)
    }

    /// [`RonRaw::try_acquire`] with blocks from `pool`.
    pub fn try_acquire(lock: &RonRaw, pool: &Pool<'_>) -> Option<PlaceToken> {
        lock.try_acquire_in_pool(pool)
    }

    /// [`RonRaw::try_acquire_in_while`] with blocks from `pool`.
    pub fn try_acquire_in_while<'a>(
        lock: &'a RonRaw,
        pool: &'a Pool<'a>,
        slot: usize,
        keep_waiting: impl FnMut() -> bool,
    ) -> Option<PlaceToken> {
        lock.try_acquire_in_pool_while(pool, slot, keep_waiting)
    }

    /// [`RonRaw::release`] with blocks from `pool`.
    ///
    /// # Safety
    /// As for [`RonRaw::release`].
    pub unsafe fn release(lock: &RonRaw, pool: &Pool<'_>, token: PlaceToken) {
        // SAFETY: the caller's contract is `release`'s.
        unsafe { lock.release_in_pool(pool, token) }
    }

    /// Whether `lock` holds a block of its pool now (a snapshot).
    pub fn has_block(lock: &RonRaw) -> bool {
        lock.has_block()
    }
}

impl RonRaw {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock (holding no block).
        pub fn new() -> Self {
            RonRaw { word: Word::new(), block: AtomicU32::new(0) }
        }
    }

    /// Acquires the lock; a contended waiter waits in its slot from the CPU hint.
    #[inline]
    pub fn acquire(&self) -> PlaceToken {
        if self.word.acquire_fast() {
            return PlaceToken::NONE;
        }
        self.acquire_contended()
    }

    /// The contended acquisition from the CPU hint, out of line so that
    /// the fast path above inlines into every caller as one CAS.
    #[cold]
    #[inline(never)]
    fn acquire_contended(&self) -> PlaceToken {
        self.acquire_slow_in(pool::global(), slot_hint_of(pool::active_slots()))
    }

    /// Acquires the lock waiting in slot `slot % 16` (any value is safe).
    pub fn acquire_in(&self, slot: usize) -> PlaceToken {
        self.acquire_in_pool(pool::global(), slot)
    }

    /// [`acquire_in`](Self::acquire_in) with blocks from `pool` (loom models
    /// build their own pools). A lock must use one pool for its whole life,
    /// and the pool must outlive it.
    pub(crate) fn acquire_in_pool<'a>(&'a self, pool: &'a Pool<'a>, slot: usize) -> PlaceToken {
        match self.try_acquire_in_pool(pool) {
            Some(t) => t,
            None => self.acquire_slow_in(pool, slot % pool::active_slots()),
        }
    }

    #[cold]
    fn acquire_slow_in<'a>(&'a self, pool: &'a Pool<'a>, s: usize) -> PlaceToken {
        let rooms = Pooled {
            home: &self.block,
            pool,
        };
        self.word.acquire_slow(&rooms, s)
    }

    /// Takes the lock if it is free (or handed to a slot whose waiters all
    /// gave up); never registers in a slot.
    #[inline]
    pub fn try_acquire(&self) -> Option<PlaceToken> {
        self.try_acquire_in_pool(pool::global())
    }

    /// [`try_acquire`](Self::try_acquire) for a lock whose blocks come from
    /// `pool` (as for [`acquire_in_pool`](Self::acquire_in_pool)).
    #[inline]
    pub(crate) fn try_acquire_in_pool(&self, pool: &Pool<'_>) -> Option<PlaceToken> {
        self.word
            .try_acquire(|t| self.slot_empty(pool, t))
            .then_some(PlaceToken::NONE)
    }

    /// Whether slot `t` of the lock's block has no waiter (a snapshot).
    fn slot_empty(&self, pool: &Pool<'_>, t: usize) -> bool {
        // Relaxed: a snapshot; whoever acts on it decides with a CAS.
        pool::slot_empty(pool, self.block.load(Ordering::Relaxed), t)
    }

    /// Tries to take the lock until `deadline`, waiting in the caller's
    /// slot (from the CPU hint); `None` only once the deadline has passed.
    /// See [`try_acquire_in_while`](Self::try_acquire_in_while).
    #[cfg(feature = "std")]
    pub fn try_acquire_until(&self, deadline: crate::timed::Deadline) -> Option<PlaceToken> {
        if self.word.acquire_fast() {
            return Some(PlaceToken::NONE);
        }
        let s = slot_hint_of(pool::active_slots());
        let rooms = Pooled {
            home: &self.block,
            pool: pool::global(),
        };
        self.word.acquire_slow_until(&rooms, s, deadline)
    }

    /// Waits for the lock in slot `slot % 16` (any value is safe) as long
    /// as `keep_waiting` says so: it is asked after every look that did not
    /// take the lock, and `None` is returned after it said `false` (a
    /// deadline, a cancellation flag; works without `std`).
    ///
    /// A waiter that gives up leaves its slot, looks once more (a handover
    /// to its slot that raced with leaving is taken: the call then returns
    /// the lock, late but never lost) and drops its reference to the pooled
    /// block. A handover that chose the slot just before the waiter left
    /// and was published after its last look stays in the lock word
    /// addressed to an empty slot; it is not lost: any waiter takes it over
    /// once it has watched it for [`PATIENCE_NS`], as for a grantee that
    /// was preempted (meanwhile [`try_acquire`](Self::try_acquire) fails,
    /// as on a held lock). A panic in `keep_waiting` leaves the slot before
    /// it unwinds.
    pub fn try_acquire_in_while(
        &self,
        slot: usize,
        keep_waiting: impl FnMut() -> bool,
    ) -> Option<PlaceToken> {
        self.try_acquire_in_pool_while(pool::global(), slot, keep_waiting)
    }

    /// [`try_acquire_in_while`](Self::try_acquire_in_while) with blocks
    /// from `pool` (as for [`acquire_in_pool`](Self::acquire_in_pool)).
    pub(crate) fn try_acquire_in_pool_while<'a>(
        &'a self,
        pool: &'a Pool<'a>,
        slot: usize,
        keep_waiting: impl FnMut() -> bool,
    ) -> Option<PlaceToken> {
        if let Some(t) = self.try_acquire_in_pool(pool) {
            return Some(t);
        }
        let rooms = Pooled {
            home: &self.block,
            pool,
        };
        self.word
            .acquire_slow_while(&rooms, slot % pool::active_slots(), keep_waiting)
    }

    /// Releases the lock: hands it to the next registered slot along the
    /// route after the acquirer's slot, or frees it.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: PlaceToken) {
        // SAFETY: same contract; the lock's blocks come from the global pool.
        unsafe { self.release_in_pool(pool::global(), token) }
    }

    /// [`release`](Self::release) for a lock whose blocks come from `pool`
    /// (as for [`acquire_in_pool`](Self::acquire_in_pool)).
    ///
    /// # Safety
    /// As for [`release`](Self::release).
    #[inline]
    pub(crate) unsafe fn release_in_pool(&self, pool: &Pool<'_>, token: PlaceToken) {
        // SeqCst: ordered with the waiters' publication of a block and
        // their SeqCst registration, so a release that sees no block is
        // ordered before their next look at the lock word (they then see
        // it free).
        // mutants: route order only: a store-buffering pair with a
        // waiter's publication and registration; a release that misses
        // them frees the lock, which the waiter (polling the lock word)
        // takes at its next look; loom does not explore store buffering.
        let index = self.block.load(Ordering::SeqCst);
        if index == 0 {
            self.word.release_free();
            return;
        }
        self.release_with_block(pool, token, index);
    }

    /// The release of a lock that holds a block (it is or was contended),
    /// out of line so that the uncontended release above inlines into
    /// every caller as one load and one store.
    #[inline(never)]
    fn release_with_block(&self, pool: &Pool<'_>, token: PlaceToken, index: u32) {
        // The reference this owner kept from its wait, if it did (a
        // `KEPT` word); taken back once, here.
        let kept = self.kept_ref(pool);
        if pool::anyone_registered(pool, index) {
            self.release_slow(pool, token, kept);
            return;
        }
        // Waiters hold the block but none spins registered: they are off
        // the CPU (yielding). Free the lock without a reference: the
        // release then costs what `RonInline`'s does. A kept reference is
        // dropped first: once the lock is free its last user may free it,
        // and a last reference's drop writes the lock (it detaches the
        // block).
        drop(kept);
        self.word.release_free();
        // Parked waiters hold the block: wake one (if none is on its way).
        #[cfg(feature = "std")]
        park::wake_sleeper(&self.block as *const AtomicU32 as usize);
        // Threads outnumber CPUs, and this one would keep taking the lock
        // back by its fast path for the rest of its time slice; now and
        // then let the others run (see `FAIR_EVERY_NS`).
        if wait::fair_turn_due() {
            wait::fair_pause(|| pool.block(index).map_or(0, |b| b.refs()));
        }
    }

    /// The reference to the lock's block that the owner kept from its
    /// wait, taken back; `None` if the word is not `KEPT`
    /// (a fast-path, try or unregistered acquisition).
    #[inline]
    fn kept_ref<'a>(&'a self, pool: &Pool<'a>) -> Option<BlockRef<'a>> {
        if !self.word.kept() {
            return None;
        }
        crate::coverage::hit!("ron_raw.release_kept");
        // SAFETY: the word is `KEPT` and we own the lock: the acquisition
        // that wrote it (ours) kept its reference to the block the lock
        // names, and only this release takes it back.
        unsafe { pool::adopt(&self.block, pool) }
    }

    #[cold]
    #[inline(never)]
    fn release_slow<'a>(&'a self, pool: &Pool<'a>, token: PlaceToken, kept: Option<BlockRef<'a>>) {
        // The CPU hint (for a fast-path token) is user code: it is asked
        // before anything changes, and if it panics the release runs from
        // slot 0 instead (with `kept` all the same), so an unlock never
        // unwinds with the lock held.
        let kept = core::cell::Cell::new(kept);
        token.release_from_slot_of(pool::active_slots(), |from| {
            self.release_from(pool, from, kept.take())
        });
    }

    /// The release, handing over from slot `from` + 1; on this thread's
    /// fair turn, to the lock's parking watcher instead, if it has one
    /// (the registered waiters would otherwise pass the lock among
    /// themselves while the sleepers' watcher only ever finds it handed).
    fn release_from<'a>(&'a self, pool: &Pool<'a>, from: usize, kept: Option<BlockRef<'a>>) {
        let to_watcher = wait::fair_turn_due() && self.watched();
        let room = match kept {
            Some(room) => Some(room),
            None => pool::current(&self.block, pool),
        };
        let next = match room {
            Some(room) => {
                // The handover count lives in the block: a handover needs
                // one, and we hold a reference to it.
                let next = if to_watcher {
                    crate::coverage::hit!("ron_raw.fair_turn_route");
                    self.word.to_watcher(room.handovers())
                } else {
                    self.word
                        .next_owner(&room, from, pool::active_slots(), room.handovers(), true)
                };
                // Drop our reference before publishing: once `next` is
                // stored the lock may be taken and freed by its new owner.
                drop(room);
                next
            }
            None => FREE,
        };
        self.word.publish(next);
        if to_watcher {
            // Its next wait starts as a shared round, which parks: its
            // place among the running waiters goes to the one woken.
            wait::mark_cpu_shared();
        }
    }

    /// Whether the lock has a parking watcher now (a snapshot).
    #[inline]
    fn watched(&self) -> bool {
        #[cfg(feature = "std")]
        {
            park::watched(&self.block as *const AtomicU32 as usize)
        }
        #[cfg(not(feature = "std"))]
        {
            false
        }
    }

    /// Whether the lock is held or handed over (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.word.is_held(|t| self.slot_empty(pool::global(), t))
    }

    /// Whether the lock holds a block of the pool now (a snapshot, for the
    /// tests and the loom models).
    #[cfg(any(all(test, not(shuttle)), loom))]
    fn has_block(&self) -> bool {
        self.block.load(Ordering::Relaxed) != 0 // a snapshot by contract
    }
}

crate::raw_impl::impl_default_debug! {
    impl [] for RonRaw, debug "RonRaw" { slots: BLOCK_SLOTS }
}

#[cfg(not(loom))]
// SAFETY: by the lock-word table in the module docs, the lock is owned by
// whoever performed the last `X -> LOCKED` transition of the word, and
// every such transition is one CAS from `FREE` or `HANDED(s, seq)` (Acquire,
// pairing with the owner's Release store of `FREE` or `HANDED`), with one
// winner; only the owner writes `FREE` or `HANDED`. So `lock` and
// `try_lock` return a guard only to that CAS's winner, and at most one
// thread owns the lock, exactly as for a test-and-set lock. The pooled
// block, its slots, counts and doorbells and the CPU hint only steer which
// waiter tries the CAS first; a wrong hint, a migration or a block handed
// back to the pool cannot make two CASes win. No user code runs while a
// waiter is registered in a slot (the hint is asked before), so `lock`
// unwinds only with nothing registered. `unlock` asks the hint only for a
// fast-path guard (`PlaceToken::NONE`) and, if it panics, releases from slot
// 0 first, so it never unwinds holding the lock. Whether the owner holds a
// block reference is read from the word (`KEPT`), never from the guard,
// which anyone can forge: an unlock drops exactly the reference its
// acquisition kept, before it publishes the next owner (or frees). A
// forgotten guard leaves the lock held and nothing dangling; after a
// contended acquisition the held lock keeps its block out of the pool
// until it is unlocked (as `RonTicket`'s does).
unsafe impl lock_api::RawMutex for RonRaw {
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
// SAFETY: `unlock_fair` is `release`, which already hands over to the next
// registered slot; the `RawMutex` argument above covers it.
unsafe impl lock_api::RawMutexFair for RonRaw {
    #[inline]
    unsafe fn unlock_fair(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }
}

#[cfg(feature = "std")]
crate::timed::impl_raw_mutex_timed! {
    impl [] for RonRaw
}

// Plain unit tests: not under loom or shuttle, whose atomics need their runtime.
#[cfg(all(test, not(loom), not(shuttle)))]
mod tests {
    use super::encoding::{HANDED, KEPT, LOCKED, SEQ_SHIFT, TAG, handed_slot};
    use super::pool::{Block, BlockRef, Pool};
    use super::wait::Watch;
    use super::*;

    /// Locks `l` on the fast path, registers a waiter in `slot` of `room`
    /// (the lock's block, held as a waiter holds it across its rounds) and
    /// releases: the release hands over. Returns the word it wrote.
    fn hand_over(l: &RonRaw, pool: &Pool<'_>, room: &BlockRef<'_>, slot: usize) -> u32 {
        let t = l.acquire_in_pool(pool, 0);
        room.register::<true>(slot);
        // SAFETY: we hold the lock.
        unsafe { l.release_in_pool(pool, t) };
        let word = l.word.state.load(Ordering::Relaxed);
        assert_eq!(word & TAG, HANDED);
        assert_eq!(handed_slot(word), slot);
        assert!(
            l.word
                .look(slot, true, false, Some(room), &mut Watch::new(), LOCKED)
        );
        room.unregister::<true>(slot);
        // SAFETY: we hold the lock (taken by `look`).
        unsafe { l.release_in_pool(pool, PlaceToken::at(slot)) };
        assert_eq!(l.word.state.load(Ordering::Relaxed), FREE);
        word
    }

    #[cfg(all(feature = "std", not(miri)))]
    #[test]
    fn a_contended_wait_asks_the_scheduler_before_it_registers() {
        let l = RonRaw::new();
        let held = l.acquire();
        std::thread::spawn(move || {
            // A new thread: no verdict on its CPU yet.
            assert!(crate::relax::own_cpu_within(u64::MAX).is_none());
            // `keep_waiting` is first asked after the wait's first look,
            // before any registration or yield of its rounds.
            let mut asked = None;
            let got = l.try_acquire_in_while(0, || {
                asked.get_or_insert_with(|| {
                    crate::relax::own_cpu_within(u64::MAX).is_some() || wait::cpu_looked_shared()
                });
                false
            });
            assert!(got.is_none(), "the lock is held");
            assert_eq!(asked, Some(true), "the wait asked nothing");
            // SAFETY: the spawning thread took it and passed it here.
            unsafe { l.release(held) };
        })
        .join()
        .unwrap();
    }

    #[test]
    fn seq_lives_in_the_block_and_survives_free_periods_while_it_stays() {
        let blocks = [Block::new(), Block::new(), Block::new()];
        let pool = Pool::new_in(&blocks);
        let l = RonRaw::new();
        let room = pool::enter(&l.block, &pool, 0).expect("a free block");
        let first = hand_over(&l, &pool, &room, 5);
        // An idle period: lock and unlock on the fast path, the block kept.
        for _ in 0..3 {
            let t = l.acquire_in_pool(&pool, 0);
            // SAFETY: we hold the lock.
            unsafe { l.release_in_pool(&pool, t) };
        }
        let second = hand_over(&l, &pool, &room, 5);
        assert_eq!(second >> SEQ_SHIFT, (first >> SEQ_SHIFT) + 1);
        assert_eq!(room.handovers().load(Ordering::Relaxed), 2);
        // The last reference returns the block; the lock names none again.
        drop(room);
        assert!(!l.has_block());
        assert_eq!(pool.in_use(), 0);
    }

    #[test]
    fn the_index_names_the_block_of_the_pool() {
        let blocks = [Block::new(), Block::new(), Block::new()];
        let pool = Pool::new_in(&blocks);
        let locks = [RonRaw::new(), RonRaw::new(), RonRaw::new()];
        let rooms: Vec<_> = locks
            .iter()
            .map(|l| pool::enter(&l.block, &pool, l as *const _ as usize).unwrap())
            .collect();
        let mut seen = [false; 3];
        for (l, room) in locks.iter().zip(&rooms) {
            let i = pool::index_of(l.block.load(Ordering::Relaxed));
            assert!((1..=3).contains(&i), "index {i}");
            let b = pool.block(i).unwrap();
            let at = blocks.iter().position(|x| core::ptr::eq(x, b)).unwrap();
            assert_eq!(at + 1, i as usize);
            assert!(
                !core::mem::replace(&mut seen[at], true),
                "a block named twice"
            );
            let again = pool::current(&l.block, &pool).unwrap();
            assert!(core::ptr::eq(&**room, &*again));
        }
        assert!(pool.block(0).is_none() && pool.block(4).is_none());
        assert!(pool.block(u32::MAX).is_none());
        assert_eq!(pool.in_use(), 3);
        drop(rooms);
        assert_eq!(pool.in_use(), 0);
        assert!(locks.iter().all(|l| !l.has_block()));
    }

    /// Waits until `l`'s parking bucket shows a watcher and `sleepers`
    /// sleepers (bounded: the waiters' deadlines are far off).
    #[cfg(all(feature = "std", not(miri)))]
    fn until_parked(l: &RonRaw, sleepers: u64) {
        let addr = &l.block as *const AtomicU32 as usize;
        for _ in 0..20_000 {
            if park::counts(addr).is_some_and(|(w, s)| w >= 1 && s >= sleepers) {
                return;
            }
            std::thread::sleep(core::time::Duration::from_micros(100));
        }
        panic!("the waiters never parked: {:?}", park::counts(addr));
    }

    /// Timed waiters park (one watches, the others sleep on the futex
    /// with their deadline) and give up when it passes: `None`, never
    /// before the deadline, and the bucket is left clean. Waiters without
    /// a deadline park too and all get the lock once it is released.
    #[cfg(all(feature = "std", not(miri)))]
    #[test]
    fn timed_waiters_give_up_while_parked_and_parked_waiters_get_the_lock() {
        use crate::timed::Deadline;
        use core::time::Duration;
        let l = RonRaw::new();
        let addr = &l.block as *const AtomicU32 as usize;
        let t = l.acquire();
        std::thread::scope(|sc| {
            let waiters: Vec<_> = (0..3)
                .map(|_| {
                    sc.spawn(|| {
                        let deadline = Deadline::after(Duration::from_millis(300));
                        let got = l.try_acquire_until(deadline);
                        (got.is_none(), deadline.expired())
                    })
                })
                .collect();
            until_parked(&l, 1);
            for w in waiters {
                assert_eq!(
                    w.join().unwrap(),
                    (true, true),
                    "a timed waiter got a held lock or left early"
                );
            }
        });
        assert_eq!(
            park::counts(addr),
            None,
            "a timed waiter left its bucket dirty"
        );
        let count = std::sync::atomic::AtomicU32::new(0);
        std::thread::scope(|sc| {
            for _ in 0..3 {
                sc.spawn(|| {
                    let t = l.acquire();
                    count.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                    // SAFETY: we hold the lock.
                    unsafe { l.release(t) };
                });
            }
            until_parked(&l, 1);
            // SAFETY: we hold the lock (taken before the waiters came).
            unsafe { l.release(t) };
        });
        assert_eq!(count.load(std::sync::atomic::Ordering::Relaxed), 3);
        assert_eq!(park::counts(addr), None, "a waiter left its bucket dirty");
        assert!(l.try_acquire().is_some());
    }

    /// An owner whose CAS wrote `KEPT` (a long registered wait) keeps its
    /// block reference through its critical section, and its unlock drops
    /// it even with a guard that does not say so (`PlaceToken::NONE`, as
    /// lock_api 0.4's guard-less unlock passes): the block goes back to
    /// the pool. One whose CAS wrote `LOCKED` holds none, and its unlock
    /// takes one of its own for the handover.
    #[test]
    fn an_owner_that_kept_its_block_reference_drops_it_at_its_unlock() {
        let blocks = [Block::new(), Block::new()];
        let pool = Pool::new_in(&blocks);
        let l = RonRaw::new();
        let refs = || {
            let index = pool::index_of(l.block.load(Ordering::Relaxed));
            pool.block(index).map_or(0, |b| b.refs())
        };
        // A waiter's room, registered in slot 1, takes the free lock as a
        // long wait does (`Rooms::HELD`), and keeps the room.
        let rooms = Pooled {
            home: &l.block,
            pool: &pool,
        };
        let room = rooms.enter().expect("a free block");
        room.register::<true>(1);
        assert!(
            l.word
                .look(1, true, false, Some(&room), &mut Watch::new(), KEPT)
        );
        room.unregister_keep_bit(1);
        room.keep();
        assert!(l.word.kept());
        assert_eq!(refs(), 2, "the lock's reference and the owner's");
        // SAFETY: we hold the lock; the guard is forged on purpose.
        unsafe { l.release_in_pool(&pool, PlaceToken::NONE) };
        assert!(!l.has_block(), "the unlock did not drop the kept reference");
        assert_eq!(pool.in_use(), 0);
        assert_eq!(l.word.state.load(Ordering::Relaxed), FREE);
        // The same with `LOCKED`: the room is dropped as the lock is taken
        // (here by hand, as `acquire_slow_asking` does), and the unlock
        // hands over with a reference of its own.
        let waiter = rooms.enter().expect("a free block");
        let room = rooms.enter().expect("the same block");
        room.register::<true>(1);
        assert!(
            l.word
                .look(1, true, false, Some(&room), &mut Watch::new(), LOCKED)
        );
        room.unregister_keep_bit(1);
        drop(room);
        assert!(!l.word.kept());
        waiter.register::<true>(2);
        assert_eq!(refs(), 2, "the lock's reference and the waiter's");
        // SAFETY: we hold the lock.
        unsafe { l.release_in_pool(&pool, PlaceToken::at(1)) };
        assert_eq!(l.word.state.load(Ordering::Relaxed) & TAG, HANDED);
        assert_eq!(refs(), 2, "the unlock's own reference is gone again");
        waiter.unregister::<true>(2);
        drop(waiter);
        assert_eq!(pool.in_use(), 0);
    }

    /// An index the pool does not hold (a lock used with two pools): its
    /// waiters wait unregistered, its release frees it; nothing loops.
    #[test]
    fn a_foreign_index_is_no_block() {
        let blocks = [Block::new()];
        let pool = Pool::new_in(&blocks);
        let l = RonRaw::new();
        l.block.store(7, Ordering::Relaxed);
        assert!(pool::enter(&l.block, &pool, 0).is_none());
        assert!(pool::current(&l.block, &pool).is_none());
        let t = l.acquire_in_pool(&pool, 3);
        assert!(l.try_acquire_in_pool(&pool).is_none());
        // SAFETY: we hold the lock.
        unsafe { l.release_in_pool(&pool, t) };
        assert_eq!(l.word.state.load(Ordering::Relaxed), FREE);
        let t = l
            .try_acquire_in_pool_while(&pool, 1, || true)
            .expect("a free lock");
        // SAFETY: we hold the lock.
        unsafe { l.release_in_pool(&pool, t) };
        assert_eq!(pool.in_use(), 0);
    }
}
