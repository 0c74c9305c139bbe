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
//! - Exponents are pre-scaled by `log2(e)`; Gaussians are `2^(-alpha' r^2)` on [`F4`] vectors
//!   (4 points), see [`super::simd`]; every kernel is compiled for baseline x86-64 and for
//!   AVX2+FMA, chosen at run time.
//! - Blocks: [`PreparedOrbitals::eval_tile`] takes an 8x8 tile of one plane of an axis-aligned
//!   lattice, where Gaussians factorise (`exp(-a r^2) = exp(-a dx^2) exp(-a dy^2) exp(-a dz^2)`):
//!   8 + 8 + 1 exponentials per primitive per tile and one multiply-add per point.
//!   [`PreparedOrbitals::eval_block`] takes any 64 points (slanted lattices, point lists).
//! - Screening per block: each primitive has a cutoff radius beyond which
//!   `|d_i| r^l exp(-alpha_i r^2)` times the shell's largest monomial weight sum stays below
//!   [`SCREEN_EPS`]; primitives (and so shells and whole atoms) whose cutoff does not reach the
//!   block's bounding box are skipped. The bound is rigorous (|x^a y^b z^c| <= r^l), so an orbital
//!   value changes by at most `SCREEN_EPS` per skipped primitive: below 1e-10 for hundreds of
//!   skipped primitives, far below the f32 resolution of any orbital's largest values (~1e-8 for a
//!   maximum of 0.1), so isosurfaces, the zero one included, do not move.
//! - Densities (many orbitals): the block's monomial terms (radial factor times monomial, one row
//!   per surviving shell monomial) form a small matrix; the orbitals are the product of the weight
//!   matrix with it (4 orbitals x 8 points per register block); then `sum_o w_o psi_o^2`.
//! - Batches ([`PreparedOrbitals::for_orbitals`]): several single orbitals of one wavefunction
//!   (the HOMO and LUMO of two representations) take the same many-orbital path, each orbital
//!   written to its own output channel, so the Gaussians are evaluated once for all of them.
//!
//! Accuracy: f64 throughout; the only approximation besides screening is `2^x` with relative error
//! below 3e-13.

use super::simd::{F4, exp2_neg};
use crate::compute::{ComputeError, Field};
use crate::model::{Spin, SpinKind, Wavefunction};

mod screening;
pub use screening::Scratch;
use screening::*;

/// Primitive contributions whose bound over a block is below this (atomic units) are skipped.
pub const SCREEN_EPS: f64 = 1e-12;

/// Points in one block (an 8x8 lattice tile); a multiple of 4.
pub const BLOCK: usize = 64;
const NVEC: usize = BLOCK / 4;
/// Edge of a separable tile ([`PreparedOrbitals::eval_tile`]): 8x8 = [`BLOCK`] points.
pub const TILE_EDGE: usize = 8;
/// Most output channels of one preparation ([`PreparedOrbitals::for_orbitals`]).
pub const MAX_CHANNELS: usize = 8;
/// Powers of dx, dy, dz kept per tile: angular momentum up to 7 (k functions).
const MAX_L_TABLE: usize = 8;
/// Most monomials of one shell: (l+1)(l+2)/2 for l = 7.
const MAX_MONOMIALS: usize = 36;

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
    /// Every orbital its own output channel (a batch of orbital fields sharing the basis
    /// evaluation): its amplitude, or its square where the flag is set.
    Each(Vec<bool>),
}

#[derive(Clone, Debug)]
struct PreparedShell {
    l: u8,
    /// (index into the atom's distinct exponents, radial coefficient d_i, squared cutoff radius):
    /// beyond the cutoff `|d_i| r^l exp(-alpha_i r^2) * weight_bound < SCREEN_EPS`.
    prims: Vec<(usize, f64, f64)>,
    /// The monomials this shell's functions use.
    monomials: Vec<[u8; 3]>,
    /// Row-major `[n_orbitals][monomials.len()]`.
    weights: Vec<f64>,
    /// Row of the shell's first monomial in [`PreparedOrbitals::wg`].
    row0: usize,
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
    /// Largest squared cutoff of the group's primitives: blocks farther away skip the atom.
    cutoff2: f64,
}

/// A wavefunction and field prepared for fast evaluation.
#[derive(Clone, Debug)]
pub struct PreparedOrbitals {
    groups: Vec<AtomGroup>,
    n_orbitals: usize,
    combine: Combine,
    /// All shells' monomial weights as `[row][n_orbitals rounded up to 4]` (zeros in the padding),
    /// for the many-orbital path: orbitals = this matrix times the block's monomial terms.
    wg: Vec<f64>,
    /// Row stride of `wg`.
    wg_stride: usize,
    /// Rows of `wg`.
    n_rows: usize,
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
        Field::QmPotential => Err(ComputeError::WrongInput(
            field.clone(),
            "the nuclear-attraction integrals of compute::cpu::qm_esp, not orbitals",
        )),
        Field::MolSurf => Err(ComputeError::WrongInput(
            field.clone(),
            "atoms with radii, not orbitals",
        )),
    }
}

impl PreparedOrbitals {
    /// Prepares `field` (an orbital or density field) of `wf`.
    pub fn new(wf: &Wavefunction, field: &Field) -> Result<PreparedOrbitals, ComputeError> {
        let (rows, combine) = select_orbitals(wf, field)?;
        Self::from_rows(wf, field, rows, combine)
    }

    /// Prepares a batch of single-orbital fields (`Field::Orbital`, `Field::OrbitalSquared`) of
    /// `wf`, each its own output channel (at most [`MAX_CHANNELS`]): the Gaussians and monomials
    /// of every point are evaluated once for all of them.
    pub fn for_orbitals(wf: &Wavefunction, fields: &[Field]) -> Result<PreparedOrbitals, ComputeError> {
        let first = fields
            .first()
            .ok_or_else(|| ComputeError::BadInput("an empty batch of orbitals".into()))?;
        if fields.len() > MAX_CHANNELS {
            return Err(ComputeError::BadInput(format!(
                "{} orbitals in one batch, at most {MAX_CHANNELS}",
                fields.len()
            )));
        }
        let mut rows = Vec::with_capacity(fields.len());
        let mut squared = Vec::with_capacity(fields.len());
        for f in fields {
            let (mut r, combine) = select_orbitals(wf, f)?;
            match (f, r.pop()) {
                (Field::Orbital { .. } | Field::OrbitalSquared { .. }, Some(row)) if r.is_empty() => {
                    rows.push(row);
                    squared.push(combine != Combine::Linear);
                }
                _ => return Err(ComputeError::WrongInput(f.clone(), "single orbitals in a batch")),
            }
        }
        Self::from_rows(wf, first, rows, Combine::Each(squared))
    }

    /// Output channels per point: one, or one per orbital of a batch ([`Self::for_orbitals`]).
    pub fn n_channels(&self) -> usize {
        match &self.combine {
            Combine::Each(s) => s.len().max(1),
            _ => 1,
        }
    }

    fn from_rows(
        wf: &Wavefunction,
        field: &Field,
        rows: Vec<Vec<f64>>,
        combine: Combine,
    ) -> Result<PreparedOrbitals, ComputeError> {
        let n_orbitals = rows.len();
        let mut groups: Vec<AtomGroup> = Vec::new();
        let mut offset = 0usize;
        for shell in &wf.basis.shells {
            let n_fn = shell.n_functions();
            let terms = angular_terms(shell.l, shell.pure);
            let radial = radial_coefficients(shell);
            if usize::from(shell.l) >= MAX_L_TABLE {
                return Err(ComputeError::WrongInput(
                    field.clone(),
                    "shells of angular momentum 7 (k) or lower",
                ));
            }
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
            if nm > MAX_MONOMIALS {
                return Err(ComputeError::WrongInput(
                    field.clone(),
                    "shells of at most 36 monomials",
                ));
            }
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
                        cutoff2: 0.0,
                    });
                    groups.len() - 1
                }
            };
            let Some(group) = groups.get_mut(gi) else { continue };
            let mut prims = Vec::new();
            for (&alpha, &d) in shell.exponents.iter().zip(&radial) {
                if d == 0.0 || !d.is_finite() || !alpha.is_finite() || alpha <= 0.0 {
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
                let r2 = cutoff2(shell.l, alpha, d.abs() * weight_bound);
                if r2 >= 0.0 {
                    prims.push((k, d, r2));
                    group.cutoff2 = group.cutoff2.max(r2);
                }
            }
            group.max_l = group.max_l.max(shell.l);
            group.shells.push(PreparedShell {
                l: shell.l,
                prims,
                monomials,
                weights,
                row0: 0,
            });
        }
        // Number the monomial rows and gather the weights orbital-contiguously.
        let wg_stride = n_orbitals.div_ceil(4) * 4;
        let mut n_rows = 0;
        for g in &mut groups {
            for sh in &mut g.shells {
                sh.row0 = n_rows;
                n_rows += sh.monomials.len();
            }
        }
        let mut wg = vec![0.0; n_rows * wg_stride];
        for g in &groups {
            for sh in &g.shells {
                let nm = sh.monomials.len();
                for (o, wrow) in sh.weights.chunks_exact(nm.max(1)).enumerate() {
                    for (m, &w) in wrow.iter().enumerate() {
                        if let Some(slot) = wg.get_mut((sh.row0 + m) * wg_stride + o) {
                            *slot = w;
                        }
                    }
                }
            }
        }
        Ok(PreparedOrbitals {
            groups,
            n_orbitals,
            combine,
            wg,
            wg_stride,
            n_rows,
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
            acc: vec![F4::ZERO; self.n_orbitals.max(1) * NVEC],
            ex: vec![F4::ZERO; 2 * max_prims],
            tmat: vec![F4::ZERO; if self.n_orbitals > 1 { self.n_rows * NVEC } else { 0 }],
            rows: Vec::with_capacity(self.n_rows),
            eyz: vec![0.0; TILE_EDGE * max_prims],
            prim_on: vec![false; max_prims],
            prim_list: Vec::with_capacity(max_prims),
            exps: vec![F4::ZERO; max_prims],
            shell_prims: Vec::new(),
            pows: vec![[F4::ONE; 3]; max_l + 1],
        }
    }

    /// Evaluates the field at up to [`BLOCK`] points (bohr), writing one value per point into `out`
    /// (channel `c` of a batch at `out[c * BLOCK..]`).
    ///
    /// On x86-64 CPUs with AVX2 and FMA the same code runs compiled for them (chosen at run time;
    /// the default build targets baseline x86-64, where F4 is two SSE2 halves).
    pub fn eval_block(&self, scratch: &mut Scratch, points: &[[f64; 3]], out: &mut [f64]) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports AVX2 and FMA, checked just above.
            unsafe { self.eval_block_avx2(scratch, points, out) };
            return;
        }
        self.eval_block_any::<false>(scratch, points, out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn eval_block_avx2(&self, scratch: &mut Scratch, points: &[[f64; 3]], out: &mut [f64]) {
        self.eval_block_any::<true>(scratch, points, out);
    }

    #[inline(always)]
    fn eval_block_any<const FMA: bool>(&self, scratch: &mut Scratch, points: &[[f64; 3]], out: &mut [f64]) {
        let n = points.len().min(BLOCK).min(out.len());
        if n == 0 {
            return;
        }
        // Pack coordinates, padding with the last point.
        let mut px = [F4::ZERO; NVEC];
        let mut py = [F4::ZERO; NVEC];
        let mut pz = [F4::ZERO; NVEC];
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
            px[v] = F4::from(xs);
            py[v] = F4::from(ys);
            pz[v] = F4::from(zs);
        }
        let mut acc_store = std::mem::take(&mut scratch.acc);
        let acc = &mut acc_store;
        // Monomial terms of one shell (overwritten per shell; only the first len() are read).
        let mut terms = [F4::ZERO; MAX_MONOMIALS];
        let nacc = self.n_orbitals * NVEC;
        for a in acc.iter_mut().take(nacc) {
            *a = F4::ZERO;
        }

        for g in &self.groups {
            if !screen(g, lo, hi, scratch) {
                continue;
            }
            let cx = F4::splat(g.center_bohr[0]);
            let cy = F4::splat(g.center_bohr[1]);
            let cz = F4::splat(g.center_bohr[2]);
            let max_l = g.max_l as usize;
            for v in 0..nvec {
                let dx = px[v] - cx;
                let dy = py[v] - cy;
                let dz = pz[v] - cz;
                let r2 = dx * dx + dy * dy + dz * dz;
                for &k in &scratch.prim_list {
                    if let (Some(e), Some(&s)) = (scratch.exps.get_mut(k), g.neg_alpha_log2e.get(k)) {
                        *e = exp2_neg::<FMA>(F4::splat(s) * r2);
                    }
                }
                if max_l > 0 {
                    if let Some(p1) = scratch.pows.get_mut(1) {
                        *p1 = [dx, dy, dz];
                    }
                    for l in 2..=max_l {
                        let prev = scratch.pows.get(l - 1).copied().unwrap_or([F4::ZERO; 3]);
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
                    let mut radial = F4::ZERO;
                    while let Some(&(s, k, d)) = list.get(i) {
                        if s != si {
                            break;
                        }
                        radial = F4::splat(d).mul_add::<FMA>(scratch.exps.get(k).copied().unwrap_or(F4::ZERO), radial);
                        i += 1;
                    }
                    let Some(sh) = g.shells.get(si) else { continue };
                    let nm = sh.monomials.len();
                    for (slot, abc) in terms.iter_mut().zip(&sh.monomials) {
                        let p = &scratch.pows;
                        let t = if sh.l == 0 {
                            radial
                        } else {
                            let fx = p.get(abc[0] as usize).map_or(F4::ZERO, |q| q[0]);
                            let fy = p.get(abc[1] as usize).map_or(F4::ZERO, |q| q[1]);
                            let fz = p.get(abc[2] as usize).map_or(F4::ZERO, |q| q[2]);
                            radial * fx * fy * fz
                        };
                        *slot = t;
                    }
                    for (o, wrow) in sh.weights.chunks_exact(nm.max(1)).enumerate() {
                        let mut s = F4::ZERO;
                        for (w, t) in wrow.iter().zip(&terms) {
                            s = F4::splat(*w).mul_add::<FMA>(*t, s);
                        }
                        if let Some(a) = acc.get_mut(o * NVEC + v) {
                            *a += s;
                        }
                    }
                }
            }
        }

        self.combine_into::<FMA>(acc, nvec, n, out);
        scratch.acc = acc_store;
    }

    /// `out[..n]` from the accumulated orbital values of `nvec` vectors.
    /// With several channels ([`Combine::Each`]), channel `c` goes to `out[c * BLOCK..]`.
    #[inline(always)]
    fn combine_into<const FMA: bool>(&self, acc: &[F4], nvec: usize, n: usize, out: &mut [f64]) {
        let put = |out: &mut [f64], base: usize, v: usize, value: F4| {
            for (lane, x) in value.to_array().iter().enumerate() {
                if let Some(o) = out.get_mut(base + v * 4 + lane).filter(|_| v * 4 + lane < n) {
                    *o = *x;
                }
            }
        };
        for v in 0..nvec {
            match &self.combine {
                Combine::Linear => put(out, 0, v, acc.get(v).copied().unwrap_or(F4::ZERO)),
                Combine::Quadratic(w) => {
                    let mut s = F4::ZERO;
                    for (o, &wo) in w.iter().enumerate() {
                        let a = acc.get(o * NVEC + v).copied().unwrap_or(F4::ZERO);
                        s = (F4::splat(wo) * a).mul_add::<FMA>(a, s);
                    }
                    put(out, 0, v, s);
                }
                Combine::Each(squared) => {
                    for (o, &sq) in squared.iter().enumerate() {
                        let a = acc.get(o * NVEC + v).copied().unwrap_or(F4::ZERO);
                        put(out, o * BLOCK, v, if sq { a * a } else { a });
                    }
                }
            }
        }
    }

    /// Evaluates the field on an axis-aligned tile of up to 8x8 points of one plane: point (i, j)
    /// at `corner + (i * step_x, j * step_y, 0)`, `i < nx <= 8`, `j < ny <= 8`; values go to
    /// `out[j * nx + i]` (channel `c` of a batch at `out[c * BLOCK + j * nx + i]`). Gaussians
    /// factorise along the axes, so each primitive needs 8 + 8 + 1 exponentials per tile instead of
    /// 64, and one multiply-add per point.
    pub fn eval_tile(
        &self,
        scratch: &mut Scratch,
        corner: [f64; 3],
        step: [f64; 2],
        nx: usize,
        ny: usize,
        out: &mut [f64],
    ) {
        #[cfg(target_arch = "x86_64")]
        if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
            // SAFETY: the CPU supports AVX2 and FMA, checked just above.
            unsafe { self.eval_tile_avx2(scratch, corner, step, nx, ny, out) };
            return;
        }
        self.eval_tile_any::<false>(scratch, corner, step, nx, ny, out);
    }

    #[cfg(target_arch = "x86_64")]
    #[target_feature(enable = "avx2,fma")]
    unsafe fn eval_tile_avx2(
        &self,
        scratch: &mut Scratch,
        corner: [f64; 3],
        step: [f64; 2],
        nx: usize,
        ny: usize,
        out: &mut [f64],
    ) {
        self.eval_tile_any::<true>(scratch, corner, step, nx, ny, out);
    }

    #[inline(always)]
    fn eval_tile_any<const FMA: bool>(
        &self,
        scratch: &mut Scratch,
        corner: [f64; 3],
        step: [f64; 2],
        nx: usize,
        ny: usize,
        out: &mut [f64],
    ) {
        let nx = nx.clamp(1, TILE_EDGE);
        let ny = ny.clamp(1, TILE_EDGE);
        // x of the 8 columns (padded with the last one), y of the rows, z of the plane.
        let xs: [f64; TILE_EDGE] = std::array::from_fn(|i| corner[0] + i.min(nx - 1) as f64 * step[0]);
        let ys: [f64; TILE_EDGE] = std::array::from_fn(|j| corner[1] + j.min(ny - 1) as f64 * step[1]);
        let z = corner[2];
        let px = [
            F4::from([xs[0], xs[1], xs[2], xs[3]]),
            F4::from([xs[4], xs[5], xs[6], xs[7]]),
        ];
        let mut lo = [corner[0], corner[1], z];
        let mut hi = [xs[nx - 1], ys[ny - 1], z];
        for k in 0..2 {
            if lo[k] > hi[k] {
                std::mem::swap(&mut lo[k], &mut hi[k]);
            }
        }
        let mut acc_store = std::mem::take(&mut scratch.acc);
        let acc = &mut acc_store;
        // Monomial terms of one shell (overwritten per shell; only the first len() are read).
        let mut terms = [F4::ZERO; MAX_MONOMIALS];
        let many = self.n_orbitals > 1 && scratch.tmat.len() >= self.n_rows * NVEC;
        scratch.rows.clear();
        for a in acc.iter_mut().take(self.n_orbitals * NVEC) {
            *a = F4::ZERO;
        }
        for g in &self.groups {
            if !screen(g, lo, hi, scratch) {
                continue;
            }
            let [cx, cy, cz] = g.center_bohr;
            let dxv = [px[0] - F4::splat(cx), px[1] - F4::splat(cx)];
            let dx2 = [dxv[0] * dxv[0], dxv[1] * dxv[1]];
            let dys: [f64; TILE_EDGE] = std::array::from_fn(|j| ys[j] - cy);
            let dy2 = [
                F4::from([dys[0] * dys[0], dys[1] * dys[1], dys[2] * dys[2], dys[3] * dys[3]]),
                F4::from([dys[4] * dys[4], dys[5] * dys[5], dys[6] * dys[6], dys[7] * dys[7]]),
            ];
            let dz = z - cz;
            let dz2 = F4::splat(dz * dz);
            // Per needed primitive: exp along x (2 vectors), and exp along y times exp along z (8 rows).
            for &k in &scratch.prim_list {
                let sk = F4::splat(g.neg_alpha_log2e.get(k).copied().unwrap_or(0.0));
                let ez = exp2_neg::<FMA>(sk * dz2);
                let ey = [exp2_neg::<FMA>(sk * dy2[0]) * ez, exp2_neg::<FMA>(sk * dy2[1]) * ez];
                if let Some(e) = scratch.ex.get_mut(2 * k..2 * k + 2) {
                    e[0] = exp2_neg::<FMA>(sk * dx2[0]);
                    e[1] = exp2_neg::<FMA>(sk * dx2[1]);
                }
                if let Some(e) = scratch.eyz.get_mut(TILE_EDGE * k..TILE_EDGE * (k + 1)) {
                    let a = ey[0].to_array();
                    let b = ey[1].to_array();
                    e[..4].copy_from_slice(&a);
                    e[4..].copy_from_slice(&b);
                }
            }
            // Powers of dx (vectors), dy (per row) and dz.
            let max_l = g.max_l as usize;
            let mut xpow = [[F4::ONE; 2]; MAX_L_TABLE];
            let mut ypow = [[1.0f64; TILE_EDGE]; MAX_L_TABLE];
            let mut zpow = [1.0f64; MAX_L_TABLE];
            for l in 1..=max_l.min(MAX_L_TABLE - 1) {
                xpow[l] = [xpow[l - 1][0] * dxv[0], xpow[l - 1][1] * dxv[1]];
                ypow[l] = std::array::from_fn(|j| ypow[l - 1][j] * dys[j]);
                zpow[l] = zpow[l - 1] * dz;
            }
            let row_start = scratch.rows.len();
            let mut row_end = row_start;
            for j in 0..ny {
                for v in 0..2 {
                    let vec_index = 2 * j + v;
                    let mut row = row_start;
                    let mut i = 0;
                    let list = &scratch.shell_prims;
                    while i < list.len() {
                        let si = list.get(i).map_or(0, |t| t.0);
                        let mut radial = F4::ZERO;
                        while let Some(&(s, k, d)) = list.get(i) {
                            if s != si {
                                break;
                            }
                            let w = d * scratch.eyz.get(TILE_EDGE * k + j).copied().unwrap_or(0.0);
                            let e = scratch.ex.get(2 * k + v).copied().unwrap_or(F4::ZERO);
                            radial = F4::splat(w).mul_add::<FMA>(e, radial);
                            i += 1;
                        }
                        let Some(sh) = g.shells.get(si) else { continue };
                        let nm = sh.monomials.len();
                        for (slot, abc) in terms.iter_mut().zip(&sh.monomials) {
                            let t = if sh.l == 0 {
                                radial
                            } else {
                                let (a, b, c) = (abc[0] as usize, abc[1] as usize, abc[2] as usize);
                                let fyz = ypow.get(b).map_or(0.0, |r| r[j]) * zpow.get(c).copied().unwrap_or(0.0);
                                let fx = xpow.get(a).map_or(F4::ZERO, |r| r[v]);
                                radial * fx * F4::splat(fyz)
                            };
                            *slot = t;
                        }
                        if many {
                            // Store the terms; the orbitals come from one matrix product below.
                            let base = vec_index * self.n_rows + row;
                            if let Some(dst) = scratch.tmat.get_mut(base..base + nm) {
                                dst.copy_from_slice(&terms[..nm]);
                            }
                            if vec_index == 0 {
                                scratch.rows.extend(sh.row0..sh.row0 + nm);
                            }
                            row += nm;
                        } else {
                            for (o, wrow) in sh.weights.chunks_exact(nm.max(1)).enumerate() {
                                let mut s = F4::ZERO;
                                for (w, t) in wrow.iter().zip(&terms) {
                                    s = F4::splat(*w).mul_add::<FMA>(*t, s);
                                }
                                if let Some(a) = acc.get_mut(o * NVEC + vec_index) {
                                    *a += s;
                                }
                            }
                        }
                    }
                    row_end = row;
                }
            }
            debug_assert!(!many || row_end == scratch.rows.len());
        }
        if many {
            self.orbitals_from_terms::<FMA>(&scratch.tmat, &scratch.rows, 2 * ny, acc);
        }
        // Vectors are rows of 8: 2 per row; compact to rows of nx on the way out.
        let mut row = [0.0f64; TILE_EDGE];
        let mut tmp = [0.0f64; BLOCK * MAX_CHANNELS];
        self.combine_into::<FMA>(acc, 2 * ny, TILE_EDGE * ny, &mut tmp);
        scratch.acc = acc_store;
        for c in 0..self.n_channels() {
            for j in 0..ny {
                if let Some(src) = tmp.get(c * BLOCK + TILE_EDGE * j..c * BLOCK + TILE_EDGE * j + nx) {
                    row[..nx].copy_from_slice(src);
                }
                if let Some(dst) = out.get_mut(c * BLOCK + j * nx..c * BLOCK + (j + 1) * nx) {
                    dst.copy_from_slice(&row[..nx]);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests;
