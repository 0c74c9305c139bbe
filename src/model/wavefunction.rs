//! Wavefunctions: atoms with nuclear charges, a basis set and one or two sets of molecular orbitals.
//!
//! Read by `io` (Molden, fchk, wfn/wfx, QM logs), consumed by the field engines (orbitals,
//! densities) and by the viewer's orbital list.

use super::basis::BasisSet;
use super::element::Element;

/// How the orbitals are organised by spin.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum SpinKind {
    /// One set of orbitals, each doubly occupied or empty (or fractionally occupied).
    Restricted,
    /// Separate alpha and beta orbitals.
    Unrestricted,
    /// One set of spatial orbitals with singly occupied ones (ROHF).
    RestrictedOpen,
}

/// Which spin channel of a wavefunction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Spin {
    Alpha,
    Beta,
}

/// An atom of a QM calculation.
#[derive(Clone, Debug, PartialEq)]
pub struct QmAtom {
    pub element: Element,
    /// Nuclear charge in e (may differ from the atomic number with effective core potentials).
    pub nuclear_charge: f64,
    pub position_bohr: [f64; 3],
}

/// A set of molecular orbitals over one basis.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OrbitalSet {
    pub energies_hartree: Vec<f64>,
    /// Occupation numbers (0..2 for restricted, 0..1 for a spin channel), fractional allowed.
    pub occupations: Vec<f64>,
    /// Symmetry labels; empty strings where the file has none.
    pub symmetries: Vec<String>,
    /// Row-major `[n_orbitals][n_basis_functions]`.
    pub coefficients: Vec<f64>,
    /// Basis functions per orbital (row length of `coefficients`).
    pub n_basis: usize,
}

impl OrbitalSet {
    /// Number of orbitals.
    pub fn len(&self) -> usize {
        self.energies_hartree.len()
    }

    pub fn is_empty(&self) -> bool {
        self.energies_hartree.is_empty()
    }

    /// Coefficients of orbital `index` (0-based).
    pub fn orbital(&self, index: usize) -> Option<&[f64]> {
        let start = index.checked_mul(self.n_basis)?;
        self.coefficients.get(start..start.checked_add(self.n_basis)?)
    }
}

/// A one-particle density matrix over the basis functions of a wavefunction: `[n_basis][n_basis]`
/// row-major, symmetric, in the internal basis order and normalisation of `model::basis` (readers
/// convert). Files that store one (fchk "Total SCF Density") give it beside the wavefunction.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct DensityMatrix {
    pub n_basis: usize,
    pub values: Vec<f64>,
}

impl DensityMatrix {
    /// Element (i, j), `None` outside the matrix.
    pub fn get(&self, i: usize, j: usize) -> Option<f64> {
        if i >= self.n_basis || j >= self.n_basis {
            return None;
        }
        self.values.get(i * self.n_basis + j).copied()
    }
}

/// A complete wavefunction.
#[derive(Clone, Debug, PartialEq)]
pub struct Wavefunction {
    pub atoms: Vec<QmAtom>,
    pub basis: BasisSet,
    pub spin: SpinKind,
    /// The alpha orbitals (or the only set, for restricted wavefunctions).
    pub alpha: OrbitalSet,
    /// The beta orbitals of an unrestricted wavefunction.
    pub beta: Option<OrbitalSet>,
    /// The program that wrote the file, as detected ("PySCF", "ORCA", ...).
    pub program: Option<String>,
    /// Corrections applied by the reader to reach orthonormal orbitals, in words.
    pub corrections: Vec<String>,
    /// Total energy in hartree when the file gives one.
    pub energy_hartree: Option<f64>,
    /// The total SCF density matrix when the file carries one (fchk "Total SCF Density"); `None`:
    /// the density follows from the orbitals and occupations.
    pub scf_density: Option<DensityMatrix>,
}

impl Wavefunction {
    /// The occupation that orbital occupation `occupation` puts in one spin channel: half of it for
    /// restricted orbitals, all of it for unrestricted ones, and for restricted-open orbitals the
    /// first electron in alpha and the second in beta.
    pub fn channel_occupation(&self, spin: Spin, occupation: f64) -> f64 {
        match (self.spin, spin) {
            (SpinKind::Unrestricted, _) => occupation,
            (SpinKind::Restricted, _) => 0.5 * occupation,
            (SpinKind::RestrictedOpen, Spin::Alpha) => occupation.min(1.0),
            (SpinKind::RestrictedOpen, Spin::Beta) => (occupation - 1.0).max(0.0),
        }
    }

    /// 0-based index of the HOMO of a spin channel: the highest orbital that is at least half
    /// occupied in that channel (a doubly occupied restricted orbital carries 1 per channel, a singly
    /// occupied one 1/2). With fractional occupations (smearing) this is the highest orbital below
    /// the Fermi level; small tails above it do not count. `None` when no orbital is. The one
    /// definition of the HOMO: the viewer's labels, `grid mo:homo`, `info` and the benchmarks use it.
    pub fn homo(&self, spin: Spin) -> Option<usize> {
        let set = self.orbitals(spin)?;
        set.occupations
            .iter()
            .rposition(|&o| self.channel_occupation(spin, o) >= 0.5 - 1e-6)
    }

    /// Total number of electrons from the occupations.
    pub fn n_electrons(&self) -> f64 {
        let a: f64 = self.alpha.occupations.iter().sum();
        let b: f64 = match (self.spin, &self.beta) {
            (SpinKind::Unrestricted, Some(beta)) => beta.occupations.iter().sum(),
            _ => 0.0,
        };
        a + b
    }

    /// The orbital set of a spin channel (the alpha set for restricted wavefunctions).
    pub fn orbitals(&self, spin: Spin) -> Option<&OrbitalSet> {
        match spin {
            Spin::Alpha => Some(&self.alpha),
            Spin::Beta => match self.spin {
                SpinKind::Unrestricted => self.beta.as_ref(),
                _ => Some(&self.alpha),
            },
        }
    }
}

/// Orbital energies, occupations and symmetries a log printed without the orbitals themselves
/// (ORCA's "ORBITAL ENERGIES" table, printed by default, without `! PrintMOs` and
/// `! PrintBasis`): enough for the orbital list, the energy diagram and the gap, not to draw an
/// orbital.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct OrbitalLevels {
    /// Restricted or spin up.
    pub alpha: LevelSet,
    /// Spin down of an unrestricted calculation.
    pub beta: Option<LevelSet>,
}

/// One spin channel's levels, in the log's order.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct LevelSet {
    pub energies_hartree: Vec<f64>,
    pub occupations: Vec<f64>,
    /// Symmetry labels ("Bg"); empty strings without symmetry.
    pub symmetries: Vec<String>,
}

impl OrbitalLevels {
    /// The levels of `spin` (alpha's for a restricted calculation).
    pub fn levels(&self, spin: Spin) -> &LevelSet {
        match (spin, &self.beta) {
            (Spin::Beta, Some(b)) => b,
            _ => &self.alpha,
        }
    }

    /// The highest level of `spin` holding at least half an electron (the channel's share: half
    /// of a restricted level's two).
    pub fn homo(&self, spin: Spin) -> Option<usize> {
        let per_level = if self.beta.is_some() { 1.0 } else { 2.0 };
        self.levels(spin)
            .occupations
            .iter()
            .rposition(|&o| o / per_level >= 0.5 - 1e-6)
    }
}
