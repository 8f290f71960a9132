//! Thread placement: round-robin along the route, or unpinned.

/// How benchmark threads are placed.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Pinning {
    /// Thread `i` is pinned to CPU `order[i % n]` of [`cpu_order`].
    Route,
    /// The scheduler places the threads.
    None,
}

/// The CPUs to pin to, in order: the installed `ron_core::route` when there
/// is one (restricted to CPUs this process may run on), else the CPUs of
/// the process's affinity mask in id order. Never empty (falls back to
/// `[0]`).
pub fn cpu_order() -> Vec<usize> {
    let mut allowed: Vec<usize> = core_affinity::get_core_ids()
        .map(|v| v.into_iter().map(|c| c.id).collect())
        .unwrap_or_default();
    allowed.sort_unstable();
    let mut route = vec![0usize; ron_core::route::len()];
    let n = ron_core::route::copy_to(&mut route);
    route.truncate(n);
    let order: Vec<usize> = if allowed.is_empty() {
        route
    } else if route.is_empty() {
        allowed
    } else {
        route
            .into_iter()
            .filter(|c| allowed.binary_search(c).is_ok())
            .collect()
    };
    if order.is_empty() { vec![0] } else { order }
}

/// Pins the calling thread to `cpu`; returns whether the OS accepted it.
pub fn pin_current(cpu: usize) -> bool {
    core_affinity::set_for_current(core_affinity::CoreId { id: cpu })
}

/// The CPU of thread `index` under `pinning`, given [`cpu_order`]'s result.
pub fn cpu_for(pinning: Pinning, order: &[usize], index: usize) -> Option<usize> {
    match pinning {
        Pinning::Route if !order.is_empty() => Some(order[index % order.len()]),
        _ => None,
    }
}
