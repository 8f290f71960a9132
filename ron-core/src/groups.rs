//! The process-wide CPU group table: which locality group (NUMA node by
//! default; L3/CCX if the embedder prefers) each CPU belongs to.
//!
//! Group-aware locks (CNA, cohort locks) batch handovers inside a group.
//! Like the route, the table is a hint: a wrong group costs speed only.
//! Until [`install`] is called every CPU is in group 0 (one group), which
//! makes those locks behave like their plain FIFO base. `ron-topo` installs
//! the NUMA nodes (or L3 groups) it discovers.
//!
//! ```
//! // CPUs 0-1 on node 0, CPUs 2-3 on node 1.
//! ron_core::groups::install(&[0, 0, 1, 1]).unwrap();
//! assert_eq!(ron_core::groups::group_of(3), 1);
//! assert_eq!(ron_core::groups::group_of(9999), 0); // unknown CPU: group 0
//! ```

use core::fmt;
use core::sync::atomic::{AtomicU16, AtomicUsize, Ordering};

use crate::route::MAX_CPUS;

/// The largest number of groups the table can hold.
pub const MAX_GROUPS: usize = 1024;

static GROUP: [AtomicU16; MAX_CPUS] = [const { AtomicU16::new(0) }; MAX_CPUS];
static COUNT: AtomicUsize = AtomicUsize::new(1);

/// Why a group table was refused.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupError {
    /// More CPUs than [`MAX_CPUS`].
    TooManyCpus {
        /// Number of entries given.
        len: usize,
    },
    /// A group id not below [`MAX_GROUPS`].
    GroupOutOfRange {
        /// The CPU whose group is out of range.
        cpu: usize,
        /// Its group.
        group: usize,
    },
}

impl fmt::Display for GroupError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GroupError::TooManyCpus { len } => {
                write!(
                    f,
                    "group table names {len} CPUs, more than the supported {MAX_CPUS}"
                )
            }
            GroupError::GroupOutOfRange { cpu, group } => write!(
                f,
                "CPU {cpu} is in group {group}, out of range (groups must be below {MAX_GROUPS})"
            ),
        }
    }
}

impl core::error::Error for GroupError {}

/// Installs the group of every CPU: `group_of_cpu[cpu]` is CPU `cpu`'s group.
/// CPUs past the end of the slice go to group 0.
pub fn install(group_of_cpu: &[usize]) -> Result<(), GroupError> {
    if group_of_cpu.len() > MAX_CPUS {
        return Err(GroupError::TooManyCpus {
            len: group_of_cpu.len(),
        });
    }
    let mut count = 1;
    for (cpu, &g) in group_of_cpu.iter().enumerate() {
        if g >= MAX_GROUPS {
            return Err(GroupError::GroupOutOfRange { cpu, group: g });
        }
        count = count.max(g + 1);
    }
    for (cpu, slot) in GROUP.iter().enumerate() {
        let g = group_of_cpu.get(cpu).copied().unwrap_or(0);
        // Relaxed: a locality hint, read independently per CPU.
        slot.store(g as u16, Ordering::Relaxed);
    }
    COUNT.store(count, Ordering::Release); // publishes the table with the count
    Ok(())
}

/// The group of `cpu` (0 for ids the table does not know).
#[inline]
pub fn group_of(cpu: usize) -> usize {
    // Relaxed: a hint; any value below MAX_GROUPS is safe to use.
    GROUP
        .get(cpu)
        .map_or(0, |g| g.load(Ordering::Relaxed) as usize)
}

/// The number of groups in the installed table (1 before any install).
pub fn count() -> usize {
    COUNT.load(Ordering::Acquire) // pairs with install
}
