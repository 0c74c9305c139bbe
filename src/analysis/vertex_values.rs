//! Fields sampled at the vertices of a surface or a cartoon: the values a mesh is coloured by.
//!
//! Owns the ways a surface gets its per-vertex values: the Coulomb potential of point charges
//! evaluated exactly at the vertex positions ([`potential_at_vertices`]: direct summation up to
//! [`DIRECT_LIMIT_TERMS`] charge-vertex pairs, multilevel summation above), a wavefunction's own
//! electrostatic potential (nuclei and electron density) evaluated exactly at the vertex positions
//! ([`qm_potential_at_vertices`], the "ESP-mapped density" of GaussView and Multiwfn; up to the
//! size [`qm_vertices_fit`] allows), and a loaded or computed volume (a DX or cube map from APBS,
//! Delphi or a QM program) sampled trilinearly ([`volume_at_vertices`]). Called by the viewer's and
//! `render`'s representation list (through `jobs::vertex_values`, for surfaces and cartoons), the
//! `surface` command and the tests; values are in the source's units (hartree/e for potentials,
//! file units for volumes).
//!
//! Screened models (eps = 4r, Debye-Hueckel) go through [`potential_at_vertices_in`]: always the
//! direct sum.
//!
//! Errors: the direct sum is exact to the f32 rounding of each term (~1e-7 relative per term,
//! Kahan-summed; `compute::cpu::potential`); above the limit, the multilevel method with its default
//! parameters (a = 12 A, h = 2 A, C2 Taylor splitting, cubic interpolation) has the error of
//! `compute::esp` (about 1e-3 relative on protein surfaces). A wavefunction's potential is the CPU
//! engine's f64 integral evaluation (`compute::cpu::qm_esp`, held to PySCF at 1e-6), rounded to f32.

use crate::compute::cpu;
use crate::compute::esp::screening::{Dielectric, field_input_screened};
use crate::compute::esp::{self, Boundary, EspMethod, MsmParams};
use crate::compute::{ComputeError, Field, FieldInput, PointCharges};
use crate::model::units::bohr_from_angstrom;
use crate::model::{Grid3, Lattice, Wavefunction};
use crate::surface::MeshData;
use std::sync::Arc;

/// Above this many charge-vertex pairs the potential at vertices uses multilevel summation (the
/// placement policy's rule).
pub use crate::compute::placement::VERTEX_DIRECT_LIMIT_TERMS as DIRECT_LIMIT_TERMS;

/// Lattice spacing (Angstrom) of the map the multilevel method is planned for (only its extent and
/// the MSM lattices matter: points are evaluated exactly where the vertices are).
const PLAN_SPACING_ANGSTROM: f64 = 2.0;

fn vertices_bohr(mesh: &MeshData) -> Vec<[f64; 3]> {
    mesh.positions_angstrom
        .iter()
        .map(|p| p.map(|x| bohr_from_angstrom(f64::from(x))))
        .collect()
}

/// Never stops an evaluation (the `stop` of the `_until` functions called without cancellation).
fn never() -> bool {
    false
}

/// The potential of `charges` at every vertex of `mesh`, in hartree/e.
pub fn potential_at_vertices(mesh: &MeshData, charges: &PointCharges) -> Result<Vec<f32>, ComputeError> {
    potential_at_vertices_until(mesh, charges, &never)
}

/// [`potential_at_vertices`] that ends with [`ComputeError::Cancelled`] once `stop` says so
/// (`compute::cpu::evaluate_points_until`).
pub fn potential_at_vertices_until(
    mesh: &MeshData,
    charges: &PointCharges,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<f32>, ComputeError> {
    let points = vertices_bohr(mesh);
    if points.is_empty() {
        return Ok(Vec::new());
    }
    let msm = crate::compute::placement::vertex_potential_uses_msm(points.len(), charges.charges_e.len());
    let charges = Arc::new(charges.clone());
    let input = if !msm {
        FieldInput::Charges(charges)
    } else {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in &mesh.positions_angstrom {
            for k in 0..3 {
                lo[k] = lo[k].min(f64::from(p[k]));
                hi[k] = hi[k].max(f64::from(p[k]));
            }
        }
        let lattice = Lattice::around_box(lo, hi, 1.0, PLAN_SPACING_ANGSTROM);
        esp::field_input(charges, EspMethod::Msm(MsmParams::default()), Boundary::Open, &lattice)?
    };
    let values = cpu::evaluate_points_until(&Field::Potential, &input, &points, stop)?;
    Ok(values.into_iter().map(|v| v as f32).collect())
}

/// The potential of `charges` in the medium `dielectric` at every vertex of `mesh`, in hartree/e:
/// vacuum as [`potential_at_vertices`]; a screened model
/// ([`crate::compute::esp::screening`]) by the direct sum at any size (multilevel summation splits
/// 1/r only), exact to the f32 rounding of each term.
pub fn potential_at_vertices_in(
    mesh: &MeshData,
    charges: &PointCharges,
    dielectric: Dielectric,
) -> Result<Vec<f32>, ComputeError> {
    potential_at_vertices_in_until(mesh, charges, dielectric, &never)
}

/// [`potential_at_vertices_in`] that ends with [`ComputeError::Cancelled`] once `stop` says so.
pub fn potential_at_vertices_in_until(
    mesh: &MeshData,
    charges: &PointCharges,
    dielectric: Dielectric,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<f32>, ComputeError> {
    if dielectric.is_vacuum() {
        return potential_at_vertices_until(mesh, charges, stop);
    }
    let points = vertices_bohr(mesh);
    if points.is_empty() {
        return Ok(Vec::new());
    }
    let input = field_input_screened(
        Arc::new(charges.clone()),
        EspMethod::Direct,
        Boundary::Open,
        dielectric,
        &Lattice::axis_aligned([0.0; 3], 1.0, [0, 0, 0]),
    )?;
    let values = cpu::evaluate_points_until(&Field::Potential, &input, &points, stop)?;
    Ok(values.into_iter().map(|v| v as f32).collect())
}

/// The electrostatic potential of `wf` (its nuclei and its electron density) at every vertex of
/// `mesh`, in hartree/e: the CPU engine's point evaluation, not a lattice.
pub fn qm_potential_at_vertices(mesh: &MeshData, wf: &Arc<Wavefunction>) -> Result<Vec<f32>, ComputeError> {
    qm_potential_at_vertices_until(mesh, wf, &never)
}

/// [`qm_potential_at_vertices`] that ends with [`ComputeError::Cancelled`] once `stop` says so.
pub fn qm_potential_at_vertices_until(
    mesh: &MeshData,
    wf: &Arc<Wavefunction>,
    stop: &(dyn Fn() -> bool + Sync),
) -> Result<Vec<f32>, ComputeError> {
    let points = vertices_bohr(mesh);
    if points.is_empty() {
        return Ok(Vec::new());
    }
    let values = cpu::evaluate_points_until(
        &Field::QmPotential,
        &FieldInput::Wavefunction(Arc::clone(wf)),
        &points,
        stop,
    )?;
    Ok(values.into_iter().map(|v| v as f32).collect())
}

/// Whether surfaces of `vertices` vertices (all lobes) are coloured by a wavefunction's potential
/// at their vertices rather than sampled from the `lattice_points` lattice of the colouring field.
///
/// Both cost one potential evaluation per point (the same integrals over the density's
/// distributions), so up to the lattice's point count the exact colours cost no more than the
/// lattice they replace. An isosurface has far fewer vertices than its lattice has points (a few
/// percent: a surface, not a volume), so only pathological meshes (noise on a fine lattice) go
/// past it; there the lattice is the cheaper way and the colours would otherwise lag behind the
/// surfaces by more than a lattice colour field does.
pub fn qm_vertices_fit(vertices: usize, lattice_points: usize) -> bool {
    vertices <= lattice_points
}

/// `grid` sampled trilinearly at every vertex of `mesh` (vertices outside the lattice take the value
/// of its nearest border point), in the grid's units; `None` where the grid cannot be sampled.
pub fn volume_at_vertices(mesh: &MeshData, grid: &Grid3) -> Option<Vec<f32>> {
    mesh.positions_angstrom
        .iter()
        .map(|&p| grid.trilinear_at_angstrom(p, true))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn potential_of_one_charge_at_vertices() {
        let mesh = MeshData {
            positions_angstrom: vec![[1.0, 0.0, 0.0], [0.0, -2.0, 0.0]],
            ..MeshData::default()
        };
        let charges = PointCharges {
            positions_bohr: vec![[0.0; 3]],
            charges_e: vec![-1.0],
        };
        let v = potential_at_vertices(&mesh, &charges).unwrap();
        assert!((f64::from(v[0]) + 1.0 / bohr_from_angstrom(1.0)).abs() < 1e-6);
        assert!((f64::from(v[1]) + 1.0 / bohr_from_angstrom(2.0)).abs() < 1e-6);
    }
}
