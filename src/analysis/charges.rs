//! Atomic point charges from wavefunctions: nuclear charges and Mulliken partial charges.
//!
//! Called by the CLI (`grid esp`, `points --field esp` on wavefunction inputs with `--charges`) to
//! turn a wavefunction into point charges for the Coulomb engines. The Mulliken model is
//! `q_A = Z_A - sum_{mu on A} (P S)_{mu mu}`: `Z_A` the nuclear charge the file gives (the effective
//! core charge when the calculation used pseudopotentials), `P` the density matrix built from the
//! orbitals and their occupations (alpha plus beta for unrestricted wavefunctions), `S` the overlap
//! matrix of `model::overlap`. These are point charges at the nuclei, not the QM electrostatic
//! potential of the continuous electron density.

use crate::compute::PointCharges;
use crate::model::overlap::overlap_matrix;
use crate::model::{OrbitalSet, SpinKind, Wavefunction};

/// Why charges could not be derived from a wavefunction.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ChargeError {
    #[error("the orbitals have {got} coefficients per orbital, the basis has {need} functions")]
    BasisMismatch { got: usize, need: usize },
    #[error("a basis shell sits on atom {atom}, the wavefunction has {n_atoms} atoms")]
    ShellAtom { atom: usize, n_atoms: usize },
    #[error("the wavefunction has no atoms")]
    NoAtoms,
    #[error("the basis has {0} functions, too many for a dense overlap matrix")]
    TooLarge(usize),
}

/// Largest basis for which the dense overlap matrix is built (20000^2 f64 = 3.2 GB).
pub const MAX_BASIS_FUNCTIONS: usize = 20_000;

/// Nuclear charges (effective core charges where the file gives them) of the wavefunction's atoms.
pub fn nuclear_charges_e(wf: &Wavefunction) -> Vec<f64> {
    wf.atoms.iter().map(|a| a.nuclear_charge).collect()
}

/// Mulliken partial charges of the wavefunction's atoms, in e, in atom order.
pub fn mulliken_charges_e(wf: &Wavefunction) -> Result<Vec<f64>, ChargeError> {
    let n_atoms = wf.atoms.len();
    if n_atoms == 0 {
        return Err(ChargeError::NoAtoms);
    }
    let n = wf.basis.n_functions();
    if n > MAX_BASIS_FUNCTIONS {
        return Err(ChargeError::TooLarge(n));
    }
    // Atom of every basis function.
    let mut atom_of = Vec::with_capacity(n);
    for shell in &wf.basis.shells {
        if shell.atom >= n_atoms {
            return Err(ChargeError::ShellAtom {
                atom: shell.atom,
                n_atoms,
            });
        }
        atom_of.extend(std::iter::repeat_n(shell.atom, shell.n_functions()));
    }
    let s = overlap_matrix(&wf.basis);
    let mut sets: Vec<&OrbitalSet> = vec![&wf.alpha];
    if wf.spin == SpinKind::Unrestricted
        && let Some(beta) = &wf.beta
    {
        sets.push(beta);
    }
    // Gross population of each basis function: sum_i occ_i C_{i mu} (S C_i)_mu = (P S)_{mu mu}.
    let mut population = vec![0.0f64; n];
    let mut sc = vec![0.0f64; n];
    for set in sets {
        if set.n_basis != n {
            return Err(ChargeError::BasisMismatch {
                got: set.n_basis,
                need: n,
            });
        }
        for (i, &occ) in set.occupations.iter().enumerate() {
            if occ == 0.0 {
                continue;
            }
            let Some(c) = set.orbital(i) else {
                return Err(ChargeError::BasisMismatch {
                    got: set.coefficients.len() / set.len().max(1),
                    need: n,
                });
            };
            for (mu, out) in sc.iter_mut().enumerate() {
                let row = s.get(mu * n..(mu + 1) * n).unwrap_or(&[]);
                *out = row.iter().zip(c).map(|(a, b)| a * b).sum();
            }
            for ((p, &cm), &scm) in population.iter_mut().zip(c).zip(&sc) {
                *p += occ * cm * scm;
            }
        }
    }
    let mut charges = nuclear_charges_e(wf);
    for (&a, &p) in atom_of.iter().zip(&population) {
        if let Some(q) = charges.get_mut(a) {
            *q -= p;
        }
    }
    Ok(charges)
}

/// Point charges at the wavefunction's nuclei with the given charges (one per atom).
pub fn point_charges(wf: &Wavefunction, charges_e: Vec<f64>) -> PointCharges {
    PointCharges {
        positions_bohr: wf.atoms.iter().map(|a| a.position_bohr).collect(),
        charges_e,
    }
}
