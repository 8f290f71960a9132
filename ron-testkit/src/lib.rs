//! Test support for the ron workspace (not published).
//!
//! * [`for_each_lock!`]: the one list of ron-core locks, with their
//!   properties ([`locks`]). Every suite (conformance, loom and shuttle
//!   models, Miri, stress, fuzz, condvar, timed, panic safety), the
//!   benchmark registry and the examples iterate it.
//! * [`conformance`]: the generic checks every `lock_api::RawMutex` must
//!   pass, and [`conformance_tests!`] to instantiate them.
//! * [`rw_conformance`]: std's and parking_lot's `RwLock` test shapes for
//!   every `lock_api::RawRwLock`, and [`rw_conformance_tests!`].
//!
//! ron-core dev-depends on this crate, so `cargo test -p ron-core` runs the
//! conformance suite (`ron-core/tests/conformance.rs`).

pub mod conformance;
pub mod locks;
pub mod rw_conformance;

pub use conformance::Unsynced;
pub use locks::{LockInfo, assert_covers};

/// ron-core, for the types [`for_each_lock!`] names (one copy: the
/// ron-core the caller links).
#[doc(hidden)]
pub use ron_core as __rc;
