//! The ron-core locks by command-line name (the names of `ron bench`), from
//! the workspace's one list of locks, `ron_testkit::for_each_lock!`.

use ron_core as rc;

use crate::machine::VirtualMachine;
use crate::workload::{Point, RunStats, run};

/// Every lock, in display order.
pub const NAMES: &[&str] = ron_testkit::locks::NAMES;

/// The locks with a waiting policy of their own (`--relax` does not apply).
pub const OWN_RELAX: &[&str] = &["ron-raw", "ron-grant", "ron-inline", "ron-park"];

/// Slot counts the RON locks can be built with (`--slots`).
pub const SLOTS: &[usize] = &[16, 32, 64, 128, 256, 512];

/// Whether `name` takes a slot count.
pub fn has_slots(name: &str) -> bool {
    ron_testkit::locks::all()
        .iter()
        .any(|l| l.name == name && l.generic)
}

/// The waiting policy of the locks that take one (all but `ron-raw`,
/// `ron-inline` and `ron-park`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RelaxKind {
    /// The lock's default (`DefaultRelax`: `SpinWhileAlone`, a pause per look
    /// while a timed yield says the CPU is the waiter's own).
    Default,
    /// One pause per look (what the policy simulator assumes: waiters react at once).
    Spin,
}

impl RelaxKind {
    /// The command-line name.
    pub fn name(self) -> &'static str {
        match self {
            RelaxKind::Default => "default",
            RelaxKind::Spin => "spin",
        }
    }
}

/// Runs lock `name` of the list with `S` slots (where it takes a slot
/// count) and relax policy `R` (where it takes one); `None` for an unknown
/// name.
fn run_listed<R: rc::relax::Relax + 'static, const S: usize>(
    name: &str,
    vm: &VirtualMachine,
    p: &Point,
) -> Option<RunStats> {
    let mut out = None;
    macro_rules! one {
        ($id:ident, $ty:ty, { name: $n:literal, $($rest:tt)* }) => {
            if out.is_none() && name == $n {
                out = Some(run::<$ty>(vm, p));
            }
        };
    }
    ron_testkit::for_each_lock!(one, slots = S, relax = R);
    out
}

fn run_relax<R: rc::relax::Relax + 'static>(
    name: &str,
    slots: usize,
    vm: &VirtualMachine,
    p: &Point,
) -> Result<RunStats, String> {
    let out = match slots {
        16 => run_listed::<R, 16>(name, vm, p),
        32 => run_listed::<R, 32>(name, vm, p),
        64 => run_listed::<R, 64>(name, vm, p),
        128 => run_listed::<R, 128>(name, vm, p),
        256 => run_listed::<R, 256>(name, vm, p),
        512 => run_listed::<R, 512>(name, vm, p),
        s if has_slots(name) => return Err(format!("--slots {s}: one of {SLOTS:?}")),
        // A lock without slots is the same type for every count.
        _ => run_listed::<R, 16>(name, vm, p),
    };
    out.ok_or_else(|| format!("unknown lock {name:?}; one of {NAMES:?}"))
}

/// Runs point `p` with lock `name` (`slots` for the RON locks) and waiting
/// policy `relax` (`ron-raw`, `ron-inline` and `ron-park` have their own).
pub fn run_named(
    name: &str,
    slots: usize,
    relax: RelaxKind,
    vm: &VirtualMachine,
    p: &Point,
) -> Result<RunStats, String> {
    match relax {
        RelaxKind::Default => run_relax::<rc::relax::DefaultRelax>(name, slots, vm, p),
        RelaxKind::Spin => run_relax::<rc::relax::Spin>(name, slots, vm, p),
    }
}

/// The smallest supported slot count with one slot per CPU of `n`
/// (the largest supported if none).
pub fn slots_per_cpu(n: usize) -> usize {
    SLOTS.iter().copied().find(|&s| s >= n).unwrap_or(512)
}
