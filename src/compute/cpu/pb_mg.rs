//! Geometric multigrid for the Poisson-Boltzmann operator of the CPU engine: one V-cycle is the
//! preconditioner of the conjugate gradients in [`super::pb`].
//!
//! Owns [`Operator`] (the seven-point operator `-div(eps grad) / h^2 + diag_extra` on one lattice
//! with zero values on the faces: the form of a correction) and [`Multigrid`] (the hierarchy and
//! its V-cycle). Coarse lattices take every other point (a lattice coarsens while every axis has
//! an odd number of points, at least 9); their staggered dielectric is the harmonic mean of the two
//! fine staggered values along the axis, averaged over the 3 x 3 neighbours across it with
//! full-weighting weights (the harmonic-averaged coarse operator of Alcouffe et al., SIAM J. Sci.
//! Stat. Comput. 2, 430 (1981)); the diagonal term restricts by full weighting. Residuals restrict
//! by full weighting, corrections prolong trilinearly (its transpose over 8). The smoother is
//! red-black Gauss-Seidel, red then black before the coarse correction and black then red after,
//! so the V-cycle is a symmetric positive definite preconditioner. Planes in parallel (rayon).

use rayon::prelude::*;

/// Gauss-Seidel sweeps before and after each coarse correction.
const SWEEPS: usize = 1;
/// Sweeps on the coarsest lattice.
const COARSEST_SWEEPS: usize = 24;

/// The operator on one lattice.
pub struct Operator {
    pub dims: [usize; 3],
    /// 1 / h^2 (1/Angstrom^2).
    pub ih2: f64,
    /// Dielectric on the x-, y- and z-staggered lattices (index of the lower point).
    pub eps: [Vec<f64>; 3],
    /// The diagonal term at the lattice points (1/Angstrom^2).
    pub extra: Vec<f64>,
    /// The operator's diagonal at the lattice points.
    diag: Vec<f64>,
}

#[inline]
fn interior(dims: [usize; 3], i: usize, j: usize, k: usize) -> bool {
    i > 0 && j > 0 && k > 0 && i + 1 < dims[0] && j + 1 < dims[1] && k + 1 < dims[2]
}

#[inline]
fn g(v: &[f64], q: usize) -> f64 {
    v.get(q).copied().unwrap_or(0.0)
}

impl Operator {
    pub fn new(dims: [usize; 3], spacing_angstrom: f64, eps: [Vec<f64>; 3], extra: Vec<f64>) -> Operator {
        let ih2 = 1.0 / (spacing_angstrom * spacing_angstrom);
        let [nx, ny, _] = dims;
        let plane = nx * ny;
        let [ex, ey, ez] = &eps;
        let diag = (0..dims.iter().product::<usize>())
            .into_par_iter()
            .map(|p| {
                let (i, j, k) = (p % nx, (p / nx) % ny, p / plane.max(1));
                if !interior(dims, i, j, k) {
                    return 1.0;
                }
                (g(ex, p) + g(ex, p - 1) + g(ey, p) + g(ey, p - nx) + g(ez, p) + g(ez, p - plane)) * ih2 + g(&extra, p)
            })
            .collect();
        Operator {
            dims,
            ih2,
            eps,
            extra,
            diag,
        }
    }

    pub fn n_points(&self) -> usize {
        self.dims.iter().product()
    }

    /// The rows around interior row (j, k): u at (., j, k), (., j-1, k), (., j+1, k), (., j, k-1),
    /// (., j, k+1); eps_x, eps_y and eps_z at (., j, k); eps_y at (., j-1, k); eps_z at (., j, k-1).
    #[allow(clippy::type_complexity)]
    fn rows<'a>(&'a self, u: &'a [f64], j: usize, k: usize) -> Option<([&'a [f64]; 5], [&'a [f64]; 5])> {
        let [nx, ny, _] = self.dims;
        let plane = nx * ny;
        let p0 = nx * (j + ny * k);
        let row = |v: &'a [f64], start: usize| v.get(start..start + nx);
        let [ex, ey, ez] = &self.eps;
        Some((
            [
                row(u, p0)?,
                row(u, p0 - nx)?,
                row(u, p0 + nx)?,
                row(u, p0 - plane)?,
                row(u, p0 + plane)?,
            ],
            [
                row(ex, p0)?,
                row(ey, p0)?,
                row(ez, p0)?,
                row(ey, p0 - nx)?,
                row(ez, p0 - plane)?,
            ],
        ))
    }

    /// `out = A u` at the interior points, zero on the faces (u's face values are used as given).
    pub fn apply(&self, u: &[f64], out: &mut [f64]) {
        let [nx, ny, nz] = self.dims;
        let plane = nx * ny;
        out.par_chunks_mut(plane.max(1)).enumerate().for_each(|(k, slab)| {
            slab.iter_mut().for_each(|v| *v = 0.0);
            if k == 0 || k + 1 >= nz {
                return;
            }
            for j in 1..ny.saturating_sub(1) {
                let (Some(([c, s, n, d, up], [ex, ey, ez, eys, ezd])), Some(dst), Some(dg)) = (
                    self.rows(u, j, k),
                    slab.get_mut(nx * j..nx * (j + 1)),
                    self.diag.get(nx * (j + ny * k)..nx * (j + ny * k) + nx),
                ) else {
                    continue;
                };
                for i in 1..nx - 1 {
                    let nb = ex[i] * c[i + 1]
                        + ex[i - 1] * c[i - 1]
                        + ey[i] * n[i]
                        + eys[i] * s[i]
                        + ez[i] * up[i]
                        + ezd[i] * d[i];
                    dst[i] = dg[i] * c[i] - nb * self.ih2;
                }
            }
        });
    }

    /// One Gauss-Seidel half sweep over the points of `color` ((i + j + k) % 2): reads `u`,
    /// writes every point into `next` (the others copied).
    fn half_sweep(&self, f: &[f64], u: &[f64], next: &mut [f64], color: usize) {
        let [nx, ny, nz] = self.dims;
        let plane = nx * ny;
        next.par_chunks_mut(plane.max(1)).enumerate().for_each(|(k, slab)| {
            if let Some(src) = u.get(plane * k..plane * (k + 1)) {
                slab.copy_from_slice(src);
            }
            if k == 0 || k + 1 >= nz {
                return;
            }
            for j in 1..ny.saturating_sub(1) {
                let p0 = nx * (j + ny * k);
                let (Some(([c, s, n, d, up], [ex, ey, ez, eys, ezd])), Some(dst), Some(dg), Some(fr)) = (
                    self.rows(u, j, k),
                    slab.get_mut(nx * j..nx * (j + 1)),
                    self.diag.get(p0..p0 + nx),
                    f.get(p0..p0 + nx),
                ) else {
                    continue;
                };
                let first = 1 + (1 + j + k + color) % 2;
                for i in (first..nx - 1).step_by(2) {
                    let nb = ex[i] * c[i + 1]
                        + ex[i - 1] * c[i - 1]
                        + ey[i] * n[i]
                        + eys[i] * s[i]
                        + ez[i] * up[i]
                        + ezd[i] * d[i];
                    dst[i] = (fr[i] + nb * self.ih2) / dg[i];
                }
            }
        });
    }

    /// Symmetric Gauss-Seidel sweeps: colours in `order`.
    fn smooth(&self, f: &[f64], u: &mut Vec<f64>, tmp: &mut Vec<f64>, sweeps: usize, order: [usize; 2]) {
        for _ in 0..sweeps {
            for c in order {
                self.half_sweep(f, u, tmp, c);
                std::mem::swap(u, tmp);
            }
        }
    }

    /// The next coarser operator, or `None` when this lattice does not coarsen.
    fn coarsen(&self) -> Option<Operator> {
        if self.dims.iter().any(|&d| d < 9 || d % 2 == 0) {
            return None;
        }
        let cd: [usize; 3] = self.dims.map(|d| d.div_ceil(2));
        let [nx, ny, nz] = self.dims;
        let [cx, cy, _] = cd;
        let idx = |i: usize, j: usize, k: usize| i + nx * (j + ny * k);
        let w = |o: i64| if o == 0 { 0.5 } else { 0.25 };
        let clamp = |v: i64, n: usize| v.clamp(0, n as i64 - 1) as usize;
        let n_coarse = cd.iter().product::<usize>();
        let eps: [Vec<f64>; 3] = std::array::from_fn(|axis| {
            let e = &self.eps[axis];
            (0..n_coarse)
                .into_par_iter()
                .map(|q| {
                    let c = [q % cx, (q / cx) % cy, q / (cx * cy)];
                    let fine = c.map(|v| 2 * v);
                    if fine[axis] + 2 >= self.dims[axis] {
                        return g(e, idx(fine[0].min(nx - 1), fine[1].min(ny - 1), fine[2].min(nz - 1)));
                    }
                    let (a1, a2) = ((axis + 1) % 3, (axis + 2) % 3);
                    let mut sum = 0.0;
                    for o1 in -1i64..=1 {
                        for o2 in -1i64..=1 {
                            let mut p = fine.map(|v| v as i64);
                            p[a1] += o1;
                            p[a2] += o2;
                            let p0 = [clamp(p[0], nx), clamp(p[1], ny), clamp(p[2], nz)];
                            let mut p1 = p0;
                            p1[axis] += 1;
                            let (e0, e1) = (g(e, idx(p0[0], p0[1], p0[2])), g(e, idx(p1[0], p1[1], p1[2])));
                            sum += w(o1) * w(o2) * 2.0 * e0 * e1 / (e0 + e1);
                        }
                    }
                    sum
                })
                .collect()
        });
        let extra = restrict_full(&self.extra, self.dims, cd, true);
        Some(Operator::new(cd, 2.0 / self.ih2.sqrt(), eps, extra))
    }
}

/// Full-weighting restriction from `fd` to `cd` (every other point). With `clamp_edges` the
/// weights reaching past the lattice take the edge value (coefficients); without, values at the
/// coarse faces are zero (residuals of corrections).
fn restrict_full(v: &[f64], fd: [usize; 3], cd: [usize; 3], clamp_edges: bool) -> Vec<f64> {
    let [nx, ny, nz] = fd;
    let [cx, cy, cz] = cd;
    let mut out = vec![0.0; cd.iter().product::<usize>()];
    let w = [0.25, 0.5, 0.25];
    out.par_chunks_mut((cx * cy).max(1)).enumerate().for_each(|(kc, slab)| {
        if !clamp_edges && (kc == 0 || kc + 1 >= cz) {
            return;
        }
        let mut t = vec![0.0; nx];
        for jc in 0..cy {
            if !clamp_edges && (jc == 0 || jc + 1 >= cy) {
                continue;
            }
            // The 9 fine rows around (2 jc, 2 kc), weighted, summed.
            t.iter_mut().for_each(|x| *x = 0.0);
            for (oz, wz) in w.iter().enumerate() {
                let z = (2 * kc + oz).saturating_sub(1).min(nz - 1);
                for (oy, wy) in w.iter().enumerate() {
                    let y = (2 * jc + oy).saturating_sub(1).min(ny - 1);
                    let start = nx * (y + ny * z);
                    if let Some(row) = v.get(start..start + nx) {
                        t.iter_mut().zip(row).for_each(|(a, b)| *a += wz * wy * b);
                    }
                }
            }
            let Some(dst) = slab.get_mut(cx * jc..cx * (jc + 1)) else {
                continue;
            };
            for (ic, d) in dst.iter_mut().enumerate() {
                if !clamp_edges && (ic == 0 || ic + 1 >= cx) {
                    continue;
                }
                let x = 2 * ic;
                let at = |q: usize| t.get(q.min(nx - 1)).copied().unwrap_or(0.0);
                *d = 0.25 * at(x.saturating_sub(1)) + 0.5 * at(x) + 0.25 * at(x + 1);
            }
        }
    });
    out
}

/// Adds the trilinear interpolation of the coarse `e` (dims `cd`) to the fine `u` (dims `fd`) at
/// the fine interior points.
fn prolong_add(e: &[f64], cd: [usize; 3], u: &mut [f64], fd: [usize; 3]) {
    let [nx, ny, nz] = fd;
    let [cx, cy, _] = cd;
    let plane = nx * ny;
    u.par_chunks_mut(plane.max(1)).enumerate().for_each(|(k, slab)| {
        if k == 0 || k + 1 >= nz {
            return;
        }
        let mut r = vec![0.0; cx];
        for j in 1..ny.saturating_sub(1) {
            // The mean of the (up to) 4 coarse rows around (j / 2, k / 2): an even index is one
            // coarse row (counted twice), an odd one the mean of two.
            r.iter_mut().for_each(|x| *x = 0.0);
            for zc in [k / 2, k.div_ceil(2)] {
                for yc in [j / 2, j.div_ceil(2)] {
                    let start = cx * (yc + cy * zc);
                    if let Some(row) = e.get(start..start + cx) {
                        r.iter_mut().zip(row).for_each(|(a, b)| *a += 0.25 * b);
                    }
                }
            }
            let Some(dst) = slab.get_mut(nx * j..nx * (j + 1)) else {
                continue;
            };
            for (i, d) in dst.iter_mut().enumerate().take(nx - 1).skip(1) {
                let at = |q: usize| r.get(q).copied().unwrap_or(0.0);
                *d += 0.5 * (at(i / 2) + at(i.div_ceil(2)));
            }
        }
    });
}

/// The multigrid hierarchy of one operator.
pub struct Multigrid {
    pub levels: Vec<Operator>,
}

impl Multigrid {
    /// Coarsens `fine` as far as its lattice allows.
    pub fn new(fine: Operator) -> Multigrid {
        let mut levels = vec![fine];
        while let Some(c) = levels.last().and_then(Operator::coarsen) {
            levels.push(c);
        }
        Multigrid { levels }
    }

    /// One V-cycle from zero for `A z = r` (r zero on the faces): the preconditioner.
    pub fn vcycle(&self, r: &[f64]) -> Vec<f64> {
        self.cycle(0, r)
    }

    fn cycle(&self, level: usize, f: &[f64]) -> Vec<f64> {
        let Some(op) = self.levels.get(level) else {
            return vec![0.0; f.len()];
        };
        let n = op.n_points();
        let mut u = vec![0.0; n];
        let mut tmp = vec![0.0; n];
        let Some(coarse) = self.levels.get(level + 1) else {
            op.smooth(f, &mut u, &mut tmp, COARSEST_SWEEPS, [0, 1]);
            op.smooth(f, &mut u, &mut tmp, COARSEST_SWEEPS, [1, 0]);
            return u;
        };
        op.smooth(f, &mut u, &mut tmp, SWEEPS, [0, 1]);
        // Residual, restricted.
        op.apply(&u, &mut tmp);
        tmp.par_iter_mut().zip(f).for_each(|(t, fi)| *t = fi - *t);
        let rc = restrict_full(&tmp, op.dims, coarse.dims, false);
        let ec = self.cycle(level + 1, &rc);
        prolong_add(&ec, coarse.dims, &mut u, op.dims);
        op.smooth(f, &mut u, &mut tmp, SWEEPS, [1, 0]);
        u
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    /// A two-dielectric slab with a screened region: V-cycle-preconditioned residual reduction.
    #[test]
    fn vcycles_reduce_the_residual_fast_on_a_jumping_coefficient() {
        let dims = [33, 33, 33];
        let n = 33 * 33 * 33;
        let eps: [Vec<f64>; 3] =
            std::array::from_fn(|_| (0..n).map(|p| if (p / 33) % 33 < 16 { 2.0 } else { 78.54 }).collect());
        let extra: Vec<f64> = (0..n).map(|p| if p % 33 > 20 { 0.5 } else { 0.0 }).collect();
        let op = Operator::new(dims, 0.5, eps, extra);
        let mg = Multigrid::new(op);
        assert!(mg.levels.len() >= 3);
        let op = &mg.levels[0];
        let mut f = vec![0.0; n];
        f[16 + 33 * (16 + 33 * 16)] = 100.0;
        f[10 + 33 * (20 + 33 * 12)] = -50.0;
        // Stationary iteration u += M^-1 (f - A u).
        let mut u = vec![0.0; n];
        let mut r = f.clone();
        let norm = |v: &[f64]| v.iter().map(|x| x * x).sum::<f64>().sqrt();
        let r0 = norm(&r);
        for _ in 0..8 {
            let z = mg.vcycle(&r);
            u.iter_mut().zip(&z).for_each(|(a, b)| *a += b);
            let mut au = vec![0.0; n];
            op.apply(&u, &mut au);
            r = f.iter().zip(&au).map(|(a, b)| a - b).collect();
        }
        let ratio = norm(&r) / r0;
        assert!(ratio < 1e-4, "{ratio}");
    }
}
