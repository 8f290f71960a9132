//! The ron-core locks by command-line name (the names of `ron bench`).

use ron_core as rc;

use crate::machine::VirtualMachine;
use crate::workload::{Point, RunStats, run};

/// Every lock, in display order.
pub const NAMES: &[&str] = &[
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
    matches!(name, "ron" | "nxt-ron" | "ron-plock" | "ron-ticket")
}

macro_rules! with_slots {
    ($slots:expr, $name:expr, $vm:expr, $p:expr, [$($s:literal),*]) => {
        match $slots {
            $($s => match $name {
                "ron" => Ok(run::<rc::RonRaw<$s>>($vm, $p)),
                "nxt-ron" => Ok(run::<rc::NxtRon<$s>>($vm, $p)),
                "ron-plock" => Ok(run::<rc::RonPlock<$s>>($vm, $p)),
                "ron-ticket" => Ok(run::<rc::RonTicket<$s>>($vm, $p)),
                _ => unreachable!(),
            },)*
            s => Err(format!("--slots {s}: one of {SLOTS:?}")),
        }
    };
}

/// Runs point `p` with lock `name` (`slots` for the RON locks, 16 by default).
pub fn run_named(
    name: &str,
    slots: usize,
    vm: &VirtualMachine,
    p: &Point,
) -> Result<RunStats, String> {
    if has_slots(name) {
        return with_slots!(slots, name, vm, p, [16, 32, 64, 128, 256, 512]);
    }
    Ok(match name {
        "sh-ron" => run::<rc::ShRon>(vm, p),
        "mcs" => run::<rc::Mcs>(vm, p),
        "cna" => run::<rc::Cna>(vm, p),
        "cbo-mcs" => run::<rc::CBoMcs<8>>(vm, p),
        "fsl" => run::<rc::Fsl<4>>(vm, p),
        "ticket" => run::<rc::Ticket>(vm, p),
        "ttas" => run::<rc::Ttas>(vm, p),
        "tas" => run::<rc::Tas>(vm, p),
        other => return Err(format!("unknown lock {other:?}; one of {NAMES:?}")),
    })
}

/// The smallest supported slot count with one slot per CPU of `n`
/// (the largest supported if none).
pub fn slots_per_cpu(n: usize) -> usize {
    SLOTS.iter().copied().find(|&s| s >= n).unwrap_or(512)
}
