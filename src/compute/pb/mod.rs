//! The Poisson-Boltzmann problem: parameters, atoms, lattice, solution and errors.
//!
//! Owns [`PbParams`] (dielectrics, ionic strength, ion exclusion radius, solvent probe,
//! temperature, charge assignment, boundary, linear or nonlinear, iteration cap and tolerance),
//! [`PbAtoms`] (positions, charges, radii in Angstrom and e), [`PbLattice`] (an axis-aligned
//! lattice in Angstrom, equal spacing on the three axes), [`PbSolution`] (the potential in kT/e at
//! every lattice point) and [`PbError`]. The solvers are the CPU engine's (`compute::cpu::pb`,
//! [`solve`] calls it) and the CUDA engine's (`compute::cuda::pb`); [`engine`] chooses between them
//! ([`PbEngine`], [`PbSolver`]); [`focus`] holds the focusing chain (APBS `mg-auto`). Called by the CLI (`grid pb`, `--color-by pb`), the viewer and the tests.
//!
//! The equation, in APBS's dimensionless form (lengths in Angstrom, u = e phi / kT):
//! `-div(eps grad u) + kbar^2 sinh(u) = 4 pi l_B sum_i q_i delta(x - x_i)` (the linearized form
//! has `kbar^2 u`), `l_B = e^2 / (4 pi eps0 k_B T)` the vacuum Bjerrum length (560 A at 298.15 K),
//! `kbar^2 = eps_out kappa^2` where ions may go, zero elsewhere. Discretisation as APBS's
//! multigrid finite differences (`Vpmg_fillco`), so that a solve is comparable with APBS's on the
//! same lattice point by point: the charges spread onto lattice points (trilinear `spl0`, or
//! APBS's `spl2` B-spline over 3^3 points), the dielectric on the three lattices staggered by half
//! a spacing along x, y and z (inside the molecular surface of the atoms and a probe sphere:
//! eps_in; outside: eps_out; `smol` smooths it harmonically over 9 neighbouring staggered points),
//! the ion accessibility at the lattice points (outside every atom's radius plus the ion
//! exclusion radius), Dirichlet values on the lattice faces from one multipole sphere (`sdh`) or
//! the sum of one Debye-Hueckel sphere per atom (`mdh`). `docs/pb.md` states the model and its
//! agreement with APBS.

pub mod engine;
pub mod focus;
pub mod prep;
pub mod setup;
pub use engine::{PbEngine, PbSolver, check_input};

use crate::model::units::{AVOGADRO_PER_MOLE, BOLTZMANN_JOULE_PER_KELVIN, ELEMENTARY_CHARGE_COULOMB};

/// Vacuum permittivity in F/m (CODATA 2018).
const EPS0_F_PER_M: f64 = 8.854_187_812_8e-12;

/// How point charges are spread onto the lattice (APBS `chgm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum ChargeAssignment {
    /// Trilinear weights on the 8 surrounding points (APBS `spl0`).
    Linear,
    /// APBS's `spl2` B-spline (its `bspline2`: the piecewise-quadratic B-spline M3 centred on
    /// the charge, 3 points per axis; APBS's manual calls it cubic).
    #[default]
    Spline,
}

/// The dielectric boundary (APBS `srfm`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PbSurface {
    /// The molecular surface of the atoms and a solvent probe, sharp (`mol`).
    Mol,
    /// The molecular surface with APBS's nine-point harmonic smoothing of the staggered
    /// dielectric (`smol`).
    #[default]
    Smol,
    /// The molecular surface sampled along each staggered edge, the edge's dielectric the series
    /// (harmonic) mean of the fractions inside and outside (not an APBS model).
    Fraction,
}

/// Boundary values on the lattice faces (APBS `bcfl`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum PbBoundary {
    /// One sphere at the centre of the atoms' bounding box, radius the farthest atom surface from
    /// it, dielectric eps_in, holding the atoms' charge, dipole and quadrupole, in the screened
    /// solvent (`sdh`, as APBS 3.4 computes it).
    #[default]
    Sdh,
    /// One Debye-Hueckel sphere per atom, radius its radius (`mdh`).
    Mdh,
}

/// The parameters of one solve.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PbParams {
    /// Solute dielectric (inside the molecular surface).
    pub eps_in: f64,
    /// Solvent dielectric.
    pub eps_out: f64,
    /// Ionic strength of a 1:1 electrolyte (mol/L).
    pub ionic_strength_molar: f64,
    /// Ion exclusion radius added to the atoms' radii for the ion accessibility (Angstrom).
    pub ion_radius_angstrom: f64,
    /// Solvent probe radius of the molecular surface (Angstrom).
    pub probe_angstrom: f64,
    /// The dielectric boundary model.
    pub surface: PbSurface,
    pub temperature_kelvin: f64,
    pub charge_assignment: ChargeAssignment,
    pub boundary: PbBoundary,
    /// Solve the nonlinear equation (sinh) by Newton steps instead of the linearized one.
    pub nonlinear: bool,
    /// Conjugate-gradient iterations allowed (all Newton steps together for the nonlinear form).
    pub max_iterations: usize,
    /// Relative residual `|b - A u| / |b|` at which a linear solve stops (default 1e-6, APBS's
    /// `etol`).
    pub tolerance: f64,
    /// Lattices needing more memory than this are refused before anything is allocated (bytes).
    pub max_bytes: u64,
}

impl Default for PbParams {
    fn default() -> Self {
        PbParams {
            eps_in: 2.0,
            eps_out: 78.54,
            ionic_strength_molar: 0.15,
            ion_radius_angstrom: 2.0,
            probe_angstrom: 1.4,
            surface: PbSurface::Smol,
            temperature_kelvin: 298.15,
            charge_assignment: ChargeAssignment::Spline,
            boundary: PbBoundary::Sdh,
            nonlinear: false,
            max_iterations: 20_000,
            tolerance: 1e-6,
            max_bytes: 16 << 30,
        }
    }
}

impl PbParams {
    /// The vacuum Bjerrum length `e^2 / (4 pi eps0 k_B T)` in Angstrom.
    pub fn bjerrum_angstrom(&self) -> f64 {
        let e = ELEMENTARY_CHARGE_COULOMB;
        e * e / (4.0 * std::f64::consts::PI * EPS0_F_PER_M * BOLTZMANN_JOULE_PER_KELVIN * self.temperature_kelvin)
            * 1e10
    }

    /// `kappa^2` of the bulk solvent (1/Angstrom^2).
    pub fn kappa2_per_angstrom2(&self) -> f64 {
        let e = ELEMENTARY_CHARGE_COULOMB;
        2.0 * self.ionic_strength_molar * 1000.0 * AVOGADRO_PER_MOLE * e * e
            / (EPS0_F_PER_M * self.eps_out * BOLTZMANN_JOULE_PER_KELVIN * self.temperature_kelvin)
            * 1e-20
    }

    /// A one-line description for headers and legends.
    pub fn label(&self) -> String {
        format!(
            "Poisson-Boltzmann ({}), {} M, eps {}/{}, {} surface, probe {} A, ion radius {} A, {} K, {} charges, {} boundary",
            if self.nonlinear { "nonlinear" } else { "linearized" },
            self.ionic_strength_molar,
            self.eps_in,
            self.eps_out,
            match self.surface {
                PbSurface::Mol => "mol",
                PbSurface::Smol => "smol",
                PbSurface::Fraction => "edge-fraction",
            },
            self.probe_angstrom,
            self.ion_radius_angstrom,
            self.temperature_kelvin,
            match self.charge_assignment {
                ChargeAssignment::Linear => "trilinear",
                ChargeAssignment::Spline => "spl2 B-spline",
            },
            match self.boundary {
                PbBoundary::Sdh => "sdh",
                PbBoundary::Mdh => "mdh",
            }
        )
    }
}

/// The atoms of a solve: positions (Angstrom), charges (e) and radii (Angstrom), one each.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PbAtoms {
    pub positions_angstrom: Vec<[f64; 3]>,
    pub charges_e: Vec<f64>,
    pub radii_angstrom: Vec<f64>,
}

/// An axis-aligned lattice: point (i, j, k) at `origin + spacing * (i, j, k)` (Angstrom), x fastest.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct PbLattice {
    pub origin_angstrom: [f64; 3],
    pub spacing_angstrom: f64,
    pub dims: [usize; 3],
}

impl PbLattice {
    /// A lattice of `dims` points centred on `center_angstrom`.
    pub fn centered(center_angstrom: [f64; 3], spacing_angstrom: f64, dims: [usize; 3]) -> PbLattice {
        PbLattice {
            origin_angstrom: std::array::from_fn(|k| {
                center_angstrom[k] - 0.5 * spacing_angstrom * (dims[k].max(1) - 1) as f64
            }),
            spacing_angstrom,
            dims,
        }
    }

    pub fn n_points(&self) -> usize {
        self.dims[0].saturating_mul(self.dims[1]).saturating_mul(self.dims[2])
    }

    /// The position of point (i, j, k) (Angstrom).
    #[inline]
    pub fn point(&self, i: usize, j: usize, k: usize) -> [f64; 3] {
        let h = self.spacing_angstrom;
        [
            self.origin_angstrom[0] + h * i as f64,
            self.origin_angstrom[1] + h * j as f64,
            self.origin_angstrom[2] + h * k as f64,
        ]
    }
}

/// The potential on the lattice and how the solve went.
#[derive(Clone, Debug, PartialEq)]
pub struct PbSolution {
    pub lattice: PbLattice,
    /// u = e phi / kT at every point, x fastest.
    pub potential_kt_per_e: Vec<f64>,
    /// Conjugate-gradient iterations used (all Newton steps together).
    pub iterations: usize,
    /// The final relative residual of the last linear solve.
    pub relative_residual: f64,
}

impl PbSolution {
    /// The potential at `p_angstrom` by trilinear interpolation; `None` outside the lattice.
    pub fn at(&self, p_angstrom: [f64; 3]) -> Option<f64> {
        let l = &self.lattice;
        let t: [f64; 3] = std::array::from_fn(|k| (p_angstrom[k] - l.origin_angstrom[k]) / l.spacing_angstrom);
        let mut base = [0usize; 3];
        let mut frac = [0.0f64; 3];
        for k in 0..3 {
            if !(t[k] >= 0.0 && t[k] <= (l.dims[k] - 1) as f64) {
                return None;
            }
            let f = t[k].floor().min((l.dims[k].saturating_sub(2)) as f64);
            base[k] = f as usize;
            frac[k] = t[k] - f;
        }
        let [nx, ny, _] = l.dims;
        let mut v = 0.0;
        for (dz, wz) in [(0, 1.0 - frac[2]), (1, frac[2])] {
            for (dy, wy) in [(0, 1.0 - frac[1]), (1, frac[1])] {
                for (dx, wx) in [(0, 1.0 - frac[0]), (1, frac[0])] {
                    let idx = (base[0] + dx) + nx * ((base[1] + dy) + ny * (base[2] + dz));
                    v += wx * wy * wz * self.potential_kt_per_e.get(idx).copied()?;
                }
            }
        }
        Some(v)
    }
}

/// Why a solve gave no potential.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub enum PbError {
    /// Parameters or atoms no solver can use; the message names the value.
    #[error("{0}")]
    BadInput(String),
    #[error(
        "the Poisson-Boltzmann lattice {dims:?} ({points} points) needs about {needed_gib:.1} GiB, more than the \
         {limit_gib:.1} GiB allowed: use a larger spacing or a smaller box"
    )]
    TooLarge {
        dims: [usize; 3],
        points: usize,
        needed_gib: f64,
        limit_gib: f64,
    },
    #[error(
        "the Poisson-Boltzmann solver did not converge: relative residual {residual:.3e} after {iterations} \
         iterations (tolerance {tolerance:e}); no potential is returned"
    )]
    NotConverged {
        iterations: usize,
        residual: f64,
        tolerance: f64,
    },
    /// A compute device that failed or is missing; the message says what happened.
    #[error("Poisson-Boltzmann on the device: {0}")]
    Device(String),
    /// The caller asked the solve to stop (`compute::cpu::pb::solve_until`); nothing is returned.
    #[error("the Poisson-Boltzmann solve was cancelled")]
    Cancelled,
}

/// Solves the problem on the CPU engine (`compute::cpu::pb`), starting from `warm_start` (a previous
/// solution on the same lattice, e.g. the previous trajectory frame's) when given.
pub fn solve(
    atoms: &PbAtoms,
    lattice: &PbLattice,
    params: &PbParams,
    warm_start: Option<&[f64]>,
) -> Result<PbSolution, PbError> {
    crate::compute::cpu::pb::solve(atoms, lattice, params, warm_start)
}

pub mod refinement;

/// The discretised problem every engine solves: everything the operator and the right-hand side
/// need, built by the CPU engine (`compute::cpu::pb_maps::coefficients`) and consumed as it is by
/// the CUDA solver.
pub struct Coefficients {
    /// Dielectric at (i + 1/2, j, k), (i, j + 1/2, k), (i, j, k + 1/2), x fastest.
    pub eps: [Vec<f64>; 3],
    /// `kbar^2` at the lattice points (1/Angstrom^2): `eps_out kappa^2` where ions may go.
    pub kbar2: Vec<f64>,
    /// `4 pi l_B rho / h^3` at the lattice points (1/Angstrom^2).
    pub source: Vec<f64>,
    /// Boundary values (kT/e) on the faces; zero inside.
    pub boundary: Vec<f64>,
}
