//! Topology from hwloc (feature `hwloc`, hwlocality 1.0.0-alpha).
//!
//! For every PU (logical CPU): its OS index; the OS index of its `Package`
//! ancestor; the cpuset of its `Core` and `L3Cache` ancestors as group keys
//! (the same keys the sysfs reader uses, so both normalise identically); the
//! first NUMA node of its nodeset. hwloc reports no distance matrix on
//! single-node machines; this reader does not need one.

use hwlocality::object::TopologyObject;
use hwlocality::object::types::ObjectType;

use super::{RawCpu, TopologyError};

fn cpus_of(obj: &TopologyObject) -> Option<Vec<usize>> {
    obj.cpuset()
        .map(|set| set.iter_set().map(usize::from).collect())
}

/// Reads the raw per-CPU facts through hwloc.
pub(super) fn read() -> Result<Vec<RawCpu>, TopologyError> {
    let topo = hwlocality::Topology::new().map_err(|e| TopologyError::Hwloc(e.to_string()))?;
    let mut out = Vec::new();
    for pu in topo.objects_with_type(ObjectType::PU) {
        let Some(cpu) = pu.os_index() else {
            continue;
        };
        let package = pu
            .first_ancestor_with_type(ObjectType::Package)
            .and_then(TopologyObject::os_index)
            .unwrap_or(0);
        let core_key = pu
            .first_ancestor_with_type(ObjectType::Core)
            .and_then(cpus_of)
            .unwrap_or_else(|| vec![cpu]);
        let l3_key = pu
            .first_ancestor_with_type(ObjectType::L3Cache)
            .and_then(cpus_of);
        let numa_node = pu
            .nodeset()
            .and_then(|s| s.first_set())
            .map_or(0, usize::from);
        out.push(RawCpu {
            cpu,
            package,
            numa_node,
            l3_key,
            core_key,
        });
    }
    if out.is_empty() {
        return Err(TopologyError::NoCpus);
    }
    Ok(out)
}
