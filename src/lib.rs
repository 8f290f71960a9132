//! Shared test support for the ron workspace: the lock conformance suite
//! that `tests/` runs against every `lock_api::RawMutex` in ron-core.

pub mod conformance;

pub use conformance::Unsynced;

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
