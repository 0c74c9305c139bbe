//! The CPU field engine (rayon + SIMD): the numerical reference for every other engine.
//!
//! Owns [`CpuEngine`] (a [`SlabEngine`] for every [`Field`]), [`evaluate_grid`] (a whole lattice,
//! all slabs in parallel with rayon) and [`evaluate_points`] (values at arbitrary points, for
//! `orbitfield points`). Called by the CLI (`src/cli/grid.rs`, `src/cli/points.rs`), by the jobs
//! pool's CPU workers, and by the tests that hold the GPU engine to this one.
//!
//! Orbital and density fields go through [`orbital`] (4x4x4 lattice tiles, per-tile screening of
//! primitives, f64x4 SIMD, `exp2` with pre-scaled exponents); potentials through [`potential`]
//! (direct Coulomb sum, f32x8 terms with Kahan summation). Values are computed in f64 and rounded
//! to f32 once, on the way into the lattice.
//!
//! Tolerances (tested in `tests/cpu_engine.rs` against the exact f64 evaluator and PySCF): orbital
//! and density lattices agree with exact evaluation to better than 1e-9 relative in the 2-norm
//! before the f32 rounding (screening drops at most [`orbital::SCREEN_EPS`] per primitive);
//! potentials to ~1e-7 relative per term.

pub mod orbital;
pub mod overlap;
pub mod points;
pub mod potential;
pub mod simd;

use crate::compute::{ComputeError, Field, FieldInput, FieldJob, SlabEngine, slab_len};
use crate::model::{Grid3, Lattice};
use orbital::{BLOCK, PreparedOrbitals};
use potential::PreparedCharges;
use rayon::prelude::*;
use std::ops::Range;

/// Edge of a lattice tile of the orbital kernel (4x4x4 = [`BLOCK`] points).
const TILE: usize = 4;

/// The multithreaded CPU engine. Stateless: every slab prepares its inputs (cheap next to the
/// lattice work: a few microseconds per basis).
#[derive(Clone, Copy, Debug, Default)]
pub struct CpuEngine;

/// A job's inputs, prepared once for many slabs.
enum Prepared {
    Orbitals(PreparedOrbitals),
    Charges(PreparedCharges),
}

fn prepare(job: &FieldJob) -> Result<Prepared, ComputeError> {
    match (&job.field, &job.input) {
        (Field::Potential, FieldInput::Charges(q)) => Ok(Prepared::Charges(PreparedCharges::new(q))),
        (Field::Potential, FieldInput::Wavefunction(_)) => Err(ComputeError::WrongInput(
            job.field.clone(),
            "point charges, not a wavefunction",
        )),
        (_, FieldInput::Wavefunction(wf)) => Ok(Prepared::Orbitals(PreparedOrbitals::new(wf, &job.field)?)),
        (_, FieldInput::Charges(_)) => Err(ComputeError::WrongInput(job.field.clone(), "a wavefunction")),
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
}

/// Fills the slab `z_range` (already checked against `out`), tiles of [`TILE`] planes in parallel.
fn fill_slab(prepared: &Prepared, lattice: &Lattice, z_range: Range<usize>, out: &mut [f32]) {
    let [nx, ny, _] = lattice.dims;
    let plane = nx * ny;
    if plane == 0 {
        return;
    }
    let z0 = z_range.start;
    let z_len = z_range.len();
    // Parallel work items: (tile plane group, band of TILE rows), each writing its own values;
    // collected per plane group so that the output slices stay disjoint.
    out.par_chunks_mut(plane * TILE).enumerate().for_each(|(chunk, dst)| {
        let kz0 = z0 + chunk * TILE;
        let nz = (z_len - chunk * TILE).min(TILE);
        match prepared {
            Prepared::Orbitals(p) => fill_orbital_planes(p, lattice, kz0, nz, dst),
            Prepared::Charges(p) => fill_potential_planes(p, lattice, kz0, nz, dst),
        }
    });
}

/// Orbital kernel over `nz` planes starting at plane `kz0`, in 4x4xnz tiles.
fn fill_orbital_planes(p: &PreparedOrbitals, lattice: &Lattice, kz0: usize, nz: usize, dst: &mut [f32]) {
    let [nx, ny, _] = lattice.dims;
    // Bands of TILE rows in parallel too, so thin slabs still use every core.
    let bands: Vec<(usize, Vec<f64>)> = (0..ny.div_ceil(TILE))
        .into_par_iter()
        .map(|band| {
            let mut scratch = p.scratch();
            let j0 = band * TILE;
            let my = (ny - j0).min(TILE);
            let mut values = vec![0.0f64; nx * my * nz];
            let mut points = Vec::with_capacity(BLOCK);
            let mut idx = Vec::with_capacity(BLOCK);
            let mut vals = [0.0f64; BLOCK];
            for i0 in (0..nx).step_by(TILE) {
                let mx = (nx - i0).min(TILE);
                points.clear();
                idx.clear();
                for dk in 0..nz {
                    for dj in 0..my {
                        for di in 0..mx {
                            points.push(lattice.point_bohr(i0 + di, j0 + dj, kz0 + dk));
                            idx.push(i0 + di + nx * (dj + my * dk));
                        }
                    }
                }
                p.eval_block(&mut scratch, &points, &mut vals);
                for (&i, &v) in idx.iter().zip(vals.iter()) {
                    if let Some(slot) = values.get_mut(i) {
                        *slot = v;
                    }
                }
            }
            (j0, values)
        })
        .collect();
    for (j0, values) in bands {
        let my = (ny - j0).min(TILE);
        for dk in 0..nz {
            for dj in 0..my {
                let src = nx * (dj + my * dk);
                let dst_start = nx * (j0 + dj + ny * dk);
                if let (Some(s), Some(d)) = (values.get(src..src + nx), dst.get_mut(dst_start..dst_start + nx)) {
                    for (o, &v) in d.iter_mut().zip(s) {
                        *o = v as f32;
                    }
                }
            }
        }
    }
}

/// Potential over `nz` planes starting at `kz0`, eight points of a row at a time.
fn fill_potential_planes(p: &PreparedCharges, lattice: &Lattice, kz0: usize, nz: usize, dst: &mut [f32]) {
    let [nx, ny, _] = lattice.dims;
    let step = lattice.steps_bohr[0];
    dst.par_chunks_mut(nx).enumerate().take(ny * nz).for_each(|(row, d)| {
        let j = row % ny;
        let k = kz0 + row / ny;
        let mut vals = [0.0f64; 8];
        for i0 in (0..nx).step_by(8) {
            let n = (nx - i0).min(8);
            p.eval_row8(lattice.point_bohr(i0, j, k), step, n, &mut vals);
            if let Some(o) = d.get_mut(i0..i0 + n) {
                for (o, &v) in o.iter_mut().zip(&vals) {
                    *o = v as f32;
                }
            }
        }
    });
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
    let job = FieldJob {
        field: field.clone(),
        lattice: Lattice::axis_aligned([0.0; 3], 1.0, [0, 0, 0]),
        input: input.clone(),
    };
    let prepared = prepare(&job)?;
    let mut out = vec![0.0; points_bohr.len()];
    match &prepared {
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
    }
    if out.iter().all(|v| v.is_finite()) {
        Ok(out)
    } else {
        Err(ComputeError::NotFinite)
    }
}
