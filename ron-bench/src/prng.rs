//! A tiny seeded generator (SplitMix64) for per-thread jitter and workload
//! keys: the same stream for the same seed and thread on every platform.

/// SplitMix64 state.
#[derive(Clone, Debug)]
pub struct Prng(u64);

impl Prng {
    /// The generator of thread `index` for run seed `seed`.
    pub fn new(seed: u64, index: u64) -> Self {
        let mut p = Prng(seed ^ index.wrapping_mul(0xD1B5_4A32_D192_ED03));
        p.next_u64();
        p
    }

    /// The next 64 uniform bits.
    #[inline]
    pub fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A uniform `f64` in `[0, 1)`.
    #[inline]
    pub fn next_f64(&mut self) -> f64 {
        (self.next_u64() >> 11) as f64 * (1.0 / (1u64 << 53) as f64)
    }

    /// A uniform integer in `0..n` (`n > 0`; multiply-shift, tiny bias is
    /// irrelevant here).
    #[inline]
    pub fn below(&mut self, n: u64) -> u64 {
        ((self.next_u64() as u128 * n as u128) >> 64) as u64
    }

    /// `mean` jittered uniformly by +-`frac` (e.g. 0.15 for +-15%).
    #[inline]
    pub fn jitter(&mut self, mean: f64, frac: f64) -> f64 {
        mean * (1.0 - frac + 2.0 * frac * self.next_f64())
    }
}
