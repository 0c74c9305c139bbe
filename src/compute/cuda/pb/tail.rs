//! The V-cycle's small levels in one launch (`pb_tail` in `kernels/pb.cu`): from the first level of
//! at most `CudaPbSolver::set_tail_points` points down to the coarsest, one block of 1024 threads
//! smooths, restricts, solves the coarsest level and prolongs with every level's iterate, right side
//! and coefficients (the one-byte codes decoded once) in shared memory, by the same passes and
//! arithmetic as the level-by-level launches (the same preconditioner: the same iterations). A launch
//! costs a few microseconds whatever its work; but one block runs on one multiprocessor, so the levels
//! it takes must be small: at 161^3 it takes 11^3 and 6^3 (21^3 would not fit its shared memory, and
//! decoding in each sweep, it had been slower than the launches it replaced; `benches/RESULTS.md`).
//!
//! Owns [`Tail`] (the levels' descriptions on the device, rewritten when a spacing changes),
//! [`TailPlan`] (what a V-cycle needs to launch it) and [`tail_start`] (which levels it takes).

use super::raw::{self, Addr, raw_args};
use super::{CudaPbSolver, Kernels, Level, ONE_BLOCK_POINTS, drv};
use crate::compute::pb::PbError;
use cudarc::driver::sys::{CUdevice_attribute, CUfunction_attribute_enum};
use cudarc::driver::{CudaSlice, CudaStream, LaunchConfig};
use std::sync::Arc;

/// Points of the largest level the tail takes, by default (11^3: two levels of a 161^3 lattice).
pub const DEFAULT_TAIL_POINTS: usize = 11 * 11 * 11;
/// `PB_TAIL_LEVELS` in the kernel.
const MAX_LEVELS: usize = 8;
/// 64-bit words of one level's description (`PbTailLevel`).
const WORDS: usize = 7;
/// Threads of the tail's one block.
const THREADS: u32 = 1024;
/// Shared memory a kernel gets without asking for more.
const STATIC_SHARED: usize = 48 * 1024;

/// Bytes of shared memory the tail needs from level `start` of `dims`: x, b and the four coefficient
/// arrays of each level, and the first level's residual, in floats.
pub(super) fn shared_bytes(dims: &[[usize; 3]], start: usize) -> usize {
    let n = |d: &[usize; 3]| d.iter().product::<usize>();
    let levels = dims.get(start..).unwrap_or(&[]);
    let Some(first) = levels.first() else {
        return 0;
    };
    4 * (levels.iter().map(|d| 6 * n(d)).sum::<usize>() + n(first))
}

/// The first level the tail takes: every level from it on has at most `max_points` points, it is
/// below the finest, the coarsest is small enough for its one-block solve, and their shared memory
/// fits `max_shared` bytes. None when no level qualifies (or `max_points` is 0).
pub fn tail_start(dims: &[[usize; 3]], max_points: usize, max_shared: usize) -> Option<usize> {
    let n = |d: &[usize; 3]| d.iter().product::<usize>();
    let coarsest = dims.last()?;
    if dims.len() < 2 || n(coarsest) > ONE_BLOCK_POINTS || max_points == 0 {
        return None;
    }
    (1..dims.len()).find(|&s| {
        dims.len() - s <= MAX_LEVELS
            && dims[s..].iter().all(|d| n(d) <= max_points)
            && shared_bytes(dims, s) <= max_shared
    })
}

/// What a V-cycle needs to launch the tail: where it starts, its levels' descriptions, its count,
/// shared bytes and the coarsest level's sweep pairs (`pb_coarse_solve`'s).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct TailPlan {
    pub start: usize,
    desc: Addr,
    count: i32,
    shared: u32,
    pairs: i32,
}

/// The tail of one set of levels: the descriptions on the device and the words last written there.
pub(super) struct Tail {
    start: usize,
    desc: CudaSlice<u64>,
    words: Vec<u64>,
    shared: u32,
    pairs: i32,
}

impl Tail {
    /// A tail for `levels` from `start`; the descriptions are written by [`Tail::update`].
    pub(super) fn new(stream: &Arc<CudaStream>, k: &Kernels, levels: &[Level], start: usize) -> Result<Tail, PbError> {
        let dims: Vec<[usize; 3]> = levels.iter().map(|l| l.dims.map(|v| v as usize)).collect();
        let shared = shared_bytes(&dims, start);
        if shared > STATIC_SHARED {
            let attr = CUfunction_attribute_enum::CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES;
            k.tail
                .set_attribute(attr, shared as i32)
                .map_err(drv("shared memory for pb_tail"))?;
        }
        let count = levels.len().saturating_sub(start);
        let desc = stream
            .alloc_zeros::<u64>((WORDS * count).max(1))
            .map_err(drv("device allocation"))?;
        let largest = dims.last().and_then(|d| d.iter().copied().max()).unwrap_or(1).max(1);
        Ok(Tail {
            start,
            desc,
            words: Vec::new(),
            shared: shared as u32,
            pairs: (2 * largest) as i32,
        })
    }

    /// Writes the levels' descriptions when they changed (a new spacing changes 1/h^2).
    pub(super) fn update(&mut self, stream: &Arc<CudaStream>, levels: &[Level]) -> Result<(), PbError> {
        let mut words = Vec::with_capacity(WORDS * levels.len());
        for lv in levels.iter().skip(self.start) {
            let [nx, ny, nz] = lv.dims.map(|v| u64::from(v as u32));
            let p = lv.ptrs;
            words.extend([
                nx | (ny << 32),
                nz | (u64::from(lv.ih2.to_bits()) << 32),
                p.pk,
                p.eps[0],
                p.eps[1],
                p.eps[2],
                p.k2,
            ]);
        }
        if words != self.words {
            stream.memcpy_htod(&words, &mut self.desc).map_err(drv("upload"))?;
            self.words = words;
        }
        Ok(())
    }

    pub(super) fn plan(&self, stream: &Arc<CudaStream>) -> TailPlan {
        TailPlan {
            start: self.start,
            desc: raw::addr(stream, &self.desc),
            count: (self.words.len() / WORDS) as i32,
            shared: self.shared,
            pairs: self.pairs,
        }
    }
}

/// The most shared memory one block of the device may ask for.
pub(super) fn device_shared_limit(ctx: &cudarc::driver::CudaContext) -> usize {
    ctx.attribute(CUdevice_attribute::CU_DEVICE_ATTRIBUTE_MAX_SHARED_MEMORY_PER_BLOCK_OPTIN)
        .map(|v| v.max(0) as usize)
        .unwrap_or(STATIC_SHARED)
}

impl CudaPbSolver {
    /// Readies the one-launch tail of the V-cycle for the current levels and setting (or drops it).
    pub(super) fn prepare_tail(&mut self) -> Result<(), PbError> {
        let stream = self.stream.clone();
        let k = Arc::clone(&self.kernels);
        let limit = device_shared_limit(&self.engine.ctx);
        let points = self.tail_points;
        let b = self.bufs()?;
        let dims: Vec<[usize; 3]> = b.levels.iter().map(|l| l.dims.map(|v| v as usize)).collect();
        let start = tail_start(&dims, points, limit);
        if b.tail.as_ref().map(|t| t.start) != start {
            b.tail = match start {
                Some(s) => Some(Tail::new(&stream, &k, &b.levels, s)?),
                None => None,
            };
        }
        if let Some(t) = b.tail.as_mut() {
            t.update(&stream, &b.levels)?;
        }
        Ok(())
    }
}

/// Launches the tail: x = M b on level `plan.start` (b and x in that level's buffers).
pub(super) fn launch(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lv: &Level,
    plan: TailPlan,
    sweeps: usize,
    packed: bool,
    omega: f32,
) -> Result<(), PbError> {
    let cfg = LaunchConfig {
        grid_dim: (1, 1, 1),
        block_dim: (THREADS, 1, 1),
        shared_mem_bytes: plan.shared,
    };
    let (sweeps, packed) = (sweeps as i32, i32::from(packed));
    let mut args = raw_args![
        plan.desc, plan.count, sweeps, packed, omega, plan.pairs, lv.ptrs.b, lv.ptrs.x
    ];
    // SAFETY: pb_tail's parameters; `desc` describes `count` levels whose buffers live on `stream`
    // (written by `Tail::update` for these levels); b and x hold the first level's points; the shared
    // memory is what `shared_bytes` counts for these levels.
    unsafe { raw::launch(stream, &k.tail, cfg, &mut args, "pb_tail") }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compute::cuda::pb::level_dims;

    #[test]
    fn the_tail_takes_the_levels_of_a_161_lattice_that_fit_its_shared_memory() {
        let dims = level_dims([161; 3]);
        assert_eq!(tail_start(&dims, 11 * 11 * 11, 227 * 1024), Some(4));
        // From 21^3 the levels need 296 KB: more than an H200's 227 KB per block.
        assert_eq!(tail_start(&dims, 21 * 21 * 21, 227 * 1024), Some(4));
        assert_eq!(tail_start(&dims, 21 * 21 * 21, 300 * 1024), Some(3));
        // 11^3 and 6^3 fit the 48 KB every device gives.
        assert_eq!(tail_start(&dims, 11 * 11 * 11, 48 * 1024), Some(4));
        assert_eq!(tail_start(&dims, 11 * 11 * 11, 40 * 1024), Some(5));
        assert_eq!(tail_start(&dims, 0, 227 * 1024), None);
        // One level: nothing below the finest.
        assert_eq!(tail_start(&level_dims([160, 161, 161]), 1 << 20, 227 * 1024), None);
        // Six arrays of 11^3 and of 6^3 and the residual of 11^3, in floats.
        assert_eq!(shared_bytes(&dims, 4), 4 * (6 * (1331 + 216) + 1331));
    }

    #[test]
    fn the_tail_never_starts_at_the_finest_level_or_takes_a_large_coarsest() {
        // 97 x 65 x 33 coarsens to 7 x 5 x 3 in five levels, all small below the first.
        let dims = level_dims([97, 65, 33]);
        assert_eq!(tail_start(&dims, 1 << 30, 1 << 30), Some(1));
        // A coarsest level above the one-block solve's size keeps the level-by-level cycle.
        let big = vec![[101, 101, 101], [51, 51, 51]];
        assert_eq!(tail_start(&big, 1 << 30, 1 << 30), None);
    }
}
