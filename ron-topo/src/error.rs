//! One error type over every module, for callers that do not need to tell
//! them apart (ron-cli).

use crate::calibration::CalibrationError;
use crate::matrix::MatrixError;
#[cfg(feature = "tools")]
use crate::probe::ProbeError;
use crate::topology::TopologyError;
#[cfg(feature = "tools")]
use crate::tsplib::TsplibError;

/// Any ron-topo error.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// A latency matrix was refused.
    #[error(transparent)]
    Matrix(#[from] MatrixError),
    /// The topology could not be read.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// The probe failed or was cancelled.
    #[cfg(feature = "tools")]
    #[error(transparent)]
    Probe(#[from] ProbeError),
    /// A calibration file was refused.
    #[error(transparent)]
    Calibration(#[from] CalibrationError),
    /// A TSPLIB file was refused.
    #[cfg(feature = "tools")]
    #[error(transparent)]
    Tsplib(#[from] TsplibError),
}
