//! CPU groups for the locality-aware policies (CNA, cohort), derived from
//! the matrix itself.
//!
//! Rule ([`cluster`]): two CPUs are *near* when the slower of their two
//! directions costs at most [`NEAR_FRACTION`] (3/4) of the median pair cost;
//! a group is a connected component of the "near" graph. On chiplet and
//! two-socket parts the median pair crosses the expensive boundary (CCD or
//! socket), so the components are the CCXs/CCDs or the sockets; on uniform
//! meshes few pairs are that far below the median, so groups stay small and
//! CNA/cohort behave close to FIFO, which is what those locks do there.
//! Components can chain on a mesh (a near b, b near c, a far from c): the
//! rule does not split them. The groups are computed once per matrix; the
//! table header of `ron simulate` prints their sizes.

use crate::{Costs, CostsExt};

/// Fraction of the median pair cost under which two CPUs count as near.
pub const NEAR_FRACTION: f64 = 0.75;

/// Group id of every CPU (`result[cpu]`), ids numbered `0..` in the order of
/// each group's smallest CPU, by the rule of the module docs.
///
/// ```
/// use ron_sim::{Costs, groups};
/// // two sockets of two CPUs: 10 ns inside, 100 ns across
/// let c = Costs::from_fn(4, |i, j| if i == j { 0.0 } else if i / 2 == j / 2 { 10.0 } else { 100.0 }).unwrap();
/// assert_eq!(groups::cluster(&c), vec![0, 0, 1, 1]);
/// ```
pub fn cluster(costs: &Costs) -> Vec<usize> {
    let n = costs.n();
    let threshold = NEAR_FRACTION * costs.median_pair();
    let mut parent: Vec<usize> = (0..n).collect();
    fn find(parent: &mut [usize], mut x: usize) -> usize {
        while parent[x] != x {
            parent[x] = parent[parent[x]];
            x = parent[x];
        }
        x
    }
    for i in 0..n {
        for j in i + 1..n {
            if costs.get(i, j).max(costs.get(j, i)) <= threshold {
                let (a, b) = (find(&mut parent, i), find(&mut parent, j));
                if a != b {
                    parent[a.max(b)] = a.min(b);
                }
            }
        }
    }
    renumber(&(0..n).map(|i| find(&mut parent, i)).collect::<Vec<_>>())
}

/// Groups of `size` consecutive CPUs along `route` (the last one may be
/// smaller): FSL's tunable group size, where each group is an arc of the
/// tour. `size` is clamped to at least 1.
///
/// ```
/// use ron_sim::groups;
/// assert_eq!(groups::along_route(&[2, 0, 3, 1], 2), vec![0, 1, 0, 1]);
/// ```
pub fn along_route(route: &[usize], size: usize) -> Vec<usize> {
    let size = size.max(1);
    let mut g = vec![0; route.len()];
    for (pos, &cpu) in route.iter().enumerate() {
        if let Some(slot) = g.get_mut(cpu) {
            *slot = pos / size;
        }
    }
    g
}

/// Number of distinct groups in a group vector.
pub fn count(groups: &[usize]) -> usize {
    groups.iter().max().map_or(0, |m| m + 1)
}

/// Renumbers labels `0..` in order of first appearance.
fn renumber(labels: &[usize]) -> Vec<usize> {
    let mut map = std::collections::HashMap::new();
    labels
        .iter()
        .map(|l| {
            let next = map.len();
            *map.entry(*l).or_insert(next)
        })
        .collect()
}
