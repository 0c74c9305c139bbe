//! QM regions inside MD trajectories, as fields: the region, its fit per frame and the geometry
//! (`model::qm_region`, re-exported here), and the orbital job for one frame of a region with the
//! lattice chosen in the MD frame. The lattice is carried into the wavefunction's frame by the
//! inverse motion (sheared/rotated steps, which every engine supports), so MO coefficients never
//! need rotating; [`place_grid`] gives the result back its MD-frame lattice, so isosurfaces land on
//! the moving atoms.
//!
//! Called by the viewer's documents (`app::qm`), `grid --qm-region` and the tests in
//! `tests/qm_region.rs`. No GUI code here.

pub use crate::model::qm_region::*;

use crate::compute::{Field, FieldInput, FieldJob};
use crate::model::{Grid3, Lattice, Wavefunction};
use std::sync::Arc;

/// An orbital (or density) job for one frame of a QM region, and where its result belongs.
#[derive(Clone, Debug)]
pub struct PlacedJob {
    /// The job, on the MD-frame lattice carried into the wavefunction's frame.
    pub job: FieldJob,
    /// The lattice the result is shown on (MD frame).
    pub lattice_md: Lattice,
}

/// The job that computes `field` of `wf` on `lattice_md` (an MD-frame lattice, bohr) with the region
/// placed by `fit`: value (i,j,k) of the result is the field at MD-frame point
/// `origin + i a + j b + k c` once [`place_grid`] restores the MD lattice.
pub fn placed_job(fit: &RegionFit, field: Field, wf: &Arc<Wavefunction>, lattice_md: Lattice) -> PlacedJob {
    PlacedJob {
        job: FieldJob {
            field,
            lattice: fit.transform.lattice_to_wavefunction(&lattice_md),
            input: FieldInput::Wavefunction(Arc::clone(wf)),
        },
        lattice_md,
    }
}

/// A result computed by a [`placed_job`], labelled with its MD-frame lattice.
pub fn place_grid(mut grid: Grid3, lattice_md: Lattice) -> Grid3 {
    grid.lattice = lattice_md;
    grid
}
