//! The ron-core locks by command-line name (the names of `ron bench`).

use ron_core as rc;

use crate::machine::VirtualMachine;
use crate::workload::{Point, RunStats, run};

/// Every lock, in display order.
pub const NAMES: &[&str] = &[
    "ron-raw",
    "ron-inline",
    "ron",
    "nxt-ron",
    "ron-plock",
    "ron-ticket",
    "sh-ron",
    "mcs",
    "cna",
    "cbo-mcs",
    "fsl",
    "ticket",
    "ttas",
    "tas",
];

/// Slot counts the RON locks can be built with (`--slots`).
pub const SLOTS: &[usize] = &[16, 32, 64, 128, 256, 512];

/// Whether `name` takes a slot count.
pub fn has_slots(name: &str) -> bool {
    matches!(
        name,
        "ron-inline" | "ron" | "nxt-ron" | "ron-plock" | "ron-ticket"
    )
}

/// The waiting policy of the locks that take one (all but `ron`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum RelaxKind {
    /// The lock's default (`SpinThenYield`: backoff up to 64 pauses, then yields).
    Default,
    /// One pause per look (what the policy simulator assumes: waiters react at once).
    Spin,
}

macro_rules! with_slots {
    ($slots:expr, $name:expr, $vm:expr, $p:expr, $r:ty, [$($s:literal),*]) => {
        match $slots {
            $($s => match $name {
                "ron-inline" => Ok(run::<rc::RonInline<$s>>($vm, $p)),
                "ron" => Ok(run::<rc::Ron<$s, $r>>($vm, $p)),
                "nxt-ron" => Ok(run::<rc::NxtRon<$s, $r>>($vm, $p)),
                "ron-plock" => Ok(run::<rc::RonPlock<$s, $r>>($vm, $p)),
                "ron-ticket" => Ok(run::<rc::RonTicket<$s, $r>>($vm, $p)),
                _ => unreachable!(),
            },)*
            s => Err(format!("--slots {s}: one of {SLOTS:?}")),
        }
    };
}

fn run_relax<R: rc::relax::Relax + 'static>(
    name: &str,
    slots: usize,
    vm: &VirtualMachine,
    p: &Point,
) -> Result<RunStats, String> {
    if has_slots(name) {
        return with_slots!(slots, name, vm, p, R, [16, 32, 64, 128, 256, 512]);
    }
    Ok(match name {
        "ron-raw" => run::<rc::RonRaw>(vm, p),
        "sh-ron" => run::<rc::ShRon<R>>(vm, p),
        "mcs" => run::<rc::Mcs<R>>(vm, p),
        "cna" => run::<rc::Cna<16, true, R>>(vm, p),
        "cbo-mcs" => run::<rc::CBoMcs<8, R>>(vm, p),
        "fsl" => run::<rc::Fsl<4, 16, R>>(vm, p),
        "ticket" => run::<rc::Ticket<R>>(vm, p),
        "ttas" => run::<rc::Ttas<R>>(vm, p),
        "tas" => run::<rc::Tas<R>>(vm, p),
        other => return Err(format!("unknown lock {other:?}; one of {NAMES:?}")),
    })
}

/// Runs point `p` with lock `name` (`slots` for the RON locks) and waiting
/// policy `relax` (`ron` has its own).
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
