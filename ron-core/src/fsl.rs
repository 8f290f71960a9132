//! [`Fsl`]: the flexible affinity lock, a two-level ticket lock with a
//! tunable group size `G` and a handover threshold.
//!
//! CPUs are grouped by `G` consecutive positions of the installed
//! [`route`](crate::route) (contiguous arcs of the tour, so a group is a set
//! of neighbours; identity order until a route is installed), and the
//! groups map onto `L` local ticket locks (`group % L`). A thread takes a
//! ticket in its group's local lock; once served it takes a ticket in the
//! global lock, unless the previous local owner *passed* the global lock
//! along. On unlock the holder passes the global lock to the next local
//! ticket while one is waiting and fewer than [`FSL_HANDOVERS`] handovers
//! happened in a row; otherwise it releases the local lock, then the global
//! one (its last access: the lock may be freed once it is free). `G = 1` with a route is per-CPU, a large `G` is one group (a ticket
//! lock with an extra level). The local lock's index is carried in the guard.
//! These *route groups* are `Fsl`'s own: the [`groups`](crate::groups)
//! table that `Cna` and `CBoMcs` use plays no part here.
//!
//! ## States (per local lock `g`, plus the global ticket lock)
//! | row | global | local `g` (`next - serving`) | `passed[g]` | meaning |
//! |---|---|---|---|---|
//! | free | free | 0 | false | nobody holds the lock through `g` |
//! | held | held | `k >= 1` | false | `g`'s served ticket holds (or is taking) the global lock; `k - 1` queued |
//! | inherited | held | `k >= 1` | true | passed: `g`'s served ticket owns the global lock without a ticket |
//!
//! ## Guarantees
//! * Mutual exclusion: the global ticket lock is held by one group at a
//!   time, and within that group only the served local ticket holds it.
//! * Progress.
//! * Bounded waiting: FIFO inside a group and FIFO between groups' global
//!   tickets, each global turn at most `FSL_HANDOVERS + 1` acquisitions, so a
//!   waiter with `q` local tickets ahead enters within
//!   `(q + 1) * L * (FSL_HANDOVERS + 1)` acquisitions (a loose bound).
//! * Panics: a `Relax` panic while holding a ticket (local or global)
//!   aborts the process: a ticket cannot be given back without waiting for
//!   its turn. Unlock runs no user code (`docs/panic-safety.md`).
//!
//! ## Cost
//! Bytes per lock: `128 * (L + 1)`, **2176** for the default `L = 16`.
//! Uncontended lock + unlock: two `fetch_add`s and two stores.
//!
//! ```
//! use ron_core::Fsl;
//! let m: lock_api::Mutex<Fsl<4>, u64> = lock_api::Mutex::new(0);
//! std::thread::scope(|s| {
//!     for _ in 0..4 {
//!         s.spawn(|| for _ in 0..500 { *m.lock() += 1 });
//!     }
//! });
//! assert_eq!(*m.lock(), 2000);
//! ```

use core::marker::PhantomData;

use crossbeam_utils::CachePadded;

use crate::relax::{DefaultRelax, Relax};
use crate::sync::{AtomicBool, AtomicU32, Ordering};
use crate::ticket::TicketCore;
use crate::token::PlaceToken;

/// Consecutive local handovers before an `Fsl` group must give the global
/// lock back (the fairness threshold).
pub const FSL_HANDOVERS: u32 = 64;

/// A local lock: a ticket lock plus the cohort state its owner keeps.
struct Local {
    tickets: TicketCore,
    passed: AtomicBool,
    handovers: AtomicU32,
}

impl Local {
    crate::sync::const_fn_unless_loom! {
        fn new() -> Self {
            Local { tickets: TicketCore::new(), passed: AtomicBool::new(false), handovers: AtomicU32::new(0) }
        }
    }
}

/// Flexible affinity lock with groups of `G` route neighbours over `L`
/// local ticket locks ([`Ticket`](crate::Ticket)'s protocol at both levels):
/// FIFO with route-group affinity. States, guarantees and cost: the
/// [module docs](self).
///
/// The guard ([`PlaceToken`]) carries the index of the local lock the
/// acquirer went through, so the unlock needs no CPU hint.
pub struct Fsl<const G: usize, const L: usize = 16, R: Relax = DefaultRelax> {
    global: CachePadded<TicketCore>,
    locals: [CachePadded<Local>; L],
    _relax: PhantomData<fn() -> R>,
}

/// The local lock of `cpu`: its route position (or id, off-route) / `G`, mod `L`.
#[inline]
fn group_index<const G: usize, const L: usize>(cpu: usize) -> usize {
    let pos = crate::route::position(cpu).unwrap_or(cpu);
    (pos / G) % L
}

impl<const G: usize, const L: usize, R: Relax> Fsl<G, L, R> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            const { assert!(G >= 1 && L >= 1, "Fsl needs G >= 1 and L >= 1") };
            Fsl {
                global: CachePadded::new(TicketCore::new()),
                locals: crate::sync::array_init!(L, CachePadded::new(Local::new())),
                _relax: PhantomData,
            }
        }
    }

    /// Acquires the lock through the caller's group (CPU hint + route).
    #[inline]
    pub fn acquire(&self) -> PlaceToken {
        self.acquire_local(group_index::<G, L>(crate::hint::current_cpu()))
    }

    /// Acquires the lock through local lock `local % L` (any value is safe).
    pub fn acquire_in(&self, local: usize) -> PlaceToken {
        self.acquire_local(local % L)
    }

    #[inline]
    fn acquire_local(&self, g: usize) -> PlaceToken {
        let l = &self.locals[g];
        l.tickets.acquire::<R>("Fsl");
        // Relaxed: owner-only field, ordered by the local ticket lock.
        if l.passed.load(Ordering::Relaxed) {
            l.passed.store(false, Ordering::Relaxed); // as above
        } else {
            self.global.acquire::<R>("Fsl");
        }
        PlaceToken::at(g)
    }

    /// Takes the lock if the caller's local lock and the global lock are
    /// both free and unqueued.
    pub fn try_acquire(&self) -> Option<PlaceToken> {
        let g = group_index::<G, L>(crate::hint::current_cpu());
        let l = &self.locals[g];
        if !l.tickets.try_acquire() {
            return None;
        }
        // Relaxed: owner-only (a passed lock implies a queued ticket, so
        // the try above fails; checked anyway).
        if l.passed.load(Ordering::Relaxed) {
            l.passed.store(false, Ordering::Relaxed);
            return Some(PlaceToken::at(g));
        }
        if self.global.try_acquire() {
            return Some(PlaceToken::at(g));
        }
        // SAFETY: we hold the local ticket lock (`try_acquire` above).
        unsafe { l.tickets.release() };
        None
    }

    /// Releases the lock, passing the global lock inside the group up to
    /// the threshold.
    ///
    /// # Safety
    /// The caller holds the lock, acquired with `token`'s acquisition.
    #[inline]
    pub unsafe fn release(&self, token: PlaceToken) {
        let l = &self.locals[token.index().unwrap_or(0) % L];
        let h = l.handovers.load(Ordering::Relaxed); // owner-only field
        if h < FSL_HANDOVERS && l.tickets.has_waiters() {
            l.handovers.store(h + 1, Ordering::Relaxed); // owner-only field
            l.passed.store(true, Ordering::Relaxed); // published by the unlock below
            // SAFETY: we hold the local ticket lock (the caller's contract).
            unsafe { l.tickets.release() };
            return;
        }
        // SAFETY: same contract.
        unsafe { Self::release_both(&self.global, l) }
    }

    /// # Safety
    /// The caller holds the lock through `l` (its local ticket and the
    /// global lock).
    #[inline]
    unsafe fn release_both(global: &TicketCore, l: &Local) {
        l.handovers.store(0, Ordering::Relaxed); // owner-only field
        // The local ticket first: the global release must be our last
        // access, since once it is free the lock's last user may take it
        // and free the lock (`docs/design.md`, invariant 6). The next local
        // owner finds `passed` false and waits for the global ticket.
        // SAFETY: we hold both ticket locks (the caller's contract).
        unsafe {
            l.tickets.release();
            global.release();
        }
    }

    /// Releases the global and the local lock (no in-group handover).
    ///
    /// # Safety
    /// As for [`release`](Self::release).
    pub unsafe fn release_fair(&self, token: PlaceToken) {
        // SAFETY: same contract.
        unsafe { Self::release_both(&self.global, &self.locals[token.index().unwrap_or(0) % L]) }
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.global.is_held()
    }
}

crate::raw_impl::impl_default_debug! {
    impl [const G: usize, const L: usize, R: Relax] for Fsl<G, L, R>,
        debug "Fsl" { group_size: G, locals: L }
}

#[cfg(not(loom))]
// SAFETY: state table rows "held" (its served global ticket) and "inherited"
// (through `passed[g]`), each only while holding local lock `g`'s served
// ticket. Each level is a ticket lock whose argument is `Ticket`'s
// (`ticket.rs`: rows `0` and `k >= 1`), so one thread is served per level.
// `passed[g]` is set by `g`'s owner only while it keeps the global lock, just
// before its Release unlock of `g`, and read and cleared by the next owner of
// `g` after its Acquire; so the inherited global lock moves with
// happens-before inside one local lock, which one thread holds at a time.
// `try_lock` gives the local ticket back if the global one is taken. The
// guard carries the local lock's index, so `unlock` uses no CPU hint and runs
// no user code; a `Relax` panic while holding a ticket aborts the process, so
// `lock` never unwinds holding one. A forgotten guard leaves the lock held,
// nothing dangling.
unsafe impl<const G: usize, const L: usize, R: Relax> lock_api::RawMutex for Fsl<G, L, R> {
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
// SAFETY: `release_fair` releases both ticket locks (no in-group handover),
// the `release` path the argument above covers when the threshold is hit.
unsafe impl<const G: usize, const L: usize, R: Relax> lock_api::RawMutexFair for Fsl<G, L, R> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release_fair(guard) }
    }
}
