//! MDL molfile and SD file reader (`.mol`, `.sdf`, `.sd`): the V2000 and V3000 connection tables.
//!
//! Called by `io::load` and the fuzz target with the whole decompressed file. A record is a header
//! of three lines (the molecule's name, the program line, a comment), a counts line, the atom and
//! bond blocks, properties up to `M  END`, and in an SD file data items (`> <name>` and value
//! lines) up to `$$$$`. V2000 blocks are fixed columns (whitespace-separated columns are accepted
//! where a writer did not align them); V3000 blocks are the `M  V30` lines of `BEGIN ATOM` and
//! `BEGIN BOND` (a `-` at the end of a line continues it).
//!
//! As for mol2 and XYZ files, the first record is the topology and each following record of the
//! same atoms (the same elements in the same order: conformers, docking poses) is a frame; a record
//! of another molecule stops the reading there with a warning that says so. Atom names are the
//! element and its count (`C1`, `C2`, `O1`), as ChimeraX names them, in one residue `UNL`, as
//! RDKit names a ligand without a residue name. Bonds come from the bond block, double, triple and
//! aromatic ones with their orders (`Structure::multiple_bonds`). Formal charges (`M  CHG`, the atom block's charge column) are not partial charges
//! and are not read as charges; PubChem's `PUBCHEM_MMFF94_PARTIAL_CHARGES` data item is. A record
//! whose program line says `2D`, or whose every z is zero, is a drawing: a warning says so.

use super::ReadError;
use super::fields::{Lines, cols, float, int, show, tokens, unlike_first};
use super::load::Parsed;
use crate::model::{BondOrder, BondSource, Element, Frame, Name8, Structure};
use std::path::Path;

/// Atoms of one record at most (V2000 counts have three digits; V3000 any).
const MAX_ATOMS: usize = 10_000_000;

/// One record's connection table.
struct Record {
    /// The record's first line.
    line: usize,
    name: String,
    /// A drawing: the program line says 2D, or every z is zero and it does not say 3D.
    flat: bool,
    stated_3d: bool,
    elements: Vec<Element>,
    positions: Vec<[f32; 3]>,
    /// 0-based atom pairs.
    bonds: Vec<[u32; 2]>,
    /// The bonds of higher order than single.
    orders: Vec<([u32; 2], BondOrder)>,
    /// PubChem's MMFF94 partial charges (1-based atom, charge).
    partial_charges: Vec<(usize, f32)>,
}

/// The element of a molfile atom symbol (`D` and `T` are hydrogen; query atoms are unknown).
fn element_of(symbol: &[u8]) -> Element {
    match symbol.trim_ascii() {
        b"D" | b"T" => Element::H,
        s => Element::from_symbol_bytes(s).unwrap_or(Element::UNKNOWN),
    }
}

fn bad(path: &Path, line: usize, message: String) -> ReadError {
    ReadError::line(path, line, message)
}

/// Reads an MDL molfile or SD file. See the module documentation.
pub fn read(path: &Path, bytes: &[u8]) -> Result<Parsed, ReadError> {
    let mut lines = Lines::new(bytes);
    let mut records: Vec<Record> = Vec::new();
    let mut warnings = Vec::new();
    loop {
        // Blank lines after the last record end the file.
        if lines.clone().all(|(_, l)| l.trim_ascii().is_empty()) {
            break;
        }
        let start = lines.number() + 1;
        match read_record(path, &mut lines) {
            Ok(r) => records.push(r),
            Err(e) if !records.is_empty() && e.cut_short => {
                warnings.push(format!(
                    "{} complete record{} found, the next one starts at line {start} but the file ends inside it",
                    records.len(),
                    if records.len() == 1 { "" } else { "s" }
                ));
                break;
            }
            Err(e) => return Err(e.error),
        }
    }
    let Some(first) = records.first() else {
        return Err(bad(
            path,
            1,
            "expected a molfile record (name, program and comment lines, then the counts line), found an empty file"
                .into(),
        ));
    };
    let mut structure = Structure {
        title: first.name.clone(),
        ..Structure::default()
    };
    structure.reserve(first.elements.len());
    let mut per_element: std::collections::HashMap<Element, usize> = std::collections::HashMap::new();
    for &e in &first.elements {
        let n = per_element.entry(e).or_insert(0);
        *n += 1;
        let name = if e == Element::UNKNOWN {
            format!("X{n}")
        } else {
            format!("{}{n}", e.symbol())
        };
        structure.push_atom(
            e,
            Name8::new(name.as_bytes()),
            Name8::new(b"UNL"),
            1,
            Name8::EMPTY,
            Name8::EMPTY,
        );
    }
    structure.bonds = first.bonds.clone();
    structure.bonds.sort_unstable();
    structure.bonds.dedup();
    structure.multiple_bonds = first.orders.clone();
    structure.multiple_bonds.sort_unstable_by_key(|(pair, _)| *pair);
    structure.multiple_bonds.dedup_by_key(|(pair, _)| *pair);
    structure.bond_source = BondSource::File;
    if !first.partial_charges.is_empty() {
        let mut q = vec![0f32; first.elements.len()];
        for &(i, v) in &first.partial_charges {
            if let Some(slot) = q.get_mut(i - 1) {
                *slot = v;
            }
        }
        structure.charges_e = Some(q);
    }
    let mut frames: Vec<Frame> = Vec::with_capacity(records.len());
    for (k, r) in records.iter().enumerate() {
        if r.elements != first.elements {
            let subject = format!(
                "record {} (line {}, {:?})",
                k + 1,
                r.line,
                super::text::shorten(&r.name)
            );
            let (a, b) = (&first.elements, &r.elements);
            match super::fields::AtomsDiffer::compare(
                a,
                b,
                |e| *e,
                |i| a.get(i) != b.get(i),
                |e| e.symbol().to_string(),
            ) {
                Some(d) => warnings.push(format!(
                    "{subject}: {}: the {k} record(s) before it are frames, the records from it on are not read \
                     (open a file of different molecules one molecule at a time)",
                    d.describe("the first record's")
                )),
                None => warnings.push(unlike_first(&subject, "frame", &b.len().to_string(), a.len(), k)),
            }
            break;
        }
        frames.push(Frame {
            positions_angstrom: r.positions.clone(),
            ..Frame::default()
        });
    }
    if frames.iter().zip(&records).any(|(_, r)| r.flat) {
        warnings.push(
            "2D coordinates (a drawing: every z is zero or the program line says 2D): the molecule is shown flat"
                .to_string(),
        );
    }
    warnings.extend(super::fields::unknown_elements_warning(
        &structure,
        "a symbol (a query or pseudo atom)",
    ));
    Ok(Parsed {
        structure,
        frames,
        warnings,
        frame_energies_hartree: Vec::new(),
    })
}

/// A record's error: `cut_short` when the file ended inside it.
struct RecordError {
    error: ReadError,
    cut_short: bool,
}

impl From<ReadError> for RecordError {
    fn from(error: ReadError) -> Self {
        RecordError {
            error,
            cut_short: false,
        }
    }
}

fn next_line<'a>(path: &Path, lines: &mut Lines<'a>, what: &str) -> Result<(usize, &'a [u8]), RecordError> {
    lines.next().ok_or_else(|| RecordError {
        error: ReadError::line(
            path,
            lines.number() + 1,
            format!("the file ends where {what} was expected (it is cut short)"),
        ),
        cut_short: true,
    })
}

/// Reads one record from its name line through `$$$$` (or the end of the file).
fn read_record(path: &Path, lines: &mut Lines) -> Result<Record, RecordError> {
    // Blank lines before a record.
    let (name_no, name_line) = loop {
        let (no, l) = next_line(path, lines, "a record's name line")?;
        if !l.trim_ascii().is_empty() || lines.remaining() == 0 {
            break (no, l);
        }
        // A molfile's name line may be blank: a blank line followed by the program line and a
        // counts line three lines down is a record; blank lines between records are not.
        let mut ahead = lines.clone();
        let counts = ahead.nth(2);
        if counts.is_some_and(|(_, c)| is_counts_line(c)) {
            break (no, l);
        }
    };
    let (_, program) = next_line(path, lines, "the program line")?;
    next_line(path, lines, "the comment line")?;
    let (counts_no, counts) = next_line(path, lines, "the counts line")?;
    let mut r = Record {
        line: name_no,
        name: String::from_utf8_lossy(name_line.trim_ascii()).into_owned(),
        flat: cols(program, 20, 22) == b"2D",
        stated_3d: cols(program, 20, 22) == b"3D",
        elements: Vec::new(),
        positions: Vec::new(),
        bonds: Vec::new(),
        orders: Vec::new(),
        partial_charges: Vec::new(),
    };
    if counts.windows(5).any(|w| w.eq_ignore_ascii_case(b"V3000")) {
        read_v3000(path, lines, &mut r)?;
    } else {
        read_v2000(path, lines, counts_no, counts, &mut r)?;
    }
    if !r.stated_3d && !r.positions.is_empty() && r.positions.iter().all(|p| p[2] == 0.0) {
        r.flat = true;
    }
    read_tail(path, lines, &mut r)?;
    Ok(r)
}

/// True for a V2000 or V3000 counts line.
fn is_counts_line(line: &[u8]) -> bool {
    line.windows(5)
        .any(|w| w.eq_ignore_ascii_case(b"V2000") || w.eq_ignore_ascii_case(b"V3000"))
        || (line.len() >= 6 && int(cols(line, 0, 3)).is_some() && int(cols(line, 3, 6)).is_some())
}

/// The atom and bond counts of a V2000 counts line (`aaabbb...`), by columns or by words.
fn v2000_counts(line: &[u8]) -> Option<(usize, usize)> {
    let fixed = || Some((int(cols(line, 0, 3))?, int(cols(line, 3, 6))?));
    let words = || {
        let mut t = tokens(line);
        Some((int(t.next()?)?, int(t.next()?)?))
    };
    let (a, b) = fixed().or_else(words)?;
    Some((usize::try_from(a).ok()?, usize::try_from(b).ok()?))
}

fn read_v2000(
    path: &Path,
    lines: &mut Lines,
    counts_no: usize,
    counts: &[u8],
    r: &mut Record,
) -> Result<(), RecordError> {
    let Some((n_atoms, n_bonds)) = v2000_counts(counts) else {
        return Err(bad(
            path,
            counts_no,
            format!(
                "expected the counts line `aaabbb... V2000` (atoms, bonds), found {:?}",
                show(counts)
            ),
        )
        .into());
    };
    // An atom line has at least 34 bytes: refuse counts the file cannot hold before allocating.
    if n_atoms > MAX_ATOMS || n_atoms.saturating_mul(34) > lines.remaining() + 34 {
        let e = bad(
            path,
            counts_no,
            format!("the counts line declares {n_atoms} atoms, more than the rest of the file can hold"),
        );
        return Err(RecordError {
            error: e,
            cut_short: true,
        });
    }
    r.elements.reserve(n_atoms);
    r.positions.reserve(n_atoms);
    for _ in 0..n_atoms {
        let (no, l) = next_line(path, lines, "an atom line")?;
        let fixed = || {
            let xyz = [float(cols(l, 0, 10))?, float(cols(l, 10, 20))?, float(cols(l, 20, 30))?];
            let sym = cols(l, 31, 34).trim_ascii();
            (!sym.is_empty()).then_some((xyz, sym))
        };
        let words = || {
            let t: Vec<&[u8]> = tokens(l).collect();
            let xyz = [float(t.first()?)?, float(t.get(1)?)?, float(t.get(2)?)?];
            Some((xyz, *t.get(3)?))
        };
        let Some((xyz, sym)) = fixed().or_else(words) else {
            return Err(bad(
                path,
                no,
                format!("expected an atom line `x y z symbol ...`, found {:?}", show(l)),
            )
            .into());
        };
        r.elements.push(element_of(sym));
        r.positions.push(xyz.map(|v| v as f32));
    }
    for _ in 0..n_bonds {
        let (no, l) = next_line(path, lines, "a bond line")?;
        let fixed = || {
            Some((
                int(cols(l, 0, 3))?,
                int(cols(l, 3, 6))?,
                int(cols(l, 6, 9)).unwrap_or(1),
            ))
        };
        let words = || {
            let mut t = tokens(l);
            Some((int(t.next()?)?, int(t.next()?)?, t.next().and_then(int).unwrap_or(1)))
        };
        let Some((a, b, order)) = fixed().or_else(words) else {
            return Err(bad(
                path,
                no,
                format!("expected a bond line `atom atom type ...`, found {:?}", show(l)),
            )
            .into());
        };
        push_bond(path, no, r, a, b, order)?;
    }
    Ok(())
}

/// A bond between 1-based atoms `a` and `b` of MDL type `order`.
fn push_bond(path: &Path, no: usize, r: &mut Record, a: i64, b: i64, order: i64) -> Result<(), RecordError> {
    let n = r.elements.len() as i64;
    if !(1..=n).contains(&a) || !(1..=n).contains(&b) || a == b {
        return Err(bad(
            path,
            no,
            format!("the bond joins atoms {a} and {b}, but the record has atoms 1 to {n}"),
        )
        .into());
    }
    let (i, j) = ((a - 1) as u32, (b - 1) as u32);
    r.bonds.push([i.min(j), i.max(j)]);
    if let Some(o) = BondOrder::from_mdl(order) {
        r.orders.push(([i.min(j), i.max(j)], o));
    }
    Ok(())
}

/// The next V3000 line, continuation lines joined (`-` at the end), without `M  V30 `.
fn v30_line(path: &Path, lines: &mut Lines) -> Result<(usize, Vec<u8>), RecordError> {
    let (no, first) = next_line(path, lines, "a V3000 line")?;
    let Some(mut body) = first.strip_prefix(b"M  V30 ").map(<[u8]>::to_vec) else {
        return Err(bad(path, no, format!("expected an `M  V30` line, found {:?}", show(first))).into());
    };
    while body.last() == Some(&b'-') {
        body.pop();
        let (_, more) = next_line(path, lines, "the continuation of a V3000 line")?;
        body.extend_from_slice(more.strip_prefix(b"M  V30 ").unwrap_or(more));
    }
    Ok((no, body))
}

fn read_v3000(path: &Path, lines: &mut Lines, r: &mut Record) -> Result<(), RecordError> {
    let mut section = "";
    loop {
        // `M  END` is left for the properties' reader.
        let mut ahead = lines.clone();
        let (_, l) = next_line(path, &mut ahead, "the V3000 connection table")?;
        if l.trim_ascii() == b"M  END" {
            return Ok(());
        }
        let (no, body) = v30_line(path, lines)?;
        let t: Vec<&[u8]> = tokens(&body).collect();
        match (t.first().copied(), t.get(1).copied()) {
            (Some(b"BEGIN"), Some(what)) => {
                section = match what {
                    b"ATOM" => "atom",
                    b"BOND" => "bond",
                    b"CTAB" => "",
                    _ => "other",
                };
            }
            (Some(b"END"), _) => section = "",
            (Some(b"COUNTS"), _) => {
                let n = t.get(1).and_then(|v| int(v)).and_then(|v| usize::try_from(v).ok());
                match n {
                    Some(n) if n <= MAX_ATOMS && n.saturating_mul(20) <= lines.remaining() + 20 => {
                        r.elements.reserve(n);
                        r.positions.reserve(n);
                    }
                    _ => {
                        return Err(bad(
                            path,
                            no,
                            format!(
                                "expected `COUNTS atoms bonds ...` that the file can hold, found {:?}",
                                show(&body)
                            ),
                        )
                        .into());
                    }
                }
            }
            _ if section == "atom" => {
                // index type x y z aamap [properties]
                let parsed = (|| {
                    let xyz = [float(t.get(2)?)?, float(t.get(3)?)?, float(t.get(4)?)?];
                    Some((int(t.first()?)?, *t.get(1)?, xyz))
                })();
                let Some((index, sym, xyz)) = parsed else {
                    return Err(bad(
                        path,
                        no,
                        format!("expected a V3000 atom `index type x y z ...`, found {:?}", show(&body)),
                    )
                    .into());
                };
                if index != r.elements.len() as i64 + 1 {
                    return Err(bad(
                        path,
                        no,
                        format!("expected atom {} next, found atom {index}", r.elements.len() + 1),
                    )
                    .into());
                }
                r.elements.push(element_of(sym));
                r.positions.push(xyz.map(|v| v as f32));
            }
            _ if section == "bond" => {
                let pair = (|| Some((int(t.get(2)?)?, int(t.get(3)?)?, int(t.get(1)?)?)))();
                let Some((a, b, order)) = pair else {
                    return Err(bad(
                        path,
                        no,
                        format!(
                            "expected a V3000 bond `index type atom atom ...`, found {:?}",
                            show(&body)
                        ),
                    )
                    .into());
                };
                push_bond(path, no, r, a, b, order)?;
            }
            _ => {}
        }
    }
}

/// Properties up to `M  END`, then an SD file's data items up to `$$$$` (or the end of the file).
fn read_tail(path: &Path, lines: &mut Lines, r: &mut Record) -> Result<(), RecordError> {
    // Properties: `A  ` aliases and `V  `/`G  ` lines carry a text line after them.
    let mut ended = false;
    while let Some((_, l)) = lines.next() {
        if l.trim_ascii() == b"M  END" {
            ended = true;
            break;
        }
        if l.trim_ascii() == b"$$$$" {
            return Ok(());
        }
        if l.starts_with(b"A  ") || l.starts_with(b"G  ") {
            lines.next();
        }
    }
    if !ended {
        return Ok(());
    }
    // Data items: `> <name>` then value lines.
    while let Some((no, l)) = lines.next() {
        if l.trim_ascii() == b"$$$$" {
            return Ok(());
        }
        if l.starts_with(b">") && memchr::memmem::find(l, b"<PUBCHEM_MMFF94_PARTIAL_CHARGES>").is_some() {
            read_pubchem_charges(path, lines, no, r)?;
        }
    }
    Ok(())
}

/// PubChem's `PUBCHEM_MMFF94_PARTIAL_CHARGES`: a count, then `atom charge` lines.
fn read_pubchem_charges(path: &Path, lines: &mut Lines, heading: usize, r: &mut Record) -> Result<(), RecordError> {
    let (no, l) = next_line(path, lines, "the partial charges' count")?;
    let Some(n) = tokens(l).next().and_then(int).and_then(|v| usize::try_from(v).ok()) else {
        return Err(bad(
            path,
            no,
            format!(
                "expected the number of partial charges after line {heading}, found {:?}",
                show(l)
            ),
        )
        .into());
    };
    for _ in 0..n.min(r.elements.len()) {
        let (no, l) = next_line(path, lines, "a partial charge")?;
        let mut t = tokens(l);
        let pair = (|| Some((int(t.next()?)?, float(t.next()?)?)))();
        match pair {
            Some((i, q)) if i >= 1 && (i as usize) <= r.elements.len() && q.is_finite() => {
                r.partial_charges.push((i as usize, q as f32));
            }
            _ => {
                return Err(bad(
                    path,
                    no,
                    format!("expected `atom charge` with an atom of the record, found {:?}", show(l)),
                )
                .into());
            }
        }
    }
    Ok(())
}
