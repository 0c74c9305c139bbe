//! The Poisson-Boltzmann solver of the CPU engine: the seven-point finite-difference operator on
//! the maps of [`super::pb_maps`], solved by conjugate gradients preconditioned by one multigrid
//! V-cycle ([`super::pb_mg`]; rayon over z-planes), Newton steps for the nonlinear form.
//!
//! Owns [`solve`] and [`solve_coefficients`] (maps given: a focused lattice's), called through `compute::pb::solve` by the CLI and the tests. The unknowns are
//! the interior points; the faces hold the boundary values. The operator
//! `(A u)_p = sum_axes [eps_+ (u_p - u_+) + eps_- (u_p - u_-)] / h^2 + kbar2_p u_p` is symmetric
//! positive definite and the V-cycle a symmetric positive definite preconditioner, so conjugate
//! gradients converge, in a number of iterations that hardly grows with the lattice (the lattice
//! coarsens while every axis has an odd number of points: 2^k m + 1 points per axis, as APBS asks,
//! coarsen k times). Should the multigrid-preconditioned solve stop short of the tolerance within
//! [`MAX_MG_ITERATIONS`], conjugate gradients with the diagonal preconditioner take over; a solve
//! that reaches its iteration cap without the tolerance is an error ([`PbError::NotConverged`]),
//! never a result.

use super::pb_maps::{Coefficients, coefficients};
use super::pb_mg::{Multigrid, Operator};
use crate::compute::pb::{PbAtoms, PbError, PbLattice, PbParams, PbSolution};
use rayon::prelude::*;

/// Bytes per lattice point the solver holds (maps, source, boundary, iterate, residual, search
/// direction, its image, preconditioned residual, diagonal; the multigrid's copy of the maps,
/// its work vectors and its coarser lattices).
pub const BYTES_PER_POINT: u64 = 8 * 24;

/// Iterations of the multigrid-preconditioned conjugate gradients before diagonal-preconditioned
/// conjugate gradients take over (a few dozen suffice for 1e-9).
pub const MAX_MG_ITERATIONS: usize = 200;

/// The most Newton steps of the nonlinear form.
const MAX_NEWTON_STEPS: usize = 50;

fn bad(msg: String) -> PbError {
    PbError::BadInput(msg)
}

/// The checks every engine makes before allocating, with this engine's memory per lattice point.
fn check(atoms: &PbAtoms, lattice: &PbLattice, p: &PbParams) -> Result<(), PbError> {
    crate::compute::pb::engine::check_input(atoms, lattice, p, BYTES_PER_POINT)
}

/// The operator with `diag_extra` (kbar2, or kbar2 cosh u for a Newton step) applied to `u`
/// (values on the faces taken as they are) at the interior points, into `out` (faces set to 0).
fn apply(c: &Coefficients, lattice: &PbLattice, diag_extra: &[f64], u: &[f64], out: &mut [f64]) {
    let [nx, ny, nz] = lattice.dims;
    let ih2 = 1.0 / (lattice.spacing_angstrom * lattice.spacing_angstrom);
    let plane = nx * ny;
    let [ex, ey, ez] = &c.eps;
    out.par_chunks_mut(plane).enumerate().for_each(|(k, slab)| {
        if k == 0 || k + 1 >= nz {
            slab.iter_mut().for_each(|v| *v = 0.0);
            return;
        }
        for j in 0..ny {
            for i in 0..nx {
                let o = i + nx * j;
                let Some(dst) = slab.get_mut(o) else { continue };
                if i == 0 || j == 0 || i + 1 >= nx || j + 1 >= ny {
                    *dst = 0.0;
                    continue;
                }
                let p = o + plane * k;
                let g = |v: &[f64], q: usize| v.get(q).copied().unwrap_or(0.0);
                let up = g(u, p);
                let s = g(ex, p) * (up - g(u, p + 1))
                    + g(ex, p - 1) * (up - g(u, p - 1))
                    + g(ey, p) * (up - g(u, p + nx))
                    + g(ey, p - nx) * (up - g(u, p - nx))
                    + g(ez, p) * (up - g(u, p + plane))
                    + g(ez, p - plane) * (up - g(u, p - plane));
                *dst = s * ih2 + g(diag_extra, p) * up;
            }
        }
    });
}

/// The operator's diagonal at interior points (1 on the faces).
fn diagonal(c: &Coefficients, lattice: &PbLattice, diag_extra: &[f64]) -> Vec<f64> {
    let [nx, ny, nz] = lattice.dims;
    let ih2 = 1.0 / (lattice.spacing_angstrom * lattice.spacing_angstrom);
    let plane = nx * ny;
    let [ex, ey, ez] = &c.eps;
    let g = |v: &[f64], q: usize| v.get(q).copied().unwrap_or(0.0);
    (0..lattice.n_points())
        .into_par_iter()
        .map(|p| {
            let (i, j, k) = (p % nx, (p / nx) % ny, p / plane);
            if i == 0 || j == 0 || k == 0 || i + 1 >= nx || j + 1 >= ny || k + 1 >= nz {
                return 1.0;
            }
            (g(ex, p) + g(ex, p - 1) + g(ey, p) + g(ey, p - nx) + g(ez, p) + g(ez, p - plane)) * ih2 + g(diag_extra, p)
        })
        .collect()
}

/// Points per partial sum of [`dot`].
const DOT_CHUNK: usize = 1 << 14;

/// `a . b`, the same bits on every run: partial sums over fixed pieces, added in order (a parallel
/// sum's order follows the threads' work stealing, so two runs of one solve could differ in the last
/// digits).
fn dot(a: &[f64], b: &[f64]) -> f64 {
    let parts: Vec<f64> = a
        .par_chunks(DOT_CHUNK)
        .zip(b.par_chunks(DOT_CHUNK))
        .map(|(x, y)| x.iter().zip(y).map(|(p, q)| p * q).sum::<f64>())
        .collect();
    parts.iter().sum()
}

/// Solves `A x = b` at the interior points (x's faces stay as they are: zero for a correction),
/// preconditioned CG from the given x. Returns (iterations, relative residual) on convergence.
#[allow(clippy::too_many_arguments)]
fn pcg(
    c: &Coefficients,
    lattice: &PbLattice,
    diag_extra: &[f64],
    b: &[f64],
    x: &mut [f64],
    tol: f64,
    max_iter: usize,
    mg: Option<&Multigrid>,
    stop: Stop<'_>,
) -> Result<(usize, f64), PbError> {
    let n = x.len();
    let inv_diag: Vec<f64> = diagonal(c, lattice, diag_extra).into_iter().map(|d| 1.0 / d).collect();
    let precondition = |r: &[f64], z: &mut Vec<f64>| match mg {
        Some(m) => *z = m.vcycle(r),
        None => z
            .par_iter_mut()
            .zip(r)
            .zip(&inv_diag)
            .for_each(|((zi, ri), di)| *zi = ri * di),
    };
    let interior = |v: &mut [f64]| zero_faces(lattice, v);
    let mut r = vec![0.0; n];
    apply(c, lattice, diag_extra, x, &mut r);
    r.par_iter_mut().zip(b).for_each(|(ri, bi)| *ri = bi - *ri);
    interior(&mut r);
    let b_norm = dot(b, b).sqrt();
    if b_norm == 0.0 {
        return Ok((0, 0.0));
    }
    let mut z = vec![0.0; n];
    precondition(&r, &mut z);
    let mut p_dir = z.clone();
    let mut ap = vec![0.0; n];
    let mut rz = dot(&r, &z);
    let mut rel = dot(&r, &r).sqrt() / b_norm;
    for it in 0..max_iter {
        if rel <= tol {
            return Ok((it, rel));
        }
        if stop() {
            return Err(PbError::Cancelled);
        }
        match mg.and_then(|m| m.levels.first()) {
            Some(op) => op.apply(&p_dir, &mut ap),
            None => apply(c, lattice, diag_extra, &p_dir, &mut ap),
        }
        let pap = dot(&p_dir, &ap);
        if !(pap.is_finite() && pap > 0.0) {
            return Err(bad(format!(
                "the operator is not positive definite (p.Ap = {pap:e}); check the dielectrics"
            )));
        }
        let alpha = rz / pap;
        x.par_iter_mut().zip(&p_dir).for_each(|(xi, pi)| *xi += alpha * pi);
        r.par_iter_mut().zip(&ap).for_each(|(ri, ai)| *ri -= alpha * ai);
        precondition(&r, &mut z);
        let rz_new = dot(&r, &z);
        let beta = rz_new / rz;
        rz = rz_new;
        p_dir.par_iter_mut().zip(&z).for_each(|(pi, zi)| *pi = zi + beta * *pi);
        rel = dot(&r, &r).sqrt() / b_norm;
    }
    if rel <= tol {
        return Ok((max_iter, rel));
    }
    Err(PbError::NotConverged {
        iterations: max_iter,
        residual: rel,
        tolerance: tol,
    })
}

/// Multigrid-preconditioned CG, then (should it stop short of `tol`) diagonal-preconditioned CG
/// from zero; iterations of both count against `max_iter`.
#[allow(clippy::too_many_arguments)]
fn pcg_multigrid_then_jacobi(
    c: &Coefficients,
    lattice: &PbLattice,
    diag_extra: &[f64],
    b: &[f64],
    x: &mut [f64],
    tol: f64,
    max_iter: usize,
    stop: Stop<'_>,
) -> Result<(usize, f64), PbError> {
    let mg = Multigrid::new(Operator::new(
        lattice.dims,
        lattice.spacing_angstrom,
        c.eps.clone(),
        diag_extra.to_vec(),
    ));
    let cap = max_iter.min(MAX_MG_ITERATIONS);
    let used = match pcg(c, lattice, diag_extra, b, x, tol, cap, Some(&mg), stop) {
        Ok(done) => return Ok(done),
        Err(PbError::NotConverged { iterations, .. }) => iterations,
        Err(PbError::BadInput(_)) => 0,
        Err(other) => return Err(other),
    };
    drop(mg);
    x.iter_mut().for_each(|v| *v = 0.0);
    match pcg(
        c,
        lattice,
        diag_extra,
        b,
        x,
        tol,
        max_iter.saturating_sub(used),
        None,
        stop,
    ) {
        Ok((it, rel)) => Ok((it + used, rel)),
        Err(PbError::NotConverged {
            iterations,
            residual,
            tolerance,
        }) => Err(PbError::NotConverged {
            iterations: iterations + used,
            residual,
            tolerance,
        }),
        Err(other) => Err(other),
    }
}

fn zero_faces(lattice: &PbLattice, v: &mut [f64]) {
    let [nx, ny, nz] = lattice.dims;
    let plane = nx * ny;
    v.par_chunks_mut(plane).enumerate().for_each(|(k, slab)| {
        for (o, x) in slab.iter_mut().enumerate() {
            let (i, j) = (o % nx, o / nx);
            if k == 0 || k + 1 >= nz || i == 0 || j == 0 || i + 1 >= nx || j + 1 >= ny {
                *x = 0.0;
            }
        }
    });
}

/// A caller's request to stop: looked at before each conjugate-gradient iteration.
pub type Stop<'a> = &'a (dyn Fn() -> bool + Sync);

fn never() -> bool {
    false
}

/// See the module documentation and `compute::pb::solve`.
pub fn solve(
    atoms: &PbAtoms,
    lattice: &PbLattice,
    p: &PbParams,
    warm_start: Option<&[f64]>,
) -> Result<PbSolution, PbError> {
    solve_until(atoms, lattice, p, warm_start, &never)
}

/// [`solve`] that ends with [`PbError::Cancelled`] once `stop` says so (looked at after the maps
/// and before each conjugate-gradient iteration: a few milliseconds apart for adk at 1 A).
pub fn solve_until(
    atoms: &PbAtoms,
    lattice: &PbLattice,
    p: &PbParams,
    warm_start: Option<&[f64]>,
    stop: Stop<'_>,
) -> Result<PbSolution, PbError> {
    check(atoms, lattice, p)?;
    let c = coefficients(atoms, lattice, p).map_err(PbError::BadInput)?;
    if stop() {
        return Err(PbError::Cancelled);
    }
    solve_coefficients_until(&c, lattice, p, warm_start, stop)
}

/// Solves the problem the maps `c` state (the face values are `c.boundary`'s), starting from
/// `warm_start` inside when given; the caller has checked the input (`compute::pb::check_input`).
pub fn solve_coefficients(
    c: &Coefficients,
    lattice: &PbLattice,
    p: &PbParams,
    warm_start: Option<&[f64]>,
) -> Result<PbSolution, PbError> {
    solve_coefficients_until(c, lattice, p, warm_start, &never)
}

/// [`solve_coefficients`] that ends with [`PbError::Cancelled`] once `stop` says so.
pub fn solve_coefficients_until(
    c: &Coefficients,
    lattice: &PbLattice,
    p: &PbParams,
    warm_start: Option<&[f64]>,
    stop: Stop<'_>,
) -> Result<PbSolution, PbError> {
    let n = lattice.n_points();
    if c.boundary.len() != n || c.source.len() != n || c.kbar2.len() != n || c.eps.iter().any(|e| e.len() != n) {
        return Err(bad(format!(
            "maps of {} points for a lattice of {:?} ({n} points)",
            c.boundary.len(),
            lattice.dims
        )));
    }
    // The iterate: boundary values on the faces, the warm start (or zero) inside.
    let mut u = match warm_start {
        Some(w) if w.len() == n && w.iter().all(|v| v.is_finite()) => w.to_vec(),
        _ => vec![0.0; n],
    };
    let [nx, ny, nz] = lattice.dims;
    for k in 0..nz {
        for j in 0..ny {
            for i in 0..nx {
                if i == 0 || j == 0 || k == 0 || i + 1 == nx || j + 1 == ny || k + 1 == nz {
                    let idx = i + nx * (j + ny * k);
                    if let (Some(dst), Some(&g)) = (u.get_mut(idx), c.boundary.get(idx)) {
                        *dst = g;
                    }
                }
            }
        }
    }
    if !p.nonlinear {
        // A u = f with u's faces fixed: solve for the correction from the current iterate.
        let mut residual = vec![0.0; n];
        apply(c, lattice, &c.kbar2, &u, &mut residual);
        let mut rhs: Vec<f64> = c.source.iter().zip(&residual).map(|(f, a)| f - a).collect();
        zero_faces(lattice, &mut rhs);
        let mut du = vec![0.0; n];
        // Relative to the source's norm, so a warm start near the solution stops early.
        let f_norm = {
            let mut f = c.source.clone();
            zero_faces(lattice, &mut f);
            dot(&f, &f).sqrt()
        };
        let r_norm = dot(&rhs, &rhs).sqrt();
        if r_norm <= p.tolerance * f_norm {
            return Ok(PbSolution {
                lattice: *lattice,
                potential_kt_per_e: u,
                iterations: 0,
                relative_residual: r_norm / f_norm.max(1e-300),
            });
        }
        let tol = if r_norm > 0.0 {
            p.tolerance * f_norm / r_norm
        } else {
            1.0
        };
        let (iterations, rel) = pcg_multigrid_then_jacobi(
            c,
            lattice,
            &c.kbar2,
            &rhs,
            &mut du,
            tol.min(0.999),
            p.max_iterations,
            stop,
        )?;
        u.par_iter_mut().zip(&du).for_each(|(a, d)| *a += d);
        return Ok(PbSolution {
            lattice: *lattice,
            potential_kt_per_e: u,
            iterations,
            relative_residual: rel * r_norm / f_norm.max(1e-300),
        });
    }
    // Nonlinear: Newton steps (A0 + kbar2 cosh u) du = f - A0 u - kbar2 sinh u.
    let mut used = 0usize;
    let mut source_interior = c.source.clone();
    zero_faces(lattice, &mut source_interior);
    let f_norm = dot(&source_interior, &source_interior).sqrt().max(1e-300);
    let zero = vec![0.0; n];
    for _ in 0..MAX_NEWTON_STEPS {
        let mut a0u = vec![0.0; n];
        apply(c, lattice, &zero, &u, &mut a0u);
        let mut rhs: Vec<f64> = (0..n)
            .into_par_iter()
            .map(|q| {
                let uq = u.get(q).copied().unwrap_or(0.0).clamp(-300.0, 300.0);
                let k2 = c.kbar2.get(q).copied().unwrap_or(0.0);
                c.source.get(q).copied().unwrap_or(0.0) - a0u.get(q).copied().unwrap_or(0.0) - k2 * uq.sinh()
            })
            .collect();
        zero_faces(lattice, &mut rhs);
        let rel_f = dot(&rhs, &rhs).sqrt() / f_norm;
        if rel_f <= p.tolerance {
            return Ok(PbSolution {
                lattice: *lattice,
                potential_kt_per_e: u,
                iterations: used,
                relative_residual: rel_f,
            });
        }
        let jac: Vec<f64> = c
            .kbar2
            .par_iter()
            .zip(&u)
            .map(|(k2, uq)| k2 * uq.clamp(-300.0, 300.0).cosh())
            .collect();
        let mut du = vec![0.0; n];
        let left = p.max_iterations.saturating_sub(used);
        if left == 0 {
            return Err(PbError::NotConverged {
                iterations: used,
                residual: rel_f,
                tolerance: p.tolerance,
            });
        }
        let inner_tol = (0.1 * p.tolerance / rel_f.max(1e-300)).clamp(1e-10, 0.1);
        let (it, _) =
            pcg_multigrid_then_jacobi(c, lattice, &jac, &rhs, &mut du, inner_tol, left, stop).or_else(|e| match e {
                // An inexact Newton step is still a step: take what CG reached when it is usable.
                PbError::NotConverged { iterations, .. } => Ok((iterations, f64::NAN)),
                other => Err(other),
            })?;
        used += it;
        u.par_iter_mut().zip(&du).for_each(|(a, d)| *a += d);
    }
    Err(PbError::NotConverged {
        iterations: used,
        residual: f64::NAN,
        tolerance: p.tolerance,
    })
}
