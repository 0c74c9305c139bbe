//! Cutoff and multilevel-summation potentials on any wgpu device: the slab stage of an [`EspPlan`]
//! (the smoothed short-range sum over binned charges within the cutoff, plus for MSM the cubic
//! interpolation of the finest long-range lattice) by the compute pass `shaders/msm_slab.wgsl`: its
//! entry point `msm_tiles` (the default: a workgroup per tile of 16 x 8 x 4 points, the charges of
//! the bins near the tile staged in workgroup memory) or `msm_slab` (an invocation per point), as the
//! CUDA engine's kernels of the same names (`kernels/msm.cu`); [`MsmKernel`] chooses.
//!
//! Owns [`MsmSlabPass`] (the pipeline, built once per device), [`MsmUpload`] (a plan's bins,
//! neighbour offsets and finest long-range lattice on the device) and [`MsmSlabParams`] (twin of the
//! shader's uniform). The binning stays on the host (the plan's [`EspPlan::bins`], computed at
//! first use for a plan built with `StagesOn::Engine`, as the CPU engine does); the long-range
//! levels of such a plan are computed on the device by [`super::msm_levels`]
//! ([`MsmSlabPass::upload_on`]; within 1e-5 of the finest lattice's largest |value|, see there),
//! those of a `StagesOn::Host` plan are the host's. Open and periodic boundaries (any cell the plan
//! takes), vacuum and the screened models of the cutoff method (`compute::esp::screening`:
//! `k(r)` less its smoothing polynomial, one formula for every model). Called by the wgpu slab
//! engine (`super::engine`); tested against the CPU engine in `tests/wgpu_msm.rs`.
//!
//! Precision (f32 on the device): charge and point coordinates are taken relative to the bins'
//! origin (open: the charges' lower corner; periodic: the cell's corner) in f64 and rounded once to
//! f32, so a coordinate carries about `u |x|` (u = 2^-24; 1e-6 bohr at 20 bohr), which dominates
//! the error next to a charge (1e-4 of its term at 0.01 bohr over a 20 bohr box); a periodic point
//! is moved into the cell by whole cells only (a point inside keeps its coordinates); each term's 1/r is
//! `inverseSqrt` refined by a Newton step; blocked sums: `msm_slab` sums a bin's terms (a few
//! tens) plainly and the bins' sums with Kahan compensation, `msm_tiles` each staged block (at most
//! [`CAP`] charges) plainly and the blocks with Kahan compensation, so the rounding stays near
//! `n_block u sum |terms|`. The smoothing polynomial cancels the kernel near the cutoff, an absolute error of about `u / a` per term. The long-range lattice is read in f32
//! (relative rounding `u` of each of its 64 weighted values). Points whose stencil leaves an open
//! MSM lattice are evaluated on the host by [`EspPlan::potential_at`], as by the CPU engine.
//! Measured against the CPU engine on lavapipe (`tests/wgpu_msm.rs`), at points farther than 0.1
//! bohr from every charge: the largest difference at most 5.9e-6 (open), 1.9e-5 (periodic) and
//! 1.7e-5 (eps = 4r) of the map's largest |value|; 5.3e-5 with the nearer points.

use super::marching_cubes::read_buffer;
use super::pass::{compute_layouts, device_err, slab_extent};
use crate::compute::esp::EspPlan;
use crate::compute::esp::kernel::reciprocal;
use crate::compute::esp::screening::{Dielectric, ScreenedCutoff};
use crate::compute::{ComputeError, MIN_DISTANCE_BOHR};
use crate::model::Lattice;
use std::ops::Range;
use wgpu::util::DeviceExt;

/// The WGSL source of the pass.
pub const SHADER_SOURCE: &str = include_str!("../../../shaders/msm_slab.wgsl");

/// `msm_slab`: invocations per workgroup along x and y (`WX`, `WY` in the shader).
pub const WX: u32 = 8;
pub const WY: u32 = 8;
/// `msm_tiles`: invocations per workgroup along x and y, points per invocation along the third axis
/// and charges staged at a time (`TX`, `TY`, `TZ`, `CAP` in the shader).
pub const TX: u32 = 16;
pub const TY: u32 = 8;
pub const TZ: u32 = 4;
pub const CAP: u32 = 512;

/// Which entry point fills a slab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsmKernel {
    /// `msm_tiles`: a workgroup per tile, charges staged in workgroup memory (the default).
    Tiles,
    /// `msm_slab`: an invocation per point reading its own bins' charges.
    Points,
}

impl MsmKernel {
    /// `ORBITFIELD_MSM_KERNEL=points` selects `msm_slab`; anything else, or nothing, `msm_tiles` (the
    /// variable the CUDA engine reads too).
    pub fn from_env() -> MsmKernel {
        match std::env::var("ORBITFIELD_MSM_KERNEL").as_deref() {
            Ok("points") => MsmKernel::Points,
            _ => MsmKernel::Tiles,
        }
    }
}

/// The bits of the quiet NaN the shader writes for points outside an open MSM lattice.
const NAN_BITS: u32 = 0x7fc0_0000;

/// Uniform parameters of one dispatch. Twin of `Params` in `shaders/msm_slab.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct MsmSlabParams {
    pub lat_o: [f32; 4],
    pub lat_s: [[f32; 4]; 3],
    pub dims: [u32; 4],
    pub bin_inv: [[f32; 4]; 3],
    pub bin_v: [[f32; 4]; 3],
    pub bcount: [i32; 4],
    pub cell: [[f32; 4]; 3],
    pub cell_inv: [[f32; 4]; 3],
    pub cut: [f32; 4],
    pub poly: [f32; 4],
    pub flags: [i32; 4],
    pub marks: [u32; 4],
    pub lr_o: [f32; 4],
    pub lr_inv: [[f32; 4]; 3],
    pub lr_lo: [i32; 4],
    pub lr_dims: [i32; 4],
}

/// The pipelines of the pass, created once per device.
pub struct MsmSlabPass {
    layout: wgpu::BindGroupLayout,
    tiles: wgpu::ComputePipeline,
    points: wgpu::ComputePipeline,
    /// The entry point [`MsmSlabPass::encode`] dispatches.
    pub kernel: MsmKernel,
    /// The long-range levels' pipelines, built at the first plan that leaves its levels to the engine.
    levels: std::sync::OnceLock<super::msm_levels::MsmLevelsPass>,
}

/// A plan on the device: its binned charges (x, y, z relative to the bins' origin, q; f32), bin
/// offsets, neighbour offsets and finest long-range lattice, and the parameters that do not depend
/// on the target lattice.
pub struct MsmUpload {
    start: wgpu::Buffer,
    atoms: wgpu::Buffer,
    neighbours: wgpu::Buffer,
    long_range: wgpu::Buffer,
    base: MsmSlabParams,
    /// The bins' origin (bohr): every device coordinate is relative to it.
    origin_bohr: [f64; 3],
    /// True when the plan has a long-range part (points outside it are redone on the host).
    has_long_range: bool,
}

fn v4(v: [f64; 3]) -> [f32; 4] {
    [v[0] as f32, v[1] as f32, v[2] as f32, 0.0]
}

fn m4(m: &[[f64; 3]; 3]) -> [[f32; 4]; 3] {
    m.map(v4)
}

fn i4(v: [i64; 3], w: i32) -> [i32; 4] {
    let c = |x: i64| x.clamp(i64::from(i32::MIN), i64::from(i32::MAX)) as i32;
    [c(v[0]), c(v[1]), c(v[2]), w]
}

fn too_big(what: &str) -> ComputeError {
    ComputeError::Device(format!("wgpu: {what} too large for the cutoff pass's 32-bit indices"))
}

fn storage(device: &wgpu::Device, label: &str, bytes: &[u8]) -> wgpu::Buffer {
    device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytes,
        usage: wgpu::BufferUsages::STORAGE,
    })
}

impl MsmSlabPass {
    /// Builds the pipeline on `device`.
    pub fn new(device: &wgpu::Device) -> MsmSlabPass {
        use wgpu::BufferBindingType as B;
        let ro = B::Storage { read_only: true };
        let (module, layout, pipeline_layout) = compute_layouts(
            device,
            "msm slab",
            SHADER_SOURCE,
            &[B::Uniform, ro, ro, ro, ro, B::Storage { read_only: false }],
        );
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
        MsmSlabPass {
            tiles: pipeline("msm_tiles"),
            points: pipeline("msm_slab"),
            layout,
            kernel: MsmKernel::from_env(),
            levels: std::sync::OnceLock::new(),
        }
    }

    /// As [`MsmSlabPass::upload`], the long-range levels of a plan that left them to the engine
    /// (`StagesOn::Engine`, not yet computed on the host) computed on the device
    /// ([`super::msm_levels`]) and kept there; a lattice the device cannot hold is computed on the
    /// host, with the reason logged.
    pub fn upload_on(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        plan: &EspPlan,
    ) -> Result<MsmUpload, ComputeError> {
        let mut on_device = None;
        if let (Some(g), None) = (&plan.levels, plan.long_range_computed()) {
            let pass = self
                .levels
                .get_or_init(|| super::msm_levels::MsmLevelsPass::new(device));
            match pass.run(device, queue, g, plan.charges()) {
                Ok(levels) => {
                    tracing::debug!("MSM levels on the wgpu device: {} lattices", g.layouts.len());
                    on_device = levels.into_finest();
                }
                Err(e) => tracing::info!("MSM levels on the host instead of the wgpu device: {e}"),
            }
        }
        MsmSlabPass::upload_with(device, plan, on_device)
    }

    /// Uploads `plan`: its bins and, for MSM, its finest long-range lattice (both computed on the
    /// host now if the plan left them to the engine).
    pub fn upload(device: &wgpu::Device, plan: &EspPlan) -> Result<MsmUpload, ComputeError> {
        MsmSlabPass::upload_with(device, plan, None)
    }

    /// [`MsmSlabPass::upload`] with the finest long-range lattice `on_device` (f32) when the device
    /// has computed it.
    fn upload_with(
        device: &wgpu::Device,
        plan: &EspPlan,
        on_device: Option<wgpu::Buffer>,
    ) -> Result<MsmUpload, ComputeError> {
        let bins = plan.bins();
        let o = bins.origin_bohr;
        let limits = device.limits();
        let max_binding = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
        let n = bins.charges_e.len();
        if n >= i32::MAX as usize || bins.start.len() >= i32::MAX as usize {
            return Err(too_big("the charge set"));
        }
        if 16 * n as u64 > max_binding || 4 * bins.start.len() as u64 > max_binding {
            return Err(ComputeError::Device(format!(
                "wgpu: {n} binned charges exceed this device's storage-buffer limit ({max_binding} bytes)"
            )));
        }
        let mut atoms: Vec<[f32; 4]> = bins
            .x_bohr
            .iter()
            .zip(&bins.y_bohr)
            .zip(&bins.z_bohr)
            .zip(&bins.charges_e)
            .map(|(((x, y), z), q)| [(x - o[0]) as f32, (y - o[1]) as f32, (z - o[2]) as f32, *q as f32])
            .collect();
        if atoms.is_empty() {
            atoms.push([0.0; 4]);
        }
        let mut start: Vec<i32> = bins.start.iter().map(|&s| s.min(i32::MAX as usize) as i32).collect();
        if start.len() < 2 {
            start.resize(2, 0);
        }
        let mut neighbours: Vec<[i32; 4]> = bins.neighbours.iter().map(|d| i4(*d, 0)).collect();
        let n_neigh = i32::try_from(neighbours.len()).map_err(|_| too_big("the neighbour list"))?;
        if neighbours.is_empty() {
            neighbours.push([0; 4]);
        }
        let a = bins.cutoff_bohr;
        let reach = a + 0.5 * bins.diagonal_bohr;
        let (cell, cell_inv, periodic) = match &bins.cell_bohr {
            Some(c) => (
                *c,
                reciprocal(c).ok_or_else(|| ComputeError::BadInput("degenerate periodic cell".into()))?,
                1,
            ),
            None => ([[0.0; 3]; 3], [[0.0; 3]; 3], 0),
        };
        let screen = bins
            .screen
            .unwrap_or_else(|| ScreenedCutoff::new(Dielectric::Vacuum, a));
        let gpu = screen.dielectric.gpu();
        let min = MIN_DISTANCE_BOHR;
        let mut base = MsmSlabParams {
            bin_inv: m4(&bins.inverse),
            bin_v: m4(&bins.vectors_bohr),
            bcount: i4(bins.counts.map(|c| c as i64), periodic),
            cell: m4(&cell),
            cell_inv: m4(&cell_inv),
            cut: [(a * a) as f32, (reach * reach) as f32, (min * min) as f32, gpu.a as f32],
            poly: [screen.c[0] as f32, screen.c[1] as f32, screen.c[2] as f32, gpu.b as f32],
            flags: [n_neigh, 0, 0, gpu.model as i32],
            marks: [NAN_BITS, 1, 0, 0],
            ..MsmSlabParams::default()
        };
        let mut lr_values: Vec<f32> = vec![0.0];
        let mut has_long_range = false;
        let mut long_range = None;
        if let Some(g) = &plan.levels {
            let finest = g.finest();
            if finest.len() >= i32::MAX as usize || 4 * finest.len() as u64 > max_binding {
                return Err(too_big("the MSM lattice"));
            }
            match on_device {
                Some(buffer) => long_range = Some(buffer),
                None => {
                    if let Some(lr) = plan.long_range() {
                        lr_values = lr.potential.iter().map(|&v| v as f32).collect();
                    }
                    if lr_values.is_empty() {
                        lr_values.push(0.0);
                    }
                }
            }
            has_long_range = true;
            base.flags[1] = 1;
            base.flags[2] = i32::from(g.periodic);
            base.lr_o = v4([0, 1, 2].map(|k| g.origin_bohr[k] - o[k]));
            base.lr_inv = m4(&g.inverse);
            base.lr_lo = i4(finest.lo, 0);
            base.lr_dims = i4(finest.dims.map(|d| d as i64), 0);
        }
        Ok(MsmUpload {
            start: storage(device, "msm bin starts", bytemuck::cast_slice(&start)),
            atoms: storage(device, "msm charges", bytemuck::cast_slice(&atoms)),
            neighbours: storage(device, "msm neighbours", bytemuck::cast_slice(&neighbours)),
            long_range: long_range
                .unwrap_or_else(|| storage(device, "msm long range", bytemuck::cast_slice(&lr_values))),
            base,
            origin_bohr: o,
            has_long_range,
        })
    }

    /// Records the potential of `up` on the planes `z_range` of `lattice` into `values` (at least
    /// `4 * slab points` bytes, x fastest, slab-local). Nothing is submitted.
    pub fn encode(
        &self,
        device: &wgpu::Device,
        encoder: &mut wgpu::CommandEncoder,
        up: &MsmUpload,
        lattice: &Lattice,
        z_range: Range<usize>,
        values: &wgpu::Buffer,
    ) -> Result<(), ComputeError> {
        let [nx, ny, _] = lattice.dims;
        let (planes, need) = slab_extent(lattice, &z_range, values)?;
        let limits = device.limits();
        let per_dim = u64::from(limits.max_compute_workgroups_per_dimension);
        let (bx, by, bz) = match self.kernel {
            MsmKernel::Tiles => (TX, TY, TZ),
            MsmKernel::Points => (WX, WY, 1),
        };
        let gx = (nx as u64).div_ceil(u64::from(bx));
        let gy = (ny as u64).div_ceil(u64::from(by));
        if gx > per_dim || gy > per_dim || need > limits.max_storage_buffer_binding_size.min(limits.max_buffer_size) {
            return Err(ComputeError::Device(format!(
                "wgpu: a {nx} x {ny} lattice slab of {planes} planes exceeds this device's dispatch limits"
            )));
        }
        // The slab's first plane, relative to the bins' origin (f64, rounded once).
        let k0 = z_range.start as f64;
        let s = lattice.steps_bohr;
        let slab_o: [f64; 3] = std::array::from_fn(|a| lattice.origin_bohr[a] + k0 * s[2][a] - up.origin_bohr[a]);
        let pipeline = match self.kernel {
            MsmKernel::Tiles => &self.tiles,
            MsmKernel::Points => &self.points,
        };
        let mut first = 0usize;
        while first < planes {
            let here = (planes - first).min(per_dim as usize * bz as usize);
            let params = MsmSlabParams {
                lat_o: v4(slab_o),
                lat_s: m4(&s),
                dims: [nx as u32, ny as u32, here as u32, first as u32],
                ..up.base
            };
            let bind_group = super::pass::params_bind_group(
                device,
                &self.layout,
                "msm slab",
                &params,
                &[&up.start, &up.atoms, &up.neighbours, &up.long_range, values],
            );
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("msm slab"),
                timestamp_writes: None,
            });
            pass.set_pipeline(pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(gx as u32, gy as u32, (here as u32).div_ceil(bz));
            drop(pass);
            first += here;
        }
        Ok(())
    }

    /// The potential (hartree/e) of `plan` on the planes `z_range` of `lattice` into `out` (x
    /// fastest, exactly the slab's length), computed and read back; points outside an open MSM
    /// lattice are evaluated on the host ([`EspPlan::potential_at`]).
    #[allow(clippy::too_many_arguments)]
    pub fn slab(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        plan: &EspPlan,
        up: &MsmUpload,
        lattice: &Lattice,
        z_range: Range<usize>,
        out: &mut [f32],
    ) -> Result<(), ComputeError> {
        let need = crate::compute::slab_len(lattice, &z_range);
        if out.len() != need {
            return Err(ComputeError::BadOutput { got: out.len(), need });
        }
        if need == 0 {
            return Ok(());
        }
        let values = device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("msm slab values"),
            size: (4 * need as u64).max(16),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
            mapped_at_creation: false,
        });
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("msm slab"),
        });
        self.encode(device, &mut encoder, up, lattice, z_range.clone(), &values)?;
        queue.submit([encoder.finish()]);
        let raw = read_buffer(device, queue, &values, 4 * need as u64).map_err(device_err)?;
        for (o, c) in out.iter_mut().zip(raw.chunks_exact(4)) {
            *o = f32::from_ne_bytes([c[0], c[1], c[2], c[3]]);
        }
        if up.has_long_range {
            let [nx, ny, _] = lattice.dims;
            let plane = (nx * ny).max(1);
            for (idx, o) in out.iter_mut().enumerate() {
                if o.is_nan() {
                    let (i, j, k) = (
                        idx % nx.max(1),
                        (idx / nx.max(1)) % ny.max(1),
                        z_range.start + idx / plane,
                    );
                    *o = plan.potential_at(lattice.point_bohr(i, j, k)) as f32;
                }
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn shader_layout_and_constants_match_the_host() {
        let module = wgpu::naga::front::wgsl::parse_str(SHADER_SOURCE).unwrap();
        assert!(module.entry_points.iter().any(|e| e.name == "msm_slab"));
        assert_eq!(
            crate::compute::wgpu::wgsl_type_size(&module, "Params"),
            std::mem::size_of::<MsmSlabParams>()
        );
        assert!(module.entry_points.iter().any(|e| e.name == "msm_tiles"));
        for (name, v) in [("WX", WX), ("WY", WY), ("TX", TX), ("TY", TY), ("TZ", TZ), ("CAP", CAP)] {
            assert!(SHADER_SOURCE.contains(&format!("const {name}: u32 = {v}u;")), "{name}");
        }
        let mut validator = wgpu::naga::valid::Validator::new(
            wgpu::naga::valid::ValidationFlags::all(),
            wgpu::naga::valid::Capabilities::empty(),
        );
        validator.validate(&module).unwrap();
    }

    #[test]
    fn vacuum_polynomial_is_the_msm_softening() {
        let a = 9.0;
        let s = ScreenedCutoff::new(Dielectric::Vacuum, a);
        let want = [1.875 / a, -1.25 / a.powi(3), 0.375 / a.powi(5)];
        for (c, w) in s.c.iter().zip(want) {
            assert!((c - w).abs() < 1e-12 * w.abs(), "{c} {w}");
        }
    }
}
