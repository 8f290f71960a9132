//! Fairness and distribution metrics over per-thread counts and samples.

/// Share of all acquisitions taken by the busier half of the threads:
/// 0.5 is perfectly fair, 1.0 means half the threads starved. With an odd
/// thread count the middle thread counts half (one thread: 0.5). 0.5 when
/// nothing was counted.
///
/// ```
/// use ron_stats::fairness_factor;
/// assert_eq!(fairness_factor(&[10, 10, 10, 10]), 0.5);
/// assert_eq!(fairness_factor(&[30, 10, 0, 0]), 1.0);
/// assert_eq!(fairness_factor(&[2, 1, 1]), 2.5 / 4.0);
/// assert_eq!(fairness_factor(&[]), 0.5);
/// ```
pub fn fairness_factor(counts: &[u64]) -> f64 {
    let total: u64 = counts.iter().sum();
    if total == 0 {
        return 0.5;
    }
    let mut sorted = counts.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let half = sorted.len() / 2;
    let mut top = sorted[..half].iter().sum::<u64>() as f64;
    if sorted.len() % 2 == 1 {
        top += 0.5 * sorted[half] as f64;
    }
    top / total as f64
}

/// Coefficient of variation of the counts: population standard deviation
/// divided by the mean (0 when there are none or the mean is 0).
///
/// ```
/// use ron_stats::cv;
/// assert_eq!(cv(&[5, 5, 5]), 0.0);
/// assert!((cv(&[0, 2]) - 1.0).abs() < 1e-12);
/// assert_eq!(cv(&[]), 0.0);
/// ```
pub fn cv(counts: &[u64]) -> f64 {
    if counts.is_empty() {
        return 0.0;
    }
    let n = counts.len() as f64;
    let mean = counts.iter().sum::<u64>() as f64 / n;
    if mean == 0.0 {
        return 0.0;
    }
    let var = counts
        .iter()
        .map(|&c| (c as f64 - mean).powi(2))
        .sum::<f64>()
        / n;
    var.sqrt() / mean
}

/// The median of `values` (the mean of the two middle ones for an even
/// count; 0 for none). Sorts `values` by [`f64::total_cmp`].
///
/// ```
/// use ron_stats::median;
/// assert_eq!(median(&mut [3.0, 1.0, 2.0]), 2.0);
/// assert_eq!(median(&mut [4.0, 1.0, 2.0, 3.0]), 2.5);
/// assert_eq!(median(&mut []), 0.0);
/// ```
pub fn median(values: &mut [f64]) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    values.sort_by(f64::total_cmp);
    let m = values.len() / 2;
    if values.len() % 2 == 1 {
        values[m]
    } else {
        (values[m - 1] + values[m]) / 2.0
    }
}

/// Nearest-rank percentile `q` in `[0, 1]` of `values` (reorders them);
/// 0 for none.
///
/// ```
/// use ron_stats::percentile;
/// let mut v: Vec<f64> = (1..=100).map(f64::from).collect();
/// assert_eq!(percentile(&mut v, 0.99), 99.0);
/// assert_eq!(percentile(&mut v, 0.0), 1.0);
/// assert_eq!(percentile(&mut v, 1.0), 100.0);
/// assert_eq!(percentile(&mut [], 0.5), 0.0);
/// ```
pub fn percentile(values: &mut [f64], q: f64) -> f64 {
    if values.is_empty() {
        return 0.0;
    }
    let rank = ((q * values.len() as f64).ceil() as usize).clamp(1, values.len()) - 1;
    let (_, v, _) = values.select_nth_unstable_by(rank, f64::total_cmp);
    *v
}

/// Spearman's rank correlation of two equally long series (ties get the
/// mean of their ranks; then Pearson's correlation of the ranks): 1 when
/// `b` orders the items as `a` does, -1 when it reverses them. `None` for
/// series of different lengths, fewer than two items, a series whose items
/// all tie, or a value that is not finite.
///
/// ```
/// use ron_stats::spearman;
/// assert_eq!(spearman(&[1.0, 2.0, 3.0], &[10.0, 20.0, 40.0]), Some(1.0));
/// assert_eq!(spearman(&[1.0, 2.0, 3.0], &[3.0, 2.0, 1.0]), Some(-1.0));
/// assert_eq!(spearman(&[1.0, 1.0], &[1.0, 2.0]), None);
/// ```
pub fn spearman(a: &[f64], b: &[f64]) -> Option<f64> {
    if a.len() != b.len() || a.len() < 2 || a.iter().chain(b).any(|x| !x.is_finite()) {
        return None;
    }
    let (ra, rb) = (ranks(a), ranks(b));
    let n = a.len() as f64;
    let mean = (n + 1.0) / 2.0;
    let (mut cov, mut va, mut vb) = (0.0, 0.0, 0.0);
    for (x, y) in ra.iter().zip(&rb) {
        cov += (x - mean) * (y - mean);
        va += (x - mean).powi(2);
        vb += (y - mean).powi(2);
    }
    if va == 0.0 || vb == 0.0 {
        return None;
    }
    Some(cov / (va * vb).sqrt())
}

/// The rank (1-based) of each value of `v`, ties given the mean of their ranks.
fn ranks(v: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..v.len()).collect();
    order.sort_by(|&i, &j| v[i].total_cmp(&v[j]));
    let mut r = vec![0.0; v.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && v[order[j + 1]] == v[order[i]] {
            j += 1;
        }
        // Positions i..=j tie: each gets the mean of ranks i+1 ..= j+1.
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &k in &order[i..=j] {
            r[k] = rank;
        }
        i = j + 1;
    }
    r
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_averages_ties_and_ignores_scale() {
        // Ranks of a: 1, 2.5, 2.5, 4; of b: 1, 2, 3, 4.
        let r = spearman(&[1.0, 5.0, 5.0, 9.0], &[0.1, 0.2, 0.3, 100.0]).unwrap();
        let expect = 4.5 / (4.5f64 * 5.0).sqrt();
        assert!((r - expect).abs() < 1e-12, "{r} vs {expect}");
        assert_eq!(spearman(&[1.0, 2.0], &[1.0]), None);
        assert_eq!(spearman(&[1.0, f64::NAN], &[1.0, 2.0]), None);
        assert_eq!(ranks(&[3.0, 1.0, 3.0]), vec![2.5, 1.0, 2.5]);
    }

    #[test]
    fn fairness_factor_is_order_free_and_bounded() {
        let a = fairness_factor(&[1, 9, 4, 0, 7]);
        let b = fairness_factor(&[7, 0, 4, 9, 1]);
        assert_eq!(a, b);
        assert!((0.5..=1.0).contains(&a));
        assert_eq!(fairness_factor(&[7]), 0.5);
        assert_eq!(fairness_factor(&[0, 0, 8, 8]), 1.0);
    }

    #[test]
    fn cv_of_two_unequal_counts() {
        // mean 2, deviations 1: population sd 1.
        assert!((cv(&[1, 3]) - 0.5).abs() < 1e-12);
        assert_eq!(cv(&[0, 0]), 0.0);
    }
}
