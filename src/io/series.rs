//! Checks that the files opened together describe one set of atoms: a wavefunction of a series
//! against the first of the series, and a structure file or QM log giving coordinates against the
//! topology before it. Called by `io::load`; messages name the first atom that differs when the
//! counts agree ("atom 4 is H, water.xyz's atom 4 is O (same count, 375 atoms, different order)").

use super::ReadError;
use super::fields::AtomsDiffer;
use crate::model::{Element, Spin, SpinKind, Structure, Wavefunction};
use std::path::Path;

/// `path`'s wavefunction against the first of the series: the same atoms in the same order and as
/// many basis functions.
pub(super) fn check_same_basis(first: &Wavefunction, wf: &Wavefunction, path: &Path) -> Result<(), ReadError> {
    if first.atoms.len() != wf.atoms.len() {
        return Err(ReadError::file(
            path,
            format!(
                "this wavefunction has {} atoms, the first of the series {}: a series is one molecule throughout",
                wf.atoms.len(),
                first.atoms.len()
            ),
        ));
    }
    if let Some(d) = AtomsDiffer::compare(
        &first.atoms,
        &wf.atoms,
        |a| a.element,
        |i| first.atoms.get(i).map(|a| a.element) != wf.atoms.get(i).map(|a| a.element),
        |a| a.element.symbol().to_string(),
    ) {
        return Err(ReadError::file(
            path,
            format!(
                "this wavefunction's {}: a series is one molecule throughout",
                d.describe("the first of the series'")
            ),
        ));
    }
    if first.basis.n_functions() != wf.basis.n_functions() {
        return Err(ReadError::file(
            path,
            format!(
                "this wavefunction has {} basis functions, the first of the series {} (the same {} atoms): a series needs one basis set",
                wf.basis.n_functions(),
                first.basis.n_functions(),
                wf.atoms.len()
            ),
        ));
    }
    Ok(())
}

/// The atoms of `other` (a structure file or a QM log read after the topology, giving coordinates)
/// against the topology's, `topology` its file: at the same count, an atom whose element and name
/// both differ from the topology's (both elements known) means another system or another order.
/// Names alone may differ (a PDB's "OW" for a topology's "O"), and so may elements guessed from
/// names where the names agree; a file labelling every atom alike is not checked.
pub(super) fn check_same_atoms(
    structure: &Structure,
    topology: &Path,
    other: &Structure,
    path: &Path,
) -> Result<(), ReadError> {
    let (a, b) = (&structure.elements, &other.elements);
    // One label for every atom of a mixed topology is a placeholder, not an element (MDAnalysis's
    // 2r9r-1b.xyz names all 1284 atoms of its PSF "H"): the coordinates are taken as given.
    let uniform = |e: &[Element]| e.windows(2).all(|w| w[0] == w[1]);
    if uniform(b) && !uniform(a) {
        return Ok(());
    }
    let differs = |i: usize| {
        let (ea, eb) = (a.get(i).copied(), b.get(i).copied());
        let known = |e: Option<Element>| e.is_some_and(|e| e != Element::UNKNOWN);
        known(ea) && known(eb) && ea != eb && structure.names.get(i) != other.names.get(i)
    };
    let Some(d) = AtomsDiffer::compare(a, b, |e| *e, differs, |e| e.symbol().to_string()) else {
        return Ok(());
    };
    let topology_name = topology
        .file_name()
        .map_or_else(|| topology.display().to_string(), |n| n.to_string_lossy().into_owned());
    Err(ReadError::file(
        path,
        format!(
            "{}: these coordinates are of other atoms than the topology's; open the files of one system together",
            d.describe(&format!("{topology_name}'s"))
        ),
    ))
}

/// Joins a wavefunction of beta orbitals only to `alpha`, the wavefunction read before it, which
/// must have the same atoms and basis and no beta orbitals of its own; its orbitals keep the alpha
/// channel's share of their occupations.
pub(super) fn join_beta(
    alpha: Option<&mut Wavefunction>,
    beta_only: Wavefunction,
    path: &Path,
) -> Result<(), ReadError> {
    let Some(a) = alpha.filter(|a| a.beta.is_none() && a.spin != SpinKind::Unrestricted) else {
        return Err(ReadError::file(
            path,
            "the file holds beta orbitals only (as Molpro writes the second spin of an unrestricted calculation): open it after the file of the alpha orbitals",
        ));
    };
    check_same_basis(a, &beta_only, path)?;
    let occupations: Vec<f64> = a
        .alpha
        .occupations
        .iter()
        .map(|&o| a.channel_occupation(Spin::Alpha, o))
        .collect();
    a.alpha.occupations = occupations;
    a.spin = SpinKind::Unrestricted;
    a.beta = beta_only.beta;
    for c in beta_only.corrections {
        if !a.corrections.contains(&c) {
            a.corrections.push(c);
        }
    }
    Ok(())
}
