//! `ron plot`.

use crate::error::{CliError, CliResult};

/// Arguments of `ron plot`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `ron plot`.
pub fn run(_args: Args) -> CliResult {
    Err(CliError::failed(
        "`ron plot` is not available in this build yet",
    ))
}
