//! The lock-loop workloads (`micro`, `kv`, `kv-update`, `ron-micro`): a grid of locks x threads x
//! nCS, each point run `--repeat` times, closed by a summary per point and
//! an optional comparison with `--baseline`.

use std::time::Duration;

use ron_bench::clock;
use ron_bench::grid::{Grid, LoopWorkload};
use ron_bench::registry::{self, LockKind};
use ron_bench::report::{BenchRow, RunMeta};
use ron_bench::workload::LoopConfig;

use super::options::{Args, Workload};
use super::shared::{
    bench_err, catch_ctrl_c, clock_note, finish, grid_lines, install_route, mark_interrupted,
    print_with_footer, run_meta, save, save_out, thread_counts,
};
use crate::args::{self, Ncs};
use crate::cmd::compare;
use crate::error::{CliError, CliResult};
use crate::output::{self, Format, table};
use crate::progress;

/// Thread counts when `--threads` is not given.
const DEFAULT_THREADS: &str = "1,2,8,32";

/// Runs the micro or kv grid.
pub(super) fn run(
    args: &Args,
    duration: Duration,
    warmup: Duration,
    baseline: Option<Vec<BenchRow>>,
) -> CliResult {
    // Before anything slow, so that an early Ctrl-C stops the run too.
    catch_ctrl_c();
    let locks = registry::resolve(&args.locks).map_err(bench_err)?;
    let threads = thread_counts(args, DEFAULT_THREADS)?;
    let ncs = args::ncs_list("--ncs", &args.ncs)?;
    let pinning = args.pin.pinning();
    let workload = match args.workload {
        Workload::Kv => LoopWorkload::Kv,
        Workload::KvUpdate => LoopWorkload::KvUpdate,
        Workload::RonMicro => LoopWorkload::RonMicro,
        _ => LoopWorkload::Micro,
    };
    // Default of --cs-lines: only micro reads it.
    if workload.cs_lines(args.cs_lines) == 0 && args.cs_lines != 2 {
        output::warning(&format!(
            "--cs-lines does not apply to --workload {}: its critical section is fixed",
            workload.name()
        ));
    }
    let mut grid = Grid {
        locks,
        threads,
        ncs_ns: vec![0.0],
        cs_lines: args.cs_lines,
        duration,
        warmup,
        pinning,
        seed: args.seed,
        workload,
        repeat: args.repeat,
    };
    grid.validate().map_err(bench_err)?;
    let (source, fingerprint) = install_route(args.no_install);
    // `40x` nCS: a multiple of one uncontended lock + CS + unlock.
    let cs_ns = if ncs.iter().any(|n| matches!(n, Ncs::Times(_))) {
        Some(uncontended_ns(&grid))
    } else {
        None
    };
    grid.ncs_ns = ncs.iter().map(|n| n.ns(cs_ns.unwrap_or(0.0))).collect();
    grid.validate().map_err(bench_err)?;
    let cpus = ron_bench::pin::cpu_order().len();
    if let Some(&t) = grid.threads.iter().filter(|&&t| t > cpus).max() {
        output::warning(&format!(
            "{t} threads on {cpus} CPUs: threads outnumber CPUs, so spinning waiters take CPU time from the holder; those rows measure the scheduler as much as the lock"
        ));
    }
    let meta = run_meta(&source, fingerprint, grid.repeat, cpus);
    let header = bench_header(&grid, &meta, cs_ns);
    let expected = (duration + warmup) * grid.runs() as u32;
    let pb = progress::bar(grid.runs() as u64, expected, "bench");
    let mut save_error: Option<CliError> = None;
    let outcome = grid
        .run_until(progress::follow(&pb), |rows| {
            if let Some(out) = &args.out
                && save_error.is_none()
            {
                let mut m = meta.clone();
                m.interrupted = true;
                save_error = save(out, &m, rows, &header).err();
            }
        })
        .map_err(bench_err)?;
    pb.finish_and_clear();
    if grid.ncs_ns.iter().any(|&n| n > 0.0) && !outcome.interrupted {
        warn_if_speed_changed();
    }
    let (meta, header) = mark_interrupted(meta, header, outcome.interrupted);
    let rows = outcome.rows;
    print_with_footer(args, &meta, &rows, &header, &summary(&rows))?;
    if let Some(base) = &baseline {
        let base_name = args
            .baseline
            .as_ref()
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let cmp = compare::compare(base, &rows);
        if cmp.is_empty() {
            output::warning(&format!(
                "--baseline: nothing compared: {}",
                compare::nothing_in_common(&base_name, "this run")
            ));
        } else {
            let text = format!(
                "\ncompared with {base_name}:\n{}{}",
                table::compare(&cmp),
                compare::verdict_line(&cmp)
            );
            // Beside a table on stdout; on stderr when stdout is CSV or JSON.
            if args.format == Format::Table {
                output::stdout(&text)?;
            } else {
                eprint!("{text}");
            }
            if let Some(note) = compare::unmatched_note(&base_name, base, "this run", &rows) {
                eprintln!("{note}");
            }
        }
    }
    save_out(args, &meta, &rows, &header)?;
    if let Some(e) = save_error {
        return Err(e);
    }
    finish(args, &rows, grid.points(), outcome.interrupted, |bad| {
        (!bad.exclusion_ok).then(|| {
            format!(
                "mutual exclusion violated: lock {} at {} threads lost updates",
                bad.lock, bad.threads
            )
        })
    })
}

/// After a run with nCS waits: measures the busy loop again and warns if
/// the machine's speed changed since the calibration every wait used (a
/// host that throttles or shares its CPUs), since the nCS columns then
/// name waits the run did not make.
fn warn_if_speed_changed() {
    let calibrated = clock::iters_per_ns();
    let now = clock::measure_iters_per_ns();
    if let Some(off) = clock::spin_drift(calibrated, now, SPEED_TOLERANCE) {
        output::warning(&format!(
            "the busy loop ran at {now:.3} iterations/ns after the run and at {calibrated:.3} when it was calibrated: the machine's speed changed, so the nCS waits were about {:.0} % {} than their column says; compare locks within this run only, and run again for absolute numbers",
            off * 100.0,
            if calibrated < now {
                "shorter"
            } else {
                "longer"
            }
        ));
    }
}

/// Largest change of the busy loop's speed between calibration and the end
/// of a run that passes without a warning.
const SPEED_TOLERANCE: f64 = 0.15;

fn bench_header(grid: &Grid, meta: &RunMeta, cs_ns: Option<f64>) -> String {
    let work = grid.workload.describe(grid.cs_lines);

    let mut h = format!(
        "ron bench: {work}\n{}{}\n",
        grid_lines(
            grid.points(),
            grid.repeat,
            grid.duration,
            grid.warmup,
            grid.pinning,
            meta
        ),
        clock_note(),
    );
    if let Some(cs) = cs_ns {
        h.push_str(&format!(
            "nCS multiples (`x`) are of {cs:.0} ns, one uncontended lock + critical section + unlock\n"
        ));
    }
    h
}

/// One uncontended acquisition of the grid's first lock, in ns (a short
/// single-thread run).
fn uncontended_ns(grid: &Grid) -> f64 {
    let base = LoopConfig {
        threads: 1,
        ncs_ns: 0.0,
        duration: Duration::from_millis(50),
        warmup: Duration::from_millis(10),
        pinning: grid.pinning,
        seed: grid.seed,
    };
    let s = grid.workload.run(grid.locks[0], base, grid.cs_lines);

    ron_stats::ratio(1e3, s.mlocks_per_s()).unwrap_or(0.0)
}

/// The closing lines: at each point, the fastest RON lock against the
/// fastest peer (or the fastest lock against the runner-up), with the
/// spread of the ratio.
fn summary(rows: &[BenchRow]) -> String {
    let mut keys: Vec<(String, usize, u64)> = Vec::new();
    for r in rows {
        let k = (r.workload.clone(), r.threads, r.ncs_ns.to_bits());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    let kind = |name: &str| registry::find(name).map(|e| e.info.kind).ok();
    let mut out = String::new();
    for (w, t, n) in keys {
        let at: Vec<&BenchRow> = rows
            .iter()
            .filter(|r| r.workload == w && r.threads == t && r.ncs_ns.to_bits() == n)
            .collect();
        let fastest = |f: &dyn Fn(&BenchRow) -> bool| {
            at.iter()
                .copied()
                .filter(|r| f(r))
                .max_by(|a, b| a.mlocks_per_s.total_cmp(&b.mlocks_per_s))
        };
        let own = fastest(&|r| kind(&r.lock) == Some(LockKind::Ron))
            .map(|r| (r, "fastest RON lock"))
            .or_else(|| {
                fastest(&|r| kind(&r.lock) != Some(LockKind::Peer)).map(|r| (r, "fastest own lock"))
            });
        let peer = fastest(&|r| kind(&r.lock) == Some(LockKind::Peer));
        let (a, b, what) = match (own, peer) {
            (Some((a, mine)), Some(b)) => (a, b, format!("{mine} vs fastest peer")),
            _ => {
                let mut sorted = at.clone();
                sorted.sort_by(|x, y| y.mlocks_per_s.total_cmp(&x.mlocks_per_s));
                match sorted.as_slice() {
                    [a, b, ..] => (*a, *b, "fastest lock vs runner-up".to_string()),
                    _ => continue,
                }
            }
        };
        let ncs = f64::from_bits(n);
        let Some(r) = ron_stats::ratio(a.mlocks_per_s, b.mlocks_per_s) else {
            out.push_str(&format!(
                "  {t} thread{}, nCS {ncs:.0} ns: {} made no progress\n",
                if t == 1 { "" } else { "s" },
                b.lock
            ));
            continue;
        };
        let sd = ron_stats::ratio_sd(
            a.mlocks_per_s,
            a.mlocks_per_s_sd,
            b.mlocks_per_s,
            b.mlocks_per_s_sd,
        )
        .filter(|_| a.repeats > 1 && b.repeats > 1)
        .map_or_else(String::new, |s| format!(" +- {s:.2}"));
        let rounds = per_round_note(&a.runs_mlocks_per_s, &b.runs_mlocks_per_s);
        out.push_str(&format!(
            "  {t} thread{}, nCS {ncs:.0} ns{}: {} ran {r:.2}{sd} times as fast as {} ({what}{rounds})\n",
            if t == 1 { "" } else { "s" },
            if w == "micro" {
                String::new()
            } else {
                format!(" ({w})")
            },
            a.lock,
            b.lock
        ));
    }
    if out.is_empty() {
        out
    } else {
        format!(
            "Summary: at each point the fastest RON lock against the fastest peer (a faster baseline shows in `x best peer`): the ratio of the mean rates +- its standard deviation, and with several rounds the median (lowest-highest) of the per-round ratios:\n{out}"
        )
    }
}

/// `"; per round M (LO-HI)"`: the median, lowest and highest of the
/// per-round ratios of two rows' runs (empty with one round).
fn per_round_note(a: &[f64], b: &[f64]) -> String {
    ron_stats::round_ratios(a, b)
        .filter(|_| a.len() > 1)
        .map_or_else(String::new, |x| format!("; per round {x}"))
}
