//! The one error type of the `ron` command: printed as a single line
//! (`error: ...`, as clap and cargo do).

use std::fmt;

/// An error that ends the command with a one-line message and a non-zero exit.
#[derive(Debug)]
pub struct CliError {
    message: String,
    code: i32,
}

impl CliError {
    /// A usage or input error (exit code 2).
    pub fn usage(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: 2,
        }
    }

    /// A failure while running (exit code 1).
    pub fn failed(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: 1,
        }
    }

    /// Stopped by Ctrl-C after saving what was done (exit code 130, as a
    /// shell reports SIGINT; the message may be empty).
    pub fn interrupted(message: impl Into<String>) -> Self {
        CliError {
            message: message.into(),
            code: 130,
        }
    }

    /// The process exit code for this error.
    pub fn exit_code(&self) -> i32 {
        self.code
    }

    /// The message (empty when there is nothing to add).
    pub fn message(&self) -> &str {
        &self.message
    }
}

impl fmt::Display for CliError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

/// Result of a subcommand.
pub type CliResult = Result<(), CliError>;
