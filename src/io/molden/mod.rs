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
//! of pure f, g, h functions; CFOUR, Turbomole and NWChem: their Cartesian normalisations) are
//! applied from that evidence (a file whose writer lost coefficients is named as such);
//! otherwise corrections are tried and one is accepted only when it makes the occupied orbitals
//! orthonormal to [`ORTHONORMAL_TOLERANCE`]. Closed shells written as alpha orbitals with
//! occupations per spin (Q-Chem) are doubled unless the file states another electron count (Molpro's
//! `_NELEC`: its open-shell files hold one spin each); negative occupations (Dalton ROHF) are read as 0.
//! Valence-only files (xtb) take nuclear charges without the cores their orbitals leave out.

use super::ReadError;
use super::text::{lines, parse_f64, parse_i64, shorten};
use crate::model::basis::{cartesian_powers, primitive_norm};
use crate::model::overlap::{orthonormality_deviation, overlap_matrix};
use crate::model::units::bohr_from_angstrom;
use crate::model::{BasisSet, Element, OrbitalSet, QmAtom, Shell, SpinKind, Wavefunction};
use std::path::Path;

mod conventions;
mod record;
mod sections;
#[cfg(test)]
mod tests;

pub(crate) use conventions::orca_conventions;
pub use conventions::{Correction, check_and_correct, max_deviation};
use record::read_record;
pub(crate) use sections::shell_l;

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
pub(super) const MAX_FUNCTIONS: usize = 100_000;
/// Deviation of C^T S C from the identity (occupied orbitals) below which orbitals count as
/// orthonormal, and that a correction must reach to be accepted.
pub const ORTHONORMAL_TOLERANCE: f64 = 1e-6;
/// Deviation up to which orbitals are only noted as imprecise (printed with few digits).
pub const PRECISION_TOLERANCE: f64 = 1e-4;

#[derive(Clone, Debug)]
pub(super) struct Line {
    pub(super) number: usize,
    pub(super) text: String,
}

#[derive(Clone, Debug)]
pub(super) struct Section {
    /// Lower-case name between the brackets.
    pub(super) name: String,
    /// Text after the closing bracket on the header line.
    pub(super) args: String,
    pub(super) header_line: usize,
    pub(super) body: Vec<Line>,
}

pub(super) fn split_sections(all: &[Line]) -> (Vec<Line>, Vec<Section>) {
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
pub(super) fn detect_program(all: &[Line]) -> Option<String> {
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
