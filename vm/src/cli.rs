//! What every command of this workspace does at its edges: results on
//! stdout (a closed pipe ends them quietly), and an error as one `error:`
//! line on stderr with a non-zero exit.

use std::process::ExitCode;

/// The exit of a command whose body returned `result`: success, or its
/// error as one `error:` line on stderr and a failure status.
pub fn exit(result: Result<(), String>) -> ExitCode {
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Writes a command's results to stdout; a closed pipe (`| head`) ends the
/// output quietly, any other failure is the command's error.
pub fn print_results(text: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    match std::io::Write::write_all(&mut out, text.as_bytes()) {
        Err(e) if e.kind() != std::io::ErrorKind::BrokenPipe => Err(format!("stdout: {e}")),
        _ => Ok(()),
    }
}
