//! `ron topo`.

use crate::error::{CliError, CliResult};

/// Arguments of `ron topo`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `ron topo`.
pub fn run(_args: Args) -> CliResult {
    Err(CliError::failed(
        "`ron topo` is not available in this build yet",
    ))
}
