//! Topology from Linux sysfs.
//!
//! - online CPUs: `cpu/online` (a CPU list);
//! - package: `cpu/cpuN/topology/physical_package_id` (0 if absent);
//! - core: `cpu/cpuN/topology/thread_siblings_list` (the core's CPU list is
//!   the group key; `core_cpus_list` on newer kernels says the same);
//! - L3: the `cpu/cpuN/cache/indexK` with `level` 3 and `type` `Unified`,
//!   its `shared_cpu_list` is the group key;
//! - NUMA node: `node/nodeM/cpulist` for every node (node 0 if absent).

use std::path::Path;

use super::{RawCpu, TopologyError, parse_cpu_list};

fn read_str(path: &Path) -> Result<String, TopologyError> {
    std::fs::read_to_string(path).map_err(|e| TopologyError::Sysfs {
        path: path.display().to_string(),
        msg: e.to_string(),
    })
}

fn read_list(path: &Path) -> Result<Vec<usize>, TopologyError> {
    let s = read_str(path)?;
    parse_cpu_list(&s).ok_or_else(|| TopologyError::Sysfs {
        path: path.display().to_string(),
        msg: format!("bad CPU list {:?}", s.trim()),
    })
}

fn l3_key(cpu_dir: &Path) -> Option<Vec<usize>> {
    let rd = std::fs::read_dir(cpu_dir.join("cache")).ok()?;
    let mut dirs: Vec<_> = rd.filter_map(|e| e.ok().map(|e| e.path())).collect();
    dirs.sort();
    for d in dirs {
        let is_index = d
            .file_name()
            .and_then(|n| n.to_str())
            .is_some_and(|n| n.starts_with("index"));
        if !is_index {
            continue;
        }
        let level = std::fs::read_to_string(d.join("level")).ok();
        if level.as_deref().map(str::trim) != Some("3") {
            continue;
        }
        let ty = std::fs::read_to_string(d.join("type")).unwrap_or_default();
        if ty.trim() == "Instruction" {
            continue;
        }
        return read_list(&d.join("shared_cpu_list")).ok();
    }
    None
}

/// Reads the raw per-CPU facts under `root` (normally `/sys/devices/system`).
pub(super) fn read(root: &Path) -> Result<Vec<RawCpu>, TopologyError> {
    let cpu_root = root.join("cpu");
    let online = read_list(&cpu_root.join("online"))?;
    if online.is_empty() {
        return Err(TopologyError::NoCpus);
    }
    // NUMA: node/nodeM/cpulist for every node directory.
    let mut node_of = std::collections::HashMap::new();
    if let Ok(rd) = std::fs::read_dir(root.join("node")) {
        for e in rd.filter_map(Result::ok) {
            let name = e.file_name();
            let Some(id) = name
                .to_str()
                .and_then(|n| n.strip_prefix("node"))
                .and_then(|n| n.parse::<usize>().ok())
            else {
                continue;
            };
            if let Ok(cpus) = read_list(&e.path().join("cpulist")) {
                for c in cpus {
                    node_of.insert(c, id);
                }
            }
        }
    }
    let mut out = Vec::with_capacity(online.len());
    for cpu in online {
        let dir = cpu_root.join(format!("cpu{cpu}"));
        let topo = dir.join("topology");
        let package = read_str(&topo.join("physical_package_id"))
            .ok()
            .and_then(|s| s.trim().parse::<i64>().ok())
            .and_then(|v| usize::try_from(v).ok())
            .unwrap_or(0);
        let core_key = read_list(&topo.join("thread_siblings_list"))
            .or_else(|_| read_list(&topo.join("core_cpus_list")))
            .unwrap_or_else(|_| vec![cpu]);
        out.push(RawCpu {
            cpu,
            package,
            numa_node: node_of.get(&cpu).copied().unwrap_or(0),
            l3_key: l3_key(&dir),
            core_key,
        });
    }
    Ok(out)
}
