//! The long-range levels of multilevel summation on any wgpu device (`shaders/msm_levels.wgsl`):
//! anterpolation, restriction, the top level, every level's lattice cutoff and prolongation, from
//! the [`LevelGeometry`] the host decided, down to the finest lattice potential that
//! `msm_slab.wgsl` interpolates (kept on the device and handed to [`super::msm::MsmUpload`]).
//!
//! Owns [`MsmLevelsPass`] (the pipelines, built once per device at first use), [`DeviceLevels`]
//! (every level's buffers) and [`MsmLevelsParams`] (twin of the shader's uniform). The launch
//! sequence is the one the CUDA engine runs ([`crate::compute::esp::schedule::schedule`]: the same
//! [`Step`]s over the same level buffers), so both devices run the host cascade of
//! `compute::esp` pass by pass. Called by [`super::msm::MsmSlabPass::upload_on`] for a plan built
//! with [`crate::compute::esp::StagesOn::Engine`]; tested against
//! [`LevelGeometry::host_levels`] in `tests/wgpu_msm_levels.rs`.
//!
//! Precision (f32; WGSL has no f64 and no float atomics): the charges' lattice coordinates are
//! split on the host in f64 into an integer first index and a fraction in `[0, 1)` rounded once to
//! f32, so the B-spline weights carry about `u` (u = 2^-24) whatever the lattice's size; the
//! anterpolation sums each point's contributions exactly in 64-bit fixed point (two 32-bit words,
//! [`fixed_scale`]), so only each contribution's own f32 rounding (a few `u`) remains and the
//! result is the same on every run; restriction and prolongation sum four exact weights per value;
//! the lattice cutoff ([`CutoffKernel`]: workgroup tiles staging each source plane, or an invocation
//! per point) sums each stencil row (at most `4a/h + 1` terms) plainly and the rows with Kahan
//! compensation, in the same order either way; the top level likewise per x run. Weights and tables are the host's f64
//! values rounded once to f32. Each level thus adds a few `u` of the sum of its terms' magnitudes;
//! measured against the host's f64 cascade on lavapipe (`tests/wgpu_msm_levels.rs`, random
//! charges, open, periodic orthorhombic and triclinic, over repeated seeds): the finest potential
//! at most 6.7e-7 of its largest |value|, every other level at most 9.1e-7 of its own; held to
//! [`FINEST_TOL`] (1e-5: a few `u` per level times the sum of the terms' magnitudes over the
//! potential, about ten here, with a margin of a few for larger lattices).

use super::marching_cubes::read_buffer;
use super::pass::{compute_layouts, device_err, params_bind_group};
use crate::compute::esp::schedule::{AxisPass, Buf, Step, schedule};
use crate::compute::esp::{HostLevels, LevelGeometry, TopLevel};
use crate::compute::{ComputeError, PointCharges};
use wgpu::util::DeviceExt;

/// The WGSL source of the pass.
pub const SHADER_SOURCE: &str = include_str!("../../../shaders/msm_levels.wgsl");

/// Invocations per workgroup (`WG` in the shader).
pub const WG: u32 = 64;

/// The bound the tests hold the device's finest potential to, relative to its largest |value|
/// against the host's f64 cascade (see the module documentation for the reason).
pub const FINEST_TOL: f64 = 1e-5;

/// `cutoff_tiles`: points per workgroup along x and y (`TX`, `TY` in the shader).
pub const TILE: [u32; 2] = [16, 16];
/// `cutoff_tiles`: values of the staged source region (`STAGE` in the shader).
/// 16,320 bytes: within the 16,352 that every wgpu device grants, so the pipeline builds anywhere.
pub const STAGE: u32 = 4080;

/// Which entry point sums the lattice cutoff of a level.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CutoffKernel {
    /// `cutoff_tiles` (the default): a workgroup per 16 x 16 points of a plane, the source plane's
    /// points its stencil rows read staged in workgroup memory; `cutoff` where the staged region
    /// would exceed [`STAGE`] values (a stencil radius above 23 points along x or y) or the device
    /// grants too little workgroup memory.
    Tiles,
    /// `cutoff`: an invocation per point reading the level from storage.
    Points,
}

/// Uniform parameters of one dispatch. Twin of `Params` in `shaders/msm_levels.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct MsmLevelsParams {
    pub n: [i32; 4],
    pub src: [i32; 4],
    pub dst: [i32; 4],
    pub lo: [i32; 4],
    pub f: [f32; 4],
}

/// The pipelines of the cascade, one per entry point, sharing one bind-group layout.
pub struct MsmLevelsPass {
    layout: wgpu::BindGroupLayout,
    anterpolate: wgpu::ComputePipeline,
    from_fixed: wgpu::ComputePipeline,
    axis: wgpu::ComputePipeline,
    cutoff: wgpu::ComputePipeline,
    /// `None` where the device grants less workgroup memory or fewer invocations than it takes.
    cutoff_tiles: Option<wgpu::ComputePipeline>,
    /// Which entry point sums each level's lattice cutoff.
    pub cutoff_kernel: CutoffKernel,
    top: wgpu::ComputePipeline,
}

/// Every level of one cascade on the device (f32, each at least one value), finest first.
pub struct DeviceLevels {
    pub charges: Vec<wgpu::Buffer>,
    pub potentials: Vec<wgpu::Buffer>,
}

impl DeviceLevels {
    /// The finest potential, as `msm_slab.wgsl` reads it.
    pub fn into_finest(mut self) -> Option<wgpu::Buffer> {
        if self.potentials.is_empty() {
            None
        } else {
            Some(self.potentials.swap_remove(0))
        }
    }
}

/// The fixed-point scale of the anterpolation for charges of total magnitude `sum_abs_e`: a power
/// of two with `sum_abs_e * scale <= 2^61`, so no lattice sum (at most `sum_abs_e`, every weight
/// product being at most 1 in magnitude) nor its rounding (half a unit per term) can overflow the
/// signed 64-bit pair of words; clamped to what f32 holds (`2^-64 ..= 2^100`). Resolution:
/// `sum_abs_e / 2^61`, far below the f32 rounding of each contribution.
pub fn fixed_scale(sum_abs_e: f64) -> f32 {
    let e = if sum_abs_e.is_finite() && sum_abs_e > 0.0 {
        (61 - sum_abs_e.log2().ceil().clamp(-900.0, 900.0) as i32).clamp(-64, 100)
    } else {
        0
    };
    2f32.powi(e)
}

fn too_big(what: &str) -> ComputeError {
    ComputeError::Device(format!(
        "wgpu: {what} too large for the MSM level pass's 32-bit indices"
    ))
}

fn i32_of(n: usize, what: &str) -> Result<i32, ComputeError> {
    i32::try_from(n).map_err(|_| too_big(what))
}

fn i32_of_i64(n: i64, what: &str) -> Result<i32, ComputeError> {
    i32::try_from(n).map_err(|_| too_big(what))
}

fn dims_i32(d: [usize; 3]) -> Result<[i32; 3], ComputeError> {
    let n = d[0].checked_mul(d[1]).and_then(|x| x.checked_mul(d[2]));
    if n.is_none_or(|n| n > i32::MAX as usize) {
        return Err(too_big("the MSM lattice"));
    }
    Ok([
        i32_of(d[0], "the MSM lattice")?,
        i32_of(d[1], "the MSM lattice")?,
        i32_of(d[2], "the MSM lattice")?,
    ])
}

/// The charges as `anterpolate` reads them (at least one entry each).
pub struct KernelAtoms {
    /// Per charge the first lattice index of its stencil, `floor(t) - 1` per axis.
    pub bases: Vec<[i32; 4]>,
    /// Per charge `(u0, u1, u2, q)` with `u = t - floor(t)`.
    pub fracs: Vec<[f32; 4]>,
}

/// [`KernelAtoms`] of `charges`, `t` from [`LevelGeometry::charge_coords`] (f64 on the host).
pub fn kernel_atoms(g: &LevelGeometry, charges: &PointCharges) -> Result<KernelAtoms, ComputeError> {
    use rayon::prelude::*;
    let n = charges.charges_e.len().min(charges.positions_bohr.len());
    let split: Vec<Option<([i32; 4], [f32; 4])>> = charges.positions_bohr[..n]
        .par_iter()
        .zip(charges.charges_e[..n].par_iter())
        .map(|(p, q)| {
            let t = g.charge_coords(*p);
            let mut b = [0i32; 4];
            let mut u = [0f32; 4];
            for k in 0..3 {
                let f = t[k].floor();
                if !f.is_finite() || f.abs() > 1e9 {
                    return None;
                }
                b[k] = f as i32 - 1;
                u[k] = (t[k] - f) as f32;
            }
            u[3] = *q as f32;
            Some((b, u))
        })
        .collect();
    let mut bases = Vec::with_capacity(n.max(1));
    let mut fracs = Vec::with_capacity(n.max(1));
    for s in split {
        let (b, u) = s.ok_or_else(|| too_big("a charge's lattice coordinate"))?;
        bases.push(b);
        fracs.push(u);
    }
    if bases.is_empty() {
        bases.push([0; 4]);
        fracs.push([0.0; 4]);
    }
    Ok(KernelAtoms { bases, fracs })
}

/// The lattice-cutoff stencil as `cutoff` reads it.
struct StencilTable {
    /// `(dy, dz, dx0, len)` then `(first weight, 0, 0, 0)` per row (at least one entry).
    rows: Vec<[i32; 4]>,
    /// Every row's weights (at least one).
    weights: Vec<f32>,
    n_rows: i32,
    /// `cutoff_tiles`: the source planes, `(dz, first row, rows, 0)` each, in `rows` after the rows.
    n_planes: i32,
    /// The stencil's radius along x and y (lattice points).
    radius: [i32; 2],
}

fn stencil_table(g: &LevelGeometry) -> Result<StencilTable, ComputeError> {
    let mut rows = Vec::new();
    let mut weights: Vec<f32> = Vec::new();
    if let Some(st) = &g.stencil {
        for r in &st.rows {
            let small = |x: i64| i32_of_i64(x, "the MSM stencil");
            rows.push([
                small(r.dy)?,
                small(r.dz)?,
                small(r.dx0)?,
                i32_of(r.weights.len(), "the MSM stencil")?,
            ]);
            rows.push([i32_of(weights.len(), "the MSM stencil")?, 0, 0, 0]);
            weights.extend(r.weights.iter().map(|&w| w as f32));
        }
    }
    let n_rows = i32_of(rows.len() / 2, "the MSM stencil")?;
    // The rows come z plane by z plane (`msm::cutoff_stencil`): one entry per plane.
    let mut planes: Vec<[i32; 4]> = Vec::new();
    for r in 0..n_rows {
        let dz = rows[2 * r as usize][1];
        match planes.last_mut() {
            Some(p) if p[0] == dz => p[2] += 1,
            _ => planes.push([dz, r, 1, 0]),
        }
    }
    let n_planes = i32_of(planes.len(), "the MSM stencil")?;
    rows.extend(planes);
    if rows.is_empty() {
        rows.push([0; 4]);
    }
    if weights.is_empty() {
        weights.push(0.0);
    }
    let radius = g.stencil.as_ref().map_or([0; 3], |st| st.radius);
    Ok(StencilTable {
        rows,
        weights,
        n_rows,
        n_planes,
        radius: [
            i32_of(radius[0], "the MSM stencil")?,
            i32_of(radius[1], "the MSM stencil")?,
        ],
    })
}

/// Values each cascade buffer holds, in the order `Q(0..=L)`, `E(0..=L)`, `T1`, `T2`.
fn buffer_lens(g: &LevelGeometry, steps: &[Step]) -> Vec<usize> {
    let scratch = steps
        .iter()
        .map(|s| match s {
            Step::Axis {
                dst: Buf::T1 | Buf::T2,
                pass,
                ..
            } => pass.dst_dims.iter().product(),
            _ => 0,
        })
        .max()
        .unwrap_or(0)
        .max(1);
    g.layouts
        .iter()
        .chain(&g.layouts)
        .map(|l| l.len().max(1))
        .chain([scratch; 2])
        .collect()
}

/// The device, its queue and what every dispatch of one cascade binds when it does not use it.
struct Ctx<'a> {
    device: &'a wgpu::Device,
    encoder: wgpu::CommandEncoder,
    dummy_ro: wgpu::Buffer,
    dummy_rw: wgpu::Buffer,
    dummy_ints: wgpu::Buffer,
    dummy_acc: wgpu::Buffer,
    max_groups: u32,
}

fn storage_init(device: &wgpu::Device, label: &str, bytes: &[u8]) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytes,
        usage: wgpu::BufferUsages::STORAGE,
    })
}

impl MsmLevelsPass {
    /// Builds the pipelines on `device`.
    pub fn new(device: &wgpu::Device) -> MsmLevelsPass {
        use wgpu::BufferBindingType as B;
        let ro = B::Storage { read_only: true };
        let rw = B::Storage { read_only: false };
        let (module, layout, pipeline_layout) =
            compute_layouts(device, "msm levels", SHADER_SOURCE, &[B::Uniform, ro, rw, ro, ro, rw]);
        let pipeline = |entry: &str| {
            device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
                label: Some(entry),
                layout: Some(&pipeline_layout),
                module: &module,
                entry_point: Some(entry),
                compilation_options: wgpu::PipelineCompilationOptions::default(),
                cache: None,
            })
        };
        MsmLevelsPass {
            anterpolate: pipeline("anterpolate"),
            from_fixed: pipeline("from_fixed"),
            axis: pipeline("axis_pass"),
            cutoff: pipeline("cutoff"),
            cutoff_tiles: {
                let l = device.limits();
                (l.max_compute_workgroup_storage_size >= 4 * STAGE
                    && l.max_compute_invocations_per_workgroup >= TILE[0] * TILE[1]
                    && l.max_compute_workgroup_size_x >= TILE[0]
                    && l.max_compute_workgroup_size_y >= TILE[1])
                    .then(|| pipeline("cutoff_tiles"))
            },
            cutoff_kernel: CutoffKernel::Tiles,
            top: pipeline("top"),
            layout,
        }
    }

    /// Records one dispatch of `pipeline` over `n` invocations with `params` (its `n.x` set here)
    /// and the buffers of bindings 1 to 5.
    #[allow(clippy::too_many_arguments)]
    fn dispatch(
        &self,
        ctx: &mut Ctx<'_>,
        pipeline: &wgpu::ComputePipeline,
        n: usize,
        mut params: MsmLevelsParams,
        src: Option<&wgpu::Buffer>,
        dst: Option<&wgpu::Buffer>,
        ints: Option<&wgpu::Buffer>,
        reals: Option<&wgpu::Buffer>,
        acc: Option<&wgpu::Buffer>,
    ) -> Result<(), ComputeError> {
        if n == 0 {
            return Ok(());
        }
        params.n[0] = i32_of(n, "the MSM lattice")?;
        let groups = (n as u64).div_ceil(u64::from(WG));
        let gx = groups.min(u64::from(ctx.max_groups));
        let gy = groups.div_ceil(gx);
        if gy > u64::from(ctx.max_groups) {
            return Err(ComputeError::Device(format!(
                "wgpu: {n} MSM level points exceed this device's dispatch limits"
            )));
        }
        let groups = [gx as u32, gy as u32, 1];
        self.record(ctx, pipeline, groups, &params, [src, dst, ints, reals, acc]);
        Ok(())
    }

    /// Records one dispatch of `groups` workgroups of `pipeline` with `params` and the buffers
    /// of bindings 1 to 5 (the context's unused ones where `None`).
    fn record(
        &self,
        ctx: &mut Ctx<'_>,
        pipeline: &wgpu::ComputePipeline,
        groups: [u32; 3],
        params: &MsmLevelsParams,
        bufs: [Option<&wgpu::Buffer>; 5],
    ) {
        let [src, dst, ints, reals, acc] = bufs;
        let bind_group = params_bind_group(
            ctx.device,
            &self.layout,
            "msm levels",
            params,
            &[
                src.unwrap_or(&ctx.dummy_ro),
                dst.unwrap_or(&ctx.dummy_rw),
                ints.unwrap_or(&ctx.dummy_ints),
                reals.unwrap_or(&ctx.dummy_ro),
                acc.unwrap_or(&ctx.dummy_acc),
            ],
        );
        let mut pass = ctx.encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
            label: Some("msm levels"),
            timestamp_writes: None,
        });
        pass.set_pipeline(pipeline);
        pass.set_bind_group(0, &bind_group, &[]);
        pass.dispatch_workgroups(groups[0], groups[1], groups[2]);
    }

    /// Every long-range level of `g` for `charges` on the device, by [`schedule`]'s steps.
    pub fn run(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        g: &LevelGeometry,
        charges: &PointCharges,
    ) -> Result<DeviceLevels, ComputeError> {
        self.run_steps(device, queue, g, charges, &schedule(g))
    }

    /// As [`MsmLevelsPass::run`] with the launches `steps` (tests drop one to see the comparison
    /// fail).
    pub fn run_steps(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        g: &LevelGeometry,
        charges: &PointCharges,
        steps: &[Step],
    ) -> Result<DeviceLevels, ComputeError> {
        let n_levels = g.layouts.len();
        if n_levels == 0 {
            return Err(ComputeError::Device("wgpu: no MSM levels".into()));
        }
        for l in &g.layouts {
            dims_i32(l.dims)?;
        }
        let limits = device.limits();
        let max_binding = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
        let lens = buffer_lens(g, steps);
        let finest_len = g.finest().len().max(1);
        let n_atoms = charges.charges_e.len();
        for (bytes, what) in lens.iter().map(|&n| (4 * n as u64, "an MSM level")).chain([
            (8 * finest_len as u64, "the MSM anterpolation"),
            (32 * n_atoms as u64, "the charges"),
        ]) {
            if bytes > max_binding {
                return Err(ComputeError::Device(format!(
                    "wgpu: {what} ({bytes} bytes) exceeds this device's storage-buffer limit ({max_binding} bytes)"
                )));
            }
        }
        let bufs: Vec<wgpu::Buffer> = lens
            .iter()
            .map(|&n| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some("msm level"),
                    size: 4 * n as u64,
                    usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
                    mapped_at_creation: false,
                })
            })
            .collect();
        let index = |b: Buf| -> usize {
            match b {
                Buf::Q(l) => l,
                Buf::E(l) => n_levels + l,
                Buf::T1 => 2 * n_levels,
                Buf::T2 => 2 * n_levels + 1,
            }
        };
        let get = |b: Buf| {
            bufs.get(index(b))
                .ok_or_else(|| ComputeError::Device("wgpu: no MSM level buffer".into()))
        };
        let KernelAtoms { bases, fracs } = kernel_atoms(g, charges)?;
        let st = stencil_table(g)?;
        let (rows, weights, n_rows) = (&st.rows, &st.weights, st.n_rows);
        let table = match &g.top {
            TopLevel::Open { table } => table,
            TopLevel::Periodic { kernel } => kernel,
        };
        let mut table: Vec<f32> = table.iter().map(|&v| v as f32).collect();
        if table.is_empty() {
            table.push(0.0);
        }
        let atoms_b = storage_init(device, "msm level charge bases", bytemuck::cast_slice(&bases));
        let atoms_f = storage_init(device, "msm level charge fractions", bytemuck::cast_slice(&fracs));
        let rows_b = storage_init(device, "msm level stencil rows", bytemuck::cast_slice(rows));
        let weights_b = storage_init(device, "msm level stencil weights", bytemuck::cast_slice(weights));
        let table_b = storage_init(device, "msm level top table", bytemuck::cast_slice(&table));
        let acc = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("msm level fixed point"),
            size: 8 * finest_len as u64,
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let small = |label: &str, usage| {
            device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size: 16,
                usage,
                mapped_at_creation: false,
            })
        };
        let mut ctx = Ctx {
            device,
            encoder: device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
                label: Some("msm levels"),
            }),
            dummy_ro: small("msm level unused", wgpu::BufferUsages::STORAGE),
            dummy_rw: small("msm level unused", wgpu::BufferUsages::STORAGE),
            dummy_ints: small("msm level unused", wgpu::BufferUsages::STORAGE),
            dummy_acc: small("msm level unused", wgpu::BufferUsages::STORAGE),
            max_groups: limits.max_compute_workgroups_per_dimension.max(1),
        };
        let periodic = i32::from(g.periodic);
        let top = n_levels - 1;
        let finest = g.finest();
        let fd = dims_i32(finest.dims)?;
        for step in steps {
            match *step {
                Step::Anterpolate => {
                    let sum_abs: f64 = charges.charges_e.iter().map(|q| q.abs()).sum();
                    let scale = fixed_scale(sum_abs);
                    let lo = |k: usize| i32_of_i64(finest.lo[k], "the MSM lattice");
                    let params = MsmLevelsParams {
                        n: [0, periodic, 0, 0],
                        dst: [fd[0], fd[1], fd[2], 0],
                        lo: [lo(0)?, lo(1)?, lo(2)?, 0],
                        f: [scale, 0.0, 0.0, 0.0],
                        ..MsmLevelsParams::default()
                    };
                    ctx.encoder.clear_buffer(&acc, 0, None);
                    let a = &self.anterpolate;
                    self.dispatch(
                        &mut ctx,
                        a,
                        n_atoms,
                        params,
                        None,
                        None,
                        Some(&atoms_b),
                        Some(&atoms_f),
                        Some(&acc),
                    )?;
                    let inv = 1.0 / f64::from(scale);
                    let params = MsmLevelsParams {
                        f: [(4294967296.0 * inv) as f32, inv as f32, 0.0, 0.0],
                        ..MsmLevelsParams::default()
                    };
                    let q0 = get(Buf::Q(0))?;
                    let f = &self.from_fixed;
                    self.dispatch(
                        &mut ctx,
                        f,
                        finest.len(),
                        params,
                        None,
                        Some(q0),
                        None,
                        None,
                        Some(&acc),
                    )?;
                }
                Step::Axis { src, dst, pass } => {
                    if index(src) == index(dst) {
                        return Err(ComputeError::Device(
                            "wgpu: MSM level step reads and writes one buffer".into(),
                        ));
                    }
                    let params = axis_params(&pass, periodic)?;
                    let n: usize = pass.dst_dims.iter().product();
                    let (s, d) = (get(src)?, get(dst)?);
                    self.dispatch(&mut ctx, &self.axis, n, params, Some(s), Some(d), None, None, None)?;
                }
                Step::Top => {
                    let Some(layout) = g.layouts.last() else {
                        continue;
                    };
                    let td = dims_i32(layout.dims)?;
                    let params = MsmLevelsParams {
                        n: [0, periodic, 0, 0],
                        dst: [td[0], td[1], td[2], 0],
                        ..MsmLevelsParams::default()
                    };
                    let (q, e) = (get(Buf::Q(top))?, get(Buf::E(top))?);
                    let t = &self.top;
                    self.dispatch(
                        &mut ctx,
                        t,
                        layout.len(),
                        params,
                        Some(q),
                        Some(e),
                        None,
                        Some(&table_b),
                        None,
                    )?;
                }
                Step::Cutoff { level } => {
                    let Some(layout) = g.layouts.get(level) else {
                        continue;
                    };
                    let d = dims_i32(layout.dims)?;
                    let scale = (1.0 / (1u64 << level.min(62)) as f64) as f32;
                    let (q, e) = (get(Buf::Q(level))?, get(Buf::E(level))?);
                    let (r, w) = (Some(&rows_b), Some(&weights_b));
                    let [rx, ry] = st.radius;
                    let staged = (TILE[0] as i64 + 2 * i64::from(rx)) * (TILE[1] as i64 + 2 * i64::from(ry));
                    let ld = layout.dims;
                    let groups = [
                        ld[0].div_ceil(TILE[0] as usize),
                        ld[1].div_ceil(TILE[1] as usize),
                        ld[2],
                    ];
                    let tiles_fit = staged <= i64::from(STAGE) && groups.iter().all(|&n| n <= ctx.max_groups as usize);
                    if let (CutoffKernel::Tiles, true, Some(tiles)) =
                        (self.cutoff_kernel, tiles_fit, &self.cutoff_tiles)
                    {
                        let params = MsmLevelsParams {
                            n: [0, periodic, 0, 2 * n_rows],
                            dst: [d[0], d[1], d[2], 0],
                            lo: [rx, ry, st.n_planes, 0],
                            f: [scale, 0.0, 0.0, 0.0],
                            ..MsmLevelsParams::default()
                        };
                        let groups = groups.map(|n| n as u32);
                        self.record(&mut ctx, tiles, groups, &params, [Some(q), Some(e), r, w, None]);
                    } else {
                        let params = MsmLevelsParams {
                            n: [0, periodic, n_rows, 0],
                            dst: [d[0], d[1], d[2], 0],
                            f: [scale, 0.0, 0.0, 0.0],
                            ..MsmLevelsParams::default()
                        };
                        let c = &self.cutoff;
                        self.dispatch(&mut ctx, c, layout.len(), params, Some(q), Some(e), r, w, None)?;
                    }
                }
            }
        }
        queue.submit([ctx.encoder.finish()]);
        let mut it = bufs.into_iter();
        let charges: Vec<wgpu::Buffer> = it.by_ref().take(n_levels).collect();
        let potentials: Vec<wgpu::Buffer> = it.take(n_levels).collect();
        Ok(DeviceLevels { charges, potentials })
    }

    /// Every level of `g` computed on the device and read back (charges and potentials, finest
    /// first, in f64), for comparison with [`LevelGeometry::host_levels`].
    pub fn levels(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        g: &LevelGeometry,
        charges: &PointCharges,
        steps: &[Step],
    ) -> Result<HostLevels, ComputeError> {
        let levels = self.run_steps(device, queue, g, charges, steps)?;
        let down = |bufs: &[wgpu::Buffer]| -> Result<Vec<Vec<f64>>, ComputeError> {
            bufs.iter()
                .zip(&g.layouts)
                .map(|(b, l)| {
                    let raw = read_buffer(device, queue, b, 4 * l.len().max(1) as u64).map_err(device_err)?;
                    let mut v: Vec<f64> = raw
                        .chunks_exact(4)
                        .map(|c| f64::from(f32::from_ne_bytes([c[0], c[1], c[2], c[3]])))
                        .collect();
                    v.truncate(l.len());
                    Ok(v)
                })
                .collect()
        };
        Ok(HostLevels {
            charges: down(&levels.charges)?,
            potentials: down(&levels.potentials)?,
        })
    }
}

/// The uniform of one restriction or prolongation pass.
fn axis_params(pass: &AxisPass, periodic: i32) -> Result<MsmLevelsParams, ComputeError> {
    let sd = dims_i32(pass.src_dims)?;
    let dd = dims_i32(pass.dst_dims)?;
    let sl = i32_of_i64(pass.src_lo, "the MSM lattice")?;
    let dl = i32_of_i64(pass.dst_lo, "the MSM lattice")?;
    if pass.axis > 2 {
        return Err(ComputeError::Device(format!(
            "wgpu: MSM level pass along axis {}",
            pass.axis
        )));
    }
    Ok(MsmLevelsParams {
        n: [0, periodic, i32::from(pass.restrict), i32::from(pass.accumulate)],
        src: [sd[0], sd[1], sd[2], sl],
        dst: [dd[0], dd[1], dd[2], dl],
        lo: [0, 0, 0, pass.axis as i32],
        f: [0.0; 4],
    })
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn shader_layout_and_constants_match_the_host() {
        let module = wgpu::naga::front::wgsl::parse_str(SHADER_SOURCE).unwrap();
        for e in [
            "anterpolate",
            "from_fixed",
            "axis_pass",
            "cutoff",
            "cutoff_tiles",
            "top",
        ] {
            assert!(module.entry_points.iter().any(|p| p.name == e), "{e}");
        }
        assert_eq!(
            crate::compute::wgpu::wgsl_type_size(&module, "Params"),
            std::mem::size_of::<MsmLevelsParams>()
        );
        for (name, v) in [("WG", WG), ("TX", TILE[0]), ("TY", TILE[1]), ("STAGE", STAGE)] {
            assert!(SHADER_SOURCE.contains(&format!("const {name}: u32 = {v}u;")), "{name}");
        }
        let mut validator = wgpu::naga::valid::Validator::new(
            wgpu::naga::valid::ValidationFlags::all(),
            wgpu::naga::valid::Capabilities::empty(),
        );
        validator.validate(&module).unwrap();
    }

    /// The fixed-point scale leaves room for the largest possible sum, keeps ~61 bits of it and is
    /// a power of two f32 holds.
    #[test]
    fn fixed_scale_bounds_the_sums() {
        for sum in [1e-9, 0.3, 1.0, 7.5, 1.2e6, 3e15] {
            let s = f64::from(fixed_scale(sum));
            assert!(sum * s <= 2f64.powi(61) && sum * s > 2f64.powi(59), "{sum}: {s}");
            assert_eq!(s.log2().fract(), 0.0);
        }
        assert_eq!(fixed_scale(0.0), 1.0);
        assert!(fixed_scale(1e-300).is_finite() && fixed_scale(1e300) > 0.0);
    }
}
