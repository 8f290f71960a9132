//! A key-value map under one lock: a `BTreeMap` of about 1024 keys, 80%
//! lookups, 10% inserts, 10% removes, keys uniform over 0..2048.

use std::collections::BTreeMap;
use std::hint::black_box;

use crate::mutex::MutexFamily;
use crate::workload::{LoopConfig, RunStats, drive};

/// The key space; half of it is present at any time on average.
pub const KEY_SPACE: u64 = 2048;

/// Runs the key-value workload with lock family `F` (one operation per
/// critical section). The map starts with the 1024 even keys.
pub fn run<F: MutexFamily>(cfg: &LoopConfig) -> RunStats {
    let map: BTreeMap<u64, u64> = (0..KEY_SPACE).step_by(2).map(|k| (k, k)).collect();
    let (stats, map, _) = drive::<F, _, _>(cfg, map, |m: &mut BTreeMap<u64, u64>, rng| {
        let k = rng.below(KEY_SPACE as usize) as u64;
        match rng.below(10) {
            0..=7 => {
                black_box(m.get(&k));
            }
            8 => {
                m.insert(k, k);
            }
            _ => {
                m.remove(&k);
            }
        }
    });
    black_box(map.len());
    stats
}
