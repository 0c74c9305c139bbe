//! Screening and accumulation of the CPU orbital engine: per-tile atom-group screening, the shells' cutoff radii, the scratch buffers and the contraction of weighted Gaussians into orbital values.

use super::*;

impl PreparedOrbitals {
    /// `acc[o][v] = sum over active rows r of wg[rows[r]][o] * tmat[v][r]` for `v < nvec`: the
    /// orbitals of a block as a small matrix product, 4 orbitals x 2 vectors per register block.
    #[inline(always)]
    pub(super) fn orbitals_from_terms<const FMA: bool>(
        &self,
        tmat: &[F4],
        rows: &[usize],
        nvec: usize,
        acc: &mut [F4],
    ) {
        let stride = self.wg_stride;
        let nr = self.n_rows;
        for ob in (0..self.n_orbitals).step_by(4) {
            for v0 in (0..nvec).step_by(2) {
                let (Some(t0), Some(t1)) = (
                    tmat.get(v0 * nr..v0 * nr + rows.len()),
                    tmat.get((v0 + 1) * nr..(v0 + 1) * nr + rows.len()),
                ) else {
                    continue;
                };
                let mut a = [[F4::ZERO; 2]; 4];
                for ((&r, &x0), &x1) in rows.iter().zip(t0).zip(t1) {
                    let Some(w) = wg_block(&self.wg, r * stride + ob) else {
                        continue;
                    };
                    for (ai, &wi) in a.iter_mut().zip(&w) {
                        let ws = F4::splat(wi);
                        ai[0] = ws.mul_add::<FMA>(x0, ai[0]);
                        ai[1] = ws.mul_add::<FMA>(x1, ai[1]);
                    }
                }
                for (i, ai) in a.iter().enumerate() {
                    let o = ob + i;
                    if o >= self.n_orbitals {
                        break;
                    }
                    if let Some(dst) = acc.get_mut(o * NVEC + v0..o * NVEC + v0 + 2) {
                        dst[0] = ai[0];
                        dst[1] = ai[1];
                    }
                }
            }
        }
    }
}

/// Four consecutive weights starting at `at`.
#[inline(always)]
pub(super) fn wg_block(wg: &[f64], at: usize) -> Option<[f64; 4]> {
    wg.get(at..at + 4).and_then(|s| s.try_into().ok())
}

/// Screens the primitives of atom group `g` for a block inside the box `lo..hi`: fills
/// `scratch.shell_prims` (surviving (shell, primitive, d) in shell order) and `scratch.prim_list`
/// (distinct exponents needed). Returns false when nothing survives.
#[inline(always)]
pub(super) fn screen(g: &AtomGroup, lo: [f64; 3], hi: [f64; 3], scratch: &mut Scratch) -> bool {
    // Nearest distance from the atom to the block's bounding box.
    let mut dmin2 = 0.0;
    for k in 0..3 {
        let c = g.center_bohr[k];
        let near = (lo[k] - c).max(c - hi[k]).max(0.0);
        dmin2 += near * near;
    }
    scratch.shell_prims.clear();
    if dmin2 > g.cutoff2 {
        return false;
    }
    scratch.prim_on.iter_mut().for_each(|b| *b = false);
    for (si, sh) in g.shells.iter().enumerate() {
        for &(k, d, r2) in &sh.prims {
            if dmin2 <= r2 {
                scratch.shell_prims.push((si, k, d));
                if let Some(b) = scratch.prim_on.get_mut(k) {
                    *b = true;
                }
            }
        }
    }
    if scratch.shell_prims.is_empty() {
        return false;
    }
    scratch.prim_list.clear();
    for (k, &on) in scratch.prim_on.iter().enumerate().take(g.alphas.len()) {
        if on {
            scratch.prim_list.push(k);
        }
    }
    true
}

/// Per-thread working memory of [`PreparedOrbitals::eval_block`].
pub struct Scratch {
    pub(super) acc: Vec<F4>,
    /// Many-orbital path: monomial terms of the block, `[vector][active row]`, and the active rows.
    pub(super) tmat: Vec<F4>,
    pub(super) rows: Vec<usize>,
    /// Separable tiles: exp along x per primitive (2 vectors each), exp along y times z (8 rows each).
    pub(super) ex: Vec<F4>,
    pub(super) eyz: Vec<f64>,
    pub(super) prim_on: Vec<bool>,
    pub(super) prim_list: Vec<usize>,
    pub(super) exps: Vec<F4>,
    pub(super) shell_prims: Vec<(usize, usize, f64)>,
    pub(super) pows: Vec<[F4; 3]>,
}

/// Squared radius beyond which `scale * r^l * exp(-alpha r^2) < SCREEN_EPS` (the outer root), or
/// -1 when the function stays below the threshold everywhere. Screening a block by
/// `nearest distance^2 <= cutoff2` keeps every primitive whose bound over the block reaches the
/// threshold (and, near the centre of l > 0 shells, a few that do not: conservative).
pub(super) fn cutoff2(l: u8, alpha: f64, scale: f64) -> f64 {
    if !(alpha > 0.0 && scale > 0.0 && alpha.is_finite() && scale.is_finite()) {
        return -1.0;
    }
    let ln_eps = SCREEN_EPS.ln();
    let g = |r2: f64| scale.ln() + 0.5 * f64::from(l) * r2.max(1e-300).ln() - alpha * r2 - ln_eps;
    let peak2 = f64::from(l) / (2.0 * alpha);
    let start = if l == 0 { 0.0 } else { peak2 };
    if g(start) < 0.0 && (l > 0 || scale < SCREEN_EPS) {
        return -1.0;
    }
    // g decreases beyond the peak: bracket the root, then bisect (bounded loops).
    let mut lo = start;
    let mut hi = start + 1.0 / alpha;
    let mut n = 0;
    while g(hi) >= 0.0 && n < 200 {
        lo = hi;
        hi = 2.0 * hi + 1.0;
        n += 1;
    }
    for _ in 0..64 {
        let mid = 0.5 * (lo + hi);
        if g(mid) >= 0.0 {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    hi
}

/// `max over r in [sqrt(dmin2), sqrt(dmax2)] of r^l exp(-alpha r^2)`.
#[cfg(test)]
pub(super) fn max_rl_gauss(l: u8, alpha: f64, dmin2: f64, dmax2: f64) -> f64 {
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
