//! A deterministic virtual many-core machine for lock code.
//!
//! `ron-vm` runs real, unchanged concurrent code on `n` virtual CPUs and
//! prices every shared-memory operation with a core-to-core latency matrix,
//! so that a 2-CPU host can answer "what would this lock do on a 128-CPU,
//! 2-socket machine". It is a **performance model**, sequentially
//! consistent, not a weak-memory checker.
//!
//! ## Executor
//! Each virtual thread is a stackful fiber (`corosensei`) bound to one
//! virtual CPU, with its own clock (integer ps). All fibers run on the
//! calling OS thread. Instrumented code calls the hooks ([`on_load`],
//! [`on_store`], [`on_rmw`], [`pause`], [`yield_now`], [`work`]): a memory
//! hook first suspends the fiber until no other runnable fiber has a smaller
//! `(clock, index)`, then charges the access at the fiber's clock and moves
//! the clock to the access's completion; the real operation runs right after
//! the hook. So every shared-memory operation happens in one global order
//! consistent with virtual time, and a run depends only on its inputs: the
//! same program and seed give the same result, byte for byte. Code between
//! two hooks is free (its time is not modelled unless it calls [`work`]).
//!
//! ## Cost model
//! Lines of [`Costs::line_bytes`] (64; 128 models adjacent-line prefetch)
//! keyed by address, each with MESI-like state: one exclusive owner, or a set
//! of sharers, plus `busy_until`, the time before which the next transfer of
//! the line cannot start. `L[a][b]` is the matrix entry (one-way handover
//! latency, as measured by a ping-pong: round trip / 2).
//!
//! A miss does not take effect when it is issued but when the line arrives,
//! and until it arrives the line's holders keep using it (so a lock holder
//! that re-takes its lock before a waiter's request arrives does so with a
//! hit). How misses of one line queue is [`Costs::line_model`]:
//!
//! * [`LineModel::Directory`] (the default): the line's home takes one
//!   request per [`Costs::dir_occupancy_ns`]. A read starts when the home is
//!   free and the last write asked for has taken effect, and comes from
//!   that writer, else the owner, else the nearest sharer, else DRAM
//!   (`cold_ns`); reads asked for together overlap. A write (store or RMW)
//!   starts when the home is free and every transfer asked for before it
//!   is over, and comes from the CPU that asked last, else the owner, else
//!   the nearest sharer.
//! * [`LineModel::Relay`] (the first model, [`Costs::relay`]): every miss,
//!   read or write, queues behind the transfer asked for before it
//!   (`busy_until`) and comes from the CPU that asked last.
//!
//! | access by CPU `me` issued at `t` | takes effect at | caller goes on at | new state |
//! |---|---|---|---|
//! | load, `me` owns or shares the line | `t` | `t + hit_ns` (1) | unchanged |
//! | store / RMW, `me` owns the line | `t` | `t + hit_ns` (+ `rmw_ns`) | unchanged |
//! | store / RMW, `me` shares the line, no transfer pending | `t` | `t` + the slowest invalidation `max L[me][s]` over the other sharers + `hit_ns` (+ `rmw_ns`) | owned by `me` |
//! | any other access (a miss) | `a = start + L[src][me]`, `start` as above (relay: `max(t, busy_until)`) | load: `a`; store / RMW: `max(a, start + invalidation) + hit_ns` (+ `rmw_ns`) | load: shared by the old owner, the sharers and `me`; store / RMW: owned by `me` |
//! | [`access_all`] of `k` lines | each miss as above, up to [`Costs::mlp`] outstanding (the next issued when the earliest arrives) | the last completion | as above |
//! | [`pause`] | | `t + pause_ns` (40: an x86 `pause` is ~140 cycles on Skylake and later) | - |
//! | [`yield_now`] | | `t + yield_ns` (300: a `sched_yield` syscall with nothing else to run); then, if a thread queued on its CPU is runnable, it goes behind it (see below) | - |
//! | [`work`]`(ns)` | | `t + ns` | - |
//!
//! A ping-pong between CPUs `a` and `b` thus pays `L[a][b] + L[b][a]` per
//! round trip (plus hits); a release seen by `k` spinners is re-read by
//! them `L + j * occupancy` after it (relay: `(j + 1) * L`, one after the
//! other); `k` independent misses of one thread cost `ceil(k / mlp)`
//! transfers.
//!
//! ## Approximations
//! * Sequential consistency: no store buffers, no reordering, no speculative
//!   loads; fences are free. A plain store stalls its writer like an RMW.
//! * The line state of a miss is decided when it is issued (source,
//!   queue position) and applied when it arrives; in between, other
//!   accesses see the old state.
//! * The directory's occupancy is one number for every line and machine;
//!   writes to one line are serialized at full latency under both models.
//! * Only [`access_all`] overlaps misses; every other access of a thread
//!   waits for the one before (no out-of-order execution).
//! * Invalidations run in parallel with the data transfer and do not delay
//!   later readers; the home agent / directory, queueing in the
//!   interconnect (other than per line), caches' capacity, DRAM, SMT
//!   resource sharing and frequency are not modelled.
//! * Local computation between hooks is free; workloads charge it with
//!   [`work`].
//! * Scheduling: see below.
//!
//! Checked against a real 16-CPU Intel Xeon (one socket, one L3; the
//! repository's `docs/hardware.md` has the numbers, `vm-hwcheck` the
//! command): with no data in the critical section that machine handed a
//! slot-per-CPU RON lock (2 line transfers per handover here) and an MCS
//! lock (5) over in about the same time, where this model prices the
//! first far below the second. The per-access accounting above misses a
//! cost per handover of that machine, or overlaps it allows, so ratios
//! between locks with few and many transfers per handover come out wider
//! here than there.
//!
//! ## Scheduler and futex
//! Each virtual thread is pinned to its CPU (no migration). With one
//! thread per CPU nothing below happens but futex sleeps, and a run is the
//! same as without a scheduler. With more, each CPU runs one thread at a
//! time and keeps the others in a FIFO run queue:
//!
//! * **Time slices.** The running thread is preempted once its slice
//!   ([`Costs::slice_ns`], 3 ms: Linux EEVDF's base slice on 8 CPUs or
//!   more) is over and a queued thread is runnable, at its next
//!   *preemption point*: a memory access (or [`access_all`]), a
//!   [`yield_now`] or a futex call ([`pause`] and [`work`] run to their
//!   end). It goes to the back of the queue.
//! * **Switches.** A CPU that changes threads at `t` starts the next one
//!   (the first in queue order runnable by then) at
//!   `max(t + switch_ns, when it became runnable)` ([`Costs::switch_ns`],
//!   1.2 us: a futex ping-pong of two threads on one core), with a new
//!   slice.
//! * **`sched_yield`** ([`yield_now`]): costs `yield_ns`; then, if a queued
//!   thread is runnable, the caller goes to the back of the run queue and
//!   the CPU switches; else it returns.
//! * **Futex** ([`futex_wait`], [`futex_wake`], or the methods of
//!   [`atomic::AtomicU32`]): a wait loads the word (priced) and, if it
//!   still holds the expected value, the thread sleeps after one syscall
//!   (`yield_ns`): it is not scheduled and costs no CPU time; its CPU runs
//!   the next queued thread or idles. A wake costs its caller one syscall
//!   and makes up to `n` sleepers (first asleep first) runnable
//!   [`Costs::wake_ns`] after the call (2.7 us: a reschedule IPI to the
//!   sleeper's idle CPU, [`Costs::ipi_ns`], and a switch): a sleeper whose
//!   CPU is idle runs then; else it joins the back of the run queue (no
//!   wake-up preemption). A timed wait's timer wakes it the same way. A
//!   run in which every thread left sleeps with no timer stops with a
//!   panic (a lost wake-up).
//! * **`membarrier(PRIVATE_EXPEDITED)`** ([`membarrier`]): the caller
//!   pays a syscall (`yield_ns`) and [`Costs::ipi_ns`] (1.5 us) per other
//!   CPU running a thread of the process at that moment; each of those
//!   threads loses [`Costs::ipi_handler_ns`] (500 ns) unless the VM has
//!   it suspended as an idle waiter or its miss is in flight.
//! * A suspended waiter ([`spin_while`], [`park_looks`]) on a CPU with a
//!   queued thread is resumed at the first look that must run for real: a
//!   preemption point, or a yield with a runnable thread queued.
//!
//! ## Using it from instrumented code
//! [`atomic`] has drop-in instrumented atomics, [`Instant`] a virtual
//! clock, [`FiberLocal`] per-virtual-thread storage, and [`current_cpu`] the
//! virtual CPU. ron-core compiled with `--cfg ron_vm` uses all of them.
//! A spin loop written with [`spin_while`] (or the atomics' `spin_while`)
//! costs the host one fiber switch per write to the line it watches
//! instead of one per look, with the same results
//! ([`Costs::suspend_spinners`]); so does a waiting loop paced by a relax
//! policy (pauses that double up to a cap, then yields) that calls
//! [`park_looks`] after each relax, as ron-core's locks do under
//! `cfg(ron_vm)`. With both, every ron-core lock simulates a 128-CPU
//! full-contention point of 20,000 acquisitions in under 5 s of host time
//! (see `docs/vm.md`, "Speed of the VM").
#![warn(missing_docs)]

pub mod atomic;
mod cost;
mod exec;
mod local;
mod machine;
mod sched;
mod stacks;
mod time;

pub use cost::{Access, CostStats, LineCost};
pub use exec::{
    ACCESS_ALL_MAX, Pacing, Report, Vm, access, access_all, cost_stats, current_cpu, futex_wait,
    futex_wake, in_vm, interleave, line_costs, membarrier, now_ns, now_ps, on_load, on_rmw,
    on_store, park_looks, pause, spin_while, thread_index, work, yield_now,
};
pub use local::FiberLocal;
pub use machine::{Costs, LineModel, MAX_CPUS, Machine, MachineError, ns_to_ps};
pub use time::Instant;
