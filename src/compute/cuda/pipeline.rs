//! Pipelined slabs of one CUDA engine: a slab whose kernels are cheap beside its copy back (orbitals
//! and densities) is computed in chunks of whole planes,
//! each into one of two device buffers on the engine's stream, and copied back on the engine's copy
//! stream into one of two page-locked chunk buffers, while the host thread moves the chunk before
//! into the caller's slab (checking every value is finite in the same pass). So the next chunk's
//! kernels, this chunk's DMA and the last chunk's host copy run at the same time, and the
//! page-locked memory is two chunks, reused across slabs and requests, however large the slab.
//!
//! Owns [`CudaEngine::compute_pipelined`] and the copy-bandwidth figure of the developer benchmark.

use super::dev_err;
use super::engine::{CudaEngine, EngineState, copy_all_finite};
use crate::compute::{ComputeError, FieldJob};
use std::ops::Range;

/// Points per pipelined chunk (whole planes, at least one): 4 MiB, about a fifth of a millisecond of
/// C60 orbital kernel on an H200, short enough that the first kernel and the last host copy, which
/// nothing overlaps, cost little per slab.
pub(crate) const CHUNK_POINTS: usize = 1 << 20;

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

impl CudaEngine {
    /// Computes `z` of `job` into `out` in chunks (see the module doc); says whether every value is
    /// finite. `out` holds the slab's points, plane after plane.
    pub(super) fn compute_pipelined(
        &self,
        st: &mut EngineState,
        job: &FieldJob,
        z: &Range<usize>,
        out: &mut [f32],
    ) -> Result<bool, ComputeError> {
        let plane = job.lattice.dims[0] * job.lattice.dims[1];
        let chunks = chunk_ranges(z, plane, CHUNK_POINTS);
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
            // Alternate device buffers: chunk k is written while chunk k-1 is read by the copy
            // stream (the buffers' use events order chunk k+1's writes after chunk k-1's copy).
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
}

/// Waits for staging slot `slot`'s copy and moves its first `range.len()` values into `out[range]`;
/// says whether they are all finite.
fn drain(st: &EngineState, slot: usize, range: Range<usize>, out: &mut [f32]) -> Result<bool, ComputeError> {
    let host = st.staging[slot]
        .as_ref()
        .ok_or_else(|| ComputeError::Device("no page-locked buffer".into()))?
        .as_slice()
        .map_err(dev_err("download"))?;
    let n = range.len();
    let src = host
        .get(..n)
        .ok_or_else(|| ComputeError::Device("short page-locked buffer".into()))?;
    let dst = out.get_mut(range).ok_or(ComputeError::BadOutput { got: 0, need: n })?;
    Ok(copy_all_finite(src, dst))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn chunks_cover_the_slab_in_whole_planes() {
        let plane = 256 * 256;
        let c = chunk_ranges(&(10..266), plane, CHUNK_POINTS);
        assert_eq!(c.first(), Some(&(10..26)));
        assert_eq!(c.last(), Some(&(250..266)));
        assert_eq!(c.len(), 16);
        assert!(c.windows(2).all(|w| w[0].end == w[1].start));
        // A plane larger than a chunk: one plane each; a ragged end.
        let c = chunk_ranges(&(0..3), 2048 * 2048, CHUNK_POINTS);
        assert_eq!(c, vec![0..1, 1..2, 2..3]);
        let c = chunk_ranges(&(5..12), 100, 300);
        assert_eq!(c, vec![5..8, 8..11, 11..12]);
        assert!(chunk_ranges(&(4..4), 100, 300).is_empty());
    }
}
