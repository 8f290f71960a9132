//! Lock names -> the lock types they run.
//!
//! [`visit_all`] lists the benchmarked locks: every ron-core lock of
//! `ron_testkit::for_each_lock!` (the one list of locks of the workspace:
//! adding a lock is one line there), then the peers. Everything else is
//! derived from it: [`registry`] (name ->
//! type-erased runners for each workload), `ron bench --list`, and the
//! criterion benches (which implement [`LockVisitor`] themselves).
//!
//! # Names
//! A lock's command-line name is the kebab-case of its type (`RonRaw` ->
//! `ron-raw`, `Ron<16>` -> `ron`; peers keep their crate's name). [`find`]
//! accepts the command-line name, the type name (with or without its
//! parameters: `NxtRon`, `NxtRon<16>`) and a few aliases, case-insensitively
//! and ignoring `-`, `_`, `:`; the output always uses the command-line name.

use std::sync::OnceLock;

use crate::error::BenchError;
use crate::mutex::{MutexFamily, Raw, SpinMutex, SpinTicketMutex, StdMutex};
use crate::workload::{LoopConfig, RunStats, kv, many_locks, micro, ron_micro};

/// Where a lock comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum LockKind {
    /// A RON lock of ron-core.
    Ron,
    /// A baseline lock of ron-core (TAS, MCS, CNA, ...).
    Baseline,
    /// A lock of another crate or of std: the reference the ratios use.
    Peer,
}

/// The name and description of a lock.
#[derive(Debug, Clone, Copy, serde::Serialize)]
pub struct LockInfo {
    /// Command-line name (kebab-case of the type; peers keep their crate
    /// name): the one spelling used in output.
    pub name: &'static str,
    /// Origin of the lock.
    pub kind: LockKind,
    /// The Rust type that runs.
    pub type_name: &'static str,
    /// One-line description.
    pub about: &'static str,
}

/// Something that does one thing per lock type ([`visit_all`]).
pub trait LockVisitor {
    /// Called once per lock, with its type as `F`.
    fn visit<F: MutexFamily>(&mut self, info: LockInfo);
}

fn info(
    name: &'static str,
    kind: LockKind,
    type_name: &'static str,
    about: &'static str,
) -> LockInfo {
    LockInfo {
        name,
        kind,
        type_name,
        about,
    }
}

/// Calls `v.visit::<F>(..)` for every benchmarked lock, in display order:
/// the ron-core locks of `ron_testkit::for_each_lock!`, then the peers.
#[rustfmt::skip]
pub fn visit_all<V: LockVisitor>(v: &mut V) {
    macro_rules! ron_lock {
        ($id:ident, $ty:ty, { name: $name:literal, type_name: $tn:literal, kind: $kind:ident, generic: $g:tt, fair: $f:tt, timed: $t:tt, fifo_abort: $a:tt, bound: $b:tt, std: $s:tt, bytes: $bytes:tt, about: $about:literal }) => {
            v.visit::<Raw<$ty>>(info($name, LockKind::$kind, $tn, $about));
        };
    }
    ron_testkit::for_each_lock!(ron_lock);
    use LockKind::Peer;
    // One line per peer: command-line name, kind, type, description.
    v.visit::<Raw<parking_lot::RawMutex>>(info("parking_lot", Peer, "parking_lot::Mutex", "parking_lot 0.13: spin a little, then park"));
    v.visit::<StdMutex>(info("std", Peer, "std::sync::Mutex", "std: futex-based"));
    v.visit::<SpinMutex>(info("spin", Peer, "spin::Mutex", "spin 0.12 SpinMutex: test-and-set"));
    v.visit::<SpinTicketMutex>(info("spin-ticket", Peer, "spin::TicketMutex", "spin 0.12 TicketMutex: FIFO ticket lock"));
}

/// The locks `ron bench` runs when `--locks` is not given (those of them
/// that exist in this build).
pub const DEFAULT_LOCKS: &[&str] = &[
    "ron-grant",
    "ron-raw",
    "nxt-ron",
    "mcs",
    "ttas",
    "ticket",
    "parking_lot",
    "std",
    "spin",
];

/// Runs one microbenchmark (see [`micro::run`]).
pub type MicroFn = fn(&micro::MicroConfig) -> RunStats;
/// Runs one key-value workload (see [`kv::run`]) or another loop that
/// takes only the shared parameters ([`ron_micro::run`]).
pub type KvFn = fn(&LoopConfig) -> RunStats;
/// Runs one many-locks workload, or skips it (see [`many_locks::run`]).
pub type ManyLocksFn =
    fn(&many_locks::ManyLocksConfig) -> Result<many_locks::ManyLocksStats, many_locks::Skipped>;

/// A lock with its workloads instantiated.
#[derive(Debug)]
pub struct LockEntry {
    /// Name and description.
    pub info: LockInfo,
    /// The microbenchmark loop for this lock.
    pub micro: MicroFn,
    /// The key-value workload for this lock.
    pub kv: KvFn,
    /// The key-value workload's update-only mix for this lock.
    pub kv_update: KvFn,
    /// The RON paper's microbenchmark for this lock.
    pub ron_micro: KvFn,
    /// The many-locks workload for this lock.
    pub many_locks: ManyLocksFn,
}

impl LockEntry {
    /// The command-line name.
    pub fn name(&self) -> &'static str {
        self.info.name
    }

    /// Whether this lock is a peer (a ratio reference).
    pub fn is_peer(&self) -> bool {
        self.info.kind == LockKind::Peer
    }
}

struct Collect(Vec<LockEntry>);

impl LockVisitor for Collect {
    fn visit<F: MutexFamily>(&mut self, info: LockInfo) {
        self.0.push(LockEntry {
            info,
            micro: micro::run::<F>,
            kv: kv::run::<F>,
            kv_update: kv::run_update::<F>,
            ron_micro: ron_micro::run::<F>,
            many_locks: many_locks::run::<F>,
        });
    }
}

/// Every benchmarked lock, in display order.
pub fn registry() -> &'static [LockEntry] {
    static REG: OnceLock<Vec<LockEntry>> = OnceLock::new();
    REG.get_or_init(|| {
        let mut c = Collect(Vec::new());
        visit_all(&mut c);
        c.0
    })
}

/// Other accepted names: (alias, command-line name).
const ALIASES: &[(&str, &str)] = &[
    ("ron-alg1", "ron"),
    ("ron-mutex", "ron-grant"),
    ("parking-lot-mutex", "parking_lot"),
    ("std-mutex", "std"),
    ("spin-mutex", "spin"),
    ("spin-ticket-mutex", "spin-ticket"),
];

pub use crate::names::name_key;

/// The lock called `name`: its command-line name, its type name (with or
/// without parameters) or an alias, case-insensitively.
///
/// ```
/// use ron_bench::registry::find;
/// assert_eq!(find("NxtRon").unwrap().name(), "nxt-ron");
/// assert_eq!(find("RonRaw").unwrap().name(), "ron-raw");
/// assert_eq!(find("Ron<16>").unwrap().name(), "ron");
/// ```
pub fn find(name: &str) -> Result<&'static LockEntry, BenchError> {
    let key = name_key(name);
    let target = ALIASES
        .iter()
        .find(|(a, _)| name_key(a) == key)
        .map_or(key.clone(), |(_, n)| name_key(n));
    let by = |f: fn(&LockInfo) -> &'static str| {
        registry()
            .iter()
            .find(|e| !target.is_empty() && name_key(f(&e.info)) == target)
    };
    by(|i| i.name)
        .or_else(|| by(|i| i.type_name))
        .ok_or_else(|| BenchError::UnknownLock {
            name: name.trim().to_string(),
            known: names().join(", "),
        })
}

/// Every known name, in display order.
pub fn names() -> Vec<&'static str> {
    registry().iter().map(|e| e.info.name).collect()
}

/// The default selection ([`DEFAULT_LOCKS`] present in this build).
pub fn defaults() -> Vec<&'static LockEntry> {
    DEFAULT_LOCKS.iter().filter_map(|n| find(n).ok()).collect()
}

/// Resolves a comma-separated list of names (`all` = every lock, `default`
/// = [`defaults`]), without duplicates, in the order given.
pub fn resolve(list: &str) -> Result<Vec<&'static LockEntry>, BenchError> {
    let mut out: Vec<&'static LockEntry> = Vec::new();
    let push = |e: &'static LockEntry, out: &mut Vec<&'static LockEntry>| {
        if !out.iter().any(|x| std::ptr::eq(*x, e)) {
            out.push(e);
        }
    };
    for part in list.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.to_ascii_lowercase().as_str() {
            "all" => registry().iter().for_each(|e| push(e, &mut out)),
            "default" => defaults().into_iter().for_each(|e| push(e, &mut out)),
            _ => push(find(part)?, &mut out),
        }
    }
    if out.is_empty() {
        return Err(BenchError::Invalid(
            "--locks: no lock given (names from --list, `default` or `all`), got an empty list"
                .into(),
        ));
    }
    Ok(out)
}
