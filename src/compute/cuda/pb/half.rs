//! The finest level of the V-cycle in half precision (`kernels/pb_half.cu`): its right side and
//! iterate stored as IEEE half floats, scaled by S = 32 / rms(r) from the residual's norm on the
//! device, so a sweep moves a third of the float32 level's bytes (with the one-byte coefficients).
//! The preconditioner becomes inexact by about 5e-4 of its output; conjugate gradients and the
//! float64 corrections are unchanged, so only the iteration count can move.
//!
//! Owns [`HalfBufs`], [`HalfPtrs`] and `CudaPbSolver::half_ptrs`; `multigrid::vcycle` and
//! `cg::enqueue_iteration` launch its kernels.

use super::raw::{self, Addr};
use super::{CudaPbSolver, drv};
use crate::compute::pb::PbError;
use cudarc::driver::CudaSlice;

/// The finest level's half-precision right side and iterate.
pub(super) struct HalfBufs {
    _x16: CudaSlice<u16>,
    _b16: CudaSlice<u16>,
    ptrs: HalfPtrs,
}

/// What the half-precision kernels need: the two buffers, where |r|^2 of the residual being
/// preconditioned is (set per iteration by its parity) and the point count S is taken over.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct HalfPtrs {
    pub x16: Addr,
    pub b16: Addr,
    pub rr: Addr,
    pub n: i64,
}

impl CudaPbSolver {
    /// The half-precision buffers of the finest level (allocated at the first use), when the
    /// solve uses them: `set_half_vcycle`, packed coefficients, a coarse level and a first sweep.
    pub(super) fn half_ptrs(&mut self, fine_sweeps: usize) -> Result<Option<HalfPtrs>, PbError> {
        if !(self.half_allowed && self.packed && fine_sweeps > 0) {
            return Ok(None);
        }
        let stream = self.stream.clone();
        let b = self.bufs()?;
        if b.levels.len() < 2 {
            return Ok(None);
        }
        let n = b.levels.first().map_or(0, |l| l.n());
        if b.half.is_none() {
            let x16 = stream.alloc_zeros::<u16>(n.max(1)).map_err(drv("device allocation"))?;
            let b16 = stream.alloc_zeros::<u16>(n.max(1)).map_err(drv("device allocation"))?;
            let ptrs = HalfPtrs {
                x16: raw::addr(&stream, &x16),
                b16: raw::addr(&stream, &b16),
                rr: 0,
                n: n as i64,
            };
            b.half = Some(HalfBufs {
                _x16: x16,
                _b16: b16,
                ptrs,
            });
        }
        Ok(b.half.as_ref().map(|h| h.ptrs))
    }
}
