//! The machine's CPU topology: for every logical CPU its package, NUMA node,
//! L3 (CCX) group, core and SMT siblings.
//!
//! Sources: Linux sysfs ([`Topology::from_sysfs`], the default, no system
//! library) and, with the `hwloc` feature, hwloc through hwlocality
//! (`Topology::from_hwloc`). Both produce the same normalised form, so they
//! can be compared with `==`:
//!
//! - `package` and `numa_node` are the OS's ids;
//! - `l3` and `core` are *dense* group ids `0, 1, 2, ...` numbered in order
//!   of the lowest CPU id in each group (OS core ids repeat across packages
//!   and L3 caches have no OS id, so dense ids are the comparable form);
//! - a CPU without an L3 (some ARM parts) gets its package as its L3 group.
//!
//! [`Topology::route`] is the topology-derived route used when no calibration
//! exists: CPUs sorted by package, NUMA node, L3 group, core, then SMT
//! sibling (CPU id), so consecutive CPUs share as much hardware as possible.

mod sysfs;

#[cfg(feature = "hwloc")]
mod hwloc;

use std::collections::{BTreeMap, HashMap};

use serde::{Deserialize, Serialize};
use sha2::{Digest, Sha256};

/// Why the topology could not be read.
#[derive(Debug, thiserror::Error)]
pub enum TopologyError {
    /// A sysfs file could not be read or parsed.
    #[error("sysfs {path}: {msg}")]
    Sysfs {
        /// The file.
        path: String,
        /// What went wrong.
        msg: String,
    },
    /// No online CPU was found.
    #[error("no online CPU found")]
    NoCpus,
    /// A CPU id is not below [`ron_core::route::MAX_CPUS`].
    #[error("CPU id {0} out of range (must be < {max})", max = ron_core::route::MAX_CPUS)]
    CpuOutOfRange(usize),
    /// hwloc failed.
    #[error("hwloc: {0}")]
    Hwloc(String),
}

/// One logical CPU.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct CpuInfo {
    /// OS logical CPU id.
    pub cpu: usize,
    /// Physical package (socket) id.
    pub package: usize,
    /// NUMA node id (0 on machines without NUMA information).
    pub numa_node: usize,
    /// Dense L3 (CCX) group id.
    pub l3: usize,
    /// Dense physical core id.
    pub core: usize,
    /// All CPU ids of this core, this one included, ascending.
    pub smt_siblings: Vec<usize>,
}

/// Per-CPU topology, sorted by CPU id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Topology {
    cpus: Vec<CpuInfo>,
}

/// Raw per-CPU facts before normalisation: group keys may be any id that is
/// equal exactly for CPUs of the same group (e.g. the group's CPU list).
#[derive(Debug, Clone)]
pub(crate) struct RawCpu {
    pub(crate) cpu: usize,
    pub(crate) package: usize,
    pub(crate) numa_node: usize,
    pub(crate) l3_key: Option<Vec<usize>>,
    pub(crate) core_key: Vec<usize>,
}

impl Topology {
    /// Reads the topology: sysfs on Linux; if that fails, a flat topology
    /// (one package, one node, one L3, one core per CPU) over the CPUs
    /// `core_affinity` reports; if that fails too, the error.
    pub fn detect() -> Result<Self, TopologyError> {
        match Self::from_sysfs() {
            Ok(t) => Ok(t),
            Err(e) => {
                let ids: Vec<usize> = core_affinity::get_core_ids()
                    .map(|v| v.into_iter().map(|c| c.id).collect())
                    .unwrap_or_default();
                if ids.is_empty() {
                    Err(e)
                } else {
                    Self::flat(&ids)
                }
            }
        }
    }

    /// Reads `/sys/devices/system/cpu` and `/sys/devices/system/node`.
    pub fn from_sysfs() -> Result<Self, TopologyError> {
        Self::from_sysfs_root(std::path::Path::new("/sys/devices/system"))
    }

    /// Reads a sysfs-shaped tree rooted at `root` (the directory holding
    /// `cpu/` and `node/`); used by tests with fake trees.
    pub fn from_sysfs_root(root: &std::path::Path) -> Result<Self, TopologyError> {
        Self::from_raw(sysfs::read(root)?)
    }

    /// Reads the topology through hwloc.
    #[cfg(feature = "hwloc")]
    pub fn from_hwloc() -> Result<Self, TopologyError> {
        Self::from_raw(hwloc::read()?)
    }

    /// A flat topology: each CPU its own core, all in package, node and L3 0.
    pub fn flat(cpu_ids: &[usize]) -> Result<Self, TopologyError> {
        let raw = cpu_ids
            .iter()
            .map(|&c| RawCpu {
                cpu: c,
                package: 0,
                numa_node: 0,
                l3_key: Some(Vec::new()),
                core_key: vec![c],
            })
            .collect();
        Self::from_raw(raw)
    }

    /// Normalises raw facts (see the module docs).
    pub(crate) fn from_raw(mut raw: Vec<RawCpu>) -> Result<Self, TopologyError> {
        raw.sort_by_key(|r| r.cpu);
        raw.dedup_by_key(|r| r.cpu);
        if raw.is_empty() {
            return Err(TopologyError::NoCpus);
        }
        if let Some(r) = raw.iter().find(|r| r.cpu >= ron_core::route::MAX_CPUS) {
            return Err(TopologyError::CpuOutOfRange(r.cpu));
        }
        let mut l3_ids: HashMap<(usize, Vec<usize>), usize> = HashMap::new();
        let mut core_ids: HashMap<(usize, Vec<usize>), usize> = HashMap::new();
        let mut members: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
        let mut cpus = Vec::with_capacity(raw.len());
        for r in &raw {
            let l3_key = match &r.l3_key {
                Some(k) => (usize::MAX, k.clone()),
                None => (r.package, Vec::new()),
            };
            let next = l3_ids.len();
            let l3 = *l3_ids.entry(l3_key).or_insert(next);
            let next = core_ids.len();
            let core = *core_ids
                .entry((r.package, r.core_key.clone()))
                .or_insert(next);
            members.entry(core).or_default().push(r.cpu);
            cpus.push(CpuInfo {
                cpu: r.cpu,
                package: r.package,
                numa_node: r.numa_node,
                l3,
                core,
                smt_siblings: Vec::new(),
            });
        }
        for c in &mut cpus {
            c.smt_siblings = members.get(&c.core).cloned().unwrap_or_default();
        }
        Ok(Topology { cpus })
    }

    /// The CPUs, sorted by id.
    pub fn cpus(&self) -> &[CpuInfo] {
        &self.cpus
    }

    /// Number of logical CPUs.
    pub fn len(&self) -> usize {
        self.cpus.len()
    }

    /// Whether there is no CPU (never true for a constructed topology).
    pub fn is_empty(&self) -> bool {
        self.cpus.is_empty()
    }

    /// The CPU ids, ascending.
    pub fn cpu_ids(&self) -> Vec<usize> {
        self.cpus.iter().map(|c| c.cpu).collect()
    }

    /// The entry for CPU id `cpu`.
    pub fn cpu(&self, cpu: usize) -> Option<&CpuInfo> {
        self.cpus
            .binary_search_by_key(&cpu, |c| c.cpu)
            .ok()
            .and_then(|i| self.cpus.get(i))
    }

    /// Number of distinct packages, NUMA nodes, L3 groups and cores.
    pub fn counts(&self) -> (usize, usize, usize, usize) {
        let count = |f: fn(&CpuInfo) -> usize| {
            let mut v: Vec<usize> = self.cpus.iter().map(f).collect();
            v.sort_unstable();
            v.dedup();
            v.len()
        };
        (
            count(|c| c.package),
            count(|c| c.numa_node),
            count(|c| c.l3),
            count(|c| c.core),
        )
    }

    /// The topology-derived route (CPU ids): sorted by package, NUMA node,
    /// L3 group, core, then CPU id (SMT siblings last).
    ///
    /// ```
    /// let t = ron_topo::Topology::flat(&[3, 1, 2]).unwrap();
    /// assert_eq!(t.route(), vec![1, 2, 3]);
    /// ```
    pub fn route(&self) -> Vec<usize> {
        let mut v: Vec<&CpuInfo> = self.cpus.iter().collect();
        v.sort_by_key(|c| (c.package, c.numa_node, c.l3, c.core, c.cpu));
        v.into_iter().map(|c| c.cpu).collect()
    }

    /// NUMA node per CPU id (index = CPU id, `max id + 1` entries; CPUs
    /// absent from the topology get node 0), as `ron_core::groups::install`
    /// expects.
    pub fn numa_groups(&self) -> Vec<usize> {
        let len = self.cpus.iter().map(|c| c.cpu + 1).max().unwrap_or(0);
        let mut g = vec![0; len];
        for c in &self.cpus {
            g[c.cpu] = c.numa_node;
        }
        g
    }

    /// A stable hash of the normalised topology (16 hex digits of SHA-256
    /// over its canonical JSON), used in machine fingerprints.
    pub fn hash_hex(&self) -> String {
        let json = serde_json::to_vec(&self.cpus).unwrap_or_default();
        let digest = Sha256::digest(&json);
        digest.iter().take(8).map(|b| format!("{b:02x}")).collect()
    }
}

/// Parses a Linux CPU list such as `0-3,8,10-11` (at most
/// [`ron_core::route::MAX_CPUS`] entries, ids below that limit).
pub fn parse_cpu_list(s: &str) -> Option<Vec<usize>> {
    let max = ron_core::route::MAX_CPUS;
    let mut out = Vec::new();
    for part in s.trim().split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (lo, hi) = match part.split_once('-') {
            Some((a, b)) => (a.trim().parse().ok()?, b.trim().parse().ok()?),
            None => {
                let v: usize = part.parse().ok()?;
                (v, v)
            }
        };
        if lo > hi || hi >= max || out.len() + (hi - lo) >= max {
            return None;
        }
        out.extend(lo..=hi);
    }
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_list() {
        assert_eq!(
            parse_cpu_list("0-3,8,10-11\n"),
            Some(vec![0, 1, 2, 3, 8, 10, 11])
        );
        assert_eq!(parse_cpu_list(""), Some(vec![]));
        assert_eq!(parse_cpu_list("3-1"), None);
        assert_eq!(parse_cpu_list("0-99999999999"), None);
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn route_orders_by_hierarchy() {
        // 2 packages x 2 cores x 2 threads; sibling of cpu i is i + 4.
        let raw = (0..8)
            .map(|c| RawCpu {
                cpu: c,
                package: (c % 4) / 2,
                numa_node: (c % 4) / 2,
                l3_key: Some(vec![(c % 4) / 2]),
                core_key: vec![c % 4],
            })
            .collect();
        let t = Topology::from_raw(raw).unwrap();
        assert_eq!(t.route(), vec![0, 4, 1, 5, 2, 6, 3, 7]);
        assert_eq!(t.counts(), (2, 2, 2, 4));
        assert_eq!(t.cpu(5).unwrap().smt_siblings, vec![1, 5]);
        assert_eq!(t.numa_groups(), vec![0, 0, 1, 1, 0, 0, 1, 1]);
        assert_eq!(t.hash_hex().len(), 16);
    }
}
