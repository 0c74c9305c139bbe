//! Pipelined slabs of one CUDA engine: a slab whose kernels are cheap beside its copy back (orbitals
//! and densities) is computed in chunks of whole planes, each into one of two device buffers on
//! the engine's stream, and copied back on the engine's copy stream while the next chunk's kernels
//! run. Two ways back:
//!
//! - into registered memory ([`super::host_register`], a grid buffer the pool keeps for reuse): the
//!   copy stream writes each chunk straight into the caller's slab, and a kernel on the engine's
//!   stream flags any non-finite value of the chunk on the device, so the host touches no value;
//! - otherwise through two page-locked chunk buffers, reused across slabs and requests, which the
//!   host thread moves into the caller's slab (checking every value is finite in the same pass)
//!   while the device computes and copies the chunks after.
//!
//! Owns [`CudaEngine::compute_pipelined`], the chunk size (tunable per engine), the engine's
//! [`PipelineStats`] and the copy-bandwidth figure of the developer benchmark.

use super::dev_err;
use super::engine::{CudaEngine, EngineState, UTIL_SRC, copy_all_finite};
use crate::compute::{ComputeError, FieldJob};
use cudarc::driver::{CudaStream, DevicePtr, LaunchConfig, PushKernelArg};
use std::ops::Range;
use std::time::Instant;

/// Points per pipelined chunk by default (whole planes, at least one): 16 MiB. Measured on an H200
/// with the C60 HOMO on 256^3 (`benches/RESULTS.md`, "The pool's copy back"): chunks of 1M points
/// left the device idle between chunks (8.8 ms a request through the pool), 4M points took
/// 3.7 ms, 8M 4.1 ms and one copy of the whole slab 5.2 ms.
pub(crate) const CHUNK_POINTS: usize = 1 << 22;

/// What the pipelined slabs of an engine spent, summed since the last [`CudaEngine::take_pipeline_stats`]
/// (benchmarks and diagnostics).
#[derive(Clone, Copy, Debug, Default, PartialEq, serde::Serialize)]
pub struct PipelineStats {
    /// Slabs through the page-locked chunk buffers, and straight into registered memory.
    pub staged_slabs: u64,
    pub direct_slabs: u64,
    pub chunks: u64,
    /// Host time waiting for a chunk's copy into page-locked memory, and moving chunks into the
    /// caller's slab (staged slabs), ms.
    pub wait_ms: f64,
    pub host_copy_ms: f64,
    /// Host time of the whole slabs, ms.
    pub slab_ms: f64,
}

/// The plane ranges of `z` in chunks of about `chunk_points` points (whole planes, at least one).
pub(crate) fn chunk_ranges(z: &Range<usize>, plane_points: usize, chunk_points: usize) -> Vec<Range<usize>> {
    let planes = (chunk_points / plane_points.max(1)).max(1);
    let mut out = Vec::with_capacity(z.len().div_ceil(planes));
    let mut s = z.start;
    while s < z.end {
        let e = (s + planes).min(z.end);
        out.push(s..e);
        s = e;
    }
    out
}

/// Waits for the copy stream when dropped, so that no copy into the caller's memory outlives the
/// call, on every way out of it.
struct SyncOnExit<'a>(&'a CudaStream);

impl Drop for SyncOnExit<'_> {
    fn drop(&mut self) {
        if let Err(e) = self.0.synchronize() {
            tracing::warn!("copy stream synchronize: {e:?}");
        }
    }
}

impl EngineState {
    /// Points per pipelined chunk on this engine.
    pub(super) fn chunk_points(&self) -> usize {
        if self.chunk_points == 0 {
            CHUNK_POINTS
        } else {
            self.chunk_points
        }
    }
}

impl CudaEngine {
    /// Sets the points per pipelined chunk (0: the default, [`CHUNK_POINTS`]); slabs up to that
    /// many points come back in one copy. For tuning and tests.
    pub fn set_pipeline_chunk_points(&self, points: usize) -> Result<(), ComputeError> {
        self.lock_state()?.chunk_points = points;
        Ok(())
    }

    /// What the pipelined slabs spent since the last call (the figures are reset).
    pub fn take_pipeline_stats(&self) -> Result<PipelineStats, ComputeError> {
        Ok(std::mem::take(&mut self.lock_state()?.pipeline_stats))
    }

    /// Computes `z` of `job` into `out` in chunks (see the module doc); says whether every value is
    /// finite. `out` holds the slab's points, plane after plane.
    pub(super) fn compute_pipelined(
        &self,
        st: &mut EngineState,
        job: &FieldJob,
        z: &Range<usize>,
        out: &mut [f32],
    ) -> Result<bool, ComputeError> {
        let t0 = Instant::now();
        let plane = job.lattice.dims[0] * job.lattice.dims[1];
        let chunks = chunk_ranges(z, plane, st.chunk_points());
        let direct = super::host_register::is_registered(out);
        let finite = if direct {
            self.pipelined_direct(st, job, z, &chunks, out)?
        } else {
            self.pipelined_staged(st, job, z, &chunks, out)?
        };
        let stats = &mut st.pipeline_stats;
        if direct {
            stats.direct_slabs += 1;
        } else {
            stats.staged_slabs += 1;
        }
        stats.chunks += chunks.len() as u64;
        stats.slab_ms += t0.elapsed().as_secs_f64() * 1e3;
        Ok(finite)
    }

    /// Chunks copied by the device straight into `out` (registered memory), checked on the device.
    fn pipelined_direct(
        &self,
        st: &mut EngineState,
        job: &FieldJob,
        z: &Range<usize>,
        chunks: &[Range<usize>],
        out: &mut [f32],
    ) -> Result<bool, ComputeError> {
        let plane = job.lattice.dims[0] * job.lattice.dims[1];
        let util = self.module(st, UTIL_SRC)?;
        let check = Self::function(&util, "flag_nonfinite")?;
        match st.finite_flag.as_mut() {
            Some(flag) => self.stream.memset_zeros(flag).map_err(dev_err("flag reset"))?,
            None => st.finite_flag = Some(self.stream.alloc_zeros::<i32>(1).map_err(dev_err("allocation"))?),
        }
        // From here on copies into `out` may be in flight: waited for on every way out.
        let _sync = SyncOnExit(&self.copy_stream);
        for zc in chunks {
            // Alternate device buffers: chunk k is written while chunk k-1 is read by the copy
            // stream (the buffers' use events order chunk k+1's writes after chunk k-1's copy).
            std::mem::swap(&mut st.out, &mut st.out_spare);
            let n = self.run_device(st, job, zc)?;
            let EngineState {
                out: dev, finite_flag, ..
            } = &mut *st;
            let dev = dev
                .as_ref()
                .filter(|b| b.len() >= n)
                .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
            let flag = finite_flag
                .as_mut()
                .ok_or_else(|| ComputeError::Device("no flag buffer".into()))?;
            let ni = n as i32;
            let mut b = self.stream.launch_builder(&check);
            b.arg(dev).arg(&ni).arg(flag);
            // SAFETY: the kernel reads `n` values of a buffer of at least `n` and writes one int.
            unsafe { b.launch(LaunchConfig::for_num_elems(n as u32)) }.map_err(dev_err("finite check launch"))?;
            self.copy_stream.join(&self.stream).map_err(dev_err("stream wait"))?;
            let start = (zc.start - z.start) * plane;
            let got = out.len();
            let dst = out
                .get_mut(start..start + n)
                .ok_or(ComputeError::BadOutput { got, need: start + n })?;
            let view = dev.slice(0..n);
            let (src, _read) = view.device_ptr(&self.copy_stream);
            // SAFETY: `dst` is `n` values of registered host memory that stays borrowed until the
            // copy stream has been waited for (`_sync`); `src` holds `n` values.
            unsafe { cudarc::driver::result::memcpy_dtoh_async(dst, src, self.copy_stream.cu_stream()) }
                .map_err(dev_err("download"))?;
        }
        let flag = st
            .finite_flag
            .as_ref()
            .ok_or_else(|| ComputeError::Device("no flag buffer".into()))?;
        let bad = self.stream.clone_dtoh(flag).map_err(dev_err("flag download"))?;
        Ok(bad.first() == Some(&0))
    }

    /// Chunks through the two page-locked chunk buffers, moved into `out` by the host.
    fn pipelined_staged(
        &self,
        st: &mut EngineState,
        job: &FieldJob,
        z: &Range<usize>,
        chunks: &[Range<usize>],
        out: &mut [f32],
    ) -> Result<bool, ComputeError> {
        let plane = job.lattice.dims[0] * job.lattice.dims[1];
        let most = chunks.iter().map(|c| c.len() * plane).max().unwrap_or(0);
        for slot in st.staging.iter_mut() {
            if slot.as_ref().is_none_or(|p| p.len() < most) {
                *slot = None;
                // SAFETY: a chunk's values are read only after its copy has written them.
                let fresh = unsafe { self.ctx.alloc_pinned_with_flags::<f32>(most, 0) };
                *slot = Some(fresh.map_err(dev_err("page-locked allocation"))?);
            }
        }
        let mut finite = true;
        // The chunk copied back last: its staging slot and its points in `out`.
        let mut pending: Option<(usize, Range<usize>)> = None;
        for (k, zc) in chunks.iter().enumerate() {
            let slot = k % 2;
            std::mem::swap(&mut st.out, &mut st.out_spare);
            let n = self.run_device(st, job, zc)?;
            self.copy_stream.join(&self.stream).map_err(dev_err("stream wait"))?;
            let EngineState { out: dev, staging, .. } = &mut *st;
            let dev = dev
                .as_ref()
                .filter(|b| b.len() >= n)
                .ok_or_else(|| ComputeError::Device("no output buffer".into()))?;
            let host = staging[slot]
                .as_mut()
                .ok_or_else(|| ComputeError::Device("no page-locked buffer".into()))?;
            self.copy_stream
                .memcpy_dtoh(&dev.slice(0..n), host)
                .map_err(dev_err("download"))?;
            if let Some((prev, range)) = pending.take() {
                finite &= drain(st, prev, range, out)?;
            }
            let start = (zc.start - z.start) * plane;
            pending = Some((slot, start..start + n));
        }
        if let Some((prev, range)) = pending.take() {
            finite &= drain(st, prev, range, out)?;
        }
        Ok(finite)
    }

    /// Milliseconds to copy `points` values from the device into page-locked host memory, one per
    /// repetition after one untimed copy (the bandwidth the pool's copy back is measured against).
    #[cfg(feature = "bench-harness")]
    pub fn time_copy_back(&self, points: usize, repetitions: usize) -> Result<Vec<f64>, ComputeError> {
        self.ctx.bind_to_thread().map_err(dev_err("bind"))?;
        let dev = self
            .stream
            .alloc_zeros::<f32>(points.max(1))
            .map_err(dev_err("allocation"))?;
        // SAFETY: only written by the copies below.
        let mut host = unsafe { self.ctx.alloc_pinned_with_flags::<f32>(points.max(1), 0) }
            .map_err(dev_err("page-locked allocation"))?;
        self.time_on_stream(repetitions, || {
            self.stream.memcpy_dtoh(&dev, &mut host).map_err(dev_err("download"))?;
            Ok(())
        })
    }

    /// The engine's CUDA context (to register host memory with, [`super::host_register`]).
    pub fn context(&self) -> &std::sync::Arc<cudarc::driver::CudaContext> {
        &self.ctx
    }
}

/// Waits for staging slot `slot`'s copy and moves its first `range.len()` values into `out[range]`;
/// says whether they are all finite.
fn drain(st: &mut EngineState, slot: usize, range: Range<usize>, out: &mut [f32]) -> Result<bool, ComputeError> {
    let t0 = Instant::now();
    let host = st.staging[slot]
        .as_ref()
        .ok_or_else(|| ComputeError::Device("no page-locked buffer".into()))?
        .as_slice()
        .map_err(dev_err("download"))?;
    let t1 = Instant::now();
    let n = range.len();
    let src = host
        .get(..n)
        .ok_or_else(|| ComputeError::Device("short page-locked buffer".into()))?;
    let dst = out.get_mut(range).ok_or(ComputeError::BadOutput { got: 0, need: n })?;
    let finite = copy_all_finite(src, dst);
    st.pipeline_stats.wait_ms += (t1 - t0).as_secs_f64() * 1e3;
    st.pipeline_stats.host_copy_ms += t1.elapsed().as_secs_f64() * 1e3;
    Ok(finite)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_slab_in_whole_planes() {
        let plane = 256 * 256;
        let c = chunk_ranges(&(10..266), plane, 1 << 20);
        assert_eq!(c.first(), Some(&(10..26)));
        assert_eq!(c.last(), Some(&(250..266)));
        assert_eq!(c.len(), 16);
        assert!(c.windows(2).all(|w| w[0].end == w[1].start));
        // A plane larger than a chunk: one plane each; a ragged end.
        let c = chunk_ranges(&(0..3), 2048 * 2048, 1 << 20);
        assert_eq!(c, vec![0..1, 1..2, 2..3]);
        let c = chunk_ranges(&(5..12), 100, 300);
        assert_eq!(c, vec![5..8, 8..11, 11..12]);
        assert!(chunk_ranges(&(4..4), 100, 300).is_empty());
    }
}
