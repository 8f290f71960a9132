//! `ron-vm-bench`: the micro workload of `ron bench` on a virtual machine
//! priced by a latency matrix (see the crate docs of `ron_vm_bench`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use ron_vm::{Costs, LineModel};
use ron_vm_bench::locks::{self, NAMES, RelaxKind};
use ron_vm_bench::report::{Format, Row, RowKey, render_with};
use ron_vm_bench::{GroupsChoice, Placement, Point, VirtualMachine, Workload};

/// Runs ron-core locks on a virtual many-core machine. Option names are
/// those of `ron bench` where the two tools share an option.
#[derive(Parser, Debug)]
#[command(name = "ron-vm-bench", version)]
struct Args {
    /// The machine: a latency matrix (CSV or JSON) or a calibration JSON.
    #[arg(long, value_name = "FILE", alias = "machine")]
    matrix: PathBuf,
    /// Workload.
    #[arg(long, value_enum, default_value_t = Workload::Micro)]
    workload: Workload,
    /// Locks, comma-separated, or `all`.
    #[arg(
        long,
        default_value = "ron,nxt-ron,mcs,ttas,ticket",
        value_name = "LIST",
        alias = "lock"
    )]
    locks: String,
    /// Thread counts, comma-separated (`all` = every CPU of the machine);
    /// more threads than CPUs share CPUs (the VM schedules them).
    #[arg(long, default_value = "8", value_name = "LIST")]
    threads: String,
    /// Mean non-critical sections in ns, comma-separated.
    #[arg(long, default_value = "0", value_name = "LIST")]
    ncs: String,
    /// Data lines written per critical section (micro).
    #[arg(long, default_value_t = 2, value_name = "K")]
    cs_lines: usize,
    /// Acquisitions per point.
    #[arg(long, default_value_t = 20_000, value_name = "N")]
    acquisitions: u64,
    /// Runs per point, with seeds SEED, SEED+1, ..: each its own placement
    /// and jitter (every lock of a point runs under the same ones).
    #[arg(long, default_value_t = 1, value_name = "N")]
    repeat: u64,
    /// Seed of the jitter, the start skew and a random placement (the
    /// first run's).
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Slots of the RON locks: a number, or `cpu` (one per CPU).
    #[arg(long, default_value = "16", value_name = "N")]
    slots: String,
    /// Waiting policies of the locks that take one, comma-separated
    /// (`default`, `spin`).
    #[arg(long, default_value = "default", value_name = "LIST")]
    relax: String,
    /// Where threads run.
    #[arg(long, value_enum, default_value_t = Placement::Random)]
    placement: Placement,
    /// Threads start within U(0, nCS + this) ns of virtual time.
    #[arg(long, default_value_t = 1000.0, value_name = "NS")]
    start_skew_ns: f64,
    /// The group table of the NUMA-aware locks: `socket`, `l3`, `none`
    /// (one group) or a file of one group id per CPU.
    #[arg(long, default_value = "socket", value_name = "socket|l3|none|FILE")]
    groups: GroupsChoice,
    /// How transfers of one line queue: `directory` (reads overlap but for
    /// the home's occupancy) or `relay` (one after the other).
    #[arg(long, value_enum, default_value_t = LineArg::Directory)]
    line_model: LineArg,
    /// Directory model: occupancy of a line's home per request (ns).
    #[arg(long, default_value_t = Costs::default().dir_occupancy_ns, value_name = "NS")]
    dir_occupancy_ns: f64,
    /// Misses one thread may have outstanding at once (1: one at a time).
    #[arg(long, default_value_t = Costs::default().mlp, value_name = "N")]
    mlp: usize,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Leave the wall time out (output then depends only on the inputs).
    #[arg(long)]
    no_wall: bool,
    /// Cost of one pause (ns).
    #[arg(long, default_value_t = Costs::default().pause_ns, value_name = "NS")]
    pause_ns: f64,
    /// Cost of one yield (ns).
    #[arg(long, default_value_t = Costs::default().yield_ns, value_name = "NS")]
    yield_ns: f64,
    /// Cache-line size (64, or 128 for adjacent-line prefetch).
    #[arg(long, default_value_t = 64, value_name = "BYTES")]
    line_bytes: usize,
    /// Append the line transfers per handover (every line the run touched,
    /// the lock's and the K data lines, in the measured window, over its
    /// handovers; a measurement of the model) as the last column.
    #[arg(long)]
    transfers: bool,
    /// After the table, the cache lines that cost each run's measured
    /// window most (by the time their requesters waited), per
    /// handover: transfers and ns waited, and whose line it is (`lock`:
    /// the lock's own bytes; `data`: the critical section's lines;
    /// `other`: a pool block, a shared table, a queue node). A measurement
    /// of the model: which line transfers limit a handover. Table output
    /// only.
    #[arg(long)]
    lines: bool,
    /// Run every look of a waiter (no suspension in `spin_while` or
    /// `park_looks`): the same results, slower; for comparing the host time.
    #[arg(long)]
    no_suspend: bool,
}

/// `--line-model`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
enum LineArg {
    /// Reads of a line overlap but for the home's occupancy.
    Directory,
    /// Transfers of a line one after the other at full latency.
    Relay,
}

fn floats(s: &str, what: &str) -> Result<Vec<f64>, String> {
    s.split(',')
        .map(str::trim)
        .filter(|x| !x.is_empty())
        .map(|x| {
            x.parse::<f64>()
                .map_err(|_| format!("{what}: cannot parse {x:?}"))
        })
        .collect()
}

fn main() -> ExitCode {
    ron_vm_bench::cli::exit(real_main())
}

fn real_main() -> Result<(), String> {
    let a = Args::parse();
    let mut vm = VirtualMachine::load(&a.matrix)?;
    vm.set_groups(&a.groups)?;
    let n = vm.n();
    eprintln!(
        "# {}: {n} CPUs, FIFO mean {:.1} ns, route {:.1} ns per lap ({:.1} ns per hop)",
        vm.name,
        vm.matrix.fifo_mean(),
        vm.matrix.tour_cost(&vm.route),
        vm.matrix.tour_cost(&vm.route) / n as f64
    );
    eprintln!("# groups {}", vm.groups.describe());
    let locks: Vec<String> = if a.locks.trim() == "all" {
        NAMES.iter().map(|s| s.to_string()).collect()
    } else {
        a.locks.split(',').map(|s| s.trim().to_string()).collect()
    };
    if let Some(l) = locks.iter().find(|l| !NAMES.contains(&l.as_str())) {
        return Err(format!("--locks: unknown lock {l:?}; one of {NAMES:?}"));
    }
    let relaxes: Vec<RelaxKind> = a
        .relax
        .split(',')
        .map(|r| match r.trim() {
            "default" => Ok(RelaxKind::Default),
            "spin" => Ok(RelaxKind::Spin),
            r => Err(format!("--relax: {r:?} is not default or spin")),
        })
        .collect::<Result<_, _>>()?;
    if a.repeat == 0 {
        return Err("--repeat: must be at least 1, got 0".into());
    }
    if a.lines && a.format != Format::Table {
        return Err("--lines: needs --format table".into());
    }
    ron_vm_bench::workload::measure_lines(a.lines);
    if a.mlp == 0 || a.mlp > 64 {
        return Err(format!("--mlp: must be in 1..=64, got {}", a.mlp));
    }
    let threads: Vec<usize> = a
        .threads
        .split(',')
        .map(|t| match t.trim() {
            "all" => Ok(n),
            t => t
                .parse::<usize>()
                .map_err(|_| format!("--threads: cannot parse {t:?}")),
        })
        .collect::<Result<_, _>>()?;
    if threads.contains(&0) {
        return Err("--threads: must be at least 1, got 0".into());
    }
    if let Some(&t) = threads.iter().filter(|&&t| t > n).max() {
        eprintln!(
            "# note: oversubscribed: up to {t} threads on {n} CPUs; beyond {n}, thread i shares \
             the CPU of thread i mod {n} and the VM's scheduler runs them in turn (3 ms slices, \
             sched_yield, futex sleeps; see ron-vm's docs)"
        );
    }
    let ncs = floats(&a.ncs, "--ncs")?;
    let slots = match a.slots.trim() {
        "cpu" => locks::slots_per_cpu(n),
        s => s
            .parse()
            .map_err(|_| format!("--slots: cannot parse {s:?}"))?,
    };
    let costs = Costs {
        pause_ns: a.pause_ns,
        yield_ns: a.yield_ns,
        line_bytes: a.line_bytes,
        suspend_spinners: !a.no_suspend,
        line_model: match a.line_model {
            LineArg::Directory => LineModel::Directory,
            LineArg::Relay => LineModel::Relay,
        },
        dir_occupancy_ns: a.dir_occupancy_ns,
        mlp: a.mlp,
        ..Costs::default()
    };
    let groups = vm.groups.describe();
    let mut rows = Vec::new();
    // Only with `--transfers` (see `report`: nothing else may change the
    // process's allocations).
    let mut transfers = Vec::new();
    let mut line_text = String::new();
    for &t in &threads {
        for &c in &ncs {
            for seed in a.seed..a.seed + a.repeat {
                // One placement and one jitter for every lock of the point.
                let p = Point {
                    workload: a.workload,
                    start_skew_ns: a.start_skew_ns,
                    cpus: vm.place(t, a.placement, seed),
                    ncs_ns: c,
                    cs_lines: a.cs_lines,
                    acquisitions: a.acquisitions,
                    seed,
                    costs: costs.clone(),
                };
                for lock in &locks {
                    let own = locks::OWN_RELAX.contains(&lock.as_str());
                    // A lock with its own policy runs once, labelled `own`.
                    for &relax in if own { &relaxes[..1] } else { &relaxes[..] } {
                        #[cfg(ron_coverage)]
                        ron_core::coverage::reset();
                        let s = locks::run_named(lock, slots, relax, &vm, &p)?;
                        // Built with `--cfg ron_coverage`: the protocol paths
                        // this point took, per acquisition, on stderr.
                        #[cfg(ron_coverage)]
                        for (name, n) in ron_core::coverage::snapshot() {
                            eprintln!(
                                "  {lock} {t} thr nCS {c}: {name} {:.3}/acq",
                                n as f64 / a.acquisitions as f64
                            );
                        }
                        let key = RowKey {
                            machine: &vm.name,
                            workload: a.workload.name(),
                            lock,
                            relax: if own { "own" } else { relax.name() },
                            groups: &groups,
                            line_model: costs.line_model.name(),
                            mlp: costs.mlp,
                            slots: if locks::has_slots(lock) { slots } else { 0 },
                            placement: a.placement.name(),
                            ncs_ns: c,
                            cs_lines: a.cs_lines,
                            seed,
                            wall: !a.no_wall,
                        };
                        rows.push(Row::new(&key, &s));
                        if a.lines {
                            line_text += &lines_section(&rows[rows.len() - 1], seed, &s);
                        }
                        if a.transfers {
                            transfers.push(s.transfers_per_handover());
                        }
                        if a.format == Format::Table {
                            let last = rows.len() - 1;
                            eprint!(
                                "{}",
                                render_with(
                                    &rows[last..],
                                    Format::Table,
                                    a.transfers.then(|| &transfers[last..])
                                )
                                .lines()
                                .nth(1)
                                .unwrap_or("")
                            );
                            eprintln!();
                        }
                    }
                }
            }
        }
    }
    // Results on stdout; a closed pipe (`| head`) ends the output quietly.
    let mut text = render_with(&rows, a.format, a.transfers.then_some(&transfers[..]));
    text += &line_text;
    ron_vm_bench::cli::print_results(&text)
}

/// `--lines`: the costliest lines of one run, per handover of its window.
fn lines_section(row: &Row, seed: u64, s: &ron_vm_bench::RunStats) -> String {
    let per = s.handovers.max(1) as f64;
    let mut out = format!(
        "\nlines of {} {} {} threads {} nCS {} seed {}: {:.1} ns per handover, {:.2} transfers\n",
        row.machine,
        row.lock,
        row.relax,
        row.threads,
        row.ncs_ns,
        seed,
        s.handover_ns,
        s.transfers_per_handover()
    );
    out += "  line                 kind   transfers/ho  ns waited/ho\n";
    for (kind, &(t, w)) in ["lock", "data", "other"].iter().zip(&s.kind_totals) {
        out += &format!(
            "  all {:<16} {:<5}  {:>12.2}  {:>12.1}\n",
            "",
            kind,
            t as f64 / per,
            w as f64 / 1000.0 / per
        );
    }
    for l in &s.lines {
        out += &format!(
            "  {:#018x}   {:<5}  {:>12.2}  {:>12.1}\n",
            l.addr,
            l.kind.name(),
            l.transfers as f64 / per,
            l.wait_ps as f64 / 1000.0 / per
        );
    }
    out
}
