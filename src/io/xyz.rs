//! XYZ reader: one or more frames of `count`, `comment`, then `symbol x y z` lines (Angstrom).
//!
//! Called by `io::load` and the parse benchmarks. The first column is an element symbol, an
//! atomic number, or an atom label ("C12", "OW") whose element is guessed from its letters;
//! columns after z (charges, forces, velocities) are ignored. Every frame must have the first
//! frame's atoms: a later frame of another count, or of other elements or another order at the same
//! count, ends the frames with a warning naming it (and the first atom that differs).
//!
//! Extended XYZ (ASE, QUIP, GPUMD): the comment line's `Lattice="ax ay az bx by bz cx cy cz"` gives
//! the frame's box, and `Properties=name:type:count:...` says which columns hold the species
//! (`species:S:1`, or atomic numbers `Z:I:1`) and the positions (`pos:R:3`), in any order among
//! other columns.
//!
//! A trajectory of several frames whose comment lines carry energies gives them per frame
//! (`Parsed::frame_energies_hartree`): ORCA's `_trj.xyz` (`E -76.3268`), xtb's `xtbopt.log`
//! (`energy: -5.0705`), CREST's ensembles (the energy alone) in hartree, extended XYZ's `energy=`
//! in eV (ASE's unit).

use super::ReadError;
use super::fields::{FrameHeader, Lines, float, frame_atoms, int, next_nonblank, show, tokens};
use super::load::Parsed;
use crate::model::element::guess_from_name;
use crate::model::{Element, Frame, Name8, Structure, UnitCell};
use std::path::Path;

/// Bytes of the shortest atom line, `H 0 0 0` plus its newline.
const MIN_ATOM_LINE: usize = 8;

/// Reads a XYZ file.
pub fn read(path: &Path, bytes: &[u8]) -> Result<Parsed, ReadError> {
    let mut lines = Lines::new(bytes);
    let mut structure = Structure::default();
    let mut frames: Vec<Frame> = Vec::new();
    let mut warnings = Vec::new();
    let mut long_names = 0usize;
    // Each frame's comment line, for the energies an optimisation's trajectory writes there.
    let mut comments: Vec<&[u8]> = Vec::new();
    'frames: while let Some((count_no, count_line)) = next_nonblank(&mut lines) {
        let first = frames.is_empty();
        let cut_short =
            |lines: &Lines<'_>| super::cut_short_lines_warning(frames.len() as u64, count_no, lines.number());
        let count_field = tokens(count_line).next().unwrap_or(b"");
        let Some(n) = int(count_field).filter(|&v| v >= 0).map(|v| v as u64) else {
            return Err(ReadError::line(
                path,
                count_no,
                format!(
                    "expected the atom count of frame {} (a non-negative integer), found {:?}",
                    frames.len() + 1,
                    show(count_line)
                ),
            ));
        };
        let room = (lines.remaining() + 1) / MIN_ATOM_LINE;
        let header = FrameHeader {
            start_line: count_no,
            count_line: count_no,
            atoms: n,
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
        let Some((_, comment)) = lines.next() else {
            if !first {
                warnings.push(cut_short(&lines));
                break;
            }
            return Err(ReadError::line(
                path,
                count_no + 1,
                "expected a comment line after the atom count, found the end of the file",
            ));
        };
        if first {
            structure.title = String::from_utf8_lossy(comment.trim_ascii()).into_owned();
            structure.reserve(n);
        }
        let ext = extended_header(comment).map_err(|m| ReadError::line(path, count_no + 1, m))?;
        let mut cols: Vec<&[u8]> = Vec::new();
        let mut positions: Vec<[f32; 3]> = Vec::with_capacity(n);
        // A later frame's elements, checked against the first frame's once the frame is read.
        let mut elements: Vec<Element> = Vec::with_capacity(if first { 0 } else { n });
        for k in 0..n {
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
            cols.clear();
            cols.extend(tokens(line).take(ext.columns));
            let label = cols.get(ext.species).copied().unwrap_or(b"");
            let mut xyz = [0f32; 3];
            for (c, v) in xyz.iter_mut().enumerate() {
                let field = cols.get(ext.pos + c).copied().unwrap_or(b"");
                *v = match float(field) {
                    Some(x) => x as f32,
                    // A partly written last line of a later frame: the file was cut short there.
                    None if !first && lines.remaining() == 0 => {
                        warnings.push(cut_short(&lines));
                        break 'frames;
                    }
                    None => {
                        return Err(ReadError::line(
                            path,
                            no,
                            format!(
                                "expected `symbol x y z`, found {:?} where {} should be",
                                show(line),
                                ["x", "y", "z"][c]
                            ),
                        ));
                    }
                };
            }
            positions.push(xyz);
            if !first {
                // The first frame's label gives the first frame's element; another is looked at.
                let same_label = structure.names.get(k).is_some_and(|&name| name == Name8::new(label));
                let element = match structure.elements.get(k) {
                    Some(&e) if same_label => e,
                    _ => label_element(label),
                };
                elements.push(element);
            } else {
                let element = label_element(label);
                let name = if int(label).is_some() {
                    Name8::from(element.symbol())
                } else {
                    Name8::new(label)
                };
                if Name8::would_truncate(label) {
                    long_names += 1;
                }
                structure.push_atom(element, name, Name8::EMPTY, 1, Name8::EMPTY, Name8::EMPTY);
            }
        }
        if !first {
            let known = &structure.elements;
            if let Some(d) = super::fields::AtomsDiffer::compare(
                known,
                &elements,
                |e| *e,
                |i| known.get(i) != elements.get(i),
                |e| e.symbol().to_string(),
            ) {
                warnings.push(super::fields::frame_atoms_differ(frames.len(), count_no, &d));
                break;
            }
        }
        frames.push(Frame {
            positions_angstrom: positions,
            cell: ext.cell,
            ..Frame::default()
        });
        comments.push(comment);
    }
    if frames.is_empty() {
        return Err(ReadError::line(
            path,
            1,
            "expected an atom count on the first line, found an empty file",
        ));
    }
    if long_names > 0 {
        warnings.push(format!("{long_names} atom labels longer than 8 characters truncated"));
    }
    let unknown = structure.elements.iter().filter(|e| **e == Element::UNKNOWN).count();
    if unknown > 0 {
        warnings.push(format!(
            "{unknown} of {} atoms have an unknown element",
            structure.len()
        ));
    }
    Ok(Parsed {
        structure,
        frame_energies_hartree: comment_energies(&comments[..frames.len().min(comments.len())]),
        frames,
        warnings,
    })
}

/// The element a first-column label names: an atomic number, an element symbol, or an atom label
/// ("C12", "OW") whose element is guessed from its letters.
fn label_element(label: &[u8]) -> Element {
    match int(label) {
        Some(z) => u32::try_from(z)
            .ok()
            .and_then(Element::from_number)
            .unwrap_or(Element::UNKNOWN),
        None => Element::from_element_symbol(label).unwrap_or_else(|| guess_from_name(label, b"")),
    }
}

/// The energy (hartree) a comment line gives: ORCA's trajectories (`... E -76.3268`), xtb's
/// (`energy: -5.0705 gnorm: ...`), extended XYZ's `energy=` key (ASE's eV, converted).
fn comment_energy(comment: &[u8]) -> Option<f64> {
    let words: Vec<&[u8]> = tokens(comment).collect();
    for pair in words.windows(2) {
        if let [key, value] = pair
            && (*key == b"E" || key.eq_ignore_ascii_case(b"energy:"))
            && let Some(e) = float(value)
        {
            return Some(e);
        }
    }
    key_values(comment)
        .into_iter()
        .find(|(k, _)| k.eq_ignore_ascii_case(b"energy"))
        .and_then(|(_, v)| float(v))
        .map(|ev| ev / crate::model::units::EV_PER_HARTREE)
}

/// Each frame's energy in hartree from its comment line (NaN where it gives none); a file whose
/// every comment is one negative decimal number (CREST's conformer ensembles) gives those. Empty
/// when no frame gives one, or for a single frame.
fn comment_energies(comments: &[&[u8]]) -> Vec<f64> {
    if comments.len() < 2 {
        return Vec::new();
    }
    let mut energies: Vec<f64> = comments.iter().map(|c| comment_energy(c).unwrap_or(f64::NAN)).collect();
    if energies.iter().all(|e| e.is_nan()) {
        let bare: Option<Vec<f64>> = comments
            .iter()
            .map(|c| {
                let mut t = tokens(c);
                let (Some(word), None) = (t.next(), t.next()) else {
                    return None;
                };
                float(word).filter(|e| *e < 0.0 && word.contains(&b'.'))
            })
            .collect();
        energies = bare.unwrap_or_default();
    }
    if energies.iter().all(|e| e.is_nan()) {
        return Vec::new();
    }
    energies
}

/// What an extended-XYZ comment line says: the box, and the columns of species and positions
/// (plain XYZ: no box, species in column 0, positions in 1..4).
struct Extended {
    cell: Option<UnitCell>,
    species: usize,
    pos: usize,
    /// Columns needed per atom line.
    columns: usize,
}

/// `key=value` pairs of a comment line; values may be double-quoted.
fn key_values(comment: &[u8]) -> Vec<(&[u8], &[u8])> {
    let mut out = Vec::new();
    let mut i = 0;
    let b = comment;
    while i < b.len() {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        let k0 = i;
        while i < b.len() && b[i] != b'=' && !b[i].is_ascii_whitespace() {
            i += 1;
        }
        let key = &b[k0..i];
        if i >= b.len() || b[i] != b'=' {
            continue;
        }
        i += 1;
        let value = if b.get(i) == Some(&b'"') {
            let v0 = i + 1;
            let end = b[v0..].iter().position(|&c| c == b'"').map_or(b.len(), |p| v0 + p);
            i = (end + 1).min(b.len());
            &b[v0..end]
        } else {
            let v0 = i;
            while i < b.len() && !b[i].is_ascii_whitespace() {
                i += 1;
            }
            &b[v0..i]
        };
        if !key.is_empty() {
            out.push((key, value));
        }
    }
    out
}

fn extended_header(comment: &[u8]) -> Result<Extended, String> {
    let mut ext = Extended {
        cell: None,
        species: 0,
        pos: 1,
        columns: 4,
    };
    for (key, value) in key_values(comment) {
        if key.eq_ignore_ascii_case(b"Lattice") {
            let v: Vec<f64> = tokens(value).filter_map(float).collect();
            if v.len() != 9 || tokens(value).count() != 9 {
                return Err(format!(
                    "expected Lattice=\"ax ay az bx by bz cx cy cz\" (nine numbers), found {:?}",
                    show(value)
                ));
            }
            let cell = UnitCell::from_vectors([[v[0], v[1], v[2]], [v[3], v[4], v[5]], [v[6], v[7], v[8]]]);
            ext.cell = cell.is_valid().then_some(cell);
        } else if key.eq_ignore_ascii_case(b"Properties") {
            let parts: Vec<&[u8]> = value.split(|&c| c == b':').collect();
            if !parts.len().is_multiple_of(3) || parts.is_empty() {
                return Err(format!(
                    "expected Properties=name:type:count:..., found {:?}",
                    show(value)
                ));
            }
            let (mut species, mut number, mut pos) = (None, None, None);
            let mut col = 0usize;
            for p in parts.chunks_exact(3) {
                let count = int(p[2])
                    .filter(|&c| (1..=1000).contains(&c))
                    .ok_or_else(|| format!("expected a column count in Properties, found {:?}", show(p[2])))?
                    as usize;
                if p[0].eq_ignore_ascii_case(b"species") {
                    species = Some(col);
                } else if p[0] == b"Z" {
                    number = Some(col);
                } else if p[0].eq_ignore_ascii_case(b"pos") && count == 3 {
                    pos = Some(col);
                }
                col += count;
            }
            let (Some(s), Some(p)) = (species.or(number), pos) else {
                return Err(format!(
                    "Properties names no species (species:S:1 or Z:I:1) or positions (pos:R:3): {:?}",
                    show(value)
                ));
            };
            ext.species = s;
            ext.pos = p;
            ext.columns = col;
        }
    }
    Ok(ext)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn symbols_numbers_and_labels() {
        let text = "3\nwater\nO 0 0 0.1\n1 0.757 0.586 0\nH2 -0.757 0.586 0 0.1\n3\n\nO 1 0 0\nH 1 0 0\nH 1 0 0\n\n";
        let p = read(Path::new("w.xyz"), text.as_bytes()).unwrap();
        assert_eq!(p.frames.len(), 2);
        assert_eq!(p.structure.elements, vec![Element::O, Element::H, Element::H]);
        assert_eq!(p.structure.names[1].as_str(), "H");
        assert_eq!(p.structure.names[2].as_str(), "H2");
        assert_eq!(p.frames[0].positions_angstrom[2], [-0.757, 0.586, 0.0]);
    }

    #[test]
    fn mismatched_frames_and_truncation() {
        // A second frame of another atom count: the first is kept, the warning names line 5.
        let p = read(Path::new("w.xyz"), b"2\n\nO 0 0 0\nH 0 0 1\n1\n\nO 0 0 0\n").unwrap();
        assert_eq!(p.frames.len(), 1);
        assert!(
            p.warnings.iter().any(|w| w.contains("frame 2 (line 5) has 1 atoms")),
            "{:?}",
            p.warnings
        );
        let e = read(Path::new("w.xyz"), b"3\n\nO 0 0 0\nH 0 0 1\n").unwrap_err();
        assert!(e.message.contains("room") || e.message.contains("ends"), "{e}");
        let e = read(Path::new("w.xyz"), b"2147483648\n\nO 0 0 0\n").unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(1));
    }

    #[test]
    fn extended_lattice_and_properties() {
        let text = "2\nLattice=\"4.0 0.0 0.0 0.0 5.0 0.0 0.0 0.0 6.0\" Properties=id:I:1:pos:R:3:species:S:1:forces:R:3 energy=-1.5 pbc=\"T T T\"\n1 0.1 0.2 0.3 O 0 0 0\n2 1.1 1.2 1.3 H 0 0 0\n";
        let p = read(Path::new("e.xyz"), text.as_bytes()).unwrap();
        assert_eq!(p.structure.elements, vec![Element::O, Element::H]);
        assert_eq!(p.frames[0].positions_angstrom[1], [1.1, 1.2, 1.3]);
        let cell = p.frames[0].cell.unwrap();
        assert!((cell.volume_angstrom3() - 120.0).abs() < 1e-9);
        let bad = "1\nLattice=\"1 2 3\"\nO 0 0 0\n";
        assert!(read(Path::new("e.xyz"), bad.as_bytes()).is_err());
        let no_pos = "1\nProperties=species:S:1:vel:R:3\nO 0 0 0\n";
        assert!(read(Path::new("e.xyz"), no_pos.as_bytes()).is_err());
    }
}
