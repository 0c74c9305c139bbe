//! Pair-distance histograms on a CUDA device, for radial distribution functions.
//!
//! Uses [`PairGeometry`] (one frame's two selections laid out for `kernels/rdf.cu`: f32 positions
//! wrapped into the box, the box reduced so that the kernel's one-rounding-per-axis minimum image is
//! exact, group ids for exclusions) and [`CellPlan`] (the cell grid of the cell-list path), both
//! from `compute::layout::pairs`; owns [`CudaEngine::rdf_counts`] (uploads, launches, returns 64-bit counts). Two methods ([`RdfMethod`]):
//! all pairs (set A in blocks, set B in bounded chunks; cost `n1 * n2` whatever r_max is) and a cell
//! list (a counting sort into cells at least r_max wide on the device, then only neighbouring cells'
//! pairs; open and orthorhombic boxes with at least 3 cells per periodic side). Both pass every visited
//! pair through the same f32 distance and binning, so their histograms are identical; `Auto` takes the
//! cell list where its grid has at least [`CELLS_MIN`] cells and all pairs otherwise (triclinic boxes,
//! r_max near half the box). Called by the RDF scheduler in `jobs::rdf`; the CPU engine in
//! `analysis::rdf` is the reference the tests hold this to. [`PairGeometry::emulate`] and
//! [`PairGeometry::emulate_cells`] run the kernels' f32 arithmetic and pair enumeration on the CPU, so
//! the layout, the minimum image and the cell grid are tested on machines without a GPU. The counting
//! sort (`CudaEngine::rdf_sort`) also bins the atoms of the molecular-surface kernel (`super::molsurf`).

use super::{CudaEngine, dev_err};
use crate::compute::ComputeError;
pub use crate::compute::layout::pairs::{
    BadRdfMethod, CELLS_MIN, CellPlan, PairGeometry, PairMode, RdfBox, RdfMethod, reduce_box,
};
use crate::model::rdf::RdfSettings;
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

/// `kernels/rdf.cu`, embedded at build time.
pub const RDF_SRC: &str = include_str!("../../../kernels/rdf.cu");

/// `RDF_THREADS`, `RDF_A_PER_THREAD`, `RDF_TILE` and `RDF_WARPS` in `kernels/rdf.cu`.
const THREADS: u32 = 256;
const A_PER_THREAD: usize = 2;
const TILE: usize = 512;
const WARPS: usize = 8;
/// Atoms of set B per launch: a block then counts at most THREADS * A_PER_THREAD * B_CHUNK < 2^32 pairs.
const B_CHUNK: usize = 1 << 23;
/// `RDF_CELL_THREADS`, `RDF_CELL_WARPS`, `RDF_CELL_TA` and `RDF_CELL_TB` in `kernels/rdf.cu`.
const CELL_THREADS: u32 = 128;
const CELL_WARPS: usize = 4;
const CELL_TA: usize = 128;
const CELL_TB: usize = 512;
/// Blocks of the cell-list kernel (they stride over the cells).
const CELL_BLOCKS: usize = 4096;
/// Shared memory a block may use without opting in to more (bytes).
const SHARED_LIMIT: usize = 48 * 1024;

// SAFETY: `#[repr(C)]` plain floats, the layout of `RdfBox` in kernels/rdf.cu.
unsafe impl cudarc::driver::DeviceRepr for RdfBox {}

impl PairGeometry {
    /// Pairs the kernel will evaluate.
    pub fn pairs(&self) -> u64 {
        self.a.len() as u64 * self.b.len() as u64
    }

    /// Whether set A and set B are the same atoms in the same order (bit for bit): the cell list then
    /// visits half of the neighbouring cells and counts their pairs twice.
    pub fn same_sets(&self) -> bool {
        self.a.len() == self.b.len()
            && self
                .a
                .iter()
                .zip(&self.b)
                .all(|(p, q)| p.map(f32::to_bits) == q.map(f32::to_bits))
    }

    /// The kernels' bin of one pair (`rdf_d2` and the binning in `kernels/rdf.cu`, same f32
    /// operations), or None beyond r_max or for an excluded pair.
    fn bin_of(&self, p: &[f32; 4], q: &[f32; 4], k: &BinConsts) -> Option<usize> {
        let c = &self.cell;
        let mut dx = p[0] - q[0];
        let mut dy = p[1] - q[1];
        let mut dz = p[2] - q[2];
        match self.mode {
            PairMode::Open => {}
            PairMode::Orthorhombic => {
                dx = dx.abs();
                dy = dy.abs();
                dz = dz.abs();
                dx = dx.min(c.ax - dx);
                dy = dy.min(c.by - dy);
                dz = dz.min(c.cz - dz);
            }
            PairMode::Triclinic => {
                let s = (dz * c.inv_cz).round_ties_even();
                dz = (-s).mul_add(c.cz, dz);
                dy = (-s).mul_add(c.cy, dy);
                dx = (-s).mul_add(c.cx, dx);
                let s = (dy * c.inv_by).round_ties_even();
                dy = (-s).mul_add(c.by, dy);
                dx = (-s).mul_add(c.bx, dx);
                let s = (dx * c.inv_ax).round_ties_even();
                dx = (-s).mul_add(c.ax, dx);
            }
        }
        let d2 = dx.mul_add(dx, dy.mul_add(dy, dz * dz));
        let same = self.groups && p[3].to_bits() == q[3].to_bits();
        (d2 <= k.r2max && !same).then(|| ((d2.sqrt() * k.inv_dr) as usize).min(k.bins - 1))
    }

    /// The all-pairs kernel's arithmetic, in the same f32 operations, on the CPU: counts per bin. For
    /// tests (O(n1 n2), single-threaded).
    pub fn emulate(&self, settings: &RdfSettings) -> Vec<u64> {
        let k = BinConsts::new(settings);
        let mut counts = vec![0u64; k.bins];
        for p in &self.a {
            for q in &self.b {
                if let Some(bin) = self.bin_of(p, q, &k) {
                    counts[bin] += 1;
                }
            }
        }
        counts
    }

    /// The cell-list kernel on the CPU: the same cell assignment, the same stencil (half of it for
    /// identical sets, pairs of different cells counted twice) and the same pair arithmetic. None where
    /// the engine would fall back to all pairs (no [`CellPlan`]). For tests (single-threaded).
    pub fn emulate_cells(&self, settings: &RdfSettings) -> Option<Vec<u64>> {
        let plan = CellPlan::new(self, settings.r_max_angstrom)?;
        let k = BinConsts::new(settings);
        let ncells = plan.cells();
        let sort = |set: &[[f32; 4]]| {
            let mut cells: Vec<Vec<usize>> = vec![Vec::new(); ncells];
            for (i, p) in set.iter().enumerate() {
                if let Some(c) = cells.get_mut(plan.cell_of(p)) {
                    c.push(i);
                }
            }
            cells
        };
        let a_cells = sort(&self.a);
        let b_cells = sort(&self.b);
        let half = self.same_sets();
        let mut counts = vec![0u64; k.bins];
        for (c, a_list) in a_cells.iter().enumerate() {
            for s in if half { 13..27 } else { 0..27 } {
                let Some(nc) = plan.neighbour(c, s) else { continue };
                let w = if half && s != 13 { 2 } else { 1 };
                for &i in a_list {
                    for &j in b_cells.get(nc).map(Vec::as_slice).unwrap_or(&[]) {
                        if let (Some(p), Some(q)) = (self.a.get(i), self.b.get(j))
                            && let Some(bin) = self.bin_of(p, q, &k)
                        {
                            counts[bin] += w;
                        }
                    }
                }
            }
        }
        Some(counts)
    }
}

/// r_max and bin width as the kernels use them (f32).
struct BinConsts {
    bins: usize,
    r2max: f32,
    inv_dr: f32,
}

impl BinConsts {
    fn new(settings: &RdfSettings) -> BinConsts {
        BinConsts {
            bins: settings.bins.max(1),
            r2max: (settings.r_max_angstrom * settings.r_max_angstrom) as f32,
            inv_dr: (settings.bins as f64 / settings.r_max_angstrom) as f32,
        }
    }
}

/// The device buffers of a counting sort into cells ([`CudaEngine::rdf_sort_into`]).
pub(super) struct CellSort {
    pub(super) counts: CudaSlice<u32>,
    /// The start of each cell, then the item count.
    pub(super) starts: CudaSlice<u32>,
    pub(super) cell_of: CudaSlice<i32>,
    /// The positions in cell order.
    pub(super) sorted: CudaSlice<f32>,
}

// SAFETY: `#[repr(C)]` plain ints and floats, the layout of `RdfCells` in kernels/rdf.cu.
unsafe impl cudarc::driver::DeviceRepr for CellPlan {}

/// The arguments both histogram kernels end with (after their positions): the histogram, bins,
/// per-warp copies, r_max^2, bins per Angstrom, the box.
struct HistArgs {
    bins: i32,
    per_warp: i32,
    r2max: f32,
    inv_dr: f32,
}

fn hist_args<'a>(
    l: &mut cudarc::driver::LaunchArgs<'a>,
    hist: &'a mut CudaSlice<u64>,
    t: &'a HistArgs,
    cell: &'a RdfBox,
) {
    l.arg(hist)
        .arg(&t.bins)
        .arg(&t.per_warp)
        .arg(&t.r2max)
        .arg(&t.inv_dr)
        .arg(cell);
}

impl CudaEngine {
    /// Pair counts of one frame's geometry on this device (`settings.bins` 64-bit counts), by
    /// `RdfMethod::Auto`.
    pub fn rdf_counts(&self, geom: &PairGeometry, settings: &RdfSettings) -> Result<Vec<u64>, ComputeError> {
        Ok(self.rdf_counts_with(geom, settings, RdfMethod::Auto)?.0)
    }

    /// Pair counts by `method`, and the method that ran (`AllPairs` where the cell list does not
    /// apply).
    pub fn rdf_counts_with(
        &self,
        geom: &PairGeometry,
        settings: &RdfSettings,
        method: RdfMethod,
    ) -> Result<(Vec<u64>, RdfMethod), ComputeError> {
        let bins = settings.bins;
        if bins == 0 || geom.a.is_empty() || geom.b.is_empty() {
            return Ok((vec![0; bins], RdfMethod::AllPairs));
        }
        let plan = match method {
            RdfMethod::AllPairs => None,
            RdfMethod::Cells => CellPlan::new(geom, settings.r_max_angstrom),
            RdfMethod::Auto => CellPlan::new(geom, settings.r_max_angstrom).filter(|p| p.cells() >= CELLS_MIN),
        };
        let tiles = if plan.is_some() {
            (CELL_TA + CELL_TB) * 16
        } else {
            TILE * 16
        };
        let warps = if plan.is_some() { CELL_WARPS } else { WARPS };
        let per_warp = warps * bins * 4 + tiles <= SHARED_LIMIT;
        let shared = if per_warp { warps * bins * 4 } else { bins * 4 };
        let shared = shared.div_ceil(16) * 16 + tiles;
        if shared > SHARED_LIMIT {
            return Err(ComputeError::Device(format!(
                "{bins} histogram bins do not fit in a block's shared memory on the GPU (at most {})",
                (SHARED_LIMIT - TILE * 16) / 4
            )));
        }
        let half = plan.is_some() && geom.same_sets();
        let src = format!(
            "#define RDF_MODE {}\n#define RDF_GROUPS {}\n#define RDF_HALF {}\n{RDF_SRC}",
            geom.mode as i32,
            i32::from(geom.groups),
            i32::from(half)
        );
        let mut st = self.lock_state()?;
        let module = self.module(&mut st, &src)?;
        drop(st);
        let zero = CudaEngine::function(&module, "rdf_zero")?;
        let a_dev: CudaSlice<f32> = self
            .stream
            .clone_htod(bytemuck::cast_slice::<[f32; 4], f32>(&geom.a))
            .map_err(dev_err("upload"))?;
        let b_dev: Option<CudaSlice<f32>> = if half {
            None
        } else {
            Some(
                self.stream
                    .clone_htod(bytemuck::cast_slice::<[f32; 4], f32>(&geom.b))
                    .map_err(dev_err("upload"))?,
            )
        };
        let b_dev = b_dev.as_ref().unwrap_or(&a_dev);
        let mut hist = self.stream.alloc_zeros::<u64>(bins).map_err(dev_err("allocation"))?;
        let bins_i = bins as i32;
        {
            let mut l = self.stream.launch_builder(&zero);
            l.arg(&mut hist).arg(&bins_i);
            // SAFETY: writes `bins` values into a buffer of `bins`.
            unsafe { l.launch(LaunchConfig::for_num_elems(bins as u32)) }.map_err(dev_err("rdf_zero launch"))?;
        }
        let consts = BinConsts::new(settings);
        let tail = HistArgs {
            bins: bins_i,
            per_warp: i32::from(per_warp),
            r2max: consts.r2max,
            inv_dr: consts.inv_dr,
        };
        let used = match plan {
            Some(plan) => {
                let (a_sorted, a_starts) = self.rdf_sort(&module, &a_dev, geom.a.len(), &plan)?;
                let b_sorted_starts = if half {
                    None
                } else {
                    Some(self.rdf_sort(&module, b_dev, geom.b.len(), &plan)?)
                };
                let (b_sorted, b_starts) = match &b_sorted_starts {
                    Some((s, t)) => (s, t),
                    None => (&a_sorted, &a_starts),
                };
                let cells = CudaEngine::function(&module, "rdf_cells")?;
                let cfg = LaunchConfig {
                    grid_dim: (plan.cells().min(CELL_BLOCKS) as u32, 1, 1),
                    block_dim: (CELL_THREADS, 1, 1),
                    shared_mem_bytes: shared as u32,
                };
                let mut l = self.stream.launch_builder(&cells);
                l.arg(&a_sorted).arg(&a_starts).arg(b_sorted).arg(b_starts).arg(&plan);
                hist_args(&mut l, &mut hist, &tail, &geom.cell);
                // SAFETY: the sorted positions and cell starts come from `rdf_sort` over `plan`'s
                // cells (starts has cells + 1 entries, the last = the atom count); writes `bins`
                // counts; the shared-memory size matches the kernel's layout.
                unsafe { l.launch(cfg) }.map_err(dev_err("rdf_cells launch"))?;
                RdfMethod::Cells
            }
            None => {
                let pairs = CudaEngine::function(&module, "rdf_pairs")?;
                let na =
                    i32::try_from(geom.a.len()).map_err(|_| ComputeError::Device("selection 1 too large".into()))?;
                let blocks = (geom.a.len()).div_ceil(THREADS as usize * A_PER_THREAD) as u32;
                let cfg = LaunchConfig {
                    grid_dim: (blocks, 1, 1),
                    block_dim: (THREADS, 1, 1),
                    shared_mem_bytes: shared as u32,
                };
                for start in (0..geom.b.len()).step_by(B_CHUNK) {
                    let n = (geom.b.len() - start).min(B_CHUNK);
                    let nb = n as i32;
                    let b_view = b_dev.slice(start * 4..(start + n) * 4);
                    let mut l = self.stream.launch_builder(&pairs);
                    l.arg(&a_dev).arg(&na).arg(&b_view).arg(&nb);
                    hist_args(&mut l, &mut hist, &tail, &geom.cell);
                    // SAFETY: reads `na` and `nb` float4 positions from buffers of that size, writes
                    // `bins` counts; the shared-memory size matches the kernel's layout (histograms,
                    // then the tile).
                    unsafe { l.launch(cfg) }.map_err(dev_err("rdf_pairs launch"))?;
                }
                RdfMethod::AllPairs
            }
        };
        let counts = self.stream.clone_dtoh(&hist).map_err(dev_err("download"))?;
        self.stream.synchronize().map_err(dev_err("synchronize"))?;
        Ok((counts, used))
    }

    /// Counting sort of `n` float4 positions into `plan`'s cells on the device: the positions in cell
    /// order and the start of each cell (cells + 1 entries). `w` travels with its position (group ids
    /// here, atom indices for `super::molsurf`).
    pub(super) fn rdf_sort(
        &self,
        module: &std::sync::Arc<cudarc::driver::CudaModule>,
        pos: &CudaSlice<f32>,
        n: usize,
        plan: &CellPlan,
    ) -> Result<(CudaSlice<f32>, CudaSlice<u32>), ComputeError> {
        let mut buffers = None;
        self.rdf_sort_into(module, pos, n, plan, &mut buffers)?;
        let b = buffers.ok_or_else(|| ComputeError::Device("no cell-sort buffers".into()))?;
        Ok((b.sorted, b.starts))
    }

    /// [`CudaEngine::rdf_sort`] into `buffers` (kept by the caller from one sort to the next, grown
    /// when too small): the first `n` float4 of `sorted` and the first cells + 1 `starts`.
    pub(super) fn rdf_sort_into(
        &self,
        module: &std::sync::Arc<cudarc::driver::CudaModule>,
        pos: &CudaSlice<f32>,
        n: usize,
        plan: &CellPlan,
        buffers: &mut Option<CellSort>,
    ) -> Result<(), ComputeError> {
        let ncells = plan.cells();
        let too_big = || ComputeError::Device("too many atoms or cells for the cell list".into());
        let n_i = i32::try_from(n).map_err(|_| too_big())?;
        let ncells_i = i32::try_from(ncells).map_err(|_| too_big())?;
        let index = CudaEngine::function(module, "rdf_cell_index")?;
        let scan = CudaEngine::function(module, "rdf_cell_scan")?;
        let scatter = CudaEngine::function(module, "rdf_cell_scatter")?;
        match buffers.as_mut() {
            Some(b) if b.counts.len() >= ncells.max(1) && b.cell_of.len() >= n.max(1) => {
                self.stream
                    .memset_zeros(&mut b.counts.slice_mut(0..ncells))
                    .map_err(dev_err("memset"))?;
            }
            _ => {
                *buffers = None;
                *buffers = Some(CellSort {
                    counts: self
                        .stream
                        .alloc_zeros::<u32>(ncells.max(1))
                        .map_err(dev_err("allocation"))?,
                    starts: self
                        .stream
                        .alloc_zeros::<u32>(ncells + 1)
                        .map_err(dev_err("allocation"))?,
                    cell_of: self
                        .stream
                        .alloc_zeros::<i32>(n.max(1))
                        .map_err(dev_err("allocation"))?,
                    sorted: self
                        .stream
                        .alloc_zeros::<f32>(4 * n.max(1))
                        .map_err(dev_err("allocation"))?,
                });
            }
        }
        let CellSort {
            counts,
            starts,
            cell_of,
            sorted,
        } = buffers
            .as_mut()
            .ok_or_else(|| ComputeError::Device("no cell-sort buffers".into()))?;
        let per_atom = LaunchConfig::for_num_elems(n as u32);
        {
            let mut l = self.stream.launch_builder(&index);
            l.arg(pos).arg(&n_i).arg(plan).arg(&mut *cell_of).arg(&mut *counts);
            // SAFETY: reads `n` float4 positions, writes `n` cell indices, each below `ncells`
            // (clamped in the kernel), and counts into `ncells` counters.
            unsafe { l.launch(per_atom) }.map_err(dev_err("rdf_cell_index launch"))?;
        }
        {
            let mut l = self.stream.launch_builder(&scan);
            l.arg(&mut *counts).arg(&mut *starts).arg(&ncells_i);
            let cfg = LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1024, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: one block of 1024 threads (the kernel's layout) over `ncells` counts and
            // `ncells + 1` starts.
            unsafe { l.launch(cfg) }.map_err(dev_err("rdf_cell_scan launch"))?;
        }
        {
            let mut l = self.stream.launch_builder(&scatter);
            l.arg(pos).arg(&n_i).arg(&*cell_of).arg(&mut *counts).arg(&mut *sorted);
            // SAFETY: the fill cursors start at each cell's start and advance once per atom of the
            // cell, so every slot written is below `n`.
            unsafe { l.launch(per_atom) }.map_err(dev_err("rdf_cell_scatter launch"))?;
        }
        Ok(())
    }
}
