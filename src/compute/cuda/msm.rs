//! Cutoff and multilevel-summation potentials on a CUDA device: the slab stage of an
//! [`EspPlan`] (smoothed short-range sum over binned charges plus cubic interpolation of the finest
//! MSM lattice) as one kernel of `kernels/msm.cu`: `msm_tiles` (tiles of points sharing staged
//! charges, the default) or `msm_slab` (a thread per point; [`MsmKernel`]).
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

/// `msm_slab`: 8 x 8 points per block: a warp covers 8 x 4 points (4 x 2 A at 0.5 A spacing), so
/// its threads mostly visit the same bins and loop the same number of times.
const BLOCK: (u32, u32) = (8, 8);

/// `msm_tiles`: threads per block along the first two lattice axes and points per thread along the
/// third (`MSM_TX`, `MSM_TY`, `MSM_TZ` in `kernels/msm.cu`).
const TILE: (u32, u32, u32) = (16, 8, 4);

/// Which short-range kernel fills a slab.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MsmKernel {
    /// `msm_tiles`: a block per tile of 16 x 8 x 4 points, the charges of the bins near the tile
    /// staged in shared memory (the default).
    Tiles,
    /// `msm_slab`: a thread per point reading its own bins' charges.
    Points,
}

impl MsmKernel {
    /// `ORBITFIELD_MSM_KERNEL=points` selects `msm_slab`; anything else, or nothing, `msm_tiles`.
    pub fn from_env() -> MsmKernel {
        match std::env::var("ORBITFIELD_MSM_KERNEL").as_deref() {
            Ok("points") => MsmKernel::Points,
            _ => MsmKernel::Tiles,
        }
    }
}

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
    /// The short-range kernel that fills this plan's slabs (chosen once per request).
    kernel: MsmKernel,
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
    let min = crate::compute::MIN_DISTANCE_BOHR;
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

impl CudaEngine {
    /// Uploads `plan` (bins, neighbour offsets, long-range lattice), binning the charges and
    /// computing the long-range levels on the device when the plan left them to the engine.
    pub(super) fn prepare_msm(&self, st: &mut EngineState, plan: &EspPlan) -> Result<MsmPrepared, ComputeError> {
        if !plan.dielectric().is_vacuum() {
            return Err(ComputeError::BadInput(format!(
                "the CUDA cutoff kernel sums 1/r only; the {} model's cutoff map needs the CPU engine \
                 (--device cpu) or the direct method",
                plan.dielectric().label()
            )));
        }
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
            kernel: MsmKernel::from_env(),
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
        let kernel = p.kernel;
        let f = CudaEngine::function(
            module,
            match kernel {
                MsmKernel::Tiles => "msm_tiles",
                MsmKernel::Points => "msm_slab",
            },
        )?;
        let mut args = p.args;
        args.lat_o = [0, 1, 2].map(|k| (l.origin_bohr[k] - p.origin_bohr[k]) as f32);
        args.lat_s = m3(&l.steps_bohr);
        args.nx = i32::try_from(l.dims[0]).map_err(|_| too_big("the lattice"))?;
        args.ny = i32::try_from(l.dims[1]).map_err(|_| too_big("the lattice"))?;
        args.k0 = i32::try_from(z_range.start).map_err(|_| too_big("the lattice"))?;
        args.nz = i32::try_from(z_range.len()).map_err(|_| too_big("the lattice"))?;
        let cfg = match kernel {
            MsmKernel::Points => LaunchConfig {
                grid_dim: (
                    (args.nx as u32).div_ceil(BLOCK.0),
                    (args.ny as u32).div_ceil(BLOCK.1),
                    args.nz as u32,
                ),
                block_dim: (BLOCK.0, BLOCK.1, 1),
                shared_mem_bytes: 0,
            },
            // Tiles along the third axis are aligned to plane 0 (see `kernels/msm.cu`): from the one
            // holding the slab's first plane to the one holding its last.
            MsmKernel::Tiles => {
                let first = z_range.start as u32 / TILE.2;
                let last = (z_range.end as u32 - 1) / TILE.2;
                LaunchConfig {
                    grid_dim: (
                        (args.nx as u32).div_ceil(TILE.0),
                        (args.ny as u32).div_ceil(TILE.1),
                        last - first + 1,
                    ),
                    block_dim: (TILE.0, TILE.1, 1),
                    shared_mem_bytes: 0,
                }
            }
        };
        if cfg.grid_dim.1 > 65535 || cfg.grid_dim.2 > 65535 {
            return Err(ComputeError::Device("lattice too large for one launch".into()));
        }
        if kernel == MsmKernel::Tiles {
            let mut b = self.stream.launch_builder(&f);
            b.arg(out).arg(&p.start).arg(&p.atoms).arg(&p.lr).arg(&args);
            // SAFETY: writes only the slab's points (planes k0 .. k0 + nz) into the output buffer (at
            // least `n` long, checked by the caller); reads bins and charges within the sizes
            // uploaded above (bin indices are wrapped or range-checked in the kernel, `start` has one
            // entry per bin plus one).
            unsafe { b.launch(cfg) }.map_err(dev_err("msm_tiles launch"))?;
            return Ok(());
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
