//! The cache-line cost model: per line an exclusive owner or a set of
//! sharers, and the time until which the line is busy with a transfer.
//! Pure bookkeeping: given a CPU, an operation, a line and the current
//! virtual time, it says how long the operation takes (see the crate docs).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::machine::{Costs, MAX_CPUS, Machine, ns_to_ps};

/// What an instrumented access does to its line.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    /// A load.
    Load,
    /// A plain store.
    Store,
    /// A read-modify-write (CAS, fetch-add, swap, ...), also when a CAS fails.
    Rmw,
}

const WORDS: usize = MAX_CPUS / 64;
const NO_OWNER: u16 = u16::MAX;

/// One cache line's coherence state.
#[derive(Debug, Clone)]
struct Line {
    /// The CPU holding the line exclusively (modified), or `NO_OWNER`.
    owner: u16,
    /// CPUs holding a shared copy (empty while `owner` is set).
    sharers: [u64; WORDS],
    /// Transfers of this line are serialized: the next one starts no
    /// earlier than this (ps).
    busy_until: u64,
}

impl Line {
    const fn new() -> Self {
        Line {
            owner: NO_OWNER,
            sharers: [0; WORDS],
            busy_until: 0,
        }
    }
    #[inline]
    fn shares(&self, cpu: usize) -> bool {
        self.sharers[cpu / 64] & (1 << (cpu % 64)) != 0
    }
    #[inline]
    fn add(&mut self, cpu: usize) {
        self.sharers[cpu / 64] |= 1 << (cpu % 64);
    }
    fn each_sharer(&self, mut f: impl FnMut(usize)) {
        for (w, &bits) in self.sharers.iter().enumerate() {
            let mut b = bits;
            while b != 0 {
                f(w * 64 + b.trailing_zeros() as usize);
                b &= b - 1;
            }
        }
    }
}

/// A multiplicative hasher for line numbers (deterministic; lookups only,
/// the map is never iterated).
#[derive(Default)]
struct LineHasher(u64);

impl Hasher for LineHasher {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        for &b in bytes {
            self.0 = (self.0 ^ b as u64).wrapping_mul(0x100_0000_01B3);
        }
    }
    fn write_u64(&mut self, n: u64) {
        self.0 = (n ^ (n >> 29)).wrapping_mul(0x9E37_79B9_7F4A_7C15);
    }
}

/// Counters of what the model charged.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct CostStats {
    /// Loads.
    pub loads: u64,
    /// Stores.
    pub stores: u64,
    /// RMWs.
    pub rmws: u64,
    /// Accesses that moved a line between CPUs (or fetched it cold).
    pub transfers: u64,
}

/// The state of every line the simulation touched.
pub(crate) struct Memory {
    machine: Machine,
    hit: u64,
    rmw: u64,
    cold: u64,
    line_shift: u32,
    lines: HashMap<u64, Line, BuildHasherDefault<LineHasher>>,
    pub(crate) stats: CostStats,
}

/// The outcome of one access.
pub(crate) struct Charge {
    /// When the access completes (ps); the caller's clock moves there.
    pub(crate) done: u64,
    /// Whether the access was a load that hit.
    #[cfg_attr(not(test), allow(dead_code))]
    pub(crate) hit_load: bool,
}

impl Memory {
    pub(crate) fn new(machine: Machine, costs: &Costs) -> Self {
        assert!(
            costs.line_bytes.is_power_of_two(),
            "line_bytes must be a power of two"
        );
        Memory {
            machine,
            hit: ns_to_ps(costs.hit_ns),
            rmw: ns_to_ps(costs.rmw_ns),
            cold: ns_to_ps(costs.cold_ns),
            line_shift: costs.line_bytes.trailing_zeros(),
            lines: HashMap::default(),
            stats: CostStats::default(),
        }
    }

    /// The line number of byte address `addr`.
    #[inline]
    pub(crate) fn line_of(&self, addr: usize) -> u64 {
        (addr as u64) >> self.line_shift
    }

    /// Charges `access` by `cpu` at time `now` (ps) to line `line`.
    pub(crate) fn access(&mut self, cpu: usize, access: Access, line: u64, now: u64) -> Charge {
        let m = &self.machine;
        let l = self.lines.entry(line).or_insert(Line::new());
        let owner = (l.owner != NO_OWNER).then_some(l.owner as usize);
        match access {
            Access::Load => {
                self.stats.loads += 1;
                if owner == Some(cpu) || l.shares(cpu) {
                    return Charge {
                        done: now + self.hit,
                        hit_load: true,
                    };
                }
                // Miss: from the owner, else the nearest sharer, else DRAM.
                let xfer = match owner {
                    Some(o) => m.latency_ps(o, cpu),
                    None => nearest(m, l, cpu).unwrap_or(self.cold),
                };
                let start = now.max(l.busy_until);
                let done = start + xfer;
                l.busy_until = done;
                if let Some(o) = owner {
                    l.add(o);
                    l.owner = NO_OWNER;
                }
                l.add(cpu);
                self.stats.transfers += 1;
                Charge {
                    done,
                    hit_load: false,
                }
            }
            Access::Store | Access::Rmw => {
                let extra = if access == Access::Rmw {
                    self.stats.rmws += 1;
                    self.rmw
                } else {
                    self.stats.stores += 1;
                    0
                };
                if owner == Some(cpu) {
                    return Charge {
                        done: now + self.hit + extra,
                        hit_load: false,
                    };
                }
                // The data comes from the owner (or the nearest sharer, or
                // DRAM) unless we share the line already; the other sharers
                // are invalidated in parallel, the writer waits for the
                // slowest acknowledgement.
                let xfer = match owner {
                    Some(o) => m.latency_ps(o, cpu),
                    None if l.shares(cpu) => 0,
                    None => nearest(m, l, cpu).unwrap_or(self.cold),
                };
                let mut inv = 0;
                l.each_sharer(|s| {
                    if s != cpu {
                        inv = inv.max(m.latency_ps(cpu, s));
                    }
                });
                let start = now.max(l.busy_until);
                // Readers after us fetch the line from us once it is here;
                // the invalidations do not hold them up.
                l.busy_until = start + xfer;
                l.owner = cpu as u16;
                l.sharers = [0; WORDS];
                self.stats.transfers += 1;
                Charge {
                    done: start + xfer.max(inv) + self.hit + extra,
                    hit_load: false,
                }
            }
        }
    }
}

/// The cheapest sharer to fetch `line` from, as a latency to `cpu`.
fn nearest(m: &Machine, l: &Line, cpu: usize) -> Option<u64> {
    let mut best: Option<u64> = None;
    l.each_sharer(|s| {
        let c = m.latency_ps(s, cpu);
        best = Some(best.map_or(c, |b| b.min(c)));
    });
    best
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(n: usize, f: impl FnMut(usize, usize) -> f64) -> Memory {
        Memory::new(Machine::from_fn(n, f).unwrap(), &Costs::default())
    }

    #[test]
    fn load_miss_then_hit() {
        let mut m = mem(2, |a, b| if a == b { 0.0 } else { 50.0 });
        let c = m.access(0, Access::Store, 7, 0);
        assert_eq!(c.done, 100_000 + 1_000); // cold fetch + hit
        let c = m.access(1, Access::Load, 7, 200_000);
        assert_eq!(c.done, 250_000);
        assert!(!c.hit_load);
        let c = m.access(1, Access::Load, 7, 250_000);
        assert_eq!((c.done, c.hit_load), (251_000, true));
        // The old owner kept a shared copy.
        assert!(m.access(0, Access::Load, 7, 0).hit_load);
    }

    #[test]
    fn transfers_of_one_line_serialize() {
        // Owner 0 writes; readers 1, 2, 3 all ask at t = 0: the k-th gets
        // it after k transfers of 10 ns.
        let mut m = mem(4, |a, b| if a == b { 0.0 } else { 10.0 });
        m.access(0, Access::Store, 1, 0);
        m.lines.get_mut(&1).unwrap().busy_until = 0; // forget the cold fetch
        let d: Vec<u64> = (1..4)
            .map(|c| m.access(c, Access::Load, 1, 0).done)
            .collect();
        assert_eq!(d, vec![10_000, 20_000, 30_000]);
    }

    #[test]
    fn store_by_a_sharer_pays_the_slowest_invalidation() {
        let mut m = mem(3, |a, b| {
            (10 * (a + b)) as f64 * if a == b { 0.0 } else { 1.0 }
        });
        m.access(0, Access::Store, 3, 0);
        m.lines.get_mut(&3).unwrap().busy_until = 0; // forget the cold fetch
        m.access(1, Access::Load, 3, 0); // 0 -> 1: 10 ns
        m.access(2, Access::Load, 3, 0); // nearest sharer: 0 -> 2: 20 ns
        let busy = m.lines[&3].busy_until;
        assert_eq!(busy, 30_000);
        // 1 shares the line: no transfer, invalidate 0 (10 ns) and 2 (30 ns).
        let c = m.access(1, Access::Rmw, 3, busy);
        assert_eq!(c.done, busy + 30_000 + 1_000 + 5_000);
        assert_eq!(m.lines[&3].busy_until, busy);
    }
}
