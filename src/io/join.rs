//! Molecules of several structure files joined into one system: a ligand's SD file beside its
//! protein's PDB file, docking poses around a receptor, a cofactor beside an enzyme.
//!
//! Called by `io::load` when a structure file opened after the first holds other atoms than the
//! first (a structure file of the same atoms gives coordinates instead, as a PDB beside a PSF). The
//! joined molecule's atoms follow the first's; a molecule without chain identifiers takes the first
//! letter no chain of the system uses, so `chain B` selects it. Frames pair up: both files' frame
//! counts equal, or one of them a single frame that stands in every frame of the other (a receptor
//! with nine poses gives nine frames). The first file's box holds.
//!
//! Per-atom columns only one side has: radii and masses are filled with the elements' (what the
//! engines take for an atom without them), B-factors with 0, occupancies with 1; partial charges
//! of the first file are kept, the joined atoms counting zero when their file has none (a receptor's
//! PQR beside a docked ligand), and a warning says so; a joined file's charges are left out when the
//! first file has none (its atoms then take a table's, `io::load`). Bonds from both files are kept when both files have them; otherwise every
//! bond is guessed again on the joined atoms.

use crate::model::{BondSource, Frame, Name8, Structure};

/// Appends `other`'s atoms to `s`, naming `other`'s chain where it has none; the warnings to give.
pub fn append_structure(s: &mut Structure, other: &Structure, other_name: &str) -> Vec<String> {
    let mut warnings = Vec::new();
    let n0 = s.len();
    let n1 = other.len();
    let chain = if other.chains.iter().all(|c| c.as_str().trim().is_empty()) {
        let used: std::collections::HashSet<&str> = s.chains.iter().map(|c| c.as_str()).collect();
        let free = ('A'..='Z')
            .chain('a'..='z')
            .chain('0'..='9')
            .map(|c| c.to_string())
            .find(|c| !used.contains(c.as_str()));
        free.map(|c| Name8::new(c.as_bytes()))
    } else {
        None
    };
    for i in 0..n1 {
        let c = chain.unwrap_or(other.chains[i]);
        s.push_atom(
            other.elements[i],
            other.names[i],
            other.resnames[i],
            other.resids[i],
            c,
            other.segids[i],
        );
    }
    if let Some(c) = chain {
        warnings.push(format!(
            "{other_name}: its {n1} atoms joined the system as chain {}",
            c.as_str()
        ));
    } else {
        warnings.push(format!("{other_name}: its {n1} atoms joined the system"));
    }
    // Types: present on both sides or padded with empty names.
    if !s.types.is_empty() || !other.types.is_empty() {
        s.types.resize(n0, Name8::EMPTY);
        if other.types.len() == n1 {
            s.types.extend_from_slice(&other.types);
        } else {
            s.types.resize(n0 + n1, Name8::EMPTY);
        }
    }
    let elements = &other.elements;
    let element_radii: Vec<f32> = elements.iter().map(|e| e.vdw_radius_angstrom()).collect();
    let element_masses: Vec<f32> = elements.iter().map(|e| e.mass_dalton()).collect();
    let first_radii: Vec<f32> = s.elements[..n0].iter().map(|e| e.vdw_radius_angstrom()).collect();
    let first_masses: Vec<f32> = s.elements[..n0].iter().map(|e| e.mass_dalton()).collect();
    join_column(
        &mut s.radii_angstrom,
        &other.radii_angstrom,
        &first_radii,
        &element_radii,
    );
    join_column(
        &mut s.masses_dalton,
        &other.masses_dalton,
        &first_masses,
        &element_masses,
    );
    join_column(&mut s.bfactors, &other.bfactors, &vec![0.0; n0], &vec![0.0; n1]);
    join_column(&mut s.occupancies, &other.occupancies, &vec![1.0; n0], &vec![1.0; n1]);
    for (mine, theirs) in [(&mut s.altlocs, &other.altlocs), (&mut s.icodes, &other.icodes)] {
        match (mine, theirs) {
            (None, None) => {}
            (mine, theirs) => {
                let mut a = mine.take().unwrap_or_else(|| vec![b' '; n0]);
                a.extend(theirs.clone().unwrap_or_else(|| vec![b' '; n1]));
                *mine = Some(a);
            }
        }
    }
    match (&mut s.charges_e, &other.charges_e) {
        (Some(q), Some(r)) => q.extend_from_slice(r),
        (None, None) => {}
        (Some(q), None) => {
            // A receptor's PQR beside a docked ligand's SD file: the receptor keeps its charges.
            q.resize(n0 + n1, 0.0);
            warnings.push(format!(
                "{other_name} gives no partial charges: its {n1} atoms count as zero in potentials"
            ));
        }
        (None, Some(_)) => {
            // The first file's atoms take the table's charges (io::load), the joined ones zero.
            warnings.push(format!(
                "the partial charges of {other_name} are left out: the first file gives none, so its atoms take a table's and these count as zero"
            ));
        }
    }
    // The ligand's bond orders hold for its pairs whichever way the bonds come.
    s.multiple_bonds.extend(
        other
            .multiple_bonds
            .iter()
            .map(|&([a, b], o)| ([a + n0 as u32, b + n0 as u32], o)),
    );
    if s.bond_source == BondSource::File && other.bond_source == BondSource::File {
        s.bonds
            .extend(other.bonds.iter().map(|&[a, b]| [a + n0 as u32, b + n0 as u32]));
    } else {
        // Guessed again on the joined atoms by `io::load`.
        s.bonds.clear();
        s.bond_source = BondSource::None;
    }
    warnings
}

/// One per-atom column joined: kept where either side has it, the other side's `fill`.
fn join_column(mine: &mut Option<Vec<f32>>, theirs: &Option<Vec<f32>>, my_fill: &[f32], their_fill: &[f32]) {
    match (mine.as_mut(), theirs) {
        (None, None) => {}
        (Some(v), t) => v.extend_from_slice(t.as_deref().unwrap_or(their_fill)),
        (None, Some(t)) => {
            let mut v = my_fill.to_vec();
            v.extend_from_slice(t);
            *mine = Some(v);
        }
    }
}

/// The frames of the joined system: frame `i` holds the first's frame `i` (or its only one) and
/// then the other's. `Err` names both counts when neither is 1 and they differ.
pub fn join_frames(first: &[Frame], other: &[Frame]) -> Result<Vec<Frame>, String> {
    let (n1, n2) = (first.len(), other.len());
    if n1 == 0 || n2 == 0 {
        return Err("a joined molecule needs coordinates in both files".into());
    }
    if n1 != n2 && n1 != 1 && n2 != 1 {
        return Err(format!(
            "its {n2} frames cannot be paired with the {n1} frames of the system (give one of them a single frame, or as many frames as the other)"
        ));
    }
    let n = n1.max(n2);
    Ok((0..n)
        .map(|i| {
            let a = &first[i.min(n1 - 1)];
            let b = &other[i.min(n2 - 1)];
            let mut positions = Vec::with_capacity(a.positions_angstrom.len() + b.positions_angstrom.len());
            positions.extend_from_slice(&a.positions_angstrom);
            positions.extend_from_slice(&b.positions_angstrom);
            Frame {
                positions_angstrom: positions,
                cell: a.cell,
                time_ps: a.time_ps.or(b.time_ps),
                step: a.step.or(b.step),
            }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::Element;

    fn molecule(n: usize, chain: &str, charges: bool) -> Structure {
        let mut s = Structure::default();
        for i in 0..n {
            s.push_atom(
                Element::C,
                Name8::new(format!("C{i}").as_bytes()),
                Name8::new(b"MOL"),
                1,
                Name8::new(chain.as_bytes()),
                Name8::EMPTY,
            );
        }
        if charges {
            s.charges_e = Some(vec![0.5; n]);
        }
        s.bonds = (1..n as u32).map(|i| [i - 1, i]).collect();
        s.bond_source = BondSource::File;
        s
    }

    #[test]
    fn atoms_chains_columns_and_bonds_join() {
        let mut a = molecule(3, "A", true);
        a.radii_angstrom = Some(vec![1.0; 3]);
        let b = molecule(2, "", true);
        let w = append_structure(&mut a, &b, "lig.sdf");
        assert_eq!(a.len(), 5);
        assert_eq!(a.chains[4].as_str(), "B");
        assert!(w[0].contains("chain B"), "{w:?}");
        assert_eq!(a.charges_e.as_ref().unwrap().len(), 5);
        let r = a.radii_angstrom.as_ref().unwrap();
        assert_eq!(r.len(), 5);
        assert_eq!(r[4], Element::C.vdw_radius_angstrom());
        assert_eq!(a.bonds, vec![[0, 1], [1, 2], [3, 4]]);
        assert!(a.check_consistent().is_ok(), "{:?}", a.check_consistent());

        // The first file's charges kept, the ligand's atoms at zero, with a warning; bonds guessed again.
        let mut a = molecule(3, "A", true);
        let mut b = molecule(2, "L", false);
        b.bond_source = BondSource::Guessed;
        let w = append_structure(&mut a, &b, "lig.sdf");
        assert_eq!(a.charges_e.as_deref(), Some(&[0.5, 0.5, 0.5, 0.0, 0.0][..]));
        assert!(
            w.iter().any(|m| m.contains("count as zero") && m.contains("lig.sdf")),
            "{w:?}"
        );
        assert_eq!(a.chains[3].as_str(), "L");
        assert!(a.bonds.is_empty() && a.bond_source == BondSource::None);
    }

    #[test]
    fn frames_pair_up_or_are_refused() {
        let f = |n: usize, v: f32| Frame {
            positions_angstrom: vec![[v; 3]; n],
            ..Frame::default()
        };
        let receptor = vec![f(3, 0.0)];
        let poses = vec![f(2, 1.0), f(2, 2.0), f(2, 3.0)];
        let j = join_frames(&receptor, &poses).unwrap();
        assert_eq!(j.len(), 3);
        assert_eq!(
            j[2].positions_angstrom,
            vec![[0.0; 3], [0.0; 3], [0.0; 3], [3.0; 3], [3.0; 3]]
        );
        let two = vec![f(3, 0.0), f(3, 1.0)];
        assert!(join_frames(&two, &poses).unwrap_err().contains("3 frames"));
        assert_eq!(
            join_frames(&two, &[f(2, 5.0), f(2, 6.0)]).unwrap()[1].positions_angstrom[4],
            [6.0; 3]
        );
        assert!(join_frames(&[], &poses).is_err());
    }
}
