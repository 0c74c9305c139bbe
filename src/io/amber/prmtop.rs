//! AMBER parm7/prmtop topologies, including CHAMBER files (CHARMM force fields converted by
//! `chamber` or ParmEd).
//!
//! Called by `io::load` (through [`read`]) with the whole decompressed file, and by the fuzz target.
//! A prmtop is a list of `%FLAG NAME` sections, each with a Fortran `%FORMAT(countKindWidth)` line
//! and fixed-width values (`20a4`, `10I8`, `5E16.8`, ...); values may touch, so they are cut by
//! width, never split on blanks. Read here: `POINTERS` (atom, residue and bond counts, `IFBOX`),
//! `ATOM_NAME`, `CHARGE` (stored in the file multiplied by 18.2223 in AMBER files and by
//! sqrt(332.0716) in CHAMBER files, which carry `CTITLE` instead of `TITLE`), `ATOMIC_NUMBER`,
//! `MASS`, `AMBER_ATOM_TYPE`, `RESIDUE_LABEL`, `RESIDUE_POINTER`, `RESIDUE_CHAINID`, `RADII`,
//! `BONDS_INC_HYDROGEN` and `BONDS_WITHOUT_HYDROGEN` (triples of coordinate-array offsets
//! `3 * index` and a parameter index), and `BOX_DIMENSIONS` (`beta, a, b, c`). `IFBOX` 1 is a box with
//! that beta (alpha = gamma = 90), 2 a truncated octahedron (all angles 109.4712206 degrees).
//! Residues are numbered 1.. in file order, as AMBER, cpptraj and MDAnalysis do. Elements come from
//! `ATOMIC_NUMBER`, else from the mass, else from the atom name. Other sections are skipped
//! whatever their format. Every count is checked against the values actually present, so a damaged
//! `POINTERS` section cannot make the reader allocate without bound.

use crate::io::ReadError;
use crate::io::fields::{float, int, show};
use crate::io::load::Parsed;
use crate::model::element::NameGuessCache;
use crate::model::units::{AMBER_CHARGE_SCALE, CHARMM_CHARGE_SCALE};
use crate::model::{BondSource, Element, Name8, Structure, UnitCell};
use std::path::Path;

/// The interior angle of a truncated octahedron's unit cell, in degrees (acos(-1/3)).
pub const TRUNCATED_OCTAHEDRON_ANGLE_DEGREE: f64 = 109.471_220_634_490_7;

/// A topology as read: the structure plus what AMBER coordinate files need from it.
#[derive(Clone, Debug)]
pub struct Prmtop {
    /// Atoms, residues, charges, bonds; no frames (a prmtop has no coordinates).
    pub parsed: Parsed,
    /// `IFBOX`: 0 no box, 1 a box with angle beta, 2 a truncated octahedron.
    pub ifbox: i64,
    /// The box of `BOX_DIMENSIONS` (with the angles `IFBOX` implies), when `IFBOX` > 0.
    pub cell: Option<UnitCell>,
    /// True for a CHAMBER file (`%FLAG CTITLE`; charges scaled by sqrt(332.0716)).
    pub chamber: bool,
}

/// What kind of values a Fortran edit descriptor holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Text,
    Int,
    Real,
}

/// A single-descriptor Fortran format such as `20a4`, `10I8` or `5E16.8`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct FortranFormat {
    per_line: usize,
    kind: Kind,
    width: usize,
}

/// Parses `(20a4)`, `( 5E16.8 )`, `(a80)`; `None` for anything else (several descriptors).
fn parse_format(text: &[u8]) -> Option<FortranFormat> {
    let t = text.trim_ascii();
    let t = t.strip_prefix(b"(")?.strip_suffix(b")")?.trim_ascii();
    let digits = t.iter().take_while(|c| c.is_ascii_digit()).count();
    let per_line = if digits == 0 {
        1
    } else {
        std::str::from_utf8(&t[..digits]).ok()?.parse::<usize>().ok()?
    };
    let kind = match t.get(digits)?.to_ascii_lowercase() {
        b'a' => Kind::Text,
        b'i' => Kind::Int,
        b'e' | b'f' | b'd' | b'g' => Kind::Real,
        _ => return None,
    };
    let rest = &t[digits + 1..];
    let wdigits = rest.iter().take_while(|c| c.is_ascii_digit()).count();
    let width = std::str::from_utf8(&rest[..wdigits]).ok()?.parse::<usize>().ok()?;
    let tail = &rest[wdigits..];
    let tail_ok = tail.is_empty() || (tail.first() == Some(&b'.') && tail[1..].iter().all(u8::is_ascii_digit));
    (tail_ok && (1..=1000).contains(&per_line) && (1..=1000).contains(&width)).then_some(FortranFormat {
        per_line,
        kind,
        width,
    })
}

/// One `%FLAG` section: where it is and its data lines.
struct Section<'a> {
    /// 1-based line of the `%FLAG` record.
    flag_line: usize,
    /// The `%FORMAT(...)` text, when given.
    format: Option<&'a [u8]>,
    /// 1-based line number of the first data line.
    first_line: usize,
    /// Data lines.
    lines: Vec<&'a [u8]>,
}

/// How many values a section must hold, and why, in the words of a message ("POINTERS says 252
/// atoms").
struct Want {
    n: usize,
    says: String,
}

impl Want {
    /// `n` values, one per `what` that POINTERS counts.
    fn pointers(n: usize, what: &str) -> Want {
        Want {
            n,
            says: format!("POINTERS says {n} {what}"),
        }
    }
}

/// The fields of one section, each with its line number.
type Fields<'a> = Vec<(usize, &'a [u8])>;

/// The sections of a prmtop, in file order.
struct Sections<'a> {
    path: &'a Path,
    list: Vec<(&'a [u8], Section<'a>)>,
    /// Number of lines in the file, for messages about missing sections.
    n_lines: usize,
}

impl<'a> Sections<'a> {
    fn split(path: &'a Path, bytes: &'a [u8]) -> Result<Sections<'a>, ReadError> {
        let mut list: Vec<(&'a [u8], Section<'a>)> = Vec::new();
        let mut n_lines = 0;
        for (no, line) in crate::io::fields::Lines::new(bytes) {
            n_lines = no;
            let line = line.strip_suffix(b"\r").unwrap_or(line);
            if let Some(rest) = line.strip_prefix(b"%FLAG") {
                list.push((
                    rest.trim_ascii(),
                    Section {
                        flag_line: no,
                        format: None,
                        first_line: no + 1,
                        lines: Vec::new(),
                    },
                ));
            } else if let Some(rest) = line.strip_prefix(b"%FORMAT") {
                if let Some((_, s)) = list.last_mut() {
                    s.format = Some(rest);
                    s.first_line = no + 1;
                }
            } else if line.starts_with(b"%") {
                // %VERSION, %COMMENT: no data.
                if let Some((_, s)) = list.last_mut()
                    && s.lines.is_empty()
                {
                    s.first_line = no + 1;
                }
            } else if let Some((_, s)) = list.last_mut() {
                s.lines.push(line);
            } else if !line.trim_ascii().is_empty() {
                return Err(ReadError::line(
                    path,
                    no,
                    format!(
                        "expected %VERSION or %FLAG records (an AMBER 7 or later prmtop; older formats are not read), found {:?}",
                        show(line)
                    ),
                ));
            }
        }
        if list.is_empty() {
            return Err(ReadError::line(
                path,
                n_lines.max(1),
                "expected %FLAG sections of an AMBER prmtop, found none",
            ));
        }
        Ok(Sections { path, list, n_lines })
    }

    fn get(&self, flag: &str) -> Option<&Section<'a>> {
        self.list.iter().find(|(f, _)| *f == flag.as_bytes()).map(|(_, s)| s)
    }

    fn has(&self, flag: &str) -> bool {
        self.get(flag).is_some()
    }

    /// The raw fields of section `flag`: `expected` of them when given, else all that are present.
    /// `None` when the section is absent.
    fn fields(&self, flag: &str, expected: Option<&Want>) -> Result<Option<Fields<'a>>, ReadError> {
        let Some(sec) = self.get(flag) else {
            return Ok(None);
        };
        let format = sec.format.ok_or_else(|| {
            ReadError::line(
                self.path,
                sec.flag_line,
                format!("section {flag}: expected a %FORMAT line after %FLAG {flag}, found none"),
            )
        })?;
        let fmt = parse_format(format).ok_or_else(|| {
            ReadError::line(
                self.path,
                sec.flag_line + 1,
                format!(
                    "section {flag}: expected a %FORMAT like (10I8), (20a4) or (5E16.8), found {:?}",
                    show(format)
                ),
            )
        })?;
        let room = sec.lines.iter().map(|l| l.len().div_ceil(fmt.width)).sum::<usize>();
        let mut out = Vec::with_capacity(expected.map_or(room, |w| w.n).min(room));
        'lines: for (k, line) in sec.lines.iter().enumerate() {
            let no = sec.first_line + k;
            let mut at = 0;
            let mut on_line = 0;
            while at < line.len() && on_line < fmt.per_line {
                let end = (at + fmt.width).min(line.len());
                let field = &line[at..end];
                at = end;
                on_line += 1;
                if field.trim_ascii().is_empty() && line[at..].trim_ascii().is_empty() {
                    // Trailing blanks after the last value of a line.
                    continue 'lines;
                }
                if fmt.kind != Kind::Text && field.trim_ascii().is_empty() {
                    return Err(ReadError::line(
                        self.path,
                        no,
                        format!(
                            "section {flag}: expected a number in columns {}-{}, found blanks",
                            at - field.len() + 1,
                            at
                        ),
                    ));
                }
                if let Some(w) = expected.filter(|w| out.len() >= w.n) {
                    return Err(ReadError::line(
                        self.path,
                        no,
                        format!("section {flag} has more than {} values, {}", w.n, w.says),
                    ));
                }
                out.push((no, field));
            }
        }
        if let Some(w) = expected
            && out.len() != w.n
        {
            // The last line of the section: where a value is missing (a file cut short ends there).
            return Err(ReadError::line(
                self.path,
                sec.first_line + sec.lines.len().saturating_sub(1),
                format!(
                    "section {flag} (%FLAG at line {}) has {} values, {}",
                    sec.flag_line,
                    out.len(),
                    w.says
                ),
            ));
        }
        Ok(Some(out))
    }

    fn ints(&self, flag: &str, expected: Option<&Want>) -> Result<Option<Vec<i64>>, ReadError> {
        let Some(fields) = self.fields(flag, expected)? else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(fields.len());
        for (no, f) in fields {
            out.push(int(f).ok_or_else(|| {
                ReadError::line(
                    self.path,
                    no,
                    format!("section {flag}: expected an integer, found {:?}", show(f)),
                )
            })?);
        }
        Ok(Some(out))
    }

    fn reals(&self, flag: &str, expected: Option<&Want>) -> Result<Option<Vec<f64>>, ReadError> {
        let Some(fields) = self.fields(flag, expected)? else {
            return Ok(None);
        };
        let mut out = Vec::with_capacity(fields.len());
        for (no, f) in fields {
            out.push(float(f).ok_or_else(|| {
                ReadError::line(
                    self.path,
                    no,
                    format!("section {flag}: expected a finite number, found {:?}", show(f)),
                )
            })?);
        }
        Ok(Some(out))
    }

    fn names(&self, flag: &str, expected: &Want) -> Result<Option<Vec<Name8>>, ReadError> {
        Ok(self
            .fields(flag, Some(expected))?
            .map(|v| v.into_iter().map(|(_, f)| Name8::new(f)).collect()))
    }

    fn missing(&self, flag: &str, why: &str) -> ReadError {
        ReadError::line(
            self.path,
            self.n_lines.max(1),
            format!("expected a %FLAG {flag} section ({why}), found none"),
        )
    }
}

/// Reads an AMBER prmtop/parm7 file (or a CHAMBER file).
pub fn read(path: &Path, bytes: &[u8]) -> Result<Prmtop, ReadError> {
    let sections = Sections::split(path, bytes)?;
    let chamber = sections.has("CTITLE");
    let pointers = sections
        .ints("POINTERS", None)?
        .ok_or_else(|| sections.missing("POINTERS", "the atom and residue counts"))?;
    let pointer_line = sections.get("POINTERS").map_or(1, |s| s.first_line);
    if pointers.len() < 28 {
        return Err(ReadError::line(
            path,
            pointer_line,
            format!(
                "section POINTERS: expected at least 28 integers, found {}",
                pointers.len()
            ),
        ));
    }
    let count = |k: usize, what: &str| -> Result<usize, ReadError> {
        let v = pointers.get(k).copied().unwrap_or(0);
        usize::try_from(v).map_err(|_| {
            ReadError::line(
                path,
                pointer_line,
                format!("section POINTERS: expected a non-negative {what}, found {v}"),
            )
        })
    };
    let n_atoms = count(0, "atom count (NATOM)")?;
    let n_res = count(11, "residue count (NRES)")?;
    let ifbox = pointers.get(27).copied().unwrap_or(0);
    if n_atoms > 0 && n_res == 0 {
        return Err(ReadError::line(
            path,
            pointer_line,
            format!("section POINTERS: {n_atoms} atoms but no residues (NRES = 0)"),
        ));
    }

    let atoms = Want::pointers(n_atoms, "atoms");
    let residues = Want::pointers(n_res, "residues");
    let names = sections
        .names("ATOM_NAME", &atoms)?
        .ok_or_else(|| sections.missing("ATOM_NAME", "the atom names"))?;
    let resnames = sections
        .names("RESIDUE_LABEL", &residues)?
        .ok_or_else(|| sections.missing("RESIDUE_LABEL", "the residue names"))?;
    let res_pointers = sections
        .ints("RESIDUE_POINTER", Some(&residues))?
        .ok_or_else(|| sections.missing("RESIDUE_POINTER", "the first atom of each residue"))?;
    let res_line = sections.get("RESIDUE_POINTER").map_or(1, |s| s.first_line);
    let mut prev = 0i64;
    for (k, &p) in res_pointers.iter().enumerate() {
        let ok = if k == 0 {
            p == 1
        } else {
            p > prev && p as u64 <= n_atoms as u64
        };
        if !ok {
            return Err(ReadError::line(
                path,
                res_line,
                format!(
                    "section RESIDUE_POINTER: residue {} starts at atom {p}; expected {}",
                    k + 1,
                    if k == 0 {
                        "1".to_string()
                    } else {
                        format!("an atom after {prev} and at most {n_atoms}")
                    }
                ),
            ));
        }
        prev = p;
    }
    // Chain ids are optional: a section of the wrong length (written by a tool that edited the
    // residues but not their chains) is skipped with a warning, as MDAnalysis does, rather than
    // making the whole topology unreadable.
    let (chains, chain_warning) = match sections.names("RESIDUE_CHAINID", &residues) {
        Ok(c) => (c, None),
        Err(e) => (
            None,
            Some(match e.location {
                crate::io::Location::Line(n) => format!("line {n}: {}; chain ids ignored", e.message),
                _ => format!("{}; chain ids ignored", e.message),
            }),
        ),
    };
    let charges = sections.reals("CHARGE", Some(&atoms))?;
    let atomic_numbers = sections.ints("ATOMIC_NUMBER", Some(&atoms))?;
    let masses = sections.reals("MASS", Some(&atoms))?;
    let types = sections.names("AMBER_ATOM_TYPE", &atoms)?;
    let radii = sections.reals("RADII", Some(&atoms))?;

    let mut structure = Structure {
        title: sections
            .fields(if chamber { "CTITLE" } else { "TITLE" }, None)?
            .map(|f| {
                f.iter()
                    .map(|(_, t)| String::from_utf8_lossy(t).into_owned())
                    .collect::<String>()
                    .trim()
                    .to_string()
            })
            .unwrap_or_default(),
        ..Structure::default()
    };
    structure.reserve(n_atoms);
    let mut guesses = NameGuessCache::default();
    let mut residue = 0usize;
    for (i, &name) in names.iter().enumerate() {
        while residue + 1 < n_res
            && res_pointers
                .get(residue + 1)
                .is_some_and(|&p| (p - 1) as u64 <= i as u64)
        {
            residue += 1;
        }
        let resname = resnames.get(residue).copied().unwrap_or(Name8::EMPTY);
        let chain = chains
            .as_ref()
            .and_then(|c| c.get(residue).copied())
            .unwrap_or(Name8::EMPTY);
        let from_number = atomic_numbers
            .as_ref()
            .and_then(|z| z.get(i))
            .and_then(|&z| u32::try_from(z).ok())
            .and_then(Element::from_number);
        let from_mass = || {
            masses
                .as_ref()
                .and_then(|m| m.get(i))
                .and_then(|&m| Element::from_mass(m))
        };
        let element = from_number
            .or_else(from_mass)
            .unwrap_or_else(|| guesses.guess(name, resname));
        structure.push_atom(element, name, resname, residue as i32 + 1, chain, Name8::EMPTY);
    }
    let scale = if chamber {
        CHARMM_CHARGE_SCALE
    } else {
        AMBER_CHARGE_SCALE
    };
    structure.charges_e = charges.map(|q| q.iter().map(|&x| (x / scale) as f32).collect());
    structure.masses_dalton = masses.map(|m| m.iter().map(|&x| x as f32).collect());
    structure.radii_angstrom = radii.map(|r| r.iter().map(|&x| x as f32).collect());
    if let Some(t) = types {
        structure.types = t;
    }

    let mut bonds = Vec::new();
    for flag in ["BONDS_INC_HYDROGEN", "BONDS_WITHOUT_HYDROGEN"] {
        let Some(v) = sections.ints(flag, None)? else { continue };
        let line = sections.get(flag).map_or(1, |s| s.first_line);
        if v.len() % 3 != 0 {
            return Err(ReadError::line(
                path,
                line,
                format!(
                    "section {flag}: expected triples (atom, atom, type), found {} values",
                    v.len()
                ),
            ));
        }
        for t in v.chunks_exact(3) {
            let atom = |x: i64| -> Result<u32, ReadError> {
                let ok = x >= 0 && x % 3 == 0 && ((x / 3) as u64) < n_atoms as u64;
                if ok {
                    Ok((x / 3) as u32)
                } else {
                    Err(ReadError::line(
                        path,
                        line,
                        format!("section {flag}: expected a coordinate offset 3*i with i below {n_atoms}, found {x}"),
                    ))
                }
            };
            let (a, b) = (atom(t[0])?, atom(t[1])?);
            if a != b {
                bonds.push([a.min(b), a.max(b)]);
            }
        }
    }
    bonds.sort_unstable();
    bonds.dedup();
    if !bonds.is_empty() || sections.has("BONDS_INC_HYDROGEN") {
        structure.bonds = bonds;
        structure.bond_source = BondSource::File;
    }

    let mut cell = None;
    let mut warnings: Vec<String> = chain_warning.into_iter().collect();
    if ifbox > 0 {
        match sections.reals(
            "BOX_DIMENSIONS",
            Some(&Want {
                n: 4,
                says: "expected 4 (the angle beta and the lengths a, b, c)".to_string(),
            }),
        )? {
            Some(b) => {
                let (beta, lengths) = (b[0], [b[1], b[2], b[3]]);
                let angles = if ifbox == 2 {
                    [TRUNCATED_OCTAHEDRON_ANGLE_DEGREE; 3]
                } else {
                    [90.0, beta, 90.0]
                };
                let c = UnitCell::new(lengths, angles);
                if c.is_valid() {
                    cell = Some(c);
                } else {
                    warnings.push(format!("BOX_DIMENSIONS {b:?} do not describe a valid box; ignored"));
                }
            }
            None => warnings.push(format!("IFBOX is {ifbox} but there is no BOX_DIMENSIONS section")),
        }
    }
    let unknown = structure.elements.iter().filter(|e| **e == Element::UNKNOWN).count();
    if unknown > 0 {
        warnings.push(format!("{unknown} of {n_atoms} atoms have an unknown element"));
    }
    structure
        .check_consistent()
        .map_err(|m| ReadError::file(path, format!("internal inconsistency: {m}")))?;
    Ok(Prmtop {
        parsed: Parsed {
            structure,
            frames: Vec::new(),
            warnings,
            frame_energies_hartree: Vec::new(),
        },
        ifbox,
        cell,
        chamber,
    })
}

/// Per-atom Lennard-Jones parameters of a prmtop (implicit ligand sampling): each atom's type
/// (`ATOM_TYPE_INDEX`), that type's pair with itself (`NONBONDED_PARM_INDEX`), and its
/// `LENNARD_JONES_ACOEF`/`BCOEF` turned into eps = B^2/(4A) and rmin = (2A/B)^(1/6). `None` when the
/// file has no Lennard-Jones sections; a 10-12 (negative) index or a zero coefficient gives a type
/// without dispersion (eps 0).
pub fn read_lennard_jones(path: &Path, bytes: &[u8]) -> Result<Option<Vec<crate::model::lj::LjParams>>, ReadError> {
    use crate::model::lj::LjParams;
    let sections = Sections::split(path, bytes)?;
    let pointers = sections
        .ints("POINTERS", None)?
        .ok_or_else(|| sections.missing("POINTERS", "the atom and type counts"))?;
    let pointer_line = sections.get("POINTERS").map_or(1, |s| s.first_line);
    let count = |k: usize, what: &str| -> Result<usize, ReadError> {
        let v = pointers.get(k).copied().unwrap_or(-1);
        usize::try_from(v).map_err(|_| {
            ReadError::line(
                path,
                pointer_line,
                format!("section POINTERS: expected a non-negative {what}, found {v}"),
            )
        })
    };
    let n_atoms = count(0, "atom count (NATOM)")?;
    let n_types = count(1, "type count (NTYPES)")?;
    if !sections.has("LENNARD_JONES_ACOEF") || !sections.has("NONBONDED_PARM_INDEX") {
        return Ok(None);
    }
    let Some(pairs) = n_types.checked_mul(n_types).filter(|&p| p <= bytes.len()) else {
        return Err(ReadError::line(
            path,
            pointer_line,
            format!("section POINTERS: NTYPES {n_types} is larger than the file can describe"),
        ));
    };
    let type_index = sections
        .ints("ATOM_TYPE_INDEX", Some(&Want::pointers(n_atoms, "atoms")))?
        .ok_or_else(|| sections.missing("ATOM_TYPE_INDEX", "each atom's Lennard-Jones type"))?;
    let parm_index = sections
        .ints(
            "NONBONDED_PARM_INDEX",
            Some(&Want {
                n: pairs,
                says: format!("POINTERS says {n_types} atom types, so {pairs} type pairs"),
            }),
        )?
        .ok_or_else(|| sections.missing("NONBONDED_PARM_INDEX", "the Lennard-Jones pair table"))?;
    let n_coef = n_types * (n_types + 1) / 2;
    let coefficients = Want {
        n: n_coef,
        says: format!("POINTERS says {n_types} atom types, so {n_coef} coefficients"),
    };
    let a = sections
        .reals("LENNARD_JONES_ACOEF", Some(&coefficients))?
        .ok_or_else(|| sections.missing("LENNARD_JONES_ACOEF", "the Lennard-Jones A coefficients"))?;
    let b = sections
        .reals("LENNARD_JONES_BCOEF", Some(&coefficients))?
        .ok_or_else(|| sections.missing("LENNARD_JONES_BCOEF", "the Lennard-Jones B coefficients"))?;
    let per_type: Vec<LjParams> = (0..n_types)
        .map(|t| {
            let k = parm_index.get(t * n_types + t).copied().unwrap_or(0);
            match usize::try_from(k).ok().filter(|&k| k >= 1) {
                Some(k) => LjParams::from_amber_ab(
                    a.get(k - 1).copied().unwrap_or(0.0),
                    b.get(k - 1).copied().unwrap_or(0.0),
                ),
                None => LjParams::default(),
            }
        })
        .collect();
    let line = sections.get("ATOM_TYPE_INDEX").map_or(1, |s| s.first_line);
    type_index
        .iter()
        .enumerate()
        .map(|(i, &t)| {
            usize::try_from(t)
                .ok()
                .filter(|&t| t >= 1)
                .and_then(|t| per_type.get(t - 1).copied())
                .ok_or_else(|| {
                    ReadError::line(
                        path,
                        line,
                        format!(
                            "section ATOM_TYPE_INDEX: atom {}: expected a type between 1 and {n_types}, found {t}",
                            i + 1
                        ),
                    )
                })
        })
        .collect::<Result<Vec<_>, _>>()
        .map(Some)
}

#[cfg(test)]
mod tests {
    use super::*;

    const TINY: &str = "%VERSION  VERSION_STAMP = V0001.000  DATE = 01/01/24  00:00:00
%FLAG TITLE
%FORMAT(20a4)
WATER AND ION
%FLAG POINTERS
%FORMAT(10I8)
       4       2       2       0       0       0       0       0       0       0
       6       2       0       0       0       1       0       0       2       0
       0       0       0       0       0       0       0       1       3       0
       0
%FLAG ATOM_NAME
%FORMAT(20a4)
O   H1  H2  Na+
%FLAG CHARGE
%COMMENT charge times 18.2223
%FORMAT(5E16.8)
 -1.51973982E+01  7.59869910E+00  7.59869910E+00  1.82223000E+01
%FLAG ATOMIC_NUMBER
%FORMAT(10I8)
       8       1       1      -1
%FLAG MASS
%FORMAT(5E16.8)
  1.60000000E+01  1.00800000E+00  1.00800000E+00  2.29900000E+01
%FLAG RESIDUE_LABEL
%FORMAT(20a4)
WAT Na+
%FLAG RESIDUE_POINTER
%FORMAT(10I8)
       1       4
%FLAG BONDS_INC_HYDROGEN
%FORMAT(10I8)
       0       3       1       0       6       1
%FLAG BONDS_WITHOUT_HYDROGEN
%FORMAT(10I8)

%FLAG AMBER_ATOM_TYPE
%FORMAT(20a4)
OW  HW  HW  Na+
%FLAG BOX_DIMENSIONS
%FORMAT(5E16.8)
  9.00000000E+01  2.00000000E+01  2.10000000E+01  2.20000000E+01
";

    #[test]
    fn reads_a_small_topology() {
        let p = read(Path::new("t.prmtop"), TINY.as_bytes()).unwrap();
        let s = &p.parsed.structure;
        assert_eq!(s.len(), 4);
        assert_eq!(s.title, "WATER AND ION");
        assert_eq!(s.resids, vec![1, 1, 1, 2]);
        assert_eq!(s.resnames[3].as_str(), "Na+");
        assert_eq!(s.elements, vec![Element::O, Element::H, Element::H, Element(11)]);
        let q = s.charges_e.as_ref().unwrap();
        assert!((q[0] + 0.834).abs() < 1e-6 && (q[3] - 1.0).abs() < 1e-6, "{q:?}");
        assert_eq!(s.bonds, vec![[0, 1], [0, 2]]);
        assert_eq!(s.types[0].as_str(), "OW");
        assert_eq!(p.ifbox, 1);
        assert_eq!(p.cell.unwrap().lengths_angstrom, [20.0, 21.0, 22.0]);
        assert!(!p.chamber);
    }

    #[test]
    fn formats_and_fixed_width_fields() {
        assert_eq!(
            parse_format(b"(5E16.8)"),
            Some(FortranFormat {
                per_line: 5,
                kind: Kind::Real,
                width: 16
            })
        );
        assert_eq!(parse_format(b"(a80)").map(|f| f.width), Some(80));
        assert_eq!(parse_format(b"(i2,a78)"), None);
        // Values that fill their width touch each other: they are cut by width, not by blanks.
        let text = TINY.replace(" -1.51973982E+01  7.59869910E+00", "-1.519739820E+01-7.598699100E+00");
        let p = read(Path::new("t"), text.as_bytes()).unwrap();
        let q = p.parsed.structure.charges_e.unwrap();
        assert!((q[0] + 0.834).abs() < 1e-6 && (q[1] + 0.417).abs() < 1e-6, "{q:?}");
    }

    #[test]
    fn damaged_files_name_the_section() {
        let e = read(
            Path::new("t"),
            TINY.replace("       1       4\n", "       1       9\n").as_bytes(),
        )
        .unwrap_err();
        assert!(e.message.contains("RESIDUE_POINTER"), "{e}");
        let e = read(Path::new("t"), TINY.replace("O   H1  H2  Na+", "O   H1  H2").as_bytes()).unwrap_err();
        assert!(
            e.message
                .contains("section ATOM_NAME (%FLAG at line 11) has 3 values, POINTERS says 4 atoms"),
            "{e}"
        );
        let e = read(
            Path::new("t"),
            TINY.replace("       0       6       1", "       0      12       1")
                .as_bytes(),
        )
        .unwrap_err();
        assert!(e.message.contains("BONDS_INC_HYDROGEN"), "{e}");
        let e = read(
            Path::new("t"),
            TINY.replace(" -1.51973982E+01", " -1.519739xxE+01").as_bytes(),
        )
        .unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(17), "{e}");
        let huge = TINY.replace("       4       2       2", "99999999       2       2");
        assert!(read(Path::new("t"), huge.as_bytes()).is_err());
        assert!(read(Path::new("t"), b"garbage\n").is_err());
        assert!(read(Path::new("t"), b"").is_err());
    }
}
