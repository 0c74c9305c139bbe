//! Implicit ligand sampling on a CUDA device: one frame's voxel means of the probe occupancy.
//!
//! Owns [`IlsArgs`] (twin of `struct IlsArgs` in `kernels/ils.cu`), [`DeviceAtoms`] (the placed atoms
//! relative to the first sample point, sorted into [`BIN_ANGSTROM`] bins, in the kernel's float4 +
//! float2 layout; built on the host, tested without a GPU) and [`CudaEngine::ils_voxel_means`]
//! (uploads, the orientations in constant memory in chunks, the sample kernel, the voxel kernel,
//! download). The kernel's numbers: f32 with the SFU's reciprocal and `__expf`; held to the float64
//! reference within 1e-4 kT where the map is below 10 kT (`tests/ils.rs`). Called by `jobs::ils` on
//! each GPU worker's own engine.

use super::{CudaEngine, dev_err};
use crate::compute::ComputeError;
use crate::compute::ils::{Bins, IlsSetup, PlacedAtoms};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

/// `kernels/ils.cu`, embedded at build time.
pub const ILS_SRC: &str = include_str!("../../../kernels/ils.cu");
/// `ILS_MAX_OFF`, `ILS_MAX_PROBE`, `ILS_BX`, `ILS_BY`, `ILS_BZ` in `kernels/ils.cu`.
const MAX_OFF: usize = 2048;
const MAX_PROBE: usize = 16;
const BLOCK: (u32, u32, u32) = (8, 4, 4);
/// Bin edge of the device's atom bins, Angstrom.
pub const BIN_ANGSTROM: f64 = 3.0;

/// `struct IlsArgs` in `kernels/ils.cu` (same field order).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IlsArgs {
    pub nx: i32,
    pub ny: i32,
    pub nz: i32,
    pub vx: i32,
    pub vy: i32,
    pub vz: i32,
    pub s: i32,
    pub classes: i32,
    pub bx: i32,
    pub by: i32,
    pub bz: i32,
    pub step: f32,
    pub bin: f32,
    pub blo_x: f32,
    pub blo_y: f32,
    pub blo_z: f32,
    pub reach: f32,
    pub cutoff2: f32,
    pub excl_reach: f32,
    pub n_orient: i32,
    pub n_probe: i32,
    pub accumulate: i32,
}

// SAFETY: `#[repr(C)]` 4-byte integers and floats, the layout of `IlsArgs` in kernels/ils.cu.
unsafe impl cudarc::driver::DeviceRepr for IlsArgs {}

/// One frame's atoms in the kernel's layout.
#[derive(Clone, Debug, Default)]
pub struct DeviceAtoms {
    /// x, y, z relative to the first sample point (Angstrom), sqrt(eps_i / kT); in bin order.
    pub atoms: Vec<[f32; 4]>,
    /// rmin_i / 2, squared exclusion radius; in bin order.
    pub params: Vec<[f32; 2]>,
    /// Start of each bin in `atoms` (bins + 1 entries).
    pub starts: Vec<i32>,
    pub args: IlsArgs,
}

impl DeviceAtoms {
    /// Lays out `placed` for `setup` (the orientation fields of `args` are the launch's).
    pub fn new(setup: &IlsSetup, placed: &PlacedAtoms) -> Result<DeviceAtoms, ComputeError> {
        let map = setup.map;
        let s = setup.subres.max(1);
        let h = map.spacing_angstrom;
        let step = h / s as f64;
        let first = [0, 1, 2].map(|k| map.origin_angstrom[k] - 0.5 * h + 0.5 * step);
        let n = [0, 1, 2].map(|k| map.dims[k] * s);
        let reach = setup.reach_angstrom();
        let rel: Vec<[f64; 3]> = placed
            .positions_angstrom
            .iter()
            .map(|p| [p[0] - first[0], p[1] - first[1], p[2] - first[2]])
            .collect();
        let lo = [-reach; 3];
        let hi = [0, 1, 2].map(|k| (n[k].max(1) - 1) as f64 * step + reach);
        let bins = Bins::new(&rel, lo, hi, BIN_ANGSTROM);
        let kt = setup.kt_kcal_per_mol();
        let excl: Vec<f64> = setup
            .atom_lj
            .iter()
            .map(|&lj| setup.exclusion_radius_angstrom(lj))
            .collect();
        let mut atoms = Vec::with_capacity(rel.len());
        let mut params = Vec::with_capacity(rel.len());
        for &a in &bins.order {
            let (Some(p), Some(&t)) = (rel.get(a as usize), placed.params.get(a as usize)) else {
                continue;
            };
            let lj = setup.atom_lj.get(t as usize).copied().unwrap_or_default();
            let r = excl.get(t as usize).copied().unwrap_or(0.0);
            atoms.push([
                p[0] as f32,
                p[1] as f32,
                p[2] as f32,
                (lj.eps_kcal_per_mol / kt).sqrt() as f32,
            ]);
            params.push([lj.rmin_half_angstrom as f32, (r * r) as f32]);
        }
        let to_i32 = |v: usize, what: &str| {
            i32::try_from(v).map_err(|_| ComputeError::Device(format!("{what} {v} too large for the ILS kernel")))
        };
        let starts = bins
            .starts
            .iter()
            .map(|&x| to_i32(x as usize, "atom count"))
            .collect::<Result<Vec<_>, _>>()?;
        let excl_reach = excl.iter().copied().fold(0.0, f64::max);
        let args = IlsArgs {
            nx: to_i32(n[0], "sample points")?,
            ny: to_i32(n[1], "sample points")?,
            nz: to_i32(n[2], "sample points")?,
            vx: to_i32(map.dims[0], "voxels")?,
            vy: to_i32(map.dims[1], "voxels")?,
            vz: to_i32(map.dims[2], "voxels")?,
            s: to_i32(s, "subres")?,
            classes: to_i32(setup.orientations.classes.max(1), "sample classes")?,
            bx: to_i32(bins.dims[0], "bins")?,
            by: to_i32(bins.dims[1], "bins")?,
            bz: to_i32(bins.dims[2], "bins")?,
            step: step as f32,
            bin: BIN_ANGSTROM as f32,
            blo_x: lo[0] as f32,
            blo_y: lo[1] as f32,
            blo_z: lo[2] as f32,
            reach: reach as f32,
            cutoff2: (setup.cutoff_angstrom * setup.cutoff_angstrom) as f32,
            excl_reach: excl_reach as f32,
            n_orient: 0,
            n_probe: to_i32(setup.orientations.atoms_per_orientation, "probe atoms")?,
            accumulate: 0,
        };
        Ok(DeviceAtoms {
            atoms,
            params,
            starts,
            args,
        })
    }
}

impl CudaEngine {
    /// One frame's voxel means of the occupancy on this device (x fastest, one per voxel).
    pub fn ils_voxel_means(&self, setup: &IlsSetup, placed: &PlacedAtoms) -> Result<Vec<f64>, ComputeError> {
        let p = setup.orientations.atoms_per_orientation;
        if p == 0 || p > MAX_PROBE {
            return Err(ComputeError::Device(format!(
                "the ILS kernel takes probes of 1 to {MAX_PROBE} atoms, not {p}"
            )));
        }
        let dev = DeviceAtoms::new(setup, placed)?;
        let n_voxels = setup.map.n_voxels();
        let n_samples = (dev.args.nx as usize) * (dev.args.ny as usize) * (dev.args.nz as usize);
        let mut st = self.lock_state()?;
        let module = self.module(&mut st, ILS_SRC)?;
        drop(st);
        let samples_fn = CudaEngine::function(&module, "ils_samples")?;
        let voxels_fn = CudaEngine::function(&module, "ils_voxels")?;
        let kt = setup.kt_kcal_per_mol();
        let probe: Vec<f32> = setup
            .probe
            .atoms
            .iter()
            .flat_map(|a| {
                [
                    (a.lj.eps_kcal_per_mol / kt).sqrt() as f32,
                    a.lj.rmin_half_angstrom as f32,
                ]
            })
            .collect();
        super::engine::copy_symbol(&module, &self.stream, "ils_probe", &probe)?;
        // Device buffers (at least one element each).
        let atoms_flat: Vec<f32> = if dev.atoms.is_empty() {
            vec![0.0; 4]
        } else {
            dev.atoms.iter().flatten().copied().collect()
        };
        let params_flat: Vec<f32> = if dev.params.is_empty() {
            vec![0.0; 2]
        } else {
            dev.params.iter().flatten().copied().collect()
        };
        let atoms_d: CudaSlice<f32> = self.stream.clone_htod(&atoms_flat).map_err(dev_err("upload"))?;
        let params_d: CudaSlice<f32> = self.stream.clone_htod(&params_flat).map_err(dev_err("upload"))?;
        let starts_d: CudaSlice<i32> = self.stream.clone_htod(&dev.starts).map_err(dev_err("upload"))?;
        let mut samples_d = self
            .stream
            .alloc_zeros::<f32>(n_samples.max(1))
            .map_err(dev_err("allocation"))?;
        let mut voxels_d = self
            .stream
            .alloc_zeros::<f32>(n_voxels.max(1))
            .map_err(dev_err("allocation"))?;
        let s3 = (setup.subres.max(1) as u32).pow(3);
        let grid = (
            (dev.args.vx as u32).div_ceil(BLOCK.0),
            (dev.args.vy as u32).div_ceil(BLOCK.1),
            (dev.args.vz as u32).div_ceil(BLOCK.2) * s3,
        );
        if grid.1 > 65535 || grid.2 > 65535 {
            return Err(ComputeError::Device("ILS map too large for one launch".into()));
        }
        let cfg = LaunchConfig {
            grid_dim: grid,
            block_dim: BLOCK,
            shared_mem_bytes: 0,
        };
        let o = &setup.orientations;
        let classes = o.classes.max(1);
        let per_launch = MAX_OFF / (p * classes);
        if per_launch == 0 {
            return Err(ComputeError::Device(format!(
                "{classes} sample classes of {p} probe atoms do not fit the ILS kernel's constant memory ({MAX_OFF} offsets)"
            )));
        }
        let n_orient = o.evaluated();
        let mut first = 0;
        while first < n_orient {
            let count = per_launch.min(n_orient - first);
            let mut chunk: Vec<f32> = Vec::with_capacity(classes * count * p * 4);
            for class in 0..classes {
                for or in first..first + count {
                    for j in 0..p {
                        let v = o.offset(class, or, j);
                        chunk.extend([v[0] as f32, v[1] as f32, v[2] as f32, 0.0]);
                    }
                }
            }
            super::engine::copy_symbol(&module, &self.stream, "ils_off", &chunk)?;
            let args = IlsArgs {
                n_orient: count as i32,
                accumulate: i32::from(first > 0),
                ..dev.args
            };
            let mut l = self.stream.launch_builder(&samples_fn);
            l.arg(&atoms_d)
                .arg(&params_d)
                .arg(&starts_d)
                .arg(&args)
                .arg(&mut samples_d);
            // SAFETY: atoms and params hold the binned atoms that `starts` (bins + 1 entries, the last
            // the atom count) indexes; the kernel writes nx * ny * nz samples into a buffer of that
            // size; the constant offsets hold `classes * count * n_probe` float4.
            unsafe { l.launch(cfg) }.map_err(dev_err("ils_samples launch"))?;
            first += count;
        }
        let s = setup.subres.max(1) as i32;
        let scale = 1.0f32 / n_orient.max(1) as f32;
        let (vx, vy, vz) = (
            setup.map.dims[0] as i32,
            setup.map.dims[1] as i32,
            setup.map.dims[2] as i32,
        );
        {
            let mut l = self.stream.launch_builder(&voxels_fn);
            l.arg(&samples_d)
                .arg(&dev.args.nx)
                .arg(&dev.args.ny)
                .arg(&s)
                .arg(&scale)
                .arg(&mut voxels_d)
                .arg(&vx)
                .arg(&vy)
                .arg(&vz);
            // SAFETY: reads the nx * ny * nz samples, writes one value per voxel into a buffer of
            // `n_voxels`.
            unsafe { l.launch(LaunchConfig::for_num_elems(n_voxels.max(1) as u32)) }
                .map_err(dev_err("ils_voxels launch"))?;
        }
        let out = self.stream.clone_dtoh(&voxels_d).map_err(dev_err("download"))?;
        self.stream.synchronize().map_err(dev_err("synchronize"))?;
        let values: Vec<f64> = out.iter().take(n_voxels).map(|&v| f64::from(v)).collect();
        if values.iter().any(|v| !v.is_finite()) {
            return Err(ComputeError::NotFinite);
        }
        Ok(values)
    }
}
