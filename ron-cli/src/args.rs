//! Parsing helpers shared by the subcommands (one-line errors).

use std::path::Path;
use std::time::Duration;

use ron_topo::LatencyMatrix;

use crate::error::CliError;

/// Longest `--duration` / `--time-limit` accepted, in seconds.
pub const MAX_SECONDS: f64 = 3600.0;

/// A comma-separated list of positive integers (`flag` names the option in
/// errors); duplicates are dropped, order kept.
pub fn positive_list(flag: &str, s: &str, max: usize) -> Result<Vec<usize>, CliError> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let v: usize = part
            .parse()
            .map_err(|_| CliError::usage(format!("{flag}: `{part}` is not a whole number")))?;
        if v == 0 {
            return Err(CliError::usage(format!(
                "{flag}: must be at least 1, got 0"
            )));
        }
        if v > max {
            return Err(CliError::usage(format!("{flag}: at most {max}, got {v}")));
        }
        if !out.contains(&v) {
            out.push(v);
        }
    }
    if out.is_empty() {
        return Err(CliError::usage(format!("{flag}: no value given")));
    }
    Ok(out)
}

/// A comma-separated list of non-negative numbers of ns (at most 1 s each).
pub fn ns_list(flag: &str, s: &str) -> Result<Vec<f64>, CliError> {
    let mut out: Vec<f64> = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let v: f64 = part
            .parse()
            .map_err(|_| CliError::usage(format!("{flag}: `{part}` is not a number of ns")))?;
        if !(v.is_finite() && (0.0..=1e9).contains(&v)) {
            return Err(CliError::usage(format!(
                "{flag}: must be in 0..=1e9 ns, got {part}"
            )));
        }
        if !out.contains(&v) {
            out.push(v);
        }
    }
    if out.is_empty() {
        return Err(CliError::usage(format!("{flag}: no value given")));
    }
    Ok(out)
}

/// A number of seconds in `(0, MAX_SECONDS]` (or `[0, ..]` with `allow_zero`).
pub fn seconds(flag: &str, v: f64, allow_zero: bool) -> Result<Duration, CliError> {
    let lo_ok = if allow_zero { v >= 0.0 } else { v > 0.0 };
    if !(v.is_finite() && lo_ok && v <= MAX_SECONDS) {
        let lo = if allow_zero { "[0" } else { "(0" };
        return Err(CliError::usage(format!(
            "{flag}: must be in {lo}, {MAX_SECONDS}] seconds, got {v}"
        )));
    }
    Ok(Duration::from_secs_f64(v))
}

/// Reads a latency matrix: ron-topo JSON for `.json`, else CSV.
pub fn read_matrix(path: &Path) -> Result<LatencyMatrix, CliError> {
    let is_json = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("json"));
    let m = if is_json {
        LatencyMatrix::read_json(path)
    } else {
        LatencyMatrix::read_csv(path)
    };
    m.map_err(|e| CliError::usage(format!("cannot read matrix {}: {e}", path.display())))
}

/// Writes `text` to `path` (one-line error).
pub fn write_file(path: &Path, text: &str) -> Result<(), CliError> {
    std::fs::write(path, text)
        .map_err(|e| CliError::failed(format!("cannot write {}: {e}", path.display())))
}

/// A comma-separated list of whole numbers, 0 allowed (CPU ids).
pub fn positive_list_allow_zero(flag: &str, s: &str) -> Result<Vec<usize>, CliError> {
    let mut out = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        out.push(part.parse().map_err(|_| {
            CliError::usage(format!("{flag}: `{part}` is neither a CPU id nor a file"))
        })?);
    }
    if out.is_empty() {
        return Err(CliError::usage(format!("{flag}: no CPU given")));
    }
    Ok(out)
}
