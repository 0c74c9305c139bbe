//! PSF reader (CHARMM, NAMD and X-PLOR flavours): atoms with segment, residue, name, type, charge
//! and mass, and the bond list. No coordinates: a PSF is a topology for DCD/XTC/PDB frames.
//!
//! Called by `io::load` and the parse benchmarks. Sections are found by their `!NTITLE`,
//! `!NATOM` and `!NBOND` markers; later sections (angles, dihedrals, ...) are not read. Atom lines
//! are split on whitespace, which covers the standard, `EXT`, `CHEQ` and NAMD wide layouts and
//! X-PLOR files (whose types are names rather than numbers); lines with blank fields fall back to
//! the fixed columns of the standard or `EXT` layout. Elements come from the mass (nearest
//! standard atomic weight), then from the atom name.

use super::ReadError;
use super::fields::{Lines, cols, float, int, leading_int, show, tokens};
use super::load::Parsed;
use crate::model::element::guess_from_name;
use crate::model::{BondSource, Element, Name8, Structure};
use std::path::Path;

/// Shortest possible atom line ("1 A 1 R N T 0 1" plus newline).
const MIN_ATOM_LINE: usize = 16;

/// Reads a PSF file.
pub fn read(path: &Path, bytes: &[u8]) -> Result<Parsed, ReadError> {
    let mut lines = Lines::new(bytes);
    let header = loop {
        match lines.next() {
            Some((_, l)) if l.trim_ascii().is_empty() => continue,
            other => break other,
        }
    };
    let Some((header_no, header)) = header else {
        return Err(ReadError::line(
            path,
            1,
            "expected a PSF header line starting with \"PSF\", found an empty file",
        ));
    };
    if !header.trim_ascii_start().starts_with(b"PSF") {
        return Err(ReadError::line(
            path,
            header_no,
            format!(
                "expected a PSF header line starting with \"PSF\", found {:?}",
                show(header)
            ),
        ));
    }
    let ext = tokens(header).any(|t| t == b"EXT");
    let mut warnings = Vec::new();
    let mut structure = Structure::default();

    let (title_no, n_title) = require_section(path, &mut lines, b"!NTITLE", 2)?;
    let mut title = String::new();
    for k in 0..n_title {
        let Some((_, l)) = lines.next() else {
            return Err(ReadError::line(
                path,
                lines.number() + 1,
                format!("expected {n_title} title lines after line {title_no}, the file ends after {k}"),
            ));
        };
        let l = l.trim_ascii();
        let l = l
            .strip_prefix(b"*")
            .or_else(|| l.strip_prefix(b"REMARKS"))
            .unwrap_or(l)
            .trim_ascii();
        if title.is_empty() && !l.is_empty() {
            title = String::from_utf8_lossy(l).into_owned();
        }
    }
    structure.title = title;

    let (atom_no, n_atoms) = require_section(path, &mut lines, b"!NATOM", MIN_ATOM_LINE)?;
    structure.reserve(n_atoms);
    let mut types = Vec::with_capacity(n_atoms);
    let mut charges = Vec::with_capacity(n_atoms);
    let mut masses = Vec::with_capacity(n_atoms);
    let mut long_names = 0usize;
    let mut last_mass = (f64::NAN, None);
    for k in 0..n_atoms {
        let Some((no, line)) = lines.next() else {
            return Err(ReadError::line(
                path,
                lines.number() + 1,
                format!("expected {n_atoms} atom lines after line {atom_no}, the file ends after {k}"),
            ));
        };
        let a = parse_atom(line, ext).ok_or_else(|| {
            ReadError::line(
                path,
                no,
                format!(
                    "expected atom line {} of the {n_atoms} that !NATOM (line {atom_no}) declares: `index segid resid resname name type charge mass`, found {:?}",
                    k + 1,
                    show(line)
                ),
            )
        })?;
        if a.index != k as i64 + 1 {
            warnings.push(format!(
                "line {no}: atom index {} where {} was expected (order of the file kept)",
                a.index,
                k + 1
            ));
        }
        for f in [a.segid, a.resname, a.name, a.atom_type] {
            if Name8::would_truncate(f) {
                long_names += 1;
            }
        }
        // Masses repeat (all waters, all hydrogens): reuse the last look-up.
        let from_mass = if a.mass == last_mass.0 {
            last_mass.1
        } else {
            let e = Element::from_mass(a.mass);
            last_mass = (a.mass, e);
            e
        };
        let element = from_mass.unwrap_or_else(|| guess_from_name(a.name, a.resname));
        let resid = i32::try_from(a.resid).unwrap_or(i32::MAX);
        structure.push_atom(
            element,
            Name8::new(a.name),
            Name8::new(a.resname),
            resid,
            Name8::EMPTY,
            Name8::new(a.segid),
        );
        types.push(Name8::new(a.atom_type));
        charges.push(a.charge as f32);
        masses.push(a.mass as f32);
    }
    structure.types = types;
    structure.charges_e = Some(charges);
    structure.masses_dalton = Some(masses);
    if long_names > 0 {
        warnings.push(format!("{long_names} labels longer than 8 characters truncated"));
    }

    // Bonds: absent section (a file cut after the atoms) means "no bonds known".
    match find_section(path, &mut lines, b"!NBOND", 4)? {
        Some((bond_no, n_bonds)) => {
            let width = if ext { 10 } else { 8 };
            let mut ints: Vec<u32> = Vec::with_capacity(2 * n_bonds);
            while ints.len() < 2 * n_bonds {
                let Some((no, line)) = lines.next() else {
                    return Err(ReadError::line(
                        path,
                        lines.number() + 1,
                        format!(
                            "expected {n_bonds} bonds after line {bond_no}, the file ends after {} of them",
                            ints.len() / 2
                        ),
                    ));
                };
                if line.trim_ascii().is_empty() || line.contains(&b'!') {
                    return Err(ReadError::line(
                        path,
                        no,
                        format!(
                            "expected {n_bonds} bonds after line {bond_no}, found only {}",
                            ints.len() / 2
                        ),
                    ));
                }
                for tok in tokens(line) {
                    // Fixed-width fields that touch ("    1234    5678" at full width) split by width.
                    let w = if tok.len() > width && tok.len().is_multiple_of(width) {
                        width
                    } else {
                        tok.len()
                    };
                    for c in tok.chunks(w.max(1)) {
                        let v = int(c).filter(|&v| v >= 1 && v <= n_atoms as i64).ok_or_else(|| {
                            ReadError::line(
                                path,
                                no,
                                format!(
                                    "expected an atom index in 1..={n_atoms} in the bond list, found {:?}",
                                    show(c)
                                ),
                            )
                        })?;
                        if ints.len() < 2 * n_bonds {
                            ints.push((v - 1) as u32);
                        }
                    }
                }
            }
            let mut bonds: Vec<[u32; 2]> = ints
                .chunks_exact(2)
                .filter(|p| p[0] != p[1])
                .map(|p| [p[0].min(p[1]), p[0].max(p[1])])
                .collect();
            bonds.sort_unstable();
            bonds.dedup();
            if !bonds.is_empty() {
                structure.bonds = bonds;
                structure.bond_source = BondSource::File;
            }
        }
        None => warnings.push("no !NBOND section: bonds will be guessed".to_string()),
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
        frames: Vec::new(),
        warnings,
        frame_energies_hartree: Vec::new(),
    })
}

/// Like [`find_section`], but a missing section is an error.
fn require_section(
    path: &Path,
    lines: &mut Lines<'_>,
    marker: &[u8],
    min_bytes_each: usize,
) -> Result<(usize, usize), ReadError> {
    find_section(path, lines, marker, min_bytes_each)?.ok_or_else(|| {
        ReadError::line(
            path,
            lines.number() + 1,
            format!(
                "expected a {} section, found the end of the file",
                String::from_utf8_lossy(marker)
            ),
        )
    })
}

/// Skips to the line carrying `marker` (`!NATOM`), returning its number and the count in its first
/// field (`None` at the end of the file). The count is checked against the bytes left
/// (`min_bytes_each` per entry).
fn find_section(
    path: &Path,
    lines: &mut Lines<'_>,
    marker: &[u8],
    min_bytes_each: usize,
) -> Result<Option<(usize, usize)>, ReadError> {
    let name = String::from_utf8_lossy(marker).into_owned();
    for (no, line) in lines.by_ref() {
        let Some(at) = line.windows(marker.len()).position(|w| w == marker) else {
            continue;
        };
        let field = tokens(&line[..at]).next().unwrap_or(b"");
        let Some(n) = int(field).filter(|&v| v >= 0) else {
            return Err(ReadError::line(
                path,
                no,
                format!("expected a count before {name}, found {:?}", show(field)),
            ));
        };
        return Ok(Some((
            no,
            checked_count(path, no, &name, n as u64, lines.remaining(), min_bytes_each)?,
        )));
    }
    Ok(None)
}

fn checked_count(
    path: &Path,
    no: usize,
    what: &str,
    n: u64,
    remaining: usize,
    each: usize,
) -> Result<usize, ReadError> {
    let room = (remaining + 1) / each.max(1);
    if n > room as u64 {
        return Err(ReadError::line(
            path,
            no,
            format!("{what} declares {n} entries but the rest of the file has room for at most {room}"),
        ));
    }
    Ok(n as usize)
}

/// One atom line's fields.
struct AtomFields<'a> {
    index: i64,
    segid: &'a [u8],
    resid: i64,
    resname: &'a [u8],
    name: &'a [u8],
    atom_type: &'a [u8],
    charge: f64,
    mass: f64,
}

fn parse_atom(line: &[u8], ext: bool) -> Option<AtomFields<'_>> {
    parse_atom_tokens(line).or_else(|| parse_atom_columns(line, ext))
}

fn parse_atom_tokens(line: &[u8]) -> Option<AtomFields<'_>> {
    let mut t = tokens(line);
    let index = int(t.next()?)?;
    let segid = t.next()?;
    let resid = leading_int(t.next()?)?;
    let resname = t.next()?;
    let name = t.next()?;
    let atom_type = t.next()?;
    let charge = float(t.next()?)?;
    let mass = float(t.next()?)?;
    Some(AtomFields {
        index,
        segid,
        resid,
        resname,
        name,
        atom_type,
        charge,
        mass,
    })
}

/// Fixed columns: `(I8,1X,A4,1X,A4,1X,A4,1X,A4,1X,A4,...)` or, with EXT, `(I10,1X,A8 x4,1X,A6,...)`;
/// charge and mass are the next two whitespace-separated numbers.
fn parse_atom_columns(line: &[u8], ext: bool) -> Option<AtomFields<'_>> {
    let (w_index, w) = if ext { (10, 8) } else { (8, 4) };
    let field = |k: usize| {
        let a = w_index + 1 + k * (w + 1);
        cols(line, a, a + w)
    };
    let type_start = w_index + 1 + 4 * (w + 1);
    let type_end = type_start + if ext { 6 } else { 4 };
    let mut rest = tokens(cols(line, type_end, line.len()));
    let resid_field = field(1);
    Some(AtomFields {
        index: int(cols(line, 0, w_index))?,
        segid: field(0).trim_ascii(),
        resid: if resid_field.trim_ascii().is_empty() {
            0
        } else {
            leading_int(resid_field)?
        },
        resname: field(2).trim_ascii(),
        name: field(3).trim_ascii(),
        atom_type: cols(line, type_start, type_end).trim_ascii(),
        charge: float(rest.next()?)?,
        mass: float(rest.next()?)?,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const SMALL: &str = "PSF EXT CMAP CHEQ XPLOR

         2 !NTITLE
* tiny
* test

         3 !NATOM
         1 WAT      1        TIP3     OH2      OT       -0.834000       15.9994           0   0.00000     -0.301140E-02
         2 WAT      1        TIP3     H1       HT        0.417000        1.00800           0   0.00000     -0.301140E-02
         3 WAT      1        TIP3     H2       HT        0.417000        1.00800           0   0.00000     -0.301140E-02

         2 !NBOND: bonds
         1         2         1         3

         1 !NTHETA: angles
         2         1         3
";

    #[test]
    fn ext_xplor_atoms_and_bonds() {
        let p = read(Path::new("w.psf"), SMALL.as_bytes()).unwrap();
        let s = &p.structure;
        assert_eq!(s.len(), 3);
        assert_eq!(s.title, "tiny");
        assert_eq!(s.elements, vec![Element::O, Element::H, Element::H]);
        assert_eq!(s.types[0].as_str(), "OT");
        assert_eq!(s.segids[0].as_str(), "WAT");
        assert_eq!(s.bonds, vec![[0, 1], [0, 2]]);
        assert!((s.total_charge_e().unwrap()).abs() < 1e-6);
    }

    #[test]
    fn blank_segid_uses_fixed_columns() {
        let atom = format!(
            "{:>8} {:<4} {:<4} {:<4} {:<4} {:<4} {:>14}{:>14}{:>8}",
            1, "", 1, "MET", "N", "NH3", "-0.300000", "14.0070", 0
        );
        let text = format!("PSF\n\n       1 !NTITLE\n* t\n\n       1 !NATOM\n{atom}\n\n       0 !NBOND\n");
        let p = read(Path::new("b.psf"), text.as_bytes()).unwrap();
        let s = &p.structure;
        assert_eq!(s.segids[0], Name8::EMPTY);
        assert_eq!(s.resids[0], 1);
        assert_eq!(s.resnames[0].as_str(), "MET");
        assert_eq!(s.names[0].as_str(), "N");
        assert_eq!(s.types[0].as_str(), "NH3");
        assert_eq!(s.elements[0], Element::N);
    }

    #[test]
    fn bad_inputs_are_located() {
        let e = read(Path::new("b.psf"), b"PSF\n 1 !NTITLE\n*\n 2147483648 !NATOM\n").unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(4));
        let e = read(Path::new("b.psf"), b"PDB\n").unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(1));
        let bad_bond = SMALL.replace(
            "         1         2         1         3",
            "         1         9         1         3",
        );
        let e = read(Path::new("b.psf"), bad_bond.as_bytes()).unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(13), "{e}");
    }
}
