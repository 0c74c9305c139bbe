//! The multigrid preconditioner of the CUDA Poisson-Boltzmann solver: the levels' shapes
//! ([`level_dims`]), one red-black half sweep ([`smooth`]) and the symmetric V-cycle ([`vcycle`]),
//! launched on the solver's stream over its [`Level`] buffers by their raw addresses (`raw`).

use super::raw::{self, Addr, raw_args};
use super::tail::{self, TailPlan};
use super::{COARSEST_POINTS, Kernels, Level, ONE_BLOCK_POINTS, cfg_smooth, cfg_smooth_r, cfg1, cfg3};
use crate::compute::pb::PbError;
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// The dims of the levels below `dims`: halved while every axis has an odd count and more than
/// [`COARSEST_POINTS`] points.
pub fn level_dims(dims: [usize; 3]) -> Vec<[usize; 3]> {
    let mut out = vec![dims];
    let mut d = dims;
    while d.iter().all(|&n| n % 2 == 1 && n >= 5) && d.iter().any(|&n| n > COARSEST_POINTS) && out.len() < 16 {
        d = d.map(|n| (n - 1) / 2 + 1);
        out.push(d);
    }
    out
}

/// How a V-cycle smooths: Gauss-Seidel sweeps each way at the finest level and below it, whether
/// every level but the coarsest reads its packed one-byte coefficients, the sweeps'
/// over-relaxation (1: plain Gauss-Seidel), and the levels run in one launch (`tail`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(super) struct Cycle {
    pub fine_sweeps: usize,
    pub sweeps: usize,
    pub packed: bool,
    pub omega: f32,
    pub tail: Option<TailPlan>,
}

impl Cycle {
    fn sweeps_at(&self, at: usize) -> usize {
        if at == 0 { self.fine_sweeps } else { self.sweeps }
    }
}

/// One half sweep of colour `colour` on `lv`.
pub(super) fn smooth(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    lv: &Level,
    colour: i32,
    packed: bool,
    omega: f32,
) -> Result<(), PbError> {
    let p = lv.ptrs;
    if packed {
        let mut args = raw_args![
            p.pk, lv.dims[0], lv.dims[1], lv.dims[2], lv.ih2, p.b, p.x, colour, omega
        ];
        // SAFETY: pb_smooth_h's parameters; the level's packed coefficients, right side and iterate.
        return unsafe { raw::launch(stream, &k.smooth_h, cfg_smooth(lv.dims), &mut args, "pb_smooth_h") };
    }
    let mut args = raw_args![
        p.eps[0], p.eps[1], p.eps[2], p.k2, lv.dims[0], lv.dims[1], lv.dims[2], lv.ih2, p.b, p.x, colour, omega
    ];
    // SAFETY: pb_smooth's parameters, in order; the level's buffers live on `stream`. Reads the
    // 7-point neighbourhoods of interior points, writes interior points of x.
    unsafe { raw::launch(stream, &k.smooth, cfg_smooth(lv.dims), &mut args, "pb_smooth") }
}

/// The symmetric V-cycle from level `at`: x = M b with x starting at zero (red then black before
/// the coarse correction, black then red after it; the coarsest level by symmetric sweeps), smoothing
/// as `cy` says. With `cy.packed`, every level but the coarsest smooths and forms its residual on its packed one-byte
/// coefficients (`pb_smooth_h`, `pb_mg_residual_h`). With `dot`, the finest level's last half sweep also adds b . x to the double there (only
/// with `packed` and below the coarsest level: the caller sums it otherwise).
pub(super) fn vcycle(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    levels: &[Level],
    at: usize,
    cy: Cycle,
    dot: Option<Addr>,
) -> Result<(), PbError> {
    let count = levels.len();
    let Some(lv) = levels.get(at) else {
        return Err(PbError::Device("no multigrid level".into()));
    };
    let (sweeps, packed) = (cy.sweeps_at(at), cy.packed);
    if let Some(plan) = cy.tail.filter(|t| t.start == at) {
        // This level and those below in one launch, which writes every point of x.
        return tail::launch(stream, k, lv, plan, sweeps, packed, cy.omega);
    }
    let p = lv.ptrs;
    // With packed coefficients above the coarsest level, the first half sweep writes every point of
    // x from zero (`pb_smooth_h_zero`); the other passes start from x zeroed here.
    let from_zero = packed && at + 1 < count && sweeps > 0;
    if !from_zero {
        // SAFETY: x holds the level's n floats.
        unsafe { raw::zero(stream, p.x, 4 * lv.n()) }?;
    }
    if at + 1 == count {
        // The coarsest level: symmetric sweeps, enough to nearly solve it when it is small.
        let largest = lv.dims.iter().copied().max().unwrap_or(1).max(1) as usize;
        if lv.n() <= ONE_BLOCK_POINTS {
            let pairs = (2 * largest) as i32;
            let mut args = raw_args![
                p.eps[0], p.eps[1], p.eps[2], p.k2, lv.dims[0], lv.dims[1], lv.dims[2], lv.ih2, p.b, p.x, pairs
            ];
            // SAFETY: pb_coarse_solve's parameters; one block reads the 7-point neighbourhoods of
            // interior points and writes every point of x.
            return unsafe { raw::launch(stream, &k.coarse_solve, cfg1(1), &mut args, "pb_coarse_solve") };
        }
        for _ in 0..sweeps {
            smooth(stream, k, lv, 0, false, 1.0)?;
            smooth(stream, k, lv, 1, false, 1.0)?;
        }
        for _ in 0..sweeps {
            smooth(stream, k, lv, 1, false, 1.0)?;
            smooth(stream, k, lv, 0, false, 1.0)?;
        }
        return Ok(());
    }
    let Some(c) = levels.get(at + 1) else {
        return Err(PbError::Device("no coarse level".into()));
    };
    for s in 0..sweeps {
        if s == 0 && from_zero {
            let omega = cy.omega;
            let mut args = raw_args![p.pk, lv.dims[0], lv.dims[1], lv.dims[2], lv.ih2, p.b, p.x, omega];
            // SAFETY: pb_smooth_h_zero's parameters; reads the packed coefficients and b of interior
            // points, writes every point of x.
            unsafe {
                raw::launch(
                    stream,
                    &k.smooth_h_zero,
                    cfg_smooth(lv.dims),
                    &mut args,
                    "pb_smooth_h_zero",
                )
            }?;
        } else {
            smooth(stream, k, lv, 0, packed, cy.omega)?;
        }
        smooth(stream, k, lv, 1, packed, cy.omega)?;
    }
    if packed {
        let mut args = raw_args![p.pk, lv.dims[0], lv.dims[1], lv.dims[2], lv.ih2, p.b, p.x, p.t];
        // SAFETY: pb_mg_residual_h's parameters; reads the 7-point neighbourhoods of interior points,
        // writes every point of t.
        unsafe { raw::launch(stream, &k.mg_residual_h, cfg3(lv.dims), &mut args, "pb_mg_residual_h") }?;
    } else {
        let mut args = raw_args![
            p.eps[0], p.eps[1], p.eps[2], p.k2, lv.dims[0], lv.dims[1], lv.dims[2], lv.ih2, p.b, p.x, p.t
        ];
        // SAFETY: pb_mg_residual's parameters; reads the 7-point neighbourhoods of interior points,
        // writes every point of t.
        unsafe { raw::launch(stream, &k.mg_residual, cfg3(lv.dims), &mut args, "pb_mg_residual") }?;
    }
    {
        let cp = c.ptrs;
        let mut args = raw_args![
            p.t, lv.dims[0], lv.dims[1], lv.dims[2], cp.b, c.dims[0], c.dims[1], c.dims[2]
        ];
        // SAFETY: pb_restrict's parameters; coarse interior points read fine points 2I-1..2I+1
        // (inside the fine lattice).
        unsafe { raw::launch(stream, &k.restrict, cfg3(c.dims), &mut args, "pb_restrict") }?;
    }
    vcycle(stream, k, levels, at + 1, cy, None)?;
    {
        let cp = c.ptrs;
        let mut args = raw_args![
            cp.x, c.dims[0], c.dims[1], c.dims[2], p.x, lv.dims[0], lv.dims[1], lv.dims[2]
        ];
        // SAFETY: pb_prolong_add's parameters; fine interior points read coarse points I..I+1 (inside
        // the coarse lattice).
        unsafe { raw::launch(stream, &k.prolong_add, cfg3(lv.dims), &mut args, "pb_prolong_add") }?;
    }
    for s in 0..sweeps {
        smooth(stream, k, lv, 1, packed, cy.omega)?;
        match dot {
            Some(acc) if packed && s + 1 == sweeps => {
                // The last half sweep also sums b . x into `acc`.
                let (colour, omega) = (0i32, cy.omega);
                let mut args = raw_args![
                    p.pk, lv.dims[0], lv.dims[1], lv.dims[2], lv.ih2, p.b, p.x, colour, omega, acc
                ];
                // SAFETY: pb_smooth_h_dot's parameters; as pb_smooth_h, and one double at `acc`.
                unsafe {
                    raw::launch(
                        stream,
                        &k.smooth_h_dot,
                        cfg_smooth_r(lv.dims),
                        &mut args,
                        "pb_smooth_h_dot",
                    )
                }?;
            }
            _ => smooth(stream, k, lv, 0, packed, cy.omega)?,
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_halve_odd_lattices_down_to_six_points() {
        assert_eq!(
            level_dims([161, 161, 161]),
            vec![[161; 3], [81; 3], [41; 3], [21; 3], [11; 3], [6; 3]]
        );
        assert_eq!(level_dims([160, 161, 161]), vec![[160, 161, 161]]);
        assert_eq!(
            level_dims([97, 65, 33]),
            vec![[97, 65, 33], [49, 33, 17], [25, 17, 9], [13, 9, 5], [7, 5, 3]]
        );
    }
}
