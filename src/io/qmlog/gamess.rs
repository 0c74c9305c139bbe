//! GAMESS-US and Firefly log reader, called through [`super::read`] (and directly by tests and
//! fuzzing).
//!
//! Reads the `COORDINATES (BOHR)` table and every `COORDINATES OF ALL ATOMS ARE (ANGS)` table of an
//! optimisation, scan or IRC, every `SURFACE MAPPING GEOMETRY` of a `RUNTYP=SURFACE` scan (GAMESS's
//! own frame, e.g. after `COORD=PRINAXIS`, which is the one its orbitals use), charge, multiplicity
//! (GAMESS-US's `SPIN MULTIPLICITY`, Firefly's `STATE MULTIPLICITY` under the charge) and
//! occupied-orbital counts, `FINAL ... ENERGY IS` energies (a geometry's first: the others a
//! numerical Hessian or Raman job prints before the next geometry are at displaced points or under
//! applied fields), the "ATOMIC BASIS SET" printout, and the `EIGENVECTORS` / `MOLECULAR ORBITALS`
//! blocks (with `----- ALPHA SET -----` / `----- BETA SET -----` for UHF; notices Firefly prints
//! between a heading and its first block are skipped); without the basis printout (a semi-empirical
//! job) the orbitals' energies are kept as the log's levels. A search that stops short ("FAILURE TO
//! LOCATE STATIONARY POINT") is said in a warning, and the "next predicted" geometry it prints
//! after it, never computed, is not a step.
//!
//! The basis printout lists only symmetry-unique atoms; GAMESS numbers shells over all atoms and
//! places symmetry-equivalent atoms next to each other, so the shell numbers tell how many atoms
//! each printed group covers. Contraction coefficients are those of normalised primitives (GAMESS
//! 2018 prints them plainly; Firefly and older versions print them in parentheses after the
//! unnormalised ones, which are ignored). Orbitals are always expressed over Cartesian functions
//! (also under `ISPHER=1`, where fewer orbitals than functions are printed), each normalised,
//! in GAMESS's order (d: XX YY ZZ XY XZ YZ; f: XXX YYY ZZZ XXY XXZ YYX YYZ ZZX ZZY XYZ), which the
//! printed labels map onto the model's order.

use super::{
    Ao, Collected, Geometry, Lines, PrintedOrbitals, Program, RawOrbitals, ShellTemplate, bohr_from, contains,
    element_from_charge, int, is_blank, l_of_letter, num, row_values, text, tokens, trim, trim_start,
};
use crate::io::ReadError;
use crate::model::Element;
use std::path::Path;

const FIELD_WIDTH: usize = 11;

/// An ECP's core of one atom, from `PARAMETERS FOR "MO-ECP  " ON ATOM    1 WITH ZCORE  28 AND LMAX
/// 3 ARE` or `... ON ATOM    4 ARE THE SAME AS ATOM   3` (0-based atoms; an atom already known keeps
/// its core, as the block is printed again at later geometries).
fn ecp_core(t: &[u8], cores: &mut Vec<(usize, u32)>) {
    let Some(at) = memchr::memmem::find(t, b"ON ATOM") else {
        return;
    };
    let words: Vec<&[u8]> = tokens(&t[at + 7..]).collect();
    let Some(atom) = words
        .first()
        .and_then(|w| int(w))
        .and_then(|n| usize::try_from(n - 1).ok())
    else {
        return;
    };
    if cores.iter().any(|&(i, _)| i == atom) {
        return;
    }
    let core = match words.iter().position(|w| *w == b"ZCORE") {
        Some(k) => words
            .get(k + 1)
            .and_then(|w| int(w))
            .and_then(|n| u32::try_from(n).ok()),
        None if contains(t, b"SAME AS ATOM") => {
            let other = words
                .last()
                .and_then(|w| int(w))
                .and_then(|n| usize::try_from(n - 1).ok());
            other.and_then(|o| cores.iter().find(|&&(i, _)| i == o).map(|&(_, c)| c))
        }
        None => None,
    };
    if let Some(core) = core.filter(|&c| c > 0) {
        cores.push((atom, core));
    }
}
const MAX_ITEMS: usize = 1_000_000;

/// Reads a GAMESS or Firefly log. See the module documentation.
pub fn read(path: &Path, bytes: &[u8]) -> Result<super::QmLog, ReadError> {
    super::check_program(path, bytes, Program::Gamess)?;
    let c = collect(path, bytes)?;
    super::finish(path, c)
}

fn after_equals<T>(t: &[u8], parse: impl Fn(&[u8]) -> Option<T>) -> Option<T> {
    let i = t.iter().position(|&b| b == b'=')?;
    tokens(&t[i + 1..]).next().and_then(parse)
}

fn collect(path: &Path, bytes: &[u8]) -> Result<Collected, ReadError> {
    let mut c = Collected::new(
        Program::Gamess,
        "the basis set printout (\"ATOMIC BASIS SET\") is missing; it is printed unless output is reduced (use NPRINT of -5 or more in $CONTRL)",
        "no EIGENVECTORS were printed: raise the print level (NPRINT=3 or more in $CONTRL) or do not suppress the orbitals (e.g. NPRINT=-5)",
    );
    let mut n_shells_total: Option<usize> = None;
    let mut raw_basis: Option<Vec<Group>> = None;
    let mut next_is_beta = false;
    let mut predicted = false;
    // Line of the last "CHARGE OF MOLECULE": Firefly's "STATE MULTIPLICITY" follows it.
    let mut charge_line = 0;
    let mut lines = Lines::new(bytes);
    while let Some(line) = lines.next_line() {
        let t = trim_start(line);
        let Some(&first) = t.first() else { continue };
        match first {
            b'A' => {
                if t.starts_with(b"ATOM      ATOMIC") && contains(t, b"COORDINATES (BOHR)") {
                    let g = read_table(path, &mut lines, false)?;
                    c.push_geometry(g);
                } else if t.starts_with(b"ATOMIC BASIS SET") && raw_basis.is_none() {
                    raw_basis = Some(read_basis(path, &mut lines)?);
                }
            }
            b'C' => {
                if t.starts_with(b"COORDINATES OF ALL ATOMS ARE (ANGS)") {
                    let g = read_table(path, &mut lines, true)?;
                    if predicted {
                        // The next geometry a search that stopped short would try: never computed.
                        predicted = false;
                    } else {
                        c.push_geometry(g);
                    }
                } else if t.starts_with(b"CHARGE OF MOLECULE") {
                    c.charge = after_equals(t, int).and_then(|v| i32::try_from(v).ok());
                    charge_line = lines.line_no();
                }
            }
            b'S' => {
                // Firefly writes "STATE MULTIPLICITY" under the charge; GAMESS-US's "STATE
                // MULTIPLICITY" lines elsewhere are excited states'.
                if t.starts_with(b"SPIN MULTIPLICITY")
                    || (t.starts_with(b"STATE MULTIPLICITY") && charge_line > 0 && lines.line_no() == charge_line + 1)
                {
                    c.multiplicity = after_equals(t, int).and_then(|v| u32::try_from(v).ok());
                } else if t.starts_with(b"SCFTYP=ROHF") || t.starts_with(b"SCFTYP=GVB") {
                    c.restricted_open = true;
                }
            }
            b'N' => {
                if t.starts_with(b"NUMBER OF OCCUPIED ORBITALS (ALPHA)") {
                    c.n_alpha = after_equals(t, int).and_then(|v| usize::try_from(v).ok());
                } else if t.starts_with(b"NUMBER OF OCCUPIED ORBITALS (BETA") {
                    c.n_beta = after_equals(t, int).and_then(|v| usize::try_from(v).ok());
                }
            }
            b'T' => {
                if t.starts_with(b"TOTAL NUMBER OF BASIS SET SHELLS") {
                    n_shells_total = after_equals(t, int).and_then(|v| usize::try_from(v).ok());
                } else if t.starts_with(b"THE NEXT PREDICTED SET OF COORDINATES FOLLOWS") {
                    predicted = true;
                }
            }
            b'1' | b'*' if contains(t, b"FAILURE TO LOCATE STATIONARY POINT") => {
                c.warnings.push(format!(
                    "line {}: the geometry search did not converge (\"FAILURE TO LOCATE STATIONARY POINT\"): its last step is not a stationary point",
                    lines.line_no()
                ));
            }
            b'F' => {
                if t.starts_with(b"FINAL ") && contains(t, b"ENERGY IS") {
                    let e = t
                        .windows(9)
                        .position(|w| w == b"ENERGY IS")
                        .and_then(|i| tokens(&t[i + 9..]).next())
                        .and_then(num)
                        .ok_or_else(|| {
                            ReadError::line(
                                path,
                                lines.line_no(),
                                format!("expected `FINAL ... ENERGY IS value`, found {:?}", text(t)),
                            )
                        })?;
                    // A geometry's first SCF: later ones before the next geometry are a numerical
                    // Hessian's displaced points or a Raman job's applied fields, not this frame's.
                    if c.steps.last().is_some_and(|s| s.energy_hartree.is_none()) {
                        c.set_energy(e);
                    }
                } else if c.version.is_none() && t.starts_with(b"Firefly version") {
                    c.version = Some(String::from_utf8_lossy(trim(t)).into_owned());
                }
            }
            b'*' => {
                if c.version.is_none()
                    && let Some(i) = memchr::memmem::find(t, b"GAMESS VERSION =")
                {
                    let v = trim(&t[i + 16..]);
                    let v = v.strip_suffix(b"*").map(trim).unwrap_or(v);
                    c.version = Some(String::from_utf8_lossy(v).into_owned());
                }
            }
            b'P' if t.starts_with(b"PARAMETERS FOR") => ecp_core(t, &mut c.ecp_cores),
            b'-' => {
                if t.starts_with(b"---- SURFACE MAPPING GEOMETRY") {
                    let (g, energy) = read_surface_point(path, &mut lines)?;
                    // Five decimals of an Angstrom: the first point repeats the input geometry.
                    c.push_rounded_geometry(g, bohr_from([1e-4, 0.0, 0.0])[0]);
                    if let Some(e) = energy {
                        c.set_energy(e);
                    }
                } else if contains(t, b"BETA SET") {
                    next_is_beta = true;
                } else if contains(t, b"ALPHA SET") {
                    next_is_beta = false;
                }
            }
            b'E' => {
                let tt = trim(t);
                if tt == b"EIGENVECTORS" {
                    read_orbitals(path, &mut lines, &mut c, &mut next_is_beta)?;
                } else if tt.starts_with(b"EXECUTION OF GAMESS TERMINATED")
                    || tt.starts_with(b"EXECUTION OF FIREFLY TERMINATED")
                {
                    if contains(tt, b"NORMALLY") && !contains(tt, b"ABNORMALLY") {
                        c.terminated_normally = true;
                    } else if c.error_line.is_none() {
                        c.error_line = Some((lines.line_no(), text(tt)));
                    }
                }
            }
            b'M' if trim(t) == b"MOLECULAR ORBITALS" => {
                read_orbitals(path, &mut lines, &mut c, &mut next_is_beta)?;
            }
            _ => {}
        }
    }
    if let Some(groups) = raw_basis {
        c.shells_per_atom = Some(expand_groups(path, groups, n_shells_total)?);
    }
    Ok(c)
}

/// Reads an orbital section (after its heading) and attaches it to the current step.
fn read_orbitals(path: &Path, lines: &mut Lines, c: &mut Collected, next_is_beta: &mut bool) -> Result<(), ReadError> {
    // The heading is underlined with dashes.
    let save = *lines;
    match lines.next_line() {
        Some(l) if trim(l).starts_with(b"---") => {}
        _ => {
            *lines = save;
            return Ok(());
        }
    }
    let (raw, labels) = read_mo_blocks(path, lines)?;
    if *next_is_beta {
        *next_is_beta = false;
        let Some(o) = c.steps.last_mut().and_then(|s| s.orbitals.as_mut()) else {
            return Err(ReadError::line(
                path,
                raw.line,
                "beta orbitals printed without alpha orbitals before them",
            ));
        };
        if o.labels != labels {
            return Err(ReadError::line(
                path,
                raw.line,
                "the beta orbitals are printed over different basis functions than the alpha ones",
            ));
        }
        o.beta = Some(raw);
        Ok(())
    } else {
        c.set_orbitals(
            path,
            PrintedOrbitals {
                alpha: raw,
                beta: None,
                labels,
            },
        )
    }
}

/// Reads a coordinate table: `name charge x y z` rows (bohr, or Angstrom after a dashed header).
fn read_table(path: &Path, lines: &mut Lines, angstrom: bool) -> Result<Geometry, ReadError> {
    let start = lines.line_no();
    let mut g = Geometry {
        line: start,
        ..Geometry::default()
    };
    // Column header line(s).
    let Some(_) = lines.next_line() else {
        return Err(ReadError::line(
            path,
            start,
            "file ends after a coordinate table heading (the log is truncated)",
        ));
    };
    loop {
        let save = *lines;
        let Some(l) = lines.next_line() else {
            if g.elements.is_empty() {
                return Err(ReadError::line(
                    path,
                    start,
                    "file ends inside a coordinate table (the log is truncated)",
                ));
            }
            break;
        };
        let t = trim(l);
        if t.starts_with(b"---") {
            continue;
        }
        if t.is_empty() {
            break;
        }
        let toks: Vec<&[u8]> = tokens(t).collect();
        let row = (toks.len() == 5)
            .then(|| Some((num(toks[1])?, [num(toks[2])?, num(toks[3])?, num(toks[4])?])))
            .flatten();
        let Some((charge, p)) = row else {
            if g.elements.is_empty() {
                return Err(ReadError::line(
                    path,
                    lines.line_no(),
                    format!(
                        "expected `name charge x y z` in the coordinate table, found {:?}",
                        text(t)
                    ),
                ));
            }
            *lines = save;
            break;
        };
        if g.elements.len() >= MAX_ITEMS {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                "coordinate table has too many atoms",
            ));
        }
        let element = element_from_charge(charge)
            .or_else(|| {
                let name: String = String::from_utf8_lossy(toks[0])
                    .chars()
                    .take_while(|c| c.is_ascii_alphabetic())
                    .collect();
                Element::from_symbol(&name)
            })
            .unwrap_or(Element::UNKNOWN);
        g.elements.push(element);
        g.nuclear_charges.push(charge);
        g.positions_bohr.push(if angstrom { bohr_from(p) } else { p });
    }
    if g.elements.is_empty() {
        return Err(ReadError::line(path, start, "the coordinate table has no atoms"));
    }
    Ok(g)
}

/// One point of a potential surface scan (`RUNTYP=SURFACE`), after its heading: `COORD ...`,
/// `HAS ENERGY VALUE e`, then `symbol x y z` rows (Angstrom) up to a dashed line.
fn read_surface_point(path: &Path, lines: &mut Lines) -> Result<(Geometry, Option<f64>), ReadError> {
    let start = lines.line_no();
    let mut g = Geometry {
        line: start,
        ..Geometry::default()
    };
    let mut energy = None;
    loop {
        let Some(l) = lines.next_line() else {
            return Err(ReadError::line(
                path,
                start,
                "file ends inside a surface scan's geometry (the log is truncated)",
            ));
        };
        let t = trim(l);
        if t.starts_with(b"---") || t.is_empty() {
            break;
        }
        if t.starts_with(b"COORD ") {
            continue;
        }
        if t.starts_with(b"HAS ENERGY VALUE") {
            energy = tokens(&t[16..]).next().and_then(num);
            continue;
        }
        let toks: Vec<&[u8]> = tokens(t).collect();
        let row = (toks.len() == 4)
            .then(|| Some([num(toks[1])?, num(toks[2])?, num(toks[3])?]))
            .flatten();
        let (Some(p), Some(e)) = (row, Element::from_symbol(&text(toks[0]))) else {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                format!(
                    "expected `symbol x y z` in a surface scan's geometry, found {:?}",
                    text(t)
                ),
            ));
        };
        if g.elements.len() >= MAX_ITEMS {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                "surface scan geometry has too many atoms",
            ));
        }
        g.elements.push(e);
        g.nuclear_charges.push(f64::from(e.number()));
        g.positions_bohr.push(bohr_from(p));
    }
    if g.elements.is_empty() {
        return Err(ReadError::line(path, start, "a surface scan's geometry has no atoms"));
    }
    Ok((g, energy))
}

/// Shells printed for one symmetry-unique atom, with GAMESS's shell numbers.
struct Group {
    shells: Vec<(usize, ShellTemplate)>,
    line: usize,
}

/// A shell being read: GAMESS shell number, type letter(s), exponents, coefficient columns.
type Pending = Option<(usize, Vec<u8>, Vec<f64>, Vec<Vec<f64>>)>;

fn read_basis(path: &Path, lines: &mut Lines) -> Result<Vec<Group>, ReadError> {
    let start = lines.line_no();
    let mut groups: Vec<Group> = Vec::new();
    let mut current: Pending = None;
    let flush = |groups: &mut Vec<Group>, cur: &mut Pending| {
        if let Some((no, kind, exps, coefs)) = cur.take() {
            let ls: Vec<u8> = if kind == b"L" {
                vec![0, 1]
            } else {
                kind.first().and_then(|&c| l_of_letter(c)).into_iter().collect()
            };
            if let Some(g) = groups.last_mut() {
                for (&l, c) in ls.iter().zip(coefs) {
                    g.shells.push((
                        no,
                        ShellTemplate {
                            l,
                            exponents: exps.clone(),
                            coefficients: c,
                        },
                    ));
                }
            }
        }
    };
    let mut seen_header = false;
    loop {
        let save = *lines;
        let Some(l) = lines.next_line() else {
            return Err(lines.truncated(path, "the basis set printout", start));
        };
        let t = trim(l);
        if !seen_header {
            if t.starts_with(b"SHELL TYPE") {
                seen_header = true;
            } else if lines.line_no() > start + 20 {
                return Err(ReadError::line(
                    path,
                    start,
                    "expected a `SHELL TYPE PRIMITIVE EXPONENT CONTRACTION COEFFICIENT(S)` header after ATOMIC BASIS SET",
                ));
            }
            continue;
        }
        if t.is_empty() {
            continue;
        }
        let toks: Vec<&[u8]> = tokens(t).collect();
        if toks.len() == 1 && int(toks[0]).is_none() && num(toks[0]).is_none() {
            flush(&mut groups, &mut current);
            groups.push(Group {
                shells: Vec::new(),
                line: lines.line_no(),
            });
            if groups.len() > MAX_ITEMS {
                return Err(ReadError::line(
                    path,
                    lines.line_no(),
                    "basis set printout has too many atoms",
                ));
            }
            continue;
        }
        let shell_no = toks.first().and_then(|v| int(v)).and_then(|v| usize::try_from(v).ok());
        let kind = toks.get(1).map(|k| k.to_ascii_uppercase());
        let is_shell_line = shell_no.is_some()
            && kind
                .as_ref()
                .is_some_and(|k| k.as_slice() == b"L" || (k.len() == 1 && l_of_letter(k[0]).is_some()))
            && toks.get(2).is_some_and(|v| int(v).is_some());
        if !is_shell_line {
            // End of the printout.
            flush(&mut groups, &mut current);
            *lines = save;
            break;
        }
        let (Some(no), Some(kind)) = (shell_no, kind) else {
            continue;
        };
        if groups.is_empty() {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                "expected an atom name before the first shell of the basis set",
            ));
        }
        let exponent = toks.get(3).and_then(|v| num(v)).filter(|&e| e > 0.0);
        // Coefficients of normalised primitives: inside parentheses when the line has them.
        let coefs: Option<Vec<f64>> = if contains(t, b"(") {
            t.split(|&b| b == b'(')
                .skip(1)
                .map(|part| num(part.split(|&b| b == b')').next().unwrap_or(&[])))
                .collect()
        } else {
            toks.iter().skip(4).map(|v| num(v)).collect()
        };
        let n_coef = if kind == b"L" { 2 } else { 1 };
        let (Some(exponent), Some(coefs)) = (exponent, coefs.filter(|c| c.len() == n_coef)) else {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                format!(
                    "expected `shell type primitive exponent coefficient{}` in the basis set, found {:?}",
                    if n_coef == 2 { "s coefficient-p" } else { "" },
                    text(t)
                ),
            ));
        };
        let same = current.as_ref().is_some_and(|(n, k, _, _)| *n == no && *k == kind);
        if !same {
            flush(&mut groups, &mut current);
            current = Some((no, kind, Vec::new(), vec![Vec::new(); n_coef]));
        }
        if let Some((_, _, exps, cs)) = current.as_mut() {
            if exps.len() >= 1000 {
                return Err(ReadError::line(
                    path,
                    lines.line_no(),
                    "a shell has more than 1000 primitives",
                ));
            }
            exps.push(exponent);
            for (c, v) in cs.iter_mut().zip(coefs) {
                c.push(v);
            }
        }
    }
    if groups.is_empty() || groups.iter().any(|g| g.shells.is_empty()) {
        return Err(ReadError::line(
            path,
            start,
            "the basis set printout has an atom without shells",
        ));
    }
    Ok(groups)
}

/// Expands symmetry-unique groups to all atoms using GAMESS's shell numbering.
fn expand_groups(path: &Path, groups: Vec<Group>, total: Option<usize>) -> Result<Vec<Vec<ShellTemplate>>, ReadError> {
    let distinct = |g: &Group| {
        let mut v: Vec<usize> = g.shells.iter().map(|(n, _)| *n).collect();
        v.dedup();
        v
    };
    let firsts: Vec<usize> = groups
        .iter()
        .map(|g| distinct(g).first().copied().unwrap_or(0))
        .collect();
    let lasts: Vec<usize> = groups
        .iter()
        .map(|g| distinct(g).last().copied().unwrap_or(0))
        .collect();
    let counts: Vec<usize> = groups.iter().map(|g| distinct(g).len()).collect();
    // Printed numbers belong to the last equivalent atom (GAMESS-US) or the first one (older
    // versions); the total decides when both could fit.
    let last_convention = match total {
        Some(t) => lasts.last() == Some(&t),
        None => firsts.first() != Some(&1),
    };
    let mut out = Vec::new();
    for (i, g) in groups.iter().enumerate() {
        let span = if last_convention {
            lasts[i].checked_sub(if i == 0 { 0 } else { lasts[i - 1] })
        } else {
            let next = firsts
                .get(i + 1)
                .copied()
                .or(total.map(|t| t + 1))
                .unwrap_or(firsts[i] + counts[i]);
            next.checked_sub(firsts[i])
        };
        let k = counts[i].max(1);
        let n_atoms = match span {
            Some(s) if s > 0 && s % k == 0 && s / k <= MAX_ITEMS => s / k,
            _ => {
                return Err(ReadError::line(
                    path,
                    g.line,
                    "the shell numbers of the basis set printout do not give a whole number of atoms for this group",
                ));
            }
        };
        if out.len() + n_atoms > MAX_ITEMS {
            return Err(ReadError::line(path, g.line, "basis set printout has too many atoms"));
        }
        for _ in 0..n_atoms {
            out.push(g.shells.iter().map(|(_, s)| s.clone()).collect());
        }
    }
    Ok(out)
}

/// Text lines allowed between an orbital heading and its first block (program notices).
const MAX_NOTICE_LINES: usize = 8;

/// Reads the orbital blocks after an `EIGENVECTORS` / `MOLECULAR ORBITALS` heading.
fn read_mo_blocks(path: &Path, lines: &mut Lines) -> Result<(RawOrbitals, Vec<(Ao, f64)>), ReadError> {
    let start = lines.line_no();
    let mut raw = RawOrbitals {
        line: start,
        ..RawOrbitals::default()
    };
    let mut labels = Vec::new();
    let mut block = Vec::new();
    let truncated = |lines: &Lines| {
        ReadError::line(
            path,
            lines.line_no(),
            format!("file ends inside the orbital coefficients that start at line {start} (the log is truncated)"),
        )
    };
    let mut expected = 1i64;
    let mut notices = 0usize;
    loop {
        // Skip blank lines to the next block's orbital numbers.
        let save = *lines;
        let Some(h) = lines.next_nonblank_line() else {
            return Err(truncated(lines));
        };
        let indices: Option<Vec<i64>> = tokens(h).map(int).collect();
        let Some(indices) = indices.filter(|v| !v.is_empty() && v.len() <= 10 && v[0] == expected) else {
            // Firefly (PC GAMESS) prints notices such as "WARNING! YOU ARE USING OUTDATED VERSION"
            // between the heading and the first block: text lines, skipped.
            if raw.n_rows == 0 && notices < MAX_NOTICE_LINES && tokens(h).next().and_then(int).is_none() {
                notices += 1;
                continue;
            }
            if raw.n_rows == 0 {
                return Err(ReadError::line(
                    path,
                    lines.line_no(),
                    format!("expected orbital numbers starting at {expected}, found {:?}", text(h)),
                ));
            }
            *lines = save;
            break;
        };
        let k = indices.len();
        expected += k as i64;
        let Some(e) = lines.next_line() else {
            return Err(truncated(lines));
        };
        let energies: Option<Vec<f64>> = tokens(e).map(num).collect();
        let Some(energies) = energies.filter(|v| v.len() == k) else {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                format!("expected {k} orbital energies, found {:?}", text(e)),
            ));
        };
        raw.energies_hartree.extend(energies);
        // Symmetry labels (absent in some versions): a line whose tokens are not a coefficient row.
        let save = *lines;
        let Some(s) = lines.next_line() else {
            return Err(truncated(lines));
        };
        let mut probe = Vec::new();
        if row_values(s, FIELD_WIDTH, k, &mut probe).is_some() {
            *lines = save;
            raw.symmetries.extend((0..k).map(|_| String::new()));
        } else {
            let syms: Vec<String> = tokens(s).map(|t| String::from_utf8_lossy(t).into_owned()).collect();
            raw.symmetries
                .extend((0..k).map(|i| syms.get(i).cloned().unwrap_or_default()));
        }
        block.clear();
        let mut rows = 0usize;
        loop {
            if raw.n_rows > 0 && rows == raw.n_rows {
                break;
            }
            let Some(l) = lines.next_line() else {
                return Err(truncated(lines));
            };
            if lines.at_end() {
                return Err(truncated(lines));
            }
            if raw.n_rows == 0 && is_blank(l) && rows > 0 {
                break;
            }
            let label = row_values(l, FIELD_WIDTH, k, &mut block);
            let ao = label
                .and_then(|lab| tokens(lab).last())
                .and_then(super::gaussian::ao_from_label);
            if ao.is_none() {
                return Err(ReadError::line(
                    path,
                    lines.line_no(),
                    format!(
                        "expected a coefficient row `n atom-name atom-number type` and {k} numbers, found {:?}",
                        text(l)
                    ),
                ));
            }
            if raw.n_rows == 0 {
                if labels.len() >= MAX_ITEMS {
                    return Err(ReadError::line(path, lines.line_no(), "too many basis functions"));
                }
                if let Some(a) = ao {
                    labels.push((a, 1.0));
                }
            }
            rows += 1;
        }
        if raw.n_rows == 0 {
            raw.n_rows = rows;
        }
        raw.push_block(&block, k);
    }
    Ok((raw, labels))
}
