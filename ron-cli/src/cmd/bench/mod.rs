//! `ron bench`: the lock microbenchmark grids (micro, ron-micro), the
//! key-value workload (kv, kv-update), the co-runner cost, many locks and
//! the reader-writer workloads (see
//! `ron_bench` for what each measures).
//!
//! Every point runs `--repeat` times (the whole grid once per repeat, so
//! slow drift spreads over all locks); rows report the mean and spread.
//! The results go to stdout (and to `--out`, checked before anything
//! runs, rewritten after every run so that Ctrl-C or an error keeps what
//! was measured); the table closes with a summary per point, as hyperfine
//! does; `--baseline` compares with an earlier run.

mod corunner;
mod list;
mod loops;
mod many_locks;
mod options;
mod rw;
mod shared;

pub use options::Args;
use options::Workload;

use crate::cmd::compare;
use crate::error::{CliError, CliResult};
use crate::output;

/// Runs `ron bench`.
pub fn run(args: Args) -> CliResult {
    if args.list {
        return output::stdout(&list::list());
    }
    let duration = crate::args::duration("--duration", &args.duration, false)?;
    let warmup = crate::args::duration("--warmup", &args.warmup, true)?;
    if let Some(out) = &args.out {
        output::Format::of_out(out)?;
        output::prepare_out(out)?;
    }
    if args.baseline.is_some() && matches!(args.workload, Workload::Rw | Workload::RwMap) {
        return Err(CliError::usage(
            "--baseline: compares micro and kv rows only, not the reader-writer workloads",
        ));
    }
    let baseline = match &args.baseline {
        Some(p) => Some(compare::read_rows(p)?),
        None => None,
    };
    match args.workload {
        Workload::Corunner => corunner::run(&args, duration),
        Workload::ManyLocks => many_locks::run(&args, duration, warmup),
        Workload::Rw | Workload::RwMap => rw::run(&args, duration, warmup),
        Workload::Micro | Workload::Kv | Workload::KvUpdate | Workload::RonMicro => {
            loops::run(&args, duration, warmup, baseline)
        }
    }
}
