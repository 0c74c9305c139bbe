//! SIMD helpers of the CPU engine: a vectorised `2^x` for the Gaussian factors of the orbital kernel.
//!
//! Used by [`super::orbital`]. Gaussians are evaluated as `exp2(-alpha * log2(e) * r^2)` with the
//! exponent pre-scaled once per basis, so the kernel needs only `2^x` for `x <= 0`.

use wide::{f64x4, u64x4};

/// `ln(2)^k / k!` for k = 0..=11: Taylor coefficients of `2^f = exp(f ln 2)`.
const EXP2_COEFFS: [f64; 12] = [
    1.0,
    std::f64::consts::LN_2,
    0.240_226_506_959_100_7,
    0.055_504_108_664_821_58,
    0.009_618_129_107_628_477,
    0.001_333_355_814_642_844_3,
    0.000_154_035_303_933_816_1,
    1.525_273_380_405_984e-5,
    1.321_548_679_014_431e-6,
    1.017_808_600_923_969_9e-7,
    7.054_911_620_801_123e-9,
    4.445_538_271_870_811e-10,
];

/// Arguments below this give 0 (2^-1020 is ~1e-307, far below anything that reaches an f32).
const EXP2_MIN_ARG: f64 = -1020.0;

/// `2^x` for finite `x <= 0`, relative error below 3e-13 (degree-11 Taylor polynomial of `2^f` on
/// `|f| <= 1/2`, exact power-of-two scaling). Arguments below -1020 return `2^-1020`-ish tiny values
/// rounded to zero by the caller's products; positive arguments are not supported.
#[inline(always)]
pub fn exp2_neg(x: f64x4) -> f64x4 {
    let x = x.max(f64x4::splat(EXP2_MIN_ARG));
    let n = x.round();
    let f = x - n;
    let c = &EXP2_COEFFS;
    let mut p = f64x4::splat(c[11]);
    for k in (0..11).rev() {
        p = p.mul_add(f, f64x4::splat(c[k]));
    }
    // 2^n: put n + 1023 into the exponent field (the 2^52 shift moves the integer into the low bits).
    let biased = n + f64x4::splat(1023.0 + 4_503_599_627_370_496.0);
    let bits: u64x4 = bytemuck::cast(biased);
    let scale: f64x4 = bytemuck::cast(bits << 52);
    p * scale
}

/// Scalar twin of [`exp2_neg`] for bounds and tests.
#[inline]
pub fn exp2_neg_scalar(x: f64) -> f64 {
    exp2_neg(f64x4::splat(x)).to_array()[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp2_matches_std() {
        let mut worst: f64 = 0.0;
        let mut x = 0.0;
        while x > -1000.0 {
            let got = exp2_neg_scalar(x);
            let want = x.exp2();
            worst = worst.max(((got - want) / want).abs());
            x -= 0.0137;
        }
        assert!(worst < 3e-13, "worst relative error {worst}");
        assert_eq!(exp2_neg_scalar(0.0), 1.0);
        assert!(exp2_neg_scalar(-5000.0) < 1e-300);
    }
}
