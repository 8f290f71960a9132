//! `ron bench`.

use crate::error::{CliError, CliResult};

/// Arguments of `ron bench`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `ron bench`.
pub fn run(_args: Args) -> CliResult {
    Err(CliError::failed(
        "`ron bench` is not available in this build yet",
    ))
}
