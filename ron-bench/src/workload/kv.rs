//! A key-value map under one lock: a `BTreeMap` of about 1024 keys, keys
//! uniform over 0..2048, one operation per critical section, in two mixes
//! after the CNA paper: [`run`] 80 % lookups, 10 % inserts, 10 % removes;
//! [`run_update`] updates only, inserts and removes with even odds.
//!
//! The CNA paper's map is an AVL tree; this one is the standard library's
//! ordered map, a B-tree (fewer, wider nodes, so fewer cache lines per
//! operation than a binary tree of the same keys).

use std::collections::BTreeMap;
use std::hint::black_box;

use crate::mutex::MutexFamily;
use crate::workload::{LoopConfig, RunStats, drive};

/// The key space; half of it is present at any time on average.
pub const KEY_SPACE: u64 = 2048;

/// Runs the key-value workload with lock family `F` (one operation per
/// critical section). The map starts with the 1024 even keys.
pub fn run<F: MutexFamily>(cfg: &LoopConfig) -> RunStats {
    run_mix::<F>(cfg, 8)
}

/// The update-only mix of the same map (the CNA paper's): every operation
/// inserts or removes a uniformly random key, with even odds.
pub fn run_update<F: MutexFamily>(cfg: &LoopConfig) -> RunStats {
    run_mix::<F>(cfg, 0)
}

/// The map and the number of operations made on it.
struct Kv {
    map: BTreeMap<u64, u64>,
    ops: u64,
}

/// The loop with `lookups` tenths of lookups; the rest split evenly
/// between inserts and removes. Each critical section also counts its
/// operation: at the end the count must equal the number of acquisitions,
/// which [`RunStats::exclusion_ok`] reports.
fn run_mix<F: MutexFamily>(cfg: &LoopConfig, lookups: usize) -> RunStats {
    let map: BTreeMap<u64, u64> = (0..KEY_SPACE).step_by(2).map(|k| (k, k)).collect();
    let kv = Kv { map, ops: 0 };
    let (mut stats, kv, all) = drive::<F, _, _>(cfg, kv, |kv: &mut Kv, rng| {
        let k = rng.below(KEY_SPACE as usize) as u64;
        let op = rng.below(10);
        if op < lookups {
            black_box(kv.map.get(&k));
        } else if (op - lookups).is_multiple_of(2) {
            kv.map.insert(k, k);
        } else {
            kv.map.remove(&k);
        }
        kv.ops += 1;
    });
    black_box(kv.map.len());
    stats.exclusion_ok = kv.ops == all;
    stats
}
