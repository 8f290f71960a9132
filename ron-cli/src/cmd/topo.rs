//! `ron topo`: the topology tree and the current route (table), or one
//! record per CPU (CSV, JSON).

use ron_topo::{Calibration, Topology};
use serde::Serialize;

use crate::error::{CliError, CliResult};
use crate::output::{self, Format, json};

/// Arguments of `ron topo`.
#[derive(clap::Args, Debug)]
pub struct Args {
    /// Format on stdout.
    #[arg(long, value_enum, default_value_t = Format::Table)]
    pub format: Format,
}

/// One CPU of `ron topo --format json|csv`.
#[derive(Serialize, Debug)]
pub struct CpuOut {
    /// Logical CPU id.
    pub cpu: usize,
    /// Core id.
    pub core: usize,
    /// L3 group.
    pub l3: usize,
    /// NUMA node.
    pub numa_node: usize,
    /// Package (socket).
    pub package: usize,
    /// SMT siblings (CPU ids).
    pub smt_siblings: Vec<usize>,
    /// Position on the route (`None`: not on it).
    pub route_pos: Option<usize>,
    /// The next CPU on the route.
    pub next_cpu: Option<usize>,
    /// Latency to the next CPU (ns), when the route came from a calibration.
    pub hop_ns: Option<f64>,
}

/// `ron topo --format json`.
#[derive(Serialize, Debug)]
pub struct TopoOut {
    /// Where the route came from.
    pub route_source: String,
    /// Why the calibration was not used, if it was not.
    pub fallback_reason: Option<String>,
    /// Notes from the install.
    pub notes: Vec<String>,
    /// The route as CPU ids.
    pub route: Vec<usize>,
    /// Every CPU.
    pub cpus: Vec<CpuOut>,
}

/// Runs `ron topo`.
pub fn run(args: Args) -> CliResult {
    let topo = Topology::detect()
        .map_err(|e| CliError::failed(format!("cannot read the topology: {e}")))?;
    let report = ron_topo::install();
    // Per-hop costs when the route came from a calibration file.
    let matrix = match &report.source {
        ron_topo::RouteSource::Calibration(p) => Calibration::read(p).ok().map(|c| c.matrix),
        _ => None,
    };
    let route = report.route.clone();
    let hop = |a: usize, b: usize| -> Option<f64> {
        let m = matrix.as_ref()?;
        let ia = m.cpus().iter().position(|&c| c == a)?;
        let ib = m.cpus().iter().position(|&c| c == b)?;
        m.try_get(ia, ib)
    };
    let cpus: Vec<CpuOut> = topo
        .cpus()
        .iter()
        .map(|c| {
            let pos = route.iter().position(|&x| x == c.cpu);
            let next = pos.map(|p| route[(p + 1) % route.len()]);
            CpuOut {
                cpu: c.cpu,
                core: c.core,
                l3: c.l3,
                numa_node: c.numa_node,
                package: c.package,
                smt_siblings: c.smt_siblings.clone(),
                route_pos: pos,
                next_cpu: next,
                hop_ns: next.and_then(|n| hop(c.cpu, n)),
            }
        })
        .collect();
    let out = TopoOut {
        route_source: report.source.to_string(),
        fallback_reason: report.fallback_reason.clone(),
        notes: report.errors.iter().map(ToString::to_string).collect(),
        route,
        cpus,
    };
    let text = match args.format {
        Format::Json => json::pretty(&out)?,
        Format::Csv => output::csv::document(
            &[
                "cpu",
                "core",
                "l3",
                "numa_node",
                "package",
                "smt_siblings",
                "route_pos",
                "next_cpu",
                "hop_ns",
            ],
            out.cpus.iter().map(|c| {
                let o = |x: Option<usize>| x.map_or_else(String::new, |v| v.to_string());
                vec![
                    c.cpu.to_string(),
                    c.core.to_string(),
                    c.l3.to_string(),
                    c.numa_node.to_string(),
                    c.package.to_string(),
                    join(&c.smt_siblings, " "),
                    o(c.route_pos),
                    o(c.next_cpu),
                    c.hop_ns.map_or_else(String::new, |v| format!("{v:.1}")),
                ]
            }),
        ),
        Format::Table => tree(&topo, &out),
    };
    output::stdout(&text)
}

fn join(v: &[usize], sep: &str) -> String {
    v.iter().map(usize::to_string).collect::<Vec<_>>().join(sep)
}

fn tree(topo: &Topology, out: &TopoOut) -> String {
    let (packages, nodes, l3s, cores) = topo.counts();
    let plural = |n: usize, w: &str| format!("{n} {w}{}", if n == 1 { "" } else { "s" });
    let mut s = format!(
        "{}: {}, {}, {}, {}\nroute from {}\n",
        plural(topo.len(), "CPU"),
        plural(packages, "package"),
        plural(nodes, "NUMA node"),
        plural(l3s, "L3 group"),
        plural(cores, "core"),
        out.route_source
    );
    if let Some(why) = &out.fallback_reason {
        s.push_str(&format!("  calibration not used: {why}\n"));
    }
    for e in &out.notes {
        s.push_str(&format!("  note: {e}\n"));
    }
    s.push_str(
        "\npackage > node > l3 > core > cpu   smt siblings   route pos -> next cpu (hop ns)\n",
    );
    let mut last: Option<(usize, usize, usize)> = None;
    for c in &out.cpus {
        if last.map(|l| (l.0, l.1)) != Some((c.package, c.numa_node)) {
            s.push_str(&format!("package {} / node {}\n", c.package, c.numa_node));
        }
        if last != Some((c.package, c.numa_node, c.l3)) {
            s.push_str(&format!("  l3 {}\n", c.l3));
        }
        last = Some((c.package, c.numa_node, c.l3));
        let route_part = match (c.route_pos, c.next_cpu) {
            (Some(p), Some(next)) => match c.hop_ns {
                Some(ns) => format!("pos {p:>4} -> cpu {next} ({ns:.1} ns)"),
                None => format!("pos {p:>4} -> cpu {next}"),
            },
            _ => "not on the route".into(),
        };
        s.push_str(&format!(
            "    core {:>4}  cpu {:>4}   smt [{}]   {route_part}\n",
            c.core,
            c.cpu,
            join(&c.smt_siblings, ",")
        ));
    }
    s
}
