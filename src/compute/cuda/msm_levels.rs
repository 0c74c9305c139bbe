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

/// A level buffer of the cascade (f64 on the device).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buf {
    /// Charges of level `l`.
    Q(usize),
    /// Potential of level `l`.
    E(usize),
    /// Scratch of the separable passes.
    T1,
    T2,
}

/// One 1-D restriction or prolongation pass (`msml_axis_pass`; `msm::axis_pass` on the host).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisPass {
    pub src_dims: [usize; 3],
    pub src_lo: i64,
    pub dst_dims: [usize; 3],
    pub dst_lo: i64,
    pub axis: usize,
    pub restrict: bool,
    /// Add the sums to the destination instead of overwriting it.
    pub accumulate: bool,
}

/// One launch of the cascade.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Charges onto the finest lattice, `Q(0)` (`msml_anterpolate`, `msml_from_fixed`).
    Anterpolate,
    /// `dst` from `src` by one separable pass.
    Axis { src: Buf, dst: Buf, pass: AxisPass },
    /// The top level `E(L)` from `Q(L)` (`msml_top_open` or `msml_top_periodic`).
    Top,
    /// `E(level)` = lattice cutoff of `Q(level)` with the stencil times `2^-level` (`msml_cutoff`).
    Cutoff { level: usize },
}

/// The launches that turn the finest charges into every level's potential, in order: the host
/// cascade of `LevelGeometry` (`compute::esp`), pass by pass.
pub fn schedule(g: &LevelGeometry) -> Vec<Step> {
    let layouts = &g.layouts;
    let top = layouts.len().saturating_sub(1);
    let mut steps = vec![Step::Anterpolate];
    let axis = |src, src_dims, src_lo: [i64; 3], dst, dst_dims, dst_lo: [i64; 3], axis: usize, restrict, accumulate| {
        Step::Axis {
            src,
            dst,
            pass: AxisPass {
                src_dims,
                src_lo: src_lo[axis],
                dst_dims,
                dst_lo: dst_lo[axis],
                axis,
                restrict,
                accumulate,
            },
        }
    };
    for l in 0..top {
        let (Some(f), Some(c)) = (layouts.get(l), layouts.get(l + 1)) else {
            continue;
        };
        let (fd, cd) = (f.dims, c.dims);
        let d1 = [cd[0], fd[1], fd[2]];
        let d2 = [cd[0], cd[1], fd[2]];
        steps.push(axis(Buf::Q(l), fd, f.lo, Buf::T1, d1, c.lo, 0, true, false));
        steps.push(axis(Buf::T1, d1, f.lo, Buf::T2, d2, c.lo, 1, true, false));
        steps.push(axis(Buf::T2, d2, f.lo, Buf::Q(l + 1), cd, c.lo, 2, true, false));
    }
    steps.push(Step::Top);
    for l in (0..top).rev() {
        let (Some(f), Some(c)) = (layouts.get(l), layouts.get(l + 1)) else {
            continue;
        };
        steps.push(Step::Cutoff { level: l });
        let (fd, cd) = (f.dims, c.dims);
        let d1 = [cd[0], cd[1], fd[2]];
        let d2 = [cd[0], fd[1], fd[2]];
        steps.push(axis(Buf::E(l + 1), cd, c.lo, Buf::T1, d1, f.lo, 2, false, false));
        steps.push(axis(Buf::T1, d1, c.lo, Buf::T2, d2, f.lo, 1, false, false));
        steps.push(axis(Buf::T2, d2, c.lo, Buf::E(l), fd, f.lo, 0, false, true));
    }
    steps
}

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
    pub fn time_msm_levels(&self, plan: &EspPlan, repetitions: usize) -> Result<Vec<f64>, ComputeError> {
        self.with_levels(plan, |module, g| {
            self.time_on_stream(repetitions, || self.run_msm_levels(module, g, plan.charges()))
        })
    }
}

/// Host twins of the kernels of `kernels/msm_levels.cu`, written as the kernels are (one loop body
/// per thread, the same integer arithmetic), replaying [`schedule`] to check the indices and the
/// sequence against the host cascade without a device.
#[cfg(test)]
mod emulation {
    use super::*;
    use crate::compute::esp::kernel::{TWO_SCALE, phi};
    use crate::compute::esp::msm::cutoff_stencil;
    use crate::model::{Lattice, UnitCell};

    fn weights(t: f64) -> (i64, [f64; 4]) {
        let f = t.floor();
        let u = t - f;
        (f as i64 - 1, [phi(u + 1.0), phi(u), phi(u - 1.0), phi(u - 2.0)])
    }

    fn wrap(mut m: i64, n: i64, periodic: bool) -> i64 {
        if periodic && n > 0 {
            m %= n;
            if m < 0 {
                m += n;
            }
        }
        if m < 0 || m >= n { -1 } else { m }
    }

    fn floordiv(a: i64, b: i64) -> i64 {
        let q = a / b;
        if a % b != 0 && a < 0 { q - 1 } else { q }
    }

    #[allow(clippy::too_many_arguments)]
    fn anterpolate(acc: &mut [u64], atoms: &[f64], lo: [i64; 3], n: [i64; 3], periodic: bool, scale: f64) {
        for a in atoms.chunks(4) {
            let (b0, wx) = weights(a[0]);
            let (b1, wy) = weights(a[1]);
            let (b2, wz) = weights(a[2]);
            for dk in 0..4 {
                let m2 = wrap(b2 + dk - lo[2], n[2], periodic);
                if m2 < 0 {
                    continue;
                }
                for dj in 0..4 {
                    let m1 = wrap(b1 + dj - lo[1], n[1], periodic);
                    if m1 < 0 {
                        continue;
                    }
                    let qyz = a[3] * wy[dj as usize] * wz[dk as usize];
                    for di in 0..4 {
                        let m0 = wrap(b0 + di - lo[0], n[0], periodic);
                        if m0 < 0 {
                            continue;
                        }
                        let v = (qyz * wx[di as usize] * scale).round_ties_even() as i64;
                        let s = (m0 + n[0] * (m1 + n[1] * m2)) as usize;
                        acc[s] = acc[s].wrapping_add(v as u64);
                    }
                }
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn axis_pass(
        src: &[f64],
        s: [i64; 3],
        src_lo: i64,
        dst: &mut [f64],
        d: [i64; 3],
        dst_lo: i64,
        axis: usize,
        periodic: bool,
        restrict: bool,
        accumulate: bool,
    ) {
        for idx in 0..d[0] * d[1] * d[2] {
            let c = [idx % d[0], (idx / d[0]) % d[1], idx / (d[0] * d[1])];
            let ss = [1, s[0], s[0] * s[1]];
            let mut base = 0;
            for a in 0..3 {
                if a != axis {
                    base += c[a] * ss[a];
                }
            }
            let g = c[axis] + dst_lo;
            let ns = s[axis];
            let mut acc = 0.0;
            if restrict {
                for t in 0..7i64 {
                    let w = TWO_SCALE[t as usize];
                    if w == 0.0 {
                        continue;
                    }
                    let m = wrap(2 * g + t - 3 - src_lo, ns, periodic);
                    if m >= 0 {
                        acc += w * src[(base + m * ss[axis]) as usize];
                    }
                }
            } else {
                let n_first = -floordiv(3 - g, 2);
                let n_last = floordiv(g + 3, 2);
                for n in n_first..=n_last {
                    let t = g - 2 * n + 3;
                    let w = if (0..7).contains(&t) {
                        TWO_SCALE[t as usize]
                    } else {
                        0.0
                    };
                    if w == 0.0 {
                        continue;
                    }
                    let m = wrap(n - src_lo, ns, periodic);
                    if m >= 0 {
                        acc += w * src[(base + m * ss[axis]) as usize];
                    }
                }
            }
            if accumulate {
                dst[idx as usize] += acc;
            } else {
                dst[idx as usize] = acc;
            }
        }
    }

    #[allow(clippy::too_many_arguments)]
    fn cutoff(
        q: &[f64],
        e: &mut [f64],
        n: [i64; 3],
        periodic: bool,
        rows: &[i32],
        offsets: &[i32],
        weights: &[f64],
        scale: f64,
    ) {
        let [nx, ny, nz] = n;
        for idx in 0..nx * ny * nz {
            let (ox, oy, oz) = (idx % nx, (idx / nx) % ny, idx / (nx * ny));
            let mut acc = 0.0;
            for (row, &off) in rows.chunks(4).zip(offsets) {
                let (dy, dz, dx0, len) = (row[0] as i64, row[1] as i64, row[2] as i64, row[3] as i64);
                let sz = wrap(oz - dz, nz, periodic);
                let sy = wrap(oy - dy, ny, periodic);
                if sz < 0 || sy < 0 {
                    continue;
                }
                let src = &q[(nx * (sy + ny * sz)) as usize..];
                let w = &weights[off as usize..];
                let first = ox - dx0;
                if periodic {
                    let mut sx = wrap(first, nx, true);
                    for t in 0..len {
                        acc += (w[t as usize] * scale) * src[sx as usize];
                        sx = if sx == 0 { nx - 1 } else { sx - 1 };
                    }
                } else {
                    let t0 = 0.max(first - (nx - 1));
                    let t1 = (len - 1).min(first);
                    for t in t0..=t1 {
                        acc += (w[t as usize] * scale) * src[(first - t) as usize];
                    }
                }
            }
            e[idx as usize] = acc;
        }
    }

    fn top(q: &[f64], e: &mut [f64], d: [i64; 3], periodic: bool, table: &[f64]) {
        let [nx, ny, nz] = d;
        let n = nx * ny * nz;
        for idx in 0..n {
            let (i, j, k) = (idx % nx, (idx / nx) % ny, idx / (nx * ny));
            let mut acc = 0.0;
            for s in 0..n {
                let v = q[s as usize];
                if v == 0.0 {
                    continue;
                }
                let (si, sj, sk) = (s % nx, (s / nx) % ny, s / (nx * ny));
                let t = if periodic {
                    let (a, b, c) = ((i + nx - si) % nx, (j + ny - sj) % ny, (k + nz - sk) % nz);
                    a + nx * (b + ny * c)
                } else {
                    let (kx, ky) = (2 * nx - 1, 2 * ny - 1);
                    let (a, b, c) = (i + nx - 1 - si, j + ny - 1 - sj, k + nz - 1 - sk);
                    a + kx * (b + ky * c)
                };
                acc += v * table[t as usize];
            }
            e[idx as usize] = acc;
        }
    }

    fn dims(d: [usize; 3]) -> [i64; 3] {
        d.map(|x| x as i64)
    }

    /// The kernels' twins as [`LevelKernels`].
    struct HostTwins<'a> {
        g: &'a LevelGeometry,
        charges: &'a PointCharges,
        stencil: StencilTable,
    }

    impl LevelKernels for HostTwins<'_> {
        type Buf = Vec<f64>;

        fn anterpolate(&mut self, q0: &mut Vec<f64>) -> Result<(), ComputeError> {
            let f = self.g.finest();
            let mut acc = vec![0u64; f.len()];
            let sum_abs: f64 = self.charges.charges_e.iter().map(|q| q.abs()).sum();
            let scale = fixed_scale(sum_abs);
            let atoms = kernel_atoms(self.g, self.charges);
            anterpolate(&mut acc, &atoms, f.lo, dims(f.dims), self.g.periodic, scale);
            for (q, a) in q0.iter_mut().zip(&acc) {
                *q = *a as i64 as f64 * (1.0 / scale);
            }
            Ok(())
        }

        fn axis_pass(&mut self, src: &Vec<f64>, dst: &mut Vec<f64>, p: &AxisPass) -> Result<(), ComputeError> {
            axis_pass(
                src,
                dims(p.src_dims),
                p.src_lo,
                dst,
                dims(p.dst_dims),
                p.dst_lo,
                p.axis,
                self.g.periodic,
                p.restrict,
                p.accumulate,
            );
            Ok(())
        }

        fn top(&mut self, q: &Vec<f64>, e: &mut Vec<f64>) -> Result<(), ComputeError> {
            let table = match &self.g.top {
                TopLevel::Open { table } => table,
                TopLevel::Periodic { kernel } => kernel,
            };
            let d = self.g.layouts.last().map_or([0; 3], |l| l.dims);
            top(q, e, dims(d), self.g.periodic, table);
            Ok(())
        }

        fn cutoff(&mut self, level: usize, q: &Vec<f64>, e: &mut Vec<f64>) -> Result<(), ComputeError> {
            let st = &self.stencil;
            let scale = 1.0 / (1u64 << level) as f64;
            let d = dims(self.g.layouts[level].dims);
            cutoff(q, e, d, self.g.periodic, &st.rows, &st.offsets, &st.weights, scale);
            Ok(())
        }
    }

    /// [`CudaEngine::run_msm_levels`] with the kernels' twins: the same schedule runner and buffers.
    fn replay(g: &LevelGeometry, charges: &PointCharges) -> HostLevels {
        let n_levels = g.layouts.len();
        let mut bufs: Vec<Vec<f64>> = buffer_lens(g, &schedule(g))
            .into_iter()
            .map(|n| vec![f64::NAN; n])
            .collect();
        let mut twins = HostTwins {
            g,
            charges,
            stencil: stencil_table(g).unwrap(),
        };
        run_schedule(g, &mut twins, &mut bufs).unwrap();
        let mut it = bufs.into_iter();
        let charges: Vec<Vec<f64>> = it.by_ref().take(n_levels).collect();
        let potentials: Vec<Vec<f64>> = it.take(n_levels).collect();
        HostLevels { charges, potentials }
    }

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (*seed >> 11) as f64 / (1u64 << 53) as f64
    }

    fn random_charges(seed: u64, n: usize, ext: [f64; 3]) -> PointCharges {
        let mut s = seed | 1;
        let mut q = PointCharges::default();
        for _ in 0..n {
            q.positions_bohr.push(std::array::from_fn(|k| lcg(&mut s) * ext[k]));
            q.charges_e.push(lcg(&mut s) - 0.5);
        }
        q
    }

    fn assert_levels_match(label: &str, got: &HostLevels, want: &HostLevels) {
        assert_eq!(got.charges.len(), want.charges.len(), "{label}: level count");
        for (what, g, w) in [
            ("charges", &got.charges, &want.charges),
            ("potential", &got.potentials, &want.potentials),
        ] {
            for (l, (a, b)) in g.iter().zip(w).enumerate() {
                assert_eq!(a.len(), b.len(), "{label}: {what} of level {l}");
                let scale = b.iter().fold(0.0f64, |m, v| m.max(v.abs())).max(1e-300);
                let worst = a.iter().zip(b).map(|(x, y)| (x - y).abs()).fold(0.0f64, f64::max);
                assert!(
                    a.iter().all(|v| v.is_finite()),
                    "{label}: {what} of level {l} not all written"
                );
                assert!(
                    worst <= 1e-11 * scale,
                    "{label}: {what} of level {l} differs by {worst:.2e} (max {scale:.2e})"
                );
            }
        }
    }

    fn seed() -> u64 {
        let s = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(1, |d| d.as_nanos() as u64);
        println!("seed {s}");
        s
    }

    /// The kernels' twins, replaying the launch schedule, reproduce every level of the host cascade:
    /// open lattices with several levels and with the top level alone, orthorhombic and triclinic
    /// cells.
    #[test]
    fn kernel_twins_reproduce_every_host_level() {
        let s = seed();
        let q = random_charges(s, 700, [30.0, 26.0, 34.0]);
        let lattice = Lattice::axis_aligned([-3.0, -2.5, -1.0], 1.3, [25, 21, 28]);
        let (a, h) = (5.0, 2.2);
        let open = LevelGeometry::open(&q, &lattice, a, h).unwrap();
        assert!(open.layouts.len() >= 3, "{:?}", open.layouts);
        let single = LevelGeometry::open(&q, &Lattice::axis_aligned([0.0; 3], 1.0, [2, 2, 2]), 9.0, 9.0).unwrap();
        assert_eq!(single.layouts.len(), 1);
        let bohr = crate::model::units::bohr_from_angstrom(1.0);
        let cells = [
            UnitCell::orthorhombic([16.0, 14.0, 18.0]),
            UnitCell::new([17.0, 15.0, 19.0], [80.0, 100.0, 75.0]),
        ];
        let mut cases = vec![("open", open), ("open, top only", single)];
        for (name, cell) in ["orthorhombic", "triclinic"].into_iter().zip(cells) {
            let m = cell.matrix_angstrom().map(|r| r.map(|x| x * bohr));
            let g = LevelGeometry::periodic(&m, a, 1.1).unwrap();
            assert!(g.layouts.len() >= 2, "{name}: {:?}", g.layouts);
            cases.push((name, g));
        }
        for (name, g) in &cases {
            let want = g.host_levels(&q);
            let got = replay(g, &q);
            assert_levels_match(name, &got, &want);
            // The finest potential is the one the CPU engine interpolates.
            let lr = g.long_range(&q);
            assert_eq!(lr.potential, want.potentials[0], "{name}");
        }
        // The stencil table holds every stencil weight once.
        let st = cutoff_stencil(&cases[0].1.vectors_bohr, a).unwrap();
        let StencilTable { offsets, weights, .. } = stencil_table(&cases[0].1).unwrap();
        assert_eq!(offsets.len(), st.rows.len());
        assert_eq!(weights.len(), st.rows.iter().map(|r| r.weights.len()).sum::<usize>());
    }

    /// The fixed-point scale leaves room for the largest possible sum and keeps ~61 bits of it.
    #[test]
    fn fixed_scale_bounds_the_sums() {
        for sum in [1e-9, 0.3, 1.0, 7.5, 1.2e6, 3e15] {
            let s = fixed_scale(sum);
            assert!(sum * s <= 2f64.powi(61) && sum * s > 2f64.powi(59), "{sum}: {s}");
            assert_eq!(s.log2().fract(), 0.0);
        }
        assert_eq!(fixed_scale(0.0), 1.0);
    }
}
