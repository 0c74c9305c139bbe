//! Pair-distance histograms for radial distribution functions on any wgpu device: the pairs of two
//! selections of one frame within r_max, open boundaries or the minimum image of an orthorhombic or
//! triclinic box, by the compute passes of `shaders/rdf.wgsl` (u32 atomic bins in workgroup memory,
//! added into storage and summed in u64).
//!
//! Owns [`RdfPairs`] (the pipelines, once per device), [`RdfParams`] (twin of the shader's
//! uniform), [`CellGrid`] and [`sort_into_cells`]. Two methods, as the CUDA engine's
//! ([`RdfMethod`]): all pairs (`rdf_pairs`: set A in runs of dispatches, every atom of set B in
//! workgroup-memory tiles; cost `n1 * n2` whatever r_max is) and a cell list (`rdf_cells`): the
//! host sorts both sets into the cells of a [`CellGrid`] (an O(n) counting sort) and a workgroup
//! takes a work unit, up to [`CELL_TA`] atoms of one cell (the CUDA kernel takes a whole cell per
//! block; units split crowded cells and give a large GPU more workgroups), and visits the atoms of
//! its 27 neighbour cells (the cell and 13 neighbours, pairs of different cells counted twice, when
//! set A and set B are the same atoms). Open and orthorhombic boxes use the CUDA engine's grid,
//! [`CellPlan`] (cells at least r_max wide plus a margin of 1e-4 relative and 2^-17 of the extent,
//! far above the f32 rounding of positions and distances, so every pair within r_max lies in
//! neighbouring cells); triclinic boxes, which the CUDA engine leaves to all pairs, get cells of
//! the fractional coordinates at least r_max plus that margin thick along each box height. Periodic
//! grids need at least 3 cells per side (the 27 neighbours are then distinct cells). Both methods
//! pass every visited pair through the same f32 distance and binning, so their counts are identical
//! integers (`tests/wgpu_rdf_cells.rs`). `RdfMethod::Auto` takes the cell list where its grid has
//! at least [`CELLS_MIN`] cells, as the CUDA engine does: with fewer cells a cell's 27 neighbours
//! cover 42% of the box or more, and the little the cell list saves is offset by what the all-pairs
//! pass does not pay (the host sort, ragged cells, half-empty tiles); r_max above a third of the
//! box (of a triclinic box's heights) has no grid and always takes all pairs.
//!
//! The frame is laid out by the CUDA engine's [`PairGeometry`] (positions wrapped into the box, the
//! box reduced so that one rounding per axis gives the minimum image, group ids for exclusions), so
//! both device engines bin the same f32 numbers with the same operations; the CPU engine
//! (`analysis::rdf`, f64) is the reference. Pairs on a bin edge may land in the neighbouring bin (f32
//! rounding of coordinates up to ~50 A, about 2e-5 A): the counts agree with the CPU engine's to that
//! allowance (`tests/wgpu_engine.rs`, `tests/wgpu_rdf_cells.rs`). Called by tests, benches and the
//! wgpu pool worker (`jobs::adapter_worker`).

use super::marching_cubes::read_buffer;
use super::pass::{compute_layouts, device_err};
use crate::compute::ComputeError;
pub use crate::compute::layout::pairs::{CELLS_MIN, CellPlan, RdfMethod};
use crate::compute::layout::pairs::{PairGeometry, PairMode, RdfBox};
use crate::model::rdf::RdfSettings;
use wgpu::util::DeviceExt;

/// The WGSL source of the pass.
pub const SHADER_SOURCE: &str = include_str!("../../../shaders/rdf.wgsl");

/// Invocations per workgroup, atoms of set A per invocation, atoms of set B per workgroup-memory
/// tile and the most bins (`WG`, `A_PER`, `TILE`, `MAX_BINS` in the shader).
pub const WG: u32 = 256;
pub const A_PER: u32 = 2;
pub const TILE: u32 = 256;
pub const MAX_BINS: u32 = 2048;
/// Invocations per workgroup of the cell-list pass and atoms of a cell of set A per work unit
/// (`CELL_WG`, `CELL_TA`; its tiles of set B hold `TILE` atoms).
pub const CELL_WG: u32 = 128;
pub const CELL_TA: u32 = 64;
/// Most workgroups of the cell-list pass (they stride over the work units).
const CELL_GROUPS: u32 = 16384;
/// `skip` of [`RdfParams`] when every neighbour cell is visited.
const SKIP_NONE: u32 = 27;
/// The most counts a workgroup histogram of the cell-list pass takes between flushes (its u32 bins
/// stay exact).
const FLUSH_PAIRS: u32 = 0x7fff_ffff;

/// Settings of the cell-list pass that tests change to reach its rarely taken paths; the default is
/// what [`RdfPairs::counts_with`] runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CellPassOptions {
    /// A neighbour (0..27, offset `(s % 3 - 1, s / 3 % 3 - 1, s / 9 - 1)`, 13 the cell itself) left
    /// out of every cell's stencil, which makes the counts wrong (tests show the comparison can fail).
    pub skip_neighbour: Option<u32>,
    /// The most counts a workgroup histogram takes before it is added into storage (at most
    /// 2^31 - 1; small values flush often).
    pub flush_pairs: u32,
    /// The value the low words of the 64-bit storage counts start from (subtracted on the host; near
    /// 2^32 the carry into the high words is taken).
    pub low_word_start: u32,
}

impl Default for CellPassOptions {
    fn default() -> Self {
        CellPassOptions {
            skip_neighbour: None,
            flush_pairs: FLUSH_PAIRS,
            low_word_start: 0,
        }
    }
}

/// Pairs one dispatch may count (its histogram row is u32).
const MAX_PAIRS_PER_DISPATCH: u64 = (1 << 32) - 1;

/// Uniform parameters of one dispatch. Twin of `Params` in `shaders/rdf.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct RdfParams {
    pub na: u32,
    pub a_first: u32,
    pub nb: u32,
    pub bins: u32,
    pub mode: u32,
    pub groups: u32,
    pub row: u32,
    pub pad: u32,
    pub r2max: f32,
    pub inv_dr: f32,
    pub ax: f32,
    pub bx: f32,
    pub by: f32,
    pub cx: f32,
    pub cy: f32,
    pub cz: f32,
    pub inv_ax: f32,
    pub inv_by: f32,
    pub inv_cz: f32,
    pub pad2: f32,
    pub nx: u32,
    pub ny: u32,
    pub nz: u32,
    pub periodic: u32,
    pub half: u32,
    pub skip: u32,
    pub units: u32,
    pub flush: u32,
}

/// The pipelines of the passes, created once per device.
pub struct RdfPairs {
    layout: wgpu::BindGroupLayout,
    pipeline: wgpu::ComputePipeline,
    cells_layout: wgpu::BindGroupLayout,
    cells_pipeline: wgpu::ComputePipeline,
}

/// A counting sort of `set` into the cells of `plan` (O(n), on the host): the positions in cell
/// order and the first atom of each cell (cells + 1 entries, the last = the atom count; a grid
/// without cells keeps no atoms).
pub fn sort_into_cells(set: &[[f32; 4]], plan: &CellGrid) -> (Vec<[f32; 4]>, Vec<u32>) {
    let ncells = plan.cells();
    if ncells == 0 {
        return (Vec::new(), vec![0]);
    }
    let cell: Vec<usize> = set
        .iter()
        .map(|p| plan.cell_of(p).min(ncells.saturating_sub(1)))
        .collect();
    let mut starts = vec![0u32; ncells + 1];
    for &c in &cell {
        if let Some(n) = starts.get_mut(c + 1) {
            *n += 1;
        }
    }
    for k in 1..starts.len() {
        let prev = starts.get(k - 1).copied().unwrap_or(0);
        if let Some(n) = starts.get_mut(k) {
            *n += prev;
        }
    }
    let mut fill = starts.clone();
    let mut sorted = vec![[0.0f32; 4]; set.len()];
    for (p, &c) in set.iter().zip(&cell) {
        if let Some(slot) = fill.get_mut(c)
            && let Some(out) = sorted.get_mut(*slot as usize)
        {
            *out = *p;
            *slot += 1;
        }
    }
    (sorted, starts)
}

/// The cell grid `method` uses for `geom` (None: all pairs), as the CUDA engine chooses it.
pub fn cell_grid(geom: &PairGeometry, settings: &RdfSettings, method: RdfMethod) -> Option<CellGrid> {
    match method {
        RdfMethod::AllPairs => None,
        RdfMethod::Cells => CellGrid::new(geom, settings.r_max_angstrom),
        RdfMethod::Auto => CellGrid::new(geom, settings.r_max_angstrom).filter(|p| p.cells() >= CELLS_MIN),
    }
}

/// The cell grid of the cell-list pass: the CUDA engine's [`CellPlan`] for open and orthorhombic
/// boxes, and for triclinic boxes cells of the fractional coordinates in the reduced box.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum CellGrid {
    Plan(CellPlan),
    /// `n` cells along each box vector of `cell` (the reduced box of `PairGeometry`).
    Triclinic {
        n: [u32; 3],
        cell: RdfBox,
    },
}

impl CellGrid {
    /// The grid for `geom` at `r_max`, or None where the cell list does not apply (periodic boxes
    /// with fewer than 3 cells along a box vector: the 27 neighbours would repeat). Triclinic cells
    /// are slabs of the fractional coordinates at least `r_max` thick along each box vector's
    /// reciprocal (the box's height over the face it spans with the others, divided by the cells),
    /// with [`CellPlan`]'s margin: a pair's fractional separation along a box vector is at most its
    /// distance over that height, so every pair within r_max lies in neighbouring cells, whichever
    /// image the minimum image is.
    pub fn new(geom: &PairGeometry, r_max: f64) -> Option<CellGrid> {
        if geom.mode != PairMode::Triclinic {
            return CellPlan::new(geom, r_max).map(CellGrid::Plan);
        }
        if !(r_max.is_finite() && r_max > 0.0) || geom.a.is_empty() || geom.b.is_empty() {
            return None;
        }
        let c = geom.cell;
        let [ax, bx, by, cx, cy, cz] = [c.ax, c.bx, c.by, c.cx, c.cy, c.cz].map(f64::from);
        let volume = ax * by * cz;
        let b_cross_c = (by * cz).hypot(bx * cz).hypot(bx * cy - by * cx);
        let c_cross_a = ax * cz.hypot(cy);
        let a_cross_b = ax * by;
        let heights = [b_cross_c, c_cross_a, a_cross_b].map(|area| volume / area);
        if !heights.iter().all(|h| h.is_finite() && *h > 0.0) {
            return None;
        }
        let extent = ax + bx.abs() + cx.abs() + by + cy.abs() + cz;
        let mut w = r_max * (1.0 + 1e-4) + extent * 2f64.powi(-17);
        let mut dims = heights.map(|h| (h / w).floor());
        while dims.iter().product::<f64>() > CELLS_MAX as f64 {
            w *= 1.25;
            dims = heights.map(|h| (h / w).floor());
        }
        if dims.iter().any(|&d| d < 3.0) {
            return None;
        }
        Some(CellGrid::Triclinic {
            n: dims.map(|d| d as u32),
            cell: c,
        })
    }

    /// Cells along each axis (box vector).
    pub fn dims(&self) -> [u32; 3] {
        match self {
            CellGrid::Plan(p) => [p.nx, p.ny, p.nz].map(|n| n.max(0) as u32),
            CellGrid::Triclinic { n, .. } => *n,
        }
    }

    /// Whether the grid wraps.
    pub fn periodic(&self) -> bool {
        match self {
            CellGrid::Plan(p) => p.periodic != 0,
            CellGrid::Triclinic { .. } => true,
        }
    }

    /// Number of cells.
    pub fn cells(&self) -> usize {
        self.dims().iter().map(|&n| n as usize).product()
    }

    /// The cell of a position (x fastest).
    pub fn cell_of(&self, p: &[f32; 4]) -> usize {
        match self {
            CellGrid::Plan(plan) => plan.cell_of(p),
            CellGrid::Triclinic { n, cell: c } => {
                let [x, y, z] = [p[0], p[1], p[2]].map(f64::from);
                let sz = z / f64::from(c.cz);
                let sy = (y - sz * f64::from(c.cy)) / f64::from(c.by);
                let sx = (x - sz * f64::from(c.cx) - sy * f64::from(c.bx)) / f64::from(c.ax);
                let axis = |s: f64, n: u32| {
                    let f = s - s.floor();
                    ((f * f64::from(n)).floor() as i64).clamp(0, i64::from(n.max(1)) - 1) as usize
                };
                let [nx, ny, _] = n.map(|k| k as usize);
                axis(sx, n[0]) + nx * (axis(sy, n[1]) + ny * axis(sz, n[2]))
            }
        }
    }
}

/// Most cells of a triclinic grid (as [`CellPlan`]'s); larger grids get wider cells.
const CELLS_MAX: usize = 1 << 21;

/// How the atoms of set A are split into dispatches: (first, count) runs, each counting fewer than
/// 2^32 pairs against `nb` atoms of B and within `max_groups` workgroups.
pub fn a_runs(na: usize, nb: usize, max_groups: u32) -> Vec<(usize, usize)> {
    let per_group = (WG * A_PER) as usize;
    let by_pairs = (MAX_PAIRS_PER_DISPATCH / (nb.max(1) as u64)).max(1) as usize;
    let by_groups = (max_groups.max(1) as usize).saturating_mul(per_group);
    let run = by_pairs.min(by_groups).max(1);
    (0..na).step_by(run).map(|a| (a, run.min(na - a))).collect()
}

impl RdfPairs {
    /// Builds the pipeline on `device`.
    pub fn new(device: &wgpu::Device) -> RdfPairs {
        use wgpu::BufferBindingType as B;
        let (module, layout, pipeline_layout) = compute_layouts(
            device,
            "rdf pairs",
            SHADER_SOURCE,
            &[
                B::Uniform,
                B::Storage { read_only: true },
                B::Storage { read_only: true },
                B::Storage { read_only: false },
            ],
        );
        let pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("rdf pairs"),
            layout: Some(&pipeline_layout),
            module: &module,
            entry_point: Some("rdf_pairs"),
            compilation_options: Default::default(),
            cache: None,
        });
        let (cells_module, cells_layout, cells_layout_p) = compute_layouts(
            device,
            "rdf cells",
            SHADER_SOURCE,
            &[
                B::Uniform,
                B::Storage { read_only: true },
                B::Storage { read_only: true },
                B::Storage { read_only: false },
                B::Storage { read_only: true },
                B::Storage { read_only: true },
                B::Storage { read_only: true },
            ],
        );
        let cells_pipeline = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("rdf cells"),
            layout: Some(&cells_layout_p),
            module: &cells_module,
            entry_point: Some("rdf_cells"),
            compilation_options: Default::default(),
            cache: None,
        });
        RdfPairs {
            layout,
            pipeline,
            cells_layout,
            cells_pipeline,
        }
    }

    /// The pair counts per bin of `geom` (64-bit) by `RdfMethod::Auto`, computed on `device` and
    /// read back.
    pub fn counts(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        geom: &PairGeometry,
        settings: &RdfSettings,
    ) -> Result<Vec<u64>, ComputeError> {
        Ok(self.counts_with(device, queue, geom, settings, RdfMethod::Auto)?.0)
    }

    /// The pair counts by `method`, and the method that ran (`AllPairs` where the cell list does
    /// not apply).
    pub fn counts_with(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        geom: &PairGeometry,
        settings: &RdfSettings,
        method: RdfMethod,
    ) -> Result<(Vec<u64>, RdfMethod), ComputeError> {
        self.run(device, queue, geom, settings, method, CellPassOptions::default())
    }

    /// The counts by `RdfMethod::Cells` with the cell-list pass run by `options` (tests).
    pub fn counts_cells_with(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        geom: &PairGeometry,
        settings: &RdfSettings,
        options: CellPassOptions,
    ) -> Result<(Vec<u64>, RdfMethod), ComputeError> {
        self.run(device, queue, geom, settings, RdfMethod::Cells, options)
    }

    fn run(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        geom: &PairGeometry,
        settings: &RdfSettings,
        method: RdfMethod,
        options: CellPassOptions,
    ) -> Result<(Vec<u64>, RdfMethod), ComputeError> {
        let bins = settings.bins;
        if bins == 0 || bins > MAX_BINS as usize {
            return Err(ComputeError::BadInput(format!(
                "{bins} RDF bins: the wgpu pass takes 1 to {MAX_BINS}"
            )));
        }
        if !(settings.r_max_angstrom.is_finite() && settings.r_max_angstrom > 0.0) {
            return Err(ComputeError::BadInput(format!(
                "RDF r_max {} A: it must be positive and finite",
                settings.r_max_angstrom
            )));
        }
        if geom.a.len().max(geom.b.len()) >= u32::MAX as usize {
            return Err(ComputeError::BadInput(format!(
                "{} and {} atoms in the RDF selections: the wgpu passes take fewer than 2^32",
                geom.a.len(),
                geom.b.len()
            )));
        }
        if geom.a.is_empty() || geom.b.is_empty() {
            return Ok((vec![0u64; bins], RdfMethod::AllPairs));
        }
        if let Some(plan) = cell_grid(geom, settings, method) {
            let counts = self.cells(device, queue, geom, settings, &plan, options)?;
            return Ok((counts, RdfMethod::Cells));
        }
        // A workgroup counts at most WG * A_PER * nb pairs in its u32 bins.
        if geom.b.len() as u64 * u64::from(WG * A_PER) > MAX_PAIRS_PER_DISPATCH {
            return Err(ComputeError::BadInput(format!(
                "{} atoms in the second RDF selection: the wgpu pass takes at most {}",
                geom.b.len(),
                MAX_PAIRS_PER_DISPATCH / u64::from(WG * A_PER)
            )));
        }
        let mut counts = vec![0u64; bins];
        let limits = device.limits();
        let runs = a_runs(geom.a.len(), geom.b.len(), limits.max_compute_workgroups_per_dimension);
        let storage = |label: &str, words: &[[f32; 4]]| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents: bytemuck::cast_slice(words),
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        let a_buf = storage("rdf set A", &geom.a);
        let b_buf = storage("rdf set B", &geom.b);
        let hist_bytes = 4 * (bins as u64) * (runs.len() as u64);
        let hist = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("rdf histogram rows"),
            contents: &vec![0u8; hist_bytes as usize],
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        });
        let base = base_params(geom, settings);
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor { label: Some("rdf") });
        for (row, &(first, count)) in runs.iter().enumerate() {
            let params = RdfParams {
                na: count as u32,
                a_first: first as u32,
                row: row as u32,
                ..base
            };
            let bind_group =
                super::pass::params_bind_group(device, &self.layout, "rdf", &params, &[&a_buf, &b_buf, &hist]);
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("rdf pairs"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups((count as u32).div_ceil(WG * A_PER), 1, 1);
        }
        queue.submit([encoder.finish()]);
        let raw = read_buffer(device, queue, &hist, hist_bytes).map_err(device_err)?;
        for (k, w) in raw.chunks_exact(4).take((hist_bytes / 4) as usize).enumerate() {
            if let Some(c) = counts.get_mut(k % bins) {
                *c += u64::from(u32::from_ne_bytes([w[0], w[1], w[2], w[3]]));
            }
        }
        Ok((counts, RdfMethod::AllPairs))
    }

    /// The cell-list pass over `plan`'s grid: sorts both sets on the host, one dispatch, 64-bit
    /// counts (two u32 words per bin).
    fn cells(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        geom: &PairGeometry,
        settings: &RdfSettings,
        plan: &CellGrid,
        options: CellPassOptions,
    ) -> Result<Vec<u64>, ComputeError> {
        let bins = settings.bins;
        let half = geom.same_sets();
        let (a_sorted, a_starts) = sort_into_cells(&geom.a, plan);
        let b_sorted_starts = (!half).then(|| sort_into_cells(&geom.b, plan));
        let (b_sorted, b_starts) = match &b_sorted_starts {
            Some((s, t)) => (s, t),
            None => (&a_sorted, &a_starts),
        };
        let storage = |label: &str, contents: &[u8]| {
            device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some(label),
                contents,
                usage: wgpu::BufferUsages::STORAGE,
            })
        };
        // Work units: (cell, first atom) of each run of up to CELL_TA atoms of a cell of A.
        let mut units: Vec<[u32; 2]> = Vec::with_capacity(a_sorted.len().div_ceil(CELL_TA as usize) + a_starts.len());
        for (c, w) in a_starts.windows(2).enumerate() {
            units.extend((w[0]..w[1]).step_by(CELL_TA as usize).map(|at| [c as u32, at]));
        }
        let a_buf = storage("rdf cells set A", bytemuck::cast_slice(&a_sorted));
        let units_buf = storage("rdf cells work units", bytemuck::cast_slice(&units));
        let a_start_buf = storage("rdf cells starts A", bytemuck::cast_slice(&a_starts));
        let (b_buf, b_start_buf) = if half {
            (None, None)
        } else {
            (
                Some(storage("rdf cells set B", bytemuck::cast_slice(b_sorted))),
                Some(storage("rdf cells starts B", bytemuck::cast_slice(b_starts))),
            )
        };
        let hist_bytes = 8 * bins as u64;
        let start: Vec<u32> = (0..2 * bins)
            .map(|k| if k < bins { options.low_word_start } else { 0 })
            .collect();
        let hist = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("rdf cells histogram"),
            contents: bytemuck::cast_slice(&start),
            usage: wgpu::BufferUsages::STORAGE | wgpu::BufferUsages::COPY_SRC,
        });
        let params = RdfParams {
            nx: plan.dims()[0],
            ny: plan.dims()[1],
            nz: plan.dims()[2],
            periodic: u32::from(plan.periodic()),
            half: u32::from(half),
            skip: options.skip_neighbour.unwrap_or(SKIP_NONE).min(SKIP_NONE),
            units: units.len() as u32,
            flush: options.flush_pairs.clamp(1, FLUSH_PAIRS),
            ..base_params(geom, settings)
        };
        let bind_group = super::pass::params_bind_group(
            device,
            &self.cells_layout,
            "rdf cells",
            &params,
            &[
                &a_buf,
                b_buf.as_ref().unwrap_or(&a_buf),
                &hist,
                &a_start_buf,
                b_start_buf.as_ref().unwrap_or(&a_start_buf),
                &units_buf,
            ],
        );
        let groups = (units.len() as u64)
            .min(u64::from(CELL_GROUPS))
            .min(u64::from(device.limits().max_compute_workgroups_per_dimension))
            .max(1) as u32;
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("rdf cells"),
        });
        {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some("rdf cells"),
                timestamp_writes: None,
            });
            pass.set_pipeline(&self.cells_pipeline);
            pass.set_bind_group(0, &bind_group, &[]);
            pass.dispatch_workgroups(groups, 1, 1);
        }
        queue.submit([encoder.finish()]);
        let raw = read_buffer(device, queue, &hist, hist_bytes).map_err(device_err)?;
        let words: Vec<u32> = raw
            .chunks_exact(4)
            .map(|w| u32::from_ne_bytes([w[0], w[1], w[2], w[3]]))
            .collect();
        let (lo, hi) = words.split_at(bins.min(words.len()));
        let start = u64::from(options.low_word_start);
        Ok(lo
            .iter()
            .zip(hi)
            .map(|(&l, &h)| ((u64::from(h) << 32) | u64::from(l)).wrapping_sub(start))
            .collect())
    }
}

/// The parameters both passes share: bins, boundary mode, exclusions, r_max and the reduced box.
fn base_params(geom: &PairGeometry, settings: &RdfSettings) -> RdfParams {
    let c = geom.cell;
    let bins = settings.bins;
    RdfParams {
        nb: geom.b.len() as u32,
        bins: bins as u32,
        mode: match geom.mode {
            PairMode::Open => 0,
            PairMode::Orthorhombic => 1,
            PairMode::Triclinic => 2,
        },
        groups: u32::from(geom.groups),
        r2max: (settings.r_max_angstrom * settings.r_max_angstrom) as f32,
        inv_dr: (bins as f64 / settings.r_max_angstrom) as f32,
        ax: c.ax,
        bx: c.bx,
        by: c.by,
        cx: c.cx,
        cy: c.cy,
        cz: c.cz,
        inv_ax: c.inv_ax,
        inv_by: c.inv_by,
        inv_cz: c.inv_cz,
        skip: SKIP_NONE,
        ..RdfParams::default()
    }
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
            std::mem::size_of::<RdfParams>()
        );
        let mut validator = wgpu::naga::valid::Validator::new(
            wgpu::naga::valid::ValidationFlags::all(),
            wgpu::naga::valid::Capabilities::empty(),
        );
        validator.validate(&module).unwrap();
        for (name, v) in [
            ("WG", WG),
            ("A_PER", A_PER),
            ("TILE", TILE),
            ("MAX_BINS", MAX_BINS),
            ("CELL_WG", CELL_WG),
            ("CELL_TA", CELL_TA),
        ] {
            assert!(SHADER_SOURCE.contains(&format!("const {name}: u32 = {v}u;")), "{name}");
        }
    }

    fn triclinic(cell: RdfBox) -> PairGeometry {
        PairGeometry {
            a: vec![[1.0, 2.0, 3.0, 0.0]],
            b: vec![[4.0, 5.0, 6.0, 0.0]],
            mode: PairMode::Triclinic,
            cell,
            groups: false,
        }
    }

    fn boxed(ax: f32, bx: f32, by: f32, cx: f32, cy: f32, cz: f32) -> RdfBox {
        RdfBox {
            ax,
            bx,
            by,
            cx,
            cy,
            cz,
            inv_ax: 1.0 / ax,
            inv_by: 1.0 / by,
            inv_cz: 1.0 / cz,
        }
    }

    #[test]
    fn triclinic_cells_follow_the_box_heights() {
        // A rectangular box as a triclinic one: the heights are the sides.
        let g = CellGrid::new(&triclinic(boxed(40.0, 0.0, 31.0, 0.0, 0.0, 50.0)), 9.9).unwrap();
        assert_eq!(g.dims(), [4, 3, 5]);
        // Sheared along x by b and c: the a height shrinks to ax * by * cz / |b x c|, analytically
        // 40 * 30 / hypot(30, 15) = 35.78 here (c along z, b = (15, 30, 0)): 4 cells at r_max 8.9 but 3
        // at 9.0, where the side (40) would still give 4.
        let g = CellGrid::new(&triclinic(boxed(40.0, 15.0, 30.0, 0.0, 0.0, 50.0)), 8.9).unwrap();
        assert_eq!(g.dims(), [4, 3, 5]);
        let g = CellGrid::new(&triclinic(boxed(40.0, 15.0, 30.0, 0.0, 0.0, 50.0)), 9.0).unwrap();
        assert_eq!(g.dims(), [3, 3, 5]);
        // Fewer than 3 cells along a height: no grid.
        assert!(CellGrid::new(&triclinic(boxed(40.0, 15.0, 30.0, 0.0, 0.0, 50.0)), 12.0).is_none());
        // Positions wrap by whole box vectors: p and p + a + b - c share a cell.
        let g = CellGrid::new(&triclinic(boxed(40.0, 15.0, 30.0, 5.0, -7.0, 50.0)), 6.0).unwrap();
        for p in [[1.0f32, 2.0, 3.0, 0.0], [39.0, 29.0, 49.0, 0.0], [-3.0, 7.5, 20.0, 0.0]] {
            let q = [p[0] + 40.0 + 15.0 - 5.0, p[1] + 30.0 + 7.0, p[2] - 50.0, 0.0];
            assert_eq!(g.cell_of(&p), g.cell_of(&q), "{p:?}");
            assert!(g.cell_of(&p) < g.cells());
        }
    }

    #[test]
    fn runs_cover_set_a_and_bound_the_pairs() {
        for (na, nb) in [(1, 1), (1000, 1000), (200_000, 300_000), (5, 1 << 33)] {
            let runs = a_runs(na, nb, 65_535);
            assert_eq!(runs.iter().map(|r| r.1).sum::<usize>(), na);
            assert!(
                runs.iter()
                    .all(|r| r.1 as u64 * nb as u64 <= MAX_PAIRS_PER_DISPATCH || r.1 == 1)
            );
            assert!(runs.windows(2).all(|w| w[0].0 + w[0].1 == w[1].0));
        }
    }
}
