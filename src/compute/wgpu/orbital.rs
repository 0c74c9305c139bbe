//! Molecular orbitals computed on the render device: a wgpu compute pass (`shaders/orbital.wgsl`)
//! that writes a field of a packed basis on a lattice into a storage buffer, ready for
//! [`super::marching_cubes::GpuLattice::from_buffer`] and the GPU marching cubes, with nothing copied
//! through the host. It serves machines without CUDA (AMD, Intel, Apple, software Vulkan) and keeps
//! the lattice where the meshes are drawn.
//!
//! This module knows a packed basis ([`crate::compute::wgpu::packed_mo::PackedMoField`]: shells, primitives,
//! contracted coefficients) and a lattice, not molecules. [`MoCompute::new`] builds the pipeline once
//! per device; [`MoCompute::encode`] records the dispatches of one field into the caller's command
//! encoder (the viewer's draw stage `app::draw` for representations computed on the render device,
//! the `bench` command, tests). [`MoCompute::fits`] (or [`MoCompute::fits_limits`], from the limits
//! alone) says whether a lattice can be computed here; when it cannot ([`MoError`]), the caller uses
//! the worker pool or the CPU engine.
//!
//! Variants ([`MoPassVariant`], `ORBITFIELD_ORBITAL_PASS`): four points along z per invocation (the
//! default) or one; the bench times them side by side.
//!
//! Dispatches: one per orbital term and z-slab. A workgroup is an 8 x 8 x 4 brick; the z axis is split
//! into slabs so that no dispatch exceeds `max_compute_workgroups_per_dimension`; x and y must fit in
//! one dispatch. The whole lattice is one storage binding (the marching-cubes pass binds it whole),
//! so it must fit `max_storage_buffer_binding_size`. Accuracy: f32 evaluation; against the CPU
//! engine (f64) the values agree to about 1e-6 of the field's largest magnitude.

use crate::compute::layout::GpuShell;
use crate::compute::wgpu::packed_mo::PackedMoField;
use crate::model::Lattice;
use wgpu::util::DeviceExt;

/// The WGSL source of the pass.
pub const SHADER_SOURCE: &str = include_str!("../../../shaders/orbital.wgsl");

/// Points per workgroup along x, y and z (`BX`, `BY`, `BZ` in the shader).
pub const BRICK: [u32; 3] = [8, 8, 4];
/// Invocations per workgroup.
pub const WORKGROUP_INVOCATIONS: u32 = 256;
/// Workgroup memory the pass declares (bytes): three arrays of 256 words.
pub const WORKGROUP_STORAGE_BYTES: u32 = 3 * 4 * 256;
/// Storage buffers the pass binds.
pub const STORAGE_BUFFERS: u32 = 4;
/// Highest angular momentum the pass evaluates (`MAX_L` in the shader).
pub const MAX_L: u8 = 6;
/// Points per invocation along z of [`MoPassVariant::FourAlongZ`] (`PZ` in the shader).
pub const Z4_POINTS: u32 = 4;

/// Which entry point of the pass evaluates the lattice. Every variant computes the same field to
/// f32 rounding; they differ in speed only, so that one run on a device can time them all
/// (`ORBITFIELD_ORBITAL_PASS`, read by [`MoPassVariant::from_env`]).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MoPassVariant {
    /// `evaluate`: one lattice point per invocation.
    PointPerInvocation,
    /// `evaluate_z4` (the default): four points per invocation along z sharing each shell's loads
    /// and coefficients; used where z-slabs split at multiples of 16 planes (else `evaluate`). The
    /// faster of the two on hardware adapters (`benches/RESULTS.md`).
    #[default]
    FourAlongZ,
}

impl MoPassVariant {
    /// Every variant, for benches.
    pub const ALL: [MoPassVariant; 2] = [MoPassVariant::PointPerInvocation, MoPassVariant::FourAlongZ];

    /// The name `ORBITFIELD_ORBITAL_PASS` takes.
    pub fn name(self) -> &'static str {
        match self {
            MoPassVariant::PointPerInvocation => "point",
            MoPassVariant::FourAlongZ => "z4",
        }
    }

    /// The variant named `name` (see [`Self::name`]).
    pub fn parse(name: &str) -> Option<MoPassVariant> {
        Self::ALL.into_iter().find(|v| v.name() == name.trim())
    }

    /// The variant `ORBITFIELD_ORBITAL_PASS` names, else the default.
    pub fn from_env() -> MoPassVariant {
        std::env::var("ORBITFIELD_ORBITAL_PASS")
            .ok()
            .and_then(|v| Self::parse(&v))
            .unwrap_or_default()
    }
}

/// Uniform parameters of one dispatch. Twin of `Params` in `shaders/orbital.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct MoParams {
    pub step_x_bohr: [f32; 4],
    pub step_y_bohr: [f32; 4],
    pub step_z_bohr: [f32; 4],
    /// nx, ny, nz of the lattice and the first plane of the dispatch.
    pub dims: [u32; 4],
    pub shell_start: u32,
    pub n_shells: u32,
    pub coef_start: u32,
    pub mode: u32,
    pub weight: f32,
    pub brick_radius_bohr: f32,
    pub pad: [f32; 2],
}

/// Why a field cannot be computed on this device (the caller falls back to the CPU engine).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MoError {
    #[error("the lattice needs {bytes} bytes in one storage binding, the device allows {limit}")]
    LatticeTooLarge { bytes: u64, limit: u64 },
    #[error("the lattice needs {groups} workgroups along axis {axis}, the device allows {limit} per dispatch")]
    TooManyWorkgroups { axis: usize, groups: u64, limit: u32 },
    #[error("the device cannot run the orbital pass: {0}")]
    Unsupported(String),
    #[error("the basis has angular momentum {0}, the orbital pass evaluates up to {MAX_L}")]
    AngularMomentum(u8),
    #[error("the lattice is empty")]
    Empty,
    #[error("the output buffer holds {got} bytes, the lattice needs {need}")]
    BadOutput { got: u64, need: u64 },
    #[error("reading back from the GPU failed: {0}")]
    ReadBack(String),
}

/// How one lattice is split into dispatches on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MoDispatch {
    /// Workgroups along x and y.
    pub groups_xy: [u32; 2],
    /// Lattice planes per dispatch (a multiple of 4, except possibly the last slab).
    pub planes_per_slab: u32,
    /// Number of z-slabs.
    pub slabs: u32,
    /// Bytes of the lattice values.
    pub bytes: u64,
}

/// The pipeline of the pass, created once per device.
pub struct MoCompute {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
    /// `evaluate_z4`, and which of the two [`Self::encode`] records.
    pipeline_z4: wgpu::ComputePipeline,
    variant: MoPassVariant,
    /// At most this many workgroups per dispatch dimension (below the device's limit), so that the
    /// slab split can be exercised on any device.
    max_groups_per_dim: u32,
}

fn buffer_entry(binding: u32, ty: wgpu::BufferBindingType, dynamic: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::COMPUTE,
        ty: wgpu::BindingType::Buffer {
            ty,
            has_dynamic_offset: dynamic,
            min_binding_size: None,
        },
        count: None,
    }
}

/// Whether a device with `limits` can run the pass at all (any lattice); the reason when not.
pub fn device_supports(limits: &wgpu::Limits, compute_shaders: bool) -> Result<(), MoError> {
    let fail = |what: String| Err(MoError::Unsupported(what));
    if !compute_shaders {
        return fail("no compute shaders".into());
    }
    if limits.max_storage_buffers_per_shader_stage < STORAGE_BUFFERS {
        return fail(format!(
            "{} storage buffers per stage, the pass needs {STORAGE_BUFFERS}",
            limits.max_storage_buffers_per_shader_stage
        ));
    }
    if limits.max_compute_invocations_per_workgroup < WORKGROUP_INVOCATIONS
        || limits.max_compute_workgroup_size_x < BRICK[0]
        || limits.max_compute_workgroup_size_y < BRICK[1]
        || limits.max_compute_workgroup_size_z < BRICK[2]
    {
        return fail("workgroups of 8 x 8 x 4 invocations are too large".into());
    }
    if limits.max_compute_workgroup_storage_size < WORKGROUP_STORAGE_BYTES {
        return fail(format!(
            "{} bytes of workgroup memory, the pass needs {WORKGROUP_STORAGE_BYTES}",
            limits.max_compute_workgroup_storage_size
        ));
    }
    if limits.max_compute_workgroups_per_dimension == 0 {
        return fail("no workgroups per dispatch".into());
    }
    Ok(())
}

impl MoDispatch {
    /// Splits `dims` into dispatches within `limits` (per-dimension workgroup count, storage binding
    /// and buffer size).
    pub fn plan(limits: &wgpu::Limits, dims: [usize; 3]) -> Result<MoDispatch, MoError> {
        if dims.contains(&0) {
            return Err(MoError::Empty);
        }
        let points = dims.iter().map(|&d| d as u64).product::<u64>();
        let bytes = points.saturating_mul(4);
        let limit = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
        if bytes > limit || points > u64::from(u32::MAX) {
            return Err(MoError::LatticeTooLarge { bytes, limit });
        }
        let per_dim = limits.max_compute_workgroups_per_dimension;
        let (groups_xy, planes_per_slab, slabs) =
            split_into_slabs(dims, BRICK, per_dim).map_err(|(axis, groups)| MoError::TooManyWorkgroups {
                axis,
                groups,
                limit: per_dim,
            })?;
        Ok(MoDispatch {
            groups_xy,
            planes_per_slab,
            slabs,
            bytes,
        })
    }
}

/// How a lattice of `dims` splits into dispatches of workgroups of `brick` points, at most `per_dim`
/// workgroups per dispatch dimension: workgroups along x and y (each axis in one dispatch, else the
/// axis and the workgroups it needs), lattice planes per z-slab (a multiple of `brick[2]`, except
/// possibly the last slab) and slabs. Shared with `super::molsurf_compute`.
pub(crate) fn split_into_slabs(
    dims: [usize; 3],
    brick: [u32; 3],
    per_dim: u32,
) -> Result<([u32; 2], u32, u32), (usize, u64)> {
    let per_dim = per_dim.max(1);
    let mut groups_xy = [0u32; 2];
    for axis in 0..2 {
        let groups = (dims[axis] as u64).div_ceil(u64::from(brick[axis]));
        if groups > u64::from(per_dim) {
            return Err((axis, groups));
        }
        groups_xy[axis] = groups as u32;
    }
    let nz = dims[2] as u64;
    let planes_per_slab = (u64::from(per_dim) * u64::from(brick[2])).min(nz).max(1);
    Ok((groups_xy, planes_per_slab as u32, nz.div_ceil(planes_per_slab) as u32))
}

/// Radius of the bounding sphere of an 8 x 8 x 4 brick of the lattice (bohr), with a rounding margin
/// (as `brick_point` in `kernels/mo_common.cuh`).
fn brick_radius_bohr(steps: [[f64; 3]; 3], brick: [u32; 3]) -> f64 {
    let h = brick.map(|b| 0.5 * f64::from(b.max(1) - 1));
    let mut r: f64 = 0.0;
    for c in 0..4 {
        let sy = if c & 1 == 1 { -h[1] } else { h[1] };
        let sz = if c & 2 == 2 { -h[2] } else { h[2] };
        let v: [f64; 3] = std::array::from_fn(|k| h[0] * steps[0][k] + sy * steps[1][k] + sz * steps[2][k]);
        r = r.max((v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt());
    }
    r * 1.0001
}

impl MoCompute {
    /// Builds the pipeline.
    pub fn new(device: &wgpu::Device) -> MoCompute {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("orbital pass"),
            source: wgpu::ShaderSource::Wgsl(SHADER_SOURCE.into()),
        });
        use wgpu::BufferBindingType as B;
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("orbital bind group layout"),
            entries: &[
                buffer_entry(0, B::Uniform, true),
                buffer_entry(1, B::Storage { read_only: true }, false),
                buffer_entry(2, B::Storage { read_only: true }, false),
                buffer_entry(3, B::Storage { read_only: true }, false),
                buffer_entry(4, B::Storage { read_only: false }, false),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("orbital pipeline layout"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let entry = |name: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(name),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(name),
                compilation_options: Default::default(),
                cache: None,
            })
        };
        MoCompute {
            layout,
            pipeline: entry("evaluate"),
            pipeline_z4: entry("evaluate_z4"),
            variant: MoPassVariant::from_env(),
            max_groups_per_dim: u32::MAX,
        }
    }

    /// Records `variant` from now on (instead of the one `ORBITFIELD_ORBITAL_PASS` chose).
    pub fn with_variant(mut self, variant: MoPassVariant) -> MoCompute {
        self.variant = variant;
        self
    }

    /// The variant [`Self::encode`] records where it applies.
    pub fn variant(&self) -> MoPassVariant {
        self.variant
    }

    /// Limits every dispatch to `groups` workgroups per dimension (at least 1), below the device's own
    /// limit: more, smaller z-slabs (tests of the split).
    pub fn with_max_groups_per_dimension(mut self, groups: u32) -> MoCompute {
        self.max_groups_per_dim = groups.max(1);
        self
    }

    /// Whether `lattice` can be computed on `device` for a basis up to `max_l`, and how it is split.
    pub fn fits(device: &wgpu::Device, lattice: &Lattice, max_l: u8) -> Result<MoDispatch, MoError> {
        if max_l > MAX_L {
            return Err(MoError::AngularMomentum(max_l));
        }
        Self::fits_limits(&device.limits(), lattice, max_l)
    }

    /// As [`Self::fits`], from a device's limits (the viewer's update loop decides before the draw
    /// stage holds the device).
    pub fn fits_limits(limits: &wgpu::Limits, lattice: &Lattice, max_l: u8) -> Result<MoDispatch, MoError> {
        if max_l > MAX_L {
            return Err(MoError::AngularMomentum(max_l));
        }
        // Whether the adapter has compute shaders at all is `Capabilities`' question (downlevel
        // flags live on the adapter); a device without them has no storage buffers in compute.
        device_supports(limits, true)?;
        MoDispatch::plan(limits, lattice.dims)
    }

    /// A values buffer for `lattice` (`STORAGE | COPY_SRC | COPY_DST`), for [`Self::encode`].
    pub fn create_values(device: &wgpu::Device, lattice: &Lattice) -> wgpu::Buffer {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("orbital lattice values"),
            size: (4 * lattice.n_points() as u64).max(16),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// As [`Self::create_values`], an eighth larger (see [`super::marching_cubes::with_headroom`]): a
    /// caller that computes frame after frame on lattices that differ by a plane reuses it.
    pub fn create_values_with_headroom(device: &wgpu::Device, lattice: &Lattice) -> wgpu::Buffer {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("orbital lattice values"),
            size: super::marching_cubes::with_headroom((4 * lattice.n_points() as u64).max(16)),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Records the evaluation of `field` (packed for `lattice`'s origin) on `lattice` into `values`
    /// (x fastest, `f32`; from [`Self::create_values`] or any `STORAGE` buffer of at least
    /// `4 * n_points` bytes). Every point is written. `timestamps`, when given, brackets the pass.
    /// Nothing is submitted or read back.
    pub fn encode(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        field: &PackedMoField,
        lattice: &Lattice,
        values: &wgpu::Buffer,
        timestamps: Option<wgpu::ComputePassTimestampWrites<'_>>,
    ) -> Result<MoDispatch, MoError> {
        let mut plan = Self::fits(device, lattice, field.max_l)?;
        if self.max_groups_per_dim < device.limits().max_compute_workgroups_per_dimension {
            let limits = wgpu::Limits {
                max_compute_workgroups_per_dimension: self.max_groups_per_dim,
                ..device.limits()
            };
            plan = MoDispatch::plan(&limits, lattice.dims)?;
        }
        if values.size() < plan.bytes {
            return Err(MoError::BadOutput {
                got: values.size(),
                need: plan.bytes,
            });
        }
        // Four points per invocation only where every slab but the last is a whole number of its
        // 16-plane bricks (no plane computed by two dispatches: densities add up in place).
        let z4 = self.variant == MoPassVariant::FourAlongZ
            && (plan.slabs == 1 || plan.planes_per_slab % (BRICK[2] * Z4_POINTS) == 0);
        let brick_z = if z4 { BRICK[2] * Z4_POINTS } else { BRICK[2] };
        let limits = device.limits();
        let stride = u64::from(limits.min_uniform_buffer_offset_alignment)
            .max(std::mem::size_of::<MoParams>() as u64)
            .next_multiple_of(u64::from(limits.min_uniform_buffer_offset_alignment.max(1)));
        // Every term's shells and coefficients in one buffer each; one parameter block per dispatch.
        let mut shells: Vec<GpuShell> = Vec::with_capacity(field.n_shells());
        let mut coefs: Vec<f32> = Vec::new();
        let s = lattice.steps_bohr;
        let v4 = |v: [f64; 3]| [v[0] as f32, v[1] as f32, v[2] as f32, 0.0];
        let base = MoParams {
            step_x_bohr: v4(s[0]),
            step_y_bohr: v4(s[1]),
            step_z_bohr: v4(s[2]),
            dims: [
                lattice.dims[0] as u32,
                lattice.dims[1] as u32,
                lattice.dims[2] as u32,
                0,
            ],
            brick_radius_bohr: brick_radius_bohr(s, [BRICK[0], BRICK[1], brick_z]) as f32,
            ..MoParams::default()
        };
        let mut blocks: Vec<u8> = Vec::new();
        let mut dispatches: Vec<(u32, u32)> = Vec::new(); // (dynamic offset, planes)
        for term in &field.terms {
            let shell_start = shells.len() as u32;
            let coef_start = coefs.len() as u32;
            shells.extend_from_slice(&term.shells);
            coefs.extend_from_slice(&term.coefs);
            for slab in 0..plan.slabs {
                let k0 = slab * plan.planes_per_slab;
                let planes = plan.planes_per_slab.min(base.dims[2] - k0);
                let p = MoParams {
                    dims: [base.dims[0], base.dims[1], base.dims[2], k0],
                    shell_start,
                    n_shells: term.shells.len() as u32,
                    coef_start,
                    mode: term.mode,
                    weight: term.weight,
                    ..base
                };
                let offset = blocks.len() as u32;
                blocks.extend_from_slice(bytemuck::bytes_of(&p));
                blocks.resize(blocks.len().next_multiple_of(stride as usize), 0);
                dispatches.push((offset, planes));
            }
        }
        let storage = |label: &str, bytes: &[u8]| {
            // Bindings may not be empty: a zero word stands in for an empty array.
            let zero = [0u8; 32];
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: if bytes.is_empty() { &zero } else { bytes },
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let shells_buf = storage("orbital shells", bytemuck::cast_slice(&shells));
        let prims_buf = storage("orbital primitives", bytemuck::cast_slice(&field.prims));
        let coefs_buf = storage("orbital coefficients", bytemuck::cast_slice(&coefs));
        let params_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("orbital params"),
            contents: if blocks.is_empty() { &[0u8; 256] } else { &blocks },
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("orbital bind group"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &params_buf,
                        offset: 0,
                        size: std::num::NonZeroU64::new(std::mem::size_of::<MoParams>() as u64),
                    }),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: shells_buf.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: prims_buf.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: coefs_buf.as_entire_binding(),
                },
                wgpu::BindGroupEntry {
                    binding: 4,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: values,
                        offset: 0,
                        size: std::num::NonZeroU64::new(plan.bytes),
                    }),
                },
            ],
        });
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("orbital pass"),
            timestamp_writes: timestamps,
        });
        pass.set_pipeline(if z4 { &self.pipeline_z4 } else { &self.pipeline });
        // Consecutive dispatches are ordered (each is its own usage scope), so the terms of a
        // density add up in order.
        for (offset, planes) in dispatches {
            pass.set_bind_group(0, &bind_group, &[offset]);
            pass.dispatch_workgroups(plan.groups_xy[0], plan.groups_xy[1], planes.div_ceil(brick_z));
        }
        Ok(plan)
    }
}

/// Copies `n` `f32` values of `src` back to the host (tests and checks; drawing needs no copy).
pub fn read_values(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    src: &wgpu::Buffer,
    n: usize,
) -> Result<Vec<f32>, MoError> {
    let raw = read_bytes(device, queue, src, 4 * n as u64)?;
    Ok(raw
        .chunks_exact(4)
        .take(n)
        .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
        .collect())
}

/// Copies the first `bytes` bytes of `src` (usage `COPY_SRC`) back to the host, waiting for the GPU.
pub fn read_bytes(
    device: &wgpu::Device,
    queue: &wgpu::Queue,
    src: &wgpu::Buffer,
    bytes: u64,
) -> Result<Vec<u8>, MoError> {
    super::marching_cubes::read_buffer(device, queue, src, bytes).map_err(|e| MoError::ReadBack(e.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structs_match_their_wgsl_twins() {
        let module = wgpu::naga::front::wgsl::parse_str(SHADER_SOURCE).unwrap();
        let size = |name: &str| crate::compute::wgpu::wgsl_type_size(&module, name);
        assert_eq!(size("Params"), std::mem::size_of::<MoParams>());
        assert_eq!(size("Shell"), std::mem::size_of::<GpuShell>());
        // Validated with the other modules in tests/render.rs (`shaders::all_modules`).
        assert!(module.entry_points.iter().any(|e| e.name == "evaluate"));
    }

    #[test]
    fn large_lattices_split_in_z_and_refuse_what_does_not_bind() {
        let limits = wgpu::Limits {
            max_compute_workgroups_per_dimension: 100,
            max_storage_buffer_binding_size: 1 << 30,
            max_buffer_size: 1 << 30,
            ..wgpu::Limits::default()
        };
        let d = MoDispatch::plan(&limits, [800, 17, 1001]).unwrap();
        assert_eq!(d.groups_xy, [100, 3]);
        assert_eq!(d.planes_per_slab, 400);
        assert_eq!(d.slabs, 3);
        assert!(matches!(
            MoDispatch::plan(&limits, [801, 8, 8]),
            Err(MoError::TooManyWorkgroups { axis: 0, .. })
        ));
        assert!(matches!(
            MoDispatch::plan(&limits, [800, 800, 1000]),
            Err(MoError::LatticeTooLarge { .. })
        ));
        assert_eq!(MoDispatch::plan(&limits, [4, 0, 4]), Err(MoError::Empty));
        let webgl = wgpu::Limits::downlevel_webgl2_defaults();
        assert!(device_supports(&webgl, true).is_err());
        assert!(device_supports(&wgpu::Limits::default(), false).is_err());
        assert!(device_supports(&wgpu::Limits::default(), true).is_ok());
    }
}
