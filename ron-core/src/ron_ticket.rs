//! [`RonTicket`]: RON Algorithm 2, a ticket lock per slot and a route-ordered
//! handover between slots.
//!
//! Each slot is a small ticket lock (`tickets`, `serving`) plus a `grant`
//! flag. A waiter takes a ticket in its slot (`tickets += 1`, which also
//! counts it as waiting: waiters = `tickets - serving`), waits until its
//! ticket is served (it is the slot's *head*), then waits for the slot's
//! grant or for the lock word to be free. The holder's unlock walks the slots
//! along the route from its own slot + 1 (own slot last) and grants the first
//! one with `tickets != serving`, keeping `in_use` true; with no waiter it
//! frees `in_use`. The head that becomes owner advances `serving`, which
//! makes the next ticket holder its slot's head.
//!
//! ## States
//! | `in_use` | slot `s` | meaning |
//! |---|---|---|
//! | false | `tickets == serving` | unlocked, no waiter in `s` |
//! | true | `tickets - serving = c`, `grant = 0` | held; `c` waiters queued FIFO in `s` |
//! | true | `c > 0`, `grant = 1` | handed to `s`: its head will take the grant and own the lock |
//!
//! Taking a ticket and being counted are one `fetch_add`, so an unlock never
//! waits for a waiter that counted itself but has not yet taken its ticket
//! (the published RON-ticket's unlock did, docs/design.md, "Pitfalls"). Only the head of
//! a slot may take its grant or CAS `in_use`, and `serving` only moves when
//! that head becomes owner, so a granted slot always has a head that can only
//! leave by taking the grant.
//!
//! ## Guarantees
//! * Mutual exclusion under any schedule and hint; progress.
//! * FIFO inside a slot, route order between slots: a waiter with `q`
//!   waiters ahead of it in its slot is overtaken by at most
//!   `q + (q + 1) * (S - 1) + 1` acquisitions (each service of its slot is
//!   preceded by at most one grant to each other slot; `+ 1` for a racing
//!   fast-path acquisition). With one thread per slot that is `S`.
//! * Panics: a waiter whose `Relax` policy panics after taking its ticket
//!   aborts the process (a ticket cannot be given back without waiting for
//!   its turn); an unlock whose CPU hint panics releases the lock (scanning
//!   from slot 0) before it unwinds (`docs/panic-safety.md`).
//!
//! ## Cost
//! Bytes per lock: `128 * (S + 1)`. Uncontended lock+unlock: a load and a CAS, a scan
//! of `S` slots (two loads each), one release store.
//!
//! ```
//! use ron_core::RonTicket;
//! let m: lock_api::Mutex<RonTicket<4>, u32> = lock_api::Mutex::new(0);
//! std::thread::scope(|s| {
//!     for _ in 0..3 {
//!         s.spawn(|| for _ in 0..500 { *m.lock() += 1 });
//!     }
//! });
//! assert_eq!(*m.lock(), 1500);
//! ```

use core::marker::PhantomData;

use crossbeam_utils::CachePadded;

use crate::in_use::InUse;
use crate::relax::{DefaultRelax, Relax};
use crate::sync::{AtomicBool, AtomicU32, Ordering};
use crate::token::PlaceToken;
use crate::unwind::AbortOnUnwind;

/// One slot: a ticket lock and a grant flag, alone on its cache lines.
struct TicketSlot {
    tickets: AtomicU32,
    serving: AtomicU32,
    grant: AtomicBool,
}

impl TicketSlot {
    crate::sync::const_fn_unless_loom! {
        fn new() -> Self {
            TicketSlot {
                tickets: AtomicU32::new(0),
                serving: AtomicU32::new(0),
                grant: AtomicBool::new(false),
            }
        }
    }

    #[inline]
    fn has_waiters(&self) -> bool {
        // Relaxed: a stale answer only delays a waiter (it also polls
        // `in_use`) or grants a slot whose head is guaranteed to exist.
        self.tickets.load(Ordering::Relaxed) != self.serving.load(Ordering::Relaxed)
    }
}

/// RON-ticket: `S` per-slot ticket locks handed over along the route.
///
/// * **States:** `in_use`, and per slot its ticket counters and `grant`;
///   table in the [module docs](self).
/// * **Guarantees:** mutual exclusion under any schedule and hint;
///   progress; FIFO inside a slot, route order between slots: a waiter
///   with `q` waiters ahead in its slot is overtaken by at most
///   `q + (q + 1) * (S - 1) + 1` acquisitions.
/// * **Panics:** a `Relax` panic after taking a ticket aborts the process;
///   an unlock whose CPU hint panics releases the lock first.
/// * **Cost:** `128 * (S + 1)` bytes; a load and a CAS, a scan of `S` slots and a
///   store uncontended.
pub struct RonTicket<const S: usize, R: Relax = DefaultRelax> {
    in_use: InUse,
    slots: [CachePadded<TicketSlot>; S],
    _relax: PhantomData<fn() -> R>,
}

impl<const S: usize, R: Relax> RonTicket<S, R> {
    crate::sync::const_fn_unless_loom! {
        /// A new, unlocked lock.
        pub fn new() -> Self {
            const { assert!(S >= 1, "a RON lock needs at least one slot") };
            RonTicket {
                in_use: InUse::new(),
                slots: crate::sync::array_init!(S, CachePadded::new(TicketSlot::new())),
                _relax: PhantomData,
            }
        }
    }

    crate::in_use::slotted_entry_points!();

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
        let slot = &self.slots[s];
        // User code before taking a ticket: a panic here leaves nothing behind.
        let mut relax = R::default();
        // Relaxed: the ticket only orders waiters of this slot; the data
        // handover is through `grant`/`in_use`.
        let ticket = slot.tickets.fetch_add(1, Ordering::Relaxed);
        // A ticket cannot be given back without waiting for its turn (the
        // next ticket waits for ours to be served), which deadlocks if this
        // thread holds the lock: a panic in `relax` (or `on_wait`) aborts.
        let queued = AbortOnUnwind::new("RonTicket");
        on_wait();
        // Relaxed: `serving` only orders the waiters of this slot; the head
        // reads nothing its predecessor wrote except through `grant` /
        // `in_use` (Acquire CAS below). Found not load-bearing by
        // `.ci/mutants` (docs/mutants.md).
        while slot.serving.load(Ordering::Relaxed) != ticket {
            relax.relax();
            #[cfg(all(ron_vm, not(loom), not(shuttle)))]
            crate::relax::vm_idle(&mut relax, crate::sync::vm_addr(&slot.serving));
        }
        loop {
            // Relaxed peek; the CAS has the Acquire pairing with the
            // holder's Release store of `grant`.
            if slot.grant.load(Ordering::Relaxed)
                && slot
                    .grant
                    .compare_exchange(true, false, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok()
            {
                break;
            }
            if self.in_use.take_if_free() {
                break;
            }
            relax.relax();
        }
        // Relaxed: the next ticket holder becomes head after we own the
        // lock; it needs no data from us, and an unlocker's `has_waiters`
        // sees this store through the lock's own Release/Acquire (it comes
        // before our release in program order). Not load-bearing
        // (`.ci/mutants`).
        slot.serving
            .store(ticket.wrapping_add(1), Ordering::Relaxed);
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
        token.release_from_slot::<S>(|from| self.release_from(from));
    }

    /// The release, scanning from slot `from` + 1.
    #[inline]
    fn release_from(&self, from: usize) {
        for i in 1..=S {
            let slot = &self.slots[(from + i) % S];
            if slot.has_waiters() {
                // Release: passes our critical section to the head's
                // Acquire CAS of `grant`.
                slot.grant.store(true, Ordering::Release);
                return;
            }
        }
        self.in_use.free();
    }

    /// Whether the lock is held (a momentary snapshot).
    #[inline]
    pub fn is_held(&self) -> bool {
        self.in_use.is_held()
    }
}

crate::raw_impl::impl_default_debug! {
    impl [const S: usize, R: Relax] for RonTicket<S, R>, debug "RonTicket" { slots: S }
}

#[cfg(not(loom))]
// SAFETY: by the state table in the module docs, the holder, a pending
// `grant` of one slot or nobody owns the lock at every moment. `lock` and
// `try_lock` return a guard only after taking ownership one of two ways: the
// CAS `in_use` false -> true (Acquire, pairing with the Release store that
// freed it), or, as the head of slot `s` (the one waiter whose ticket `s`
// serves; tickets come from one `fetch_add` each), the CAS `grant` true ->
// false (Acquire, pairing with the holder's Release store of `grant`). The
// holder sets `grant` only on a slot with a ticket out and keeps `in_use`
// true, and only a head may take a grant or CAS `in_use`; `serving` moves
// only when that head owns the lock, so a granted slot's head can leave only
// by taking the grant. The slot is only a place to wait: a wrong,
// out-of-range or stale CPU hint changes where the unlock's scan starts,
// never who owns the lock. A `Relax` panic after taking a ticket aborts the
// process (the ticket cannot be given back), so `lock` never unwinds with a
// ticket out. `unlock` asks the CPU hint only for a fast-path guard
// (`PlaceToken::NONE`); if the hint panics it releases from slot 0 first, so
// it never unwinds holding the lock. A forgotten guard leaves the lock
// held; nothing dangles (tickets are counters in the lock).
unsafe impl<const S: usize, R: Relax> lock_api::RawMutex for RonTicket<S, R> {
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
unsafe impl<const S: usize, R: Relax> lock_api::RawMutexFair for RonTicket<S, R> {
    #[inline]
    unsafe fn unlock_fair(&self, guard: PlaceToken) {
        // SAFETY: the caller holds the lock with `guard`.
        unsafe { self.release(guard) }
    }
}
