//! Lock-policy simulator: replays lock admission policies as a
//! discrete-event model over a recorded core-to-core latency matrix, to show
//! what each policy pays per handover, and how fair it is, on 32-384 CPU
//! machines this project cannot run on.
//!
//! # The model
//! `T` threads run on `T` distinct CPUs. Each one loops forever:
//! 1. request the lock;
//! 2. wait until the policy admits it (a free lock is taken at once);
//! 3. hold it for `L[previous owner's CPU][my CPU] + CS` ns: the lock word
//!    and the data it guards come from the previous owner's cache first;
//! 4. release it; if threads wait, the [`Policy`] picks the next owner,
//!    which is admitted at that same instant;
//! 5. run a non-critical section of `nCS * U(0.85, 1.15)` ns.
//!
//! Each thread makes its first request at a uniform point of `[0, nCS + CS)`
//! (a random arrival order even at nCS = 0). Events
//! (requests and releases) sit in a binary heap keyed by `f64` ns and an
//! insertion counter, so a run is deterministic for a seed
//! ([`SplitMix64`] from ron-stats drives the nCS jitter and, on a second
//! stream, the randomized TTAS race). Statistics leave out a warm-up
//! ([`SimConfig::warmup_fraction`], 10% by default).
//!
//! Outputs ([`SimReport`]): admissions per simulated second, mean and p99
//! handover cost, mean wait, the per-thread admission counts with their
//! coefficient of variation and the fairness factor (the busier half's
//! share: 0.5 is perfectly fair).
//!
//! # Closed forms the tests check
//! - At full contention (nCS = 0, all `n` CPUs) RON hands over along the
//!   route, so its mean handover is `tour_cost(route) / n`.
//! - FIFO's successive owners are unrelated once the nCS jitter has mixed
//!   the queue, so its mean handover approaches
//!   [`Costs::fifo_mean`].
//! - The two worked examples of the RON paper ([`Simulator::drain_order`]).
//!
//! # Limits (what the model leaves out)
//! - Only the handover is priced: no lock-word contention traffic, no
//!   spinning waiters' bandwidth, no memory-bandwidth or SMT sharing
//!   effects; a CS costs the same on every CPU.
//! - The latency of a handover is the recorded one-way cache-line latency;
//!   a real CS that touches K lines pays roughly K times that.
//! - Admission is instantaneous at the release (no wake-up latency, no
//!   preemption, no oversubscription: one thread per CPU).
//! - The previous owner's line is what the next owner fetches even after
//!   the lock was idle; nothing is evicted.
//! - TTAS is a race model (see [`policy::Ttas`]), not a cache-coherence
//!   simulation; CNA and cohort use matrix-derived groups
//!   ([`groups::cluster`]), which need not match the OS's NUMA nodes.
//!
//! # Example
//! ```
//! use ron_sim::{Costs, PolicyKind, SimConfig, Simulator};
//! // 8 CPUs, two groups of 4: 10 ns inside, 100 ns across.
//! let costs = Costs::from_fn(8, |i, j| {
//!     if i == j { 0.0 } else if i / 4 == j / 4 { 10.0 } else { 100.0 }
//! }).unwrap();
//! let sim = Simulator::new(costs, (0..8).collect()).unwrap();
//! let cfg = SimConfig { threads: 8, ncs_ns: 100.0, duration_ns: 2e6, ..SimConfig::default() };
//! let fifo = sim.run(PolicyKind::Fifo, &cfg).unwrap();
//! let ron = sim.run(PolicyKind::Ron, &cfg).unwrap();
//! assert!(ron.handover_mean_ns < fifo.handover_mean_ns);
//! assert!(ron.throughput_per_s > fifo.throughput_per_s);
//! ```

mod costs;
mod engine;
mod error;
pub mod groups;
pub mod policy;

pub use costs::{Costs, CostsExt};
pub use engine::{
    Admission, CpuSelection, MAX_ADMISSIONS, SimConfig, SimReport, Simulator, fairness, simulate,
};
pub use error::SimError;
pub use policy::{Policy, PolicyKind, PolicyParams};
pub use ron_stats::{SplitMix64, rng};
