//! Field engines: from a field request on a lattice to values.
//!
//! A [`FieldJob`] is everything a worker needs to fill part of a lattice: the field, the lattice
//! and the immutable inputs (a wavefunction, point charges), shared by `Arc`. Engines implement
//! [`SlabEngine`]: fill the z-slab `z_range` of the lattice into `out` (x fastest, exactly
//! `dims[0] * dims[1] * z_range.len()` values), or the same slab of a batch of jobs that
//! [`batchable`] groups (several orbitals of one wavefunction: [`SlabEngine::compute_slabs`]).
//! The CPU engine in [`cpu`] is the numerical reference; the CUDA engine in [`cuda`] is tested
//! against it. Scheduling slabs over workers is `jobs`' work.
//! The field kind ([`Field`]) belongs to `model` (`model::field`) and is re-exported here.

pub mod cpu;
pub mod cuda;
pub mod esp;
pub mod layout;
pub mod molsurf;
pub mod pb;
pub mod placement;
pub mod qm_esp;
pub mod request;
pub mod ses;
pub mod wgpu;
// Implicit ligand sampling: the host side shared by the engines.
pub mod ils;

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
    /// charges and, for MSM, the finest long-range lattice potential (or, with
    /// [`esp::StagesOn::Engine`], their geometry, the heavy stages left to the engine).
    Electrostatics(Arc<esp::EspPlan>),
    /// As `Electrostatics`, the plan built by the first worker that needs it (the viewer asks for
    /// per-frame maps from its own thread, which must not compute long-range lattices).
    DeferredElectrostatics(Arc<esp::DeferredPlan>),
    /// Atoms with radii, for the molecular-surface density ([`molsurf`]).
    Spheres(Arc<molsurf::MolSurfAtoms>),
    /// Point charges in a screening medium for the direct sum ([`esp::screening`]).
    ScreenedCharges(Arc<esp::screening::ScreenedCharges>),
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
    /// The wgpu engine behind this engine, for work other than slabs on the same device (the jobs
    /// pool runs implicit ligand sampling frames on its wgpu workers this way).
    #[cfg(feature = "gui")]
    fn as_wgpu(&self) -> Option<&self::wgpu::engine::WgpuEngine> {
        None
    }
    /// Fills the same z-slab of several jobs, `outs[i]` for `jobs[i]` (each exactly the slab's
    /// length): a batch that [`batchable`] groups (every job with the first, at most [`MAX_BATCH`])
    /// goes to [`SlabEngine::compute_batch`] in one call, anything else job by job. The jobs pool
    /// calls this with the batches it forms.
    fn compute_slabs(
        &self,
        jobs: &[&FieldJob],
        z_range: Range<usize>,
        outs: &mut [&mut [f32]],
    ) -> Result<(), ComputeError> {
        if jobs.len() != outs.len() {
            return Err(ComputeError::BadInput(format!(
                "{} jobs for {} output slabs",
                jobs.len(),
                outs.len()
            )));
        }
        match (jobs, &mut *outs) {
            ([], _) => Ok(()),
            ([job], [out]) => self.compute_slab(job, z_range, out),
            ([first, rest @ ..], _) if rest.len() < MAX_BATCH && rest.iter().all(|j| batchable(first, j)) => {
                self.compute_batch(jobs, z_range, outs)
            }
            _ => one_by_one(self, jobs, z_range, outs),
        }
    }
    /// Fills the same z-slab of a batch of jobs that [`batchable`] groups, sharing the work (one
    /// basis evaluation per point for all orbitals, one launch, one copy back). This default
    /// computes them one by one.
    fn compute_batch(
        &self,
        jobs: &[&FieldJob],
        z_range: Range<usize>,
        outs: &mut [&mut [f32]],
    ) -> Result<(), ComputeError> {
        one_by_one(self, jobs, z_range, outs)
    }
}

/// Computes `jobs` one after the other with [`SlabEngine::compute_slab`] (a batch an engine does
/// not share work within).
pub fn one_by_one<E: SlabEngine + ?Sized>(
    engine: &E,
    jobs: &[&FieldJob],
    z_range: Range<usize>,
    outs: &mut [&mut [f32]],
) -> Result<(), ComputeError> {
    for (job, out) in jobs.iter().zip(outs.iter_mut()) {
        engine.compute_slab(job, z_range.clone(), out)?;
    }
    Ok(())
}

/// Distances to a charge are clamped below to this (bohr), by every engine alike.
pub const MIN_DISTANCE_BOHR: f64 = 1e-3;

/// Most jobs one batched call ([`SlabEngine::compute_slabs`]) computes together.
pub const MAX_BATCH: usize = cpu::orbital::MAX_CHANNELS;

/// True when `a` and `b` can be computed in one batched slab call: single orbitals (amplitude or
/// square) of the same wavefunction (the same shared copy: one frame of a document) on the same
/// lattice, as the orbital representations of one frame ask for them.
pub fn batchable(a: &FieldJob, b: &FieldJob) -> bool {
    let single = |f: &Field| matches!(f, Field::Orbital { .. } | Field::OrbitalSquared { .. });
    let same_wf = match (&a.input, &b.input) {
        (FieldInput::Wavefunction(x), FieldInput::Wavefunction(y)) => Arc::ptr_eq(x, y),
        _ => false,
    };
    single(&a.field) && single(&b.field) && same_wf && a.lattice == b.lattice
}

/// Number of values in a slab of `lattice` covering `z_range`.
pub fn slab_len(lattice: &Lattice, z_range: &Range<usize>) -> usize {
    lattice.dims[0]
        .saturating_mul(lattice.dims[1])
        .saturating_mul(z_range.len())
}
