//! Microbenchmark harness and workloads of the ron lock family: real locks
//! on real threads (the policy simulator is the ron-sim crate).
//!
//! * [`registry`](mod@registry): lock names -> lock types (RON locks, baselines, peers).
//! * [`workload`]: the seeds' microbenchmark loop ([`workload::micro`]), a
//!   key-value map in the CNA paper's two mixes ([`workload::kv`]), the RON
//!   paper's microbenchmark ([`workload::ron_micro`]), the co-runner cost
//!   ([`workload::corunner`]) and reader-writer locks under a read ratio
//!   ([`workload::rw`]).
//! * [`metrics`], [`report`]: latency percentiles (fairness factor and CV
//!   come from ron-stats); rows and their table / CSV / JSON forms.
//! * [`grid`]: runs every (lock, threads, nCS) point of a benchmark
//!   ([`grid::RwGrid`] those of the reader-writer workloads).
//! * [`limits`]: the range of every parameter and its check.
//! * [`stop`]: Ctrl-C's request to cut the run in progress short.

pub mod clock;
pub mod error;
pub mod grid;
pub mod limits;
pub mod metrics;
pub mod mutex;
pub mod names;
pub mod pin;
pub mod registry;
pub mod report;
pub mod stop;
pub mod workload;

pub use error::BenchError;
pub use registry::{LockEntry, registry};
pub use report::{BenchRow, CorunnerRow};
