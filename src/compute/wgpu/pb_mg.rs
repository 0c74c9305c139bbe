//! The device side of the wgpu Poisson-Boltzmann solver (`shaders/pb.wgsl`): the pipelines
//! ([`Pipelines`], once per device), one lattice's buffers and bind groups ([`DeviceLattice`]: the
//! multigrid levels with their float32 coefficients, the conjugate-gradient vectors, the partial sums
//! and the scalars), the symmetric V-cycle and one float32 correction `A e = r` solved by conjugate
//! gradients preconditioned by it ([`DeviceLattice::correction`]).
//!
//! Every launch's bind group is built once per lattice (the parameters of a level do not change between
//! solves; the conjugate-gradient scalars live in a device buffer), so an iteration is a fixed list of
//! dispatches. Iterations run in batches of [`BATCH`] per submission; after each batch the host reads
//! the residual norms the batch recorded and stops at the first that meets the target (the batch's
//! remaining iterations only lower the residual further). Driven by `super::pb`, which owns the float64
//! outer loop on the host.

use crate::compute::pb::PbError;
use wgpu::util::DeviceExt;

/// The WGSL source of the kernels.
pub const SHADER_SOURCE: &str = include_str!("../../../shaders/pb.wgsl");
/// Invocations per workgroup (`WG` in the shader).
pub const WG: u32 = 256;
/// Iterations a batch can record (`HISTORY` in the shader).
pub const HISTORY: usize = 64;
/// Bytes of the shader's `Scalars`: eight words, then the history.
pub const SCALARS_BYTES: u64 = 32 + 4 * HISTORY as u64;
/// Conjugate-gradient iterations per submission.
pub const BATCH: usize = 4;
/// The coarsest level is solved by one workgroup when it has at most this many points.
pub const ONE_GROUP_POINTS: usize = 32 * 32 * 32;

/// Coarsening stops at this many points per axis or fewer.
const COARSEST_POINTS: usize = 6;

/// The dims of the multigrid levels of `dims` (the CUDA engine's): halved while every axis has an odd
/// count of at least 5 and some axis more than [`COARSEST_POINTS`].
pub fn level_dims(dims: [usize; 3]) -> Vec<[usize; 3]> {
    let mut out = vec![dims];
    let mut d = dims;
    while d.iter().all(|&n| n % 2 == 1 && n >= 5) && d.iter().any(|&n| n > COARSEST_POINTS) && out.len() < 16 {
        d = d.map(|n| (n - 1) / 2 + 1);
        out.push(d);
    }
    out
}

/// How each V-cycle runs: Gauss-Seidel sweeps before and after each coarse correction, and whether it
/// is broken on purpose.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct VCycle {
    pub sweeps: usize,
    pub poison: Poison,
}

/// Uniform parameters of one launch. Twin of `Params` in `shaders/pb.wgsl` (which says what each field
/// is).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct KernelParams {
    pub nx: i32,
    pub ny: i32,
    pub nz: i32,
    pub n: i32,
    pub cx: i32,
    pub cy: i32,
    pub cz: i32,
    pub colour: i32,
    pub ih2: f32,
    pub pad0: i32,
    pub pad1: i32,
    pub pad2: i32,
}

/// A deliberately broken V-cycle, for the tests that show a broken preconditioner is caught.
#[doc(hidden)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Poison {
    /// The real V-cycle.
    #[default]
    None,
    /// No Gauss-Seidel sweeps (the preconditioner loses the high frequencies).
    SkipSmoother,
    /// The coarse corrections are not added (the V-cycle is the smoother alone).
    ZeroProlongation,
}

fn pipeline(device: &wgpu::Device, module: &wgpu::ShaderModule, entry: &str) -> wgpu::ComputePipeline {
    device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
        label: Some(entry),
        layout: None,
        module,
        entry_point: Some(entry),
        compilation_options: Default::default(),
        cache: None,
    })
}

/// The kernels' pipelines on one device (each with the layout of the bindings it uses).
pub struct Pipelines {
    fill: wgpu::ComputePipeline,
    apply: wgpu::ComputePipeline,
    reduce_alpha: wgpu::ComputePipeline,
    reduce_init: wgpu::ComputePipeline,
    reduce_beta: wgpu::ComputePipeline,
    cg_update: wgpu::ComputePipeline,
    dot_rz: wgpu::ComputePipeline,
    xpby: wgpu::ComputePipeline,
    smooth: wgpu::ComputePipeline,
    mg_residual: wgpu::ComputePipeline,
    restrict: wgpu::ComputePipeline,
    prolong_add: wgpu::ComputePipeline,
    coarsen: wgpu::ComputePipeline,
    coarse_solve: wgpu::ComputePipeline,
}

/// Storage buffers the busiest kernel binds (`pb_cg_update`).
pub const STORAGE_BUFFERS: u32 = 5;

impl Pipelines {
    pub fn new(device: &wgpu::Device) -> Pipelines {
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("pb"),
            source: wgpu::ShaderSource::Wgsl(SHADER_SOURCE.into()),
        });
        let p = |e: &str| pipeline(device, &module, e);
        Pipelines {
            fill: p("pb_fill"),
            apply: p("pb_apply"),
            reduce_alpha: p("pb_reduce_alpha"),
            reduce_init: p("pb_reduce_init"),
            reduce_beta: p("pb_reduce_beta"),
            cg_update: p("pb_cg_update"),
            dot_rz: p("pb_dot_rz"),
            xpby: p("pb_xpby"),
            smooth: p("pb_smooth"),
            mg_residual: p("pb_mg_residual"),
            restrict: p("pb_restrict"),
            prolong_add: p("pb_prolong_add"),
            coarsen: p("pb_coarsen"),
            coarse_solve: p("pb_coarse_solve"),
        }
    }
}

/// Workgroups (x, y) covering `items` invocations of [`WG`], at most `max_dim` per dimension.
pub fn grid(items: usize, max_dim: u32) -> (u32, u32) {
    let total = (items.max(1) as u64).div_ceil(u64::from(WG));
    let gx = total.min(u64::from(max_dim.max(1)));
    let gy = total.div_ceil(gx);
    (gx as u32, gy.min(u64::from(u32::MAX)) as u32)
}

/// One dispatch: its pipeline, bind group and workgroups.
struct Launch {
    pipeline: wgpu::ComputePipeline,
    group: wgpu::BindGroup,
    grid: (u32, u32),
}

impl Launch {
    fn run(&self, pass: &mut wgpu::ComputePass<'_>) {
        pass.set_pipeline(&self.pipeline);
        pass.set_bind_group(0, &self.group, &[]);
        pass.dispatch_workgroups(self.grid.0, self.grid.1, 1);
    }
}

/// Builds launches on one device: binding 0 a uniform of the launch's parameters, the rest as given.
struct Builder<'a> {
    device: &'a wgpu::Device,
    max_dim: u32,
}

impl Builder<'_> {
    fn launch(
        &self,
        pipeline: &wgpu::ComputePipeline,
        params: KernelParams,
        items: usize,
        buffers: &[(u32, &wgpu::Buffer)],
    ) -> Launch {
        let uniform = self.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("pb params"),
            contents: bytemuck::bytes_of(&params),
            usage: wgpu::BufferUsages::UNIFORM,
        });
        let mut entries = vec![wgpu::BindGroupEntry {
            binding: 0,
            resource: uniform.as_entire_binding(),
        }];
        entries.extend(buffers.iter().map(|(binding, b)| wgpu::BindGroupEntry {
            binding: *binding,
            resource: b.as_entire_binding(),
        }));
        let group = self.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("pb"),
            layout: &pipeline.get_bind_group_layout(0),
            entries: &entries,
        });
        Launch {
            pipeline: pipeline.clone(),
            group,
            grid: grid(items, self.max_dim),
        }
    }

    /// One workgroup.
    fn single(
        &self,
        pipeline: &wgpu::ComputePipeline,
        params: KernelParams,
        buffers: &[(u32, &wgpu::Buffer)],
    ) -> Launch {
        let mut l = self.launch(pipeline, params, 1, buffers);
        l.grid = (1, 1);
        l
    }
}

// The shader's bindings.
const COEF: u32 = 1;
const SRC_A: u32 = 2;
const SRC_B: u32 = 3;
const DST: u32 = 4;
const DST2: u32 = 5;
const PARTIAL: u32 = 6;
const SCALARS: u32 = 7;
const SCALARS_R: u32 = 8;
const COEF_OUT: u32 = 9;
const PARTIAL_R: u32 = 10;

/// One multigrid level: float32 coefficients (ex, ey, ez, k2 per point), the V-cycle's right side `b`,
/// iterate `x` and residual `t`, with the level's launches.
struct Level {
    dims: [usize; 3],
    coef: wgpu::Buffer,
    b: wgpu::Buffer,
    x: wgpu::Buffer,
    t: wgpu::Buffer,
    launches: Option<LevelLaunches>,
}

struct LevelLaunches {
    fill_x: Launch,
    /// Red and black half sweeps.
    smooth: [Launch; 2],
    residual: Launch,
    /// The coarsest level in one workgroup (when small enough).
    coarse_solve: Option<Launch>,
    /// To and from the next coarser level.
    restrict: Option<Launch>,
    prolong: Option<Launch>,
    coarsen: Option<Launch>,
}

fn dims_i32(d: [usize; 3]) -> [i32; 3] {
    d.map(|v| v as i32)
}

fn storage(device: &wgpu::Device, label: &str, bytes: u64, extra: wgpu::BufferUsages) -> wgpu::Buffer {
    device.create_buffer(&wgpu::BufferDescriptor {
        label: Some(label),
        size: bytes.max(16),
        usage: wgpu::BufferUsages::STORAGE | extra,
        mapped_at_creation: false,
    })
}

/// One lattice's buffers and launches on the device.
pub struct DeviceLattice {
    pub dims: [usize; 3],
    pub spacing_angstrom: f64,
    levels: Vec<Level>,
    e_read: wgpu::Buffer,
    scalars: wgpu::Buffer,
    scalars_read: wgpu::Buffer,
    fill_e: Launch,
    fill_p: Launch,
    apply: Launch,
    reduce_alpha: Launch,
    reduce_init: Launch,
    reduce_beta: Launch,
    cg_update: Launch,
    dot_rz: Launch,
    xpby: Launch,
    /// Kept alive for the launches that bind them.
    e: wgpu::Buffer,
}

/// How one correction went.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct CorrectionRun {
    /// Iterations run on the device (whole batches).
    pub iterations: usize,
    /// Whether the float32 residual reached the target.
    pub reached: bool,
}

impl DeviceLattice {
    /// Allocates the buffers of a lattice of `dims` points `spacing_angstrom` apart, with the
    /// multigrid levels `level_dims`, and builds every launch. The caller has checked the device's
    /// limits.
    pub fn new(
        device: &wgpu::Device,
        pipes: &Pipelines,
        level_dims: &[[usize; 3]],
        spacing_angstrom: f64,
    ) -> Result<DeviceLattice, PbError> {
        let Some(&dims) = level_dims.first() else {
            return Err(PbError::Device("wgpu: no multigrid level".into()));
        };
        let max_dim = device.limits().max_compute_workgroups_per_dimension;
        let build = Builder { device, max_dim };
        let n = dims.iter().product::<usize>();
        let f32s = |m: usize| 4 * m as u64;
        let rw = wgpu::BufferUsages::COPY_DST | wgpu::BufferUsages::COPY_SRC;
        let mut levels: Vec<Level> = level_dims
            .iter()
            .map(|&d| {
                let m = d.iter().product::<usize>();
                Level {
                    dims: d,
                    coef: storage(device, "pb coef", 16 * m as u64, rw),
                    b: storage(device, "pb b", f32s(m), rw),
                    x: storage(device, "pb x", f32s(m), rw),
                    t: storage(device, "pb t", f32s(m), rw),
                    launches: None,
                }
            })
            .collect();
        let count = levels.len();
        for at in 0..count {
            let (lo, hi) = levels.split_at_mut(at + 1);
            let Some(lv) = lo.last_mut() else { continue };
            let coarse = hi.first();
            let h = spacing_angstrom * (1u64 << at.min(62)) as f64;
            let [nx, ny, nz] = dims_i32(lv.dims);
            let m = lv.dims.iter().product::<usize>();
            let base = KernelParams {
                nx,
                ny,
                nz,
                n: m as i32,
                ih2: (1.0 / (h * h)) as f32,
                ..KernelParams::default()
            };
            let half = (lv.dims[0].div_ceil(2)) * lv.dims[1] * lv.dims[2];
            let smooth = |colour: i32| {
                build.launch(
                    &pipes.smooth,
                    KernelParams {
                        n: half as i32,
                        colour,
                        ..base
                    },
                    half,
                    &[(COEF, &lv.coef), (SRC_A, &lv.b), (DST, &lv.x)],
                )
            };
            let with_coarse = |c: &Level| {
                let [cx, cy, cz] = dims_i32(c.dims);
                KernelParams { cx, cy, cz, ..base }
            };
            let cm = |c: &Level| c.dims.iter().product::<usize>();
            let coarse_solve = (coarse.is_none() && m <= ONE_GROUP_POINTS).then(|| {
                let largest = lv.dims.iter().copied().max().unwrap_or(1);
                build.single(
                    &pipes.coarse_solve,
                    KernelParams {
                        colour: (2 * largest) as i32,
                        ..base
                    },
                    &[(COEF, &lv.coef), (SRC_A, &lv.b), (DST, &lv.x)],
                )
            });
            lv.launches = Some(LevelLaunches {
                fill_x: build.launch(&pipes.fill, base, m, &[(DST, &lv.x)]),
                smooth: [smooth(0), smooth(1)],
                residual: build.launch(
                    &pipes.mg_residual,
                    base,
                    m,
                    &[(COEF, &lv.coef), (SRC_A, &lv.b), (SRC_B, &lv.x), (DST, &lv.t)],
                ),
                coarse_solve,
                restrict: coarse
                    .map(|c| build.launch(&pipes.restrict, with_coarse(c), cm(c), &[(SRC_A, &lv.t), (DST, &c.b)])),
                prolong: coarse
                    .map(|c| build.launch(&pipes.prolong_add, with_coarse(c), m, &[(SRC_A, &c.x), (DST, &lv.x)])),
                coarsen: coarse.map(|c| {
                    build.launch(
                        &pipes.coarsen,
                        with_coarse(c),
                        cm(c),
                        &[(COEF, &lv.coef), (COEF_OUT, &c.coef)],
                    )
                }),
            });
        }
        let Some(fine) = levels.first() else {
            return Err(PbError::Device("wgpu: no multigrid level".into()));
        };
        let (gx, gy) = grid(n, max_dim);
        let groups = gx as usize * gy as usize;
        let e = storage(device, "pb e", f32s(n), rw);
        let p = storage(device, "pb p", f32s(n), rw);
        let q = storage(device, "pb q", f32s(n), rw);
        let partial = storage(device, "pb partial sums", f32s(2 * groups), rw);
        let scalars = storage(device, "pb scalars", SCALARS_BYTES, rw);
        let read = |label: &str, bytes: u64| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: bytes.max(16),
                usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
                mapped_at_creation: false,
            })
        };
        let [nx, ny, nz] = dims_i32(dims);
        let fine_params = KernelParams {
            nx,
            ny,
            nz,
            n: n as i32,
            ih2: (1.0 / (spacing_angstrom * spacing_angstrom)) as f32,
            ..KernelParams::default()
        };
        let sums = KernelParams {
            n: groups as i32,
            ..fine_params
        };
        let lattice = DeviceLattice {
            dims,
            spacing_angstrom,
            e_read: read("pb e read", f32s(n)),
            scalars_read: read("pb scalars read", SCALARS_BYTES),
            fill_e: build.launch(&pipes.fill, fine_params, n, &[(DST, &e)]),
            fill_p: build.launch(&pipes.fill, fine_params, n, &[(DST, &p)]),
            apply: build.launch(
                &pipes.apply,
                fine_params,
                n,
                &[(COEF, &fine.coef), (SRC_B, &p), (DST, &q), (PARTIAL, &partial)],
            ),
            reduce_alpha: build.single(&pipes.reduce_alpha, sums, &[(PARTIAL_R, &partial), (SCALARS, &scalars)]),
            reduce_init: build.single(&pipes.reduce_init, sums, &[(PARTIAL_R, &partial), (SCALARS, &scalars)]),
            reduce_beta: build.single(&pipes.reduce_beta, sums, &[(PARTIAL_R, &partial), (SCALARS, &scalars)]),
            cg_update: build.launch(
                &pipes.cg_update,
                fine_params,
                n,
                &[
                    (SCALARS_R, &scalars),
                    (SRC_A, &p),
                    (SRC_B, &q),
                    (DST, &e),
                    (DST2, &fine.b),
                ],
            ),
            dot_rz: build.launch(
                &pipes.dot_rz,
                fine_params,
                n,
                &[(SRC_A, &fine.b), (SRC_B, &fine.x), (PARTIAL, &partial)],
            ),
            xpby: build.launch(
                &pipes.xpby,
                fine_params,
                n,
                &[(SCALARS_R, &scalars), (SRC_A, &fine.x), (DST, &p)],
            ),
            scalars,
            e,
            levels,
        };
        Ok(lattice)
    }

    /// Multigrid levels (1: no coarsening).
    pub fn levels(&self) -> usize {
        self.levels.len()
    }

    /// Uploads the finest level's coefficients (ex, ey, ez, k2 per point) and builds the coarse ones
    /// on the device.
    pub fn set_coefficients(&self, device: &wgpu::Device, queue: &wgpu::Queue, coef: &[[f32; 4]]) {
        if let Some(fine) = self.levels.first() {
            queue.write_buffer(&fine.coef, 0, bytemuck::cast_slice(coef));
        }
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("pb coarsen"),
        });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("pb coarsen"),
                timestamp_writes: None,
            });
            for l in self.levels.iter().filter_map(|l| l.launches.as_ref()) {
                if let Some(c) = &l.coarsen {
                    c.run(&mut pass);
                }
            }
        }
        queue.submit([encoder.finish()]);
    }

    /// Encodes x = M b on level `at` (x from zero): red then black sweeps before the coarse correction,
    /// black then red after it; the coarsest level by symmetric sweeps.
    fn vcycle(&self, pass: &mut wgpu::ComputePass<'_>, at: usize, how: VCycle) {
        let VCycle { sweeps, poison } = how;
        let Some(l) = self.levels.get(at).and_then(|l| l.launches.as_ref()) else {
            return;
        };
        let smooth = poison != Poison::SkipSmoother;
        let last = at + 1 == self.levels.len();
        if last {
            if let Some(c) = &l.coarse_solve
                && smooth
            {
                c.run(pass);
                return;
            }
            l.fill_x.run(pass);
            if smooth {
                for order in [[0, 1], [1, 0]] {
                    for _ in 0..sweeps {
                        l.smooth[order[0]].run(pass);
                        l.smooth[order[1]].run(pass);
                    }
                }
            }
            return;
        }
        l.fill_x.run(pass);
        if smooth {
            for _ in 0..sweeps {
                l.smooth[0].run(pass);
                l.smooth[1].run(pass);
            }
        }
        l.residual.run(pass);
        if let Some(r) = &l.restrict {
            r.run(pass);
        }
        self.vcycle(pass, at + 1, how);
        if poison != Poison::ZeroProlongation
            && let Some(p) = &l.prolong
        {
            p.run(pass);
        }
        if smooth {
            for _ in 0..sweeps {
                l.smooth[1].run(pass);
                l.smooth[0].run(pass);
            }
        }
    }

    /// Conjugate gradients on `A e = r` from e = 0 (r the float32 residual, zero on the faces), until
    /// |r|^2 <= `target_rr` or `left` iterations are used (whole batches).
    pub fn correction(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        r: &[f32],
        target_rr: f64,
        left: usize,
        how: VCycle,
    ) -> Result<CorrectionRun, PbError> {
        let Some(fine) = self.levels.first() else {
            return Err(PbError::Device("wgpu: no multigrid level".into()));
        };
        queue.write_buffer(&fine.b, 0, bytemuck::cast_slice(r));
        queue.write_buffer(&self.scalars, 0, &[0u8; SCALARS_BYTES as usize]);
        let mut used = 0usize;
        let mut first = true;
        while used < left {
            let batch = BATCH.min(left - used);
            let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("pb conjugate gradients"),
            });
            {
                let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                    label: Some("pb conjugate gradients"),
                    timestamp_writes: None,
                });
                if first {
                    // e = 0, z = M r, rz = r . z, p = z.
                    self.fill_e.run(&mut pass);
                    self.vcycle(&mut pass, 0, how);
                    self.dot_rz.run(&mut pass);
                    self.reduce_init.run(&mut pass);
                    self.fill_p.run(&mut pass);
                    self.xpby.run(&mut pass);
                }
                for _ in 0..batch {
                    self.apply.run(&mut pass);
                    self.reduce_alpha.run(&mut pass);
                    self.cg_update.run(&mut pass);
                    self.vcycle(&mut pass, 0, how);
                    self.dot_rz.run(&mut pass);
                    self.reduce_beta.run(&mut pass);
                    self.xpby.run(&mut pass);
                }
            }
            encoder.copy_buffer_to_buffer(&self.scalars, 0, &self.scalars_read, 0, SCALARS_BYTES);
            queue.submit([encoder.finish()]);
            first = false;
            let words = read_words(device, &self.scalars_read)?;
            let word = |i: usize| words.get(i).copied().unwrap_or(0);
            if word(4) != 0 {
                let rz = f32::from_bits(word(0));
                return Err(PbError::Device(format!(
                    "wgpu: conjugate gradients broke down (p.Ap not positive, r.z = {rz:e}); check the dielectric maps"
                )));
            }
            let recorded = (word(3) as usize).min(batch).min(HISTORY);
            for i in 0..recorded {
                let rr = f64::from(f32::from_bits(word(8 + i)));
                if !rr.is_finite() {
                    return Err(PbError::Device(
                        "wgpu: the float32 residual is not a finite number".into(),
                    ));
                }
                if rr <= target_rr {
                    return Ok(CorrectionRun {
                        iterations: used + batch,
                        reached: true,
                    });
                }
            }
            used += batch;
            // The next batch records from the start of the history.
            queue.write_buffer(&self.scalars, 12, &0u32.to_ne_bytes());
        }
        Ok(CorrectionRun {
            iterations: used,
            reached: false,
        })
    }

    /// The correction `e` of the last [`DeviceLattice::correction`].
    pub fn download_e(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<Vec<f32>, PbError> {
        let n = self.dims.iter().product::<usize>();
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("pb e read"),
        });
        encoder.copy_buffer_to_buffer(&self.e, 0, &self.e_read, 0, 4 * n as u64);
        queue.submit([encoder.finish()]);
        let words = read_words(device, &self.e_read)?;
        Ok(words.into_iter().take(n).map(f32::from_bits).collect())
    }
}

/// A `MAP_READ` buffer whose copy has been submitted, as words.
fn read_words(device: &wgpu::Device, buffer: &wgpu::Buffer) -> Result<Vec<u32>, PbError> {
    let bytes =
        super::marching_cubes::map_staging(device, buffer).map_err(|e| PbError::Device(format!("wgpu: {e}")))?;
    Ok(bytes
        .chunks_exact(4)
        .map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
        .collect())
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;

    #[test]
    fn shader_layout_and_constants_match_the_host() {
        let module = wgpu::naga::front::wgsl::parse_str(SHADER_SOURCE).unwrap();
        assert_eq!(
            crate::compute::wgpu::wgsl_type_size(&module, "Params"),
            std::mem::size_of::<KernelParams>()
        );
        assert_eq!(
            crate::compute::wgpu::wgsl_type_size(&module, "Scalars") as u64,
            SCALARS_BYTES
        );
        assert!(SHADER_SOURCE.contains(&format!("const WG: u32 = {WG}u;")));
        assert!(SHADER_SOURCE.contains(&format!("const HISTORY: u32 = {HISTORY}u;")));
        assert!(SHADER_SOURCE.contains(&format!("history: array<f32, {HISTORY}>")));
        let mut validator = wgpu::naga::valid::Validator::new(
            wgpu::naga::valid::ValidationFlags::all(),
            wgpu::naga::valid::Capabilities::empty(),
        );
        validator.validate(&module).unwrap();
    }

    #[test]
    fn levels_halve_odd_lattices_down_to_six_points() {
        assert_eq!(
            level_dims([161, 161, 161]),
            vec![[161; 3], [81; 3], [41; 3], [21; 3], [11; 3], [6; 3]]
        );
        assert_eq!(level_dims([160, 161, 161]), vec![[160, 161, 161]]);
        assert_eq!(
            level_dims([97, 65, 33]),
            vec![[97, 65, 33], [49, 33, 17], [25, 17, 9], [13, 9, 5], [7, 5, 3]]
        );
    }

    #[test]
    fn grids_split_past_the_dimension_limit() {
        assert_eq!(grid(1, 65535), (1, 1));
        assert_eq!(grid(256 * 65535, 65535), (65535, 1));
        assert_eq!(grid(256 * 65535 + 1, 65535), (65535, 2));
        let (gx, gy) = grid(513 * 513 * 513, 65535);
        assert!(u64::from(gx) * u64::from(gy) * 256 >= 513 * 513 * 513 && gy <= 65535);
    }
}
