//! `ron route`.

use crate::error::{CliError, CliResult};

/// Arguments of `ron route`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `ron route`.
pub fn run(_args: Args) -> CliResult {
    Err(CliError::failed(
        "`ron route` is not available in this build yet",
    ))
}
