//! The launch sequence of the multilevel summation's long-range levels on a device: anterpolation,
//! restriction, the top level, every level's lattice cutoff and prolongation, as [`Step`]s over
//! level buffers ([`Buf`]), in the order of the host cascade of [`LevelGeometry`]. Shared by the
//! device engines (`compute::cuda::msm_levels`, `compute::wgpu::msm_levels`), which launch their own
//! kernels for each step.

use super::LevelGeometry;

/// A level buffer of the cascade.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Buf {
    /// Charges of level `l`.
    Q(usize),
    /// Potential of level `l`.
    E(usize),
    /// Scratch of the separable passes.
    T1,
    T2,
}

/// One 1-D restriction or prolongation pass (`msm::axis_pass` on the host).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct AxisPass {
    pub src_dims: [usize; 3],
    pub src_lo: i64,
    pub dst_dims: [usize; 3],
    pub dst_lo: i64,
    pub axis: usize,
    pub restrict: bool,
    /// Add the sums to the destination instead of overwriting it.
    pub accumulate: bool,
}

/// One step of the cascade (one or two launches on a device).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Step {
    /// Charges onto the finest lattice, `Q(0)`.
    Anterpolate,
    /// `dst` from `src` by one separable pass.
    Axis { src: Buf, dst: Buf, pass: AxisPass },
    /// The top level `E(L)` from `Q(L)`.
    Top,
    /// `E(level)` = lattice cutoff of `Q(level)` with the stencil times `2^-level`.
    Cutoff { level: usize },
}

/// The launches that turn the finest charges into every level's potential, in order: the host
/// cascade of `LevelGeometry` (`compute::esp`), pass by pass.
pub fn schedule(g: &LevelGeometry) -> Vec<Step> {
    let layouts = &g.layouts;
    let top = layouts.len().saturating_sub(1);
    let mut steps = vec![Step::Anterpolate];
    let axis = |src, src_dims, src_lo: [i64; 3], dst, dst_dims, dst_lo: [i64; 3], axis: usize, restrict, accumulate| {
        Step::Axis {
            src,
            dst,
            pass: AxisPass {
                src_dims,
                src_lo: src_lo[axis],
                dst_dims,
                dst_lo: dst_lo[axis],
                axis,
                restrict,
                accumulate,
            },
        }
    };
    for l in 0..top {
        let (Some(f), Some(c)) = (layouts.get(l), layouts.get(l + 1)) else {
            continue;
        };
        let (fd, cd) = (f.dims, c.dims);
        let d1 = [cd[0], fd[1], fd[2]];
        let d2 = [cd[0], cd[1], fd[2]];
        steps.push(axis(Buf::Q(l), fd, f.lo, Buf::T1, d1, c.lo, 0, true, false));
        steps.push(axis(Buf::T1, d1, f.lo, Buf::T2, d2, c.lo, 1, true, false));
        steps.push(axis(Buf::T2, d2, f.lo, Buf::Q(l + 1), cd, c.lo, 2, true, false));
    }
    steps.push(Step::Top);
    for l in (0..top).rev() {
        let (Some(f), Some(c)) = (layouts.get(l), layouts.get(l + 1)) else {
            continue;
        };
        steps.push(Step::Cutoff { level: l });
        let (fd, cd) = (f.dims, c.dims);
        let d1 = [cd[0], cd[1], fd[2]];
        let d2 = [cd[0], fd[1], fd[2]];
        steps.push(axis(Buf::E(l + 1), cd, c.lo, Buf::T1, d1, f.lo, 2, false, false));
        steps.push(axis(Buf::T1, d1, c.lo, Buf::T2, d2, f.lo, 1, false, false));
        steps.push(axis(Buf::T2, d2, c.lo, Buf::E(l), fd, f.lo, 0, false, true));
    }
    steps
}
