//! Tripos mol2 reader: atoms, partial charges, bonds, residues from the substructure columns, and
//! every `@<TRIPOS>MOLECULE` record as one frame.
//!
//! Called by `io::load` and the fuzz target with the whole decompressed file. Atom lines are
//! `id name x y z type [subst_id [subst_name [charge]]]`; the element is the part of the SYBYL type
//! before the dot when it is an element symbol as SYBYL capitalises it (`C.ar` -> C, `N.am` -> N,
//! `Na` -> Na); `Du`, `LP`, other pseudo-types and force-field types (GAFF `ca`, `os`, `ho`; AMBER
//! `CA`, `HO`) are guessed from the name. Residue numbers and names are the substructure id and name (1 and empty
//! when absent); the `@<TRIPOS>SUBSTRUCTURE` section's chain column (the sixth field, `****` for
//! none) gives the atoms of each substructure their chain. Charges are read unless the molecule's charge type is `NO_CHARGES`; every atom
//! must then carry one. Bonds refer to atom ids; types `2`, `3` and `ar` are kept as their orders
//! (`Structure::multiple_bonds`). As MDAnalysis does, the first molecule is the
//! topology and each molecule record (all with its atom count) a frame, with the `@<TRIPOS>CRYSIN`
//! cell as its box.

use super::ReadError;
use super::fields::{float, int, show, tokens};
use super::load::Parsed;
use crate::model::element::guess_from_name;
use crate::model::{BondOrder, BondSource, Element, Frame, Name8, Structure, UnitCell};
use std::path::Path;

#[derive(Clone, Copy, PartialEq, Eq)]
enum Section {
    None,
    Molecule,
    Atom,
    Bond,
    Crysin,
    Substructure,
    Other,
}

/// Reads a mol2 file (several molecule records give one frame each).
pub fn read(path: &Path, bytes: &[u8]) -> Result<Parsed, ReadError> {
    let mut structure = Structure::default();
    let mut frames: Vec<Frame> = Vec::new();
    let mut warnings = Vec::new();
    let mut charges: Vec<f32> = Vec::new();
    let mut with_charges = true;
    let mut ids: Vec<(i64, u32)> = Vec::new();
    let mut bond_pairs: Vec<(usize, i64, i64, Option<BondOrder>)> = Vec::new();
    let mut section = Section::None;
    let mut molecule_line = 0usize;
    let mut header_lines = 0usize;
    let mut declared_atoms: Option<usize> = None;
    let mut current: Option<Frame> = None;
    let mut long_names = 0usize;
    let mut last_line = 0usize;
    // The first molecule's substructures' chains: (subst_id, chain), `****` left out.
    let mut substructure_chains: Vec<(i64, Name8)> = Vec::new();

    let finish = |current: &mut Option<Frame>,
                  frames: &mut Vec<Frame>,
                  declared: Option<usize>,
                  molecule_line: usize,
                  n_topology: usize|
     -> Result<(), ReadError> {
        let Some(f) = current.take() else { return Ok(()) };
        let n = f.positions_angstrom.len();
        if let Some(d) = declared
            && d != n
        {
            return Err(ReadError::line(
                path,
                molecule_line,
                format!("the molecule record declares {d} atoms, its ATOM section has {n}"),
            ));
        }
        if !frames.is_empty() && n != n_topology {
            return Err(ReadError::line(
                path,
                molecule_line,
                format!(
                    "expected {n_topology} atoms in molecule {} (as in the first molecule), found {n}",
                    frames.len() + 1
                ),
            ));
        }
        frames.push(f);
        Ok(())
    };

    for (no, raw) in super::fields::Lines::new(bytes) {
        last_line = no;
        let line = raw.trim_ascii();
        if line.is_empty() || line.starts_with(b"#") {
            continue;
        }
        if let Some(tag) = line.strip_prefix(b"@<TRIPOS>") {
            section = match tag.trim_ascii() {
                b"MOLECULE" => {
                    finish(
                        &mut current,
                        &mut frames,
                        declared_atoms,
                        molecule_line,
                        structure.len(),
                    )?;
                    molecule_line = no;
                    header_lines = 0;
                    declared_atoms = None;
                    current = Some(Frame::default());
                    Section::Molecule
                }
                b"ATOM" => Section::Atom,
                b"BOND" => Section::Bond,
                b"CRYSIN" => Section::Crysin,
                b"SUBSTRUCTURE" => Section::Substructure,
                _ => Section::Other,
            };
            if section != Section::Molecule && current.is_none() {
                return Err(ReadError::line(
                    path,
                    no,
                    format!("expected @<TRIPOS>MOLECULE before {:?}", show(line)),
                ));
            }
            continue;
        }
        let first = frames.is_empty();
        match section {
            Section::None => {
                return Err(ReadError::line(
                    path,
                    no,
                    format!("expected @<TRIPOS>MOLECULE, found {:?}", show(line)),
                ));
            }
            Section::Molecule => {
                header_lines += 1;
                match header_lines {
                    1 if first => structure.title = String::from_utf8_lossy(line).into_owned(),
                    2 => {
                        let field = tokens(line).next().unwrap_or_default();
                        let n = int(field).filter(|&n| n >= 0).ok_or_else(|| {
                            ReadError::line(
                                path,
                                no,
                                format!("expected the atom count of the molecule, found {:?}", show(field)),
                            )
                        })?;
                        // Each atom takes a line of at least a dozen bytes.
                        if n as u64 > (bytes.len() / 12 + 1) as u64 {
                            return Err(ReadError::line(
                                path,
                                no,
                                format!("the molecule declares {n} atoms, more than the file can hold"),
                            ));
                        }
                        declared_atoms = Some(n as usize);
                    }
                    4 if first => with_charges = !line.eq_ignore_ascii_case(b"NO_CHARGES"),
                    _ => {}
                }
            }
            Section::Atom => {
                let mut t = [&b""[..]; 10];
                let mut k = 0;
                for tok in tokens(line).take(10) {
                    t[k] = tok;
                    k += 1;
                }
                if k < 6 {
                    return Err(ReadError::line(
                        path,
                        no,
                        format!(
                            "expected an atom line `id name x y z type [subst_id [subst_name [charge]]]`, found {:?}",
                            show(line)
                        ),
                    ));
                }
                let mut xyz = [0f32; 3];
                for (c, v) in xyz.iter_mut().enumerate() {
                    *v = float(t[2 + c]).ok_or_else(|| {
                        ReadError::line(
                            path,
                            no,
                            format!(
                                "expected {} (a number) in field {}, found {:?}",
                                ["x", "y", "z"][c],
                                3 + c,
                                show(t[2 + c])
                            ),
                        )
                    })? as f32;
                }
                let Some(frame) = current.as_mut() else { continue };
                if let Some(d) = declared_atoms
                    && frame.positions_angstrom.len() >= d
                {
                    return Err(ReadError::line(
                        path,
                        no,
                        format!("the molecule record declares {d} atoms, its ATOM section has more"),
                    ));
                }
                frame.positions_angstrom.push(xyz);
                if !first {
                    continue;
                }
                let id = int(t[0]).ok_or_else(|| {
                    ReadError::line(
                        path,
                        no,
                        format!("expected an atom id (an integer), found {:?}", show(t[0])),
                    )
                })?;
                ids.push((id, structure.len() as u32));
                let (name, atom_type) = (t[1], t[5]);
                let resid = if k > 6 {
                    int(t[6]).and_then(|r| i32::try_from(r).ok()).ok_or_else(|| {
                        ReadError::line(
                            path,
                            no,
                            format!("expected a substructure id (an integer), found {:?}", show(t[6])),
                        )
                    })?
                } else {
                    1
                };
                let resname = if k > 7 { t[7] } else { b"" };
                if Name8::would_truncate(name) || Name8::would_truncate(resname) {
                    long_names += 1;
                }
                let base = atom_type.split(|&c| c == b'.').next().unwrap_or_default();
                // SYBYL writes element types capitalised (`Ca` calcium, `Cl`, `C.ar`); GAFF's
                // lower-case types (`ca` aromatic carbon, `os`, `ho`, `na`) and AMBER's upper-case
                // ones (`CA`, `HO`, `OS`) are not elements, so those atoms are named by their name.
                let element = Element::from_symbol_bytes(base)
                    .filter(|e| e.symbol().as_bytes() == base)
                    .filter(|_| !base.eq_ignore_ascii_case(b"LP") && !base.eq_ignore_ascii_case(b"Du"))
                    .unwrap_or_else(|| guess_from_name(name, resname));
                structure.push_atom(
                    element,
                    Name8::new(name),
                    Name8::new(resname),
                    resid,
                    Name8::EMPTY,
                    Name8::EMPTY,
                );
                structure.types.push(Name8::new(atom_type));
                if with_charges {
                    match (k > 8).then(|| float(t[8])) {
                        Some(Some(q)) => charges.push(q as f32),
                        Some(None) => {
                            return Err(ReadError::line(
                                path,
                                no,
                                format!("expected a partial charge in field 9, found {:?}", show(t[8])),
                            ));
                        }
                        None => with_charges = false,
                    }
                }
            }
            Section::Bond if first => {
                let mut t = tokens(line);
                let (_, a, b) = (t.next(), t.next(), t.next());
                let order = t.next().and_then(BondOrder::from_mol2);
                match (a.and_then(int), b.and_then(int)) {
                    (Some(a), Some(b)) => bond_pairs.push((no, a, b, order)),
                    _ => {
                        return Err(ReadError::line(
                            path,
                            no,
                            format!("expected a bond line `id atom atom type`, found {:?}", show(line)),
                        ));
                    }
                }
            }
            Section::Crysin => {
                let mut v = [0f64; 6];
                for (slot, tok) in v.iter_mut().zip(tokens(line)) {
                    *slot = float(tok).unwrap_or(0.0);
                }
                let cell = UnitCell::new([v[0], v[1], v[2]], [v[3], v[4], v[5]]);
                if let Some(f) = current.as_mut() {
                    f.cell = cell.is_valid().then_some(cell);
                }
                section = Section::Other;
            }
            // `subst_id subst_name root_atom [subst_type [dict_type [chain [sub_type ...]]]]`.
            Section::Substructure if first => {
                let t: Vec<&[u8]> = tokens(line).collect();
                if let (Some(id), Some(&chain)) = (t.first().and_then(|v| int(v)), t.get(5))
                    && chain != b"****"
                {
                    substructure_chains.push((id, Name8::new(chain)));
                }
            }
            Section::Bond | Section::Substructure | Section::Other => {}
        }
    }
    finish(
        &mut current,
        &mut frames,
        declared_atoms,
        molecule_line,
        structure.len(),
    )?;
    if structure.is_empty() {
        return Err(ReadError::line(
            path,
            last_line.max(1),
            "expected @<TRIPOS>MOLECULE with an @<TRIPOS>ATOM section, found no atoms (is this a mol2 file?)",
        ));
    }
    if !substructure_chains.is_empty() {
        substructure_chains.sort_by_key(|c| c.0);
        for (resid, chain) in structure.resids.iter().zip(structure.chains.iter_mut()) {
            if let Ok(k) = substructure_chains.binary_search_by_key(&i64::from(*resid), |c| c.0)
                && let Some(&(_, c)) = substructure_chains.get(k)
            {
                *chain = c;
            }
        }
    }
    ids.sort_unstable();
    let lookup = |id: i64| {
        ids.binary_search_by_key(&id, |p| p.0)
            .ok()
            .and_then(|k| ids.get(k))
            .map(|p| p.1)
    };
    let mut bonds = Vec::with_capacity(bond_pairs.len());
    let mut multiple = Vec::new();
    for (no, a, b, order) in bond_pairs {
        match (lookup(a), lookup(b)) {
            (Some(i), Some(j)) if i != j => {
                bonds.push([i.min(j), i.max(j)]);
                if let Some(o) = order {
                    multiple.push(([i.min(j), i.max(j)], o));
                }
            }
            _ => {
                return Err(ReadError::line(
                    path,
                    no,
                    format!("the bond names atom ids {a} and {b}; expected two different atoms of the first molecule"),
                ));
            }
        }
    }
    bonds.sort_unstable();
    bonds.dedup();
    multiple.sort_unstable_by_key(|(pair, _)| *pair);
    multiple.dedup_by_key(|(pair, _)| *pair);
    structure.bonds = bonds;
    structure.multiple_bonds = multiple;
    structure.bond_source = BondSource::File;
    if with_charges && charges.len() == structure.len() {
        structure.charges_e = Some(charges);
    }
    if long_names > 0 {
        warnings.push(format!("{long_names} names longer than 8 characters truncated"));
    }
    structure
        .check_consistent()
        .map_err(|m| ReadError::file(path, format!("internal inconsistency: {m}")))?;
    Ok(Parsed {
        structure,
        frames,
        warnings,
        frame_energies_hartree: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const TWO: &str = "# comment
@<TRIPOS>MOLECULE
water
 3 2 1 0 0
SMALL
USER_CHARGES

@<TRIPOS>ATOM
      1 OW          0.0000    0.0000    0.0000 O.3       1 WAT       -0.8340
      2 HW1         0.9572    0.0000    0.0000 H         1 WAT        0.4170
      3 HW2        -0.2400    0.9266    0.0000 H         1 WAT        0.4170
@<TRIPOS>BOND
     1     1     2    1
     2     1     3    1
@<TRIPOS>CRYSIN
   40.0000   50.0000   60.0000   90.0000   90.0000   90.0000    1    1
@<TRIPOS>MOLECULE
water
 3 2 1 0 0
SMALL
USER_CHARGES
@<TRIPOS>ATOM
      1 OW          1.0000    0.0000    0.0000 O.3       1 WAT       -0.8340
      2 HW1         1.9572    0.0000    0.0000 H         1 WAT        0.4170
      3 HW2         0.7600    0.9266    0.0000 H         1 WAT        0.4170
";

    #[test]
    fn molecules_as_frames() {
        let p = read(Path::new("t.mol2"), TWO.as_bytes()).unwrap();
        let s = &p.structure;
        assert_eq!(s.len(), 3);
        assert_eq!(p.frames.len(), 2);
        assert_eq!(s.elements, vec![Element::O, Element::H, Element::H]);
        assert_eq!(s.types[0].as_str(), "O.3");
        assert_eq!(s.resnames[0].as_str(), "WAT");
        assert_eq!(s.charges_e.as_deref(), Some(&[-0.834f32, 0.417, 0.417][..]));
        assert_eq!(s.bonds, vec![[0, 1], [0, 2]]);
        assert_eq!(p.frames[0].cell.unwrap().lengths_angstrom, [40.0, 50.0, 60.0]);
        assert_eq!(p.frames[1].positions_angstrom[1], [1.9572, 0.0, 0.0]);
    }

    #[test]
    fn a_substructure_name_ending_in_a_digit_stays_apart_from_its_number() {
        let text = TWO.replace("1 WAT       -0.8340", "1 Q101      -0.8340").replacen(
            "1 WAT        0.4170",
            "13 LYS        0.4170",
            1,
        );
        let p = read(Path::new("t.mol2"), text.as_bytes()).unwrap();
        let s = &p.structure;
        // As MDAnalysis reads them: the name and id columns as they are.
        assert_eq!((s.resnames[0].as_str(), s.resids[0]), ("Q101", 1));
        assert_eq!(s.residue_text(0), "Q101 1", "not Q1011");
        assert_eq!(s.residue_text(1), "LYS13");
    }

    #[test]
    fn damaged_files_are_located() {
        let e = read(Path::new("t"), TWO.replacen("    0.9266", "    0.9x66", 1).as_bytes()).unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(11), "{e}");
        let e = read(
            Path::new("t"),
            TWO.replacen("     2     1     3    1", "     2     1     9    1", 1)
                .as_bytes(),
        )
        .unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(14), "{e}");
        let short = TWO.replacen(
            "      3 HW2         0.7600    0.9266    0.0000 H         1 WAT        0.4170\n",
            "",
            1,
        );
        assert!(read(Path::new("t"), short.as_bytes()).is_err());
        assert!(read(Path::new("t"), b"").is_err());
        assert!(read(Path::new("t"), b"@<TRIPOS>ATOM\n").is_err());
        assert!(read(Path::new("t"), b"@<TRIPOS>MOLECULE\nx\n999999999 0\n").is_err());
    }
}
