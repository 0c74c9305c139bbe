//! The host side of a wavefunction's electrostatic potential, shared by the engines that evaluate
//! it: `V(r) = sum_A Z_A / |r - R_A| - sum_mn P_mn <m| 1/|r - r'| |n>` (hartree/e).
//!
//! Owns [`PreparedQmEsp`] (the nuclei, and the density as screened Hermite distributions from
//! [`nuclear_attraction`]), [`density_matrix`] (the file's own SCF density where it carries one,
//! else the orbitals and occupations: restricted, unrestricted and restricted open-shell) and the
//! Boys function table ([`boys`]). Nothing here grows with the lattice: the CPU engine evaluates the
//! prepared distributions (`compute::cpu::qm_esp`) and the CUDA engine uploads the same list and
//! table (`compute::cuda::qm_esp`), so both evaluate the same screened sum and the GPU is held to
//! the CPU in `tests/qm_esp.rs`.
//!
//! Nuclear charges are the wavefunction's (effective core charges where pseudopotentials replace
//! core electrons). Accuracy: f64 throughout; the screening drops at most
//! `PairDistributions::dropped_bound` (below 1e-10 hartree/e for the test molecules) at any point.

pub mod boys;
pub mod nuclear_attraction;

use crate::compute::ComputeError;
use crate::model::{SpinKind, Wavefunction};
use nuclear_attraction::PairDistributions;

/// The total density matrix of `wf` (`[n][n]` row-major, internal basis order): the file's own SCF
/// density ([`Wavefunction::scf_density`]) when it carries one of the right size, else
/// `sum_i n_i C_i C_i^T` over the orbitals (alpha plus beta for unrestricted wavefunctions; the
/// occupations of restricted and restricted open-shell sets already count both spins).
pub fn density_matrix(wf: &Wavefunction) -> Result<Vec<f64>, ComputeError> {
    let n = wf.basis.n_functions();
    if let Some(d) = &wf.scf_density
        && d.n_basis == n
        && d.values.len() == n * n
    {
        return Ok(d.values.clone());
    }
    let mut p = vec![0.0; n * n];
    let mut sets = vec![&wf.alpha];
    if wf.spin == SpinKind::Unrestricted {
        match &wf.beta {
            Some(b) => sets.push(b),
            None => {
                return Err(ComputeError::BadInput(
                    "an unrestricted wavefunction without beta orbitals".into(),
                ));
            }
        }
    }
    for set in sets {
        if set.n_basis != n {
            return Err(ComputeError::BadInput(format!(
                "the orbitals have {} coefficients, the basis has {n} functions",
                set.n_basis
            )));
        }
        for (i, &occ) in set.occupations.iter().enumerate() {
            if occ == 0.0 {
                continue;
            }
            if !occ.is_finite() {
                return Err(ComputeError::BadInput(format!("occupation {} is not finite", i + 1)));
            }
            let Some(c) = set.orbital(i) else {
                return Err(ComputeError::NoSuchOrbital {
                    index: i,
                    count: set.len(),
                });
            };
            for (row, &ci) in p.chunks_exact_mut(n).zip(c) {
                let w = occ * ci;
                if w == 0.0 {
                    continue;
                }
                for (x, &cj) in row.iter_mut().zip(c) {
                    *x += w * cj;
                }
            }
        }
    }
    Ok(p)
}

/// A wavefunction prepared for its potential at many points.
#[derive(Clone, Debug)]
pub struct PreparedQmEsp {
    pub pairs: PairDistributions,
    /// Nuclei: position (bohr) and charge (e).
    pub nuclei: Vec<([f64; 3], f64)>,
}

impl PreparedQmEsp {
    /// Builds the density matrix and its distributions (milliseconds for hundreds of functions).
    pub fn new(wf: &Wavefunction) -> Result<PreparedQmEsp, ComputeError> {
        let density = density_matrix(wf)?;
        let pairs = PairDistributions::new(&wf.basis, &density)?;
        let mut nuclei = Vec::with_capacity(wf.atoms.len());
        for a in &wf.atoms {
            if !(a.nuclear_charge.is_finite() && a.position_bohr.iter().all(|c| c.is_finite())) {
                return Err(ComputeError::BadInput(
                    "an atom's position or nuclear charge is not finite".into(),
                ));
            }
            if a.nuclear_charge != 0.0 {
                nuclei.push((a.position_bohr, a.nuclear_charge));
            }
        }
        Ok(PreparedQmEsp { pairs, nuclei })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn density_matrix_counts_electrons_of_every_spin_kind() {
        use crate::model::{BasisSet, OrbitalSet, Shell};
        let basis = BasisSet {
            shells: vec![Shell {
                l: 0,
                pure: false,
                atom: 0,
                center_bohr: [0.0; 3],
                exponents: vec![1.0],
                coefficients: vec![1.0],
            }],
        };
        let set = |occ: f64| OrbitalSet {
            energies_hartree: vec![0.0],
            occupations: vec![occ],
            symmetries: vec![String::new()],
            coefficients: vec![1.0],
            n_basis: 1,
        };
        let wf = |spin, a: f64, b: Option<f64>| Wavefunction {
            atoms: Vec::new(),
            basis: basis.clone(),
            spin,
            alpha: set(a),
            beta: b.map(set),
            program: None,
            corrections: Vec::new(),
            energy_hartree: None,
            scf_density: None,
        };
        assert_eq!(density_matrix(&wf(SpinKind::Restricted, 2.0, None)).unwrap(), vec![2.0]);
        assert_eq!(
            density_matrix(&wf(SpinKind::RestrictedOpen, 1.0, None)).unwrap(),
            vec![1.0]
        );
        assert_eq!(
            density_matrix(&wf(SpinKind::Unrestricted, 1.0, Some(1.0))).unwrap(),
            vec![2.0]
        );
        assert!(density_matrix(&wf(SpinKind::Unrestricted, 1.0, None)).is_err());
        // The file's own density wins when it fits.
        let mut w = wf(SpinKind::Restricted, 2.0, None);
        w.scf_density = Some(crate::model::wavefunction::DensityMatrix {
            n_basis: 1,
            values: vec![1.5],
        });
        assert_eq!(density_matrix(&w).unwrap(), vec![1.5]);
    }
}
