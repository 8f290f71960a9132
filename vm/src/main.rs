//! `ron-vm-bench`: the micro workload of `ron bench` on a virtual machine
//! priced by a latency matrix (see the crate docs of `ron_vm_bench`).

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use ron_vm::Costs;
use ron_vm_bench::locks::{self, NAMES, RelaxKind};
use ron_vm_bench::report::{Format, Row, RowKey, render};
use ron_vm_bench::{Placement, Point, VirtualMachine};

/// Runs ron-core locks on a virtual many-core machine.
#[derive(Parser, Debug)]
#[command(name = "ron-vm-bench", version)]
struct Args {
    /// The machine: a latency matrix (CSV or JSON) or a calibration JSON.
    #[arg(long)]
    machine: PathBuf,
    /// Locks, comma-separated, or `all`.
    #[arg(long, default_value = "ron,nxt-ron,mcs,ttas,ticket")]
    lock: String,
    /// Thread counts, comma-separated (`all` = every CPU of the machine).
    #[arg(long, default_value = "8")]
    threads: String,
    /// Mean non-critical sections in ns, comma-separated.
    #[arg(long, default_value = "0")]
    ncs: String,
    /// Data lines written per critical section.
    #[arg(long, default_value_t = 2)]
    cs_lines: usize,
    /// Acquisitions per point.
    #[arg(long, default_value_t = 20_000)]
    acquisitions: u64,
    /// Slots of the RON locks: a number, or `cpu` (one per CPU).
    #[arg(long, default_value = "16")]
    slots: String,
    /// Waiting policy of the locks that take one.
    #[arg(long, value_enum, default_value_t = RelaxKind::Default)]
    relax: RelaxKind,
    /// Where threads run.
    #[arg(long, value_enum, default_value_t = Placement::Route)]
    placement: Placement,
    /// Seed of the jitter and of a random placement.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    format: Format,
    /// Leave the wall time out (output then depends only on the inputs).
    #[arg(long)]
    no_wall: bool,
    /// Cost of one pause (ns).
    #[arg(long, default_value_t = Costs::default().pause_ns)]
    pause_ns: f64,
    /// Cost of one yield (ns).
    #[arg(long, default_value_t = Costs::default().yield_ns)]
    yield_ns: f64,
    /// Cache-line size (64, or 128 for adjacent-line prefetch).
    #[arg(long, default_value_t = 64)]
    line_bytes: usize,
    /// Run every look of a waiter (no suspension in `spin_while` or
    /// `park_looks`): the same results, slower; for comparing the host time.
    #[arg(long)]
    no_suspend: bool,
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
    match real_main() {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("ron-vm-bench: {e}");
            ExitCode::FAILURE
        }
    }
}

fn real_main() -> Result<(), String> {
    let a = Args::parse();
    let vm = VirtualMachine::load(&a.machine)?;
    let n = vm.n();
    eprintln!(
        "# {}: {n} CPUs, FIFO mean {:.1} ns, route {:.1} ns per lap ({:.1} ns per hop)",
        vm.name,
        vm.matrix.fifo_mean(),
        vm.matrix.tour_cost(&vm.route),
        vm.matrix.tour_cost(&vm.route) / n as f64
    );
    let locks: Vec<String> = if a.lock.trim() == "all" {
        NAMES.iter().map(|s| s.to_string()).collect()
    } else {
        a.lock.split(',').map(|s| s.trim().to_string()).collect()
    };
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
    if let Some(&t) = threads.iter().find(|&&t| t == 0 || t > n) {
        return Err(format!("--threads {t}: the machine has {n} CPUs"));
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
        ..Costs::default()
    };
    let mut rows = Vec::new();
    for lock in &locks {
        for &t in &threads {
            for &c in &ncs {
                let p = Point {
                    cpus: vm.place(t, a.placement, a.seed),
                    ncs_ns: c,
                    cs_lines: a.cs_lines,
                    acquisitions: a.acquisitions,
                    seed: a.seed,
                    costs: costs.clone(),
                };
                #[cfg(ron_coverage)]
                ron_core::coverage::reset();
                let s = locks::run_named(lock, slots, a.relax, &vm, &p)?;
                // Built with `--cfg ron_coverage`: the protocol paths this
                // point took, per acquisition, on stderr.
                #[cfg(ron_coverage)]
                for (name, n) in ron_core::coverage::snapshot() {
                    eprintln!(
                        "  {lock} {t} thr nCS {c}: {name} {:.3}/acq",
                        n as f64 / a.acquisitions as f64
                    );
                }
                let key = RowKey {
                    machine: &vm.name,
                    lock,
                    slots: if locks::has_slots(lock) { slots } else { 0 },
                    placement: a.placement.name(),
                    ncs_ns: c,
                    cs_lines: a.cs_lines,
                    seed: a.seed,
                    wall: !a.no_wall,
                };
                rows.push(Row::new(&key, &s));
                if a.format == Format::Table {
                    eprint!(
                        "{}",
                        render(&rows[rows.len() - 1..], Format::Table)
                            .lines()
                            .nth(1)
                            .unwrap_or("")
                    );
                    eprintln!();
                }
            }
        }
    }
    print!("{}", render(&rows, a.format));
    Ok(())
}
