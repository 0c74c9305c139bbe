//! The data model: structures, trajectories, periodic cells, basis sets, wavefunctions, lattices.
//!
//! Plain data with no I/O and no GPU code. `io` builds these types, `compute` and `surface` read
//! them, `app` owns them. Units are part of every field name; conversions live in [`units`].

pub mod basis;
pub mod bonds;
pub mod cell;
pub mod charges;
pub mod color;
pub mod element;
pub mod field;
#[cfg(test)]
pub(crate) mod fresh;
pub mod grid;
pub mod name;
pub mod overlap;
pub mod qm_region;
pub mod rdf;
pub mod select;
pub mod structure;
pub mod trajectory;
pub mod units;
pub mod wavefunction;
pub mod whole;
// Implicit ligand sampling: Lennard-Jones parameters, probes, orientations, occupancy sums.
pub mod ils;
pub mod lj;

pub use basis::{BasisSet, Shell};
pub use cell::UnitCell;
pub use element::Element;
pub use field::Field;
pub use grid::{Grid3, Lattice};
pub use name::Name8;
pub use structure::{BondOrder, BondSource, Structure};
pub use trajectory::{Fork, Frame, FrameError, FrameRange, FrameSource, InMemoryFrames, Trajectory};
pub use wavefunction::{LevelSet, OrbitalLevels, OrbitalSet, QmAtom, Spin, SpinKind, Wavefunction};
