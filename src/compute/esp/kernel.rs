//! Splitting kernels, the cubic nodal basis and small 3x3 geometry helpers of the electrostatics
//! methods.
//!
//! Owns the C2 Taylor softening `gamma` of Hardy, Stone and Schulten (Parallel Computing 35:164,
//! 2009), the smoothed kernel `g_a(r) = gamma(r/a)/a`, the short-range kernel `1/r - g_a(r)`, the
//! C1 cubic interpolating basis `phi` with its two-scale coefficients, and `erf`. Used by the MSM
//! stages in [`super::msm`] and the short-range sum in [`super::bins`]. All lengths in bohr.

/// `gamma(rho)`: `15/8 - 5/4 rho^2 + 3/8 rho^4` for `rho < 1`, `1/rho` beyond (C2 at `rho = 1`).
#[inline]
pub fn gamma(rho: f64) -> f64 {
    if rho < 1.0 {
        let r2 = rho * rho;
        1.875 + r2 * (-1.25 + 0.375 * r2)
    } else {
        1.0 / rho
    }
}

/// Smoothed Coulomb kernel `g_a(r) = gamma(r/a)/a` (bohr^-1); equals `1/r` for `r >= a`.
#[inline]
pub fn smooth(r_bohr: f64, a_bohr: f64) -> f64 {
    gamma(r_bohr / a_bohr) / a_bohr
}

/// The nodal C1 cubic basis of the paper: `(1-|t|)(1+|t|-3/2 t^2)` for `|t| <= 1`,
/// `-1/2 (|t|-1)(2-|t|)^2` for `1 <= |t| <= 2`, zero beyond. `phi(0) = 1`, `phi(n) = 0` otherwise.
#[inline]
pub fn phi(t: f64) -> f64 {
    let t = t.abs();
    if t <= 1.0 {
        (1.0 - t) * (1.0 + t - 1.5 * t * t)
    } else if t < 2.0 {
        let u = 2.0 - t;
        -0.5 * (t - 1.0) * u * u
    } else {
        0.0
    }
}

/// Weights `phi(t - m)` for the four lattice points `m = floor(t) - 1 .. floor(t) + 2`, and that
/// first index.
#[inline]
pub fn phi_weights(t: f64) -> (i64, [f64; 4]) {
    let f = t.floor();
    let u = t - f;
    let w = [phi(u + 1.0), phi(u), phi(u - 1.0), phi(u - 2.0)];
    (f as i64 - 1, w)
}

/// Two-scale relation `phi(t) = sum_d J[d+3] phi(2t - d)`, `d = -3..=3` (`J[d] = phi(d/2)`): the 1-D
/// restriction stencil (coarse point n gathers fine points `2n + d`) and, transposed, prolongation.
pub const TWO_SCALE: [f64; 7] = [-0.0625, 0.0, 0.5625, 1.0, 0.5625, 0.0, -0.0625];

/// The error function to ~1e-15 absolute: `erf(x) = 2x/sqrt(pi) e^{-x^2} sum_n (2x^2)^n / (2n+1)!!`
/// (all terms positive, no cancellation), 1 beyond |x| = 6.
pub fn erf(x: f64) -> f64 {
    let ax = x.abs();
    if ax >= 6.0 {
        return x.signum();
    }
    let x2 = ax * ax;
    let mut term = 1.0;
    let mut sum = 1.0;
    let mut n = 0.0;
    while term > 1e-17 * sum && n < 400.0 {
        n += 1.0;
        term *= 2.0 * x2 / (2.0 * n + 1.0);
        sum += term;
    }
    let v = 2.0 * ax / std::f64::consts::PI.sqrt() * (-x2).exp() * sum;
    v.min(1.0).copysign(x)
}

pub type Mat3 = [[f64; 3]; 3];

pub fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

pub fn norm(a: [f64; 3]) -> f64 {
    dot(a, a).sqrt()
}

pub fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

/// Determinant of the matrix with rows `m`.
pub fn det(m: &Mat3) -> f64 {
    dot(m[0], cross(m[1], m[2]))
}

/// Reciprocal vectors of the rows `v` (`w_i . v_j = delta_ij`), or `None` for a singular matrix.
/// Lattice coordinates of a displacement `x = sum_k t_k v_k` are `t_k = w_k . x`.
pub fn reciprocal(v: &Mat3) -> Option<Mat3> {
    let d = det(v);
    if !d.is_finite() || d.abs() < 1e-300 {
        return None;
    }
    let w0 = cross(v[1], v[2]).map(|c| c / d);
    let w1 = cross(v[2], v[0]).map(|c| c / d);
    let w2 = cross(v[0], v[1]).map(|c| c / d);
    Some([w0, w1, w2])
}

/// `sum_k t_k v_k`.
#[inline]
pub fn combine(v: &Mat3, t: [f64; 3]) -> [f64; 3] {
    std::array::from_fn(|i| t[0] * v[0][i] + t[1] * v[1][i] + t[2] * v[2][i])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn phi_is_nodal_and_partition_of_unity() {
        assert_eq!(phi(0.0), 1.0);
        for n in [1.0, 2.0, 3.0] {
            assert_eq!(phi(n), 0.0);
        }
        for t in [0.0, 0.1, 0.37, 0.5, 0.99] {
            let (_, w) = phi_weights(t + 3.0);
            assert!((w.iter().sum::<f64>() - 1.0).abs() < 1e-14);
            // Cubic basis reproduces linear functions.
            let (m0, w) = phi_weights(t + 3.0);
            let lin: f64 = w.iter().enumerate().map(|(i, wi)| wi * (m0 + i as i64) as f64).sum();
            assert!((lin - (t + 3.0)).abs() < 1e-12);
        }
        for (d, j) in TWO_SCALE.iter().enumerate() {
            assert!((phi((d as f64 - 3.0) / 2.0) - j).abs() < 1e-15);
        }
    }

    #[test]
    fn gamma_is_c2_at_one() {
        let h = 1e-6;
        assert!((gamma(1.0 - h) - gamma(1.0 + h)).abs() < 1e-5);
        let d = |x: f64| (gamma(x + h) - gamma(x - h)) / (2.0 * h);
        assert!((d(1.0 - 1e-3) - d(1.0 + 1e-3)).abs() < 1e-2);
    }

    #[test]
    fn erf_values() {
        assert!((erf(0.5) - 0.520_499_877_813_046_5).abs() < 1e-14);
        assert!((erf(2.0) - 0.995_322_265_018_952_7).abs() < 1e-14);
        assert!((1.0 - erf(4.0) - 1.541_725_790_028_002e-8).abs() < 1e-15);
        assert!((erf(-1.0) + 0.842_700_792_949_714_9).abs() < 1e-14);
    }
}
