//! The wgpu engine as a slab engine: one wgpu device (any adapter: Vulkan, Metal, DirectX 12) with
//! the passes of this folder, serving the worker pool's tiles like the CUDA engine.
//!
//! Owns [`WgpuEngine`] ([`SlabEngine`] for direct Coulomb maps, vacuum and screened, by
//! [`super::coulomb`]; cutoff and multilevel-summation maps of an `EspPlan`, vacuum and screened,
//! by [`super::msm`]; orbitals, |psi|^2, densities and spin densities by [`super::orbital`]; a
//! wavefunction's own potential by [`super::qm_esp`]; RDF
//! pair counts by [`super::rdf`] through [`WgpuEngine::rdf_counts`]; implicit ligand sampling frames
//! by [`super::ils`] through [`WgpuEngine::ils_voxel_means`]) and [`WgpuEngine::supports`],
//! which says which jobs it computes. Any other job is answered with [`ComputeError::WrongInput`],
//! which the pool passes to its CPU workers (`jobs::worker`). Created by `jobs::adapter_worker` (one
//! per adapter), tests and benches.

use super::coulomb::{DirectCoulomb, charges_of};
use super::ils::IlsPass;
use super::marching_cubes::with_headroom;
use super::msm::{MsmSlabPass, MsmUpload};
use super::orbital::MoCompute;
use super::packed_mo::PackedMoField;
use super::pass::device_err;
use super::qm_esp::QmEspPass;
use super::rdf::RdfPairs;
use crate::compute::esp::EspPlan;
use crate::compute::ils::{IlsSetup, PlacedAtoms};
use crate::compute::layout::pairs::PairGeometry;
use crate::compute::{ComputeError, Field, FieldInput, FieldJob, SlabEngine, slab_len};
use crate::model::Lattice;
use crate::model::rdf::RdfSettings;
use std::ops::Range;
use std::sync::{Arc, Mutex, Weak};

/// One wgpu device with the engine's pipelines.
pub struct WgpuEngine {
    device: wgpu::Device,
    queue: wgpu::Queue,
    name: String,
    /// True for a software adapter (lavapipe, llvmpipe, WARP).
    pub software: bool,
    coulomb: DirectCoulomb,
    orbital: MoCompute,
    rdf: RdfPairs,
    qm_esp: QmEspPass,
    msm: MsmSlabPass,
    /// The last cutoff or MSM plan uploaded (its tiles share it), with the plan it is of.
    msm_upload: Mutex<Option<(Weak<EspPlan>, Arc<MsmUpload>)>>,
    /// The ILS passes, or why the device cannot run them.
    ils: Result<IlsPass, String>,
    /// The orbital pass's lattice and read-back buffers, reused from one slab to the next (grown,
    /// with an eighth of headroom, when a slab needs more).
    orbital_buffers: Mutex<OrbitalBuffers>,
}

/// See [`WgpuEngine::orbital_buffers`].
#[derive(Default)]
struct OrbitalBuffers {
    values: Option<wgpu::Buffer>,
    staging: Option<wgpu::Buffer>,
}

/// True for an adapter that runs on the CPU (Mesa lavapipe and llvmpipe, WARP).
pub fn is_software(info: &wgpu::AdapterInfo) -> bool {
    let name = info.name.to_ascii_lowercase();
    info.device_type == wgpu::DeviceType::Cpu
        || [
            "llvmpipe",
            "lavapipe",
            "softpipe",
            "swiftshader",
            "warp",
            "microsoft basic render",
        ]
        .iter()
        .any(|s| name.contains(s))
}

impl WgpuEngine {
    /// Opens a device on `adapter` with the adapter's own limits and builds the pipelines.
    pub fn new(adapter: &wgpu::Adapter) -> Result<WgpuEngine, ComputeError> {
        let info = adapter.get_info();
        if !adapter
            .get_downlevel_capabilities()
            .flags
            .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
        {
            return Err(ComputeError::Device(format!(
                "wgpu: the adapter {} has no compute shaders",
                info.name
            )));
        }
        if info.backend == wgpu::Backend::Gl {
            // Its passes are held to the CPU engine on Vulkan (lavapipe, NVIDIA), not on OpenGL, where
            // Mesa's llvmpipe gave cutoff sums off by a fifth and multilevel sums by more than half:
            // no numbers rather than wrong ones.
            return Err(ComputeError::Device(format!(
                "wgpu: {} is an OpenGL adapter; the compute passes run on Vulkan, Metal or DirectX 12 \
                 (the CPU engine computes instead)",
                info.name
            )));
        }
        let desc = wgpu::DeviceDescriptor {
            label: Some("orbitfield wgpu engine"),
            required_limits: adapter.limits(),
            ..Default::default()
        };
        let (device, queue) = pollster::block_on(adapter.request_device(&desc)).map_err(device_err)?;
        let name = format!("wgpu:{:?} {}", info.backend, info.name).to_ascii_lowercase();
        Ok(WgpuEngine::from_device(device, queue, name, is_software(&info)))
    }

    /// The engine on an open device.
    pub fn from_device(device: wgpu::Device, queue: wgpu::Queue, name: String, software: bool) -> WgpuEngine {
        WgpuEngine {
            coulomb: DirectCoulomb::new(&device),
            orbital: MoCompute::new(&device),
            rdf: RdfPairs::new(&device),
            qm_esp: QmEspPass::new(&device),
            msm: MsmSlabPass::new(&device),
            msm_upload: Mutex::new(None),
            ils: IlsPass::on(&device),
            orbital_buffers: Mutex::new(OrbitalBuffers::default()),
            device,
            queue,
            name,
            software,
        }
    }

    /// The engine with its cutoff and MSM maps filled by `kernel` (tests and benches compare them).
    pub fn with_msm_kernel(mut self, kernel: super::msm::MsmKernel) -> WgpuEngine {
        self.msm.kernel = kernel;
        self
    }

    /// The device and its queue (benches time passes on them).
    pub fn device(&self) -> (&wgpu::Device, &wgpu::Queue) {
        (&self.device, &self.queue)
    }

    /// Whether [`SlabEngine::compute_slab`] computes `job` on the device (else it answers
    /// [`ComputeError::WrongInput`]).
    pub fn supports(job: &FieldJob) -> bool {
        matches!(
            (&job.field, &job.input),
            (
                Field::Potential,
                FieldInput::Charges(_)
                    | FieldInput::ScreenedCharges(_)
                    | FieldInput::Electrostatics(_)
                    | FieldInput::DeferredElectrostatics(_)
            ) | (
                Field::Orbital { .. }
                    | Field::OrbitalSquared { .. }
                    | Field::Density
                    | Field::SpinDensity
                    | Field::QmPotential,
                FieldInput::Wavefunction(_),
            )
        )
    }

    /// The RDF pair counts of one frame's layout (64-bit per bin).
    pub fn rdf_counts(&self, geom: &PairGeometry, settings: &RdfSettings) -> Result<Vec<u64>, ComputeError> {
        self.rdf.counts(&self.device, &self.queue, geom, settings)
    }

    /// One implicit ligand sampling frame's voxel means of the occupancy (x fastest).
    pub fn ils_voxel_means(&self, setup: &IlsSetup, placed: &PlacedAtoms) -> Result<Vec<f64>, ComputeError> {
        match &self.ils {
            Ok(pass) => pass.voxel_means(&self.device, &self.queue, setup, placed),
            Err(why) => Err(ComputeError::Device(why.clone())),
        }
    }

    /// The plan of a cutoff or MSM job (built now, its stages left to the engine, when deferred).
    fn plan_of(input: &FieldInput) -> Option<Result<Arc<EspPlan>, ComputeError>> {
        match input {
            FieldInput::Electrostatics(p) => Some(Ok(p.clone())),
            FieldInput::DeferredElectrostatics(d) => Some(d.plan_with(crate::compute::esp::StagesOn::Engine)),
            _ => None,
        }
    }

    /// `plan` on the device: the upload of the previous slab when it was of the same plan.
    fn msm_upload(&self, plan: &Arc<EspPlan>) -> Result<Arc<MsmUpload>, ComputeError> {
        let mut cache = self
            .msm_upload
            .lock()
            .map_err(|_| ComputeError::Device("wgpu: the cutoff pass's upload cache is poisoned".into()))?;
        if let Some((of, up)) = cache.as_ref()
            && std::ptr::eq(of.as_ptr(), Arc::as_ptr(plan))
            && of.strong_count() > 0
        {
            return Ok(up.clone());
        }
        let up = Arc::new(self.msm.upload_on(&self.device, &self.queue, plan)?);
        *cache = Some((Arc::downgrade(plan), up.clone()));
        Ok(up)
    }

    fn orbital_slab(&self, job: &FieldJob, z_range: Range<usize>, out: &mut [f32]) -> Result<(), ComputeError> {
        let FieldInput::Wavefunction(wf) = &job.input else {
            return Err(ComputeError::WrongInput(job.field.clone(), "a wavefunction"));
        };
        let l = &job.lattice;
        let k0 = z_range.start as f64;
        let origin = std::array::from_fn(|a| l.origin_bohr[a] + k0 * l.steps_bohr[2][a]);
        let slab = Lattice {
            origin_bohr: origin,
            steps_bohr: l.steps_bohr,
            dims: [l.dims[0], l.dims[1], z_range.len()],
        };
        let packed = PackedMoField::new(wf, &job.field, origin)?;
        if packed.terms.is_empty() {
            // No orbital contributes (a density of no electrons): zero, as a fresh lattice holds.
            out.fill(0.0);
            return Ok(());
        }
        let bytes = (4 * out.len() as u64).max(16);
        let mut reuse = self
            .orbital_buffers
            .lock()
            .map_err(|_| ComputeError::Device("wgpu: the orbital buffers' lock is poisoned".into()))?;
        if reuse.values.as_ref().is_none_or(|b| b.size() < bytes) {
            reuse.values = None;
            reuse.values = Some(MoCompute::create_values_with_headroom(&self.device, &slab));
        }
        if reuse.staging.as_ref().is_none_or(|b| b.size() < bytes) {
            reuse.staging = None;
            reuse.staging = Some(self.device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("wgpu engine orbital read back"),
                size: with_headroom(bytes),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            }));
        }
        let (Some(values), Some(staging)) = (reuse.values.as_ref(), reuse.staging.as_ref()) else {
            return Err(ComputeError::Device("wgpu: no orbital buffers".into()));
        };
        let mut encoder = self.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("wgpu engine orbital slab"),
        });
        self.orbital
            .encode(&self.device, &mut encoder, &packed, &slab, values, None)
            .map_err(|e| match e {
                super::orbital::MoError::AngularMomentum(_) => {
                    ComputeError::WrongInput(job.field.clone(), "angular momentum the wgpu pass evaluates")
                }
                other => device_err(other),
            })?;
        // The values and their copy back in one submission; read straight into `out`.
        let n_bytes = 4 * out.len() as u64;
        encoder.copy_buffer_to_buffer(values, 0, staging, 0, n_bytes);
        self.queue.submit([encoder.finish()]);
        read_mapped_into(&self.device, staging, out)
    }
}

/// Maps the first `4 * out.len()` bytes of `staging` (`MAP_READ`, its copy submitted), waits for the
/// GPU and copies them into `out` (one copy), then unmaps.
fn read_mapped_into(device: &wgpu::Device, staging: &wgpu::Buffer, out: &mut [f32]) -> Result<(), ComputeError> {
    let n_bytes = 4 * out.len() as u64;
    let slice = staging.slice(..n_bytes);
    let (tx, rx) = std::sync::mpsc::sync_channel(1);
    slice.map_async(wgpu::MapMode::Read, move |r| {
        let _ = tx.send(r);
    });
    device.poll(wgpu::PollType::wait_indefinitely()).map_err(device_err)?;
    rx.recv().map_err(device_err)?.map_err(device_err)?;
    {
        let range = slice.get_mapped_range().map_err(device_err)?;
        match bytemuck::try_cast_slice::<u8, f32>(&range) {
            Ok(v) => out.copy_from_slice(v),
            Err(_) => {
                for (o, c) in out.iter_mut().zip(range.chunks_exact(4)) {
                    *o = f32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
                }
            }
        }
    }
    staging.unmap();
    Ok(())
}

impl SlabEngine for WgpuEngine {
    fn name(&self) -> String {
        self.name.clone()
    }

    fn compute_slab(&self, job: &FieldJob, z_range: Range<usize>, out: &mut [f32]) -> Result<(), ComputeError> {
        let need = slab_len(&job.lattice, &z_range);
        if out.len() != need || z_range.end > job.lattice.dims[2] {
            return Err(ComputeError::BadOutput { got: out.len(), need });
        }
        if need == 0 {
            return Ok(());
        }
        if !WgpuEngine::supports(job) {
            return Err(ComputeError::WrongInput(
                job.field.clone(),
                "an input the CPU engine computes (not on wgpu)",
            ));
        }
        if let (Field::QmPotential, FieldInput::Wavefunction(wf)) = (&job.field, &job.input) {
            self.qm_esp
                .slab(&self.device, &self.queue, wf, &job.lattice, z_range, out)?;
        } else if let (Field::Potential, Some(plan)) = (&job.field, WgpuEngine::plan_of(&job.input)) {
            let plan = plan?;
            let up = self.msm_upload(&plan)?;
            self.msm
                .slab(&self.device, &self.queue, &plan, &up, &job.lattice, z_range, out)?;
        } else if let (Field::Potential, Some((charges, dielectric))) = (&job.field, charges_of(&job.input)) {
            self.coulomb.map(
                &self.device,
                &self.queue,
                charges,
                dielectric,
                &job.lattice,
                z_range,
                out,
            )?;
        } else {
            self.orbital_slab(job, z_range, out)?;
        }
        if out.iter().any(|v| !v.is_finite()) {
            return Err(ComputeError::NotFinite);
        }
        Ok(())
    }

    fn checks_output(&self) -> bool {
        true
    }

    fn as_wgpu(&self) -> Option<&WgpuEngine> {
        Some(self)
    }
}
