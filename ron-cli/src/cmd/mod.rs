//! One module per subcommand: its clap arguments and its `run`.

pub mod bench;
pub mod calibrate;
pub mod compare;
pub mod completions;
pub mod plot;
pub mod route;
pub mod simulate;
pub mod topo;
