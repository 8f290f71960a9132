//! The group table a run installs (`ron_core::groups`), derived from the
//! latency matrix: the NUMA-aware locks (`Cna`, `CBoMcs`, `Fsl`'s cohorts)
//! batch their handovers inside a group, and without a table every CPU is
//! in group 0 and they run as their FIFO base.
//!
//! * `socket`: a recursive two-way split of the CPUs by their latency
//!   profiles (2-medoids on the rows of the matrix), kept only where each
//!   half holds at least an eighth of the CPUs (and 2) and the mean latency
//!   across the two halves is at least [`SPLIT_RATIO`] times the mean
//!   latency between L3 groups inside one of them (the half where leaving
//!   a cache is cheaper). Rows, not single latencies: on the recorded
//!   2-socket EPYC 7742 a CPU's latency to another CCX of its own socket is
//!   as high as to the other socket on one of the two sockets, so a
//!   threshold on latencies finds CCXs, while the rows of two CPUs of one
//!   socket still agree on which CPUs are near. Across L3 groups, not all
//!   pairs: a machine of four chiplets would otherwise split into two
//!   pairs of chiplets.
//! * `l3`: CPUs closer than a cut are in one group (connected components);
//!   the cut is the largest ratio between consecutive sorted latencies for
//!   which every group holds at least [`MIN_L3`] CPUs (so SMT siblings
//!   alone do not count as a cache).
//! * `none`: one group; `FILE`: one group id per CPU, separated by commas
//!   or white space.

use ron_topo::LatencyMatrix;

/// The least ratio of the mean latency across a split to the mean inside
/// its halves for the split to count as two sockets.
pub const SPLIT_RATIO: f64 = 1.5;

/// The least CPUs of an L3 group.
pub const MIN_L3: usize = 4;

/// Which group table a run installs (`--groups`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum GroupsChoice {
    /// Sockets found in the matrix.
    Socket,
    /// Last-level-cache groups found in the matrix.
    L3,
    /// One group.
    None,
    /// Read from a file.
    File(std::path::PathBuf),
}

impl std::str::FromStr for GroupsChoice {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        Ok(match s {
            "socket" => GroupsChoice::Socket,
            "l3" => GroupsChoice::L3,
            "none" => GroupsChoice::None,
            "" => return Err("empty; one of socket, l3, none or a file".into()),
            f => GroupsChoice::File(f.into()),
        })
    }
}

/// A group table and how it was made.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Groups {
    /// The group of each CPU (matrix index).
    pub of_cpu: Vec<usize>,
    /// `socket`, `l3`, `none` or `file`.
    pub kind: &'static str,
}

impl Groups {
    /// The table for `choice` on matrix `m`.
    pub fn derive(m: &LatencyMatrix, choice: &GroupsChoice) -> Result<Self, String> {
        let n = m.n();
        Ok(match choice {
            GroupsChoice::Socket => Groups {
                of_cpu: sockets(m),
                kind: "socket",
            },
            GroupsChoice::L3 => Groups {
                of_cpu: l3(m),
                kind: "l3",
            },
            GroupsChoice::None => Groups {
                of_cpu: vec![0; n],
                kind: "none",
            },
            GroupsChoice::File(p) => {
                let text = std::fs::read_to_string(p)
                    .map_err(|e| format!("--groups: {}: {e}", p.display()))?;
                let of_cpu: Vec<usize> = text
                    .split(|c: char| c == ',' || c.is_whitespace())
                    .filter(|s| !s.is_empty())
                    .map(|s| {
                        s.parse().map_err(|_| {
                            format!("--groups: {}: {s:?} is not a group id", p.display())
                        })
                    })
                    .collect::<Result<_, _>>()?;
                if of_cpu.len() != n {
                    return Err(format!(
                        "--groups: {}: {} group ids for {n} CPUs",
                        p.display(),
                        of_cpu.len()
                    ));
                }
                if let Some(&g) = of_cpu.iter().find(|&&g| g >= ron_core::groups::MAX_GROUPS) {
                    return Err(format!(
                        "--groups: {}: group {g} is not below {}",
                        p.display(),
                        ron_core::groups::MAX_GROUPS
                    ));
                }
                Groups {
                    of_cpu,
                    kind: "file",
                }
            }
        })
    }

    /// The number of groups (ids are dense from [`sockets`] and [`l3`]).
    pub fn count(&self) -> usize {
        let mut ids = self.of_cpu.clone();
        ids.sort_unstable();
        ids.dedup();
        ids.len()
    }

    /// A short description, e.g. `socket:2x64` or `l3:16 (4-8 CPUs)`.
    pub fn describe(&self) -> String {
        let k = self.count();
        let mut sizes = vec![0usize; self.of_cpu.iter().max().map_or(1, |m| m + 1)];
        for &g in &self.of_cpu {
            sizes[g] += 1;
        }
        sizes.retain(|&s| s > 0);
        let (lo, hi) = (
            sizes.iter().min().copied().unwrap_or(0),
            sizes.iter().max().copied().unwrap_or(0),
        );
        if lo == hi {
            format!("{}:{k}x{lo}", self.kind)
        } else {
            format!("{}:{k} ({lo}-{hi} CPUs)", self.kind)
        }
    }
}

/// The symmetric latency `(L[a][b] + L[b][a]) / 2`.
fn sym(m: &LatencyMatrix, a: usize, b: usize) -> f64 {
    0.5 * (m.get(a, b) + m.get(b, a))
}

/// Mean symmetric latency between two disjoint sets (inside one set when
/// they are the same slice: pairs of distinct CPUs).
fn mean_between(m: &LatencyMatrix, a: &[usize], b: &[usize]) -> f64 {
    let (mut sum, mut k) = (0.0, 0usize);
    for &i in a {
        for &j in b {
            if i != j {
                sum += sym(m, i, j);
                k += 1;
            }
        }
    }
    if k == 0 { 0.0 } else { sum / k as f64 }
}

/// Socket groups: the CPUs split in two (2-medoids on latency profiles) as long as a split
/// passes the test of the module docs; ids dense, in order of the lowest
/// CPU of each group.
pub fn sockets(m: &LatencyMatrix) -> Vec<usize> {
    let n = m.n();
    let min = (n / 8).max(2);
    let cache = l3(m);
    let mut done: Vec<Vec<usize>> = Vec::new();
    let mut todo = vec![(0..n).collect::<Vec<usize>>()];
    while let Some(set) = todo.pop() {
        match split(m, &set) {
            Some((a, b)) if a.len() >= min && b.len() >= min => {
                let inside = far_mean(m, &cache, &a).min(far_mean(m, &cache, &b));
                if mean_between(m, &a, &b) >= SPLIT_RATIO * inside {
                    todo.push(a);
                    todo.push(b);
                } else {
                    done.push(set);
                }
            }
            _ => done.push(set),
        }
    }
    dense(n, done)
}

/// Mean symmetric latency of the pairs of `set` in different L3 groups
/// (of all its pairs when it is one L3 group): what leaving a cache costs
/// inside `set`.
fn far_mean(m: &LatencyMatrix, cache: &[usize], set: &[usize]) -> f64 {
    let (mut sum, mut k) = (0.0, 0usize);
    for &i in set {
        for &j in set {
            if i != j && cache[i] != cache[j] {
                sum += sym(m, i, j);
                k += 1;
            }
        }
    }
    if k == 0 {
        mean_between(m, set, set)
    } else {
        sum / k as f64
    }
}

/// Group ids for a partition, numbered by each part's lowest CPU.
fn dense(n: usize, mut parts: Vec<Vec<usize>>) -> Vec<usize> {
    parts.sort_by_key(|p| p.iter().min().copied().unwrap_or(usize::MAX));
    let mut of = vec![0; n];
    for (g, p) in parts.iter().enumerate() {
        for &c in p {
            of[c] = g;
        }
    }
    of
}

/// 2-medoids on the latency profiles (rows) of `set`: the distance of two
/// CPUs is the mean absolute difference of their symmetric latencies to
/// every CPU of `set` other than themselves. Starts from the two CPUs
/// farthest apart and alternates assignment and medoid update (at most 20
/// rounds). `None` for fewer than 2 CPUs.
fn split(m: &LatencyMatrix, set: &[usize]) -> Option<(Vec<usize>, Vec<usize>)> {
    let k = set.len();
    if k < 2 {
        return None;
    }
    let mut d = vec![0.0f64; k * k];
    for x in 0..k {
        for y in x + 1..k {
            let (a, b) = (set[x], set[y]);
            let (mut s, mut c) = (0.0, 0usize);
            for &z in set {
                if z != a && z != b {
                    s += (sym(m, a, z) - sym(m, b, z)).abs();
                    c += 1;
                }
            }
            let v = if c == 0 { 0.0 } else { s / c as f64 };
            d[x * k + y] = v;
            d[y * k + x] = v;
        }
    }
    let far = (0..k * k)
        .max_by(|&i, &j| d[i].total_cmp(&d[j]).then(j.cmp(&i)))
        .unwrap_or(1);
    let mut med = [far / k, far % k];
    if med[0] == med[1] {
        return None;
    }
    let mut side = vec![0usize; k];
    for _ in 0..20 {
        for x in 0..k {
            side[x] = usize::from(d[x * k + med[1]] < d[x * k + med[0]]);
        }
        let mut new = med;
        for (s, slot) in new.iter_mut().enumerate() {
            let members: Vec<usize> = (0..k).filter(|&x| side[x] == s).collect();
            if let Some(&best) = members.iter().min_by(|&&x, &&y| {
                let cx: f64 = members.iter().map(|&z| d[x * k + z]).sum();
                let cy: f64 = members.iter().map(|&z| d[y * k + z]).sum();
                cx.total_cmp(&cy).then(x.cmp(&y))
            }) {
                *slot = best;
            }
        }
        if new == med {
            break;
        }
        med = new;
    }
    let a: Vec<usize> = (0..k).filter(|&x| side[x] == 0).map(|x| set[x]).collect();
    let b: Vec<usize> = (0..k).filter(|&x| side[x] == 1).map(|x| set[x]).collect();
    (!a.is_empty() && !b.is_empty()).then_some((a, b))
}

/// Whether the matrix shows no hierarchy to route by: one L3 group
/// ([`l3`]) and one socket ([`sockets`]), as on a mesh of cores.
pub fn flat(m: &LatencyMatrix) -> bool {
    l3(m).iter().all(|&g| g == 0) && sockets(m).iter().all(|&g| g == 0)
}

/// L3 groups (see the module docs); one group when no cut qualifies.
pub fn l3(m: &LatencyMatrix) -> Vec<usize> {
    let n = m.n();
    let mut v: Vec<f64> = (0..n)
        .flat_map(|a| (a + 1..n).map(move |b| (a, b)))
        .map(|(a, b)| sym(m, a, b))
        .filter(|x| *x > 0.0)
        .collect();
    v.sort_by(f64::total_cmp);
    v.dedup();
    let mut cuts: Vec<(f64, f64)> = v
        .windows(2)
        .map(|w| (w[1] / w[0], (w[0] * w[1]).sqrt()))
        .collect();
    cuts.sort_by(|x, y| y.0.total_cmp(&x.0));
    for &(_, cut) in cuts.iter().take(64) {
        let of = components(m, cut);
        let mut sizes = vec![0usize; n];
        for &g in &of {
            sizes[g] += 1;
        }
        sizes.retain(|&s| s > 0);
        if sizes.len() >= 2 && sizes.iter().all(|&s| s >= MIN_L3) {
            return of;
        }
    }
    vec![0; n]
}

/// Connected components of "symmetric latency below `cut`", dense ids.
fn components(m: &LatencyMatrix, cut: f64) -> Vec<usize> {
    let n = m.n();
    let mut parent: Vec<usize> = (0..n).collect();
    fn root(p: &mut [usize], mut x: usize) -> usize {
        while p[x] != x {
            p[x] = p[p[x]];
            x = p[x];
        }
        x
    }
    for a in 0..n {
        for b in a + 1..n {
            if sym(m, a, b) < cut {
                let (ra, rb) = (root(&mut parent, a), root(&mut parent, b));
                if ra != rb {
                    parent[ra.max(rb)] = ra.min(rb);
                }
            }
        }
    }
    let mut parts: std::collections::BTreeMap<usize, Vec<usize>> = Default::default();
    for c in 0..n {
        let r = root(&mut parent, c);
        parts.entry(r).or_default().push(c);
    }
    dense(n, parts.into_values().collect())
}
