//! CHARMM coordinate (CRD) reader: title lines starting with `*`, the atom count, then one line per
//! atom in fixed columns, in the normal layout (`2I5,1X,A4,1X,A4,3F10.5,1X,A4,1X,A4,F10.5`) or the
//! extended one (count line `N  EXT`, `2I10,2X,A8,2X,A8,3F20.10,2X,A8,2X,A8,F20.10`).
//!
//! Called by `io::load` for `.crd`/`.cor` files whose content starts with a `*` title (AMBER ASCII
//! trajectories share the `.crd` name; [`super::sniff`] tells them apart by content) and by the
//! fuzz target. Residue numbers come from the residue-id column (CHARMM's `RESID`, what the user
//! selects by), falling back to the sequential residue number when that column is not a number;
//! the segment id goes to `segid`. Lines that do not fit the columns (hand-edited files) are read
//! by whitespace when they hold the same fields in order.

use super::ReadError;
use super::fields::{Lines, cols, float, int, leading_int, show, tokens};
use super::load::Parsed;
use crate::model::element::NameGuessCache;
use crate::model::{Frame, Name8, Structure};
use std::path::Path;

/// Shortest atom line the atom count is checked against (a whitespace-separated line).
const MIN_ATOM_LINE: usize = 16;

/// True when the content starts like a CHARMM CRD file: `*` title lines, then the atom count
/// (a program's banner of asterisks, such as CP2K's, is not one).
pub fn looks_like(head: &[u8]) -> bool {
    let mut lines = head
        .split(|&b| b == b'\n')
        .map(|l| l.trim_ascii())
        .filter(|l| !l.is_empty());
    if !lines.next().is_some_and(|l| l.starts_with(b"*")) {
        return false;
    }
    match lines.find(|l| !l.starts_with(b"*")) {
        // The title runs past the head: nothing says otherwise.
        None => true,
        Some(count) => count
            .split(|b| b.is_ascii_whitespace())
            .next()
            .is_some_and(|w| !w.is_empty() && w.iter().all(u8::is_ascii_digit)),
    }
}

/// Column ranges (0-based, end exclusive) of one layout.
struct Layout {
    resno: (usize, usize),
    resname: (usize, usize),
    name: (usize, usize),
    xyz: [(usize, usize); 3],
    segid: (usize, usize),
    resid: (usize, usize),
}

const NORMAL: Layout = Layout {
    resno: (5, 10),
    resname: (11, 15),
    name: (16, 20),
    xyz: [(20, 30), (30, 40), (40, 50)],
    segid: (51, 55),
    resid: (56, 60),
};

const EXTENDED: Layout = Layout {
    resno: (10, 20),
    resname: (22, 30),
    name: (32, 40),
    xyz: [(40, 60), (60, 80), (80, 100)],
    segid: (102, 110),
    resid: (112, 120),
};

/// One atom line's fields.
struct AtomLine<'a> {
    resno: &'a [u8],
    resname: &'a [u8],
    name: &'a [u8],
    xyz: [f64; 3],
    segid: &'a [u8],
    resid: &'a [u8],
}

fn fixed<'a>(line: &'a [u8], l: &Layout) -> Option<AtomLine<'a>> {
    let mut xyz = [0.0; 3];
    for (v, &(a, b)) in xyz.iter_mut().zip(&l.xyz) {
        *v = float(cols(line, a, b))?;
    }
    Some(AtomLine {
        resno: cols(line, l.resno.0, l.resno.1).trim_ascii(),
        resname: cols(line, l.resname.0, l.resname.1).trim_ascii(),
        name: cols(line, l.name.0, l.name.1).trim_ascii(),
        xyz,
        segid: cols(line, l.segid.0, l.segid.1).trim_ascii(),
        resid: cols(line, l.resid.0, l.resid.1).trim_ascii(),
    })
}

/// `serial resno resname name x y z [segid [resid [weight]]]` separated by blanks.
fn by_whitespace(line: &[u8]) -> Option<AtomLine<'_>> {
    let t: Vec<&[u8]> = tokens(line).collect();
    if t.len() < 7 {
        return None;
    }
    int(t[0])?;
    let mut xyz = [0.0; 3];
    for (k, v) in xyz.iter_mut().enumerate() {
        *v = float(t[4 + k])?;
    }
    Some(AtomLine {
        resno: t[1],
        resname: t[2],
        name: t[3],
        xyz,
        segid: t.get(7).copied().unwrap_or(b""),
        resid: t.get(8).copied().unwrap_or(b""),
    })
}

/// Reads a CHARMM CRD file (one frame).
pub fn read(path: &Path, bytes: &[u8]) -> Result<Parsed, ReadError> {
    let mut lines = Lines::new(bytes);
    let mut title = Vec::new();
    let (count_no, count_line) = loop {
        match lines.next() {
            Some((_, l)) if l.trim_ascii_start().starts_with(b"*") => {
                let text = l.trim_ascii_start().get(1..).unwrap_or(b"").trim_ascii();
                if !text.is_empty() && title.len() < 4 {
                    title.push(String::from_utf8_lossy(text).into_owned());
                }
            }
            Some((_, l)) if l.trim_ascii().is_empty() => {}
            Some((no, l)) => break (no, l),
            None => {
                return Err(ReadError::line(
                    path,
                    lines.number() + 1,
                    "expected the atom count after the `*` title lines, found the end of the file",
                ));
            }
        }
    };
    let mut count_fields = tokens(count_line);
    let count_field = count_fields.next().unwrap_or(b"");
    let Some(n) = int(count_field).filter(|&n| n >= 0) else {
        return Err(ReadError::line(
            path,
            count_no,
            format!(
                "expected the atom count (a non-negative integer), found {:?}",
                show(count_line)
            ),
        ));
    };
    let extended = count_fields.next().is_some_and(|f| f.eq_ignore_ascii_case(b"EXT"));
    let room = lines.remaining() / MIN_ATOM_LINE + 1;
    if n as u64 > room as u64 {
        return Err(ReadError::line(
            path,
            count_no,
            format!("the header declares {n} atoms but the rest of the file has room for at most {room} atom lines"),
        ));
    }
    let n = n as usize;
    let layout = if extended { &EXTENDED } else { &NORMAL };
    let mut structure = Structure {
        title: title.join(" "),
        ..Structure::default()
    };
    structure.reserve(n);
    let mut positions = Vec::with_capacity(n);
    let mut guesses = NameGuessCache::default();
    let mut long_names = 0usize;
    for k in 0..n {
        let Some((no, line)) = lines.next() else {
            return Err(ReadError::line(
                path,
                lines.number() + 1,
                format!("expected {n} atom lines, the file ends after {k}"),
            ));
        };
        let Some(a) = fixed(line, layout).or_else(|| by_whitespace(line)) else {
            return Err(ReadError::line(
                path,
                no,
                format!(
                    "expected a CHARMM {} atom line (serial, residue number, residue name, atom name, x, y, z, segment, residue id), found {:?}",
                    if extended { "extended" } else { "normal" },
                    show(line)
                ),
            ));
        };
        let resid = leading_int(a.resid)
            .or_else(|| int(a.resno))
            .and_then(|r| i32::try_from(r).ok())
            .unwrap_or(0);
        for f in [a.name, a.resname, a.segid] {
            if Name8::would_truncate(f) {
                long_names += 1;
            }
        }
        let name = Name8::new(a.name);
        let resname = Name8::new(a.resname);
        let element = guesses.guess(name, resname);
        structure.push_atom(element, name, resname, resid, Name8::EMPTY, Name8::new(a.segid));
        positions.push(a.xyz.map(|v| v as f32));
    }
    let mut warnings = Vec::new();
    if long_names > 0 {
        warnings.push(format!("{long_names} names longer than 8 characters truncated"));
    }
    Ok(Parsed {
        structure,
        frames: vec![Frame {
            positions_angstrom: positions,
            ..Frame::default()
        }],
        warnings,
        frame_energies_hartree: Vec::new(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const NORMAL_FILE: &str = "* TITLE\n*\n    2\n    1    1 MET  N    -11.92100  26.30700  10.41000 4AKE 1      0.00000\n    2    1 MET  HT1  -11.44700  26.74100   9.59500 4AKE 1      0.00000\n";

    #[test]
    fn a_banner_of_asterisks_is_not_a_title() {
        assert!(looks_like(NORMAL_FILE.as_bytes()));
        assert!(looks_like(b"* EXT\n*\n         1  EXT\n"));
        let cp2k = b"\n  **** **** ******  **  PROGRAM STARTED AT   2013-02-20\n ***** ** ***  *** **   PROGRAM STARTED ON\n                                           on/fischer/atoms\n";
        assert!(!looks_like(cp2k));
    }

    #[test]
    fn normal_and_extended() {
        let p = read(Path::new("a.crd"), NORMAL_FILE.as_bytes()).unwrap();
        assert_eq!(p.structure.len(), 2);
        assert_eq!(p.structure.names[1].as_str(), "HT1");
        assert_eq!(p.structure.segids[0].as_str(), "4AKE");
        assert_eq!(p.frames[0].positions_angstrom[0], [-11.921, 26.307, 10.41]);
        let ext = "* EXT\n*\n         1  EXT\n         1         7  LYS       HZ3            -1.2345678901        2.0000000000        3.5000000000  PROA      12              0.0000000000\n";
        let p = read(Path::new("b.crd"), ext.as_bytes()).unwrap();
        assert_eq!(p.structure.resids[0], 12);
        assert_eq!(p.structure.resnames[0].as_str(), "LYS");
        assert_eq!(p.structure.segids[0].as_str(), "PROA");
        assert_eq!(p.frames[0].positions_angstrom[0], [-1.2345679, 2.0, 3.5]);
    }

    #[test]
    fn damaged_files_are_errors() {
        for cut in [0, 3, 10, 40, NORMAL_FILE.len() - 30] {
            assert!(
                read(Path::new("a.crd"), &NORMAL_FILE.as_bytes()[..cut]).is_err(),
                "cut {cut}"
            );
        }
        assert!(read(Path::new("a.crd"), b"* t\n 99999999999\n").is_err());
        assert!(looks_like(b"\n* title\n 3\n"));
        assert!(!looks_like(b"title\n   1.000   2.000\n"));
    }
}
