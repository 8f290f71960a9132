//! The root package of the ron workspace: cross-crate integration tests,
//! criterion benches and examples. Test support (the lock list and the
//! conformance suite) lives in `ron-testkit`.

/// The README's examples, compiled and run as doctests.
#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
