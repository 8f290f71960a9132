//! The ron-core locks on a virtual many-core machine.
//!
//! This crate is built with `--cfg ron_vm` (its `.cargo/config.toml`), so
//! the ron-core it links prices every atomic operation, pause and yield on
//! [`ron_vm`]'s virtual machine, reads its clock and CPU hint from there and
//! keeps its thread-local state per virtual thread. [`machine`] loads a
//! recorded latency matrix (or calibration), [`workload`] runs the micro
//! workload on it, [`locks`] names the locks, [`report`] prints rows with
//! the fields of `ron bench` plus `machine` and `virtual: true`;
//! [`hwcheck`] pairs a hardware `ron bench` run with the VM's runs of its
//! points (`vm-hwcheck`). [`rw`]
//! runs reader-writer locks (`RonRw` against [`one_counter_rw`]'s
//! baselines) for `vm-rw`.
#![warn(missing_docs)]

pub mod cli;
mod fixed;
pub mod groups;
pub mod hwcheck;
pub mod kv;
pub mod locks;
pub mod machine;
pub mod one_counter_rw;
pub mod report;
mod run_stats;
pub mod rw;
pub mod workload;

pub use groups::{Groups, GroupsChoice};
pub use machine::{Placement, VirtualMachine};
pub use workload::{Point, RunStats, Workload};

/// The recorded data directory: `$RON_DATA_DIR`, else `shared/data` next
/// to the repository; `None` when absent (tests then skip).
pub fn data_dir() -> Option<std::path::PathBuf> {
    let d = std::env::var_os("RON_DATA_DIR")
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| {
            std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
        });
    d.join("latency").is_dir().then_some(d)
}
