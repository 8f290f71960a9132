//! Everything `ron` writes: one [`Format`] for every subcommand, one
//! module per format ([`table`], [`csv`], [`json`]), and the rules for
//! files and streams:
//!
//! * results go to stdout, in the format asked for (`--format`, default
//!   table); `--out FILE` writes them to a file as well, in the format of
//!   its extension (`.json`, `.csv`, `.md` = table; others are refused);
//! * status lines ("wrote ...", warnings, progress) go to stderr, so a
//!   redirected table stays a table;
//! * `--out` creates missing directories (as cargo and criterion do) and is
//!   checked before any work starts.
//!
//! Every kind of row implements [`Render`]; [`render`] is the one place
//! that picks the rendering for a format.

pub mod csv;
pub mod json;
pub mod table;

use std::io::Write as _;
use std::path::Path;

use ron_bench::report::{BenchRow, CorunnerRow};
use ron_bench::workload::many_locks::ManyLocksRow;
use ron_bench::workload::rw::RwRow;
use serde::Serialize;

use crate::error::CliError;
use crate::rows::{CompareRow, SimRow};

/// Output format of every subcommand.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    /// Aligned Markdown table for people (with a header and a summary).
    Table,
    /// CSV with a header line.
    Csv,
    /// JSON with stable field names.
    Json,
}

impl Format {
    /// The format an `--out` file's extension asks for: `.json`, `.csv` or
    /// `.md` (a table); any other extension is refused.
    pub fn of_out(path: &Path) -> Result<Format, CliError> {
        match path
            .extension()
            .and_then(|e| e.to_str())
            .map(str::to_ascii_lowercase)
            .as_deref()
        {
            Some("json") => Ok(Format::Json),
            Some("csv") => Ok(Format::Csv),
            Some("md") => Ok(Format::Table),
            _ => Err(CliError::usage(format!(
                "--out: must end in .json, .csv or .md (a table), got {}",
                path.display()
            ))),
        }
    }
}

/// Makes `path` ready to be written: creates its missing directories and
/// checks that the file can be created, before any work starts.
pub fn prepare_out(path: &Path) -> Result<(), CliError> {
    if let Some(dir) = path.parent().filter(|d| !d.as_os_str().is_empty()) {
        std::fs::create_dir_all(dir).map_err(|e| {
            CliError::usage(format!(
                "--out: cannot create directory {}: {e}",
                dir.display()
            ))
        })?;
    }
    if path.is_dir() {
        return Err(CliError::usage(format!(
            "--out: {} is a directory",
            path.display()
        )));
    }
    // Open for appending (an existing file is left as it is); a file that
    // did not exist is removed again, so that a failure later leaves no
    // empty file behind (an empty calibration file would be read later).
    let existed = path.exists();
    std::fs::OpenOptions::new()
        .append(true)
        .create(true)
        .open(path)
        .map(drop)
        .map_err(|e| CliError::usage(format!("--out: cannot write {}: {e}", path.display())))?;
    if !existed {
        let _ = std::fs::remove_file(path);
    }
    Ok(())
}

/// Writes `text` to `path` through a temporary file and a rename, so that
/// an interrupted write never leaves half a file.
pub fn write_file(path: &Path, text: &str) -> Result<(), CliError> {
    let failed =
        |e: std::io::Error| CliError::failed(format!("cannot write {}: {e}", path.display()));
    let mut tmp = path.as_os_str().to_owned();
    tmp.push(".tmp");
    let tmp = std::path::PathBuf::from(tmp);
    std::fs::write(&tmp, text).map_err(failed)?;
    std::fs::rename(&tmp, path).map_err(failed)
}

/// Prints `text` to stdout as is.
pub fn stdout(text: &str) -> Result<(), CliError> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())
        .and_then(|()| out.flush())
        .map_err(|e| CliError::failed(format!("cannot write to stdout: {e}")))
}

/// A status line on stderr.
pub fn status(line: &str) {
    eprintln!("{line}");
}

/// A warning on stderr (`warning: ...`, as cargo writes them).
pub fn warning(line: &str) {
    eprintln!("warning: {line}");
}

/// A kind of result row: its table and its CSV.
pub trait Render: Sized {
    /// The rows as an aligned table.
    fn table(rows: &[Self]) -> String;
    /// The rows as CSV.
    fn csv(rows: &[Self]) -> String;
}

/// `rows` in `format`: for a table, `head`, the table and `foot`; CSV
/// rows; or `json` (the rows, or the rows with the run's metadata).
pub fn render<R: Render>(
    format: Format,
    head: &str,
    rows: &[R],
    foot: &str,
    json: &(impl Serialize + ?Sized),
) -> Result<String, CliError> {
    Ok(match format {
        Format::Table => format!("{head}{}{foot}", R::table(rows)),
        Format::Csv => R::csv(rows),
        Format::Json => json::pretty(json)?,
    })
}

macro_rules! render_with {
    ($($row:ty => $f:ident),* $(,)?) => {$(
        impl Render for $row {
            fn table(rows: &[Self]) -> String {
                table::$f(rows)
            }
            fn csv(rows: &[Self]) -> String {
                csv::$f(rows)
            }
        }
    )*};
}

render_with! {
    BenchRow => bench,
    CorunnerRow => corunner,
    ManyLocksRow => many_locks,
    RwRow => rw,
    SimRow => simulate,
    CompareRow => compare,
}
