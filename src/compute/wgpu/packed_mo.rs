//! Orbital, |psi|^2, density and spin-density fields packed for device kernels that read the basis
//! from arrays: the WGSL orbital pass of `compute::wgpu::orbital` (and, through the same
//! [`BasisPlan`] functions, the general CUDA kernel of `compute::cuda::mo`).
//!
//! Called by whoever drives the render device's orbital pass (the `bench` command, tests, the app).
//! The packing is the CUDA engine's: shells with centres relative to the lattice origin and per-orbital
//! screening radii ([`BasisPlan::cutoffs2`]), primitives as `(alpha * log2 e, d)` pairs, and each
//! orbital's coefficients contracted with the angular functions into monomial coefficients (so pure
//! and Cartesian shells are the same thing on the device). A field is a list of terms: one orbital
//! each, stored as `psi` (mode 0), `w psi^2` (mode 1) or added as `w psi^2` (mode 2), in order.

use crate::compute::layout::{BasisPlan, GpuShell, MAX_L, orbital_terms};
use crate::compute::{ComputeError, Field};
use crate::model::Wavefunction;

/// One orbital of a field, packed: its shells (screening radii depend on the orbital), its
/// contracted monomial coefficients, how it is stored and its weight.
#[derive(Clone, Debug)]
pub struct PackedTerm {
    pub shells: Vec<GpuShell>,
    pub coefs: Vec<f32>,
    /// 0: `out = psi`; 1: `out = weight * psi^2`; 2: `out += weight * psi^2`.
    pub mode: u32,
    pub weight: f32,
}

/// A field of one wavefunction ready for a device kernel.
#[derive(Clone, Debug)]
pub struct PackedMoField {
    /// `[alpha * log2 e, radial coefficient]` of every shell's primitives (shared by all terms).
    pub prims: Vec<[f32; 2]>,
    /// In evaluation order; the first one stores (mode 0 or 1), the rest add.
    pub terms: Vec<PackedTerm>,
    /// Highest angular momentum of the basis.
    pub max_l: u8,
}

impl PackedMoField {
    /// Packs `field` of `wf` for a lattice whose origin is `origin_bohr` (shell centres are stored
    /// relative to it, so f32 positions keep their precision far from the coordinate origin).
    pub fn new(wf: &Wavefunction, field: &Field, origin_bohr: [f64; 3]) -> Result<PackedMoField, ComputeError> {
        let plan = BasisPlan::new(&wf.basis)?;
        let terms = orbital_terms(field, wf, &plan)?;
        let (prims, shell_base) = plan.packed_prims();
        let terms = terms
            .iter()
            .map(|t| PackedTerm {
                shells: plan.packed_shells(&shell_base, &plan.cutoffs2(&t.poly), origin_bohr),
                coefs: t.poly.iter().map(|&v| v as f32).collect(),
                mode: t.mode.clamp(0, 2) as u32,
                weight: t.weight,
            })
            .collect();
        Ok(PackedMoField {
            prims,
            terms,
            max_l: wf.basis.max_l().min(MAX_L),
        })
    }

    /// Shells summed over all terms.
    pub fn n_shells(&self) -> usize {
        self.terms.iter().map(|t| t.shells.len()).sum()
    }
}
