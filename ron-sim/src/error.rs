//! The simulator's one error type.

use std::fmt;

/// Why a simulation could not be set up or was stopped.
///
/// Every bad input (a non-square matrix, a negative latency, a route that is
/// not a permutation, zero threads, a non-finite duration) is reported as one
/// of these, never as a panic.
#[derive(Clone, Debug, PartialEq)]
pub enum SimError {
    /// The cost matrix is empty, not square, or holds a value that is not a
    /// finite non-negative number.
    BadMatrix(String),
    /// The route is not a permutation of `0..n`.
    BadRoute(String),
    /// A configuration value is out of range (threads, times, thresholds).
    BadConfig(String),
    /// A policy name that is not one of [`PolicyKind::ALL`](crate::PolicyKind::ALL).
    UnknownPolicy(String),
    /// A policy broke the model's rules (admitted a thread that was not
    /// waiting, or left waiters behind on a free lock). A bug, reported
    /// instead of silently producing numbers.
    PolicyViolation(String),
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::BadMatrix(m) => write!(f, "bad latency matrix: {m}"),
            SimError::BadRoute(m) => write!(f, "bad route: {m}"),
            SimError::BadConfig(m) => write!(f, "bad simulation setting: {m}"),
            SimError::UnknownPolicy(m) => write!(
                f,
                "unknown policy `{m}` (expected one of: fifo, ttas, cna, cohort, ron, ron-identity)"
            ),
            SimError::PolicyViolation(m) => write!(f, "policy violated the model: {m}"),
        }
    }
}

impl std::error::Error for SimError {}

impl From<ron_topo::MatrixError> for SimError {
    fn from(e: ron_topo::MatrixError) -> Self {
        SimError::BadMatrix(e.to_string())
    }
}
