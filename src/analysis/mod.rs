//! Trajectory analyses that need no wavefunction: radial distribution functions.
//!
//! Called by the `rdf` command and the viewer's analysis panels; the GPU kernels of the same
//! analyses are tested against these CPU versions.

pub mod rdf;
