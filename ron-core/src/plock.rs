//! The per-slot count/grant protocol (RON Algorithm 3, "plock") shared by
//! [`RonPlock`](crate::RonPlock) (linear successor scan) and
//! [`NxtRon`](crate::NxtRon) (bitmap successor search): both are newtypes
//! over the crate-private `Plock` core here, which owns the protocol and
//! its orderings. ("Plock" in this crate means this algorithm only; the
//! test-and-test-and-set lock is [`Ttas`](crate::Ttas).)
//!
//! ## States
//! | `in_use` | slot `s` word (count, GRANT) | meaning |
//! |---|---|---|
//! | false | (0, 0) | unlocked, nobody waits in `s` |
//! | false | (c > 0, 0) | unlocked; `s`'s waiters are about to see it and CAS `in_use` |
//! | true | (c, 0) | held; `c` threads wait in `s` |
//! | true | (c > 0, 1) | the holder handed the lock to `s`; exactly one of its `c` waiters will take the grant and own the lock |
//!
//! * lock: fast path: load `in_use`, and only if it is false CAS it
//!   false -> true (an arrival that finds it held writes nothing). Slow path: count `+1` in
//!   the caller's slot; loop { CAS the slot word (c, 1) -> (c - 1, 0) =>
//!   owner; else if `in_use` is false, CAS it => owner (then count `-1`) }.
//! * unlock: from the acquirer's slot + 1 around the ring (own slot last),
//!   set GRANT on the first slot whose count is non-zero (one CAS that checks
//!   the count); `in_use` stays true. If none, store `in_use = false`.
//!
//! * a waiter whose relax policy panics leaves by one CAS on its slot word:
//!   `(c, g) -> (c - 1, g)`, except `(1, 1) -> (0, 0)`, where the last
//!   waiter of a granted slot takes the grant (it then owns the lock and
//!   releases it as above) instead of stranding it on an empty slot.
//!
//! Why it is safe: GRANT is only set by the holder, only on a slot with a
//! waiter, and while `in_use` stays true; a waiter can leave its slot only by
//! taking the GRANT (one CAS winner), by CAS on `in_use` (impossible while
//! the grant is pending, since `in_use` is true), or, unwinding, by a CAS
//! that takes the GRANT if it would otherwise leave it on an empty slot. So
//! at every moment exactly one of "the holder", "the pending grant" or
//! "nobody" owns the lock.
//! Waiters keep polling `in_use`, so a waiter that registered after the
//! holder's scan still sees the lock freed: no lost wakeup.

use crate::in_use::InUse;
use crate::relax::Relax;
use crate::slots::SlotTable;
use crate::token::PlaceToken;
use crate::unwind::OnUnwind;

/// The plock protocol over `S` slots; `BITMAP` selects the successor search.
pub(crate) struct Plock<const S: usize, const BITMAP: bool> {
    in_use: InUse,
    slots: SlotTable<S>,
}

impl<const S: usize, const BITMAP: bool> Plock<S, BITMAP> {
    crate::sync::const_fn_unless_loom! {
        pub(crate) fn new() -> Self {
            const { assert!(S >= 1, "a RON lock needs at least one slot") };
            Plock { in_use: InUse::new(), slots: SlotTable::new() }
        }
    }

    /// The fast path: a load of `in_use`, then the CAS only when it looked
    /// free. An arrival that finds the lock held reads the line the
    /// waiters poll (it stays shared) and goes to register in its slot.
    #[inline]
    pub(crate) fn try_fast(&self) -> bool {
        if self.in_use.is_held() {
            mark::<BITMAP>(Path::FastSawHeld);
            return false;
        }
        self.in_use.try_take()
    }

    #[cold]
    pub(crate) fn acquire_slow<R: Relax>(&self, s: usize, on_wait: impl FnOnce()) -> PlaceToken {
        // User code before registering: a panic here leaves nothing behind.
        let mut relax = R::default();
        let before = self.slots.register::<BITMAP>(s);
        mark::<BITMAP>(Path::Registered);
        if before > 0 {
            mark::<BITMAP>(Path::SlotShared);
        }
        // While registered, a panic in `relax` (or `on_wait`) unwinds
        // through this guard: it leaves the slot, and if that would strand
        // a grant to it, takes the grant and hands the lock on.
        let registered = OnUnwind::new(|| {
            if self.slots.leave::<BITMAP>(s) {
                crate::coverage::hit!("plock.unwind_took_grant");
                self.release_slow(PlaceToken::at(s));
            } else {
                crate::coverage::hit!("plock.unwind_left");
            }
        });
        on_wait();
        loop {
            if self.slots.try_take_grant::<BITMAP>(s) {
                mark::<BITMAP>(Path::GrantTaken);
                registered.disarm();
                return PlaceToken::at(s);
            }
            if self.in_use.take_if_free() {
                mark::<BITMAP>(Path::FreeTaken);
                self.slots.unregister::<BITMAP>(s);
                registered.disarm();
                return PlaceToken::at(s);
            }
            relax.relax();
        }
    }

    /// # Safety
    /// The caller holds the lock.
    #[inline]
    pub(crate) unsafe fn release(&self, token: PlaceToken) {
        if BITMAP && !self.slots.any_marked() {
            mark::<BITMAP>(Path::FreedNoMark);
            self.in_use.free();
            return;
        }
        self.release_slow(token);
    }

    #[cold]
    fn release_slow(&self, token: PlaceToken) {
        token.release_from_slot::<S>(|from| {
            let granted = if BITMAP {
                self.slots.grant_next_bitmap(from)
            } else {
                self.slots.grant_next_linear(from)
            };
            match granted {
                Some(t) if t == from => mark::<BITMAP>(Path::GrantedOwnSlot),
                Some(_) => mark::<BITMAP>(Path::Granted),
                None => {
                    mark::<BITMAP>(Path::FreedAfterScan);
                    self.in_use.free();
                }
            }
        });
    }

    #[inline]
    pub(crate) fn is_held(&self) -> bool {
        self.in_use.is_held()
    }
}

/// The protocol paths the verification suites count (`coverage`), named
/// `nxt_ron.*` for the bitmap variant and `ron_plock.*` for the linear one.
#[derive(Clone, Copy)]
enum Path {
    /// A waiter counted itself in its slot.
    Registered,
    /// ... and found another waiter already there (two waiters, one slot).
    SlotShared,
    /// A waiter took its slot's grant (a handover).
    GrantTaken,
    /// A registered waiter took the lock by CAS on `in_use` after a free.
    FreeTaken,
    /// An unlock granted another slot.
    Granted,
    /// An unlock granted the acquirer's own slot (visited last).
    GrantedOwnSlot,
    /// An unlock scanned and found nobody (stale bit or lost race): freed.
    FreedAfterScan,
    /// An unlock saw an empty bitmap and freed at once (bitmap variant).
    FreedNoMark,
    /// A fast path found the lock held and wrote nothing.
    FastSawHeld,
}

impl Path {
    /// Counter names per variant (`[linear, bitmap]`), in declaration order.
    const NAMES: [[&'static str; 9]; 2] = [
        [
            "ron_plock.registered",
            "ron_plock.slot_shared",
            "ron_plock.grant_taken",
            "ron_plock.free_taken",
            "ron_plock.granted",
            "ron_plock.granted_own_slot",
            "ron_plock.freed_after_scan",
            "ron_plock.freed_no_mark",
            "ron_plock.fast_saw_held",
        ],
        [
            "nxt_ron.registered",
            "nxt_ron.slot_shared",
            "nxt_ron.grant_taken",
            "nxt_ron.free_taken",
            "nxt_ron.granted",
            "nxt_ron.granted_own_slot",
            "nxt_ron.freed_after_scan",
            "nxt_ron.freed_no_mark",
            "nxt_ron.fast_saw_held",
        ],
    ];
}

/// Counts `path` (compiled away unless the coverage counters are in).
#[inline(always)]
fn mark<const BITMAP: bool>(path: Path) {
    if crate::coverage::ENABLED {
        crate::coverage::record(Path::NAMES[BITMAP as usize][path as usize]);
    }
}
