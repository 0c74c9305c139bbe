//! The Coulomb potential of point charges at every vertex of a surface that the marching-cubes pass
//! left on the render device ([`super::marching_cubes::GpuMesh`]): a compute pass
//! (`shaders/vertex_coulomb.wgsl`) reads the vertices where the extraction wrote them and writes one
//! value per vertex into a [`VertexValues`] buffer, laid out as the mesh pipelines' per-vertex colour
//! buffer (`render::gpu::MeshVertexColor`), so `render::GpuScene::set_gpu_meshes_valued` draws it
//! through the colormap and range with no round trip to the host.
//!
//! Variants ([`VertexPotentialVariant`], `ORBITFIELD_VERTEX_POTENTIAL`): 4, 8 or 16 vertices per
//! invocation (the shader's `PER_THREAD`), workgroups of 128 or 64, each with or without the Newton
//! step; they differ in speed, and without the Newton step in accuracy. The default is 16 vertices,
//! workgroups of 128, with the Newton step. When a surface's vertex blocks are fewer than about
//! 4,096 workgroups, the charges are split into up to 16 runs, each summed by its own workgroups,
//! and a second pass adds the runs' sums (`ORBITFIELD_VERTEX_POTENTIAL_GROUPS` sets the target),
//! which fills the device on small surfaces (figures: `benches/RESULTS.md`).
//!
//! Screened models ([`VertexScreening`], [`VertexPotential::encode_screened`]: eps = 4r and
//! Debye-Hueckel, as `compute::esp::screening` defines them) run a pipeline of their own whose
//! kernel reads the model from the uniform; the vacuum pipelines are unchanged.
//!
//! Created once per device ([`VertexPotential::new`]); called by the draw stage of the viewer
//! (`app::draw`) when a surface extracted on the render device is coloured by the potential of a
//! frame's charges, by `bench --molsurf --molsurf-colored-frames`, and by the tests. This module knows
//! points and charges, not molecules: the caller converts its charges to Angstrom and `f32`.
//!
//! Values are in hartree/e, as `analysis::vertex_values::potential_at_vertices` gives them: the sum
//! of q_i / r_i with r in bohr (the Angstrom-to-bohr factor from `model::units`). Accuracy: every
//! term is exact to about one f32 ulp (distance from the f32 coordinates, `inverseSqrt` refined by a
//! Newton step), the terms are summed in blocks of 8, the blocks of a tile of 256 charges plainly and
//! the tiles' sums with Kahan compensation. What remains is the f32 rounding of the terms, which
//! shows where they cancel: on adk's surface the relative error |gpu - f64| / max(|f64|, 1e-3
//! hartree/e) against a float64 sum is below 1e-4 at 99.9% of the vertices and below 2e-4 at every
//! one (`tests/vertex_potential.rs`; the float64 sum of the exactly rounded f32 terms reaches
//! 9.5e-5 at the worst of them, and the CPU path's f32 terms are alike).

use super::marching_cubes::{
    GpuMesh, MAX_GROUPS_PER_DIM, McError, compute_buffer_entry as entry, groups_2d, read_buffer,
};
use crate::model::units::angstrom_from_bohr;
use wgpu::util::DeviceExt;

/// The WGSL source of the pass.
pub const SHADER_SOURCE: &str = include_str!("../../../shaders/vertex_coulomb.wgsl");

/// The most vertices per invocation and charges per workgroup-memory tile (the constants of
/// `shaders/vertex_coulomb.wgsl`).
pub const MAX_PER_THREAD: u32 = 16;
pub const TILE: u32 = 256;

/// The shape of the pass: vertices per invocation (`PER_THREAD` in the shader: 4, 8 or 16),
/// invocations per workgroup (`WORKGROUP`: 128 or 64) and whether 1/r is refined by a Newton step
/// (`NEWTON`). Named `v4`, `v8`, `v16`, with `-w64` for workgroups of 64 and `-hw` for the bare
/// hardware 1/sqrt (`ORBITFIELD_VERTEX_POTENTIAL`, read by [`Self::from_env`]), so one run on a
/// device can time them all. The default, `v16`, is the fastest measured with the charges split
/// into runs, on an H200 and on lavapipe (figures of every variant: `benches/RESULTS.md`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VertexPotentialVariant {
    pub per_thread: u32,
    pub workgroup: u32,
    pub newton: bool,
}

impl Default for VertexPotentialVariant {
    fn default() -> Self {
        VertexPotentialVariant::new(16, 128, true)
    }
}

impl VertexPotentialVariant {
    /// Every variant, for benches.
    pub const ALL: [VertexPotentialVariant; 12] = [
        VertexPotentialVariant::new(4, 128, true),
        VertexPotentialVariant::new(8, 128, true),
        VertexPotentialVariant::new(16, 128, true),
        VertexPotentialVariant::new(4, 64, true),
        VertexPotentialVariant::new(8, 64, true),
        VertexPotentialVariant::new(16, 64, true),
        VertexPotentialVariant::new(4, 128, false),
        VertexPotentialVariant::new(8, 128, false),
        VertexPotentialVariant::new(16, 128, false),
        VertexPotentialVariant::new(4, 64, false),
        VertexPotentialVariant::new(8, 64, false),
        VertexPotentialVariant::new(16, 64, false),
    ];

    const fn new(per_thread: u32, workgroup: u32, newton: bool) -> VertexPotentialVariant {
        VertexPotentialVariant {
            per_thread,
            workgroup,
            newton,
        }
    }

    /// The name `ORBITFIELD_VERTEX_POTENTIAL` takes: `v16`, `v8-w64`, `v16-hw`, ...
    pub fn name(self) -> String {
        format!(
            "v{}{}{}",
            self.per_thread,
            if self.workgroup == 128 {
                String::new()
            } else {
                format!("-w{}", self.workgroup)
            },
            if self.newton { "" } else { "-hw" }
        )
    }

    /// The variant named `name` (see [`Self::name`]).
    pub fn parse(name: &str) -> Option<VertexPotentialVariant> {
        Self::ALL.into_iter().find(|v| v.name() == name.trim())
    }

    /// The variant `ORBITFIELD_VERTEX_POTENTIAL` names, else the default.
    pub fn from_env() -> VertexPotentialVariant {
        std::env::var("ORBITFIELD_VERTEX_POTENTIAL")
            .ok()
            .and_then(|v| Self::parse(&v))
            .unwrap_or_default()
    }
}

/// Where padding charges (zero) sit, Angstrom: far enough that 1/r is tiny, near enough that r^2
/// stays finite in f32.
const PAD_POSITION_ANGSTROM: f32 = 1.0e15;

/// Bytes per vertex of a [`VertexValues`] buffer (one `render::gpu::MeshVertexColor`).
pub const VALUE_STRIDE: u64 = 8;

/// Uniform parameters of the pass. Twin of `Params` in `shaders/vertex_coulomb.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CoulombParams {
    pub n_charges: u32,
    pub vertex_capacity: u32,
    pub groups_x: u32,
    pub keep: u32,
    pub scale: f32,
    pub parts: u32,
    pub tiles_per_part: u32,
    pub blocks: u32,
    /// [`VertexScreening`]'s model (0 vacuum) and parameters.
    pub model: u32,
    pub screen_a: f32,
    pub screen_b: f32,
    /// Vertices are moved this far along their normals before the sum (Angstrom; 0: at the vertex).
    pub offset_angstrom: f32,
}

/// A screened Coulomb model as the pass reads it (the caller converts its model,
/// `compute::esp::screening`): `model` 0 vacuum (1/r), 1 `a / r^2`, 2 `a exp(-b r) / r`, with r in
/// Angstrom, `a` in Angstrom (model 1) or dimensionless (model 2), `b` in 1/Angstrom; the result is
/// scaled to hartree/e like the vacuum sum.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct VertexScreening {
    pub model: u32,
    pub a: f32,
    pub b_per_angstrom: f32,
    /// The potential is taken this far outside the surface along each vertex's normal (Angstrom;
    /// 0 at the vertex; PyMOL's `surface_ramp_above_mode` takes 1.4).
    pub offset_angstrom: f32,
}

/// Workgroups a pass should have to keep a large device busy: when a surface's vertex blocks are
/// fewer, the charges are split into runs ("parts") summed by separate workgroups and added at the
/// end. An NVIDIA H200 (132 multiprocessors) ran 100k charges at 441k vertices (1,723 blocks of 256)
/// fastest with about this many (`ORBITFIELD_VERTEX_POTENTIAL_GROUPS` overrides it; 0 means one
/// part). A run keeps at least [`MIN_TILES_PER_PART`] tiles, so small systems stay in one part.
const TARGET_GROUPS: u32 = 4096;
const MIN_TILES_PER_PART: u32 = 16;
/// The most parts (the sum pass adds them in order).
const MAX_PARTS: u32 = 16;

/// How many runs the charges are split into for `blocks` vertex blocks and `tiles` charge tiles
/// (at least 1), and tiles per run.
pub fn charge_parts(blocks: u32, tiles: u32, target_groups: u32) -> (u32, u32) {
    let tiles = tiles.max(1);
    let wanted = target_groups.div_ceil(blocks.max(1)).max(1);
    let most = (tiles / MIN_TILES_PER_PART).clamp(1, MAX_PARTS);
    let parts = wanted.min(most);
    let per = tiles.div_ceil(parts);
    // Rounding may leave the last run empty: count the runs that have tiles.
    (tiles.div_ceil(per), per)
}

fn target_groups() -> u32 {
    std::env::var("ORBITFIELD_VERTEX_POTENTIAL_GROUPS")
        .ok()
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(TARGET_GROUPS)
}

/// Why the pass could not run.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum VertexPotentialError {
    #[error("{positions} charge positions but {charges} charges")]
    Mismatch { positions: usize, charges: usize },
    #[error("the value buffer holds {held} vertices, the mesh has room for {need}")]
    TooSmall { held: u32, need: u32 },
    #[error("the mesh has room for {0} vertices, more than one dispatch covers")]
    TooLarge(u32),
    #[error(transparent)]
    ReadBack(#[from] McError),
}

/// Point charges on the render device: x, y, z (Angstrom) and q (e) per charge, padded with zero
/// charges to a multiple of [`TILE`].
pub struct GpuCharges {
    buffer: wgpu::Buffer,
    /// Charges in the buffer, padding included.
    padded: u32,
    /// Charges given.
    pub count: usize,
}

impl GpuCharges {
    /// The buffer's words for `positions_angstrom` and `charges_e` (non-finite charges count as 0).
    fn words(positions_angstrom: &[[f32; 3]], charges_e: &[f32]) -> Result<Vec<[f32; 4]>, VertexPotentialError> {
        if positions_angstrom.len() != charges_e.len() {
            return Err(VertexPotentialError::Mismatch {
                positions: positions_angstrom.len(),
                charges: charges_e.len(),
            });
        }
        let padded = positions_angstrom.len().div_ceil(TILE as usize).max(1) * TILE as usize;
        let mut words: Vec<[f32; 4]> = positions_angstrom
            .iter()
            .zip(charges_e)
            .map(|(p, &q)| {
                let ok = q.is_finite() && p.iter().all(|x| x.is_finite());
                if ok {
                    [p[0], p[1], p[2], q]
                } else {
                    [PAD_POSITION_ANGSTROM, PAD_POSITION_ANGSTROM, PAD_POSITION_ANGSTROM, 0.0]
                }
            })
            .collect();
        words.resize(
            padded,
            [PAD_POSITION_ANGSTROM, PAD_POSITION_ANGSTROM, PAD_POSITION_ANGSTROM, 0.0],
        );
        Ok(words)
    }

    /// Uploads charges into a new buffer.
    pub fn upload(
        device: &wgpu::Device,
        positions_angstrom: &[[f32; 3]],
        charges_e: &[f32],
    ) -> Result<GpuCharges, VertexPotentialError> {
        let words = GpuCharges::words(positions_angstrom, charges_e)?;
        let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("vertex potential charges"),
            contents: bytemuck::cast_slice(&words),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
        });
        Ok(GpuCharges {
            buffer,
            padded: words.len() as u32,
            count: positions_angstrom.len(),
        })
    }

    /// Writes a new frame's charges into this buffer when they fit its size (playback: the same
    /// atoms every frame), else into a new one.
    pub fn update(
        self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        positions_angstrom: &[[f32; 3]],
        charges_e: &[f32],
    ) -> Result<GpuCharges, VertexPotentialError> {
        let words = GpuCharges::words(positions_angstrom, charges_e)?;
        if words.len() as u32 != self.padded {
            return GpuCharges::upload(device, positions_angstrom, charges_e);
        }
        queue.write_buffer(&self.buffer, 0, bytemuck::cast_slice(&words));
        Ok(GpuCharges {
            count: positions_angstrom.len(),
            ..self
        })
    }
}

/// One value per vertex of a mesh, in the layout of the mesh pipelines' per-vertex colours
/// (`render::gpu::MeshVertexColor`: the value, then 0 for "through the colormap"); usage
/// `STORAGE | VERTEX | COPY_SRC`. Created filled with NaN, so a vertex the pass did not reach reads
/// back as NaN.
#[derive(Clone)]
pub struct VertexValues {
    pub buffer: wgpu::Buffer,
    /// Vertices it holds.
    pub capacity: u32,
}

impl VertexValues {
    /// A buffer for `capacity` vertices, NaN-filled.
    pub fn new(device: &wgpu::Device, capacity: u32) -> VertexValues {
        let capacity = capacity.max(1);
        let words: Vec<u32> = (0..2 * capacity as usize)
            .map(|k| if k % 2 == 0 { f32::NAN.to_bits() } else { 0 })
            .collect();
        let buffer = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("vertex potential values"),
            contents: bytemuck::cast_slice(&words),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_SRC,
        });
        VertexValues { buffer, capacity }
    }

    /// `previous` when it holds `capacity` vertices and at most four times that, else a new buffer.
    pub fn reuse_or_new(device: &wgpu::Device, previous: Option<VertexValues>, capacity: u32) -> VertexValues {
        match previous {
            Some(v) if v.capacity >= capacity && u64::from(v.capacity) <= 4 * u64::from(capacity.max(1024)) => v,
            _ => VertexValues::new(device, capacity),
        }
    }

    /// The first `n` values (waits for the GPU; tests and the range of a first colouring).
    pub fn read(&self, device: &wgpu::Device, queue: &wgpu::Queue, n: u32) -> Result<Vec<f32>, VertexPotentialError> {
        let n = n.min(self.capacity);
        let raw = read_buffer(device, queue, &self.buffer, VALUE_STRIDE * u64::from(n))?;
        Ok(raw
            .chunks_exact(VALUE_STRIDE as usize)
            .take(n as usize)
            .map(|c| f32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
            .collect())
    }
}

/// The pipeline, created once per device.
pub struct VertexPotential {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
    /// The same without the Newton step.
    pipeline_hardware: wgpu::ComputePipeline,
    /// Vertices per invocation and invocations per workgroup of both pipelines.
    per_thread: u32,
    workgroup: u32,
    /// Refine 1/r with a Newton step (picks one of the two pipelines).
    pub newton: bool,
    /// The screened pass (Newton step on; the model is a uniform).
    pipeline_screened: wgpu::ComputePipeline,
    /// Adds the runs' sums when the charges were split.
    sum_parts: wgpu::ComputePipeline,
    /// Scratch for the runs' sums, reused across calls (passes run in submission order).
    partials: std::sync::Mutex<Option<wgpu::Buffer>>,
    target_groups: u32,
    /// Runs fixed by [`Self::split_charges_into`] instead of chosen from the sizes.
    fixed_parts: Option<u32>,
}

impl VertexPotential {
    /// Builds the pipelines of the variant `ORBITFIELD_VERTEX_POTENTIAL` names, else the default.
    pub fn new(device: &wgpu::Device) -> VertexPotential {
        VertexPotential::with_variant(device, VertexPotentialVariant::from_env())
    }

    /// Splits the charges into `parts` runs (1 to 8) whatever the sizes, instead of choosing from
    /// them (tests of the split path on small systems).
    pub fn split_charges_into(&mut self, parts: u32) {
        self.fixed_parts = Some(parts);
    }

    /// The variant this pass runs.
    pub fn variant(&self) -> VertexPotentialVariant {
        VertexPotentialVariant {
            per_thread: self.per_thread,
            workgroup: self.workgroup,
            newton: self.newton,
        }
    }

    /// Builds the pipelines of `variant` (its vertices per invocation rounded up to 4, 8 or 16 and
    /// its workgroup to 64 or 128, the shapes the shader takes).
    pub fn with_variant(device: &wgpu::Device, variant: VertexPotentialVariant) -> VertexPotential {
        let per_thread = match variant.per_thread {
            0..=4 => 4,
            5..=8 => 8,
            _ => MAX_PER_THREAD,
        };
        let workgroup = if variant.workgroup <= 64 { 64 } else { 128 };
        use wgpu::BufferBindingType as B;
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("vertex coulomb"),
            source: wgpu::ShaderSource::Wgsl(SHADER_SOURCE.into()),
        });
        let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("vertex potential bind group layout"),
            entries: &[
                entry(0, B::Uniform),
                entry(1, B::Storage { read_only: true }),
                entry(2, B::Storage { read_only: true }),
                entry(3, B::Storage { read_only: true }),
                entry(4, B::Storage { read_only: false }),
                entry(5, B::Storage { read_only: false }),
            ],
        });
        let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("vertex potential pipeline layout"),
            bind_group_layouts: &[Some(&layout)],
            immediate_size: 0,
        });
        let pipeline_with = |label: &str, newton: bool, screened: bool, entry_point: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(label),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(entry_point),
                compilation_options: wgpu::PipelineCompilationOptions {
                    constants: &[
                        ("NEWTON", f64::from(u8::from(newton))),
                        ("PER_THREAD", f64::from(per_thread)),
                        ("WORKGROUP", f64::from(workgroup)),
                        ("SCREENED", f64::from(u8::from(screened))),
                    ],
                    // Every workgroup variable is written before it is read.
                    zero_initialize_workgroup_memory: false,
                },
                cache: None,
            })
        };
        let pipeline = |label: &str, newton: bool, entry_point: &str| pipeline_with(label, newton, false, entry_point);
        VertexPotential {
            layout,
            pipeline_screened: pipeline_with("vertex potential (screened)", true, true, "vertex_potential"),
            pipeline: pipeline("vertex potential", true, "vertex_potential"),
            pipeline_hardware: pipeline("vertex potential (hardware 1/sqrt)", false, "vertex_potential"),
            sum_parts: pipeline("vertex potential parts", true, "sum_parts"),
            partials: std::sync::Mutex::new(None),
            target_groups: target_groups(),
            fixed_parts: None,
            per_thread,
            workgroup,
            newton: variant.newton,
        }
    }

    /// Records the potential of `charges` at every vertex of `mesh` into `out` (which must hold the
    /// mesh's vertex capacity). The vertex count is read on the device from the extraction's
    /// counters, so this can follow the extraction in the same submission; nothing is read back.
    pub fn encode(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        mesh: &GpuMesh,
        charges: &GpuCharges,
        out: &VertexValues,
    ) -> Result<(), VertexPotentialError> {
        self.encode_screened(device, encoder, mesh, charges, out, VertexScreening::default())
    }

    /// As [`Self::encode`], the charges seen through the screened model `screen` (model 0: the
    /// vacuum pass itself).
    pub fn encode_screened(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        mesh: &GpuMesh,
        charges: &GpuCharges,
        out: &VertexValues,
        screen: VertexScreening,
    ) -> Result<(), VertexPotentialError> {
        let need = mesh.capacity.vertices;
        if out.capacity < need {
            return Err(VertexPotentialError::TooSmall {
                held: out.capacity,
                need,
            });
        }
        let blocks = need.div_ceil(self.workgroup * self.per_thread).max(1);
        let tiles = charges.padded / TILE;
        let (parts, tiles_per_part) = match self.fixed_parts {
            Some(p) => {
                let per = tiles.max(1).div_ceil(p.clamp(1, MAX_PARTS));
                (tiles.max(1).div_ceil(per), per)
            }
            None => charge_parts(blocks, tiles, self.target_groups),
        };
        let (gx, gy) = groups_2d(blocks.saturating_mul(parts));
        if gy > MAX_GROUPS_PER_DIM {
            return Err(VertexPotentialError::TooLarge(need));
        }
        let params = CoulombParams {
            n_charges: charges.padded,
            vertex_capacity: need,
            groups_x: gx,
            keep: 1,
            scale: angstrom_from_bohr(1.0) as f32,
            parts,
            tiles_per_part,
            blocks,
            model: screen.model,
            screen_a: screen.a,
            screen_b: screen.b_per_angstrom,
            offset_angstrom: screen.offset_angstrom,
        };
        let partials = self.partials_for(device, u64::from(parts) * u64::from(need) * 4);
        let bind = |params: &CoulombParams| {
            let params_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("vertex potential params"),
                contents: bytemuck::bytes_of(params),
                usage: wgpu::BufferUsages::UNIFORM,
            });
            let buffers = [
                &params_buf,
                &mesh.counters,
                &mesh.vertices,
                &charges.buffer,
                &out.buffer,
                &partials,
            ];
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some("vertex potential bind group"),
                layout: &self.layout,
                entries: &buffers
                    .map(|b| b.as_entire_binding())
                    .iter()
                    .enumerate()
                    .map(|(k, r)| wgpu::BindGroupEntry {
                        binding: k as u32,
                        resource: r.clone(),
                    })
                    .collect::<Vec<_>>(),
            })
        };
        let bind_group = bind(&params);
        let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("vertex potential"),
            timestamp_writes: None,
        });
        pass.set_pipeline(if screen.model != 0 || screen.offset_angstrom != 0.0 {
            &self.pipeline_screened
        } else if self.newton {
            &self.pipeline
        } else {
            &self.pipeline_hardware
        });
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(gx, gy, 1);
        drop(pass);
        if parts > 1 {
            // The runs' sums are complete when the pass above is: a pass of its own.
            let (sx, sy) = groups_2d(need.div_ceil(64));
            let sum_group = bind(&CoulombParams { groups_x: sx, ..params });
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("vertex potential parts"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.sum_parts);
            pass.set_bind_group(0, &sum_group, &[]);
            pass.dispatch_workgroups(sx, sy, 1);
        }
        Ok(())
    }

    /// The scratch buffer for runs' sums, at least `bytes` long (at least 16).
    fn partials_for(&self, device: &wgpu::Device, bytes: u64) -> wgpu::Buffer {
        let bytes = bytes.max(16);
        let mut held = match self.partials.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        };
        match held.as_ref() {
            Some(b) if b.size() >= bytes => b.clone(),
            _ => {
                let b = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("vertex potential partial sums"),
                    size: bytes.saturating_add(bytes / 4).next_multiple_of(16),
                    usage: wgpu::BufferUsages::STORAGE,
                    mapped_at_creation: false,
                });
                *held = Some(b.clone());
                b
            }
        }
    }

    /// Computes the potential at the vertices of `mesh` into `out` and submits it.
    pub fn run(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        mesh: &GpuMesh,
        charges: &GpuCharges,
        out: &VertexValues,
    ) -> Result<(), VertexPotentialError> {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("vertex potential"),
        });
        self.encode(device, &mut encoder, mesh, charges, out)?;
        queue.submit([encoder.finish()]);
        Ok(())
    }

    /// As [`Self::run`] with the screened model `screen`.
    pub fn run_screened(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        mesh: &GpuMesh,
        charges: &GpuCharges,
        out: &VertexValues,
        screen: VertexScreening,
    ) -> Result<(), VertexPotentialError> {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("vertex potential (screened)"),
        });
        self.encode_screened(device, &mut encoder, mesh, charges, out, screen)?;
        queue.submit([encoder.finish()]);
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    /// (Validated with the other modules in tests/render.rs, `shaders::all_modules`.)
    #[test]
    fn shader_layouts_match_the_host() {
        let module = wgpu::naga::front::wgsl::parse_str(SHADER_SOURCE).unwrap();
        assert!(module.entry_points.iter().any(|e| e.name == "vertex_potential"));
        let size_of = |name: &str| {
            let (_, ty) = module
                .types
                .iter()
                .find(|(_, t)| t.name.as_deref() == Some(name))
                .unwrap();
            ty.inner.size(module.to_ctx()) as usize
        };
        assert_eq!(size_of("Params"), std::mem::size_of::<CoulombParams>());
        assert_eq!(
            size_of("VertexValue"),
            // `render::gpu::MeshVertexColor`: what the mesh shader reads per vertex.
            8
        );
        // The shader's constants are the host's.
        for (name, v) in [("MAX_PER_THREAD", MAX_PER_THREAD), ("TILE", TILE)] {
            assert!(SHADER_SOURCE.contains(&format!("const {name}: u32 = {v}u;")), "{name}");
        }
        assert!(SHADER_SOURCE.contains("@workgroup_size(WORKGROUP)"));
    }

    #[test]
    fn variants_are_named_and_parsed_back() {
        for v in VertexPotentialVariant::ALL {
            assert_eq!(VertexPotentialVariant::parse(&v.name()), Some(v));
            assert!([4, 8, MAX_PER_THREAD].contains(&v.per_thread));
            assert!([64, 128].contains(&v.workgroup) && TILE.is_multiple_of(v.workgroup));
        }
        assert_eq!(
            VertexPotentialVariant::parse("v16"),
            Some(VertexPotentialVariant::default())
        );
        assert_eq!(
            VertexPotentialVariant::parse("v8-w64-hw"),
            Some(VertexPotentialVariant::new(8, 64, false))
        );
        assert_eq!(VertexPotentialVariant::parse("v5"), None);
    }

    #[test]
    fn charges_are_padded_to_whole_tiles_with_zeros() {
        let w = GpuCharges::words(&[[1.0, 2.0, 3.0], [0.0; 3]], &[0.5, f32::NAN]).unwrap();
        assert_eq!(w.len(), TILE as usize);
        assert_eq!(w[0], [1.0, 2.0, 3.0, 0.5]);
        assert!(w[1..].iter().all(|c| c[3] == 0.0 && c[0] == PAD_POSITION_ANGSTROM));
        // r^2 of a padding charge stays finite.
        assert!((3.0 * PAD_POSITION_ANGSTROM * PAD_POSITION_ANGSTROM).is_finite());
        assert!(GpuCharges::words(&[[0.0; 3]], &[]).is_err());
        assert_eq!(GpuCharges::words(&[], &[]).unwrap().len(), TILE as usize);
    }

    #[test]
    fn charges_split_into_runs_only_when_vertex_blocks_are_few() {
        // Large surface: one run.
        assert_eq!(charge_parts(5000, 391, 4096), (1, 391));
        // 100k charges (391 tiles) at 1,723 blocks: three runs covering every tile.
        let (parts, per) = charge_parts(1723, 391, 4096);
        assert_eq!(parts, 3);
        assert!(parts * per >= 391 && (parts - 1) * per < 391);
        // Few charges: one run whatever the blocks.
        assert_eq!(charge_parts(4, 14, 4096).0, 1);
        // Never more than MAX_PARTS, never an empty run.
        for tiles in [16, 17, 100, 1000, 4000, 40_000] {
            for blocks in [1, 7, 100] {
                let (parts, per) = charge_parts(blocks, tiles, 4096);
                assert!((1..=MAX_PARTS).contains(&parts));
                assert!(parts * per >= tiles && (parts - 1) * per < tiles, "{tiles} {blocks}");
            }
        }
        assert_eq!(charge_parts(10, 1000, 0).0, 1);
    }

    #[test]
    fn dispatch_covers_all_groups() {
        for n in [1u32, 65_535, 65_536, 200_000] {
            let (x, y) = groups_2d(n);
            assert!(x <= MAX_GROUPS_PER_DIM && u64::from(x) * u64::from(y) >= u64::from(n));
        }
    }
}
