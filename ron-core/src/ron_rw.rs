//! [`RonRw`]: a reader-writer lock whose readers scale across CPUs and
//! whose writers hand over along the route.
//!
//! # Design
//! Three parts, 24 bytes per lock:
//!
//! * **The lock word** (`state`, 8 bytes) and **the readers-out counter**
//!   (`rout`, 4 bytes): a phase-fair reader-writer lock (Brandenburg and
//!   Anderson's PF-T). Readers count themselves in on the word's high half
//!   (`rin`, one `fetch_add`) and out on `rout`; a writer sets `PRES`
//!   (and flips `PHID`) in the word with one CAS and waits until `rout`
//!   reaches the `rin` it replaced. A reader that arrives while `PRES` is
//!   set waits until the word's (`PRES`, `PHID`) pair changes: the end of
//!   *that* writer's phase.
//! * **The writers' queue** (`writers`, a [`RonRaw`], 8 bytes): a writer
//!   that cannot set `PRES` at once first waits politely while no writer
//!   is queued: it retries the one-CAS path up to [`POLITE_TRIES`] times,
//!   pausing before each (yielding its CPU where it is shared), queueing
//!   nowhere, so the CPU that holds the lock may take it again for its
//!   next write instead of handing it over (bounded barging, as in
//!   parking_lot's eventual fairness, but counted in tries). Then it
//!   queues, so contending writers take turns in the
//!   order of RON's route handover; the queue's holder sets `PRES` as soon
//!   as the current phase ends, then leaves the queue to the next writer
//!   before it waits for readers. One exception to the queue's order, the
//!   *run*: a writer on the CPU that held the last writer phase (the word
//!   records it) may take the next phase before the queued writers, at
//!   most [`WRITER_RUN`] times in a row, when no central reader is in, so
//!   that a CPU writing often keeps the lock's data in its caches.
//! * **The visible-readers table** ([`crate::reader_table`],
//!   process-wide, plus a 4-byte table id per lock): once a lock's reads
//!   are contended (`HOT_MAX` reads that found another reader inside,
//!   or counting in between their look at the word and their count, with
//!   no write in between) it sets `BIAS`, and readers then count
//!   themselves in their CPU's slot of the table instead of `rin`:
//!   readers on different CPUs write different cache lines. A lock has
//!   one slot per CPU of the route when it was first biased, at most
//!   [`LOCK_SLOTS`](crate::reader_table::LOCK_SLOTS) (route neighbours
//!   share a slot beyond that; see [`crate::reader_table`]). A writer clears `BIAS` in the same
//!   CAS that sets `PRES` and waits for the lock's table slots to empty
//!   (BRAVO's revocation), and gives the bias back in the RMW that ends
//!   its phase (`REBIAS` remembers it): a read-mostly lock stays biased
//!   across its writes. Readers that arrive during such a phase, or back
//!   off from the table when it begins, wait for its end writing nothing,
//!   then take the table. The bias lapses when
//!   [`STRIKES`] revocations in a row found no reader in the table (it
//!   did not pay for them; more for a lock with fewer than 128 slots,
//!   whose revocations cost less: [`STRIKE_LOADS`]); reads then earn it
//!   back.
//!
//! A reader's guard says where it was counted (a table slot index, or the
//! central counter), so its unlock decrements what it incremented, whatever
//! CPU it runs on by then.
//!
//! ## State
//! `state` (u64): bit 0 `PRES` (a writer holds the lock or drains its
//! readers), bit 1 `PHID` (the writer phase's parity), bit 2 `REBIAS`
//! (while `PRES` is set: the writer phase revoked the bias and gives it
//! back when it ends; the end adds `REBIAS - PRES`, carrying a set
//! `REBIAS` into `BIAS`), bit 3 `BIAS` (readers may use the table), bits
//! 8..16 `HOT` (unbiased: contended reads since the last write; biased:
//! revocations in a row that found the table empty), bits 16..28 `WCPU`
//! (the CPU of the last writer phase's holder, 0 if it did not ask: the
//! inline fast path, `try_write`, a timed write, an upgrade), bits 28..31 `RUN` (that
//! CPU's phases in a row taken past the writers' queue), bits 32..64 `rin`
//! (readers counted in centrally, wrapping). `rout` (u32, wrapping). `id` (u32, 0 until first
//! biased). Only the holder of `PRES` changes `REBIAS`, and `HOT` while
//! biased; `WCPU` and `RUN` are written only by the CAS that sets `PRES`.
//!
//! | state | who may enter |
//! |---|---|
//! | `!PRES`, `rin == rout`, no table reader | anyone: one CAS for a writer, one `fetch_add` (on the word, or on the reader's slot when biased) for a reader |
//! | `!PRES`, readers in | readers; a writer sets `PRES` and drains |
//! | `PRES`, `rout != rin` at its CAS, or table slots occupied | nobody new: the writer waits for the readers counted before it; arriving readers count in and wait for the phase to end (with `REBIAS`: wait for its end without counting in) |
//! | `PRES`, drained | the writer (exclusive) |
//! | the writer unlocks (`PRES` cleared, `BIAS` back if `REBIAS`) | the readers that arrived during its phase, at once; the next queued writer sets `PRES` after them; with no writer queued, a writer waiting politely (or any new one) may set it first; with no central reader in, a writer on the CPU in `WCPU` may set it first while `RUN` < [`WRITER_RUN`] (the run) |
//!
//! ## Guarantees
//! Mutual exclusion between a writer and anyone else; any number of
//! readers together. **Phase alternation**: a reader waits for at most one
//! writer phase (the one it saw when it arrived; the next writer counts it
//! and waits for it), or two when that phase gives a bias back (the
//! reader waits for it without counting in; if the next writer phase has
//! begun when it ends, the reader counts in centrally and waits for that
//! one; a table reader that backs off because a phase began as it entered
//! counts that phase as the one it saw); a writer, once it has set `PRES`, waits only for the
//! readers that arrived before it, and new readers cannot delay it. Before
//! that, an untimed writer that found a writer phase on and no writer queued
//! waits politely: at most [`POLITE_TRIES`] more tries of the one-CAS
//! path, pausing before each (a timed yield before the first; then one
//! yield each if that one ran another thread, else `2^min(n, 9)` relax
//! steps before try `n`), during which other writers may overtake it
//! (barging, never past a queued writer); then, as any writer that found
//! one queued, it waits for the writers ahead of it in the queue (route
//! order, `RonRaw`'s progress guarantee: no strict bound), for the
//! current phase, and at the head of the queue for at most
//! [`WRITER_RUN`] more phases of the run (the only phases taken past a
//! queued writer: the CPU of the last phase, with no central reader in;
//! the head's own phase starts a run of its CPU). Readers are not polite:
//! a reader's bound above holds whatever writers do (a run's phase drains
//! the readers counted before it, as any writer's). An upgradable reader
//! holds the writers' queue and a central read, so no run passes it.
//!
//! ## The publication race (table readers against a revoking writer)
//! A table reader: slot RMW (`fetch_add`, or the CAS that claims an idle
//! slot); `fence(SeqCst)`; load `state`, and it is in
//! only if `BIAS` is set and `PRES` clear (else it takes its count back).
//! A writer: CAS `state` (sets `PRES`, clears `BIAS`); `fence(SeqCst)`;
//! load the slots. The fences are totally ordered: if the reader's comes
//! first the writer sees its count and waits for it; if the writer's comes
//! first the reader sees `PRES` and backs off. A writer whose CAS found
//! `BIAS` already clear skips the scan: the writer that cleared it scanned
//! after its own fence, and a reader that saw `BIAS` set read a value
//! before that clearing, so its fence came before that writer's and that
//! writer waited for it. `BIAS` is set again only by a CAS that needs
//! `PRES` clear, or by the RMW that clears `PRES` (a writer giving the
//! bias back), so it cannot appear under a writer; and a writer that
//! revoked the bias but gives up before its scan found the table empty (a
//! failed `try_write` or `try_upgrade`, a timed writer's deadline) clears
//! `PRES` and sets `BIAS` back in one RMW, so "`BIAS` clear" keeps meaning
//! "no table reader is in".
//!
//! ## Hints, migration, panics
//! The CPU hint only picks a table slot; the guard keeps the slot, so a
//! reader that migrates leaves the slot it entered. A wrong or out-of-range
//! hint picks some slot of the lock (`route::slot_of`: modulo for a CPU
//! off the route), which the writer scans anyway; for a writer that
//! waits, it only names the CPU that may take a run. Threads may outnumber
//! CPUs: waiting is the default relax policy ([`DefaultRelax`]). The
//! hint provider runs before a reader publishes anything, and before a
//! waiting writer changes anything; `RonRaw`
//! unwinds cleanly when it panics in the writers' queue, and nothing else
//! calls user code.
//!
//! ## lock_api 0.4
//! With the `lock_api_04` feature `RonRw` implements 0.4's `RawRwLock`,
//! `RawRwLockDowngrade`, `RawRwLockFair`, `RawRwLockTimed` and
//! `RawRwLockUpgrade` (+ `Fair`). 0.4's `unlock_shared` takes no guard, so
//! a 0.4 reader always counts in centrally (the table is never used nor
//! enabled through 0.4: reads do not spread over CPUs there), and the
//! upgradable reader's queue token is dropped (`PlaceToken::NONE`, the
//! `RonRaw` contract).

use crate::RonRaw;
use crate::reader_table::{self, ReaderTable};
use crate::relax::{DefaultRelax, Relax};
use crate::sync::{AtomicU32, AtomicU64, Ordering, fence};
use crate::token::PlaceToken;

const PRES: u64 = 1;
const PHID: u64 = 2;
/// The writer phase revoked a bias and gives it back when it ends (read
/// only while `PRES` is set; any value otherwise).
const REBIAS: u64 = 4;
/// The bit above `REBIAS`: the end of a phase carries `REBIAS` into it.
const BIAS: u64 = 8;
const HOT_ONE: u64 = 1 << 8;
const HOT_MASK: u64 = 0xFF << 8;
/// Bits 16..28: `WCPU`, as [`writer_tag`] gives it (module docs, State).
const WCPU_SHIFT: u32 = 16;
const WCPU_MASK: u64 = 0xFFF << WCPU_SHIFT;
/// Bits 28..31: `RUN` (module docs, State), at most [`WRITER_RUN`].
const RUN_SHIFT: u32 = 28;
const RUN_ONE: u64 = 1 << RUN_SHIFT;
const RUN_MASK: u64 = 0x7 << RUN_SHIFT;
/// Contended reads (with no write between them) that bias a lock.
pub const HOT_MAX: u64 = 16;
const RIN: u64 = 1 << 32;
const PHASE: u64 = PRES | PHID;

#[inline]
fn rin(s: u64) -> u32 {
    (s >> 32) as u32
}

/// The word after a writer's CAS: `PRES` set, `PHID` flipped; if `BIAS`
/// was set, `BIAS` cleared and `REBIAS` set (the phase gives the bias
/// back when it ends) with `HOT` kept (it counts the lock's strikes while
/// biased, [`STRIKES`]), else `REBIAS` and `HOT` cleared; `WCPU` and
/// `RUN` cleared (a caller that knows its CPU adds its tag); `rin` kept.
#[inline]
fn with_writer(s: u64) -> u64 {
    let s = if s & BIAS != 0 {
        (s & !BIAS) | REBIAS
    } else {
        s & !(REBIAS | HOT_MASK)
    };
    ((s & !(WCPU_MASK | RUN_MASK)) | PRES) ^ PHID
}

/// The `WCPU` field of a writer on CPU `cpu` (any value: a hint): never 0.
#[inline]
fn writer_tag(cpu: usize) -> u64 {
    ((cpu % 0xFFF) as u64 + 1) << WCPU_SHIFT
}

/// What a writer adds to the word it holds (`PRES` set, `BIAS` clear) to
/// end its phase: `- PRES` clears `PRES`, `+ REBIAS` carries a set
/// `REBIAS` into `BIAS` (the bias given back) and sets a clear one, which
/// nobody reads until the next writer's CAS sets it anew. One RMW, no
/// load first; `HOT` keeps the strikes.
const END_OF_PHASE: u64 = REBIAS.wrapping_sub(PRES);

/// Revocations in a row that found no reader in the table, after which
/// the bias lapses (at the end of the last one's phase), for a lock with
/// 128 table slots or more: the table then does not pay for its
/// revocations, and reads earn the bias back with [`HOT_MAX`] contended
/// central reads. A lock with fewer slots, whose revocations read fewer
/// lines, allows [`STRIKE_LOADS`] slot loads' worth of them (at most 255).
/// A revocation that finds a table reader in clears the strikes.
#[cfg(not(loom))]
pub const STRIKES: u64 = 16;

/// Slot loads that empty revocations in a row may cost before the bias
/// lapses (`STRIKES` revocations of 128 slots): a lock with `n` table
/// slots lapses after `STRIKE_LOADS / n` of them, at least [`STRIKES`]
/// and at most 255. An empty revocation does not show that the table did
/// not pay: on 2 CPUs, reads a few hundred nanoseconds apart rarely
/// overlap a write, yet each central read would move the lock word's line
/// between the CPUs.
pub const STRIKE_LOADS: u64 = 16 * 128;

/// Revocations in a row that found no table reader before a lock with
/// `slots` table slots lapses ([`STRIKE_LOADS`]; [`STRIKES`] under loom).
#[inline]
fn strikes_max(slots: usize) -> u64 {
    if cfg!(loom) {
        return STRIKES;
    }
    (STRIKE_LOADS / slots.max(1) as u64).clamp(STRIKES, 255)
}
/// Revocations in a row that found no table reader before the bias lapses
/// (2 under loom, so that the models reach a strike and a lapse).
#[cfg(loom)]
pub const STRIKES: u64 = 2;

/// The guard state of a shared acquisition of [`RonRw`]: where the reader
/// was counted (a table slot, or the lock's central counter).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ReadToken(u32);

impl ReadToken {
    /// Counted in the lock's central counter.
    pub const CENTRAL: ReadToken = ReadToken(u32::MAX);

    /// The table slot this reader was counted in, if any.
    pub fn slot(self) -> Option<usize> {
        (self.0 != u32::MAX).then_some(self.0 as usize)
    }
}

/// A reader-writer lock for read-mostly data: readers on different CPUs
/// write different cache lines once reads are contended, writers
/// take turns along the route (see the [module docs](self) for the
/// design, state table and guarantees). 24 bytes.
pub struct RonRw {
    state: AtomicU64,
    rout: AtomicU32,
    id: AtomicU32,
    writers: RonRaw,
}

crate::raw_impl::impl_default_debug!(impl [] for RonRw, debug "RonRw" {});

/// What to do while waiting: relax, and give up once `expired()` says so.
/// The relax policy is built at the first wait (nothing on a path that
/// does not wait).
struct Wait<F: Fn() -> bool> {
    relax: Option<DefaultRelax>,
    expired: F,
}

impl<F: Fn() -> bool> Wait<F> {
    #[inline]
    fn new(expired: F) -> Self {
        Wait {
            relax: None,
            expired,
        }
    }

    /// Relaxes once; `false` once the deadline has passed.
    #[inline]
    fn step(&mut self) -> bool {
        if (self.expired)() {
            return false;
        }
        self.relax.get_or_insert_with(DefaultRelax::default).relax();
        true
    }
}

fn never() -> bool {
    false
}

/// Writer phases in a row that the CPU holding the last one may take past
/// the writers' queue (module docs, Guarantees): a writer on that CPU
/// that finds the lock free of writers and central readers, but writers
/// queued, sets `PRES` at once instead of queueing behind them, so its
/// data stays in its caches; the queue's head waits for at most this many
/// such phases more. Chosen on the VM against 1, 4 and 8, by throughput
/// and fairness: `docs/design.md`, item 12 of the reader-writer lock.
pub const WRITER_RUN: u64 = 2;
const _: () = assert!(WRITER_RUN < RUN_MASK >> RUN_SHIFT);

/// Tries of a writer's polite wait (module docs, Guarantees): a writer
/// that finds another writer phase on, and no writer queued, retries the
/// one-CAS path at most this many times, pausing before each try, before
/// it queues.
#[cfg(not(loom))]
pub const POLITE_TRIES: u32 = 8;
/// Tries of a writer's polite wait (1 under loom: the models reach a try
/// that enters and one that queues after it).
#[cfg(loom)]
pub const POLITE_TRIES: u32 = 1;

/// On a CPU of its own, the pause before polite try `n >= 1` is
/// `2^min(n, POLITE_SHIFT)` relax steps.
const POLITE_SHIFT: u32 = 9;

/// Relax steps of a polite writer's first pause when its thread's last
/// timed yield, less than [`REPROBE_NS`](crate::relax::REPROBE_NS) ago,
/// found its CPU its own (see [`polite_first_pause`]). Measured on a
/// 2-CPU Intel Xeon, 2 threads, 50 % reads (`docs/design.md`, item 9 of
/// the reader-writer lock): 0.77x parking_lot's `RwLock` with a yield
/// there, 3.08x with 128 steps; 32 steps gave 1.33-1.59x.
#[cfg(all(feature = "std", not(loom), not(shuttle)))]
const OWN_CPU_PAUSE: u32 = 128;

/// The first pause of a polite wait: one yield, timed
/// (`relax::timed_yield`). `true` if it ran another thread: the CPU is
/// shared, and the later pauses yield too (a thread that gives its CPU
/// away lets the lock's holder run on; a spinning one may be what keeps
/// it off). Without `std`, and under loom and shuttle, one relax step and
/// `false`.
///
/// A thread whose last timed yield (this one's, or a `SpinWhileAlone`
/// wait's: the verdict is the thread's) found its CPU its own, less than
/// [`REPROBE_NS`](crate::relax::REPROBE_NS) ago, pauses
/// [`OWN_CPU_PAUSE`] relax steps instead: with a
/// CPU per thread the yield is a system call that runs nobody, and the
/// pause measured faster ([`OWN_CPU_PAUSE`]). A preempted writer asks
/// again once the verdict is a time slice old.
#[cfg(all(feature = "std", not(loom), not(shuttle)))]
fn polite_first_pause() -> bool {
    if crate::relax::own_cpu_within(crate::relax::REPROBE_NS).is_some() {
        crate::coverage::hit!("ron_rw.polite_own_cpu");
        let mut r = DefaultRelax::default();
        for _ in 0..OWN_CPU_PAUSE {
            r.relax();
        }
        return false;
    }
    crate::relax::timed_yield().1
}

/// The first pause of a polite wait (see the `std` version): one relax
/// step, and the CPU taken for the waiter's own.
#[cfg(not(all(feature = "std", not(loom), not(shuttle))))]
fn polite_first_pause() -> bool {
    DefaultRelax::default().relax();
    false
}

/// A later pause of a polite wait on a shared CPU: one yield (a relax
/// step where there is no `yield`).
#[inline]
fn polite_yield() {
    #[cfg(all(feature = "std", not(loom), not(shuttle)))]
    crate::sync::yield_now();
    #[cfg(not(all(feature = "std", not(loom), not(shuttle))))]
    DefaultRelax::default().relax();
}

impl RonRw {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            RonRw {
                state: AtomicU64::new(0),
                rout: AtomicU32::new(0),
                id: AtomicU32::new(0),
                writers: RonRaw::new(),
            }
        }
    }

    /// Whether the lock is held in any mode (a snapshot).
    pub fn is_held(&self) -> bool {
        // Relaxed: a snapshot by contract.
        let s = self.state.load(Ordering::Relaxed);
        if s & PRES != 0 || rin(s) != self.rout.load(Ordering::Relaxed) {
            return true;
        }
        let id = self.id.load(Ordering::Relaxed);
        s & BIAS != 0 && id != 0 && reader_table::global().occupied(id)
    }

    /// Whether a writer holds the lock or is draining readers (a snapshot).
    pub fn is_write_held(&self) -> bool {
        self.state.load(Ordering::Relaxed) & PRES != 0 // a snapshot
    }

    /// The former name of [`is_write_held`](Self::is_write_held).
    #[deprecated(
        since = "0.1.0",
        note = "use `is_write_held`: the inherent API names modes read and write"
    )]
    pub fn is_held_exclusive(&self) -> bool {
        self.is_write_held()
    }

    /// Whether the lock is biased towards readers (they use the table).
    pub fn is_biased(&self) -> bool {
        self.state.load(Ordering::Relaxed) & BIAS != 0 // a snapshot
    }

    // ----- readers -------------------------------------------------------

    /// Acquires shared access, counted in the table slot of the caller's
    /// CPU when the lock is biased, else centrally.
    #[inline]
    pub fn read(&self) -> ReadToken {
        self.read_in_until(crate::hint::current_cpu, never)
            .expect("an untimed read never gives up")
    }

    /// [`read`](Self::read) as a reader on CPU `cpu` (any value: models
    /// and tests play migrating or misplaced readers).
    pub fn read_in(&self, cpu: usize) -> ReadToken {
        self.read_in_until(|| cpu, never)
            .expect("an untimed read never gives up")
    }

    /// The read paths, in order: the table while the lock is biased; a
    /// look-only wait for a writer phase that gives the bias back
    /// (`REBIAS`), then the table once more; the central counter (which
    /// waits out a writer phase it counted in during). `None` only if
    /// `expired()` said so while waiting (nothing is left counted).
    #[inline]
    fn read_in_until(
        &self,
        cpu: impl Fn() -> usize,
        expired: impl Fn() -> bool,
    ) -> Option<ReadToken> {
        // Relaxed: steers only; the table path validates after its fence.
        let mut s = self.state.load(Ordering::Relaxed);
        if s & (BIAS | PRES) == BIAS {
            if let Some(t) = self.read_table(cpu()) {
                return Some(t);
            }
            // Backed off (or no slot): a writer phase that revoked the
            // bias is waited for writing nothing, as by a reader that
            // found it on. Relaxed: as above.
            s = self.state.load(Ordering::Relaxed);
            crate::coverage::hit!("ron_rw.read_table_missed");
        }
        if s & (PRES | REBIAS) == PRES | REBIAS {
            return self.read_after_phase(s & PHASE, cpu, expired);
        }
        self.read_central(Some(s), expired)
    }

    /// A reader that found writer phase `phase` on, which will give the
    /// bias back: it waits for the phase to end writing nothing (the
    /// readers of a biased lock keep off the word's line), then takes the
    /// table if the bias is back and no new phase has begun, else the
    /// central counter (which waits out at most that new phase: a reader
    /// waits for at most two writer phases on this path).
    #[cold]
    fn read_after_phase(
        &self,
        phase: u64,
        cpu: impl Fn() -> usize,
        expired: impl Fn() -> bool,
    ) -> Option<ReadToken> {
        crate::coverage::hit!("ron_rw.read_waits_rebias");
        let mut wait = Wait::new(&expired);
        loop {
            // Relaxed: steers only (the table path validates after its
            // fence; the central path acquires with its RMW).
            let s = self.state.load(Ordering::Relaxed);
            if s & PHASE != phase {
                if s & (BIAS | PRES) == BIAS
                    && let Some(t) = self.read_table(cpu())
                {
                    crate::coverage::hit!("ron_rw.read_table_after_phase");
                    return Some(t);
                }
                return self.read_central(Some(s), expired);
            }
            if !wait.step() {
                return None;
            }
        }
    }

    /// Shared access without waiting: `None` while a writer holds the
    /// lock or drains readers.
    #[inline]
    pub fn try_read(&self) -> Option<ReadToken> {
        // Relaxed: a first guess for the CAS.
        let s = self.state.load(Ordering::Relaxed);
        if s & (BIAS | PRES) == BIAS
            && let Some(t) = self.read_table(crate::hint::current_cpu())
        {
            return Some(t);
        }
        self.try_read_central(s).then_some(ReadToken::CENTRAL)
    }

    /// Counts a reader in centrally unless a writer holds the lock or
    /// drains readers, starting from `s`, a guess of the state; whether it
    /// did.
    #[inline]
    fn try_read_central(&self, mut s: u64) -> bool {
        loop {
            if s & PRES != 0 {
                return false;
            }
            // Acquire: pairs with the last writer's Release unlock.
            match self.state.compare_exchange_weak(
                s,
                s.wrapping_add(RIN),
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => return true,
                Err(cur) => s = cur,
            }
        }
    }

    /// The table path: count in the slot of CPU `cpu` (its share of the
    /// route: route neighbours share a slot when the lock has fewer slots
    /// than the route has CPUs), fence, validate.
    #[inline]
    fn read_table(&self, cpu: usize) -> Option<ReadToken> {
        // Relaxed: the id is written once, before the Release CAS that set
        // BIAS; any nonzero value read is that one, and 0 means "not yet".
        let id = self.id.load(Ordering::Relaxed);
        if id == 0 {
            return None;
        }
        let table = reader_table::global();
        let i = ReaderTable::index(id, crate::route::slot_of(cpu, reader_table::slots_of(id)));
        if !table.enter(i, id) {
            crate::coverage::hit!("ron_rw.table_collision");
            return None;
        }
        // SeqCst: the publication race (module docs): orders our slot
        // count against a revoking writer's state CAS and slot loads.
        fence(Ordering::SeqCst);
        // Acquire: pairs with the last writer's Release unlock (our reads
        // of the data come after its writes).
        // mutants: the fence above already acquires through our first
        // (Relaxed) look at the word, so no model kills Relaxed here; it is
        // load-bearing when a second writer phase and a re-bias land
        // between that look and this load (the value read here then comes
        // from that writer's release sequence), which takes four threads.
        let s = self.state.load(Ordering::Acquire);
        if s & (BIAS | PRES) == BIAS {
            crate::coverage::hit!("ron_rw.read_table");
            return Some(ReadToken(i as u32));
        }
        crate::coverage::hit!("ron_rw.read_table_backoff");
        table.leave(i);
        None
    }

    /// The central path: count in on `rin`, wait out a writer phase that
    /// was on. `seen`: the word a look just before saw, to count a
    /// contended read towards biasing (`None`: not counted). `None` only
    /// if `expired()` said so while waiting (and then nothing is left
    /// counted).
    #[inline]
    fn read_central(&self, seen: Option<u64>, expired: impl Fn() -> bool) -> Option<ReadToken> {
        self.read_central_at(seen, expired).0
    }

    /// [`read_central`](Self::read_central), also returning the word the
    /// reader's count replaced.
    #[inline]
    fn read_central_at(
        &self,
        seen: Option<u64>,
        expired: impl Fn() -> bool,
    ) -> (Option<ReadToken>, u64) {
        // Acquire: pairs with the last writer's Release unlock.
        let s = self.state.fetch_add(RIN, Ordering::Acquire);
        if s & PRES != 0 {
            return (self.wait_phase(s & PHASE, expired), s);
        }
        crate::coverage::hit!("ron_rw.read_central");
        // Contended: another reader counted in between our look and our
        // count, or is inside after it. Either alone misses cases: where
        // the word's line is contended most, the readers' counts queue on
        // it one after another, and a look at `rout` after ours finds the
        // readers before us gone (on the VM, 16 CPUs of the Altra Q80-30
        // at 100 % reads never biased in 3 of 5 runs: 3 us a read); with
        // short reads that overlap, nobody may count in between the look
        // and the count. Relaxed: a heuristic; `rout` shares the word's
        // line.
        if let Some(seen) = seen
            && s & BIAS == 0
            && (rin(s) != rin(seen) || rin(s) != self.rout.load(Ordering::Relaxed))
        {
            self.heat(s.wrapping_add(RIN));
        }
        (Some(ReadToken::CENTRAL), s)
    }

    /// For the loom models: a central read that also returns the writer
    /// phase it arrived in (`Some(parity)` when a writer phase was on).
    #[cfg(loom)]
    #[doc(hidden)]
    pub fn read_central_observing(&self) -> (ReadToken, Option<bool>) {
        let (t, s) = self.read_central_at(None, never);
        let t = t.expect("an untimed read never gives up");
        (t, (s & PRES != 0).then_some(s & PHID != 0))
    }

    /// Biases the lock now, as [`HOT_MAX`] contended reads would: from then
    /// on readers count themselves in their CPU's slot of the
    /// visible-readers table (a writer revokes the bias for its phase). For a lock
    /// known to be read-mostly (and for tests). `false` if a writer phase
    /// is on or the table has no id left.
    pub fn bias_now(&self) -> bool {
        // Relaxed: a first guess for the CAS in `heat`.
        let s = self.state.load(Ordering::Relaxed);
        self.enable_bias(s);
        self.is_biased()
    }

    /// For the loom models: the parity of the last writer phase (flipped
    /// by every writer).
    #[cfg(loom)]
    #[doc(hidden)]
    pub fn phase_parity(&self) -> bool {
        self.state.load(Ordering::Relaxed) & PHID != 0 // a snapshot
    }

    /// A reader counted in during writer phase `phase` waits for it to
    /// end; on expiry it takes its count back if the phase is still on
    /// (nobody has counted it yet), else it is in.
    #[cold]
    fn wait_phase(&self, phase: u64, expired: impl Fn() -> bool) -> Option<ReadToken> {
        crate::coverage::hit!("ron_rw.read_waits_phase");
        let mut wait = Wait::new(expired);
        loop {
            // Acquire: the writer's Release unlock ends the phase.
            let s = self.state.load(Ordering::Acquire);
            if s & PHASE != phase {
                return Some(ReadToken::CENTRAL);
            }
            if !wait.step() {
                return self.give_up_read(phase);
            }
        }
    }

    /// Takes back a central count made during writer phase `phase`: only
    /// while that phase is on (no writer's snapshot of `rin` includes it);
    /// once it has ended the reader is in.
    #[cold]
    fn give_up_read(&self, phase: u64) -> Option<ReadToken> {
        // Relaxed: a first guess for the CAS.
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s & PHASE != phase {
                // Acquire for the data: re-load with it (the phase ended
                // with the writer's Release unlock).
                let _ = self.state.load(Ordering::Acquire);
                return Some(ReadToken::CENTRAL);
            }
            // Relaxed: we leave without having read anything.
            match self.state.compare_exchange_weak(
                s,
                s.wrapping_sub(RIN),
                Ordering::Relaxed,
                Ordering::Relaxed,
            ) {
                Ok(_) => {
                    crate::coverage::hit!("ron_rw.read_gave_up");
                    return None;
                }
                Err(cur) => s = cur,
            }
        }
    }

    /// A contended central read: count it in `HOT`, and bias the lock at
    /// `HOT_MAX` (one try each; losing a race only delays the bias).
    #[cold]
    fn heat(&self, s: u64) {
        let hot = (s & HOT_MASK) >> 8;
        if hot + 1 < HOT_MAX {
            // Relaxed: a heuristic counter.
            let _ =
                self.state
                    .compare_exchange(s, s + HOT_ONE, Ordering::Relaxed, Ordering::Relaxed);
            return;
        }
        self.enable_bias(s);
    }

    /// Sets `BIAS` if the word is still `s` and no writer phase is on,
    /// giving the lock its table id first.
    #[cold]
    fn enable_bias(&self, s: u64) {
        // Relaxed: the id is published by the Release CAS below.
        let mut id = self.id.load(Ordering::Relaxed);
        if id == 0 {
            let Some(new) = reader_table::new_id() else {
                return;
            };
            id = match self
                .id
                .compare_exchange(0, new, Ordering::Relaxed, Ordering::Relaxed)
            {
                Ok(_) => new,
                Err(cur) => cur, // another reader set it (ours is unused)
            };
        }
        if id == 0 {
            return;
        }
        if s & (PRES | BIAS) == 0 {
            // Release: publishes the id to readers that see BIAS (and to
            // the writer whose CAS reads this value).
            if self
                .state
                .compare_exchange(
                    s,
                    (s & !HOT_MASK) | BIAS,
                    Ordering::Release,
                    Ordering::Relaxed,
                )
                .is_ok()
            {
                crate::coverage::hit!("ron_rw.biased");
            }
        }
    }

    /// Releases shared access.
    ///
    /// # Safety
    /// The caller holds shared access acquired with `token`.
    #[inline]
    pub unsafe fn unread(&self, token: ReadToken) {
        match token.slot() {
            Some(i) => reader_table::global().leave(i),
            None => {
                // Release: our reads happen before the writer's Acquire
                // load that sees `rout` reach its snapshot.
                self.rout.fetch_add(1, Ordering::Release);
            }
        }
    }

    // ----- writers -------------------------------------------------------

    /// Acquires exclusive access.
    #[inline]
    pub fn write(&self) {
        // Acquire: as in `write_fast_until` (an upgradable holder's count
        // seen here comes with its hold on the writers' queue).
        // mutants: loom's upgrade model stops at its execution cap before
        // it reaches the weakly ordered queue look this prevents; the Miri
        // workload kills it (`.ci/mutants -m miri_rw --seeds 16`: fails in
        // `miri_rw::unbiased`).
        let s = self.state.load(Ordering::Acquire);
        // Inline only the uncontended case: no writer phase, no queued
        // writer, one CAS, and no reader (central or table) to wait for.
        // Acquire (CAS and `rout`): pairs with the last writer's Release
        // unlock and the readers' Release counts out.
        // mutants: the CAS's Acquire is redundant with the load's above
        // unless the word went from `s` and back between them (two whole
        // writer phases and no reader: three writers, the models have two).
        if s & (PRES | BIAS) == 0
            && !self.writers.is_held()
            && self
                .state
                .compare_exchange(s, with_writer(s), Ordering::Acquire, Ordering::Relaxed)
                .is_ok()
        {
            crate::coverage::hit!("ron_rw.write_fast");
            if self.rout.load(Ordering::Acquire) != rin(s) {
                self.drain_after_fast(s);
            }
            return;
        }
        self.write_contended();
    }

    /// The rest of an uncontended write whose CAS found central readers
    /// in: wait for them (untimed: cannot give up).
    #[cold]
    #[inline(never)]
    fn drain_after_fast(&self, s: u64) {
        let drained = self.drain(s, never);
        debug_assert!(drained, "an untimed drain gave up");
    }

    /// Exclusive access when [`write`](Self::write)'s inline path does
    /// not apply: the one-CAS path (with a table to revoke); while it
    /// fails and no writer is queued, the polite wait (at most
    /// [`POLITE_TRIES`] more tries of it, pausing before each: the lock's
    /// holder may keep it for several phases in a row instead of handing
    /// it to another CPU each time); then the writers' queue.
    #[cold]
    #[inline(never)]
    fn write_contended(&self) {
        // The hint is user code: asked before anything changes.
        let tag = writer_tag(crate::hint::current_cpu());
        if self.write_fast_until(never, tag) {
            return;
        }
        if let Some(s) = self.claim_run(tag) {
            crate::coverage::hit!("ron_rw.write_run");
            let drained = self.drain(s, never);
            debug_assert!(drained, "an untimed drain gave up");
            return;
        }
        let mut wait = Wait::new(never);
        let mut shared = false;
        for n in 0..POLITE_TRIES {
            // A queued writer goes first: barging stops at the queue.
            if self.writers.is_held() {
                break;
            }
            if n == 0 {
                shared = polite_first_pause();
            } else if shared {
                polite_yield();
            } else {
                for _ in 0..1u32 << n.min(POLITE_SHIFT) {
                    let _ = wait.step();
                }
            }
            if self.write_fast_until(never, tag) {
                crate::coverage::hit!("ron_rw.write_polite");
                return;
            }
        }
        let token = self.writers.acquire();
        let _ = self.write_queued(token, never, tag);
    }

    /// The next writer phase for the CPU that holds the run (`WCPU` is
    /// `tag`, fewer than [`WRITER_RUN`] phases of the run taken past the
    /// queue): one CAS that sets `PRES`, counting the phase in `RUN`, if
    /// no writer phase is on and no central reader is in (an upgradable
    /// reader holds a central read, and it may upgrade: nobody may set
    /// `PRES` under it). Returns the word the CAS replaced, for the drain
    /// (of table readers only). Writers queued are passed over.
    fn claim_run(&self, tag: u64) -> Option<u64> {
        // Relaxed: a first guess for the CAS.
        let s = self.state.load(Ordering::Relaxed);
        if s & (PRES | WCPU_MASK) != tag || s & RUN_MASK >= WRITER_RUN << RUN_SHIFT {
            return None;
        }
        // Relaxed: an upgradable reader's count, if in, is in `rin(s)`
        // (else the CAS fails), and `rout` cannot pass `rin`: equal means
        // no central reader is in when the CAS succeeds. The drain's
        // Acquire load of `rout` orders the readers that left before us.
        if self.rout.load(Ordering::Relaxed) != rin(s) {
            return None;
        }
        // Acquire: pairs with the last writer's Release unlock (often
        // another thread on this CPU's).
        self.state
            .compare_exchange(
                s,
                with_writer(s) | tag | ((s & RUN_MASK) + RUN_ONE),
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .ok()
    }

    /// Exclusive access without waiting for anyone but readers that are
    /// leaving the table: `false` if a writer holds the lock, or readers
    /// are in.
    pub fn try_write(&self) -> bool {
        self.try_claim(0)
    }

    /// The claim of [`try_write`](Self::try_write) and
    /// [`try_upgrade`](Self::try_upgrade): one CAS that sets `PRES` when no
    /// writer phase is on and the only central readers in are the
    /// caller's own `own` (0, or 1 for an upgrader), then, if that CAS
    /// revoked the bias, the scan of the table. `false`, with the word as
    /// it was (the bias restored), if anyone else is in.
    fn try_claim(&self, own: u32) -> bool {
        // Relaxed: a first guess for the CAS.
        let s = self.state.load(Ordering::Relaxed);
        // Acquire: the readers counted out happen before our writes.
        if s & PRES != 0 || rin(s) != self.rout.load(Ordering::Acquire).wrapping_add(own) {
            return false;
        }
        // Acquire: pairs with the word's Releases (the last writer's
        // unlock, readers' counts).
        if self
            .state
            .compare_exchange(s, with_writer(s), Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        if s & BIAS != 0 {
            // SeqCst: the publication race, as in `drain`.
            fence(Ordering::SeqCst);
            if reader_table::global().occupied(self.id.load(Ordering::Relaxed)) {
                crate::coverage::hit!("ron_rw.try_claim_revoked_busy");
                // Clears `PRES` (an upgrader's read still counts).
                self.give_up_write();
                return false;
            }
        }
        true
    }

    /// The one-CAS path: the lock is free and no writer is queued; `tag`
    /// (a [`writer_tag`], or 0) goes into `WCPU`. Gives up (and undoes)
    /// if `expired()` says so while table readers drain.
    #[inline]
    fn write_fast_until(&self, expired: impl Fn() -> bool, tag: u64) -> bool {
        // Acquire: if this load sees an upgradable reader's count in `rin`,
        // it also sees that reader's hold on the writers' queue (the
        // Release fence in `read_upgradable`), so `is_held` below cannot
        // read a stale "free" and this writer cannot set `PRES` under an
        // upgradable holder. If it does not see that count, the CAS below
        // fails.
        let s = self.state.load(Ordering::Acquire);
        // Readers may be in: like a queued writer, this one then sets `PRES`
        // and drains them (the queue only orders writers).
        if s & PRES != 0 || self.writers.is_held() {
            return false;
        }
        // Acquire: pairs with the last writer's Release unlock.
        if self
            .state
            .compare_exchange(
                s,
                with_writer(s) | tag,
                Ordering::Acquire,
                Ordering::Relaxed,
            )
            .is_err()
        {
            return false;
        }
        crate::coverage::hit!("ron_rw.write_fast");
        if self.drain(s, expired) {
            return true;
        }
        crate::coverage::hit!("ron_rw.write_gave_up_draining");
        self.give_up_write();
        false
    }

    /// Holding the writers' queue (route order) with `token`: sets `PRES`
    /// (and `tag` into `WCPU`) once the current phase ends, leaves the
    /// queue, drains. `false` if `expired()` said so first (then nothing
    /// is held).
    #[cold]
    fn write_queued(&self, token: PlaceToken, expired: impl Fn() -> bool + Copy, tag: u64) -> bool {
        crate::coverage::hit!("ron_rw.write_queued");
        let mut wait = Wait::new(expired);
        // Relaxed: a first guess for the CAS.
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s & PRES == 0 {
                // Acquire: pairs with the last writer's Release unlock.
                match self.state.compare_exchange_weak(
                    s,
                    with_writer(s) | tag,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => break,
                    Err(cur) => {
                        s = cur;
                        continue;
                    }
                }
            }
            if !wait.step() {
                // SAFETY: we hold the queue with `token`.
                unsafe { self.writers.release(token) };
                return false;
            }
            s = self.state.load(Ordering::Relaxed); // as above
        }
        // SAFETY: we hold the queue with `token`; the next writer may queue
        // up behind our phase now.
        unsafe { self.writers.release(token) };
        if self.drain(s, expired) {
            true
        } else {
            crate::coverage::hit!("ron_rw.write_gave_up_draining");
            self.give_up_write();
            false
        }
    }

    /// Exclusive access, giving up at `deadline` (then nothing is held).
    #[cfg(all(feature = "std", not(loom)))]
    pub fn try_write_until(&self, deadline: crate::timed::Deadline) -> bool {
        if self.write_fast_until(|| deadline.expired(), 0) {
            return true;
        }
        match self.writers.try_acquire_until(deadline) {
            Some(token) => self.write_queued(token, || deadline.expired(), 0),
            None => false,
        }
    }

    /// Shared access, giving up at `deadline` (then nothing is held).
    #[cfg(all(feature = "std", not(loom)))]
    pub fn try_read_until(&self, deadline: crate::timed::Deadline) -> Option<ReadToken> {
        self.read_in_until(crate::hint::current_cpu, || deadline.expired())
    }

    /// Upgradable access, giving up at `deadline`.
    #[cfg(all(feature = "std", not(loom)))]
    pub fn try_read_upgradable_until(
        &self,
        deadline: crate::timed::Deadline,
    ) -> Option<PlaceToken> {
        let t = self.writers.try_acquire_until(deadline)?;
        // Release: as in `read_upgradable`.
        fence(Ordering::Release);
        match self.read_central(None, || deadline.expired()) {
            Some(_) => Some(t),
            None => {
                // SAFETY: just acquired with `t`.
                unsafe { self.writers.release(t) };
                None
            }
        }
    }

    /// Waits until the readers counted before our CAS (which replaced `s`)
    /// have left: the table's, if `s` was biased, then the central ones.
    /// `false` if `expired()` said so first.
    #[inline]
    fn drain(&self, s: u64, expired: impl Fn() -> bool) -> bool {
        let mut wait = Wait::new(expired);
        if s & BIAS != 0 {
            crate::coverage::hit!("ron_rw.revoke");
            // SeqCst: the publication race (module docs).
            fence(Ordering::SeqCst);
            // Relaxed: the id was written before BIAS was set, which our
            // Acquire CAS read.
            let id = self.id.load(Ordering::Relaxed);
            let table = reader_table::global();
            match table.wait_empty(id, || wait.step()) {
                None => return false,
                Some(true) => {
                    crate::coverage::hit!("ron_rw.revoke_waits");
                    self.strikes_cleared(s);
                }
                Some(false) => self.struck(s, id),
            }
        }
        // Acquire: pairs with the readers' Release `rout` increments.
        while self.rout.load(Ordering::Acquire) != rin(s) {
            crate::coverage::hit!("ron_rw.write_waits_readers");
            if !wait.step() {
                return false;
            }
        }
        true
    }

    /// A revocation (of the phase whose CAS replaced `s`, lock id `id`)
    /// found no table reader in: one more strike, and at [`strikes_max`]
    /// (by the lock's table slots) the bias lapses when the phase ends
    /// (`REBIAS` and the strikes cleared).
    #[cold]
    fn struck(&self, s: u64, id: u32) {
        let strikes = (s & HOT_MASK) >> 8;
        // Relaxed (both): the flag and `HOT` bits are ours while `PRES` is
        // (nobody else changes them during a writer phase).
        if strikes + 1 >= strikes_max(reader_table::slots_of(id)) {
            crate::coverage::hit!("ron_rw.bias_lapses");
            self.state
                .fetch_and(!(REBIAS | HOT_MASK), Ordering::Relaxed);
        } else {
            crate::coverage::hit!("ron_rw.revoke_struck");
            self.state.fetch_add(HOT_ONE, Ordering::Relaxed);
        }
    }

    /// A revocation found table readers in: the strikes start again.
    #[inline]
    fn strikes_cleared(&self, s: u64) {
        if s & HOT_MASK != 0 {
            crate::coverage::hit!("ron_rw.strikes_cleared");
            // Relaxed: as in `struck`.
            self.state.fetch_and(!HOT_MASK, Ordering::Relaxed);
        }
    }

    /// Ends a writer phase that never entered (a `try_write` that found
    /// table readers, a timed writer whose deadline passed while draining),
    /// as [`unwrite`](Self::unwrite) does. If its CAS revoked the bias, the
    /// bias comes back in the same RMW, which is needed here, not only
    /// cheaper: table readers may still be in, and the next writer must
    /// scan for them (it skips the scan when it finds `BIAS` clear). (A
    /// phase whose bias lapsed found the table empty, and none could enter
    /// since.)
    #[cold]
    fn give_up_write(&self) {
        // SAFETY: `PRES` is ours (our CAS set it): we hold the writer phase
        // this ends.
        unsafe { self.unwrite() };
    }

    /// Releases exclusive access: ends the writer phase, and gives back
    /// the bias if the phase revoked it and it did not lapse
    /// ([`STRIKES`]).
    ///
    /// # Safety
    /// The caller holds exclusive access (a `write`, a successful
    /// `try_write`/`try_write_until`, or an upgrade).
    #[inline]
    pub unsafe fn unwrite(&self) {
        // Release: our writes happen before the next reader's or writer's
        // Acquire of the word. While `PRES` is ours `BIAS` is clear and
        // nobody else changes the flag bits, so the sum clears `PRES` and
        // turns a set `REBIAS` into `BIAS` (`END_OF_PHASE`).
        let s = self.state.fetch_add(END_OF_PHASE, Ordering::Release);
        if s & REBIAS != 0 {
            crate::coverage::hit!("ron_rw.bias_restored");
        }
    }

    /// Turns exclusive access into shared access (central), letting the
    /// readers that waited for this phase in.
    ///
    /// # Safety
    /// The caller holds exclusive access, as for [`unwrite`](Self::unwrite).
    pub unsafe fn downgrade(&self) -> ReadToken {
        // AcqRel: Release for our writes to the readers let in; Acquire is
        // already ours. The sum counts us in and ends the phase as
        // `unwrite`'s does.
        self.state
            .fetch_add(RIN.wrapping_add(END_OF_PHASE), Ordering::AcqRel);
        crate::coverage::hit!("ron_rw.downgrade");
        ReadToken::CENTRAL
    }

    // ----- upgradable readers ---------------------------------------------

    /// Acquires upgradable access: the writers' queue and a central read.
    pub fn read_upgradable(&self) -> PlaceToken {
        let t = self.writers.acquire();
        // Release: a fast-path writer whose (Acquire) load of the word sees
        // the central count below also sees that we hold the queue, and
        // backs off to it (see `write_fast_until`).
        fence(Ordering::Release);
        // Holding the queue, a central read (no heat: one reader).
        let _ = self.read_central(None, never);
        t
    }

    /// Upgradable access without waiting.
    pub fn try_read_upgradable(&self) -> Option<PlaceToken> {
        let t = self.writers.try_acquire()?;
        // Relaxed: a first guess for the CAS.
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            if s & PRES != 0 {
                // SAFETY: just acquired with `t`.
                unsafe { self.writers.release(t) };
                return None;
            }
            // AcqRel: Acquire pairs with the last writer's Release unlock;
            // Release publishes our hold on the queue to a fast-path writer
            // that sees this count (as in `read_upgradable`).
            match self.state.compare_exchange_weak(
                s,
                s.wrapping_add(RIN),
                Ordering::AcqRel,
                Ordering::Relaxed,
            ) {
                Ok(_) => return Some(t),
                Err(cur) => s = cur,
            }
        }
    }

    /// Releases upgradable access.
    ///
    /// # Safety
    /// The caller holds upgradable access acquired with `token`.
    pub unsafe fn unread_upgradable(&self, token: PlaceToken) {
        // The queue first: counting our read out must be our last access,
        // since once it is out the lock's last user may free the lock
        // (`docs/design.md`, invariant 6). A writer that takes the queue
        // meanwhile waits for our read like any other.
        // SAFETY: the caller holds the queue with `token`.
        unsafe { self.writers.release(token) };
        // Release: as for a central reader.
        self.rout.fetch_add(1, Ordering::Release);
    }

    /// Upgradable to shared: leaves the queue, keeps the central read.
    ///
    /// # Safety
    /// The caller holds upgradable access acquired with `token`.
    pub unsafe fn downgrade_upgradable(&self, token: PlaceToken) -> ReadToken {
        // SAFETY: the caller holds the queue with `token`.
        unsafe { self.writers.release(token) };
        ReadToken::CENTRAL
    }

    /// Upgradable to exclusive: sets `PRES` (nobody else can: we hold the
    /// queue and are counted in `rin`), counts our read out, drains.
    ///
    /// # Safety
    /// The caller holds upgradable access acquired with `token`.
    pub unsafe fn upgrade(&self, token: PlaceToken) {
        // Relaxed: a first guess for the CAS.
        let mut s = self.state.load(Ordering::Relaxed);
        loop {
            debug_assert_eq!(s & PRES, 0, "an upgradable holder saw PRES set");
            // Acquire: pairs with the word's Releases.
            match self.state.compare_exchange_weak(
                s,
                with_writer(s),
                Ordering::Acquire,
                Ordering::Relaxed,
            ) {
                Ok(_) => break,
                Err(cur) => s = cur,
            }
        }
        // Release: our read is over (`drain` waits for `rout` to count it).
        self.rout.fetch_add(1, Ordering::Release);
        crate::coverage::hit!("ron_rw.upgrade");
        let _ = self.drain(s, never);
        // SAFETY: the caller holds the queue with `token`.
        unsafe { self.writers.release(token) };
    }

    /// Upgrades if no other reader is in; else leaves upgradable access
    /// as it was and returns `false`.
    ///
    /// # Safety
    /// The caller holds upgradable access acquired with `token`.
    pub unsafe fn try_upgrade(&self, token: PlaceToken) -> bool {
        if !self.try_claim(1) {
            return false;
        }
        // Release: our read is over.
        self.rout.fetch_add(1, Ordering::Release);
        // SAFETY: the caller holds the queue with `token`.
        unsafe { self.writers.release(token) };
        true
    }
}

// ----- lock_api 0.5 ---------------------------------------------------------

// SAFETY (every impl below): each method is one of the inherent methods
// above, whose protocol the module docs argue: a writer enters only once
// `PRES` is its own and the readers counted before it (central and table)
// have left, and readers enter only while no writer phase is on, so a
// writer excludes everyone; Acquire on entry and Release on exit on the
// word, `rout` or a table slot. Shared guard state records where the
// reader was counted and its unlock takes back exactly that count;
// exclusive state is `()`; upgradable state is the writers' queue token.
// Forgetting a guard leaves its count (the lock stays held in that mode),
// and dropping a held lock is allowed (nothing points into it: a table
// slot holds an id, not an address). Nothing after a count is published
// calls user code but `RonRaw` (which unwinds cleanly).
#[cfg(not(loom))]
// SAFETY: the argument above.
unsafe impl lock_api::RawRwLock for RonRw {
    #[allow(clippy::declare_interior_mutable_const)]
    const INIT: Self = RonRw::new();
    type SharedGuard = ReadToken;
    type ExclusiveGuard = ();

    #[inline]
    fn lock_shared(&self) -> ReadToken {
        self.read()
    }

    #[inline]
    fn try_lock_shared(&self) -> Option<ReadToken> {
        self.try_read()
    }

    #[inline]
    unsafe fn unlock_shared(&self, guard: ReadToken) {
        // SAFETY: the caller holds shared access acquired with `guard`.
        unsafe { self.unread(guard) }
    }

    #[inline]
    fn lock_exclusive(&self) {
        self.write()
    }

    #[inline]
    fn try_lock_exclusive(&self) -> Option<()> {
        self.try_write().then_some(())
    }

    #[inline]
    unsafe fn unlock_exclusive(&self, _: ()) {
        // SAFETY: the caller holds exclusive access (the trait's contract).
        unsafe { self.unwrite() }
    }

    #[inline]
    fn is_locked(&self) -> bool {
        self.is_held()
    }

    #[inline]
    fn is_locked_exclusive(&self) -> bool {
        self.is_write_held()
    }
}

// SAFETY: see above; every unlock already lets the other side's waiters in
// (phase-fair), so the fair unlocks are the plain ones.
#[cfg(not(loom))]
unsafe impl lock_api::RawRwLockFair for RonRw {
    #[inline]
    unsafe fn unlock_shared_fair(&self, guard: ReadToken) {
        // SAFETY: as `unlock_shared`.
        unsafe { self.unread(guard) }
    }

    #[inline]
    unsafe fn unlock_exclusive_fair(&self, _: ()) {
        // SAFETY: as in `unlock_exclusive`.
        unsafe { self.unwrite() }
    }
}

// SAFETY: see above (`downgrade` turns `PRES` into a central count in one
// RMW, so no writer can come between).
#[cfg(not(loom))]
unsafe impl lock_api::RawRwLockDowngrade for RonRw {
    #[inline]
    unsafe fn downgrade(&self, _: ()) -> ReadToken {
        // SAFETY: the caller holds exclusive access (the trait's contract).
        unsafe { RonRw::downgrade(self) }
    }
}

// SAFETY: see above; a timed attempt that gives up has taken back every
// count and left the queue (`give_up_read`, `write_queued`).
#[cfg(all(feature = "std", not(loom)))]
unsafe impl lock_api::RawRwLockTimed for RonRw {
    type Duration = std::time::Duration;
    type Instant = std::time::Instant;

    fn try_lock_shared_for(&self, timeout: Self::Duration) -> Option<ReadToken> {
        self.try_read_until(crate::timed::Deadline::after(timeout))
    }

    fn try_lock_shared_until(&self, timeout: Self::Instant) -> Option<ReadToken> {
        self.try_read_until(crate::timed::Deadline::at(timeout))
    }

    fn try_lock_exclusive_for(&self, timeout: Self::Duration) -> Option<()> {
        self.try_write_until(crate::timed::Deadline::after(timeout))
            .then_some(())
    }

    fn try_lock_exclusive_until(&self, timeout: Self::Instant) -> Option<()> {
        self.try_write_until(crate::timed::Deadline::at(timeout))
            .then_some(())
    }
}

// SAFETY: see above: an upgradable holder holds the writers' queue (one
// upgradable or queued writer at a time) and a central read (no writer
// phase can start: the fast path needs `rin == rout`, the slow path the
// queue); `upgrade` is then the only one who can set `PRES`.
#[cfg(not(loom))]
unsafe impl lock_api::RawRwLockUpgrade for RonRw {
    type UpgradableGuard = PlaceToken;

    #[inline]
    fn lock_upgradable(&self) -> PlaceToken {
        self.read_upgradable()
    }

    #[inline]
    fn try_lock_upgradable(&self) -> Option<PlaceToken> {
        self.try_read_upgradable()
    }

    #[inline]
    unsafe fn unlock_upgradable(&self, guard: PlaceToken) {
        // SAFETY: the caller holds upgradable access with `guard`.
        unsafe { self.unread_upgradable(guard) }
    }

    #[inline]
    unsafe fn upgrade(&self, guard: PlaceToken) {
        // SAFETY: as above.
        unsafe { RonRw::upgrade(self, guard) }
    }

    #[inline]
    unsafe fn try_upgrade(&self, guard: PlaceToken) -> Result<(), PlaceToken> {
        // SAFETY: as above.
        if unsafe { RonRw::try_upgrade(self, guard) } {
            Ok(())
        } else {
            Err(guard)
        }
    }
}

// SAFETY: as `RawRwLockUpgrade`; the fair unlock is the plain one.
#[cfg(not(loom))]
unsafe impl lock_api::RawRwLockUpgradeFair for RonRw {
    #[inline]
    unsafe fn unlock_upgradable_fair(&self, guard: PlaceToken) {
        // SAFETY: as above.
        unsafe { self.unread_upgradable(guard) }
    }
}

/// A reader-writer lock over [`RonRw`].
#[cfg(not(loom))]
pub type RonRwLock<T> = lock_api::RwLock<RonRw, T>;

// ----- lock_api 0.4 ---------------------------------------------------------

// SAFETY (every 0.4 impl): the 0.5 methods above; a 0.4 reader always
// counts in centrally (`read_central`), so its unlock, which gets no
// state, takes back a central count; 0.4 exclusive state is `()` as in
// 0.5; the upgradable queue token is rebuilt as `PlaceToken::NONE`, valid
// state for any `RonRaw` acquisition (it only picks where the handover
// scan starts).
#[cfg(all(feature = "lock_api_04", not(loom)))]
mod api04 {
    use super::*;

    #[inline]
    fn read_central(l: &RonRw) {
        let _ = l.read_central(None, never);
    }

    // SAFETY: see above.
    unsafe impl lock_api_04::RawRwLock for RonRw {
        #[allow(clippy::declare_interior_mutable_const)]
        const INIT: Self = RonRw::new();
        type GuardMarker = lock_api_04::GuardSend;

        fn lock_shared(&self) {
            read_central(self)
        }

        fn try_lock_shared(&self) -> bool {
            // Relaxed: a first guess for the CAS.
            self.try_read_central(self.state.load(Ordering::Relaxed))
        }

        unsafe fn unlock_shared(&self) {
            // SAFETY: a 0.4 reader counted in centrally.
            unsafe { self.unread(ReadToken::CENTRAL) }
        }

        fn lock_exclusive(&self) {
            self.write()
        }

        fn try_lock_exclusive(&self) -> bool {
            self.try_write()
        }

        unsafe fn unlock_exclusive(&self) {
            // SAFETY: the caller holds exclusive access (the trait's contract).
            unsafe { self.unwrite() }
        }

        fn is_locked(&self) -> bool {
            self.is_held()
        }

        fn is_locked_exclusive(&self) -> bool {
            self.is_write_held()
        }
    }

    // SAFETY: see above.
    unsafe impl lock_api_04::RawRwLockFair for RonRw {
        unsafe fn unlock_shared_fair(&self) {
            // SAFETY: as `unlock_shared`.
            unsafe { self.unread(ReadToken::CENTRAL) }
        }

        unsafe fn unlock_exclusive_fair(&self) {
            // SAFETY: as in `unlock_exclusive`.
            unsafe { self.unwrite() }
        }
    }

    // SAFETY: see above.
    unsafe impl lock_api_04::RawRwLockDowngrade for RonRw {
        unsafe fn downgrade(&self) {
            // SAFETY: the caller holds exclusive access (the trait's contract).
            let _ = unsafe { RonRw::downgrade(self) };
        }
    }

    // SAFETY: see above (a timed 0.4 reader uses the central path).
    #[cfg(feature = "std")]
    unsafe impl lock_api_04::RawRwLockTimed for RonRw {
        type Duration = std::time::Duration;
        type Instant = std::time::Instant;

        fn try_lock_shared_for(&self, timeout: Self::Duration) -> bool {
            let d = crate::timed::Deadline::after(timeout);
            self.read_central(None, || d.expired()).is_some()
        }

        fn try_lock_shared_until(&self, timeout: Self::Instant) -> bool {
            let d = crate::timed::Deadline::at(timeout);
            self.read_central(None, || d.expired()).is_some()
        }

        fn try_lock_exclusive_for(&self, timeout: Self::Duration) -> bool {
            self.try_write_until(crate::timed::Deadline::after(timeout))
        }

        fn try_lock_exclusive_until(&self, timeout: Self::Instant) -> bool {
            self.try_write_until(crate::timed::Deadline::at(timeout))
        }
    }

    // SAFETY: see above.
    unsafe impl lock_api_04::RawRwLockUpgrade for RonRw {
        fn lock_upgradable(&self) {
            let _ = self.read_upgradable();
        }

        fn try_lock_upgradable(&self) -> bool {
            self.try_read_upgradable().is_some()
        }

        unsafe fn unlock_upgradable(&self) {
            // SAFETY: the caller holds upgradable access; see above.
            unsafe { self.unread_upgradable(PlaceToken::NONE) }
        }

        unsafe fn upgrade(&self) {
            // SAFETY: as above.
            unsafe { RonRw::upgrade(self, PlaceToken::NONE) }
        }

        unsafe fn try_upgrade(&self) -> bool {
            // SAFETY: as above.
            unsafe { RonRw::try_upgrade(self, PlaceToken::NONE) }
        }
    }

    // SAFETY: see above.
    unsafe impl lock_api_04::RawRwLockUpgradeFair for RonRw {
        unsafe fn unlock_upgradable_fair(&self) {
            // SAFETY: as above.
            unsafe { self.unread_upgradable(PlaceToken::NONE) }
        }
    }
}

#[cfg(all(test, not(loom)))]
mod tests {
    use super::{
        HOT_MASK, HOT_MAX, PRES, RonRw, STRIKES, WRITER_RUN, never, strikes_max, writer_tag,
    };
    use crate::sync::Ordering;

    fn hot(l: &RonRw) -> u64 {
        (l.state.load(Ordering::Relaxed) & HOT_MASK) >> 8
    }

    /// One central read that looked at the word before `between` ran.
    fn read_after(l: &RonRw, between: impl FnOnce()) {
        let seen = l.state.load(Ordering::Relaxed);
        between();
        let t = l.read_central(Some(seen), never).unwrap();
        // SAFETY: `t` is the read just taken.
        unsafe { l.unread(t) };
    }

    #[test]
    fn a_read_is_contended_if_another_reader_counted_in_since_its_look_or_is_inside() {
        let l = RonRw::new();
        // Alone: not contended.
        read_after(&l, || {});
        assert_eq!(hot(&l), 0);
        // Another reader came and went between the look and the count
        // (where a line's counts queue, it is gone before a look at
        // `rout` could see it inside).
        read_after(&l, || {
            let t = l.read_central(None, never).unwrap();
            // SAFETY: `t` is the read just taken.
            unsafe { l.unread(t) };
        });
        assert_eq!(hot(&l), 1);
        // Another reader inside since before the look.
        let other = l.read_central(None, never).unwrap();
        read_after(&l, || {});
        assert_eq!(hot(&l), 2);
        // SAFETY: `other` is the read taken above.
        unsafe { l.unread(other) };
        // Enough contended reads bias the lock.
        for _ in 2..HOT_MAX {
            read_after(&l, || {
                let t = l.read_central(None, never).unwrap();
                // SAFETY: `t` is the read just taken.
                unsafe { l.unread(t) };
            });
        }
        assert!(l.is_biased(), "{HOT_MAX} contended reads bias the lock");
    }

    /// A lock whose last writer phase was held by CPU 3, released, with a
    /// writer queued: `f` runs on it.
    fn after_a_phase_of_cpu_3(f: impl FnOnce(&RonRw)) {
        let l = RonRw::new();
        assert!(l.write_fast_until(never, writer_tag(3)));
        // SAFETY: the write just taken.
        unsafe { l.unwrite() };
        let queued = l.writers.acquire();
        f(&l);
        // SAFETY: `queued` is the queue's token taken above.
        unsafe { l.writers.release(queued) };
    }

    #[test]
    fn the_last_phase_s_cpu_takes_at_most_writer_run_phases_past_the_queue() {
        after_a_phase_of_cpu_3(|l| {
            assert_eq!(l.claim_run(writer_tag(4)), None, "another CPU queues");
            for n in 0..WRITER_RUN {
                assert!(l.claim_run(writer_tag(3)).is_some(), "phase {n} of the run");
                assert_ne!(l.state.load(Ordering::Relaxed) & PRES, 0);
                assert_eq!(l.claim_run(writer_tag(3)), None, "a phase is on");
                // SAFETY: the write just taken.
                unsafe { l.unwrite() };
            }
            assert_eq!(l.claim_run(writer_tag(3)), None, "the run is over");
        });
        // A tag is never 0 (the fast path's), whatever the hint.
        for cpu in [0, 1, 0xFFE, 0xFFF, usize::MAX] {
            assert_ne!(writer_tag(cpu), 0, "cpu {cpu}");
        }
    }

    #[test]
    fn no_run_under_an_upgradable_reader_or_a_central_one() {
        after_a_phase_of_cpu_3(|l| {
            let r = l.read_central(None, never).unwrap();
            assert_eq!(l.claim_run(writer_tag(3)), None, "a central reader is in");
            // SAFETY: `r` is the read just taken.
            unsafe { l.unread(r) };
        });
        let l = RonRw::new();
        assert!(l.write_fast_until(never, writer_tag(3)));
        // SAFETY: the write just taken.
        unsafe { l.unwrite() };
        let u = l.read_upgradable();
        // It may upgrade: nobody may set `PRES` under it.
        assert_eq!(
            l.claim_run(writer_tag(3)),
            None,
            "an upgradable reader is in"
        );
        // SAFETY: `u` is the upgradable read just taken.
        unsafe { l.upgrade(u) };
        // SAFETY: the upgrade above.
        unsafe { l.unwrite() };
        assert!(!l.is_held());
    }

    #[test]
    fn strikes_follow_the_table_size() {
        assert_eq!(strikes_max(256), STRIKES);
        assert_eq!(strikes_max(128), STRIKES);
        assert_eq!(strikes_max(64), 32);
        assert_eq!(strikes_max(16), 128);
        assert_eq!(strikes_max(2), 255, "the strike count has 8 bits");
        assert_eq!(strikes_max(0), 255, "no slots is no division by zero");
    }
}
