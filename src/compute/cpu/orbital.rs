//! The orbital kernel: molecular orbitals, |psi|^2, electron and spin densities on blocks of points.
//!
//! Called by [`super::CpuEngine`] (lattice slabs) and [`super::evaluate_points`] (point lists).
//!
//! How it works:
//! - [`PreparedOrbitals::new`] turns a wavefunction and a field into a list of *orbitals to evaluate*
//!   (one for an orbital, every occupied one for densities) with a weight each, and groups the
//!   shells by atom. Shells on one atom share their distinct exponents (SP shells, general
//!   contractions), so each distinct Gaussian is evaluated once per point. Per shell, the orbital
//!   coefficients are folded with the angular polynomials of its functions into weights on the
//!   monomials `x^a y^b z^c`, so Cartesian and pure shells cost the same and an orbital's value is
//!   `sum over shells of R(r) * sum_m W[o][m] * monomial_m`.
//! - Exponents are pre-scaled by `log2(e)`; Gaussians are `2^(-alpha' r^2)` in f64x4 (4 points a
//!   vector), see [`super::simd`].
//! - Screening per block: from the block's bounding box, the nearest and farthest distance to each
//!   atom give a bound on `|d_i| r^l exp(-alpha_i r^2)` times the largest monomial weight of the
//!   shell; primitives (and so shells and whole atoms) below [`SCREEN_EPS`] are skipped. The bound is
//!   rigorous (|x^a y^b z^c| <= r^l), so an orbital value changes by at most `SCREEN_EPS` per skipped
//!   primitive: below 1e-10 for hundreds of skipped primitives, far below the f32 resolution of
//!   any orbital's largest values (~1e-8 for a maximum of 0.1), so isosurfaces, the zero one
//!   included, do not move.
//! - Densities: every selected orbital is accumulated at once per block (one pass over the shells),
//!   then `sum_o w_o psi_o^2`.
//!
//! Accuracy: f64 throughout; the only approximation besides screening is `2^x` with relative error
//! below 3e-13.

use super::simd::exp2_neg;
use crate::compute::{ComputeError, Field};
use crate::model::{Spin, SpinKind, Wavefunction};
use wide::f64x4;

/// Primitive contributions whose bound over a block is below this (atomic units) are skipped.
pub const SCREEN_EPS: f64 = 1e-12;

/// Points in one block (an 8x8 lattice tile); a multiple of 4.
pub const BLOCK: usize = 64;
const NVEC: usize = BLOCK / 4;

/// The angular polynomial of each function of a shell: `(coefficient, [a, b, c])` terms.
type AngularTerms = Vec<Vec<(f64, [u8; 3])>>;

fn angular_terms(l: u8, pure: bool) -> AngularTerms {
    crate::model::basis::angular_terms(l, pure)
}

fn radial_coefficients(shell: &crate::model::Shell) -> Vec<f64> {
    shell.radial_coefficients()
}

/// How the evaluated orbitals combine into the field.
#[derive(Clone, Debug, PartialEq)]
enum Combine {
    /// The single orbital's amplitude.
    Linear,
    /// `sum_o weights[o] * psi_o^2`.
    Quadratic(Vec<f64>),
}

#[derive(Clone, Debug)]
struct PreparedShell {
    l: u8,
    /// (index into the atom's distinct exponents, radial coefficient d_i).
    prims: Vec<(usize, f64)>,
    /// The monomials this shell's functions use.
    monomials: Vec<[u8; 3]>,
    /// Row-major `[n_orbitals][monomials.len()]`.
    weights: Vec<f64>,
    /// Largest `sum_m |W[o][m]|` over the orbitals: the screening scale.
    weight_bound: f64,
}

#[derive(Clone, Debug)]
struct AtomGroup {
    center_bohr: [f64; 3],
    /// Distinct exponents (bohr^-2).
    alphas: Vec<f64>,
    /// `-alpha * log2(e)` for each exponent.
    neg_alpha_log2e: Vec<f64>,
    max_l: u8,
    shells: Vec<PreparedShell>,
}

/// A wavefunction and field prepared for fast evaluation.
#[derive(Clone, Debug)]
pub struct PreparedOrbitals {
    groups: Vec<AtomGroup>,
    n_orbitals: usize,
    combine: Combine,
}

/// The orbitals (coefficients rows) and weights a field needs.
fn select_orbitals(wf: &Wavefunction, field: &Field) -> Result<(Vec<Vec<f64>>, Combine), ComputeError> {
    let n_basis = wf.basis.n_functions();
    let get = |spin: Spin, index: usize| -> Result<Vec<f64>, ComputeError> {
        let set = wf.orbitals(spin).ok_or(ComputeError::WrongInput(
            field.clone(),
            "a wavefunction with beta orbitals",
        ))?;
        if set.n_basis != n_basis {
            return Err(ComputeError::WrongInput(
                field.clone(),
                "orbitals over the wavefunction's basis",
            ));
        }
        set.orbital(index)
            .map(<[f64]>::to_vec)
            .ok_or(ComputeError::NoSuchOrbital {
                index,
                count: set.len(),
            })
    };
    match field {
        Field::Orbital { spin, index } => Ok((vec![get(*spin, *index)?], Combine::Linear)),
        Field::OrbitalSquared { spin, index } => Ok((vec![get(*spin, *index)?], Combine::Quadratic(vec![1.0]))),
        Field::Density | Field::SpinDensity => {
            let spin_density = matches!(field, Field::SpinDensity);
            let mut rows = Vec::new();
            let mut weights = Vec::new();
            let mut push = |spin: Spin, index: usize, w: f64| -> Result<(), ComputeError> {
                if w != 0.0 && w.is_finite() {
                    rows.push(get(spin, index)?);
                    weights.push(w);
                }
                Ok(())
            };
            for (i, &occ) in wf.alpha.occupations.iter().enumerate() {
                let w = match (wf.spin, spin_density) {
                    // Restricted sets: alpha = beta = occ/2, spin density zero.
                    (SpinKind::Restricted, false) => occ,
                    (SpinKind::Restricted, true) => 0.0,
                    // Restricted open shell: alpha = min(occ, 1), beta = occ - alpha.
                    (SpinKind::RestrictedOpen, false) => occ,
                    (SpinKind::RestrictedOpen, true) => occ.min(1.0) - (occ - occ.min(1.0)),
                    (SpinKind::Unrestricted, _) => occ,
                };
                push(Spin::Alpha, i, w)?;
            }
            if wf.spin == SpinKind::Unrestricted
                && let Some(beta) = &wf.beta
            {
                for (i, &occ) in beta.occupations.iter().enumerate() {
                    push(Spin::Beta, i, if spin_density { -occ } else { occ })?;
                }
            }
            Ok((rows, Combine::Quadratic(weights)))
        }
        Field::Potential => Err(ComputeError::WrongInput(
            field.clone(),
            "point charges, not a wavefunction",
        )),
    }
}

impl PreparedOrbitals {
    /// Prepares `field` (an orbital or density field) of `wf`.
    pub fn new(wf: &Wavefunction, field: &Field) -> Result<PreparedOrbitals, ComputeError> {
        let (rows, combine) = select_orbitals(wf, field)?;
        let n_orbitals = rows.len();
        let mut groups: Vec<AtomGroup> = Vec::new();
        let mut offset = 0usize;
        for shell in &wf.basis.shells {
            let n_fn = shell.n_functions();
            let terms = angular_terms(shell.l, shell.pure);
            let radial = radial_coefficients(shell);
            if terms.len() != n_fn || radial.len() != shell.exponents.len() {
                return Err(ComputeError::WrongInput(
                    field.clone(),
                    "a basis whose shells are consistent",
                ));
            }
            // Monomials used by the shell, in first-seen order (deterministic).
            let mut monomials: Vec<[u8; 3]> = Vec::new();
            for f in &terms {
                for (_, abc) in f {
                    if !monomials.contains(abc) {
                        monomials.push(*abc);
                    }
                }
            }
            let nm = monomials.len();
            let mut weights = vec![0.0; n_orbitals * nm];
            for (o, row) in rows.iter().enumerate() {
                for (f, fterms) in terms.iter().enumerate() {
                    let c = row.get(offset + f).copied().unwrap_or(0.0);
                    if c == 0.0 {
                        continue;
                    }
                    for (coef, abc) in fterms {
                        if let Some(m) = monomials.iter().position(|x| x == abc)
                            && let Some(w) = weights.get_mut(o * nm + m)
                        {
                            *w += c * coef;
                        }
                    }
                }
            }
            offset += n_fn;
            let weight_bound = weights
                .chunks(nm.max(1))
                .map(|r| r.iter().map(|w| w.abs()).sum::<f64>())
                .fold(0.0, f64::max);
            if weight_bound == 0.0 || !weight_bound.is_finite() {
                continue; // contributes nothing to any selected orbital
            }
            // Find or create the atom group (shells of one atom share exponents).
            let gi = match groups.iter().position(|g| g.center_bohr == shell.center_bohr) {
                Some(i) => i,
                None => {
                    groups.push(AtomGroup {
                        center_bohr: shell.center_bohr,
                        alphas: Vec::new(),
                        neg_alpha_log2e: Vec::new(),
                        max_l: 0,
                        shells: Vec::new(),
                    });
                    groups.len() - 1
                }
            };
            let Some(group) = groups.get_mut(gi) else { continue };
            let mut prims = Vec::new();
            for (&alpha, &d) in shell.exponents.iter().zip(&radial) {
                if d == 0.0 || !(alpha > 0.0) || !d.is_finite() || !alpha.is_finite() {
                    continue;
                }
                let k = match group.alphas.iter().position(|&a| a == alpha) {
                    Some(k) => k,
                    None => {
                        group.alphas.push(alpha);
                        group.neg_alpha_log2e.push(-alpha * std::f64::consts::LOG2_E);
                        group.alphas.len() - 1
                    }
                };
                prims.push((k, d));
            }
            group.max_l = group.max_l.max(shell.l);
            group.shells.push(PreparedShell {
                l: shell.l,
                prims,
                monomials,
                weights,
                weight_bound,
            });
        }
        Ok(PreparedOrbitals {
            groups,
            n_orbitals,
            combine,
        })
    }

    /// Number of orbitals evaluated per point.
    pub fn n_orbitals(&self) -> usize {
        self.n_orbitals
    }

    /// A scratch area sized for this preparation (one per thread).
    pub fn scratch(&self) -> Scratch {
        let max_prims = self.groups.iter().map(|g| g.alphas.len()).max().unwrap_or(0);
        let max_l = self.groups.iter().map(|g| g.max_l as usize).max().unwrap_or(0);
        Scratch {
            acc: vec![f64x4::ZERO; self.n_orbitals.max(1) * NVEC],
            prim_on: vec![false; max_prims],
            prim_list: Vec::with_capacity(max_prims),
            exps: vec![f64x4::ZERO; max_prims],
            shell_prims: Vec::new(),
            pows: vec![[f64x4::ONE; 3]; max_l + 1],
            terms: Vec::new(),
        }
    }

    /// Evaluates the field at up to [`BLOCK`] points (bohr), writing one value per point into `out`.
    pub fn eval_block(&self, scratch: &mut Scratch, points: &[[f64; 3]], out: &mut [f64]) {
        let n = points.len().min(BLOCK).min(out.len());
        if n == 0 {
            return;
        }
        // Pack coordinates, padding with the last point.
        let mut px = [f64x4::ZERO; NVEC];
        let mut py = [f64x4::ZERO; NVEC];
        let mut pz = [f64x4::ZERO; NVEC];
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        let nvec = n.div_ceil(4);
        for v in 0..nvec {
            let mut xs = [0.0; 4];
            let mut ys = [0.0; 4];
            let mut zs = [0.0; 4];
            for lane in 0..4 {
                let p = points.get((v * 4 + lane).min(n - 1)).copied().unwrap_or([0.0; 3]);
                xs[lane] = p[0];
                ys[lane] = p[1];
                zs[lane] = p[2];
                for k in 0..3 {
                    lo[k] = lo[k].min(p[k]);
                    hi[k] = hi[k].max(p[k]);
                }
            }
            px[v] = f64x4::from(xs);
            py[v] = f64x4::from(ys);
            pz[v] = f64x4::from(zs);
        }
        let acc = &mut scratch.acc;
        let nacc = self.n_orbitals * NVEC;
        for a in acc.iter_mut().take(nacc) {
            *a = f64x4::ZERO;
        }

        for g in &self.groups {
            // Nearest and farthest distance from the atom to the block's bounding box.
            let mut dmin2 = 0.0;
            let mut dmax2 = 0.0;
            for k in 0..3 {
                let c = g.center_bohr[k];
                let near = if c < lo[k] {
                    lo[k] - c
                } else if c > hi[k] {
                    c - hi[k]
                } else {
                    0.0
                };
                let far = (c - lo[k]).abs().max((hi[k] - c).abs());
                dmin2 += near * near;
                dmax2 += far * far;
            }
            // Screen primitives per shell.
            scratch.prim_on.iter_mut().for_each(|b| *b = false);
            scratch.shell_prims.clear();
            let mut any = false;
            for (si, sh) in g.shells.iter().enumerate() {
                let start = scratch.shell_prims.len();
                for &(k, d) in &sh.prims {
                    let alpha = g.alphas.get(k).copied().unwrap_or(0.0);
                    let bound = d.abs() * sh.weight_bound * max_rl_gauss(sh.l, alpha, dmin2, dmax2);
                    if bound >= SCREEN_EPS {
                        scratch.shell_prims.push((si, k, d));
                        if let Some(b) = scratch.prim_on.get_mut(k) {
                            *b = true;
                        }
                    }
                }
                any |= scratch.shell_prims.len() > start;
            }
            if !any {
                continue;
            }
            scratch.prim_list.clear();
            for (k, &on) in scratch.prim_on.iter().enumerate().take(g.alphas.len()) {
                if on {
                    scratch.prim_list.push(k);
                }
            }
            let cx = f64x4::splat(g.center_bohr[0]);
            let cy = f64x4::splat(g.center_bohr[1]);
            let cz = f64x4::splat(g.center_bohr[2]);
            let max_l = g.max_l as usize;
            for v in 0..nvec {
                let dx = px[v] - cx;
                let dy = py[v] - cy;
                let dz = pz[v] - cz;
                let r2 = dx * dx + dy * dy + dz * dz;
                for &k in &scratch.prim_list {
                    if let (Some(e), Some(&s)) = (scratch.exps.get_mut(k), g.neg_alpha_log2e.get(k)) {
                        *e = exp2_neg(f64x4::splat(s) * r2);
                    }
                }
                if max_l > 0 {
                    if let Some(p1) = scratch.pows.get_mut(1) {
                        *p1 = [dx, dy, dz];
                    }
                    for l in 2..=max_l {
                        let prev = scratch.pows.get(l - 1).copied().unwrap_or([f64x4::ZERO; 3]);
                        if let Some(pl) = scratch.pows.get_mut(l) {
                            *pl = [prev[0] * dx, prev[1] * dy, prev[2] * dz];
                        }
                    }
                }
                // Walk the screened (shell, primitive) list shell by shell.
                let mut i = 0;
                let list = &scratch.shell_prims;
                while i < list.len() {
                    let si = list.get(i).map_or(0, |t| t.0);
                    let mut radial = f64x4::ZERO;
                    while let Some(&(s, k, d)) = list.get(i) {
                        if s != si {
                            break;
                        }
                        radial = f64x4::splat(d).mul_add(scratch.exps.get(k).copied().unwrap_or(f64x4::ZERO), radial);
                        i += 1;
                    }
                    let Some(sh) = g.shells.get(si) else { continue };
                    let nm = sh.monomials.len();
                    scratch.terms.clear();
                    for abc in &sh.monomials {
                        let p = &scratch.pows;
                        let t = if sh.l == 0 {
                            radial
                        } else {
                            let fx = p.get(abc[0] as usize).map_or(f64x4::ZERO, |q| q[0]);
                            let fy = p.get(abc[1] as usize).map_or(f64x4::ZERO, |q| q[1]);
                            let fz = p.get(abc[2] as usize).map_or(f64x4::ZERO, |q| q[2]);
                            radial * fx * fy * fz
                        };
                        scratch.terms.push(t);
                    }
                    for (o, wrow) in sh.weights.chunks_exact(nm.max(1)).enumerate() {
                        let mut s = f64x4::ZERO;
                        for (w, t) in wrow.iter().zip(&scratch.terms) {
                            s = f64x4::splat(*w).mul_add(*t, s);
                        }
                        if let Some(a) = acc.get_mut(o * NVEC + v) {
                            *a += s;
                        }
                    }
                }
            }
        }

        // Combine the orbitals into the field.
        for v in 0..nvec {
            let value = match &self.combine {
                Combine::Linear => acc.get(v).copied().unwrap_or(f64x4::ZERO),
                Combine::Quadratic(w) => {
                    let mut s = f64x4::ZERO;
                    for (o, &wo) in w.iter().enumerate() {
                        let a = acc.get(o * NVEC + v).copied().unwrap_or(f64x4::ZERO);
                        s = (f64x4::splat(wo) * a).mul_add(a, s);
                    }
                    s
                }
            };
            let arr = value.to_array();
            for (lane, x) in arr.iter().enumerate() {
                if let Some(o) = out.get_mut(v * 4 + lane).filter(|_| v * 4 + lane < n) {
                    *o = *x;
                }
            }
        }
    }
}

/// Per-thread working memory of [`PreparedOrbitals::eval_block`].
pub struct Scratch {
    acc: Vec<f64x4>,
    prim_on: Vec<bool>,
    prim_list: Vec<usize>,
    exps: Vec<f64x4>,
    shell_prims: Vec<(usize, usize, f64)>,
    pows: Vec<[f64x4; 3]>,
    terms: Vec<f64x4>,
}

/// `max over r in [sqrt(dmin2), sqrt(dmax2)] of r^l exp(-alpha r^2)`.
fn max_rl_gauss(l: u8, alpha: f64, dmin2: f64, dmax2: f64) -> f64 {
    let f = |r2: f64| r2.powf(0.5 * l as f64) * (-alpha * r2).exp();
    if l == 0 {
        return (-alpha * dmin2).exp();
    }
    let peak2 = l as f64 / (2.0 * alpha);
    if peak2 <= dmin2 {
        f(dmin2)
    } else if peak2 >= dmax2 {
        f(dmax2)
    } else {
        f(peak2)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bound_is_max() {
        for l in 0..5u8 {
            for &alpha in &[0.1, 1.0, 30.0] {
                let b = max_rl_gauss(l, alpha, 0.25, 9.0);
                let mut m: f64 = 0.0;
                for i in 0..=1000 {
                    let r = 0.5 + 2.5 * i as f64 / 1000.0;
                    m = m.max(r.powi(l as i32) * (-alpha * r * r).exp());
                }
                assert!(
                    b >= m * (1.0 - 1e-12) && b <= m * 1.01 + 1e-300,
                    "l={l} alpha={alpha}: {b} vs {m}"
                );
            }
        }
    }
}
