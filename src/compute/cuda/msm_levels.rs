//! The long-range levels of multilevel summation on a CUDA device (`kernels/msm_levels.cu`):
//! anterpolation, restriction, the top level, every level's lattice cutoff and prolongation, from
//! the [`LevelGeometry`] the host decided, down to the finest lattice potential that `msm_slab`
//! interpolates.
//!
//! Owns the launch sequence ([`schedule`]: a list of [`Step`]s over level buffers, which a test
//! replays on the host with Rust twins of the kernels), the fixed-point scale of the
//! anterpolation, and the device buffers of one cascade. Called by [`super::msm`]'s preparation of a
//! plan built with [`crate::compute::esp::StagesOn::Engine`], by the bench (device time of the
//! levels) and by `tests/gpu_engine.rs` (every level against [`LevelGeometry::host_levels`]).

use super::{CudaEngine, dev_err};
use crate::compute::esp::{EspPlan, HostLevels, LevelGeometry, TopLevel};
use crate::compute::{ComputeError, PointCharges};
use cudarc::driver::{CudaModule, CudaSlice, LaunchConfig, PushKernelArg};
use std::sync::Arc;

/// `kernels/msm_levels.cu`, embedded at build time.
pub const MSM_LEVELS_SRC: &str = include_str!("../../../kernels/msm_levels.cu");

const THREADS: u32 = 128;

pub use crate::compute::esp::schedule::{AxisPass, Buf, Step, schedule};

/// Values the scratch buffers need for `steps`.
fn scratch_len(steps: &[Step]) -> usize {
    steps
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
        .max(1)
}

/// The fixed-point scale of the anterpolation for charges of total magnitude `sum_abs_e`: a power
/// of two with `sum_abs_e * scale <= 2^61`, so no lattice sum (at most `sum_abs_e`, every weight
/// product being at most 1 in magnitude) nor its rounding (half a unit per term) can overflow an
/// i64. Resolution: `sum_abs_e / 2^61` (4e-13 e for 1.5 million water charges).
pub fn fixed_scale(sum_abs_e: f64) -> f64 {
    let e = if sum_abs_e.is_finite() && sum_abs_e > 0.0 {
        61 - sum_abs_e.log2().ceil().clamp(-900.0, 900.0) as i32
    } else {
        0
    };
    2f64.powi(e)
}

/// Charges as the anterpolation kernel reads them: `(t0, t1, t2, q)` per charge, `t` the lattice
/// coordinates of [`LevelGeometry::charge_coords`].
pub fn kernel_atoms(g: &LevelGeometry, charges: &PointCharges) -> Vec<f64> {
    use rayon::prelude::*;
    let mut out = vec![0.0; 4 * charges.charges_e.len()];
    out.par_chunks_mut(4)
        .zip(charges.positions_bohr.par_iter().zip(charges.charges_e.par_iter()))
        .for_each(|(o, (p, q))| {
            let t = g.charge_coords(*p);
            o.copy_from_slice(&[t[0], t[1], t[2], *q]);
        });
    out
}

/// The lattice-cutoff stencil as `msml_cutoff` reads it.
struct StencilTable {
    /// `(dy, dz, dx0, len)` per row.
    rows: Vec<i32>,
    /// Each row's first weight in `weights`.
    offsets: Vec<i32>,
    weights: Vec<f64>,
}

fn stencil_table(g: &LevelGeometry) -> Result<StencilTable, ComputeError> {
    let mut rows = Vec::new();
    let mut offsets = Vec::new();
    let mut weights = Vec::new();
    if let Some(st) = &g.stencil {
        for r in &st.rows {
            let small = |x: i64| i32::try_from(x).map_err(|_| too_big("the MSM stencil"));
            offsets.push(i32::try_from(weights.len()).map_err(|_| too_big("the MSM stencil"))?);
            rows.extend_from_slice(&[
                small(r.dy)?,
                small(r.dz)?,
                small(r.dx0)?,
                i32::try_from(r.weights.len()).map_err(|_| too_big("the MSM stencil"))?,
            ]);
            weights.extend_from_slice(&r.weights);
        }
    }
    if rows.is_empty() {
        rows.extend_from_slice(&[0; 4]);
        offsets.push(0);
        weights.push(0.0);
    }
    Ok(StencilTable { rows, offsets, weights })
}

fn too_big(what: &str) -> ComputeError {
    ComputeError::Device(format!("{what} too large for the GPU kernel's 32-bit indices"))
}

fn i32_of(n: usize, what: &str) -> Result<i32, ComputeError> {
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

fn lo_i32(lo: i64) -> Result<i32, ComputeError> {
    i32::try_from(lo).map_err(|_| too_big("the MSM lattice"))
}

fn grid(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n as u32).div_ceil(THREADS).max(1), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

/// `(&bufs[src], &mut bufs[dst])` for `src != dst`.
fn pair<T>(bufs: &mut [T], src: usize, dst: usize) -> Result<(&T, &mut T), ComputeError> {
    let bad = || ComputeError::Device("MSM level schedule reads and writes one buffer".into());
    if src == dst {
        return Err(bad());
    }
    if src < dst {
        let (a, b) = bufs.split_at_mut(dst);
        Ok((a.get(src).ok_or_else(bad)?, b.first_mut().ok_or_else(bad)?))
    } else {
        let (a, b) = bufs.split_at_mut(src);
        let d = a.get_mut(dst).ok_or_else(bad)?;
        Ok((b.first().ok_or_else(bad)?, d))
    }
}

/// The kernels of the cascade, on a device or (in tests) as host twins.
trait LevelKernels {
    type Buf;
    /// `Q(0)` from the charges.
    fn anterpolate(&mut self, q0: &mut Self::Buf) -> Result<(), ComputeError>;
    fn axis_pass(&mut self, src: &Self::Buf, dst: &mut Self::Buf, pass: &AxisPass) -> Result<(), ComputeError>;
    /// `E(L)` from `Q(L)`.
    fn top(&mut self, q: &Self::Buf, e: &mut Self::Buf) -> Result<(), ComputeError>;
    /// `E(level)` from `Q(level)`.
    fn cutoff(&mut self, level: usize, q: &Self::Buf, e: &mut Self::Buf) -> Result<(), ComputeError>;
}

/// Values of each cascade buffer, in the order `Q(0..=L)`, `E(0..=L)`, `T1`, `T2`.
fn buffer_lens(g: &LevelGeometry, steps: &[Step]) -> Vec<usize> {
    g.layouts
        .iter()
        .chain(&g.layouts)
        .map(|l| l.len().max(1))
        .chain([scratch_len(steps); 2])
        .collect()
}

/// Runs [`schedule`] with `kernels` over `bufs` (laid out as [`buffer_lens`] says).
fn run_schedule<K: LevelKernels>(g: &LevelGeometry, kernels: &mut K, bufs: &mut [K::Buf]) -> Result<(), ComputeError> {
    let n_levels = g.layouts.len();
    if n_levels == 0 {
        return Err(ComputeError::Device("no MSM levels".into()));
    }
    let index = |b: Buf| -> usize {
        match b {
            Buf::Q(l) => l,
            Buf::E(l) => n_levels + l,
            Buf::T1 => 2 * n_levels,
            Buf::T2 => 2 * n_levels + 1,
        }
    };
    let top = n_levels - 1;
    for step in schedule(g) {
        match step {
            Step::Anterpolate => {
                let q0 = bufs
                    .get_mut(index(Buf::Q(0)))
                    .ok_or_else(|| ComputeError::Device("no MSM level buffer".into()))?;
                kernels.anterpolate(q0)?;
            }
            Step::Axis { src, dst, pass } => {
                let (s, d) = pair(bufs, index(src), index(dst))?;
                kernels.axis_pass(s, d, &pass)?;
            }
            Step::Top => {
                let (q, e) = pair(bufs, index(Buf::Q(top)), index(Buf::E(top)))?;
                kernels.top(q, e)?;
            }
            Step::Cutoff { level } => {
                let (q, e) = pair(bufs, index(Buf::Q(level)), index(Buf::E(level)))?;
                kernels.cutoff(level, q, e)?;
            }
        }
    }
    Ok(())
}

/// The level buffers of one cascade on the device.
pub struct DeviceLevels {
    /// Charges and potentials per level, finest first.
    pub charges: Vec<CudaSlice<f64>>,
    pub potentials: Vec<CudaSlice<f64>>,
    /// The finest potential in f32, as `msm_slab` reads it.
    pub finest_f32: CudaSlice<f32>,
}

/// The kernels of `kernels/msm_levels.cu` on one engine's stream, with the stencil and top-level
/// kernel uploaded.
struct DeviceKernels<'a> {
    engine: &'a CudaEngine,
    module: &'a Arc<CudaModule>,
    g: &'a LevelGeometry,
    charges: &'a PointCharges,
    periodic: i32,
    rows: CudaSlice<i32>,
    offsets: CudaSlice<i32>,
    n_rows: i32,
    weights: CudaSlice<f64>,
    top_table: CudaSlice<f64>,
}

impl LevelKernels for DeviceKernels<'_> {
    type Buf = CudaSlice<f64>;

    fn anterpolate(&mut self, q0: &mut CudaSlice<f64>) -> Result<(), ComputeError> {
        let (g, charges, stream) = (self.g, self.charges, &self.engine.stream);
        let finest = g.finest();
        let fd = dims_i32(finest.dims)?;
        let n_atoms = i32_of(charges.charges_e.len(), "the charge set")?;
        let mut atoms = kernel_atoms(g, charges);
        if atoms.is_empty() {
            atoms.extend_from_slice(&[0.0; 4]);
        }
        let atoms = stream.clone_htod(&atoms).map_err(dev_err("upload MSM charges"))?;
        let n = finest.len().max(1);
        let mut acc = stream.alloc_zeros::<u64>(n).map_err(dev_err("MSM level allocation"))?;
        let sum_abs: f64 = charges.charges_e.iter().map(|q| q.abs()).sum();
        let scale = fixed_scale(sum_abs);
        let lo = [lo_i32(finest.lo[0])?, lo_i32(finest.lo[1])?, lo_i32(finest.lo[2])?];
        let f = CudaEngine::function(self.module, "msml_anterpolate")?;
        let mut b = stream.launch_builder(&f);
        b.arg(&mut acc)
            .arg(&atoms)
            .arg(&n_atoms)
            .arg(&lo[0])
            .arg(&lo[1])
            .arg(&lo[2])
            .arg(&fd[0])
            .arg(&fd[1])
            .arg(&fd[2])
            .arg(&self.periodic)
            .arg(&scale);
        // SAFETY: reads 4 doubles per charge of `atoms`; adds into `acc` only at indices
        // range-checked (open) or wrapped (periodic) into the finest lattice.
        unsafe { b.launch(grid(charges.charges_e.len())) }.map_err(dev_err("msml_anterpolate launch"))?;
        let f = CudaEngine::function(self.module, "msml_from_fixed")?;
        let ni = i32_of(n, "the MSM lattice")?;
        let inv = 1.0 / scale;
        let mut b = stream.launch_builder(&f);
        b.arg(q0).arg(&acc).arg(&ni).arg(&inv);
        // SAFETY: `n` values in both buffers.
        unsafe { b.launch(grid(n)) }.map_err(dev_err("msml_from_fixed launch"))?;
        Ok(())
    }

    fn axis_pass(
        &mut self,
        src: &CudaSlice<f64>,
        dst: &mut CudaSlice<f64>,
        pass: &AxisPass,
    ) -> Result<(), ComputeError> {
        let sd = dims_i32(pass.src_dims)?;
        let dd = dims_i32(pass.dst_dims)?;
        let (sl, dl) = (lo_i32(pass.src_lo)?, lo_i32(pass.dst_lo)?);
        let (ax, rs, ac) = (pass.axis as i32, i32::from(pass.restrict), i32::from(pass.accumulate));
        let n: usize = pass.dst_dims.iter().product();
        if n == 0 {
            return Ok(());
        }
        let f = CudaEngine::function(self.module, "msml_axis_pass")?;
        let mut b = self.engine.stream.launch_builder(&f);
        b.arg(src)
            .arg(&sd[0])
            .arg(&sd[1])
            .arg(&sd[2])
            .arg(&sl)
            .arg(dst)
            .arg(&dd[0])
            .arg(&dd[1])
            .arg(&dd[2])
            .arg(&dl)
            .arg(&ax)
            .arg(&self.periodic)
            .arg(&rs)
            .arg(&ac);
        // SAFETY: the schedule sizes every buffer for its dims (levels by their layout, scratch
        // by the largest pass); source indices are range-checked or wrapped.
        unsafe { b.launch(grid(n)) }.map_err(dev_err("msml_axis_pass launch"))?;
        Ok(())
    }

    fn top(&mut self, q: &CudaSlice<f64>, e: &mut CudaSlice<f64>) -> Result<(), ComputeError> {
        let Some(top) = self.g.layouts.last() else {
            return Ok(());
        };
        let td = dims_i32(top.dims)?;
        let n = top.len();
        if n == 0 {
            return Ok(());
        }
        let name = if self.g.periodic {
            "msml_top_periodic"
        } else {
            "msml_top_open"
        };
        let f = CudaEngine::function(self.module, name)?;
        let mut b = self.engine.stream.launch_builder(&f);
        b.arg(q).arg(e).arg(&td[0]).arg(&td[1]).arg(&td[2]).arg(&self.top_table);
        // SAFETY: the table has (2 n - 1) entries per axis (open) or n (periodic), as
        // `LevelGeometry` built it for this top layout.
        unsafe { b.launch(grid(n)) }.map_err(dev_err("msml_top launch"))?;
        Ok(())
    }

    fn cutoff(&mut self, level: usize, q: &CudaSlice<f64>, e: &mut CudaSlice<f64>) -> Result<(), ComputeError> {
        let Some(layout) = self.g.layouts.get(level) else {
            return Ok(());
        };
        let d = dims_i32(layout.dims)?;
        let n = layout.len();
        if n == 0 {
            return Ok(());
        }
        let scale = 1.0 / (1u64 << level.min(62)) as f64;
        let f = CudaEngine::function(self.module, "msml_cutoff")?;
        let mut b = self.engine.stream.launch_builder(&f);
        b.arg(q)
            .arg(e)
            .arg(&d[0])
            .arg(&d[1])
            .arg(&d[2])
            .arg(&self.periodic)
            .arg(&self.rows)
            .arg(&self.offsets)
            .arg(&self.n_rows)
            .arg(&self.weights)
            .arg(&scale);
        // SAFETY: every row's weights lie within `weights` (offsets built from their lengths);
        // source rows and columns are range-checked or wrapped.
        unsafe { b.launch(grid(n)) }.map_err(dev_err("msml_cutoff launch"))?;
        Ok(())
    }
}

impl CudaEngine {
    /// Runs every long-range level of `g` for `charges` on the device (asynchronously on the
    /// engine's stream); the caller has bound the context to the thread.
    pub(super) fn run_msm_levels(
        &self,
        module: &Arc<CudaModule>,
        g: &LevelGeometry,
        charges: &PointCharges,
    ) -> Result<DeviceLevels, ComputeError> {
        let up = dev_err;
        let n_levels = g.layouts.len();
        for l in &g.layouts {
            dims_i32(l.dims)?;
        }
        // Buffers Q(0..L), E(0..L), T1, T2, every one NaN until written.
        let fill = Self::function(module, "msml_fill_nan")?;
        let mut bufs: Vec<CudaSlice<f64>> = Vec::with_capacity(2 * n_levels + 2);
        for n in buffer_lens(g, &schedule(g)) {
            // SAFETY: filled with NaN right below, before any read.
            let mut b = unsafe { self.stream.alloc::<f64>(n) }.map_err(up("MSM level allocation"))?;
            let ni = i32_of(n, "the MSM lattice")?;
            let mut lb = self.stream.launch_builder(&fill);
            lb.arg(&mut b).arg(&ni);
            // SAFETY: writes `n` doubles into a buffer of `n`.
            unsafe { lb.launch(grid(n)) }.map_err(up("msml_fill_nan launch"))?;
            bufs.push(b);
        }
        let StencilTable { rows, offsets, weights } = stencil_table(g)?;
        let top_table = match &g.top {
            TopLevel::Open { table } => table,
            TopLevel::Periodic { kernel } => kernel,
        };
        let mut kernels = DeviceKernels {
            engine: self,
            module,
            g,
            charges,
            periodic: i32::from(g.periodic),
            n_rows: i32_of(offsets.len(), "the MSM stencil")?,
            rows: self.stream.clone_htod(&rows).map_err(up("upload MSM stencil"))?,
            offsets: self.stream.clone_htod(&offsets).map_err(up("upload MSM stencil"))?,
            weights: self.stream.clone_htod(&weights).map_err(up("upload MSM stencil"))?,
            top_table: self
                .stream
                .clone_htod(if top_table.is_empty() { &[0.0][..] } else { top_table })
                .map_err(up("upload MSM top kernel"))?,
        };
        run_schedule(g, &mut kernels, &mut bufs)?;
        let n0 = g.finest().len().max(1);
        // SAFETY: fully written by msml_to_f32 below.
        let mut finest_f32 = unsafe { self.stream.alloc::<f32>(n0) }.map_err(up("MSM level allocation"))?;
        let f = Self::function(module, "msml_to_f32")?;
        let e0 = bufs
            .get(n_levels)
            .ok_or_else(|| ComputeError::Device("no MSM level buffer".into()))?;
        let ni = i32_of(n0, "the MSM lattice")?;
        let mut b = self.stream.launch_builder(&f);
        b.arg(&mut finest_f32).arg(e0).arg(&ni);
        // SAFETY: `n0` values in both buffers.
        unsafe { b.launch(grid(n0)) }.map_err(up("msml_to_f32 launch"))?;
        let mut charges_dev = bufs;
        let rest = charges_dev.split_off(n_levels);
        let potentials = rest.into_iter().take(n_levels).collect();
        Ok(DeviceLevels {
            charges: charges_dev,
            potentials,
            finest_f32,
        })
    }

    /// Runs `f` with the levels' module and `plan`'s level geometry, the engine locked and its
    /// context bound to the thread.
    fn with_levels<T>(
        &self,
        plan: &EspPlan,
        f: impl FnOnce(&Arc<CudaModule>, &LevelGeometry) -> Result<T, ComputeError>,
    ) -> Result<T, ComputeError> {
        let g = plan
            .levels
            .as_ref()
            .ok_or_else(|| ComputeError::BadInput("the plan has no MSM levels".into()))?;
        let mut st = self.lock_state()?;
        self.ctx.bind_to_thread().map_err(dev_err("bind"))?;
        let module = self.module(&mut st, MSM_LEVELS_SRC)?;
        f(&module, g)
    }

    /// Every level of an MSM plan computed on the device and copied back (charges and potentials,
    /// finest first), for comparison with [`LevelGeometry::host_levels`].
    pub fn msm_levels(&self, plan: &EspPlan) -> Result<HostLevels, ComputeError> {
        self.with_levels(plan, |module, g| {
            let levels = self.run_msm_levels(module, g, plan.charges())?;
            let down = |v: &[CudaSlice<f64>]| -> Result<Vec<Vec<f64>>, ComputeError> {
                v.iter()
                    .map(|b| {
                        let v = self.stream.clone_dtoh(b).map_err(dev_err("download MSM level"))?;
                        Ok(v)
                    })
                    .collect()
            };
            let mut charges = down(&levels.charges)?;
            let mut potentials = down(&levels.potentials)?;
            for (v, l) in charges
                .iter_mut()
                .chain(potentials.iter_mut())
                .zip(g.layouts.iter().cycle())
            {
                v.truncate(l.len());
            }
            Ok(HostLevels { charges, potentials })
        })
    }

    /// Device time (ms, CUDA events) of every long-range level of `plan`, per repetition, after one
    /// untimed run (the compile).
    #[cfg(feature = "bench-harness")]
    pub fn time_msm_levels(&self, plan: &EspPlan, repetitions: usize) -> Result<Vec<f64>, ComputeError> {
        self.with_levels(plan, |module, g| {
            self.time_on_stream(repetitions, || self.run_msm_levels(module, g, plan.charges()))
        })
    }
}

// Host twins of the kernels, replaying the schedule against the host cascade (tests only).
#[cfg(test)]
mod emulation;
