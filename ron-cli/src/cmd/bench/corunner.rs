//! The co-runner workload: a compute thread sharing its CPU with waiters
//! of each waiting policy, and the slowdown they cause it.

use std::time::Duration;

use ron_bench::grid::run_corunner;
use ron_bench::report::CorunnerRow;
use ron_bench::workload::corunner;

use super::options::Args;
use super::shared::{
    bench_err, catch_ctrl_c, install_route, interrupted, mark_interrupted, print_rows, run_meta,
    save_out,
};
use crate::args;
use crate::error::CliResult;
use crate::output::{self, Format};
use crate::progress;

/// Runs the co-runner rows: one per (policy, waiters).
pub(super) fn run(args: &Args, duration: Duration) -> CliResult {
    let policies = corunner::resolve(&args.policies).map_err(bench_err)?;
    let ignored: Vec<&str> = [
        (args.locks != "default", "--locks"),
        (args.threads.is_some(), "--threads"),
        (args.repeat != 3, "--repeat"),
    ]
    .into_iter()
    .filter_map(|(given, flag)| given.then_some(flag))
    .collect();
    if !ignored.is_empty() {
        output::warning(&format!(
            "{} {} not apply to --workload corunner: its rows are waiting policies (--policies) by waiters sharing a CPU (--waiters), one run each",
            ignored.join(", "),
            if ignored.len() == 1 { "does" } else { "do" }
        ));
    }
    let waiters = args::positive_list("--waiters", &args.waiters, 1024)?;
    // Before anything slow, so that an early Ctrl-C stops the run too.
    catch_ctrl_c();
    let (source, fingerprint) = install_route(args.no_install);
    let order = ron_bench::pin::cpu_order();
    let meta = run_meta(&source, fingerprint, 1, order.len());
    let header = format!(
        "ron bench --workload corunner: compute thread + W waiters on CPU {}, lock held on CPU {}; {} alone + {} shared per row; route from {source}\n",
        order[0],
        order[1 % order.len()],
        args::show_duration(duration),
        args::show_duration(duration),
    );
    let total = policies.len() * waiters.len();
    let pb = progress::bar(total as u64, duration * 2 * total as u32, "corunner");
    let outcome =
        run_corunner(&policies, &waiters, duration, progress::follow(&pb)).map_err(bench_err)?;
    pb.finish_and_clear();
    let (meta, header) = mark_interrupted(meta, header, outcome.interrupted);
    let rows = outcome.rows;
    let note = noise_note(&rows);
    print_rows(args, &meta, &rows, &header, &note)?;
    if args.format != Format::Table {
        eprint!("{note}");
    }
    save_out(args, &meta, &rows, &header)?;
    if outcome.interrupted {
        return Err(interrupted(
            args,
            rows.len(),
            total,
            "the one in progress dropped (its two phases were cut unequally)",
        ));
    }
    Ok(())
}

/// Below this slowdown (the compute thread faster beside waiters than
/// alone) a row measures the machine's noise, not the waiters.
const NOISE_SLOWDOWN: f64 = -0.05;

/// A note under the rows when some of them show the compute thread faster
/// beside the waiters than alone, which only other load on the machine
/// explains.
fn noise_note(rows: &[CorunnerRow]) -> String {
    let noisy: Vec<String> = rows
        .iter()
        .filter(|r| r.slowdown < NOISE_SLOWDOWN)
        .map(|r| format!("{} ({:.0} %)", r.policy, 100.0 * r.slowdown))
        .collect();
    if noisy.is_empty() {
        return String::new();
    }
    format!(
        "\nnote: negative slowdowns ({}) mean the compute thread ran faster beside the waiters than alone: other load on this machine changed between the two phases, so these rows are noise; run again on a quiet machine or with a longer --duration\n",
        noisy.join(", ")
    )
}
