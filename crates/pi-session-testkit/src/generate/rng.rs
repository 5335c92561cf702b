//! SplitMix64: a tiny, fast, well-mixed PRNG that is defined here, so the generator's output
//! depends on no other crate's version. Every draw is integer arithmetic (no `ln`/`exp`
//! from the platform's libm), so the same seed gives the same bytes on every machine.

/// The generator state (Steele, Lea and Flood, "Fast splittable pseudorandom number
/// generators", 2014).
#[derive(Debug, Clone)]
pub(crate) struct Rng(u64);

impl Rng {
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(seed)
    }

    pub(crate) fn next_u64(&mut self) -> u64 {
        self.0 = self.0.wrapping_add(0x9E37_79B9_7F4A_7C15);
        let mut z = self.0;
        z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
        z ^ (z >> 31)
    }

    /// A number in `0..n` (`n > 0`; multiply-shift, bias below 2^-32 for our `n`).
    pub(crate) fn below(&mut self, n: u64) -> u64 {
        ((u128::from(self.next_u64()) * u128::from(n)) >> 64) as u64
    }

    /// A number in `lo..hi` (`lo < hi`).
    pub(crate) fn range(&mut self, lo: u64, hi: u64) -> u64 {
        lo + self.below(hi - lo)
    }

    /// `usize` in `lo..hi`.
    pub(crate) fn urange(&mut self, lo: usize, hi: usize) -> usize {
        self.range(lo as u64, hi as u64) as usize
    }

    /// True with probability `per_mille / 1000`.
    pub(crate) fn chance(&mut self, per_mille: u64) -> bool {
        self.below(1000) < per_mille
    }

    pub(crate) fn pick<'a, T>(&mut self, items: &'a [T]) -> &'a T {
        &items[self.below(items.len() as u64) as usize]
    }

    /// [`Rng::pick`] for string tables (spares callers a deref that inference needs).
    pub(crate) fn pick_str(&mut self, items: &[&'static str]) -> &'static str {
        items[self.below(items.len() as u64) as usize]
    }

    /// A draw from a piecewise-uniform distribution: `(weight, lo, hi)` buckets, uniform in
    /// `lo..hi` inside the chosen bucket. Heavy tails without floating point.
    pub(crate) fn bucket(&mut self, table: &[(u64, u64, u64)]) -> u64 {
        let total: u64 = table.iter().map(|b| b.0).sum();
        let mut x = self.below(total);
        for &(w, lo, hi) in table {
            if x < w {
                return self.range(lo, hi);
            }
            x -= w;
        }
        unreachable!("x < total")
    }

    /// Picks from `(weight, item)` pairs.
    pub(crate) fn weighted<'a, T>(&mut self, table: &'a [(u64, T)]) -> &'a T {
        let total: u64 = table.iter().map(|b| b.0).sum();
        let mut x = self.below(total);
        for (w, item) in table {
            if x < *w {
                return item;
            }
            x -= w;
        }
        unreachable!("x < total")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn splitmix64_reference_values() {
        // First outputs for seed 1234567 of the reference C implementation (Vigna).
        let mut r = Rng::new(1_234_567);
        assert_eq!(r.next_u64(), 6_457_827_717_110_365_317);
        assert_eq!(r.next_u64(), 3_203_168_211_198_807_973);
        assert_eq!(r.next_u64(), 9_817_491_932_198_370_423);
    }

    #[test]
    fn ranges_stay_in_bounds() {
        let mut r = Rng::new(7);
        for _ in 0..10_000 {
            let x = r.range(3, 9);
            assert!((3..9).contains(&x));
            let b = r.bucket(&[(1, 0, 1), (5, 10, 20)]);
            assert!(b == 0 || (10..20).contains(&b));
        }
    }
}
