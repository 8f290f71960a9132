//! Topology discovery, core-to-core latency probing, TSP routing and the
//! calibration file of the ron lock family.
//!
//! RON hands a lock along a *route*: a tour over all CPUs that is short in
//! the machine's core-to-core latency matrix. This crate produces it:
//!
//! - [`topology`]: package / NUMA node / L3 / core / SMT siblings per CPU
//!   (sysfs; hwloc with the `hwloc` feature), and the topology-ordered route
//!   used when nothing was measured;
//! - [`matrix`]: the [`LatencyMatrix`] (JSON and CSV, validated);
//! - [`tsp`]: the [`Route`] type, and with `tools` the route solver
//!   (Held-Karp for small `n`, iterated Or-opt / Or-3opt / 2-opt local
//!   search otherwise), valid for asymmetric matrices;
//! - [`calibration`]: the versioned calibration file tied to a machine;
//! - [`install()`]: finds the calibration (or falls back to the topology)
//!   and installs the route and NUMA groups into ron-core.
//!
//! # Features
//! - default: what an application calls at start ([`install()`], the
//!   topology, calibration loading, [`LatencyMatrix`] with its JSON form).
//! - `tools`: the offline tooling that produces a calibration: `probe`
//!   (measures the matrix by bouncing a cache line between pinned
//!   threads), the `tsp::solve` route solver, `tsplib` (a reader for
//!   TSPLIB instances to check the solver) and the CSV matrix reader. It
//!   adds `rand`, `rand_pcg` and `csv`; `ron calibrate` uses it.
//! - `hwloc`: topology from hwloc (needs system libraries).
//!
//! ```no_run
//! # #[cfg(feature = "tools")] {
//! use ron_topo::{Topology, tsp::{solve, SolveOptions}};
//! let topo = Topology::detect()?;
//! let m = ron_topo::probe::probe(&topo, &Default::default(), &mut |_, _| {}, &Default::default())?;
//! let route = solve(&m, &SolveOptions::default());
//! println!("{:?} costs {} ns per lap", route.cpu_ids(&m), route.cost);
//! # }
//! # Ok::<(), ron_topo::Error>(())
//! ```

pub mod calibration;
pub mod error;
pub mod install;
pub mod matrix;
#[cfg(feature = "tools")]
pub mod probe;
pub mod topology;
pub mod tsp;
#[cfg(feature = "tools")]
pub mod tsplib;

pub use calibration::{Calibration, CalibrationError, Fingerprint};
pub use error::Error;
pub use install::{InstallReport, RouteSource, install};
pub use matrix::{LatencyMatrix, MatrixError, MatrixMeta};
#[cfg(feature = "tools")]
pub use probe::{ProbeError, ProbeMode, ProbeOptions, probe};
pub use topology::{CpuInfo, Topology, TopologyError};
pub use tsp::Route;
#[cfg(feature = "tools")]
pub use tsp::{SolveOptions, solve};
