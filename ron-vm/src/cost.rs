//! The cache-line cost model: per line an exclusive owner or a set of
//! sharers, and the time until which the line is busy with a transfer.
//! Pure bookkeeping: given a CPU, an operation, a line and the current
//! virtual time, it says how long the operation takes (see the crate docs).

use std::collections::HashMap;
use std::hash::{BuildHasherDefault, Hasher};

use crate::machine::{Costs, LineModel, MAX_CPUS, Machine, ns_to_ps};

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
    /// The CPU that asked for the line last (it will hold it at `busy_until`).
    next_src: u16,
    /// Directory model: when the last write asked for takes effect (ps).
    excl_until: u64,
    /// Directory model: the CPU that asked for that write.
    excl_src: u16,
    /// Directory model: when the line's home can take the next request (ps).
    dir_free: u64,
    /// Transfers of this line so far (a measurement: [`LineCost`]).
    transfers: u64,
    /// Time its requesters waited for those transfers so far (ps; a
    /// measurement: [`LineCost`]).
    wait_ps: u64,
}

impl Line {
    const fn new() -> Self {
        Line {
            owner: NO_OWNER,
            sharers: [0; WORDS],
            busy_until: 0,
            next_src: NO_OWNER,
            excl_until: 0,
            excl_src: NO_OWNER,
            dir_free: 0,
            transfers: 0,
            wait_ps: 0,
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

/// What one cache line cost so far: its transfers and how long their
/// requesters waited for them (queueing behind earlier transfers of the
/// line included). A measurement: reading it changes no cost.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct LineCost {
    /// The line's first byte.
    pub addr: u64,
    /// Transfers of the line (misses: moved between CPUs or fetched cold).
    pub transfers: u64,
    /// Time the requesters of those transfers waited (ps).
    pub wait_ps: u64,
}

/// The state of every line the simulation touched.
pub(crate) struct Memory {
    machine: Machine,
    hit: u64,
    rmw: u64,
    cold: u64,
    directory: bool,
    occupancy: u64,
    line_shift: u32,
    lines: HashMap<u64, Line, BuildHasherDefault<LineHasher>>,
    pub(crate) stats: CostStats,
}

/// When an access takes effect: the first phase of an access
/// ([`Memory::reserve`]); the caller waits until `exec_at`, then performs the
/// operation and calls [`Memory::apply`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Reservation {
    /// When the transfer of the line to the caller starts (ps).
    pub(crate) start: u64,
    /// When the line is there and the operation takes effect (ps).
    pub(crate) exec_at: u64,
    /// Whether the access hits (no transfer).
    pub(crate) hit: bool,
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
            directory: costs.line_model == LineModel::Directory,
            occupancy: ns_to_ps(costs.dir_occupancy_ns),
            line_shift: costs.line_bytes.trailing_zeros(),
            lines: HashMap::default(),
            stats: CostStats::default(),
        }
    }

    /// Cost of a hit (ps).
    #[inline]
    pub(crate) fn hit_ps(&self) -> u64 {
        self.hit
    }

    /// Whether `cpu` holds `line` (owns it or shares it): its next load of
    /// it hits until another CPU's store or RMW takes effect on it.
    #[inline]
    pub(crate) fn holds(&self, cpu: usize, line: u64) -> bool {
        self.lines
            .get(&line)
            .is_some_and(|l| l.owner as usize == cpu || l.shares(cpu))
    }

    /// Counts `n` loads that hit without asking the model (a suspended
    /// spinner's loads, see `spin_while`).
    #[inline]
    pub(crate) fn count_hit_loads(&mut self, n: u64) {
        self.stats.loads += n;
    }

    /// The line number of byte address `addr`.
    #[inline]
    pub(crate) fn line_of(&self, addr: usize) -> u64 {
        (addr as u64) >> self.line_shift
    }

    /// Every line moved so far, with its cost (unordered).
    pub(crate) fn line_costs(&self) -> Vec<LineCost> {
        self.lines
            .iter()
            .filter(|(_, l)| l.transfers > 0)
            .map(|(&k, l)| LineCost {
                addr: k << self.line_shift,
                transfers: l.transfers,
                wait_ps: l.wait_ps,
            })
            .collect()
    }

    /// Phase 1 of `access` by `cpu` at time `now` (ps) to line `line`: a hit
    /// takes effect at once; a miss queues behind the transfers already
    /// asked for (`busy_until`) and takes effect when the line arrives,
    /// fetched from the CPU that asked last (it will hold the line then),
    /// else from the owner, else from the nearest sharer, else from DRAM.
    /// Until then the line's holders keep using it.
    pub(crate) fn reserve(
        &mut self,
        cpu: usize,
        access: Access,
        line: u64,
        now: u64,
    ) -> Reservation {
        let m = &self.machine;
        let l = self.lines.entry(line).or_insert(Line::new());
        match access {
            Access::Load => self.stats.loads += 1,
            Access::Store => self.stats.stores += 1,
            Access::Rmw => self.stats.rmws += 1,
        }
        let owns = l.owner as usize == cpu;
        let shares = l.shares(cpu);
        let pending = l.busy_until > now;
        if owns || (shares && (access == Access::Load || !pending)) {
            return Reservation {
                start: now,
                exec_at: now,
                hit: owns || access == Access::Load,
            };
        }
        if self.directory {
            return self.reserve_directory(cpu, access, line, now);
        }
        let src = if pending {
            Some(l.next_src as usize)
        } else if l.owner != NO_OWNER {
            Some(l.owner as usize)
        } else {
            nearest(m, l, cpu)
        };
        let xfer = match src {
            Some(s) if s == cpu => 0,
            Some(s) => m.latency_ps(s, cpu),
            None => self.cold,
        };
        let start = now.max(l.busy_until);
        let exec_at = start + xfer;
        l.busy_until = exec_at;
        l.next_src = cpu as u16;
        l.transfers += 1;
        l.wait_ps += exec_at - now;
        self.stats.transfers += 1;
        Reservation {
            start,
            exec_at,
            hit: false,
        }
    }

    /// A miss under [`LineModel::Directory`]: a read starts when the home
    /// is free and the last write asked for has taken effect, and comes
    /// from that writer, else the owner, else the nearest sharer; a write
    /// starts when the home is free and every transfer asked for is over,
    /// and comes from the CPU that asked last, else the owner, else the
    /// nearest sharer. Either occupies the home for `occupancy`.
    fn reserve_directory(
        &mut self,
        cpu: usize,
        access: Access,
        line: u64,
        now: u64,
    ) -> Reservation {
        let m = &self.machine;
        let l = self.lines.get_mut(&line).expect("entry made by reserve");
        let (start, src) = if access == Access::Load {
            let start = now.max(l.excl_until).max(l.dir_free);
            let src = if l.excl_until > now {
                Some(l.excl_src as usize)
            } else if l.owner != NO_OWNER {
                Some(l.owner as usize)
            } else {
                nearest(m, l, cpu)
            };
            (start, src)
        } else {
            let start = now.max(l.busy_until).max(l.dir_free);
            let src = if l.busy_until > now {
                Some(l.next_src as usize)
            } else if l.owner != NO_OWNER {
                Some(l.owner as usize)
            } else {
                nearest(m, l, cpu)
            };
            (start, src)
        };
        let xfer = match src {
            Some(s) if s == cpu => 0,
            Some(s) => m.latency_ps(s, cpu),
            None => self.cold,
        };
        let exec_at = start + xfer;
        l.dir_free = start + self.occupancy;
        l.busy_until = l.busy_until.max(exec_at);
        l.next_src = cpu as u16;
        if access != Access::Load {
            l.excl_until = exec_at;
            l.excl_src = cpu as u16;
        }
        l.transfers += 1;
        l.wait_ps += exec_at - now;
        self.stats.transfers += 1;
        Reservation {
            start,
            exec_at,
            hit: false,
        }
    }

    /// Phase 2: the access takes effect now (`r.exec_at`); updates the
    /// line's state and returns when the caller may go on (ps). A store or
    /// RMW waits for the slowest invalidation of the other sharers.
    pub(crate) fn apply(&mut self, cpu: usize, access: Access, line: u64, r: Reservation) -> u64 {
        let m = &self.machine;
        let l = self.lines.get_mut(&line).expect("reserved line");
        match access {
            Access::Load => {
                if !r.hit {
                    if l.owner != NO_OWNER && l.owner as usize != cpu {
                        let o = l.owner as usize;
                        l.add(o);
                        l.owner = NO_OWNER;
                    }
                    if l.owner == NO_OWNER {
                        l.add(cpu);
                    }
                    return r.exec_at;
                }
                r.exec_at + self.hit
            }
            Access::Store | Access::Rmw => {
                let extra = if access == Access::Rmw { self.rmw } else { 0 };
                let mut inv = 0;
                l.each_sharer(|s| {
                    if s != cpu {
                        inv = inv.max(m.latency_ps(cpu, s));
                    }
                });
                l.owner = cpu as u16;
                l.sharers = [0; WORDS];
                r.exec_at.max(r.start + inv) + self.hit + extra
            }
        }
    }

    /// Both phases at once (for tests of the bookkeeping alone).
    #[cfg(test)]
    fn access(&mut self, cpu: usize, access: Access, line: u64, now: u64) -> u64 {
        let r = self.reserve(cpu, access, line, now);
        self.apply(cpu, access, line, r)
    }
}

/// The sharer closest to `cpu` (the cheapest to fetch the line from).
fn nearest(m: &Machine, l: &Line, cpu: usize) -> Option<usize> {
    let mut best: Option<(u64, usize)> = None;
    l.each_sharer(|s| {
        let c = (m.latency_ps(s, cpu), s);
        best = Some(best.map_or(c, |b| b.min(c)));
    });
    best.map(|b| b.1)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mem(n: usize, f: impl FnMut(usize, usize) -> f64) -> Memory {
        Memory::new(Machine::from_fn(n, f).unwrap(), &Costs::relay())
    }

    #[test]
    fn directory_overlaps_reads_but_not_writes() {
        // Owner 0 writes; readers 1, 2, 3 ask at t = 0: the k-th gets it
        // after (k - 1) occupancies (4 ns) and one transfer (10 ns); a
        // write asked for at t = 0 then waits for all of them.
        let costs = Costs {
            dir_occupancy_ns: 4.0,
            ..Costs::default()
        };
        let mut m = Memory::new(
            Machine::from_fn(5, |a, b| if a == b { 0.0 } else { 10.0 }).unwrap(),
            &costs,
        );
        m.access(0, Access::Store, 1, 0);
        let l = m.lines.get_mut(&1).unwrap();
        (l.busy_until, l.excl_until, l.dir_free) = (0, 0, 0); // forget the cold fetch
        let at: Vec<u64> = (1..4)
            .map(|c| m.reserve(c, Access::Load, 1, 0).exec_at)
            .collect();
        assert_eq!(at, vec![10_000, 14_000, 18_000]);
        let w = m.reserve(4, Access::Rmw, 1, 0);
        assert_eq!((w.start, w.exec_at), (18_000, 28_000));
        // A read after the write waits for it and comes from the writer.
        let r = m.reserve(1, Access::Load, 1, 0);
        assert_eq!((r.start, r.exec_at), (28_000, 38_000));
    }

    #[test]
    fn load_miss_then_hit() {
        let mut m = mem(2, |a, b| if a == b { 0.0 } else { 50.0 });
        assert_eq!(m.access(0, Access::Store, 7, 0), 100_000 + 1_000); // cold fetch + hit
        let r = m.reserve(1, Access::Load, 7, 200_000);
        assert_eq!((r.exec_at, r.hit), (250_000, false));
        assert_eq!(m.apply(1, Access::Load, 7, r), 250_000);
        let r = m.reserve(1, Access::Load, 7, 250_000);
        assert!(r.hit);
        assert_eq!(m.apply(1, Access::Load, 7, r), 251_000);
        // The old owner kept a shared copy.
        assert!(m.reserve(0, Access::Load, 7, 300_000).hit);
    }

    #[test]
    fn transfers_of_one_line_serialize() {
        // Owner 0 writes; readers 1, 2, 3 all ask at t = 0: the k-th gets
        // it after k transfers of 10 ns; meanwhile the owner still hits.
        let mut m = mem(4, |a, b| if a == b { 0.0 } else { 10.0 });
        m.access(0, Access::Store, 1, 0);
        m.lines.get_mut(&1).unwrap().busy_until = 0; // forget the cold fetch
        let r: Vec<Reservation> = (1..4).map(|c| m.reserve(c, Access::Load, 1, 0)).collect();
        let at: Vec<u64> = r.iter().map(|r| r.exec_at).collect();
        assert_eq!(at, vec![10_000, 20_000, 30_000]);
        assert!(m.reserve(0, Access::Rmw, 1, 5_000).hit);
    }

    #[test]
    fn store_by_a_sharer_pays_the_slowest_invalidation() {
        let mut m = mem(3, |a, b| {
            (10 * (a + b)) as f64 * if a == b { 0.0 } else { 1.0 }
        });
        m.access(0, Access::Store, 3, 0);
        m.lines.get_mut(&3).unwrap().busy_until = 0; // forget the cold fetch
        assert_eq!(m.access(1, Access::Load, 3, 0), 10_000); // 0 -> 1
        assert_eq!(m.access(2, Access::Load, 3, 10_000), 30_000); // nearest sharer 0 -> 2
        // 1 shares the line: no transfer, invalidate 0 (10 ns) and 2 (30 ns).
        let r = m.reserve(1, Access::Rmw, 3, 30_000);
        assert_eq!(r.exec_at, 30_000);
        assert_eq!(
            m.apply(1, Access::Rmw, 3, r),
            30_000 + 30_000 + 1_000 + 5_000
        );
    }
}
