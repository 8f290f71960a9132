//! `vm-hwcheck`: ron-vm checked against a real machine. Give it the
//! machine's calibration and a `ron bench --out bench.json` run of the
//! micro workload there with that calibration installed
//! (`RON_CALIBRATION=$PWD/calib.json`, then `ron calibrate` and `ron
//! bench`, so the bench pins its threads along its route); it runs every
//! ron-core lock of the run on the VM at the same points (threads placed
//! along the calibration's route, as `ron bench` pins them; each lock under
//! its shipped waiting policy) and prints, per lock and point, the
//! hardware's throughput and the VM's, each one's ratio to a reference
//! lock, both mean handovers, and per point the rank correlation of the
//! locks' order. Peers the VM cannot run (parking_lot, std, spin) are left
//! out, with a note on stderr.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::Parser;
use ron_vm::Costs;
use ron_vm_bench::hwcheck::{self, Compared};
use ron_vm_bench::locks::{self, NAMES, RelaxKind};
use ron_vm_bench::{GroupsChoice, Placement, Point, VirtualMachine, Workload};

/// Runs a hardware `ron bench` run's points on the VM and compares.
#[derive(Parser, Debug)]
#[command(name = "vm-hwcheck", version)]
struct Args {
    /// The machine's calibration (`ron calibrate --out`), or a latency
    /// matrix (CSV or JSON; a route is then solved).
    #[arg(long, value_name = "FILE")]
    matrix: PathBuf,
    /// The hardware run: `ron bench --out` JSON files (micro workload),
    /// one or more (comma-separated, or the option repeated), their rows
    /// taken together (a sweep run as several commands).
    #[arg(long, value_name = "FILE", value_delimiter = ',', required = true)]
    bench: Vec<PathBuf>,
    /// Seeds per point (each its own jitter and start skew; the placement
    /// follows the route).
    #[arg(long, default_value_t = 3, value_name = "N")]
    repeat: u64,
    /// The first seed.
    #[arg(long, default_value_t = 1)]
    seed: u64,
    /// Acquisitions per VM run.
    #[arg(long, default_value_t = 20_000, value_name = "N")]
    acquisitions: u64,
    /// The lock the `x` columns divide by, at each point where it ran.
    #[arg(long, default_value = "mcs", value_name = "LOCK")]
    reference: String,
    /// The group table of the NUMA-aware locks: `socket`, `l3`, `none` or
    /// a file of one group id per CPU.
    #[arg(long, default_value = "socket", value_name = "socket|l3|none|FILE")]
    groups: GroupsChoice,
}

fn main() -> ExitCode {
    ron_vm_bench::cli::exit(real_main())
}

fn real_main() -> Result<(), String> {
    let a = Args::parse();
    if a.repeat == 0 {
        return Err("--repeat: must be at least 1, got 0".into());
    }
    if a.acquisitions == 0 {
        return Err("--acquisitions: must be at least 1, got 0".into());
    }
    let mut rows = Vec::new();
    for f in &a.bench {
        rows.extend(hwcheck::load_bench(f)?);
    }
    let mut vm = VirtualMachine::load(&a.matrix)?;
    vm.set_groups(&a.groups)?;
    if rows.iter().any(|r| r.pinned == Some(false)) {
        eprintln!(
            "# note: the hardware run did not pin its threads (`ron bench --pin`); the VM places \
             them along the route, as a pinned run does"
        );
    }
    let (points, left_out) = hwcheck::points(&rows, NAMES);
    if !left_out.is_empty() {
        eprintln!(
            "# left out (not ron-core locks, or not the micro workload): {}",
            left_out.join(", ")
        );
    }
    if points.is_empty() {
        let files: Vec<String> = a.bench.iter().map(|f| f.display().to_string()).collect();
        return Err(format!(
            "{}: no micro-workload row of a lock the VM runs ({})",
            files.join(", "),
            NAMES.join(", ")
        ));
    }
    eprintln!(
        "# {}: {} CPUs, route {:.1} ns per hop; {} points x {} seeds",
        vm.name,
        vm.n(),
        vm.matrix.tour_cost(&vm.route) / vm.n() as f64,
        points.len(),
        a.repeat
    );
    let mut compared = Vec::new();
    for (key, hw_rows) in &points {
        let mut vm_runs: Vec<(Vec<f64>, Vec<f64>)> = vec![Default::default(); hw_rows.len()];
        for seed in a.seed..a.seed + a.repeat {
            // One jitter and start skew for every lock of the point.
            let p = Point {
                workload: Workload::Micro,
                start_skew_ns: 1000.0,
                cpus: vm.place(key.threads, Placement::Route, seed),
                ncs_ns: key.ncs_ns(),
                cs_lines: key.cs_lines,
                acquisitions: a.acquisitions,
                seed,
                costs: Costs::default(),
            };
            for (hw, runs) in hw_rows.iter().zip(&mut vm_runs) {
                // `ron bench`'s RON locks with slots have 16 (`Ron<16>`, the
                // `-inline` variants); each lock's shipped policy.
                let s = locks::run_named(&hw.lock, 16, RelaxKind::Default, &vm, &p)?;
                if !s.exclusion_ok {
                    return Err(format!("{} failed mutual exclusion on the VM", hw.lock));
                }
                runs.0.push(s.mlocks_per_s);
                runs.1.push(s.handover_ns);
            }
        }
        eprintln!(
            "# {} threads, nCS {} ns, K = {}: {} locks done",
            key.threads,
            key.ncs_ns(),
            key.cs_lines,
            hw_rows.len()
        );
        for (hw, (m, h)) in hw_rows.iter().zip(vm_runs) {
            compared.push(Compared {
                point: *key,
                hw: hw.clone(),
                vm_mlocks: m,
                vm_handover: h,
            });
        }
    }
    ron_vm_bench::cli::print_results(&hwcheck::render(&compared, &a.reference))
}
