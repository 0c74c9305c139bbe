//! The molecular-surface density computed on the render device: wgpu compute passes
//! (`shaders/molsurf.wgsl`) that bin atoms into cells of a lattice and write the density of
//! [`crate::compute::molsurf`] (a truncated Gaussian per atom) into a storage buffer, ready for
//! [`super::marching_cubes::GpuLattice::from_buffer`] and the GPU marching cubes, with nothing copied
//! through the host but the positions.
//!
//! This module knows positions, radii and a lattice, not molecules. [`MolSurfCompute::new`] builds the
//! pipelines once per device; [`DeviceAtoms::new`] uploads the per-atom Gaussians of a set of radii
//! once and keeps every buffer of the binning across frames; [`MolSurfCompute::encode`] uploads one
//! frame's positions and records the passes into the caller's command encoder (the `bench` command,
//! tests; the viewer through its render-device field hook). When the device's limits cannot take a
//! lattice ([`MolSurfError`]), the caller computes the field with the worker pool instead.
//!
//! Passes (see the shader): atoms counted into cells with atomics, a prefix scan of the counts, the
//! atoms scattered into cell order, then a gather pass in which a workgroup fills an 8 x 8 x 16 brick
//! from the atoms of the cells within reach. Only axis-aligned lattices are taken; the whole lattice
//! is one storage binding (the marching-cubes pass binds it whole), split along z into dispatches
//! within `max_compute_workgroups_per_dimension`.
//!
//! Accuracy: f32 evaluation; against the CPU engine (f64) a value differs by a few 1e-7 relative
//! plus the f32 rounding of the atom's position relative to the lattice origin (2^-24 of that
//! distance, times `2 a r` of the Gaussian), and points on an atom's truncation sphere may differ
//! by that atom's truncated tail ([`crate::compute::molsurf::TRUNCATION_DENSITY`]). The order of the
//! atoms within a cell depends on scheduling, so the last bits of a sum may differ from run to run.

use super::marching_cubes::ComputeShader;
use super::orbital::split_into_slabs;
use crate::compute::molsurf::{AtomGaussian, RADIUS_SCALE_RANGE};
use crate::model::Lattice;
use crate::model::units::{angstrom_from_bohr, bohr_from_angstrom};

/// The WGSL source of the passes.
pub const SHADER_SOURCE: &str = include_str!("../../../shaders/molsurf.wgsl");

/// Points per workgroup of the field pass along x, y and z (`BX`, `BY`, `BZ * PZ` in the shader).
pub const BRICK: [u32; 3] = [8, 8, 16];
/// Invocations of the largest workgroup (the scan and atom passes).
pub const WORKGROUP_INVOCATIONS: u32 = 256;
/// Workgroup memory the field pass declares (bytes).
pub const WORKGROUP_STORAGE_BYTES: u32 = 256 * 4 + 128 * 4 + 3 * 128 * 16;
/// Storage buffers the passes bind.
pub const STORAGE_BUFFERS: u32 = 8;
/// Cells the scan handles per workgroup (`NT * SCAN_PER`).
const SCAN_CELLS_PER_GROUP: u32 = 1024;
/// Most cells of a grid; finer grids get wider cells.
const CELLS_MAX: usize = 1 << 22;
/// The reach exceeds the largest truncation radius by at least this many lattice points: far above
/// the f32 rounding of positions in lattice-index units.
const CELL_MARGIN_POINTS: f64 = 0.05;
/// Most lattice points along one axis (keeps the f32 binning within its margin).
const MAX_DIM: usize = 1 << 16;
/// The origin's high part is a multiple of 1 / this (`GRAIN` in the shader).
const ORIGIN_GRAIN_PER_ANGSTROM: f64 = 4096.0;
/// Bytes of one sorted atom record (`AtomRec`).
const RECORD_BYTES: u64 = 48;

/// Uniform parameters of one dispatch. Twin of `Params` in `shaders/molsurf.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct MsParams {
    /// The lattice origin (Angstrom) as `hi + lo`, `hi` a multiple of 2^-12.
    pub origin_hi_angstrom: [f32; 4],
    pub origin_lo_angstrom: [f32; 4],
    /// Steps (Angstrom); `[3]`: log2 of the Gaussians' amplitude.
    pub step_angstrom: [f32; 4],
    /// The steps to 7 significant bits, and the rest (`step_hi + step_lo` is the f64 step, to the
    /// f32 rounding of the rest).
    pub step_hi_angstrom: [f32; 4],
    pub step_lo_angstrom: [f32; 4],
    pub inv_step_per_angstrom: [f32; 4],
    /// nx, ny, nz, and the first plane of the dispatch.
    pub dims: [u32; 4],
    /// Cells per axis and in all.
    pub cells: [i32; 4],
    pub cell_width: [i32; 4],
    pub reach: [i32; 4],
    /// Atoms, invocations per dispatch row of the atom passes, scan blocks, invocations per
    /// dispatch row of the cell pass.
    pub counts: [u32; 4],
}

/// One atom's Gaussian. Twin of `AtomParams` in `shaders/molsurf.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct MsAtomParams {
    /// Exponent times log2(e), Angstrom^-2.
    pub expo2_per_angstrom2: f32,
    /// Truncation radius squared (Angstrom^2); negative: the atom adds nothing.
    pub rc2_angstrom2: f32,
    /// `exp(-2 a hz^2)` for the lattice's z step.
    pub q: f32,
    pub pad: f32,
}

/// Why a surface cannot be computed on this device (the caller uses the worker pool).
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum MolSurfError {
    #[error("the device cannot run the molecular-surface pass: {0}")]
    Unsupported(String),
    #[error("the molecular-surface pass takes axis-aligned lattices of at most 65536 points per axis")]
    Lattice,
    #[error("the lattice is empty")]
    Empty,
    #[error("{what} needs {bytes} bytes in one storage binding, the device allows {limit}")]
    TooLarge { what: &'static str, bytes: u64, limit: u64 },
    #[error("the lattice needs {groups} workgroups along axis {axis}, the device allows {limit} per dispatch")]
    TooManyWorkgroups { axis: usize, groups: u64, limit: u32 },
    #[error("{0}")]
    BadInput(String),
    #[error("the output buffer holds {got} bytes, the lattice needs {need}")]
    BadOutput { got: u64, need: u64 },
}

/// How one lattice is binned and split into dispatches on a device.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MolSurfDispatch {
    /// Cells per axis and their width in lattice points.
    pub cells: [usize; 3],
    pub cell_width: [usize; 3],
    /// Lattice points per axis beyond which no atom reaches.
    pub reach: [usize; 3],
    /// Workgroups of the field pass along x and y.
    pub groups_xy: [u32; 2],
    /// Lattice planes per dispatch (a multiple of 16, except possibly the last slab) and slabs.
    pub planes_per_slab: u32,
    pub slabs: u32,
    /// Bytes of the lattice values.
    pub bytes: u64,
}

impl MolSurfDispatch {
    fn n_cells(&self) -> usize {
        self.cells.iter().product()
    }
}

/// Whether a device with `limits` can run the passes at all (any lattice); the reason when not.
pub fn device_supports(limits: &wgpu::Limits, compute_shaders: bool) -> Result<(), MolSurfError> {
    let fail = |what: String| Err(MolSurfError::Unsupported(what));
    if !compute_shaders {
        return fail("no compute shaders".into());
    }
    if limits.max_storage_buffers_per_shader_stage < STORAGE_BUFFERS {
        return fail(format!(
            "{} storage buffers per stage, the passes need {STORAGE_BUFFERS}",
            limits.max_storage_buffers_per_shader_stage
        ));
    }
    if limits.max_compute_invocations_per_workgroup < WORKGROUP_INVOCATIONS
        || limits.max_compute_workgroup_size_x < WORKGROUP_INVOCATIONS
        || limits.max_compute_workgroup_size_y < BRICK[1]
        || limits.max_compute_workgroup_size_z < 2
    {
        return fail("workgroups of 256 invocations are too large".into());
    }
    if limits.max_compute_workgroup_storage_size < WORKGROUP_STORAGE_BYTES {
        return fail(format!(
            "{} bytes of workgroup memory, the passes need {WORKGROUP_STORAGE_BYTES}",
            limits.max_compute_workgroup_storage_size
        ));
    }
    if limits.max_compute_workgroups_per_dimension < CELLS_MAX as u32 / SCAN_CELLS_PER_GROUP {
        return fail(format!(
            "{} workgroups per dispatch dimension, the scan needs {}",
            limits.max_compute_workgroups_per_dimension,
            CELLS_MAX as u32 / SCAN_CELLS_PER_GROUP
        ));
    }
    Ok(())
}

/// The largest storage binding the device takes (bytes).
fn binding_limit(limits: &wgpu::Limits) -> u64 {
    limits.max_storage_buffer_binding_size.min(limits.max_buffer_size)
}

/// Bytes of one binding, refused beyond the device's limit.
fn check_binding(limits: &wgpu::Limits, what: &'static str, bytes: u64) -> Result<u64, MolSurfError> {
    let limit = binding_limit(limits);
    if bytes > limit {
        return Err(MolSurfError::TooLarge { what, bytes, limit });
    }
    Ok(bytes.max(16))
}

impl MolSurfDispatch {
    /// Bins and splits `lattice` for atoms whose largest truncation radius is `max_cutoff_angstrom`,
    /// within `limits`.
    pub fn plan(
        limits: &wgpu::Limits,
        lattice: &Lattice,
        max_cutoff_angstrom: f64,
        max_groups_per_dim: u32,
    ) -> Result<MolSurfDispatch, MolSurfError> {
        let dims = lattice.dims;
        if dims.contains(&0) {
            return Err(MolSurfError::Empty);
        }
        let h = steps_angstrom(lattice)?;
        if dims.iter().any(|&n| n > MAX_DIM) {
            return Err(MolSurfError::Lattice);
        }
        let points = dims.iter().map(|&d| d as u64).product::<u64>();
        let bytes = check_binding(limits, "the lattice", points.saturating_mul(4))?;
        let reach = [0, 1, 2]
            .map(|a| ((max_cutoff_angstrom / h[a] + CELL_MARGIN_POINTS).floor() + 1.0).clamp(1.0, 1e6) as usize);
        // Cells of half the reach: a brick's cells then hold little beyond its reach.
        let mut cw = reach.map(|r| r.div_ceil(2).max(1));
        let count = |cw: &[usize; 3]| [0, 1, 2].map(|a| dims[a].div_ceil(cw[a]).max(1));
        while count(&cw).iter().product::<usize>() > CELLS_MAX {
            cw = cw.map(|w| w * 2);
        }
        let cells = count(&cw);
        let per_dim = limits
            .max_compute_workgroups_per_dimension
            .min(max_groups_per_dim)
            .max(1);
        let (groups_xy, planes_per_slab, slabs) =
            split_into_slabs(dims, BRICK, per_dim).map_err(|(axis, groups)| MolSurfError::TooManyWorkgroups {
                axis,
                groups,
                limit: per_dim,
            })?;
        Ok(MolSurfDispatch {
            cells,
            cell_width: cw,
            reach,
            groups_xy,
            planes_per_slab,
            slabs,
            bytes,
        })
    }
}

/// The lattice's steps in Angstrom; refused unless axis-aligned with positive finite steps.
fn steps_angstrom(lattice: &Lattice) -> Result<[f64; 3], MolSurfError> {
    let s = &lattice.steps_bohr;
    let h = [s[0][0], s[1][1], s[2][2]].map(angstrom_from_bohr);
    if !lattice.is_axis_aligned() || !h.iter().all(|x| x.is_finite() && *x > 0.0) {
        return Err(MolSurfError::Lattice);
    }
    Ok(h)
}

/// `x` rounded down to 7 significant bits (its products with integers below 2^17 are exact in f32).
fn seven_bits(x: f64) -> f32 {
    f32::from_bits((x as f32).to_bits() & !((1u32 << 17) - 1))
}

/// A 2-D dispatch of `threads` invocations in workgroups of 256 within `per_dim` groups per
/// dimension: (groups x, groups y, invocations per row).
fn row_dispatch(threads: u64, per_dim: u32) -> Result<(u32, u32, u32), MolSurfError> {
    let groups = threads.div_ceil(u64::from(WORKGROUP_INVOCATIONS));
    let x = groups.clamp(1, u64::from(per_dim));
    let y = groups.div_ceil(x);
    if y > u64::from(per_dim) {
        return Err(MolSurfError::TooManyWorkgroups {
            axis: 1,
            groups: y,
            limit: per_dim,
        });
    }
    Ok((x as u32, y as u32, (x * u64::from(WORKGROUP_INVOCATIONS)) as u32))
}

/// The atoms of one surface on the render device: their Gaussians (uploaded once), the positions
/// buffer (written each frame) and the binning's buffers, kept across frames (grown, never shrunk).
/// One per surface that is computed again and again (playback).
pub struct DeviceAtoms {
    params: Vec<MsAtomParams>,
    /// log2 of the Gaussians' amplitude (the same for every atom of a radius scale).
    lamp: f32,
    max_cutoff_angstrom: f64,
    /// The z step `params`' `q` was computed for (Angstrom).
    q_step_angstrom: f64,
    params_buf: wgpu::Buffer,
    positions: wgpu::Buffer,
    cell_rank: wgpu::Buffer,
    sorted: wgpu::Buffer,
    /// Counts, starts and scan-block totals of the cells; the uniform blocks.
    cells: Option<[wgpu::Buffer; 3]>,
    uniforms: Option<wgpu::Buffer>,
}

impl DeviceAtoms {
    /// The Gaussians of atoms of `radii_angstrom` (atoms with a radius that is not positive and
    /// finite add nothing) at radius scale `radius_scale`, uploaded to `device`, with room for their
    /// positions and binning.
    pub fn new(device: &wgpu::Device, radii_angstrom: &[f64], radius_scale: f64) -> Result<DeviceAtoms, MolSurfError> {
        if !RADIUS_SCALE_RANGE.contains(&radius_scale) {
            return Err(MolSurfError::BadInput(format!(
                "radius scale {radius_scale} is outside {}..={}",
                RADIUS_SCALE_RANGE.start(),
                RADIUS_SCALE_RANGE.end()
            )));
        }
        let limits = device.limits();
        let n = radii_angstrom.len() as u64;
        if n >= u64::from(u32::MAX / 2) {
            return Err(MolSurfError::BadInput(format!("{n} atoms are too many")));
        }
        let per_angstrom2 = bohr_from_angstrom(1.0).powi(2);
        let mut max_cutoff_angstrom: f64 = 0.0;
        let params: Vec<MsAtomParams> = radii_angstrom
            .iter()
            .map(|&r| {
                if !(r.is_finite() && r > 0.0) {
                    return MsAtomParams {
                        rc2_angstrom2: -1.0,
                        ..MsAtomParams::default()
                    };
                }
                let g = AtomGaussian::new([0.0; 3], bohr_from_angstrom(r), radius_scale);
                let cutoff = angstrom_from_bohr(g.cutoff_bohr);
                max_cutoff_angstrom = max_cutoff_angstrom.max(cutoff);
                MsAtomParams {
                    expo2_per_angstrom2: (g.exponent_per_bohr2 * per_angstrom2 * std::f64::consts::LOG2_E) as f32,
                    rc2_angstrom2: (cutoff * cutoff) as f32,
                    q: 1.0,
                    pad: 0.0,
                }
            })
            .collect();
        let amplitude = AtomGaussian::new([0.0; 3], 1.0, radius_scale).amplitude;
        use wgpu::BufferUsages as U;
        let buffer = |label: &str, what: &'static str, per_atom: u64, usage: wgpu::BufferUsages| {
            let size = check_binding(&limits, what, n.saturating_mul(per_atom))?;
            Ok::<_, MolSurfError>(device.create_buffer(&wgpu::BufferDescriptor {
                label: Some(label),
                size,
                usage,
                mapped_at_creation: false,
            }))
        };
        Ok(DeviceAtoms {
            lamp: amplitude.log2() as f32,
            max_cutoff_angstrom,
            q_step_angstrom: f64::NAN,
            params_buf: buffer(
                "molsurf atom gaussians",
                "the atoms' Gaussians",
                16,
                U::STORAGE | U::COPY_DST,
            )?,
            positions: buffer("molsurf positions", "the positions", 12, U::STORAGE | U::COPY_DST)?,
            cell_rank: buffer("molsurf cell and rank", "the atoms' cells", 8, U::STORAGE)?,
            sorted: buffer("molsurf sorted atoms", "the sorted atoms", RECORD_BYTES, U::STORAGE)?,
            params,
            cells: None,
            uniforms: None,
        })
    }

    /// Number of atoms (contributing or not).
    pub fn len(&self) -> usize {
        self.params.len()
    }

    /// Whether there are no atoms.
    pub fn is_empty(&self) -> bool {
        self.params.is_empty()
    }

    /// The largest truncation radius of the atoms (Angstrom; 0 without contributing atoms).
    pub fn max_cutoff_angstrom(&self) -> f64 {
        self.max_cutoff_angstrom
    }
}

/// The pipelines of the passes, created once per device.
pub struct MolSurfCompute {
    layout: wgpu::BindGroupLayout,
    count: wgpu::ComputePipeline,
    scan_local: wgpu::ComputePipeline,
    scan_blocks: wgpu::ComputePipeline,
    scan_add: wgpu::ComputePipeline,
    scatter: wgpu::ComputePipeline,
    field: wgpu::ComputePipeline,
    /// At most this many workgroups per dispatch dimension for the field pass (below the device's
    /// own limit), so that the slab split can be exercised on any device.
    max_groups_per_dim: u32,
}

impl MolSurfCompute {
    /// Builds the pipelines.
    pub fn new(device: &wgpu::Device) -> MolSurfCompute {
        let shader = ComputeShader::new(device, "molsurf", SHADER_SOURCE, true, 2, 6);
        let pipeline = |entry: &str| shader.pipeline(device, entry);
        MolSurfCompute {
            count: pipeline("bin_count"),
            scan_local: pipeline("scan_local"),
            scan_blocks: pipeline("scan_blocks"),
            scan_add: pipeline("scan_add"),
            scatter: pipeline("bin_scatter"),
            field: pipeline("field"),
            layout: shader.layout,
            max_groups_per_dim: u32::MAX,
        }
    }

    /// Limits the field pass to `groups` workgroups per dimension (at least 1), below the device's
    /// own limit: more, smaller z-slabs (tests of the split).
    pub fn with_max_groups_per_dimension(mut self, groups: u32) -> MolSurfCompute {
        self.max_groups_per_dim = groups.max(1);
        self
    }

    /// Whether `lattice` can be computed on `device` for `atoms`, and how it is split.
    pub fn fits(
        &self,
        device: &wgpu::Device,
        lattice: &Lattice,
        atoms: &DeviceAtoms,
    ) -> Result<MolSurfDispatch, MolSurfError> {
        let limits = device.limits();
        device_supports(&limits, true)?;
        MolSurfDispatch::plan(&limits, lattice, atoms.max_cutoff_angstrom, self.max_groups_per_dim)
    }

    /// A values buffer for `lattice` (`STORAGE | COPY_SRC | COPY_DST`), for [`Self::encode`].
    pub fn create_values(device: &wgpu::Device, lattice: &Lattice) -> wgpu::Buffer {
        device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("molsurf lattice values"),
            size: (4 * lattice.n_points() as u64).max(16),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        })
    }

    /// Uploads `positions_angstrom` (one per atom of `atoms`) and records the molecular-surface
    /// density on `lattice` into `values` (x fastest, `f32`; at least `4 * n_points` bytes, usage
    /// `STORAGE`). Every point is written. `timestamps`, when given as (query set, first index),
    /// receive four timestamps: the binning passes' start and end, the field pass's start and end.
    /// Nothing is submitted; the positions and parameters reach the device with the next submission
    /// (through `queue.write_buffer`), so one `DeviceAtoms` takes one `encode` per submission.
    #[allow(clippy::too_many_arguments)]
    pub fn encode(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        atoms: &mut DeviceAtoms,
        positions_angstrom: &[[f32; 3]],
        lattice: &Lattice,
        values: &wgpu::Buffer,
        timestamps: Option<(&wgpu::QuerySet, u32)>,
    ) -> Result<MolSurfDispatch, MolSurfError> {
        if positions_angstrom.len() != atoms.len() {
            return Err(MolSurfError::BadInput(format!(
                "{} positions for {} atoms",
                positions_angstrom.len(),
                atoms.len()
            )));
        }
        let plan = self.fits(device, lattice, atoms)?;
        if values.size() < plan.bytes {
            return Err(MolSurfError::BadOutput {
                got: values.size(),
                need: plan.bytes,
            });
        }
        let limits = device.limits();
        let per_dim = limits.max_compute_workgroups_per_dimension;
        let h = steps_angstrom(lattice)?;
        let n_atoms = atoms.len() as u64;
        let (ax, ay, atom_row) = row_dispatch(n_atoms, per_dim)?;
        let n_cells = plan.n_cells();
        let (cx, cy, cell_row) = row_dispatch(n_cells as u64, per_dim)?;
        let blocks = (n_cells as u32).div_ceil(SCAN_CELLS_PER_GROUP);
        // The recurrence factor of each atom for this z step.
        if atoms.q_step_angstrom != h[2] {
            for a in &mut atoms.params {
                let expo = f64::from(a.expo2_per_angstrom2) / std::f64::consts::LOG2_E;
                a.q = (-2.0 * expo * h[2] * h[2]).exp() as f32;
            }
            queue.write_buffer(&atoms.params_buf, 0, bytemuck::cast_slice(&atoms.params));
            atoms.q_step_angstrom = h[2];
        }
        queue.write_buffer(&atoms.positions, 0, bytemuck::cast_slice(positions_angstrom));
        // Cell buffers, grown when a lattice needs more cells.
        use wgpu::BufferUsages as U;
        let counts_bytes = check_binding(&limits, "the cell counts", 4 * n_cells as u64)?;
        let grow = match &atoms.cells {
            Some([c, _, _]) => c.size() < counts_bytes,
            None => true,
        };
        if grow {
            let buffer = |label: &str, size: u64, usage: wgpu::BufferUsages| {
                device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size,
                    usage,
                    mapped_at_creation: false,
                })
            };
            atoms.cells = Some([
                buffer("molsurf cell counts", counts_bytes, U::STORAGE | U::COPY_DST),
                buffer("molsurf cell starts", counts_bytes + 4, U::STORAGE | U::COPY_SRC),
                buffer("molsurf scan blocks", (4 * u64::from(blocks)).max(16), U::STORAGE),
            ]);
        }
        let Some([counts, starts, block_sums]) = atoms.cells.as_ref() else {
            return Err(MolSurfError::Unsupported("no cell buffers".into()));
        };
        // One uniform block per slab (the binning passes read the first).
        let stride = u64::from(limits.min_uniform_buffer_offset_alignment.max(1))
            .max(std::mem::size_of::<MsParams>() as u64)
            .next_multiple_of(u64::from(limits.min_uniform_buffer_offset_alignment.max(1)));
        let origin = lattice.origin_angstrom();
        let hi = origin.map(|x| ((x * ORIGIN_GRAIN_PER_ANGSTROM).floor() / ORIGIN_GRAIN_PER_ANGSTROM) as f32);
        let lo = [0, 1, 2].map(|a| (origin[a] - f64::from(hi[a])) as f32);
        let i32s = |v: [usize; 3], w: usize| [v[0] as i32, v[1] as i32, v[2] as i32, w as i32];
        let base = MsParams {
            origin_hi_angstrom: [hi[0], hi[1], hi[2], 0.0],
            origin_lo_angstrom: [lo[0], lo[1], lo[2], 0.0],
            step_angstrom: [h[0] as f32, h[1] as f32, h[2] as f32, atoms.lamp],
            step_hi_angstrom: [0, 1, 2, 3].map(|a| h.get(a).map_or(0.0, |&x| seven_bits(x))),
            step_lo_angstrom: [0, 1, 2, 3].map(|a| h.get(a).map_or(0.0, |&x| (x - f64::from(seven_bits(x))) as f32)),
            inv_step_per_angstrom: [(1.0 / h[0]) as f32, (1.0 / h[1]) as f32, (1.0 / h[2]) as f32, 0.0],
            dims: [
                lattice.dims[0] as u32,
                lattice.dims[1] as u32,
                lattice.dims[2] as u32,
                0,
            ],
            cells: i32s(plan.cells, n_cells),
            cell_width: i32s(plan.cell_width, 0),
            reach: i32s(plan.reach, 0),
            counts: [n_atoms as u32, atom_row, blocks, cell_row],
        };
        let mut blocks_bytes: Vec<u8> = Vec::new();
        for slab in 0..plan.slabs {
            let p = MsParams {
                dims: [base.dims[0], base.dims[1], base.dims[2], slab * plan.planes_per_slab],
                ..base
            };
            blocks_bytes.extend_from_slice(bytemuck::bytes_of(&p));
            blocks_bytes.resize(blocks_bytes.len().next_multiple_of(stride as usize), 0);
        }
        let need = blocks_bytes.len() as u64;
        let uniforms = match atoms.uniforms.take() {
            Some(b) if b.size() >= need => b,
            _ => device.create_buffer(&wgpu::BufferDescriptor {
                label: Some("molsurf params"),
                size: need,
                usage: U::UNIFORM | U::COPY_DST,
                mapped_at_creation: false,
            }),
        };
        queue.write_buffer(&uniforms, 0, &blocks_bytes);
        fn whole(b: &wgpu::Buffer) -> wgpu::BindingResource<'_> {
            b.as_entire_binding()
        }
        let bind_group = device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("molsurf bind group"),
            layout: &self.layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: &uniforms,
                        offset: 0,
                        size: std::num::NonZeroU64::new(std::mem::size_of::<MsParams>() as u64),
                    }),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: whole(&atoms.positions),
                },
                wgpu::BindGroupEntry {
                    binding: 2,
                    resource: whole(&atoms.params_buf),
                },
                wgpu::BindGroupEntry {
                    binding: 3,
                    resource: whole(&atoms.cell_rank),
                },
                wgpu::BindGroupEntry {
                    binding: 4,
                    resource: whole(counts),
                },
                wgpu::BindGroupEntry {
                    binding: 5,
                    resource: whole(starts),
                },
                wgpu::BindGroupEntry {
                    binding: 6,
                    resource: whole(block_sums),
                },
                wgpu::BindGroupEntry {
                    binding: 7,
                    resource: whole(&atoms.sorted),
                },
                wgpu::BindGroupEntry {
                    binding: 8,
                    resource: wgpu::BindingResource::Buffer(wgpu::BufferBinding {
                        buffer: values,
                        offset: 0,
                        size: std::num::NonZeroU64::new(plan.bytes),
                    }),
                },
            ],
        });
        encoder.clear_buffer(counts, 0, Some(4 * n_cells as u64));
        let writes = |first: u32| {
            timestamps.map(|(query_set, q)| wgpu::ComputePassTimestampWrites {
                query_set,
                beginning_of_pass_write_index: Some(q + first),
                end_of_pass_write_index: Some(q + first + 1),
            })
        };
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("molsurf binning"),
                timestamp_writes: writes(0),
            });
            pass.set_bind_group(0, &bind_group, &[0]);
            if n_atoms > 0 {
                pass.set_pipeline(&self.count);
                pass.dispatch_workgroups(ax, ay, 1);
            }
            pass.set_pipeline(&self.scan_local);
            pass.dispatch_workgroups(blocks, 1, 1);
            pass.set_pipeline(&self.scan_blocks);
            pass.dispatch_workgroups(1, 1, 1);
            pass.set_pipeline(&self.scan_add);
            pass.dispatch_workgroups(cx, cy, 1);
            if n_atoms > 0 {
                pass.set_pipeline(&self.scatter);
                pass.dispatch_workgroups(ax, ay, 1);
            }
        }
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("molsurf field"),
                timestamp_writes: writes(2),
            });
            pass.set_pipeline(&self.field);
            let nz = lattice.dims[2] as u32;
            for slab in 0..plan.slabs {
                let k0 = slab * plan.planes_per_slab;
                let planes = plan.planes_per_slab.min(nz - k0);
                pass.set_bind_group(0, &bind_group, &[(u64::from(slab) * stride) as u32]);
                pass.dispatch_workgroups(plan.groups_xy[0], plan.groups_xy[1], planes.div_ceil(BRICK[2]));
            }
        }
        atoms.uniforms = Some(uniforms);
        Ok(plan)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn structs_match_their_wgsl_twins_and_the_shader_validates() {
        let module = wgpu::naga::front::wgsl::parse_str(SHADER_SOURCE).unwrap();
        let size = |name: &str| crate::compute::wgpu::wgsl_type_size(&module, name);
        assert_eq!(size("Params"), std::mem::size_of::<MsParams>());
        assert_eq!(size("AtomParams"), std::mem::size_of::<MsAtomParams>());
        assert_eq!(size("AtomRec") as u64, RECORD_BYTES);
        let mut validator = wgpu::naga::valid::Validator::new(
            wgpu::naga::valid::ValidationFlags::all(),
            wgpu::naga::valid::Capabilities::empty(),
        );
        validator.validate(&module).unwrap();
        for entry in [
            "bin_count",
            "scan_local",
            "scan_blocks",
            "scan_add",
            "bin_scatter",
            "field",
        ] {
            assert!(module.entry_points.iter().any(|e| e.name == entry), "{entry}");
        }
        // Workgroup memory as declared here.
        let bytes: u32 = module
            .global_variables
            .iter()
            .filter(|(_, v)| v.space == wgpu::naga::AddressSpace::WorkGroup)
            .map(|(_, v)| module.types[v.ty].inner.size(module.to_ctx()))
            .sum();
        assert_eq!(bytes, WORKGROUP_STORAGE_BYTES);
    }

    #[test]
    fn plans_split_in_z_and_refuse_what_does_not_bind() {
        let limits = wgpu::Limits {
            max_compute_workgroups_per_dimension: 65_535,
            max_storage_buffer_binding_size: 1 << 30,
            max_buffer_size: 1 << 30,
            ..wgpu::Limits::default()
        };
        // 1 A steps, a cutoff of 4.6 A: a reach of 5 points, cells 3 points wide.
        let l = Lattice::axis_aligned([0.0; 3], bohr_from_angstrom(1.0), [277, 399, 403]);
        let d = MolSurfDispatch::plan(&limits, &l, 4.6, u32::MAX).unwrap();
        assert_eq!(d.reach, [5, 5, 5]);
        assert_eq!(d.cell_width, [3, 3, 3]);
        assert_eq!(d.cells, [93, 133, 135]);
        assert_eq!((d.groups_xy, d.planes_per_slab, d.slabs), ([35, 50], 403, 1));
        assert!(matches!(
            MolSurfDispatch::plan(&limits, &l, 4.6, 10),
            Err(MolSurfError::TooManyWorkgroups { axis: 0, .. })
        ));
        let small = Lattice::axis_aligned([0.0; 3], 1.0, [30, 20, 100]);
        let d = MolSurfDispatch::plan(&limits, &small, 3.0, 4).unwrap();
        assert_eq!((d.planes_per_slab, d.slabs), (64, 2));
        let tight = wgpu::Limits {
            max_storage_buffer_binding_size: 1 << 20,
            ..limits.clone()
        };
        assert!(matches!(
            MolSurfDispatch::plan(&tight, &l, 4.6, u32::MAX),
            Err(MolSurfError::TooLarge { .. })
        ));
        let mut slanted = small;
        slanted.steps_bohr[0][1] = 0.1;
        assert_eq!(
            MolSurfDispatch::plan(&limits, &slanted, 3.0, u32::MAX),
            Err(MolSurfError::Lattice)
        );
        let empty = Lattice::axis_aligned([0.0; 3], 1.0, [4, 0, 4]);
        assert_eq!(
            MolSurfDispatch::plan(&limits, &empty, 3.0, u32::MAX),
            Err(MolSurfError::Empty)
        );
        assert!(device_supports(&wgpu::Limits::downlevel_webgl2_defaults(), true).is_err());
        assert!(device_supports(&wgpu::Limits::default(), false).is_err());
        assert!(device_supports(&wgpu::Limits::default(), true).is_ok());
    }
}
