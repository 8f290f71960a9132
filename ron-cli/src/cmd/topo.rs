//! `ron topo`: the topology tree and the current route.

use ron_topo::{Calibration, Topology};

use crate::error::{CliError, CliResult};

/// Arguments of `ron topo`.
#[derive(clap::Args, Debug)]
pub struct Args {}

/// Runs `ron topo`.
pub fn run(_args: Args) -> CliResult {
    let topo = Topology::detect()
        .map_err(|e| CliError::failed(format!("cannot read the topology: {e}")))?;
    let report = ron_topo::install();
    let (packages, nodes, l3s, cores) = topo.counts();
    println!(
        "{} CPUs: {packages} package(s), {nodes} NUMA node(s), {l3s} L3 group(s), {cores} core(s)",
        topo.len()
    );
    println!("route from {}", report.source);
    if let Some(why) = &report.fallback_reason {
        println!("  calibration not used: {why}");
    }
    for e in &report.errors {
        println!("  note: {e}");
    }
    // Per-hop costs when the route came from a calibration file.
    let matrix = match &report.source {
        ron_topo::RouteSource::Calibration(p) => Calibration::read(p).ok().map(|c| c.matrix),
        _ => None,
    };
    let route = report.route.clone();
    let pos_of = |cpu: usize| route.iter().position(|&c| c == cpu);
    let hop = |a: usize, b: usize| -> Option<f64> {
        let m = matrix.as_ref()?;
        let ia = m.cpus().iter().position(|&c| c == a)?;
        let ib = m.cpus().iter().position(|&c| c == b)?;
        m.try_get(ia, ib)
    };
    println!();
    println!("package > node > l3 > core > cpu   smt siblings   route pos -> next cpu (hop ns)");
    let mut last: Option<(usize, usize, usize)> = None;
    for c in topo.cpus() {
        if last.map(|l| (l.0, l.1)) != Some((c.package, c.numa_node)) {
            println!("package {} / node {}", c.package, c.numa_node);
        }
        if last.map(|l| (l.0, l.1, l.2)) != Some((c.package, c.numa_node, c.l3)) {
            println!("  l3 {}", c.l3);
        }
        last = Some((c.package, c.numa_node, c.l3));
        let sib = c
            .smt_siblings
            .iter()
            .map(usize::to_string)
            .collect::<Vec<_>>()
            .join(",");
        let route_part = match pos_of(c.cpu) {
            Some(p) => {
                let next = route[(p + 1) % route.len()];
                match hop(c.cpu, next) {
                    Some(ns) => format!("pos {p:>4} -> cpu {next} ({ns:.1} ns)"),
                    None => format!("pos {p:>4} -> cpu {next}"),
                }
            }
            None => "not on the route".into(),
        };
        println!(
            "    core {:>4}  cpu {:>4}   smt [{sib}]   {route_part}",
            c.core, c.cpu
        );
    }
    Ok(())
}
