//! Trajectory analyses: radial distribution functions, orbital tracking along wavefunction series,
//! potential maps combined over frames, ion placement on potential maps, QM regions placed in MD
//! frames, frames fitted onto a reference, atomic charges from wavefunctions, protein secondary
//! structure (DSSP) per frame, hydrogen bonds, solvent-accessible surface areas, and fields
//! sampled at surface vertices (the colours of a molecular surface), and the atom each surface
//! vertex belongs to.
//!
//! Called by the `rdf`, `grid`, `points`, `ions` and `info` commands and the viewer's analysis panels;
//! the GPU kernels of the same analyses are tested against these CPU versions.

pub(crate) mod cells;
pub mod charges;
pub mod dssp;
pub mod esp_series;
pub mod fit;
pub mod hbonds;
pub mod ions;
pub mod polymer;
pub mod polymer_color;
pub mod qm_region;
pub mod ramachandran;
pub mod rdf;
pub mod sasa;
#[cfg(test)]
pub(crate) mod test_rng;
pub mod tracking;
pub mod vertex_atoms;
pub mod vertex_values;
// Implicit ligand sampling: pathways on free-energy maps.
pub mod ils_path;
