//! The analytic overlap matrix S of a basis set (exact for Gaussians).
//!
//! Owns S_{mu nu} = <phi_mu | phi_nu> over the internal basis conventions of `model::basis`: the
//! overlap belongs with the basis, so every layer above `model` can use it. Called by the
//! wavefunction readers (`io::molden`, `io::fchk`, `io::wfn`, `io::mkl`) to check that the occupied
//! orbitals are orthonormal (C^T S C = I) and to decide per-program conventions, by `analysis`
//! (Mulliken charges, orbital tracking), and by tests.
//!
//! Method: each primitive pair's Gaussian product is centred at P = (a A + b B) / p; the 1-D factors
//! (x - A_x)^i (x - B_x)^j are expanded in powers of (x - P_x) and integrated in closed form,
//! int u^n exp(-p u^2) du = (n-1)!! / (2p)^(n/2) sqrt(pi/p) for even n. Plain and exact; the matrix is
//! small (hundreds of functions) so clarity wins over speed here.

use super::basis::{BasisSet, Shell, angular_terms, double_factorial};
use super::wavefunction::OrbitalSet;

/// Binomial coefficient as f64.
fn binomial(n: u32, k: u32) -> f64 {
    if k > n {
        return 0.0;
    }
    let mut v = 1.0;
    for i in 0..k {
        v = v * f64::from(n - i) / f64::from(i + 1);
    }
    v
}

/// int (x - a)^i (x - b)^j exp(-p (x - c)^2) dx over the real line, with pa = c - a, pb = c - b.
fn overlap_1d(i: u8, j: u8, pa: f64, pb: f64, p: f64) -> f64 {
    let (i, j) = (u32::from(i), u32::from(j));
    let mut s = 0.0;
    for k in 0..=i {
        for m in 0..=j {
            let n = k + m;
            if n % 2 == 1 {
                continue;
            }
            let moment = double_factorial(i64::from(n) - 1) / (2.0 * p).powi((n / 2) as i32);
            s += binomial(i, k) * binomial(j, m) * pa.powi((i - k) as i32) * pb.powi((j - m) as i32) * moment;
        }
    }
    s * (std::f64::consts::PI / p).sqrt()
}

/// Overlap block between two shells: `[n_functions(a)][n_functions(b)]`, row-major.
pub fn shell_pair_overlap(a: &Shell, b: &Shell) -> Vec<f64> {
    let ta = angular_terms(a.l, a.pure);
    let tb = angular_terms(b.l, b.pure);
    let da = a.radial_coefficients();
    let db = b.radial_coefficients();
    let mut out = vec![0.0; ta.len() * tb.len()];
    let ab2: f64 = (0..3).map(|k| (a.center_bohr[k] - b.center_bohr[k]).powi(2)).sum();
    for (&ea, &ca) in a.exponents.iter().zip(&da) {
        for (&eb, &cb) in b.exponents.iter().zip(&db) {
            let p = ea + eb;
            if p.is_nan() || p <= 0.0 {
                continue;
            }
            let k = (-ea * eb / p * ab2).exp();
            let pc: [f64; 3] = std::array::from_fn(|d| (ea * a.center_bohr[d] + eb * b.center_bohr[d]) / p);
            let pa: [f64; 3] = std::array::from_fn(|d| pc[d] - a.center_bohr[d]);
            let pb: [f64; 3] = std::array::from_fn(|d| pc[d] - b.center_bohr[d]);
            let pref = ca * cb * k;
            // 1-D tables indexed by powers.
            let (la, lb) = (a.l as usize + 1, b.l as usize + 1);
            let mut tab = vec![[0.0f64; 3]; la * lb];
            for i in 0..la {
                for j in 0..lb {
                    for d in 0..3 {
                        tab[i * lb + j][d] = overlap_1d(i as u8, j as u8, pa[d], pb[d], p);
                    }
                }
            }
            for (fa, terms_a) in ta.iter().enumerate() {
                for (fb, terms_b) in tb.iter().enumerate() {
                    let mut s = 0.0;
                    for (cta, pwa) in terms_a {
                        for (ctb, pwb) in terms_b {
                            let mut v = cta * ctb;
                            for d in 0..3 {
                                v *= tab[pwa[d] as usize * lb + pwb[d] as usize][d];
                            }
                            s += v;
                        }
                    }
                    out[fa * tb.len() + fb] += pref * s;
                }
            }
        }
    }
    out
}

/// The full overlap matrix, `[n][n]` row-major with n = `basis.n_functions()`.
pub fn overlap_matrix(basis: &BasisSet) -> Vec<f64> {
    let n = basis.n_functions();
    let offsets = basis.shell_offsets();
    let mut s = vec![0.0; n * n];
    for (ia, a) in basis.shells.iter().enumerate() {
        for (ib, b) in basis.shells.iter().enumerate().skip(ia) {
            let block = shell_pair_overlap(a, b);
            let (na, nb) = (a.n_functions(), b.n_functions());
            for fa in 0..na {
                for fb in 0..nb {
                    let v = block[fa * nb + fb];
                    let (r, c) = (offsets[ia] + fa, offsets[ib] + fb);
                    s[r * n + c] = v;
                    s[c * n + r] = v;
                }
            }
        }
    }
    s
}

/// Largest |(C^T S C)_{ij} - delta_ij| over the orbitals `which` of `set` (each index < set.len()).
/// Returns `None` when the set's row length does not match S.
pub fn orthonormality_deviation(set: &OrbitalSet, s: &[f64], which: &[usize]) -> Option<f64> {
    let n = set.n_basis;
    if n.checked_mul(n)? != s.len() {
        return None;
    }
    // SC for each chosen orbital.
    let mut sc: Vec<Vec<f64>> = Vec::with_capacity(which.len());
    for &k in which {
        let c = set.orbital(k)?;
        let mut v = vec![0.0; n];
        for (r, out) in v.iter_mut().enumerate() {
            let row = &s[r * n..(r + 1) * n];
            *out = row.iter().zip(c).map(|(a, b)| a * b).sum();
        }
        sc.push(v);
    }
    let mut worst: f64 = 0.0;
    for (a, &i) in which.iter().enumerate() {
        let ci = set.orbital(i)?;
        for (b, scj) in sc.iter().enumerate().skip(a) {
            let v: f64 = ci.iter().zip(scj).map(|(x, y)| x * y).sum();
            let want = if a == b { 1.0 } else { 0.0 };
            let d = (v - want).abs();
            if !d.is_finite() {
                return Some(f64::INFINITY);
            }
            worst = worst.max(d);
        }
    }
    Some(worst)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn shell(l: u8, pure: bool, center: [f64; 3], exps: &[f64], coefs: &[f64]) -> Shell {
        Shell {
            l,
            pure,
            atom: 0,
            center_bohr: center,
            exponents: exps.to_vec(),
            coefficients: coefs.to_vec(),
        }
    }

    #[test]
    fn diagonal_is_one_and_s_overlap_is_analytic() {
        let basis = BasisSet {
            shells: vec![
                shell(0, false, [0.0; 3], &[1.0], &[1.0]),
                shell(0, false, [0.0, 0.0, 1.4], &[0.5], &[1.0]),
                shell(2, true, [0.3, -0.2, 0.1], &[0.9, 0.3], &[0.6, 0.5]),
                shell(3, false, [0.0, 0.5, 0.0], &[0.7], &[1.0]),
            ],
        };
        let s = overlap_matrix(&basis);
        let n = basis.n_functions();
        for i in 0..n {
            assert!((s[i * n + i] - 1.0).abs() < 1e-12, "S[{i}][{i}] = {}", s[i * n + i]);
        }
        // Two normalised s Gaussians: (2 sqrt(ab)/(a+b))^(3/2) exp(-ab/(a+b) R^2).
        let (a, b, r): (f64, f64, f64) = (1.0, 0.5, 1.4);
        let want = (2.0 * (a * b).sqrt() / (a + b)).powf(1.5) * (-a * b / (a + b) * r * r).exp();
        assert!((s[1] - want).abs() < 1e-14);
        // Pure d functions on one centre are orthonormal.
        for i in 2..7 {
            for j in 2..7 {
                let want = if i == j { 1.0 } else { 0.0 };
                assert!((s[i * n + j] - want).abs() < 1e-12);
            }
        }
        // Cartesian f: <xxx|xyy> = 1/sqrt(15) * sqrt(15/3) * 3/15 ... = (3)/(sqrt(15*3)) = 1/sqrt(5)
        let xxx = 7;
        let xyy = 7 + 3;
        assert!((s[xxx * n + xyy] - 1.0 / 5f64.sqrt()).abs() < 1e-12);
    }

    #[test]
    fn p_overlap_between_centres_matches_finite_difference() {
        // <p_z(A)|s(B)> = derivative relation: for normalised primitives,
        // <z_A e^{-a r_A^2}|e^{-b r_B^2}> = (b/(a+b)) * (B_z - A_z) * <e^{-a r_A^2}|e^{-b r_B^2}> (unnormalised).
        let (a, b, dz): (f64, f64, f64) = (0.8, 0.6, 1.1);
        let basis = BasisSet {
            shells: vec![
                shell(1, false, [0.0; 3], &[a], &[1.0]),
                shell(0, false, [0.0, 0.0, dz], &[b], &[1.0]),
            ],
        };
        let s = overlap_matrix(&basis);
        let pi = std::f64::consts::PI;
        let ss = (pi / (a + b)).powf(1.5) * (-a * b / (a + b) * dz * dz).exp();
        let np = (2.0 * a / pi).powf(0.75) * 2.0 * a.sqrt();
        let ns = (2.0 * b / pi).powf(0.75);
        let want = np * ns * b / (a + b) * dz * ss;
        assert!((s[2 * 4 + 3] - want).abs() < 1e-13, "{} vs {want}", s[2 * 4 + 3]);
        assert!(s[3].abs() < 1e-15); // p_x with s along z
    }
}
