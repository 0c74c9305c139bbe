//! The render-device source of field requests: a field representation whose field the render
//! device computes itself (an orbital, the density or the spin density drawn as isosurfaces) is
//! served here instead of by the worker pool, with the same slot, key and job.
//!
//! Owns [`DeviceSource`] (held by the [`FieldService`](super::FieldService) as `device`) and
//! [`DeviceFieldError`]; the setting is the placement policy's [`FieldsOn`], and whether the render
//! device takes orbitals is its rule (`compute::placement::orbitals_on_render_device`). The update loop (`app::reps::update`) asks
//! [`DeviceSource::route`] whether the source serves a request at all, then
//! [`DeviceSource::serve`] for the frame shown and [`DeviceSource::prefetch`] for playback's next
//! frame; what it gets is a [`DeviceField`] — the lattice and the packed inputs of the device pass,
//! no values on the host. The draw stage (`app::draw`) records the pass into the representation's
//! lattice buffer, which its GPU marching cubes reads.
//!
//! The hook is small on purpose: another device-computed field (the molecular surface density)
//! plugs in with a `compute::wgpu::device_field::DeviceInput` variant (built from the same `FieldJob`),
//! an arm in [`DeviceSource::route`]'s field check and one in the draw stage's pass recording.
//!
//! Look-ahead: the next frame's inputs are packed on the packing thread (`jobs::packer`, one lane
//! per slot, latest wins, results carry their key) when the viewer started it, else here; the
//! frame shown takes them when their key matches and packs inline otherwise.

use super::{FieldKey, FieldSlot};
use crate::compute::FieldJob;
use crate::compute::wgpu::device_field::DeviceField;
use crate::compute::wgpu::orbital::{MoCompute, MoError};
use crate::jobs::packer::Packer;
use crate::render::RenderContext;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Where the viewer computes orbitals, densities and spin densities drawn as isosurfaces: the
/// placement policy's enum (`compute::placement::FieldsOn`).
pub use crate::compute::placement::FieldsOn;

/// What the render device offers: its limits (whether a lattice fits the pass) and whether its
/// adapter is a software rasteriser.
#[derive(Clone, Debug)]
pub struct RenderFields {
    pub limits: wgpu::Limits,
    pub software: bool,
    pub adapter: String,
}

impl RenderFields {
    /// The render context's offer; `None` where it cannot run the orbital pass and the GPU marching
    /// cubes.
    pub fn of(rc: &RenderContext) -> Option<RenderFields> {
        let c = &rc.capabilities;
        (c.orbital_pass_supported && c.mc_compute_supported).then(|| RenderFields {
            limits: rc.device.limits(),
            software: c.software,
            adapter: c.adapter.clone(),
        })
    }

    /// The adapter as the placement policy sees it (it runs the passes: [`RenderFields::of`]).
    pub fn placement_facts(&self) -> crate::compute::placement::AdapterFacts {
        crate::compute::placement::AdapterFacts {
            name: self.adapter.clone(),
            software: self.software,
            runs_passes: true,
        }
    }
}

/// Why a request is not served by the render device (it goes to the pool).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DeviceFieldError {
    #[error("no render device pass computes this field")]
    NotDeviceField,
    #[error("orbitals are set to be computed by the worker pool")]
    PoolChosen,
    #[error("the render device cannot run the orbital pass and the GPU marching cubes")]
    NoDevice,
    #[error("the adapter ({0}) is a software rasteriser, where the CPU engine is faster")]
    Software(String),
    #[error("isosurfaces are extracted on the CPU")]
    CpuSurfaces,
    #[error("its surface colours (the wavefunction's own potential at the vertices) are computed on the host")]
    HostVertexColours,
    #[error("a relative isovalue needs the lattice's values on the host")]
    RelativeIso,
    #[error("the wavefunction describes a QM region placed on the MD frames")]
    QmRegion,
    #[error("no job for the field at this frame")]
    NoJob,
    #[error("packing the basis: {0}")]
    Pack(String),
    #[error(transparent)]
    Pass(#[from] MoError),
    #[error("the pass failed on the render device: {0}")]
    Draw(String),
}

impl DeviceFieldError {
    /// True when the render device tried and failed (the representation stays with the pool until
    /// the setting changes); the other reasons are conditions that may pass.
    pub fn is_failure(&self) -> bool {
        matches!(
            self,
            DeviceFieldError::NoJob | DeviceFieldError::Pack(_) | DeviceFieldError::Pass(_) | DeviceFieldError::Draw(_)
        )
    }

    /// True for a choice rather than a failure: nothing is said when `auto` picks the pool for it.
    pub fn is_choice(&self) -> bool {
        matches!(
            self,
            DeviceFieldError::NotDeviceField
                | DeviceFieldError::PoolChosen
                | DeviceFieldError::Software(_)
                | DeviceFieldError::NoDevice
                | DeviceFieldError::CpuSurfaces
        )
    }
}

/// How often the frame shown was prepared ahead or packed when asked, and the time spent packing
/// (tests, benchmarks).
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct DeviceServed {
    pub ahead: u64,
    pub inline: u64,
    /// Packings finished (ahead or inline, shown or not) and their total time, seconds.
    pub packed: u64,
    pub pack_seconds: f64,
}

/// The render-device source (see the module docs).
#[derive(Default)]
pub struct DeviceSource {
    /// The render device's offer, set by the owner of the render context ([`RenderFields::of`]).
    pub render: Option<RenderFields>,
    /// The packing thread of look-aheads; `None`: packed in the update loop.
    packer: Option<Packer<FieldKey>>,
    /// Each slot's look-ahead: the key and, once packed, its device form.
    ahead: BTreeMap<FieldSlot, (FieldKey, Option<Arc<DeviceField>>)>,
    pub served: DeviceServed,
    /// The last packing failure of a look-ahead, in words.
    pub last_error: Option<String>,
}

impl DeviceSource {
    /// Packs look-aheads on a thread of their own from now on; false when it cannot start.
    pub fn pack_off_thread(&mut self) -> bool {
        if self.packer.is_none() {
            self.packer = Packer::start().ok();
        }
        self.packer.is_some()
    }

    /// Whether this source serves requests under `setting` while isosurfaces are extracted on the
    /// render device (`gpu_surfaces`); the per-field checks are the caller's.
    pub fn route(&self, setting: FieldsOn, gpu_surfaces: bool) -> Result<(), DeviceFieldError> {
        if setting == FieldsOn::Pool {
            return Err(DeviceFieldError::PoolChosen);
        }
        let render = self.render.as_ref().ok_or(DeviceFieldError::NoDevice)?;
        if !gpu_surfaces {
            return Err(DeviceFieldError::CpuSurfaces);
        }
        crate::compute::placement::orbitals_on_render_device(setting, Some(&render.placement_facts()))
            .map(|_| ())
            .map_err(|_| DeviceFieldError::Software(render.adapter.clone()))
    }

    /// Checks that `field` fits the device's limits.
    fn fits(&self, field: &DeviceField) -> Result<(), DeviceFieldError> {
        let render = self.render.as_ref().ok_or(DeviceFieldError::NoDevice)?;
        MoCompute::fits_limits(&render.limits, &field.lattice, field.max_l())?;
        Ok(())
    }

    /// Takes finished look-aheads from the packing thread.
    pub fn receive(&mut self) {
        let Some(p) = self.packer.as_mut() else {
            return;
        };
        for done in p.try_recv() {
            self.served.packed += 1;
            self.served.pack_seconds += done.seconds;
            let slot = FieldSlot(done.lane);
            let Some(entry) = self.ahead.get_mut(&slot).filter(|(k, _)| *k == done.key) else {
                continue;
            };
            match done.field {
                Ok(Some(f)) => entry.1 = Some(f),
                Ok(None) => {
                    self.ahead.remove(&slot);
                }
                Err(e) => {
                    self.last_error = Some(e);
                    self.ahead.remove(&slot);
                }
            }
        }
    }

    /// The device form of `key` for `slot`: its look-ahead when that prepared `key`, else packed
    /// now from `make_job()`. Errors say why the pool must serve it instead.
    pub fn serve(
        &mut self,
        slot: FieldSlot,
        key: FieldKey,
        make_job: impl FnOnce() -> Option<FieldJob>,
    ) -> Result<Arc<DeviceField>, DeviceFieldError> {
        self.receive();
        match self.ahead.remove(&slot) {
            Some((k, Some(f))) if k == key => {
                self.fits(&f)?;
                self.served.ahead += 1;
                return Ok(f);
            }
            Some((_, None)) => {
                // Still on the packing thread (or another frame's): packed here instead, its
                // result dropped.
                if let Some(p) = self.packer.as_mut() {
                    p.remove_lane(slot.0);
                }
            }
            _ => {}
        }
        let job = make_job().ok_or(DeviceFieldError::NoJob)?;
        let f = self.pack(&job)?.ok_or(DeviceFieldError::NotDeviceField)?;
        self.fits(&f)?;
        self.served.inline += 1;
        Ok(Arc::new(f))
    }

    /// True when `slot` would take a look-ahead now (none prepared or in flight).
    pub fn can_prefetch(&self, slot: FieldSlot) -> bool {
        self.render.is_some() && !self.ahead.contains_key(&slot)
    }

    /// Prepares `key` ahead of time for `slot` (playback's next frame): on the packing thread
    /// when started, else now.
    pub fn prefetch(&mut self, slot: FieldSlot, key: FieldKey, make_job: impl FnOnce() -> Option<FieldJob>) {
        if self.ahead.get(&slot).is_some_and(|(k, _)| *k == key) {
            return;
        }
        let Some(job) = make_job() else {
            return;
        };
        match self.packer.as_mut() {
            Some(p) => {
                p.submit(slot.0, key, job);
                self.ahead.insert(slot, (key, None));
            }
            None => match self.pack(&job) {
                Ok(Some(f)) => {
                    self.ahead.insert(slot, (key, Some(Arc::new(f))));
                }
                Ok(None) => {}
                Err(e) => self.last_error = Some(e.to_string()),
            },
        }
    }

    /// The key `slot` has prepared or is preparing ahead, if any.
    pub fn looking_ahead(&self, slot: FieldSlot) -> Option<FieldKey> {
        self.ahead.get(&slot).map(|(k, _)| *k)
    }

    /// Packs `job` here, counting the time.
    fn pack(&mut self, job: &FieldJob) -> Result<Option<DeviceField>, DeviceFieldError> {
        let t = std::time::Instant::now();
        let f = DeviceField::from_job(job).map_err(|e| DeviceFieldError::Pack(e.to_string()));
        self.served.packed += 1;
        self.served.pack_seconds += t.elapsed().as_secs_f64();
        f
    }

    /// The key `slot` has prepared ahead (packed, ready for the frame it is of), if any.
    pub fn prepared_ahead(&self, slot: FieldSlot) -> Option<FieldKey> {
        self.ahead.get(&slot).filter(|(_, f)| f.is_some()).map(|(k, _)| *k)
    }

    /// Drops `slot`'s look-ahead (prepared or in flight).
    pub fn forget(&mut self, slot: FieldSlot) {
        self.ahead.remove(&slot);
        if let Some(p) = self.packer.as_mut() {
            p.remove_lane(slot.0);
        }
    }
}
