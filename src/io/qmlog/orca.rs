//! ORCA 5/6 output reader, called through [`super::read`] (and directly by tests and fuzzing).
//!
//! Reads every `CARTESIAN COORDINATES (ANGSTROEM)` table (each optimisation cycle, scan point and
//! the final evaluation; ORCA expresses orbitals in the input frame), charge, multiplicity,
//! each step's SCF energy (the "TOTAL SCF ENERGY" section's `Total Energy` plus a printed
//! dispersion correction; `FINAL SINGLE POINT ENERGY` where no SCF was printed), the basis from "BASIS SET IN INPUT FORMAT" (printed with
//! `! PrintBasis` or `%output print[p_basis] 2 end`; coefficients of normalised primitives, one
//! block per element, matched to atoms through the "BASIS SET INFORMATION" groups), and the
//! "MOLECULAR ORBITALS" blocks (`! PrintMOs` or `print[p_mos] 1`; alpha then beta for UHF, the beta
//! set restarting at orbital 0). Each orbital's symmetry comes from the "ORBITAL ENERGIES" table
//! printed before its block (its `Irrep` column, "3-Bg": the third orbital of species Bg, kept as
//! "Bg"; spin up then spin down for UHF), when the job used symmetry.
//!
//! ORCA's functions are pure for l >= 2, printed as p: pz px py; d: dz2 dxz dyz dx2y2 dxy; f, g:
//! m = 0, +1, -1, ... — the model's order apart from p, which is mapped to x y z. ORCA's real
//! solid harmonics differ in sign from the standard ones for f(+3), f(-3) and g(+-3), g(+-4);
//! those coefficients are negated.

use super::{
    Ao, Collected, Geometry, Lines, PrintedOrbitals, Program, RawOrbitals, ShellTemplate, bohr_from, contains, int,
    l_of_letter, num, row_values, text, tokens, trim, trim_start,
};
use crate::io::ReadError;
use crate::model::Element;
use std::path::Path;

const FIELD_WIDTH: usize = 10;
const MAX_ITEMS: usize = 1_000_000;

/// Reads an ORCA output. See the module documentation.
pub fn read(path: &Path, bytes: &[u8]) -> Result<super::QmLog, ReadError> {
    super::check_program(path, bytes, Program::Orca)?;
    let c = collect(path, bytes)?;
    super::finish(path, c)
}

/// The value after `....` on an ORCA settings line.
fn setting(t: &[u8]) -> Option<&[u8]> {
    let i = t.windows(4).position(|w| w == b"....")?;
    tokens(&t[i + 4..]).next()
}

fn collect(path: &Path, bytes: &[u8]) -> Result<Collected, ReadError> {
    let mut c = Collected::new(
        Program::Orca,
        "add `! PrintBasis` to the input (or `%output print[p_basis] 2 end`)",
        "add `! PrintMOs` to the input (or `%output print[p_mos] 1 end`), and `! PrintBasis` for the basis set",
    );
    let mut blocks: Vec<(Element, Vec<ShellTemplate>)> = Vec::new();
    let mut group_types: Vec<Element> = Vec::new();
    let mut atom_groups: Vec<usize> = Vec::new();
    let mut n_electrons: Option<usize> = None;
    // The last "ORBITAL ENERGIES" table's rows: spin up (or restricted), spin down.
    let mut table: [Vec<TableRow>; 2] = [Vec::new(), Vec::new()];
    // The step's SCF energy (the "TOTAL SCF ENERGY" section's `Total Energy`) and its dispersion
    // correction, since the last `FINAL SINGLE POINT ENERGY`; `scf_total_next` marks the section.
    let mut scf_hartree: Option<f64> = None;
    let mut dispersion_hartree: Option<f64> = None;
    let mut scf_total_next = false;
    // The last "MOLECULAR ORBITALS" block's levels (every orbital, where the table lists only the
    // first virtual ones), spin up then down.
    let mut block_levels: Option<[Option<crate::model::LevelSet>; 2]> = None;
    let mut lines = Lines::new(bytes);
    while let Some(line) = lines.next_line() {
        let t = trim_start(line);
        let Some(&first) = t.first() else { continue };
        match first {
            b'C' if t.starts_with(b"CARTESIAN COORDINATES (ANGSTROEM)") => {
                let g = read_coordinates(path, &mut lines)?;
                c.push_geometry(g);
            }
            b'T' if t.starts_with(b"Total Charge") => {
                c.charge = setting(t).and_then(int).and_then(|v| i32::try_from(v).ok());
            }
            b'M' => {
                if t.starts_with(b"Multiplicity") && contains(t, b"....") {
                    c.multiplicity = setting(t).and_then(int).and_then(|v| u32::try_from(v).ok());
                } else if t.starts_with(b"MOLECULAR ORBITALS") {
                    let save = lines;
                    match lines.next_line() {
                        Some(l) if trim(l).starts_with(b"---") => {
                            let mut o = read_mo_blocks(path, &mut lines)?;
                            label_from_table(&mut o.alpha, &table[0]);
                            if let Some(beta) = o.beta.as_mut() {
                                label_from_table(beta, &table[1]);
                            }
                            block_levels =
                                Some([Some(block_level_set(&o.alpha)), o.beta.as_ref().map(block_level_set)]);
                            c.set_orbitals(path, o)?;
                        }
                        _ => lines = save,
                    }
                }
            }
            b'O' if t.starts_with(b"ORBITAL ENERGIES") => table = read_orbital_table(&mut lines),
            b'N' if t.starts_with(b"Number of Electrons") => {
                n_electrons = setting(t).and_then(int).and_then(|v| usize::try_from(v).ok());
            }
            b'H' if t.starts_with(b"Hartree-Fock type") && setting(t) == Some(&b"ROHF"[..]) => {
                c.restricted_open = true;
            }
            b'F' if t.starts_with(b"FINAL SINGLE POINT ENERGY") => {
                let e = tokens(t).nth(4).and_then(num).ok_or_else(|| {
                    ReadError::line(
                        path,
                        lines.line_no(),
                        format!("expected `FINAL SINGLE POINT ENERGY value`, found {:?}", text(t)),
                    )
                })?;
                // The step's SCF energy where one was printed: the final energy of a correlated,
                // TD-DFT or excited-state job is not the SCF's (cclib's `scfenergies` likewise).
                // Where the two agree to the SCF line's eight decimals, the final line's twelve.
                let scf_total = scf_hartree.map(|s| s + dispersion_hartree.unwrap_or(0.0));
                if scf_total.is_none_or(|s| (s - e).abs() < 1e-7) {
                    c.set_energy(e);
                }
                scf_hartree = None;
                dispersion_hartree = None;
            }
            b'T' if t.starts_with(b"TOTAL SCF ENERGY") => scf_total_next = true,
            b'T' if scf_total_next && t.starts_with(b"Total Energy") && contains(t, b":") => {
                scf_total_next = false;
                scf_hartree = tokens(t).nth(3).and_then(num);
                if let Some(e) = scf_hartree {
                    c.set_energy(e + dispersion_hartree.unwrap_or(0.0));
                }
            }
            // "Dispersion correction           -0.014719932": added to the SCF energy, as ORCA adds
            // it to its final energy.
            b'D' if t.starts_with(b"Dispersion correction") => {
                dispersion_hartree = tokens(t).nth(2).and_then(num);
                if let (Some(e), Some(d)) = (scf_hartree, dispersion_hartree) {
                    c.set_energy(e + d);
                }
            }
            b'B' if t.starts_with(b"BASIS SET IN INPUT FORMAT") && blocks.is_empty() => {
                blocks = read_basis(path, &mut lines)?;
            }
            // " Group   1 Type C   : 6s3p contracted to 2s1p pattern {33/3}"
            b'G' if t.starts_with(b"Group ") && contains(t, b" Type ") => {
                let toks: Vec<&[u8]> = tokens(t).collect();
                if let (Some(n), Some(sym)) = (toks.get(1).and_then(|v| int(v)), toks.get(3)) {
                    if n == group_types.len() as i64 + 1 {
                        group_types
                            .push(Element::from_symbol(&String::from_utf8_lossy(sym)).unwrap_or(Element::UNKNOWN));
                    } else if n == 1 {
                        group_types.clear();
                        atom_groups.clear();
                        group_types
                            .push(Element::from_symbol(&String::from_utf8_lossy(sym)).unwrap_or(Element::UNKNOWN));
                    }
                }
            }
            b'A' => {
                // "Atom   0C    basis set group =>   1"
                if t.starts_with(b"Atom ")
                    && contains(t, b"basis set group =>")
                    && atom_groups.len() < MAX_ITEMS
                    && let Some(g) = tokens(t).last().and_then(int).and_then(|v| usize::try_from(v).ok())
                {
                    atom_groups.push(g);
                }
            }
            b'P' if c.version.is_none() && t.starts_with(b"Program Version") => {
                c.version = tokens(t).nth(2).map(|v| String::from_utf8_lossy(v).into_owned());
            }
            b'*' if contains(t, b"ORCA TERMINATED NORMALLY") => {
                c.terminated_normally = true;
            }
            b'O' if t.starts_with(b"ORCA finished by error termination") && c.error_line.is_none() => {
                c.error_line = Some((lines.line_no(), text(t)));
            }
            _ => {}
        }
    }
    if let (Some(nel), Some(mult)) = (n_electrons, c.multiplicity) {
        let unpaired = (mult as usize).saturating_sub(1);
        c.n_alpha = Some((nel + unpaired) / 2);
        c.n_beta = Some(nel.saturating_sub((nel + unpaired) / 2));
    }
    if !blocks.is_empty()
        && let Some(first) = c.steps.first()
    {
        let elements = first.geometry.elements.clone();
        c.shells_per_atom = Some(assign_blocks(path, &elements, &blocks, &group_types, &atom_groups)?);
    }
    // The last table's levels: the orbital list and diagram where no orbitals can be drawn.
    if !table[0].is_empty() {
        let set = |rows: &[TableRow]| crate::model::LevelSet {
            energies_hartree: rows.iter().map(|r| r.energy_hartree).collect(),
            occupations: rows.iter().map(|r| r.occupation).collect(),
            symmetries: rows.iter().map(|r| r.species.clone()).collect(),
        };
        let mut alpha = set(&table[0]);
        let mut beta = (!table[1].is_empty()).then(|| set(&table[1]));
        if let Some([block_alpha, block_beta]) = block_levels {
            extend_levels(&mut alpha, block_alpha);
            if let Some(beta) = beta.as_mut() {
                extend_levels(beta, block_beta);
            }
        }
        c.levels = Some(crate::model::OrbitalLevels { alpha, beta });
    }
    Ok(c)
}

/// A "MOLECULAR ORBITALS" block's energies, occupations and symmetries.
fn block_level_set(o: &RawOrbitals) -> crate::model::LevelSet {
    crate::model::LevelSet {
        energies_hartree: o.energies_hartree.clone(),
        occupations: o.occupations.clone(),
        symmetries: o.symmetries.clone(),
    }
}

/// Completes a table's levels with the orbitals the table left out ("Only the first 10 virtual
/// orbitals were printed") from the block printed after it, when the block's first orbitals are
/// the table's (energies to the block's five decimals, the same occupations).
fn extend_levels(levels: &mut crate::model::LevelSet, block: Option<crate::model::LevelSet>) {
    let Some(block) = block else { return };
    let n = levels.energies_hartree.len();
    if block.energies_hartree.len() <= n || block.occupations.len() != block.energies_hartree.len() {
        return;
    }
    let same = (0..n).all(|k| {
        (levels.energies_hartree[k] - block.energies_hartree[k]).abs() <= 6e-6
            && (levels.occupations[k] - block.occupations[k]).abs() <= 1e-4
    });
    if same {
        levels.energies_hartree.extend_from_slice(&block.energies_hartree[n..]);
        levels.occupations.extend_from_slice(&block.occupations[n..]);
        levels.symmetries.resize(n, String::new());
        levels.symmetries.extend(
            block
                .symmetries
                .into_iter()
                .skip(n)
                .chain(std::iter::repeat(String::new()))
                .take(block.energies_hartree.len() - n),
        );
    }
}

/// One row of an "ORBITAL ENERGIES" table: the energy as printed there (six decimals, where the
/// "MOLECULAR ORBITALS" block prints five) and the species of the `Irrep` column ("Bg"; empty
/// without symmetry).
#[derive(Clone, Debug, PartialEq)]
struct TableRow {
    energy_hartree: f64,
    occupation: f64,
    species: String,
}

/// The rows of an "ORBITAL ENERGIES" table ("  NO   OCC   E(Eh)   E(eV)   Irrep", rows
/// "  34   2.0000   -0.219500   -5.9730   3-Bg"), spin up (or restricted) then spin down.
fn read_orbital_table(lines: &mut Lines) -> [Vec<TableRow>; 2] {
    let mut out: [Vec<TableRow>; 2] = [Vec::new(), Vec::new()];
    let mut spin = 0;
    let mut seen_rows = false;
    loop {
        // The line after the table is the next section's: left for the caller to read.
        let before = *lines;
        let Some(line) = lines.next_line() else { break };
        let t = trim(line);
        if t.is_empty() || t.starts_with(b"---") || t.starts_with(b"NO ") || t.starts_with(b"*") {
            if seen_rows && t.is_empty() && spin == 1 {
                *lines = before;
                break;
            }
            continue;
        }
        if t.starts_with(b"SPIN UP") {
            spin = 0;
            continue;
        }
        if t.starts_with(b"SPIN DOWN") {
            spin = 1;
            continue;
        }
        let toks: Vec<&[u8]> = tokens(t).collect();
        let row = toks
            .first()
            .and_then(|v| int(v))
            .filter(|&n| n == out[spin].len() as i64);
        if row.is_none() || toks.len() < 4 || num(toks[2]).is_none() {
            // The table ended (ORCA prints the next section after a blank line or two).
            if seen_rows {
                *lines = before;
                break;
            }
            continue;
        }
        seen_rows = true;
        let species = toks
            .get(4)
            .map(|v| String::from_utf8_lossy(v).into_owned())
            .map(|v| v.split_once('-').map_or(v.clone(), |(_, s)| s.to_string()))
            .unwrap_or_default();
        if out[spin].len() < MAX_ITEMS {
            out[spin].push(TableRow {
                energy_hartree: num(toks[2]).unwrap_or(f64::NAN),
                occupation: num(toks[1]).unwrap_or(0.0),
                species,
            });
        }
    }
    out
}

/// Fills the orbitals' symmetry labels and energies from an "ORBITAL ENERGIES" table's, orbital
/// by orbital (ORCA lists only the first virtual orbitals: the rest keep the block's), when the
/// table has no more rows than there are orbitals and its energies are the block's to its five
/// printed decimals (the same orbitals).
fn label_from_table(set: &mut RawOrbitals, rows: &[TableRow]) {
    if rows.len() > set.symmetries.len() || rows.len() > set.energies_hartree.len() {
        return;
    }
    let same = rows
        .iter()
        .zip(&set.energies_hartree)
        .all(|(r, e)| (r.energy_hartree - e).abs() <= 6e-6);
    for (k, row) in rows.iter().enumerate() {
        set.symmetries[k].clone_from(&row.species);
        if same && row.energy_hartree.is_finite() {
            set.energies_hartree[k] = row.energy_hartree;
        }
    }
}

/// Gives each atom its element's basis block; where one element has several blocks, the atom's
/// basis group (k-th group of that element) picks the k-th block.
fn assign_blocks(
    path: &Path,
    elements: &[Element],
    blocks: &[(Element, Vec<ShellTemplate>)],
    group_types: &[Element],
    atom_groups: &[usize],
) -> Result<Vec<Vec<ShellTemplate>>, ReadError> {
    let use_groups = atom_groups.len() == elements.len();
    let mut out = Vec::with_capacity(elements.len());
    for (i, &e) in elements.iter().enumerate() {
        let rank = if use_groups {
            let g = atom_groups[i];
            group_types
                .iter()
                .take(g.saturating_sub(1))
                .filter(|&&t| t == e)
                .count()
        } else {
            0
        };
        let candidates: Vec<&Vec<ShellTemplate>> = blocks.iter().filter(|(be, _)| *be == e).map(|(_, s)| s).collect();
        let Some(s) = candidates.get(rank).or(candidates.first()) else {
            return Err(ReadError::file(
                path,
                format!(
                    "the basis set printout has no block for element {} (atom {})",
                    e.symbol(),
                    i + 1
                ),
            ));
        };
        out.push((*s).clone());
    }
    Ok(out)
}

/// Reads the rows of a `CARTESIAN COORDINATES (ANGSTROEM)` table.
fn read_coordinates(path: &Path, lines: &mut Lines) -> Result<Geometry, ReadError> {
    let start = lines.line_no();
    let mut g = Geometry {
        line: start,
        ..Geometry::default()
    };
    loop {
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
        let row = (toks.len() == 4)
            .then(|| Some([num(toks[1])?, num(toks[2])?, num(toks[3])?]))
            .flatten();
        let Some(p) = row else {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                format!("expected `element x y z` in the coordinate table, found {:?}", text(t)),
            ));
        };
        if g.elements.len() >= MAX_ITEMS {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                "coordinate table has too many atoms",
            ));
        }
        let sym: String = String::from_utf8_lossy(toks[0])
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        let element = Element::from_symbol(&sym).unwrap_or(Element::UNKNOWN);
        g.elements.push(element);
        g.nuclear_charges.push(f64::from(element.number()));
        g.positions_bohr.push(bohr_from(p));
    }
    if g.elements.is_empty() {
        return Err(ReadError::line(path, start, "the coordinate table has no atoms"));
    }
    Ok(g)
}

/// Reads `NewGTO <element> ... end;` blocks.
fn read_basis(path: &Path, lines: &mut Lines) -> Result<Vec<(Element, Vec<ShellTemplate>)>, ReadError> {
    let start = lines.line_no();
    let mut out = Vec::new();
    let eof = |lines: &Lines| lines.truncated(path, "the basis set printout", start);
    loop {
        let save = *lines;
        let Some(l) = lines.next_line() else { break };
        let t = trim(l);
        if t.is_empty() || t.starts_with(b"---") || t.starts_with(b"#") {
            continue;
        }
        if !t.starts_with(b"NewGTO") {
            *lines = save;
            break;
        }
        let sym = tokens(t)
            .nth(1)
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .unwrap_or_default();
        let Some(element) = Element::from_symbol(sym.trim_matches('"')) else {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                format!("expected `NewGTO <element>`, found {:?}", text(t)),
            ));
        };
        let mut shells = Vec::new();
        loop {
            let Some(l) = lines.next_line() else {
                return Err(eof(lines));
            };
            let t = trim(l);
            if t.starts_with(b"end") {
                break;
            }
            let toks: Vec<&[u8]> = tokens(t).collect();
            let header = (toks.len() == 2)
                .then(|| {
                    let l = (toks[0].len() == 1).then(|| l_of_letter(toks[0][0])).flatten()?;
                    let n = int(toks[1]).filter(|&n| (1..=1000).contains(&n))?;
                    Some((l, n as usize))
                })
                .flatten();
            let Some((l, nprim)) = header else {
                return Err(ReadError::line(
                    path,
                    lines.line_no(),
                    format!(
                        "expected a shell header `L nprim` or `end;` in the basis set, found {:?}",
                        text(t)
                    ),
                ));
            };
            let mut exponents = Vec::with_capacity(nprim);
            let mut coefficients = Vec::with_capacity(nprim);
            for _ in 0..nprim {
                let Some(pl) = lines.next_line() else {
                    return Err(eof(lines));
                };
                let toks: Vec<&[u8]> = tokens(pl).collect();
                let prim = (toks.len() == 3)
                    .then(|| Some((num(toks[1])?, num(toks[2])?)))
                    .flatten();
                match prim {
                    Some((e, c)) if e > 0.0 => {
                        exponents.push(e);
                        coefficients.push(c);
                    }
                    _ => {
                        return Err(ReadError::line(
                            path,
                            lines.line_no(),
                            format!(
                                "expected a primitive `index exponent coefficient`, found {:?}",
                                text(pl)
                            ),
                        ));
                    }
                }
            }
            shells.push(ShellTemplate {
                l,
                exponents,
                coefficients,
            });
        }
        out.push((element, shells));
        if out.len() > MAX_ITEMS {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                "basis set printout has too many blocks",
            ));
        }
    }
    Ok(out)
}

/// ORCA basis function label ("1s", "1pz", "1dx2y2", "1f+3") with its sign factor.
pub(crate) fn ao_from_label(label: &[u8]) -> Option<(Ao, f64)> {
    let t = trim(label);
    let digits = t.iter().take_while(|b| b.is_ascii_digit()).count();
    let s = &t[digits..];
    let l = l_of_letter(*s.first()?)?;
    let rest = &s[1..];
    let ao = match l {
        0 if rest.is_empty() => Ao::Cart([0, 0, 0]),
        1 => Ao::Cart(super::cart_from_letters(rest).filter(|p| p.iter().sum::<u8>() == 1)?),
        2 => Ao::Pure(
            2,
            match rest {
                b"z2" => 0,
                b"xz" => 1,
                b"yz" => -1,
                b"x2y2" => 2,
                b"xy" => -2,
                _ => return None,
            },
        ),
        _ => {
            let m = std::str::from_utf8(rest).ok()?.parse::<i8>().ok()?;
            if m.unsigned_abs() > l {
                return None;
            }
            Ao::Pure(l, m)
        }
    };
    let flip = match ao {
        Ao::Pure(3, m) => m.unsigned_abs() == 3,
        Ao::Pure(4, m) => m.unsigned_abs() >= 3,
        _ => false,
    };
    Some((ao, if flip { -1.0 } else { 1.0 }))
}

/// Reads the orbital blocks after "MOLECULAR ORBITALS" and its dashes.
fn read_mo_blocks(path: &Path, lines: &mut Lines) -> Result<PrintedOrbitals, ReadError> {
    let start = lines.line_no();
    let mut sets: Vec<RawOrbitals> = Vec::new();
    let mut labels = Vec::new();
    let mut n_rows = 0usize;
    let mut block = Vec::new();
    let truncated = |lines: &Lines| {
        ReadError::line(
            path,
            lines.line_no(),
            format!("file ends inside the orbital coefficients that start at line {start} (the log is truncated)"),
        )
    };
    let mut expected = 0i64;
    loop {
        let save = *lines;
        let Some(h) = lines.next_nonblank_line() else {
            return Err(truncated(lines));
        };
        let indices: Option<Vec<i64>> = tokens(h).map(int).collect();
        let Some(indices) = indices.filter(|v| !v.is_empty() && v.len() <= 10) else {
            if sets.is_empty() {
                return Err(ReadError::line(
                    path,
                    lines.line_no(),
                    format!("expected orbital numbers, found {:?}", text(h)),
                ));
            }
            *lines = save;
            break;
        };
        if indices[0] == 0 && sets.len() < 2 {
            if !sets.is_empty() && n_rows == 0 {
                break;
            }
            sets.push(RawOrbitals {
                line: lines.line_no(),
                n_rows,
                ..RawOrbitals::default()
            });
            expected = 0;
        }
        if indices[0] != expected {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                format!(
                    "expected orbital number {expected} to start this block, found {:?}",
                    text(h)
                ),
            ));
        }
        let k = indices.len();
        expected += k as i64;
        let Some(set) = sets.last_mut() else { break };
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
        set.energies_hartree.extend(energies);
        let Some(o) = lines.next_line() else {
            return Err(truncated(lines));
        };
        let occ: Option<Vec<f64>> = tokens(o).map(num).collect();
        let Some(occ) = occ.filter(|v| v.len() == k) else {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                format!("expected {k} occupation numbers, found {:?}", text(o)),
            ));
        };
        set.occupations.extend(occ);
        set.symmetries.extend((0..k).map(|_| String::new()));
        let Some(d) = lines.next_line() else {
            return Err(truncated(lines));
        };
        if !trim(d).starts_with(b"---") {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                format!("expected a dashed line under the orbital header, found {:?}", text(d)),
            ));
        }
        block.clear();
        let mut rows = 0usize;
        loop {
            if n_rows > 0 && rows == n_rows {
                break;
            }
            let save = *lines;
            let Some(l) = lines.next_line() else {
                return Err(truncated(lines));
            };
            let label = row_values(l, FIELD_WIDTH, k, &mut block);
            let ao = label.and_then(|lab| tokens(lab).last()).and_then(ao_from_label);
            if ao.is_none() {
                if label.is_some() {
                    block.truncate(block.len() - k);
                }
                if lines.at_end() {
                    return Err(truncated(lines));
                }
                if n_rows == 0 && rows > 0 {
                    *lines = save;
                    break;
                }
                return Err(ReadError::line(
                    path,
                    lines.line_no(),
                    format!(
                        "expected a coefficient row `atom label` and {k} numbers, found {:?}",
                        text(l)
                    ),
                ));
            }
            if n_rows == 0 {
                if labels.len() >= MAX_ITEMS {
                    return Err(ReadError::line(path, lines.line_no(), "too many basis functions"));
                }
                if let Some(a) = ao {
                    labels.push(a);
                }
            }
            rows += 1;
        }
        if n_rows == 0 {
            n_rows = rows;
            set.n_rows = rows;
        }
        set.push_block(&block, k);
    }
    let mut it = sets.into_iter();
    let Some(alpha) = it.next() else {
        return Err(truncated(lines));
    };
    let beta = it.next();
    Ok(PrintedOrbitals { alpha, beta, labels })
}
