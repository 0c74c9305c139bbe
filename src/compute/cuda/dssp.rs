//! The coordinate passes of DSSP (secondary structure) on a CUDA device, over packed inputs.
//!
//! Owns [`DeviceDsspWorkspace`] (the page-locked host buffers, device buffers and module kept from
//! one frame to the next), [`CudaEngine::dssp_columns`] and [`CudaEngine::dssp_passes`]. The input
//! is one record of 12 floats per residue (N, CA, C and O, in angstrom) written by the caller into
//! the page-locked buffer `dssp_columns` returns, one word per residue (chain ordinal in bits 0-30,
//! bit 31 for proline) and the sines and cosines of the polyproline II ranges' ends. The device
//! places the amide hydrogens and finds the chain breaks, bins the CA atoms into cells (the counting
//! sort of [`super::rdf`]), runs the hydrogen-bond search (one thread per donor, double-precision
//! energies), then per residue the n-turns, bends, polyproline II angles and bridge partners
//! (`kernels/dssp.cu`); the results are one flag byte per residue
//! ([`DeviceDsspWorkspace::flags`]) and the bridge partners ([`DeviceDsspWorkspace::partners`]).
//!
//! This module knows no protein: gathering the backbone, choosing the route of a frame and finishing
//! the codes from the flags are `analysis::dssp`'s (which also writes `CudaEngine::dssp_frame`, the
//! whole frame, and keeps its own host buffers in [`DeviceDsspWorkspace::host`]).

use super::rdf::{CellPlan, CellSort, RDF_SRC};
use super::{CudaEngine, dev_err};
use crate::compute::ComputeError;
use cudarc::driver::{CudaModule, CudaSlice, LaunchConfig, PinnedHostSlice, PushKernelArg};
use std::any::Any;
use std::sync::Arc;

/// `kernels/dssp.cu`, embedded at build time.
pub const DSSP_SRC: &str = include_str!("../../../kernels/dssp.cu");

/// `DSSP_MAX_HITS` in `kernels/dssp.cu`: bridge partners per residue at most.
const MAX_HITS: usize = 8;
/// Threads per block of the per-residue kernels.
const THREADS: u32 = 256;
/// The CA-CA distance (angstrom) within which residue pairs are searched for hydrogen bonds: the
/// cell size of the CA binning.
const CA_CUTOFF_ANGSTROM: f64 = 9.0;

/// `struct DsspRanges` in `kernels/dssp.cu`: sines and cosines of the polyproline II ranges' ends.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq)]
struct DsspRanges([f32; 8]);

// SAFETY: `#[repr(C)]` eight floats, the layout of `DsspRanges` in kernels/dssp.cu.
unsafe impl cudarc::driver::DeviceRepr for DsspRanges {}

/// Which path a frame took.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DsspRoute {
    Device,
    /// The CPU path, and why.
    Cpu(&'static str),
}

/// Wall-clock times (milliseconds) of the last frame on the device path.
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct DeviceDsspTimes {
    /// Backbone atoms into page-locked memory.
    pub gather_ms: f64,
    /// Upload, kernels and download, waited for.
    pub device_ms: f64,
    /// The host's finishing passes.
    pub finish_ms: f64,
}

/// Device buffers for up to `cap` residues.
struct DeviceBuffers {
    cap: usize,
    meta: CudaSlice<u32>,
    columns: CudaSlice<f32>,
    items: CudaSlice<f32>,
    hydrogens: CudaSlice<f32>,
    breaks: CudaSlice<u8>,
    acc: CudaSlice<u32>,
    flags: CudaSlice<u8>,
    hit_count: CudaSlice<u32>,
    hit_starts: CudaSlice<u32>,
    hit_slots: CudaSlice<u32>,
    hits: CudaSlice<u32>,
}

/// The buffers of the DSSP passes, kept from one frame to the next (keep one per trajectory; a
/// frame of the same size then allocates nothing but the cell sort's buffers).
#[derive(Default)]
pub struct DeviceDsspWorkspace {
    /// The module (RDF cell sort and DSSP kernels) and the device it was loaded on.
    module: Option<(usize, Arc<CudaModule>)>,
    /// Whether the device holds the per-residue words of the current residues.
    meta_uploaded: bool,
    columns: Option<PinnedHostSlice<f32>>,
    flags: Option<PinnedHostSlice<u8>>,
    hits: Option<PinnedHostSlice<u32>>,
    count: Option<PinnedHostSlice<u32>>,
    device: Option<DeviceBuffers>,
    /// The CA cell sort's device buffers.
    sort: Option<CellSort>,
    /// Residues of the columns, and bridge partners of the last passes.
    residues: usize,
    partners: usize,
    /// The caller's host-side buffers, kept with these from frame to frame (this module never
    /// looks inside).
    pub host: Option<Box<dyn Any + Send>>,
    pub times: DeviceDsspTimes,
}

/// A page-locked buffer of at least `n` elements in `slot`.
fn pinned<T: cudarc::driver::DeviceRepr + cudarc::driver::ValidAsZeroBits>(
    engine: &CudaEngine,
    slot: &mut Option<PinnedHostSlice<T>>,
    n: usize,
) -> Result<(), ComputeError> {
    if slot.as_ref().is_none_or(|p| p.len() < n) {
        *slot = None;
        // SAFETY: every element is written (by the gather or a download) before it is read.
        let fresh = unsafe { engine.ctx.alloc_pinned_with_flags::<T>(n.max(1), 0) };
        *slot = Some(fresh.map_err(dev_err("page-locked allocation"))?);
    }
    Ok(())
}

/// The first `n` elements of a page-locked buffer, once the copies into it are done.
fn host<T: cudarc::driver::ValidAsZeroBits>(slot: &Option<PinnedHostSlice<T>>, n: usize) -> Result<&[T], ComputeError> {
    slot.as_ref()
        .ok_or_else(|| ComputeError::Device("no page-locked buffer".into()))?
        .as_slice()
        .map_err(dev_err("page-locked buffer"))?
        .get(..n)
        .ok_or_else(|| ComputeError::Device("short page-locked buffer".into()))
}

/// [`host`], writable.
fn host_mut<T: cudarc::driver::ValidAsZeroBits>(
    slot: &mut Option<PinnedHostSlice<T>>,
    n: usize,
) -> Result<&mut [T], ComputeError> {
    slot.as_mut()
        .ok_or_else(|| ComputeError::Device("no page-locked buffer".into()))?
        .as_mut_slice()
        .map_err(dev_err("page-locked buffer"))?
        .get_mut(..n)
        .ok_or_else(|| ComputeError::Device("short page-locked buffer".into()))
}

fn too_many() -> ComputeError {
    ComputeError::Device("too many protein residues for the device's DSSP".into())
}

fn cfg(n: usize) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n as u32).div_ceil(THREADS).max(1), 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: 0,
    }
}

impl DeviceDsspWorkspace {
    /// Says that the per-residue words differ from those last uploaded (another set of residues):
    /// the next [`CudaEngine::dssp_passes`] uploads them.
    pub fn meta_changed(&mut self) {
        self.meta_uploaded = false;
    }

    /// The columns of the last [`CudaEngine::dssp_columns`] (12 floats per residue).
    pub fn columns(&self) -> Result<&[f32], ComputeError> {
        host(&self.columns, 12 * self.residues)
    }

    /// One flag byte per residue from the last [`CudaEngine::dssp_passes`] (`DSSP_*` in
    /// `kernels/dssp.cu`).
    pub fn flags(&self) -> Result<&[u8], ComputeError> {
        host(&self.flags, self.residues)
    }

    /// The bridges `[i, j]` (i < j, in (i, j) order; bit 31 of j set when parallel) from the last
    /// [`CudaEngine::dssp_passes`].
    pub fn partners(&self) -> Result<&[[u32; 2]], ComputeError> {
        Ok(bytemuck::cast_slice(host(&self.hits, 2 * self.partners)?))
    }
}

impl CudaEngine {
    /// Makes `workspace` ready for a frame of `residues` residues on this device (the module loaded,
    /// buffers of another device's context dropped) and returns the page-locked columns to fill:
    /// N, CA, C and O of each residue, 12 floats (angstrom).
    pub fn dssp_columns<'w>(
        &self,
        workspace: &'w mut DeviceDsspWorkspace,
        residues: usize,
    ) -> Result<&'w mut [f32], ComputeError> {
        let (ws, m) = (workspace, residues);
        ws.residues = 0;
        ws.partners = 0;
        i32::try_from(m).map_err(|_| too_many())?;
        if m.checked_mul(16).is_none_or(|x| x > u32::MAX as usize) {
            return Err(too_many());
        }
        if ws.module.as_ref().is_none_or(|(ordinal, _)| *ordinal != self.ordinal()) {
            let src = format!("#define RDF_MODE 0\n#define RDF_GROUPS 0\n#define RDF_HALF 0\n{RDF_SRC}\n{DSSP_SRC}");
            let mut st = self.lock_state()?;
            let module = self.module(&mut st, &src)?;
            drop(st);
            ws.module = Some((self.ordinal(), module));
            // Buffers of another device's context: made again on this one.
            ws.device = None;
            ws.sort = None;
            ws.columns = None;
            ws.flags = None;
            ws.hits = None;
            ws.count = None;
            ws.meta_uploaded = false;
        }
        pinned(self, &mut ws.columns, 12 * m)?;
        ws.residues = m;
        host_mut(&mut ws.columns, 12 * m)
    }

    /// Runs the passes over the columns of the last [`CudaEngine::dssp_columns`]: `meta` holds one
    /// word per residue (chain ordinal in bits 0-30, bit 31 for proline; uploaded only after
    /// [`DeviceDsspWorkspace::meta_changed`] or on a new device), `ca_bounds_angstrom` the lowest and
    /// highest CA coordinates, `ranges` the sines and cosines of the polyproline II ranges' ends
    /// (phi's low end, its high end, then psi's). The results wait in the workspace
    /// ([`DeviceDsspWorkspace::flags`], [`DeviceDsspWorkspace::partners`]). False, with nothing
    /// run, where the CA atoms span no cell grid (coordinates too large).
    pub fn dssp_passes(
        &self,
        workspace: &mut DeviceDsspWorkspace,
        meta: &[u32],
        ca_bounds_angstrom: [[f32; 3]; 2],
        ranges: [f32; 8],
    ) -> Result<bool, ComputeError> {
        let ws = workspace;
        let m = ws.residues;
        ws.partners = 0;
        if meta.len() != m {
            return Err(ComputeError::Device(format!(
                "{} residue words for {m} residues",
                meta.len()
            )));
        }
        let m_i = i32::try_from(m).map_err(|_| too_many())?;
        let [lo, hi] = ca_bounds_angstrom;
        let Some(plan) = CellPlan::open(lo, hi, CA_CUTOFF_ANGSTROM) else {
            return Ok(false);
        };
        let module = match &ws.module {
            Some((ordinal, module)) if *ordinal == self.ordinal() => module.clone(),
            _ => {
                return Err(ComputeError::Device(
                    "the DSSP columns were made on another device".into(),
                ));
            }
        };
        let stream = &self.stream;
        if ws.device.as_ref().is_none_or(|d| d.cap < m) {
            ws.device = None;
            ws.meta_uploaded = false;
            let cap = m + m / 8;
            let alloc = |n: usize| stream.alloc_zeros::<u32>(n.max(1)).map_err(dev_err("allocation"));
            let alloc_f = |n: usize| stream.alloc_zeros::<f32>(n.max(1)).map_err(dev_err("allocation"));
            let alloc_b = |n: usize| stream.alloc_zeros::<u8>(n.max(1)).map_err(dev_err("allocation"));
            ws.device = Some(DeviceBuffers {
                cap,
                meta: alloc(cap)?,
                columns: alloc_f(12 * cap)?,
                items: alloc_f(4 * cap)?,
                hydrogens: alloc_f(4 * cap)?,
                breaks: alloc_b(cap)?,
                acc: alloc(2 * cap)?,
                flags: alloc_b(cap)?,
                hit_count: alloc(cap)?,
                hit_starts: alloc(cap + 1)?,
                hit_slots: alloc(2 * MAX_HITS * cap)?,
                hits: alloc(2 * MAX_HITS * cap)?,
            });
        }
        let d = ws
            .device
            .as_mut()
            .ok_or_else(|| ComputeError::Device("no device buffers".into()))?;
        // The chains and prolines, uploaded when they change.
        if !ws.meta_uploaded {
            stream
                .memcpy_htod(meta, &mut d.meta.slice_mut(0..m))
                .map_err(dev_err("upload"))?;
            ws.meta_uploaded = true;
        }
        // From page-locked memory: a DMA at full bus speed.
        stream
            .memcpy_htod(host(&ws.columns, 12 * m)?, &mut d.columns.slice_mut(0..12 * m))
            .map_err(dev_err("upload"))?;
        let f = |name: &str| CudaEngine::function(&module, name);
        {
            let kernel = f("dssp_backbone")?;
            let mut l = stream.launch_builder(&kernel);
            l.arg(&d.columns)
                .arg(&d.meta)
                .arg(&m_i)
                .arg(&mut d.items)
                .arg(&mut d.hydrogens)
                .arg(&mut d.breaks);
            // SAFETY: reads 12 m columns and m meta words, writes m items, hydrogens and breaks;
            // every buffer holds at least m residues.
            unsafe { l.launch(cfg(m)) }.map_err(dev_err("dssp_backbone launch"))?;
        }
        self.rdf_sort_into(&module, &d.items, m, &plan, &mut ws.sort)?;
        let sort = ws
            .sort
            .as_ref()
            .ok_or_else(|| ComputeError::Device("no cell-sort buffers".into()))?;
        let (sorted, starts) = (&sort.sorted, &sort.starts);
        {
            let kernel = f("dssp_hbonds")?;
            let mut l = stream.launch_builder(&kernel);
            l.arg(sorted)
                .arg(starts)
                .arg(&plan)
                .arg(&m_i)
                .arg(&d.columns)
                .arg(&d.hydrogens)
                .arg(&d.meta)
                .arg(&mut d.acc);
            // SAFETY: the sorted items and cell starts come from `rdf_sort` over `plan` (m items,
            // residue indices below m in w); writes two words per residue.
            unsafe { l.launch(cfg(m)) }.map_err(dev_err("dssp_hbonds launch"))?;
        }
        {
            let kernel = f("dssp_flags")?;
            let ranges = DsspRanges(ranges);
            let mut l = stream.launch_builder(&kernel);
            l.arg(&d.columns)
                .arg(&d.acc)
                .arg(&d.breaks)
                .arg(&m_i)
                .arg(&ranges)
                .arg(&mut d.flags)
                .arg(&mut d.hit_count)
                .arg(&mut d.hit_slots);
            // SAFETY: reads m residues' columns, bonds and breaks; writes m flags and counts and
            // at most MAX_HITS partners per residue into its own slots.
            unsafe { l.launch(cfg(m)) }.map_err(dev_err("dssp_flags launch"))?;
        }
        {
            let kernel = f("rdf_cell_scan")?;
            let mut l = stream.launch_builder(&kernel);
            l.arg(&mut d.hit_count).arg(&mut d.hit_starts).arg(&m_i);
            let one_block = LaunchConfig {
                grid_dim: (1, 1, 1),
                block_dim: (1024, 1, 1),
                shared_mem_bytes: 0,
            };
            // SAFETY: one block of 1024 threads (the kernel's layout) over m counts and m + 1 starts.
            unsafe { l.launch(one_block) }.map_err(dev_err("partner scan launch"))?;
        }
        {
            let kernel = f("dssp_compact")?;
            let mut l = stream.launch_builder(&kernel);
            l.arg(&d.hit_slots).arg(&d.hit_starts).arg(&m_i).arg(&mut d.hits);
            // SAFETY: the starts are the running sums of the counts (each at most MAX_HITS), so
            // every partner lands below MAX_HITS * m pairs.
            unsafe { l.launch(cfg(m)) }.map_err(dev_err("dssp_compact launch"))?;
        }
        pinned(self, &mut ws.flags, m)?;
        pinned(self, &mut ws.count, 1)?;
        stream
            .memcpy_dtoh(&d.flags.slice(0..m), host_mut(&mut ws.flags, m)?)
            .map_err(dev_err("download"))?;
        stream
            .memcpy_dtoh(&d.hit_starts.slice(m..m + 1), host_mut(&mut ws.count, 1)?)
            .map_err(dev_err("download"))?;
        stream.synchronize().map_err(dev_err("synchronize"))?;
        let n_hits = host(&ws.count, 1)?.first().copied().unwrap_or(0) as usize;
        if n_hits > MAX_HITS * m {
            return Err(ComputeError::Device(format!(
                "{n_hits} bridge partners for {m} residues"
            )));
        }
        pinned(self, &mut ws.hits, 2 * n_hits)?;
        if n_hits > 0 {
            stream
                .memcpy_dtoh(&d.hits.slice(0..2 * n_hits), host_mut(&mut ws.hits, 2 * n_hits)?)
                .map_err(dev_err("download"))?;
        }
        stream.synchronize().map_err(dev_err("synchronize"))?;
        ws.partners = n_hits;
        Ok(true)
    }
}
