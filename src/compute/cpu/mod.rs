//! The CPU field engine (rayon + SIMD): the numerical reference for every other engine.
//!
//! Owns [`CpuEngine`] (a [`SlabEngine`] for every [`Field`]), [`evaluate_grid`] (a whole lattice,
//! all slabs in parallel with rayon) and [`evaluate_points`] (values at arbitrary points, for
//! `orbitfield points`). Called by the CLI (`src/cli/grid.rs`, `src/cli/points.rs`), by the jobs
//! pool's CPU workers, and by the tests that hold the GPU engine to this one.
//!
//! Orbital and density fields go through [`orbital`] (8x8 tiles of a lattice plane, per-tile screening of
//! primitives, f64x4 SIMD, `exp2` with pre-scaled exponents); potentials through [`potential`]
//! (direct Coulomb sum, f32x8 terms with Kahan summation). Values are computed in f64 and rounded
//! to f32 once, on the way into the lattice.
//!
//! Tolerances (tested in `tests/cpu_engine.rs` against the exact f64 evaluator and PySCF): orbital
//! and density lattices agree with exact evaluation to better than 1e-9 relative in the 2-norm
//! before the f32 rounding (screening drops at most [`orbital::SCREEN_EPS`] per primitive);
//! potentials to ~1e-7 relative per term.

pub mod boys4;
pub mod ils;
pub mod molsurf;
pub mod orbital;
pub mod pb;
pub mod pb_maps;
pub mod pb_mg;
pub mod pb_surface;
pub mod points;
pub mod potential;
pub mod qm_esp;
pub mod ses;
pub mod simd;

use crate::compute::esp::EspPlan;
use crate::compute::qm_esp::PreparedQmEsp;
use crate::compute::{ComputeError, Field, FieldInput, FieldJob, SlabEngine, slab_len};
use crate::model::{Grid3, Lattice};
use molsurf::PreparedMolSurf;
use orbital::{BLOCK, PreparedOrbitals};
use potential::PreparedCharges;
use rayon::prelude::*;
use std::ops::Range;
use std::sync::Arc;

/// Lattice tiles of the orbital kernel: 8x8 points of one z-plane ([`BLOCK`] points). Tiles never
/// span planes, so the values of a plane do not depend on how a lattice is cut into slabs: every
/// slab decomposition (CPU or GPU workers, any slab height) gives bit-identical lattices.
const TILE_X: usize = orbital::TILE_EDGE;
const TILE_Y: usize = orbital::TILE_EDGE;

/// The multithreaded CPU engine. Stateless: every slab prepares its inputs (cheap next to the
/// lattice work: microseconds to a few milliseconds per basis).
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuEngine;

/// A job's inputs, prepared once for many slabs.
enum Prepared {
    Orbitals(PreparedOrbitals),
    Charges(PreparedCharges),
    Plan(Arc<EspPlan>),
    QmEsp(Box<PreparedQmEsp>),
    MolSurf(PreparedMolSurf),
    Excluded(ses::PreparedSes),
}

fn prepare(job: &FieldJob) -> Result<Prepared, ComputeError> {
    match (&job.field, &job.input) {
        (Field::MolSurf, FieldInput::Spheres(atoms)) => Ok(match atoms.excluded_surface() {
            Some(surface) => Prepared::Excluded(ses::PreparedSes::new(surface)),
            None => Prepared::MolSurf(PreparedMolSurf::new(atoms)),
        }),
        (Field::MolSurf, _) => Err(ComputeError::WrongInput(job.field.clone(), "atoms with radii")),
        (_, FieldInput::Spheres(_)) => Err(ComputeError::WrongInput(
            job.field.clone(),
            "a wavefunction or point charges",
        )),
        (Field::Potential, FieldInput::Charges(q)) => Ok(Prepared::Charges(PreparedCharges::new(q))),
        (Field::Potential, FieldInput::ScreenedCharges(s)) => {
            Ok(Prepared::Charges(PreparedCharges::screened(&s.charges, s.dielectric)))
        }
        (Field::Potential, FieldInput::Electrostatics(plan)) => Ok(Prepared::Plan(plan.clone())),
        (Field::Potential, FieldInput::DeferredElectrostatics(d)) => Ok(Prepared::Plan(d.plan()?)),
        (Field::Potential, FieldInput::Wavefunction(_)) => Err(ComputeError::WrongInput(
            job.field.clone(),
            "point charges, not a wavefunction",
        )),
        (Field::QmPotential, FieldInput::Wavefunction(wf)) => Ok(Prepared::QmEsp(Box::new(PreparedQmEsp::new(wf)?))),
        (_, FieldInput::Wavefunction(wf)) => Ok(Prepared::Orbitals(PreparedOrbitals::new(wf, &job.field)?)),
        (
            _,
            FieldInput::Charges(_)
            | FieldInput::ScreenedCharges(_)
            | FieldInput::Electrostatics(_)
            | FieldInput::DeferredElectrostatics(_),
        ) => Err(ComputeError::WrongInput(job.field.clone(), "a wavefunction")),
    }
}

impl SlabEngine for CpuEngine {
    fn name(&self) -> String {
        format!("cpu ({} threads)", rayon::current_num_threads())
    }

    fn compute_slab(&self, job: &FieldJob, z_range: Range<usize>, out: &mut [f32]) -> Result<(), ComputeError> {
        let need = slab_len(&job.lattice, &z_range);
        if out.len() != need || z_range.end > job.lattice.dims[2] {
            return Err(ComputeError::BadOutput { got: out.len(), need });
        }
        let prepared = prepare(job)?;
        fill_slab(&prepared, &job.lattice, z_range, out);
        if out.iter().all(|v| v.is_finite()) {
            Ok(())
        } else {
            Err(ComputeError::NotFinite)
        }
    }

    /// A batch of single orbitals of one wavefunction ([`crate::compute::batchable`]), each
    /// slab of `outs` checked against the lattice: the basis is evaluated once per point for all.
    /// Jobs that are not single orbitals of one wavefunction are refused.
    fn compute_batch(
        &self,
        jobs: &[&FieldJob],
        z_range: Range<usize>,
        outs: &mut [&mut [f32]],
    ) -> Result<(), ComputeError> {
        let first = jobs
            .first()
            .ok_or_else(|| ComputeError::BadInput("an empty batch".into()))?;
        let FieldInput::Wavefunction(wf) = &first.input else {
            return Err(ComputeError::WrongInput(first.field.clone(), "a wavefunction"));
        };
        let lattice = first.lattice;
        let need = slab_len(&lattice, &z_range);
        if let Some(bad) = outs.iter().find(|o| o.len() != need) {
            return Err(ComputeError::BadOutput { got: bad.len(), need });
        }
        if z_range.end > lattice.dims[2] {
            return Err(ComputeError::BadOutput { got: 0, need });
        }
        let fields: Vec<Field> = jobs.iter().map(|j| j.field.clone()).collect();
        let p = PreparedOrbitals::for_orbitals(wf, &fields)?;
        let plane = lattice.dims[0] * lattice.dims[1];
        if plane == 0 {
            return Ok(());
        }
        // Per plane, the destination rows of every channel.
        let mut planes: Vec<Vec<&mut [f32]>> = (0..z_range.len()).map(|_| Vec::with_capacity(outs.len())).collect();
        for out in outs.iter_mut() {
            for (dst, chunk) in planes.iter_mut().zip(out.chunks_mut(plane)) {
                dst.push(chunk);
            }
        }
        let z0 = z_range.start;
        planes
            .par_iter_mut()
            .enumerate()
            .for_each(|(dz, dsts)| fill_orbital_plane(&p, &lattice, z0 + dz, dsts));
        if outs.iter().all(|o| o.iter().all(|v| v.is_finite())) {
            Ok(())
        } else {
            Err(ComputeError::NotFinite)
        }
    }
}

/// Fills the slab `z_range` (already checked against `out`), plane by plane in parallel.
fn fill_slab(prepared: &Prepared, lattice: &Lattice, z_range: Range<usize>, out: &mut [f32]) {
    let [nx, ny, _] = lattice.dims;
    let plane = nx * ny;
    if plane == 0 {
        return;
    }
    let z0 = z_range.start;
    out.par_chunks_mut(plane)
        .enumerate()
        .for_each(|(dz, dst)| match prepared {
            Prepared::Orbitals(p) => fill_orbital_plane(p, lattice, z0 + dz, &mut [dst]),
            Prepared::Charges(p) => fill_potential_plane(p, lattice, z0 + dz, dst),
            Prepared::Plan(p) => fill_plan_plane(p, lattice, z0 + dz, dst),
            Prepared::QmEsp(p) => fill_qm_esp_plane(p, lattice, z0 + dz, dst),
            Prepared::MolSurf(p) => p.fill_plane(lattice, z0 + dz, dst),
            Prepared::Excluded(p) => p.fill_plane(lattice, z0 + dz, dst),
        });
}

/// Orbital kernel over plane `k`, in [`TILE_X`] x [`TILE_Y`] tiles (separable Gaussians on
/// axis-aligned lattices, general points otherwise); `dsts[c]` takes output channel `c`.
fn fill_orbital_plane(p: &PreparedOrbitals, lattice: &Lattice, k: usize, dsts: &mut [&mut [f32]]) {
    let [nx, ny, _] = lattice.dims;
    let mut scratch = p.scratch();
    let axis_aligned = lattice.is_axis_aligned();
    let mut points = Vec::with_capacity(BLOCK);
    let mut vals = [0.0f64; BLOCK * orbital::MAX_CHANNELS];
    for j0 in (0..ny).step_by(TILE_Y) {
        let my = (ny - j0).min(TILE_Y);
        for i0 in (0..nx).step_by(TILE_X) {
            let mx = (nx - i0).min(TILE_X);
            if axis_aligned {
                let corner = lattice.point_bohr(i0, j0, k);
                let step = [lattice.steps_bohr[0][0], lattice.steps_bohr[1][1]];
                p.eval_tile(&mut scratch, corner, step, mx, my, &mut vals);
            } else {
                points.clear();
                for dj in 0..my {
                    for di in 0..mx {
                        points.push(lattice.point_bohr(i0 + di, j0 + dj, k));
                    }
                }
                p.eval_block(&mut scratch, &points, &mut vals);
            }
            for (c, dst) in dsts.iter_mut().enumerate() {
                let vals = vals.get(c * BLOCK..).unwrap_or_default();
                for dj in 0..my {
                    let row = nx * (j0 + dj) + i0;
                    if let (Some(d), Some(v)) = (dst.get_mut(row..row + mx), vals.get(dj * mx..(dj + 1) * mx)) {
                        for (o, &x) in d.iter_mut().zip(v) {
                            *o = x as f32;
                        }
                    }
                }
            }
        }
    }
}

/// Potential over plane `k`, eight points of a row at a time.
fn fill_potential_plane(p: &PreparedCharges, lattice: &Lattice, k: usize, dst: &mut [f32]) {
    let nx = lattice.dims[0];
    let step = lattice.steps_bohr[0];
    let mut vals = [0.0f64; 8];
    for (j, d) in dst.chunks_mut(nx.max(1)).enumerate() {
        for i0 in (0..nx).step_by(8) {
            let n = (nx - i0).min(8);
            p.eval_row8(lattice.point_bohr(i0, j, k), step, n, &mut vals);
            if let Some(o) = d.get_mut(i0..i0 + n) {
                for (o, &v) in o.iter_mut().zip(&vals) {
                    *o = v as f32;
                }
            }
        }
    }
}

/// Potential of a wavefunction over plane `k`, in 8 x 8 tiles (each tile's distributions visited
/// once per tile).
fn fill_qm_esp_plane(p: &PreparedQmEsp, lattice: &Lattice, k: usize, dst: &mut [f32]) {
    let [nx, ny, _] = lattice.dims;
    let mut points = Vec::with_capacity(qm_esp::BLOCK);
    let mut vals = [0.0f64; qm_esp::BLOCK];
    for j0 in (0..ny).step_by(TILE_Y) {
        let my = (ny - j0).min(TILE_Y);
        for i0 in (0..nx).step_by(TILE_X) {
            let mx = (nx - i0).min(TILE_X);
            points.clear();
            for dj in 0..my {
                for di in 0..mx {
                    points.push(lattice.point_bohr(i0 + di, j0 + dj, k));
                }
            }
            p.eval_block(&points, &mut vals);
            for dj in 0..my {
                let row = nx * (j0 + dj) + i0;
                if let (Some(d), Some(v)) = (dst.get_mut(row..row + mx), vals.get(dj * mx..(dj + 1) * mx)) {
                    for (o, &x) in d.iter_mut().zip(v) {
                        *o = x as f32;
                    }
                }
            }
        }
    }
}

/// Cutoff or MSM potential over plane `k` from a prepared plan (short-range sum over bins plus
/// interpolation of the finest MSM lattice), in f64, rounded to f32 on the way out.
fn fill_plan_plane(p: &EspPlan, lattice: &Lattice, k: usize, dst: &mut [f32]) {
    let mut vals = vec![0.0f64; dst.len()];
    p.fill_slab(lattice, k..k + 1, &mut vals);
    for (o, v) in dst.iter_mut().zip(&vals) {
        *o = *v as f32;
    }
}

/// Computes a whole lattice on the CPU (all slabs in parallel on the current rayon pool).
pub fn evaluate_grid(job: &FieldJob) -> Result<Grid3, ComputeError> {
    let mut grid = Grid3 {
        lattice: job.lattice,
        values: Vec::new(),
        description: String::new(),
    };
    let n = job.lattice.n_points();
    grid.values = vec![0.0; n];
    CpuEngine.compute_slab(job, 0..job.lattice.dims[2], &mut grid.values)?;
    Ok(grid)
}

/// The field at arbitrary points (bohr), in f64 and atomic units, one value per point.
pub fn evaluate_points(field: &Field, input: &FieldInput, points_bohr: &[[f64; 3]]) -> Result<Vec<f64>, ComputeError> {
    evaluate_points_until(field, input, points_bohr, &|| false)
}

/// Points evaluated between two looks at [`evaluate_points_until`]'s `stop`: a few milliseconds of
/// a protein's potential on two cores, so a cancelled evaluation ends within about that.
pub const POINTS_PER_STOP_CHECK: usize = 4096;

/// [`evaluate_points`] that gives up with [`ComputeError::Cancelled`] once `stop` says so, looked
/// at before every [`POINTS_PER_STOP_CHECK`] points (the caller's cancellation by generation).
pub fn evaluate_points_until(
    field: &Field,
    input: &FieldInput,
    points_bohr: &[[f64; 3]],
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<f64>, ComputeError> {
    let job = FieldJob {
        field: field.clone(),
        lattice: Lattice::axis_aligned([0.0; 3], 1.0, [0, 0, 0]),
        input: input.clone(),
    };
    if stop() {
        return Err(ComputeError::Cancelled);
    }
    let prepared = prepare(&job)?;
    // Point charges are taken in spatial order (cells of half the grouping spread), so that eight
    // consecutive points share one pass over the charges; the values go back to the caller's order.
    let order: Option<Vec<usize>> = matches!(prepared, Prepared::Charges(_)).then(|| {
        let cell = 0.5 * potential::GROUP_SPREAD_BOHR;
        let key = |q: &[f64; 3]| q.map(|x| (x / cell).floor() as i64);
        let mut order: Vec<usize> = (0..points_bohr.len()).collect();
        order.sort_by_key(|&i| {
            points_bohr.get(i).map(|q| {
                let [x, y, z] = key(q);
                (z, y, x)
            })
        });
        order
    });
    let sorted: Vec<[f64; 3]> = match &order {
        Some(order) => order.iter().filter_map(|&i| points_bohr.get(i).copied()).collect(),
        None => Vec::new(),
    };
    let points = if order.is_some() { &sorted[..] } else { points_bohr };
    let mut values = vec![0.0; points.len()];
    for (o, pts) in values
        .chunks_mut(POINTS_PER_STOP_CHECK)
        .zip(points.chunks(POINTS_PER_STOP_CHECK))
    {
        if stop() {
            return Err(ComputeError::Cancelled);
        }
        evaluate_chunk(&prepared, pts, o);
    }
    let out = match order {
        Some(order) => {
            let mut out = vec![0.0; points_bohr.len()];
            for (&i, v) in order.iter().zip(values) {
                if let Some(o) = out.get_mut(i) {
                    *o = v;
                }
            }
            out
        }
        None => values,
    };
    if out.iter().all(|v| v.is_finite()) {
        Ok(out)
    } else {
        Err(ComputeError::NotFinite)
    }
}

/// One run of points of [`evaluate_points_until`], in parallel on the current rayon pool.
fn evaluate_chunk(prepared: &Prepared, points_bohr: &[[f64; 3]], out: &mut [f64]) {
    match prepared {
        Prepared::Orbitals(p) => {
            out.par_chunks_mut(BLOCK)
                .zip(points_bohr.par_chunks(BLOCK))
                .for_each_init(|| p.scratch(), |scratch, (o, pts)| p.eval_block(scratch, pts, o));
        }
        Prepared::Charges(p) => {
            out.par_chunks_mut(BLOCK)
                .zip(points_bohr.par_chunks(BLOCK))
                .for_each(|(o, pts)| p.eval_points(pts, o));
        }
        Prepared::Plan(p) => points::esp_plan_points(p, points_bohr, out),
        Prepared::QmEsp(p) => {
            out.par_chunks_mut(qm_esp::BLOCK)
                .zip(points_bohr.par_chunks(qm_esp::BLOCK))
                .for_each(|(o, pts)| p.eval_block(pts, o));
        }
        Prepared::MolSurf(p) => {
            out.par_chunks_mut(BLOCK)
                .zip(points_bohr.par_chunks(BLOCK))
                .for_each(|(o, pts)| p.eval_points(pts, o));
        }
        Prepared::Excluded(p) => {
            out.par_chunks_mut(BLOCK)
                .zip(points_bohr.par_chunks(BLOCK))
                .for_each(|(o, pts)| p.eval_points(pts, o));
        }
    }
}
