//! The reader-writer workloads (`rw`, `rw-map`): a grid of reader-writer
//! locks x threads x read % x nCS, each point run `--repeat` times, closed
//! by ron's lock against parking_lot's per point.

use std::time::Duration;

use ron_bench::clock;
use ron_bench::grid::RwGrid;
use ron_bench::workload::rw::{self, MAP_KEYS, RwConfig, RwRow, RwShape};

use super::options::{Args, Workload};
use super::shared::{
    bench_err, catch_ctrl_c, clock_note, finish, grid_lines, install_route, mark_interrupted,
    print_with_footer, run_meta, save_out, thread_counts,
};
use crate::args::{self, Ncs};
use crate::error::{CliError, CliResult};
use crate::output;
use crate::progress;

/// Thread counts when `--threads` is not given.
const RW_THREADS: &str = "1,2,8,32";
/// Read percentages of `rw` when `--read-pct` is not given.
const RW_READ_PCT: &str = "50,90,99,100";
/// Read percentage of `rw-map` when `--read-pct` is not given (the
/// read-heavy mix of conc-map-bench).
const MAP_READ_PCT: &str = "99";

/// Runs the rw or rw-map grid.
pub(super) fn run(args: &Args, duration: Duration, warmup: Duration) -> CliResult {
    // Before anything slow, so that an early Ctrl-C stops the run too.
    catch_ctrl_c();
    let shape = if args.workload == Workload::RwMap {
        RwShape::Map
    } else {
        RwShape::Lines
    };
    let locks = rw::resolve(&args.locks).map_err(bench_err)?;
    let threads = thread_counts(args, RW_THREADS)?;
    let default_pct = if shape == RwShape::Map {
        MAP_READ_PCT
    } else {
        RW_READ_PCT
    };
    let read_pct = args::percent_list(
        "--read-pct",
        args.read_pct.as_deref().unwrap_or(default_pct),
    )?;
    let mut ncs_ns = Vec::new();
    for n in args::ncs_list("--ncs", &args.ncs)? {
        match n {
            Ncs::Ns(v) => ncs_ns.push(v),
            Ncs::Times(_) => {
                return Err(CliError::usage(format!(
                    "--ncs: give ns for --workload {} (multiples like 40x are for micro and kv), got `{}`",
                    shape.name(),
                    args.ncs
                )));
            }
        }
    }
    let grid = RwGrid {
        locks,
        threads,
        read_pct,
        ncs_ns,
        base: RwConfig {
            base: ron_bench::workload::LoopConfig {
                duration,
                warmup,
                pinning: args.pin.pinning(),
                seed: args.seed,
                ..ron_bench::workload::LoopConfig::default()
            },
            shape,
            cs_lines: args.cs_lines,
            ..RwConfig::default()
        },
        repeat: args.repeat,
    };
    grid.validate().map_err(bench_err)?;
    let (source, fingerprint) = install_route(args.no_install);
    let cpus = ron_bench::pin::cpu_order().len();
    if let Some(&t) = grid.threads.iter().filter(|&&t| t > cpus).max() {
        output::warning(&format!(
            "{t} threads on {cpus} CPUs: threads outnumber CPUs, so spinning waiters take CPU time from the holder; those rows measure the scheduler as much as the lock"
        ));
    }
    let meta = run_meta(&source, fingerprint, grid.repeat, cpus);
    clock::calibrate();
    let work = match shape {
        RwShape::Lines => format!(
            "each operation a read (read %) or a write of {} cache line{} under one reader-writer lock",
            grid.base.cs_lines,
            if grid.base.cs_lines == 1 { "" } else { "s" }
        ),
        RwShape::Map => format!(
            "a HashMap of {MAP_KEYS} keys under one reader-writer lock: each operation a get (read %) or an insert of a present key"
        ),
    };
    let header = format!(
        "ron bench --workload {}: {work}\n{}{}\n",
        shape.name(),
        grid_lines(
            grid.points(),
            grid.repeat,
            duration,
            warmup,
            grid.base.base.pinning,
            &meta
        ),
        clock_note(),
    );
    let pb = progress::bar(
        grid.runs() as u64,
        (duration + warmup) * grid.runs() as u32,
        shape.name(),
    );
    let outcome = grid.run(progress::follow(&pb)).map_err(bench_err)?;
    pb.finish_and_clear();
    let (meta, header) = mark_interrupted(meta, header, outcome.interrupted);
    let rows = outcome.rows;
    print_with_footer(args, &meta, &rows, &header, &summary(&rows))?;
    save_out(args, &meta, &rows, &header)?;
    finish(args, &rows, grid.points(), outcome.interrupted, |bad| {
        (!bad.exclusion_ok).then(|| {
            format!(
                "reader-writer exclusion violated: lock {} at {} threads, {} % reads",
                bad.lock, bad.threads, bad.read_pct
            )
        })
    })
}

/// The closing lines: ron-rw against parking_lot at each point, mean +-
/// standard deviation of the ratio, and the per-round ratios' median and
/// range.
fn summary(rows: &[RwRow]) -> String {
    let mut out = String::new();
    for r in rows.iter().filter(|r| r.lock == "ron-rw") {
        let Some(x) = r.vs_parking_lot else { continue };
        let rounds = r
            .per_round
            .ratios()
            .filter(|_| r.repeats > 1)
            .map_or_else(String::new, |x| format!(" (per round {x})"));
        let sd = r
            .vs_parking_lot_sd
            .map_or_else(String::new, |s| format!(" +- {s:.2}"));
        out.push_str(&format!(
            "  {} thread{}, {} % reads, nCS {:.0} ns: ron-rw ran {x:.2}{sd} times as fast as parking_lot{}\n",
            r.threads,
            if r.threads == 1 { "" } else { "s" },
            r.read_pct,
            r.ncs_ns,
            rounds,
        ));
    }
    if out.is_empty() {
        out
    } else {
        format!(
            "Summary: ron-rw against parking_lot's RwLock at each point: the ratio of the mean rates +- its standard deviation, and with several rounds the median (lowest-highest) of the per-round ratios:\n{out}"
        )
    }
}
