//! The float32 conjugate-gradient correction of the CUDA Poisson-Boltzmann solver: `A e = r`
//! preconditioned by the multigrid V-cycle (or the diagonal), with the step lengths computed on the
//! device (`pb_cg_update_s`, `pb_xpby_s` read `p.Ap` and `r.z` where the previous kernels summed them),
//! so an iteration is one captured graph and one read of its sums by the host (the convergence test),
//! instead of two round trips.
//!
//! An iteration begins with the preconditioner (z = M r, p = z + beta p, q = A p, then the step) and
//! ends with the new residual's norm, which the host tests: the iteration that converges has
//! applied no preconditioner it does not use (a V-cycle is most of an iteration's time).
//!
//! The accumulators come in two blocks of eight doubles, one per parity of the iteration: iteration
//! `i` sums into block `i % 2` and reads the previous `r.z` from the other block; both start at zero,
//! so the first iteration's beta is 0 (p = z).
//! Owns [`GraphKey`], `CudaPbSolver::correction` and `CudaRefine` (the solver as the engine of
//! `compute::pb::refinement::refine`, the outer float64 loop both GPU engines share).

use super::multigrid::{Cycle, vcycle};
use super::raw::{self, Addr, raw_args};
use super::{CudaPbSolver, InnerPtrs, Kernels, Level, Preconditioner, SendGraph, cfg1, cfg1r, cfg3r, drv};
use crate::compute::pb::refinement::Refinement;
use crate::compute::pb::{PbError, PbLattice, PbParams};
use cudarc::driver::CudaStream;
use std::sync::Arc;

/// What a captured graph was recorded for: the sweeps, the finest 1/h^2 (bits), whether the V-cycle
/// reads packed one-byte coefficients, its over-relaxation (bits), the preconditioner, and the level
/// where its one-launch tail starts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) struct GraphKey {
    sweeps: usize,
    fine_sweeps: usize,
    ih2_bits: u32,
    packed: bool,
    omega_bits: u32,
    jacobi: bool,
    tail: Option<usize>,
}

/// Bytes of one block of accumulators.
const BLOCK_BYTES: u64 = 64;
/// The slots of a block: p.Ap, |r|^2, r.z.
const PQ: u64 = 8 * 2;
const RR: u64 = 8 * 3;
const RZ: u64 = 8 * 4;

/// z = M r into the finest level's `x` (r in its `b`), and r.z into the double at `rz`.
fn enqueue_precondition(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    levels: &[Level],
    jacobi: bool,
    cy: Cycle,
    rz: Addr,
) -> Result<(), PbError> {
    let Some(fine) = levels.first() else {
        return Err(PbError::Device("no multigrid level".into()));
    };
    let (dims, ih2, fp) = (fine.dims, fine.ih2, fine.ptrs);
    let n = fine.n();
    let n64 = n as i64;
    if jacobi {
        let mut args = raw_args![
            fp.eps[0], fp.eps[1], fp.eps[2], fp.k2, dims[0], dims[1], dims[2], ih2, fp.b, fp.x, rz
        ];
        // SAFETY: pb_jacobi's parameters; reads the 7-point neighbourhoods of interior points, writes
        // every point of z.
        return unsafe { raw::launch(stream, &k.jacobi, cfg3r(dims), &mut args, "pb_jacobi") };
    }
    // With packed coefficients and a coarse level, the V-cycle's last sweep sums r.z.
    let fused = cy.packed && levels.len() > 1;
    vcycle(stream, k, levels, 0, cy, fused.then_some(rz))?;
    if fused {
        return Ok(());
    }
    let mut args = raw_args![fp.b, fp.x, n64, rz];
    // SAFETY: pb_dot's parameters; n floats each.
    unsafe { raw::launch(stream, &k.dot, cfg1r(n), &mut args, "pb_dot") }
}

/// One conjugate-gradient iteration of parity `par`: z = M r, p = z + beta p, q = A p, e += alpha p,
/// r -= alpha q (beta = r.z over the previous r.z, alpha = r.z / p.q), the sums into block `par`.
#[allow(clippy::too_many_arguments)]
fn enqueue_iteration(
    stream: &Arc<CudaStream>,
    k: &Kernels,
    levels: &[Level],
    ip: InnerPtrs,
    jacobi: bool,
    cy: Cycle,
    par: u64,
) -> Result<(), PbError> {
    let Some(fine) = levels.first() else {
        return Err(PbError::Device("no multigrid level".into()));
    };
    let (dims, ih2, fp) = (fine.dims, fine.ih2, fine.ptrs);
    let n = fine.n();
    let n64 = n as i64;
    let this = ip.acc + BLOCK_BYTES * par;
    let prev = ip.acc + BLOCK_BYTES * (1 - par);
    let (pq, rr, rz, rz_old) = (this + PQ, this + RR, this + RZ, prev + RZ);
    // SAFETY: the block holds eight doubles.
    unsafe { raw::zero(stream, this, BLOCK_BYTES as usize) }?;
    enqueue_precondition(stream, k, levels, jacobi, cy, rz)?;
    // SAFETY (every launch below): the kernels' parameters in order; all buffers are this solver's,
    // allocated for this lattice on `stream`; `acc` holds two blocks of eight doubles.
    unsafe {
        let mut args = raw_args![ip.p, fp.x, rz, rz_old, n64];
        raw::launch(stream, &k.xpby_s, cfg1(n), &mut args, "pb_xpby_s")?;
        let mut args = raw_args![
            fp.eps[0], fp.eps[1], fp.eps[2], fp.k2, dims[0], dims[1], dims[2], ih2, ip.p, ip.q, pq
        ];
        raw::launch(stream, &k.apply, cfg3r(dims), &mut args, "pb_apply")?;
        let mut args = raw_args![ip.e, fp.b, ip.p, ip.q, pq, rz, n64, rr];
        raw::launch(stream, &k.cg_update_s, cfg1r(n), &mut args, "pb_cg_update_s")
    }
}

/// Runs what `record` enqueues: from the graph in `slot` when it was captured for `key`, else
/// captured now (and kept) and run; kernel by kernel when graphs are off or a capture fails (which
/// turns them off).
fn run_captured(
    stream: &Arc<CudaStream>,
    slot: &mut Option<(GraphKey, SendGraph)>,
    graphs: &mut bool,
    key: GraphKey,
    record: &dyn Fn() -> Result<(), PbError>,
) -> Result<(), PbError> {
    if !*graphs {
        return record();
    }
    if slot.as_ref().is_none_or(|(k, _)| *k != key) {
        *slot = None;
        // Recorded, not run: the graph runs below.
        let mode = cudarc::driver::sys::CUstreamCaptureMode::CU_STREAM_CAPTURE_MODE_THREAD_LOCAL;
        stream.begin_capture(mode).map_err(drv("graph capture"))?;
        let recorded = record();
        let graph = stream.end_capture(cudarc::driver::sys::CUgraphInstantiate_flags(0));
        match (recorded, graph) {
            (Ok(()), Ok(Some(g))) => *slot = Some((key, SendGraph(g))),
            _ => {
                *graphs = false;
                return record();
            }
        }
    }
    match slot {
        Some((_, g)) => g.0.launch().map_err(drv("graph launch")),
        None => record(),
    }
}

impl CudaPbSolver {
    /// Conjugate gradients on `A e = r` (r in the finest level's `b`, e into `e`), until the residual
    /// is `eta` times `r_norm` or `left` iterations are used; returns the iterations used.
    pub(super) fn correction(&mut self, r_norm: f64, eta: f64, left: usize) -> Result<usize, PbError> {
        let stream = self.stream.clone();
        let k = Arc::clone(&self.kernels);
        let jacobi = self.preconditioner == Preconditioner::Jacobi;
        let cy = Cycle {
            fine_sweeps: self.fine_sweeps.unwrap_or(self.sweeps),
            sweeps: self.sweeps,
            packed: self.packed,
            omega: self.omega,
            tail: None,
        };
        let mut graphs = self.graphs;
        let b = self.bufs()?;
        let cy = Cycle {
            tail: b.tail.as_ref().map(|t| t.plan(&stream)),
            ..cy
        };
        let n = b.dims.iter().product::<usize>();
        let ip = b.inner;
        let Some(ih2) = b.levels.first().map(|l| l.ih2) else {
            return Err(PbError::Device("no multigrid level".into()));
        };
        let key = GraphKey {
            sweeps: cy.sweeps,
            fine_sweeps: cy.fine_sweeps,
            ih2_bits: ih2.to_bits(),
            packed: cy.packed,
            omega_bits: cy.omega.to_bits(),
            jacobi,
            tail: cy.tail.map(|t| t.start),
        };
        // SAFETY: e holds n floats, acc two blocks of eight doubles, on `stream`. Both blocks at
        // zero: the first iteration's previous r.z is 0, so its beta is 0 and p = z.
        unsafe {
            raw::zero(&stream, ip.e, 4 * n)?;
            raw::zero(&stream, ip.acc, 2 * BLOCK_BYTES as usize)?;
        }
        let mut used = left;
        let mut inner = Vec::new();
        for it in 0..left {
            let par = (it % 2) as u64;
            {
                let levels = &b.levels;
                let slot = b
                    .graphs
                    .get_mut(par as usize)
                    .ok_or_else(|| PbError::Device("no graph slot".into()))?;
                run_captured(&stream, slot, &mut graphs, key, &|| {
                    enqueue_iteration(&stream, &k, levels, ip, jacobi, cy, par)
                })?;
            }
            // SAFETY: the block holds eight doubles.
            let a = unsafe { raw::read_acc(&stream, ip.acc + BLOCK_BYTES * par) }?;
            let (pq, rr, rz) = (a[2], a[3], a[4]);
            if !(pq.is_finite() && pq > 0.0 && rz.is_finite() && rz > 0.0) {
                self.graphs = graphs;
                return Err(PbError::Device(format!(
                    "conjugate gradients broke down (p.Ap = {pq:e}, r.z = {rz:e}); check the dielectric maps"
                )));
            }
            if !rr.is_finite() {
                self.graphs = graphs;
                return Err(PbError::Device("the float32 residual is not a finite number".into()));
            }
            inner.push(super::ResidualStep::Inner(rr.sqrt()));
            if rr.sqrt() <= eta * r_norm {
                used = it + 1;
                break;
            }
        }
        self.graphs = graphs;
        self.trace.append(&mut inner);
        Ok(used)
    }
}

/// The CUDA solver as the engine of `compute::pb::refinement::refine`: residuals and corrections on
/// the device, a stalled solve finished by float64 conjugate gradients there (`polish`).
pub(super) struct CudaRefine<'a> {
    s: &'a mut CudaPbSolver,
    lattice: &'a PbLattice,
    params: &'a PbParams,
}

impl<'a> CudaRefine<'a> {
    pub(super) fn new(s: &'a mut CudaPbSolver, lattice: &'a PbLattice, params: &'a PbParams) -> Self {
        CudaRefine { s, lattice, params }
    }
}

impl Refinement for CudaRefine<'_> {
    fn residual(&mut self) -> Result<(f64, f64), PbError> {
        // r = f - A u in float64, into the finest level's right side.
        let [rr, ff] = self.s.residual_sums(self.lattice)?;
        self.s.trace.push(super::ResidualStep::Outer {
            residual: rr.sqrt(),
            source: ff.sqrt(),
        });
        Ok((rr, ff))
    }

    fn correct(&mut self, r_norm: f64, eta: f64, left: usize) -> Result<usize, PbError> {
        let used = self.s.correction(r_norm, eta, left)?;
        self.s.add_correction()?;
        Ok(used)
    }

    fn finish(&mut self, iterations: usize, _rel: f64, f_norm: f64) -> Result<(usize, f64), PbError> {
        let params = self.params;
        let used = self
            .s
            .polish(self.lattice, params, f_norm, params.max_iterations - iterations)?;
        let iterations = iterations + used;
        self.s.stats.iterations = iterations;
        self.s.stats.polish_iterations = used;
        let rel = self.s.residual_norm(self.lattice)? / f_norm.max(1e-300);
        if rel <= params.tolerance {
            return Ok((iterations, rel));
        }
        Err(PbError::NotConverged {
            iterations,
            residual: rel,
            tolerance: params.tolerance,
        })
    }

    fn progress(&mut self, corrections: usize, iterations: usize) {
        self.s.stats.corrections = corrections;
        self.s.stats.iterations = iterations;
    }
}
