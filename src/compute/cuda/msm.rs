//! Cutoff and multilevel-summation potentials on a CUDA device: the slab stage of an
//! [`EspPlan`] (smoothed short-range sum over binned charges plus cubic interpolation of the finest
//! MSM lattice) as one kernel, `kernels/msm.cu` (`msm_slab`, bins per point; for open boundaries on
//! request `msm_slab_block`, bins per block of points: `CudaEngine::set_msm_block_bins`).
//!
//! Owns [`MsmPrepared`] (the plan's bins, neighbour offsets and long-range lattice on the device, in
//! f32 and shifted to the bins' origin) and the launch. The binning and the long-range levels are
//! done on the host by `compute::esp` before the request reaches the pool by default, or, for a
//! plan built with `StagesOn::Engine`, here on the device from the plan's bin frame and level
//! geometry ([`super::msm_bins`], [`super::msm_levels`]) when the plan is prepared. The slab kernel does the per-point work,
//! which is what grows with the map (a 0.5 A map of a 1.5-million-atom box has 10^8 points, each
//! summing ~10^3 charges). Called by [`CudaEngine`]'s
//! slab path for [`crate::compute::FieldInput::Electrostatics`]; tested against the CPU engine
//! (`EspPlan::fill_slab`) in `tests/gpu_engine.rs`.

use super::engine::EngineState;
use super::{CudaEngine, dev_err};
use crate::compute::esp::EspPlan;
use crate::compute::esp::bins::AtomBins;
use crate::compute::esp::kernel::reciprocal;
use crate::compute::{ComputeError, Field, FieldJob, slab_len};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};
use std::ops::Range;

/// `kernels/msm.cu`, embedded at build time.
pub const MSM_SRC: &str = include_str!("../../../kernels/msm.cu");

/// 8 x 8 points per block: a warp covers 8 x 4 points (4 x 2 A at 0.5 A spacing), so its threads
/// mostly visit the same bins and loop the same number of times.
const BLOCK: (u32, u32) = (8, 8);

/// Arguments of `msm_slab`. Twin: `struct MsmArgs` in `kernels/msm.cu` (same order; every field is
/// 4 bytes, so the layouts agree without padding).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MsmArgs {
    lat_o: [f32; 3],
    lat_s: [[f32; 3]; 3],
    nx: i32,
    ny: i32,
    k0: i32,
    nz: i32,
    bin_inv: [[f32; 3]; 3],
    bin_v: [[f32; 3]; 3],
    bcount: [i32; 3],
    periodic: i32,
    cell: [[f32; 3]; 3],
    cell_inv: [[f32; 3]; 3],
    a2: f32,
    inv_a: f32,
    inv_a2: f32,
    reach2: f32,
    min2: f32,
    n_neigh: i32,
    has_lr: i32,
    lr_periodic: i32,
    lr_o: [f32; 3],
    lr_inv: [[f32; 3]; 3],
    lr_lo: [i32; 3],
    lr_dims: [i32; 3],
}

// SAFETY: `#[repr(C)]` plain 4-byte fields in the order of `MsmArgs` in kernels/msm.cu.
unsafe impl cudarc::driver::DeviceRepr for MsmArgs {}

/// A plan on the device.
pub struct MsmPrepared {
    atoms: CudaSlice<f32>,
    start: CudaSlice<i32>,
    neigh: CudaSlice<i32>,
    lr: CudaSlice<f32>,
    /// Everything but the target lattice and slab.
    args: MsmArgs,
    /// The bins' origin (bohr): every device coordinate is relative to it.
    origin_bohr: [f64; 3],
}

fn m3(m: &[[f64; 3]; 3]) -> [[f32; 3]; 3] {
    m.map(|r| r.map(|x| x as f32))
}

fn too_big(what: &str) -> ComputeError {
    ComputeError::Device(format!("{what} too large for the GPU kernel's 32-bit indices"))
}

/// The kernel arguments that come from the bins (the target lattice and long range unset).
fn bin_args(b: &AtomBins) -> Result<MsmArgs, ComputeError> {
    let a = b.cutoff_bohr;
    let reach = a + 0.5 * b.diagonal_bohr;
    let (cell, cell_inv, periodic) = match &b.cell_bohr {
        Some(c) => (
            *c,
            reciprocal(c).ok_or_else(|| ComputeError::Device("degenerate periodic cell".into()))?,
            1,
        ),
        None => ([[0.0; 3]; 3], [[0.0; 3]; 3], 0),
    };
    let min = crate::compute::cpu::potential::MIN_DISTANCE_BOHR;
    let args = MsmArgs {
        bin_inv: m3(&b.inverse),
        bin_v: m3(&b.vectors_bohr),
        bcount: b.counts.map(|c| c.min(i32::MAX as usize) as i32),
        periodic,
        cell: m3(&cell),
        cell_inv: m3(&cell_inv),
        a2: (a * a) as f32,
        inv_a: (1.0 / a) as f32,
        inv_a2: (1.0 / (a * a)) as f32,
        reach2: (reach * reach) as f32,
        min2: (min * min) as f32,
        n_neigh: b.neighbours.len().min(i32::MAX as usize) as i32,
        ..MsmArgs::default()
    };
    Ok(args)
}

/// `args` with the target lattice and slab `z_range` set (coordinates relative to `origin_bohr`).
fn slab_args(
    mut args: MsmArgs,
    l: &crate::model::Lattice,
    origin_bohr: [f64; 3],
    z_range: &Range<usize>,
) -> Result<MsmArgs, ComputeError> {
    args.lat_o = [0, 1, 2].map(|k| (l.origin_bohr[k] - origin_bohr[k]) as f32);
    args.lat_s = m3(&l.steps_bohr);
    args.nx = i32::try_from(l.dims[0]).map_err(|_| too_big("the lattice"))?;
    args.ny = i32::try_from(l.dims[1]).map_err(|_| too_big("the lattice"))?;
    args.k0 = i32::try_from(z_range.start).map_err(|_| too_big("the lattice"))?;
    args.nz = i32::try_from(z_range.len()).map_err(|_| too_big("the lattice"))?;
    Ok(args)
}

impl CudaEngine {
    /// Uploads `plan` (bins, neighbour offsets, long-range lattice), binning the charges and
    /// computing the long-range levels on the device when the plan left them to the engine.
    pub(super) fn prepare_msm(&self, st: &mut EngineState, plan: &EspPlan) -> Result<MsmPrepared, ComputeError> {
        let b = plan.bin_frame();
        let o = b.origin_bohr;
        let up = |what: &'static str| dev_err(what);
        // The binned charges: the host's when it has binned them, else sorted on the device
        // (`super::msm_bins`).
        let (atoms, start) = match plan.bins_computed() {
            Some(host) => {
                let n = host.charges_e.len();
                if n >= i32::MAX as usize || host.start.len() >= i32::MAX as usize {
                    return Err(too_big("the charge set"));
                }
                let (start, mut atoms) = super::msm_bins::host_bin_arrays(host);
                if atoms.is_empty() {
                    atoms.extend_from_slice(&[0.0; 4]);
                }
                (
                    self.stream.clone_htod(&atoms).map_err(up("upload charges"))?,
                    self.stream.clone_htod(&start).map_err(up("upload bins"))?,
                )
            }
            None => {
                let d = self.run_msm_bins(st, b, plan.charges())?;
                (d.atoms, d.start)
            }
        };
        let mut neigh: Vec<i32> = Vec::with_capacity(4 * b.neighbours.len().max(1));
        for d in &b.neighbours {
            let c: [i32; 3] = d.map(|x| x.clamp(i32::MIN as i64, i32::MAX as i64) as i32);
            neigh.extend_from_slice(&[c[0], c[1], c[2], 0]);
        }
        if neigh.is_empty() {
            neigh.extend_from_slice(&[0; 4]);
        }
        let mut args = bin_args(b)?;
        // The finest long-range lattice: the host's when it has computed it, else every level on
        // the device (`super::msm_levels`).
        let mut lr: Option<CudaSlice<f32>> = None;
        if let Some(g) = &plan.levels {
            let finest = g.finest();
            if finest.len() >= i32::MAX as usize {
                return Err(too_big("the MSM lattice"));
            }
            lr = Some(match plan.long_range_computed() {
                Some(host) => {
                    let mut values: Vec<f32> = host.potential.iter().map(|&v| v as f32).collect();
                    if values.is_empty() {
                        values.push(0.0);
                    }
                    self.stream.clone_htod(&values).map_err(up("upload MSM lattice"))?
                }
                None => {
                    let module = self.module(st, super::msm_levels::MSM_LEVELS_SRC)?;
                    self.run_msm_levels(&module, g, plan.charges())?.finest_f32
                }
            });
            args.has_lr = 1;
            args.lr_periodic = i32::from(g.periodic);
            args.lr_o = [0, 1, 2].map(|k| (g.origin_bohr[k] - o[k]) as f32);
            args.lr_inv = m3(&g.inverse);
            args.lr_lo = finest.lo.map(|x| x.clamp(i32::MIN as i64, i32::MAX as i64) as i32);
            args.lr_dims = finest.dims.map(|d| d.min(i32::MAX as usize) as i32);
        }
        let lr = match lr {
            Some(lr) => lr,
            None => self.stream.clone_htod(&[0.0f32]).map_err(up("upload MSM lattice"))?,
        };
        Ok(MsmPrepared {
            atoms,
            start,
            neigh: self.stream.clone_htod(&neigh).map_err(up("upload neighbours"))?,
            lr,
            args,
            origin_bohr: o,
        })
    }

    /// Fills the engine's output buffer with slab `z_range` of `job.lattice`.
    pub(super) fn launch_msm(
        &self,
        out: &mut CudaSlice<f32>,
        module: &std::sync::Arc<cudarc::driver::CudaModule>,
        p: &MsmPrepared,
        job: &FieldJob,
        z_range: &Range<usize>,
    ) -> Result<(), ComputeError> {
        if job.field != Field::Potential {
            return Err(ComputeError::WrongInput(job.field.clone(), "point charges"));
        }
        let l = &job.lattice;
        let n = slab_len(l, z_range);
        if n == 0 {
            return Ok(());
        }
        let name = if self.msm_block_bins() && p.args.periodic == 0 {
            "msm_slab_block"
        } else {
            "msm_slab"
        };
        let f = CudaEngine::function(module, name)?;
        let args = slab_args(p.args, l, p.origin_bohr, z_range)?;
        let cfg = LaunchConfig {
            grid_dim: (
                (args.nx as u32).div_ceil(BLOCK.0),
                (args.ny as u32).div_ceil(BLOCK.1),
                args.nz as u32,
            ),
            block_dim: (BLOCK.0, BLOCK.1, 1),
            shared_mem_bytes: 0,
        };
        if cfg.grid_dim.1 > 65535 || cfg.grid_dim.2 > 65535 {
            return Err(ComputeError::Device("lattice too large for one launch".into()));
        }
        let mut b = self.stream.launch_builder(&f);
        b.arg(out)
            .arg(&p.start)
            .arg(&p.atoms)
            .arg(&p.neigh)
            .arg(&p.lr)
            .arg(&args);
        // SAFETY: writes the slab's `n` points into the output buffer (at least `n` long, checked by
        // the caller); reads bins, charges and neighbours within the sizes uploaded above (bin
        // indices are wrapped or range-checked in the kernel, `start` has one entry per bin plus one).
        unsafe { b.launch(cfg) }.map_err(dev_err("msm_slab launch"))?;
        Ok(())
    }
}

#[cfg(test)]
// Index loops on purpose: the bin choice is written as `msm_slab_block` computes it.
#[allow(clippy::needless_range_loop)]
mod tests {
    use super::*;
    use crate::compute::esp::bins::AtomBins;
    use crate::model::Lattice;

    /// The bins `msm_slab_block` visits for block `(bx, by)` of slab plane `kk`, as the kernel
    /// chooses them (f32).
    fn block_bins(g: &MsmArgs, bx: i32, by: i32, kk: i32) -> Vec<usize> {
        let (bdx, bdy) = (BLOCK.0 as i32, BLOCK.1 as i32);
        let k = g.k0 + kk;
        let (i0, j0) = (bx * bdx, by * bdy);
        let (i1, j1) = ((i0 + bdx).min(g.nx) - 1, (j0 + bdy).min(g.ny) - 1);
        let mut lo = [3.0e38f32; 3];
        let mut hi = [-3.0e38f32; 3];
        for c in 0..4 {
            let ci = if c & 1 != 0 { i1 } else { i0 };
            let cj = if c & 2 != 0 { j1 } else { j0 };
            for a in 0..3 {
                let x = g.lat_o[a] + ci as f32 * g.lat_s[0][a] + cj as f32 * g.lat_s[1][a] + k as f32 * g.lat_s[2][a];
                lo[a] = lo[a].min(x);
                hi[a] = hi[a].max(x);
            }
        }
        let cut = g.a2.sqrt();
        let big = lo.iter().chain(&hi).fold(0.0f32, |m, v| m.max(v.abs()));
        let reach = cut + 1e-3 * cut + 1e-6 * big;
        let mut b0 = [0i32; 3];
        let mut b1 = [0i32; 3];
        let mut w = [0.0f32; 3];
        for a in 0..3 {
            w[a] = g.bin_v[a][a];
            b0[a] = 0.max(((lo[a] - reach) / w[a]).floor() as i32 - 1);
            b1[a] = (g.bcount[a] - 1).min(((hi[a] + reach) / w[a]).floor() as i32 + 1);
        }
        let gap = |c: i32, a: usize| 0.0f32.max((c as f32 * w[a] - hi[a]).max(lo[a] - (c + 1) as f32 * w[a]));
        let reach2 = reach * reach;
        let mut out = Vec::new();
        for cz in b0[2]..=b1[2] {
            let gz = gap(cz, 2);
            if gz * gz > reach2 {
                continue;
            }
            for cy in b0[1]..=b1[1] {
                let gy = gap(cy, 1);
                if gy * gy + gz * gz > reach2 {
                    continue;
                }
                for cx in b0[0]..=b1[0] {
                    let gx = gap(cx, 0);
                    if gx * gx + gy * gy + gz * gz > reach2 {
                        continue;
                    }
                    out.push((cx + g.bcount[0] * (cy + g.bcount[1] * cz)) as usize);
                }
            }
        }
        out
    }

    /// Every charge within the cutoff of a point lies in a bin the point's block visits, and the
    /// short-range sum over those bins (f64) is the host's, for a sheared map lattice that reaches
    /// beyond the charges.
    #[test]
    fn block_bins_hold_every_charge_within_the_cutoff() {
        let mut next = crate::compute::cuda::test_numbers();
        let positions: Vec<[f64; 3]> = (0..1200)
            .map(|_| [next() * 60.0 - 10.0, next() * 50.0, next() * 40.0 + 5.0])
            .collect();
        let charges: Vec<f64> = positions.iter().map(|_| next() - 0.5).collect();
        let a = 12.0;
        let bins = AtomBins::open(&positions, &charges, a).unwrap();
        let lattice = Lattice {
            origin_bohr: [-14.0, -3.0, 2.0],
            steps_bohr: [[1.7, 0.2, 0.0], [0.3, 1.9, 0.1], [0.0, -0.2, 2.3]],
            dims: [27, 21, 19],
        };
        let z = 3..6;
        let g = slab_args(bin_args(&bins).unwrap(), &lattice, bins.origin_bohr, &z).unwrap();
        let mut bin_of_slot = vec![0usize; bins.charges_e.len()];
        for b in 0..bins.n_bins() {
            for m in bins.start[b]..bins.start[b + 1] {
                bin_of_slot[m] = b;
            }
        }
        let (mut points, mut pairs) = (0usize, 0usize);
        for kk in 0..z.len() as i32 {
            for by in 0..(g.ny as u32).div_ceil(BLOCK.1) as i32 {
                for bx in 0..(g.nx as u32).div_ceil(BLOCK.0) as i32 {
                    let visited = block_bins(&g, bx, by, kk);
                    for tj in 0..BLOCK.1 as i32 {
                        for ti in 0..BLOCK.0 as i32 {
                            let (i, j) = (bx * BLOCK.0 as i32 + ti, by * BLOCK.1 as i32 + tj);
                            if i >= g.nx || j >= g.ny {
                                continue;
                            }
                            let p = lattice.point_bohr(i as usize, j as usize, z.start + kk as usize);
                            let mut sum = 0.0;
                            for m in 0..bins.charges_e.len() {
                                let x = [bins.x_bohr[m], bins.y_bohr[m], bins.z_bohr[m]];
                                let r = ((p[0] - x[0]).powi(2) + (p[1] - x[1]).powi(2) + (p[2] - x[2]).powi(2)).sqrt();
                                let seen = visited.contains(&bin_of_slot[m]);
                                if r < a {
                                    pairs += 1;
                                    assert!(seen, "charge {m} at {r} bohr of point ({i}, {j}, {kk}) is not visited");
                                }
                                if seen && r < a {
                                    let r = r.max(crate::compute::cpu::potential::MIN_DISTANCE_BOHR);
                                    sum += bins.charges_e[m] * (1.0 / r - crate::compute::esp::kernel::smooth(r, a));
                                }
                            }
                            let want = bins.short_range_at(p);
                            assert!((sum - want).abs() <= 1e-9 * want.abs().max(1.0), "{sum} vs {want}");
                            points += 1;
                        }
                    }
                }
            }
        }
        assert!(
            points == 27 * 21 * 3 && pairs > 10 * points,
            "{points} points, {pairs} pairs"
        );
    }
}
