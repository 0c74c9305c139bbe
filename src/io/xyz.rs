//! XYZ reader: one or more frames of `count`, `comment`, then `symbol x y z` lines (Angstrom).
//!
//! Called by `io::load` and the parse benchmarks. The first column is an element symbol, an
//! atomic number, or an atom label ("C12", "OW") whose element is guessed from its letters;
//! columns after z (charges, forces, velocities) are ignored. Every frame must have the first
//! frame's atom count.

use super::ReadError;
use super::fields::{Lines, check_frame_atoms, float, int, show, tokens};
use super::load::Parsed;
use crate::model::element::guess_from_name;
use crate::model::{Element, Frame, Name8, Structure};
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
    'frames: loop {
        let header = loop {
            match lines.next() {
                Some((_, l)) if l.trim_ascii().is_empty() => continue,
                other => break other,
            }
        };
        let Some((count_no, count_line)) = header else { break };
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
        if !first && n == structure.len() as u64 && n > room as u64 {
            lines.by_ref().for_each(drop);
            warnings.push(cut_short(&lines));
            break;
        }
        let n = check_frame_atoms(
            path,
            count_no,
            n,
            room,
            (!first).then(|| structure.len()),
            frames.len() + 1,
        )?;
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
        let mut positions: Vec<[f32; 3]> = Vec::with_capacity(n);
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
            let mut t = tokens(line);
            let label = t.next().unwrap_or(b"");
            let mut xyz = [0f32; 3];
            for (c, v) in xyz.iter_mut().enumerate() {
                let field = t.next().unwrap_or(b"");
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
            if first {
                let element = match int(label) {
                    Some(z) => u32::try_from(z)
                        .ok()
                        .and_then(Element::from_number)
                        .unwrap_or(Element::UNKNOWN),
                    None => Element::from_symbol_bytes(label).unwrap_or_else(|| guess_from_name(label, b"")),
                };
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
        frames.push(Frame {
            positions_angstrom: positions,
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
        frames,
        warnings,
    })
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
        let e = read(Path::new("w.xyz"), b"2\n\nO 0 0 0\nH 0 0 1\n1\n\nO 0 0 0\n").unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(5));
        let e = read(Path::new("w.xyz"), b"3\n\nO 0 0 0\nH 0 0 1\n").unwrap_err();
        assert!(e.message.contains("room") || e.message.contains("ends"), "{e}");
        let e = read(Path::new("w.xyz"), b"2147483648\n\nO 0 0 0\n").unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(1));
    }
}
