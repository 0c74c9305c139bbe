//! Effective core potentials: the core electrons a file's ECPs remove from each atom, applied to the
//! atoms' nuclear charges (the potential and the total charge of a wavefunction take the charge less
//! the core), and the check that the nuclei, the electrons and the file's stated charge agree.
//!
//! Readers that find the cores printed (Gaussian's "Pseudopotential Parameters", GAMESS's `ZCORE`)
//! apply them with [`apply_cores`]. [`reconcile`] then compares the nuclei less the electrons with
//! the file's charge; where they differ and the file names no cores (a Q-Chem fchk keeps the full
//! atomic numbers), it assigns noble-gas cores per element when exactly one assignment explains the
//! difference, and says so; else it warns that the potential is not to be trusted.

use crate::model::{Element, QmAtom};

/// Core sizes an ECP removes: closed shells (He, Ne, Ar, [Ar]3d, Kr, [Kr]4d, [Kr]4d4f, [Xe]4f,
/// [Xe]4f5d, [Rn]5f).
pub(crate) const ECP_CORE_SIZES: [u32; 10] = [2, 10, 18, 28, 36, 46, 60, 68, 78, 92];

/// Subtracts `cores` (0-based atom index, core electrons) from the atoms' nuclear charges. Indices
/// past the atoms and cores as large as the charge are ignored.
pub(crate) fn apply_cores(atoms: &mut [QmAtom], cores: &[(usize, u32)]) {
    for &(i, core) in cores {
        if let Some(a) = atoms.get_mut(i)
            && core < u32::from(a.element.number())
        {
            a.nuclear_charge = f64::from(a.element.number()) - f64::from(core);
        }
    }
}

/// Checks that the atoms' nuclear charges less `n_electrons` give the file's `charge_e`. Returns a
/// note for the user when cores had to be inferred (applied to `atoms`), or a warning when the
/// numbers disagree and no single assignment of cores explains it; `None` when they agree.
pub(crate) fn reconcile(atoms: &mut [QmAtom], n_electrons: f64, charge_e: i32) -> Option<String> {
    let nuclei: f64 = atoms.iter().map(|a| a.nuclear_charge).sum();
    let missing = nuclei - n_electrons - f64::from(charge_e);
    if missing.abs() < 0.5 {
        return None;
    }
    let rounded = missing.round();
    let said = format!(
        "the nuclear charges ({nuclei:.0} e) less the {n_electrons:.0} electrons give {:+.0} e, but the file says \
         the charge is {charge_e:+} e",
        nuclei - n_electrons
    );
    if rounded > 0.0
        && (missing - rounded).abs() < 1e-6
        && let Some(cores) = unique_cores(atoms, rounded as u32)
    {
        let mut by_element: Vec<(Element, u32)> = Vec::new();
        for (i, &c) in cores.iter().enumerate() {
            if c > 0 && !by_element.iter().any(|(e, _)| *e == atoms[i].element) {
                by_element.push((atoms[i].element, c));
            }
        }
        let named: Vec<String> = by_element.iter().map(|(e, c)| format!("{} {c}", e.symbol())).collect();
        let list: Vec<(usize, u32)> = cores.into_iter().enumerate().collect();
        apply_cores(atoms, &list);
        return Some(format!(
            "{said}: the file names no effective core potentials, so their core electrons were inferred as \
             the only closed-shell cores that explain it ({}); the potential and the total charge use the \
             nuclear charges less these cores",
            named.join(", ")
        ));
    }
    Some(format!(
        "{said}; effective core potentials that the file does not describe may explain it: the wavefunction's \
         potential and total charge use the nuclear charges as read and are not to be trusted"
    ))
}

/// Upper bound on the assignments searched (elements with choices multiply).
const MAX_ASSIGNMENTS: usize = 1 << 20;

/// The one assignment of a closed-shell core (or none) per element whose atoms' cores sum to
/// `missing`; `None` when there is none or more than one. Atoms of one element share their core.
fn unique_cores(atoms: &[QmAtom], missing: u32) -> Option<Vec<u32>> {
    let mut elements: Vec<(Element, u32)> = Vec::new();
    for a in atoms {
        match elements.iter_mut().find(|(e, _)| *e == a.element) {
            Some((_, n)) => *n += 1,
            None => elements.push((a.element, 1)),
        }
    }
    let choices: Vec<Vec<u32>> = elements
        .iter()
        .map(|(e, _)| {
            let z = u32::from(e.number());
            std::iter::once(0)
                .chain(ECP_CORE_SIZES.iter().copied().filter(|&c| c < z))
                .collect()
        })
        .collect();
    let total = choices.iter().try_fold(1usize, |acc, c| acc.checked_mul(c.len()))?;
    if total > MAX_ASSIGNMENTS {
        return None;
    }
    let mut found: Option<Vec<u32>> = None;
    let mut pick = vec![0usize; elements.len()];
    for _ in 0..total {
        let sum: u64 = pick
            .iter()
            .zip(&choices)
            .zip(&elements)
            .map(|((&k, c), (_, n))| u64::from(c[k]) * u64::from(*n))
            .sum();
        if sum == u64::from(missing) {
            if found.is_some() {
                return None;
            }
            found = Some(pick.iter().zip(&choices).map(|(&k, c)| c[k]).collect());
        }
        // The next assignment (an odometer over the elements' choices).
        for (p, c) in pick.iter_mut().zip(&choices) {
            *p += 1;
            if *p < c.len() {
                break;
            }
            *p = 0;
        }
    }
    let per_element = found?;
    Some(
        atoms
            .iter()
            .map(|a| {
                let k = elements.iter().position(|(e, _)| *e == a.element).unwrap_or(0);
                per_element[k]
            })
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn atom(z: u32) -> QmAtom {
        QmAtom {
            element: Element::from_number(z).unwrap(),
            nuclear_charge: f64::from(z),
            position_bohr: [0.0; 3],
        }
    }

    #[test]
    fn moocl4_cores_are_inferred_from_the_charge() {
        // MoOCl4(2-), LANL2DZ on Mo and Cl: 118 protons, 52 electrons, charge -2 -> 68 core electrons.
        let mut atoms: Vec<QmAtom> = [42, 8, 17, 17, 17, 17].map(atom).to_vec();
        let note = reconcile(&mut atoms, 52.0, -2).unwrap();
        assert!(note.contains("Mo 28") && note.contains("Cl 10"), "{note}");
        let charges: Vec<f64> = atoms.iter().map(|a| a.nuclear_charge).collect();
        assert_eq!(charges, vec![14.0, 8.0, 7.0, 7.0, 7.0, 7.0]);
        // Now consistent: nothing more to say.
        assert!(reconcile(&mut atoms, 52.0, -2).is_none());
    }

    #[test]
    fn an_ambiguous_difference_is_a_warning_and_changes_nothing() {
        // Zn and Br missing 28 electrons: Zn 28, Br 28, or 10 and 18 either way.
        let mut atoms: Vec<QmAtom> = [30, 35].map(atom).to_vec();
        let before: Vec<f64> = atoms.iter().map(|a| a.nuclear_charge).collect();
        let n_e = before.iter().sum::<f64>() - 28.0;
        let w = reconcile(&mut atoms, n_e, 0).unwrap();
        assert!(w.contains("not to be trusted"), "{w}");
        assert_eq!(atoms.iter().map(|a| a.nuclear_charge).collect::<Vec<_>>(), before);
    }

    #[test]
    fn printed_cores_apply_by_atom() {
        let mut atoms: Vec<QmAtom> = [42, 8, 17].map(atom).to_vec();
        apply_cores(&mut atoms, &[(0, 28), (2, 10), (7, 10), (1, 8)]);
        assert_eq!(
            atoms.iter().map(|a| a.nuclear_charge).collect::<Vec<_>>(),
            vec![14.0, 8.0, 7.0]
        );
        assert!(reconcile(&mut atoms, 30.0, -1).is_none());
    }
}
