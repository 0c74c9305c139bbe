//! Gaussian basis sets: contracted shells, Cartesian and real solid-harmonic (pure) functions.
//!
//! Owns the basis-function conventions every reader converts to and every evaluator (the exact
//! point evaluator in `compute::cpu::points`, the CPU lattice engine, the CUDA kernel generator)
//! assumes. Readers in `io` build [`BasisSet`]s; `compute` reads them through
//! [`Shell::radial_coefficients`] and [`angular_terms`].
//!
//! Internal conventions:
//! - Centres in bohr; exponents in bohr^-2.
//! - `coefficients` multiply *normalised* primitives, and the contracted radial function is
//!   normalised to one (readers renormalise after reading; [`Shell::radial_coefficients`]
//!   renormalises again, so a shell built by hand with raw coefficients evaluates correctly too).
//! - The radial factor of a shell is normalised *as the x^l function*: `N(alpha) = (2 alpha / pi)^(3/4)
//!   (4 alpha)^(l/2) / sqrt((2l-1)!!)`. The per-function factors that make every Cartesian function
//!   (xy as well as xx) and every solid harmonic individually normalised live in [`angular_terms`].
//!   They are exponent-independent, so one radial factor serves all functions of a shell.
//! - Cartesian functions within a shell are in Molden order (d: xx yy zz xy xz yz; f: xxx yyy zzz
//!   xyy xxy xxz xzz yzz yyz xyz; g: xxxx yyyy zzzz xxxy xxxz yyyx yyyz zzzx zzzy xxyy xxzz yyzz
//!   xxyz yyxz zzxy; h and up: descending powers of x, then of y), and every Cartesian function is
//!   individually normalised.
//! - Pure functions are real solid harmonics in the order m = 0, +1, -1, +2, -2, ... (Molden,
//!   Gaussian), each normalised, with the usual signs: m = +1 ~ x, m = -1 ~ y, m = +2 ~ x^2 - y^2,
//!   m = -2 ~ +xy (Helgaker, Jorgensen & Olsen, eq. 6.4.47 phases).
//! - Pure p shells (rare; no reader produces them) follow the same rule: z, x, y.

/// One contracted shell.
#[derive(Clone, Debug, PartialEq)]
pub struct Shell {
    /// Angular momentum (0 = s, 1 = p, ...).
    pub l: u8,
    /// Real solid harmonics (2l+1 functions) when true, Cartesian ((l+1)(l+2)/2) when false.
    pub pure: bool,
    /// Index of the atom the shell sits on.
    pub atom: usize,
    pub center_bohr: [f64; 3],
    pub exponents: Vec<f64>,
    /// Coefficients of normalised primitives, one per exponent.
    pub coefficients: Vec<f64>,
}

/// Highest angular momentum the model supports (k functions).
pub const MAX_L: u8 = 7;

impl Shell {
    /// Number of basis functions this shell contributes.
    pub fn n_functions(&self) -> usize {
        let l = self.l as usize;
        if self.pure { 2 * l + 1 } else { (l + 1) * (l + 2) / 2 }
    }

    /// d_i such that the shell's radial factor is sum_i d_i * exp(-alpha_i * r^2) (r in bohr), including
    /// primitive normalisation and the contraction's renormalisation.
    ///
    /// The radial factor is normalised as the x^l function of the shell (see the module doc); combined
    /// with [`angular_terms`] every function of the shell has unit norm. A shell whose contraction has
    /// zero or non-finite norm returns all zeros (no function, rather than NaN).
    pub fn radial_coefficients(&self) -> Vec<f64> {
        let l = i32::from(self.l);
        let n = self.exponents.len().min(self.coefficients.len());
        let mut d: Vec<f64> = (0..n)
            .map(|i| {
                self.coefficients.get(i).copied().unwrap_or(0.0)
                    * primitive_norm(self.l, self.exponents.get(i).copied().unwrap_or(0.0))
            })
            .collect();
        // Norm of the contracted x^l function with these normalised primitives:
        // <x^l g_i | x^l g_j> = c_i c_j (2 sqrt(a_i a_j) / (a_i + a_j))^(l + 3/2).
        let mut norm2 = 0.0;
        for i in 0..n {
            for j in 0..n {
                let (ai, aj) = (self.exponents[i], self.exponents[j]);
                let (ci, cj) = (self.coefficients[i], self.coefficients[j]);
                let ratio = 2.0 * (ai * aj).sqrt() / (ai + aj);
                norm2 += ci * cj * ratio.powf(f64::from(l) + 1.5);
            }
        }
        if !(norm2.is_finite() && norm2 > 0.0) {
            return vec![0.0; n];
        }
        let scale = 1.0 / norm2.sqrt();
        for x in &mut d {
            *x *= scale;
        }
        d
    }

    /// Norm of the contraction (1 for a normalised shell) computed from the coefficients as given,
    /// treating them as coefficients of normalised primitives.
    pub fn contraction_norm(&self) -> f64 {
        let n = self.exponents.len().min(self.coefficients.len());
        let mut norm2 = 0.0;
        for i in 0..n {
            for j in 0..n {
                let (ai, aj) = (self.exponents[i], self.exponents[j]);
                let ratio = 2.0 * (ai * aj).sqrt() / (ai + aj);
                norm2 += self.coefficients[i] * self.coefficients[j] * ratio.powf(f64::from(self.l) + 1.5);
            }
        }
        norm2.max(0.0).sqrt()
    }

    /// Scales the coefficients so that the contraction has unit norm (no-op for a zero contraction).
    pub fn normalize_contraction(&mut self) {
        let n = self.contraction_norm();
        if n.is_finite() && n > 0.0 {
            for c in &mut self.coefficients {
                *c /= n;
            }
        }
    }
}

/// Normalisation of the primitive x^l exp(-alpha r^2): (2 alpha / pi)^(3/4) (4 alpha)^(l/2) / sqrt((2l-1)!!).
pub fn primitive_norm(l: u8, alpha: f64) -> f64 {
    if !(alpha.is_finite() && alpha > 0.0) {
        return 0.0;
    }
    let l = f64::from(l);
    (2.0 * alpha / std::f64::consts::PI).powf(0.75) * (4.0 * alpha).powf(l / 2.0)
        / double_factorial(2 * i64::from(l as u8) - 1).sqrt()
}

/// (n)!! for n >= -1 (with (-1)!! = 0!! = 1), as f64.
pub fn double_factorial(n: i64) -> f64 {
    let mut v = 1.0;
    let mut k = n;
    while k > 1 {
        v *= k as f64;
        k -= 2;
    }
    v
}

/// The Cartesian exponents [a, b, c] of a Cartesian shell's functions, in the internal order.
pub fn cartesian_powers(l: u8) -> Vec<[u8; 3]> {
    match l {
        0 => vec![[0, 0, 0]],
        1 => vec![[1, 0, 0], [0, 1, 0], [0, 0, 1]],
        2 => vec![[2, 0, 0], [0, 2, 0], [0, 0, 2], [1, 1, 0], [1, 0, 1], [0, 1, 1]],
        3 => vec![
            [3, 0, 0],
            [0, 3, 0],
            [0, 0, 3],
            [1, 2, 0],
            [2, 1, 0],
            [2, 0, 1],
            [1, 0, 2],
            [0, 1, 2],
            [0, 2, 1],
            [1, 1, 1],
        ],
        4 => vec![
            [4, 0, 0],
            [0, 4, 0],
            [0, 0, 4],
            [3, 1, 0],
            [3, 0, 1],
            [1, 3, 0],
            [0, 3, 1],
            [1, 0, 3],
            [0, 1, 3],
            [2, 2, 0],
            [2, 0, 2],
            [0, 2, 2],
            [2, 1, 1],
            [1, 2, 1],
            [1, 1, 2],
        ],
        _ => {
            let mut v = Vec::new();
            for a in (0..=l).rev() {
                for b in (0..=l - a).rev() {
                    v.push([a, b, l - a - b]);
                }
            }
            v
        }
    }
}

/// Overlap of two monomials of equal degree l under the same radial factor, relative to <x^l|x^l>:
/// prod_k (a_k + b_k - 1)!! / (2l - 1)!! when every a_k + b_k is even, else 0.
fn monomial_overlap(a: [u8; 3], b: [u8; 3], l: u8) -> f64 {
    let mut v = 1.0;
    for k in 0..3 {
        let s = i64::from(a[k]) + i64::from(b[k]);
        if s % 2 == 1 {
            return 0.0;
        }
        v *= double_factorial(s - 1);
    }
    v / double_factorial(2 * i64::from(l) - 1)
}

fn binomial(n: i64, k: i64) -> f64 {
    if k < 0 || k > n {
        return 0.0;
    }
    let mut v = 1.0;
    for i in 0..k {
        v = v * (n - i) as f64 / (i + 1) as f64;
    }
    v
}

/// Unnormalised real solid harmonic S_lm as Cartesian monomials (Helgaker, Jorgensen & Olsen 6.4.47).
fn solid_harmonic(l: u8, m: i32) -> Vec<(f64, [u8; 3])> {
    let li = i64::from(l);
    let am = i64::from(m.unsigned_abs());
    let vm2 = if m < 0 { 1 } else { 0 };
    let mut terms: Vec<(f64, [u8; 3])> = Vec::new();
    for t in 0..=((li - am) / 2) {
        for u in 0..=t {
            let mut v2 = vm2;
            while v2 <= am {
                let sign = if (t + (v2 - vm2) / 2) % 2 == 0 { 1.0 } else { -1.0 };
                let c = sign
                    * 0.25f64.powi(t as i32)
                    * binomial(li, t)
                    * binomial(li - t, am + t)
                    * binomial(t, u)
                    * binomial(am, v2);
                let px = 2 * t + am - 2 * u - v2;
                let py = 2 * u + v2;
                let pz = li - 2 * t - am;
                if c != 0.0 && px >= 0 && py >= 0 && pz >= 0 {
                    let p = [px as u8, py as u8, pz as u8];
                    match terms.iter_mut().find(|(_, q)| *q == p) {
                        Some(e) => e.0 += c,
                        None => terms.push((c, p)),
                    }
                }
                v2 += 2;
            }
        }
    }
    terms.retain(|(c, _)| c.abs() > 1e-15);
    terms
}

/// The angular polynomials of a shell's functions in the internal order (see the module doc): function f of
/// the shell = radial(r) * sum over (coef, [a, b, c]) of coef * x^a y^b z^c, with x, y, z relative to the
/// centre in bohr. Cartesian shells: one term per function; pure shells: real solid harmonics expanded.
///
/// With the radial factor of [`Shell::radial_coefficients`] every function is normalised to one.
pub fn angular_terms(l: u8, pure: bool) -> Vec<Vec<(f64, [u8; 3])>> {
    if !pure {
        return cartesian_powers(l)
            .into_iter()
            .map(|p| vec![(1.0 / monomial_overlap(p, p, l).sqrt(), p)])
            .collect();
    }
    let mut ms = vec![0i32];
    for m in 1..=i32::from(l) {
        ms.push(m);
        ms.push(-m);
    }
    ms.into_iter()
        .map(|m| {
            let mut terms = solid_harmonic(l, m);
            let mut norm2 = 0.0;
            for (ca, pa) in &terms {
                for (cb, pb) in &terms {
                    norm2 += ca * cb * monomial_overlap(*pa, *pb, l);
                }
            }
            let s = if norm2 > 0.0 { 1.0 / norm2.sqrt() } else { 0.0 };
            for t in &mut terms {
                t.0 *= s;
            }
            terms
        })
        .collect()
}

/// An ordered list of shells; basis function indices run over shells in order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct BasisSet {
    pub shells: Vec<Shell>,
}

impl BasisSet {
    /// Total number of basis functions.
    pub fn n_functions(&self) -> usize {
        self.shells.iter().map(Shell::n_functions).sum()
    }

    /// Index of each shell's first basis function.
    pub fn shell_offsets(&self) -> Vec<usize> {
        let mut off = 0;
        self.shells
            .iter()
            .map(|s| {
                let o = off;
                off += s.n_functions();
                o
            })
            .collect()
    }

    /// Highest angular momentum present (0 for an empty basis).
    pub fn max_l(&self) -> u8 {
        self.shells.iter().map(|s| s.l).max().unwrap_or(0)
    }

    /// True when some shell with l >= 2 is pure (spherical).
    pub fn has_pure(&self) -> bool {
        self.shells.iter().any(|s| s.pure && s.l >= 2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Values of every function of `shell` (centred at the origin) on a cubic midpoint grid, evaluated
    /// directly from the radial coefficients and angular terms; the grid sum is independent of the
    /// double-factorial algebra used above.
    fn grid_values(shell: &Shell, half: f64, n: usize) -> (Vec<Vec<f64>>, f64) {
        let h = 2.0 * half / n as f64;
        let d = shell.radial_coefficients();
        let terms = angular_terms(shell.l, shell.pure);
        let mut vals = vec![Vec::with_capacity(n * n * n); terms.len()];
        for i in 0..n {
            for j in 0..n {
                for k in 0..n {
                    let p = [
                        -half + (i as f64 + 0.5) * h,
                        -half + (j as f64 + 0.5) * h,
                        -half + (k as f64 + 0.5) * h,
                    ];
                    let r2 = p[0] * p[0] + p[1] * p[1] + p[2] * p[2];
                    let rad: f64 = d.iter().zip(&shell.exponents).map(|(c, a)| c * (-a * r2).exp()).sum();
                    for (f, t) in terms.iter().enumerate() {
                        let ang: f64 = t
                            .iter()
                            .map(|(c, e)| c * p[0].powi(e[0] as i32) * p[1].powi(e[1] as i32) * p[2].powi(e[2] as i32))
                            .sum();
                        vals[f].push(rad * ang);
                    }
                }
            }
        }
        (vals, h * h * h)
    }

    #[test]
    fn counts_and_orders() {
        for l in 0..=6u8 {
            let n = (l as usize + 1) * (l as usize + 2) / 2;
            let p = cartesian_powers(l);
            assert_eq!(p.len(), n);
            assert!(p.iter().all(|e| e.iter().map(|&x| x as u32).sum::<u32>() == l as u32));
            let mut sorted = p.clone();
            sorted.sort();
            sorted.dedup();
            assert_eq!(sorted.len(), n, "l={l} has duplicates");
            assert_eq!(angular_terms(l, false).len(), n);
            assert_eq!(angular_terms(l, true).len(), 2 * l as usize + 1);
        }
    }

    #[test]
    fn pure_d_matches_tabulated_coefficients() {
        // Schlegel & Frisch (1995) / PySCF cart2sph, with the radial factor normalised as x^2:
        // d0 = zz - xx/2 - yy/2, d+1 = sqrt3 xz, d-1 = sqrt3 yz, d+2 = sqrt3/2 (xx - yy), d-2 = sqrt3 xy.
        let t = angular_terms(2, true);
        let get = |f: usize, p: [u8; 3]| t[f].iter().find(|(_, q)| *q == p).map_or(0.0, |x| x.0);
        let s3 = 3f64.sqrt();
        assert!((get(0, [0, 0, 2]) - 1.0).abs() < 1e-14);
        assert!((get(0, [2, 0, 0]) + 0.5).abs() < 1e-14);
        assert!((get(0, [0, 2, 0]) + 0.5).abs() < 1e-14);
        assert!((get(1, [1, 0, 1]) - s3).abs() < 1e-14);
        assert!((get(2, [0, 1, 1]) - s3).abs() < 1e-14);
        assert!((get(3, [2, 0, 0]) - s3 / 2.0).abs() < 1e-14);
        assert!((get(3, [0, 2, 0]) + s3 / 2.0).abs() < 1e-14);
        assert!((get(4, [1, 1, 0]) - s3).abs() < 1e-14);
        // f(+3) = sqrt(5/8)... check signs of f: m=+3 ~ x^3 - 3xy^2, m=-3 ~ 3x^2y - y^3.
        let f = angular_terms(3, true);
        let c = |fi: usize, p: [u8; 3]| f[fi].iter().find(|(_, q)| *q == p).map_or(0.0, |x| x.0);
        assert!(c(5, [3, 0, 0]) > 0.0 && (c(5, [1, 2, 0]) / c(5, [3, 0, 0]) + 3.0).abs() < 1e-12);
        assert!(c(6, [2, 1, 0]) > 0.0 && (c(6, [0, 3, 0]) / c(6, [2, 1, 0]) + 1.0 / 3.0).abs() < 1e-12);
        // Tabulated f0 with x^3 normalisation: z^3 - 3/2 x^2 z - 3/2 y^2 z.
        assert!((c(0, [0, 0, 3]) - 1.0).abs() < 1e-12);
        assert!((c(0, [2, 0, 1]) + 1.5).abs() < 1e-12);
        assert!((c(0, [0, 2, 1]) + 1.5).abs() < 1e-12);
    }

    #[test]
    fn functions_are_orthonormal_on_a_grid() {
        // Two-primitive contraction with raw (unnormalised-contraction) coefficients: radial_coefficients
        // must renormalise. Check <f_i|f_j> = delta_ij for every function of Cartesian and pure shells.
        for l in 0..=4u8 {
            for pure in [false, true] {
                let shell = Shell {
                    l,
                    pure,
                    atom: 0,
                    center_bohr: [0.0; 3],
                    exponents: vec![1.3, 0.45],
                    coefficients: vec![0.7, 0.9],
                };
                let (vals, dv) = grid_values(&shell, 8.0, 48);
                for (i, vi) in vals.iter().enumerate() {
                    for (j, vj) in vals.iter().enumerate().skip(i) {
                        if !pure && i != j {
                            continue; // Cartesian functions are not mutually orthogonal
                        }
                        let s: f64 = vi.iter().zip(vj).map(|(a, b)| a * b).sum::<f64>() * dv;
                        let want = if i == j { 1.0 } else { 0.0 };
                        assert!((s - want).abs() < 1e-7, "l={l} pure={pure} <{i}|{j}> = {s}");
                    }
                }
            }
        }
    }

    #[test]
    fn primitive_norm_is_analytic() {
        // s: (2a/pi)^(3/4); d (xx): (2a/pi)^(3/4) * 4a / sqrt(3)
        let a: f64 = 0.8;
        assert!((primitive_norm(0, a) - (2.0 * a / std::f64::consts::PI).powf(0.75)).abs() < 1e-14);
        assert!(
            (primitive_norm(2, a) - (2.0 * a / std::f64::consts::PI).powf(0.75) * 4.0 * a / 3f64.sqrt()).abs() < 1e-13
        );
        assert_eq!(primitive_norm(1, f64::NAN), 0.0);
    }

    #[test]
    fn degenerate_shells_give_zeros_not_nan() {
        let s = Shell {
            l: 1,
            pure: false,
            atom: 0,
            center_bohr: [0.0; 3],
            exponents: vec![1.0],
            coefficients: vec![0.0],
        };
        assert_eq!(s.radial_coefficients(), vec![0.0]);
    }
}
