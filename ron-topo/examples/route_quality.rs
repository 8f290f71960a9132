//! Route solver quality report: TSPLIB instances against proven optima, and
//! the recorded CPU latency matrices against the identity order, FIFO's
//! mean handover and restarts with other seeds.
//!
//! Run: `cargo run --release -p ron-topo --features tools --example route_quality`
//! (add `-- --routes` to print every route found)
//! (reads `../shared/data` next to the workspace; skips what is absent).

use std::path::PathBuf;
use std::time::{Duration, Instant};

use std::sync::atomic::AtomicBool;

use ron_topo::probe::{ProbeOptions, probe};
use ron_topo::{LatencyMatrix, SolveOptions, Topology, solve, tsplib};

const OPTIMA: &[(&str, f64)] = &[
    ("br17.atsp", 39.0),
    ("ftv33.atsp", 1286.0),
    ("ftv47.atsp", 1776.0),
    ("ry48p.atsp", 14422.0),
    ("ft70.atsp", 38673.0),
    ("gr24.tsp", 1272.0),
    ("bays29.tsp", 2020.0),
    ("berlin52.tsp", 7542.0),
    ("eil76.tsp", 538.0),
    ("kroA100.tsp", 21282.0),
];

/// Extra seeds tried on every recorded matrix to check convergence.
const OTHER_SEEDS: [u64; 3] = [1, 2, 3];

fn data_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../shared/data")
}

fn main() {
    let show_routes = std::env::args().any(|a| a == "--routes");
    this_machine();
    let data = data_dir();
    if !data.is_dir() {
        println!(
            "shared data not found at {}; nothing more to report",
            data.display()
        );
        return;
    }
    println!("## TSPLIB (time budget 1 s per instance, one core)\n");
    println!("| instance | n | optimum | ours | gap % | time s | local search only | its gap % |");
    println!("|---|---|---|---|---|---|---|---|");
    let mut gaps = Vec::new();
    let mut ls_gaps = Vec::new();
    for &(file, opt) in OPTIMA {
        let path = data.join("tsplib").join(file);
        let inst = match tsplib::read(&path) {
            Ok(i) => i,
            Err(e) => {
                println!("| {file} | - | {opt} | error: {e} | - | - | - | - |");
                continue;
            }
        };
        let opts = SolveOptions {
            time_limit: Duration::from_secs(1),
            ..SolveOptions::default()
        };
        let t0 = Instant::now();
        let r = solve(&inst.matrix, &opts);
        let dt = t0.elapsed().as_secs_f64();
        let gap = 100.0 * (r.cost - opt) / opt;
        gaps.push(gap);
        // The baseline: the same multi-start nearest neighbour and local
        // search (Or-opt, Or-3opt, 2-opt) to its first local optimum, with
        // no kicks and no exact solver.
        let ls = solve(
            &inst.matrix,
            &SolveOptions {
                max_iterations: Some(0),
                exact_up_to: 0,
                ..opts
            },
        );
        let ls_gap = 100.0 * (ls.cost - opt) / opt;
        ls_gaps.push(ls_gap);
        println!(
            "| {} | {} | {opt} | {} | {gap:.2} | {dt:.3} | {} | {ls_gap:.2} |",
            inst.name,
            inst.matrix.n(),
            r.cost,
            ls.cost
        );
    }
    let summary = |g: &[f64]| {
        let mean = g.iter().sum::<f64>() / g.len() as f64;
        (mean, g.iter().copied().fold(0.0, f64::max))
    };
    if !gaps.is_empty() {
        let (mean, max) = summary(&gaps);
        let (ls_mean, ls_max) = summary(&ls_gaps);
        println!(
            "\nmean gap {mean:.3} %, max gap {max:.3} % \
             (local search only: mean {ls_mean:.2} %, max {ls_max:.2} %)\n"
        );
    }

    println!("## Recorded CPU latency matrices (budget 1 s for n <= 128, 3 s for n = 256)\n");
    println!(
        "| file | n | route cost ns | per handover ns | identity ns | FIFO mean x n ns | FIFO mean ns | FIFO / route | time s | best other seed | other-seed gain % |"
    );
    println!("|---|---|---|---|---|---|---|---|---|---|---|");
    let mut files: Vec<PathBuf> = Vec::new();
    for dir in [data.join("latency"), data.join("latency/phys")] {
        if let Ok(rd) = std::fs::read_dir(&dir) {
            let mut v: Vec<PathBuf> = rd
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "csv"))
                .collect();
            v.sort();
            files.extend(v);
        }
    }
    let mut routes = Vec::new();
    for path in files {
        let name = path
            .strip_prefix(data.join("latency"))
            .map(|p| p.display().to_string())
            .unwrap_or_default();
        let m = match LatencyMatrix::read_csv(&path) {
            Ok(m) => m,
            Err(e) => {
                println!("| {name} | error: {e} |");
                continue;
            }
        };
        let n = m.n();
        let budget = if n > 128 {
            Duration::from_secs(3)
        } else {
            Duration::from_secs(1)
        };
        let opts = SolveOptions {
            time_limit: budget,
            ..SolveOptions::default()
        };
        let t0 = Instant::now();
        let r = solve(&m, &opts);
        let dt = t0.elapsed().as_secs_f64();
        let mut best_other = f64::INFINITY;
        for seed in OTHER_SEEDS {
            let o = solve(
                &m,
                &SolveOptions {
                    seed,
                    ..opts.clone()
                },
            );
            best_other = best_other.min(o.cost);
        }
        routes.push(format!("{name}: {:?}", r.cpu_ids(&m)));
        let fifo = m.fifo_mean();
        let gain = 100.0 * (r.cost - best_other) / r.cost;
        println!(
            "| {name} | {n} | {:.1} | {:.2} | {:.1} | {:.1} | {:.2} | {:.2}x | {dt:.3} | {best_other:.1} | {gain:.3} |",
            r.cost,
            r.cost / n as f64,
            m.identity_cost(),
            fifo * n as f64,
            fifo,
            fifo * n as f64 / r.cost,
        );
    }
    if show_routes {
        println!("\n## Routes (CPU ids in tour order)\n");
        for r in routes {
            println!("{r}");
        }
    }
}

/// Probes this machine (full mode), solves and prints the route.
fn this_machine() {
    println!("## This machine\n");
    let topo = match Topology::detect() {
        Ok(t) => t,
        Err(e) => {
            println!("no topology: {e}\n");
            return;
        }
    };
    println!("CPU model: {}", ron_topo::calibration::cpu_model());
    println!(
        "topology (packages, NUMA nodes, L3 groups, cores) = {:?}, hash {}",
        topo.counts(),
        topo.hash_hex()
    );
    println!("topology route: {:?}", topo.route());
    let m = match probe(
        &topo,
        &ProbeOptions::default(),
        &mut |_, _| {},
        &AtomicBool::new(false),
    ) {
        Ok(m) => m,
        Err(e) => {
            println!("probe failed: {e}\n");
            return;
        }
    };
    println!(
        "probed matrix (ns, {} / {} rounds):\n{}",
        m.meta().mode,
        m.meta().rounds,
        m.to_csv_string()
    );
    let opts = SolveOptions {
        initial: Some(ron_topo::tsp::order_from_cpus(&m, &topo.route())),
        ..SolveOptions::default()
    };
    let r = solve(&m, &opts);
    let n = m.n();
    println!(
        "route {:?}: cost {:.1} ns/lap ({:.2} per handover), identity {:.1}, FIFO mean {:.2} per handover ({:.1} x n)\n",
        r.cpu_ids(&m),
        r.cost,
        r.cost / n as f64,
        m.identity_cost(),
        m.fifo_mean(),
        m.fifo_mean() * n as f64
    );
}
