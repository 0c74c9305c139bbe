//! Tinker XYZ and archive reader (`.txyz`, `.arc`, and Tinker's own `.xyz`).
//!
//! Called by `io::load`. A frame is a header line (`count [title]`), an optional box line
//! (`a b c alpha beta gamma`, Angstrom and degrees, written by Tinker for periodic systems), then
//! one line per atom: `index name x y z type bonded...`, where `bonded` are the indices of the
//! atoms bonded to it. An archive (`.arc`) is frames one after the other. The atom names, the
//! force field's type numbers and the bonds come from the first frame.
//!
//! Tinker files carry no elements: a name is the force field's atom name (`CA`, `HN`, `CH3` for a
//! united atom, `Na+`, `Cl-`). The element is the name's first letter where that is an element,
//! as in a protein; a name written in mixed case (`Cl`, `Na+`) or ending in an ion's charge
//! (`CL-`, `NA+`) names a two-letter element.
//!
//! `looks_like` tells a Tinker file named `.xyz` from a plain XYZ file by its atom lines.

use super::ReadError;
use super::fields::{FrameHeader, Lines, float, frame_atoms, int, next_nonblank, show, tokens};
use super::load::Parsed;
use crate::model::{BondSource, Element, Frame, Name8, Structure, UnitCell};
use std::collections::HashMap;
use std::path::Path;

/// Bytes of the shortest atom line, `1 H 0 0 0` plus its newline.
const MIN_ATOM_LINE: usize = 10;

/// True when the text after a header line reads as Tinker atom lines: `1 name x y z type ...`
/// (a box line may come first), every column after the name's three coordinates an integer.
pub fn looks_like(head: &[u8]) -> bool {
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.strip_suffix(b"\r").unwrap_or(l))
        .filter(|l| !l.trim_ascii().is_empty());
    let Some(header) = lines.next() else { return false };
    if tokens(header).next().and_then(int).is_none_or(|n| n <= 0) {
        return false;
    }
    let mut next = lines.next();
    if next.is_some_and(is_box_line) {
        next = lines.next();
    }
    let Some(atom) = next else { return false };
    let cols: Vec<&[u8]> = tokens(atom).collect();
    cols.len() >= 6
        && int(cols[0]) == Some(1)
        && float(cols[1]).is_none()
        && cols[2..5].iter().all(|c| float(c).is_some())
        && cols[5..].iter().all(|c| int(c).is_some())
}

/// A box line: at least three numbers, the second of them a number (an atom line's second column
/// is a name), as Tinker and MDAnalysis decide.
fn is_box_line(line: &[u8]) -> bool {
    let mut t = tokens(line);
    let (Some(a), Some(b)) = (t.next(), t.next()) else {
        return false;
    };
    float(a).is_some() && float(b).is_some()
}

/// The cell of a box line: `a b c [alpha beta gamma]`; angles default to 90 degrees.
fn box_cell(line: &[u8]) -> Result<Option<UnitCell>, String> {
    let values: Vec<f64> = tokens(line).map(float).collect::<Option<Vec<f64>>>().ok_or_else(|| {
        format!(
            "expected a box line `a b c alpha beta gamma` (Angstrom, degrees), found {:?}",
            show(line)
        )
    })?;
    let (lengths, angles) = match values.len() {
        3 => ([values[0], values[1], values[2]], [90.0; 3]),
        6 => ([values[0], values[1], values[2]], [values[3], values[4], values[5]]),
        n => {
            return Err(format!(
                "expected a box line of 3 or 6 numbers (a b c alpha beta gamma), found {n}: {:?}",
                show(line)
            ));
        }
    };
    if lengths.iter().all(|&l| l == 0.0) {
        return Ok(None);
    }
    let cell = UnitCell::new(lengths, angles);
    Ok(cell.is_valid().then_some(cell))
}

/// The element of a Tinker atom name.
pub fn element_of_name(name: &[u8]) -> Element {
    let name = name.trim_ascii();
    let start = name.iter().position(|c| c.is_ascii_alphabetic()).unwrap_or(name.len());
    let letters = &name[start..];
    let alpha = letters.iter().take_while(|c| c.is_ascii_alphabetic()).count();
    if alpha == 0 {
        return Element::UNKNOWN;
    }
    let charged = matches!(name.last(), Some(b'+' | b'-'));
    if alpha == 2 {
        let mixed = letters[0].is_ascii_uppercase() && letters[1].is_ascii_lowercase();
        if (mixed || charged)
            && let Some(e) = Element::from_symbol_bytes(&letters[..2])
        {
            return e;
        }
    }
    Element::from_symbol_bytes(&letters[..1])
        .or_else(|| {
            (alpha >= 2)
                .then(|| Element::from_symbol_bytes(&letters[..2]))
                .flatten()
        })
        .unwrap_or(Element::UNKNOWN)
}

/// Reads a Tinker XYZ file or archive.
pub fn read(path: &Path, bytes: &[u8]) -> Result<Parsed, ReadError> {
    let mut lines = Lines::new(bytes);
    let mut structure = Structure::default();
    let mut frames: Vec<Frame> = Vec::new();
    let mut warnings = Vec::new();
    let mut long_names = 0usize;
    // Bonds of the first frame by the file's atom indices, resolved once every index is known.
    let mut bonded_ids: Vec<(usize, i64, usize)> = Vec::new();
    let mut index_of_id: HashMap<i64, u32> = HashMap::new();
    'frames: while let Some((count_no, count_line)) = next_nonblank(&mut lines) {
        let first = frames.is_empty();
        let cut_short =
            |lines: &Lines<'_>| super::cut_short_lines_warning(frames.len() as u64, count_no, lines.number());
        let Some(n) = tokens(count_line).next().and_then(int).filter(|&v| v >= 0) else {
            return Err(ReadError::line(
                path,
                count_no,
                format!(
                    "expected the atom count of frame {} (a non-negative integer, then the title), found {:?}",
                    frames.len() + 1,
                    show(count_line)
                ),
            ));
        };
        let room = (lines.remaining() + 1) / MIN_ATOM_LINE;
        let header = FrameHeader {
            start_line: count_no,
            count_line: count_no,
            atoms: n as u64,
        };
        let Some(n) = frame_atoms(
            path,
            &mut lines,
            header,
            room,
            (frames.len(), structure.len()),
            &mut warnings,
        )?
        else {
            break;
        };
        if first {
            let trimmed = count_line.trim_ascii_start();
            let count_end = trimmed
                .iter()
                .position(u8::is_ascii_whitespace)
                .unwrap_or(trimmed.len());
            let title = &trimmed[count_end..];
            structure.title = String::from_utf8_lossy(title.trim_ascii()).into_owned();
            structure.reserve(n);
        }
        let mut cell = None;
        let mut positions: Vec<[f32; 3]> = Vec::with_capacity(n);
        let mut k = 0usize;
        while k < n {
            let Some((no, line)) = lines.next() else {
                if !first {
                    warnings.push(cut_short(&lines));
                    break 'frames;
                }
                return Err(ReadError::line(
                    path,
                    lines.number() + 1,
                    format!(
                        "expected {n} atom lines in frame {}, the file ends after {k}",
                        frames.len() + 1
                    ),
                ));
            };
            if k == 0 && positions.is_empty() && cell.is_none() && is_box_line(line) {
                cell = Some(box_cell(line).map_err(|m| ReadError::line(path, no, m))?);
                continue;
            }
            let mut cols = tokens(line);
            let id = cols.next().and_then(int);
            let name = cols.next().unwrap_or(b"");
            let mut xyz = [0f32; 3];
            let mut ok = id.is_some() && !name.is_empty();
            for v in &mut xyz {
                match cols.next().and_then(float) {
                    Some(x) => *v = x as f32,
                    None => ok = false,
                }
            }
            if !ok {
                // A partly written last line of a later frame: the file was cut short there.
                if !first && lines.remaining() == 0 {
                    warnings.push(cut_short(&lines));
                    break 'frames;
                }
                return Err(ReadError::line(
                    path,
                    no,
                    format!(
                        "expected a Tinker atom line `index name x y z type bonded...`, found {:?}",
                        show(line)
                    ),
                ));
            }
            positions.push(xyz);
            if first {
                let atom_type = cols.next();
                if let Some(t) = atom_type
                    && int(t).is_none()
                {
                    return Err(ReadError::line(
                        path,
                        no,
                        format!("expected the atom type number after x y z, found {:?}", show(t)),
                    ));
                }
                for other in cols {
                    let Some(other) = int(other) else {
                        return Err(ReadError::line(
                            path,
                            no,
                            format!(
                                "expected the indices of bonded atoms after the atom type, found {:?}",
                                show(other)
                            ),
                        ));
                    };
                    bonded_ids.push((k, other, no));
                }
                let id = id.unwrap_or(0);
                if index_of_id.insert(id, k as u32).is_some() {
                    return Err(ReadError::line(
                        path,
                        no,
                        format!("atom index {id} appears twice in the first frame"),
                    ));
                }
                if Name8::would_truncate(name) {
                    long_names += 1;
                }
                structure.push_atom(
                    element_of_name(name),
                    Name8::new(name),
                    Name8::EMPTY,
                    1,
                    Name8::EMPTY,
                    Name8::EMPTY,
                );
                structure.types.push(atom_type.map_or(Name8::EMPTY, Name8::new));
            }
            k += 1;
        }
        frames.push(Frame {
            positions_angstrom: positions,
            cell: cell.flatten(),
            ..Frame::default()
        });
    }
    if frames.is_empty() {
        return Err(ReadError::line(
            path,
            1,
            "expected an atom count on the first line, found an empty file",
        ));
    }
    let mut bonds = Vec::with_capacity(bonded_ids.len() / 2);
    let mut missing = None;
    for (i, other, no) in bonded_ids {
        match index_of_id.get(&other) {
            Some(&j) if j as usize != i => bonds.push([(i as u32).min(j), (i as u32).max(j)]),
            Some(_) => {}
            None => {
                missing.get_or_insert((other, no));
            }
        }
    }
    if let Some((id, no)) = missing {
        warnings.push(format!(
            "line {no} bonds its atom to atom {id}, which the file does not have: such bonds are left out"
        ));
    }
    bonds.sort_unstable();
    bonds.dedup();
    structure.bonds = bonds;
    structure.bond_source = BondSource::File;
    if long_names > 0 {
        warnings.push(format!("{long_names} atom names longer than 8 characters truncated"));
    }
    warnings.extend(super::fields::unknown_elements_warning(&structure, "a name"));
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

    const ETHANOL: &str = "     3 water  MM2 parameters\n     1  O      0.000000    0.000000    0.117000     6     2     3\n     2  H      0.000000    0.757000   -0.468000    21     1\n     3  H      0.000000   -0.757000   -0.468000    21     1\n";

    #[test]
    fn atoms_types_bonds_and_title() {
        let p = read(Path::new("w.txyz"), ETHANOL.as_bytes()).unwrap();
        assert_eq!(p.structure.title, "water  MM2 parameters");
        assert_eq!(p.structure.elements, vec![Element::O, Element::H, Element::H]);
        assert_eq!(p.structure.types[1].as_str(), "21");
        assert_eq!(p.structure.bonds, vec![[0, 1], [0, 2]]);
        assert_eq!(p.frames.len(), 1);
        assert_eq!(p.frames[0].positions_angstrom[1], [0.0, 0.757, -0.468]);
        assert!(p.frames[0].cell.is_none());
        assert!(looks_like(ETHANOL.as_bytes()));
        assert!(!looks_like(b"3\nwater\nO 0 0 0\nH 0 0 1\nH 0 1 0\n"));
        assert!(!looks_like(b"3\n\n8 0 0 0\n1 0 0 1\n1 0 1 0\n"));
    }

    #[test]
    fn archive_with_boxes_and_truncation() {
        let frame = |z: f32| {
            format!("2 two\n 20.0 21.0 22.0 90.0 90.0 120.0\n 1 CH3 0.0 0.0 {z} 83 2\n 2 CH3 1.5 0.0 {z} 83 1\n")
        };
        let text = format!(
            "{}{}{}",
            frame(0.0),
            frame(1.0),
            "2 two\n 20 21 22 90 90 120\n 1 CH3 0.0"
        );
        let p = read(Path::new("a.arc"), text.as_bytes()).unwrap();
        assert_eq!(p.frames.len(), 2);
        assert_eq!(p.frames[1].positions_angstrom[0], [0.0, 0.0, 1.0]);
        let cell = p.frames[1].cell.unwrap();
        let v = 20.0 * 21.0 * 22.0 * (120f64.to_radians()).sin();
        assert!((cell.volume_angstrom3() - v).abs() < 1e-6);
        assert_eq!(p.structure.elements, vec![Element::C; 2]);
        assert_eq!(p.structure.bonds, vec![[0, 1]]);
        assert!(
            p.warnings.iter().any(|w| w.contains("2 complete frames")),
            "{:?}",
            p.warnings
        );
        assert!(looks_like(text.as_bytes()));
    }

    #[test]
    fn ion_and_protein_names() {
        assert_eq!(element_of_name(b"CA"), Element::C);
        assert_eq!(element_of_name(b"HG1"), Element::H);
        assert_eq!(element_of_name(b"Cl-"), Element::from_symbol("Cl").unwrap());
        assert_eq!(element_of_name(b"NA+"), Element::from_symbol("Na").unwrap());
        assert_eq!(element_of_name(b"Zn"), Element::from_symbol("Zn").unwrap());
        assert_eq!(element_of_name(b"K+"), Element::from_symbol("K").unwrap());
        assert_eq!(element_of_name(b"123"), Element::UNKNOWN);
    }

    #[test]
    fn bad_lines_name_their_line() {
        let e = read(Path::new("w.txyz"), b"2 x\n 1 O 0 0 0 1 2\n 2 H 0 zero 0 1 1\n").unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(3));
        let e = read(Path::new("w.txyz"), b"2 x\n 1 O 0 0 0 1 2\n 2 H 0 0 0 1 one\n").unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(3));
        let e = read(Path::new("w.txyz"), b"2 x\n 1 O 0 0 0 1 2\n 1 H 0 0 0 1 1\n").unwrap_err();
        assert!(e.message.contains("twice"), "{e}");
        let p = read(Path::new("w.txyz"), b"2 x\n 1 O 0 0 0 1 2\n 2 H 0 0 1 1 1 7\n").unwrap();
        assert_eq!(p.structure.bonds, vec![[0, 1]]);
        assert!(p.warnings.iter().any(|w| w.contains("atom 7")), "{:?}", p.warnings);
        assert!(read(Path::new("w.txyz"), b"").is_err());
        assert!(read(Path::new("w.txyz"), b"99999999999 big\n").is_err());
    }
}
