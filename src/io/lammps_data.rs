//! LAMMPS data files: atoms (styles full, charge, molecular/bond/angle and atomic), masses,
//! charges, bonds, and the box with its triclinic tilt; one frame of coordinates.
//!
//! Owns the LAMMPS data format and the box and element conventions the dump reader
//! (`io::lammps_dump`) shares. Called by `io::load`, the fuzz target and the tests.
//!
//! Layout: a title line, header lines (`12421 atoms`, `32 atom types`, `-25.7 25.7 xlo xhi`,
//! `xy xz yz`, ...), then sections, each a title line (`Atoms # full`), a blank line and one line
//! per item. The atom style comes from the comment after `Atoms`; without one it is inferred from
//! the column count (5 atomic, 6 charge or molecular, 7 full; 3 more with image flags), and a
//! 6-column file whose columns fit both charge and molecular is read as molecular with a warning.
//! Atoms are sorted by id (as MDAnalysis does), bond atom ids are mapped to those indices, and a
//! type label section (`Atom Type Labels`) names the types. Atom names are the type labels (or
//! numbers); residue numbers are the molecule ids. Elements come from the type's mass (the nearest
//! standard atomic weight within 0.1 Da), else from the type label, else stay unknown. Coordinates
//! are kept as written, image flags included (like MDAnalysis); a warning counts the atoms whose
//! image flags are nonzero. Sections this reader does not use (velocities,
//! coefficients, angles, ...) are skipped.

use super::ReadError;
use super::fields::{Lines, float, int, show, tokens};
use super::load::Parsed;
use crate::model::element::guess_from_name;
use crate::model::{BondSource, Element, Frame, Name8, Structure, UnitCell};
use std::path::Path;

/// Largest difference between a type's mass and an element's standard atomic weight for the
/// element to be taken from the mass.
pub const ELEMENT_MASS_TOLERANCE_DALTON: f64 = 0.1;

/// Section titles of the data format.
const SECTIONS: [&str; 30] = [
    "Atoms",
    "Velocities",
    "Masses",
    "Ellipsoids",
    "Lines",
    "Triangles",
    "Bodies",
    "Bonds",
    "Angles",
    "Dihedrals",
    "Impropers",
    "Pair Coeffs",
    "PairIJ Coeffs",
    "Bond Coeffs",
    "Angle Coeffs",
    "Dihedral Coeffs",
    "Improper Coeffs",
    "BondBond Coeffs",
    "BondAngle Coeffs",
    "MiddleBondTorsion Coeffs",
    "EndBondTorsion Coeffs",
    "AngleTorsion Coeffs",
    "AngleAngleTorsion Coeffs",
    "BondBond13 Coeffs",
    "AngleAngle Coeffs",
    "Atom Type Labels",
    "Bond Type Labels",
    "Angle Type Labels",
    "Dihedral Type Labels",
    "Improper Type Labels",
];

/// Atom styles LAMMPS has that this reader does not (named in the refusal).
const OTHER_STYLES: [&str; 20] = [
    "body",
    "bpm/sphere",
    "dielectric",
    "dipole",
    "dpd",
    "edpd",
    "electron",
    "ellipsoid",
    "hybrid",
    "line",
    "mdpd",
    "peri",
    "rheo",
    "sph",
    "sphere",
    "spin",
    "tdpd",
    "template",
    "tri",
    "wavepacket",
];

/// The atom styles read here and their column layouts.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AtomStyle {
    /// `id type x y z`
    Atomic,
    /// `id type q x y z`
    Charge,
    /// `id mol type x y z` (also styles bond and angle)
    Molecular,
    /// `id mol type q x y z`
    Full,
}

impl AtomStyle {
    fn name(self) -> &'static str {
        match self {
            AtomStyle::Atomic => "atomic",
            AtomStyle::Charge => "charge",
            AtomStyle::Molecular => "molecular",
            AtomStyle::Full => "full",
        }
    }

    /// Columns before the optional image flags.
    fn columns(self) -> usize {
        match self {
            AtomStyle::Atomic => 5,
            AtomStyle::Charge | AtomStyle::Molecular => 6,
            AtomStyle::Full => 7,
        }
    }

    /// Column indices of (mol, type, charge, x).
    fn layout(self) -> (Option<usize>, usize, Option<usize>, usize) {
        match self {
            AtomStyle::Atomic => (None, 1, None, 2),
            AtomStyle::Charge => (None, 1, Some(2), 3),
            AtomStyle::Molecular => (Some(1), 2, None, 3),
            AtomStyle::Full => (Some(1), 2, Some(3), 4),
        }
    }

    fn from_comment(word: &str) -> Option<AtomStyle> {
        Some(match word {
            "atomic" => AtomStyle::Atomic,
            "charge" => AtomStyle::Charge,
            "molecular" | "bond" | "angle" => AtomStyle::Molecular,
            "full" => AtomStyle::Full,
            _ => return None,
        })
    }
}

/// The box of a LAMMPS header or dump frame: `lo`, `hi` per axis and the tilt factors
/// `xy xz yz`, as the cell vectors a = (lx, 0, 0), b = (xy, ly, 0), c = (xz, yz, lz).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct LammpsBox {
    pub lo: [f64; 3],
    pub hi: [f64; 3],
    pub tilt: [f64; 3],
}

impl LammpsBox {
    /// The cell vectors as rows.
    pub fn vectors(&self) -> [[f64; 3]; 3] {
        let l: [f64; 3] = std::array::from_fn(|k| self.hi[k] - self.lo[k]);
        let [xy, xz, yz] = self.tilt;
        [[l[0], 0.0, 0.0], [xy, l[1], 0.0], [xz, yz, l[2]]]
    }

    /// The periodic cell starting at `lo`, or `None` when the box is degenerate.
    pub fn cell(&self) -> Option<UnitCell> {
        let c = UnitCell::from_vectors(self.vectors()).with_origin(self.lo);
        c.is_valid().then_some(c)
    }

    /// Moves `p` by `n` box vectors (image flags).
    pub fn unwrap(&self, p: [f64; 3], n: [f64; 3]) -> [f64; 3] {
        let v = self.vectors();
        std::array::from_fn(|k| p[k] + n[0] * v[0][k] + n[1] * v[1][k] + n[2] * v[2][k])
    }
}

/// The element whose standard atomic weight lies within [`ELEMENT_MASS_TOLERANCE_DALTON`] of
/// `mass_dalton`, else the element a type label names, else unknown.
pub fn element_from_mass_or_label(mass_dalton: Option<f64>, label: &str) -> Element {
    if let Some(e) = mass_dalton.and_then(Element::from_mass).filter(|e| {
        mass_dalton.is_some_and(|m| (f64::from(e.mass_dalton()) - m).abs() <= ELEMENT_MASS_TOLERANCE_DALTON)
    }) {
        return e;
    }
    if label.bytes().any(|b| b.is_ascii_alphabetic()) {
        return guess_from_name(label.as_bytes(), b"");
    }
    Element::UNKNOWN
}

/// The part of a line before any `#`, trimmed, and the comment after it.
fn split_comment(line: &[u8]) -> (&[u8], &[u8]) {
    match memchr::memchr(b'#', line) {
        Some(i) => (line[..i].trim_ascii(), line[i + 1..].trim_ascii()),
        None => (line.trim_ascii(), &[]),
    }
}

/// The section a line opens, if it is a section title.
fn section_of(content: &[u8]) -> Option<&'static str> {
    let words: Vec<&[u8]> = tokens(content).collect();
    SECTIONS.iter().copied().find(|s| {
        let mut sw = s.split(' ');
        words.len() == s.split(' ').count() && words.iter().all(|w| sw.next().is_some_and(|x| x.as_bytes() == *w))
    })
}

/// Header counts and box.
#[derive(Default)]
struct Header {
    atoms: Option<u64>,
    bonds: u64,
    atom_types: u64,
    lo: [Option<f64>; 3],
    hi: [Option<f64>; 3],
    tilt: [f64; 3],
    general: [Option<[f64; 3]>; 3],
}

/// A section's title line number, its comment, and its content lines (number, text without comment).
struct Section<'a> {
    title_line: usize,
    comment: &'a [u8],
    lines: Vec<(usize, &'a [u8])>,
}

/// Reads a LAMMPS data file.
pub fn read(path: &Path, bytes: &[u8]) -> Result<Parsed, ReadError> {
    let mut lines = Lines::new(bytes).peekable();
    if lines.next().is_none() {
        return Err(ReadError::line(
            path,
            1,
            "expected a LAMMPS data file title line, found an empty file",
        ));
    }
    // Header lines up to the first section title.
    let mut h = Header::default();
    let mut first_section: Option<(usize, &'static str, &[u8])> = None;
    for (no, line) in lines.by_ref() {
        let (content, comment) = split_comment(line);
        if content.is_empty() {
            continue;
        }
        if let Some(s) = section_of(content) {
            first_section = Some((no, s, comment));
            break;
        }
        parse_header_line(path, no, content, &mut h)?;
    }
    let Some(n_atoms) = h.atoms else {
        return Err(ReadError::line(
            path,
            1,
            "expected a header line \"N atoms\" before the first section, found none",
        ));
    };
    let room = (bytes.len() / 10) as u64;
    for (what, n) in [("atoms", n_atoms), ("bonds", h.bonds), ("atom types", h.atom_types)] {
        if n > room {
            return Err(ReadError::line(
                path,
                1,
                format!("the header declares {n} {what}, more than the file has room for (at most {room} lines)"),
            ));
        }
    }
    let n_atoms = n_atoms as usize;
    let bbox = header_box(path, &h)?;

    // Sections: those read here take exactly their declared number of lines.
    let mut atoms_section: Option<Section<'_>> = None;
    let mut masses: Option<Section<'_>> = None;
    let mut bonds_section: Option<Section<'_>> = None;
    let mut labels: Option<Section<'_>> = None;
    let mut next = first_section;
    while let Some((title_line, name, comment)) = next.take() {
        let wanted = match name {
            "Atoms" => Some(n_atoms),
            "Masses" | "Atom Type Labels" => Some(h.atom_types as usize),
            "Bonds" => Some(h.bonds as usize),
            _ => None,
        };
        let mut body = Vec::with_capacity(wanted.unwrap_or(0));
        for (no, line) in lines.by_ref() {
            let (content, c) = split_comment(line);
            if content.is_empty() {
                continue;
            }
            if wanted.is_some_and(|w| body.len() >= w) || wanted.is_none() {
                if let Some(s) = section_of(content) {
                    next = Some((no, s, c));
                    break;
                }
                if wanted.is_none() {
                    continue;
                }
                return Err(ReadError::line(
                    path,
                    no,
                    format!(
                        "expected a section title after the {} lines of {name} (line {title_line}), found {:?}",
                        body.len(),
                        show(content)
                    ),
                ));
            }
            if section_of(content).is_some() {
                return Err(ReadError::line(
                    path,
                    no,
                    format!(
                        "expected {} lines in the {name} section (line {title_line}), found {} before this section title",
                        wanted.unwrap_or(0),
                        body.len()
                    ),
                ));
            }
            body.push((no, content));
        }
        if let Some(w) = wanted
            && body.len() < w
        {
            return Err(ReadError::line(
                path,
                title_line,
                format!(
                    "expected {w} lines in the {name} section, the file ends after {}",
                    body.len()
                ),
            ));
        }
        let section = Section {
            title_line,
            comment,
            lines: body,
        };
        match name {
            "Atoms" => atoms_section = Some(section),
            "Masses" => masses = Some(section),
            "Bonds" => bonds_section = Some(section),
            "Atom Type Labels" => labels = Some(section),
            _ => {}
        }
    }
    let Some(atoms) = atoms_section else {
        return Err(ReadError::line(
            path,
            lines.peek().map_or(1, |l| l.0),
            format!("expected an Atoms section for the {n_atoms} atoms, found none"),
        ));
    };

    let mut warnings = Vec::new();
    let type_labels = read_type_labels(path, labels.as_ref())?;
    let type_masses = match &masses {
        Some(m) => read_masses(path, m, &type_labels)?,
        None => Vec::new(),
    };
    let style = atom_style(path, &atoms, h.atom_types, &mut warnings)?;
    let (mut structure, frame, ids) = read_atoms(path, &atoms, style, &type_labels, &type_masses, bbox, &mut warnings)?;
    if let Some(b) = &bonds_section {
        structure.bonds = read_bonds(path, b, &ids)?;
        structure.bond_source = BondSource::File;
    } else if h.bonds == 0 && matches!(style, AtomStyle::Molecular | AtomStyle::Full) {
        structure.bond_source = BondSource::File;
    } else if h.bonds > 0 {
        // A header that promises bonds the file does not hold: a file cut short (a write_data
        // that was interrupted) more often than not.
        warnings.push(format!(
            "the header declares {} bonds but the file has no Bonds section (was it cut short?): bonds are guessed from distances instead",
            h.bonds
        ));
    }
    structure
        .check_consistent()
        .map_err(|e| ReadError::file(path, format!("internal inconsistency: {e}")))?;
    Ok(Parsed {
        structure,
        frames: vec![frame],
        warnings,
        frame_energies_hartree: Vec::new(),
    })
}

fn parse_header_line(path: &Path, no: usize, content: &[u8], h: &mut Header) -> Result<(), ReadError> {
    let words: Vec<&[u8]> = tokens(content).collect();
    let number = |k: usize| -> Result<f64, ReadError> {
        words.get(k).and_then(|w| float(w)).ok_or_else(|| {
            ReadError::line(
                path,
                no,
                format!(
                    "expected a number in field {} of the header line, found {:?}",
                    k + 1,
                    show(words.get(k).copied().unwrap_or_default())
                ),
            )
        })
    };
    let count = |what: &str| -> Result<u64, ReadError> {
        match words.first().and_then(|w| int(w)) {
            Some(v) if v >= 0 => Ok(v as u64),
            _ => Err(ReadError::line(
                path,
                no,
                format!("expected a count before \"{what}\", found {:?}", show(content)),
            )),
        }
    };
    let tail: Vec<&str> = words
        .iter()
        .skip_while(|w| float(w).is_some())
        .map(|w| std::str::from_utf8(w).unwrap_or(""))
        .collect();
    match tail.join(" ").as_str() {
        "atoms" => h.atoms = Some(count("atoms")?),
        "bonds" => h.bonds = count("bonds")?,
        "atom types" => h.atom_types = count("atom types")?,
        "xlo xhi" | "ylo yhi" | "zlo zhi" => {
            let k = match tail.first().copied() {
                Some("xlo") => 0,
                Some("ylo") => 1,
                _ => 2,
            };
            h.lo[k] = Some(number(0)?);
            h.hi[k] = Some(number(1)?);
        }
        "xy xz yz" => h.tilt = [number(0)?, number(1)?, number(2)?],
        "avec" | "bvec" | "cvec" => {
            let k = match tail.first().copied() {
                Some("avec") => 0,
                Some("bvec") => 1,
                _ => 2,
            };
            h.general[k] = Some([number(0)?, number(1)?, number(2)?]);
        }
        _ => {}
    }
    Ok(())
}

/// The box from the header: lo/hi with tilt, or the general triclinic vectors.
fn header_box(path: &Path, h: &Header) -> Result<Option<LammpsBox>, ReadError> {
    if let [Some(a), Some(b), Some(c)] = h.general {
        // General triclinic: keep lengths and angles; the box is rebuilt in the restricted form.
        let cell = UnitCell::from_vectors([a, b, c]);
        let m = cell.matrix_angstrom();
        return Ok(Some(LammpsBox {
            lo: [0.0; 3],
            hi: [m[0][0], m[1][1], m[2][2]],
            tilt: [m[1][0], m[2][0], m[2][1]],
        }));
    }
    let given = h.lo.iter().filter(|x| x.is_some()).count();
    if given == 0 {
        return Ok(None);
    }
    if given < 3 {
        return Err(ReadError::line(
            path,
            1,
            "expected all three of \"xlo xhi\", \"ylo yhi\" and \"zlo zhi\" in the header, found only some",
        ));
    }
    Ok(Some(LammpsBox {
        lo: h.lo.map(|x| x.unwrap_or(0.0)),
        hi: h.hi.map(|x| x.unwrap_or(0.0)),
        tilt: h.tilt,
    }))
}

/// Type number (1-based) to label, from the `Atom Type Labels` section.
fn read_type_labels(path: &Path, section: Option<&Section<'_>>) -> Result<Vec<(i64, String)>, ReadError> {
    let mut out = Vec::new();
    if let Some(s) = section {
        for &(no, line) in &s.lines {
            let mut t = tokens(line);
            match (t.next().and_then(int), t.next()) {
                (Some(n), Some(label)) => out.push((n, String::from_utf8_lossy(label).into_owned())),
                _ => {
                    return Err(ReadError::line(
                        path,
                        no,
                        format!("expected \"type label\", found {:?}", show(line)),
                    ));
                }
            }
        }
    }
    out.sort();
    Ok(out)
}

/// The type number of a type field: an integer, or a label from the type label section.
fn type_number(field: &[u8], labels: &[(i64, String)]) -> Option<i64> {
    int(field).or_else(|| {
        let s = std::str::from_utf8(field).ok()?;
        labels.iter().find(|(_, l)| l == s).map(|(n, _)| *n)
    })
}

fn read_masses(path: &Path, s: &Section<'_>, labels: &[(i64, String)]) -> Result<Vec<(i64, f64)>, ReadError> {
    let mut out = Vec::with_capacity(s.lines.len());
    for &(no, line) in &s.lines {
        let mut t = tokens(line);
        let ty = t.next().and_then(|f| type_number(f, labels));
        let mass = t.next().and_then(float);
        match (ty, mass) {
            (Some(ty), Some(m)) => out.push((ty, m)),
            _ => {
                return Err(ReadError::line(
                    path,
                    no,
                    format!("expected \"type mass\" in the Masses section, found {:?}", show(line)),
                ));
            }
        }
    }
    out.sort_by_key(|a| a.0);
    Ok(out)
}

/// The atom style: from the `Atoms # style` comment, else from the column count.
fn atom_style(path: &Path, s: &Section<'_>, n_types: u64, warnings: &mut Vec<String>) -> Result<AtomStyle, ReadError> {
    let word = std::str::from_utf8(s.comment)
        .unwrap_or("")
        .split_whitespace()
        .next()
        .unwrap_or("");
    if let Some(style) = AtomStyle::from_comment(word) {
        return Ok(style);
    }
    if OTHER_STYLES.contains(&word) {
        return Err(ReadError::line(
            path,
            s.title_line,
            format!(
                "atom style \"{word}\" is not supported: orbitfield reads the styles full, charge, molecular (bond, angle) and atomic"
            ),
        ));
    }
    let Some(&(first_no, first)) = s.lines.first() else {
        return Ok(AtomStyle::Atomic);
    };
    let n = tokens(first).count();
    let unnamed = if word.is_empty() {
        "the atom style is not named after \"Atoms\"".to_string()
    } else {
        format!("\"{word}\" after \"Atoms\" is not an atom style")
    };
    match n {
        5 | 8 => Ok(AtomStyle::Atomic),
        7 | 10 => Ok(AtomStyle::Full),
        6 | 9 => {
            // charge: id type q x y z; molecular: id mol type x y z. A column that cannot be a type
            // (not an integer in 1..=types) decides.
            let is_type = |f: Option<&[u8]>| {
                f.and_then(int)
                    .is_some_and(|v| v >= 1 && (n_types == 0 || v as u64 <= n_types))
            };
            let col = |k: usize| s.lines.iter().all(|(_, l)| is_type(tokens(l).nth(k)));
            let (col1_types, col2_types) = (col(1), col(2));
            match (col1_types, col2_types) {
                (true, false) => Ok(AtomStyle::Charge),
                (false, true) => Ok(AtomStyle::Molecular),
                (true, true) => {
                    warnings.push(format!(
                        "{unnamed} and its {n} columns fit both \"charge\" (id type q x y z) and \"molecular\" (id mol type x y z); read as molecular — name the style as \"Atoms # charge\" if that is wrong"
                    ));
                    Ok(AtomStyle::Molecular)
                }
                (false, false) => Err(ReadError::line(
                    path,
                    first_no,
                    format!(
                        "{unnamed}, and neither column 2 nor column 3 holds atom types (integers 1 to {n_types}): cannot tell charge from molecular"
                    ),
                )),
            }
        }
        _ => Err(ReadError::line(
            path,
            first_no,
            format!(
                "{unnamed}, and {n} columns match none of atomic (5), charge or molecular (6), full (7), each optionally with 3 image flags; name the style as \"Atoms # full\""
            ),
        )),
    }
}

/// Atom ids in sorted order (index = position in the structure).
type SortedIds = Vec<i64>;

fn read_atoms(
    path: &Path,
    s: &Section<'_>,
    style: AtomStyle,
    labels: &[(i64, String)],
    masses: &[(i64, f64)],
    bbox: Option<LammpsBox>,
    warnings: &mut Vec<String>,
) -> Result<(Structure, Frame, SortedIds), ReadError> {
    struct Row {
        id: i64,
        mol: i64,
        ty: i64,
        q: f64,
        p: [f64; 3],
    }
    let (mol_col, type_col, q_col, x_col) = style.layout();
    let ncol = style.columns();
    let mut rows = Vec::with_capacity(s.lines.len());
    let mut flagged = 0usize;
    for &(no, line) in &s.lines {
        let mut f = [&b""[..]; 10];
        let mut n = 0;
        for t in tokens(line) {
            if n < f.len() {
                f[n] = t;
            }
            n += 1;
        }
        if n != ncol && n != ncol + 3 {
            return Err(ReadError::line(
                path,
                no,
                format!(
                    "expected {ncol} columns (atom style {}), or {} with image flags, found {n}",
                    style.name(),
                    ncol + 3
                ),
            ));
        }
        let bad = |what: &str, k: usize| {
            ReadError::line(
                path,
                no,
                format!(
                    "expected {what} in column {} (atom style {}), found {:?}",
                    k + 1,
                    style.name(),
                    show(f[k])
                ),
            )
        };
        let id = int(f[0]).ok_or_else(|| bad("the atom id (an integer)", 0))?;
        let mol = match mol_col {
            Some(k) => int(f[k]).ok_or_else(|| bad("the molecule id (an integer)", k))?,
            None => 1,
        };
        let ty = type_number(f[type_col], labels).ok_or_else(|| bad("the atom type", type_col))?;
        let q = match q_col {
            Some(k) => float(f[k]).ok_or_else(|| bad("the charge", k))?,
            None => 0.0,
        };
        let mut p = [0.0; 3];
        for (k, v) in p.iter_mut().enumerate() {
            *v = float(f[x_col + k]).ok_or_else(|| bad(["x", "y", "z"][k], x_col + k))?;
        }
        if n == ncol + 3 {
            let mut img = [0.0; 3];
            for (k, v) in img.iter_mut().enumerate() {
                *v = int(f[ncol + k]).ok_or_else(|| bad("an image flag (an integer)", ncol + k))? as f64;
            }
            if img != [0.0; 3] {
                flagged += 1;
            }
        }
        rows.push(Row { id, mol, ty, q, p });
    }
    rows.sort_by_key(|r| r.id);
    if let Some(w) = rows.windows(2).find(|w| w[0].id == w[1].id) {
        return Err(ReadError::line(
            path,
            s.title_line,
            format!("atom id {} appears twice in the Atoms section", w[0].id),
        ));
    }
    if flagged > 0 {
        warnings.push(format!(
            "{flagged} atoms have nonzero image flags; coordinates are shown as written (wrapped)"
        ));
    }
    let mut structure = Structure::default();
    structure.reserve(rows.len());
    let mut types = Vec::with_capacity(rows.len());
    let mut charges = Vec::with_capacity(rows.len());
    let mut atom_masses = Vec::with_capacity(rows.len());
    let mut missing_mass = None;
    let mut frame = Frame {
        cell: bbox.and_then(|b| b.cell()),
        ..Frame::default()
    };
    frame.positions_angstrom.reserve(rows.len());
    // Element and label per type, decided once.
    let mut per_type: Vec<(i64, Name8, Element, Option<f64>)> = Vec::new();
    for r in &rows {
        let entry = match per_type.binary_search_by_key(&r.ty, |e| e.0) {
            Ok(i) => per_type[i],
            Err(i) => {
                let label = labels
                    .iter()
                    .find(|(n, _)| *n == r.ty)
                    .map_or_else(|| r.ty.to_string(), |(_, l)| l.clone());
                let mass = masses.binary_search_by_key(&r.ty, |m| m.0).ok().map(|k| masses[k].1);
                let e = (
                    r.ty,
                    Name8::from(label.as_str()),
                    element_from_mass_or_label(mass, &label),
                    mass,
                );
                per_type.insert(i, e);
                e
            }
        };
        let (_, name, element, mass) = entry;
        let resid = i32::try_from(r.mol).unwrap_or(i32::MAX);
        structure.push_atom(element, name, Name8::EMPTY, resid, Name8::EMPTY, Name8::EMPTY);
        types.push(name);
        charges.push(r.q as f32);
        match mass {
            Some(m) => atom_masses.push(m as f32),
            None => {
                missing_mass.get_or_insert(r.ty);
                atom_masses.push(element.mass_dalton());
            }
        }
        frame.positions_angstrom.push(r.p.map(|x| x as f32));
    }
    structure.types = types;
    if q_col.is_some() {
        structure.charges_e = Some(charges);
    }
    match missing_mass {
        None if !masses.is_empty() => structure.masses_dalton = Some(atom_masses),
        Some(t) if !masses.is_empty() => warnings.push(format!(
            "the Masses section gives no mass for atom type {t}; masses come from the elements"
        )),
        _ => {}
    }
    let ids = rows.iter().map(|r| r.id).collect();
    Ok((structure, frame, ids))
}

fn read_bonds(path: &Path, s: &Section<'_>, ids: &[i64]) -> Result<Vec<[u32; 2]>, ReadError> {
    let mut bonds = Vec::with_capacity(s.lines.len());
    for &(no, line) in &s.lines {
        let f: Vec<&[u8]> = tokens(line).take(5).collect();
        if f.len() != 4 {
            return Err(ReadError::line(
                path,
                no,
                format!(
                    "expected \"id type atom1 atom2\" in the Bonds section, found {:?}",
                    show(line)
                ),
            ));
        }
        let mut pair = [0u32; 2];
        for (k, slot) in pair.iter_mut().enumerate() {
            let atom = int(f[2 + k]).and_then(|id| ids.binary_search(&id).ok());
            *slot = atom.ok_or_else(|| {
                ReadError::line(
                    path,
                    no,
                    format!(
                        "expected the id of an atom of the Atoms section, found {:?}",
                        show(f[2 + k])
                    ),
                )
            })? as u32;
        }
        if pair[0] != pair[1] {
            bonds.push([pair[0].min(pair[1]), pair[0].max(pair[1])]);
        }
    }
    bonds.sort_unstable();
    bonds.dedup();
    Ok(bonds)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bonds_the_header_declares_but_the_file_lacks_are_reported() {
        let text = "LAMMPS data\n\n2 atoms\n1 bonds\n1 atom types\n1 bond types\n\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n\nAtoms # full\n\n1 1 1 0.0 1.0 1.0 1.0\n2 1 1 0.0 2.0 1.0 1.0\n";
        let p = read(Path::new("cut.data"), text.as_bytes()).unwrap();
        assert!(
            p.warnings
                .iter()
                .any(|w| w.contains("declares 1 bonds but the file has no Bonds section")),
            "{:?}",
            p.warnings
        );
        let full = format!("{text}\nBonds\n\n1 1 1 2\n");
        let p = read(Path::new("whole.data"), full.as_bytes()).unwrap();
        assert!(
            p.warnings.iter().all(|w| !w.contains("Bonds section")),
            "{:?}",
            p.warnings
        );
        assert_eq!(p.structure.bonds, vec![[0, 1]]);
    }

    #[test]
    fn six_columns_are_told_apart_or_reported() {
        let charge = b"t\n\n2 atoms\n2 atom types\n\nAtoms\n\n1 1 -0.5 0 0 0\n2 2 0.5 1 0 0\n";
        let p = read(Path::new("c.data"), charge).unwrap();
        assert_eq!(p.structure.charges_e.as_deref(), Some(&[-0.5f32, 0.5][..]));
        let ambiguous = b"t\n\n2 atoms\n2 atom types\n\nAtoms\n\n1 1 1 0 0 0\n2 1 2 1 0 0\n";
        let p = read(Path::new("a.data"), ambiguous).unwrap();
        assert!(p.warnings.iter().any(|w| w.contains("molecular")), "{:?}", p.warnings);
        assert!(p.structure.charges_e.is_none());
    }

    #[test]
    fn triclinic_box_and_image_flags() {
        let text = b"t\n2 atoms\n1 atom types\n0 10 xlo xhi\n0 10 ylo yhi\n0 10 zlo zhi\n2 0 0 xy xz yz\n\nMasses\n\n1 15.999\n\nAtoms # atomic\n\n2 1 1 1 1 0 0 1\n1 1 0 0 0 0 0 0\n";
        let p = read(Path::new("t.data"), text).unwrap();
        let f = &p.frames[0];
        assert_eq!(f.positions_angstrom[0], [0.0, 0.0, 0.0]);
        assert_eq!(f.positions_angstrom[1], [1.0, 1.0, 1.0]);
        assert!(p.warnings.iter().any(|w| w.contains("image flags")), "{:?}", p.warnings);
        assert_eq!(p.structure.elements[0], Element::O);
        let c = f.cell.unwrap();
        assert!((c.lengths_angstrom[1] - 104f64.sqrt()).abs() < 1e-9);
    }
}
