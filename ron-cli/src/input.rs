//! Reading result files back: `ron bench` / `ron simulate` output as JSON
//! (an object with `rows`, or a bare array of rows) or CSV (a header line
//! naming the fields), as generic rows for `ron plot` and `ron compare`.

use std::path::Path;

use serde_json::{Map, Value};

use crate::error::CliError;

/// Largest result file read (bytes).
const MAX_BYTES: u64 = 256 * 1024 * 1024;

/// The rows of a result file (JSON or CSV by extension) as JSON objects,
/// with the run's metadata when the file has some.
pub fn read_rows(path: &Path) -> Result<(Option<Value>, Vec<Value>), CliError> {
    let shown = path.display();
    let size = std::fs::metadata(path)
        .map_err(|e| CliError::usage(format!("cannot read {shown}: {e}")))?
        .len();
    if size > MAX_BYTES {
        return Err(CliError::usage(format!(
            "{shown}: file too large ({size} bytes, at most {MAX_BYTES})"
        )));
    }
    let text = std::fs::read_to_string(path)
        .map_err(|e| CliError::usage(format!("cannot read {shown}: {e}")))?;
    let is_csv = path
        .extension()
        .is_some_and(|e| e.eq_ignore_ascii_case("csv"));
    if is_csv {
        return Ok((
            None,
            csv_rows(&text).map_err(|e| CliError::usage(format!("{shown}: {e}")))?,
        ));
    }
    let v: Value = serde_json::from_str(&text).map_err(|e| {
        CliError::usage(format!(
            "{shown}: not JSON rows ({e}); CSV files must end in .csv"
        ))
    })?;
    match v {
        Value::Array(rows) => Ok((None, rows)),
        Value::Object(mut o) => match o.remove("rows") {
            Some(Value::Array(rows)) => Ok((o.remove("meta"), rows)),
            _ => Err(CliError::usage(format!(
                "{shown}: a JSON object without `rows`"
            ))),
        },
        _ => Err(CliError::usage(format!(
            "{shown}: not an array or object of rows"
        ))),
    }
}

/// CSV with a header line as JSON objects: numbers, booleans, empty
/// fields as null, the rest as strings.
fn csv_rows(text: &str) -> Result<Vec<Value>, String> {
    let mut rdr = csv::ReaderBuilder::new()
        .has_headers(true)
        .trim(csv::Trim::All)
        .from_reader(text.as_bytes());
    let header: Vec<String> = rdr
        .headers()
        .map_err(|e| e.to_string())?
        .iter()
        .map(str::to_string)
        .collect();
    let mut rows = Vec::new();
    for rec in rdr.records() {
        let rec = rec.map_err(|e| e.to_string())?;
        let mut o = Map::new();
        for (k, f) in header.iter().zip(rec.iter()) {
            let v = if f.is_empty() {
                Value::Null
            } else if let Ok(b) = f.parse::<bool>() {
                Value::Bool(b)
            } else if let Some(n) = f.parse::<f64>().ok().and_then(serde_json::Number::from_f64) {
                Value::Number(n)
            } else {
                Value::String(f.to_string())
            };
            o.insert(k.clone(), v);
        }
        rows.push(Value::Object(o));
    }
    Ok(rows)
}

/// Field `k` of a row as a number.
pub fn num(v: &Value, k: &str) -> Option<f64> {
    v.get(k).and_then(Value::as_f64)
}

/// Field `k` of a row as text.
pub fn text(v: &Value, k: &str) -> Option<String> {
    v.get(k).and_then(Value::as_str).map(str::to_string)
}
