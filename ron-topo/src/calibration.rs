//! The calibration file: a measured matrix, its route and the baselines,
//! tied to the machine it was measured on.
//!
//! Versioned JSON (serde), [`FORMAT_VERSION`]:
//!
//! ```text
//! { "version": 1,
//!   "fingerprint": { "cpu_model": "...", "logical_cpus": 64, "topology_hash": "..." },
//!   "matrix": { "cpus": [...], "meta": {...}, "rows": [[...]] },
//!   "route": [CPU ids in tour order],
//!   "cost": route cost in ns per lap,
//!   "baselines": { "identity_cost": ..., "fifo_mean": ... } }
//! ```
//!
//! [`Calibration::from_json_str`] validates everything: the version, the
//! matrix (as [`LatencyMatrix`] does), that the route is a permutation of the
//! matrix's CPUs, that the matrix has no more CPUs than the fingerprint
//! (a probe may cover only the CPUs the process may use), and that the
//! stored cost and baselines equal the ones recomputed from the matrix.
//! [`Calibration::load`] also refuses a file from another machine, naming
//! both fingerprints.

use std::fmt;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::matrix::{LatencyMatrix, MAX_FILE_BYTES, MatrixError};
use crate::topology::Topology;
use crate::tsp::Route;

/// The calibration format version this crate writes and reads.
pub const FORMAT_VERSION: u32 = 1;

/// Relative tolerance when comparing stored and recomputed costs.
const COST_TOLERANCE: f64 = 1e-6;

/// Identifies a machine: a calibration is valid only where this matches.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Fingerprint {
    /// CPU model string (`model name` of `/proc/cpuinfo` or similar).
    pub cpu_model: String,
    /// Number of logical CPUs in the topology.
    pub logical_cpus: usize,
    /// [`Topology::hash_hex`].
    pub topology_hash: String,
}

impl fmt::Display for Fingerprint {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{:?}, {} logical CPUs, topology {}",
            self.cpu_model, self.logical_cpus, self.topology_hash
        )
    }
}

impl Fingerprint {
    /// The fingerprint of `topo` on this machine's CPU model.
    pub fn of(topo: &Topology) -> Self {
        Fingerprint {
            cpu_model: cpu_model(),
            logical_cpus: topo.len(),
            topology_hash: topo.hash_hex(),
        }
    }
}

/// This machine's CPU model string: `model name` (x86), else `Hardware`,
/// `cpu model` or `CPU part` from `/proc/cpuinfo`, else `"unknown"`.
pub fn cpu_model() -> String {
    let text = std::fs::read_to_string("/proc/cpuinfo").unwrap_or_default();
    for key in ["model name", "Hardware", "cpu model", "CPU part"] {
        for line in text.lines() {
            if let Some((k, v)) = line.split_once(':')
                && k.trim() == key
                && !v.trim().is_empty()
            {
                return v.trim().to_string();
            }
        }
    }
    "unknown".to_string()
}

/// What a FIFO lock and the identity order pay, for comparison.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Baselines {
    /// Cost of the identity tour (CPUs in matrix order), ns per lap.
    pub identity_cost: f64,
    /// Mean off-diagonal latency: FIFO's expected cost per handover, ns.
    pub fifo_mean: f64,
}

/// A calibration: matrix, route and baselines for one machine.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Calibration {
    /// Format version ([`FORMAT_VERSION`]).
    pub version: u32,
    /// The machine it was measured on.
    pub fingerprint: Fingerprint,
    /// The measured matrix.
    pub matrix: LatencyMatrix,
    /// The route as CPU ids in tour order.
    pub route: Vec<usize>,
    /// The route's cost in ns per lap.
    pub cost: f64,
    /// Baselines computed from the matrix.
    pub baselines: Baselines,
}

/// Why a calibration file was refused.
#[derive(Debug, thiserror::Error)]
pub enum CalibrationError {
    /// Reading or writing failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The path is a directory.
    #[error("{}: is a directory, expected a calibration file", .0.display())]
    IsDirectory(PathBuf),
    /// The file is empty.
    #[error("{}: empty calibration file", .0.display())]
    EmptyFile(PathBuf),
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("{}: file too large ({bytes} bytes)", path.display())]
    TooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
    },
    /// The JSON could not be decoded (includes an invalid matrix).
    #[error("invalid calibration JSON: {0}")]
    Json(String),
    /// The version is not [`FORMAT_VERSION`].
    #[error(
        "calibration format version {found} is not supported (this build reads {FORMAT_VERSION})"
    )]
    Version {
        /// Version in the file.
        found: u32,
    },
    /// The matrix is invalid.
    #[error(transparent)]
    Matrix(#[from] MatrixError),
    /// The route is not a permutation of the matrix's CPUs.
    #[error("route is not a permutation of the matrix's {n} CPUs: {reason}")]
    BadRoute {
        /// Matrix size.
        n: usize,
        /// What is wrong.
        reason: String,
    },
    /// The matrix has more CPUs than the fingerprint's machine.
    #[error("fingerprint says {fingerprint} logical CPUs but the matrix has {matrix}")]
    CpuCount {
        /// CPUs in the fingerprint.
        fingerprint: usize,
        /// CPUs in the matrix.
        matrix: usize,
    },
    /// A stored number differs from the one recomputed from the matrix.
    #[error("stored {field} = {stored} but the matrix gives {computed}")]
    Inconsistent {
        /// Which field.
        field: &'static str,
        /// Stored value.
        stored: f64,
        /// Recomputed value.
        computed: f64,
    },
    /// The file was made on another machine.
    #[error("calibration file is for another machine: file [{file}], this machine [{this}]")]
    WrongMachine {
        /// The file's fingerprint.
        file: Box<Fingerprint>,
        /// This machine's fingerprint.
        this: Box<Fingerprint>,
    },
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= COST_TOLERANCE * a.abs().max(b.abs()).max(1.0)
}

impl Calibration {
    /// Builds a calibration from a matrix and a route over its indices
    /// (as `tsp::solve` returns), computing cost and baselines.
    pub fn new(
        fingerprint: Fingerprint,
        matrix: LatencyMatrix,
        route: &Route,
    ) -> Result<Self, CalibrationError> {
        if !crate::tsp::is_permutation(&route.order, matrix.n()) {
            return Err(CalibrationError::BadRoute {
                n: matrix.n(),
                reason: "route order is not a permutation of the matrix indices".into(),
            });
        }
        let cal = Calibration {
            version: FORMAT_VERSION,
            fingerprint,
            route: route.cpu_ids(&matrix),
            cost: matrix.tour_cost(&route.order),
            baselines: Baselines {
                identity_cost: matrix.identity_cost(),
                fifo_mean: matrix.fifo_mean(),
            },
            matrix,
        };
        cal.validate()?;
        Ok(cal)
    }

    /// The route as matrix indices.
    pub fn route_indices(&self) -> Result<Vec<usize>, CalibrationError> {
        let cpus = self.matrix.cpus();
        let mut index_of = std::collections::HashMap::with_capacity(cpus.len());
        for (i, &c) in cpus.iter().enumerate() {
            index_of.insert(c, i);
        }
        let idx: Vec<usize> = self
            .route
            .iter()
            .map(|c| {
                index_of
                    .get(c)
                    .copied()
                    .ok_or_else(|| CalibrationError::BadRoute {
                        n: cpus.len(),
                        reason: format!("CPU {c} is not in the matrix"),
                    })
            })
            .collect::<Result<_, _>>()?;
        // Name the offending CPU: "duplicates or missing CPUs" alone does
        // not tell the user which entry of a hand-edited file is wrong.
        let mut seen = vec![false; cpus.len()];
        for (&i, &c) in idx.iter().zip(&self.route) {
            if std::mem::replace(&mut seen[i], true) {
                return Err(CalibrationError::BadRoute {
                    n: cpus.len(),
                    reason: format!("CPU {c} appears twice"),
                });
            }
        }
        if let Some(i) = seen.iter().position(|&s| !s) {
            return Err(CalibrationError::BadRoute {
                n: cpus.len(),
                reason: format!(
                    "CPU {} is missing ({} of {} entries)",
                    cpus[i],
                    self.route.len(),
                    cpus.len()
                ),
            });
        }
        Ok(idx)
    }

    /// Checks everything except the machine (see the module docs).
    pub fn validate(&self) -> Result<(), CalibrationError> {
        if self.version != FORMAT_VERSION {
            return Err(CalibrationError::Version {
                found: self.version,
            });
        }
        let n = self.matrix.n();
        if n > self.fingerprint.logical_cpus {
            return Err(CalibrationError::CpuCount {
                fingerprint: self.fingerprint.logical_cpus,
                matrix: n,
            });
        }
        let idx = self.route_indices()?;
        let checks = [
            ("cost", self.cost, self.matrix.tour_cost(&idx)),
            (
                "baselines.identity_cost",
                self.baselines.identity_cost,
                self.matrix.identity_cost(),
            ),
            (
                "baselines.fifo_mean",
                self.baselines.fifo_mean,
                self.matrix.fifo_mean(),
            ),
        ];
        for (field, stored, computed) in checks {
            if !close(stored, computed) {
                return Err(CalibrationError::Inconsistent {
                    field,
                    stored,
                    computed,
                });
            }
        }
        Ok(())
    }

    /// Parses and validates (not the machine).
    pub fn from_json_str(text: &str) -> Result<Self, CalibrationError> {
        if text.trim().is_empty() {
            return Err(CalibrationError::Json("empty input".into()));
        }
        // Check the version first so an old or future file gets a clear error.
        #[derive(Deserialize)]
        struct VersionOnly {
            version: u32,
        }
        let v: VersionOnly =
            serde_json::from_str(text).map_err(|e| CalibrationError::Json(e.to_string()))?;
        if v.version != FORMAT_VERSION {
            return Err(CalibrationError::Version { found: v.version });
        }
        let cal: Calibration =
            serde_json::from_str(text).map_err(|e| CalibrationError::Json(e.to_string()))?;
        cal.validate()?;
        Ok(cal)
    }

    /// Pretty JSON.
    pub fn to_json_string(&self) -> String {
        // Plain data: serialisation cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Reads and validates a file without checking the machine.
    pub fn read(path: impl AsRef<Path>) -> Result<Self, CalibrationError> {
        let path = path.as_ref();
        let io = |source| CalibrationError::Io {
            path: path.to_path_buf(),
            source,
        };
        let md = std::fs::metadata(path).map_err(io)?;
        if md.is_dir() {
            return Err(CalibrationError::IsDirectory(path.to_path_buf()));
        }
        if md.len() == 0 {
            return Err(CalibrationError::EmptyFile(path.to_path_buf()));
        }
        if md.len() > MAX_FILE_BYTES {
            return Err(CalibrationError::TooLarge {
                path: path.to_path_buf(),
                bytes: md.len(),
            });
        }
        let text = std::fs::read_to_string(path).map_err(io)?;
        Self::from_json_str(&text)
    }

    /// Reads, validates and checks that the file is for `this` machine.
    pub fn load(path: impl AsRef<Path>, this: &Fingerprint) -> Result<Self, CalibrationError> {
        let cal = Self::read(path)?;
        cal.check_machine(this)?;
        Ok(cal)
    }

    /// Refuses a calibration whose fingerprint differs from `this`.
    pub fn check_machine(&self, this: &Fingerprint) -> Result<(), CalibrationError> {
        if &self.fingerprint != this {
            return Err(CalibrationError::WrongMachine {
                file: Box::new(self.fingerprint.clone()),
                this: Box::new(this.clone()),
            });
        }
        Ok(())
    }

    /// Writes the file (creating parent directories), via a temporary file
    /// and a rename so readers never see half a file.
    pub fn save(&self, path: impl AsRef<Path>) -> Result<(), CalibrationError> {
        let path = path.as_ref();
        let io = |source| CalibrationError::Io {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent()
            && !dir.as_os_str().is_empty()
        {
            std::fs::create_dir_all(dir).map_err(io)?;
        }
        let mut tmp = path.as_os_str().to_owned();
        tmp.push(format!(".tmp{}", std::process::id()));
        let tmp = PathBuf::from(tmp);
        std::fs::write(&tmp, self.to_json_string()).map_err(io)?;
        std::fs::rename(&tmp, path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            io(e)
        })
    }
}
