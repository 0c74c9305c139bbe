//! Which engine solves a Poisson-Boltzmann problem, and a solver that keeps what the next frame
//! reuses.
//!
//! Owns [`PbEngine`] (CPU, CUDA, wgpu, any GPU or auto), [`PbSolver`] (the chosen engine, the device's
//! buffers or the CPU's last solution, so [`PbSolver::solve_next`] warm-starts each trajectory frame
//! from the previous one; [`PbSolver::solve_focused`] runs a focusing chain, `super::focus`) and
//! [`check_input`] (the checks every engine makes before allocating).
//! The CPU engine is `compute::cpu::pb`, the CUDA engine `compute::cuda::pb`, the wgpu engine
//! `compute::wgpu::pb` (linearized form only on both devices: under [`PbEngine::Auto`] the nonlinear
//! form runs on the CPU, under a device engine it is an error; the CUDA engine builds the maps on the
//! device, or takes the host's where its kernels do not hold them; the wgpu engine takes the host's).
//! `Cuda`, `Wgpu` and `Gpu` never fall back to the CPU: no usable device is an error naming why.
//! `Wgpu` takes a hardware adapter first, else a software one (lavapipe, llvmpipe, WARP); `Gpu` and
//! `Auto` take CUDA, else a hardware wgpu adapter, never a software one. Called by the CLI (`grid pb`,
//! `render`/`surface --color-by pb`), the viewer's jobs, Python, the tests and the benchmark.

use super::focus::{FocusStep, check_inside, focus_boundary};
use super::{PbAtoms, PbError, PbLattice, PbParams, PbSolution};
use crate::compute::cpu::pb_maps::{Coefficients, coefficients, coefficients_with_boundary};
use crate::compute::cuda::CudaEngine;
use crate::compute::cuda::pb::{AtomsSolve, CudaPbSolver, PbDeviceStats, Warm};
#[cfg(feature = "gui")]
use crate::compute::wgpu::pb::{Warm as WgpuWarm, WgpuPbSolver};
use std::sync::Arc;
use std::time::Instant;

/// Where a solve runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PbEngine {
    /// The multithreaded CPU engine.
    Cpu,
    /// The first usable CUDA device, or an error.
    Cuda,
    /// A wgpu adapter (a hardware one first, else a software one), or an error.
    Wgpu,
    /// A CUDA device, else a hardware wgpu adapter, or an error.
    Gpu,
    /// A CUDA device when one is usable (and the form is linearized), else a hardware wgpu adapter,
    /// else the CPU.
    #[default]
    Auto,
}

/// Host bytes per lattice point of a solve (the CPU engine's figure, the larger one).
pub const HOST_BYTES_PER_POINT: u64 = crate::compute::cpu::pb::BYTES_PER_POINT;

fn bad(msg: String) -> PbError {
    PbError::BadInput(msg)
}

/// Refuses atoms, parameters and lattices no engine can use, and lattices needing more than
/// `params.max_bytes` at `bytes_per_point`, before anything is allocated.
pub fn check_input(atoms: &PbAtoms, lattice: &PbLattice, p: &PbParams, bytes_per_point: u64) -> Result<(), PbError> {
    let n = atoms.positions_angstrom.len();
    if atoms.charges_e.len() != n || atoms.radii_angstrom.len() != n {
        return Err(bad(format!(
            "{n} atom positions, {} charges and {} radii: one of each per atom",
            atoms.charges_e.len(),
            atoms.radii_angstrom.len()
        )));
    }
    if n == 0 {
        return Err(bad("no atoms".to_string()));
    }
    for (i, ((x, q), r)) in atoms
        .positions_angstrom
        .iter()
        .zip(&atoms.charges_e)
        .zip(&atoms.radii_angstrom)
        .enumerate()
    {
        if !(x.iter().all(|c| c.is_finite()) && q.is_finite() && r.is_finite() && *r >= 0.0) {
            return Err(bad(format!(
                "atom {i}: position {x:?} A, charge {q} e, radius {r} A (finite, radius >= 0 expected)"
            )));
        }
    }
    if atoms.charges_e.iter().all(|&q| q == 0.0) {
        return Err(bad("every charge is zero: the system carries no charges".to_string()));
    }
    let positive = |v: f64| v.is_finite() && v > 0.0;
    if !(positive(p.eps_in) && positive(p.eps_out)) {
        return Err(bad(format!(
            "dielectrics {} / {} must be positive",
            p.eps_in, p.eps_out
        )));
    }
    if !(p.ionic_strength_molar.is_finite() && p.ionic_strength_molar >= 0.0) {
        return Err(bad(format!("ionic strength {} M must be >= 0", p.ionic_strength_molar)));
    }
    if !(p.ion_radius_angstrom.is_finite() && p.ion_radius_angstrom >= 0.0) {
        return Err(bad(format!("ion radius {} A must be >= 0", p.ion_radius_angstrom)));
    }
    if !(p.probe_angstrom.is_finite() && p.probe_angstrom >= 0.0 && p.probe_angstrom < 10.0) {
        return Err(bad(format!("probe radius {} A must lie in [0, 10)", p.probe_angstrom)));
    }
    if !positive(p.temperature_kelvin) {
        return Err(bad(format!("temperature {} K must be positive", p.temperature_kelvin)));
    }
    if !(p.tolerance.is_finite() && p.tolerance > 0.0 && p.tolerance < 1.0) {
        return Err(bad(format!("tolerance {} must lie in (0, 1)", p.tolerance)));
    }
    if !positive(lattice.spacing_angstrom) || !lattice.origin_angstrom.iter().all(|c| c.is_finite()) {
        return Err(bad(format!(
            "lattice spacing {} A, origin {:?} A",
            lattice.spacing_angstrom, lattice.origin_angstrom
        )));
    }
    if lattice.dims.iter().any(|&d| d < 5) {
        return Err(bad(format!("lattice {:?}: at least 5 points per axis", lattice.dims)));
    }
    let points = lattice.dims.iter().try_fold(1u64, |acc, &d| acc.checked_mul(d as u64));
    match points.and_then(|pts| pts.checked_mul(bytes_per_point)) {
        Some(b) if b <= p.max_bytes => Ok(()),
        _ => Err(PbError::TooLarge {
            dims: lattice.dims,
            points: points.map_or(usize::MAX, |v| v as usize),
            needed_gib: points.map_or(f64::INFINITY, |v| {
                (v as f64) * bytes_per_point as f64 / (1u64 << 30) as f64
            }),
            limit_gib: p.max_bytes as f64 / (1u64 << 30) as f64,
        }),
    }
}

/// A solver on one engine (see the module documentation).
#[derive(Debug)]
pub struct PbSolver {
    cuda: Option<CudaPbSolver>,
    wgpu: Option<WgpuPbSolver>,
    /// Under `Auto`: the nonlinear form may run on the CPU.
    cpu_allowed: bool,
    /// Why the CPU engine is used under `Auto`, said once by the caller.
    note: Option<String>,
    /// The CPU engine's last solution, for `solve_next`.
    previous: Option<PbSolution>,
}

/// The first usable CUDA device's solver, or why there is none (`Err(None)`: no device; the notes
/// as text).
fn open_cuda() -> Result<CudaPbSolver, (bool, String)> {
    let (selection, _) = crate::compute::cuda::devices_from_env();
    let found = crate::compute::cuda::discover(selection.as_deref());
    match found.engines.first() {
        Some(e) => CudaPbSolver::new(e.clone()).map_err(|err| (true, err.to_string())),
        None => {
            let notes: Vec<String> = found.notes.iter().map(ToString::to_string).collect();
            Err((
                false,
                if notes.is_empty() {
                    "no CUDA device".to_string()
                } else {
                    notes.join("; ")
                },
            ))
        }
    }
}

/// A wgpu adapter's solver: the first hardware adapter whose engine opens, else (when
/// `software_allowed`) the first software one; or why there is none.
#[cfg(feature = "gui")]
fn open_wgpu(software_allowed: bool) -> Result<WgpuPbSolver, String> {
    let all = crate::compute::wgpu::adapters::adapters();
    let mut notes = Vec::new();
    let hardware = all.iter().filter(|a| !a.is_software());
    let software = all.iter().filter(|a| a.is_software() && software_allowed);
    for a in hardware.chain(software) {
        match a.engine() {
            Ok(engine) => {
                let mut s = WgpuPbSolver::new(&engine);
                s.set_finisher(Some(crate::compute::cpu::pb::solve_coefficients));
                return Ok(s);
            }
            Err(e) => notes.push(format!("{}: {e}", a.describe())),
        }
    }
    if !software_allowed && let Some(s) = all.iter().find(|a| a.is_software()) {
        notes.push(format!(
            "{} is a software rasteriser (used only under --device wgpu)",
            s.describe()
        ));
    }
    Err(if notes.is_empty() {
        "no wgpu adapter".to_string()
    } else {
        notes.join("; ")
    })
}

#[cfg(not(feature = "gui"))]
fn open_wgpu(_software_allowed: bool) -> Result<WgpuPbSolver, String> {
    Err("built without the wgpu engine (feature gui)".to_string())
}

/// Whether `Auto` may enumerate wgpu adapters without noise: on Linux the Vulkan loader's Wayland
/// support prints an error line per instance where `XDG_RUNTIME_DIR` is unset (headless servers, CI),
/// so there `Auto` stays with CUDA or the CPU (`Wgpu` and `Gpu` search anyway).
fn quiet_adapter_search() -> bool {
    !cfg!(target_os = "linux") || std::env::var_os("XDG_RUNTIME_DIR").is_some()
}

impl PbSolver {
    /// A solver on `engine`: `Cuda` opens the first CUDA device (`ORBITFIELD_DEVICES` honoured) or
    /// fails naming why; `Wgpu` a wgpu adapter (hardware first, software allowed) or fails; `Gpu` a
    /// CUDA device, else a hardware wgpu adapter, or fails; `Auto` as `Gpu`, falling back to the CPU
    /// with a note.
    pub fn new(engine: PbEngine) -> Result<PbSolver, PbError> {
        let cpu = PbSolver {
            cuda: None,
            wgpu: None,
            cpu_allowed: true,
            note: None,
            previous: None,
        };
        if engine == PbEngine::Cpu {
            return Ok(cpu);
        }
        let mut why: Vec<String> = Vec::new();
        if matches!(engine, PbEngine::Cuda | PbEngine::Gpu | PbEngine::Auto) {
            match open_cuda() {
                Ok(s) => {
                    return Ok(PbSolver {
                        cuda: Some(s),
                        cpu_allowed: engine == PbEngine::Auto,
                        ..cpu
                    });
                }
                Err((_, e)) if engine == PbEngine::Cuda => {
                    return Err(PbError::Device(format!(
                        "a CUDA device was asked for and none is usable: {e}"
                    )));
                }
                Err((true, e)) => why.push(format!("the CUDA Poisson-Boltzmann solver is not usable ({e})")),
                Err((false, e)) => why.push(e),
            }
        }
        let search = engine != PbEngine::Auto || quiet_adapter_search();
        if matches!(engine, PbEngine::Wgpu | PbEngine::Gpu) || (engine == PbEngine::Auto && search) {
            match open_wgpu(engine == PbEngine::Wgpu) {
                Ok(s) => {
                    return Ok(PbSolver {
                        wgpu: Some(s),
                        cpu_allowed: engine == PbEngine::Auto,
                        ..cpu
                    });
                }
                Err(e) if engine == PbEngine::Wgpu => {
                    return Err(PbError::Device(format!(
                        "a wgpu adapter was asked for and none is usable: {e}"
                    )));
                }
                Err(e) => why.push(e),
            }
        }
        if engine == PbEngine::Gpu {
            return Err(PbError::Device(format!(
                "a GPU was asked for and none is usable: {}",
                why.join("; ")
            )));
        }
        Ok(PbSolver {
            note: Some(format!("{}; solving Poisson-Boltzmann on the CPU", why.join("; "))),
            ..cpu
        })
    }

    /// A solver on this CUDA device (no CPU fallback).
    pub fn with_cuda(engine: Arc<CudaEngine>) -> Result<PbSolver, PbError> {
        Ok(PbSolver {
            cuda: Some(CudaPbSolver::new(engine)?),
            wgpu: None,
            cpu_allowed: false,
            note: None,
            previous: None,
        })
    }

    /// A solver on this wgpu device's solver (no CPU fallback; a stalled float32 solve is finished
    /// by the CPU engine's float64 solver from the device's iterate).
    pub fn with_wgpu(mut solver: WgpuPbSolver) -> PbSolver {
        solver.set_finisher(Some(crate::compute::cpu::pb::solve_coefficients));
        PbSolver {
            cuda: None,
            wgpu: Some(solver),
            cpu_allowed: false,
            note: None,
            previous: None,
        }
    }

    /// "cpu", the CUDA device's name or the wgpu adapter's.
    pub fn engine_name(&self) -> String {
        if let Some(c) = &self.cuda {
            return c.device_name();
        }
        self.wgpu
            .as_ref()
            .map_or_else(|| "cpu".to_string(), WgpuPbSolver::device_name)
    }

    /// Why `Auto` chose the CPU, if it did.
    pub fn note(&self) -> Option<&str> {
        self.note.as_deref()
    }

    /// The CUDA solver, for its statistics and preconditioner choice.
    pub fn cuda_mut(&mut self) -> Option<&mut CudaPbSolver> {
        self.cuda.as_mut()
    }

    /// The CUDA device's account of the last solve.
    pub fn cuda_stats(&self) -> Option<PbDeviceStats> {
        self.cuda.as_ref().map(CudaPbSolver::stats)
    }

    /// The wgpu solver, for its statistics and settings.
    pub fn adapter_mut(&mut self) -> Option<&mut WgpuPbSolver> {
        self.wgpu.as_mut()
    }

    /// Whether a device (CUDA or wgpu) solves the linearized form.
    fn on_device(&self) -> bool {
        self.cuda.is_some() || self.wgpu.is_some()
    }

    /// Solves from `warm_start` (a previous solution on the same lattice) or zero.
    pub fn solve(
        &mut self,
        atoms: &PbAtoms,
        lattice: &PbLattice,
        params: &PbParams,
        warm_start: Option<&[f64]>,
    ) -> Result<PbSolution, PbError> {
        let warm = warm_start.map_or(Warm::None, Warm::Host);
        self.solve_from(atoms, lattice, params, warm, &|| false)
    }

    /// Solves starting from this solver's last solution when it was on the same lattice (the
    /// previous trajectory frame), else from zero.
    pub fn solve_next(
        &mut self,
        atoms: &PbAtoms,
        lattice: &PbLattice,
        params: &PbParams,
    ) -> Result<PbSolution, PbError> {
        self.solve_next_until(atoms, lattice, params, &|| false)
    }

    /// [`PbSolver::solve_next`] that the CPU engine ends with [`PbError::Cancelled`] once `stop`
    /// says so (`compute::cpu::pb::solve_until`); a device's solve (milliseconds) runs to its end.
    pub fn solve_next_until(
        &mut self,
        atoms: &PbAtoms,
        lattice: &PbLattice,
        params: &PbParams,
        stop: crate::compute::cpu::pb::Stop<'_>,
    ) -> Result<PbSolution, PbError> {
        self.solve_from(atoms, lattice, params, Warm::Previous, stop)
    }

    /// Focusing (APBS `mg-auto`): solves on each lattice of `levels` in turn on this solver's
    /// engine, the first (the coarsest, holding every charge) with `params.boundary`, each next one
    /// with its face values interpolated from the solution before it (`focus::focus_boundary`) and
    /// only the charges inside it spread (`pb_maps::coefficients_with_boundary`); calls `progress`
    /// after each level and returns the last (finest) level's solution. `levels` as
    /// `focus::focus_levels` makes them; each must lie inside the one before. Every level's input
    /// and memory is checked before the first solve.
    pub fn solve_focused(
        &mut self,
        atoms: &PbAtoms,
        levels: &[PbLattice],
        params: &PbParams,
        progress: &mut dyn FnMut(&FocusStep),
    ) -> Result<PbSolution, PbError> {
        if levels.is_empty() {
            return Err(bad("focusing needs at least one lattice".to_string()));
        }
        for w in levels.windows(2) {
            if let [outer, inner] = w {
                check_inside(outer, inner)?;
            }
        }
        for l in levels {
            check_input(atoms, l, params, HOST_BYTES_PER_POINT)?;
        }
        let at_level = |level: usize, e: PbError| match e {
            PbError::BadInput(m) => PbError::BadInput(format!(
                "focusing level {} of {}{}: {m}",
                level + 1,
                levels.len(),
                if level == 0 {
                    " (the coarsest, which must hold every charge)"
                } else {
                    ""
                }
            )),
            other => other,
        };
        let mut previous: Option<PbSolution> = None;
        for (level, lattice) in levels.iter().enumerate() {
            let t0 = Instant::now();
            let sol = match previous.take() {
                None => self.solve(atoms, lattice, params, None),
                Some(coarse) => {
                    focus_boundary(&coarse, lattice).and_then(|b| self.solve_focused_level(atoms, lattice, params, b))
                }
            }
            .map_err(|e| at_level(level, e))?;
            progress(&FocusStep {
                level,
                levels: levels.len(),
                lattice: *lattice,
                iterations: sol.iterations,
                relative_residual: sol.relative_residual,
                seconds: t0.elapsed().as_secs_f64(),
            });
            previous = Some(sol);
        }
        previous.ok_or_else(|| bad("focusing produced no solution".to_string()))
    }

    /// One focused level from zero with the faces `faces`: on a CUDA device with its maps built
    /// there where it builds them, else on the host's maps.
    fn solve_focused_level(
        &mut self,
        atoms: &PbAtoms,
        lattice: &PbLattice,
        params: &PbParams,
        faces: Vec<f64>,
    ) -> Result<PbSolution, PbError> {
        if !params.nonlinear
            && let Some(gpu) = self.cuda.as_mut()
            && let AtomsSolve::Solved(s) =
                gpu.solve_atoms_with_faces(atoms, lattice, params, Some(&faces), Warm::None)?
        {
            return Ok(s);
        }
        let c = coefficients_with_boundary(atoms, lattice, params, faces).map_err(PbError::BadInput)?;
        self.solve_maps(&c, lattice, params)
    }

    /// Solves the given maps from zero on this solver's engine (the CPU for the nonlinear form
    /// under `Auto`).
    fn solve_maps(&mut self, c: &Coefficients, lattice: &PbLattice, params: &PbParams) -> Result<PbSolution, PbError> {
        let on_cpu = !self.on_device() || (params.nonlinear && self.cpu_allowed);
        if on_cpu {
            return crate::compute::cpu::pb::solve_coefficients(c, lattice, params, None);
        }
        if params.nonlinear {
            return Err(self.nonlinear_refused());
        }
        if let Some(w) = self.wgpu.as_mut() {
            return w.solve(c, lattice, params, adapter_warm(Warm::None));
        }
        let Some(gpu) = self.cuda.as_mut() else {
            return Err(PbError::Device("no CUDA solver".into()));
        };
        gpu.solve(c, lattice, params, Warm::None)
    }

    /// The device engine's refusal of the nonlinear form.
    fn nonlinear_refused(&self) -> PbError {
        bad(format!(
            "the {} engine solves the linearized Poisson-Boltzmann equation: use the CPU engine for the nonlinear form",
            if self.wgpu.is_some() { "wgpu" } else { "CUDA" }
        ))
    }

    fn solve_from(
        &mut self,
        atoms: &PbAtoms,
        lattice: &PbLattice,
        params: &PbParams,
        warm: Warm<'_>,
        stop: crate::compute::cpu::pb::Stop<'_>,
    ) -> Result<PbSolution, PbError> {
        let on_cpu = !self.on_device() || (params.nonlinear && self.cpu_allowed);
        if on_cpu {
            let previous = self
                .previous
                .take()
                .filter(|s| s.lattice == *lattice)
                .map(|s| s.potential_kt_per_e);
            let start = match warm {
                Warm::Host(w) => Some(w),
                Warm::Previous => previous.as_deref(),
                Warm::None => None,
            };
            let sol = crate::compute::cpu::pb::solve_until(atoms, lattice, params, start, stop)?;
            self.previous = Some(sol.clone());
            return Ok(sol);
        }
        check_input(atoms, lattice, params, HOST_BYTES_PER_POINT)?;
        if params.nonlinear {
            return Err(self.nonlinear_refused());
        }
        if let Some(w) = self.wgpu.as_mut() {
            // The maps on the host, the solve on the device.
            w.check_lattice(lattice, params)?;
            let c = coefficients(atoms, lattice, params).map_err(PbError::BadInput)?;
            return w.solve(&c, lattice, params, adapter_warm(warm));
        }
        let Some(gpu) = self.cuda.as_mut() else {
            return Err(PbError::Device("no CUDA solver".into()));
        };
        // The maps on the device; the host builds those the device's kernels do not hold.
        if let AtomsSolve::Solved(s) = gpu.solve_atoms(atoms, lattice, params, warm)? {
            return Ok(s);
        }
        let c = coefficients(atoms, lattice, params).map_err(PbError::BadInput)?;
        gpu.solve(&c, lattice, params, warm)
    }
}

/// The wgpu solver's start for the CUDA solver's.
#[cfg(feature = "gui")]
fn adapter_warm(w: Warm<'_>) -> WgpuWarm<'_> {
    match w {
        Warm::None => WgpuWarm::None,
        Warm::Host(v) => WgpuWarm::Host(v),
        Warm::Previous => WgpuWarm::Previous,
    }
}

#[cfg(not(feature = "gui"))]
fn adapter_warm(w: Warm<'_>) -> Warm<'_> {
    w
}

/// Stands for the wgpu solver in a build without the wgpu engine (no value exists).
#[cfg(not(feature = "gui"))]
#[derive(Debug)]
pub enum WgpuPbSolver {}

#[cfg(not(feature = "gui"))]
impl WgpuPbSolver {
    fn device_name(&self) -> String {
        match *self {}
    }

    fn check_lattice(&self, _: &PbLattice, _: &PbParams) -> Result<(), PbError> {
        match *self {}
    }

    #[allow(clippy::type_complexity)]
    fn set_finisher(
        &mut self,
        _: Option<fn(&Coefficients, &PbLattice, &PbParams, Option<&[f64]>) -> Result<PbSolution, PbError>>,
    ) {
        match *self {}
    }

    fn solve(&mut self, _: &Coefficients, _: &PbLattice, _: &PbParams, _: Warm<'_>) -> Result<PbSolution, PbError> {
        match *self {}
    }
}
