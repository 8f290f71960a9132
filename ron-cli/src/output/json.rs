//! JSON output: pretty-printed, one trailing newline.

use serde::Serialize;

use crate::error::CliError;

/// `value` as pretty JSON with a trailing newline.
pub fn pretty<T: Serialize + ?Sized>(value: &T) -> Result<String, CliError> {
    let mut s = serde_json::to_string_pretty(value)
        .map_err(|e| CliError::failed(format!("cannot encode JSON: {e}")))?;
    s.push('\n');
    Ok(s)
}
