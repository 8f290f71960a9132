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
//! `NxtRon`'s bitmap bit of slot `s` is set whenever `c > 0` (at
//! quiescence) and may stay set at `c = 0` (stale: a waiter that took the
//! lock leaves it; the next unlock that scans it clears it).
//!
//! * lock: fast path: load `in_use`, and only if it is false CAS it
//!   false -> true (an arrival that finds it held writes nothing). Slow path: count `+1` in
//!   the caller's slot; loop { take the slot's grant: CAS the slot word
//!   (c, 1) -> (c - 1, 0) => owner; else if `in_use` is false, CAS it =>
//!   owner (then count `-1`) }. A look is a load; the CAS follows a grant
//!   it shows.
//! * unlock: from the acquirer's slot + 1 around the ring (own slot last),
//!   set GRANT on the first slot whose count is non-zero (one CAS that checks
//!   the count; `NxtRon`'s first guesses (1, 0), so that it needs no load
//!   before); `in_use` stays true. If none, store `in_use = false`.
//! * `NxtRon`'s bitmap: a registration whose count went 0 -> 1 sets the
//!   slot's bit unless it reads it set; a waiter that takes the lock
//!   leaves its bit set, and the unlock's scan clears the bit of a marked
//!   slot it finds empty ([`slots`](crate::slots), "Bitmap invariant").
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
//!
//! ## What a handover costs
//! One thread per slot (one slot per CPU), the grantee's slot line moves
//! twice: `NxtRon`'s grant CAS fetches it from the waiter (a `RonPlock`
//! releaser's scan loads it first, then upgrades it), and the waiter's
//! next look, which is the take's CAS itself while the waiter is alone in
//! its slot (`SlotTable::try_take_grant`), fetches it back for writing;
//! the bank beside the word is then written in place. With slot-mates a
//! look is a load, and the take's CAS then invalidates the releaser's copy
//! (a third trip). Nothing else of the lock is written: `NxtRon`'s bitmap
//! line only when a release finds a marked slot empty or a registrant
//! finds its bit clear, so a releaser's bitmap reads usually hit. (A
//! waiter that spins with a CAS runs a locked read-modify-write at every
//! look; on this project's 2-CPU machines that cost nothing measurable on
//! an Intel Xeon and lowered the fast runs of an earlier, unrecorded one
//! by about a third: docs/design.md, "A look that finds its grant takes
//! it".)
//!
//! ## Where the slots live
//! The pooled lock ([`NxtRon`](crate::NxtRon), [`RonPlock`](crate::RonPlock);
//! core `PooledPlock` here) is 8 bytes: `in_use` and the 32-bit index of
//! a block of [`BLOCK_SLOTS`](crate::ron_raw::BLOCK_SLOTS) slots (a
//! [`SlotTable`]) in the pool `RonRaw` uses
//! ([`pool`]), of which it uses the first
//! [`active_slots()`](crate::ron_raw::active_slots), one per CPU of the
//! installed route. A waiter enters the lock's block (claiming one when it
//! has none: the claim zeroes the slot words and bitmap it will use) and
//! holds a reference from before it registers until after it has taken
//! the grant, unregistered, or left; a releaser holds one for its scan and
//! grant. A held block is never detached, so every registered waiter is in
//! the block the lock names. The pool's Release/Acquire chain (a user's
//! last drop, the claim, the publication of the index, a user's look-up)
//! orders a claim's cleaning after the last users' slot writes and before
//! the next users' registrations: a count left behind would have a
//! releaser grant an empty slot, and the lock would stay handed over with
//! nobody to take it. The inline cores (`NxtRonInline<S>`,
//! `RonPlockInline<S>`) keep `S` slots in the lock (`128 * (S + 1)` bytes)
//! and hold no references.
//!
//! ## The bank: no reference-count write per handover
//! Nothing is dropped once the lock is available: its last user may free
//! it then, and a block's last reference's drop writes the lock (it
//! detaches the block from `home`). A drop before the grant would put a
//! read-modify-write of the block's count, a line every arrival
//! increments, on every handover. So a grant passes the releaser's
//! reference to the grantee (the release writes nothing of the count), and
//! the grantee, which keeps its own waiter reference for its release,
//! *banks* the one it was passed in its slot's `banked` field
//! (`SlotTable::bank`). The grant is the slot word's GRANT bit, which
//! has no room for a count and which the slot's waiters poll; but it always
//! passes exactly one reference, so nothing needs to travel with it, and
//! the bank lives beside the slot word the grantee has just written by its
//! grant CAS: banking writes no line the grantee does not own already
//! (but for a slot's first bank since the last free, which marks it:
//! below).
//!
//! | who | references | where |
//! |---|---|---|
//! | a registered waiter | 1 | its own, until it owns the lock |
//! | the owner (acquired registered) | 1 | kept for its release (`owner_ref` set) |
//! | the lock's holders, together | `sum(banked)` | the banks of the slots (at most [`BANK_MAX`] each) |
//!
//! The banks belong to whoever holds the lock: only the holder reads or
//! writes them (Relaxed; the lock's own Release/Acquire, grant or
//! `in_use`, orders its holders). A grantee whose bank would exceed
//! [`BANK_MAX`] drops it with the new reference in one
//! `BlockRef::drop_more` (never the last: it holds its own), so a slot
//! costs one contended read-modify-write per `BANK_MAX` grants to it. A
//! release that frees the lock collects every bank and drops them with its
//! own reference in one `BlockRef::drop_with`, while it still holds the
//! lock (that may return the block, which writes `home`); a freed lock owes
//! nothing, so its block goes back as soon as its waiters leave. A slot's
//! first bank since the last free marks it on one line of the block (the
//! bank marks, on the second line of its last slot, which nothing else
//! touches), so a free reads the marks and the marked slots' banks only;
//! past 16 marked slots the marks stop and the free reads every slot's
//! bank instead (their reads overlap; the marks would cost a line
//! transfer in the hold time per slot). A guard-less release (lock_api
//! 0.4's, [`PlaceToken::NONE`]) needs nothing more: banks are found by
//! the marks, not by the releaser's slot.
//!
//! A release without a kept reference (a fast-path or unregistered owner:
//! `owner_ref` clear) finds no bank: it took the lock when it was free, a
//! free collected every bank before, and only holders bank. Its free
//! without a block reference (no block, or `NxtRon` finding no waiter
//! marked) therefore leaves nothing behind.
//!
//! A waiter whose `Relax` panics and whose `leave` takes a grant holds
//! two references: it drops its own while it holds the lock and releases
//! with the passed one as the kept reference.
//!
//! When the pool is exhausted, a waiter of a lock without a block waits
//! *unregistered*: test-and-test-and-set on `in_use` with its relax policy,
//! trying to register again every
//! [`UNREGISTERED_LOOKS`] looks. It
//! then has no bound (registered slots are granted before it; it gets the
//! lock when a release finds none), only progress.

use crate::flag::{TasWord, TestAndSet};
use crate::in_use::InUse;
use crate::relax::Relax;
use crate::ron_raw::park::{Parked, Parking, SleepLimit, WaitClock};
use crate::ron_raw::pool::{self, Pool};
use crate::ron_raw::wait;
use crate::ron_ticket::{BANK_MAX, UNREGISTERED_LOOKS};
use crate::slots::SlotTable;
use crate::sync::{AtomicU32, Ordering};
use crate::token::PlaceToken;
use crate::unwind::OnUnwind;

/// Looks at `in_use` of a shared round (a yield after each) before the
/// waiter parks ([`RonGrant`](crate::RonGrant)).
const SHARED_LOOKS: u32 = 10;

/// Looks at `in_use` after a short spin that a shared round makes before
/// its first yield, at a lock that nobody waits for registered or parked
/// (`PooledPlock::spin_shared`; measured: `docs/design.md`, "A shared
/// round spins first where spins pay").
const SHARED_SPIN_LOOKS: u32 = 3;

/// Pauses before the first of the [`SHARED_SPIN_LOOKS`]; doubling.
const SHARED_SPIN_FIRST_PAUSE: u32 = 4;

/// The plock protocol over `S` inline slots; `BITMAP` selects the
/// successor search.
pub(crate) struct Plock<const S: usize, const BITMAP: bool> {
    in_use: InUse,
    slots: SlotTable<S>,
}

/// The fast path: a load of `in_use`, then the CAS only when it looked
/// free. An arrival that finds the lock held reads the line the waiters
/// poll (it stays shared) and goes to register in its slot.
#[inline]
fn try_fast<const BITMAP: bool>(in_use: &impl TestAndSet) -> bool {
    if in_use.is_held() {
        mark::<BITMAP>(Path::FastSawHeld);
        return false;
    }
    in_use.try_take()
}

/// What a lock's block says of its waiters, for `RonGrant`'s unregistered
/// looks (a snapshot: it steers, never decides ownership).
#[derive(Clone, Copy, PartialEq, Eq)]
enum Queue {
    /// The lock has no block: nobody is registered.
    NoBlock,
    /// The lock has a block, and no marked slot counts a waiter: at most
    /// one slot is marked, and it is empty (or the index, read without a
    /// reference, named no block). A waiter that took the lock by
    /// grant keeps the block (its kept reference) and leaves its slot's
    /// bit set until the next release's scan clears it, so right after a
    /// handover between two threads the lock looks like this; the
    /// releaser, arriving again, would otherwise register behind the
    /// grantee, be granted at its release, and so on: every acquisition a
    /// handover (`docs/design.md`, `RonGrant`'s section, "The releaser that
    /// arrives again looks first").
    Empty,
    /// A waiter is registered (two marked slots or more, or one that
    /// counts a waiter).
    Formed,
}

/// Lost races after which `RonGrant`'s unregistered looks end and the
/// waiter registers: a CAS that fails on an `in_use` it saw free means
/// another thread took the lock first. The herd of unregistered looks
/// that starts a contended lock hands over at TTAS speed; 2 rather than 1
/// keeps what the looks are for, 2 threads on 2 CPUs (both measured:
/// `docs/design.md`, "The herd of unregistered looks").
#[cfg(not(loom))]
const UNREGISTERED_LOST_RACES: u32 = 2;
/// Under loom a waiter makes one unregistered look: its lost race ends it.
#[cfg(loom)]
const UNREGISTERED_LOST_RACES: u32 = 1;

/// Pauses between the first two of `RonGrant`'s unregistered looks, past
/// a thread's first waits (`lately::early_looks`, which start at 1 so
/// that threads that start together on one lock queue at once); the
/// backoff doubles from there up to [`UNREGISTERED_LONGEST_PAUSE`]. A look
/// reads the lock's line, which the holder then fetches back for its
/// next CAS: with two threads on two CPUs in a bare lock-unlock loop,
/// looks 1, 2, 4 and 8 pauses apart cost the holder a miss each, and the
/// pair ran at about half parking_lot's rate (measured, with the other
/// starts tried: `docs/design.md`, "The unregistered looks start 16
/// pauses apart").
const UNREGISTERED_FIRST_PAUSE: u32 = 16;

/// Longest backoff (pauses between two looks) of `RonGrant`'s
/// unregistered looks (`RonRaw`'s is [`UNREGISTERED_PAUSE_MAX`](crate::ron_raw::UNREGISTERED_PAUSE_MAX)).
const UNREGISTERED_LONGEST_PAUSE: u32 = 32;

/// Looks in a row that found `RonGrant`'s lock held after which its
/// unregistered looks end and the waiter registers: a holder that takes
/// the lock again at once keeps it from lookers, who never see it free,
/// and nobody registers. 32 rather than fewer keeps what the looks are
/// for, 2 threads on 2 CPUs (measured: `docs/design.md`, "The looks end
/// at a queue, and after 32 held looks").
#[cfg(not(loom))]
const UNREGISTERED_HELD_LOOKS: u32 = 32;
/// Under loom a waiter makes one unregistered look: a held lock ends it.
#[cfg(loom)]
const UNREGISTERED_HELD_LOOKS: u32 = 1;

/// [`UNREGISTERED_HELD_LOOKS`] for a thread's first waits that look
/// unregistered ([`lately::early_looks`](crate::lately::early_looks)):
/// threads that start together often start on one lock, where the first
/// to register ends everybody's looks (the queue forms); with the full
/// count every looker of such a start waited out its 32 held looks
/// together. Later waits keep the full count, which 2 threads on 2 CPUs
/// live on (measured: `docs/design.md`, "A thread's first looks end after
/// 4 held looks").
const EARLY_HELD_LOOKS: u32 = 4;

/// Registers in slot `s` of `slots` and waits for its grant or a free
/// `in_use`. If `relax` (or `on_wait`) panics, the waiter leaves its slot
/// and, if that would strand a grant to it, takes the grant and calls
/// `hand_on(s)` (which must release the lock) before unwinding.
#[inline]
fn wait_registered<const S: usize, const BITMAP: bool, R: Relax>(
    in_use: &impl TestAndSet,
    slots: &SlotTable<S>,
    s: usize,
    relax: &mut R,
    on_wait: impl FnOnce(),
    hand_on: impl Fn(usize),
) -> (PlaceToken, bool) {
    let before = slots.register::<BITMAP>(s);
    mark::<BITMAP>(Path::Registered);
    if before > 0 {
        mark::<BITMAP>(Path::SlotShared);
    }
    // While registered, a panic in `relax` (or `on_wait`) unwinds
    // through this guard: it leaves the slot, and if that would strand
    // a grant to it, takes the grant and hands the lock on.
    let registered = OnUnwind::new(|| {
        if slots.leave::<BITMAP>(s) {
            crate::coverage::hit!("plock.unwind_took_grant");
            hand_on(s);
        } else {
            crate::coverage::hit!("plock.unwind_left");
        }
    });
    on_wait();
    // Whether we are the slot's only waiter, as far as we know: chooses
    // how a look reads the slot (`try_take_grant`).
    let mut alone = before == 0;
    loop {
        if slots.try_take_grant(s, &mut alone) {
            mark::<BITMAP>(Path::GrantTaken);
            registered.disarm();
            return (PlaceToken::at(s), true);
        }
        if in_use.take_if_free() {
            mark::<BITMAP>(Path::FreeTaken);
            slots.uncount(s);
            registered.disarm();
            return (PlaceToken::at(s), false);
        }
        relax.relax();
    }
}

/// Grants the first slot with a waiter among the first `n` of `slots`
/// after `from` (bitmap or linear search): the slot granted, if any.
#[inline]
fn grant_next<const S: usize, const BITMAP: bool>(
    slots: &SlotTable<S>,
    n: usize,
    from: usize,
) -> Option<usize> {
    let granted = if BITMAP {
        slots.grant_next_bitmap_within(from, n, None, || mark::<BITMAP>(Path::StaleBitCleared))
    } else {
        slots.grant_next_linear_within(from, n)
    };
    match granted {
        Some(t) if t == from => mark::<BITMAP>(Path::GrantedOwnSlot),
        Some(_) => mark::<BITMAP>(Path::Granted),
        None => mark::<BITMAP>(Path::FreedAfterScan),
    }
    granted
}

impl<const S: usize, const BITMAP: bool> Plock<S, BITMAP> {
    crate::sync::const_fn_unless_loom! {
        pub(crate) fn new() -> Self {
            const { assert!(S >= 1, "a RON lock needs at least one slot") };
            Plock { in_use: InUse::new(), slots: SlotTable::new() }
        }
    }

    /// See [`try_fast`].
    #[inline]
    pub(crate) fn try_fast(&self) -> bool {
        try_fast::<BITMAP>(&*self.in_use)
    }

    #[cold]
    pub(crate) fn acquire_slow<R: Relax>(&self, s: usize, on_wait: impl FnOnce()) -> PlaceToken {
        // User code before registering: a panic here leaves nothing behind.
        let mut relax = R::default();
        wait_registered::<S, BITMAP, R>(&*self.in_use, &self.slots, s, &mut relax, on_wait, |s| {
            self.release_slow(PlaceToken::at(s))
        })
        .0
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
            if grant_next::<S, BITMAP>(&self.slots, S, from).is_none() {
                self.in_use.free();
            }
        });
    }

    #[inline]
    pub(crate) fn is_held(&self) -> bool {
        self.in_use.is_held()
    }
}

/// The plock protocol over the slots of a pooled block (module docs,
/// "Where the slots live"): 8 bytes.
pub(crate) struct PooledPlock<const BITMAP: bool> {
    /// `in_use`, and whether the owner acquired in the lock's block and
    /// kept its block reference for its release (`owner_ref`: a bit read
    /// and written only by the owner).
    in_use: TasWord,
    /// The index of the lock's block in its pool (0: none).
    home: AtomicU32,
}

impl<const BITMAP: bool> PooledPlock<BITMAP> {
    crate::sync::const_fn_unless_loom! {
        pub(crate) fn new() -> Self {
            PooledPlock {
                in_use: TasWord::new(),
                home: AtomicU32::new(0),
            }
        }
    }

    /// See [`try_fast`].
    #[inline]
    pub(crate) fn try_fast(&self) -> bool {
        try_fast::<BITMAP>(&self.in_use)
    }

    /// `RonGrant`'s fast path: [`try_fast`] at a lock this thread met
    /// lately or while the thread is new (`lately`), a bare CAS elsewhere
    /// (one request for a cold line).
    #[inline]
    pub(crate) fn try_fast_lately(&self) -> bool {
        let key = self as *const Self as usize;
        let won = if crate::lately::look_first(key) {
            try_fast::<BITMAP>(&self.in_use)
        } else if self.in_use.try_take() {
            crate::lately::taken(key);
            return true;
        } else {
            mark::<BITMAP>(Path::FastSawHeld);
            false
        };
        if !won {
            crate::lately::contended(key);
        }
        won
    }

    /// The slow path in slot `s` (`< active_slots()`) with blocks from `pool`.
    #[cold]
    pub(crate) fn acquire_slow_in<'a, R: Relax>(
        &'a self,
        pool: &Pool<'a>,
        s: usize,
        on_wait: impl FnOnce(),
    ) -> PlaceToken {
        // User code before registering: a panic here leaves nothing behind.
        let mut relax = R::default();
        let mut on_wait = Some(on_wait);
        loop {
            if let Some(room) = pool::enter(&self.home, pool, self as *const Self as usize) {
                // The slots, for as long as a reference is held (ours, then
                // the one that comes with a grant).
                let slots = room.slots();
                // Our reference, dropped as the frame unwinds unless
                // `hand_on` dropped it first.
                let own = core::cell::Cell::new(Some(room));
                let (token, by_grant) = wait_registered::<{ pool::BLOCK_SLOTS }, BITMAP, R>(
                    &self.in_use,
                    slots,
                    s,
                    &mut relax,
                    || on_wait.take().map_or((), |f| f()),
                    |s| {
                        // `leave` took the grant: we own the lock, with the
                        // granting release's reference. Drop ours while we
                        // hold the lock (not the last: that one stays), and
                        // release with that one as the kept reference.
                        drop(own.take());
                        self.in_use.set_kept(true);
                        // SAFETY: `leave` took the grant, so we own the
                        // lock, and a reference to its block is ours (the
                        // flag says so); it is this lock's pool.
                        unsafe { self.release_in(pool, PlaceToken::at(s)) };
                    },
                );
                let Some(room) = own.take() else {
                    unreachable!("our reference is dropped only by `hand_on`, which unwinds")
                };
                // The owner keeps one reference for its release (which then
                // needs no look-up). The flag is usually set already (a
                // grant from an owner that kept its own leaves it set): the
                // lock's line, which waiters poll, is written only when it
                // changes (`TasWord::set_kept`: only owners write the bit).
                if !self.in_use.kept() {
                    self.in_use.set_kept(true);
                }
                if by_grant {
                    // The grant came with the granting release's reference
                    // besides ours: bank it in our slot (whose word we
                    // have just written), or drop the slot's bank with it
                    // once it exceeds `BANK_MAX`.
                    Self::bank(&room, slots, s);
                }
                room.keep();
                return token;
            }
            // No block to be had: wait unregistered for a while (TTAS),
            // then try to register again. A panic here holds nothing.
            mark::<BITMAP>(Path::Unregistered);
            if let Some(f) = on_wait.take() {
                f();
            }
            for _ in 0..UNREGISTERED_LOOKS {
                if self.in_use.take_if_free() {
                    mark::<BITMAP>(Path::FreeTaken);
                    return PlaceToken::at(s);
                }
                relax.relax();
            }
        }
    }

    /// The slow path of [`RonGrant`](crate::RonGrant) in slot `s`
    /// (`< active_slots()`) with blocks from `pool`: its waiting phases
    /// ([`ron_grant`](crate::ron_grant), "Waiting") over this protocol.
    /// `keep_waiting` is asked after every round that did not take the
    /// lock, never while the waiter is registered (a panic in it leaves
    /// nothing registered); `limit` says how long a park may sleep.
    /// `None` once `keep_waiting` said no.
    #[cold]
    pub(crate) fn acquire_parking_in<'a>(
        &'a self,
        pool: &Pool<'a>,
        s: usize,
        limit: SleepLimit,
        mut keep_waiting: impl FnMut() -> bool,
    ) -> Option<PlaceToken> {
        let key = self as *const Self as usize;
        // Leaves the watch (waking the next sleeper) however this returns.
        let mut parking = Parking::new(key);
        let mut clock = WaitClock::new();
        let mut spins = wait::first_budget();
        let mut first = true;
        loop {
            if first && wait::verdict_due() {
                // A new thread, or one without a recent verdict on its CPU:
                // ask the scheduler before registering (one timed yield).
                wait::yield_cpu();
            }
            if wait::cpu_looked_shared() {
                // A shared round: a waiter that may not run soon never
                // registers (a grant to it would stall the lock).
                crate::coverage::hit!("ron_grant.shared_round");
                if first && self.spin_shared() {
                    return Some(PlaceToken::at(s));
                }
                for _ in 0..SHARED_LOOKS {
                    if self.in_use.take_if_free() {
                        crate::coverage::hit!("ron_grant.shared_took");
                        return Some(PlaceToken::at(s));
                    }
                    if !keep_waiting() {
                        return None;
                    }
                    wait::yield_cpu();
                }
                if self.park(pool, &mut parking, limit) != Parked::Slept {
                    wait::yield_cpu();
                }
                first = false;
                continue;
            }
            if first {
                // Nobody registered (no block, or a block whose only mark
                // is the empty slot of the waiter that took the lock by
                // grant): a short wait ends here more often than not,
                // without a slot. Registering at once behind a lone
                // grantee would make two threads hand the lock to each
                // other at every release (`Queue::Empty`).
                let queue = self.queue(pool);
                if queue == Queue::Empty {
                    crate::coverage::hit!("ron_grant.looks_beside_block");
                }
                if queue != Queue::Formed && self.look_unregistered(pool) {
                    return Some(PlaceToken::at(s));
                }
            }
            first = false;
            let got = match pool::enter(&self.home, pool, key) {
                Some(room) => self.wait_registered_round(room, s, spins),
                None => {
                    // No block to be had (pool exhausted): TTAS looks.
                    crate::coverage::hit!("ron_grant.unregistered_round");
                    (0..UNREGISTERED_LOOKS)
                        .any(|_| {
                            let took = self.in_use.take_if_free();
                            crate::sync::spin_loop();
                            took
                        })
                        .then_some(PlaceToken::at(s))
                }
            };
            if got.is_some() {
                return got;
            }
            if !keep_waiting() {
                crate::coverage::hit!("ron_grant.gave_up");
                return None;
            }
            let parked = if clock.long() {
                self.park(pool, &mut parking, limit)
            } else {
                Parked::Not
            };
            if parked != Parked::Slept {
                spins = wait::give_cpu_away(spins);
            }
        }
    }

    /// A shared round's first looks, before its first yield: only at a
    /// lock with no block (nobody registered, nobody parked), whose holder
    /// is more likely running than not, and not while this thread skips
    /// them after a spin that missed (`wait::shared_spin_due`); then
    /// [`SHARED_SPIN_LOOKS`] looks at `in_use`, the first after
    /// [`SHARED_SPIN_FIRST_PAUSE`] pauses, doubling. Whether they took the
    /// lock.
    fn spin_shared(&self) -> bool {
        // Relaxed: steers only (a stale answer spins or yields, both safe).
        if self.home.load(Ordering::Relaxed) != 0 || !wait::shared_spin_due() {
            return false;
        }
        let mut pause = SHARED_SPIN_FIRST_PAUSE;
        for _ in 0..SHARED_SPIN_LOOKS {
            for _ in 0..pause {
                crate::sync::spin_loop();
            }
            pause *= 2;
            if self.in_use.take_if_free() {
                crate::coverage::hit!("ron_grant.shared_spin_took");
                return true;
            }
        }
        wait::shared_spin_missed();
        false
    }

    /// The first round's unregistered looks
    /// ([`UNREGISTERED_LOOKS`](crate::ron_raw::UNREGISTERED_LOOKS) TTAS looks at `in_use`, backoff doubling from
    /// 1 pause in the thread's first waits, else from
    /// [`UNREGISTERED_FIRST_PAUSE`], up to [`UNREGISTERED_LONGEST_PAUSE`]
    /// pauses): whether they took the lock. They end early at the
    /// [`UNREGISTERED_LOST_RACES`]th lost race (a CAS that failed on an
    /// `in_use` they saw free): other threads wait too, and the grant
    /// hands over faster than a herd of TTAS looks; at a held look once
    /// another waiter is registered ([`Queue::Formed`]):
    /// the lock then goes by grant, never free, so no look of ours could
    /// take it before the registered waiters are served; and at the
    /// [`UNREGISTERED_HELD_LOOKS`]th held look in a row (the
    /// [`EARLY_HELD_LOOKS`]th in the thread's first such waits).
    fn look_unregistered(&self, pool: &Pool<'_>) -> bool {
        let early = crate::lately::early_looks();
        let mut pause = if early { 1 } else { UNREGISTERED_FIRST_PAUSE };
        let mut lost = 0;
        let mut held_in_a_row = 0;
        let held_limit = if early {
            EARLY_HELD_LOOKS
        } else {
            UNREGISTERED_HELD_LOOKS
        };
        for _ in 0..crate::ron_raw::UNREGISTERED_LOOKS {
            if self.in_use.is_held() {
                if self.queue(pool) == Queue::Formed {
                    crate::coverage::hit!("ron_grant.unregistered_saw_queue");
                    return false;
                }
                held_in_a_row += 1;
                if held_in_a_row >= held_limit {
                    crate::coverage::hit!("ron_grant.unregistered_held");
                    return false;
                }
                for _ in 0..pause {
                    crate::sync::spin_loop();
                }
                pause = (pause * 2).min(UNREGISTERED_LONGEST_PAUSE);
                continue;
            }
            held_in_a_row = 0;
            if self.in_use.try_take() {
                crate::coverage::hit!("ron_grant.unregistered_took");
                return true;
            }
            lost += 1;
            if lost == UNREGISTERED_LOST_RACES {
                // Other arrivals took the lock we saw free, again: more
                // threads wait, and a herd of TTAS looks hands over far
                // slower than the grant. Register.
                crate::coverage::hit!("ron_grant.unregistered_lost");
                return false;
            }
        }
        false
    }

    /// What the lock's block says of its waiters now: a snapshot that
    /// only steers the unregistered looks (a stale answer either looks on
    /// or registers, both safe).
    fn queue(&self, pool: &Pool<'_>) -> Queue {
        // Relaxed: steers only (above).
        let index = self.home.load(Ordering::Relaxed);
        if index == 0 {
            return Queue::NoBlock;
        }
        // Read without a reference, as `release_in` does: blocks are
        // type-stable, and a stale answer only steers.
        match pool.block(index) {
            Some(b) if b.slots().waiting_within(pool::active_slots()) => Queue::Formed,
            _ => Queue::Empty,
        }
    }

    /// One registered round in slot `s` of the lock's block (`room`, our
    /// reference): spins up to `spins` looks for the slot's grant or a
    /// free `in_use`, then leaves the slot (taking the grant if it was the
    /// last waiter of a granted slot) and looks at `in_use` once more.
    /// The lock's token if the round took it (the owner keeps `room` for
    /// its release); else the reference is dropped. Runs no user code.
    fn wait_registered_round<'a>(
        &'a self,
        room: pool::BlockRef<'a, SlotTable<{ pool::BLOCK_SLOTS }>>,
        s: usize,
        spins: u32,
    ) -> Option<PlaceToken> {
        let slots = room.slots();
        let before = slots.register::<true>(s);
        crate::coverage::hit!("ron_grant.registered");
        let mut alone = before == 0;
        let mut by_grant = None;
        for _ in 0..spins {
            if slots.try_take_grant(s, &mut alone) {
                crate::coverage::hit!("ron_grant.grant_taken");
                by_grant = Some(true);
                break;
            }
            if self.in_use.take_if_free() {
                crate::coverage::hit!("ron_grant.free_taken");
                slots.uncount(s);
                by_grant = Some(false);
                break;
            }
            crate::sync::spin_loop();
        }
        if by_grant.is_none() {
            if slots.leave::<true>(s) {
                // The last waiter of a granted slot takes the grant.
                crate::coverage::hit!("ron_grant.left_with_grant");
                by_grant = Some(true);
            } else if self.in_use.take_if_free() {
                crate::coverage::hit!("ron_grant.left_took_free");
                by_grant = Some(false);
            }
        }
        let by_grant = by_grant?;
        // The owner keeps its reference for its release; the lock's line
        // is written only when the bit changes (`TasWord::set_kept`).
        if !self.in_use.kept() {
            self.in_use.set_kept(true);
        }
        if by_grant {
            // The grant brought the granting release's reference: banked.
            Self::bank(&room, slots, s);
        }
        room.keep();
        Some(PlaceToken::at(s))
    }

    /// Parks (or takes the watch): holds a reference to the lock's block
    /// while it sleeps, so that a release that frees the lock sees a block
    /// and wakes a sleeper ([`release_in`](Self::release_in)'s answer).
    fn park<'a>(&'a self, pool: &Pool<'a>, parking: &mut Parking, limit: SleepLimit) -> Parked {
        let room = pool::enter(&self.home, pool, self as *const Self as usize);
        let parked = parking.park(limit);
        drop(room);
        parked
    }

    /// Banks the block reference a grant passed to the new owner (which
    /// holds the lock and `room`, and took the grant in slot `s` of the
    /// block `slots`), or drops it with the slot's bank once that would
    /// hold more than [`BANK_MAX`].
    #[inline]
    fn bank(
        room: &pool::BlockRef<'_, SlotTable<{ pool::BLOCK_SLOTS }>>,
        slots: &SlotTable<{ pool::BLOCK_SLOTS }>,
        s: usize,
    ) {
        match slots.bank(s, 1, BANK_MAX) {
            0 => mark::<BITMAP>(Path::Banked),
            b => {
                mark::<BITMAP>(Path::BankPaid);
                // Not the last references: we hold `room`.
                room.drop_more(b);
            }
        }
    }

    /// Empties every bank of the first `n` slots of `slots` (the caller,
    /// which holds the lock, is about to free it: a freed lock owes
    /// nothing, so its block can go back): the references they held.
    /// `own` is the releaser's slot, if known (for the path counters).
    #[inline]
    fn collect_banks(
        slots: &SlotTable<{ pool::BLOCK_SLOTS }>,
        n: usize,
        own: Option<usize>,
    ) -> u32 {
        let (k, scanned) = slots.collect_banks(n, |t, _| {
            if own != Some(t) {
                mark::<BITMAP>(Path::BankCollected);
            }
        });
        if scanned {
            mark::<BITMAP>(Path::BankScanned);
        }
        k
    }

    /// Frees the lock if it has no block (so nobody registered, and no
    /// kept reference: a held block is never detached): `None` if it did,
    /// else the block index it read, for [`release_in_at`](Self::release_in_at).
    /// The uncontended release of [`RonGrant`](crate::RonGrant), in line:
    /// a load and a store.
    ///
    /// # Safety
    /// The caller holds the lock.
    #[inline]
    pub(crate) unsafe fn release_if_idle(&self) -> Option<u32> {
        // SeqCst: as in `release_in` (ordered with the waiters' `enter`).
        // mutants: as in `release_in` (a missed waiter takes the freed lock
        // at its next look).
        let index = self.home.load(Ordering::SeqCst);
        if index != 0 {
            return Some(index);
        }
        mark::<BITMAP>(Path::FreedNoMark);
        self.in_use.free();
        None
    }

    /// Releases the lock: grants the next waiting slot of the lock's block,
    /// or frees it.
    ///
    /// # Safety
    /// The caller holds the lock; `pool` is the lock's pool.
    ///
    /// Returns whether the release freed the lock while it held a block
    /// (its parked waiters, which hold the block, may want a wake-up:
    /// [`RonGrant`](crate::RonGrant)); the lock must not be touched after.
    #[inline]
    pub(crate) unsafe fn release_in<'a>(&'a self, pool: &Pool<'a>, token: PlaceToken) -> bool {
        // SeqCst: ordered with the waiters' `enter` (SeqCst); a stale
        // answer frees the lock, which registered waiters see at their
        // next look at `in_use`.
        // mutants: the waiting bound only (a missed waiter takes the
        // freed lock at its next look; exclusion and progress stand).
        let index = self.home.load(Ordering::SeqCst);
        // SAFETY: the caller holds the lock; `index` was read (SeqCst)
        // while it did.
        unsafe { self.release_in_at(pool, token, index) }
    }

    /// [`release_in`](Self::release_in) with `index`, the block index the
    /// caller read (SeqCst) from `home` while it held the lock (the
    /// uncontended release's look, handed on so that a handover reads it
    /// once).
    ///
    /// # Safety
    /// As for [`release_in`](Self::release_in).
    #[inline]
    pub(crate) unsafe fn release_in_at<'a>(
        &'a self,
        pool: &Pool<'a>,
        token: PlaceToken,
        index: u32,
    ) -> bool {
        let n = pool::active_slots();
        let own = token.index();
        // The owner's bit stays set across a grant (the grantee is
        // registered and keeps its reference in turn) and is cleared by the
        // free, which stores 0.
        let kept = if self.in_use.kept() {
            mark::<BITMAP>(Path::ReleaseKeptRef);
            // SAFETY: the flag says this acquisition kept its reference to
            // the lock's block (`acquire_slow_in`); we own the lock, so it
            // is ours to take back, once; the reference kept `home` at
            // `index` since the acquisition, before the caller read it.
            unsafe { pool::adopt_at(&self.home, index, pool) }
        } else {
            None
        };
        // A kept reference goes straight to the grant's scan, which frees
        // the lock (with every bank) when it finds no waiter: a look at the
        // bitmap here would read it twice on every handover.
        if kept.is_none() {
            // Read without a reference: blocks are type-stable, and a
            // stale "nobody" only frees the lock.
            let idle = index == 0
                || (BITMAP
                    && !pool
                        .block(index)
                        .is_some_and(|b| b.slots().any_marked_within(n)));
            if idle {
                mark::<BITMAP>(Path::FreedNoMark);
                // Without a kept reference no bank is left (module docs,
                // "The bank").
                self.in_use.free();
                return index != 0;
            }
        }
        // The hint (user code) is asked first; if it panics the release
        // runs from slot 0 and takes `kept` all the same.
        let kept = core::cell::Cell::new(kept);
        let freed_with_block = core::cell::Cell::new(false);
        token.release_from_slot_of(n, |from| {
            // A reference keeps the block this lock's while we grant.
            let room = match kept.take() {
                Some(r) => Some(r),
                None => pool::current(&self.home, pool),
            };
            let granted = room
                .as_deref()
                .and_then(|slots| grant_next::<{ pool::BLOCK_SLOTS }, BITMAP>(slots, n, from));
            match (granted, room) {
                // The reference goes with the grant: the grantee banks it
                // (and keeps its own for its release). Nothing of the
                // block's count is written here: a drop after the grant
                // could be the block's last, whose return writes `home`
                // (the lock may be freed by then), and a drop before it
                // would put a contended read-modify-write on every
                // handover. The grantee holds its own reference until it
                // has taken the grant, so the block stays this lock's.
                (Some(_), Some(room)) => room.keep(),
                (_, room) => {
                    if let Some(room) = room {
                        // Every bank goes with our reference (with a
                        // looked-up one there is none: the marks are clear).
                        let banked = Self::collect_banks(room.slots(), n, own);
                        // Possibly the last references: dropped while we
                        // hold the lock.
                        room.drop_with(banked);
                        freed_with_block.set(true);
                    }
                    self.in_use.free();
                }
            }
        });
        freed_with_block.get()
    }

    #[inline]
    pub(crate) fn is_held(&self) -> bool {
        self.in_use.is_held()
    }

    /// Whether the lock holds a pooled block (a snapshot; loom models only).
    #[cfg(loom)]
    pub(crate) fn has_block(&self) -> bool {
        self.home.load(Ordering::Relaxed) != 0 // a snapshot by contract
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
    /// An unlock scanned and found nobody (stale bit, lost race, or a
    /// release with a kept reference, which goes straight to the scan): freed.
    FreedAfterScan,
    /// An unlock without a kept reference saw no block or an empty bitmap
    /// and freed at once (bitmap variant).
    FreedNoMark,
    /// A fast path found the lock held and wrote nothing.
    FastSawHeld,
    /// A waiter found no block to be had (pool exhausted): unregistered.
    Unregistered,
    /// A release used the block reference its acquisition kept.
    ReleaseKeptRef,
    /// A grantee banked the reference its grant brought in its slot.
    Banked,
    /// ... or dropped its slot's bank with it, past `BANK_MAX` (pooled).
    BankPaid,
    /// A release that frees the lock collected a bank from a slot other
    /// than its acquisition's (pooled).
    BankCollected,
    /// A release that frees the lock read every slot's bank: more slots
    /// banked than were marked (pooled).
    BankScanned,
    /// An unlock found a bitmap bit set on an empty slot (left by a waiter
    /// that took the lock) and cleared it (bitmap variant).
    StaleBitCleared,
}

impl Path {
    /// Counter names per variant (`[linear, bitmap]`), in declaration order.
    const NAMES: [[&'static str; 16]; 2] = [
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
            "ron_plock.unregistered",
            "ron_plock.release_kept_ref",
            "ron_plock.banked",
            "ron_plock.bank_paid",
            "ron_plock.bank_collected",
            "ron_plock.bank_scanned",
            "ron_plock.stale_bit_cleared",
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
            "nxt_ron.unregistered",
            "nxt_ron.release_kept_ref",
            "nxt_ron.banked",
            "nxt_ron.bank_paid",
            "nxt_ron.bank_collected",
            "nxt_ron.bank_scanned",
            "nxt_ron.stale_bit_cleared",
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
