//! Molekel (`.mkl`) reader: the wavefunction files ORCA writes with `orca_2mkl NAME` (without
//! `-molden`).
//!
//! Owns the conversion of the Molekel sections (`$CHAR_MULT`, `$COORD` with atomic numbers and
//! Angstrom positions, `$BASIS` with `$$` between atoms and shells given by their function count,
//! `$COEFF_ALPHA`/`$COEFF_BETA` in blocks of up to five orbitals, `$OCC_ALPHA`/`$OCC_BETA`) to the
//! internal conventions of `model::basis`. The component order is Molden's; the primitive
//! normalisation and the signs of pure f, g and h functions are ORCA's, undone by the same
//! corrections as ORCA's Molden files (`molden::orca_conventions`). Called by `io::load`.

use super::ReadError;
use super::molden::{orca_conventions, shell_l};
use super::text::{lines, parse_f64, parse_i64, shorten};
use crate::model::units::bohr_from_angstrom;
use crate::model::{BasisSet, Element, OrbitalSet, QmAtom, Shell, SpinKind, Wavefunction};
use std::path::Path;

/// A Molekel file: one wavefunction and the reader's notes.
pub struct MklFile {
    pub wavefunction: Wavefunction,
    pub warnings: Vec<String>,
}

/// Largest basis accepted (a damaged file must not make us allocate without bound).
const MAX_FUNCTIONS: usize = 100_000;

struct Line<'a> {
    number: usize,
    text: &'a str,
}

/// The body lines of each `$NAME ... $END` section, in file order.
fn sections<'a>(path: &Path, all: &'a [(usize, String)]) -> Result<Vec<(String, usize, Vec<Line<'a>>)>, ReadError> {
    let mut out: Vec<(String, usize, Vec<Line<'a>>)> = Vec::new();
    let mut open = false;
    for (number, text) in all {
        let t = text.trim();
        if t.eq_ignore_ascii_case("$end") {
            open = false;
            continue;
        }
        if let Some(name) = t.strip_prefix('$')
            && !name.starts_with('$')
            && !name.is_empty()
        {
            if open && let Some((prev, line, _)) = out.last() {
                return Err(ReadError::line(
                    path,
                    *number,
                    format!("section ${prev} (line {line}) is not closed by $END before ${name}"),
                ));
            }
            out.push((name.to_ascii_uppercase(), *number, Vec::new()));
            open = !name.eq_ignore_ascii_case("mkl");
            continue;
        }
        if open && let Some((_, _, body)) = out.last_mut() {
            body.push(Line {
                number: *number,
                text: text.as_str(),
            });
        }
    }
    Ok(out)
}

struct RawShell {
    l: u8,
    pure: bool,
    atom: usize,
    exponents: Vec<f64>,
    coefficients: Vec<f64>,
}

fn read_basis(path: &Path, header: usize, body: &[Line], n_atoms: usize) -> Result<Vec<RawShell>, ReadError> {
    let mut shells: Vec<RawShell> = Vec::new();
    let mut atom = 0usize;
    for l in body {
        let t: Vec<&str> = l.text.split_whitespace().collect();
        match t.as_slice() {
            [] => {}
            ["$$"] => atom += 1,
            [count, kind, _scale] => {
                let Some(lv) = shell_l(&kind.to_ascii_lowercase()) else {
                    return Err(ReadError::line(
                        path,
                        l.number,
                        format!("expected a shell type (S, P, D, F, G, H), found {:?}", shorten(kind)),
                    ));
                };
                let n = parse_i64(path, l.number, "the shell's function count", count.as_bytes())?;
                let li = i64::from(lv);
                let pure = if n == 2 * li + 1 && lv >= 2 {
                    true
                } else if n == (li + 1) * (li + 2) / 2 {
                    false
                } else {
                    return Err(ReadError::line(
                        path,
                        l.number,
                        format!(
                            "a {kind} shell has {} (pure) or {} (Cartesian) functions, found {n}",
                            2 * li + 1,
                            (li + 1) * (li + 2) / 2
                        ),
                    ));
                };
                if atom >= n_atoms {
                    return Err(ReadError::line(
                        path,
                        l.number,
                        format!("shell on atom {} but $COORD lists {n_atoms} atoms", atom + 1),
                    ));
                }
                shells.push(RawShell {
                    l: lv,
                    pure,
                    atom,
                    exponents: Vec::new(),
                    coefficients: Vec::new(),
                });
            }
            [e, c] => {
                let Some(s) = shells.last_mut() else {
                    return Err(ReadError::line(
                        path,
                        l.number,
                        format!("expected a shell header before {:?}", shorten(l.text.trim())),
                    ));
                };
                let e = parse_f64(path, l.number, "an exponent", e.as_bytes())?;
                if !(e > 0.0 && e.is_finite()) {
                    return Err(ReadError::line(
                        path,
                        l.number,
                        format!("expected a positive exponent, found {e}"),
                    ));
                }
                s.exponents.push(e);
                s.coefficients
                    .push(parse_f64(path, l.number, "a contraction coefficient", c.as_bytes())?);
            }
            _ => {
                return Err(ReadError::line(
                    path,
                    l.number,
                    format!(
                        "expected a shell header 'count type scale' or 'exponent coefficient', found {:?}",
                        shorten(l.text.trim())
                    ),
                ));
            }
        }
    }
    if shells.is_empty() {
        return Err(ReadError::line(
            path,
            header,
            "expected shells after $BASIS, found none",
        ));
    }
    if let Some(s) = shells.iter().find(|s| s.exponents.is_empty()) {
        return Err(ReadError::line(
            path,
            header,
            format!("a shell on atom {} has no primitives", s.atom + 1),
        ));
    }
    Ok(shells)
}

/// Orbitals of a `$COEFF_*` section: blocks of a symmetry line, an energy line and one line per
/// basis function with one value per orbital of the block.
fn read_coefficients(path: &Path, header: usize, body: &[Line], n_basis: usize) -> Result<OrbitalSet, ReadError> {
    let mut set = OrbitalSet {
        n_basis,
        ..Default::default()
    };
    let rows: Vec<&Line> = body.iter().filter(|l| !l.text.trim().is_empty()).collect();
    let mut i = 0;
    while let Some(sym) = rows.get(i) {
        let syms: Vec<&str> = sym.text.split_whitespace().collect();
        let ncol = syms.len();
        let Some(ene) = rows.get(i + 1) else {
            return Err(ReadError::line(
                path,
                sym.number,
                "expected orbital energies after the symmetry line",
            ));
        };
        let energies: Vec<&str> = ene.text.split_whitespace().collect();
        if energies.len() != ncol {
            return Err(ReadError::line(
                path,
                ene.number,
                format!("expected {ncol} orbital energies, found {}", energies.len()),
            ));
        }
        let start = set.coefficients.len();
        set.coefficients.resize(start + ncol * n_basis, 0.0);
        for (s, e) in syms.iter().zip(&energies) {
            set.symmetries.push((*s).to_string());
            set.energies_hartree
                .push(parse_f64(path, ene.number, "an orbital energy", e.as_bytes())?);
        }
        for b in 0..n_basis {
            let Some(row) = rows.get(i + 2 + b) else {
                return Err(ReadError::line(
                    path,
                    rows.last().map_or(header, |l| l.number),
                    format!("the section ends after {b} of {n_basis} coefficient lines"),
                ));
            };
            let v: Vec<&str> = row.text.split_whitespace().collect();
            if v.len() != ncol {
                return Err(ReadError::line(
                    path,
                    row.number,
                    format!("expected {ncol} coefficients, found {}", v.len()),
                ));
            }
            for (k, x) in v.iter().enumerate() {
                let c = parse_f64(path, row.number, "an MO coefficient", x.as_bytes())?;
                if let Some(slot) = set.coefficients.get_mut(start + k * n_basis + b) {
                    *slot = c;
                }
            }
        }
        i += 2 + n_basis;
    }
    if set.is_empty() {
        return Err(ReadError::line(
            path,
            header,
            "expected orbitals in this section, found none",
        ));
    }
    Ok(set)
}

fn read_occupations(path: &Path, body: &[Line]) -> Result<Vec<f64>, ReadError> {
    let mut v = Vec::new();
    for l in body {
        for w in l.text.split_whitespace() {
            v.push(parse_f64(path, l.number, "an occupation", w.as_bytes())?);
        }
    }
    Ok(v)
}

/// Reads a Molekel file.
pub fn read(path: &Path, bytes: &[u8]) -> Result<MklFile, ReadError> {
    let all: Vec<(usize, String)> = lines(bytes)
        .map(|(n, b)| (n, String::from_utf8_lossy(b).into_owned()))
        .collect();
    let secs = sections(path, &all)?;
    if !secs.iter().any(|(n, _, _)| n == "MKL") {
        return Err(ReadError::file(
            path,
            "expected a Molekel file starting with $MKL, found none",
        ));
    }
    let find = |name: &str| secs.iter().find(|(n, _, _)| n == name);
    let missing = |name: &str| ReadError::file(path, format!("missing ${name} section"));

    let (_, coord_line, coord) = find("COORD").ok_or_else(|| missing("COORD"))?;
    let mut atoms = Vec::new();
    for l in coord {
        let t: Vec<&str> = l.text.split_whitespace().collect();
        if t.is_empty() {
            continue;
        }
        if t.len() < 4 {
            return Err(ReadError::line(
                path,
                l.number,
                format!("expected 'Z x y z', found {:?}", shorten(l.text.trim())),
            ));
        }
        let z = parse_i64(path, l.number, "an atomic number", t[0].as_bytes())?;
        let mut p = [0.0; 3];
        for k in 0..3 {
            p[k] = bohr_from_angstrom(parse_f64(path, l.number, "a coordinate", t[1 + k].as_bytes())?);
        }
        atoms.push(QmAtom {
            element: u32::try_from(z)
                .ok()
                .and_then(Element::from_number)
                .unwrap_or(Element::UNKNOWN),
            nuclear_charge: z.max(0) as f64,
            position_bohr: p,
        });
    }
    if atoms.is_empty() {
        return Err(ReadError::line(
            path,
            *coord_line,
            "expected atoms after $COORD, found none",
        ));
    }
    let (_, basis_line, basis_body) = find("BASIS").ok_or_else(|| missing("BASIS"))?;
    let raw = read_basis(path, *basis_line, basis_body, atoms.len())?;
    let shells: Vec<Shell> = raw
        .into_iter()
        .map(|s| {
            let mut sh = Shell {
                l: s.l,
                pure: s.pure,
                atom: s.atom,
                center_bohr: atoms.get(s.atom).map_or([0.0; 3], |a| a.position_bohr),
                exponents: s.exponents,
                coefficients: s.coefficients,
            };
            sh.normalize_contraction();
            sh
        })
        .collect();
    let basis = BasisSet { shells };
    let n_basis = basis.n_functions();
    if n_basis > MAX_FUNCTIONS {
        return Err(ReadError::line(
            path,
            *basis_line,
            format!("{n_basis} basis functions is more than this reader accepts"),
        ));
    }
    let orbitals = |coeff: &str, occ: &str| -> Result<Option<OrbitalSet>, ReadError> {
        let Some((_, line, body)) = find(coeff) else {
            return Ok(None);
        };
        let mut set = read_coefficients(path, *line, body, n_basis)?;
        let (_, oline, obody) = find(occ).ok_or_else(|| missing(occ))?;
        let occupations = read_occupations(path, obody)?;
        if occupations.len() != set.len() {
            return Err(ReadError::line(
                path,
                *oline,
                format!(
                    "${occ} gives {} occupations for {} orbitals",
                    occupations.len(),
                    set.len()
                ),
            ));
        }
        set.occupations = occupations;
        Ok(Some(set))
    };
    let alpha = orbitals("COEFF_ALPHA", "OCC_ALPHA")?.ok_or_else(|| missing("COEFF_ALPHA"))?;
    let beta = orbitals("COEFF_BETA", "OCC_BETA")?;
    let spin = if beta.is_some() {
        SpinKind::Unrestricted
    } else if alpha.occupations.contains(&1.0) {
        SpinKind::RestrictedOpen
    } else {
        SpinKind::Restricted
    };
    let mut wf = Wavefunction {
        atoms,
        basis,
        spin,
        alpha,
        beta,
        program: Some("ORCA".into()),
        corrections: Vec::new(),
        energy_hartree: None,
        scf_density: None,
    };
    let warnings = orca_conventions(&mut wf);
    Ok(MklFile {
        wavefunction: wf,
        warnings,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    const H2: &str = "$MKL
#
$CHAR_MULT
  0 1
$END

$COORD
 1 0.0 0.0 0.0
 1 0.0 0.0 0.74
$END

$BASIS
 1 S 1.0
   1.0 0.6
   0.3 0.5
$$
 1 S 1.0
   1.0 0.6
   0.3 0.5
$END

$COEFF_ALPHA
 a1g a1u
 -0.5 0.5
 0.55 1.2
 0.55 -1.2
$END

$OCC_ALPHA
 2.0 0.0
$END
";

    #[test]
    fn reads_small_file_and_rejects_damage() {
        let p = Path::new("h2.mkl");
        let m = read(p, H2.as_bytes()).unwrap();
        assert_eq!(m.wavefunction.basis.n_functions(), 2);
        assert_eq!(m.wavefunction.alpha.len(), 2);
        assert_eq!(m.wavefunction.alpha.occupations, vec![2.0, 0.0]);
        assert!((m.wavefunction.atoms[1].position_bohr[2] - 0.74 / 0.529_177_210_92).abs() < 1e-9);
        for bad in [
            H2.replace(" 0.55 -1.2\n", ""),
            H2.replace("1 S 1.0\n   1.0 0.6\n   0.3 0.5\n$END", "4 S 1.0\n   1.0 0.6\n$END"),
            H2.replace("2.0 0.0", "2.0"),
            H2.replace("$COORD", "$CORD"),
            H2.replace("0.74", "x"),
            String::new(),
        ] {
            if bad == H2 {
                continue;
            }
            let e = read(p, bad.as_bytes()).err().unwrap();
            assert!(e.to_string().contains("h2.mkl"), "{e}");
        }
    }
}
