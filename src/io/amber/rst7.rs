//! AMBER ASCII restart and input coordinates (`.rst7`, `.inpcrd`, `.restrt`): one frame, with
//! optional velocities and box.
//!
//! Called by `io::load` (the frame joins the trajectory of the topology before it) and by the fuzz
//! target. Layout: a title line; the atom count and optionally the time in ps; `3N` coordinates
//! (Angstrom) in `6F12.7` lines (cut by column: values may touch); then optionally as many lines of
//! velocities (Angstrom per 1/20.455 ps, converted here to Angstrom/ps); then optionally a box line
//! `a b c alpha beta gamma`. Which optional parts are present follows from the number of lines left
//! after the coordinates: none, one (box), the coordinate line count (velocities), or one more
//! (velocities and box).

use crate::io::ReadError;
use crate::io::fields::{Lines, float, int, show};
use crate::model::units::PS_PER_AMBER_TIME;
use crate::model::{Frame, UnitCell};
use std::path::Path;

const WIDTH: usize = 12;
const PER_LINE: usize = 6;

/// A restart file as read.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Rst7 {
    pub title: String,
    /// Positions, box and time.
    pub frame: Frame,
    /// Velocities in Angstrom/ps, when the file has them.
    pub velocities_angstrom_per_ps: Option<Vec<[f32; 3]>>,
}

/// Reads an AMBER ASCII restart or inpcrd file.
pub fn read(path: &Path, bytes: &[u8]) -> Result<Rst7, ReadError> {
    let lines: Vec<(usize, &[u8])> = Lines::new(bytes).collect();
    let Some(&(_, title)) = lines.first() else {
        return Err(ReadError::line(path, 1, "expected a title line, found an empty file"));
    };
    let Some(&(count_no, count_line)) = lines.get(1) else {
        return Err(ReadError::line(
            path,
            2,
            "expected the atom count (and optionally the time) on line 2, found the end of the file",
        ));
    };
    let mut toks = count_line.split(|c| c.is_ascii_whitespace()).filter(|t| !t.is_empty());
    let count_field = toks.next().unwrap_or_default();
    let n_atoms = int(count_field).filter(|&n| n > 0).ok_or_else(|| {
        ReadError::line(
            path,
            count_no,
            format!(
                "expected the atom count (a positive integer), found {:?}",
                show(count_field)
            ),
        )
    })? as u64;
    let time_ps = toks.next().and_then(float);
    let body: Vec<(usize, &[u8])> = lines
        .get(2..)
        .unwrap_or_default()
        .iter()
        .copied()
        .filter(|(_, l)| !l.trim_ascii().is_empty())
        .collect();
    let coord_lines = (3 * n_atoms).div_ceil(PER_LINE as u64);
    if coord_lines > body.len() as u64 {
        return Err(ReadError::line(
            path,
            count_no,
            format!(
                "{n_atoms} atoms need {coord_lines} coordinate lines (6F12.7), but the file has {} lines after line {count_no}: the file is cut short or the count is wrong",
                body.len()
            ),
        ));
    }
    let n = n_atoms as usize;
    let coord_lines = coord_lines as usize;
    let rest = body.len() - coord_lines;
    let (has_velocities, has_box) = match rest {
        0 => (false, false),
        1 => (false, true),
        r if r == coord_lines => (true, false),
        r if r == coord_lines + 1 => (true, true),
        r => {
            return Err(ReadError::line(
                path,
                body.get(coord_lines).map_or(count_no, |&(no, _)| no),
                format!(
                    "expected after the {coord_lines} coordinate lines nothing, a box line, {coord_lines} velocity lines or both; found {r} lines"
                ),
            ));
        }
    };
    let positions = triples(path, body.get(..coord_lines).unwrap_or_default(), n, "coordinate")?;
    let velocities = if has_velocities {
        let v = triples(
            path,
            body.get(coord_lines..2 * coord_lines).unwrap_or_default(),
            n,
            "velocity",
        )?;
        let scale = (1.0 / PS_PER_AMBER_TIME) as f32;
        Some(v.into_iter().map(|p| p.map(|x| x * scale)).collect())
    } else {
        None
    };
    let cell = if has_box {
        let (no, line) = body.last().copied().unwrap_or((count_no, &[]));
        let mut v = [0f64; 6];
        for (k, slot) in v.iter_mut().enumerate() {
            let field = column(line, k);
            *slot = float(field).ok_or_else(|| {
                ReadError::line(
                    path,
                    no,
                    format!(
                        "expected the box (a b c alpha beta gamma, 6F12.7): field {} is {:?}",
                        k + 1,
                        show(field)
                    ),
                )
            })?;
        }
        Some(UnitCell::new([v[0], v[1], v[2]], [v[3], v[4], v[5]])).filter(UnitCell::is_valid)
    } else {
        None
    };
    Ok(Rst7 {
        title: String::from_utf8_lossy(title.trim_ascii()).into_owned(),
        frame: Frame {
            positions_angstrom: positions,
            cell,
            time_ps,
            step: None,
        },
        velocities_angstrom_per_ps: velocities,
    })
}

fn column(line: &[u8], k: usize) -> &[u8] {
    line.get(k * WIDTH..((k + 1) * WIDTH).min(line.len()))
        .unwrap_or_default()
}

/// `n` triples from `6F12.7` lines.
fn triples(path: &Path, lines: &[(usize, &[u8])], n: usize, what: &str) -> Result<Vec<[f32; 3]>, ReadError> {
    let mut out = Vec::with_capacity(n);
    let mut xyz = [0f32; 3];
    let mut k = 0;
    for &(no, line) in lines {
        let want = (3 * n - k).min(PER_LINE);
        for c in 0..want {
            let field = column(line, c);
            let v = float(field).ok_or_else(|| {
                ReadError::line(
                    path,
                    no,
                    format!(
                        "expected a {what} (F12.7) in columns {}-{}, found {:?}",
                        c * WIDTH + 1,
                        (c + 1) * WIDTH,
                        show(field)
                    ),
                )
            })?;
            xyz[k % 3] = v as f32;
            k += 1;
            if k % 3 == 0 {
                out.push(xyz);
            }
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn coordinates_velocities_and_box() {
        let text = "ACE
    3  0.3000000E+02
   6.6528795   6.6711416  -8.5963255   7.3133773   5.8359736  -8.8294175
   8.3254058   6.2227613  -8.7098593
   0.2045500   0.0000000  -0.4091000   0.0000000   0.0000000   0.0000000
   0.0000000   0.0000000   0.0000000
  30.0000000  31.0000000  32.0000000  90.0000000  90.0000000  90.0000000
";
        let r = read(Path::new("t.rst7"), text.as_bytes()).unwrap();
        assert_eq!(r.title, "ACE");
        assert_eq!(r.frame.time_ps, Some(30.0));
        assert_eq!(r.frame.positions_angstrom[2], [8.325_406, 6.222_761, -8.709_859]);
        let v = r.velocities_angstrom_per_ps.unwrap();
        assert!(
            (v[0][0] - 4.18410).abs() < 1e-4 && (v[0][2] + 8.36820).abs() < 1e-4,
            "{v:?}"
        );
        assert_eq!(r.frame.cell.unwrap().lengths_angstrom, [30.0, 31.0, 32.0]);
        // Coordinates only, values touching.
        let r = read(Path::new("t"), b"t\n1\n-100.0000000-200.0000000 300.0000000\n").unwrap();
        assert_eq!(r.frame.positions_angstrom, vec![[-100.0, -200.0, 300.0]]);
        assert_eq!(r.frame.cell, None);
        assert!(r.velocities_angstrom_per_ps.is_none());
    }

    #[test]
    fn damaged_files() {
        assert!(read(Path::new("t"), b"").is_err());
        assert!(read(Path::new("t"), b"t\n").is_err());
        assert!(read(Path::new("t"), b"t\nx\n").is_err());
        let e = read(Path::new("t"), b"t\n4\n   1.0000000   2.0000000   3.0000000\n").unwrap_err();
        assert!(e.message.contains("cut short"), "{e}");
        let e = read(Path::new("t"), b"t\n1\n   1.0000000   2.00x0000   3.0000000\n").unwrap_err();
        assert_eq!(e.location, crate::io::Location::Line(3), "{e}");
        assert!(read(Path::new("t"), b"t\n99999999999\n").is_err());
    }
}
