//! Trajectory analyses: radial distribution functions, and orbital tracking along wavefunction series.
//!
//! Called by the `rdf` command and the viewer's analysis panels; the GPU kernels of the same
//! analyses are tested against these CPU versions.

pub mod rdf;
pub mod tracking;
