//! Fields a render device computes itself: the host part of such a request, prepared from the same
//! [`FieldJob`] the worker pool would compute, so one request can be served either way.
//!
//! Owns [`DeviceField`] (a lattice and what the device pass reads for it) and
//! [`DeviceField::from_job`]. Called by `app::fields::device` (the viewer's render-device source,
//! in the update loop or on the packing thread of `jobs::packer`); the pass itself is
//! `compute::wgpu::orbital`, recorded by `app::draw`. A new device-computed field (e.g. the molecular
//! surface density) adds a [`DeviceInput`] variant, an arm in `from_job` and one in the draw stage.

use super::packed_mo::PackedMoField;
use crate::compute::{ComputeError, Field, FieldInput, FieldJob};
use crate::model::Lattice;

/// What a device pass reads to fill a lattice.
#[derive(Clone, Debug)]
pub enum DeviceInput {
    /// An orbital, |psi|^2, the density or the spin density of one wavefunction, packed for the
    /// orbital pass (shell centres relative to the lattice origin).
    Orbital(PackedMoField),
}

/// One field on one lattice, ready for a device pass (no values on the host).
#[derive(Clone, Debug)]
pub struct DeviceField {
    pub lattice: Lattice,
    pub input: DeviceInput,
}

impl DeviceField {
    /// The device form of `job`; `Ok(None)` for a field no device pass computes.
    pub fn from_job(job: &FieldJob) -> Result<Option<DeviceField>, ComputeError> {
        let wf = match (&job.field, &job.input) {
            (
                Field::Orbital { .. } | Field::OrbitalSquared { .. } | Field::Density | Field::SpinDensity,
                FieldInput::Wavefunction(wf),
            ) => wf,
            _ => return Ok(None),
        };
        let packed = PackedMoField::new(wf, &job.field, job.lattice.origin_bohr)?;
        Ok(Some(DeviceField {
            lattice: job.lattice,
            input: DeviceInput::Orbital(packed),
        }))
    }

    /// Highest angular momentum the pass must evaluate.
    pub fn max_l(&self) -> u8 {
        match &self.input {
            DeviceInput::Orbital(p) => p.max_l,
        }
    }
}
