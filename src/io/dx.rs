//! OpenDX scalar-field reader and writer (the subset VMD, APBS, PyMOL and gridDataFormats use).
//!
//! Called by [`super::load`] for `.dx` files and by `orbitfield grid -o OUT.dx`. Layout:
//!
//! ```text
//! # comments
//! object 1 class gridpositions counts NX NY NZ
//! origin X0 Y0 Z0
//! delta DX1 DY1 DZ1          one line per axis
//! delta ...
//! delta ...
//! object 2 class gridconnections counts NX NY NZ
//! object 3 class array type double rank 0 items N data follows
//! v v v                      z fastest, any number per line (writers use 3)
//! attribute "dep" string "positions"
//! object "name" class field
//! component "positions" value 1 ...
//! ```
//!
//! The first comment line is the grid's description: for potential maps written by `grid esp` it
//! names the charges, the summation method and the unit of the values (e.g. `(kT/e at 300 K)`), as
//! APBS and VMD users expect to find it. A later comment that names the unit (APBS writes "Data
//! from APBS 3.4.1" first and "POTENTIAL (kT/e)" after it) is added to the description.
//!
//! Coordinates are Angstrom by convention (APBS, VMD); [`Grid3`] holds bohr. The reader accepts
//! quoted or bare type names (`type "float"`), `items N` with or without `data follows` on the same
//! line, and stops after N values. The writer emits `%.7e`-style values, three per line, and writes
//! atomically.

use super::ReadError;
use super::text::{lines, parse_f64, parse_i64};
use crate::model::units::{ANGSTROM_PER_BOHR, BOHR_PER_ANGSTROM};
use crate::model::{Grid3, Lattice};
use std::path::Path;

/// A comment that names what the values are in (`POTENTIAL (kT/e)`).
fn names_a_unit(comment: &str) -> bool {
    let c = comment.to_ascii_lowercase();
    c.contains("kt/e") || c.contains("kcal/mol") || c.contains("potential")
}

fn fields(line: &[u8]) -> Vec<&[u8]> {
    line.split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
        .collect()
}

/// Reads a DX file from its bytes (coordinates converted from Angstrom to bohr).
pub fn read(path: &Path, bytes: &[u8]) -> Result<Grid3, ReadError> {
    let mut dims: Option<[usize; 3]> = None;
    let mut origin: Option<[f64; 3]> = None;
    let mut deltas: Vec<[f64; 3]> = Vec::new();
    let mut items: Option<(usize, usize)> = None; // (count, line)
    let mut it = lines(bytes);
    let mut last_line = 0;
    let mut title = String::new();
    // Header, up to the array object that announces the data.
    for (ln, line) in it.by_ref() {
        last_line = ln;
        let f = fields(line);
        let Some(first) = f.first() else { continue };
        if first.starts_with(b"#") {
            // The first comment line, and a later one that names the values' unit (APBS:
            // "Data from APBS 3.4.1", then "POTENTIAL (kT/e)").
            let comment = String::from_utf8_lossy(line).trim_start_matches('#').trim().to_string();
            if title.is_empty() {
                title = comment;
            } else if !comment.is_empty() && names_a_unit(&comment) && !names_a_unit(&title) && title.len() < 200 {
                title = format!("{title}; {comment}");
            }
            continue;
        }
        let lower: Vec<String> = f
            .iter()
            .map(|x| String::from_utf8_lossy(x).to_ascii_lowercase())
            .collect();
        let word = |i: usize| lower.get(i).map(String::as_str).unwrap_or("");
        match word(0) {
            "object" if lower.iter().any(|w| w == "gridpositions") => {
                let k = lower
                    .iter()
                    .position(|w| w == "counts")
                    .ok_or_else(|| ReadError::line(path, ln, "expected `counts NX NY NZ` on the gridpositions line"))?;
                let mut d = [0usize; 3];
                for (a, da) in d.iter_mut().enumerate() {
                    let field = f.get(k + 1 + a).copied().unwrap_or(b"");
                    let n = parse_i64(path, ln, "a grid count", field)?;
                    if !(1..=(1 << 24)).contains(&n) {
                        return Err(ReadError::line(
                            path,
                            ln,
                            format!("grid count {n} is out of range (1..=16777216)"),
                        ));
                    }
                    *da = n as usize;
                }
                dims = Some(d);
            }
            "origin" => {
                let mut o = [0.0; 3];
                for (a, oa) in o.iter_mut().enumerate() {
                    *oa = parse_f64(path, ln, "an origin coordinate", f.get(a + 1).copied().unwrap_or(b""))?;
                }
                origin = Some(o);
            }
            "delta" => {
                if deltas.len() >= 3 {
                    return Err(ReadError::line(
                        path,
                        ln,
                        "expected three `delta` lines, found a fourth",
                    ));
                }
                let mut v = [0.0; 3];
                for (a, va) in v.iter_mut().enumerate() {
                    *va = parse_f64(path, ln, "a delta component", f.get(a + 1).copied().unwrap_or(b""))?;
                }
                deltas.push(v);
            }
            "object" if lower.iter().any(|w| w == "array") => {
                let k = lower
                    .iter()
                    .position(|w| w == "items")
                    .ok_or_else(|| ReadError::line(path, ln, "expected `items N` on the array line"))?;
                let field = f.get(k + 1).copied().unwrap_or(b"");
                let field = field.strip_suffix(b",").unwrap_or(field);
                let n = parse_i64(path, ln, "the item count", field)?;
                if n < 0 {
                    return Err(ReadError::line(path, ln, format!("item count {n} is negative")));
                }
                if let Some(t) = lower.iter().position(|w| w == "type") {
                    let ty = word(t + 1).trim_matches('"');
                    if !matches!(
                        ty,
                        "double" | "float" | "int" | "integer" | "short" | "byte" | "unsigned"
                    ) {
                        return Err(ReadError::line(
                            path,
                            ln,
                            format!("expected a numeric array type, found {ty:?}"),
                        ));
                    }
                }
                if lower
                    .iter()
                    .any(|w| w == "binary" || w == "msb" || w == "lsb" || w == "ieee")
                {
                    return Err(ReadError::line(
                        path,
                        ln,
                        "binary DX data is not supported; expected ASCII data",
                    ));
                }
                items = Some((n as usize, ln));
                break;
            }
            _ => {}
        }
    }
    let Some((n_items, items_line)) = items else {
        return Err(ReadError::line(
            path,
            last_line,
            "file ends before the data array (`object N class array ... items N`)",
        ));
    };
    let dims =
        dims.ok_or_else(|| ReadError::line(path, items_line, "expected a gridpositions object before the data"))?;
    let origin =
        origin.ok_or_else(|| ReadError::line(path, items_line, "expected an `origin` line before the data"))?;
    if deltas.len() != 3 {
        return Err(ReadError::line(
            path,
            items_line,
            format!("expected three `delta` lines, found {}", deltas.len()),
        ));
    }
    let n = dims[0] as u128 * dims[1] as u128 * dims[2] as u128;
    if n != n_items as u128 {
        return Err(ReadError::line(
            path,
            items_line,
            format!(
                "the array has {n_items} items but the grid is {}x{}x{} = {n} points",
                dims[0], dims[1], dims[2]
            ),
        ));
    }
    if n > bytes.len() as u128 / 2 + 1 {
        return Err(ReadError::line(
            path,
            items_line,
            format!("{n} values cannot fit in a file of {} bytes", bytes.len()),
        ));
    }
    let lattice = Lattice {
        origin_bohr: origin.map(|x| x * BOHR_PER_ANGSTROM),
        steps_bohr: [0, 1, 2].map(|a| {
            deltas
                .get(a)
                .copied()
                .unwrap_or([0.0; 3])
                .map(|x| x * BOHR_PER_ANGSTROM)
        }),
        dims,
    };
    let mut values = vec![0.0f32; n as usize];
    let [nx, ny, nz] = dims;
    let (mut i, mut j, mut k) = (0usize, 0usize, 0usize);
    let mut read = 0usize;
    'outer: for (ln, line) in it {
        last_line = ln;
        for f in line.split(|b| b.is_ascii_whitespace()).filter(|f| !f.is_empty()) {
            if read == n_items {
                break 'outer;
            }
            let s = std::str::from_utf8(f).unwrap_or("");
            let v = match s.parse::<f32>() {
                Ok(v) if v.is_finite() => v,
                _ => parse_f64(path, ln, "a grid value", f)? as f32,
            };
            if let Some(slot) = values.get_mut(i + nx * (j + ny * k)) {
                *slot = v;
            }
            read += 1;
            k += 1;
            if k == nz {
                k = 0;
                j += 1;
                if j == ny {
                    j = 0;
                    i += 1;
                }
            }
        }
    }
    if read < n_items {
        return Err(ReadError::line(
            path,
            last_line + 1,
            format!("file ends early: expected {n_items} values, found {read}"),
        ));
    }
    Ok(Grid3 {
        lattice,
        values,
        description: title,
    })
}

/// Renders `grid` as DX text (Angstrom coordinates).
pub fn to_text(grid: &Grid3) -> String {
    use std::fmt::Write;
    let l = &grid.lattice;
    let [nx, ny, nz] = l.dims;
    let mut s = String::with_capacity(nx * ny * nz * 16 + 1024);
    let desc = grid.description.replace(['\n', '\r'], " ");
    let _ = writeln!(
        s,
        "# {}",
        if desc.is_empty() {
            "orbitfield field"
        } else {
            desc.as_str()
        }
    );
    let _ = writeln!(
        s,
        "# written by orbitfield {}; coordinates in Angstrom, z fastest",
        env!("CARGO_PKG_VERSION")
    );
    let _ = writeln!(s, "object 1 class gridpositions counts {nx} {ny} {nz}");
    let o = l.origin_bohr.map(|x| x * ANGSTROM_PER_BOHR);
    let _ = writeln!(s, "origin {:.9e} {:.9e} {:.9e}", o[0], o[1], o[2]);
    for a in 0..3 {
        let d = l.steps_bohr[a].map(|x| x * ANGSTROM_PER_BOHR);
        let _ = writeln!(s, "delta {:.9e} {:.9e} {:.9e}", d[0], d[1], d[2]);
    }
    let _ = writeln!(s, "object 2 class gridconnections counts {nx} {ny} {nz}");
    let _ = writeln!(
        s,
        "object 3 class array type double rank 0 items {} data follows",
        l.n_points()
    );
    let mut col = 0;
    for i in 0..nx {
        for j in 0..ny {
            for k in 0..nz {
                let v = grid.values.get(l.index(i, j, k)).copied().unwrap_or(0.0);
                if col > 0 {
                    s.push(' ');
                }
                let _ = write!(s, "{v:.7e}");
                col += 1;
                if col == 3 {
                    s.push('\n');
                    col = 0;
                }
            }
        }
    }
    if col > 0 {
        s.push('\n');
    }
    let _ = writeln!(s, "attribute \"dep\" string \"positions\"");
    let _ = writeln!(s, "object \"orbitfield\" class field");
    let _ = writeln!(s, "component \"positions\" value 1");
    let _ = writeln!(s, "component \"connections\" value 2");
    let _ = writeln!(s, "component \"data\" value 3");
    s
}

/// Writes `grid` to `path` atomically.
pub fn write(path: &Path, grid: &Grid3) -> std::io::Result<()> {
    super::write_atomically(path, to_text(grid).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Grid3 {
        let lattice = Lattice {
            origin_bohr: [-1.0, 0.5, 2.0],
            steps_bohr: [[0.2, 0.0, 0.0], [0.0, 0.3, 0.0], [0.0, 0.0, 0.25]],
            dims: [3, 4, 5],
        };
        let values = (0..lattice.n_points())
            .map(|i| (i as f32 * 0.37).cos() * 1e-2)
            .collect();
        Grid3 {
            lattice,
            values,
            description: "sample".into(),
        }
    }

    #[test]
    fn round_trip() {
        let g = sample();
        let text = to_text(&g);
        let r = read(Path::new("t.dx"), text.as_bytes()).unwrap();
        assert_eq!(r.lattice.dims, g.lattice.dims);
        for a in 0..3 {
            assert!((r.lattice.origin_bohr[a] - g.lattice.origin_bohr[a]).abs() < 1e-9);
            for b in 0..3 {
                assert!((r.lattice.steps_bohr[a][b] - g.lattice.steps_bohr[a][b]).abs() < 1e-9);
            }
        }
        assert_eq!(r.values, g.values);
        assert_eq!(r.description, "sample");
    }

    #[test]
    fn apbs_style_header() {
        let text = "# Data from APBS\nobject 1 class gridpositions counts 2 1 2\norigin 0.0 0.0 0.0\ndelta 1.0 0.0 0.0\ndelta 0.0 1.0 0.0\ndelta 0.0 0.0 1.0\nobject 2 class gridconnections counts 2 1 2\nobject 3 class array type \"float\" rank 0 items 4 data follows\n1.0 2.0 3.0\n4.0\nattribute \"dep\" string \"positions\"\n";
        let g = read(Path::new("a.dx"), text.as_bytes()).unwrap();
        assert_eq!(g.values, vec![1.0, 3.0, 2.0, 4.0]);
    }

    /// Mutated and truncated copies of a valid file: errors or values, never a panic.
    #[test]
    fn mutations_never_panic() {
        let text = to_text(&sample());
        let mut seed = 7u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let junk: &[&[u8]] = &[
            b"-",
            b"9999999999",
            b"\n",
            b" ",
            b"nan",
            b"items",
            b"delta 1 2 3\n",
            b"0",
            b"\xff",
        ];
        for _ in 0..3000 {
            let mut b = text.as_bytes().to_vec();
            for _ in 0..1 + next() % 4 {
                let at = next() % b.len();
                let j = junk[next() % junk.len()];
                match next() % 3 {
                    0 => b.splice(at..(at + 1).min(b.len()), j.iter().copied()).for_each(drop),
                    1 => b.truncate(at),
                    _ => b.splice(at..at, j.iter().copied()).for_each(drop),
                }
                if b.is_empty() {
                    break;
                }
            }
            let _ = read(Path::new("m.dx"), &b);
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let text = to_text(&sample());
        for cut in [0, 10, 100, 300, text.len() / 2] {
            assert!(read(Path::new("t.dx"), &text.as_bytes()[..cut]).is_err(), "cut {cut}");
        }
        let wrong = text.replace("items 60", "items 61");
        assert!(read(Path::new("w.dx"), wrong.as_bytes()).is_err());
        let huge = text
            .replace("counts 3 4 5", "counts 16000000 16000000 2")
            .replace("items 60", "items 512000000000000");
        assert!(read(Path::new("h.dx"), huge.as_bytes()).is_err());
    }
}
