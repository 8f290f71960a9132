//! A small, seeded, deterministic pseudo-random generator (SplitMix64).
//!
//! The harness needs per-thread jitter and workload keys, the simulator a
//! few uniform draws per event: no cryptographic quality, but the same
//! stream for the same seed on every platform and every version of this
//! crate. SplitMix64 (Steele, Lea and Flood, 2014; the seeder of `rand`'s
//! xoshiro family) passes BigCrush, is eight lines long and has no
//! dependency that could change its stream.

/// SplitMix64: a 64-bit state advanced by a Weyl sequence and mixed.
#[derive(Clone, Debug)]
pub struct SplitMix64 {
    state: u64,
}

impl SplitMix64 {
    /// A generator whose stream depends only on `seed`.
    pub fn new(seed: u64) -> Self {
        SplitMix64 { state: seed }
    }

    /// The generator of stream `index` (e.g. a thread) of run seed `seed`:
    /// the index is spread over the state by an odd multiplier and one
    /// output is skipped, so neighbouring indices do not start correlated.
    ///
    /// ```
    /// use ron_stats::SplitMix64;
    /// let a = SplitMix64::for_stream(7, 0).next_u64();
    /// let b = SplitMix64::for_stream(7, 1).next_u64();
    /// assert_ne!(a, b);
    /// assert_eq!(a, SplitMix64::for_stream(7, 0).next_u64());
    /// ```
    pub fn for_stream(seed: u64, index: u64) -> Self {
        let mut g = SplitMix64::new(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
        g.next_u64();
        g
    }

    /// The next 64 uniformly distributed bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.state = self.state.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.state;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform `f64` in `[0, 1)` (53 random bits).
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform `f64` in `[lo, hi)`.
    #[inline]
    pub fn uniform(&mut self, lo: f64, hi: f64) -> f64 {
        lo + (hi - lo) * self.next_f64()
    }

    /// `mean` jittered uniformly by +-`frac` (e.g. 0.15 for +-15%).
    #[inline]
    pub fn jitter(&mut self, mean: f64, frac: f64) -> f64 {
        self.uniform(mean * (1.0 - frac), mean * (1.0 + frac))
    }

    /// A uniform index in `0..n` (`0 < n <= 2^32`), by Lemire's
    /// multiply-shift on the high 32 bits (the bias is below `n / 2^32`).
    ///
    /// ```
    /// let mut g = ron_stats::SplitMix64::new(1);
    /// assert!((0..1000).all(|_| g.below(5) < 5));
    /// ```
    #[inline]
    pub fn below(&mut self, n: usize) -> usize {
        debug_assert!(n > 0 && n as u64 <= 1 << 32);
        (((self.next_u64() >> 32) * n as u64) >> 32) as usize
    }

    /// Shuffles `items` in place (Fisher-Yates).
    pub fn shuffle<T>(&mut self, items: &mut [T]) {
        for i in (1..items.len()).rev() {
            let j = self.below(i + 1);
            items.swap(i, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::SplitMix64;

    #[test]
    fn known_stream() {
        // The reference SplitMix64 outputs for seed 0.
        let mut g = SplitMix64::new(0);
        assert_eq!(g.next_u64(), 0xE220_A839_7B1D_CDAF);
        assert_eq!(g.next_u64(), 0x6E78_9E6A_A1B9_65F4);
    }

    #[test]
    fn shuffle_is_a_permutation() {
        let mut v: Vec<usize> = (0..50).collect();
        SplitMix64::new(3).shuffle(&mut v);
        let mut s = v.clone();
        s.sort_unstable();
        assert_eq!(s, (0..50).collect::<Vec<_>>());
        assert_ne!(v, s);
    }
}
