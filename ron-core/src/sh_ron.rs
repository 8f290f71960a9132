//! [`ShRon`]: the compact RON (shRON). The lock is one 8-byte word; the
//! per-CPU waiting flags of all `ShRon` locks live in one process-wide
//! *wait table*.
//!
//! The table has [`MAX_CPUS_IN_TABLE`] rows (one per place on the
//! installed route, or per CPU id modulo the rows without one) and one
//! *column* per contended lock: 2 bits per lock per row (`PENDING`,
//! `GRANTED`). A lock claims a column lazily, on its first contended
//! acquisition (a CAS of the column index into the lock word), and gives
//! it back in `Drop`.
//!
//! * lock: fast path: load the word, and only if `IN_USE` is clear
//!   `fetch_or(IN_USE)` (an arrival that finds it held writes nothing).
//!   Slow path: get the lock's column; *claim* the caller's row
//!   (`fetch_or(PENDING)` that finds it clear), then count itself in the
//!   lock word (`fetch_add`), whose old value is the claimer's one look at
//!   `IN_USE`: free, it takes the lock; held, it waits on its row alone
//!   until a release grants it, and takes the grant with one CAS of the row
//!   word. A thread that cannot claim its row (another thread on the same
//!   row already waits there) waits on `IN_USE` (TTAS) and claims the row
//!   as soon as it is free again (a load first); a lock with no column
//!   (table full) waits on `IN_USE` alone.
//! * unlock: if the lock word counts no claimer, clear `IN_USE` by a CAS
//!   (which fails if a claimer counted itself meanwhile); otherwise scan the
//!   rows after the acquirer's row (its own last, so along the route) for
//!   a `PENDING` bit of this column and set its `GRANTED` bit, keeping
//!   `IN_USE` set. A count with no claimed row (a claimer leaving by a
//!   panic) is read again until it drops.
//!
//! ## Lock word
//! | bits | meaning | written by |
//! |---|---|---|
//! | 0 | `IN_USE`: held, or granted and about to be taken by the grantee | set by `fetch_or` from clear; cleared by the holder's CAS, only while the count is 0 |
//! | 1..32 | number of counted claimers: while it is not 0 the lock is handed over, never freed | `+1` after claiming, `-1` on acquisition or leaving |
//! | 32..64 | column + 1, or 0 for none | CAS once from 0; reset in `Drop` |
//!
//! ## Table bits (row `r`, this lock's column)
//! | row | `IN_USE` | `PENDING` | `GRANTED` | meaning |
//! |---|---|---|---|---|
//! | unclaimed | any | 0 | 0 | nobody claimed row `r` |
//! | claimed | any | 1 | 0 | `r`'s claimer waits (only it may clear the bits) |
//! | granted | 1 | 1 | 1 | the holder handed the lock to `r`'s claimer, who owns it now |
//!
//! `GRANTED` is set only by the holder, only over `PENDING` (a CAS that
//! finds it set), only while `IN_USE` stays set; only the claimer reads it.
//! A claimer leaves only by the grant, by taking `IN_USE` from clear at its
//! count (which is impossible while a grant is pending), or, when its relax
//! policy panics, by dropping its count and then one `fetch_and` clearing
//! both bits, which takes a grant that came first (the claimer then owns
//! the lock and releases it). So at any moment the holder, the pending
//! grant or nobody owns the lock (the claim step of [`Ron`](crate::Ron)).
//! A counted claimer is never stranded: the lock is freed only by a CAS
//! that finds the count 0, so every release while it is counted grants a
//! claimed row, and the scans go around the rows in turn.
//!
//! ## Table capacity and layout
//! A page of the table serves 256 columns (8 row words of 32 columns per
//! row): 256 rows of one 64-byte line each, 16 KiB, 2 bits per lock per
//! row. A claimer polls its own row's line, which only its own claims and
//! the grants to it write, so waiters on different CPUs share no line. With
//! `std` pages are allocated when first used and never freed (up to
//! [`MAX_COLUMNS`] simultaneously contended locks). Without `std` the table
//! is a fixed static of [`MAX_COLUMNS`] columns. When no column is free the
//! lock works as a TTAS lock (waiters spin on `IN_USE`) and asks again on
//! its next contended acquisition. Allocation happens only on the slow path.
//!
//! A lock forgotten with `mem::forget` (the lock itself) leaks its column.
//! Dropping a held lock (allowed by lock_api 0.5 when it is exclusively
//! owned) gives its column back, as any drop does.
//!
//! ## Guarantees
//! * Mutual exclusion, under any schedule and hint (several threads per CPU,
//!   migration, garbage ids).
//! * Progress.
//! * Bounded waiting for claimers: at most `MAX_CPUS_IN_TABLE - 1` other
//!   grants plus one racing fast-path acquisition (the lock is free while a
//!   claimer is counted only between a release that found no count and
//!   that claimer's take). Threads that could not claim (shared row, full
//!   table) have no bound.
//! * Panics: a waiter whose `Relax` policy panics clears its row claim, or,
//!   if its row was granted meanwhile, takes the lock and hands it on, then
//!   unwinds; an unlock whose CPU hint panics releases the lock (scanning
//!   from row 0) before it unwinds. The lock stays usable
//!   (`docs/panic-safety.md`).
//!
//! ## Cost
//! Bytes per lock: **8**. Per process: the table (std: 10 KiB of page
//! pointers and column bitmap plus a 16 KiB page per 256 contended locks;
//! no_std: one 16 KiB page, statically). Uncontended lock + unlock: a load
//! and a `fetch_or`, a load and a CAS.
//!
//! ```
//! use ron_core::ShRon;
//! let m: lock_api::Mutex<ShRon, u64> = lock_api::Mutex::new(0);
//! std::thread::scope(|s| {
//!     for _ in 0..4 {
//!         s.spawn(|| for _ in 0..500 { *m.lock() += 1 });
//!     }
//! });
//! assert_eq!(*m.lock(), 2000);
//! ```

use core::cell::Cell;
use core::marker::PhantomData;

use crate::relax::{DefaultRelax, Relax};
use crate::sync::{AtomicU32, AtomicU64, Ordering};
use crate::token::PlaceToken;
use crate::unwind::OnUnwind;

/// Rows of the wait table: a CPU waits in the row of its place on the
/// installed route (places spread over the rows), or, without a route, in
/// row `cpu % MAX_CPUS_IN_TABLE`.
#[cfg(not(loom))]
pub const MAX_CPUS_IN_TABLE: usize = 256;
/// Rows of the wait table (small under loom).
#[cfg(loom)]
pub const MAX_CPUS_IN_TABLE: usize = 2;

/// Columns per row word (64 bits, 2 bits per column).
const WORD_COLUMNS: usize = 32;

/// The most locks that can hold a column at once (std: grown on demand).
#[cfg(all(feature = "std", not(loom)))]
pub const MAX_COLUMNS: usize = 65536;
/// The most locks that can hold a column at once (no_std: a fixed table).
#[cfg(all(not(feature = "std"), not(loom)))]
pub const MAX_COLUMNS: usize = 256;
/// The most locks that can hold a column at once (loom).
#[cfg(loom)]
pub const MAX_COLUMNS: usize = 32;

/// Row words of 32 columns each (each with its `used` word).
const GROUPS: usize = MAX_COLUMNS / WORD_COLUMNS;

/// Row words per row of a page: 8, one 64-byte line (fewer only when the
/// whole table has fewer).
const WAYS: usize = if GROUPS < 8 { GROUPS } else { 8 };

/// Columns per page.
const PAGE_COLUMNS: usize = WORD_COLUMNS * WAYS;

/// Pages of the table.
const PAGES: usize = MAX_COLUMNS / PAGE_COLUMNS;

/// What [`ShRon::claim`] did.
enum Claim {
    /// The row has another claimer: the caller waits on `IN_USE` alone.
    Shared,
    /// Claimed and counted while the lock was held: a release grants us.
    /// The row word before the claim.
    Counted(u64),
    /// Claimed and counted, and the lock was free: the caller took it.
    Took,
}

const IN_USE: u64 = 1;
const ONE_WAITER: u64 = 2;
const COUNT_MASK: u64 = 0xFFFF_FFFE;
const COL_SHIFT: u32 = 32;

/// One row of a page: the waiting bits of one CPU hint for the page's
/// `PAGE_COLUMNS` locks, on a cache line of its own. A claimer polls its
/// row, which only its own claims and the grants to it write (threads of
/// other CPUs never share it), however many locks the page serves.
#[repr(align(64))]
struct Row {
    words: [AtomicU64; WAYS],
}

impl Row {
    crate::sync::const_fn_unless_loom! {
        fn new() -> Self {
            Row { words: crate::sync::array_init!(WAYS, AtomicU64::new(0)) }
        }
    }
}

/// One page of the table: a row per CPU hint, `PAGE_COLUMNS` columns.
struct Page {
    rows: [Row; MAX_CPUS_IN_TABLE],
}

impl Page {
    crate::sync::const_fn_unless_loom! {
        fn new() -> Self {
            Page { rows: crate::sync::array_init!(MAX_CPUS_IN_TABLE, Row::new()) }
        }
    }

    /// The word of row `row` that holds column `col`'s bits.
    #[inline]
    fn word(&self, row: usize, col: usize) -> &AtomicU64 {
        &self.rows[row].words[(col / WORD_COLUMNS) % WAYS]
    }
}

/// Column `col`'s `PENDING` bit in its row word (`GRANTED` is the next).
#[inline]
fn pending_bit(col: usize) -> u64 {
    1 << (2 * (col % WORD_COLUMNS))
}

/// The process-wide wait table (one is a static; loom models make their own).
#[doc(hidden)]
pub struct ShTable {
    /// Per row word (32 columns), which of its columns are taken.
    used: [AtomicU32; GROUPS],
    /// Per page, the address of its `Box<Page>` or 0 (allocated on demand).
    #[cfg(feature = "std")]
    pages: [crate::sync::AtomicUsize; PAGES],
    #[cfg(not(feature = "std"))]
    pages: [Page; PAGES],
}

#[cfg(not(loom))]
static TABLE: ShTable = ShTable::new();

impl ShTable {
    crate::sync::const_fn_unless_loom! {
        /// An empty table.
        pub fn new() -> Self {
            ShTable {
                used: crate::sync::array_init!(GROUPS, AtomicU32::new(0)),
                #[cfg(feature = "std")]
                pages: crate::sync::array_init!(PAGES, crate::sync::AtomicUsize::new(0)),
                #[cfg(not(feature = "std"))]
                pages: crate::sync::array_init!(PAGES, Page::new()),
            }
        }
    }

    /// Claims a free column, or `None` when the table is full.
    fn alloc(&self) -> Option<usize> {
        for g in 0..GROUPS {
            // Relaxed: a guess for the CAS.
            let mut u = self.used[g].load(Ordering::Relaxed);
            while u != u32::MAX {
                let bit = (!u).trailing_zeros();
                // AcqRel: Acquire orders us after the `free` (Release) that
                // returned this column, and so after every clear of its
                // bits by the last lock's claimers. Without it C11 lets a
                // grant CAS of the new lock come before such a clear in the
                // row's modification order: it reads the old PENDING, sets
                // GRANTED, and the clear then erases the grant (nobody owns
                // the lock). mutants: kept, C11 only: every write to a row
                // and to `used` is an RMW, and loom and Miri let an RMW read
                // only the latest write, so no model can put the grant
                // before the clear (docs/mutants.md).
                match self.used[g].compare_exchange_weak(
                    u,
                    u | 1 << bit,
                    Ordering::AcqRel,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        let col = g * WORD_COLUMNS + bit as usize;
                        #[cfg(feature = "std")]
                        self.ensure_page(col / PAGE_COLUMNS);
                        return Some(col);
                    }
                    Err(now) => u = now,
                }
            }
        }
        None
    }

    #[cfg(feature = "std")]
    fn ensure_page(&self, p: usize) {
        // Relaxed: only decides whether to allocate; nothing here reads the
        // page, and every use of it goes through `page`, whose Acquire load
        // pairs with the Release CAS below (found not load-bearing by
        // `.ci/mutants`, see docs/mutants.md).
        if self.pages[p].load(Ordering::Relaxed) != 0 {
            return;
        }
        let page = std::boxed::Box::into_raw(std::boxed::Box::new(Page::new()));
        let addr = page.expose_provenance();
        // AcqRel: Release publishes the page's initialization to `page`'s
        // Acquire. Relaxed on failure: the loser only frees its own page and
        // reads the winner's through `page` (as above).
        if self.pages[p]
            .compare_exchange(0, addr, Ordering::AcqRel, Ordering::Relaxed)
            .is_err()
        {
            crate::coverage::hit!("sh_ron.page_race_lost");
            // SAFETY: we allocated `page` above and never published it.
            drop(unsafe { std::boxed::Box::from_raw(page) });
        }
    }

    /// The page holding column `col`, if it exists.
    #[inline]
    fn page(&self, col: usize) -> Option<&Page> {
        let p = col / PAGE_COLUMNS;
        #[cfg(feature = "std")]
        {
            // Acquire: pairs with the Release CAS in `ensure_page`.
            let addr = self.pages.get(p)?.load(Ordering::Acquire);
            if addr == 0 {
                return None;
            }
            // SAFETY: non-zero entries are leaked `Box<Page>` addresses
            // (exposed in `ensure_page`), freed only when the table drops,
            // which outlives every lock using it.
            Some(unsafe { &*core::ptr::with_exposed_provenance::<Page>(addr) })
        }
        #[cfg(not(feature = "std"))]
        self.pages.get(p)
    }

    /// How many columns are claimed right now (a snapshot, for tests).
    #[doc(hidden)]
    pub fn claimed_columns(&self) -> usize {
        self.used
            .iter()
            // Relaxed: a snapshot by contract.
            .map(|u| u.load(Ordering::Relaxed).count_ones() as usize)
            .sum()
    }

    /// Returns column `col`: clears its bits in every row, frees it.
    fn free(&self, col: usize) {
        if let Some(page) = self.page(col) {
            let mask = 3 * pending_bit(col);
            for row in 0..MAX_CPUS_IN_TABLE {
                let w = page.word(row, col);
                // Relaxed: no waiter exists (the lock is exclusively owned);
                // the bits should already be clear, this is belt and braces.
                if w.load(Ordering::Relaxed) & mask != 0 {
                    w.fetch_and(!mask, Ordering::Relaxed);
                }
            }
        }
        crate::coverage::hit!("sh_ron.column_freed");
        // Release: orders the clearing above (and every claimer's clear
        // before it) before the column's next user; see `alloc`.
        // mutants: kept, C11 only, the pair of `alloc`'s Acquire (see there).
        self.used[col / WORD_COLUMNS].fetch_and(!(1 << (col % WORD_COLUMNS)), Ordering::Release);
    }
}

#[cfg(feature = "std")]
impl Drop for ShTable {
    fn drop(&mut self) {
        for p in &self.pages {
            let addr = p.load(Ordering::Relaxed); // exclusive access
            if addr != 0 {
                // SAFETY: a `Box<Page>` leaked by `ensure_page`; no lock can
                // use the table any more (we have `&mut self`).
                drop(unsafe {
                    std::boxed::Box::from_raw(core::ptr::with_exposed_provenance_mut::<Page>(addr))
                });
            }
        }
    }
}

#[cfg(not(loom))]
impl Default for ShTable {
    fn default() -> Self {
        Self::new()
    }
}

/// The compact RON lock: one word plus a share of the process-wide wait
/// table, for many locks with RON's per-CPU order. States, guarantees and
/// cost: the [module docs](self).
pub struct ShRon<R: Relax = DefaultRelax> {
    word: AtomicU64,
    #[cfg(loom)]
    table: &'static ShTable,
    _relax: PhantomData<fn() -> R>,
}

/// The caller's row: its CPU's place on the installed route (spread over
/// the rows), so that the release's scan follows the route; the CPU id
/// modulo the rows without a route.
#[inline]
fn row_hint() -> usize {
    crate::route::slot_of(crate::hint::current_cpu(), MAX_CPUS_IN_TABLE)
}

impl<R: Relax> ShRon<R> {
    /// A new, unlocked lock (no column until its first contention).
    #[cfg(not(loom))]
    pub const fn new() -> Self {
        ShRon {
            word: AtomicU64::new(0),
            _relax: PhantomData,
        }
    }

    /// A new lock using `table` (loom models give each model its own table).
    #[cfg(loom)]
    #[doc(hidden)]
    pub fn new_in(table: &'static ShTable) -> Self {
        ShRon {
            word: AtomicU64::new(0),
            table,
            _relax: PhantomData,
        }
    }

    #[inline]
    fn table(&self) -> &'static ShTable {
        #[cfg(loom)]
        return self.table;
        #[cfg(not(loom))]
        &TABLE
    }

    /// Acquires the lock, waiting in the caller's row (from the CPU hint).
    #[inline]
    pub fn acquire(&self) -> PlaceToken {
        if self.try_fast() {
            return PlaceToken::NONE;
        }
        self.acquire_slow(row_hint())
    }

    /// Acquires the lock waiting in row `row % MAX_CPUS_IN_TABLE` (any value
    /// is safe).
    pub fn acquire_in(&self, row: usize) -> PlaceToken {
        if self.try_fast() {
            return PlaceToken::NONE;
        }
        self.acquire_slow(row % MAX_CPUS_IN_TABLE)
    }

    /// The fast path: a load of the word, then the `fetch_or` only when
    /// `IN_USE` looked clear. An arrival that finds the lock held reads the
    /// word the claimers poll (the line stays shared) and goes to claim its
    /// row; a bare `fetch_or` would take the line exclusive on every
    /// arrival.
    #[inline]
    fn try_fast(&self) -> bool {
        // Relaxed peek: only decides whether to try the RMW, which has the Acquire.
        if self.word.load(Ordering::Relaxed) & IN_USE != 0 {
            crate::coverage::hit!("sh_ron.fast_saw_held");
            return false;
        }
        self.take()
    }

    /// One `fetch_or(IN_USE)`: whether it found `IN_USE` clear (the caller
    /// now owns the lock).
    #[inline]
    fn take(&self) -> bool {
        // Acquire: pairs with the Release CAS of `try_free`. Setting
        // an already-set bit changes nothing, so a failed attempt is harmless.
        self.word.fetch_or(IN_USE, Ordering::Acquire) & IN_USE == 0
    }

    /// Takes the lock if it is free; never claims a row.
    #[inline]
    pub fn try_acquire(&self) -> Option<PlaceToken> {
        self.try_fast().then_some(PlaceToken::NONE)
    }

    /// This lock's column, claiming one if it has none (`None`: table full).
    fn column(&self) -> Option<usize> {
        // Acquire: pairs with the installing CAS, so the column's page is
        // visible (a failed fast path is a Relaxed load: it synchronizes
        // with nothing). Weakened, `loom_coverage::sh_ron::two_waiters_one_row`
        // fails (docs/mutants.md).
        let mut cur = self.word.load(Ordering::Acquire);
        if cur >> COL_SHIFT != 0 {
            return Some((cur >> COL_SHIFT) as usize - 1);
        }
        let Some(col) = self.table().alloc() else {
            // (Not `hit!`: with the counters compiled out, clippy would want `?`.)
            if crate::coverage::ENABLED {
                crate::coverage::record("sh_ron.table_full");
            }
            return None;
        };
        loop {
            // AcqRel: Release publishes the page we ensured; Acquire on
            // failure reads another installer's column (and its page).
            // mutants: the failure Acquire is kept: the loser reads the
            // winner's column and then its page; the models reach this
            // race only with the page already visible to the loser (it
            // ensured the same page itself), so no model can kill it.
            match self.word.compare_exchange_weak(
                cur,
                cur | ((col as u64 + 1) << COL_SHIFT),
                Ordering::AcqRel,
                Ordering::Acquire,
            ) {
                Ok(_) => {
                    crate::coverage::hit!("sh_ron.column_claimed");
                    return Some(col);
                }
                Err(now) if now >> COL_SHIFT != 0 => {
                    crate::coverage::hit!("sh_ron.column_race_lost");
                    self.table().free(col);
                    return Some((now >> COL_SHIFT) as usize - 1);
                }
                Err(now) => cur = now,
            }
        }
    }

    #[cold]
    fn acquire_slow(&self, row: usize) -> PlaceToken {
        // User code before claiming: a panic here leaves nothing behind.
        let mut relax = R::default();
        // Our row in the lock's column, if there is one.
        let place = self.column().and_then(|col| {
            let page = self.table().page(col)?;
            Some((page.word(row, col), pending_bit(col)))
        });
        // Set while we hold the row's claim and are counted in the word.
        let claimed: Cell<Option<(&AtomicU64, u64)>> = Cell::new(None);
        // While claimed, a panic in `relax` unwinds through this guard: it
        // clears the claim, or, if the holder granted the row meanwhile,
        // owns the lock and hands it on.
        let guard = OnUnwind::new(|| {
            if let Some((w, pending)) = claimed.get() {
                self.unclaim_on_unwind(w, pending, row);
            }
        });
        let mut first = true;
        // The row word as the claimer last saw it (PENDING set, GRANTED
        // clear).
        let mut seen = 0;
        loop {
            if let Some((w, pending)) = claimed.get() {
                // Counted while the lock was held: a release grants us
                // (it frees the lock only when it counts no claimer), so
                // a claimer looks at its row only. A look is the take
                // itself: a CAS from "granted" to "unclaimed" that guesses
                // the other columns' bits (this CPU's claims on other
                // locks, which rarely change). The row's line is the
                // claimer's between grants (no other CPU writes it but a
                // grant), so a failed look costs what a load does, and the
                // look that finds the grant takes the line for writing at
                // once, where a load and then a write would fetch it shared
                // and then pay an invalidation of the granting holder's copy.
                let granted = pending << 1;
                // Acquire on success: pairs with the holder's Release CAS
                // that set GRANTED. Relaxed on failure: nothing was taken;
                // the value read is the next guess.
                match w.compare_exchange(
                    seen | granted,
                    seen & !pending,
                    Ordering::Acquire,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => {
                        crate::coverage::hit!("sh_ron.grant_taken");
                        self.uncount();
                        guard.disarm();
                        return PlaceToken::at(row);
                    }
                    Err(now) if now & granted != 0 => {
                        // Granted, with other columns' bits we did not
                        // guess: take it at once with them.
                        seen = now & !granted;
                        continue;
                    }
                    Err(now) => seen = now,
                }
            } else {
                if let Some((w, pending)) = place {
                    match self.claim(w, pending, first) {
                        Claim::Shared => {}
                        Claim::Counted(old) => {
                            seen = old | pending;
                            claimed.set(Some((w, pending)));
                            relax.relax();
                            continue;
                        }
                        Claim::Took => {
                            crate::coverage::hit!("sh_ron.free_taken_claimer");
                            self.unclaim(w, pending);
                            guard.disarm();
                            return PlaceToken::at(row);
                        }
                    }
                }
                first = false;
                // Relaxed peek before the RMW (which has the Acquire).
                if self.word.load(Ordering::Relaxed) & IN_USE == 0 && self.take() {
                    crate::coverage::hit!("sh_ron.free_taken_unclaimed");
                    guard.disarm();
                    return PlaceToken::at(row);
                }
            }
            relax.relax();
            // Without a claim a look loads the word only (a failed
            // `try_fast` found IN_USE set, so the next look waits).
            #[cfg(all(ron_vm, not(loom), not(shuttle)))]
            if claimed.get().is_none() {
                crate::relax::vm_idle(&mut relax, crate::sync::vm_addr(&self.word));
            }
        }
    }

    /// Claims row `w` (bit `pending`) and counts the caller in the lock
    /// word, taking the lock if that count found it free. A later try
    /// (`first` false: the row had another claimer) peeks at the row
    /// first, so that waiting to claim writes nothing.
    #[inline]
    fn claim(&self, w: &AtomicU64, pending: u64, first: bool) -> Claim {
        // Relaxed: claiming transfers no data; it makes this thread the
        // one reader of the row's grant bit (the count below publishes it).
        if !first && w.load(Ordering::Relaxed) & pending != 0 {
            return Claim::Shared;
        }
        let before = w.fetch_or(pending, Ordering::Relaxed);
        if before & pending != 0 {
            crate::coverage::hit!("sh_ron.row_shared");
            return Claim::Shared; // another thread waits in this row
        }
        crate::coverage::hit!("sh_ron.row_claimed");
        if !first {
            crate::coverage::hit!("sh_ron.reclaim");
        }
        // Release: a release that reads this count (Acquire) also sees
        // our PENDING bit, so its scan finds a claimed row whenever it
        // counts one. The old value is our one look at IN_USE: held, and
        // the count is in the word before the release that frees it,
        // which then grants instead (`release`); free, and we take it
        // (or whoever beat us to it will grant us).
        // mutants: kept, a retry only: weakened, a release may count us
        // before our PENDING bit reaches it, find no claimed row and read
        // the word again (`release_from`); no model can tell the extra scan.
        let old = self.word.fetch_add(ONE_WAITER, Ordering::Release);
        if old & IN_USE == 0 && self.take() {
            return Claim::Took;
        }
        Claim::Counted(before)
    }

    /// The claimer of `row` unwinds without the lock: its count goes
    /// first (a release that reads it then scans for a claimed row, which
    /// is still ours), then one `fetch_and` clears both its bits; the
    /// holder sets GRANTED only by a CAS that finds PENDING set, so either
    /// the grant came first (the old value shows it: we own the lock and
    /// release it) or it will skip the row.
    #[cold]
    fn unclaim_on_unwind(&self, w: &AtomicU64, pending: u64, row: usize) {
        // Relaxed: a release that still counts us finds our row claimed
        // (the fetch_and below comes after) or waits for this decrement.
        self.word.fetch_sub(ONE_WAITER, Ordering::Relaxed);
        // Acquire: if GRANTED was set, pairs with the holder's Release CAS.
        let old = w.fetch_and(!(pending | pending << 1), Ordering::Acquire);
        if old & (pending << 1) != 0 {
            crate::coverage::hit!("sh_ron.unwind_took_grant");
            // SAFETY: the grant made us the owner; `row` only picks where
            // the handover scan starts.
            unsafe { self.release(PlaceToken::at(row)) };
        } else {
            crate::coverage::hit!("sh_ron.unwind_left");
        }
    }

    /// The claimer, now owner by `IN_USE`, clears its bits and its count
    /// (before its own unlock can look at them).
    #[inline]
    fn unclaim(&self, w: &AtomicU64, pending: u64) {
        // Relaxed: only this claimer touches these bits now; the next
        // holder's scan is ordered after by the lock's Release/Acquire.
        w.fetch_and(!(pending | pending << 1), Ordering::Relaxed);
        self.uncount();
    }

    /// The claimer, now owner, drops its count (before its own unlock can
    /// look at it).
    #[inline]
    fn uncount(&self) {
        // Relaxed: we own the lock; our own release reads it after.
        self.word.fetch_sub(ONE_WAITER, Ordering::Relaxed);
    }

    /// Releases the lock: grants the next claimed row after the acquirer's
    /// (its own last), or frees the lock.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: PlaceToken) {
        // Relaxed: only picks the path; the free's CAS checks the value,
        // and `release_from` reads the word again with Acquire.
        let cur = self.word.load(Ordering::Relaxed);
        if cur & COUNT_MASK == 0 && self.try_free(cur) {
            return;
        }
        self.release_slow(token);
    }

    /// Clears `IN_USE` if the word still is `cur` (which counts no
    /// claimer): a claimer counted since is granted instead.
    #[inline]
    fn try_free(&self, cur: u64) -> bool {
        // Release: publishes the critical section to the next owner.
        // Relaxed on failure: the caller reads the word again.
        self.word
            .compare_exchange(cur, cur & !IN_USE, Ordering::Release, Ordering::Relaxed)
            .is_ok()
    }

    /// The release with claimers counted (or a count that arrived during
    /// the free): grants the next claimed row after the acquirer's, or
    /// frees the lock once it counts nobody.
    #[cold]
    fn release_slow(&self, token: PlaceToken) {
        // The hint is user code: asked before anything changes; if it
        // panics, the release runs from row 0 while unwinding.
        let from = match token.index() {
            Some(r) if r < MAX_CPUS_IN_TABLE => r,
            _ => {
                let on_unwind = OnUnwind::new(|| self.release_from(0));
                let r = row_hint();
                on_unwind.disarm();
                r
            }
        };
        self.release_from(from);
    }

    /// Grants the first claimed row after `from` (its own last) while the
    /// word counts claimers, else frees the lock.
    fn release_from(&self, from: usize) {
        loop {
            // Acquire: a count we read comes with its claimers' PENDING
            // bits (their Release `fetch_add` in `claim`).
            let cur = self.word.load(Ordering::Acquire);
            if cur & COUNT_MASK == 0 {
                if self.try_free(cur) {
                    return;
                }
            } else {
                // A count comes only from a claimer, which found the
                // lock's column and its page: both stay while the lock
                // lives.
                let col = ((cur >> COL_SHIFT) as usize).wrapping_sub(1);
                let Some(page) = self.table().page(col) else {
                    unreachable!("a counted claimer without a column page")
                };
                if Self::grant_from(page, col, from) {
                    crate::coverage::hit!("sh_ron.granted");
                    return;
                }
                // Counted claimers, none found: one is leaving (its count
                // is about to drop).
                crate::coverage::hit!("sh_ron.scan_found_none");
                crate::sync::spin_loop();
            }
        }
    }

    /// Grants the first claimed row after `from` (its own last); returns
    /// whether it found one.
    fn grant_from(page: &Page, col: usize, from: usize) -> bool {
        let pending = pending_bit(col);
        for i in 1..=MAX_CPUS_IN_TABLE {
            let w = page.word((from + i) % MAX_CPUS_IN_TABLE, col);
            // Relaxed: a guess, checked by the CAS. A claimer leaves only
            // with the lock, or (unwinding) by clearing PENDING, which the
            // CAS below re-checks: GRANTED is never set on an unclaimed row.
            let mut cur = w.load(Ordering::Relaxed);
            while cur & pending != 0 {
                // Release: passes our critical section to the claimer.
                match w.compare_exchange_weak(
                    cur,
                    cur | pending << 1,
                    Ordering::Release,
                    Ordering::Relaxed,
                ) {
                    Ok(_) => return true,
                    Err(now) => cur = now,
                }
            }
        }
        false
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.word.load(Ordering::Relaxed) & IN_USE != 0 // a snapshot by contract
    }

    /// Claims this lock's column now if it has none, as its first contended
    /// acquisition would (for tests and models of the column life cycle).
    #[doc(hidden)]
    pub fn claim_column(&self) -> Option<usize> {
        self.column()
    }

    /// The wait-table column this lock holds, if any (for tests).
    #[doc(hidden)]
    pub fn column_index(&self) -> Option<usize> {
        // Relaxed: a snapshot.
        let c = self.word.load(Ordering::Relaxed) >> COL_SHIFT;
        (c != 0).then(|| c as usize - 1)
    }
}

impl<R: Relax> Drop for ShRon<R> {
    fn drop(&mut self) {
        // Relaxed: `&mut self`, no other thread can touch the word.
        let c = self.word.load(Ordering::Relaxed) >> COL_SHIFT;
        if c != 0 {
            self.table().free(c as usize - 1);
        }
    }
}

impl<R: Relax> core::fmt::Debug for ShRon<R> {
    fn fmt(&self, f: &mut core::fmt::Formatter<'_>) -> core::fmt::Result {
        f.debug_struct("ShRon")
            .field("locked", &self.is_held())
            .field("column", &self.column_index())
            .finish()
    }
}

crate::raw_impl::impl_default_debug! {
    impl [R: Relax] for ShRon<R>, debug custom
}

#[cfg(not(loom))]
// SAFETY: lock word bit 0 (`IN_USE`) and table-bit rows "claimed" ->
// "granted", with the invariant under the tables (so the holder, a pending
// `GRANTED` bit or nobody owns the lock). `lock` and `try_lock` return a
// guard only after a `fetch_or(IN_USE)` that found `IN_USE` clear (Acquire,
// pairing with the Release CAS that cleared it, which a release makes only
// when the word counts no claimer), or, as the one claimer of row `r`
// (claiming is a `fetch_or(PENDING)` that found it clear), an Acquire CAS
// that consumes its `GRANTED` bit, pairing with the holder's Release CAS
// that set it. A claimer counts itself after claiming; while it is counted
// every release grants a claimed row instead of freeing, so it is never
// stranded on its row. A waiter that holds no row (shared row, full table,
// no column) waits on `IN_USE` alone. The row is only a place to wait: a
// wrong, out-of-range or stale CPU hint changes where the unlock's scan
// starts, never who owns the lock. A claimer whose `Relax` panics drops its
// count, then clears both its bits with one Acquire `fetch_and`; if that
// finds `GRANTED` it owns the lock and releases it, so it unwinds owning
// nothing. `lock` may allocate a
// table page (`std`, first contention of a column) before it waits; an
// allocation failure aborts as in any `Box::new`, and a page is never freed
// while the process runs, so rows never dangle. `unlock` asks the CPU hint
// only for a fast-path guard (`PlaceToken::NONE`); if the hint panics it
// releases from row 0 first, so it never unwinds holding the lock. A
// forgotten guard leaves the lock held; dropping an exclusively owned lock
// gives its column back (`Drop`), which no waiter can be using.
unsafe impl<R: Relax> lock_api::RawMutex for ShRon<R> {
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
// SAFETY: `unlock_fair` is `release`, which already grants the next
// claimed row; the `RawMutex` argument above covers it.
unsafe impl<R: Relax> lock_api::RawMutexFair for ShRon<R> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }
}
