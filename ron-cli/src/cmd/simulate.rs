//! `ron simulate`.

use crate::error::{CliError, CliResult};

/// Arguments of `ron simulate`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `ron simulate`.
pub fn run(_args: Args) -> CliResult {
    Err(CliError::failed(
        "`ron simulate` is not available in this build yet",
    ))
}
