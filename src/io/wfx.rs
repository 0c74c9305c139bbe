//! AIM wfx reader (the XML-like wavefunction format of AIMAll, Gaussian, ORCA, PySCF writers).
//!
//! Called by `io::load` through `wfn::read_wfx`. Each tag (`<Number of Nuclei>`) and its closing
//! tag sit on lines of their own. The tags are checked first, so that a tag never closed, a tag
//! closed under another name or a section under a misspelled name is reported at the line where
//! that tag opens, and a value that is not a number at its own line; then the sections are read
//! into the primitive model of `io::wfn`, which builds the wavefunction.

use super::ReadError;
use super::text::{lines, shorten};
use super::wfn::{MAX_PRIMITIVES, Primitives, aim_type_powers, build, floats};
use crate::model::{Element, QmAtom, Wavefunction};
use std::path::Path;

/// A line that is a tag: `<name>` opens, `</name>` closes.
fn tag_of(line: &str) -> Option<(bool, &str)> {
    let t = line.trim().strip_prefix('<')?.strip_suffix('>')?;
    match t.strip_prefix('/') {
        Some(name) => Some((true, name.trim())),
        None => Some((false, t.trim())),
    }
}

/// Two tag names alike but for case and runs of blanks (writers put two spaces in a closing tag).
fn same_name(a: &str, b: &str) -> bool {
    a.split_whitespace()
        .map(str::to_ascii_lowercase)
        .eq(b.split_whitespace().map(str::to_ascii_lowercase))
}

/// True when `line` is the tag `name`, opening (`closing` false) or closing.
fn is_tag(line: &str, closing: bool, name: &str) -> bool {
    tag_of(line).is_some_and(|(c, n)| c == closing && same_name(n, name))
}

/// Checks that every tag is closed, under its own name and in order; the error names the line
/// where the offending tag opens.
fn check_tags(path: &Path, all: &[(usize, String)]) -> Result<(), ReadError> {
    let mut open: Vec<(usize, &str)> = Vec::new();
    for (no, l) in all {
        let Some((closing, name)) = tag_of(l) else { continue };
        if !closing {
            open.push((*no, name));
            continue;
        }
        match open.iter().rposition(|(_, n)| same_name(n, name)) {
            Some(k) if k + 1 == open.len() => {
                open.pop();
            }
            Some(k) => {
                let (at, inner) = open.get(k + 1).copied().unwrap_or((*no, name));
                return Err(ReadError::line(
                    path,
                    at,
                    format!("<{inner}> is not closed: </{name}> (line {no}) comes before any </{inner}>"),
                ));
            }
            None => {
                return Err(match open.last() {
                    Some(&(at, inner)) => ReadError::line(
                        path,
                        at,
                        format!(
                            "<{inner}> is closed by </{name}> (line {no}): expected </{inner}>, or the tag misspelled"
                        ),
                    ),
                    None => ReadError::line(path, *no, format!("found </{name}> with no <{name}> open")),
                });
            }
        }
    }
    match open.last() {
        Some(&(at, name)) => Err(ReadError::line(
            path,
            at,
            format!("<{name}> is never closed (expected </{name}> before the end of the file)"),
        )),
        None => Ok(()),
    }
}

/// Edit distance of two short ASCII names, case-insensitive.
fn distance(a: &str, b: &str) -> usize {
    let (a, b) = (a.to_ascii_lowercase().into_bytes(), b.to_ascii_lowercase().into_bytes());
    let mut row: Vec<usize> = (0..=b.len()).collect();
    for (i, ca) in a.iter().enumerate() {
        let mut diag = row.first().copied().unwrap_or(0);
        if let Some(first) = row.first_mut() {
            *first = i + 1;
        }
        for (j, cb) in b.iter().enumerate() {
            let (up, left) = (row.get(j + 1).copied().unwrap_or(0), row.get(j).copied().unwrap_or(0));
            let best = (diag + usize::from(ca != cb)).min(up + 1).min(left + 1);
            diag = up;
            if let Some(slot) = row.get_mut(j + 1) {
                *slot = best;
            }
        }
    }
    row.last().copied().unwrap_or(0)
}

/// The error for a required section that is absent: at the line of a tag whose name is nearly
/// `tag` (a misspelling), else for the whole file.
fn missing(path: &Path, all: &[(usize, String)], tag: &str) -> ReadError {
    let near = all
        .iter()
        .filter_map(|(no, l)| tag_of(l).filter(|(closing, _)| !closing).map(|(_, n)| (*no, n)))
        .filter(|(_, n)| !same_name(n, tag))
        .map(|(no, n)| (distance(n, tag), no, n))
        .filter(|&(d, _, _)| d <= 3.max(tag.len() / 6))
        .min_by_key(|&(d, no, _)| (d, no));
    match near {
        Some((_, no, name)) => ReadError::line(
            path,
            no,
            format!("expected <{tag}>, found <{name}> (misspelled?); the file has no <{tag}> section"),
        ),
        None => ReadError::file(path, format!("expected a <{tag}> section, found none")),
    }
}

/// The lines between `<tag>` and `</tag>` (first occurrence), each with its number, and the
/// number of the opening tag's line.
type Block<'a> = (usize, Vec<(usize, &'a str)>);

fn wfx_block<'a>(all: &'a [(usize, String)], tag: &str) -> Option<Block<'a>> {
    let start = all.iter().position(|(_, l)| is_tag(l, false, tag))?;
    let mut out = Vec::new();
    for (no, l) in all.get(start + 1..)? {
        if is_tag(l, true, tag) {
            return Some((all.get(start).map_or(0, |x| x.0), out));
        }
        out.push((*no, l.as_str()));
    }
    None
}

/// Reads an AIM wfx file.
pub fn read_wfx(path: &Path, bytes: &[u8]) -> Result<Wavefunction, ReadError> {
    let all: Vec<(usize, String)> = lines(bytes)
        .map(|(n, b)| (n, String::from_utf8_lossy(b).into_owned()))
        .collect();
    check_tags(path, &all)?;
    let block = |tag: &str| wfx_block(&all, tag).ok_or_else(|| missing(path, &all, tag));
    let numbers = |tag: &str| -> Result<(usize, Vec<f64>), ReadError> {
        let (n, body) = block(tag)?;
        let mut v = Vec::new();
        for (no, l) in body {
            v.extend(floats(l, 20).ok_or_else(|| {
                ReadError::line(
                    path,
                    no,
                    format!("<{tag}> (line {n}): expected numbers, found {:?}", shorten(l.trim())),
                )
            })?);
        }
        Ok((n, v))
    };
    let count = |tag: &str, max: usize| -> Result<usize, ReadError> {
        let (n, v) = numbers(tag)?;
        let value_line = wfx_block(&all, tag)
            .and_then(|(_, body)| body.iter().find(|(_, l)| !l.trim().is_empty()).map(|x| x.0))
            .unwrap_or(n);
        match v.as_slice() {
            [x] if *x >= 0.0 && x.fract() == 0.0 && *x <= max as f64 => Ok(*x as usize),
            _ => Err(ReadError::line(
                path,
                value_line,
                format!(
                    "<{tag}> (line {n}): expected one count up to {max}, found {}",
                    if v.is_empty() {
                        "none".to_string()
                    } else {
                        format!("{v:?}")
                    }
                ),
            )),
        }
    };
    let limit = bytes.len() / 2;
    let n_atoms = count("Number of Nuclei", limit)?;
    let n_prim = count("Number of Primitives", limit.min(MAX_PRIMITIVES))?;
    let n_mo = count("Number of Occupied Molecular Orbitals", limit)?;
    let (zl, z) = numbers("Atomic Numbers")?;
    let (cl, coords) = numbers("Nuclear Cartesian Coordinates")?;
    if z.len() != n_atoms || coords.len() != 3 * n_atoms {
        return Err(ReadError::line(
            path,
            cl.max(zl),
            format!("expected {n_atoms} atomic numbers and {} coordinates", 3 * n_atoms),
        ));
    }
    let charges = numbers("Nuclear Charges")
        .ok()
        .map(|x| x.1)
        .filter(|c| c.len() == n_atoms);
    let atoms: Vec<QmAtom> = (0..n_atoms)
        .map(|i| QmAtom {
            element: Element::from_number(z[i].max(0.0) as u32).unwrap_or(Element::UNKNOWN),
            nuclear_charge: charges.as_ref().map_or(z[i], |c| c[i]),
            position_bohr: [coords[3 * i], coords[3 * i + 1], coords[3 * i + 2]],
        })
        .collect();
    let (pcl, pc) = numbers("Primitive Centers")?;
    let (ptl, pt) = numbers("Primitive Types")?;
    let (pel, pe) = numbers("Primitive Exponents")?;
    if pc.len() != n_prim || pt.len() != n_prim || pe.len() != n_prim {
        return Err(ReadError::line(
            path,
            pcl,
            format!(
                "expected {n_prim} primitive centres, types and exponents, found {}, {} and {}",
                pc.len(),
                pt.len(),
                pe.len()
            ),
        ));
    }
    let mut centers = Vec::with_capacity(n_prim);
    for &c in &pc {
        if c < 1.0 || c > n_atoms as f64 || c.fract() != 0.0 {
            return Err(ReadError::line(
                path,
                pcl,
                format!("primitive centre {c} is out of range ({n_atoms} nuclei)"),
            ));
        }
        centers.push(c as usize - 1);
    }
    let mut types = Vec::with_capacity(n_prim);
    for &t in &pt {
        types.push(
            aim_type_powers(t as usize)
                .filter(|_| t.fract() == 0.0 && t >= 1.0)
                .ok_or_else(|| ReadError::line(path, ptl, format!("primitive type {t} is not supported (1..=56)")))?,
        );
    }
    if let Some(e) = pe.iter().find(|&&e| e <= 0.0) {
        return Err(ReadError::line(
            path,
            pel,
            format!("expected positive exponents, found {e}"),
        ));
    }
    let (ol, occ) = numbers("Molecular Orbital Occupation Numbers")?;
    let (_, ene) = numbers("Molecular Orbital Energies")?;
    if occ.len() != n_mo || ene.len() != n_mo {
        return Err(ReadError::line(
            path,
            ol,
            format!(
                "expected {n_mo} occupations and energies, found {} and {}",
                occ.len(),
                ene.len()
            ),
        ));
    }
    let spins: Vec<Option<bool>> = match wfx_block(&all, "Molecular Orbital Spin Types") {
        Some((_, body)) => body
            .iter()
            .map(|(_, l)| l.trim())
            .filter(|l| !l.is_empty())
            .map(|l| match l.to_ascii_lowercase().as_str() {
                "alpha" => Some(false),
                "beta" => Some(true),
                _ => None,
            })
            .collect(),
        None => vec![None; n_mo],
    };
    let (ml, body) = block("Molecular Orbital Primitive Coefficients")?;
    let mut orbitals: Vec<(f64, f64, Option<bool>, Vec<f64>)> = Vec::with_capacity(n_mo.min(4096));
    let mut current: Option<Vec<f64>> = None;
    let mut skip_number = false;
    for (no, l) in body {
        let t = l.trim();
        if t == "<MO Number>" {
            if let Some(c) = current.take() {
                orbitals.push((0.0, 0.0, None, c));
            }
            skip_number = true;
            continue;
        }
        if t == "</MO Number>" {
            skip_number = false;
            current = Some(Vec::new());
            continue;
        }
        if skip_number || t.is_empty() {
            continue;
        }
        let Some(c) = current.as_mut() else {
            return Err(ReadError::line(
                path,
                no,
                "expected <MO Number> before orbital coefficients",
            ));
        };
        c.extend(floats(t, 20).ok_or_else(|| {
            ReadError::line(
                path,
                no,
                format!("expected orbital coefficients, found {:?}", shorten(t)),
            )
        })?);
        if c.len() > n_prim {
            return Err(ReadError::line(
                path,
                no,
                format!("orbital {} has more than {n_prim} coefficients", orbitals.len() + 1),
            ));
        }
    }
    if let Some(c) = current.take() {
        orbitals.push((0.0, 0.0, None, c));
    }
    if orbitals.len() != n_mo {
        return Err(ReadError::line(
            path,
            ml,
            format!("expected {n_mo} orbitals, found {}", orbitals.len()),
        ));
    }
    for (k, o) in orbitals.iter_mut().enumerate() {
        if o.3.len() != n_prim {
            return Err(ReadError::line(
                path,
                ml,
                format!("orbital {} has {} coefficients, expected {n_prim}", k + 1, o.3.len()),
            ));
        }
        o.0 = occ[k];
        o.1 = ene[k];
        o.2 = spins.get(k).copied().flatten();
    }
    let energy = numbers("Energy").ok().and_then(|(_, v)| v.first().copied());
    let title = wfx_block(&all, "Title")
        .map(|(_, b)| b.iter().map(|(_, l)| *l).collect::<Vec<_>>().join(" "))
        .unwrap_or_default();
    build(
        path,
        Primitives {
            atoms,
            centers,
            types,
            exponents: pe,
            orbitals,
            energy,
            title,
        },
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_are_checked_where_they_open() {
        let p = Path::new("x.wfx");
        let e = read_wfx(p, b"<Title>\nt\n</Title>\n<Number of Nuclei>\n1\n").unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(4), "{e}");
        let e = read_wfx(p, b"<Title>\nt\n</Titel>\n<Number of Nuclei>\n1\n</Number of Nuclei>\n").unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(1), "{e}");
        let e = read_wfx(p, b"</Title>\n").unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(1), "{e}");
        assert_eq!(distance("Number of Nucle", "Number of Nuclei"), 1);
        assert_eq!(distance("", "abc"), 3);
    }
}
