//! Molden reader: atoms, contracted Gaussian basis, molecular orbitals, multi-geometry files.
//!
//! Owns the conversion of Molden's conventions (section flags `[5D] [7F] [9G] [5D10F] [5D7F]` and
//! their lower-case and Cartesian spellings, `[Atoms] AU|Angs`, `[GTO]` with exponent scale factors,
//! `[MO]` blocks with `Sym= Ene= Spin= Occup=`, `[GEOMETRIES] XYZ`) to the internal basis conventions
//! of `model::basis`, the detection of the writing program, and the orthonormality check with
//! per-program corrections ([`check_and_correct`], shared with the fchk, mkl and wfn readers).
//! Called by `io::load` and by the embedded demo loader.
//!
//! Conventions are decided from the file's own evidence first: the program named in the title lines
//! (PySCF, ORCA's `orca_2mkl`, ...), or its quirks (CFOUR repeats `[Molden Format]` between
//! `[Atoms]` and `[GTO]`; NWChem writes 0 as the exponent scale factor; Q-Chem writes `Sym=X`;
//! Turbomole writes Fortran energies without a leading zero; Dalton ends with its own marker;
//! Molpro adds `[Molpro variables]`). Known conventions (ORCA: unnormalised primitives and the signs
//! of pure f, g, h functions; CFOUR and Turbomole: their Cartesian normalisations) are applied from
//! that evidence;
//! otherwise corrections are tried and one is accepted only when it makes the occupied orbitals
//! orthonormal to [`ORTHONORMAL_TOLERANCE`]. Closed shells written as alpha orbitals with
//! occupations per spin (Q-Chem) are doubled; negative occupations (Dalton ROHF) are read as 0.

use super::ReadError;
use super::text::{lines, parse_f64, parse_i64, shorten};
use crate::model::basis::{cartesian_powers, primitive_norm};
use crate::model::overlap::{orthonormality_deviation, overlap_matrix};
use crate::model::units::bohr_from_angstrom;
use crate::model::{BasisSet, Element, OrbitalSet, QmAtom, Shell, SpinKind, Wavefunction};
use std::path::Path;

/// A Molden file: one wavefunction, or several for multi-geometry files.
pub struct MoldenFile {
    pub wavefunctions: Vec<Wavefunction>,
    pub warnings: Vec<String>,
    /// Geometries of a `[GEOMETRIES]` section that come without their own orbitals (optimisation
    /// or scan steps): atom positions in bohr, one entry per geometry, atoms in `[Atoms]` order.
    /// Empty when the file has no such section or when every geometry has its own wavefunction.
    pub geometries_bohr: Vec<Vec<[f64; 3]>>,
}

/// Largest basis and orbital counts accepted (a damaged file must not make us allocate without bound).
const MAX_FUNCTIONS: usize = 100_000;
/// Deviation of C^T S C from the identity (occupied orbitals) below which orbitals count as
/// orthonormal, and that a correction must reach to be accepted.
pub const ORTHONORMAL_TOLERANCE: f64 = 1e-6;
/// Deviation up to which orbitals are only noted as imprecise (printed with few digits).
pub const PRECISION_TOLERANCE: f64 = 1e-4;

#[derive(Clone, Debug)]
struct Line {
    number: usize,
    text: String,
}

#[derive(Clone, Debug)]
struct Section {
    /// Lower-case name between the brackets.
    name: String,
    /// Text after the closing bracket on the header line.
    args: String,
    header_line: usize,
    body: Vec<Line>,
}

fn split_sections(all: &[Line]) -> (Vec<Line>, Vec<Section>) {
    let mut preamble = Vec::new();
    let mut sections: Vec<Section> = Vec::new();
    for l in all {
        let t = l.text.trim_start();
        if let Some(rest) = t.strip_prefix('[')
            && let Some(close) = rest.find(']')
        {
            sections.push(Section {
                name: rest[..close].trim().to_ascii_lowercase(),
                args: rest[close + 1..].trim().to_string(),
                header_line: l.number,
                body: Vec::new(),
            });
            continue;
        }
        match sections.last_mut() {
            Some(s) => s.body.push(l.clone()),
            None => preamble.push(l.clone()),
        }
    }
    (preamble, sections)
}

/// Reads a Molden file.
pub fn read(path: &Path, bytes: &[u8]) -> Result<MoldenFile, ReadError> {
    let all: Vec<Line> = lines(bytes)
        .map(|(number, b)| Line {
            number,
            text: String::from_utf8_lossy(b).into_owned(),
        })
        .collect();
    if all.iter().all(|l| l.text.trim().is_empty()) {
        return Err(ReadError::file(
            path,
            "empty file: expected a Molden file starting with [Molden Format]",
        ));
    }
    let program = detect_program(&all);
    // Concatenated Molden files (several "[Molden Format]" headers) are read record by record. A
    // header starts a new record only once the current one holds orbitals: CFOUR repeats the header
    // between [Atoms] and [GTO] of one record.
    let mut starts: Vec<usize> = Vec::new();
    let mut has_mo = true;
    for (i, l) in all.iter().enumerate() {
        let t = l.text.trim();
        if t.eq_ignore_ascii_case("[molden format]") {
            if has_mo {
                starts.push(i);
                has_mo = false;
            }
        } else if t.get(..4).is_some_and(|h| h.eq_ignore_ascii_case("[mo]")) {
            has_mo = true;
        }
    }
    // Text before the first header (or a file without one) forms a record of its own.
    if starts.first() != Some(&0)
        && let Some(first) = all.iter().position(|l| !l.text.trim().is_empty())
        && starts.first() != Some(&first)
    {
        starts.insert(0, 0);
    }
    let mut out = MoldenFile {
        wavefunctions: Vec::new(),
        warnings: Vec::new(),
        geometries_bohr: Vec::new(),
    };
    for (k, &start) in starts.iter().enumerate() {
        let end = starts.get(k + 1).copied().unwrap_or(all.len());
        let record = all.get(start..end).unwrap_or(&[]);
        let (preamble, sections) = split_sections(record);
        let _ = preamble;
        read_record(path, &sections, program.clone(), &mut out)?;
    }
    if out.wavefunctions.is_empty() {
        return Err(ReadError::file(
            path,
            "no wavefunction found: expected [Atoms], [GTO] and [MO] sections",
        ));
    }
    Ok(out)
}

/// Names the program that wrote the file from its title lines and known quirks.
fn detect_program(all: &[Line]) -> Option<String> {
    let head: String = all
        .iter()
        .take(12)
        .map(|l| l.text.to_ascii_lowercase())
        .collect::<Vec<_>>()
        .join("\n");
    let known: [(&str, &str); 14] = [
        ("pyscf", "PySCF"),
        ("orca", "ORCA"),
        ("psi4", "Psi4"),
        ("turbomole", "Turbomole"),
        ("tm2molden", "Turbomole"),
        ("cfour", "CFOUR"),
        ("molpro", "Molpro"),
        ("multiwfn", "Multiwfn"),
        ("terachem", "TeraChem"),
        ("nwchem", "NWChem"),
        ("q-chem", "Q-Chem"),
        ("dalton", "Dalton"),
        ("bagel", "BAGEL"),
        ("molcas", "Molcas"),
    ];
    for (needle, name) in known {
        if head.contains(needle) {
            return Some(name.to_string());
        }
    }
    // Quirk-based evidence where the file names no program.
    let all_lower_has = |s: &str| all.iter().take(40).any(|l| l.text.to_ascii_lowercase().contains(s));
    if all_lower_has("orca_2mkl") {
        return Some("ORCA".into());
    }
    let trimmed = |l: &Line| l.text.trim().to_ascii_lowercase();
    if all
        .iter()
        .rev()
        .take(5)
        .any(|l| trimmed(l).contains("molden output from dalton"))
    {
        return Some("Dalton".into());
    }
    if all.iter().any(|l| trimmed(l).starts_with("[molpro variables]")) {
        return Some("Molpro".into());
    }
    // CFOUR repeats the [Molden Format] header between [Atoms] and [GTO].
    let headers: Vec<String> = all
        .iter()
        .map(|l| l.text.trim().to_ascii_lowercase())
        .filter(|t| t.starts_with('['))
        .take(6)
        .collect();
    if headers.iter().filter(|h| h.as_str() == "[molden format]").count() > 1
        && headers.iter().position(|h| h.starts_with("[atoms]"))
            < headers.iter().rposition(|h| h.as_str() == "[molden format]")
        && headers.iter().position(|h| h.starts_with("[atoms]")) < headers.iter().position(|h| h.starts_with("[gto]"))
    {
        return Some("CFOUR".into());
    }
    let mo_keys: Vec<String> = all
        .iter()
        .map(|l| l.text.trim().to_string())
        .filter(|t| t.starts_with("Sym=") || t.starts_with("Ene="))
        .take(4)
        .collect();
    // Q-Chem: "Sym=X" without a space; Turbomole: Fortran energies without a leading zero.
    if mo_keys.iter().any(|k| k == "Sym=X") {
        return Some("Q-Chem".into());
    }
    if mo_keys.iter().any(|k| {
        k.strip_prefix("Ene=")
            .is_some_and(|v| v.trim_start().starts_with("-.") || v.trim_start().starts_with('.'))
    }) {
        return Some("Turbomole".into());
    }
    // NWChem writes 0 as the exponent scale factor of every shell.
    let mut in_gto = false;
    for l in all {
        let t = l.text.trim().to_ascii_lowercase();
        if t.starts_with('[') {
            in_gto = t.starts_with("[gto]");
            continue;
        }
        let w: Vec<&str> = t.split_whitespace().collect();
        if in_gto && w.len() == 3 && shell_l(w[0]).is_some() {
            return (w[2] == "0").then(|| "NWChem".to_string());
        }
    }
    None
}

/// Pure flags for d, f and g-and-higher shells from the flag sections.
#[derive(Clone, Copy, Debug, Default)]
struct PureFlags {
    d: bool,
    f: bool,
    g: bool,
}

impl PureFlags {
    fn from_sections(sections: &[Section]) -> PureFlags {
        let mut p = PureFlags::default();
        for s in sections {
            match s.name.as_str() {
                "5d" | "5d7f" => {
                    p.d = true;
                    p.f = true;
                }
                "5d10f" => {
                    p.d = true;
                    p.f = false;
                }
                "7f" => p.f = true,
                "9g" => p.g = true,
                _ => {}
            }
        }
        p
    }

    fn pure(self, l: u8) -> bool {
        match l {
            0 | 1 => false,
            2 => self.d,
            3 => self.f,
            _ => self.g,
        }
    }
}

struct Atom {
    element: Element,
    z: f64,
    position_bohr: [f64; 3],
}

fn tokens(s: &str) -> Vec<&str> {
    s.split_whitespace().collect()
}

/// Atoms of `[Atoms]`, and a warning when the unit had to be assumed.
fn read_atoms(path: &Path, sec: &Section) -> Result<(Vec<Atom>, Option<String>), ReadError> {
    let args = sec.args.to_ascii_lowercase();
    let mut warning = None;
    let angstrom = if args.contains("au") || args.contains("bohr") {
        false
    } else if args.contains("ang") {
        true
    } else if args.trim().is_empty() {
        warning = Some(format!(
            "line {}: [Atoms] gives no unit (AU or Angs); Angstrom assumed",
            sec.header_line
        ));
        true
    } else {
        return Err(ReadError::line(
            path,
            sec.header_line,
            format!(
                "expected the unit after [Atoms] (AU or Angs), found {:?}",
                shorten(&sec.args)
            ),
        ));
    };
    let mut atoms = Vec::new();
    for l in &sec.body {
        let t = tokens(&l.text);
        if t.is_empty() {
            continue;
        }
        if t.len() < 6 {
            return Err(ReadError::line(
                path,
                l.number,
                format!(
                    "expected an atom line 'name index Z x y z', found {:?}",
                    shorten(l.text.trim())
                ),
            ));
        }
        let z = parse_i64(path, l.number, "the atomic number", t[2].as_bytes())?;
        let element = u32::try_from(z)
            .ok()
            .filter(|&z| z > 0)
            .and_then(Element::from_number)
            .or_else(|| Element::from_symbol(t[0].trim_end_matches(|c: char| c.is_ascii_digit() || c == '_')))
            .unwrap_or(Element::UNKNOWN);
        let mut p = [0.0; 3];
        for k in 0..3 {
            let v = parse_f64(path, l.number, "a coordinate", t[3 + k].as_bytes())?;
            p[k] = if angstrom { bohr_from_angstrom(v) } else { v };
        }
        atoms.push(Atom {
            element,
            z: z.max(0) as f64,
            position_bohr: p,
        });
    }
    if atoms.is_empty() {
        return Err(ReadError::line(
            path,
            sec.header_line,
            "expected atom lines after [Atoms], found none",
        ));
    }
    Ok((atoms, warning))
}

/// A shell as read, before pure flags are known.
struct RawShell {
    l: u8,
    atom: usize,
    exponents: Vec<f64>,
    coefficients: Vec<f64>,
}

/// Angular momentum of a lower-case shell letter (s, p, d, f, g, h, i, k).
pub(crate) fn shell_l(kind: &str) -> Option<u8> {
    match kind {
        "s" => Some(0),
        "p" => Some(1),
        "d" => Some(2),
        "f" => Some(3),
        "g" => Some(4),
        "h" => Some(5),
        "i" => Some(6),
        "k" => Some(7),
        _ => None,
    }
}

fn read_gto(path: &Path, sec: &Section, n_atoms: usize) -> Result<Vec<RawShell>, ReadError> {
    let mut shells = Vec::new();
    let mut atom: Option<usize> = None;
    let body = &sec.body;
    let mut i = 0;
    while let Some(l) = body.get(i) {
        i += 1;
        let t = tokens(&l.text);
        let Some(first) = t.first() else { continue };
        if let Ok(idx) = first.parse::<i64>() {
            if idx < 1 || idx as u64 > n_atoms as u64 {
                return Err(ReadError::line(
                    path,
                    l.number,
                    format!("atom index {idx} in [GTO] is out of range ([Atoms] lists {n_atoms} atoms)"),
                ));
            }
            atom = Some(idx as usize - 1);
            continue;
        }
        let kind = first.to_ascii_lowercase();
        let Some(a) = atom else {
            return Err(ReadError::line(
                path,
                l.number,
                format!(
                    "expected an atom index before the shell, found {:?}",
                    shorten(l.text.trim())
                ),
            ));
        };
        let ls: Vec<u8> = if kind == "sp" {
            vec![0, 1]
        } else if let Some(l) = shell_l(&kind) {
            vec![l]
        } else {
            return Err(ReadError::line(
                path,
                l.number,
                format!(
                    "expected a shell type (s, p, sp, d, f, g, h, i), found {:?}",
                    shorten(first)
                ),
            ));
        };
        let nprim = t.get(1).ok_or_else(|| {
            ReadError::line(
                path,
                l.number,
                "expected the number of primitives after the shell type, found nothing",
            )
        })?;
        let nprim = parse_i64(path, l.number, "the number of primitives", nprim.as_bytes())?;
        let remaining = body.len().saturating_sub(i);
        if nprim < 1 || nprim as u64 > remaining as u64 {
            return Err(ReadError::line(
                path,
                l.number,
                format!("shell declares {nprim} primitives but {remaining} lines remain in [GTO]"),
            ));
        }
        let scale = match t.get(2) {
            Some(s) => parse_f64(path, l.number, "the exponent scale factor", s.as_bytes())?,
            None => 1.0,
        };
        // NWChem writes 0 where it means "not scaled".
        let scale = if scale == 0.0 { 1.0 } else { scale };
        if !(scale > 0.0 && scale.is_finite()) {
            return Err(ReadError::line(
                path,
                l.number,
                format!("expected a positive scale factor (or 0 for none), found {scale}"),
            ));
        }
        let mut exps = Vec::new();
        let mut coefs: Vec<Vec<f64>> = vec![Vec::new(); ls.len()];
        for _ in 0..nprim {
            let Some(pl) = body.get(i) else { break };
            i += 1;
            let pt = tokens(&pl.text);
            if pt.len() < 1 + ls.len() {
                return Err(ReadError::line(
                    path,
                    pl.number,
                    format!(
                        "expected an exponent and {} coefficient(s), found {:?}",
                        ls.len(),
                        shorten(pl.text.trim())
                    ),
                ));
            }
            let e = parse_f64(path, pl.number, "an exponent", pt[0].as_bytes())? * scale * scale;
            if !(e > 0.0 && e.is_finite()) {
                return Err(ReadError::line(
                    path,
                    pl.number,
                    format!("expected a positive exponent, found {e}"),
                ));
            }
            exps.push(e);
            for (k, c) in coefs.iter_mut().enumerate() {
                c.push(parse_f64(
                    path,
                    pl.number,
                    "a contraction coefficient",
                    pt[1 + k].as_bytes(),
                )?);
            }
        }
        for (k, &l) in ls.iter().enumerate() {
            shells.push(RawShell {
                l,
                atom: a,
                exponents: exps.clone(),
                coefficients: coefs[k].clone(),
            });
        }
    }
    if shells.is_empty() {
        return Err(ReadError::line(
            path,
            sec.header_line,
            "expected shells after [GTO], found none",
        ));
    }
    Ok(shells)
}

struct RawMo {
    line: usize,
    sym: String,
    energy: f64,
    beta: bool,
    occupation: f64,
    coefficients: Vec<(usize, usize, f64)>, // (line, 1-based index, value)
}

fn read_mos(path: &Path, sec: &Section) -> Result<Vec<RawMo>, ReadError> {
    let mut mos: Vec<RawMo> = Vec::new();
    let mut in_coefs = true; // a key line after coefficients starts a new orbital
    for l in &sec.body {
        let text = l.text.trim();
        if text.is_empty() {
            continue;
        }
        if let Some((key, value)) = text.split_once('=') {
            if in_coefs || mos.is_empty() {
                mos.push(RawMo {
                    line: l.number,
                    sym: String::new(),
                    energy: 0.0,
                    beta: false,
                    occupation: 0.0,
                    coefficients: Vec::new(),
                });
                in_coefs = false;
            }
            let Some(mo) = mos.last_mut() else { continue };
            let value = value.trim();
            match key.trim().to_ascii_lowercase().as_str() {
                "sym" => mo.sym = value.to_string(),
                "ene" => mo.energy = parse_f64(path, l.number, "an orbital energy", value.as_bytes())?,
                "occup" => mo.occupation = parse_f64(path, l.number, "an occupation", value.as_bytes())?,
                "spin" => {
                    let v = value.to_ascii_lowercase();
                    mo.beta = match v.as_str() {
                        "alpha" => false,
                        "beta" => true,
                        _ => {
                            return Err(ReadError::line(
                                path,
                                l.number,
                                format!("expected Spin= Alpha or Beta, found {:?}", shorten(value)),
                            ));
                        }
                    }
                }
                _ => {}
            }
            continue;
        }
        let t = tokens(text);
        let Some(mo) = mos.last_mut() else {
            return Err(ReadError::line(
                path,
                l.number,
                format!(
                    "expected an orbital header (Ene=, Spin=, Occup=), found {:?}",
                    shorten(text)
                ),
            ));
        };
        if t.len() < 2 {
            return Err(ReadError::line(
                path,
                l.number,
                format!("expected 'index coefficient', found {:?}", shorten(text)),
            ));
        }
        let idx = parse_i64(path, l.number, "a basis function index", t[0].as_bytes())?;
        if idx < 1 || idx as u64 > MAX_FUNCTIONS as u64 {
            return Err(ReadError::line(
                path,
                l.number,
                format!("basis function index {idx} is out of range"),
            ));
        }
        let v = parse_f64(path, l.number, "an MO coefficient", t[1].as_bytes())?;
        mo.coefficients.push((l.number, idx as usize, v));
        in_coefs = true;
    }
    if mos.is_empty() {
        return Err(ReadError::line(
            path,
            sec.header_line,
            "expected orbitals after [MO], found none",
        ));
    }
    // A file cut off inside the last orbital: every other orbital is dense, the last is shorter.
    if mos.len() > 1 {
        let full = mos
            .iter()
            .take(mos.len() - 1)
            .map(|m| m.coefficients.len())
            .min()
            .unwrap_or(0);
        let max = mos.iter().map(|m| m.coefficients.len()).max().unwrap_or(0);
        if let Some(last) = mos.last()
            && full == max
            && last.coefficients.len() < full
        {
            let line = last.coefficients.last().map_or(last.line, |c| c.0);
            return Err(ReadError::line(
                path,
                line,
                format!(
                    "the last orbital has {} coefficients, the others {full}: the file looks truncated",
                    last.coefficients.len()
                ),
            ));
        }
    }
    for m in &mos {
        if m.coefficients.is_empty() {
            return Err(ReadError::line(
                path,
                m.line,
                "expected coefficient lines after this orbital header, found none",
            ));
        }
    }
    Ok(mos)
}

/// Atoms of one `[GEOMETRIES] XYZ` block, positions in bohr.
fn read_geometries(path: &Path, sec: &Section, n_atoms: usize) -> Result<Vec<Vec<[f64; 3]>>, ReadError> {
    if !sec.args.is_empty() && !sec.args.to_ascii_lowercase().contains("xyz") {
        return Err(ReadError::line(
            path,
            sec.header_line,
            format!("expected [GEOMETRIES] XYZ, found {:?}", shorten(&sec.args)),
        ));
    }
    let mut out = Vec::new();
    let mut i = 0;
    // Each block: count line, comment line (may be blank, so read from the raw body), count atom lines.
    let raw = &sec.body;
    while i < raw.len() {
        let Some(l) = raw.get(i) else { break };
        if l.text.trim().is_empty() {
            i += 1;
            continue;
        }
        let n = parse_i64(path, l.number, "the atom count of a geometry", l.text.trim().as_bytes())?;
        if n as u64 != n_atoms as u64 {
            return Err(ReadError::line(
                path,
                l.number,
                format!("geometry has {n} atoms, [Atoms] lists {n_atoms}"),
            ));
        }
        i += 2; // count + comment
        let mut g = Vec::with_capacity(n_atoms);
        for _ in 0..n_atoms {
            let Some(al) = raw.get(i) else {
                return Err(ReadError::line(path, l.number, "the file ends inside a geometry block"));
            };
            i += 1;
            let t = tokens(&al.text);
            if t.len() < 4 {
                return Err(ReadError::line(
                    path,
                    al.number,
                    format!("expected 'element x y z', found {:?}", shorten(al.text.trim())),
                ));
            }
            let mut p = [0.0; 3];
            for k in 0..3 {
                p[k] = bohr_from_angstrom(parse_f64(path, al.number, "a coordinate", t[1 + k].as_bytes())?);
            }
            g.push(p);
        }
        out.push(g);
    }
    Ok(out)
}

fn read_record(
    path: &Path,
    sections: &[Section],
    program: Option<String>,
    out: &mut MoldenFile,
) -> Result<(), ReadError> {
    if let Some(s) = sections.iter().find(|s| s.name == "sto") {
        return Err(ReadError::line(
            path,
            s.header_line,
            "Slater-type orbitals ([STO]) are not supported: expected a Gaussian basis in [GTO]",
        ));
    }
    let find = |name: &str| sections.iter().find(|s| s.name == name);
    let Some(atoms_sec) = find("atoms") else {
        // A record with only geometries or frequencies (e.g. a trailing block) carries no wavefunction.
        if sections.iter().any(|s| s.name == "gto" || s.name == "mo") {
            return Err(ReadError::file(
                path,
                "missing [Atoms] section: expected atoms before [GTO] and [MO]",
            ));
        }
        return Ok(());
    };
    let (atoms, unit_warning) = read_atoms(path, atoms_sec)?;
    let Some(gto_sec) = find("gto") else {
        return Err(ReadError::line(
            path,
            atoms_sec.header_line,
            "missing [GTO] section: expected a basis set after [Atoms]",
        ));
    };
    let raw_shells = read_gto(path, gto_sec, atoms.len())?;
    let mo_sections: Vec<&Section> = sections.iter().filter(|s| s.name == "mo").collect();
    if mo_sections.is_empty() {
        return Err(ReadError::line(
            path,
            gto_sec.header_line,
            "missing [MO] section: expected molecular orbitals",
        ));
    }
    let mut flags = PureFlags::from_sections(sections);
    let mut warnings: Vec<String> = unit_warning.into_iter().collect();

    let mut mo_blocks = Vec::new();
    for s in &mo_sections {
        mo_blocks.push((s.header_line, read_mos(path, s)?));
    }
    let max_index = mo_blocks
        .iter()
        .flat_map(|(_, b)| b.iter())
        .flat_map(|m| m.coefficients.iter().map(|c| c.1))
        .max()
        .unwrap_or(0);
    let count = |f: PureFlags| -> usize {
        raw_shells
            .iter()
            .map(|s| {
                let l = s.l as usize;
                if f.pure(s.l) { 2 * l + 1 } else { (l + 1) * (l + 2) / 2 }
            })
            .sum()
    };
    let mut n_basis = count(flags);
    if max_index != n_basis {
        // Missing or wrong flags are a common writer bug: accept the other convention if it fits exactly.
        let alternatives = [
            PureFlags {
                d: true,
                f: true,
                g: true,
            },
            PureFlags {
                d: false,
                f: false,
                g: false,
            },
            PureFlags {
                d: true,
                f: false,
                g: false,
            },
            PureFlags {
                d: true,
                f: true,
                g: false,
            },
        ];
        let all_dense = mo_blocks
            .iter()
            .flat_map(|(_, b)| b.iter())
            .all(|m| m.coefficients.len() == max_index);
        match alternatives.iter().find(|f| count(**f) == max_index) {
            Some(f) if max_index > n_basis || all_dense => {
                warnings.push(format!(
                    "the orbitals have {max_index} coefficients but the basis flags give {n_basis} functions; read with {} d, {} f, {} g functions instead",
                    if f.d { "pure" } else { "Cartesian" },
                    if f.f { "pure" } else { "Cartesian" },
                    if f.g { "pure" } else { "Cartesian" }
                ));
                flags = *f;
                n_basis = max_index;
            }
            _ if max_index > n_basis => {
                let (line, _) = mo_blocks
                    .iter()
                    .flat_map(|(_, b)| b.iter())
                    .flat_map(|m| m.coefficients.iter())
                    .find(|c| c.1 > n_basis)
                    .map_or((gto_sec.header_line, 0), |c| (c.0, c.1));
                return Err(ReadError::line(
                    path,
                    line,
                    format!("orbital coefficient index {max_index} exceeds the {n_basis} basis functions of [GTO]"),
                ));
            }
            _ => {}
        }
    }
    if n_basis > MAX_FUNCTIONS {
        return Err(ReadError::line(
            path,
            gto_sec.header_line,
            format!("{n_basis} basis functions is more than this reader accepts"),
        ));
    }
    // Writers may skip zero coefficients, but a damaged file must not make us allocate dense
    // orbitals out of all proportion to the coefficients it actually holds.
    let n_mos: usize = mo_blocks.iter().map(|(_, b)| b.len()).sum();
    let n_entries: usize = mo_blocks
        .iter()
        .flat_map(|(_, b)| b.iter())
        .map(|m| m.coefficients.len())
        .sum();
    if n_mos.saturating_mul(n_basis) > n_entries.saturating_mul(100).saturating_add(1_000_000) {
        return Err(ReadError::line(
            path,
            mo_sections.first().map_or(gto_sec.header_line, |s| s.header_line),
            format!(
                "{n_mos} orbitals over {n_basis} basis functions but only {n_entries} coefficients: the file looks damaged"
            ),
        ));
    }

    let geometries = match find("geometries") {
        Some(s) => read_geometries(path, s, atoms.len())?,
        None => Vec::new(),
    };

    let build = |positions: &[[f64; 3]], mos: &[RawMo]| -> Result<(Wavefunction, Vec<String>), ReadError> {
        let qm_atoms: Vec<QmAtom> = atoms
            .iter()
            .zip(positions)
            .map(|(a, p)| QmAtom {
                element: a.element,
                nuclear_charge: a.z,
                position_bohr: *p,
            })
            .collect();
        let shells: Vec<Shell> = raw_shells
            .iter()
            .map(|s| {
                let mut sh = Shell {
                    l: s.l,
                    pure: flags.pure(s.l),
                    atom: s.atom,
                    center_bohr: positions.get(s.atom).copied().unwrap_or([0.0; 3]),
                    exponents: s.exponents.clone(),
                    coefficients: s.coefficients.clone(),
                };
                sh.normalize_contraction();
                sh
            })
            .collect();
        let basis = BasisSet { shells };
        let mut alpha = OrbitalSet {
            n_basis,
            ..Default::default()
        };
        let mut beta = OrbitalSet {
            n_basis,
            ..Default::default()
        };
        for m in mos {
            let set = if m.beta { &mut beta } else { &mut alpha };
            set.energies_hartree.push(m.energy);
            set.occupations.push(m.occupation);
            set.symmetries.push(m.sym.clone());
            let start = set.coefficients.len();
            set.coefficients.resize(start + n_basis, 0.0);
            for &(line, idx, v) in &m.coefficients {
                match set.coefficients.get_mut(start + idx - 1) {
                    Some(c) if idx <= n_basis => *c = v,
                    _ => {
                        return Err(ReadError::line(
                            path,
                            line,
                            format!("basis function index {idx} exceeds the {n_basis} basis functions"),
                        ));
                    }
                }
            }
        }
        let mut occupation_notes = Vec::new();
        let negative: Vec<usize> = alpha
            .occupations
            .iter()
            .chain(&beta.occupations)
            .enumerate()
            .filter(|(_, o)| **o < 0.0)
            .map(|(i, _)| i)
            .collect();
        if !negative.is_empty() {
            // Dalton's ROHF files give some virtual orbitals negative "occupations".
            for o in alpha.occupations.iter_mut().chain(beta.occupations.iter_mut()) {
                if *o < 0.0 {
                    *o = 0.0;
                }
            }
            occupation_notes.push(format!(
                "{} orbitals have negative occupations; read as empty",
                negative.len()
            ));
        }
        if beta.is_empty() && closed_shell_per_spin(&alpha.occupations, &atoms, program.as_deref()) {
            for o in &mut alpha.occupations {
                *o *= 2.0;
            }
            occupation_notes.push(
                "closed shell written as alpha orbitals with occupations per spin: occupations doubled".to_string(),
            );
        }
        let spin = if !beta.is_empty() {
            SpinKind::Unrestricted
        } else if alpha.occupations.contains(&1.0)
            && alpha.occupations.iter().all(|&o| o == 0.0 || o == 1.0 || o == 2.0)
        {
            SpinKind::RestrictedOpen
        } else {
            SpinKind::Restricted
        };
        let mut wf = Wavefunction {
            atoms: qm_atoms,
            basis,
            spin,
            alpha,
            beta: if spin == SpinKind::Unrestricted {
                Some(beta)
            } else {
                None
            },
            program: program.clone(),
            corrections: Vec::new(),
            energy_hartree: None,
            scf_density: None,
        };
        if wf.alpha.is_empty() {
            return Err(ReadError::file(path, "no alpha orbitals found in [MO]"));
        }
        let mut w = occupation_notes;
        w.extend(check_and_correct(&mut wf, &trial_corrections()));
        Ok((wf, w))
    };

    let base_positions: Vec<[f64; 3]> = atoms.iter().map(|a| a.position_bohr).collect();
    if geometries.len() > 1 && mo_blocks.len() == geometries.len() {
        // Orbitals repeat once per geometry: one wavefunction each.
        for (g, (_, mos)) in geometries.iter().zip(&mo_blocks) {
            let (wf, w) = build(g, mos)?;
            out.wavefunctions.push(wf);
            warnings.extend(w);
        }
    } else {
        for (_, mos) in &mo_blocks {
            let (wf, w) = build(&base_positions, mos)?;
            out.wavefunctions.push(wf);
            warnings.extend(w);
        }
        if geometries.len() > 1 || (geometries.len() == 1 && geometries[0] != base_positions) {
            out.geometries_bohr.extend(geometries);
        }
    }
    for w in warnings {
        if !out.warnings.contains(&w) {
            out.warnings.push(w);
        }
    }
    Ok(())
}

/// True for a closed shell written as alpha orbitals only with occupations per spin (Q-Chem's
/// restricted files): every occupation 0 or 1, and twice their sum is the electron count of the
/// neutral molecule, or the file comes from Q-Chem.
fn closed_shell_per_spin(occupations: &[f64], atoms: &[Atom], program: Option<&str>) -> bool {
    if !occupations.iter().all(|&o| o == 0.0 || o == 1.0) {
        return false;
    }
    let sum: f64 = occupations.iter().sum();
    let electrons: f64 = atoms.iter().map(|a| a.z).sum();
    sum > 0.0 && ((2.0 * sum - electrons).abs() < 1e-9 || program == Some("Q-Chem"))
}

/// One way a writer may deviate from the Molden conventions, undone on the wavefunction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Correction {
    /// Cartesian functions of l >= 2 normalised as x^l rather than individually (Psi4 <= 1.3.2).
    CartesianAsXl,
    /// Cartesian functions of l >= 2 normalised as x^a y^b z^c without the double-factorial
    /// factors (CFOUR up to 2.1): the coefficient of x^a y^b z^c is scaled by
    /// sqrt((2a-1)!! (2b-1)!! (2c-1)!!).
    CfourCartesian,
    /// Every function of a Cartesian shell of l >= 2 scaled by sqrt((2l-1)!!) (Turbomole).
    TurbomoleCartesian,
    /// NWChem's Cartesian d functions: the coefficient of x^a y^b z^c is scaled by
    /// sqrt(3 (2a-1)!! (2b-1)!! (2c-1)!!) / (a! b! c!) (xx, yy, zz by 3/2; xy, xz, yz by sqrt(3)).
    /// Found from NWChem 6.x files (orthonormal to 1e-9 and the SCF energy of their density equal
    /// to NWChem's own); its Cartesian f and g functions follow another rule, not known here.
    NwchemCartesianD,
    /// Contraction coefficients refer to unnormalised primitives (ORCA, Psi4 < 1.0).
    UnnormalisedPrimitives,
    /// ORCA's sign convention for pure f (m = +-3), g and h (m = +-3, +-4) functions.
    OrcaSigns,
}

impl Correction {
    fn describe(self) -> &'static str {
        match self {
            Correction::CartesianAsXl => {
                "Cartesian functions of l >= 2 rescaled (the file normalises them as x^l, not individually)"
            }
            Correction::CfourCartesian => {
                "Cartesian functions of l >= 2 rescaled by sqrt((2a-1)!!(2b-1)!!(2c-1)!!) (CFOUR convention)"
            }
            Correction::TurbomoleCartesian => {
                "Cartesian functions of l >= 2 rescaled by sqrt((2l-1)!!) (Turbomole convention)"
            }
            Correction::NwchemCartesianD => {
                "Cartesian d functions rescaled (xx, yy, zz by 3/2; xy, xz, yz by sqrt(3): NWChem convention)"
            }
            Correction::UnnormalisedPrimitives => {
                "contraction coefficients read as coefficients of unnormalised primitives"
            }
            Correction::OrcaSigns => {
                "signs of pure f(+-3), g(+-3, +-4) and h(+-3, +-4) functions flipped (ORCA convention)"
            }
        }
    }
}

/// The conventions a program is known to use, applied from the file's evidence (its detected
/// program) before any orthonormality trial: alternatives in order of preference, the first being
/// the program's usual set (ORCA: unnormalised primitives and its signs; its signs alone where the
/// overlap shows the primitives normalised). `None`: nothing known, the Molden standard applies.
fn known_conventions(program: Option<&str>, wf: &Wavefunction) -> Option<Vec<Vec<Correction>>> {
    use Correction::*;
    let cartesian_high = wf.basis.shells.iter().any(|s| !s.pure && s.l >= 2);
    match program {
        Some("ORCA") => Some(vec![vec![UnnormalisedPrimitives, OrcaSigns], vec![OrcaSigns]]),
        Some("CFOUR") if cartesian_high => Some(vec![vec![CfourCartesian]]),
        Some("Turbomole") if cartesian_high => Some(vec![vec![TurbomoleCartesian]]),
        Some("NWChem") if wf.basis.shells.iter().any(|s| !s.pure && s.l == 2) => Some(vec![vec![NwchemCartesianD]]),
        _ => None,
    }
}

/// The corrections tried, in order, when the orbitals are not orthonormal as read.
fn trial_corrections() -> Vec<Vec<Correction>> {
    use Correction::*;
    vec![
        vec![UnnormalisedPrimitives],
        vec![CartesianAsXl],
        vec![CfourCartesian],
        vec![TurbomoleCartesian],
        vec![CartesianAsXl, UnnormalisedPrimitives],
        vec![CfourCartesian, UnnormalisedPrimitives],
        vec![UnnormalisedPrimitives, OrcaSigns],
        vec![OrcaSigns],
    ]
}

fn apply(wf: &mut Wavefunction, c: Correction) {
    let offsets = wf.basis.shell_offsets();
    let mut scales: Vec<(usize, f64)> = Vec::new();
    let odd_product = |p: &[u8; 3]| -> f64 {
        p.iter()
            .map(|&e| crate::model::basis::double_factorial(2 * i64::from(e) - 1))
            .product()
    };
    match c {
        Correction::CartesianAsXl | Correction::CfourCartesian | Correction::TurbomoleCartesian => {
            for (shell, &off) in wf.basis.shells.iter().zip(&offsets) {
                if shell.pure || shell.l < 2 {
                    continue;
                }
                let xl = crate::model::basis::double_factorial(2 * i64::from(shell.l) - 1);
                for (k, p) in cartesian_powers(shell.l).iter().enumerate() {
                    let ratio = match c {
                        Correction::CartesianAsXl => odd_product(p) / xl,
                        Correction::CfourCartesian => odd_product(p),
                        _ => xl,
                    };
                    scales.push((off + k, ratio.sqrt()));
                }
            }
        }
        Correction::NwchemCartesianD => {
            for (shell, &off) in wf.basis.shells.iter().zip(&offsets) {
                if shell.pure || shell.l != 2 {
                    continue;
                }
                for (k, p) in cartesian_powers(2).iter().enumerate() {
                    let factorials: f64 = p.iter().map(|&e| if e == 2 { 2.0 } else { 1.0 }).product();
                    scales.push((off + k, (3.0 * odd_product(p)).sqrt() / factorials));
                }
            }
        }
        Correction::UnnormalisedPrimitives => {
            for shell in &mut wf.basis.shells {
                for (c, &e) in shell.coefficients.iter_mut().zip(&shell.exponents) {
                    let n = primitive_norm(shell.l, e);
                    if n > 0.0 {
                        *c /= n;
                    }
                }
                shell.normalize_contraction();
            }
        }
        Correction::OrcaSigns => {
            for (shell, &off) in wf.basis.shells.iter().zip(&offsets) {
                if !shell.pure {
                    continue;
                }
                // Pure order m = 0, +1, -1, +2, -2, +3, -3, +4, -4: indices 5, 6 (m = +-3), 7, 8 (m = +-4).
                let flip: &[usize] = match shell.l {
                    3 => &[5, 6],
                    4 | 5 => &[5, 6, 7, 8],
                    _ => &[],
                };
                for &k in flip {
                    scales.push((off + k, -1.0));
                }
            }
        }
    }
    for (index, factor) in scales {
        scale_function(wf, index, factor);
    }
}

fn scale_function(wf: &mut Wavefunction, index: usize, factor: f64) {
    for set in std::iter::once(&mut wf.alpha).chain(wf.beta.as_mut()) {
        let n = set.n_basis;
        if n == 0 {
            continue;
        }
        for row in set.coefficients.chunks_mut(n) {
            if let Some(c) = row.get_mut(index) {
                *c *= factor;
            }
        }
    }
}

/// Largest deviation from orthonormality of the occupied orbitals (all orbitals when none is
/// marked occupied) of every set, under the basis overlap.
pub fn max_deviation(wf: &Wavefunction) -> f64 {
    let s = overlap_matrix(&wf.basis);
    let mut worst: f64 = 0.0;
    for set in std::iter::once(&wf.alpha).chain(wf.beta.as_ref()) {
        let mut which: Vec<usize> = (0..set.len())
            .filter(|&i| set.occupations.get(i).is_some_and(|&o| o > 0.0))
            .collect();
        if which.is_empty() {
            which = (0..set.len()).collect();
        }
        match orthonormality_deviation(set, &s, &which) {
            Some(d) => worst = worst.max(d),
            None => return f64::INFINITY,
        }
    }
    worst
}

fn record(wf: &mut Wavefunction, cands: &[Correction], why: &str) -> Vec<String> {
    cands
        .iter()
        .map(|c| {
            wf.corrections.push(c.describe().to_string());
            format!("{why}; applied correction: {}", c.describe())
        })
        .collect()
}

/// Applies the conventions known for the file's program (from its own evidence), then checks that
/// the occupied orbitals are orthonormal under the analytic overlap. If they are not (deviation
/// above [`ORTHONORMAL_TOLERANCE`]), each candidate list of corrections is tried on the file as
/// read and the one with the smallest deviation is kept, but only if it brings the deviation below
/// the tolerance. Every correction applied is recorded in `wf.corrections`. Returns notes: the
/// corrections applied, or how far the orbitals are from orthonormal (orbitals printed with few
/// digits reach only ~1e-5; above [`PRECISION_TOLERANCE`] the orbitals are called wrong).
pub fn check_and_correct(wf: &mut Wavefunction, candidates: &[Vec<Correction>]) -> Vec<String> {
    let mut notes = Vec::new();
    if let Some(alternatives) = known_conventions(wf.program.as_deref(), wf) {
        let program = wf.program.clone().unwrap_or_default();
        let tried: Vec<(f64, &Vec<Correction>, Wavefunction)> = alternatives
            .iter()
            .map(|known| {
                let mut trial = wf.clone();
                for &c in known {
                    apply(&mut trial, c);
                }
                (max_deviation(&trial), known, trial)
            })
            .collect();
        if let Some((_, known, trial)) = tried.iter().find(|(d, _, _)| *d <= ORTHONORMAL_TOLERANCE) {
            *wf = trial.clone();
            notes.extend(record(wf, known, &format!("{program} file")));
            return notes;
        }
        if let Some((_, known, trial)) = tried.first()
            && known.contains(&Correction::OrcaSigns)
        {
            // ORCA's signs cannot always be seen in the overlap (an atom's f(+-3) functions only
            // meet each other), so the program's evidence decides them.
            *wf = trial.clone();
            notes.extend(record(wf, known, &format!("{program} file")));
        }
    }
    let d0 = max_deviation(wf);
    if d0 <= ORTHONORMAL_TOLERANCE {
        return notes;
    }
    let mut best: Option<(f64, &Vec<Correction>, Wavefunction)> = None;
    for cands in candidates {
        let mut trial = wf.clone();
        for &c in cands {
            apply(&mut trial, c);
        }
        let d = max_deviation(&trial);
        if d <= ORTHONORMAL_TOLERANCE && best.as_ref().is_none_or(|(bd, _, _)| d < *bd) {
            best = Some((d, cands, trial));
        }
    }
    if let Some((d, cands, trial)) = best {
        *wf = trial;
        notes.extend(record(
            wf,
            cands,
            &format!("orbitals were not orthonormal (max deviation {d0:.2e}, {d:.1e} after correction)"),
        ));
        return notes;
    }
    if d0 <= PRECISION_TOLERANCE {
        notes.push(format!(
            "the occupied orbitals are orthonormal to {d0:.1e} only (the file prints few digits)"
        ));
    } else {
        notes.push(format!(
            "the occupied orbitals are not orthonormal under the basis overlap (max deviation {d0:.2e}) and no known correction fixes it; orbitals may be wrong"
        ));
    }
    notes
}

/// ORCA's conventions (Molden and Molekel files): unnormalised primitives and the signs of pure
/// f, g and h functions, then the orthonormality check. Called by the Molekel reader.
pub(crate) fn orca_conventions(wf: &mut Wavefunction) -> Vec<String> {
    wf.program = Some("ORCA".into());
    check_and_correct(wf, &trial_corrections())
}

#[cfg(test)]
mod tests {
    use super::*;

    const H2: &str = "[Molden Format]
[Title]
 test
[Atoms] Angs
H 1 1 0.0 0.0 0.0
H 2 1 0.0 0.0 0.74
[GTO]
1 0
 s 2 1.00
  1.0 0.6
  0.3 0.5

2 0
 s 2 1.00
  1.0 0.6
  0.3 0.5

[MO]
 Sym= A
 Ene= -0.5
 Spin= Alpha
 Occup= 2.0
 1 0.55
 2 0.55
 Sym= A
 Ene= 0.5
 Spin= Alpha
 Occup= 0.0
 1 1.2
 2 -1.2
";

    #[test]
    fn reads_small_file_and_normalises() {
        let m = read(Path::new("h2.molden"), H2.as_bytes()).unwrap();
        let wf = &m.wavefunctions[0];
        assert_eq!(wf.basis.n_functions(), 2);
        assert_eq!(wf.alpha.len(), 2);
        assert!((wf.atoms[1].position_bohr[2] - 0.74 / 0.529_177_210_92).abs() < 1e-9);
        assert!((wf.basis.shells[0].contraction_norm() - 1.0).abs() < 1e-12);
        assert_eq!(wf.spin, SpinKind::Restricted);
    }

    #[test]
    fn writer_quirks_are_read_and_name_the_program() {
        let p = Path::new("q.molden");
        // CFOUR: a second [Molden Format] header between [Atoms] and [GTO].
        let cfour = H2
            .replace("[GTO]", "[Molden Format]\n[GTO]")
            .replace("[Atoms] Angs", "[ATOMS] Angs");
        let m = read(p, cfour.as_bytes()).unwrap();
        assert_eq!(m.wavefunctions.len(), 1);
        assert_eq!(m.wavefunctions[0].program.as_deref(), Some("CFOUR"));
        // NWChem: exponent scale factor 0.
        let nwchem = H2.replace(" s 2 1.00", " s 2 0");
        let m = read(p, nwchem.as_bytes()).unwrap();
        assert_eq!(m.wavefunctions[0].program.as_deref(), Some("NWChem"));
        assert!((m.wavefunctions[0].basis.shells[0].exponents[0] - 1.0).abs() < 1e-15);
        assert!(read(p, H2.replace(" s 2 1.00", " s 2 -1").as_bytes()).is_err());
        // Q-Chem: a closed shell written with occupations per spin is doubled.
        let qchem = H2.replace(" Sym= A", "Sym=X").replace("Occup= 2.0", "Occup= 1.0");
        let m = read(p, qchem.as_bytes()).unwrap();
        let wf = &m.wavefunctions[0];
        assert_eq!(wf.program.as_deref(), Some("Q-Chem"));
        assert_eq!(wf.alpha.occupations, vec![2.0, 0.0]);
        assert_eq!(wf.spin, SpinKind::Restricted);
        assert!(m.warnings.iter().any(|w| w.contains("doubled")), "{:?}", m.warnings);
        // A hydrogen atom's single electron is not a closed shell per spin.
        let h = "[Molden Format]\n[Atoms] AU\nH 1 1 0 0 0\n[GTO]\n1 0\n s 1 1.0\n 1.0 1.0\n\n[MO]\n Ene= -0.5\n Spin= Alpha\n Occup= 1.0\n 1 1.0\n";
        let m = read(p, h.as_bytes()).unwrap();
        assert_eq!(m.wavefunctions[0].alpha.occupations, vec![1.0]);
        assert_eq!(m.wavefunctions[0].spin, SpinKind::RestrictedOpen);
        // Negative occupations (Dalton ROHF) are read as empty, with a note.
        let neg = H2.replace("Occup= 0.0", "Occup= -0.9");
        let m = read(p, neg.as_bytes()).unwrap();
        assert_eq!(m.wavefunctions[0].alpha.occupations, vec![2.0, 0.0]);
        assert!(m.warnings.iter().any(|w| w.contains("negative")), "{:?}", m.warnings);
    }

    #[test]
    fn rejects_bad_input_with_lines() {
        let p = Path::new("x.molden");
        let cut = &H2[..H2.len() - 10];
        let e = read(p, cut.as_bytes()).err().unwrap();
        assert!(e.to_string().contains("x.molden:"), "{e}");
        let sto = H2.replace("[GTO]", "[STO]");
        assert!(read(p, sto.as_bytes()).err().unwrap().to_string().contains("STO"));
        let nan = H2.replace("0.55", "NaN");
        assert!(read(p, nan.as_bytes()).is_err());
        let idx = H2.replace(" 2 -1.2", " 9 -1.2");
        assert!(read(p, idx.as_bytes()).err().unwrap().to_string().contains("exceeds"));
        assert!(read(p, b"").is_err());
        assert!(read(p, H2.replace("[MO]", "[XX]").as_bytes()).is_err());
    }
}
