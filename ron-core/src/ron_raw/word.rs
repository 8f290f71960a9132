//! The lock word of `RonRaw` and `RonInline`: its fast path, its release
//! and handover, and the waiting loop around it. What its values mean,
//! and why exclusion holds whatever the slots say, is in
//! [`encoding`](super::encoding).

use super::park::{Parked, Parking, SleepLimit, WaitClock, cpus};
use super::wait::{
    UNREGISTERED_LOOKS, UNREGISTERED_PAUSE_MAX, Watch, cpu_looked_shared, first_budget,
    give_cpu_away, mark_cpu_shared, verdict_due, yield_cpu,
};
use crate::slots::{GRANT, PlaceToken, SlotTable, count};
use crate::sync::{AtomicU32, Ordering, spin_loop};
use crate::unwind::OnUnwind;
use core::ops::ControlFlow;

use super::encoding::{FREE, HANDED, KEPT, LOCKED, TAG, WATCH_SLOT, handed, handed_slot, orphaned};

/// Where a lock's waiters register: the inline slots of `RonInline`, or
/// the pooled block of `RonRaw`, held for one round.
pub(crate) trait Rooms<const S: usize> {
    /// A room held while waiting (a block's reference is dropped with it).
    type Room<'a>: core::ops::Deref<Target = SlotTable<S>>
    where
        Self: 'a;
    /// The room to register in; `None` when there is none to be had (the
    /// pool is exhausted): the caller then waits unregistered.
    fn enter(&self) -> Option<Self::Room<'_>>;
    /// Whether `room` is still the lock's (a pooled block may have been
    /// returned meanwhile: its holder then enters anew).
    fn is_current(&self, room: &Self::Room<'_>) -> bool;
    /// Whether waiters are registered right now (a snapshot that only
    /// steers): an arrival then joins them at once instead of looking at
    /// the lock word first.
    fn crowded(&self) -> bool;
    /// The lock's address: its key in the parking table.
    fn key(&self) -> usize;
    /// Threads waiting for the lock now (a snapshot that only steers;
    /// 0 where nobody counts them).
    fn waiters(&self) -> usize;
    /// The word a long registered wait's CAS writes: `KEPT` where the
    /// owner then keeps its room (a pooled block's reference) for its
    /// release, else `LOCKED` (a room that holds nothing).
    const HELD: u32;
}

/// Looks at the lock word of a round on a shared CPU before the waiter
/// parks, a yield after each (no spin: a pause there takes the CPU from
/// a thread that could run; measured in `docs/design.md`, "No spin in a
/// shared round").
const SHARED_LOOKS: u32 = if cfg!(loom) { 1 } else { 10 };

/// Doorbell spins after which a registered waiter that gets the lock
/// keeps its block reference for its release (`KEPT`): a wait that long
/// means other waiters hold the block too, so it stays attached, and
/// keeping saves the decrement of the block's count (a line every arrival
/// writes) on the handover's path. A shorter wait drops it as it takes the
/// lock, so that a lock whose contention ends gives its block back (and
/// its arrivals go back to plain looks) as early as before. Measured in
/// `docs/design.md` ("A long wait keeps its block reference"). One under
/// loom and Miri, so that their short waits reach both.
const KEEP_AFTER_SPINS: u32 = if cfg!(any(loom, miri)) { 1 } else { 64 };

/// Doorbell spins between two questions to `keep_waiting` in a timed wait.
const ASK_EVERY: u32 = 8;

/// Looks at the lock word a waiter makes after claiming its slot's
/// doorbell (see [`answer_bell`]): the bell rings just before the handover
/// is published, so the claimer may see the word still `LOCKED` for a
/// moment; if the handover went elsewhere meanwhile (a stale takeover, or a
/// slot-mate's look at the end of its round), it goes back to its doorbell
/// after these looks.
#[cfg(not(loom))]
const CLAIM_LOOKS: u32 = 64;
/// Looks after claiming a doorbell (see above); one under loom.
#[cfg(loom)]
const CLAIM_LOOKS: u32 = 1;

/// Spins on the doorbell `bell` for up to `n` looks; returns how many
/// spins it used and the slot word that rang, if one did. Bounded by `n`
/// whether or not anyone rings.
#[inline]
fn wait_bell(bell: &AtomicU32, n: u32) -> (u32, Option<u32>) {
    // Relaxed: the doorbell only says "look now"; the look's CAS has the
    // Acquire.
    #[cfg(all(ron_vm, not(loom), not(shuttle)))]
    {
        match bell.spin_while(n, Ordering::Relaxed, |w| w & GRANT == 0) {
            Some((k, w)) => (k, Some(w)),
            None => (n, None),
        }
    }
    #[cfg(not(all(ron_vm, not(loom), not(shuttle))))]
    {
        for k in 0..n {
            let w = bell.load(Ordering::Relaxed);
            if w & GRANT != 0 {
                return (k, Some(w));
            }
            spin_loop();
        }
        (n, None)
    }
}

/// How many looks at the lock word a registered waiter makes now that its
/// doorbell rang with slot word `w`: alone in its slot, one (the doorbell
/// stays set until the handover is taken, so it keeps looking a look per
/// spin); with slot-mates, only the one that clears the doorbell first
/// looks, [`CLAIM_LOOKS`] times, and the others stay on their doorbell
/// instead of all reading the lock word and racing for it (each read a
/// miss queued on the word's line, each lost CAS an invalidation).
#[inline]
fn answer_bell(bell: &AtomicU32, w: u32) -> u32 {
    if count(w) <= 1 {
        return 1;
    }
    // Relaxed: the doorbell only says who looks; the look's CAS has the
    // Acquire. One RMW: exactly one slot-mate sees the bit it clears.
    if bell.fetch_and(!GRANT, Ordering::Relaxed) & GRANT != 0 {
        crate::coverage::hit!("ron_raw.bell_claimed");
        CLAIM_LOOKS
    } else {
        crate::coverage::hit!("ron_raw.bell_lost");
        0
    }
}

/// The lock word, 4 bytes (the handover count lives with the slots).
pub(crate) struct Word {
    pub(crate) state: AtomicU32,
}

impl Word {
    crate::sync::const_fn_unless_loom! {
        pub(crate) fn new() -> Word {
            Word { state: AtomicU32::new(FREE) }
        }
    }

    /// The fast path: `FREE -> LOCKED` with a weak CAS.
    #[inline]
    pub(crate) fn acquire_fast(&self) -> bool {
        // Acquire: pairs with the Release store of FREE in `release`.
        let ok = self
            .state
            .compare_exchange_weak(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
        if ok {
            crate::coverage::hit!("ron_raw.fast");
        }
        ok
    }

    /// `FREE -> LOCKED` with a strong CAS (`try_acquire`), or an orphaned
    /// handover taken: `HANDED(t, _) -> LOCKED` when `slot_empty(t)` says
    /// slot `t` has no registered waiter (its last waiter gave up after
    /// the releaser chose it; see [`orphaned`]).
    #[inline]
    pub(crate) fn try_acquire(&self, slot_empty: impl FnOnce(usize) -> bool) -> bool {
        // Acquire: pairs with the Release store of FREE in `release`.
        match self
            .state
            .compare_exchange(FREE, LOCKED, Ordering::Acquire, Ordering::Relaxed)
        {
            Ok(_) => {
                crate::coverage::hit!("ron_raw.fast");
                true
            }
            Err(word) if orphaned(word, slot_empty) => {
                // Acquire: pairs with the Release of `publish`, as for any
                // takeover.
                let ok = self
                    .state
                    .compare_exchange(word, LOCKED, Ordering::Acquire, Ordering::Relaxed)
                    .is_ok();
                if ok {
                    crate::coverage::hit!("ron_raw.take_orphan");
                }
                ok
            }
            Err(_) => false,
        }
    }

    /// Whether the lock is held or handed over to a slot with a registered
    /// waiter (a momentary snapshot; an orphaned handover counts as free,
    /// since [`try_acquire`](Self::try_acquire) takes it).
    #[inline]
    pub(crate) fn is_held(&self, slot_empty: impl FnOnce(usize) -> bool) -> bool {
        let word = self.state.load(Ordering::Relaxed); // a snapshot by contract
        word != FREE && !orphaned(word, slot_empty)
    }

    /// One look at the lock word by a waiter of slot `s`: takes the lock if
    /// it is free, handed to `s` while the caller is (or was, at the
    /// handover) registered there, handed to the watcher while the caller
    /// holds the lock's watch (`watching`), or handed anywhere and stale.
    /// Returns whether the caller now owns the lock. An unregistered
    /// arrival does not take its slot's handover at once: that would let a
    /// thread that just released re-take a handover meant for the slot's
    /// waiters. `room` is the caller's room, if it holds one: the doorbell
    /// of a taken handover is cleared there. `held` is the word the CAS
    /// writes: `LOCKED`, or `KEPT` for a caller that keeps a block
    /// reference ([`Rooms::HELD`]).
    #[inline]
    pub(crate) fn look<const S: usize>(
        &self,
        s: usize,
        registered: bool,
        watching: bool,
        room: Option<&SlotTable<S>>,
        watch: &mut Watch,
        held: u32,
    ) -> bool {
        self.look_clearing::<S>(s, registered, watching, room, watch, held, true)
    }

    /// [`look`](Self::look); with `clear_own_bell` false, a handover taken
    /// by a waiter of its slot leaves the slot's doorbell to the caller
    /// (a registered waiter that leaves with
    /// [`unregister_keep_bit`](SlotTable::unregister_keep_bit)).
    // One look's whole context: the caller's slot and standing, its room,
    // its watch and what its CAS writes.
    #[allow(clippy::too_many_arguments)]
    #[inline]
    fn look_clearing<const S: usize>(
        &self,
        s: usize,
        registered: bool,
        watching: bool,
        room: Option<&SlotTable<S>>,
        watch: &mut Watch,
        held: u32,
        clear_own_bell: bool,
    ) -> bool {
        // Relaxed: only decides whether to try the CAS, which has the Acquire.
        let word = self.state.load(Ordering::Relaxed);
        let stale = watch.stale(word);
        let to = handed_slot(word);
        let own = if to == WATCH_SLOT {
            watching
        } else {
            registered && to == s
        };
        match word & TAG {
            FREE => {}
            HANDED if own || stale => {}
            // A handover to a slot that nobody waits in any more (in our
            // room: a snapshot; the CAS decides) is taken at once.
            HANDED if room.is_some_and(|r| orphaned(word, |t| r.slot_empty(t % S))) => {}
            _ => return false,
        }
        // Acquire: pairs with the Release store (FREE or HANDED) of the
        // previous owner's `release`, so its critical section happens-before
        // ours. Load-bearing for a takeover: a thread of another slot has no
        // other synchronisation with the releasing owner.
        if self
            .state
            .compare_exchange(word, held, Ordering::Acquire, Ordering::Relaxed)
            .is_err()
        {
            return false;
        }
        if word & TAG != HANDED {
            crate::coverage::hit!("ron_raw.take_free");
            return true;
        }
        if to == WATCH_SLOT {
            // No doorbell rang for it.
            if own {
                crate::coverage::hit!("ron_raw.take_watched");
            } else {
                crate::coverage::hit!("ron_raw.takeover");
            }
            return true;
        }
        if own {
            crate::coverage::hit!("ron_raw.take_own");
            if !clear_own_bell {
                return true;
            }
        } else {
            crate::coverage::hit!("ron_raw.takeover");
        }
        // We own the lock, so no other handover can be in flight: clear
        // the doorbell of the slot it named (in our room; a doorbell
        // left set elsewhere only makes that slot's waiters look more
        // often, and a block is cleaned when claimed). Relaxed: the
        // doorbell carries no data (ownership came from the CAS above).
        if let Some(room) = room {
            room.word(to % S).fetch_and(!GRANT, Ordering::Relaxed);
        }
        true
    }

    /// A waiter of slot `s` whose doorbell just rang takes the handover
    /// the releaser noted beside the doorbell, with one CAS from the word
    /// it is about to publish (no load of the lock word first). Fails,
    /// changing nothing, if the word is not that handover (not published
    /// yet, or taken meanwhile); the caller then looks as usual.
    #[inline]
    fn take_noted<const S: usize>(&self, room: &SlotTable<S>, s: usize, held: u32) -> bool {
        // Relaxed: a guess; the CAS checks it.
        let expect = handed(s, room.note(s).load(Ordering::Relaxed));
        // Acquire: pairs with the Release of `publish`, as in `look`.
        // mutants: also ordered by the slot word: the caller's
        // `unregister_keep_bit` (a SeqCst RMW) reads from the release's
        // grant (a Release RMW, after its critical section), so weakening
        // this one alone breaks no test (loom: all 15 models pass).
        let ok = self
            .state
            .compare_exchange(expect, held, Ordering::Acquire, Ordering::Relaxed)
            .is_ok();
        if ok {
            crate::coverage::hit!("ron_raw.take_own");
            crate::coverage::hit!("ron_raw.take_noted");
        }
        ok
    }

    /// The contended acquisition: the waiting phases of the
    /// [module docs](super) (unregistered looks, then rounds of a
    /// registered wait in a room from `rooms`, or an unregistered round
    /// when there is none, each followed by a yield or a park).
    #[cold]
    pub(crate) fn acquire_slow<const S: usize, R: Rooms<S>>(
        &self,
        rooms: &R,
        s: usize,
    ) -> PlaceToken {
        // `keep_waiting` never says no: no need to ask it within a round.
        match self.acquire_slow_asking(rooms, s, u32::MAX, || true, SleepLimit::Never) {
            Some(t) => t,
            // `keep_waiting` never says no.
            None => unreachable!(),
        }
    }

    /// [`acquire_slow`](Self::acquire_slow) that gives up once
    /// `keep_waiting` says `false`; it is asked after every look that did
    /// not take the lock. A waiter that gives up while registered leaves
    /// its slot, then looks once more as a member of the slot (taking a
    /// handover to its slot that raced with leaving; it then owns the
    /// lock), and drops its room (a pooled block's reference) before it
    /// returns `None`. A handover addressed to its slot after that last
    /// look (the releaser chose the slot before the waiter left) is not
    /// lost: any waiter takes a `HANDED` word over once it has watched it
    /// for `PATIENCE_NS`, a later arrival included, as for a grantee that
    /// was preempted.
    pub(crate) fn acquire_slow_while<const S: usize, R: Rooms<S>>(
        &self,
        rooms: &R,
        s: usize,
        keep_waiting: impl FnMut() -> bool,
    ) -> Option<PlaceToken> {
        self.acquire_slow_asking(rooms, s, ASK_EVERY, keep_waiting, SleepLimit::Ask)
    }

    /// [`acquire_slow_while`](Self::acquire_slow_while) until `deadline`:
    /// unlike a closure, a deadline lets a parked waiter sleep (until it).
    #[cfg(feature = "std")]
    pub(crate) fn acquire_slow_until<const S: usize, R: Rooms<S>>(
        &self,
        rooms: &R,
        s: usize,
        deadline: crate::timed::Deadline,
    ) -> Option<PlaceToken> {
        self.acquire_slow_asking(
            rooms,
            s,
            ASK_EVERY,
            || !deadline.expired(),
            SleepLimit::Until(deadline),
        )
    }

    /// [`acquire_slow_while`](Self::acquire_slow_while) that asks
    /// `keep_waiting` at least every `ask_every` doorbell spins while
    /// registered (and after every failed look).
    fn acquire_slow_asking<const S: usize, R: Rooms<S>>(
        &self,
        rooms: &R,
        s: usize,
        ask_every: u32,
        keep_waiting: impl FnMut() -> bool,
        limit: SleepLimit,
    ) -> Option<PlaceToken> {
        // Its `parking` leaves the lock's watch (if this waiter takes it)
        // when dropped: on every return, and if `keep_waiting` unwinds.
        let mut waiter = Waiter {
            word: self,
            rooms,
            s,
            ask_every,
            keep_waiting,
            limit,
            parking: Parking::new(rooms.key()),
            clock: WaitClock::new(),
            watch: Watch::new(),
            spins: first_budget(),
            spun: 0,
        };
        // The room held across rounds (declared after `waiter`, so dropped
        // first: the block reference goes before the watch is left).
        let mut room = None;
        let mut first_round = true;
        loop {
            if let ControlFlow::Break(got) = waiter.round(&mut room, first_round) {
                // An acquisition whose CAS wrote `KEPT` keeps its room (a
                // block reference, as `BlockRef::keep` does) for its
                // release, which takes it back (`RonRaw::kept_ref`); any
                // other drops it here.
                if let (Some(_), Some(r)) = (got, room.take())
                    && R::HELD == KEPT
                    && self.kept()
                {
                    core::mem::forget(r);
                }
                return got;
            }
            first_round = false;
        }
    }

    /// Whether the owner kept its block reference for its release (the
    /// word is `KEPT`). Only for the owner: nobody else writes the word
    /// while it is held, so this reads back the owner's own CAS.
    #[inline]
    pub(crate) fn kept(&self) -> bool {
        // Relaxed: the owner reads its own last write (program order).
        self.state.load(Ordering::Relaxed) == KEPT
    }

    /// Frees the lock (nobody can be registered).
    #[inline]
    pub(crate) fn release_free(&self) {
        crate::coverage::hit!("ron_raw.release_free");
        // Release: publishes the critical section to the next CAS winner.
        self.state.store(FREE, Ordering::Release);
    }

    /// The word a release through `room` writes: hands the lock to the
    /// next registered slot along the route after slot `from`, on the ring
    /// of its first `active` slots (ringing its doorbell), counting the
    /// handover in `handovers` (the room's count: written only by owners of
    /// the lock), or `FREE`. The caller stores it with
    /// [`publish`](Self::publish) once it no longer touches the room.
    /// `count_first`: count with one read-modify-write before the scan
    /// (`RonRaw`, below), else with a load before and a store after a
    /// handover (`RonInline`, whose count is on the lock word's line).
    #[inline]
    pub(crate) fn next_owner<const S: usize>(
        &self,
        room: &SlotTable<S>,
        from: usize,
        active: usize,
        handovers: &AtomicU32,
        count_first: bool,
    ) -> u32 {
        // Ring the doorbell first (it checks that the slot has a waiter),
        // then publish the handover: a waiter woken early just sees LOCKED
        // for a moment and looks again.
        // `RonRaw` counts first, in one read-modify-write: its count shares
        // its line with the block's reference count, which arrivals write,
        // and a store after the ring would put that line's miss between
        // the doorbell and the publication (the woken waiter's CAS would
        // find the word not yet handed). A release whose scan then finds
        // nobody has counted too: its `seq` counts releases that scanned.
        // Relaxed, all: the counter is written only by owners, and the
        // lock's own Acquire/Release chain orders consecutive owners (for
        // a pooled block reused by another lock, the count's
        // read-modify-writes order the two); a torn view could only cost
        // route order anyway.
        let n = if count_first {
            handovers.fetch_add(1, Ordering::Relaxed)
        } else {
            handovers.load(Ordering::Relaxed)
        }
        .wrapping_add(1);
        match room.grant_next_bitmap_within(from, active, Some(n), || {
            crate::coverage::hit!("slots.stale_bit_cleared");
        }) {
            Some(t) => {
                crate::coverage::hit!("ron_raw.handover");
                if !count_first {
                    handovers.store(n, Ordering::Relaxed);
                }
                handed(t, n)
            }
            None => {
                crate::coverage::hit!("ron_raw.release_free");
                FREE
            }
        }
    }

    /// The word a release writes to hand the lock to its watcher
    /// ([`WATCH_SLOT`]), counting the handover in `handovers` as
    /// [`next_owner`](Self::next_owner) does. The caller stores it with
    /// [`publish`](Self::publish).
    #[inline]
    pub(crate) fn to_watcher(&self, handovers: &AtomicU32) -> u32 {
        crate::coverage::hit!("ron_raw.hand_to_watcher");
        // Relaxed, both: as in `next_owner` (written only by owners).
        let n = handovers.load(Ordering::Relaxed).wrapping_add(1);
        handovers.store(n, Ordering::Relaxed);
        handed(WATCH_SLOT, n)
    }

    /// Stores `next` (from [`next_owner`](Self::next_owner)): the owner's
    /// last access to the lock.
    #[inline]
    pub(crate) fn publish(&self, next: u32) {
        // Release: publishes the critical section to the next CAS winner
        // (load-bearing for HANDED: a takeover by another slot's waiter
        // synchronises with the old owner through this store only).
        self.state.store(next, Ordering::Release);
    }
}

/// How a waiting phase ended: `Break(Some(_))`, the waiter owns the lock;
/// `Break(None)`, it gave up (`keep_waiting` said no); `Continue`, on to
/// the next phase.
type Phase = ControlFlow<Option<PlaceToken>>;

/// One contended acquisition in progress: what its phases share.
struct Waiter<'a, const S: usize, R: Rooms<S>, K: FnMut() -> bool> {
    word: &'a Word,
    rooms: &'a R,
    s: usize,
    /// Doorbell spins between two questions to `keep_waiting`.
    ask_every: u32,
    keep_waiting: K,
    limit: SleepLimit,
    parking: Parking,
    clock: WaitClock,
    watch: Watch,
    /// The registered spin budget of the next round.
    spins: u32,
    /// Doorbell spins of this wait's registered rounds so far.
    spun: u32,
}

impl<'a, const S: usize, R: Rooms<S>, K: FnMut() -> bool> Waiter<'a, S, R, K> {
    /// One round: a shared round when the CPU looks shared; otherwise the
    /// unregistered looks (first round only), a registered wait (or an
    /// unregistered round when no room is to be had), then a yield or a
    /// park. `room` is kept across rounds while it is the lock's.
    fn round(&mut self, room: &mut Option<R::Room<'a>>, first_round: bool) -> Phase {
        if self.cpu_looks_shared(first_round) {
            return self.wait_shared_round(room);
        }
        if first_round {
            self.look_unregistered()?;
            crate::coverage::hit!("ron_raw.register");
        } else {
            crate::coverage::hit!("ron_raw.round_restart");
        }
        // Keep the room across rounds while it is still the lock's (a
        // pooled block then stays attached while this thread waits,
        // instead of being returned and claimed again every round).
        self.keep_room(room);
        match room {
            Some(room) => self.wait_registered(room)?,
            None => self.wait_unregistered_round()?,
        }
        self.yield_or_park()
    }

    /// Whether this round is a shared round. A registered waiter that is
    /// off the CPU would hold up the handovers addressed to it, so on a
    /// shared CPU a waiter does not register. A first round without a
    /// recent verdict asks the scheduler first ([`verdict_due`]: one timed
    /// yield). The crowd is counted from the second round on (a look at
    /// the block's count, a line every arrival writes), and marks the CPU
    /// shared for this thread's next waits too.
    fn cpu_looks_shared(&self, first_round: bool) -> bool {
        if first_round && verdict_due() {
            crate::coverage::hit!("ron_raw.ask_cpu");
            yield_cpu();
        }
        let crowded = !first_round && self.rooms.waiters() > cpus();
        if crowded {
            mark_cpu_shared();
        }
        crowded || cpu_looked_shared()
    }

    /// One unregistered look at the lock word, then `keep_waiting` asked
    /// if it did not take the lock.
    fn look_or_give_up(&mut self) -> Phase {
        if self.word.look::<S>(
            self.s,
            false,
            self.parking.is_watching(),
            None,
            &mut self.watch,
            LOCKED,
        ) {
            return ControlFlow::Break(Some(PlaceToken::at(self.s)));
        }
        if !(self.keep_waiting)() {
            crate::coverage::hit!("ron_raw.give_up");
            return ControlFlow::Break(None);
        }
        ControlFlow::Continue(())
    }

    /// Drops `room` if it is no longer the lock's, and enters one if it
    /// holds none (`None` when there is none to be had).
    fn keep_room(&self, room: &mut Option<R::Room<'a>>) {
        if room.as_ref().is_some_and(|r| !self.rooms.is_current(r)) {
            *room = None;
        }
        if room.is_none() {
            *room = self.rooms.enter();
        }
    }

    /// Shared round: look at the lock word a few times, a yield after
    /// each, then park holding the lock's room. The watcher (or a waiter
    /// that cannot park) yields instead, and a quick yield ends the shared
    /// mode.
    fn wait_shared_round(&mut self, room: &mut Option<R::Room<'a>>) -> Phase {
        crate::coverage::hit!("ron_raw.shared_round");
        for _ in 0..SHARED_LOOKS {
            self.look_or_give_up()?;
            yield_cpu();
        }
        // Hold the lock's room (a pooled block) while parked: the
        // releases of a lock with a block look for sleepers to wake.
        self.keep_room(room);
        if self.parking.park(self.limit) != Parked::Slept {
            yield_cpu();
        }
        ControlFlow::Continue(())
    }

    /// Unregistered looks (first round only): TTAS with backoff, until a
    /// handover shows in the word.
    fn look_unregistered(&mut self) -> Phase {
        let mut pause = 1u32;
        // Waiters are registered: the lock travels among them by
        // handovers, and a look at the word now would only pull its line
        // from the holder (and its next write would have to pull it
        // back). Join them at once (not on a shared CPU: see
        // `cpu_looks_shared`).
        // (Not under loom: one more schedule point per arrival would spend
        // the models' execution budgets on a load that only steers; the
        // registration it leads to is the one after these looks, which
        // the models cover.)
        let looks = if !cfg!(loom) && self.rooms.crowded() {
            crate::coverage::hit!("ron_raw.join_crowded");
            0
        } else {
            UNREGISTERED_LOOKS
        };
        for _ in 0..looks {
            self.look_or_give_up()?;
            // A handover in the word: waiters are registered and the lock
            // travels among them, so join them now rather than keep
            // looking at the word (each look a miss queued behind its
            // writes).
            if self.watch.saw_handover() {
                crate::coverage::hit!("ron_raw.join_early");
                break;
            }
            for _ in 0..pause {
                spin_loop();
            }
            pause = (pause * 2).min(UNREGISTERED_PAUSE_MAX);
        }
        ControlFlow::Continue(())
    }

    /// The word a CAS of a registered wait writes, `i` doorbell spins into
    /// its round: `R::HELD` (the owner keeps its block reference for its
    /// release) once the wait has spun [`KEEP_AFTER_SPINS`], else
    /// `LOCKED` (the reference is dropped as the lock is taken).
    #[inline]
    fn held(&self, i: u32) -> u32 {
        if self.spun.saturating_add(i) >= KEEP_AFTER_SPINS {
            R::HELD
        } else {
            LOCKED
        }
    }

    /// Registered wait in `room`: spin on the doorbell and look at the
    /// lock word only when it rings, right after registering and at the
    /// end of the round (a look per few spins by every waiter would queue
    /// a miss on the word's line behind each of its writes: a TTAS storm).
    fn wait_registered(&mut self, room: &SlotTable<S>) -> Phase {
        let s = self.s;
        room.register_clearing_bell(s);
        crate::coverage::hit!("ron_raw.in_slot");
        // The look right after registering catches a release that scanned
        // the bitmap just before we registered (it frees the lock instead
        // of ringing us).
        let mut looks_due = 1;
        let mut i = 0;
        while i < self.spins {
            if looks_due > 0 {
                looks_due -= 1;
                let held = self.held(i);
                if self.word.look_clearing(
                    s,
                    true,
                    self.parking.is_watching(),
                    Some(room),
                    &mut self.watch,
                    held,
                    false,
                ) {
                    // Keep the slot's bit: this thread will likely
                    // register again soon, and the next release that finds
                    // the slot empty clears it.
                    room.unregister_keep_bit(s);
                    return ControlFlow::Break(Some(PlaceToken::at(s)));
                }
                // A doorbell rings just before the handover is published:
                // pause before the next look.
                spin_loop();
                i += 1;
            }
            self.ask_registered(room, self.held(i))?;
            if looks_due > 0 {
                continue;
            }
            // Bounded: at most the round's remaining spins.
            let n = self.ask_every.min(self.spins.saturating_sub(i));
            let (used, rang) = wait_bell(room.word(s), n);
            i += used;
            if let Some(w) = rang {
                crate::coverage::hit!("ron_raw.bell");
                looks_due = answer_bell(room.word(s), w);
                if looks_due > 0 && self.word.take_noted(room, s, self.held(i)) {
                    room.unregister_keep_bit(s);
                    return ControlFlow::Break(Some(PlaceToken::at(s)));
                }
            }
        }
        // Leave the slot, so no handover targets us while we are off the
        // CPU; a handover to our slot that raced with leaving is taken
        // here (any waiter of the slot may take it), and so is a lock
        // freed by a release that raced with our registration, or a stale
        // handover (this look keeps the watch going).
        self.spun = self.spun.saturating_add(i);
        room.unregister::<true>(s);
        let held = self.held(0);
        if self.word.look(
            s,
            true,
            self.parking.is_watching(),
            Some(room),
            &mut self.watch,
            held,
        ) {
            crate::coverage::hit!("ron_raw.round_end_take");
            return ControlFlow::Break(Some(PlaceToken::at(s)));
        }
        ControlFlow::Continue(())
    }

    /// Asks `keep_waiting` while registered in `room`. On a no, leaves the
    /// slot and takes a handover to it that raced with leaving (see
    /// `Word::acquire_slow_while`).
    fn ask_registered(&mut self, room: &SlotTable<S>, held: u32) -> Phase {
        let s = self.s;
        // `keep_waiting` is user code: if it panics, leave the slot before
        // unwinding (the room, a block's reference, drops on its own).
        let leave = OnUnwind::new(|| room.unregister::<true>(s));
        let go_on = (self.keep_waiting)();
        leave.disarm();
        if go_on {
            return ControlFlow::Continue(());
        }
        room.unregister::<true>(s);
        if self.word.look(
            s,
            true,
            self.parking.is_watching(),
            Some(room),
            &mut self.watch,
            held,
        ) {
            crate::coverage::hit!("ron_raw.give_up_raced_handover");
            return ControlFlow::Break(Some(PlaceToken::at(s)));
        }
        crate::coverage::hit!("ron_raw.give_up_registered");
        ControlFlow::Break(None)
    }

    /// Unregistered round, when no room is to be had (pool exhausted):
    /// plain TTAS for the round.
    fn wait_unregistered_round(&mut self) -> Phase {
        crate::coverage::hit!("ron_raw.unregistered_round");
        for i in 0..self.spins {
            if i % 8 == 0 {
                self.look_or_give_up()?;
            }
            spin_loop();
        }
        ControlFlow::Continue(())
    }

    /// Yield or park: park when the wait grew long (sleep, or keep the
    /// lock's watch awake); otherwise, and as the watcher, give the CPU
    /// away, and learn from how long that took whether other threads want
    /// this CPU (spin little) or not (spin longer, keep the route order).
    fn yield_or_park(&mut self) -> Phase {
        let parked = if self.clock.long() {
            self.parking.park(self.limit)
        } else {
            Parked::Not
        };
        if parked != Parked::Slept {
            self.spins = give_cpu_away(self.spins);
        }
        if !(self.keep_waiting)() {
            // Not registered now (the round ended with leaving the slot
            // and a last look); the room is dropped on return.
            crate::coverage::hit!("ron_raw.give_up");
            return ControlFlow::Break(None);
        }
        ControlFlow::Continue(())
    }
}
