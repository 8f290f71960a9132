//! `ron bench`: the lock microbenchmark grid, the key-value workload and
//! the co-runner cost (see `ron_bench` for what each measures).
//!
//! Every point runs `--repeat` times (the whole grid once per repeat, so
//! slow drift spreads over all locks); rows report the mean and spread.
//! The results go to stdout (and to `--out`, checked before anything
//! runs, rewritten after every run so that Ctrl-C or an error keeps what
//! was measured); the table closes with a summary per point, as hyperfine
//! does; `--baseline` compares with an earlier run.

use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;

use ron_bench::grid::{Grid, LoopWorkload, run_corunner};
use ron_bench::pin::Pinning;
use ron_bench::registry::{self, LockKind};
use ron_bench::report::{self, BenchRow, Report, RunMeta};
use ron_bench::workload::corunner;
use ron_bench::workload::many_locks::{
    self, ManyLocksConfig, ManyLocksGrid, ManyLocksRow, SkippedPoint,
};
use ron_bench::workload::{LoopConfig, MAX_THREADS};
use ron_bench::{BenchError, clock};
use serde::Serialize;

use crate::args::{self, Ncs};
use crate::cmd::compare;
use crate::error::{CliError, CliResult};
use crate::output::{self, Format, json, table};
use crate::progress;

/// Which workload to run.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Workload {
    /// lock; read+write K cache lines; unlock; busy-wait nCS.
    Micro,
    /// A BTreeMap of 1024 keys under one lock: 80% lookups, 20% updates.
    Kv,
    /// A compute thread sharing its CPU with W waiters: its slowdown per
    /// waiting policy.
    Corunner,
    /// T threads, N locks (`--n-locks`): each operation locks a random one,
    /// increments its counter, unlocks; with bytes per lock and resident
    /// memory.
    ManyLocks,
}

/// Thread placement.
#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum Pin {
    /// Pin thread i round-robin along the installed route.
    Route,
    /// Let the scheduler place threads.
    None,
}

/// Thread counts of the lock-loop workloads when `--threads` is not given.
const DEFAULT_THREADS: &str = "1,2,8,32";
/// Thread counts of the many-locks workload when `--threads` is not given.
const MANY_LOCKS_THREADS: &str = "1,2,16";

/// Arguments of `ron bench`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Print every lock name (and co-runner policy) and exit.
    #[arg(long)]
    pub list: bool,
    /// Workload.
    #[arg(long, value_enum, default_value_t = Workload::Micro)]
    pub workload: Workload,
    /// Locks, comma-separated: `default` (5 RON and baseline locks + 3
    /// peers), `all` (all 17), or names from `--list` (command-line or type
    /// names, any case).
    #[arg(long, default_value = "default", value_name = "LIST")]
    pub locks: String,
    /// Thread counts, comma-separated [default: 1,2,8,32; many-locks:
    /// 1,2,16].
    #[arg(long, value_name = "LIST")]
    pub threads: Option<String>,
    /// Mean non-critical sections, comma-separated: ns, or a multiple of
    /// the uncontended lock+CS+unlock time with an `x` suffix (`40x`).
    /// Each is jittered +-15%.
    #[arg(long, default_value = "0,1000", value_name = "LIST")]
    pub ncs: String,
    /// Cache lines read and written in each critical section (micro).
    #[arg(long, default_value_t = 2, value_name = "K")]
    pub cs_lines: usize,
    /// Measured time per run (seconds, or with a unit: 250ms); co-runner:
    /// per phase.
    #[arg(long, default_value = "100ms", value_name = "DURATION")]
    pub duration: String,
    /// Warm-up per run (seconds, or with a unit).
    #[arg(long, default_value = "50ms", value_name = "DURATION")]
    pub warmup: String,
    /// Runs per point; the table shows their mean and standard deviation.
    #[arg(long, default_value_t = 3, value_name = "N")]
    pub repeat: usize,
    /// Thread placement.
    #[arg(long, value_enum, default_value_t = Pin::Route)]
    pub pin: Pin,
    /// Do not install the calibrated (or topology) route first.
    #[arg(long)]
    pub no_install: bool,
    /// Seed of the nCS jitter and key generators.
    #[arg(long, default_value_t = 1)]
    pub seed: u64,
    /// Many-locks: numbers of locks, comma-separated (each operation takes
    /// a uniformly random one of them).
    #[arg(long, default_value = "2,1000,1000000", value_name = "LIST")]
    pub n_locks: String,
    /// Many-locks: skip a (lock, N) point whose locks would take more than
    /// this many MiB (a note says so).
    #[arg(long, default_value_t = 1024, value_name = "MIB")]
    pub max_lock_memory: u64,
    /// Co-runner: waiters sharing the compute thread's CPU, comma-separated.
    #[arg(long, default_value = "1,3", value_name = "LIST")]
    pub waiters: String,
    /// Co-runner: waiting policies, comma-separated (`all` or names from
    /// `--list`).
    #[arg(long, default_value = "all", value_name = "LIST")]
    pub policies: String,
    /// Format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
    /// Also write the results to FILE, in the format of its extension
    /// (.json, .csv, .md); rewritten after every run.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
    /// Compare with an earlier `ron bench` JSON or CSV file (as `ron compare
    /// FILE new` would).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
}

fn bench_err(e: BenchError) -> CliError {
    CliError::usage(e.to_string())
}

/// Set by Ctrl-C: finish the current run, then stop and save.
static STOP: AtomicBool = AtomicBool::new(false);

fn catch_ctrl_c() {
    // A second Ctrl-C exits at once. An error (a handler already set) only
    // loses the graceful stop.
    let _ = ctrlc::set_handler(|| {
        // Relaxed: a request flag; the grid polls it between runs.
        if STOP.swap(true, Ordering::Relaxed) {
            std::process::exit(130);
        }
    });
}

/// Runs `ron bench`.
pub fn run(args: Args) -> CliResult {
    if args.list {
        return output::stdout(&list());
    }
    let duration = args::duration("--duration", &args.duration, false)?;
    let warmup = args::duration("--warmup", &args.warmup, true)?;
    if let Some(out) = &args.out {
        output::prepare_out(out)?;
    }
    let baseline = match &args.baseline {
        Some(p) => Some(compare::read_rows(p)?),
        None => None,
    };
    if args.workload == Workload::Corunner {
        return run_corunner_cmd(&args, duration);
    }
    if args.workload == Workload::ManyLocks {
        return run_many_locks_cmd(&args, duration, warmup);
    }
    let locks = registry::resolve(&args.locks).map_err(bench_err)?;
    let threads = args::positive_list(
        "--threads",
        args.threads.as_deref().unwrap_or(DEFAULT_THREADS),
        MAX_THREADS,
    )?;
    let ncs = args::ncs_list("--ncs", &args.ncs)?;
    let pinning = match args.pin {
        Pin::Route => Pinning::Route,
        Pin::None => Pinning::None,
    };
    let workload = match args.workload {
        Workload::Kv => LoopWorkload::Kv,
        _ => LoopWorkload::Micro,
    };
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
    catch_ctrl_c();
    let mut save_error: Option<CliError> = None;
    let outcome = grid
        .run_until(
            |done, _, label| {
                pb.set_position(done as u64);
                pb.set_message(label.to_string());
            },
            &STOP,
            |rows| {
                if let Some(out) = &args.out
                    && save_error.is_none()
                {
                    let mut m = meta.clone();
                    m.interrupted = true;
                    save_error = save(out, &m, rows, &header).err();
                }
            },
        )
        .map_err(bench_err)?;
    pb.finish_and_clear();
    if grid.ncs_ns.iter().any(|&n| n > 0.0) {
        warn_if_speed_changed();
    }
    let mut meta = meta;
    meta.interrupted = outcome.interrupted;
    let rows = outcome.rows;
    let summary = summary(&rows);
    let text = match args.format {
        Format::Table => format!("{header}\n{}\n{summary}", table::bench(&rows)),
        Format::Csv => output::csv::bench(&rows),
        Format::Json => json::pretty(&Report {
            meta: meta.clone(),
            rows: rows.clone(),
        })?,
    };
    output::stdout(&text)?;
    if args.format != Format::Table {
        eprint!("{summary}");
    }
    if let Some(base) = &baseline {
        let cmp = compare::compare(base, &rows);
        let text = format!(
            "\ncompared with {}:\n{}{}",
            args.baseline
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
            table::compare(&cmp),
            compare::verdict_line(&cmp)
        );
        // Beside a table on stdout; on stderr when stdout is CSV or JSON.
        if args.format == Format::Table {
            output::stdout(&text)?;
        } else {
            eprint!("{text}");
        }
    }
    if let Some(out) = &args.out {
        save(out, &meta, &rows, &header)?;
        output::status(&format!("wrote {}", out.display()));
    }
    if let Some(e) = save_error {
        return Err(e);
    }
    if let Some(bad) = rows.iter().find(|r| !r.exclusion_ok) {
        return Err(CliError::failed(format!(
            "mutual exclusion violated: lock {} at {} threads lost updates",
            bad.lock, bad.threads
        )));
    }
    if outcome.interrupted {
        return Err(CliError::interrupted(format!(
            "interrupted: {} of {} points measured (rows above{})",
            rows.len(),
            grid.points(),
            if args.out.is_some() {
                " and in --out"
            } else {
                ""
            }
        )));
    }
    Ok(())
}

/// Writes rows to `out` in the format of its extension.
fn save<R: Serialize + Clone>(
    out: &std::path::Path,
    meta: &RunMeta,
    rows: &[R],
    header: &str,
) -> CliResult
where
    Rows<R>: Render,
{
    let r = Rows(rows.to_vec());
    let text = match Format::of_path(out) {
        Format::Table => format!("{header}\n{}", r.table()),
        Format::Csv => r.csv(),
        Format::Json => json::pretty(&Report {
            meta: meta.clone(),
            rows: rows.to_vec(),
        })?,
    };
    output::write_file(out, &text)
}

/// Rows of one kind, with their table and CSV renderings.
pub struct Rows<R>(Vec<R>);

/// The table and CSV of a kind of row.
pub trait Render {
    /// The table.
    fn table(&self) -> String;
    /// The CSV.
    fn csv(&self) -> String;
}

impl Render for Rows<BenchRow> {
    fn table(&self) -> String {
        table::bench(&self.0)
    }
    fn csv(&self) -> String {
        output::csv::bench(&self.0)
    }
}

impl Render for Rows<report::CorunnerRow> {
    fn table(&self) -> String {
        table::corunner(&self.0)
    }
    fn csv(&self) -> String {
        output::csv::corunner(&self.0)
    }
}

impl Render for Rows<ManyLocksRow> {
    fn table(&self) -> String {
        many_locks_table(&self.0)
    }
    fn csv(&self) -> String {
        many_locks_csv(&self.0)
    }
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

/// The run's metadata.
fn run_meta(
    source: &str,
    calibration: Option<ron_topo::Fingerprint>,
    repeat: usize,
    cpus: usize,
) -> RunMeta {
    RunMeta {
        tool: "ron".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        command_line: std::env::args().collect(),
        date: humantime::format_rfc3339_seconds(std::time::SystemTime::now()).to_string(),
        cpu_model: ron_topo::calibration::cpu_model(),
        cpus,
        route_source: source.to_string(),
        calibration,
        repeat,
        interrupted: false,
    }
}

fn bench_header(grid: &Grid, meta: &RunMeta, cs_ns: Option<f64>) -> String {
    let work = grid.workload.describe(grid.cs_lines);

    let mut h = format!(
        "ron bench: {work}\n{} points x {} run{} x ({} + {} warm-up); threads {}; route from {}\n{}, {} CPU{}; TSC {:.3} ticks/ns, busy loop {:.3} iterations/ns\n",
        grid.points(),
        grid.repeat,
        if grid.repeat == 1 { "" } else { "s" },
        args::show_duration(grid.duration),
        args::show_duration(grid.warmup),
        if grid.pinning == Pinning::Route {
            "pinned along the route"
        } else {
            "unpinned"
        },
        meta.route_source,
        meta.cpu_model,
        meta.cpus,
        if meta.cpus == 1 { "" } else { "s" },
        clock::ticks_per_ns(),
        clock::iters_per_ns(),
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

    report::ratio(1e3, s.mlocks_per_s()).unwrap_or(0.0)
}

/// The closing lines: at each point, the fastest RON lock against the
/// fastest peer (or the fastest lock against the runner-up), with the
/// spread of the ratio.
pub fn summary(rows: &[BenchRow]) -> String {
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
            .or_else(|| fastest(&|r| kind(&r.lock) != Some(LockKind::Peer)));
        let peer = fastest(&|r| kind(&r.lock) == Some(LockKind::Peer));
        let (a, b, what) = match (own, peer) {
            (Some(a), Some(b)) => (a, b, "the fastest peer"),
            _ => {
                let mut sorted = at.clone();
                sorted.sort_by(|x, y| y.mlocks_per_s.total_cmp(&x.mlocks_per_s));
                match sorted.as_slice() {
                    [a, b, ..] => (*a, *b, "the runner-up"),
                    _ => continue,
                }
            }
        };
        let ncs = f64::from_bits(n);
        let Some(r) = report::ratio(a.mlocks_per_s, b.mlocks_per_s) else {
            out.push_str(&format!(
                "  {t} thread{}, nCS {ncs:.0} ns: {} made no progress\n",
                if t == 1 { "" } else { "s" },
                b.lock
            ));
            continue;
        };
        let sd = report::ratio_sd(
            a.mlocks_per_s,
            a.mlocks_per_s_sd,
            b.mlocks_per_s,
            b.mlocks_per_s_sd,
        )
        .filter(|_| a.repeats > 1 && b.repeats > 1)
        .map_or_else(String::new, |s| format!(" +- {s:.2}"));
        out.push_str(&format!(
            "  {t} thread{}, nCS {ncs:.0} ns{}: {} ran {r:.2}{sd} times as fast as {} ({what})\n",
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
        format!("Summary (mean +- standard deviation over the runs):\n{out}")
    }
}

/// Installs the calibrated route (or the topology fallback); returns a
/// description of its source and the calibration's fingerprint.
fn install_route(skip: bool) -> (String, Option<ron_topo::Fingerprint>) {
    if skip {
        return (
            if ron_core::route::is_installed() {
                "an earlier install".into()
            } else {
                "nowhere (identity order, --no-install)".into()
            },
            None,
        );
    }
    let r = ron_topo::install();
    let fp = match &r.source {
        ron_topo::RouteSource::Calibration(p) => {
            ron_topo::Calibration::read(p).ok().map(|c| c.fingerprint)
        }
        _ => None,
    };
    let text = match r.fallback_reason {
        Some(why) => format!("{} (calibration not used: {why})", r.source),
        None => r.source.to_string(),
    };
    (text, fp)
}

fn run_corunner_cmd(args: &Args, duration: Duration) -> CliResult {
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
    let rows = run_corunner(&policies, &waiters, duration, |done, _, label| {
        pb.set_position(done as u64);
        pb.set_message(label.to_string());
    })
    .map_err(bench_err)?;
    pb.finish_and_clear();
    let text = match args.format {
        Format::Table => format!("{header}\n{}", table::corunner(&rows)),
        Format::Csv => output::csv::corunner(&rows),
        Format::Json => json::pretty(&Report {
            meta: meta.clone(),
            rows: rows.clone(),
        })?,
    };
    output::stdout(&text)?;
    if let Some(out) = &args.out {
        save(out, &meta, &rows, &header)?;
        output::status(&format!("wrote {}", out.display()));
    }
    Ok(())
}

fn run_many_locks_cmd(args: &Args, duration: Duration, warmup: Duration) -> CliResult {
    let locks = registry::resolve(&args.locks).map_err(bench_err)?;
    let threads = args::positive_list(
        "--threads",
        args.threads.as_deref().unwrap_or(MANY_LOCKS_THREADS),
        MAX_THREADS,
    )?;
    let n_locks = args::positive_list("--n-locks", &args.n_locks, many_locks::MAX_LOCKS)?;
    let grid = ManyLocksGrid {
        locks,
        threads,
        n_locks,
        base: ManyLocksConfig {
            duration,
            warmup,
            pinning: match args.pin {
                Pin::Route => Pinning::Route,
                Pin::None => Pinning::None,
            },
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
        "ron bench --workload many-locks: each operation locks one of N locks at random, increments its counter, unlocks\n{} points x {} run{} x ({} + {} warm-up); threads {}; route from {}\n{}, {} CPU{}; resident memory: current RSS (/proc/self/statm) after the measured window, locks alive; +RSS: gained since before the locks were allocated\n",
        grid.points(),
        grid.repeat,
        if grid.repeat == 1 { "" } else { "s" },
        args::show_duration(duration),
        args::show_duration(warmup),
        if grid.base.pinning == Pinning::Route {
            "pinned along the route"
        } else {
            "unpinned"
        },
        meta.route_source,
        meta.cpu_model,
        meta.cpus,
        if meta.cpus == 1 { "" } else { "s" },
    );
    let pb = progress::bar(
        grid.runs() as u64,
        (duration + warmup) * grid.runs() as u32,
        "many-locks",
    );
    let outcome = grid
        .run(|done, _, label| {
            pb.set_position(done as u64);
            pb.set_message(label.to_string());
        })
        .map_err(bench_err)?;
    pb.finish_and_clear();
    let notes = many_locks_notes(&outcome.rows, &outcome.skipped);
    let rows = outcome.rows;
    let text = match args.format {
        Format::Table => format!("{header}\n{}\n{notes}", many_locks_table(&rows)),
        Format::Csv => many_locks_csv(&rows),
        Format::Json => json::pretty(&Report {
            meta: meta.clone(),
            rows: rows.clone(),
        })?,
    };
    output::stdout(&text)?;
    if args.format != Format::Table {
        eprint!("{notes}");
    }
    if let Some(out) = &args.out {
        save(out, &meta, &rows, &header)?;
        output::status(&format!("wrote {}", out.display()));
    }
    if let Some(bad) = rows.iter().find(|r| !r.exclusion_ok) {
        return Err(CliError::failed(format!(
            "mutual exclusion violated: lock {} at {} threads, {} locks lost updates",
            bad.lock, bad.threads, bad.n_locks
        )));
    }
    Ok(())
}

fn mib(bytes: u64) -> String {
    format!("{:.1}", bytes as f64 / (1u64 << 20) as f64)
}

/// The table of many-locks rows.
fn many_locks_table(rows: &[ManyLocksRow]) -> String {
    let header = [
        "lock",
        "threads",
        "locks",
        "Mops/s",
        "+- sd",
        "x parking_lot",
        "+- sd",
        "fairness",
        "CPU ns/op",
        "bytes/lock",
        "locks MiB",
        "RSS MiB",
        "+RSS MiB",
    ];
    let cells: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                if r.exclusion_ok {
                    r.lock.clone()
                } else {
                    format!("{} (EXCLUSION FAILED)", r.lock)
                },
                r.threads.to_string(),
                r.n_locks.to_string(),
                format!("{:.3}", r.mops_per_s),
                if r.repeats > 1 {
                    format!("{:.3}", r.mops_per_s_sd)
                } else {
                    "-".into()
                },
                table::opt(r.vs_parking_lot, 2),
                table::opt(r.vs_parking_lot_sd, 2),
                table::opt(r.fairness_factor, 3),
                table::opt(r.cpu_ns_per_op, 0),
                r.bytes_per_lock.to_string(),
                mib(r.lock_bytes),
                r.rss_bytes.map_or_else(|| "-".into(), mib),
                r.rss_delta_bytes.map_or_else(|| "-".into(), mib),
            ]
        })
        .collect();
    table::table(&header, &cells)
}

/// The CSV columns of many-locks rows (JSON has these and `per_thread`).
pub const MANY_LOCKS_COLUMNS: [&str; 22] = [
    "workload",
    "lock",
    "threads",
    "n_locks",
    "duration_s",
    "pinned",
    "seed",
    "repeats",
    "mops_per_s",
    "mops_per_s_sd",
    "mops_per_s_min",
    "mops_per_s_max",
    "total",
    "fairness_factor",
    "cpu_ns_per_op",
    "vs_parking_lot",
    "vs_parking_lot_sd",
    "bytes_per_lock",
    "lock_bytes",
    "rss_bytes",
    "rss_delta_bytes",
    "exclusion_ok",
];

/// Many-locks rows as CSV.
fn many_locks_csv(rows: &[ManyLocksRow]) -> String {
    let o = |x: Option<f64>| {
        x.filter(|v| v.is_finite())
            .map_or_else(String::new, |v| format!("{v:.4}"))
    };
    let u = |x: Option<u64>| x.map_or_else(String::new, |v| v.to_string());
    output::csv::document(
        &MANY_LOCKS_COLUMNS,
        rows.iter().map(|r| {
            vec![
                r.workload.clone(),
                r.lock.clone(),
                r.threads.to_string(),
                r.n_locks.to_string(),
                format!("{:.4}", r.duration_s),
                r.pinned.to_string(),
                r.seed.to_string(),
                r.repeats.to_string(),
                format!("{:.4}", r.mops_per_s),
                format!("{:.4}", r.mops_per_s_sd),
                format!("{:.4}", r.mops_per_s_min),
                format!("{:.4}", r.mops_per_s_max),
                r.total.to_string(),
                o(r.fairness_factor),
                o(r.cpu_ns_per_op),
                o(r.vs_parking_lot),
                o(r.vs_parking_lot_sd),
                r.bytes_per_lock.to_string(),
                r.lock_bytes.to_string(),
                u(r.rss_bytes),
                u(r.rss_delta_bytes),
                r.exclusion_ok.to_string(),
            ]
        }),
    )
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

fn list() -> String {
    let cells: Vec<Vec<String>> = registry::registry()
        .iter()
        .map(|e| {
            vec![
                e.info.name.to_string(),
                match e.info.kind {
                    LockKind::Ron => "ron",
                    LockKind::Baseline => "baseline",
                    LockKind::Peer => "peer",
                }
                .to_string(),
                e.info.type_name.to_string(),
                e.info.about.to_string(),
            ]
        })
        .collect();
    let defaults: Vec<&str> = registry::defaults().iter().map(|e| e.name()).collect();
    let mut s = format!(
        "locks (--locks; names or type names, any case; `all` = every one, `default` = {}):\n",
        defaults.join(",")
    );
    s.push_str(&table::table(
        &["name", "kind", "type", "description"],
        &cells,
    ));
    s.push_str("\nco-runner policies (--workload corunner --policies):\n");
    let cells: Vec<Vec<String>> = corunner::policies()
        .iter()
        .map(|p| vec![p.name.to_string(), p.type_name.to_string()])
        .collect();
    s.push_str(&table::table(&["policy", "type"], &cells));
    s
}
