//! The mixed-precision refinement both GPU engines run (`compute::cuda::pb`, `compute::wgpu::pb`):
//! float64 residuals `r = f - A u`, each correction `A e = r` solved in float32, until
//! `|r| <= tolerance |f|` over the interior (the CPU engine's test). Owns the driver [`refine`], what it
//! asks of an engine ([`Refinement`]) and its constants; the engines own the residual, the float32
//! solve and the float64 finish of a stalled solve.

use super::{PbError, PbParams};

/// The float32 correction is solved to this relative residual at least.
pub const INNER_REDUCTION: f64 = 1e-4;
/// Each float32 correction aims at this fraction of the reduction the tolerance still needs
/// (float32 recurrences overstate their progress a little; a smaller fraction solves past the
/// tolerance: at 0.03, two orders of magnitude past it).
pub const CORRECTION_MARGIN: f64 = 0.3;
/// Residual corrections allowed (each one lowers the float64 residual about 1e4-fold).
pub const MAX_CORRECTIONS: usize = 12;
/// A correction that leaves the float64 residual above this fraction of the previous one has
/// stalled (float32 cannot resolve the remaining correction).
pub const STALL_RATIO: f64 = 0.9;
/// Conjugate-gradient iterations of one correction before it restarts from the float64 residual
/// (float32 recurrences drift; a restart resets them).
pub const MAX_ITERATIONS_PER_CORRECTION: usize = 200;

/// What [`refine`] asks of an engine.
pub trait Refinement {
    /// `r = f - A u` in float64 with the current iterate `u`, kept for the next correction; returns
    /// `|r|^2` and `|f|^2` over the interior points.
    fn residual(&mut self) -> Result<(f64, f64), PbError>;
    /// Solves `A e = r` in float32 until its residual is `eta r_norm` or `left` iterations are used,
    /// and adds `e` to `u`; returns the iterations used.
    fn correct(&mut self, r_norm: f64, eta: f64, left: usize) -> Result<usize, PbError>;
    /// Finishes a stalled solve in float64 from `u`, with `iterations` used so far and the relative
    /// residual `rel` reached (`f_norm` = |f|): the total iterations and the final relative residual,
    /// or `NotConverged`.
    fn finish(&mut self, iterations: usize, rel: f64, f_norm: f64) -> Result<(usize, f64), PbError>;
    /// Progress after each residual: the corrections made and the iterations used so far.
    fn progress(&mut self, corrections: usize, iterations: usize);
}

/// Runs the refinement on `engine` to `params.tolerance` within `params.max_iterations`, each
/// correction aiming at `margin` of the reduction still needed: the iterations used and the final
/// relative residual. Reaching the cap is `NotConverged` naming the residual, never a result.
pub fn refine(engine: &mut impl Refinement, params: &PbParams, margin: f64) -> Result<(usize, f64), PbError> {
    let not_converged = |iterations, residual| PbError::NotConverged {
        iterations,
        residual,
        tolerance: params.tolerance,
    };
    let mut iterations = 0usize;
    let mut previous_rel = f64::INFINITY;
    let mut f_norm = 0.0;
    for correction in 0..=MAX_CORRECTIONS {
        let (rr, ff) = engine.residual()?;
        if correction == 0 {
            f_norm = ff.sqrt();
        }
        let r_norm = rr.sqrt();
        if !r_norm.is_finite() {
            return Err(PbError::Device("the float64 residual is not a finite number".into()));
        }
        let rel = r_norm / f_norm.max(1e-300);
        engine.progress(correction, iterations);
        if r_norm <= params.tolerance * f_norm {
            return Ok((iterations, rel));
        }
        if iterations >= params.max_iterations {
            return Err(not_converged(iterations, rel));
        }
        if rel > STALL_RATIO * previous_rel || correction == MAX_CORRECTIONS {
            // Float32 no longer resolves the correction.
            return engine.finish(iterations, rel, f_norm);
        }
        previous_rel = rel;
        let eta = (margin * params.tolerance / rel).clamp(INNER_REDUCTION, 0.1);
        let left = (params.max_iterations - iterations).min(MAX_ITERATIONS_PER_CORRECTION);
        iterations += engine.correct(r_norm, eta, left)?;
    }
    Err(not_converged(iterations, previous_rel))
}
