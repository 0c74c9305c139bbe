//! Setting up a Poisson-Boltzmann problem from a structure: the atoms (charges, radii: the files'
//! or each element's van der Waals radius), the lattice around them, the legend's name of the model
//! and the solution as a [`Grid3`] volume. Shared by the CLI (`grid pb`, `--color-by pb`) and the
//! viewer (`app::pb`), so both solve the same problem for the same files.

use super::{PbAtoms, PbLattice, PbParams, PbSolution};
use crate::model::units::bohr_from_angstrom;
use crate::model::{Grid3, Lattice, Structure};

/// The least padding (Angstrom) around the atoms of a Poisson-Boltzmann lattice.
pub const MIN_PB_PADDING_ANGSTROM: f64 = 10.0;

/// The note said once when the files give no radii.
pub const RADII_BY_ELEMENT_NOTE: &str =
    "the files give no atomic radii (or only zeros); using each element's van der Waals radius (Bondi 1964)";

/// The note said once when the files give no radii ([`RADII_BY_ELEMENT_NOTE`]), naming the atoms of
/// unknown element (Drude particles, lone pairs, virtual sites) among the solute's (`keep`; all
/// without), which take the table's default radius rather than one of Bondi's. A water model's
/// massless sites left out with the water are not named.
pub fn radii_note(structure: &Structure, keep: Option<&[bool]>) -> String {
    let kept = |i: usize| keep.is_none_or(|k| k.get(i).copied().unwrap_or(true));
    let unknown: Vec<usize> = (0..structure.elements.len())
        .filter(|&i| structure.elements[i].number() == 0 && kept(i))
        .collect();
    let Some(&first) = unknown.first() else {
        return RADII_BY_ELEMENT_NOTE.to_string();
    };
    let name = |v: &[crate::model::Name8]| v.get(first).map(|n| n.as_str().to_string()).unwrap_or_default();
    format!(
        "{RADII_BY_ELEMENT_NOTE}; {} atom{} of unknown element (the first: {} of {} {}) take {} A",
        unknown.len(),
        if unknown.len() == 1 { "" } else { "s" },
        name(&structure.names),
        name(&structure.resnames),
        structure.resids.get(first).copied().unwrap_or_default(),
        crate::model::Element(0).vdw_radius_angstrom()
    )
}

/// Why a structure has no Poisson-Boltzmann potential: it has no partial charges.
pub const NO_CHARGES: &str = "pb needs partial charges: give a file that carries them (pqr, prmtop, psf, mol2, tpr)";

/// Points per axis for at least `n`: `8 m + 1` (`16 m + 1` beyond 65), APBS's `dime` rule with
/// three or four levels, so the multigrids of the CPU and CUDA engines halve the lattice down to a
/// few points.
pub fn multigrid_points(n: usize) -> usize {
    let intervals = n.saturating_sub(1).max(4);
    let step = if intervals > 64 { 16 } else { 8 };
    intervals.div_ceil(step).saturating_mul(step).saturating_add(1)
}

/// A lattice `spacing_angstrom` apart around `positions` with at least `padding_angstrom` (and at
/// least [`MIN_PB_PADDING_ANGSTROM`]) on every side, [`multigrid_points`] per axis.
pub fn lattice_around(positions: &[[f64; 3]], spacing_angstrom: f64, padding_angstrom: f64) -> PbLattice {
    let h = spacing_angstrom;
    let pad = padding_angstrom.max(MIN_PB_PADDING_ANGSTROM);
    let mut lo = [f64::INFINITY; 3];
    let mut hi = [f64::NEG_INFINITY; 3];
    for p in positions {
        for k in 0..3 {
            lo[k] = lo[k].min(p[k]);
            hi[k] = hi[k].max(p[k]);
        }
    }
    if positions.is_empty() {
        lo = [0.0; 3];
        hi = [0.0; 3];
    }
    let centre: [f64; 3] = std::array::from_fn(|k| 0.5 * (lo[k] + hi[k]));
    let dims: [usize; 3] =
        // Saturating: an absurd spacing gives a count the solver's memory check refuses.
        std::array::from_fn(|k| {
            multigrid_points((((hi[k] - lo[k] + 2.0 * pad) / h).ceil().max(4.0) as usize).saturating_add(1))
        });
    PbLattice::centered(centre, h, dims)
}

/// Whether a trajectory's next frame may be solved on `previous` instead of the lattice `asked` made
/// around it: same spacing and points, and every atom still at least [`MIN_PB_PADDING_ANGSTROM`] less
/// one spacing from each face. Solving on the same lattice lets the solver start from the previous
/// frame's potential and keep its buffers.
pub fn keeps_lattice(previous: &PbLattice, asked: &PbLattice, positions: &[[f64; 3]]) -> bool {
    if previous.spacing_angstrom != asked.spacing_angstrom || previous.dims != asked.dims {
        return false;
    }
    let h = previous.spacing_angstrom;
    let margin = MIN_PB_PADDING_ANGSTROM - h;
    let lo = previous.origin_angstrom;
    let hi: [f64; 3] = std::array::from_fn(|k| lo[k] + h * (previous.dims[k].max(1) - 1) as f64);
    positions
        .iter()
        .all(|p| (0..3).all(|k| p[k] - lo[k] >= margin && hi[k] - p[k] >= margin))
}

/// The legend's name of the model: "Poisson-Boltzmann, 0.15 M, eps 2/78.5".
pub fn legend(p: &PbParams) -> String {
    let short = |v: f64| {
        let t = format!("{v:.1}");
        t.strip_suffix(".0").map(str::to_string).unwrap_or(t)
    };
    format!(
        "Poisson-Boltzmann{}, {} M, eps {}/{}",
        if p.nonlinear { " (nonlinear)" } else { "" },
        p.ionic_strength_molar,
        short(p.eps_in),
        short(p.eps_out)
    )
}

/// Elements of the bulk electrolyte's monatomic ions (Na+, K+, Cl- and their kin): in a solvated
/// box they are the ions the ionic strength stands for. Other monatomic ions (Zn, Ca, Mg, Fe) are
/// usually bound to the solute and stay.
const BULK_ION_ELEMENTS: [&str; 8] = ["Li", "Na", "K", "Rb", "Cs", "Cl", "Br", "I"];

/// Which atoms are the solute: `sel` (selection language) when given; by default every atom but the
/// water molecules and the bulk electrolyte's monatomic ions, which a Poisson-Boltzmann model
/// replaces by its dielectric and ionic strength (as pdb2pqr strips them before APBS). The note to
/// say once when atoms were left out by default; an error names a selection that does not parse or
/// picks nothing.
pub fn solute(
    structure: &Structure,
    frame: Option<&crate::model::Frame>,
    sel: Option<&str>,
) -> Result<(Vec<bool>, Option<String>), String> {
    use crate::model::select::Selection;
    if let Some(text) = sel {
        let parsed = Selection::parse(text).map_err(|e| format!("selection '{text}': {e}"))?;
        let keep = parsed.evaluate(structure, frame);
        if !keep.iter().any(|&k| k) {
            return Err(format!("selection '{text}' picks no atoms"));
        }
        return Ok((keep, None));
    }
    let water = Selection::parse("water")
        .map_err(|e| e.to_string())?
        .evaluate(structure, frame);
    let starts = structure.residue_starts();
    let mut keep = vec![true; structure.len()];
    let (mut waters, mut ions) = (0usize, 0usize);
    for w in starts.windows(2) {
        let (a, b) = (w[0], w[1]);
        if water.get(a..b).is_some_and(|r| r.iter().all(|&x| x)) {
            waters += 1;
            keep[a..b].iter_mut().for_each(|k| *k = false);
        } else if b == a + 1 && BULK_ION_ELEMENTS.contains(&structure.elements[a].symbol()) {
            ions += 1;
            keep[a] = false;
        }
    }
    if waters + ions == 0 {
        return Ok((keep, None));
    }
    if !keep.iter().any(|&k| k) {
        // Only solvent (a box of water): nothing to leave out it would stand for.
        return Ok((vec![true; structure.len()], None));
    }
    let plural = |n: usize, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    let what = match (waters, ions) {
        (w, 0) => plural(w, "water molecule", "water molecules"),
        (0, i) => plural(i, "ion of the electrolyte", "ions of the electrolyte"),
        (w, i) => format!(
            "{} and {}",
            plural(w, "water molecule", "water molecules"),
            plural(i, "ion of the electrolyte", "ions of the electrolyte")
        ),
    };
    Ok((
        keep,
        Some(format!(
            "Poisson-Boltzmann: {what} left out of the solute, as APBS maps are made: the solvent's dielectric and the ionic strength stand for them (a selection of the atoms, e.g. `all`, keeps them)"
        )),
    ))
}

/// The solute of one frame as the solver takes it: `solute`'s choice of atoms (`sel`, by default
/// all but the solvent), their positions, charges and radii.
pub struct Solute {
    pub atoms: PbAtoms,
    /// Which of the structure's atoms are in `atoms`.
    pub keep: Vec<bool>,
    /// The radii are the elements' (the files give none).
    pub radii_by_element: bool,
    /// Said once when the solvent was left out by default.
    pub solvent_note: Option<String>,
}

/// The solute of `frame` (`solute`, then `atoms_kept`): what the CLI, the viewer and Python solve.
pub fn solute_atoms(structure: &Structure, frame: &crate::model::Frame, sel: Option<&str>) -> Result<Solute, String> {
    let (keep, solvent_note) = solute(structure, Some(frame), sel)?;
    let (atoms, radii_by_element) = atoms_kept(structure, &frame.positions_angstrom, Some(&keep))?;
    Ok(Solute {
        atoms,
        keep,
        radii_by_element,
        solvent_note,
    })
}

/// The atoms of `structure` at `positions_angstrom` that `keep` marks (all without), and whether
/// their radii are the elements'.
fn atoms_kept(
    structure: &Structure,
    positions_angstrom: &[[f32; 3]],
    keep: Option<&[bool]>,
) -> Result<(PbAtoms, bool), String> {
    let (all, by_element) = atoms_of(structure, positions_angstrom)?;
    let Some(keep) = keep else { return Ok((all, by_element)) };
    let pick = |v: Vec<f64>| -> Vec<f64> { v.into_iter().zip(keep).filter_map(|(x, &k)| k.then_some(x)).collect() };
    Ok((
        PbAtoms {
            positions_angstrom: all
                .positions_angstrom
                .into_iter()
                .zip(keep)
                .filter_map(|(x, &k)| k.then_some(x))
                .collect(),
            charges_e: pick(all.charges_e),
            radii_angstrom: pick(all.radii_angstrom),
        },
        by_element,
    ))
}

/// The atoms of `structure` at `positions_angstrom`, and whether their radii are the elements' (the
/// files give none). Errors name what is missing (no charges, a coordinate count that differs).
pub fn atoms_of(structure: &Structure, positions_angstrom: &[[f32; 3]]) -> Result<(PbAtoms, bool), String> {
    let Some(charges) = structure.charges_e.as_ref() else {
        return Err(NO_CHARGES.into());
    };
    if positions_angstrom.len() != charges.len() {
        return Err(format!(
            "the frame holds {} atoms, the structure's charges {}",
            positions_angstrom.len(),
            charges.len()
        ));
    }
    let (radii, by_element) = structure.radii_or_element();
    let radii: Vec<f64> = radii.iter().map(|&v| f64::from(v)).collect();
    Ok((
        PbAtoms {
            positions_angstrom: positions_angstrom.iter().map(|p| p.map(f64::from)).collect(),
            charges_e: charges.iter().map(|&q| f64::from(q)).collect(),
            radii_angstrom: radii,
        },
        by_element,
    ))
}

/// The solution as a volume in kT/e on its lattice (in bohr, as every [`Grid3`]).
pub fn grid_of(solution: &PbSolution, description: String) -> Grid3 {
    let lat = &solution.lattice;
    Grid3 {
        lattice: Lattice::axis_aligned(
            lat.origin_angstrom.map(bohr_from_angstrom),
            bohr_from_angstrom(lat.spacing_angstrom),
            lat.dims,
        ),
        values: solution.potential_kt_per_e.iter().map(|&u| u as f32).collect(),
        description,
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]

    use super::*;
    use crate::model::{Element, Name8};

    fn two_atoms(charges: Option<Vec<f32>>) -> Structure {
        let mut s = Structure::default();
        for e in [Element::O, Element::N] {
            s.push_atom(e, Name8::from("X"), Name8::from("R"), 1, Name8::EMPTY, Name8::EMPTY);
        }
        s.charges_e = charges;
        s
    }

    /// No charges: the one message naming the files that carry them. No radii: Bondi's by element
    /// (O 1.52 A, N 1.55 A), said by the flag.
    #[test]
    fn atoms_need_charges_and_take_element_radii() {
        let p = [[0.0f32; 3], [3.0, 0.0, 0.0]];
        assert_eq!(atoms_of(&two_atoms(None), &p).unwrap_err(), NO_CHARGES);
        let (atoms, by_element) = atoms_of(&two_atoms(Some(vec![-0.5, 0.5])), &p).unwrap();
        assert!(by_element);
        assert!(
            (atoms.radii_angstrom[0] - 1.52).abs() < 1e-6,
            "{:?}",
            atoms.radii_angstrom
        );
        assert!(
            (atoms.radii_angstrom[1] - 1.55).abs() < 1e-6,
            "{:?}",
            atoms.radii_angstrom
        );
        assert!(atoms_of(&two_atoms(Some(vec![-0.5, 0.5])), &p[..1]).is_err());
        // The note names atoms of unknown element, which take the table's default (1.5 A).
        assert_eq!(radii_note(&two_atoms(None), None), RADII_BY_ELEMENT_NOTE);
        let mut drude = two_atoms(Some(vec![-0.5, 0.5]));
        drude.elements[1] = Element(0);
        let note = radii_note(&drude, None);
        // Left out of the solute, it is not named.
        let mask: Vec<bool> = drude.elements.iter().map(|e| e.number() != 0).collect();
        assert_eq!(radii_note(&drude, Some(&mask)), RADII_BY_ELEMENT_NOTE);
        assert!(
            note.ends_with("; 1 atom of unknown element (the first: X of R 1) take 1.5 A"),
            "{note}"
        );
        let (atoms, _) = atoms_of(&drude, &p).unwrap();
        assert!((atoms.radii_angstrom[1] - 1.5).abs() < 1e-6);
        // A radius column of zeros only is no radii; one zero among others (a hydroxyl hydrogen of
        // AMBER's PQR radii) is kept.
        let mut zeros = two_atoms(Some(vec![-0.5, 0.5]));
        zeros.radii_angstrom = Some(vec![0.0, 0.0]);
        let (atoms, by_element) = atoms_of(&zeros, &p).unwrap();
        assert!(by_element);
        assert!((atoms.radii_angstrom[0] - 1.52).abs() < 1e-6);
        zeros.radii_angstrom = Some(vec![0.0, 1.8]);
        let (atoms, by_element) = atoms_of(&zeros, &p).unwrap();
        assert!(!by_element);
        assert_eq!(atoms.radii_angstrom, vec![0.0, 1.8f32 as f64]);
        // The lattice keeps 10 A on every side and multigrid-friendly sizes.
        let lat = lattice_around(&atoms.positions_angstrom, 1.0, 0.0);
        assert!(lat.origin_angstrom[0] <= -10.0 && lat.point(lat.dims[0] - 1, 0, 0)[0] >= 13.0);
        assert_eq!(multigrid_points(lat.dims[0]), lat.dims[0]);
    }

    #[test]
    fn a_frame_that_still_fits_keeps_the_previous_lattice() {
        let first = vec![[0.0, 0.0, 0.0], [12.0, 3.0, -4.0]];
        let prev = lattice_around(&first, 1.0, 0.0);
        let moved: Vec<[f64; 3]> = first.iter().map(|p| [p[0] + 0.6, p[1] - 0.4, p[2]]).collect();
        let asked = lattice_around(&moved, 1.0, 0.0);
        assert_ne!(asked, prev);
        assert!(keeps_lattice(&prev, &asked, &moved));
        // Too far: an atom would come closer to a face than the padding allows.
        let far: Vec<[f64; 3]> = first.iter().map(|p| [p[0] + 6.0, p[1], p[2]]).collect();
        assert!(!keeps_lattice(&prev, &lattice_around(&far, 1.0, 0.0), &far));
        // Another spacing is another lattice.
        assert!(!keeps_lattice(&prev, &lattice_around(&moved, 0.5, 0.0), &moved));
    }
}
