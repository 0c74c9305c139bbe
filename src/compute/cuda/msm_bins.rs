//! Charges sorted into the short-range bins on a CUDA device (`kernels/msm_bins.cu`): a counting
//! sort into the bins of the plan's bin frame, stable like the host's, so the arrays `msm_slab`
//! reads equal those the host would upload.
//!
//! Owns [`MsmBinArgs`] and the launch sequence. Called by [`super::msm`]'s preparation of a plan
//! built with [`crate::compute::esp::StagesOn::Engine`] and by `tests/gpu_engine.rs` (the device's
//! bins against [`AtomBins::filled`]).

use super::engine::EngineState;
use super::{CudaEngine, dev_err};
use crate::compute::esp::EspPlan;
use crate::compute::esp::bins::AtomBins;
use crate::compute::{ComputeError, PointCharges};
use cudarc::driver::{CudaSlice, LaunchConfig, PushKernelArg};

/// `kernels/msm_bins.cu`, embedded at build time.
pub const MSM_BINS_SRC: &str = include_str!("../../../kernels/msm_bins.cu");

const THREADS: u32 = 256;
/// Counts scanned per block by `msmb_scan_blocks` (its block size).
const SCAN_BLOCK: u32 = 1024;

/// Arguments of the binning kernels. Twin: `struct MsmBinArgs` in `kernels/msm_bins.cu` (30 f64,
/// then 6 i32: no padding either side).
#[repr(C)]
#[derive(Clone, Copy, Debug, Default)]
pub struct MsmBinArgs {
    origin: [f64; 3],
    inverse: [[f64; 3]; 3],
    cell: [[f64; 3]; 3],
    cell_inv: [[f64; 3]; 3],
    counts: [i32; 3],
    periodic: i32,
    n_atoms: i32,
    n_bins: i32,
}

// SAFETY: `#[repr(C)]` plain fields in the order of `MsmBinArgs` in kernels/msm_bins.cu.
unsafe impl cudarc::driver::DeviceRepr for MsmBinArgs {}

fn too_big(what: &str) -> ComputeError {
    ComputeError::Device(format!("{what} too large for the GPU kernel's 32-bit indices"))
}

impl MsmBinArgs {
    /// The kernels' view of `frame` (a bin frame, see [`AtomBins::open_frame`]) for `n_atoms` charges.
    pub fn new(frame: &AtomBins, n_atoms: usize) -> Result<MsmBinArgs, ComputeError> {
        let n_bins = frame.n_bins();
        if n_bins >= i32::MAX as usize || n_atoms >= i32::MAX as usize {
            return Err(too_big("the charge set"));
        }
        let counts = frame.counts.map(|c| c.min(i32::MAX as usize) as i32);
        Ok(MsmBinArgs {
            origin: frame.origin_bohr,
            inverse: frame.inverse,
            cell: frame.cell_bohr.unwrap_or([[0.0; 3]; 3]),
            cell_inv: *frame.cell_inverse(),
            counts,
            periodic: i32::from(frame.cell_bohr.is_some()),
            n_atoms: n_atoms as i32,
            n_bins: n_bins as i32,
        })
    }
}

/// The binned charges on the device, as `msm_slab` reads them.
pub struct DeviceBins {
    /// `start[b]..start[b + 1]`: the charges of bin `b` (one entry per bin plus one).
    pub start: CudaSlice<i32>,
    /// Per binned charge: x, y, z (bohr, relative to the bins' origin) and q, f32.
    pub atoms: CudaSlice<f32>,
}

fn blocks(n: usize, threads: u32) -> LaunchConfig {
    LaunchConfig {
        grid_dim: ((n as u32).div_ceil(threads).max(1), 1, 1),
        block_dim: (threads, 1, 1),
        shared_mem_bytes: 0,
    }
}

impl CudaEngine {
    /// Sorts `charges` into the bins of `frame` on the device (asynchronously on the engine's
    /// stream); the caller has bound the context to the thread.
    pub(super) fn run_msm_bins(
        &self,
        st: &mut EngineState,
        frame: &AtomBins,
        charges: &PointCharges,
    ) -> Result<DeviceBins, ComputeError> {
        let up = dev_err;
        let module = self.module(st, MSM_BINS_SRC)?;
        let util = self.module(st, super::UTIL_SRC)?;
        let n = charges.charges_e.len();
        let args = MsmBinArgs::new(frame, n)?;
        let n_bins = frame.n_bins();
        let mut raw = Vec::with_capacity(4 * n.max(1));
        for (p, q) in charges.positions_bohr.iter().zip(&charges.charges_e) {
            raw.extend_from_slice(&[p[0], p[1], p[2], *q]);
        }
        if raw.is_empty() {
            raw.extend_from_slice(&[0.0; 4]);
        }
        let raw = self.stream.clone_htod(&raw).map_err(up("upload charges"))?;
        let n_slots = n.max(1);
        let mut bin_of = self.stream.alloc_zeros::<i32>(n_slots).map_err(up("allocation"))?;
        let mut counts = self
            .stream
            .alloc_zeros::<i32>(n_bins.max(1))
            .map_err(up("allocation"))?;
        let mut start = self.stream.alloc_zeros::<i32>(n_bins + 1).map_err(up("allocation"))?;
        let mut fill = self
            .stream
            .alloc_zeros::<i32>(n_bins.max(1))
            .map_err(up("allocation"))?;
        let n_blocks = n_bins.div_ceil(SCAN_BLOCK as usize).max(1);
        let mut sums = self.stream.alloc_zeros::<i32>(n_blocks).map_err(up("allocation"))?;
        let mut index = self.stream.alloc_zeros::<i32>(n_slots).map_err(up("allocation"))?;
        // SAFETY: poisoned with NaN right below.
        let mut atoms = unsafe { self.stream.alloc::<f32>(4 * n_slots) }.map_err(up("allocation"))?;
        let fill_nan = Self::function(&util, "fill_nan")?;
        let total = i32::try_from(4 * n_slots).map_err(|_| too_big("the charge set"))?;
        let mut b = self.stream.launch_builder(&fill_nan);
        b.arg(&mut atoms).arg(&total);
        // SAFETY: writes `4 n_slots` floats into a buffer of that length.
        unsafe { b.launch(blocks(4 * n_slots, THREADS)) }.map_err(up("fill launch"))?;

        let (n_i, bins_i, blocks_i) = (args.n_atoms, args.n_bins, n_blocks as i32);
        let f = Self::function(&module, "msmb_count")?;
        let mut b = self.stream.launch_builder(&f);
        b.arg(&raw).arg(&args).arg(&mut bin_of).arg(&mut counts);
        // SAFETY: reads 4 doubles per charge; writes one bin per charge and counts at bin indices
        // the kernel clamps into 0..n_bins.
        unsafe { b.launch(blocks(n, THREADS)) }.map_err(up("msmb_count launch"))?;
        let f = Self::function(&module, "msmb_scan_blocks")?;
        let mut b = self.stream.launch_builder(&f);
        b.arg(&counts).arg(&mut start).arg(&mut sums).arg(&bins_i);
        // SAFETY: block k scans counts k*1024.. (bounded by n_bins) and writes sums[k], k < n_blocks.
        unsafe { b.launch(blocks(n_bins, SCAN_BLOCK)) }.map_err(up("msmb_scan_blocks launch"))?;
        let f = Self::function(&module, "msmb_scan_sums")?;
        let mut b = self.stream.launch_builder(&f);
        b.arg(&mut sums).arg(&blocks_i).arg(&mut start).arg(&bins_i);
        // SAFETY: one thread over `n_blocks` sums; writes start[n_bins] (the buffer has n_bins + 1).
        unsafe { b.launch(blocks(1, 1)) }.map_err(up("msmb_scan_sums launch"))?;
        let f = Self::function(&module, "msmb_add")?;
        let mut b = self.stream.launch_builder(&f);
        b.arg(&mut start).arg(&mut fill).arg(&sums).arg(&bins_i);
        // SAFETY: n_bins values of start and fill; sums indexed by i / 1024 < n_blocks.
        unsafe { b.launch(blocks(n_bins, THREADS)) }.map_err(up("msmb_add launch"))?;
        let f = Self::function(&module, "msmb_scatter")?;
        let mut b = self.stream.launch_builder(&f);
        b.arg(&bin_of).arg(&mut fill).arg(&mut index).arg(&n_i);
        // SAFETY: each binned charge takes one slot of its bin (start[b] .. start[b + 1]), all below
        // the number of charges.
        unsafe { b.launch(blocks(n, THREADS)) }.map_err(up("msmb_scatter launch"))?;
        let f = Self::function(&module, "msmb_sort")?;
        let mut b = self.stream.launch_builder(&f);
        b.arg(&start).arg(&mut index).arg(&bins_i);
        // SAFETY: sorts within start[b] .. start[b + 1] for b < n_bins.
        unsafe { b.launch(blocks(n_bins, THREADS)) }.map_err(up("msmb_sort launch"))?;
        let f = Self::function(&module, "msmb_gather")?;
        let mut b = self.stream.launch_builder(&f);
        b.arg(&raw).arg(&args).arg(&start).arg(&index).arg(&mut atoms);
        // SAFETY: slots below start[n_bins] <= n; each reads the charge its index names.
        unsafe { b.launch(blocks(n, THREADS)) }.map_err(up("msmb_gather launch"))?;
        Ok(DeviceBins { start, atoms })
    }

    /// The charges of `plan` binned on the device and copied back: `start` (one entry per bin plus
    /// one) and the binned charges (x, y, z relative to the bins' origin, q; f32), for comparison
    /// with the host's bins.
    pub fn msm_bins(&self, plan: &EspPlan) -> Result<(Vec<i32>, Vec<f32>), ComputeError> {
        let mut st = self.lock_state()?;
        self.ctx.bind_to_thread().map_err(dev_err("bind"))?;
        let bins = self.run_msm_bins(&mut st, plan.bin_frame(), plan.charges())?;
        let start = self.stream.clone_dtoh(&bins.start).map_err(dev_err("download bins"))?;
        let mut atoms = self.stream.clone_dtoh(&bins.atoms).map_err(dev_err("download bins"))?;
        let used = start.last().map_or(0, |&s| s.max(0) as usize);
        atoms.truncate(4 * used);
        Ok((start, atoms))
    }

    /// Device time (ms, CUDA events) of binning the charges of `plan` (upload included), per
    /// repetition, after one untimed run (the compile).
    #[cfg(feature = "bench-harness")]
    pub fn time_msm_bins(&self, plan: &EspPlan, repetitions: usize) -> Result<Vec<f64>, ComputeError> {
        let mut st = self.lock_state()?;
        self.ctx.bind_to_thread().map_err(dev_err("bind"))?;
        self.time_on_stream(repetitions, || {
            self.run_msm_bins(&mut st, plan.bin_frame(), plan.charges())
        })
    }
}

/// What `msm_slab` reads from bins sorted on the host: `start` (one entry per bin plus one) and,
/// per charge, x, y, z relative to the bins' origin and q, in f32 (what `msm_bins` makes on the
/// device).
pub fn host_bin_arrays(bins: &AtomBins) -> (Vec<i32>, Vec<f32>) {
    let o = bins.origin_bohr;
    let mut atoms = Vec::with_capacity(4 * bins.charges_e.len());
    for (((x, y), z), q) in bins
        .x_bohr
        .iter()
        .zip(&bins.y_bohr)
        .zip(&bins.z_bohr)
        .zip(&bins.charges_e)
    {
        atoms.extend_from_slice(&[(x - o[0]) as f32, (y - o[1]) as f32, (z - o[2]) as f32, *q as f32]);
    }
    (
        bins.start.iter().map(|&s| s.min(i32::MAX as usize) as i32).collect(),
        atoms,
    )
}

/// Host twins of `kernels/msm_bins.cu`, the atomics' slot order reversed (any order must give the
/// host's arrays), against [`AtomBins::filled`].
#[cfg(test)]
// Index loops on purpose: each loop body is a kernel thread.
#[allow(clippy::needless_range_loop, clippy::manual_memcpy)]
mod emulation {
    use super::*;
    use crate::model::UnitCell;

    fn dot(w: &[f64; 3], x: f64, y: f64, z: f64) -> f64 {
        w[0] * x + w[1] * y + w[2] * z
    }

    fn bin(g: &MsmBinArgs, a: &[f64], p: &mut [f64; 3]) -> i32 {
        *p = [a[0], a[1], a[2]];
        if a[3] == 0.0 {
            return -1;
        }
        if g.periodic != 0 {
            let mut f = [0.0; 3];
            for k in 0..3 {
                let t = dot(&g.cell_inv[k], a[0], a[1], a[2]);
                let t = t - t.floor();
                f[k] = if t >= 1.0 { 0.0 } else { t };
            }
            for i in 0..3 {
                p[i] = f[0] * g.cell[0][i] + f[1] * g.cell[1][i] + f[2] * g.cell[2][i];
            }
        }
        let d = [p[0] - g.origin[0], p[1] - g.origin[1], p[2] - g.origin[2]];
        let mut c = [0i64; 3];
        for k in 0..3 {
            let t = dot(&g.inverse[k], d[0], d[1], d[2]).floor();
            if !t.is_finite() || t.abs() > 1e9 {
                return -1;
            }
            let mut b = t as i64;
            if g.periodic != 0 {
                b = b.clamp(0, g.counts[k] as i64 - 1);
            }
            c[k] = b.max(0).min(g.counts[k] as i64 - 1);
        }
        (c[0] + g.counts[0] as i64 * (c[1] + g.counts[1] as i64 * c[2])) as i32
    }

    fn replay(frame: &AtomBins, charges: &PointCharges) -> (Vec<i32>, Vec<f32>) {
        let n = charges.charges_e.len();
        let g = MsmBinArgs::new(frame, n).unwrap();
        let raw: Vec<f64> = charges
            .positions_bohr
            .iter()
            .zip(&charges.charges_e)
            .flat_map(|(p, q)| [p[0], p[1], p[2], *q])
            .collect();
        let nb = g.n_bins as usize;
        let mut bin_of = vec![0i32; n];
        let mut counts = vec![0i32; nb];
        let mut p = [0.0; 3];
        for j in 0..n {
            let b = bin(&g, &raw[4 * j..4 * j + 4], &mut p);
            bin_of[j] = b;
            if b >= 0 {
                counts[b as usize] += 1;
            }
        }
        // Block scans of 1024, block sums, offsets: as the three kernels.
        let mut start = vec![0i32; nb + 1];
        let n_blocks = nb.div_ceil(1024);
        let mut sums = vec![0i32; n_blocks];
        for (k, sum) in sums.iter_mut().enumerate() {
            let mut running = 0;
            for i in k * 1024..((k + 1) * 1024).min(nb) {
                start[i] = running;
                running += counts[i];
            }
            *sum = running;
        }
        let mut running = 0;
        for s in sums.iter_mut() {
            let v = *s;
            *s = running;
            running += v;
        }
        start[nb] = running;
        let mut fill = vec![0i32; nb];
        for i in 0..nb {
            start[i] += sums[i / 1024];
            fill[i] = start[i];
        }
        let mut index = vec![0i32; n];
        for j in (0..n).rev() {
            let b = bin_of[j];
            if b < 0 {
                continue;
            }
            index[fill[b as usize] as usize] = j as i32;
            fill[b as usize] += 1;
        }
        for b in 0..nb {
            let (s0, s1) = (start[b] as usize, start[b + 1] as usize);
            index[s0..s1].sort_unstable();
        }
        let used = start[nb] as usize;
        let mut atoms = vec![f32::NAN; 4 * used];
        for s in 0..used {
            let j = index[s] as usize;
            let a = &raw[4 * j..4 * j + 4];
            bin(&g, a, &mut p);
            atoms[4 * s..4 * s + 4].copy_from_slice(&[
                (p[0] - g.origin[0]) as f32,
                (p[1] - g.origin[1]) as f32,
                (p[2] - g.origin[2]) as f32,
                a[3] as f32,
            ]);
        }
        (start, atoms)
    }

    #[test]
    fn kernel_twins_bin_as_the_host() {
        let mut next = crate::compute::cuda::test_numbers();
        let mut q = PointCharges::default();
        for i in 0..20_000 {
            // Some charges outside the periodic cells (wrapped), some zero (skipped), some on a
            // bin boundary.
            let p = [next() * 90.0 - 20.0, next() * 80.0 - 15.0, next() * 70.0 - 10.0];
            q.positions_bohr
                .push(if i % 97 == 0 { [0.0, 7.5589, 15.1178] } else { p });
            q.charges_e.push(if i % 13 == 0 { 0.0 } else { next() - 0.5 });
        }
        let a = 15.0;
        let bohr = crate::model::units::bohr_from_angstrom(1.0);
        let frames = [
            ("open", AtomBins::open_frame(&q.positions_bohr, a).unwrap()),
            (
                "orthorhombic",
                AtomBins::periodic_frame(
                    &UnitCell::orthorhombic([30.0, 28.0, 26.0])
                        .matrix_angstrom()
                        .map(|r| r.map(|x| x * bohr)),
                    a,
                )
                .unwrap(),
            ),
            (
                "triclinic",
                AtomBins::periodic_frame(
                    &UnitCell::new([31.0, 29.0, 27.0], [80.0, 100.0, 75.0])
                        .matrix_angstrom()
                        .map(|r| r.map(|x| x * bohr)),
                    a,
                )
                .unwrap(),
            ),
        ];
        for (name, frame) in frames {
            assert!(
                frame.start.is_empty() && frame.charges_e.is_empty(),
                "{name}: a frame holds charges"
            );
            let host = frame.clone().filled(&q.positions_bohr, &q.charges_e);
            assert!(host.n_bins() > 8, "{name}: {:?}", host.counts);
            let (start, atoms) = replay(&frame, &q);
            let (want_start, want_atoms) = host_bin_arrays(&host);
            assert_eq!(start, want_start, "{name}: start");
            assert_eq!(atoms, want_atoms, "{name}: charges");
        }
    }
}
