//! A small seeded random sequence (xorshift64*) for the benchmarks' fixed
//! "random" orders: the same numbers every run, so two runs (or two
//! builds) see the same permutation. Not for anything that must be hard
//! to guess.

/// xorshift64*; the state must not be 0.
pub(crate) struct Rng(u64);

impl Rng {
    /// A sequence from `seed` (0 is replaced by a fixed odd constant).
    pub(crate) fn new(seed: u64) -> Rng {
        Rng(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    pub(crate) fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number below `n` (n > 0; the bias of the modulo is negligible
    /// for the sizes the benchmarks use).
    pub(crate) fn below(&mut self, n: usize) -> usize {
        (self.next() % n as u64) as usize
    }

    /// `items` in a random order (Fisher-Yates).
    pub(crate) fn shuffle<T>(&mut self, items: &mut [T]) {
        for k in (1..items.len()).rev() {
            let j = self.below(k + 1);
            items.swap(k, j);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fixed_and_a_permutation() {
        let mut a: Vec<u32> = (0..100).collect();
        let mut b = a.clone();
        Rng::new(7).shuffle(&mut a);
        Rng::new(7).shuffle(&mut b);
        assert_eq!(a, b);
        assert_ne!(a, (0..100).collect::<Vec<_>>());
        a.sort_unstable();
        assert_eq!(a, (0..100).collect::<Vec<_>>());
        let mut r = Rng::new(0);
        assert!((0..1000).all(|_| r.below(10) < 10));
    }
}
