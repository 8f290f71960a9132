//! The many-locks workload: T threads each locking one of N locks at
//! random, with the memory the locks take.

use std::time::Duration;

use ron_bench::grid::{ManyLocksGrid, SkippedPoint};
use ron_bench::registry;
use ron_bench::workload::many_locks::{self, ManyLocksConfig, ManyLocksRow};

use super::options::Args;
use super::shared::{
    bench_err, catch_ctrl_c, finish, grid_lines, install_route, mark_interrupted,
    print_with_footer, run_meta, save_out, thread_counts,
};
use crate::args;
use crate::error::CliResult;
use crate::progress;

/// Thread counts when `--threads` is not given.
const MANY_LOCKS_THREADS: &str = "1,2,16";

/// Runs the many-locks grid: locks x threads x numbers of locks.
pub(super) fn run(args: &Args, duration: Duration, warmup: Duration) -> CliResult {
    // Before anything slow, so that an early Ctrl-C stops the run too.
    catch_ctrl_c();
    let locks = registry::resolve(&args.locks).map_err(bench_err)?;
    let threads = thread_counts(args, MANY_LOCKS_THREADS)?;
    let n_locks = args::positive_list("--n-locks", &args.n_locks, many_locks::MAX_LOCKS)?;
    let grid = ManyLocksGrid {
        locks,
        threads,
        n_locks,
        base: ManyLocksConfig {
            duration,
            warmup,
            pinning: args.pin.pinning(),
            seed: args.seed,
            max_lock_bytes: args.max_lock_memory.saturating_mul(1 << 20),
            ..ManyLocksConfig::default()
        },
        repeat: args.repeat,
    };
    grid.validate().map_err(bench_err)?;
    let (source, fingerprint) = install_route(args.no_install);
    let cpus = ron_bench::pin::cpu_order().len();
    let meta = run_meta(&source, fingerprint, grid.repeat, cpus);
    let header = format!(
        "ron bench --workload many-locks: each operation locks one of N locks at random, increments its counter, unlocks\n{}; resident memory: current RSS (/proc/self/statm) after the measured window, locks alive; +RSS: gained since before the locks were allocated\n",
        grid_lines(
            grid.points(),
            grid.repeat,
            duration,
            warmup,
            grid.base.pinning,
            &meta
        ),
    );
    let pb = progress::bar(
        grid.runs() as u64,
        (duration + warmup) * grid.runs() as u32,
        "many-locks",
    );
    let outcome = grid.run(progress::follow(&pb)).map_err(bench_err)?;
    pb.finish_and_clear();
    let notes = many_locks_notes(&outcome.rows, &outcome.skipped);
    let (meta, header) = mark_interrupted(meta, header, outcome.interrupted);
    let rows = outcome.rows;
    print_with_footer(args, &meta, &rows, &header, &notes)?;
    save_out(args, &meta, &rows, &header)?;
    finish(args, &rows, grid.points(), outcome.interrupted, |bad| {
        (!bad.exclusion_ok).then(|| {
            format!(
                "mutual exclusion violated: lock {} at {} threads, {} locks lost updates",
                bad.lock, bad.threads, bad.n_locks
            )
        })
    })
}

/// The notes under the many-locks output: skipped points, and memory a
/// lock uses besides its `size_of`.
fn many_locks_notes(rows: &[ManyLocksRow], skipped: &[SkippedPoint]) -> String {
    let mut out = String::new();
    for s in skipped {
        out.push_str(&format!(
            "note: skipped {} at {} locks: {}\n",
            s.lock, s.n_locks, s.reason
        ));
    }
    let mut seen: Vec<&str> = Vec::new();
    for r in rows {
        if let Some(n) = many_locks::memory_note(&r.lock)
            && !seen.contains(&n)
        {
            seen.push(n);
            out.push_str(&format!("note: {n}\n"));
        }
    }
    out
}
