//! The core-to-core latency matrix.
//!
//! A [`LatencyMatrix`] is an `n x n` table of one-way cache-line handover
//! latencies in nanoseconds: entry `(i, j)` is the cost of moving the line
//! from the CPU at index `i` to the CPU at index `j`. It may be asymmetric
//! (the route is one-way, so direction matters). The diagonal is never used
//! by any cost (a CPU does not hand over to itself); probes write 0 there.
//!
//! Every method that takes an *index* works on `0..n`; [`LatencyMatrix::cpus`]
//! maps an index to the OS's logical CPU id.
//!
//! # Formats
//! - **CSV** (reading needs the `tools` feature): no header, row `i` = from-CPU, column `j` = to-CPU, values in
//!   ns. Lines starting with `#` are comments; one optional comment of the form
//!   `# cpus: 0,2,4,6` gives the CPU ids (otherwise they are `0..n`).
//!   [`LatencyMatrix::to_csv_string`] writes that comment only when the ids
//!   are not `0..n`, so plain matrices stay plain.
//! - **JSON** (serde): `{"cpus": [...], "meta": {...}, "rows": [[...], ...]}`.
//!   Deserialising validates exactly like [`LatencyMatrix::from_rows`].
//!   [`LatencyMatrix::read_json`] and `LatencyMatrix::read` also accept a
//!   calibration file (`ron calibrate`'s output), whose `matrix` field has
//!   this shape.
//!
//! # Validation
//! The matrix must be non-empty, square, at most [`MAX_N`] wide, every entry
//! finite, non-negative and at most [`MAX_LATENCY_NS`] (one second: far
//! above any real handover, low enough that sums over a 4096-CPU tour stay
//! exact in `f64`), and the CPU ids distinct and below
//! [`ron_core::route::MAX_CPUS`]. No input makes these functions panic; a
//! CSV claiming more than [`MAX_N`] rows or columns is refused as soon as the
//! excess is seen, before the whole input is buffered.

use std::fmt::Write as _;
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

/// Largest matrix accepted (CPUs per side), equal to ron-core's route limit.
pub const MAX_N: usize = ron_core::route::MAX_CPUS;

/// Largest latency accepted in a matrix (ns): one second. Larger values
/// (`1e15`, `1e308`) are refused at load instead of overflowing tour costs
/// and means to `inf`.
pub const MAX_LATENCY_NS: f64 = 1e9;

/// Largest file `LatencyMatrix::read_csv` / [`LatencyMatrix::read_json`]
/// will read (bytes): a 4096-CPU matrix at ~12 bytes per entry fits easily.
pub const MAX_FILE_BYTES: u64 = 512 * 1024 * 1024;

/// Why a latency matrix was refused.
#[derive(Debug, thiserror::Error)]
pub enum MatrixError {
    /// The matrix has no rows.
    #[error("latency matrix is empty")]
    Empty,
    /// A row's length differs from the number of rows.
    #[error("latency matrix is not square: row {row} has {len} entries, expected {expected}")]
    NotSquare {
        /// Row index (0-based).
        row: usize,
        /// Entries found in that row.
        len: usize,
        /// Entries expected (the number of rows).
        expected: usize,
    },
    /// The number of rows differs from the row length.
    #[error("latency matrix is not square: {rows} rows of {cols} entries")]
    RowCount {
        /// Rows found.
        rows: usize,
        /// Entries per row.
        cols: usize,
    },
    /// An index passed to [`LatencyMatrix::submatrix`] is `>= n`.
    #[error("index {index} out of range for a {n} x {n} matrix")]
    IndexOutOfRange {
        /// The index.
        index: usize,
        /// Matrix size.
        n: usize,
    },
    /// More than [`MAX_N`] rows or columns.
    #[error("latency matrix too large: {n} CPUs (at most {max})")]
    TooLarge {
        /// Size seen (possibly only a lower bound).
        n: usize,
        /// The limit.
        max: usize,
    },
    /// An entry is NaN, infinite or negative.
    #[error("invalid latency {value} ns at row {row}, column {col} (must be finite and >= 0)")]
    InvalidValue {
        /// Row index (0-based).
        row: usize,
        /// Column index (0-based).
        col: usize,
        /// The value.
        value: f64,
    },
    /// An entry is above [`MAX_LATENCY_NS`].
    #[error("latency {value} ns at row {row}, column {col} is too large (at most {max} ns)")]
    LatencyTooLarge {
        /// Row index (0-based).
        row: usize,
        /// Column index (0-based).
        col: usize,
        /// The value.
        value: f64,
        /// The limit ([`MAX_LATENCY_NS`]).
        max: f64,
    },
    /// A CSV field is not a number.
    #[error("CSV line {line}, field {field}: {text:?} is not a number")]
    Parse {
        /// Line number (1-based).
        line: u64,
        /// Field number (1-based).
        field: usize,
        /// The offending text (truncated).
        text: String,
    },
    /// The CSV structure itself is broken (e.g. bad UTF-8).
    #[error("not valid CSV: {0}")]
    Csv(String),
    /// The JSON could not be decoded.
    #[error("not a latency matrix in JSON: {0}")]
    Json(String),
    /// The same CPU id is listed twice.
    #[error("CPU {cpu} appears twice in the CPU list")]
    DuplicateCpu {
        /// The repeated id.
        cpu: usize,
    },
    /// A CPU id is not below [`ron_core::route::MAX_CPUS`].
    #[error("CPU id {cpu} out of range (must be < {max})")]
    CpuOutOfRange {
        /// The id.
        cpu: usize,
        /// The limit.
        max: usize,
    },
    /// The CPU list's length differs from the matrix size.
    #[error("CPU list has {cpus} entries but the matrix is {n} x {n}")]
    CpuCountMismatch {
        /// Entries in the CPU list.
        cpus: usize,
        /// Matrix size.
        n: usize,
    },
    /// The `# cpus:` comment could not be parsed.
    #[error("bad `# cpus:` comment: {0}")]
    BadCpuList(String),
    /// Reading or writing a file failed.
    #[error("{}: {source}", path.display())]
    Io {
        /// The file.
        path: PathBuf,
        /// The I/O error.
        source: std::io::Error,
    },
    /// The file is larger than [`MAX_FILE_BYTES`].
    #[error("{}: file too large ({bytes} bytes, at most {max})", path.display())]
    FileTooLarge {
        /// The file.
        path: PathBuf,
        /// Its size.
        bytes: u64,
        /// The limit.
        max: u64,
    },
}

/// How a matrix was obtained (free-form where the source is not a probe).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct MatrixMeta {
    /// Where the numbers come from: `"probe"`, `"csv"`, `"tsplib"`, ...
    pub source: String,
    /// Probe mode (`"full"` or `"sampled"`), empty if not probed.
    pub mode: String,
    /// Measured rounds per ordered pair (0 if not probed).
    pub rounds: u32,
    /// Warm-up rounds per ordered pair (0 if not probed).
    pub warmup_rounds: u32,
    /// Statistic used per pair, e.g. `"median of one-way (round trip / 2)"`.
    pub statistic: String,
}

/// An `n x n` one-way handover latency table in ns (see the module docs).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(try_from = "MatrixRepr", into = "MatrixRepr")]
pub struct LatencyMatrix {
    n: usize,
    cpus: Vec<usize>,
    /// Row-major, `n * n` entries.
    data: Vec<f64>,
    meta: MatrixMeta,
}

/// The serde shape of a [`LatencyMatrix`].
#[derive(Serialize, Deserialize)]
struct MatrixRepr {
    cpus: Vec<usize>,
    #[serde(default)]
    meta: MatrixMeta,
    rows: Vec<Vec<f64>>,
}

impl TryFrom<MatrixRepr> for LatencyMatrix {
    type Error = MatrixError;
    fn try_from(r: MatrixRepr) -> Result<Self, MatrixError> {
        let mut m = LatencyMatrix::from_rows(r.rows)?;
        m.set_cpus(r.cpus)?;
        m.meta = r.meta;
        Ok(m)
    }
}

impl From<LatencyMatrix> for MatrixRepr {
    fn from(m: LatencyMatrix) -> Self {
        MatrixRepr {
            rows: m.rows(),
            cpus: m.cpus,
            meta: m.meta,
        }
    }
}

fn check_value(row: usize, col: usize, value: f64) -> Result<(), MatrixError> {
    if !(value.is_finite() && value >= 0.0) {
        Err(MatrixError::InvalidValue { row, col, value })
    } else if value > MAX_LATENCY_NS {
        Err(MatrixError::LatencyTooLarge {
            row,
            col,
            value,
            max: MAX_LATENCY_NS,
        })
    } else {
        Ok(())
    }
}

impl LatencyMatrix {
    /// Builds a matrix from rows (row = from-CPU), CPU ids `0..n`.
    ///
    /// ```
    /// let m = ron_topo::LatencyMatrix::from_rows(vec![vec![0.0, 20.0], vec![30.0, 0.0]]).unwrap();
    /// assert_eq!(m.get(1, 0), 30.0);
    /// assert_eq!(m.tour_cost(&[0, 1]), 50.0);
    /// ```
    pub fn from_rows(rows: Vec<Vec<f64>>) -> Result<Self, MatrixError> {
        let n = rows.len();
        if n == 0 {
            return Err(MatrixError::Empty);
        }
        if n > MAX_N {
            return Err(MatrixError::TooLarge { n, max: MAX_N });
        }
        let mut data = Vec::with_capacity(n * n);
        for (i, row) in rows.into_iter().enumerate() {
            if row.len() != n {
                return Err(MatrixError::NotSquare {
                    row: i,
                    len: row.len(),
                    expected: n,
                });
            }
            for (j, &v) in row.iter().enumerate() {
                check_value(i, j, v)?;
            }
            data.extend_from_slice(&row);
        }
        Ok(LatencyMatrix {
            n,
            cpus: (0..n).collect(),
            data,
            meta: MatrixMeta::default(),
        })
    }

    /// Builds a matrix from a generator `f(from, to)` (indices), CPU ids `0..n`.
    pub fn from_fn(n: usize, mut f: impl FnMut(usize, usize) -> f64) -> Result<Self, MatrixError> {
        if n == 0 {
            return Err(MatrixError::Empty);
        }
        if n > MAX_N {
            return Err(MatrixError::TooLarge { n, max: MAX_N });
        }
        let mut data = Vec::with_capacity(n * n);
        for i in 0..n {
            for j in 0..n {
                let v = f(i, j);
                check_value(i, j, v)?;
                data.push(v);
            }
        }
        Ok(LatencyMatrix {
            n,
            cpus: (0..n).collect(),
            data,
            meta: MatrixMeta::default(),
        })
    }

    /// Replaces the CPU ids (index -> OS logical CPU id), validating them.
    pub fn set_cpus(&mut self, cpus: Vec<usize>) -> Result<(), MatrixError> {
        validate_cpus(&cpus, self.n)?;
        self.cpus = cpus;
        Ok(())
    }

    /// Builder form of [`set_cpus`](Self::set_cpus).
    pub fn with_cpus(mut self, cpus: Vec<usize>) -> Result<Self, MatrixError> {
        self.set_cpus(cpus)?;
        Ok(self)
    }

    /// Replaces the metadata.
    pub fn with_meta(mut self, meta: MatrixMeta) -> Self {
        self.meta = meta;
        self
    }

    /// Number of CPUs (rows = columns).
    pub fn n(&self) -> usize {
        self.n
    }

    /// The OS logical CPU id of each index.
    pub fn cpus(&self) -> &[usize] {
        &self.cpus
    }

    /// How the matrix was obtained.
    pub fn meta(&self) -> &MatrixMeta {
        &self.meta
    }

    /// Latency from index `from` to index `to` in ns.
    ///
    /// # Panics
    /// If an index is `>= n` (like slice indexing); see [`try_get`](Self::try_get).
    #[inline]
    pub fn get(&self, from: usize, to: usize) -> f64 {
        assert!(from < self.n && to < self.n, "matrix index out of range");
        self.data[from * self.n + to]
    }

    /// Latency from index `from` to index `to`, or `None` if out of range.
    #[inline]
    pub fn try_get(&self, from: usize, to: usize) -> Option<f64> {
        if from < self.n && to < self.n {
            self.data.get(from * self.n + to).copied()
        } else {
            None
        }
    }

    /// Row `from` (latencies from that index to every index).
    pub fn row(&self, from: usize) -> Option<&[f64]> {
        if from < self.n {
            self.data.get(from * self.n..(from + 1) * self.n)
        } else {
            None
        }
    }

    /// The row-major data, `n * n` entries.
    pub fn as_slice(&self) -> &[f64] {
        &self.data
    }

    /// The rows as nested vectors.
    pub fn rows(&self) -> Vec<Vec<f64>> {
        self.data.chunks(self.n).map(<[f64]>::to_vec).collect()
    }

    /// Whether `get(i, j) == get(j, i)` for all pairs (exactly).
    pub fn is_symmetric(&self) -> bool {
        (0..self.n).all(|i| (i + 1..self.n).all(|j| self.get(i, j) == self.get(j, i)))
    }

    /// Mean off-diagonal latency: what a FIFO lock pays per handover on
    /// average when the next owner is an arbitrary other CPU. 0 for `n == 1`.
    pub fn fifo_mean(&self) -> f64 {
        if self.n < 2 {
            return 0.0;
        }
        let mut sum = 0.0;
        for i in 0..self.n {
            for j in 0..self.n {
                if i != j {
                    sum += self.data[i * self.n + j];
                }
            }
        }
        sum / (self.n * (self.n - 1)) as f64
    }

    /// Cost of the closed tour `route` (indices):
    /// `sum of get(route[k], route[k + 1])` including the edge back to
    /// `route[0]`. A tour of 0 or 1 stops costs 0. Returns NaN if an index is
    /// out of range (the route is not checked to be a permutation).
    pub fn tour_cost(&self, route: &[usize]) -> f64 {
        if route.len() < 2 {
            return if route.iter().all(|&i| i < self.n) {
                0.0
            } else {
                f64::NAN
            };
        }
        let mut sum = 0.0;
        for k in 0..route.len() {
            let a = route[k];
            let b = route[(k + 1) % route.len()];
            match self.try_get(a, b) {
                Some(v) => sum += v,
                None => return f64::NAN,
            }
        }
        sum
    }

    /// Cost of the identity tour `0, 1, ..., n-1, 0`.
    pub fn identity_cost(&self) -> f64 {
        let id: Vec<usize> = (0..self.n).collect();
        self.tour_cost(&id)
    }

    #[cfg(feature = "tools")]
    /// Parses the CSV format of the module docs.
    ///
    /// ```
    /// let m = ron_topo::LatencyMatrix::from_csv_str("0,1.5\n2,0\n").unwrap();
    /// assert_eq!(m.n(), 2);
    /// assert!(ron_topo::LatencyMatrix::from_csv_str("0,1\n2\n").is_err());
    /// ```
    pub fn from_csv_str(text: &str) -> Result<Self, MatrixError> {
        Self::from_csv_reader(text.as_bytes())
    }

    #[cfg(feature = "tools")]
    /// Parses CSV from any reader (see [`from_csv_str`](Self::from_csv_str)).
    pub fn from_csv_reader(reader: impl std::io::Read) -> Result<Self, MatrixError> {
        let mut cpus: Option<Vec<usize>> = None;
        // Comments are not stripped by the reader (`comment(None)`): the
        // `# cpus:` comment carries data, so records starting with `#` are
        // recognised below.
        let mut rdr = csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .trim(csv::Trim::All)
            .comment(None)
            .from_reader(reader);
        let mut rows: Vec<Vec<f64>> = Vec::new();
        let mut width: Option<usize> = None;
        let mut record = csv::StringRecord::new();
        loop {
            match rdr.read_record(&mut record) {
                Ok(false) => break,
                Ok(true) => {}
                Err(e) => {
                    let e = e.to_string();
                    let e = e.strip_prefix("CSV parse error: ").unwrap_or(&e);
                    return Err(MatrixError::Csv(e.to_string()));
                }
            }
            let line = record.position().map_or(0, |p| p.line());
            let first = record.get(0).unwrap_or("");
            if first.starts_with('#') {
                let joined: Vec<&str> = record.iter().collect();
                let text = joined.join(",");
                if let Some(list) = text.trim_start_matches('#').trim().strip_prefix("cpus:") {
                    cpus = Some(parse_cpu_list(list)?);
                }
                continue;
            }
            if record.len() == 1 && first.is_empty() {
                continue; // blank line
            }
            let len = record.len();
            if len > MAX_N {
                return Err(MatrixError::TooLarge { n: len, max: MAX_N });
            }
            if rows.len() >= MAX_N {
                return Err(MatrixError::TooLarge {
                    n: rows.len() + 1,
                    max: MAX_N,
                });
            }
            if let Some(w) = width {
                if len != w {
                    return Err(MatrixError::NotSquare {
                        row: rows.len(),
                        len,
                        expected: w,
                    });
                }
            } else {
                width = Some(len);
            }
            let mut row = Vec::with_capacity(len);
            for (f, field) in record.iter().enumerate() {
                let v: f64 = field.parse().map_err(|_| MatrixError::Parse {
                    line,
                    field: f + 1,
                    text: field.chars().take(32).collect(),
                })?;
                check_value(rows.len(), f, v)?;
                row.push(v);
            }
            rows.push(row);
        }
        if let Some(w) = width
            && w != rows.len()
        {
            return Err(MatrixError::RowCount {
                rows: rows.len(),
                cols: w,
            });
        }
        let mut m = Self::from_rows(rows)?;
        m.meta.source = "csv".into();
        if let Some(c) = cpus {
            m.set_cpus(c)?;
        }
        Ok(m)
    }

    #[cfg(feature = "tools")]
    /// Reads a CSV file (see [`from_csv_str`](Self::from_csv_str)).
    pub fn read_csv(path: impl AsRef<Path>) -> Result<Self, MatrixError> {
        let path = path.as_ref();
        let file = open_limited(path)?;
        Self::from_csv_reader(std::io::BufReader::new(file))
    }

    /// Writes the CSV format of the module docs (shortest round-trip floats).
    pub fn to_csv_string(&self) -> String {
        let mut out = String::with_capacity(self.n * self.n * 8);
        if self.cpus.iter().enumerate().any(|(i, &c)| i != c) {
            out.push_str("# cpus: ");
            let ids: Vec<String> = self.cpus.iter().map(usize::to_string).collect();
            out.push_str(&ids.join(","));
            out.push('\n');
        }
        for row in self.data.chunks(self.n) {
            for (j, v) in row.iter().enumerate() {
                if j > 0 {
                    out.push(',');
                }
                let _ = write!(out, "{v}");
            }
            out.push('\n');
        }
        out
    }

    /// Writes the CSV to a file.
    pub fn write_csv(&self, path: impl AsRef<Path>) -> Result<(), MatrixError> {
        let path = path.as_ref();
        std::fs::write(path, self.to_csv_string()).map_err(|source| MatrixError::Io {
            path: path.to_path_buf(),
            source,
        })
    }

    /// Parses the JSON format of the module docs, validating everything.
    pub fn from_json_str(text: &str) -> Result<Self, MatrixError> {
        serde_json::from_str(text).map_err(|e| MatrixError::Json(e.to_string()))
    }

    /// Serialises to pretty JSON.
    pub fn to_json_string(&self) -> String {
        // Serialising plain vectors, strings and numbers cannot fail.
        serde_json::to_string_pretty(self).unwrap_or_default()
    }

    /// Reads a JSON file: a matrix, or any JSON object with a `matrix`
    /// field holding one (a calibration file).
    pub fn read_json(path: impl AsRef<Path>) -> Result<Self, MatrixError> {
        let path = path.as_ref();
        let file = open_limited(path)?;
        let json = |e: serde_json::Error| MatrixError::Json(e.to_string());
        let mut v: serde_json::Value =
            serde_json::from_reader(std::io::BufReader::new(file)).map_err(json)?;
        let inner = match v.get_mut("matrix") {
            Some(m) => m.take(),
            None => v,
        };
        serde_json::from_value(inner).map_err(json)
    }

    #[cfg(feature = "tools")]
    /// Reads a matrix file: JSON (a matrix or a calibration file) when the
    /// name ends in `.json`, CSV otherwise.
    pub fn read(path: impl AsRef<Path>) -> Result<Self, MatrixError> {
        let path = path.as_ref();
        let is_json = path
            .extension()
            .is_some_and(|e| e.eq_ignore_ascii_case("json"));
        if is_json {
            Self::read_json(path)
        } else {
            Self::read_csv(path)
        }
    }

    /// The sub-matrix on the given indices (in that order), keeping CPU ids.
    pub fn submatrix(&self, idx: &[usize]) -> Result<Self, MatrixError> {
        let mut rows = Vec::with_capacity(idx.len());
        for &i in idx {
            let mut row = Vec::with_capacity(idx.len());
            for &j in idx {
                row.push(self.try_get(i, j).ok_or(MatrixError::IndexOutOfRange {
                    index: i.max(j),
                    n: self.n,
                })?);
            }
            rows.push(row);
        }
        let cpus = idx.iter().map(|&i| self.cpus[i]).collect();
        Ok(Self::from_rows(rows)?
            .with_cpus(cpus)?
            .with_meta(self.meta.clone()))
    }
}

fn open_limited(path: &Path) -> Result<std::fs::File, MatrixError> {
    let io = |source| MatrixError::Io {
        path: path.to_path_buf(),
        source,
    };
    let file = std::fs::File::open(path).map_err(io)?;
    let md = file.metadata().map_err(io)?;
    if md.is_dir() {
        return Err(io(std::io::Error::other("is a directory")));
    }
    if md.len() > MAX_FILE_BYTES {
        return Err(MatrixError::FileTooLarge {
            path: path.to_path_buf(),
            bytes: md.len(),
            max: MAX_FILE_BYTES,
        });
    }
    Ok(file)
}

#[cfg(feature = "tools")]
fn parse_cpu_list(list: &str) -> Result<Vec<usize>, MatrixError> {
    let mut out = Vec::new();
    for tok in list.split(',').map(str::trim).filter(|t| !t.is_empty()) {
        if out.len() >= MAX_N {
            return Err(MatrixError::TooLarge {
                n: out.len() + 1,
                max: MAX_N,
            });
        }
        out.push(
            tok.parse()
                .map_err(|_| MatrixError::BadCpuList(tok.chars().take(32).collect()))?,
        );
    }
    Ok(out)
}

fn validate_cpus(cpus: &[usize], n: usize) -> Result<(), MatrixError> {
    if cpus.len() != n {
        return Err(MatrixError::CpuCountMismatch {
            cpus: cpus.len(),
            n,
        });
    }
    let max = ron_core::route::MAX_CPUS;
    let mut seen = vec![false; max];
    for &c in cpus {
        if c >= max {
            return Err(MatrixError::CpuOutOfRange { cpu: c, max });
        }
        if seen[c] {
            return Err(MatrixError::DuplicateCpu { cpu: c });
        }
        seen[c] = true;
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(feature = "tools")]
    #[test]
    fn csv_round_trip_and_cpus_comment() {
        let m = LatencyMatrix::from_rows(vec![
            vec![0.0, 1.25, 3.0],
            vec![2.0, 0.0, 4.5],
            vec![7.0, 8.0, 0.0],
        ])
        .unwrap()
        .with_cpus(vec![4, 0, 9])
        .unwrap();
        let s = m.to_csv_string();
        assert!(s.starts_with("# cpus: 4,0,9\n"));
        let back = LatencyMatrix::from_csv_str(&s).unwrap();
        assert_eq!(back.cpus(), &[4, 0, 9]);
        assert_eq!(back.as_slice(), m.as_slice());
        let j = m.to_json_string();
        let back = LatencyMatrix::from_json_str(&j).unwrap();
        assert_eq!(back, m);
    }

    #[cfg(feature = "tools")]
    #[test]
    fn errors_are_specific() {
        use MatrixError as E;
        assert!(matches!(LatencyMatrix::from_csv_str(""), Err(E::Empty)));
        assert!(matches!(
            LatencyMatrix::from_csv_str("0,1\n1,0\n1,1\n"),
            Err(E::RowCount { rows: 3, cols: 2 })
        ));
        assert!(matches!(
            LatencyMatrix::from_csv_str("0,1\n1\n"),
            Err(E::NotSquare {
                row: 1,
                len: 1,
                expected: 2
            })
        ));
        assert!(matches!(
            LatencyMatrix::from_csv_str("0,1,2\n1,0,2\n"),
            Err(E::RowCount { rows: 2, cols: 3 })
        ));
        assert!(matches!(
            LatencyMatrix::from_csv_str("0,NaN\n1,0\n"),
            Err(E::InvalidValue { row: 0, col: 1, .. })
        ));
        assert!(matches!(
            LatencyMatrix::from_csv_str("0,-1\n1,0\n"),
            Err(E::InvalidValue { .. })
        ));
        assert!(matches!(
            LatencyMatrix::from_csv_str("0,x\n1,0\n"),
            Err(E::Parse {
                line: 1,
                field: 2,
                ..
            })
        ));
        assert!(matches!(
            LatencyMatrix::from_csv_str("# cpus: 1,1\n0,1\n1,0\n"),
            Err(E::DuplicateCpu { cpu: 1 })
        ));
        assert!(matches!(
            LatencyMatrix::from_csv_str("# cpus: 1\n0,1\n1,0\n"),
            Err(E::CpuCountMismatch { .. })
        ));
        assert!(matches!(
            LatencyMatrix::from_csv_str("0,1e15\n1,0\n"),
            Err(E::LatencyTooLarge { row: 0, col: 1, .. })
        ));
        assert!(matches!(
            LatencyMatrix::from_rows(vec![vec![0.0, 1e308], vec![1.0, 0.0]]),
            Err(E::LatencyTooLarge { .. })
        ));
        assert!(LatencyMatrix::from_csv_str("0,1e9\n1,0\n").is_ok());
        let wide = vec!["0"; MAX_N + 1].join(",");
        assert!(matches!(
            LatencyMatrix::from_csv_str(&wide),
            Err(E::TooLarge { .. })
        ));
        assert!(LatencyMatrix::from_json_str("{\"cpus\":[0],\"rows\":[[0,1]]}").is_err());
        assert!(LatencyMatrix::from_json_str("[]").is_err());
    }

    #[cfg(feature = "tools")]
    #[test]
    fn read_accepts_a_calibration_file() {
        let m = LatencyMatrix::from_rows(vec![vec![0.0, 5.0], vec![6.0, 0.0]]).unwrap();
        let dir = std::env::temp_dir();
        let cal = dir.join(format!("ron-topo-cal-{}.json", std::process::id()));
        let text = format!(
            "{{\"version\": 1, \"route\": [0, 1], \"matrix\": {}}}",
            m.to_json_string()
        );
        std::fs::write(&cal, text).unwrap();
        let back = LatencyMatrix::read(&cal);
        let _ = std::fs::remove_file(&cal);
        assert_eq!(back.unwrap(), m);
    }

    #[test]
    fn costs() {
        let m = LatencyMatrix::from_rows(vec![
            vec![0.0, 1.0, 2.0],
            vec![3.0, 0.0, 4.0],
            vec![5.0, 6.0, 0.0],
        ])
        .unwrap();
        assert_eq!(m.fifo_mean(), 21.0 / 6.0);
        assert_eq!(m.tour_cost(&[0, 1, 2]), 1.0 + 4.0 + 5.0);
        assert_eq!(m.tour_cost(&[0, 2, 1]), 2.0 + 6.0 + 3.0);
        assert!(m.tour_cost(&[0, 7]).is_nan());
        assert!(!m.is_symmetric());
    }
}
