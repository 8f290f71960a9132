//! Microbenchmark harness, workloads, fairness metrics and the lock-policy
//! simulator of the ron lock family.
//!
//! * [`registry`](mod@registry): lock names -> lock types (RON locks, baselines, peers).
//! * [`workload`]: the seeds' microbenchmark loop ([`workload::micro`]), a
//!   key-value map ([`workload::kv`]) and the co-runner cost
//!   ([`workload::corunner`]).
//! * [`metrics`], [`report`]: fairness factor, CV, percentiles; rows and
//!   their table / CSV / JSON forms.
//! * [`grid`]: runs every (lock, threads, nCS) point of a benchmark.
//! * [`sim`]: the discrete-event lock-policy simulator.

pub mod clock;
pub mod error;
pub mod grid;
pub mod metrics;
pub mod mutex;
pub mod pin;
pub mod prng;
pub mod registry;
pub mod report;
pub mod workload;

pub mod sim;

pub use error::BenchError;
pub use registry::{LockEntry, registry};
pub use report::{BenchRow, CorunnerRow};
