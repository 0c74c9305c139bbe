//! The multilevel summation stages (Hardy, Stone, Schulten 2009), each a `pub` function over plain
//! `f64` slices so that GPU kernels can replace them one at a time.
//!
//! Called by [`super::EspPlan`]'s construction (anterpolation down to the finest lattice potential)
//! and by the CPU engine (interpolation of slabs and points).
//!
//! Lattice layout: level `l` is described by a [`LevelLayout`] (`lo`, `dims`): local point
//! `(i, j, k)` is lattice index `lo + (i, j, k)` and is stored at `i + nx * (j + ny * k)` (x
//! fastest, as [`crate::model::Lattice`]). Lattice index `n` of level `l` sits at
//! `origin + sum_k n_k 2^l v_k`, with `v_k` the finest-level step vectors (axis-aligned for open
//! boundaries, `cell_k / n_k` for periodic cells). Open lattices cover their support and are
//! zero outside; periodic ones have `lo = 0` and every index is taken modulo `dims`, and each
//! coarser level has exactly half the points of the finer one per axis.

use super::kernel::{Mat3, TWO_SCALE, combine, erf, norm, phi_weights, reciprocal, smooth};
use rayon::prelude::*;

/// Where a level's points are: see the module documentation.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct LevelLayout {
    pub lo: [i64; 3],
    pub dims: [usize; 3],
}

impl LevelLayout {
    pub fn len(&self) -> usize {
        self.dims[0].saturating_mul(self.dims[1]).saturating_mul(self.dims[2])
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Storage index of lattice index `n`, wrapped for periodic layouts; `None` outside an open one.
    #[inline]
    pub fn slot(&self, n: [i64; 3], periodic: bool) -> Option<usize> {
        let mut local = [0usize; 3];
        for a in 0..3 {
            let d = self.dims[a] as i64;
            let m = n[a] - self.lo[a];
            let m = if periodic && d > 0 { m.rem_euclid(d) } else { m };
            if m < 0 || m >= d {
                return None;
            }
            local[a] = m as usize;
        }
        Some(local[0] + self.dims[0] * (local[1] + self.dims[1] * local[2]))
    }

    /// The next coarser open layout: every coarse point that restriction reaches from this one.
    pub fn coarser_open(&self) -> LevelLayout {
        let mut lo = [0i64; 3];
        let mut dims = [0usize; 3];
        for a in 0..3 {
            let hi = self.lo[a] + self.dims[a] as i64 - 1;
            let l = -((-(self.lo[a] - 3)).div_euclid(2));
            let h = (hi + 3).div_euclid(2);
            lo[a] = l;
            dims[a] = (h - l + 1).max(0) as usize;
        }
        LevelLayout { lo, dims }
    }
}

/// Anterpolation: spreads charges onto the finest lattice, `q_m = sum_j q_j Phi(t_j - m)` with
/// `Phi` the tensor product of the cubic basis and `t_j` the charges' lattice coordinates
/// (fractional lattice index). `out` (layout `layout`) is overwritten. Charges whose stencil leaves
/// an open lattice lose those weights (the plan sizes lattices so that this never happens).
pub fn anterpolate(layout: &LevelLayout, periodic: bool, coords: &[[f64; 3]], charges: &[f64], out: &mut [f64]) {
    // Charges in chunks spread in parallel, each onto a private lattice, then summed: as many
    // private lattices as threads while they take at most ~1 GiB together (one for small inputs).
    const CHUNK: usize = 1 << 15;
    let n = coords.len().min(charges.len());
    let lattice_bytes = out.len().max(1) * std::mem::size_of::<f64>();
    let parts = rayon::current_num_threads()
        .min((1usize << 30) / lattice_bytes)
        .min(n.div_ceil(CHUNK))
        .max(1);
    if parts == 1 {
        out.iter_mut().for_each(|v| *v = 0.0);
        spread(layout, periodic, &coords[..n], &charges[..n], out);
        return;
    }
    let per = n.div_ceil(parts);
    let partial: Vec<Vec<f64>> = (0..parts)
        .into_par_iter()
        .map(|p| {
            let r = (p * per).min(n)..((p + 1) * per).min(n);
            let mut acc = vec![0.0; out.len()];
            spread(layout, periodic, &coords[r.clone()], &charges[r], &mut acc);
            acc
        })
        .collect();
    out.par_chunks_mut(CHUNK).enumerate().for_each(|(c, dst)| {
        let base = c * CHUNK;
        for (i, o) in dst.iter_mut().enumerate() {
            *o = partial.iter().map(|p| p.get(base + i).copied().unwrap_or(0.0)).sum();
        }
    });
}

/// Adds the anterpolated charges to `out` (serial).
fn spread(layout: &LevelLayout, periodic: bool, coords: &[[f64; 3]], charges: &[f64], out: &mut [f64]) {
    for (t, &q) in coords.iter().zip(charges) {
        let (b0, wx) = phi_weights(t[0]);
        let (b1, wy) = phi_weights(t[1]);
        let (b2, wz) = phi_weights(t[2]);
        for (dk, &z) in wz.iter().enumerate() {
            for (dj, &y) in wy.iter().enumerate() {
                let qyz = q * y * z;
                for (di, &x) in wx.iter().enumerate() {
                    let n = [b0 + di as i64, b1 + dj as i64, b2 + dk as i64];
                    if let Some(s) = layout.slot(n, periodic)
                        && let Some(o) = out.get_mut(s)
                    {
                        *o += qyz * x;
                    }
                }
            }
        }
    }
}

/// Value of a lattice function at lattice coordinates `t` by cubic interpolation; `None` when the
/// stencil leaves an open lattice.
#[inline]
pub fn interpolate_at(e: &[f64], layout: &LevelLayout, periodic: bool, t: [f64; 3]) -> Option<f64> {
    let (b0, wx) = phi_weights(t[0]);
    let (b1, wy) = phi_weights(t[1]);
    let (b2, wz) = phi_weights(t[2]);
    let mut sum = 0.0;
    for (dk, &z) in wz.iter().enumerate() {
        for (dj, &y) in wy.iter().enumerate() {
            let mut row = 0.0;
            for (di, &x) in wx.iter().enumerate() {
                let s = layout.slot([b0 + di as i64, b1 + dj as i64, b2 + dk as i64], periodic)?;
                row += x * e.get(s)?;
            }
            sum += row * y * z;
        }
    }
    Some(sum)
}

fn strides(dims: [usize; 3]) -> [usize; 3] {
    [1, dims[0], dims[0] * dims[1]]
}

#[inline]
fn wrap(m: i64, n: i64, periodic: bool) -> Option<usize> {
    let m = if periodic && n > 0 { m.rem_euclid(n) } else { m };
    if m < 0 || m >= n { None } else { Some(m as usize) }
}

/// One 1-D pass along `axis` (the other two dims of `src` and `dst` are equal), overwriting `dst`.
/// Restriction: `dst[N] = sum_d J_d src[2N + d]`; prolongation: `dst[M] = sum_{N: |M - 2N| <= 3}
/// J_{M-2N} src[N]` (indices global, i.e. with the layouts' `lo`).
#[allow(clippy::too_many_arguments)]
fn axis_pass(
    src: &[f64],
    src_dims: [usize; 3],
    src_lo: i64,
    dst: &mut [f64],
    dst_dims: [usize; 3],
    dst_lo: i64,
    axis: usize,
    periodic: bool,
    restrict: bool,
) {
    let ss = strides(src_dims);
    let ns = src_dims[axis] as i64;
    let plane = dst_dims[0] * dst_dims[1];
    if plane == 0 {
        return;
    }
    // Output planes are independent: parallel over z.
    dst.par_chunks_mut(plane).enumerate().for_each(|(k, dplane)| {
        for j in 0..dst_dims[1] {
            for i in 0..dst_dims[0] {
                let c = [i, j, k];
                let mut base = 0usize;
                for a in 0..3 {
                    if a != axis {
                        base += c[a] * ss[a];
                    }
                }
                let g = c[axis] as i64 + dst_lo;
                let mut acc = 0.0;
                if restrict {
                    for (t, &w) in TWO_SCALE.iter().enumerate() {
                        if w != 0.0
                            && let Some(m) = wrap(2 * g + t as i64 - 3 - src_lo, ns, periodic)
                        {
                            acc += w * src.get(base + m * ss[axis]).copied().unwrap_or(0.0);
                        }
                    }
                } else {
                    let n0 = -((-(g - 3)).div_euclid(2));
                    let n1 = (g + 3).div_euclid(2);
                    for n in n0..=n1 {
                        let w = TWO_SCALE.get((g - 2 * n + 3) as usize).copied().unwrap_or(0.0);
                        if w != 0.0
                            && let Some(m) = wrap(n - src_lo, ns, periodic)
                        {
                            acc += w * src.get(base + m * ss[axis]).copied().unwrap_or(0.0);
                        }
                    }
                }
                if let Some(o) = dplane.get_mut(i + dst_dims[0] * j) {
                    *o = acc;
                }
            }
        }
    });
}

/// Restriction of charges to the next coarser level: `q^{l+1}_n = sum_m J_{m-2n} q^l_m` per axis
/// (separable, x then y then z). `coarse` is overwritten.
pub fn restrict(fine: &[f64], fine_l: &LevelLayout, coarse: &mut [f64], coarse_l: &LevelLayout, periodic: bool) {
    let f = fine_l.dims;
    let c = coarse_l.dims;
    let d1 = [c[0], f[1], f[2]];
    let d2 = [c[0], c[1], f[2]];
    let mut t1 = vec![0.0; d1[0] * d1[1] * d1[2]];
    let mut t2 = vec![0.0; d2[0] * d2[1] * d2[2]];
    axis_pass(fine, f, fine_l.lo[0], &mut t1, d1, coarse_l.lo[0], 0, periodic, true);
    axis_pass(&t1, d1, fine_l.lo[1], &mut t2, d2, coarse_l.lo[1], 1, periodic, true);
    axis_pass(&t2, d2, fine_l.lo[2], coarse, c, coarse_l.lo[2], 2, periodic, true);
}

/// Prolongation, the transpose of [`restrict`]: adds `sum_n J_{m-2n} e^{l+1}_n` to `fine` (z, y, x).
pub fn prolongate(coarse: &[f64], coarse_l: &LevelLayout, fine: &mut [f64], fine_l: &LevelLayout, periodic: bool) {
    let f = fine_l.dims;
    let c = coarse_l.dims;
    let d1 = [c[0], c[1], f[2]];
    let d2 = [c[0], f[1], f[2]];
    let mut t1 = vec![0.0; d1[0] * d1[1] * d1[2]];
    let mut t2 = vec![0.0; d2[0] * d2[1] * d2[2]];
    let mut t3 = vec![0.0; f[0] * f[1] * f[2]];
    axis_pass(coarse, c, coarse_l.lo[2], &mut t1, d1, fine_l.lo[2], 2, periodic, false);
    axis_pass(&t1, d1, coarse_l.lo[1], &mut t2, d2, fine_l.lo[1], 1, periodic, false);
    axis_pass(&t2, d2, coarse_l.lo[0], &mut t3, f, fine_l.lo[0], 0, periodic, false);
    for (o, v) in fine.iter_mut().zip(&t3) {
        *o += v;
    }
}

/// One row of a [`Stencil`]: weights for `dx = dx0 .. dx0 + weights.len()` at `(dy, dz)`.
#[derive(Clone, Debug)]
pub struct StencilRow {
    pub dy: i64,
    pub dz: i64,
    pub dx0: i64,
    pub weights: Vec<f64>,
}

/// The lattice-cutoff kernel of the finest level, `K(d) = g_a(|x_d|) - g_2a(|x_d|)` for
/// `|x_d| < 2a` (`x_d = sum_k d_k v_k`), stored as x rows; level `l` uses `K / 2^l` (the kernels
/// scale exactly that way with the lattice).
#[derive(Clone, Debug)]
pub struct Stencil {
    pub radius: [usize; 3],
    pub rows: Vec<StencilRow>,
}

/// Stencils above this many points are refused (a/h far beyond any useful setting).
pub const MAX_STENCIL_POINTS: usize = 1 << 22;

/// Builds the finest-level [`Stencil`] for step vectors `vectors` (rows, bohr) and splitting
/// distance `a_bohr`; `None` when the vectors are singular or the stencil would be absurdly large.
pub fn cutoff_stencil(vectors: &Mat3, a_bohr: f64) -> Option<Stencil> {
    let w = reciprocal(vectors)?;
    let reach = 2.0 * a_bohr;
    let mut radius = [0usize; 3];
    for k in 0..3 {
        let r = (reach * norm(w[k])).floor();
        if !r.is_finite() || r > 4096.0 {
            return None;
        }
        radius[k] = r as usize;
    }
    let box_points = radius.iter().map(|r| 2 * r + 1).product::<usize>();
    if box_points > MAX_STENCIL_POINTS {
        return None;
    }
    let [rx, ry, rz] = radius.map(|r| r as i64);
    let mut rows = Vec::new();
    for dz in -rz..=rz {
        for dy in -ry..=ry {
            let mut weights: Vec<f64> = (-rx..=rx)
                .map(|dx| {
                    let r = norm(combine(vectors, [dx as f64, dy as f64, dz as f64]));
                    if r < reach {
                        smooth(r, a_bohr) - smooth(r, reach)
                    } else {
                        0.0
                    }
                })
                .collect();
            // Trim the zeros outside the sphere.
            while weights.last() == Some(&0.0) {
                weights.pop();
            }
            let lead = weights.iter().take_while(|w| **w == 0.0).count();
            if lead < weights.len() {
                weights.drain(..lead);
                rows.push(StencilRow {
                    dy,
                    dz,
                    dx0: -rx + lead as i64,
                    weights,
                });
            }
        }
    }
    Some(Stencil { radius, rows })
}

/// Lattice cutoff of one level: `e_m = scale * sum_d K(d) q_{m-d}` over the stencil, for every
/// point of `layout` (`out` overwritten). Open lattices are zero outside; periodic ones wrap (all
/// images, also when the stencil is wider than the lattice). Parallel over z-planes.
pub fn lattice_cutoff(q: &[f64], layout: &LevelLayout, periodic: bool, stencil: &Stencil, scale: f64, out: &mut [f64]) {
    let [nx, ny, nz] = layout.dims;
    let r = stencil.radius;
    let p = [nx + 2 * r[0], ny + 2 * r[1], nz + 2 * r[2]];
    let mut padded = vec![0.0; p[0] * p[1] * p[2]];
    let mut row_nonzero = vec![false; p[1] * p[2]];
    for k in 0..p[2] {
        for j in 0..p[1] {
            let row = j + p[1] * k;
            let mut any = false;
            for i in 0..p[0] {
                let n = [
                    layout.lo[0] + i as i64 - r[0] as i64,
                    layout.lo[1] + j as i64 - r[1] as i64,
                    layout.lo[2] + k as i64 - r[2] as i64,
                ];
                if let Some(s) = layout.slot(n, periodic)
                    && let Some(&v) = q.get(s)
                    && v != 0.0
                    && let Some(dst) = padded.get_mut(i + p[0] * row)
                {
                    *dst = v;
                    any = true;
                }
            }
            if let Some(f) = row_nonzero.get_mut(row) {
                *f = any;
            }
        }
    }
    let plane = nx * ny;
    if plane == 0 {
        return;
    }
    out.par_chunks_mut(plane).enumerate().for_each(|(oz, dst)| {
        dst.iter_mut().for_each(|v| *v = 0.0);
        for (oy, orow) in dst.chunks_mut(nx).enumerate() {
            for sr in &stencil.rows {
                let sz = oz as i64 + r[2] as i64 - sr.dz;
                let sy = oy as i64 + r[1] as i64 - sr.dy;
                if sz < 0 || sy < 0 {
                    continue;
                }
                let row = sy as usize + p[1] * sz as usize;
                if !row_nonzero.get(row).copied().unwrap_or(false) {
                    continue;
                }
                let Some(srow) = padded.get(row * p[0]..(row + 1) * p[0]) else {
                    continue;
                };
                for (t, &w) in sr.weights.iter().enumerate() {
                    let off = r[0] as i64 - (sr.dx0 + t as i64);
                    if off < 0 {
                        continue;
                    }
                    let off = off as usize;
                    let Some(src) = srow.get(off..off + nx) else {
                        continue;
                    };
                    let w = w * scale;
                    for (o, &s) in orow.iter_mut().zip(src) {
                        *o += w * s;
                    }
                }
            }
        }
    });
}

/// Top level, open boundaries: `e_m = sum_n g_b(|x_m - x_n|) q_n` over all points of the
/// coarsest lattice (`vectors` are that level's step vectors, `b_bohr = 2^L a`).
pub fn top_level_open(q: &[f64], layout: &LevelLayout, vectors: &Mat3, b_bohr: f64, out: &mut [f64]) {
    let table = top_open_table(layout, vectors, b_bohr);
    top_level_open_with(q, layout, &table, out);
}

/// The open top level's kernel for every displacement between two points of `layout`: entry
/// `a + kx (b + ky c)` (`kx = 2 nx - 1`, `ky = 2 ny - 1`) holds `g_b` at displacement
/// `(a - (nx - 1), b - (ny - 1), c - (nz - 1))` lattice steps.
pub fn top_open_table(layout: &LevelLayout, vectors: &Mat3, b_bohr: f64) -> Vec<f64> {
    let [nx, ny, nz] = layout.dims;
    let (kx, ky) = (2 * nx.max(1) - 1, 2 * ny.max(1) - 1);
    let kz = 2 * nz.max(1) - 1;
    let mut table = vec![0.0; kx * ky * kz];
    for c in 0..kz {
        for b in 0..ky {
            for a in 0..kx {
                let d = [
                    a as f64 - (nx as f64 - 1.0),
                    b as f64 - (ny as f64 - 1.0),
                    c as f64 - (nz as f64 - 1.0),
                ];
                if let Some(t) = table.get_mut(a + kx * (b + ky * c)) {
                    *t = smooth(norm(combine(vectors, d)), b_bohr);
                }
            }
        }
    }
    table
}

/// [`top_level_open`] with the kernel of [`top_open_table`] given.
pub fn top_level_open_with(q: &[f64], layout: &LevelLayout, table: &[f64], out: &mut [f64]) {
    let [nx, ny, nz] = layout.dims;
    let (kx, ky) = (2 * nx.max(1) - 1, 2 * ny.max(1) - 1);
    let sources: Vec<([usize; 3], f64)> = (0..nz)
        .flat_map(|k| (0..ny).flat_map(move |j| (0..nx).map(move |i| [i, j, k])))
        .zip(q)
        .filter(|(_, v)| **v != 0.0)
        .map(|(c, &v)| (c, v))
        .collect();
    let plane = nx * ny;
    if plane == 0 {
        return;
    }
    out.par_chunks_mut(plane).enumerate().for_each(|(k, dst)| {
        for (idx, o) in dst.iter_mut().enumerate() {
            let (i, j) = (idx % nx, idx / nx);
            let mut acc = 0.0;
            for (s, v) in &sources {
                let a = i + nx - 1 - s[0];
                let b = j + ny - 1 - s[1];
                let c = k + nz - 1 - s[2];
                acc += v * table.get(a + kx * (b + ky * c)).copied().unwrap_or(0.0);
            }
            *o = acc;
        }
    });
}

/// The periodic top-level kernel on a `dims` lattice spanning the cell (rows `cell_bohr`): for
/// each lattice displacement `d` (x fastest), the sum of `g_b` over all periodic images with the
/// k = 0 Fourier term dropped (a neutralising background), by Ewald splitting: real space
/// `g_b(r) - erf(beta r)/r` (which is `erfc(beta r)/r` beyond `b`), reciprocal space
/// `4 pi / V sum_{G != 0} exp(-G^2 / 4 beta^2) / G^2 cos(G.x)`, and `-pi / (beta^2 V)`, with
/// `beta = 4 / b`. This fixes the additive constant of the whole MSM potential to Ewald's (zero
/// mean over the cell for a neutral system). `None` for a singular cell.
pub fn periodic_top_kernel(dims: [usize; 3], cell_bohr: &Mat3, b_bohr: f64) -> Option<Vec<f64>> {
    use std::f64::consts::PI;
    let w = reciprocal(cell_bohr)?;
    let volume = super::kernel::det(cell_bohr).abs();
    let beta = 4.0 / b_bohr;
    let r_max = 1.5 * b_bohr;
    let g_max = 2.0 * beta * 37f64.sqrt();
    let mut images = Vec::new();
    let reach_f: [f64; 3] = std::array::from_fn(|k| (r_max * norm(w[k])).ceil() + 1.0);
    if !reach_f.iter().all(|r| r.is_finite() && *r <= 512.0) {
        return None;
    }
    let reach = reach_f.map(|r| r as i64);
    for c in -reach[2]..=reach[2] {
        for b in -reach[1]..=reach[1] {
            for a in -reach[0]..=reach[0] {
                images.push(combine(cell_bohr, [a as f64, b as f64, c as f64]));
            }
        }
    }
    let mut waves = Vec::new();
    let kreach_f: [f64; 3] = std::array::from_fn(|k| (g_max * norm(cell_bohr[k]) / (2.0 * PI)).ceil());
    if !kreach_f.iter().all(|r| r.is_finite() && *r <= 512.0) {
        return None;
    }
    let kreach = kreach_f.map(|r| r as i64);
    for c in -kreach[2]..=kreach[2] {
        for b in -kreach[1]..=kreach[1] {
            for a in -kreach[0]..=kreach[0] {
                if a == 0 && b == 0 && c == 0 {
                    continue;
                }
                let g = combine(&w, [a as f64, b as f64, c as f64]).map(|x| 2.0 * PI * x);
                let g2 = super::kernel::dot(g, g);
                if g2 <= g_max * g_max {
                    waves.push((g, 4.0 * PI / volume * (-g2 / (4.0 * beta * beta)).exp() / g2));
                }
            }
        }
    }
    let constant = -PI / (beta * beta * volume);
    let real = |r: f64| -> f64 {
        if r < 1e-12 {
            15.0 / (8.0 * b_bohr) - 2.0 * beta / PI.sqrt()
        } else if r < b_bohr {
            smooth(r, b_bohr) - erf(beta * r) / r
        } else if r < r_max {
            (1.0 - erf(beta * r)) / r
        } else {
            0.0
        }
    };
    let [nx, ny, nz] = dims;
    let n = nx.checked_mul(ny)?.checked_mul(nz)?;
    let mut out = vec![0.0; n];
    out.par_iter_mut().enumerate().for_each(|(idx, o)| {
        let (i, j, k) = (idx % nx, (idx / nx) % ny, idx / (nx * ny));
        let x = combine(
            cell_bohr,
            [i as f64 / nx as f64, j as f64 / ny as f64, k as f64 / nz as f64],
        );
        let mut v = constant;
        for im in &images {
            v += real(norm([x[0] + im[0], x[1] + im[1], x[2] + im[2]]));
        }
        for (g, coef) in &waves {
            v += coef * super::kernel::dot(*g, x).cos();
        }
        *o = v;
    });
    Some(out)
}

/// Top level, periodic: circular convolution `e_m = sum_n K(m - n mod dims) q_n` with the kernel of
/// [`periodic_top_kernel`].
pub fn top_level_periodic(q: &[f64], dims: [usize; 3], kernel: &[f64], out: &mut [f64]) {
    let [nx, ny, nz] = dims;
    let plane = nx * ny;
    if plane == 0 {
        return;
    }
    let sources: Vec<([usize; 3], f64)> = (0..nz)
        .flat_map(|k| (0..ny).flat_map(move |j| (0..nx).map(move |i| [i, j, k])))
        .zip(q)
        .filter(|(_, v)| **v != 0.0)
        .map(|(c, &v)| (c, v))
        .collect();
    out.par_chunks_mut(plane).enumerate().for_each(|(k, dst)| {
        for (idx, o) in dst.iter_mut().enumerate() {
            let (i, j) = (idx % nx, idx / nx);
            let mut acc = 0.0;
            for (s, v) in &sources {
                let a = (i + nx - s[0]) % nx;
                let b = (j + ny - s[1]) % ny;
                let c = (k + nz - s[2]) % nz;
                acc += v * kernel.get(a + nx * (b + ny * c)).copied().unwrap_or(0.0);
            }
            *o = acc;
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (*seed >> 11) as f64 / (1u64 << 53) as f64 - 0.5
    }

    /// Prolongation is the transpose of restriction: <R q, e> = <q, P e>, open and periodic; and
    /// restriction conserves the total charge.
    #[test]
    fn prolongation_is_transpose_of_restriction() {
        let mut seed = 7u64;
        for periodic in [false, true] {
            let fine = if periodic {
                LevelLayout {
                    lo: [0; 3],
                    dims: [6, 4, 2],
                }
            } else {
                LevelLayout {
                    lo: [-2, 1, 0],
                    dims: [7, 5, 4],
                }
            };
            let coarse = if periodic {
                LevelLayout {
                    lo: [0; 3],
                    dims: [3, 2, 1],
                }
            } else {
                fine.coarser_open()
            };
            let q: Vec<f64> = (0..fine.len()).map(|_| lcg(&mut seed)).collect();
            let e: Vec<f64> = (0..coarse.len()).map(|_| lcg(&mut seed)).collect();
            let mut rq = vec![0.0; coarse.len()];
            restrict(&q, &fine, &mut rq, &coarse, periodic);
            let mut pe = vec![0.0; fine.len()];
            prolongate(&e, &coarse, &mut pe, &fine, periodic);
            let lhs: f64 = rq.iter().zip(&e).map(|(a, b)| a * b).sum();
            let rhs: f64 = q.iter().zip(&pe).map(|(a, b)| a * b).sum();
            assert!((lhs - rhs).abs() < 1e-12, "{lhs} vs {rhs}");
            let (sq, srq) = (q.iter().sum::<f64>(), rq.iter().sum::<f64>());
            assert!((sq - srq).abs() < 1e-12, "charge {sq} -> {srq}");
        }
    }

    /// The lattice cutoff against a naive sum over all pairs of an open lattice.
    #[test]
    fn lattice_cutoff_matches_pair_sum() {
        let vectors = [[1.0, 0.0, 0.0], [0.3, 1.1, 0.0], [0.2, -0.1, 0.9]];
        let a = 1.6;
        let stencil = cutoff_stencil(&vectors, a).unwrap();
        let layout = LevelLayout {
            lo: [0; 3],
            dims: [6, 5, 4],
        };
        let mut seed = 11u64;
        let q: Vec<f64> = (0..layout.len()).map(|_| lcg(&mut seed)).collect();
        let mut out = vec![0.0; layout.len()];
        lattice_cutoff(&q, &layout, false, &stencil, 0.5, &mut out);
        let at = |n: usize| [n % 6, (n / 6) % 5, n / 30].map(|x| x as f64);
        for (m, got) in out.iter().enumerate() {
            let mut want = 0.0;
            for (n, qn) in q.iter().enumerate() {
                let d: [f64; 3] = std::array::from_fn(|k| at(m)[k] - at(n)[k]);
                let r = norm(combine(&vectors, d));
                if r < 2.0 * a {
                    want += 0.5 * qn * (smooth(r, a) - smooth(r, 2.0 * a));
                }
            }
            assert!((got - want).abs() < 1e-12, "{m}: {got} vs {want}");
        }
    }

    /// The periodic top kernel is even, K(d) = K(-d).
    #[test]
    fn periodic_top_kernel_is_even() {
        let cell = [[9.0, 0.0, 0.0], [2.0, 10.0, 0.0], [1.0, 1.5, 11.0]];
        let dims = [3, 4, 5];
        let k = periodic_top_kernel(dims, &cell, 12.0).unwrap();
        for c in 0..5 {
            for b in 0..4 {
                for a in 0..3 {
                    let v = k[a + 3 * (b + 4 * c)];
                    let w = k[(3 - a) % 3 + 3 * ((4 - b) % 4 + 4 * ((5 - c) % 5))];
                    assert!((v - w).abs() < 1e-12 * v.abs().max(1.0), "{v} vs {w}");
                }
            }
        }
    }
}
