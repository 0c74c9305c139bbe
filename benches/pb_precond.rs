//! Preconditioners for the Poisson-Boltzmann conjugate gradients, compared by their iteration counts
//! on adk (161^3 at 0.5 A, frames of `adk_dims.dcd`, maps from `compute::cpu::pb_maps`), in float64
//! on the CPU. The V-cycle the engines run (harmonic-averaged seven-point coarse operators, trilinear
//! transfers, red-black Gauss-Seidel over-relaxed by 1.15) against Galerkin coarse operators (R A P,
//! R = P^T: 27-point stencils below the finest level, eight-colour Gauss-Seidel there) with trilinear
//! or operator-dependent transfers (Dendy's black-box multigrid: an edge point interpolated by the
//! operator collapsed onto its line, a face point onto its plane, an interior point by its row), and
//! that operator lumped back to seven points. Cold (from the boundary values, to 1e-6 |f|) and warm
//! (from the previous frame's solution). Counts only: the set-up times are the 2-core CPU's and say
//! nothing of a device. `PB_FRAMES` (default 4), `PB_VARIANT` (one row), `PB_TRACE` (residuals).
//! Results: `benches/RESULTS.md` ("Poisson-Boltzmann, eighth round").

#![allow(
    clippy::unwrap_used,
    clippy::expect_used,
    clippy::indexing_slicing,
    clippy::needless_range_loop
)]

use orbitfield::compute::cpu::pb_maps::coefficients;
use orbitfield::compute::pb::{Coefficients, PbAtoms, PbLattice, PbParams};
use rayon::prelude::*;
use std::path::PathBuf;

fn frames(count: usize) -> Vec<PbAtoms> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
    let mut system = orbitfield::io::load(&[root.join("adk.psf"), root.join("adk_dims.dcd")]).unwrap();
    let s = &system.structure;
    let charges: Vec<f64> = s.charges_e.as_ref().unwrap().iter().map(|&q| f64::from(q)).collect();
    let radii: Vec<f64> = match &s.radii_angstrom {
        Some(r) => r.iter().map(|&v| f64::from(v)).collect(),
        None => s.elements.iter().map(|e| f64::from(e.vdw_radius_angstrom())).collect(),
    };
    (0..count)
        .map(|i| {
            let f = system.trajectory.frame(i).unwrap();
            PbAtoms {
                positions_angstrom: f.positions_angstrom.iter().map(|p| p.map(f64::from)).collect(),
                charges_e: charges.clone(),
                radii_angstrom: radii.clone(),
            }
        })
        .collect()
}

/// A stencil operator on one lattice: `out_p = sum_k coef[k][p] u[p + off[k]]` at interior points.
struct Level {
    dims: [usize; 3],
    offs: Vec<[i64; 3]>,
    coef: Vec<Vec<f64>>,
    centre: usize,
    colours: usize,
}

impl Level {
    fn n(&self) -> usize {
        self.dims.iter().product()
    }
    fn lin(&self, o: [i64; 3]) -> i64 {
        let [nx, ny, _] = self.dims.map(|d| d as i64);
        o[0] + nx * (o[1] + ny * o[2])
    }
    fn interior(&self, i: usize, j: usize, k: usize) -> bool {
        let [nx, ny, nz] = self.dims;
        i > 0 && j > 0 && k > 0 && i + 1 < nx && j + 1 < ny && k + 1 < nz
    }
    fn colour(&self, i: usize, j: usize, k: usize) -> usize {
        if self.colours == 2 {
            (i + j + k) % 2
        } else {
            (i % 2) + 2 * (j % 2) + 4 * (k % 2)
        }
    }
    /// out = A u at interior points (faces of u used as given), zero on faces.
    fn apply(&self, u: &[f64], out: &mut [f64]) {
        let [nx, ny, _] = self.dims;
        let plane = nx * ny;
        let offs: Vec<i64> = self.offs.iter().map(|&o| self.lin(o)).collect();
        out.par_chunks_mut(plane).enumerate().for_each(|(k, slab)| {
            for j in 0..ny {
                for i in 0..nx {
                    let o = i + nx * j;
                    if !self.interior(i, j, k) {
                        slab[o] = 0.0;
                        continue;
                    }
                    let p = o + plane * k;
                    let mut s = 0.0;
                    for (c, &d) in self.coef.iter().zip(&offs) {
                        s += c[p] * u[(p as i64 + d) as usize];
                    }
                    slab[o] = s;
                }
            }
        });
    }
    /// One Gauss-Seidel pass over colour `c` (over-relaxed by omega), out of place.
    fn half_sweep(&self, f: &[f64], u: &[f64], next: &mut [f64], c: usize, omega: f64) {
        let [nx, ny, _] = self.dims;
        let plane = nx * ny;
        let offs: Vec<i64> = self.offs.iter().map(|&o| self.lin(o)).collect();
        next.par_chunks_mut(plane).enumerate().for_each(|(k, slab)| {
            slab.copy_from_slice(&u[plane * k..plane * (k + 1)]);
            for j in 0..ny {
                for i in 0..nx {
                    if !self.interior(i, j, k) || self.colour(i, j, k) != c {
                        continue;
                    }
                    let o = i + nx * j;
                    let p = o + plane * k;
                    let mut s = 0.0;
                    for (q, (cf, &d)) in self.coef.iter().zip(&offs).enumerate() {
                        if q != self.centre {
                            s += cf[p] * u[(p as i64 + d) as usize];
                        }
                    }
                    let gs = (f[p] - s) / self.coef[self.centre][p];
                    slab[o] = u[p] + omega * (gs - u[p]);
                }
            }
        });
    }
    fn smooth(&self, f: &[f64], u: &mut Vec<f64>, tmp: &mut Vec<f64>, sweeps: usize, forward: bool, omega: f64) {
        for _ in 0..sweeps {
            for step in 0..self.colours {
                let c = if forward { step } else { self.colours - 1 - step };
                self.half_sweep(f, u, tmp, c, omega);
                std::mem::swap(u, tmp);
            }
        }
    }
}

/// The finest level from the maps.
fn fine_level(c: &Coefficients, lattice: &PbLattice) -> Level {
    from_seven_point(
        lattice.dims,
        1.0 / (lattice.spacing_angstrom * lattice.spacing_angstrom),
        &c.eps,
        &c.kbar2,
        1.0,
    )
}

fn from_seven_point(dims: [usize; 3], ih2: f64, eps: &[Vec<f64>; 3], extra: &[f64], scale: f64) -> Level {
    let [nx, ny, _] = dims;
    let n = dims.iter().product::<usize>();
    let plane = nx * ny;
    let offs = vec![
        [0, 0, 0],
        [1, 0, 0],
        [-1, 0, 0],
        [0, 1, 0],
        [0, -1, 0],
        [0, 0, 1],
        [0, 0, -1],
    ];
    let mut coef = vec![vec![0.0; n]; 7];
    for p in 0..n {
        let (i, j, k) = (p % nx, (p / nx) % ny, p / plane);
        if !(i > 0 && j > 0 && k > 0 && i + 1 < nx && j + 1 < ny && k + 1 < dims[2]) {
            continue;
        }
        let e = [
            eps[0][p],
            eps[0][p - 1],
            eps[1][p],
            eps[1][p - nx],
            eps[2][p],
            eps[2][p - plane],
        ];
        coef[0][p] = scale * (e.iter().sum::<f64>() * ih2 + extra[p]);
        for q in 0..6 {
            coef[q + 1][p] = -scale * e[q] * ih2;
        }
    }
    Level {
        dims,
        offs,
        coef,
        centre: 0,
        colours: 2,
    }
}

/// Interpolation weights of every fine point from the eight corners of its coarse cell (corner
/// (bx, by, bz) at floor(x / 2) + b per axis).
struct Interp {
    w: Vec<[f64; 8]>,
}

fn corner(b: [usize; 3]) -> usize {
    b[0] + 2 * b[1] + 4 * b[2]
}

/// Trilinear weights.
fn trilinear(fine: &Level) -> Interp {
    let [nx, ny, _] = fine.dims;
    let w = (0..fine.n())
        .map(|p| {
            let x = [p % nx, (p / nx) % ny, p / (nx * ny)];
            let mut w = [0.0; 8];
            for c in 0..8 {
                let b = [c & 1, (c >> 1) & 1, (c >> 2) & 1];
                let mut v = 1.0;
                for d in 0..3 {
                    v *= if x[d] % 2 == 0 {
                        if b[d] == 0 { 1.0 } else { 0.0 }
                    } else {
                        0.5
                    };
                }
                w[c] = v;
            }
            w
        })
        .collect();
    Interp { w }
}

/// Operator-dependent weights (Dendy's black-box multigrid): an edge point from the operator
/// collapsed onto its line, a face point from the operator collapsed onto its plane, an interior
/// point from its own row.
fn operator_dependent(fine: &Level) -> Interp {
    let [nx, ny, _] = fine.dims;
    let n = fine.n();
    let mut w = trilinear(fine).w;
    let offs: Vec<i64> = fine.offs.iter().map(|&o| fine.lin(o)).collect();
    for odd_count in 1..=3 {
        let next: Vec<(usize, [f64; 8])> = (0..n)
            .into_par_iter()
            .filter_map(|p| {
                let x = [p % nx, (p / nx) % ny, p / (nx * ny)];
                let odd: Vec<usize> = (0..3).filter(|&d| x[d] % 2 == 1).collect();
                if odd.len() != odd_count || !fine.interior(x[0], x[1], x[2]) {
                    return None;
                }
                let even: Vec<usize> = (0..3).filter(|&d| x[d] % 2 == 0).collect();
                // Collapse along the even axes: entries with the same offsets on the odd axes add.
                let mut diag = 0.0;
                let mut acc = [0.0; 8];
                for (k, o) in fine.offs.iter().enumerate() {
                    let a = fine.coef[k][p];
                    if a == 0.0 {
                        continue;
                    }
                    if odd.iter().all(|&d| o[d] == 0) {
                        diag += a;
                        continue;
                    }
                    // The neighbour with the even axes' offsets dropped.
                    let mut m = *o;
                    for &d in &even {
                        m[d] = 0;
                    }
                    let q = (p as i64 + fine.lin(m)) as usize;
                    let qx = [q % nx, (q / nx) % ny, q / (nx * ny)];
                    if !fine.interior(qx[0], qx[1], qx[2]) {
                        continue;
                    }
                    // q's weights in p's cell corners.
                    let wq = w[q];
                    for c in 0..8 {
                        if wq[c] == 0.0 {
                            continue;
                        }
                        let b = [c & 1, (c >> 1) & 1, (c >> 2) & 1];
                        let mut bp = [0usize; 3];
                        for d in 0..3 {
                            let coarse = qx[d] / 2 + b[d];
                            bp[d] = coarse - x[d] / 2;
                        }
                        acc[corner(bp)] -= a * wq[c];
                    }
                }
                let _ = &offs;
                Some((p, acc.map(|v| v / diag)))
            })
            .collect();
        for (p, v) in next {
            w[p] = v;
        }
    }
    Interp { w }
}

/// R A P with R = P^T for the weights `ip`.
fn galerkin_with(fine: &Level, ip: &Interp) -> Level {
    let cd = fine.dims.map(|d| d.div_ceil(2));
    let [cx, cy, _] = cd;
    let nc = cd.iter().product::<usize>();
    let mut offs = Vec::new();
    for dz in -1..=1 {
        for dy in -1..=1 {
            for dx in -1..=1 {
                offs.push([dx, dy, dz]);
            }
        }
    }
    let [nx, ny, _] = fine.dims;
    let fl = |x: [i64; 3]| (x[0] + nx as i64 * (x[1] + ny as i64 * x[2])) as usize;
    let cin = |j: [i64; 3]| j.iter().zip(&cd).all(|(&v, &n)| v > 0 && (v as usize) + 1 < n);
    let rows: Vec<[f64; 27]> = (0..nc)
        .into_par_iter()
        .map(|q| {
            let mut st = [0.0; 27];
            let c = [(q % cx) as i64, ((q / cx) % cy) as i64, (q / (cx * cy)) as i64];
            if !cin(c) {
                return st;
            }
            for az in -1..=1i64 {
                for ay in -1..=1i64 {
                    for ax in -1..=1i64 {
                        let a = [2 * c[0] + ax, 2 * c[1] + ay, 2 * c[2] + az];
                        if !fine.interior(a[0] as usize, a[1] as usize, a[2] as usize) {
                            continue;
                        }
                        let pa = fl(a);
                        // P(a, c): c's corner in a's cell.
                        let b = [0, 1, 2].map(|d| (c[d] - a[d].div_euclid(2)) as usize);
                        if b.iter().any(|&v| v > 1) {
                            continue;
                        }
                        let wa = ip.w[pa][corner(b)];
                        if wa == 0.0 {
                            continue;
                        }
                        for (kk, o) in fine.offs.iter().enumerate() {
                            let av = fine.coef[kk][pa];
                            if av == 0.0 {
                                continue;
                            }
                            let bb = [a[0] + o[0], a[1] + o[1], a[2] + o[2]];
                            if !fine.interior(bb[0] as usize, bb[1] as usize, bb[2] as usize) {
                                continue;
                            }
                            let wb = ip.w[fl(bb)];
                            for cc in 0..8 {
                                if wb[cc] == 0.0 {
                                    continue;
                                }
                                let bc = [cc & 1, (cc >> 1) & 1, (cc >> 2) & 1];
                                let j = [0, 1, 2].map(|d| bb[d].div_euclid(2) + bc[d] as i64);
                                if !cin(j) {
                                    continue;
                                }
                                let dd = [j[0] - c[0], j[1] - c[1], j[2] - c[2]];
                                if dd.iter().any(|v| v.abs() > 1) {
                                    continue;
                                }
                                let slot = ((dd[0] + 1) + 3 * (dd[1] + 1) + 9 * (dd[2] + 1)) as usize;
                                st[slot] += wa * av * wb[cc];
                            }
                        }
                    }
                }
            }
            st
        })
        .collect();
    let mut coef = vec![vec![0.0; nc]; 27];
    for (q, st) in rows.iter().enumerate() {
        for s in 0..27 {
            coef[s][q] = st[s];
        }
    }
    Level {
        dims: cd,
        offs,
        coef,
        centre: 13,
        colours: 8,
    }
}

/// A 27-point stencil lumped to seven points: each off-axis entry split evenly among the axis
/// directions it moves along, the couplings of both ends averaged (symmetric), the row sums kept.
fn lump(l: &Level) -> Level {
    let [nx, ny, _] = l.dims;
    let n = l.n();
    let dirs: [[i64; 3]; 6] = [[1, 0, 0], [-1, 0, 0], [0, 1, 0], [0, -1, 0], [0, 0, 1], [0, 0, -1]];
    // One-sided lumped couplings.
    let mut one = vec![[0.0f64; 6]; n];
    let mut rowsum = vec![0.0f64; n];
    for p in 0..n {
        let x = [p % nx, (p / nx) % ny, p / (nx * ny)];
        if !l.interior(x[0], x[1], x[2]) {
            continue;
        }
        for (k, o) in l.offs.iter().enumerate() {
            let a = l.coef[k][p];
            rowsum[p] += a;
            let nz = o.iter().filter(|v| **v != 0).count();
            if nz == 0 {
                continue;
            }
            for d in 0..3 {
                if o[d] != 0 {
                    let slot = 2 * d + usize::from(o[d] < 0);
                    one[p][slot] += a / nz as f64;
                }
            }
        }
    }
    let mut coef = vec![vec![0.0; n]; 7];
    for p in 0..n {
        let x = [p % nx, (p / nx) % ny, p / (nx * ny)];
        if !l.interior(x[0], x[1], x[2]) {
            continue;
        }
        let mut off = 0.0;
        for (s, dv) in dirs.iter().enumerate() {
            let q = (p as i64 + l.lin(*dv)) as usize;
            let back = s ^ 1;
            let a = 0.5 * (one[p][s] + one[q][back]);
            let a = if x.iter().enumerate().all(|(d, &v)| {
                let w = v as i64 + dv[d];
                w > 0 && (w as usize) + 1 < l.dims[d]
            }) {
                a
            } else {
                one[p][s]
            };
            coef[s + 1][p] = a;
            off += a;
        }
        coef[0][p] = rowsum[p] - off;
    }
    Level {
        dims: l.dims,
        offs: vec![
            [0, 0, 0],
            [1, 0, 0],
            [-1, 0, 0],
            [0, 1, 0],
            [0, -1, 0],
            [0, 0, 1],
            [0, 0, -1],
        ],
        coef,
        centre: 0,
        colours: 2,
    }
}

fn restrict_with(fine: &Level, ip: &Interp, r: &[f64], coarse: &Level) -> Vec<f64> {
    let [nx, ny, _] = fine.dims;
    let [cx, cy, _] = coarse.dims;
    let mut out = vec![0.0; coarse.n()];
    for p in 0..fine.n() {
        if r[p] == 0.0 {
            continue;
        }
        let x = [p % nx, (p / nx) % ny, p / (nx * ny)];
        for c in 0..8 {
            let w = ip.w[p][c];
            if w == 0.0 {
                continue;
            }
            let j = [x[0] / 2 + (c & 1), x[1] / 2 + ((c >> 1) & 1), x[2] / 2 + ((c >> 2) & 1)];
            if coarse.interior(j[0], j[1], j[2]) {
                out[j[0] + cx * (j[1] + cy * j[2])] += w * r[p];
            }
        }
    }
    out
}

fn prolong_with(coarse: &Level, e: &[f64], fine: &Level, ip: &Interp, u: &mut [f64]) {
    let [nx, ny, _] = fine.dims;
    let [cx, cy, _] = coarse.dims;
    u.par_iter_mut().enumerate().for_each(|(p, up)| {
        let x = [p % nx, (p / nx) % ny, p / (nx * ny)];
        if !fine.interior(x[0], x[1], x[2]) {
            return;
        }
        let mut s = 0.0;
        for c in 0..8 {
            let w = ip.w[p][c];
            if w == 0.0 {
                continue;
            }
            let j = [x[0] / 2 + (c & 1), x[1] / 2 + ((c >> 1) & 1), x[2] / 2 + ((c >> 2) & 1)];
            if j[0] < cx && j[1] < cy {
                s += w * e.get(j[0] + cx * (j[1] + cy * j[2])).copied().unwrap_or(0.0);
            }
        }
        *up += s;
    });
}

struct Mg {
    levels: Vec<Level>,
    interps: Vec<Interp>,
    fine_sweeps: usize,
    sweeps: usize,
    omega: f64,
}

impl Mg {
    fn cycle(&self, l: usize, f: &[f64]) -> Vec<f64> {
        let op = &self.levels[l];
        let mut u = vec![0.0; op.n()];
        let mut tmp = vec![0.0; op.n()];
        let Some(coarse) = self.levels.get(l + 1) else {
            op.smooth(f, &mut u, &mut tmp, 48, true, 1.0);
            op.smooth(f, &mut u, &mut tmp, 48, false, 1.0);
            return u;
        };
        let sw = if l == 0 { self.fine_sweeps } else { self.sweeps };
        op.smooth(f, &mut u, &mut tmp, sw, true, self.omega);
        op.apply(&u, &mut tmp);
        tmp.par_iter_mut().zip(f).for_each(|(t, fi)| *t = fi - *t);
        let ip = &self.interps[l];
        let rc = restrict_with(op, ip, &tmp, coarse);
        let ec = self.cycle(l + 1, &rc);
        prolong_with(coarse, &ec, op, ip, &mut u);
        op.smooth(f, &mut u, &mut tmp, sw, false, self.omega);
        u
    }
}

fn dot(a: &[f64], b: &[f64]) -> f64 {
    a.par_iter().zip(b).map(|(x, y)| x * y).sum()
}

/// PCG from x (faces held): iterations to |r| <= tol |f|, with the residual trace.
fn pcg(mg: &Mg, f: &[f64], x: &mut [f64], tol: f64) -> (usize, Vec<f64>) {
    let a = &mg.levels[0];
    let n = a.n();
    let mut q = vec![0.0; n];
    a.apply(x, &mut q);
    let mut r: Vec<f64> = f.iter().zip(&q).map(|(fi, qi)| fi - qi).collect();
    // Faces: r zero there.
    let f_norm = dot(f, f).sqrt();
    // The correction is solved with zero faces.
    let mut e = vec![0.0; n];
    let mut trace = vec![dot(&r, &r).sqrt() / f_norm];
    let mut p = vec![0.0; n];
    let mut rz_old = 0.0;
    for it in 0..100 {
        let z = mg.cycle(0, &r);
        let rz = dot(&r, &z);
        let beta = if it == 0 { 0.0 } else { rz / rz_old };
        p.par_iter_mut().zip(&z).for_each(|(pi, zi)| *pi = zi + beta * *pi);
        a.apply(&p, &mut q);
        let alpha = rz / dot(&p, &q);
        e.par_iter_mut().zip(&p).for_each(|(ei, pi)| *ei += alpha * pi);
        r.par_iter_mut().zip(&q).for_each(|(ri, qi)| *ri -= alpha * qi);
        rz_old = rz;
        let rel = dot(&r, &r).sqrt() / f_norm;
        trace.push(rel);
        if rel <= tol {
            x.iter_mut().zip(&e).for_each(|(xi, ei)| *xi += ei);
            return (it + 1, trace);
        }
    }
    x.iter_mut().zip(&e).for_each(|(xi, ei)| *xi += ei);
    (100, trace)
}

/// How the coarse levels are made.
#[derive(Clone, Copy)]
enum Coarse {
    /// Harmonic-averaged seven-point operators, trilinear transfers (the engines' V-cycle).
    Harmonic,
    /// R A P with operator-dependent transfers on the first `depth` levels, trilinear below;
    /// `lump`: the 27-point result lumped to seven points.
    Galerkin { depth: usize, lump: bool },
}

/// One preconditioner to compare.
struct Variant {
    name: &'static str,
    coarse: Coarse,
    fine_sweeps: usize,
    sweeps: usize,
    omega: f64,
}

fn hierarchy(fine: Level, v: &Variant, c: &Coefficients, lattice: &PbLattice) -> Mg {
    let mut levels = vec![fine];
    let mut interps = Vec::new();
    match v.coarse {
        Coarse::Galerkin { depth, lump: lumped } => {
            while levels.last().unwrap().dims.iter().all(|&d| d >= 9 && d % 2 == 1) {
                let f = levels.last().unwrap();
                let ip = if interps.len() < depth {
                    operator_dependent(f)
                } else {
                    trilinear(f)
                };
                let mut next = galerkin_with(f, &ip);
                if lumped {
                    next = lump(&next);
                }
                interps.push(ip);
                levels.push(next);
            }
        }
        Coarse::Harmonic => {
            use orbitfield::compute::cpu::pb_mg::{Multigrid, Operator};
            let op = Operator::new(lattice.dims, lattice.spacing_angstrom, c.eps.clone(), c.kbar2.clone());
            let mg = Multigrid::new(op);
            // R = P^T here, full weighting there: the coarse operators scaled by 8 per level.
            for (l, lv) in mg.levels.iter().enumerate().skip(1) {
                interps.push(trilinear(levels.last().unwrap()));
                levels.push(from_seven_point(
                    lv.dims,
                    lv.ih2,
                    &lv.eps,
                    &lv.extra,
                    8f64.powi(l as i32),
                ));
            }
        }
    }
    Mg {
        levels,
        interps,
        fine_sweeps: v.fine_sweeps,
        sweeps: v.sweeps,
        omega: v.omega,
    }
}

/// The right side with the faces' values moved into it: f = source (interior), and the initial
/// iterate holds the boundary on the faces.
fn start(c: &Coefficients, lattice: &PbLattice, warm: Option<&[f64]>) -> (Vec<f64>, Vec<f64>) {
    let [nx, ny, nz] = lattice.dims;
    let n = lattice.n_points();
    let mut x = vec![0.0; n];
    for p in 0..n {
        let (i, j, k) = (p % nx, (p / nx) % ny, p / (nx * ny));
        let face = i == 0 || j == 0 || k == 0 || i + 1 == nx || j + 1 == ny || k + 1 == nz;
        x[p] = if face {
            c.boundary[p]
        } else {
            warm.map_or(0.0, |w| w[p])
        };
    }
    let mut f = c.source.clone();
    for p in 0..n {
        let (i, j, k) = (p % nx, (p / nx) % ny, p / (nx * ny));
        if i == 0 || j == 0 || k == 0 || i + 1 == nx || j + 1 == ny || k + 1 == nz {
            f[p] = 0.0;
        }
    }
    (f, x)
}

fn main() {
    let count: usize = std::env::var("PB_FRAMES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(4);
    let adk = frames(count);
    let params = PbParams::default();
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in &adk[0].positions_angstrom {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    let centre = std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]));
    let lattice = PbLattice::centered(centre, 0.5, [161, 161, 161]);
    let g = |depth| Coarse::Galerkin { depth, lump: false };
    let variants = [
        Variant {
            name: "harmonic 7-point, trilinear, 2/2 sweeps, omega 1.15 (the CUDA engine's)",
            coarse: Coarse::Harmonic,
            fine_sweeps: 2,
            sweeps: 2,
            omega: 1.15,
        },
        Variant {
            name: "harmonic 7-point, trilinear, 3/2 sweeps, omega 1.15",
            coarse: Coarse::Harmonic,
            fine_sweeps: 3,
            sweeps: 2,
            omega: 1.15,
        },
        Variant {
            name: "Galerkin 27-point, trilinear, 2/2 sweeps, omega 1.15",
            coarse: g(0),
            fine_sweeps: 2,
            sweeps: 2,
            omega: 1.15,
        },
        Variant {
            name: "Galerkin, operator-dependent at the finest level only, 2/2 sweeps",
            coarse: g(1),
            fine_sweeps: 2,
            sweeps: 2,
            omega: 1.15,
        },
        Variant {
            name: "Galerkin, operator-dependent, 2/2 sweeps, omega 1.15",
            coarse: g(99),
            fine_sweeps: 2,
            sweeps: 2,
            omega: 1.15,
        },
        Variant {
            name: "Galerkin, operator-dependent, 2/1 sweeps, omega 1.15",
            coarse: g(99),
            fine_sweeps: 2,
            sweeps: 1,
            omega: 1.15,
        },
        Variant {
            name: "Galerkin, operator-dependent, 1/1 sweeps, omega 1.15",
            coarse: g(99),
            fine_sweeps: 1,
            sweeps: 1,
            omega: 1.15,
        },
        Variant {
            name: "operator-dependent, lumped to 7 points, 2/2 sweeps",
            coarse: Coarse::Galerkin { depth: 99, lump: true },
            fine_sweeps: 2,
            sweeps: 2,
            omega: 1.15,
        },
    ];
    let only: Option<usize> = std::env::var("PB_VARIANT").ok().and_then(|v| v.parse().ok());
    println!(
        "| preconditioner | cold, frames 0-{} | warm, frames 1-{} | set-up (2-core CPU) |",
        count - 1,
        count - 1
    );
    println!("|---|---|---|---|");
    for (vi, v) in variants.iter().enumerate() {
        if only.is_some_and(|o| o != vi) {
            continue;
        }
        let mut prev: Option<Vec<f64>> = None;
        let (mut cold, mut warm_its, mut setups) = (Vec::new(), Vec::new(), Vec::new());
        for atoms in &adk {
            let c = coefficients(atoms, &lattice, &params).unwrap();
            let t = std::time::Instant::now();
            let mg = hierarchy(fine_level(&c, &lattice), v, &c, &lattice);
            setups.push(t.elapsed().as_secs_f64());
            if let Some(p) = prev.as_deref() {
                let (f, mut x) = start(&c, &lattice, Some(p));
                let (its, trace) = pcg(&mg, &f, &mut x, 1e-6);
                warm_its.push(its);
                trace_line(v.name, "warm", &trace);
            }
            let (f, mut x) = start(&c, &lattice, None);
            let (its, trace) = pcg(&mg, &f, &mut x, 1e-6);
            cold.push(its);
            trace_line(v.name, "cold", &trace);
            // Converged further: the next frame's first guess.
            pcg(&mg, &f, &mut x, 1e-10);
            prev = Some(x);
        }
        let list = |v: &[usize]| v.iter().map(ToString::to_string).collect::<Vec<_>>().join(", ");
        let (lo, hi) = setups
            .iter()
            .fold((f64::INFINITY, 0.0f64), |(a, b), &s| (a.min(s), b.max(s)));
        println!(
            "| {} | {} | {} | {lo:.2}-{hi:.2} s |",
            v.name,
            list(&cold),
            list(&warm_its)
        );
    }
}

/// Each solve's residuals over |f| (with `PB_TRACE`).
fn trace_line(name: &str, what: &str, trace: &[f64]) {
    if std::env::var_os("PB_TRACE").is_some() {
        let t: Vec<String> = trace.iter().map(|v| format!("{v:.1e}")).collect();
        eprintln!("{name}, {what}: {}", t.join(" "));
    }
}
