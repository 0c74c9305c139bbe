//! SIMD helpers of the CPU orbital kernel: a 4-lane f64 vector and a vectorised `2^x`.
//!
//! Used by [`super::orbital`]. Gaussians are evaluated as `exp2(-alpha * log2(e) * r^2)` with the
//! exponent pre-scaled once per basis, so the kernel needs only `2^x` for `x <= 0`.
//!
//! [`F4`] is a plain `[f64; 4]` with lane-wise operations that LLVM turns into vector instructions
//! of whatever the enclosing function is compiled for: the kernels are compiled twice, once for
//! baseline x86-64 (two SSE2 halves, like `wide::f64x4` there) and once inside
//! `#[target_feature(enable = "avx2,fma")]` functions chosen at run time (one 256-bit register,
//! fused multiply-add). `wide`'s types pick their instructions when the crate is compiled, so on the
//! default target they cannot use AVX2 even where the CPU has it. `FMA` (a const parameter) says whether
//! [`F4::mul_add`] may use a fused multiply-add: without the `fma` target feature it would call
//! the slow software `fma`.

use std::ops::{Add, AddAssign, Div, Mul, Sub};

/// Four f64 lanes.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(32))]
pub struct F4(pub [f64; 4]);

impl F4 {
    pub const ZERO: F4 = F4([0.0; 4]);
    pub const ONE: F4 = F4([1.0; 4]);

    #[inline(always)]
    pub fn splat(x: f64) -> F4 {
        F4([x; 4])
    }

    #[inline(always)]
    pub fn to_array(self) -> [f64; 4] {
        self.0
    }

    /// `self * m + a`, fused when `FMA`.
    #[inline(always)]
    pub fn mul_add<const FMA: bool>(self, m: F4, a: F4) -> F4 {
        let (x, y, z) = (self.0, m.0, a.0);
        if FMA {
            F4([
                x[0].mul_add(y[0], z[0]),
                x[1].mul_add(y[1], z[1]),
                x[2].mul_add(y[2], z[2]),
                x[3].mul_add(y[3], z[3]),
            ])
        } else {
            self * m + a
        }
    }

    #[inline(always)]
    pub fn max(self, o: F4) -> F4 {
        let (x, y) = (self.0, o.0);
        F4([x[0].max(y[0]), x[1].max(y[1]), x[2].max(y[2]), x[3].max(y[3])])
    }
}

impl From<[f64; 4]> for F4 {
    #[inline(always)]
    fn from(a: [f64; 4]) -> F4 {
        F4(a)
    }
}

macro_rules! lanewise {
    ($tr:ident, $f:ident, $op:tt) => {
        impl $tr for F4 {
            type Output = F4;
            #[inline(always)]
            fn $f(self, o: F4) -> F4 {
                let (x, y) = (self.0, o.0);
                F4([x[0] $op y[0], x[1] $op y[1], x[2] $op y[2], x[3] $op y[3]])
            }
        }
    };
}
lanewise!(Add, add, +);
lanewise!(Sub, sub, -);
lanewise!(Mul, mul, *);

impl AddAssign for F4 {
    #[inline(always)]
    fn add_assign(&mut self, o: F4) {
        *self = *self + o;
    }
}

/// Eight f32 lanes (the potential kernel), compiled like [`F4`].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
#[repr(C, align(32))]
pub struct F8(pub [f32; 8]);

impl F8 {
    pub const ZERO: F8 = F8([0.0; 8]);

    #[inline(always)]
    pub fn splat(x: f32) -> F8 {
        F8([x; 8])
    }

    #[inline(always)]
    #[allow(clippy::needless_range_loop)] // indexed lanes: see `lanewise8`
    pub fn max(self, o: F8) -> F8 {
        let mut x = self.0;
        for i in 0..8 {
            x[i] = x[i].max(o.0[i]);
        }
        F8(x)
    }

    #[inline(always)]
    pub fn sqrt(self) -> F8 {
        let mut x = self.0;
        for a in &mut x {
            *a = a.sqrt();
        }
        F8(x)
    }
}

macro_rules! lanewise8 {
    ($tr:ident, $f:ident, $op:tt) => {
        impl $tr for F8 {
            type Output = F8;
            #[inline(always)]
            #[allow(clippy::needless_range_loop)]
            fn $f(self, o: F8) -> F8 {
                // A loop over the lanes: one 256-bit instruction in an optimised build with AVX2
                // (as `std::array::from_fn`), and no closure per lane in an unoptimised one (the
                // tests' build, where `from_fn` cost ten times the arithmetic). Lanes written out
                // as for `F4` would be split into two 128-bit halves.
                let mut x = self.0;
                for i in 0..8 {
                    x[i] $op o.0[i];
                }
                F8(x)
            }
        }
    };
}
lanewise8!(Add, add, +=);
lanewise8!(Sub, sub, -=);
lanewise8!(Mul, mul, *=);
lanewise8!(Div, div, /=);

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

/// Arguments are clamped to this: 2^-300 (5e-91) is far below anything that reaches an f32, and a
/// product of three such factors (separable tiles) is still a normal number, so the kernels never
/// produce slow subnormals.
const EXP2_MIN_ARG: f64 = -300.0;

/// `2^x` for finite `x <= 0`, relative error below 3e-13 (degree-11 Taylor polynomial of `2^f` on
/// `|f| <= 1/2`, exact power-of-two scaling). Arguments below -300 return about `2^-300`;
/// positive arguments are not supported.
#[inline(always)]
pub fn exp2_neg<const FMA: bool>(x: F4) -> F4 {
    // Round to nearest by the 1.5 * 2^52 trick (exact for |x| < 2^51).
    const ROUND: f64 = 6_755_399_441_055_744.0;
    let x = x.max(F4::splat(EXP2_MIN_ARG));
    let n = (x + F4::splat(ROUND)) - F4::splat(ROUND);
    let f = x - n;
    let c = &EXP2_COEFFS;
    let mut p = F4::splat(c[11]);
    for k in (0..11).rev() {
        p = p.mul_add::<FMA>(f, F4::splat(c[k]));
    }
    // 2^n: adding 2^52 + 1023 puts n + 1023 in the low mantissa bits; shift it into the exponent.
    let biased = (n + F4::splat(1023.0 + 4_503_599_627_370_496.0)).0;
    let scale = F4([
        f64::from_bits(biased[0].to_bits() << 52),
        f64::from_bits(biased[1].to_bits() << 52),
        f64::from_bits(biased[2].to_bits() << 52),
        f64::from_bits(biased[3].to_bits() << 52),
    ]);
    p * scale
}

/// Scalar twin of [`exp2_neg`] for tests.
#[inline]
pub fn exp2_neg_scalar(x: f64) -> f64 {
    exp2_neg::<false>(F4::splat(x)).0[0]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn exp2_matches_std() {
        let mut worst: f64 = 0.0;
        let mut x = 0.0;
        while x > -300.0 {
            let got = exp2_neg_scalar(x);
            let fused = exp2_neg::<true>(F4::splat(x)).0[0];
            let want = x.exp2();
            worst = worst
                .max(((got - want) / want).abs())
                .max(((fused - want) / want).abs());
            x -= 0.0137;
        }
        assert!(worst < 3e-13, "worst relative error {worst}");
        assert_eq!(exp2_neg_scalar(0.0), 1.0);
        assert!(exp2_neg_scalar(-5000.0) < 1e-90 && exp2_neg_scalar(-5000.0) > 0.0);
    }
}
