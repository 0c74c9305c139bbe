//! Poisson-Boltzmann potentials frame by frame off the viewer's thread: one named worker
//! (`orbitfield-pb`, a [`LaneWorker`]) owns one [`PbSolver`] (the CUDA device's buffers, a wgpu
//! adapter's, or the CPU engine), made on the worker's own thread at its first request, and solves each request warm-started
//! from the solution before it (the previous frame's, during playback), on the previous frame's
//! lattice while the atoms still fit it (`compute::pb::setup::keeps_lattice`).
//!
//! Owns [`PbWorker`], [`PbRequest`] and [`PbResult`]. Lanes are what asks (the shown frame, the
//! look-ahead frame): latest wins per lane, results carry the lane's key and the engine that
//! computed them; an error (no device under `PbEngine::Cuda`, a solve that did not converge) comes
//! back as its message, never as a potential. A cancelled lane (the viewer's Cancel, the window
//! closed) stops a CPU solve at its next iteration.

use super::lanes::LaneWorker;
use crate::compute::pb::setup::keeps_lattice;
use crate::compute::pb::{PbAtoms, PbEngine, PbLattice, PbParams, PbSolution, PbSolver};
use std::sync::{Arc, Mutex};
use std::time::Instant;

/// One frame's problem.
pub struct PbRequest<K> {
    pub key: K,
    pub atoms: Arc<PbAtoms>,
    pub lattice: PbLattice,
    pub params: PbParams,
}

/// The solution (kT/e on the request's lattice) or why there is none, with the engine's name and
/// the seconds the solve took (maps included).
pub struct PbResult<K> {
    pub key: K,
    pub solution: Result<Arc<PbSolution>, String>,
    pub engine: String,
    pub seconds: f64,
}

/// The Poisson-Boltzmann worker.
pub type PbWorker<K> = LaneWorker<PbRequest<K>, PbResult<K>>;

/// Starts the worker on `engine` (the solver is made at the first request, on the worker thread).
pub fn start<K: Send + 'static>(engine: PbEngine) -> Result<PbWorker<K>, String> {
    let solver: Mutex<Option<Result<PbSolver, String>>> = Mutex::new(None);
    let last_lattice: Mutex<Option<PbLattice>> = Mutex::new(None);
    LaneWorker::start_cancellable(
        "orbitfield-pb",
        "Poisson-Boltzmann",
        move |mut r: PbRequest<K>, stop| {
            // The previous frame's lattice while the atoms still fit it (warm start, same buffers).
            if let Ok(mut last) = last_lattice.lock() {
                if let Some(prev) = *last
                    && keeps_lattice(&prev, &r.lattice, &r.atoms.positions_angstrom)
                {
                    r.lattice = prev;
                }
                *last = Some(r.lattice);
            }
            let t0 = Instant::now();
            let Ok(mut guard) = solver.lock() else {
                return PbResult {
                    key: r.key,
                    solution: Err("the Poisson-Boltzmann solver failed earlier".into()),
                    engine: String::new(),
                    seconds: 0.0,
                };
            };
            let made = guard.get_or_insert_with(|| PbSolver::new(engine).map_err(|e| e.to_string()));
            let (solution, name) = match made {
                Ok(s) => (
                    s.solve_next_until(&r.atoms, &r.lattice, &r.params, stop)
                        .map(Arc::new)
                        .map_err(|e| e.to_string()),
                    s.engine_name(),
                ),
                Err(e) => (Err(e.clone()), String::new()),
            };
            PbResult {
                key: r.key,
                solution,
                engine: name,
                seconds: t0.elapsed().as_secs_f64(),
            }
        },
    )
}
