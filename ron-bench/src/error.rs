//! Errors of the benchmark harness (bad names, bad parameters).

use std::fmt;

/// Why a benchmark could not be set up. Every message is one line.
#[derive(Debug, Clone, PartialEq)]
pub enum BenchError {
    /// A lock name that the registry does not know.
    UnknownLock {
        /// The name given.
        name: String,
        /// Every known name, comma-separated.
        known: String,
    },
    /// A co-runner policy name that is not known.
    UnknownPolicy {
        /// The name given.
        name: String,
        /// Every known policy, comma-separated.
        known: String,
    },
    /// A parameter out of its range.
    Invalid(String),
}

impl fmt::Display for BenchError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BenchError::UnknownLock { name, known } => {
                write!(f, "unknown lock `{name}` (known: {known}, all)")
            }
            BenchError::UnknownPolicy { name, known } => {
                write!(f, "unknown co-runner policy `{name}` (known: {known}, all)")
            }
            BenchError::Invalid(msg) => f.write_str(msg),
        }
    }
}

impl std::error::Error for BenchError {}
