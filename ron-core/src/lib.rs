//! Topology-routed spinlocks: RON, nxtRON, shRON and their baselines, as
//! [`lock_api`] 0.5 `RawMutex` types.
//!
//! A lock handover moves the lock word and the data it protects between
//! cores, and on chiplet and multi-socket CPUs that costs anywhere from ~20
//! to ~200+ ns depending on the pair. RON measures the core-to-core latency
//! once, computes a short one-way circular tour through all CPUs (the
//! [`route`]), and hands the lock to the next *waiting* CPU along the tour:
//! consecutive owners are neighbours, and every waiter is reached within one
//! lap.
//!
//! ```
//! use ron_core::RonMutex;
//! use std::sync::Arc;
//!
//! let counter = Arc::new(RonMutex::new(0u64));
//! let handles: Vec<_> = (0..4)
//!     .map(|_| {
//!         let c = Arc::clone(&counter);
//!         std::thread::spawn(move || {
//!             for _ in 0..1000 {
//!                 *c.lock() += 1;
//!             }
//!         })
//!     })
//!     .collect();
//! for h in handles {
//!     h.join().unwrap();
//! }
//! assert_eq!(*counter.lock(), 4000);
//! ```
//!
//! ## Using it
//! In `Cargo.toml`:
//!
//! ```toml
//! [dependencies]
//! ron-core = "0.1"  # the locks
//! ron-topo = "0.1"  # install(): this machine's route, once at start
//! ```
//!
//! `lock_api` is re-exported as [`ron_core::lock_api`](lock_api), so any lock
//! plugs into its `Mutex` without a `lock_api` dependency of your own (and
//! without a version to keep in step):
//!
//! ```
//! use ron_core::lock_api::Mutex;
//! use ron_core::{NxtRon, ShRon};
//!
//! let a: Mutex<NxtRon, u32> = Mutex::new(1);
//! let b: Mutex<ShRon, u32> = Mutex::new(2);
//! assert_eq!(*a.lock() + *b.lock(), 3);
//! ```
//!
//! ## The locks
//! Every lock is a `lock_api::RawMutex` whose guard state (`RawMutex::Guard`)
//! carries what its unlock needs ([`PlaceToken`]: the acquirer's slot, row
//! or local lock; `()` for the others), so unlocking never depends on the
//! CPU the thread runs on at that moment. Each lock lives in the file named
//! after it: its module docs hold its state table, guarantees and cost, and
//! its `RawMutex` impl is written out at the bottom under a SAFETY argument
//! that names the rows it relies on.
//!
//! ## Which lock to pick
//! | pick | when |
//! |---|---|
//! | [`RonGrant`] ([`RonMutex`]) | the default: 8 bytes, so a lock per object is fine; a load and a CAS to lock (the CAS alone on a lock the thread has not met lately, such as one of many cold ones) and a load and a store to unlock (all in its 8 bytes) when uncontended; when contended, nxtRON's grant hands the lock along the route to the next slot whose waiter spins on a CPU of its own; waiters on a shared CPU (or waiting over 1 ms) park on a futex. Measured against `RonRaw`, `NxtRon` and parking_lot: the README's "Which lock to pick" |
//! | [`RonRaw`] | the handover in the lock word, which a running waiter takes over from a preempted grantee: [`RonRw`]'s writers' queue, whose writers barge; as a mutex it runs level with `RonGrant` on 2 CPUs and below it on many cores |
//! | [`RonPark`] (`std`) | waiters should sleep instead of spinning (services with many more threads than cores, CPU quotas); also the faster of the two for a hot lock on a one-L3 many-core machine, at 2304 bytes (measured: the README's "Which lock to pick") |
//! | [`NxtRon`], [`RonTicket`] ([`NxtRonInline`], [`RonTicketInline`]) | you need a stated waiting bound with route order, and threads do not outnumber CPUs: 8 bytes, one slot per CPU from a process-wide pool while contended (the `Inline` forms keep `S` slots in the lock). When they do, `RonTicket`'s waiters whose CPU looks shared wait unqueued for their first millisecond, so it does not collapse (measured: the README's "Which lock to pick") |
//! | [`ShRon`] | many locks, RON's per-CPU order, and memory matters: 8 bytes a lock, the waiters in one process-wide table |
//! | [`RonInline`] | `RonRaw` with its slots in the lock (no pool indirection on the handover path, 2176 bytes each) |
//! | [`RonRw`] ([`RonRwLock`]) | read-mostly data (writes well under one operation in ten): reads spread over a cache line per CPU once they are contended (and stay spread across writes), writers take turns along the route; where many threads write more often than that, a writer-barging `RwLock` (parking_lot's) serves them better |
//! | [`RonReentrantMutex`] | the holder must be able to lock again |
//! | [`RonPlock`], [`Ron`] ([`RonPlockInline`]) | the RON paper's Algorithms 3 and 1, to compare with |
//! | [`Cna`], [`CBoMcs`], [`Fsl`], [`Mcs`], [`Ticket`], [`Ttas`], [`Tas`] | the NUMA-aware, queue and test-and-set baselines, to compare with |
//!
//! With the `lock_api_04` feature every lock is also a `lock_api` 0.4 raw
//! lock (`api04`).
//!
//! ## Where things are
//! | file | role |
//! |---|---|
//! | `ron_grant.rs` | [`RonGrant`], the default: its waiting over the plock grant (`plock.rs`) |
//! | `ron_raw/` | [`RonRaw`] (`mod.rs`) and [`RonInline`] (`inline.rs`): lock word (`word.rs`), waiting policy (`wait.rs`), parking (`park.rs`), pooled slot blocks (`pool.rs`) |
//! | `ron_park.rs` | [`RonPark`]: RON slots with futex sleeping (`std`) |
//! | `ron_rw.rs` | [`RonRw`]: the reader-writer lock |
//! | [`reader_table`] | the process-wide visible-readers table of `RonRw` |
//! | [`reentrant`] | [`RonReentrantMutex`] and its thread-id source |
//! | `api04.rs` | `lock_api` 0.4 impls (feature `lock_api_04`) |
//! | `nxt_ron.rs` | [`NxtRon`]: RON Algorithm 3 with a bitmap successor search |
//! | `ron_plock.rs` | [`RonPlock`]: RON Algorithm 3 with a linear successor scan |
//! | `plock.rs` | the RON Algorithm 3 core shared by `NxtRon`, `RonPlock` and `RonGrant` (pooled and inline) |
//! | `ron_ticket.rs` | [`RonTicket`]: RON Algorithm 2, a ticket lock per slot |
//! | `ron.rs` | [`Ron`]: RON Algorithm 1 with a claim step |
//! | `sh_ron.rs` | [`ShRon`]: one-word RON over a process-wide wait table |
//! | `cna.rs` | [`Cna`]: compact NUMA-aware MCS |
//! | `cbo_mcs.rs` | [`CBoMcs`]: cohort lock, per-group MCS + global `Ttas` |
//! | `fsl.rs` | [`Fsl`]: two-level ticket lock over route groups |
//! | `mcs.rs` | [`Mcs`]: MCS queue lock |
//! | `mcs_queue.rs` | the waiters-only MCS queue shared by `Mcs`, `Cna`, `CBoMcs` |
//! | `ticket.rs` | [`Ticket`], and the ticket core `Fsl` uses at both levels |
//! | `ttas.rs` | [`Ttas`]: test-and-test-and-set |
//! | `tas.rs` | [`Tas`]: test-and-set |
//! | `flag.rs` | the test-and-set flag under `Tas`, `Ttas` and the slotted locks' `in_use` |
//! | `in_use.rs` | the slotted locks' `in_use` flag and their shared entry points |
//! | `slots.rs` | slot words, the waiting-slot bitmap, the slot from the CPU hint |
//! | [`token`] | [`PlaceToken`], the guard of the slot, row and group locks |
//! | [`route`] | the process-wide route (CPU -> position on the tour) |
//! | [`groups`] | CPU -> group table (`Cna`, `CBoMcs`) |
//! | [`hint`] | the CPU hint and its provider |
//! | [`relax`] | waiting policies (`Relax`) |
//! | [`condvar`] | [`RonCondvar`] / [`Condvar`] for every lock |
//! | [`timed`] (`std`) | deadlines for `lock_api`'s timed locking |
//! | `futex.rs` | futex wait and wake (`std`: `RonPark`, `RonGrant`, `RonRaw`, `RonCondvar`) |
//! | `raw_impl.rs` | the `Default` / `Debug` macro every lock uses |
//! | `unwind.rs` | drop guards that clean up or abort on unwinding |
//! | `sync.rs` | atomics from `core`, loom, shuttle or the VM |
//! | `coverage.rs` | protocol-path counters for the verification suites |
//!
//! Every lock works with [`Condvar`] (`lock_api::Condvar` over
//! [`RonCondvar`]), and `RonGrant`, `RonRaw`, `RonInline`, `RonPark`, `Ron`, `Tas` and `Ttas` also with
//! `lock_api`'s timed locking (`try_lock_for`).
//!
//! ## Loading the route
//! The locks hand over along the process-wide [`route`]. Until one is
//! installed they use the identity order (correct, just not
//! topology-aware). Call `ron_topo::install()` once at start: it loads this
//! machine's calibration file (written by `ron calibrate`) or, without one,
//! a route derived from the topology, and installs it with
//! [`route::install`]. Locks may already exist and be in use.
//!
//! ## The CPU hint is only a hint
//! Locks learn where a thread runs from [`hint`] and map it to a slot
//! through the [`route`]. A thread may migrate at any moment, share a CPU
//! with others, or get a garbage id: none of it can break mutual exclusion
//! or progress in any lock here, it can only cost speed.
//!
//! ## User code that panics
//! A [`Relax`](relax::Relax) policy or the [`hint`] provider may panic: a
//! waiter then unwinds with nothing left behind, or, in the FIFO queue and
//! ticket locks (a queued waiter cannot leave without waiting for its
//! turn), the process aborts; an unlock releases the lock before it
//! unwinds. Each lock's guarantees say which; see also
//! `docs/panic-safety.md`.
//!
//! ## Features
//! * `std` (default): `sched_getcpu`-based hints, thread-local caches, the
//!   yielding relax policies. Without it the crate is `#![no_std]` and needs
//!   no allocator; register a hint provider with [`hint::set_provider`].
//! * `lock_api_04`: `lock_api` 0.4's raw lock traits for every lock, next
//!   to 0.5's (`api04`: direct impls, and `Api04<L>` keeping the 0.5 guard
//!   state in the lock).
//!
//! ## Verification
//! Every protocol has a loom model (`RUSTFLAGS="--cfg loom" cargo test -p
//! ron-core --release --test loom`). Loom explores the C11 memory model as
//! implemented by loom: it treats SeqCst like AcqRel and does not explore
//! load buffering, so a passing model is strong evidence on x86 and good
//! evidence, not a proof, on ARM.
#![cfg_attr(not(feature = "std"), no_std)]
#![warn(missing_docs)]

#[cfg(all(feature = "lock_api_04", not(loom)))]
pub mod api04;
mod backoff;
pub mod condvar;
#[doc(hidden)]
pub mod coverage;
mod flag;
#[cfg(feature = "std")]
mod futex;
pub mod groups;
pub mod hint;
mod in_use;
mod lately;
pub mod plock;
mod raw_impl;
pub mod reader_table;
#[cfg(not(loom))]
pub mod reentrant;
pub mod relax;
pub mod route;
pub mod slots;
mod sync;
#[cfg(feature = "std")]
pub mod timed;
pub mod token;
mod unwind;

pub mod nxt_ron;
pub mod ron;
pub mod ron_grant;
#[cfg(feature = "std")]
pub mod ron_park;
pub mod ron_plock;
pub mod ron_raw;
pub mod ron_rw;
pub mod ron_ticket;

pub mod cbo_mcs;
pub mod cna;
pub mod fsl;
pub mod mcs;
mod mcs_queue;
pub mod sh_ron;
pub mod tas;
pub mod ticket;
pub mod ttas;

#[cfg(not(loom))]
pub use condvar::Condvar;
pub use condvar::RonCondvar;
pub use nxt_ron::{NxtRon, NxtRonInline};
#[cfg(not(loom))]
pub use reentrant::RonReentrantMutex;
pub use ron::Ron;
pub use ron_grant::RonGrant;
#[cfg(feature = "std")]
pub use ron_park::RonPark;
pub use ron_plock::{RonPlock, RonPlockInline};
pub use ron_raw::{RonInline, RonRaw};
pub use ron_rw::RonRw;
#[cfg(not(loom))]
pub use ron_rw::RonRwLock;
pub use ron_ticket::{RonTicket, RonTicketInline};
pub use token::PlaceToken;
#[allow(deprecated)]
pub use token::SlotToken;

/// The `lock_api` crate these locks implement, so that users need no
/// `lock_api` dependency of their own (`ron_core::lock_api::Mutex`).
pub use lock_api;

pub use cbo_mcs::CBoMcs;
pub use cna::Cna;
pub use fsl::Fsl;
pub use mcs::Mcs;
pub use sh_ron::ShRon;
pub use tas::Tas;
pub use ticket::Ticket;
pub use ttas::Ttas;

/// A mutex protected by [`RonGrant`], the recommended RON lock.
#[cfg(not(loom))]
pub type RonMutex<T> = lock_api::Mutex<RonGrant, T>;
/// The guard of a [`RonMutex`].
#[cfg(not(loom))]
pub type RonMutexGuard<'a, T> = lock_api::MutexGuard<'a, RonGrant, T>;
