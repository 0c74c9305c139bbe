//! A random number generator for the analyses' unit tests: xorshift64*, seeded from the clock and
//! the seed printed, so that a failure can be replayed.

pub(crate) struct Rng(u64);

impl Rng {
    /// A generator seeded from the clock (the seed is printed).
    pub(crate) fn fresh() -> Rng {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1)
            | 1;
        eprintln!("seed {seed}");
        Rng(seed)
    }

    /// Uniform in [0, 1).
    pub(crate) fn next(&mut self) -> f64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        (self.0.wrapping_mul(0x2545_f491_4f6c_dd1d) >> 11) as f64 / (1u64 << 53) as f64
    }

    /// A direction uniform on the unit sphere.
    pub(crate) fn unit(&mut self) -> [f64; 3] {
        loop {
            let v = [0, 1, 2].map(|_| 2.0 * self.next() - 1.0);
            let n = v.iter().map(|x| x * x).sum::<f64>().sqrt();
            if n > 0.1 && n <= 1.0 {
                return v.map(|x| x / n);
            }
        }
    }
}
