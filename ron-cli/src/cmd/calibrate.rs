//! `ron calibrate`.

use crate::error::{CliError, CliResult};

/// Arguments of `ron calibrate`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `ron calibrate`.
pub fn run(_args: Args) -> CliResult {
    Err(CliError::failed(
        "`ron calibrate` is not available in this build yet",
    ))
}
