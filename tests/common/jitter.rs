//! Shared by the DSSP test files: random moves of every coordinate (splitmix64).

/// Moves every coordinate by up to +-amplitude/2 (uniform), from `seed`.
pub fn jitter(positions: &mut [[f32; 3]], amplitude: f32, seed: u64) {
    let mut state = seed;
    for x in positions.iter_mut().flatten() {
        state = state.wrapping_add(0x9e37_79b9_7f4a_7c15);
        let mut z = state;
        z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
        z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
        z ^= z >> 31;
        *x += amplitude * ((z >> 40) as f32 / (1u64 << 24) as f32 - 0.5);
    }
}

/// A seed from the clock (fresh every run), or `fallback`.
pub fn fresh_seed(fallback: u64) -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(fallback, |d| d.as_nanos() as u64)
}
