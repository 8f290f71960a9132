//! Parsing helpers shared by the subcommands (one-line errors), and the
//! one way to read a latency matrix.

use std::path::Path;
use std::time::Duration;

use ron_topo::LatencyMatrix;

use crate::error::CliError;

/// Longest duration any option accepts.
pub const MAX_SECONDS: f64 = 3600.0;

/// The entries of a comma-separated list, trimmed; an empty entry (`1,,2`,
/// a trailing comma) or an empty list is refused.
pub fn entries<'a>(flag: &str, s: &'a str) -> Result<Vec<&'a str>, CliError> {
    let parts: Vec<&str> = s.split(',').map(str::trim).collect();
    if parts.iter().all(|p| p.is_empty()) {
        return Err(CliError::usage(format!(
            "{flag}: needs at least one value, got an empty list"
        )));
    }
    if parts.iter().any(|p| p.is_empty()) {
        return Err(CliError::usage(format!(
            "{flag}: has an empty entry, got `{s}`"
        )));
    }
    Ok(parts)
}

/// A comma-separated list of percentages (whole numbers in 0..=100);
/// duplicates are dropped, order kept.
pub fn percent_list(flag: &str, s: &str) -> Result<Vec<u32>, CliError> {
    let mut out = Vec::new();
    for part in entries(flag, s)? {
        let v: u32 = part.parse().ok().filter(|v| *v <= 100).ok_or_else(|| {
            CliError::usage(format!(
                "{flag}: must be whole percentages in 0..=100, got `{part}`"
            ))
        })?;
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

/// A comma-separated list of positive integers (`flag` names the option in
/// errors); duplicates are dropped, order kept.
pub fn positive_list(flag: &str, s: &str, max: usize) -> Result<Vec<usize>, CliError> {
    let mut out = Vec::new();
    for part in entries(flag, s)? {
        let v: usize = part.parse().map_err(|_| {
            CliError::usage(format!(
                "{flag}: must be whole numbers in 1..={max}, got `{part}`"
            ))
        })?;
        if v == 0 || v > max {
            return Err(CliError::usage(format!(
                "{flag}: must be in 1..={max}, got {v}"
            )));
        }
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

/// One `--ncs` entry: ns, or a multiple of the critical section (`40x`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Ncs {
    /// Nanoseconds.
    Ns(f64),
    /// A multiple of the critical section's length.
    Times(f64),
}

impl Ncs {
    /// The value in ns for a critical section of `cs_ns`.
    pub fn ns(self, cs_ns: f64) -> f64 {
        match self {
            Ncs::Ns(v) => v,
            Ncs::Times(k) => k * cs_ns,
        }
    }
}

/// A comma-separated list of non-critical sections: ns (at most 1e9), or a
/// multiple of the critical section with an `x` suffix (`40x`).
pub fn ncs_list(flag: &str, s: &str) -> Result<Vec<Ncs>, CliError> {
    let mut out: Vec<Ncs> = Vec::new();
    for part in entries(flag, s)? {
        let bad = || {
            CliError::usage(format!(
                "{flag}: must be ns in 0..=1e9 or a multiple like 40x, got `{part}`"
            ))
        };
        let v = match part.strip_suffix(['x', 'X']) {
            Some(m) => Ncs::Times(m.trim().parse::<f64>().map_err(|_| bad())?),
            None => Ncs::Ns(part.parse::<f64>().map_err(|_| bad())?),
        };
        let (Ncs::Ns(x) | Ncs::Times(x)) = v;
        if !(x.is_finite() && (0.0..=1e9).contains(&x)) {
            return Err(bad());
        }
        if !out.contains(&v) {
            out.push(v);
        }
    }
    Ok(out)
}

/// A duration: a number of seconds (`0.25`) or a number with a unit
/// (`250ms`, `1.5s`, `2min`, `500us`); at most [`MAX_SECONDS`], and above
/// zero unless `allow_zero`.
///
/// Every duration option of every subcommand goes through here, so they
/// all read the same way.
pub fn duration(flag: &str, s: &str, allow_zero: bool) -> Result<Duration, CliError> {
    let t = s.trim();
    let range = if allow_zero {
        format!("[0, {MAX_SECONDS}]")
    } else {
        format!("(0, {MAX_SECONDS}]")
    };
    let out_of_range = || CliError::usage(format!("{flag}: must be in {range} seconds, got {t}"));
    let d = match t.parse::<f64>() {
        Ok(v) if v.is_nan() => {
            return Err(CliError::usage(format!(
                "{flag}: must be a number of seconds in {range}, got {t}"
            )));
        }
        Ok(v) if (0.0..=MAX_SECONDS).contains(&v) => Duration::from_secs_f64(v),
        Ok(_) => return Err(out_of_range()),
        Err(_) => parse_with_unit(t).ok_or_else(|| {
            CliError::usage(format!(
                "{flag}: must be seconds or a number with ns, us, ms, s or min, got `{t}`"
            ))
        })?,
    };
    if d > Duration::from_secs_f64(MAX_SECONDS) || (d.is_zero() && !allow_zero) {
        return Err(out_of_range());
    }
    Ok(d)
}

/// `1.5ms`-style durations (a decimal number and one unit); humantime
/// forms (`1m 30s`) as a fallback.
fn parse_with_unit(t: &str) -> Option<Duration> {
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .filter(|&i| i > 0)?;
    let (num, unit) = t.split_at(split);
    let v: f64 = num
        .parse()
        .ok()
        .filter(|v: &f64| v.is_finite() && *v >= 0.0)?;
    let scale = match unit.trim() {
        "ns" => 1e-9,
        "us" | "µs" => 1e-6,
        "ms" => 1e-3,
        "s" | "sec" => 1.0,
        "m" | "min" => 60.0,
        _ => return humantime::parse_duration(t).ok(),
    };
    let secs = v * scale;
    (secs <= MAX_SECONDS).then(|| Duration::from_secs_f64(secs))
}

/// `d` for people: `250 ms`, `1.50 s`.
pub fn show_duration(d: Duration) -> String {
    let s = d.as_secs_f64();
    if s < 1.0 {
        format!("{:.0} ms", s * 1e3)
    } else {
        format!("{s:.2} s")
    }
}

/// Reads a latency matrix: CSV, ron-topo JSON, or a calibration file
/// (`.json` with a `matrix` field), as `ron calibrate` writes it. An error
/// names the file once, then what is wrong with it.
pub fn read_matrix(path: &Path) -> Result<LatencyMatrix, CliError> {
    LatencyMatrix::read(path).map_err(|e| {
        let (msg, shown) = (e.to_string(), path.display().to_string());
        let what = msg
            .strip_prefix(&format!("{shown}: "))
            .unwrap_or(&msg)
            .to_string();
        let what = if matches!(e, ron_topo::MatrixError::Io { .. }) {
            format!("cannot read it: {what}")
        } else if what.contains("latency matrix") {
            what
        } else {
            format!("not a usable latency matrix: {what}")
        };
        CliError::usage(format!("{shown}: {what}"))
    })
}

/// A comma-separated list of whole numbers, 0 allowed (CPU ids).
pub fn cpu_list(flag: &str, s: &str) -> Result<Vec<usize>, CliError> {
    let mut out = Vec::new();
    for part in entries(flag, s)? {
        out.push(part.parse().map_err(|_| {
            CliError::usage(format!("{flag}: must be CPU ids or a file, got `{part}`"))
        })?);
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_take_seconds_and_units() {
        let ms = Duration::from_millis;
        assert_eq!(duration("--d", "0.25", false).unwrap(), ms(250));
        assert_eq!(duration("--d", "250ms", false).unwrap(), ms(250));
        assert_eq!(duration("--d", "1.5s", false).unwrap(), ms(1500));
        assert_eq!(duration("--d", "2min", false).unwrap(), ms(120_000));
        assert_eq!(duration("--d", "0", true).unwrap(), ms(0));
        for bad in ["0", "-1", "abc", "1e9", "2h", "nan", "5 parsecs"] {
            assert!(duration("--d", bad, false).is_err(), "{bad}");
        }
    }

    #[test]
    fn ncs_takes_ns_and_multiples() {
        assert_eq!(
            ncs_list("--ncs", "0, 250,2x,40X").unwrap(),
            vec![
                Ncs::Ns(0.0),
                Ncs::Ns(250.0),
                Ncs::Times(2.0),
                Ncs::Times(40.0)
            ]
        );
        for bad in ["", "x", "-1", "abc", "nanx", "inf", "2e9"] {
            assert!(ncs_list("--ncs", bad).is_err(), "{bad}");
        }
    }
}
