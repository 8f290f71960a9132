//! [`RonPlock`]: RON Algorithm 3, per-slot waiter count and grant, with a
//! linear successor scan; one slot per CPU from a pool
//! ([`RonPlockInline`]: `S` slots in the lock).
//!
//! ## States
//! The protocol is RON Algorithm 3, shared with [`NxtRon`]
//! in [`plock`](crate::plock) (which has the full argument and where the
//! slots live). `in_use` is the lock's test-and-set flag; each of the `n`
//! slots (`n` = [`active_slots()`](crate::ron_raw::active_slots) in the
//! lock's pooled block, or `S` inline) holds a waiter count `c` and a
//! GRANT bit.
//!
//! | `in_use` | slot `s` (count, GRANT) | meaning |
//! |---|---|---|
//! | false | (0, 0) | unlocked, nobody waits in `s` |
//! | false | (c > 0, 0) | unlocked; `s`'s waiters are about to see it and CAS `in_use` |
//! | true | (c, 0) | held; `c` threads wait in `s` |
//! | true | (c > 0, 1) | the holder handed the lock to `s`; exactly one of its `c` waiters will take the grant and own the lock |
//!
//! The unlock finds the next waiting slot by reading the slot words one by
//! one from the acquirer's slot + 1 around the ring (own slot last). The
//! lock is [`NxtRon`] with `BITMAP = false` (one implementation of the
//! protocol, two successor searches).
//!
//! ## Guarantees
//! | property | holds |
//! |---|---|
//! | mutual exclusion | under any schedule and any CPU hint |
//! | progress | yes |
//! | bounded waiting | per slot: at most `n - 1` grants to other slots plus one racing fast-path acquisition; pooled, none for a waiter that found the pool exhausted (it waits unregistered and retries) |
//! | `Relax` panic | the waiter leaves its slot (passing on a grant it would strand) and unwinds |
//! | hint panic in unlock | the lock is released (scan from slot 0) before the unwind |
//!
//! ## Cost
//! `RonPlock`: 8 bytes, plus a pooled block while contended (as
//! [`NxtRon`]); uncontended a load and a CAS, a load of the block index
//! and a release store. `RonPlockInline<S>`: `128 * (S + 1)` bytes;
//! uncontended a load and a CAS, a scan of `S` slot words and a store.

use crate::NxtRon;
use crate::nxt_ron::NxtRonInline;
use crate::relax::DefaultRelax;

/// RON-plock: one slot per CPU of the route (pooled), each a waiter count
/// and a grant flag; any waiter of the granted slot may take the lock.
/// [`NxtRon`] without its bitmap: the same type with `BITMAP = false`, so
/// the unlock scans the slot words linearly. The protocol and its state
/// table are in [`plock`](crate::plock)'s docs.
///
/// * **Guarantees:** mutual exclusion under any schedule and hint;
///   progress; bounded waiting *per slot*: once a thread has registered,
///   at most `n - 1` grants to other slots plus one racing fast-path
///   acquisition happen before its slot is granted, `n` =
///   [`active_slots()`](crate::ron_raw::active_slots). With one thread per
///   CPU that is a per-thread bound of `n`; threads sharing a slot race
///   for its grant. None while the pool is exhausted (the waiter waits
///   unregistered and retries).
/// * **Panics:** a waiter whose `Relax` policy panics leaves its slot
///   (the last waiter of a granted slot takes the grant and hands the
///   lock on), then unwinds; an unlock whose CPU hint panics releases
///   the lock (scanning from slot 0) before it unwinds. The lock stays
///   usable (`docs/panic-safety.md`).
/// * **Cost:** 8 bytes per lock, plus a pooled block while contended.
///   Uncontended lock+unlock: a load and a CAS, a load of the block index
///   and a release store; a contended release scans `n` slot words (the
///   successor search nxtRON removes).
/// * **When not to use:** threads outnumbering CPUs with a relax policy
///   that keeps spinning: a grant to a descheduled waiter stalls every
///   other thread until that waiter runs (use [`RonRaw`](crate::RonRaw)).
///
/// ```
/// use ron_core::RonPlock;
/// static M: lock_api::Mutex<RonPlock, Vec<u32>> = lock_api::Mutex::new(Vec::new());
/// M.lock().push(7);
/// assert_eq!(M.lock().len(), 1);
/// ```
pub type RonPlock<R = DefaultRelax> = NxtRon<R, false>;

/// RON-plock with its `S` slots in the lock (`128 * (S + 1)` bytes, no
/// pool): [`NxtRonInline`] with `BITMAP = false`. Guarantees as
/// [`RonPlock`] with `n = S`, and no pool to run out.
///
/// ```
/// use ron_core::RonPlockInline;
/// static M: lock_api::Mutex<RonPlockInline<16>, u32> = lock_api::Mutex::new(0);
/// *M.lock() += 1;
/// assert_eq!(*M.lock(), 1);
/// ```
pub type RonPlockInline<const S: usize, R = DefaultRelax> = NxtRonInline<S, R, false>;
