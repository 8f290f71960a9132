//! A small reader for TSPLIB95 instances, used to check the route solver
//! against proven optima.
//!
//! Supported: `TYPE` `TSP` / `ATSP`; `EDGE_WEIGHT_TYPE` `EXPLICIT` with
//! `EDGE_WEIGHT_FORMAT` `FULL_MATRIX`, `LOWER_DIAG_ROW`, `UPPER_DIAG_ROW`,
//! `LOWER_ROW`, `UPPER_ROW`; or `EUC_2D` coordinates
//! (`nint(sqrt(dx^2 + dy^2))`). Header lines are `KEY : VALUE`; weight
//! numbers may wrap across lines; `DISPLAY_DATA_SECTION` is skipped; the
//! diagonal (TSPLIB stores a large number there) is set to 0. The dimension
//! is checked against [`crate::matrix::MAX_N`] before anything is allocated.

use std::path::Path;

use crate::matrix::{LatencyMatrix, MAX_N, MatrixError, MatrixMeta};

/// Why a TSPLIB file was refused.
#[derive(Debug, thiserror::Error)]
pub enum TsplibError {
    /// Reading the file failed.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The I/O error.
        source: std::io::Error,
    },
    /// A required header key is missing.
    #[error("missing TSPLIB header {0}")]
    MissingHeader(&'static str),
    /// A header value or section is not supported.
    #[error("unsupported TSPLIB {key}: {value}")]
    Unsupported {
        /// The header key.
        key: &'static str,
        /// Its value.
        value: String,
    },
    /// `DIMENSION` is not a number in `1..=MAX_N`.
    #[error("bad DIMENSION {0:?} (must be 1..={MAX_N})")]
    BadDimension(String),
    /// A number in a data section could not be parsed.
    #[error("bad number {0:?} in data section")]
    BadNumber(String),
    /// A data section holds too few numbers.
    #[error("data section too short: {found} numbers, expected {expected}")]
    TooShort {
        /// Numbers found.
        found: usize,
        /// Numbers expected.
        expected: usize,
    },
    /// The resulting matrix was invalid.
    #[error(transparent)]
    Matrix(#[from] MatrixError),
}

/// A parsed instance.
#[derive(Debug, Clone)]
pub struct TsplibInstance {
    /// `NAME`.
    pub name: String,
    /// Whether `TYPE` is `ATSP`.
    pub asymmetric: bool,
    /// The distance matrix (diagonal 0).
    pub matrix: LatencyMatrix,
}

/// Reads a TSPLIB file.
pub fn read(path: impl AsRef<Path>) -> Result<TsplibInstance, TsplibError> {
    let path = path.as_ref();
    let text = std::fs::read_to_string(path).map_err(|source| TsplibError::Io {
        path: path.display().to_string(),
        source,
    })?;
    parse(&text)
}

/// Parses TSPLIB text.
///
/// ```
/// let text = "NAME: t\nTYPE: TSP\nDIMENSION: 3\nEDGE_WEIGHT_TYPE: EUC_2D\n\
///             NODE_COORD_SECTION\n1 0 0\n2 3 4\n3 0 4\nEOF\n";
/// let inst = ron_topo::tsplib::parse(text).unwrap();
/// assert_eq!(inst.matrix.get(0, 1), 5.0);
/// assert_eq!(inst.matrix.tour_cost(&[0, 1, 2]), 12.0);
/// ```
pub fn parse(text: &str) -> Result<TsplibInstance, TsplibError> {
    let mut name = String::new();
    let mut kind = String::new();
    let mut dim: Option<usize> = None;
    let mut wtype = String::new();
    let mut wformat = String::new();
    let mut section: Option<&'static str> = None;
    let mut numbers: Vec<f64> = Vec::new();
    let mut expected = 0usize;
    let mut data_kind: Option<&'static str> = None;
    for line in text.lines() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        if line == "EOF" {
            break;
        }
        let upper = line.to_ascii_uppercase();
        if upper.starts_with("EDGE_WEIGHT_SECTION") {
            section = Some("weights");
            continue;
        }
        if upper.starts_with("NODE_COORD_SECTION") {
            section = Some("coords");
            continue;
        }
        if upper.ends_with("_SECTION") {
            section = Some("skip");
            continue;
        }
        let numeric =
            line.starts_with(|c: char| c.is_ascii_digit() || c == '-' || c == '.' || c == '+');
        if (section.is_none() || !numeric)
            && let Some((k, v)) = line.split_once(':')
        {
            let v = v.trim().to_string();
            match k.trim().to_ascii_uppercase().as_str() {
                "NAME" => name = v,
                "TYPE" => kind = v.to_ascii_uppercase(),
                "DIMENSION" => {
                    let d: usize = v
                        .parse()
                        .map_err(|_| TsplibError::BadDimension(v.clone()))?;
                    if d == 0 || d > MAX_N {
                        return Err(TsplibError::BadDimension(v));
                    }
                    dim = Some(d);
                }
                "EDGE_WEIGHT_TYPE" => wtype = v.to_ascii_uppercase(),
                "EDGE_WEIGHT_FORMAT" => wformat = v.to_ascii_uppercase(),
                _ => {}
            }
            section = None;
            continue;
        }
        match section {
            Some("weights") | Some("coords") => {
                let n = dim.ok_or(TsplibError::MissingHeader("DIMENSION"))?;
                if expected == 0 {
                    data_kind = section;
                    expected = if section == Some("coords") {
                        3 * n
                    } else {
                        weight_count(&wformat, n)?
                    };
                    numbers.reserve(expected);
                }
                for tok in line.split_whitespace() {
                    if numbers.len() >= expected {
                        break;
                    }
                    let v: f64 = tok
                        .parse()
                        .map_err(|_| TsplibError::BadNumber(tok.chars().take(32).collect()))?;
                    numbers.push(v);
                }
            }
            _ => {}
        }
    }
    let n = dim.ok_or(TsplibError::MissingHeader("DIMENSION"))?;
    if kind != "TSP" && kind != "ATSP" {
        return Err(TsplibError::Unsupported {
            key: "TYPE",
            value: kind,
        });
    }
    // Recompute what the final header asks for: a later header line may
    // have changed DIMENSION or the format after the data section began.
    let (want_kind, need) = match wtype.as_str() {
        "EUC_2D" => ("coords", 3 * n),
        "EXPLICIT" => ("weights", weight_count(&wformat, n)?),
        other => {
            return Err(TsplibError::Unsupported {
                key: "EDGE_WEIGHT_TYPE",
                value: other.to_string(),
            });
        }
    };
    if data_kind != Some(want_kind) {
        return Err(TsplibError::MissingHeader(if want_kind == "coords" {
            "NODE_COORD_SECTION"
        } else {
            "EDGE_WEIGHT_SECTION"
        }));
    }
    if numbers.len() < need {
        return Err(TsplibError::TooShort {
            found: numbers.len(),
            expected: need,
        });
    }
    let mut rows = vec![vec![0.0; n]; n];
    match wtype.as_str() {
        "EUC_2D" => {
            let xy: Vec<(f64, f64)> = numbers.chunks(3).map(|c| (c[1], c[2])).collect();
            for i in 0..n {
                for j in 0..n {
                    if i != j {
                        let (dx, dy) = (xy[i].0 - xy[j].0, xy[i].1 - xy[j].1);
                        rows[i][j] = (dx * dx + dy * dy).sqrt().round();
                    }
                }
            }
        }
        "EXPLICIT" => {
            let mut it = numbers.iter().copied();
            let mut set = |i: usize, j: usize, v: f64| {
                rows[i][j] = v;
            };
            match wformat.as_str() {
                "FULL_MATRIX" => {
                    for i in 0..n {
                        for j in 0..n {
                            set(i, j, it.next().unwrap_or(0.0));
                        }
                    }
                }
                "LOWER_DIAG_ROW" | "LOWER_ROW" | "UPPER_DIAG_ROW" | "UPPER_ROW" => {
                    let diag = wformat.contains("DIAG");
                    let lower = wformat.starts_with("LOWER");
                    for i in 0..n {
                        let (lo, hi) = if lower {
                            (0, if diag { i + 1 } else { i })
                        } else {
                            (if diag { i } else { i + 1 }, n)
                        };
                        for j in lo..hi {
                            let v = it.next().unwrap_or(0.0);
                            set(i, j, v);
                            set(j, i, v);
                        }
                    }
                }
                other => {
                    // weight_count() accepted only the formats above.
                    return Err(TsplibError::Unsupported {
                        key: "EDGE_WEIGHT_FORMAT",
                        value: other.to_string(),
                    });
                }
            }
            for (i, row) in rows.iter_mut().enumerate() {
                row[i] = 0.0;
            }
        }
        other => {
            return Err(TsplibError::Unsupported {
                key: "EDGE_WEIGHT_TYPE",
                value: other.to_string(),
            });
        }
    }
    let matrix = LatencyMatrix::from_rows(rows)?.with_meta(MatrixMeta {
        source: format!("tsplib:{name}"),
        ..MatrixMeta::default()
    });
    Ok(TsplibInstance {
        name,
        asymmetric: kind == "ATSP",
        matrix,
    })
}

fn weight_count(format: &str, n: usize) -> Result<usize, TsplibError> {
    Ok(match format {
        "FULL_MATRIX" => n * n,
        "LOWER_DIAG_ROW" | "UPPER_DIAG_ROW" => n * (n + 1) / 2,
        "LOWER_ROW" | "UPPER_ROW" => n * (n - 1) / 2,
        "" => return Err(TsplibError::MissingHeader("EDGE_WEIGHT_FORMAT")),
        other => {
            return Err(TsplibError::Unsupported {
                key: "EDGE_WEIGHT_FORMAT",
                value: other.to_string(),
            });
        }
    })
}
