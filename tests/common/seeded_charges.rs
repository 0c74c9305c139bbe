//! Fresh random point charges for the tests of the potential engines: a seed from
//! `ORBITFIELD_TEST_SEED` or the clock (printed, so a failure can be replayed), a 64-bit LCG, and
//! charges uniform in a box with values uniform in [-1, 1) e.

use orbitfield::compute::PointCharges;

/// A 64-bit LCG: uniform in [0, 1).
pub fn lcg(state: &mut u64) -> f64 {
    *state = state
        .wrapping_mul(6364136223846793005)
        .wrapping_add(1442695040888963407);
    (*state >> 11) as f64 / (1u64 << 53) as f64
}

/// The run's seed (`ORBITFIELD_TEST_SEED`, else the clock), printed.
pub fn seed() -> u64 {
    let s = std::env::var("ORBITFIELD_TEST_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map(|d| d.as_nanos() as u64)
                .unwrap_or(3)
        });
    println!("seed {s}");
    s
}

/// `n` charges uniform in the box `lo .. lo + ext` (bohr).
pub fn random_charges(state: &mut u64, n: usize, lo: [f64; 3], ext: [f64; 3]) -> PointCharges {
    let mut q = PointCharges::default();
    for _ in 0..n {
        let p = std::array::from_fn(|k| lo[k] + ext[k] * lcg(state));
        q.positions_bohr.push(p);
        q.charges_e.push(2.0 * lcg(state) - 1.0);
    }
    q
}
