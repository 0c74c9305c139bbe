//! The linearized Poisson-Boltzmann solver on a CUDA device (`kernels/pb.cu`).
//!
//! Owns [`CudaPbSolver`] (one device's buffers for one lattice shape, kept between solves so the next
//! trajectory frame starts from the previous frame's solution without a transfer, [`Warm::Previous`])
//! and [`Preconditioner`]. It solves the system the CPU engine's maps define
//! (`compute::pb::Coefficients`, consumed as they are): an outer loop of residual
//! corrections in float64 (iterate, source and coefficients in double on the device: `r = f - A u`,
//! the stopping test `|r| / |f| <= tolerance` over the interior points, the CPU engine's criterion),
//! each correction `A e = r` solved in float32 by conjugate gradients to a relative 1e-4 or what the
//! tolerance still needs (times a margin, `DEFAULT_MARGIN`), preconditioned by one symmetric multigrid V-cycle (red-black Gauss-Seidel,
//! two sweeps each way by default, over-relaxed by `DEFAULT_OMEGA`, full weighting, trilinear prolongation, coarse dielectrics by the series
//! harmonic mean across and arithmetic mean along the faces, down to a lattice of at most 6 points
//! per axis or the first level with an even number of points, solved there by symmetric sweeps in
//! one thread block; APBS's lattices of `c 2^l + 1` points coarsen fully; the levels of at most
//! `DEFAULT_TAIL_POINTS` points run in one launch, `tail`) or by the diagonal.
//! Kernels that sum into an accumulator run on a capped grid and loop over the rest (one add per
//! block to one address serializes), and the V-cycle's last half sweep sums r.z itself. Conjugate-gradient iterations (all corrections together)
//! are capped by `PbParams::max_iterations`. When a float32 correction no longer lowers the float64
//! residual (float32 cannot resolve what is left), the solve finishes by float64 conjugate gradients
//! with the diagonal preconditioner on the float64 maps. Reaching the cap is [`PbError::NotConverged`]
//! naming the residual, never a result.
//! The solver runs on a stream of its own. The conjugate-gradient step lengths are computed on the
//! device, so each iteration (operator, update, V-cycle, dot products) is captured once per lattice,
//! spacing and sweep count as a CUDA graph and replayed, with one read of its sums by the host
//! (`cg`; `set_graphs(false)` launches it kernel by kernel; a capture that fails falls back to
//! that). The V-cycle smooths on the levels' coefficients coded in one byte each and packed per
//! point (`pb_pack`; float32 with `set_packed_coefficients(false)`, or when a dielectric lies outside
//! [0.5, 256] or kbar^2 outside 0 and [2^-20, 2^14]): a fixed symmetric positive preconditioner
//! reading a quarter of the bytes;
//! the operator of the iterations stays float32 and the residual corrections float64.
//! Every device buffer is filled with NaN when allocated and the solution must come back finite, so
//! a kernel that writes nothing cannot pass as a potential. The nonlinear form is the CPU engine's.
//! Called through `compute::pb::PbSolver` (CLI, viewer jobs) and by the tests and the benchmark.

use super::{CudaEngine, CudaError, dev_err};
use crate::compute::pb::Coefficients;
use crate::compute::pb::refinement::refine;
use crate::compute::pb::{PbError, PbLattice, PbParams, PbSolution};
use cudarc::driver::{
    CudaFunction, CudaGraph, CudaModule, CudaSlice, CudaStream, LaunchConfig, PinnedHostSlice, PushKernelArg,
};
use rayon::prelude::*;
use std::sync::Arc;

mod cg;
mod maps;
mod multigrid;
mod polish;
mod raw;
mod tail;

pub use maps::{AtomsSolve, PB_MAPS_SRC};

pub use multigrid::level_dims;
pub use tail::{DEFAULT_TAIL_POINTS, tail_start};

/// `kernels/pb.cu`, embedded at build time.
pub const PB_SRC: &str = include_str!("../../../kernels/pb.cu");
/// `PB_BX`, `PB_BY`, `PB_BZ` in `kernels/pb.cu`.
const BLOCK: (u32, u32, u32) = (32, 4, 2);
const THREADS: u32 = 256;
/// Gauss-Seidel sweeps (one red and one black half sweep each) before and after the coarse
/// correction, by default.
pub const DEFAULT_SWEEPS: usize = 2;
/// The V-cycle's red-black sweeps are over-relaxed by this factor by default (measured on adk at
/// 161^3: one of ten iterations saved; 1.3 saved the same, and two sweeps beat one or three).
pub const DEFAULT_OMEGA: f32 = 1.15;
/// Coarsening stops at this many points per axis or fewer.
const COARSEST_POINTS: usize = 6;
/// The float32 corrections' aim as a fraction of the tolerance (`set_correction_margin`).
pub use crate::compute::pb::refinement::CORRECTION_MARGIN as DEFAULT_MARGIN;
/// The coarsest level is solved by one thread block when it has at most this many points.
const ONE_BLOCK_POINTS: usize = 32 * 32 * 32;
/// Device bytes per lattice point at the finest level (float64: iterate, source, boundary, three
/// dielectrics, kbar^2; float32: three dielectrics, kbar^2, V-cycle right side, iterate and residual,
/// correction, search direction and its image; the packed one-byte coefficients), coarse levels
/// taking at most a seventh more.
pub const DEVICE_BYTES_PER_POINT: u64 = 7 * 8 + 10 * 4 + 8 + 15;

/// How each float32 correction is preconditioned.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Preconditioner {
    /// One symmetric multigrid V-cycle.
    #[default]
    Multigrid,
    /// The operator's diagonal (many more iterations; a reference for the multigrid).
    Jacobi,
}

/// Where a solve starts inside the lattice (the faces always take the new boundary values).
#[derive(Clone, Copy, Debug)]
pub enum Warm<'a> {
    /// Zero.
    None,
    /// Values on the host, one per lattice point (ignored when the length or a value is wrong).
    Host(&'a [f64]),
    /// The last solution this solver returned, still on the device (zero when there is none for
    /// this lattice).
    Previous,
}

/// How the last solve went on the device.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct PbDeviceStats {
    /// Float64 residual corrections.
    pub corrections: usize,
    /// Conjugate-gradient iterations, all corrections together.
    pub iterations: usize,
    /// Multigrid levels (1: no coarsening).
    pub levels: usize,
    /// Float64 conjugate-gradient iterations of the final polish (0 when float32 corrections
    /// reached the tolerance), included in `iterations`.
    pub polish_iterations: usize,
    /// Seconds spent uploading the maps, solving and downloading the solution.
    pub upload_s: f64,
    pub solve_s: f64,
    pub download_s: f64,
    /// Seconds of each stage of the device maps ([`MAP_STAGES`] names them), measured only when
    /// [`CudaPbSolver::set_stage_timing`] asked for it (each stage then waits for the device).
    pub map_stages_s: [f64; MAP_STAGES.len()],
}

/// The stages of the device maps, in order: the charges' weights (host), the surface layout and
/// neighbour cells (host), uploads, solute spheres, solvent-accessible surface points, solvent marks,
/// ion spheres, dielectric and ion maps, source, boundary values.
pub const MAP_STAGES: [&str; 10] = [
    "charge weights",
    "cells",
    "upload",
    "solute",
    "surface points",
    "solvent",
    "ions",
    "dielectric",
    "source",
    "boundary",
];

struct Kernels {
    fill32: CudaFunction,
    fill64: CudaFunction,
    to_f32: CudaFunction,
    set_faces: CudaFunction,
    residual64: CudaFunction,
    add_correction: CudaFunction,
    apply: CudaFunction,
    cg_update_s: CudaFunction,
    xpby_s: CudaFunction,
    dot: CudaFunction,
    jacobi: CudaFunction,
    smooth: CudaFunction,
    mg_residual: CudaFunction,
    restrict: CudaFunction,
    prolong_add: CudaFunction,
    coarsen_eps: CudaFunction,
    coarsen_k2: CudaFunction,
    coarse_solve: CudaFunction,
    pack: CudaFunction,
    smooth_h: CudaFunction,
    mg_residual_h: CudaFunction,
    residual_d: CudaFunction,
    apply_d: CudaFunction,
    jacobi_d: CudaFunction,
    cg_update_d: CudaFunction,
    xpby_d: CudaFunction,
    smooth_h_dot: CudaFunction,
    smooth_h_zero: CudaFunction,
    tail: CudaFunction,
}

impl Kernels {
    fn load(module: &Arc<CudaModule>) -> Result<Kernels, CudaError> {
        let f = |name: &str| CudaEngine::function(module, name);
        Ok(Kernels {
            fill32: f("pb_fill32")?,
            fill64: f("pb_fill64")?,
            to_f32: f("pb_to_f32")?,
            set_faces: f("pb_set_faces")?,
            residual64: f("pb_residual64")?,
            add_correction: f("pb_add_correction")?,
            apply: f("pb_apply")?,
            cg_update_s: f("pb_cg_update_s")?,
            xpby_s: f("pb_xpby_s")?,
            dot: f("pb_dot")?,
            jacobi: f("pb_jacobi")?,
            smooth: f("pb_smooth")?,
            mg_residual: f("pb_mg_residual")?,
            restrict: f("pb_restrict")?,
            prolong_add: f("pb_prolong_add")?,
            coarsen_eps: f("pb_coarsen_eps")?,
            coarsen_k2: f("pb_coarsen_k2")?,
            coarse_solve: f("pb_coarse_solve")?,
            pack: f("pb_pack")?,
            smooth_h: f("pb_smooth_h")?,
            mg_residual_h: f("pb_mg_residual_h")?,
            residual_d: f("pb_residual_d")?,
            apply_d: f("pb_apply_d")?,
            jacobi_d: f("pb_jacobi_d")?,
            cg_update_d: f("pb_cg_update_d")?,
            xpby_d: f("pb_xpby_d")?,
            smooth_h_dot: f("pb_smooth_h_dot")?,
            smooth_h_zero: f("pb_smooth_h_zero")?,
            tail: f("pb_tail")?,
        })
    }
}

/// One multigrid level: float32 coefficients, V-cycle right side `b`, iterate `x` and residual `t`.
struct Level {
    dims: [i32; 3],
    ih2: f32,
    eps: [CudaSlice<f32>; 3],
    k2: CudaSlice<f32>,
    b: CudaSlice<f32>,
    x: CudaSlice<f32>,
    t: CudaSlice<f32>,
    /// (ex, ey, ez, k2) of each point coded in one byte each, 4 bytes per point (`pb_pack`).
    pk: CudaSlice<u32>,
    /// The buffers' addresses, for the inner loop's launches.
    ptrs: raw::Ptrs,
}

impl Level {
    fn n(&self) -> usize {
        self.dims.iter().map(|&d| d as usize).product()
    }
}

/// A captured graph owned by one solver.
struct SendGraph(CudaGraph);

// SAFETY: a graph is used only through its solver, which takes `&mut self` for every use, so its
// calls are serialized as CUDA asks of graph objects; CUDA lets any thread use a graph so serialized.
unsafe impl Send for SendGraph {}

/// Addresses of the conjugate-gradient buffers.
#[derive(Clone, Copy)]
struct InnerPtrs {
    e: raw::Addr,
    p: raw::Addr,
    q: raw::Addr,
    acc: raw::Addr,
}

/// Device buffers for one lattice shape.
struct Buffers {
    dims: [usize; 3],
    /// Float64: iterate (the solution between solves), source, boundary, dielectrics, kbar^2.
    u: CudaSlice<f64>,
    f: CudaSlice<f64>,
    g: CudaSlice<f64>,
    eps64: [CudaSlice<f64>; 3],
    k64: CudaSlice<f64>,
    levels: Vec<Level>,
    /// Float32 conjugate-gradient correction, search direction and its image (the residual is the
    /// finest level's `b`, the preconditioned residual its `x`).
    e: CudaSlice<f32>,
    /// Owned here; used through `inner.p` and `inner.q` only.
    _p: CudaSlice<f32>,
    _q: CudaSlice<f32>,
    /// Accumulators: |r|^2, |f|^2 (float64 residual); p.Ap, |r|^2, r.z (conjugate gradients), in two
    /// blocks of eight, one per parity of the iteration (`cg`).
    acc: CudaSlice<f64>,
    /// The addresses of `e`, `p`, `q` and `acc`, for the inner loop's launches.
    inner: InnerPtrs,
    /// The two parities of a conjugate-gradient iteration, each captured as a graph, with what it
    /// was captured for (`cg::GraphKey`).
    graphs: [Option<(cg::GraphKey, SendGraph)>; 2],
    /// `u` holds the solution of the last successful solve (on `lattice`).
    solution: Option<PbLattice>,
    /// Float64 residual, preconditioned residual, search direction and its image of the final
    /// polish, allocated at its first use.
    polish: Option<Box<[CudaSlice<f64>; 4]>>,
    /// The V-cycle's small levels in one launch, when the lattice has them (`tail`).
    tail: Option<tail::Tail>,
}

fn cfg3(d: [i32; 3]) -> LaunchConfig {
    LaunchConfig {
        grid_dim: (
            (d[0].max(1) as u32).div_ceil(BLOCK.0),
            (d[1].max(1) as u32).div_ceil(BLOCK.1),
            (d[2].max(1) as u32).div_ceil(BLOCK.2),
        ),
        block_dim: BLOCK,
        shared_mem_bytes: 0,
    }
}

fn cfg_smooth(d: [i32; 3]) -> LaunchConfig {
    let half = (d[0].max(1) as u32).div_ceil(2);
    LaunchConfig {
        grid_dim: (
            half.div_ceil(BLOCK.0),
            (d[1].max(1) as u32).div_ceil(BLOCK.1),
            (d[2].max(1) as u32).div_ceil(BLOCK.2),
        ),
        block_dim: BLOCK,
        shared_mem_bytes: 0,
    }
}

/// Blocks a summing kernel runs on at most (each adds once to one address; see `PB_STRIDE_LOOP`).
const REDUCE_BLOCKS: u32 = 2048;

/// As `cfg3` with the grid capped in z near `REDUCE_BLOCKS` blocks (the kernel loops over z).
fn cfg3r(d: [i32; 3]) -> LaunchConfig {
    let mut c = cfg3(d);
    let plane = (c.grid_dim.0 * c.grid_dim.1).max(1);
    c.grid_dim.2 = c.grid_dim.2.min((REDUCE_BLOCKS / plane).max(1));
    c
}

/// As `cfg_smooth` with the grid capped in z near twice `REDUCE_BLOCKS` blocks (a smoothing pass
/// needs more blocks in flight than a sum to keep its reads going; the adds end its blocks at
/// different times).
fn cfg_smooth_r(d: [i32; 3]) -> LaunchConfig {
    let mut c = cfg_smooth(d);
    let plane = (c.grid_dim.0 * c.grid_dim.1).max(1);
    c.grid_dim.2 = c.grid_dim.2.min((2 * REDUCE_BLOCKS / plane).max(1));
    c
}

/// As `cfg1` with at most `REDUCE_BLOCKS` blocks (the kernel strides over the rest).
fn cfg1r(n: usize) -> LaunchConfig {
    let mut c = cfg1(n);
    c.grid_dim.0 = c.grid_dim.0.min(REDUCE_BLOCKS);
    c
}

fn cfg1(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n.max(1) as u64).div_ceil(u64::from(THREADS)) as u32, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

fn device(e: CudaError) -> PbError {
    PbError::Device(e.to_string())
}

fn drv(what: &'static str) -> impl Fn(cudarc::driver::DriverError) -> PbError {
    move |e| device(dev_err(what)(e))
}

/// A CUDA device's Poisson-Boltzmann solver (see the module documentation).
pub struct CudaPbSolver {
    engine: Arc<CudaEngine>,
    /// The solver's own stream (its work neither waits for nor holds up the pool's on the device).
    stream: Arc<CudaStream>,
    /// Whether the V-cycle is replayed from a captured CUDA graph (`set_graphs`).
    graphs: bool,
    kernels: Arc<Kernels>,
    bufs: Option<Buffers>,
    preconditioner: Preconditioner,
    sweeps: usize,
    stats: PbDeviceStats,
    /// The device-map kernels (compiled at their first use) and their scratch.
    map_kernels: Option<Arc<maps::MapKernels>>,
    map_scratch: maps::MapScratch,
    /// Page-locked staging of the downloaded potential.
    staging: Option<PinnedHostSlice<f64>>,
    /// Time each stage of the device maps (`PbDeviceStats::map_stages_s`).
    stage_timing: bool,
    /// The V-cycle may read packed one-byte coefficients (when the problem's values fit them).
    packed_allowed: bool,
    /// The current solve's V-cycle reads them.
    packed: bool,
    /// Each float32 correction aims at this fraction of what the tolerance still asks (float32
    /// recurrences overstate their progress a little; too small a fraction solves past the tolerance).
    margin: f64,
    /// Sweeps at the finest level when they differ from `sweeps` (`set_fine_sweeps`).
    fine_sweeps: Option<usize>,
    /// The sweeps' over-relaxation (`set_over_relaxation`).
    omega: f32,
    /// The last solve's residual norms in order ([`ResidualStep`]).
    trace: Vec<ResidualStep>,
    /// The largest level the one-launch tail of the V-cycle takes (`set_tail_points`; 0: none).
    tail_points: usize,
}

/// One residual norm of a solve, in the order the solve formed them.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum ResidualStep {
    /// A float64 residual `|f - A u|` before a correction, with `|f|`.
    Outer { residual: f64, source: f64 },
    /// A float32 conjugate-gradient residual of the current correction.
    Inner(f64),
}

impl std::fmt::Debug for CudaPbSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "CudaPbSolver({})", self.device_name())
    }
}

impl CudaPbSolver {
    /// Compiles the kernels on `engine`'s device.
    pub fn new(engine: Arc<CudaEngine>) -> Result<CudaPbSolver, PbError> {
        let module = {
            let mut st = engine.lock_state().map_err(device)?;
            engine.module(&mut st, PB_SRC).map_err(device)?
        };
        let kernels = Arc::new(Kernels::load(&module).map_err(device)?);
        let stream = engine.ctx.new_stream().map_err(drv("stream creation"))?;
        Ok(CudaPbSolver {
            stream,
            graphs: true,
            engine,
            kernels,
            bufs: None,
            preconditioner: Preconditioner::Multigrid,
            sweeps: DEFAULT_SWEEPS,
            stats: PbDeviceStats::default(),
            trace: Vec::new(),
            fine_sweeps: None,
            omega: DEFAULT_OMEGA,
            map_kernels: None,
            map_scratch: maps::MapScratch::default(),
            staging: None,
            stage_timing: false,
            packed_allowed: true,
            packed: false,
            margin: DEFAULT_MARGIN,
            tail_points: DEFAULT_TAIL_POINTS,
        })
    }

    /// The device's name.
    pub fn device_name(&self) -> String {
        format!("cuda:{} {}", self.engine.ordinal(), self.engine.device_name())
    }

    /// Lets the V-cycle read its coefficients packed in one byte each (the default; `false` keeps float32,
    /// for comparisons).
    pub fn set_packed_coefficients(&mut self, on: bool) {
        self.packed_allowed = on;
    }

    /// Sets the fraction of the remaining reduction each float32 correction aims at (in (0, 1]).
    pub fn set_correction_margin(&mut self, margin: f64) {
        self.margin = if margin.is_finite() {
            margin.clamp(1e-6, 1.0)
        } else {
            DEFAULT_MARGIN
        };
    }

    /// Times each stage of the device maps, waiting for the device after each (for the benchmark).
    pub fn set_stage_timing(&mut self, on: bool) {
        self.stage_timing = on;
    }

    pub fn set_preconditioner(&mut self, p: Preconditioner) {
        self.preconditioner = p;
    }

    /// Whether each V-cycle is replayed from a CUDA graph captured once per lattice, spacing and
    /// sweep count (the default), or launched kernel by kernel.
    pub fn set_graphs(&mut self, on: bool) {
        self.graphs = on;
    }

    /// Sweeps at the finest level alone (1 to 8; None: as every level, `set_sweeps`).
    pub fn set_fine_sweeps(&mut self, sweeps: Option<usize>) {
        self.fine_sweeps = sweeps.map(|s| s.clamp(1, 8));
    }

    /// Over-relaxes the V-cycle's red-black sweeps by `omega` (in [1, 1.9]; 1 is Gauss-Seidel;
    /// `DEFAULT_OMEGA` by default). The same factor in mirrored order keeps the preconditioner
    /// symmetric.
    pub fn set_over_relaxation(&mut self, omega: f32) {
        self.omega = if omega.is_finite() { omega.clamp(1.0, 1.9) } else { 1.0 };
    }

    /// The V-cycle runs its levels of at most `points` points, down to the coarsest, in one launch
    /// (`DEFAULT_TAIL_POINTS` by default; 0 launches every level's passes, for comparisons).
    pub fn set_tail_points(&mut self, points: usize) {
        self.tail_points = points;
    }

    /// Gauss-Seidel sweeps before and after each coarse correction (1 to 8).
    pub fn set_sweeps(&mut self, sweeps: usize) {
        self.sweeps = sweeps.clamp(1, 8);
    }

    /// How the last solve went.
    pub fn stats(&self) -> PbDeviceStats {
        self.stats
    }

    /// The last solve's residual norms, float64 and float32, in the order they were formed.
    pub fn residual_trace(&self) -> &[ResidualStep] {
        &self.trace
    }

    fn fill32(&self, b: &mut CudaSlice<f32>) -> Result<(), PbError> {
        let n = b.len() as i64;
        let v = f32::NAN;
        let mut l = self.stream.launch_builder(&self.kernels.fill32);
        l.arg(b).arg(&v).arg(&n);
        // SAFETY: writes `n` floats into a buffer of `n`.
        unsafe { l.launch(cfg1(n as usize)) }.map_err(drv("pb_fill32"))?;
        Ok(())
    }

    fn fill64(&self, b: &mut CudaSlice<f64>) -> Result<(), PbError> {
        let n = b.len() as i64;
        let v = f64::NAN;
        let mut l = self.stream.launch_builder(&self.kernels.fill64);
        l.arg(b).arg(&v).arg(&n);
        // SAFETY: writes `n` doubles into a buffer of `n`.
        unsafe { l.launch(cfg1(n as usize)) }.map_err(drv("pb_fill64"))?;
        Ok(())
    }

    fn alloc32(&self, n: usize) -> Result<CudaSlice<f32>, PbError> {
        // SAFETY: filled with NaN at once.
        let mut b = unsafe { self.stream.alloc::<f32>(n.max(1)) }.map_err(drv("device allocation"))?;
        self.fill32(&mut b)?;
        Ok(b)
    }

    fn alloc64(&self, n: usize) -> Result<CudaSlice<f64>, PbError> {
        // SAFETY: filled with NaN at once.
        let mut b = unsafe { self.stream.alloc::<f64>(n.max(1)) }.map_err(drv("device allocation"))?;
        self.fill64(&mut b)?;
        Ok(b)
    }

    /// Buffers for `dims`, reusing the current ones when the shape is the same.
    fn ensure_buffers(&mut self, dims: [usize; 3], spacing: f64) -> Result<(), PbError> {
        if let Some(b) = self.bufs.as_mut()
            && b.dims == dims
        {
            // The same shape at another spacing: the levels' 1/h^2 follow it.
            for (l, lv) in b.levels.iter_mut().enumerate() {
                let h = spacing * (1u64 << l) as f64;
                lv.ih2 = (1.0 / (h * h)) as f32;
            }
            return Ok(());
        }
        self.bufs = None;
        let n: usize = dims.iter().product();
        let mut levels = Vec::new();
        for (l, d) in level_dims(dims).into_iter().enumerate() {
            let m: usize = d.iter().product();
            let h = spacing * (1u64 << l) as f64;
            let mut lv = Level {
                dims: d.map(|v| v as i32),
                ih2: (1.0 / (h * h)) as f32,
                eps: [self.alloc32(m)?, self.alloc32(m)?, self.alloc32(m)?],
                k2: self.alloc32(m)?,
                b: self.alloc32(m)?,
                x: self.alloc32(m)?,
                t: self.alloc32(m)?,
                pk: self
                    .stream
                    .alloc_zeros::<u32>(m.max(1))
                    .map_err(drv("device allocation"))?,
                ptrs: raw::Ptrs::default(),
            };
            let st = &self.stream;
            lv.ptrs = raw::Ptrs {
                eps: [
                    raw::addr(st, &lv.eps[0]),
                    raw::addr(st, &lv.eps[1]),
                    raw::addr(st, &lv.eps[2]),
                ],
                k2: raw::addr(st, &lv.k2),
                b: raw::addr(st, &lv.b),
                x: raw::addr(st, &lv.x),
                t: raw::addr(st, &lv.t),
                pk: raw::addr(st, &lv.pk),
            };
            levels.push(lv);
        }
        let (e, p, q, acc) = (self.alloc32(n)?, self.alloc32(n)?, self.alloc32(n)?, self.alloc64(16)?);
        let st = &self.stream;
        let inner = InnerPtrs {
            e: raw::addr(st, &e),
            p: raw::addr(st, &p),
            q: raw::addr(st, &q),
            acc: raw::addr(st, &acc),
        };
        self.bufs = Some(Buffers {
            dims,
            u: self.alloc64(n)?,
            f: self.alloc64(n)?,
            g: self.alloc64(n)?,
            eps64: [self.alloc64(n)?, self.alloc64(n)?, self.alloc64(n)?],
            k64: self.alloc64(n)?,
            levels,
            e,
            _p: p,
            _q: q,
            acc,
            inner,
            graphs: [None, None],
            solution: None,
            polish: None,
            tail: None,
        });
        Ok(())
    }

    /// Solves the linearized equation of `c` on `lattice` (see the module documentation).
    pub fn solve(
        &mut self,
        c: &Coefficients,
        lattice: &PbLattice,
        params: &PbParams,
        warm: Warm<'_>,
    ) -> Result<PbSolution, PbError> {
        let n = lattice.n_points();
        let lengths = [
            c.eps[0].len(),
            c.eps[1].len(),
            c.eps[2].len(),
            c.kbar2.len(),
            c.source.len(),
            c.boundary.len(),
        ];
        if lengths.iter().any(|&l| l != n) {
            return Err(PbError::BadInput(format!(
                "coefficient maps of {lengths:?} values for a lattice of {n} points"
            )));
        }
        let t0 = std::time::Instant::now();
        let had_previous = self.begin(lattice, params)?;
        let stream = self.stream.clone();
        let b = self.bufs()?;
        stream
            .memcpy_htod(c.source.as_slice(), &mut b.f)
            .map_err(drv("upload"))?;
        stream
            .memcpy_htod(c.boundary.as_slice(), &mut b.g)
            .map_err(drv("upload"))?;
        for (dst, src) in b.eps64.iter_mut().zip(&c.eps) {
            stream.memcpy_htod(src.as_slice(), dst).map_err(drv("upload"))?;
        }
        stream
            .memcpy_htod(c.kbar2.as_slice(), &mut b.k64)
            .map_err(drv("upload"))?;
        self.start_iterate(warm, had_previous, n)?;
        stream.synchronize().map_err(drv("synchronize"))?;
        self.stats.upload_s = t0.elapsed().as_secs_f64();
        self.finish(lattice, params)
    }

    /// Checks the problem's size, binds the device and readies the buffers of `lattice`; true when
    /// the device still holds the previous solution on this lattice.
    fn begin(&mut self, lattice: &PbLattice, params: &PbParams) -> Result<bool, PbError> {
        if params.nonlinear {
            return Err(PbError::BadInput(
                "the CUDA engine solves the linearized Poisson-Boltzmann equation; the nonlinear form runs on the CPU engine"
                    .to_string(),
            ));
        }
        let n = lattice.n_points();
        let dims = lattice.dims;
        if dims.iter().any(|&d| d < 3 || d > (i32::MAX as usize) / 4) || n > (i64::MAX as usize) / 16 {
            return Err(PbError::BadInput(format!(
                "lattice {dims:?}: not a size the CUDA solver takes"
            )));
        }
        let needed = (n as u64).saturating_mul(DEVICE_BYTES_PER_POINT);
        if needed > params.max_bytes {
            return Err(PbError::TooLarge {
                dims,
                points: n,
                needed_gib: needed as f64 / (1u64 << 30) as f64,
                limit_gib: params.max_bytes as f64 / (1u64 << 30) as f64,
            });
        }
        self.engine.ctx.bind_to_thread().map_err(drv("bind"))?;
        let had_previous = self.bufs.as_ref().and_then(|b| b.solution) == Some(*lattice);
        self.ensure_buffers(dims, lattice.spacing_angstrom)?;
        self.stats = PbDeviceStats::default();
        self.trace.clear();
        self.bufs()?.solution = None;
        Ok(had_previous)
    }

    /// The iterate's start inside the lattice (the faces take the boundary values in `run`).
    fn start_iterate(&mut self, warm: Warm<'_>, had_previous: bool, n: usize) -> Result<(), PbError> {
        let stream = self.stream.clone();
        let b = self.bufs()?;
        match warm {
            Warm::Host(w) if w.len() == n && w.iter().all(|v| v.is_finite()) => {
                stream.memcpy_htod(w, &mut b.u).map_err(drv("upload"))?;
            }
            Warm::Previous if had_previous => {}
            _ => stream.memset_zeros(&mut b.u).map_err(drv("memset"))?,
        }
        Ok(())
    }

    /// Solves on the maps in the buffers and brings the potential back (page-locked staging).
    fn finish(&mut self, lattice: &PbLattice, params: &PbParams) -> Result<PbSolution, PbError> {
        let n = lattice.n_points();
        let stream = self.stream.clone();
        let t1 = std::time::Instant::now();
        let result = self.run(lattice, params);
        self.stats.solve_s = t1.elapsed().as_secs_f64();
        let (iterations, rel) = result?;
        let t2 = std::time::Instant::now();
        if self.staging.as_ref().is_none_or(|p| p.len() < n) {
            self.staging = None;
            // SAFETY: the first n values are written by the download before they are read.
            let fresh = unsafe { self.engine.ctx.alloc_pinned_with_flags::<f64>(n.max(1), 0) };
            self.staging = Some(fresh.map_err(drv("page-locked allocation"))?);
        }
        let Some(b) = self.bufs.as_mut() else {
            return Err(PbError::Device("no device buffers".into()));
        };
        let Some(staging) = self.staging.as_mut() else {
            return Err(PbError::Device("no page-locked buffer".into()));
        };
        let host = staging
            .as_mut_slice()
            .map_err(drv("page-locked buffer"))?
            .get_mut(..n)
            .ok_or_else(|| PbError::Device("short page-locked buffer".into()))?;
        stream.memcpy_dtoh(&b.u, host).map_err(drv("download"))?;
        stream.synchronize().map_err(drv("synchronize"))?;
        // Into fresh memory in parallel pieces (its pages are touched by many threads at once), each
        // piece checked as it goes.
        let mut out = vec![0.0f64; n];
        let finite = out
            .par_chunks_mut(1 << 16)
            .zip(host.par_chunks(1 << 16))
            .map(|(d, s)| {
                d.copy_from_slice(s);
                s.iter().all(|v| v.is_finite())
            })
            .reduce(|| true, |a, b| a && b);
        self.stats.download_s = t2.elapsed().as_secs_f64();
        if !finite {
            return Err(PbError::Device(
                "the CUDA solver returned a value that is not a finite number".into(),
            ));
        }
        b.solution = Some(*lattice);
        Ok(PbSolution {
            lattice: *lattice,
            potential_kt_per_e: out,
            iterations,
            relative_residual: rel,
        })
    }

    fn bufs(&mut self) -> Result<&mut Buffers, PbError> {
        self.bufs
            .as_mut()
            .ok_or_else(|| PbError::Device("no device buffers".into()))
    }

    /// The solve proper on the uploaded buffers: (iterations, final relative residual).
    fn run(&mut self, lattice: &PbLattice, params: &PbParams) -> Result<(usize, f64), PbError> {
        let stream = self.stream.clone();
        let k = Arc::clone(&self.kernels);
        let n = lattice.n_points();
        let n64 = n as i64;
        let d = lattice.dims.map(|v| v as i32);
        let b = self.bufs()?;
        // Faces of the iterate: the boundary values.
        {
            let mut l = stream.launch_builder(&k.set_faces);
            l.arg(&mut b.u).arg(&b.g).arg(&d[0]).arg(&d[1]).arg(&d[2]);
            // SAFETY: reads and writes nx ny nz doubles in buffers of that size.
            unsafe { l.launch(cfg3(d)) }.map_err(drv("pb_set_faces"))?;
        }
        // Float32 coefficients, finest level then the coarse ones.
        {
            let Some(fine) = b.levels.first_mut() else {
                return Err(PbError::Device("no multigrid level".into()));
            };
            let [e0, e1, e2] = &mut fine.eps;
            for (src, dst) in [
                (&b.eps64[0], e0),
                (&b.eps64[1], e1),
                (&b.eps64[2], e2),
                (&b.k64, &mut fine.k2),
            ] {
                let mut l = stream.launch_builder(&k.to_f32);
                l.arg(src).arg(dst).arg(&n64);
                // SAFETY: n doubles in, n floats out.
                unsafe { l.launch(cfg1(n)) }.map_err(drv("pb_to_f32"))?;
            }
        }
        for lv in 1..b.levels.len() {
            let (lo, hi) = b.levels.split_at_mut(lv);
            let (Some(f), Some(c)) = (lo.last(), hi.first_mut()) else {
                continue;
            };
            for axis in 0..3i32 {
                let mut l = stream.launch_builder(&k.coarsen_eps);
                l.arg(&f.eps[axis as usize])
                    .arg(&f.dims[0])
                    .arg(&f.dims[1])
                    .arg(&f.dims[2])
                    .arg(&mut c.eps[axis as usize])
                    .arg(&c.dims[0])
                    .arg(&c.dims[1])
                    .arg(&c.dims[2])
                    .arg(&axis);
                // SAFETY: reads the fine level's points (indices clamped), writes every coarse point.
                unsafe { l.launch(cfg3(c.dims)) }.map_err(drv("pb_coarsen_eps"))?;
            }
            let mut l = stream.launch_builder(&k.coarsen_k2);
            l.arg(&f.k2)
                .arg(&f.dims[0])
                .arg(&f.dims[1])
                .arg(&f.dims[2])
                .arg(&mut c.k2)
                .arg(&c.dims[0])
                .arg(&c.dims[1])
                .arg(&c.dims[2]);
            // SAFETY: as above.
            unsafe { l.launch(cfg3(c.dims)) }.map_err(drv("pb_coarsen_k2"))?;
        }
        // The V-cycle's one-byte coefficients, where every value lies in their ranges (`pb_pack`:
        // dielectrics in [0.5, 256], kbar^2 0 or in [2^-20, 2^14]; coarse values lie between fine ones).
        let eps_fits = |v: f64| (0.5..=256.0).contains(&v);
        let kbar2 = params.eps_out * params.kappa2_per_angstrom2();
        let k2_fits = kbar2 == 0.0 || (2f64.powi(-20)..=2f64.powi(14)).contains(&kbar2);
        let packed = self.packed_allowed && eps_fits(params.eps_in) && eps_fits(params.eps_out) && k2_fits;
        self.packed = packed;
        if packed {
            let b = self.bufs()?;
            let count = b.levels.len();
            for lv in b.levels.iter_mut().take(count.saturating_sub(1)) {
                let m = lv.n();
                let m64 = m as i64;
                let mut l = stream.launch_builder(&k.pack);
                l.arg(&lv.eps[0])
                    .arg(&lv.eps[1])
                    .arg(&lv.eps[2])
                    .arg(&lv.k2)
                    .arg(&mut lv.pk)
                    .arg(&m64);
                // SAFETY: m floats in each, m 32-bit words out.
                unsafe { l.launch(cfg1(m)) }.map_err(drv("pb_pack"))?;
            }
        }
        self.prepare_tail()?;
        self.stats.levels = self.bufs()?.levels.len();
        let margin = self.margin;
        refine(&mut cg::CudaRefine::new(self, lattice, params), params, margin)
    }

    /// u += e (the float32 correction) on the device.
    fn add_correction(&mut self) -> Result<(), PbError> {
        let stream = self.stream.clone();
        let k = Arc::clone(&self.kernels);
        let b = self.bufs()?;
        let n = b.dims.iter().product::<usize>();
        let n64 = n as i64;
        let mut l = stream.launch_builder(&k.add_correction);
        l.arg(&mut b.u).arg(&b.e).arg(&n64);
        // SAFETY: n doubles and n floats.
        unsafe { l.launch(cfg1(n)) }.map_err(drv("pb_add_correction"))?;
        Ok(())
    }
}
