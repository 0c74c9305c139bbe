//! The linearized Poisson-Boltzmann solver on any wgpu device (`shaders/pb.wgsl`, device side in
//! [`super::pb_mg`]).
//!
//! Owns [`WgpuPbSolver`]: one device's buffers for one lattice shape, kept between solves, and the
//! host's copy of the last solution, so the next trajectory frame starts from the previous frame's
//! solution ([`Warm::Previous`]). The maps stay on the CPU engine: the solver takes the host's
//! [`Coefficients`] (`compute::cpu::pb_maps`) as they are and solves the system they define with the
//! CUDA engine's algorithm (`compute::cuda::pb`): an outer loop of residual corrections in float64 on
//! the host (`r = f - A u` over the float64 maps, rayon over planes; the stopping test
//! `|r| / |f| <= tolerance` over the interior points, the CPU engine's criterion), each correction
//! `A e = r` solved on the device in float32 by conjugate gradients to a relative 1e-4 or what the
//! tolerance still needs, preconditioned by one symmetric multigrid V-cycle (red-black Gauss-Seidel,
//! two sweeps each way, full weighting, trilinear prolongation, coarse dielectrics by the series
//! harmonic mean across and arithmetic mean along the faces, the levels of
//! [`super::pb_mg::level_dims`], the coarsest solved by symmetric sweeps in one workgroup). Dot
//! products: per-workgroup tree sums in workgroup memory, added by a one-workgroup pass on the device,
//! which also computes the conjugate-gradient scalars, so the host reads a few words per batch of
//! iterations.
//!
//! Conjugate-gradient iterations (all corrections together) are capped by `PbParams::max_iterations`;
//! reaching the cap is [`PbError::NotConverged`] naming the residual, never a result. When a float32
//! correction no longer lowers the float64 residual below [`STALL_RATIO`] of the previous one (float32
//! cannot resolve what is left), the [`Finisher`] given to [`WgpuPbSolver::set_finisher`] (the CPU
//! engine's float64 solver, which `compute::pb::PbSolver` gives) finishes from the current iterate
//! ([`WgpuPbStats::cpu_finish`] says so); without one the solve is [`PbError::NotConverged`].
//!
//! Precision: the device holds the coefficients and the correction in float32; the solution is
//! float64 on the host and meets the same relative residual as the CPU engine's (the float32 parts
//! only decide how fast it gets there), so both engines' solutions to a tolerance `tol` differ by at
//! most about `cond(A) tol` relative, in practice 1e-5 of the largest |u| at `tol` 1e-8
//! (`tests/wgpu_pb.rs`).
//!
//! The nonlinear form is the CPU engine's. Called through `compute::pb::PbSolver` (CLI, viewer jobs,
//! Python) and by the tests.

use super::engine::WgpuEngine;
use super::pb_mg::{DeviceLattice, Pipelines, Poison, VCycle, level_dims};
use crate::compute::SlabEngine;
use crate::compute::pb::refinement::{CORRECTION_MARGIN, Refinement, refine};
use crate::compute::pb::{Coefficients, PbError, PbLattice, PbParams, PbSolution};
use rayon::prelude::*;

/// Where a solve starts inside the lattice (the faces always take the new boundary values).
#[derive(Clone, Copy, Debug)]
pub enum Warm<'a> {
    /// Zero.
    None,
    /// Values on the host, one per lattice point (ignored when the length or a value is wrong).
    Host(&'a [f64]),
    /// The last solution this solver returned (zero when there is none for this lattice).
    Previous,
}

/// A float64 solver that finishes a stalled solve from the current iterate (the CPU engine's
/// `compute::cpu::pb::solve_coefficients`, which `compute::pb::PbSolver` installs).
pub type Finisher = fn(&Coefficients, &PbLattice, &PbParams, Option<&[f64]>) -> Result<PbSolution, PbError>;

/// Gauss-Seidel sweeps (one red and one black half sweep each) before and after the coarse correction.
pub const SWEEPS: usize = 2;
pub use crate::compute::pb::refinement::STALL_RATIO;
/// Device bytes per lattice point at the finest level (float32: coefficients as four values, V-cycle
/// right side, iterate and residual, correction, search direction and its image, the correction's
/// read-back copy), coarse levels taking at most a seventh more.
pub const DEVICE_BYTES_PER_POINT: u64 = 44 + 7;
/// Host bytes per lattice point the solver adds to the maps (float64 iterate, float32 residual and
/// correction, packed coefficients).
pub const HOST_BYTES_PER_POINT: u64 = 8 + 4 + 4 + 16;

/// How the last solve went.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct WgpuPbStats {
    /// Float64 residual corrections solved on the device.
    pub corrections: usize,
    /// Conjugate-gradient iterations, all corrections together (with the CPU finish's).
    pub iterations: usize,
    /// Multigrid levels (1: no coarsening).
    pub levels: usize,
    /// The finisher (the CPU engine) finished the solve after a stalled float32 correction.
    pub cpu_finish: bool,
}

/// A wgpu device's Poisson-Boltzmann solver (see the module documentation).
pub struct WgpuPbSolver {
    device: wgpu::Device,
    queue: wgpu::Queue,
    name: String,
    software: bool,
    pipes: Pipelines,
    lattice: Option<DeviceLattice>,
    /// The last solution (its lattice and values), for [`Warm::Previous`].
    previous: Option<(PbLattice, Vec<f64>)>,
    sweeps: usize,
    finisher: Option<Finisher>,
    poison: Poison,
    stats: WgpuPbStats,
}

impl std::fmt::Debug for WgpuPbSolver {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "WgpuPbSolver({})", self.name)
    }
}

fn bad(msg: String) -> PbError {
    PbError::BadInput(msg)
}

impl WgpuPbSolver {
    /// The solver on `engine`'s device (its name and whether it is a software adapter kept).
    pub fn new(engine: &WgpuEngine) -> WgpuPbSolver {
        let (device, queue) = engine.device();
        WgpuPbSolver::on_device(device.clone(), queue.clone(), engine.name(), engine.software)
    }

    /// The solver on an open device, named `name`.
    pub fn on_device(device: wgpu::Device, queue: wgpu::Queue, name: String, software: bool) -> WgpuPbSolver {
        WgpuPbSolver {
            pipes: Pipelines::new(&device),
            device,
            queue,
            name,
            software,
            lattice: None,
            previous: None,
            sweeps: SWEEPS,
            finisher: None,
            poison: Poison::None,
            stats: WgpuPbStats::default(),
        }
    }

    /// The adapter's name, e.g. `wgpu:vulkan nvidia h200`.
    pub fn device_name(&self) -> String {
        self.name.clone()
    }

    /// True on a software adapter (lavapipe, llvmpipe, WARP).
    pub fn is_software(&self) -> bool {
        self.software
    }

    /// Gauss-Seidel sweeps before and after each coarse correction (1 to 8).
    pub fn set_sweeps(&mut self, sweeps: usize) {
        self.sweeps = sweeps.clamp(1, 8);
    }

    /// Who finishes a solve whose float32 corrections stalled (`None`, the default: the solve ends
    /// with [`PbError::NotConverged`]).
    pub fn set_finisher(&mut self, finisher: Option<Finisher>) {
        self.finisher = finisher;
    }

    /// Breaks the V-cycle on purpose (tests).
    #[doc(hidden)]
    pub fn set_poison(&mut self, poison: Poison) {
        self.poison = poison;
    }

    /// How the last solve went.
    pub fn stats(&self) -> WgpuPbStats {
        self.stats
    }

    /// Refuses lattices this adapter cannot hold, before anything is allocated.
    pub fn check_lattice(&self, lattice: &PbLattice, params: &PbParams) -> Result<(), PbError> {
        let dims = lattice.dims;
        let n = lattice.n_points();
        if dims.iter().any(|&d| d < 3) || n == 0 {
            return Err(bad(format!("lattice {dims:?}: not a size the wgpu solver takes")));
        }
        let needed = (n as u64).saturating_mul(DEVICE_BYTES_PER_POINT);
        if needed > params.max_bytes {
            return Err(PbError::TooLarge {
                dims,
                points: n,
                needed_gib: needed as f64 / (1u64 << 30) as f64,
                limit_gib: params.max_bytes as f64 / (1u64 << 30) as f64,
            });
        }
        let limits = self.device.limits();
        let largest = (n as u64).saturating_mul(16);
        let most = limits.max_storage_buffer_binding_size.min(limits.max_buffer_size);
        let gib = |b: u64| b as f64 / (1u64 << 30) as f64;
        if largest > most || n > (i32::MAX as usize) / 2 {
            return Err(PbError::Device(format!(
                "the lattice {dims:?} ({n} points) needs a {:.2} GiB coefficient buffer; the wgpu adapter {} binds at \
                 most {:.2} GiB per buffer: use a larger spacing or a smaller box",
                gib(largest),
                self.name,
                gib(most)
            )));
        }
        let (_, gy) = super::pb_mg::grid(n, limits.max_compute_workgroups_per_dimension);
        if gy > limits.max_compute_workgroups_per_dimension {
            return Err(PbError::Device(format!(
                "the lattice {dims:?} ({n} points) needs more workgroups than the wgpu adapter {} dispatches",
                self.name
            )));
        }
        if limits.max_storage_buffers_per_shader_stage < super::pb_mg::STORAGE_BUFFERS {
            return Err(PbError::Device(format!(
                "the wgpu adapter {} binds {} storage buffers per shader stage, the solver needs {}",
                self.name,
                limits.max_storage_buffers_per_shader_stage,
                super::pb_mg::STORAGE_BUFFERS
            )));
        }
        Ok(())
    }

    /// Solves the linearized equation of `c` on `lattice` (see the module documentation).
    pub fn solve(
        &mut self,
        c: &Coefficients,
        lattice: &PbLattice,
        params: &PbParams,
        warm: Warm<'_>,
    ) -> Result<PbSolution, PbError> {
        if params.nonlinear {
            return Err(bad(
                "the wgpu engine solves the linearized Poisson-Boltzmann equation; the nonlinear form runs on the CPU engine"
                    .to_string(),
            ));
        }
        let n = lattice.n_points();
        let lengths = [
            c.eps[0].len(),
            c.eps[1].len(),
            c.eps[2].len(),
            c.kbar2.len(),
            c.source.len(),
            c.boundary.len(),
        ];
        if lengths.iter().any(|&l| l != n) {
            return Err(bad(format!(
                "coefficient maps of {lengths:?} values for a lattice of {n} points"
            )));
        }
        self.check_lattice(lattice, params)?;
        self.stats = WgpuPbStats::default();
        let previous = self.previous.take().filter(|(l, _)| l == lattice).map(|(_, u)| u);
        let mut u = match warm {
            Warm::Host(w) if w.len() == n && w.iter().all(|v| v.is_finite()) => w.to_vec(),
            Warm::Previous => previous.unwrap_or_else(|| vec![0.0; n]),
            _ => vec![0.0; n],
        };
        set_faces(lattice, &mut u, &c.boundary);
        let reuse = self
            .lattice
            .as_ref()
            .is_some_and(|d| d.dims == lattice.dims && d.spacing_angstrom == lattice.spacing_angstrom);
        if !reuse {
            self.lattice = None;
            let levels = level_dims(lattice.dims);
            self.lattice = Some(DeviceLattice::new(
                &self.device,
                &self.pipes,
                &levels,
                lattice.spacing_angstrom,
            )?);
        }
        let Some(dev) = self.lattice.as_ref() else {
            return Err(PbError::Device("wgpu: no device buffers".into()));
        };
        let coef: Vec<[f32; 4]> = (0..n)
            .into_par_iter()
            .map(|p| {
                let g = |v: &[f64]| v.get(p).copied().unwrap_or(0.0) as f32;
                [g(&c.eps[0]), g(&c.eps[1]), g(&c.eps[2]), g(&c.kbar2)]
            })
            .collect();
        dev.set_coefficients(&self.device, &self.queue, &coef);
        drop(coef);
        self.stats.levels = dev.levels();
        let (iterations, rel) = self.run(c, lattice, params, &mut u)?;
        if !u.iter().all(|v| v.is_finite()) {
            return Err(PbError::Device(
                "the wgpu solver returned a value that is not a finite number".into(),
            ));
        }
        self.previous = Some((*lattice, u.clone()));
        Ok(PbSolution {
            lattice: *lattice,
            potential_kt_per_e: u,
            iterations,
            relative_residual: rel,
        })
    }

    /// The outer float64 loop on the uploaded maps: (iterations, final relative residual).
    fn run(
        &mut self,
        c: &Coefficients,
        lattice: &PbLattice,
        params: &PbParams,
        u: &mut [f64],
    ) -> Result<(usize, f64), PbError> {
        let mut engine = WgpuRefine {
            s: self,
            c,
            lattice,
            params,
            u,
            r32: vec![0.0f32; lattice.n_points()],
        };
        refine(&mut engine, params, CORRECTION_MARGIN)
    }

    /// After a stalled correction: the finisher from the current iterate with the iterations left, or
    /// (none) the residual reached as an error.
    fn finish(
        &mut self,
        c: &Coefficients,
        lattice: &PbLattice,
        params: &PbParams,
        u: &mut [f64],
        iterations: usize,
        rel: f64,
    ) -> Result<(usize, f64), PbError> {
        let Some(finisher) = self.finisher else {
            return Err(PbError::NotConverged {
                iterations,
                residual: rel,
                tolerance: params.tolerance,
            });
        };
        let left = PbParams {
            max_iterations: params.max_iterations - iterations,
            ..*params
        };
        self.stats.cpu_finish = true;
        match finisher(c, lattice, &left, Some(u)) {
            Ok(sol) => {
                u.copy_from_slice(&sol.potential_kt_per_e);
                self.stats.iterations = iterations + sol.iterations;
                Ok((iterations + sol.iterations, sol.relative_residual))
            }
            Err(PbError::NotConverged {
                iterations: more,
                residual,
                tolerance,
            }) => Err(PbError::NotConverged {
                iterations: iterations + more,
                residual,
                tolerance,
            }),
            Err(other) => Err(other),
        }
    }
}

/// u = g on the lattice faces.
fn set_faces(lattice: &PbLattice, u: &mut [f64], g: &[f64]) {
    let [nx, ny, nz] = lattice.dims;
    let plane = nx * ny;
    u.par_chunks_mut(plane.max(1)).enumerate().for_each(|(k, slab)| {
        let face_k = k == 0 || k + 1 == nz;
        for (o, v) in slab.iter_mut().enumerate() {
            let (i, j) = (o % nx, o / nx);
            if face_k || i == 0 || j == 0 || i + 1 == nx || j + 1 == ny {
                *v = g.get(o + plane * k).copied().unwrap_or(0.0);
            }
        }
    });
}

/// The wgpu solver as the engine of `compute::pb::refinement::refine`: residuals on the host in
/// float64 over the maps, corrections on the device, a stalled solve finished by the finisher.
struct WgpuRefine<'a> {
    s: &'a mut WgpuPbSolver,
    c: &'a Coefficients,
    lattice: &'a PbLattice,
    params: &'a PbParams,
    u: &'a mut [f64],
    /// The float64 residual rounded to f32, the right side of the next correction.
    r32: Vec<f32>,
}

impl Refinement for WgpuRefine<'_> {
    fn residual(&mut self) -> Result<(f64, f64), PbError> {
        Ok(residual(self.c, self.lattice, self.u, &mut self.r32))
    }

    fn correct(&mut self, r_norm: f64, eta: f64, left: usize) -> Result<usize, PbError> {
        let s = &mut *self.s;
        let Some(dev) = s.lattice.as_ref() else {
            return Err(PbError::Device("wgpu: no device buffers".into()));
        };
        let target = (eta * r_norm) * (eta * r_norm);
        let how = VCycle {
            sweeps: s.sweeps,
            poison: s.poison,
        };
        let run = dev.correction(&s.device, &s.queue, &self.r32, target, left, how)?;
        let e = dev.download_e(&s.device, &s.queue)?;
        if e.len() != self.u.len() {
            return Err(PbError::Device(format!(
                "wgpu: {} correction values read back for {} points",
                e.len(),
                self.u.len()
            )));
        }
        self.u.par_iter_mut().zip(&e).for_each(|(a, d)| *a += f64::from(*d));
        Ok(run.iterations)
    }

    fn finish(&mut self, iterations: usize, rel: f64, _f_norm: f64) -> Result<(usize, f64), PbError> {
        self.s
            .finish(self.c, self.lattice, self.params, self.u, iterations, rel)
    }

    fn progress(&mut self, corrections: usize, iterations: usize) {
        self.s.stats.corrections = corrections;
        self.s.stats.iterations = iterations;
    }
}

/// r = f - A u at the interior points in float64, stored as float32 (0 on the faces); returns
/// (|r|^2, |f|^2) over the interior, summed plane by plane in order (the same bits on every run).
fn residual(c: &Coefficients, lattice: &PbLattice, u: &[f64], r: &mut [f32]) -> (f64, f64) {
    let [nx, ny, nz] = lattice.dims;
    let ih2 = 1.0 / (lattice.spacing_angstrom * lattice.spacing_angstrom);
    let plane = nx * ny;
    let [ex, ey, ez] = &c.eps;
    let g = |v: &[f64], q: usize| v.get(q).copied().unwrap_or(0.0);
    let sums: Vec<(f64, f64)> = r
        .par_chunks_mut(plane.max(1))
        .enumerate()
        .map(|(k, slab)| {
            let (mut rr, mut ff) = (0.0f64, 0.0f64);
            for (o, dst) in slab.iter_mut().enumerate() {
                let (i, j) = (o % nx, o / nx);
                if k == 0 || k + 1 >= nz || i == 0 || j == 0 || i + 1 >= nx || j + 1 >= ny {
                    *dst = 0.0;
                    continue;
                }
                let p = o + plane * k;
                let up = g(u, p);
                let s = g(ex, p) * (up - g(u, p + 1))
                    + g(ex, p - 1) * (up - g(u, p - 1))
                    + g(ey, p) * (up - g(u, p + nx))
                    + g(ey, p - nx) * (up - g(u, p - nx))
                    + g(ez, p) * (up - g(u, p + plane))
                    + g(ez, p - plane) * (up - g(u, p - plane));
                let f = g(&c.source, p);
                let res = f - (s * ih2 + g(&c.kbar2, p) * up);
                *dst = res as f32;
                rr += res * res;
                ff += f * f;
            }
            (rr, ff)
        })
        .collect();
    sums.iter().fold((0.0, 0.0), |a, b| (a.0 + b.0, a.1 + b.1))
}
