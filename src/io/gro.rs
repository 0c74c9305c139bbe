//! GROMACS GRO reader: single- and multi-frame files, variable precision, 3- or 9-value boxes.
//!
//! Called by `io::load` and the parse benchmarks. Layout per frame: a title (where `t=` and
//! `step=` give time and step), the atom count, one fixed-width line per atom (`%5d%-5s%5s%5d`
//! then x, y, z in nm in fields whose width follows from the distance between their decimal
//! points, then optional velocities), and a box line. Coordinates and box are converted from nm
//! to Angstrom here. Residue numbers, which GROMACS writes modulo 100000, are unwrapped.

use super::ReadError;
use super::fields::{FrameHeader, Lines, cols, float, frame_atoms, int, show, tokens};
use super::load::Parsed;
use crate::model::element::NameGuessCache;
use crate::model::{Element, Frame, Name8, Structure, UnitCell};
use std::path::Path;

/// Angstrom per nanometre.
const ANGSTROM_PER_NM: f64 = 10.0;
/// Shortest possible atom line: 20 columns of labels plus three one-character numbers.
const MIN_ATOM_LINE: usize = 23;

/// Reads a GRO file.
pub fn read(path: &Path, bytes: &[u8]) -> Result<Parsed, ReadError> {
    let mut lines = Lines::new(bytes);
    let mut structure = Structure::default();
    let mut frames: Vec<Frame> = Vec::new();
    let mut warnings = Vec::new();
    let mut guesses = NameGuessCache::default();
    'frames: loop {
        // Title, or the end of the file (blank lines after the last frame are fine).
        let title = loop {
            match lines.next() {
                Some((_, l)) if l.trim_ascii().is_empty() && !frames.is_empty() => continue,
                Some((no, l)) => break Some((no, l)),
                None => break None,
            }
        };
        let Some((title_no, title)) = title else { break };
        let first = frames.is_empty();
        let cut_short =
            |lines: &Lines<'_>| super::cut_short_lines_warning(frames.len() as u64, title_no, lines.number());
        let Some((count_no, count_line)) = lines.next() else {
            if !first {
                warnings.push(cut_short(&lines));
                break;
            }
            return Err(ReadError::line(
                path,
                title_no + 1,
                "expected the atom count after the title, found the end of the file",
            ));
        };
        let count_field = count_line.trim_ascii();
        let Some(n) = int(count_field).filter(|&v| v >= 0).map(|v| v as u64) else {
            return Err(ReadError::line(
                path,
                count_no,
                format!(
                    "expected the atom count (a non-negative integer), found {:?}",
                    show(count_field)
                ),
            ));
        };
        let room = lines.remaining() / MIN_ATOM_LINE;
        let header = FrameHeader {
            start_line: title_no,
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
        if first {
            structure.title = String::from_utf8_lossy(title.trim_ascii()).into_owned();
            structure.reserve(n);
        }
        let mut positions: Vec<[f32; 3]> = Vec::with_capacity(n);
        // A later frame's atom names, checked against the first frame's once the frame is read.
        let mut names: Vec<Name8> = Vec::with_capacity(if first { 0 } else { n });
        let mut width = 0usize;
        let mut resid_offset = 0i64;
        let mut prev_raw: Option<i64> = None;
        let mut long_names = 0usize;
        for k in 0..n {
            let Some((no, line)) = lines.next() else {
                if !first {
                    warnings.push(cut_short(&lines));
                    break 'frames;
                }
                return Err(ReadError::line(
                    path,
                    lines.number() + 1,
                    format!("expected {n} atom lines after line {count_no}, the file ends after {k}"),
                ));
            };
            // A partly written last line of a later frame: the file was cut short there.
            let in_last_line = !first && lines.remaining() == 0;
            if k == 0 {
                if in_last_line && field_width(line).is_none() {
                    warnings.push(cut_short(&lines));
                    break 'frames;
                }
                width = field_width(line).ok_or_else(|| {
                    ReadError::line(
                        path,
                        no,
                        format!(
                            "expected an atom line with x, y, z after column 20 (fixed-width, with decimal points), found {:?}",
                            show(line)
                        ),
                    )
                })?;
            }
            let mut xyz = [0f32; 3];
            for (c, v) in xyz.iter_mut().enumerate() {
                let (a, b) = (20 + c * width, 20 + (c + 1) * width);
                let field = cols(line, a, b);
                *v = match float(field) {
                    Some(x) if b <= line.len() => (x * ANGSTROM_PER_NM) as f32,
                    _ if in_last_line => {
                        warnings.push(cut_short(&lines));
                        break 'frames;
                    }
                    _ => {
                        return Err(ReadError::line(
                            path,
                            no,
                            format!(
                                "expected {} (nm) in columns {}-{}, found {:?}",
                                ["x", "y", "z"][c],
                                a + 1,
                                b,
                                show(field)
                            ),
                        ));
                    }
                };
            }
            positions.push(xyz);
            if !first {
                names.push(Name8::new(cols(line, 10, 15)));
            } else {
                let resid_field = cols(line, 0, 5);
                let Some(raw) = int(resid_field) else {
                    return Err(ReadError::line(
                        path,
                        no,
                        format!(
                            "expected a residue number in columns 1-5, found {:?}",
                            show(resid_field)
                        ),
                    ));
                };
                if let Some(p) = prev_raw
                    && raw < p
                    && p - raw > 90_000
                {
                    resid_offset += 100_000;
                }
                prev_raw = Some(raw);
                let resid = i32::try_from(raw + resid_offset).unwrap_or(i32::MAX);
                let resname_field = cols(line, 5, 10);
                let name_field = cols(line, 10, 15);
                if Name8::would_truncate(name_field) || Name8::would_truncate(resname_field) {
                    long_names += 1;
                }
                let (name, resname) = (Name8::new(name_field), Name8::new(resname_field));
                let element = guesses.guess(name, resname);
                structure.push_atom(element, name, resname, resid, Name8::EMPTY, Name8::EMPTY);
            }
        }
        if long_names > 0 {
            warnings.push(format!("{long_names} names longer than 8 characters truncated"));
        }
        let Some((box_no, box_line)) = lines.next() else {
            if !first {
                warnings.push(cut_short(&lines));
                break;
            }
            return Err(ReadError::line(
                path,
                lines.number() + 1,
                "expected the box line (3 or 9 numbers in nm) after the atoms, found the end of the file",
            ));
        };
        let cell = match parse_box(path, box_no, box_line) {
            Ok(c) => c,
            Err(_) if !first && lines.remaining() == 0 => {
                warnings.push(cut_short(&lines));
                break;
            }
            Err(e) => return Err(e),
        };
        if !first
            && let Some(d) = super::fields::AtomsDiffer::compare(
                &structure.names,
                &names,
                |a| *a,
                |i| structure.names.get(i) != names.get(i),
                |a| a.as_str().to_string(),
            )
        {
            warnings.push(super::fields::frame_atoms_differ(frames.len(), title_no, &d));
            break;
        }
        let (time_ps, step) = time_and_step(title);
        frames.push(Frame {
            positions_angstrom: positions,
            cell,
            time_ps,
            step,
        });
    }
    if frames.is_empty() {
        return Err(ReadError::line(
            path,
            1,
            "expected a GRO title line and atom count, found an empty file",
        ));
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
        frame_energies_hartree: Vec::new(),
    })
}

/// Width of each coordinate field: the distance between the first two decimal points after
/// column 20 (GROMACS writes `%{w}.{w-5}f`).
fn field_width(line: &[u8]) -> Option<usize> {
    let rest = line.get(20..)?;
    let p1 = memchr::memchr(b'.', rest)?;
    let p2 = memchr::memchr(b'.', rest.get(p1 + 1..)?)? + p1 + 1;
    let w = p2 - p1;
    (w >= 2 && rest.len() >= 3 * w).then_some(w)
}

/// The box line: `v1(x) v2(y) v3(z)` and optionally `v1(y) v1(z) v2(x) v2(z) v3(x) v3(y)`, in nm.
/// An all-zero box means "no box".
fn parse_box(path: &Path, no: usize, line: &[u8]) -> Result<Option<UnitCell>, ReadError> {
    let mut v = [0f64; 9];
    let mut n = 0;
    // GROMACS writes each value as `%10.5f`; values of 1000 nm and more fill the field and run
    // together (`40000.0000040000.00000...`). Such a line is split after each fifth decimal.
    let glued = tokens(line)
        .any(|t| float(t).is_none())
        .then(|| glued_values(line))
        .flatten();
    if let Some(values) = glued
        && (values.len() == 3 || values.len() == 9)
    {
        for (slot, x) in v.iter_mut().zip(&values) {
            *slot = *x;
        }
        return finish_box(path, no, v);
    }
    for t in tokens(line) {
        if n == 9 {
            n += 1;
            break;
        }
        v[n] = float(t).ok_or_else(|| {
            ReadError::line(
                path,
                no,
                format!("expected box value {} (a number in nm), found {:?}", n + 1, show(t)),
            )
        })?;
        n += 1;
    }
    if n != 3 && n != 9 {
        return Err(ReadError::line(
            path,
            no,
            format!(
                "expected a box line with 3 or 9 numbers (nm), found {} fields",
                if n > 9 {
                    "more than 9".to_string()
                } else {
                    n.to_string()
                }
            ),
        ));
    }
    finish_box(path, no, v)
}

/// The numbers of a box line whose fields run together: each `[-]digits.ddddd` (five decimals),
/// or `None` when the line is not made of such numbers.
fn glued_values(line: &[u8]) -> Option<Vec<f64>> {
    let mut out = Vec::new();
    for t in tokens(line) {
        let mut rest = t;
        while !rest.is_empty() {
            let dot = memchr::memchr(b'.', rest)?;
            let end = dot + 6;
            let field = rest.get(..end)?;
            let (int_part, decimals) = (&field[..dot], &field[dot + 1..]);
            let digits = int_part.strip_prefix(b"-").unwrap_or(int_part);
            if digits.is_empty() || !digits.iter().chain(decimals).all(u8::is_ascii_digit) {
                return None;
            }
            out.push(float(field)?);
            rest = &rest[end..];
        }
    }
    Some(out)
}

/// The cell of the nine box values (nm); all zero is no box.
fn finish_box(path: &Path, no: usize, v: [f64; 9]) -> Result<Option<UnitCell>, ReadError> {
    if v.iter().all(|&x| x == 0.0) {
        return Ok(None);
    }
    let s = ANGSTROM_PER_NM;
    let m = [
        [v[0] * s, v[3] * s, v[4] * s],
        [v[5] * s, v[1] * s, v[6] * s],
        [v[7] * s, v[8] * s, v[2] * s],
    ];
    let cell = UnitCell::from_vectors(m);
    if !cell.is_valid() {
        return Err(ReadError::line(
            path,
            no,
            "expected box vectors spanning a positive volume, found a degenerate box",
        ));
    }
    Ok(Some(cell))
}

/// `t= 10.000` and `step= 5000` from a GROMACS title.
fn time_and_step(title: &[u8]) -> (Option<f64>, Option<i64>) {
    let after = |key: &[u8]| -> Option<&[u8]> {
        let i = (0..title.len()).find(|&i| {
            title[i..].starts_with(key) && (i == 0 || title.get(i - 1).is_some_and(|c| c.is_ascii_whitespace()))
        })?;
        tokens(&title[i + key.len()..]).next()
    };
    (after(b"t=").and_then(float), after(b"step=").and_then(int))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn two_frames_variable_precision_triclinic() {
        let text = "\
water t= 1.5 step= 30
    3
    1SOL     OW    1   0.12600   1.62400   1.32100
    1SOL    HW1    2   0.19000   1.66100   1.39400
    1SOL    HW2    3   0.17800   1.56800   1.25500
   8.00170   8.00170   5.65806   0.00000   0.00000   0.00000   0.00000   4.00085   4.00085
water t= 2.5
    3
    1SOL     OW    1   1.12600   1.62400   1.32100
    1SOL    HW1    2   1.19000   1.66100   1.39400
    1SOL    HW2    3   1.17800   1.56800   1.25500
   2.0 3.0 4.0
";
        let p = read(Path::new("w.gro"), text.as_bytes()).unwrap();
        assert_eq!(p.frames.len(), 2);
        assert_eq!(p.structure.elements, vec![Element::O, Element::H, Element::H]);
        assert_eq!(p.frames[1].positions_angstrom[0], [11.26, 16.24, 13.21]);
        assert_eq!(p.frames[0].time_ps, Some(1.5));
        assert_eq!(p.frames[0].step, Some(30));
        let c = p.frames[0].cell.unwrap();
        for k in 0..3 {
            assert!((c.lengths_angstrom[k] - 80.017).abs() < 1e-3, "{c:?}");
        }
        assert!(
            (c.angles_degree[0] - 60.0).abs() < 1e-3 && (c.angles_degree[2] - 90.0).abs() < 1e-6,
            "{c:?}"
        );
        assert_eq!(p.frames[1].cell.unwrap().lengths_angstrom, [20.0, 30.0, 40.0]);
    }

    #[test]
    fn time_needs_its_own_word() {
        assert_eq!(time_and_step(b"x step= 30"), (None, Some(30)));
        assert_eq!(time_and_step(b"t= 2"), (Some(2.0), None));
    }

    #[test]
    fn resids_wrap() {
        let mut text = String::from("wrap\n    3\n");
        text.push_str("99999SOL     OW    1   0.126   1.624   1.321\n");
        text.push_str("    0SOL     OW    2   0.126   1.624   1.321\n");
        text.push_str("    1SOL     OW    3   0.126   1.624   1.321\n");
        text.push_str("   1.0   1.0   1.0\n");
        let p = read(Path::new("w.gro"), text.as_bytes()).unwrap();
        assert_eq!(p.structure.resids, vec![99999, 100_000, 100_001]);
    }

    #[test]
    fn huge_count_is_refused_before_allocating() {
        let e = read(
            Path::new("w.gro"),
            b"t\n2147483648\n    1SOL     OW    1   0.126   1.624   1.321\n",
        )
        .unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(2));
        assert!(e.message.contains("2147483648"), "{e}");
    }
}
