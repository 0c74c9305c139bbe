//! The multigrid preconditioner of the CUDA Poisson-Boltzmann solver: the levels' shapes
//! ([`level_dims`]), one red-black half sweep ([`smooth`]) and the symmetric V-cycle ([`vcycle`]),
//! launched on the solver's stream over its [`Level`] buffers.

use super::{COARSEST_POINTS, Kernels, Level, ONE_BLOCK_POINTS, cfg_smooth, cfg1, cfg3, drv};
use crate::compute::pb::PbError;
use cudarc::driver::PushKernelArg;
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

/// One half sweep of colour `colour` on `lv`.
pub(super) fn smooth(
    stream: &Arc<cudarc::driver::CudaStream>,
    k: &Kernels,
    lv: &mut Level,
    colour: i32,
) -> Result<(), PbError> {
    let mut l = stream.launch_builder(&k.smooth);
    l.arg(&lv.eps[0])
        .arg(&lv.eps[1])
        .arg(&lv.eps[2])
        .arg(&lv.k2)
        .arg(&lv.dims[0])
        .arg(&lv.dims[1])
        .arg(&lv.dims[2])
        .arg(&lv.ih2)
        .arg(&lv.b)
        .arg(&mut lv.x)
        .arg(&colour);
    // SAFETY: reads the 7-point neighbourhoods of interior points, writes interior points of x.
    unsafe { l.launch(cfg_smooth(lv.dims)) }.map_err(drv("pb_smooth"))?;
    Ok(())
}

/// The symmetric V-cycle from level `at`: x = M b with x starting at zero (red then black before
/// the coarse correction, black then red after it; the coarsest level by symmetric sweeps).
pub(super) fn vcycle(
    stream: &Arc<cudarc::driver::CudaStream>,
    k: &Kernels,
    levels: &mut [Level],
    at: usize,
    sweeps: usize,
) -> Result<(), PbError> {
    let count = levels.len();
    let (lo, hi) = levels.split_at_mut(at + 1);
    let Some(lv) = lo.last_mut() else {
        return Err(PbError::Device("no multigrid level".into()));
    };
    stream.memset_zeros(&mut lv.x).map_err(drv("memset"))?;
    if at + 1 == count {
        // The coarsest level: symmetric sweeps, enough to nearly solve it when it is small.
        let largest = lv.dims.iter().copied().max().unwrap_or(1).max(1) as usize;
        if lv.n() <= ONE_BLOCK_POINTS {
            let pairs = (2 * largest) as i32;
            let mut l = stream.launch_builder(&k.coarse_solve);
            l.arg(&lv.eps[0])
                .arg(&lv.eps[1])
                .arg(&lv.eps[2])
                .arg(&lv.k2)
                .arg(&lv.dims[0])
                .arg(&lv.dims[1])
                .arg(&lv.dims[2])
                .arg(&lv.ih2)
                .arg(&lv.b)
                .arg(&mut lv.x)
                .arg(&pairs);
            // SAFETY: one block; reads the 7-point neighbourhoods of interior points, writes every
            // point of x.
            unsafe { l.launch(cfg1(1)) }.map_err(drv("pb_coarse_solve"))?;
            return Ok(());
        }
        let pairs = sweeps;
        for _ in 0..pairs {
            smooth(stream, k, lv, 0)?;
            smooth(stream, k, lv, 1)?;
        }
        for _ in 0..pairs {
            smooth(stream, k, lv, 1)?;
            smooth(stream, k, lv, 0)?;
        }
        return Ok(());
    }
    for _ in 0..sweeps {
        smooth(stream, k, lv, 0)?;
        smooth(stream, k, lv, 1)?;
    }
    {
        let mut l = stream.launch_builder(&k.mg_residual);
        l.arg(&lv.eps[0])
            .arg(&lv.eps[1])
            .arg(&lv.eps[2])
            .arg(&lv.k2)
            .arg(&lv.dims[0])
            .arg(&lv.dims[1])
            .arg(&lv.dims[2])
            .arg(&lv.ih2)
            .arg(&lv.b)
            .arg(&lv.x)
            .arg(&mut lv.t);
        // SAFETY: reads the 7-point neighbourhoods of interior points, writes every point of t.
        unsafe { l.launch(cfg3(lv.dims)) }.map_err(drv("pb_mg_residual"))?;
    }
    {
        let Some(c) = hi.first_mut() else {
            return Err(PbError::Device("no coarse level".into()));
        };
        let mut l = stream.launch_builder(&k.restrict);
        l.arg(&lv.t)
            .arg(&lv.dims[0])
            .arg(&lv.dims[1])
            .arg(&lv.dims[2])
            .arg(&mut c.b)
            .arg(&c.dims[0])
            .arg(&c.dims[1])
            .arg(&c.dims[2]);
        // SAFETY: coarse interior points read fine points 2I-1..2I+1 (inside the fine lattice).
        unsafe { l.launch(cfg3(c.dims)) }.map_err(drv("pb_restrict"))?;
    }
    vcycle(stream, k, levels, at + 1, sweeps)?;
    let (lo, hi) = levels.split_at_mut(at + 1);
    let (Some(lv), Some(c)) = (lo.last_mut(), hi.first()) else {
        return Err(PbError::Device("no coarse level".into()));
    };
    {
        let mut l = stream.launch_builder(&k.prolong_add);
        l.arg(&c.x)
            .arg(&c.dims[0])
            .arg(&c.dims[1])
            .arg(&c.dims[2])
            .arg(&mut lv.x)
            .arg(&lv.dims[0])
            .arg(&lv.dims[1])
            .arg(&lv.dims[2]);
        // SAFETY: fine interior points read coarse points I..I+1 (inside the coarse lattice).
        unsafe { l.launch(cfg3(lv.dims)) }.map_err(drv("pb_prolong_add"))?;
    }
    for _ in 0..sweeps {
        smooth(stream, k, lv, 1)?;
        smooth(stream, k, lv, 0)?;
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
