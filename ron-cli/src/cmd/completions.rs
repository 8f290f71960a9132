//! `ron completions SHELL` and `ron man`: shell completion scripts
//! (clap_complete) and man pages (clap_mangen), generated from the same
//! argument definitions as `--help`.

use std::path::PathBuf;

use clap_complete::Shell;

use crate::error::{CliError, CliResult};
use crate::output;

/// Arguments of `ron completions`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// The shell (e.g. `ron completions bash > ~/.local/share/bash-completion/completions/ron`).
    #[arg(value_enum)]
    pub shell: Shell,
}

/// Arguments of `ron man`.
#[derive(clap::Args, Debug)]
pub struct ManArgs {
    /// Write `ron.1` and one `ron-SUBCOMMAND.1` per subcommand into DIR
    /// (created if missing) instead of printing `ron.1`.
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
}

/// Runs `ron completions`.
pub fn run(args: Args) -> CliResult {
    let mut cmd = crate::command();
    let mut buf = Vec::new();
    clap_complete::generate(args.shell, &mut cmd, "ron", &mut buf);
    output::stdout(&String::from_utf8_lossy(&buf))
}

/// Runs `ron man`.
pub fn run_man(args: ManArgs) -> CliResult {
    let cmd = crate::command();
    let render = |c: clap::Command| -> Result<String, CliError> {
        let mut buf = Vec::new();
        clap_mangen::Man::new(c)
            .render(&mut buf)
            .map_err(|e| CliError::failed(format!("cannot render the man page: {e}")))?;
        Ok(String::from_utf8_lossy(&buf).into_owned())
    };
    match args.out {
        None => output::stdout(&render(cmd)?),
        Some(dir) => {
            std::fs::create_dir_all(&dir).map_err(|e| {
                CliError::usage(format!(
                    "--out: cannot create directory {}: {e}",
                    dir.display()
                ))
            })?;
            let mut pages = vec![("ron.1".to_string(), cmd.clone())];
            for sub in cmd.get_subcommands() {
                let name = format!("ron-{}", sub.get_name());
                // clap names are `&'static str` (without its `string`
                // feature); leaking a few bytes once per page in a
                // one-shot command is harmless.
                let leaked: &'static str = Box::leak(name.clone().into_boxed_str());
                pages.push((format!("{name}.1"), sub.clone().name(leaked)));
            }
            for (file, c) in pages {
                let path = dir.join(file);
                output::write_file(&path, &render(c)?)?;
                output::status(&format!("wrote {}", path.display()));
            }
            Ok(())
        }
    }
}
