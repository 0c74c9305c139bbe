//! Field engines: from a field request on a lattice to values.
//!
//! A [`FieldJob`] is everything a worker needs to fill part of a lattice: the field, the lattice
//! and the immutable inputs (a wavefunction, point charges), shared by `Arc`. Engines implement
//! [`SlabEngine`]: fill the z-slab `z_range` of the lattice into `out` (x fastest, exactly
//! `dims[0] * dims[1] * z_range.len()` values). The CPU engine in [`cpu`] is the numerical reference;
//! the CUDA engine in [`cuda`] is tested against it. Scheduling slabs over workers is `jobs`' work.
//! The field kind ([`Field`]) belongs to `model` (`model::field`) and is re-exported here.

pub mod cpu;
pub mod cuda;
pub mod esp;
pub mod molsurf;

use crate::model::{Lattice, Wavefunction};
use std::ops::Range;
use std::sync::Arc;

pub use crate::model::field::Field;

/// Point charges for potential maps: positions in bohr, charges in e.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PointCharges {
    pub positions_bohr: Vec<[f64; 3]>,
    pub charges_e: Vec<f64>,
}

/// Inputs shared by all tiles of one request.
#[derive(Clone, Debug)]
pub enum FieldInput {
    Wavefunction(Arc<Wavefunction>),
    Charges(Arc<PointCharges>),
    /// Point charges prepared for the cutoff or multilevel method ([`esp::field_input`]): binned
    /// charges and, for MSM, the finest long-range lattice potential.
    Electrostatics(Arc<esp::EspPlan>),
    /// As `Electrostatics`, the plan built by the first worker that needs it (the viewer asks for
    /// per-frame maps from its own thread, which must not compute long-range lattices).
    DeferredElectrostatics(Arc<esp::DeferredPlan>),
    /// Atoms with radii, for the molecular-surface density ([`molsurf`]).
    Spheres(Arc<molsurf::MolSurfAtoms>),
}

/// One field on one lattice: what a worker computes slab by slab.
#[derive(Clone, Debug)]
pub struct FieldJob {
    pub field: Field,
    pub lattice: Lattice,
    pub input: FieldInput,
}

/// Why an engine could not fill a slab.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ComputeError {
    #[error("the field {0:?} needs {1}")]
    WrongInput(Field, &'static str),
    #[error("orbital {index} does not exist ({count} orbitals)")]
    NoSuchOrbital { index: usize, count: usize },
    #[error("output buffer holds {got} values, the slab needs {need}")]
    BadOutput { got: usize, need: usize },
    #[error("device error: {0}")]
    Device(String),
    /// A call into the CUDA driver or NVRTC failed.
    #[error("device error: {0}")]
    Cuda(#[from] cuda::CudaError),
    #[error("the result contains NaN or infinite values")]
    NotFinite,
    #[error("cancelled")]
    Cancelled,
    /// Input that no engine can compute from (bad parameters, non-finite charges, an impossible
    /// method and boundary combination); the message names the value.
    #[error("{0}")]
    BadInput(String),
}

/// Something that can fill z-slabs of a lattice.
pub trait SlabEngine: Send + Sync {
    /// A short name for logs and the jobs panel ("cpu", "cuda:0 NVIDIA H100").
    fn name(&self) -> String;
    /// Fills `out` with the field's values at lattice points with `k` in `z_range`.
    fn compute_slab(&self, job: &FieldJob, z_range: Range<usize>, out: &mut [f32]) -> Result<(), ComputeError>;
    /// True when `compute_slab` itself fails with [`ComputeError::NotFinite`] on any value it did
    /// not write or that is not finite, so callers need no NaN pre-fill and check of their own.
    fn checks_output(&self) -> bool {
        false
    }
    /// The CUDA engine behind this engine, for work other than slabs on the same device (the jobs
    /// pool runs RDF frames on its device workers this way).
    fn as_cuda(&self) -> Option<&cuda::CudaEngine> {
        None
    }
}

/// Number of values in a slab of `lattice` covering `z_range`.
pub fn slab_len(lattice: &Lattice, z_range: &Range<usize>) -> usize {
    lattice.dims[0]
        .saturating_mul(lattice.dims[1])
        .saturating_mul(z_range.len())
}
