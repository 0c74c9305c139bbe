//! Implicit ligand sampling on a CUDA device: one frame's voxel means of the probe occupancy.
//!
//! Owns [`IlsArgs`] (twin of `struct IlsArgs` in `kernels/ils.cu`), [`DeviceAtoms`] (the placed atoms
//! with a dispersion term, relative to the first sample point, sorted into [`BIN_ANGSTROM`] bins, in
//! the kernel's layout of two float4 per atom, each position split into the nearest float and its
//! remainder; built on the host, tested without a GPU) and
//! [`CudaEngine::ils_voxel_means`] (uploads, the exclusion bound per region of 4 x 4 x 4 sample
//! points, the scan of the kept points, the point kernel over them, the voxel kernel, download; see
//! `kernels/ils.cu`). The kernel's numbers: f32 with the SFU's reciprocal, positions relative to each
//! block's own box (formed in double from the two floats); held to the float64 reference within
//! 1e-4 kT where the map is below 10 kT (`tests/ils.rs`, and `tests/ils_large_map.rs` on a
//! 73 x 87 x 62 A map, where positions relative to the map's first sample point rounded to float32
//! were not). Excluded points (a lower bound on every orientation's energy above the cap plus
//! [`BOUND_MARGIN_KT`]) add 0, as `compute::ils` defines. Called by `jobs::ils` on each GPU worker's
//! own engine.

use super::{CudaEngine, dev_err};
use crate::compute::ComputeError;
use crate::compute::ils::{BOUND_MARGIN_KT, Bins, IlsSetup, PlacedAtoms};
use cudarc::driver::{CudaSlice, DevicePtr, DevicePtrMut, LaunchConfig, PinnedHostSlice, PushKernelArg};
use std::time::Instant;

/// `kernels/ils.cu`, embedded at build time.
pub const ILS_SRC: &str = include_str!("../../../kernels/ils.cu");
/// `ILS_MAX_PROBE` and `ILS_BLOCK` in `kernels/ils.cu`.
const MAX_PROBE: usize = 16;
const BLOCK: u32 = 64;
/// Atoms the point kernel's shared tile holds (20 bytes each): 20 KB lets about ten blocks share an
/// SM (`benches/RESULTS.md`, "Four threads per point").
const TILE_ATOMS: usize = 1024;
/// Orientations per pass of the point kernel: the `ils_points_k*_g1` instances of `kernels/ils.cu`.
const BATCHES: [usize; 7] = [17, 16, 15, 13, 10, 8, 1];
/// The same with four orientation groups per point: the `ils_points_k*_g4` instances.
const BATCHES_G4: [usize; 6] = [17, 16, 15, 13, 10, 8];
/// Orientations from which the point kernel splits each point's orientations over four threads.
const GROUPS_FROM: usize = 32;
/// Bin edge of the device's atom bins, Angstrom.
pub const BIN_ANGSTROM: f64 = 3.0;

/// `struct IlsArgs` in `kernels/ils.cu` (same field order).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct IlsArgs {
    pub nx: i32,
    pub ny: i32,
    pub nz: i32,
    pub rx: i32,
    pub ry: i32,
    pub rz: i32,
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
    pub cutoff: f32,
    pub cutoff2: f32,
    pub reach: f32,
    pub a_max: f32,
    pub near: f32,
    pub threshold: f32,
    pub n_orient: i32,
    pub n_probe: i32,
    pub tile: i32,
    pub pair: i32,
    pub joint: i32,
    pub step_lo: f32,
}

// SAFETY: `#[repr(C)]` 4-byte integers and floats, the layout of `IlsArgs` in kernels/ils.cu.
unsafe impl cudarc::driver::DeviceRepr for IlsArgs {}

/// One frame's atoms in the kernel's layout.
#[derive(Clone, Debug, Default)]
pub struct DeviceAtoms {
    /// x, y, z relative to the first sample point (Angstrom), each the float nearest the position, and
    /// sqrt(eps_i / kT) (> 0); in bin order.
    pub atoms: Vec<[f32; 4]>,
    /// The remainders of x, y, z (position minus the float of `atoms`, Angstrom) and rmin_i / 2
    /// (Angstrom); in bin order.
    pub lows: Vec<[f32; 4]>,
    /// Start of each bin in `atoms` (bins + 1 entries).
    pub starts: Vec<i32>,
    pub args: IlsArgs,
}

/// The point kernel for `n` orientations: (orientations per pass K, orientation groups G). Each
/// thread takes ceil(n / G) orientations in passes of K: the fewest evaluations, counting each pass's
/// streaming of the atoms as two.
pub fn batch_for(n: usize) -> (usize, usize) {
    let groups = if n >= GROUPS_FROM { 4 } else { 1 };
    let per_thread = n.div_ceil(groups);
    let set: &[usize] = if groups == 4 { &BATCHES_G4 } else { &BATCHES };
    let k = set
        .iter()
        .copied()
        .min_by_key(|&k| per_thread.div_ceil(k) * (k + 2))
        .unwrap_or(1);
    (k, groups)
}

/// True for a probe of two atoms with the same parameters at o and -o in every orientation (O2): the
/// kernel streams them together.
fn alike_pair(setup: &IlsSetup) -> bool {
    let o = &setup.orientations;
    let atoms = &setup.probe.atoms;
    if o.atoms_per_orientation != 2 || atoms.len() != 2 || atoms[0].lj != atoms[1].lj {
        return false;
    }
    (0..o.classes.max(1)).all(|class| {
        (0..o.evaluated()).all(|or| {
            let (a, b) = (o.offset(class, or, 0), o.offset(class, or, 1));
            (0..3).all(|k| (a[k] + b[k]).abs() <= 1e-9 * (1.0 + a[k].abs()))
        })
    })
}

/// True for a probe of two atoms on opposite sides of the sample point on one line in every orientation
/// (o_1 = -k o_0, k > 0, or an atom at the point: O2, CO, NO): the bound pass takes their two terms
/// from one atom together (`kernels/ils.cu`).
pub fn linear_pair(setup: &IlsSetup) -> bool {
    let o = &setup.orientations;
    if o.atoms_per_orientation != 2 || setup.probe.atoms.len() != 2 {
        return false;
    }
    let radius = |j: usize| crate::model::lj::norm(setup.probe.atoms[j].offset_angstrom);
    let (a0, a1) = (radius(0), radius(1));
    // An atom at the sample point keeps its distance in every orientation: any direction will do.
    let any_direction = a0 <= 1e-12 || a1 <= 1e-12;
    (0..o.classes.max(1)).all(|class| {
        (0..o.evaluated()).all(|or| {
            let (a, b) = (o.offset(class, or, 0), o.offset(class, or, 1));
            // b = -(a1 / a0) a, to rounding (lengths as the kernel takes them: |o_j| of the probe).
            let scale = if a0 > 0.0 { a1 / a0 } else { 0.0 };
            let len_ok = (crate::model::lj::norm(a) - a0).abs() <= 1e-9 * (1.0 + a0)
                && (crate::model::lj::norm(b) - a1).abs() <= 1e-9 * (1.0 + a1);
            len_ok && (any_direction || (0..3).all(|k| (b[k] + scale * a[k]).abs() <= 1e-9 * (1.0 + a1)))
        })
    })
}

impl DeviceAtoms {
    /// Lays out `placed` for `setup` (atoms without dispersion are left out: they add nothing).
    pub fn new(setup: &IlsSetup, placed: &PlacedAtoms) -> Result<DeviceAtoms, ComputeError> {
        let map = setup.map;
        let s = setup.subres.max(1);
        let h = map.spacing_angstrom;
        let step = h / s as f64;
        let first = [0, 1, 2].map(|k| map.origin_angstrom[k] - 0.5 * h + 0.5 * step);
        let n = [0, 1, 2].map(|k| map.dims[k] * s);
        let reach = setup.reach_angstrom();
        let kt = setup.kt_kcal_per_mol();
        let mut rel: Vec<[f64; 3]> = Vec::with_capacity(placed.positions_angstrom.len());
        let mut kept: Vec<(f32, f32)> = Vec::with_capacity(placed.positions_angstrom.len());
        for (p, &t) in placed.positions_angstrom.iter().zip(&placed.params) {
            let lj = setup.atom_lj.get(t as usize).copied().unwrap_or_default();
            let se = (lj.eps_kcal_per_mol.abs() / kt).sqrt();
            if !(se > 0.0 && se.is_finite()) {
                continue;
            }
            rel.push([p[0] - first[0], p[1] - first[1], p[2] - first[2]]);
            kept.push((se as f32, lj.rmin_half_angstrom as f32));
        }
        let lo = [-reach; 3];
        let hi = [0, 1, 2].map(|k| (n[k].max(1) - 1) as f64 * step + reach);
        let bins = Bins::new(&rel, lo, hi, BIN_ANGSTROM);
        let mut atoms = Vec::with_capacity(rel.len());
        let mut lows = Vec::with_capacity(rel.len());
        for &a in &bins.order {
            let (Some(p), Some(&(se, rh))) = (rel.get(a as usize), kept.get(a as usize)) else {
                continue;
            };
            let hi = p.map(|v| v as f32);
            atoms.push([hi[0], hi[1], hi[2], se]);
            lows.push([
                (p[0] - f64::from(hi[0])) as f32,
                (p[1] - f64::from(hi[1])) as f32,
                (p[2] - f64::from(hi[2])) as f32,
                rh,
            ]);
        }
        let to_i32 = |v: usize, what: &str| {
            i32::try_from(v).map_err(|_| ComputeError::Device(format!("{what} {v} too large for the ILS kernel")))
        };
        let starts = bins
            .starts
            .iter()
            .map(|&x| to_i32(x as usize, "atom count"))
            .collect::<Result<Vec<_>, _>>()?;
        // Regions of 4 x 4 x 4 sample points, padded to whole bricks of 4 x 4 x 4 regions.
        let regions = n.map(|v| v.div_ceil(4).div_ceil(4) * 4);
        regions[0]
            .checked_mul(regions[1])
            .and_then(|v| v.checked_mul(regions[2]))
            .filter(|&v| v <= i32::MAX as usize / 64)
            .ok_or_else(|| ComputeError::Device(format!("ILS map of {n:?} sample points too large for one launch")))?;
        let a_max = setup.probe.radius_angstrom();
        let rh_atoms = kept.iter().map(|k| f64::from(k.1)).fold(0.0, f64::max);
        let rh_probe = setup
            .probe
            .atoms
            .iter()
            .map(|a| a.lj.rmin_half_angstrom)
            .fold(0.0, f64::max);
        let args = IlsArgs {
            nx: to_i32(n[0], "sample points")?,
            ny: to_i32(n[1], "sample points")?,
            nz: to_i32(n[2], "sample points")?,
            rx: to_i32(regions[0], "regions")?,
            ry: to_i32(regions[1], "regions")?,
            rz: to_i32(regions[2], "regions")?,
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
            cutoff: setup.cutoff_angstrom as f32,
            cutoff2: (setup.cutoff_angstrom * setup.cutoff_angstrom) as f32,
            reach: reach as f32,
            a_max: a_max as f32,
            near: (rh_atoms + rh_probe + a_max + 1.0) as f32,
            threshold: (setup.max_energy_kt + BOUND_MARGIN_KT) as f32,
            n_orient: to_i32(setup.orientations.evaluated(), "orientations")?,
            n_probe: to_i32(setup.orientations.atoms_per_orientation, "probe atoms")?,
            tile: TILE_ATOMS as i32,
            pair: i32::from(alike_pair(setup)),
            joint: i32::from(linear_pair(setup)),
            step_lo: (step - f64::from(step as f32)) as f32,
        };
        Ok(DeviceAtoms {
            atoms,
            lows,
            starts,
            args,
        })
    }
}

/// Device buffers an engine keeps from one ILS frame to the next, each grown when a frame needs
/// more (the atom count changes from frame to frame with the periodic images): a frame allocates
/// and frees nothing, so no frame waits on the driver's memory pool. They hold one frame's working
/// set per engine and go with the engine (the pool's workers), so memory stays flat over a run.
#[derive(Default)]
pub(super) struct IlsBuffers {
    atoms: Option<CudaSlice<f32>>,
    lows: Option<CudaSlice<f32>>,
    starts: Option<CudaSlice<i32>>,
    offsets: Option<CudaSlice<f32>>,
    masks: Option<CudaSlice<u64>>,
    counts: Option<CudaSlice<i32>>,
    starts_kept: Option<CudaSlice<i32>>,
    samples: Option<CudaSlice<f32>>,
    voxels: Option<CudaSlice<f32>>,
    /// Page-locked host buffers the atoms go up and the voxels and the kept count come down
    /// through. A copy from or into pageable memory holds up the driver until it completes, so
    /// the other worker on the same device could not enqueue its frame meanwhile.
    host_atoms: Option<PinnedHostSlice<f32>>,
    host_starts: Option<PinnedHostSlice<i32>>,
    host_voxels: Option<PinnedHostSlice<f32>>,
    host_kept: Option<PinnedHostSlice<i32>>,
    /// Recorded after the downloads; the frame waits for it.
    done: Option<cudarc::driver::CudaEvent>,
    /// The module (by address) and the probe constants and orientation offsets last copied there.
    uploaded_for: Option<(usize, Vec<f32>, Vec<f32>)>,
}

/// Elements to allocate for `len`: a quarter more for buffers sized by the frame's atoms (`spare`),
/// whose counts wander from frame to frame with the periodic images; exact for those sized by the map.
fn with_spare(len: usize, spare: bool) -> usize {
    let len = len.max(1);
    if spare { len + len / 4 } else { len }
}

/// `slot` with room for at least `len` elements, reallocated only when it has too few.
fn room<'a, T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    slot: &'a mut Option<CudaSlice<T>>,
    stream: &std::sync::Arc<cudarc::driver::CudaStream>,
    len: usize,
    spare: bool,
) -> Result<&'a mut CudaSlice<T>, ComputeError> {
    if slot.as_ref().is_none_or(|b| b.len() < len.max(1)) {
        *slot = None;
        *slot = Some(
            stream
                .alloc_zeros::<T>(with_spare(len, spare))
                .map_err(dev_err("allocation"))?,
        );
    }
    slot.as_mut()
        .ok_or_else(|| ComputeError::Device("ILS buffer missing".into()))
}

/// `slot` with room for at least `len` page-locked elements (see [`room`]).
fn pinned_room<'a, T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    slot: &'a mut Option<PinnedHostSlice<T>>,
    ctx: &std::sync::Arc<cudarc::driver::CudaContext>,
    len: usize,
    spare: bool,
) -> Result<&'a mut [T], ComputeError> {
    if slot.as_ref().is_none_or(|b| b.len() < len.max(1)) {
        *slot = None;
        // SAFETY: every element the frame reads back is written first (by the host for uploads, by
        // a completed copy for downloads).
        let fresh = unsafe { ctx.alloc_pinned_with_flags::<T>(with_spare(len, spare), 0) };
        *slot = Some(fresh.map_err(dev_err("page-locked allocation"))?);
    }
    let b = slot
        .as_mut()
        .ok_or_else(|| ComputeError::Device("ILS host buffer missing".into()))?;
    Ok(b.as_mut_slice().map_err(dev_err("page-locked buffer"))?)
}

/// Milliseconds since the first ILS frame of the process (the timing log's timeline).
fn timeline_ms(t: Instant) -> f64 {
    static EPOCH: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    let e = *EPOCH.get_or_init(|| t);
    1e3 * t.saturating_duration_since(e).as_secs_f64()
}

impl CudaEngine {
    /// One frame's voxel means of the occupancy on this device (x fastest, one per voxel).
    pub fn ils_voxel_means(&self, setup: &IlsSetup, placed: &PlacedAtoms) -> Result<Vec<f64>, ComputeError> {
        let t0 = Instant::now();
        let o = &setup.orientations;
        let p = o.atoms_per_orientation;
        if p == 0 || p > MAX_PROBE || p != setup.probe.atoms.len() {
            return Err(ComputeError::Device(format!(
                "the ILS kernel takes probes of 1 to {MAX_PROBE} atoms, not {p}"
            )));
        }
        let dev = DeviceAtoms::new(setup, placed)?;
        let t_layout = t0.elapsed().as_secs_f64();
        let a = dev.args;
        let n_voxels = setup.map.n_voxels();
        let n_samples = (a.nx as usize) * (a.ny as usize) * (a.nz as usize);
        let n_codes = (a.rx as usize) * (a.ry as usize) * (a.rz as usize);
        let (module, buffers) = {
            let mut st = self.lock_state()?;
            let module = self.module(&mut st, ILS_SRC)?;
            (module, st.ils.take())
        };
        let mut bufs = buffers.unwrap_or_default();
        let result = self.ils_frame(
            setup,
            &dev,
            &module,
            &mut bufs,
            t0,
            t_layout,
            (n_voxels, n_samples, n_codes),
        );
        // The buffers go back even when the frame failed (they are whole; a later frame rewrites them),
        // once any copies from the page-locked ones that a failed frame left in flight are done.
        if result.is_err() {
            let _ = self.stream.synchronize();
        }
        if let Ok(mut st) = self.lock_state() {
            st.ils = Some(bufs);
        }
        result
    }

    #[allow(clippy::too_many_arguments)]
    fn ils_frame(
        &self,
        setup: &IlsSetup,
        dev: &DeviceAtoms,
        module: &std::sync::Arc<cudarc::driver::CudaModule>,
        bufs: &mut IlsBuffers,
        t0: Instant,
        t_layout: f64,
        (n_voxels, n_samples, n_codes): (usize, usize, usize),
    ) -> Result<Vec<f64>, ComputeError> {
        let o = &setup.orientations;
        let p = o.atoms_per_orientation;
        let a = dev.args;
        let (batch, groups) = batch_for(o.evaluated());
        let bound_fn = CudaEngine::function(module, "ils_bound")?;
        let scan_fn = CudaEngine::function(module, "ils_scan")?;
        let points_fn = CudaEngine::function(module, &format!("ils_points_k{batch}_g{groups}"))?;
        let voxels_fn = CudaEngine::function(module, "ils_voxels")?;
        let kt = setup.kt_kcal_per_mol();
        let probe: Vec<f32> = setup
            .probe
            .atoms
            .iter()
            .flat_map(|at| {
                let r = crate::model::lj::norm(at.offset_angstrom);
                [
                    (at.lj.eps_kcal_per_mol.abs() / kt).sqrt() as f32,
                    at.lj.rmin_half_angstrom as f32,
                    r as f32,
                    (r * r) as f32,
                ]
            })
            .collect();
        // Orientation offsets as -2 o_j (float4), for every class, orientation and probe atom.
        let classes = o.classes.max(1);
        let n_orient = o.evaluated();
        let mut offsets: Vec<f32> = Vec::with_capacity(classes * n_orient * p * 4);
        for class in 0..classes {
            for or in 0..n_orient {
                for j in 0..p {
                    let v = o.offset(class, or, j);
                    offsets.extend([(-2.0 * v[0]) as f32, (-2.0 * v[1]) as f32, (-2.0 * v[2]) as f32, 0.0]);
                }
            }
        }
        // The probe's constants and the offsets go up once per setup, not with every frame.
        let module_key = std::sync::Arc::as_ptr(module) as usize;
        let fresh =
            !matches!(&bufs.uploaded_for, Some((m, pr, of)) if *m == module_key && *pr == probe && *of == offsets);
        if fresh {
            bufs.uploaded_for = None;
            super::engine::copy_symbol(module, &self.stream, "ils_probe", &probe)?;
            let d = room(&mut bufs.offsets, &self.stream, offsets.len(), false)?;
            self.stream
                .memcpy_htod(&offsets, &mut d.slice_mut(0..offsets.len()))
                .map_err(dev_err("upload"))?;
            bufs.uploaded_for = Some((module_key, probe, offsets));
        }
        // The atoms into page-locked memory (at least one float4 each; the previous frame's copies
        // out of it completed before that frame returned).
        let n4 = 4 * dev.atoms.len().max(1);
        {
            let host = pinned_room(&mut bufs.host_atoms, &self.ctx, 2 * n4, true)?;
            if dev.atoms.is_empty() {
                host[..2 * n4].fill(0.0);
            }
            for (k, (hi, lo)) in dev.atoms.iter().zip(&dev.lows).enumerate() {
                host[4 * k..4 * k + 4].copy_from_slice(hi);
                host[n4 + 4 * k..n4 + 4 * k + 4].copy_from_slice(lo);
            }
            let host = pinned_room(&mut bufs.host_starts, &self.ctx, dev.starts.len(), false)?;
            host[..dev.starts.len()].copy_from_slice(&dev.starts);
        }
        let t_host = t0.elapsed().as_secs_f64();
        // Stage times (device, CUDA events) when the timing log is on: upload, bound, scan, points,
        // voxels and download.
        let timing = tracing::enabled!(target: "orbitfield::timing", tracing::Level::DEBUG);
        let mut marks: Vec<cudarc::driver::CudaEvent> = Vec::new();
        let mark = |marks: &mut Vec<cudarc::driver::CudaEvent>| -> Result<(), ComputeError> {
            if timing {
                let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
                let e = self.ctx.new_event(flags).map_err(dev_err("event"))?;
                e.record(&self.stream).map_err(dev_err("event record"))?;
                marks.push(e);
            }
            Ok(())
        };
        mark(&mut marks)?;
        let s = &self.stream;
        {
            let (Some(host), Some(host_starts)) = (bufs.host_atoms.as_ref(), bufs.host_starts.as_ref()) else {
                return Err(ComputeError::Device("ILS host buffer missing".into()));
            };
            let host = host.as_slice().map_err(dev_err("page-locked buffer"))?;
            let host_starts = host_starts.as_slice().map_err(dev_err("page-locked buffer"))?;
            let up = |slot: &mut Option<CudaSlice<f32>>, data: &[f32]| -> Result<(), ComputeError> {
                let d = room(slot, s, data.len(), true)?;
                let (dst, _written) = d.device_ptr_mut(s);
                // SAFETY: `data` is page-locked memory left untouched until this frame's stream has
                // been waited for; the device buffer holds at least `data.len()` floats.
                unsafe { cudarc::driver::result::memcpy_htod_async(dst, data, s.cu_stream()) }
                    .map_err(dev_err("upload"))?;
                Ok(())
            };
            up(&mut bufs.atoms, &host[..n4])?;
            up(&mut bufs.lows, &host[n4..2 * n4])?;
            let data = &host_starts[..dev.starts.len()];
            let d = room(&mut bufs.starts, s, data.len(), false)?;
            let (dst, _written) = d.device_ptr_mut(s);
            // SAFETY: as above, for the bins' starts.
            unsafe { cudarc::driver::result::memcpy_htod_async(dst, data, s.cu_stream()) }
                .map_err(dev_err("upload"))?;
        }
        room(&mut bufs.masks, s, n_codes, false)?;
        room(&mut bufs.counts, s, n_codes, false)?;
        room(&mut bufs.starts_kept, s, n_codes + 1, false)?;
        room(&mut bufs.voxels, s, n_voxels, false)?;
        {
            // Points the bound excludes are never written: they must read 0.
            let d = room(&mut bufs.samples, s, n_samples, false)?;
            s.memset_zeros(&mut d.slice_mut(0..n_samples.max(1)))
                .map_err(dev_err("clear"))?;
        }
        let (
            Some(atoms_d),
            Some(lows_d),
            Some(starts_d),
            Some(off_d),
            Some(masks_d),
            Some(counts_d),
            Some(starts_kept_d),
            Some(samples_d),
            Some(voxels_d),
        ) = (
            bufs.atoms.as_ref(),
            bufs.lows.as_ref(),
            bufs.starts.as_ref(),
            bufs.offsets.as_ref(),
            bufs.masks.as_mut(),
            bufs.counts.as_mut(),
            bufs.starts_kept.as_mut(),
            bufs.samples.as_mut(),
            bufs.voxels.as_mut(),
        )
        else {
            return Err(ComputeError::Device("ILS buffers missing".into()));
        };
        mark(&mut marks)?;
        let regions = (a.rx as u32, a.ry as u32, a.rz as u32);
        if regions.1 > 65535 || regions.2 > 65535 {
            return Err(ComputeError::Device("ILS map too large for one launch".into()));
        }
        {
            let mut l = s.launch_builder(&bound_fn);
            l.arg(atoms_d)
                .arg(lows_d)
                .arg(starts_d)
                .arg(&a)
                .arg(&mut *masks_d)
                .arg(&mut *counts_d);
            let cfg = LaunchConfig {
                grid_dim: regions,
                block_dim: (BLOCK, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: atoms and lows hold the binned atoms (a float4 each) that `starts` (bins + 1
            // entries, the last the atom count) indexes; the kernel writes one mask and count per
            // region of the padded grid (rx * ry * rz entries each; the buffers hold at least that).
            unsafe { l.launch(cfg) }.map_err(dev_err("ils_bound launch"))?;
        }
        mark(&mut marks)?;
        let n_codes_i = n_codes as i32;
        {
            let mut l = s.launch_builder(&scan_fn);
            l.arg(&*counts_d).arg(&n_codes_i).arg(&mut *starts_kept_d);
            let cfg = LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1024, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: reads n_codes counts, writes n_codes + 1 offsets.
            unsafe { l.launch(cfg) }.map_err(dev_err("ils_scan launch"))?;
        }
        mark(&mut marks)?;
        {
            let mut l = s.launch_builder(&points_fn);
            l.arg(atoms_d)
                .arg(lows_d)
                .arg(starts_d)
                .arg(off_d)
                .arg(&*masks_d)
                .arg(&*starts_kept_d)
                .arg(&a)
                .arg(&mut *samples_d);
            let cfg = LaunchConfig {
                grid_dim: ((n_codes.max(1) * groups) as u32, 1, 1),
                block_dim: (BLOCK, 1, 1),
                shared_mem_bytes: (a.tile as u32) * 20,
            };
            // SAFETY: as above, plus `classes * n_orient * n_probe` float4 offsets, the masks and
            // n_codes + 1 offsets of the kept points; each kept point writes its own sample of the
            // nx * ny * nz buffer; the dynamic shared memory holds `tile` float4 and `tile` floats.
            unsafe { l.launch(cfg) }.map_err(dev_err("ils_points launch"))?;
        }
        mark(&mut marks)?;
        let sub = setup.subres.max(1) as i32;
        let scale = 1.0f32 / n_orient.max(1) as f32;
        let (vx, vy, vz) = (
            setup.map.dims[0] as i32,
            setup.map.dims[1] as i32,
            setup.map.dims[2] as i32,
        );
        {
            let mut l = s.launch_builder(&voxels_fn);
            l.arg(&*samples_d)
                .arg(&a.nx)
                .arg(&a.ny)
                .arg(&sub)
                .arg(&scale)
                .arg(&mut *voxels_d)
                .arg(&vx)
                .arg(&vy)
                .arg(&vz);
            // SAFETY: reads the nx * ny * nz samples, writes one value per voxel into a buffer of at
            // least `n_voxels`.
            unsafe { l.launch(LaunchConfig::for_num_elems(n_voxels.max(1) as u32)) }
                .map_err(dev_err("ils_voxels launch"))?;
        }
        let t_enqueued = t0.elapsed().as_secs_f64();
        // Downloads into page-locked memory, then a wait on this frame's own event.
        let nv = n_voxels.max(1);
        {
            let host = pinned_room(&mut bufs.host_voxels, &self.ctx, nv, false)?;
            let view = voxels_d.slice(0..nv);
            let (src, _read) = view.device_ptr(s);
            // SAFETY: `host` holds at least `nv` floats and is read only after the event below.
            unsafe { cudarc::driver::result::memcpy_dtoh_async(&mut host[..nv], src, s.cu_stream()) }
                .map_err(dev_err("download"))?;
            let host = pinned_room(&mut bufs.host_kept, &self.ctx, 1, false)?;
            let view = starts_kept_d.slice(n_codes..n_codes + 1);
            let (src, _read) = view.device_ptr(s);
            // SAFETY: one int into a buffer of at least one, read after the event below.
            unsafe { cudarc::driver::result::memcpy_dtoh_async(&mut host[..1], src, s.cu_stream()) }
                .map_err(dev_err("download"))?;
        }
        mark(&mut marks)?;
        if bufs.done.is_none() {
            let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DISABLE_TIMING);
            bufs.done = Some(self.ctx.new_event(flags).map_err(dev_err("event"))?);
        }
        let done = bufs
            .done
            .as_ref()
            .ok_or_else(|| ComputeError::Device("ILS event missing".into()))?;
        done.record(s).map_err(dev_err("event record"))?;
        done.synchronize().map_err(dev_err("synchronize"))?;
        if let Some(last) = marks.last() {
            last.synchronize().map_err(dev_err("synchronize"))?;
        }
        let out: Vec<f32> = pinned_room(&mut bufs.host_voxels, &self.ctx, nv, false)?[..n_voxels].to_vec();
        let kept: Vec<i32> = pinned_room(&mut bufs.host_kept, &self.ctx, 1, false)?[..1].to_vec();
        let stages: Vec<String> = marks
            .windows(2)
            .zip(["upload", "bound", "scan", "points", "voxels and download"])
            .filter_map(|(w, name)| Some(format!("{name} {:.2}", w[0].elapsed_ms(&w[1]).ok()?)))
            .collect();
        tracing::debug!(
            target: "orbitfield::timing",
            "ILS frame on cuda:{}: {} atoms, {} of {} sample points kept ({:.1}%), {} orientations in passes of {} over {} threads per point, from {:.2} ms: layout {:.2} ms, host {:.2} ms, enqueued {:.2} ms, total {:.2} ms; device ms: {}",
            self.ordinal(),
            dev.atoms.len(),
            kept.first().copied().unwrap_or(0),
            n_samples,
            100.0 * f64::from(kept.first().copied().unwrap_or(0)) / n_samples.max(1) as f64,
            n_orient,
            batch,
            groups,
            timeline_ms(t0),
            1e3 * t_layout,
            1e3 * t_host,
            1e3 * t_enqueued,
            1e3 * t0.elapsed().as_secs_f64(),
            stages.join(", ")
        );
        let values: Vec<f64> = out.iter().take(n_voxels).map(|&v| f64::from(v)).collect();
        if values.iter().any(|v| !v.is_finite()) {
            return Err(ComputeError::NotFinite);
        }
        Ok(values)
    }
}

#[cfg(test)]
mod tests {
    use super::batch_for;

    #[test]
    fn batches_waste_few_orientations() {
        assert_eq!(batch_for(1), (1, 1));
        assert_eq!(batch_for(5), (8, 1));
        assert_eq!(batch_for(31), (16, 1));
        assert_eq!(batch_for(50), (13, 4));
        assert_eq!(batch_for(100), (13, 4));
        assert_eq!(batch_for(1000), (17, 4));
    }
}
