//! Electrostatic potential maps of point charges: the choice of summation method and boundary, and
//! the per-request preparation every method needs before lattice slabs can be filled.
//!
//! Owns [`EspMethod`] (direct Coulomb sum, smoothed cutoff sum, multilevel summation), [`MsmParams`],
//! [`Boundary`] (open or a periodic cell) and [`field_input`], which turns charges plus a method into
//! the [`FieldInput`] that engines and the jobs pool consume. Called by the CLI (`grid esp`,
//! `points --field esp`, `ions`), by the viewer's potential representations and by the benches.
//! Potentials are in atomic units (hartree/e) everywhere inside; unit conversion for files happens
//! in the CLI.

use crate::compute::{ComputeError, FieldInput, PointCharges};
use crate::model::{Lattice, UnitCell};
use std::sync::Arc;

/// Default MSM splitting distance a (Angstrom), as in Hardy et al. 2009 and VMD's `coulombmsm`.
pub const DEFAULT_MSM_CUTOFF_ANGSTROM: f64 = 12.0;
/// Default finest MSM lattice spacing h (Angstrom).
pub const DEFAULT_MSM_SPACING_ANGSTROM: f64 = 2.0;

/// Multilevel summation parameters.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MsmParams {
    /// Splitting distance a: the short-range part vanishes beyond it (Angstrom).
    pub cutoff_angstrom: f64,
    /// Spacing h of the finest MSM lattice (Angstrom); each coarser level doubles it.
    pub spacing_angstrom: f64,
}

impl Default for MsmParams {
    fn default() -> Self {
        MsmParams {
            cutoff_angstrom: DEFAULT_MSM_CUTOFF_ANGSTROM,
            spacing_angstrom: DEFAULT_MSM_SPACING_ANGSTROM,
        }
    }
}

/// How the Coulomb sum over charges is carried out.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum EspMethod {
    /// Exact direct Coulomb summation, O(charges x points).
    #[default]
    Direct,
    /// Smoothed short-range sum: charges within `cutoff_angstrom` only, found through spatial bins
    /// (the potential is shifted and smoothed to zero at the cutoff, as for the MSM short-range part).
    Cutoff { cutoff_angstrom: f64 },
    /// Multilevel summation (short-range part exact, long-range part on nested lattices).
    Msm(MsmParams),
}

/// Boundary conditions of the charge system.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub enum Boundary {
    /// Isolated system: the potential of exactly the given charges.
    #[default]
    Open,
    /// Infinite periodic replication of the cell (orthorhombic or triclinic); the cell must be
    /// net-neutral or is treated with a neutralising background.
    Periodic(UnitCell),
}

/// The engine input for the potential of `charges` by `method` under `boundary`, prepared for
/// `lattice` (methods with a long-range part compute it here, once per request).
pub fn field_input(
    charges: Arc<PointCharges>,
    method: EspMethod,
    boundary: Boundary,
    lattice: &Lattice,
) -> Result<FieldInput, ComputeError> {
    let _ = lattice;
    match (method, boundary) {
        (EspMethod::Direct, Boundary::Open) => Ok(FieldInput::Charges(charges)),
        _ => Err(ComputeError::Device(
            "this summation method or boundary is not available yet".to_string(),
        )),
    }
}
