//! DL_POLY CONFIG, REVCON and HISTORY reader (DL_POLY 4 and Classic).
//!
//! Called by `io::load`. A CONFIG (or REVCON) file is a title, a line `levcfg imcon [natms ...]`,
//! three cell-vector lines when `imcon` > 0, then per atom a line `name [index]` and one to three
//! lines of position, velocity and force (`levcfg` 0, 1, 2). A HISTORY file has the same two
//! lines, then frames: a line `timestep nstep natms keytrj imcon tstep [time]`, the cell lines when
//! `imcon` > 0, and per atom a line `name index mass charge [displacement]` and its vector lines.
//! The header's `levcfg` decides the lines per atom; a HISTORY's frames carry a cell when the line
//! after the first `timestep` line is a vector, as MDAnalysis decides (writers put other values on
//! the frame lines than in the header). A CONFIG's atoms run to the end of the file. Atoms are ordered by their index where every atom has one (DL_POLY
//! may write them in another order); masses and charges come from a HISTORY file's atom lines;
//! elements from the names (`K+`, `Cl-`, `OW`), as for Tinker files. Times are `nstep * tstep` in
//! ps (or the frame's own time, DL_POLY 4).

use super::ReadError;
use super::fields::{Lines, float, int, show, tokens};
use super::load::Parsed;
use crate::model::{Frame, Name8, Structure, UnitCell};
use std::path::Path;

/// Bytes of the shortest atom record (`A\n` and one line of three numbers).
const MIN_ATOM_BYTES: usize = 8;

/// True for a file named as DL_POLY names them (CONFIG, REVCON, HISTORY, with any suffix).
pub fn named_like(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    ["CONFIG", "REVCON", "HISTORY"].iter().any(|p| upper.starts_with(p))
}

/// True when the second line reads `levcfg imcon ...` (small integers).
pub fn looks_like(head: &[u8]) -> bool {
    let mut lines = head.split(|&b| b == b'\n');
    let _title = lines.next();
    let Some(second) = lines.next() else { return false };
    let v: Vec<Option<i64>> = tokens(second).map(int).collect();
    v.len() >= 2 && matches!(v[0], Some(0..=2)) && matches!(v[1], Some(0..=7)) && v.iter().take(3).all(Option::is_some)
}

fn bad(path: &Path, line: usize, message: String) -> ReadError {
    ReadError::line(path, line, message)
}

fn next<'a>(path: &Path, lines: &mut Lines<'a>, what: &str) -> Result<(usize, &'a [u8]), ReadError> {
    lines.next().ok_or_else(|| {
        bad(
            path,
            lines.number() + 1,
            format!("the file ends where {what} was expected (it is cut short)"),
        )
    })
}

fn vector(path: &Path, no: usize, line: &[u8], what: &str) -> Result<[f64; 3], ReadError> {
    let mut t = tokens(line);
    let v = (|| Some([float(t.next()?)?, float(t.next()?)?, float(t.next()?)?]))();
    v.ok_or_else(|| {
        bad(
            path,
            no,
            format!("expected {what} (three numbers), found {:?}", show(line)),
        )
    })
}

/// One atom as read: name, index, mass, charge, position.
struct Atom {
    name: Name8,
    index: Option<i64>,
    mass: Option<f32>,
    charge: Option<f32>,
    position: [f32; 3],
}

/// Reads a CONFIG, REVCON or HISTORY file.
pub fn read(path: &Path, bytes: &[u8]) -> Result<Parsed, ReadError> {
    let mut lines = Lines::new(bytes);
    let (_, title) = next(path, &mut lines, "the title line")?;
    let (key_no, key) = next(path, &mut lines, "the line `levcfg imcon`")?;
    let k: Vec<i64> = tokens(key).map_while(int).collect();
    let (levcfg, imcon) = match (k.first(), k.get(1)) {
        (Some(&l @ 0..=2), Some(&i @ 0..=7)) => (l as usize, i),
        _ => {
            return Err(bad(
                path,
                key_no,
                format!("expected `levcfg imcon` (0-2 and 0-7), found {:?}", show(key)),
            ));
        }
    };
    let history = lines
        .clone()
        .next()
        .is_some_and(|(_, l)| l.trim_ascii_start().starts_with(b"timestep"));
    // Whether a HISTORY's frames carry a cell: the line after the first `timestep` line is a
    // vector (writers put other values than the header's on their frame lines).
    let has_cell = if history {
        lines
            .clone()
            .nth(1)
            .is_some_and(|(_, l)| tokens(l).count() == 3 && tokens(l).all(|t| float(t).is_some()))
    } else {
        imcon > 0
    };
    let mut frames: Vec<(Frame, Vec<Atom>, usize)> = Vec::new();
    let mut warnings = Vec::new();
    if history {
        while let Some((no, l)) = lines.clone().next() {
            if l.trim_ascii().is_empty() {
                lines.next();
                continue;
            }
            let mut t = tokens(l);
            if t.next() != Some(b"timestep".as_slice()) {
                return Err(bad(
                    path,
                    no,
                    format!("expected a frame's `timestep` line, found {:?}", show(l)),
                ));
            }
            let v: Vec<&[u8]> = t.collect();
            let n = v.get(1).and_then(|x| int(x)).and_then(|x| usize::try_from(x).ok());
            let Some(n) = n else {
                return Err(bad(
                    path,
                    no,
                    format!("expected `timestep nstep natms ...`, found {:?}", show(l)),
                ));
            };
            let step = v.first().and_then(|x| int(x));
            let dt = v.get(4).and_then(|x| float(x));
            let time = v.get(5).and_then(|x| float(x)).or_else(|| Some(step? as f64 * dt?));
            lines.next();
            match read_frame(path, &mut lines, n, levcfg, has_cell, true) {
                Ok((mut frame, atoms)) => {
                    frame.step = step;
                    frame.time_ps = time;
                    frames.push((frame, atoms, no));
                }
                Err(e) if !frames.is_empty() && e.message.contains("cut short") => {
                    warnings.push(super::cut_short_lines_warning(frames.len() as u64, no, lines.number()));
                    break;
                }
                Err(e) => return Err(e),
            }
        }
    } else {
        // A CONFIG holds one frame: the atoms that follow, to the end of the file (the numbers after
        // `levcfg imcon` are a step count or an energy in some writers, not always the atoms').
        let room = lines.remaining() / MIN_ATOM_BYTES + 1;
        let (frame, atoms) = read_frame(path, &mut lines, room, levcfg, has_cell, false)?;
        frames.push((frame, atoms, key_no));
    }
    let Some((_, first_atoms, _)) = frames.first() else {
        return Err(bad(
            path,
            key_no + 1,
            "expected at least one frame after the header".into(),
        ));
    };
    // The order of the atoms by index, where every atom has one (the first frame's).
    let order: Vec<usize> = {
        let mut o: Vec<usize> = (0..first_atoms.len()).collect();
        if first_atoms.iter().all(|a| a.index.is_some()) {
            o.sort_by_key(|&i| first_atoms[i].index);
        }
        o
    };
    let mut structure = Structure {
        title: String::from_utf8_lossy(title.trim_ascii()).into_owned(),
        ..Structure::default()
    };
    structure.reserve(order.len());
    for &i in &order {
        let a = &first_atoms[i];
        let element = super::tinker::element_of_name(a.name.as_str().as_bytes());
        structure.push_atom(element, a.name, Name8::EMPTY, 1, Name8::EMPTY, Name8::EMPTY);
    }
    if first_atoms.iter().all(|a| a.mass.is_some()) {
        structure.masses_dalton = Some(order.iter().map(|&i| first_atoms[i].mass.unwrap_or(0.0)).collect());
    }
    if first_atoms.iter().all(|a| a.charge.is_some()) {
        structure.charges_e = Some(order.iter().map(|&i| first_atoms[i].charge.unwrap_or(0.0)).collect());
    }
    let n_atoms = order.len();
    let mut out = Vec::with_capacity(frames.len());
    for (k, (mut frame, atoms, no)) in frames.into_iter().enumerate() {
        if atoms.len() != n_atoms {
            warnings.push(super::fields::frame_unlike_first(k, no, atoms.len() as u64, n_atoms));
            break;
        }
        // Each frame in the first frame's order by index.
        let mut by_index = order.clone();
        if atoms.iter().all(|a| a.index.is_some()) {
            by_index = (0..atoms.len()).collect();
            by_index.sort_by_key(|&i| atoms[i].index);
        }
        frame.positions_angstrom = by_index.iter().map(|&i| atoms[i].position).collect();
        out.push(frame);
    }
    warnings.extend(super::fields::unknown_elements_warning(&structure, "a name"));
    Ok(Parsed {
        structure,
        frames: out,
        warnings,
        frame_energies_hartree: Vec::new(),
    })
}

/// One frame after its `timestep` line (HISTORY) or the header (CONFIG): the cell, then `n` atoms.
fn read_frame(
    path: &Path,
    lines: &mut Lines,
    n: usize,
    levcfg: usize,
    has_cell: bool,
    history: bool,
) -> Result<(Frame, Vec<Atom>), ReadError> {
    let mut cell = None;
    if has_cell {
        let mut v = [[0.0; 3]; 3];
        for row in &mut v {
            let (no, l) = next(path, lines, "a cell vector")?;
            *row = vector(path, no, l, "a cell vector")?;
        }
        // DL_POLY's cells are centred on the origin.
        let c = UnitCell::from_vectors(v).centred_on([0.0; 3]);
        cell = c.is_valid().then_some(c);
    }
    if history && n.saturating_mul(MIN_ATOM_BYTES) > lines.remaining() + MIN_ATOM_BYTES {
        return Err(bad(
            path,
            lines.number(),
            format!("the frame declares {n} atoms, more than the rest of the file can hold (it is cut short)"),
        ));
    }
    let mut atoms = Vec::with_capacity(n);
    for _ in 0..n {
        // A CONFIG without a count ends at the end of the file.
        if !history && lines.clone().all(|(_, l)| l.trim_ascii().is_empty()) {
            break;
        }
        let (no, l) = next(path, lines, "an atom's name line")?;
        let t: Vec<&[u8]> = tokens(l).collect();
        let Some(&name) = t.first() else {
            return Err(bad(path, no, "expected an atom's name line, found a blank line".into()));
        };
        if float(name).is_some() && t.len() >= 3 {
            return Err(bad(
                path,
                no,
                format!(
                    "expected an atom's name line (`name index ...`), found numbers {:?}",
                    show(l)
                ),
            ));
        }
        let number = |k: usize| t.get(k).and_then(|v| float(v)).map(|v| v as f32);
        let (_, pl) = next(path, lines, "an atom's position")?;
        let p = vector(path, no + 1, pl, "an atom's position")?;
        for _ in 0..levcfg {
            next(path, lines, "an atom's velocity or force")?;
        }
        atoms.push(Atom {
            name: Name8::new(name),
            index: t.get(1).and_then(|v| int(v)),
            mass: if history { number(2) } else { None },
            charge: if history { number(3) } else { None },
            position: p.map(|v| v as f32),
        });
    }
    Ok((
        Frame {
            positions_angstrom: Vec::new(),
            cell,
            ..Frame::default()
        },
        atoms,
    ))
}
