//! Gaussian cube reader and writer.
//!
//! Called by [`super::load`] (opening `.cube` files), by `orbitfield grid -o OUT.cube` and by the
//! viewer's export. The format (Gaussian's `cubegen`, also written by PySCF, ORCA, Psi4, VMD):
//!
//! ```text
//! comment line 1
//! comment line 2
//! NATOMS  X0 Y0 Z0 [NVAL]      NATOMS < 0: an orbital-index line follows the atoms
//! N1  X1 Y1 Z1                 N > 0: bohr; N < 0 (on the first axis): Angstrom
//! N2  X2 Y2 Z2
//! N3  X3 Y3 Z3
//! Z  CHARGE  X Y Z             one line per atom
//! [NMO  MO1 MO2 ...]           only with NATOMS < 0 (may wrap over lines)
//! values: for i1, for i2, for i3 (fastest), for each MO or value (innermost)
//! ```
//!
//! The writer's first comment line is the grid's description (for `grid esp` maps: the charges, the
//! summation method and the unit of the values, e.g. `(kcal/mol/e)`); the second names the program.
//!
//! The reader takes values as a stream of whitespace-separated numbers (line breaks vary between
//! writers) and returns one [`Grid3`] per orbital, in bohr with x fastest. The writer emits
//! `%13.5E`, six per line, a new line after each (i1, i2) row, z fastest, atoms included, and
//! writes atomically.

use super::ReadError;
use super::text::{lines, parse_f64, parse_i64};
use crate::model::units::{BOHR_PER_ANGSTROM, angstrom_from_bohr3};
use crate::model::{Element, Frame, Grid3, Lattice, Name8, Structure};
use std::path::Path;

/// An atom line of a cube file (positions in bohr).
#[derive(Clone, Debug, PartialEq)]
pub struct CubeAtom {
    pub atomic_number: u32,
    /// The second column: nuclear (or partial) charge.
    pub charge_e: f64,
    pub position_bohr: [f64; 3],
}

impl CubeAtom {
    /// A structure's atom: its element's nuclear charge in the charge column, as Gaussian's cubegen
    /// writes it (Multiwfn and Gaussian read that column as the nucleus's charge; a partial charge
    /// there would be read as a nucleus of charge -0.3).
    pub fn nucleus(atomic_number: u32, position_bohr: [f64; 3]) -> CubeAtom {
        CubeAtom {
            atomic_number,
            charge_e: f64::from(atomic_number),
            position_bohr,
        }
    }
}

/// A cube file: its atoms and one grid per field (several for `-N` multi-orbital headers).
#[derive(Clone, Debug, PartialEq)]
pub struct CubeFile {
    pub grids: Vec<Grid3>,
    pub atoms: Vec<CubeAtom>,
    /// The 1-based orbital numbers of a multi-orbital cube, one per grid; empty otherwise.
    pub orbital_numbers: Vec<i64>,
    /// The two comment lines.
    pub comments: [String; 2],
    /// True when the file gave coordinates in Angstrom (negative first count).
    pub angstrom_units: bool,
    /// What the reader decided about a layout the header did not declare, in words.
    pub warnings: Vec<String>,
}

impl CubeFile {
    /// The atoms as a structure (element names, nuclear charges dropped) and a frame.
    pub fn structure_and_frame(&self) -> (Structure, Frame) {
        let mut s = Structure::default();
        let mut f = Frame::default();
        for a in &self.atoms {
            let e = u8::try_from(a.atomic_number).map(Element).unwrap_or(Element(0));
            s.push_atom(
                e,
                Name8::from(e.symbol()),
                Name8::from("CUB"),
                1,
                Name8::EMPTY,
                Name8::EMPTY,
            );
            f.positions_angstrom
                .push(angstrom_from_bohr3(a.position_bohr).map(|x| x as f32));
        }
        s.charges_e = None;
        (s, f)
    }
}

/// Upper bound on the atom count of a header (checked again against the file size).
const MAX_ATOMS: i64 = 10_000_000;

fn split_fields(line: &[u8]) -> Vec<&[u8]> {
    line.split(|b| b.is_ascii_whitespace())
        .filter(|f| !f.is_empty())
        .collect()
}

/// Reads a cube file from its bytes.
pub fn read(path: &Path, bytes: &[u8]) -> Result<CubeFile, ReadError> {
    let mut it = lines(bytes);
    let mut next_line = |what: &str| -> Result<(usize, &[u8]), ReadError> {
        it.next()
            .ok_or_else(|| ReadError::file(path, format!("file ends early: expected {what}")))
    };
    let (_, c1) = next_line("the first comment line")?;
    let (_, c2) = next_line("the second comment line")?;
    let comments = [
        String::from_utf8_lossy(c1).trim_end().to_string(),
        String::from_utf8_lossy(c2).trim_end().to_string(),
    ];

    // Line 3: atom count, origin, optional values per point.
    let (ln, l3) = next_line("the atom count and origin")?;
    let f = split_fields(l3);
    if f.len() < 4 {
        return Err(ReadError::line(
            path,
            ln,
            format!("expected the atom count and the origin x y z, found {} fields", f.len()),
        ));
    }
    let natoms_signed = parse_i64(path, ln, "the atom count", f[0])?;
    if natoms_signed.abs() > MAX_ATOMS {
        return Err(ReadError::line(
            path,
            ln,
            format!("atom count {natoms_signed} is out of range"),
        ));
    }
    let multi_mo = natoms_signed < 0;
    let natoms = natoms_signed.unsigned_abs() as usize;
    let mut origin = [0.0; 3];
    for k in 0..3 {
        origin[k] = parse_f64(path, ln, "an origin coordinate", f[k + 1])?;
    }
    let nval = match f.get(4) {
        Some(v) => {
            let n = parse_i64(path, ln, "the number of values per point", v)?;
            if !(1..=1_000_000).contains(&n) {
                return Err(ReadError::line(
                    path,
                    ln,
                    format!("values per point {n} is out of range"),
                ));
            }
            n as usize
        }
        None => 1,
    };

    // Lines 4-6: counts and step vectors.
    let mut dims = [0usize; 3];
    let mut steps = [[0.0; 3]; 3];
    let mut angstrom = false;
    for axis in 0..3 {
        let (ln, l) = next_line("an axis line (count and step vector)")?;
        let f = split_fields(l);
        if f.len() < 4 {
            return Err(ReadError::line(
                path,
                ln,
                format!("expected a point count and a step vector, found {} fields", f.len()),
            ));
        }
        let n = parse_i64(path, ln, "a point count", f[0])?;
        if axis == 0 {
            angstrom = n < 0;
        }
        if n == 0 || n.unsigned_abs() > (1 << 24) {
            return Err(ReadError::line(
                path,
                ln,
                format!("point count {n} is out of range (1..=16777216)"),
            ));
        }
        dims[axis] = n.unsigned_abs() as usize;
        for k in 0..3 {
            steps[axis][k] = parse_f64(path, ln, "a step vector component", f[k + 1])?;
        }
    }
    let scale = if angstrom { BOHR_PER_ANGSTROM } else { 1.0 };

    // Refuse counts the file cannot hold (every value needs at least two bytes) before allocating.
    let per_grid = (dims[0] as u128) * (dims[1] as u128) * (dims[2] as u128);
    let max_values = bytes.len() as u128 / 2 + 1;
    if per_grid.saturating_mul(nval as u128) > max_values || (natoms as u128) > max_values {
        return Err(ReadError::line(
            path,
            ln,
            format!(
                "the header declares {}x{}x{} points and {natoms} atoms, more than the {} bytes of the file can hold",
                dims[0],
                dims[1],
                dims[2],
                bytes.len()
            ),
        ));
    }

    // Some writers declare the atoms but list none (cclib's test cubes): the values start on line 7
    // and their count is exactly the lattice's. Read such a file without atoms, saying so.
    let mut warnings = Vec::new();
    let mut natoms = natoms;
    if natoms > 0 && !multi_mo && count_fields(it.clone()) == per_grid * nval as u128 {
        let mut rest = it.clone();
        let first = rest.next();
        let atom_like = first.is_some_and(|(_, l)| {
            let f = split_fields(l);
            f.len() == 5 && std::str::from_utf8(f[0]).is_ok_and(|t| t.parse::<i64>().is_ok())
        });
        if !atom_like {
            warnings.push(format!(
                "line {} declares {natoms} atoms but the file lists none: the {} numbers after the axis lines are exactly the values of the {}x{}x{} points; read without atoms",
                ln,
                per_grid * nval as u128,
                dims[0],
                dims[1],
                dims[2]
            ));
            natoms = 0;
        }
    }
    let mut atoms = Vec::with_capacity(natoms);
    for _ in 0..natoms {
        let (ln, l) = it
            .next()
            .ok_or_else(|| ReadError::file(path, "file ends early: expected an atom line (Z, charge, x, y, z)"))?;
        let f = split_fields(l);
        if f.len() < 5 {
            return Err(ReadError::line(
                path,
                ln,
                format!("expected an atom line (Z, charge, x, y, z), found {} fields", f.len()),
            ));
        }
        let z = parse_i64(path, ln, "an atomic number", f[0])?;
        if !(0..=200).contains(&z) {
            return Err(ReadError::line(
                path,
                ln,
                format!("expected an atomic number, found {z}"),
            ));
        }
        let charge_e = parse_f64(path, ln, "a nuclear charge", f[1])?;
        let mut p = [0.0; 3];
        for k in 0..3 {
            p[k] = parse_f64(path, ln, "an atom coordinate", f[k + 2])? * scale;
        }
        atoms.push(CubeAtom {
            atomic_number: z as u32,
            charge_e,
            position_bohr: p,
        });
    }

    // The value stream (with the orbital list first for multi-orbital files). Its length is counted
    // first: it must match the header, or tell how the file differs from it (some writers put the
    // orbital-index line after the atoms although the atom count is positive).
    let values_line = atoms_end_line(ln, natoms);
    let total_fields = count_fields(it.clone());
    let molden_index = if multi_mo {
        None
    } else {
        molden_orbital_line(path, it.clone(), total_fields, per_grid * nval as u128)
    };
    let multi_mo = multi_mo || molden_index.is_some();
    let mut numbers = Numbers {
        lines: it,
        fields: Vec::new(),
        pos: 0,
        line: 0,
        path,
    };
    let mut orbital_numbers = Vec::new();
    let mut ngrids = nval;
    if !multi_mo && total_fields != per_grid * nval as u128 {
        return Err(value_count_error(path, values_line, dims, nval, 1, total_fields, 0));
    }
    if multi_mo {
        let nmo = numbers.next_i64("the number of orbitals")?;
        if nmo < 1 || nmo as u128 > max_values {
            return Err(ReadError::line(
                path,
                numbers.line,
                format!("orbital count {nmo} is out of range"),
            ));
        }
        for _ in 0..nmo {
            orbital_numbers.push(numbers.next_i64("an orbital number")?);
        }
        ngrids = nmo as usize * nval;
        if per_grid.saturating_mul(ngrids as u128) > max_values {
            return Err(ReadError::line(
                path,
                numbers.line,
                format!("{nmo} orbitals of {per_grid} points do not fit in the file"),
            ));
        }
        let header_fields = 1 + nmo as u128;
        if total_fields != header_fields + per_grid * ngrids as u128 {
            return Err(value_count_error(
                path,
                values_line,
                dims,
                nval,
                nmo as u128,
                total_fields,
                header_fields,
            ));
        }
        if let Some(line) = molden_index {
            let list: Vec<String> = orbital_numbers.iter().map(|n| n.to_string()).collect();
            warnings.push(format!(
                "line {line} ({nmo} {}) read as the orbital-index line (the number of orbitals, then their numbers), \
                 not as grid values, although the atom count on line 3 is positive: \
                 the file holds {total_fields} numbers after the atoms, {header_fields} more than the {} points \
                 ({}x{}x{}) of the header",
                list.join(" "),
                per_grid * ngrids as u128,
                dims[0],
                dims[1],
                dims[2]
            ));
        }
    }
    let npts = per_grid as usize;
    let mut grids_values: Vec<Vec<f32>> = (0..ngrids).map(|_| vec![0.0f32; npts]).collect();
    let [n1, n2, n3] = dims;
    for i in 0..n1 {
        for j in 0..n2 {
            for k in 0..n3 {
                let idx = i + n1 * (j + n2 * k);
                for g in grids_values.iter_mut() {
                    let v = numbers.next_f32()?;
                    if let Some(slot) = g.get_mut(idx) {
                        *slot = v;
                    }
                }
            }
        }
    }

    let lattice = Lattice {
        origin_bohr: origin.map(|x| x * scale),
        steps_bohr: steps.map(|s| s.map(|x| x * scale)),
        dims,
    };
    // Gaussian's cubegen writes the user's title first and what the values are second ("Electron
    // density from Total SCF Density"): that second line joins the description when the first does
    // not say it.
    let quantity = |c: &str| {
        let c = c.to_ascii_lowercase();
        ["density", "potential", "orbital"].iter().any(|w| c.contains(w))
    };
    let title = match comments.get(1).map(|c| c.trim()) {
        Some(second) if !second.is_empty() && quantity(second) && !quantity(&comments[0]) => {
            format!("{} ({second})", comments[0].trim())
        }
        _ => comments[0].trim().to_string(),
    };
    let grids = grids_values
        .into_iter()
        .enumerate()
        .map(|(g, values)| {
            let description = match orbital_numbers.get(g / nval.max(1)) {
                Some(mo) if multi_mo => format!("{title} (orbital {mo})"),
                _ => title.to_string(),
            };
            Grid3 {
                lattice,
                values,
                description,
            }
        })
        .collect();
    Ok(CubeFile {
        grids,
        atoms,
        orbital_numbers,
        comments,
        angstrom_units: angstrom,
        warnings,
    })
}

/// The line where the values start: after the comments, the atom-count and axis lines, and the
/// atoms (`atom_count_line` is line 3 unless blank lines were skipped).
fn atoms_end_line(atom_count_line: usize, natoms: usize) -> usize {
    atom_count_line + 4 + natoms
}

/// The number of whitespace-separated fields in the rest of the file.
fn count_fields<'a>(lines: impl Iterator<Item = (usize, &'a [u8])>) -> u128 {
    lines
        .map(|(_, l)| l.split(|b| b.is_ascii_whitespace()).filter(|f| !f.is_empty()).count() as u128)
        .sum()
}

/// An orbital-index line after a positive atom count (`1 1`: one orbital, number 1; Molden's own
/// cube writer does not do this, its files are plain single-value cubes). Recognised only when the value count says so: `1 + k` integers, then `k`
/// values per point. Returns the line of the index list.
fn molden_orbital_line<'a>(
    path: &'a Path,
    lines: impl Iterator<Item = (usize, &'a [u8])>,
    total_fields: u128,
    per_set: u128,
) -> Option<usize> {
    if total_fields == per_set {
        return None;
    }
    let mut peek = Numbers {
        lines,
        fields: Vec::new(),
        pos: 0,
        line: 0,
        path,
    };
    let k = peek.next_i64("the number of orbitals").ok()?;
    let line = peek.line;
    if !(1..=100_000).contains(&k) || total_fields != 1 + k as u128 + per_set.saturating_mul(k as u128) {
        return None;
    }
    for _ in 0..k {
        peek.next_i64("an orbital number").ok()?;
    }
    Some(line)
}

/// A cube whose value count does not match its header, with both counts in words.
fn value_count_error(
    path: &Path,
    line: usize,
    dims: [usize; 3],
    nval: usize,
    nmo: u128,
    found: u128,
    header_fields: u128,
) -> ReadError {
    let expected = (dims[0] as u128) * (dims[1] as u128) * (dims[2] as u128) * nval as u128 * nmo;
    let list = if header_fields > 0 {
        format!(" after the {header_fields}-number orbital list")
    } else {
        String::new()
    };
    ReadError::line(
        path,
        line,
        format!(
            "the header declares {}x{}x{} points x {} value(s) per point{} = {expected} values, \
             but the file holds {} numbers{list} after the atoms: refusing to shift the values",
            dims[0],
            dims[1],
            dims[2],
            nval,
            if nmo > 1 {
                format!(" x {nmo} orbitals")
            } else {
                String::new()
            },
            found.saturating_sub(header_fields)
        ),
    )
}

/// Whitespace-separated numbers across lines, with line numbers for errors.
struct Numbers<'a, I: Iterator<Item = (usize, &'a [u8])>> {
    lines: I,
    fields: Vec<&'a [u8]>,
    pos: usize,
    line: usize,
    path: &'a Path,
}

impl<'a, I: Iterator<Item = (usize, &'a [u8])>> Numbers<'a, I> {
    fn next_field(&mut self, what: &str) -> Result<&'a [u8], ReadError> {
        loop {
            if let Some(f) = self.fields.get(self.pos) {
                self.pos += 1;
                return Ok(f);
            }
            let Some((ln, l)) = self.lines.next() else {
                return Err(ReadError::line(
                    self.path,
                    self.line + 1,
                    format!("file ends early: expected {what}"),
                ));
            };
            self.line = ln;
            self.fields.clear();
            self.fields
                .extend(l.split(|b| b.is_ascii_whitespace()).filter(|f| !f.is_empty()));
            self.pos = 0;
        }
    }

    fn next_i64(&mut self, what: &str) -> Result<i64, ReadError> {
        let f = self.next_field(what)?;
        parse_i64(self.path, self.line, what, f)
    }

    fn next_f32(&mut self) -> Result<f32, ReadError> {
        let f = self.next_field("a grid value")?;
        let s = std::str::from_utf8(f).unwrap_or("");
        match s.parse::<f32>() {
            Ok(v) if v.is_finite() => Ok(v),
            // Fortran writers drop the `E` of three-digit exponents ("1.0-100"): below f32 range.
            _ if fortran_tiny(s) => Ok(0.0),
            _ => parse_f64(self.path, self.line, "a grid value", f).map(|v| v as f32),
        }
    }
}

/// True for Fortran's `1.234-100` (mantissa, then a negative three-digit exponent without `E`).
fn fortran_tiny(s: &str) -> bool {
    match s.rsplit_once('-') {
        Some((m, e)) => {
            !m.is_empty()
                && !m.ends_with(['e', 'E', 'd', 'D'])
                && m.parse::<f64>().is_ok_and(f64::is_finite)
                && e.len() >= 3
                && e.bytes().all(|b| b.is_ascii_digit())
        }
        None => false,
    }
}

/// Formats `v` like C's `%13.5E` (two-digit exponent at least).
pub fn format_e13_5(v: f32, out: &mut String) {
    use std::fmt::Write;
    let v = v as f64;
    let s = format!("{v:.5E}");
    let formatted = match s.split_once('E') {
        Some((mant, exp)) => {
            let e: i32 = exp.parse().unwrap_or(0);
            let sign = if e < 0 { '-' } else { '+' };
            format!("{mant}E{sign}{:02}", e.abs())
        }
        None => s, // NaN / inf
    };
    let _ = write!(out, "{formatted:>13}");
}

/// Renders a cube file for `grid` with `atoms` (bohr) as text.
pub fn to_text(grid: &Grid3, atoms: &[CubeAtom]) -> String {
    use std::fmt::Write;
    let l = &grid.lattice;
    let [n1, n2, n3] = l.dims;
    let mut s = String::with_capacity(n1 * n2 * n3 * 14 + atoms.len() * 64 + 512);
    let desc = grid.description.replace(['\n', '\r'], " ");
    let _ = writeln!(
        s,
        "{}",
        if desc.is_empty() {
            "orbitfield field"
        } else {
            desc.as_str()
        }
    );
    let _ = writeln!(
        s,
        "written by orbitfield {}: bohr, z fastest",
        env!("CARGO_PKG_VERSION")
    );
    let o = l.origin_bohr;
    let _ = writeln!(s, "{:5}{:12.6}{:12.6}{:12.6}", atoms.len(), o[0], o[1], o[2]);
    for axis in 0..3 {
        let v = l.steps_bohr[axis];
        let _ = writeln!(s, "{:5}{:12.6}{:12.6}{:12.6}", l.dims[axis], v[0], v[1], v[2]);
    }
    for a in atoms {
        let p = a.position_bohr;
        let _ = writeln!(
            s,
            "{:5}{:12.6}{:12.6}{:12.6}{:12.6}",
            a.atomic_number, a.charge_e, p[0], p[1], p[2]
        );
    }
    for i in 0..n1 {
        for j in 0..n2 {
            for k in 0..n3 {
                let v = grid.values.get(l.index(i, j, k)).copied().unwrap_or(0.0);
                format_e13_5(v, &mut s);
                if k % 6 == 5 || k + 1 == n3 {
                    s.push('\n');
                }
            }
        }
    }
    s
}

/// Writes `grid` with `atoms` to `path` atomically.
pub fn write(path: &Path, grid: &Grid3, atoms: &[CubeAtom]) -> std::io::Result<()> {
    super::write_atomically(path, to_text(grid, atoms).as_bytes())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn e_format() {
        let mut s = String::new();
        for v in [0.0f32, 1.0, -1.9622_8e-6, 1.5e-12, 3.0e20] {
            format_e13_5(v, &mut s);
        }
        assert_eq!(s, "  0.00000E+00  1.00000E+00 -1.96228E-06  1.50000E-12  3.00000E+20");
    }

    fn sample() -> Grid3 {
        let lattice = Lattice {
            origin_bohr: [-1.0, 0.5, 2.0],
            steps_bohr: [[0.2, 0.0, 0.0], [0.0, 0.3, 0.0], [0.0, 0.01, 0.25]],
            dims: [3, 4, 7],
        };
        let values = (0..lattice.n_points())
            .map(|i| (i as f32 * 0.37).sin() * 1e-3)
            .collect();
        Grid3 {
            lattice,
            values,
            description: "test".into(),
        }
    }

    #[test]
    fn round_trip() {
        let g = sample();
        let atoms = vec![CubeAtom {
            atomic_number: 8,
            charge_e: 8.0,
            position_bohr: [0.1, 0.2, 0.3],
        }];
        let text = to_text(&g, &atoms);
        let c = read(Path::new("t.cube"), text.as_bytes()).unwrap();
        assert_eq!(c.atoms, atoms);
        assert_eq!(c.grids.len(), 1);
        assert_eq!(c.grids[0].lattice, g.lattice);
        for (a, b) in c.grids[0].values.iter().zip(&g.values) {
            assert!((a - b).abs() <= 1e-5 * b.abs() + 1e-12);
        }
    }

    #[test]
    fn what_the_values_are_comes_from_either_comment_line() {
        let body =
            "    1 0.0 0.0 0.0\n    2 0.5 0.0 0.0\n    1 0.0 0.5 0.0\n    1 0.0 0.0 0.5\n    1 1.0 0.0 0.0 0.0\n 1 2\n";
        let read_with = |c1: &str, c2: &str| {
            let text = format!("{c1}\n{c2}\n{body}");
            read(Path::new("d.cube"), text.as_bytes()).unwrap().grids[0]
                .description
                .clone()
        };
        // cubegen: the user's title, then the quantity.
        assert_eq!(
            read_with("water sp", " Electron density from Total SCF Density"),
            "water sp (Electron density from Total SCF Density)"
        );
        // PySCF: the quantity first, then the program's stamp.
        assert_eq!(
            read_with("Electron density in real space (e/Bohr^3)", "PySCF Version: 2.14.0"),
            "Electron density in real space (e/Bohr^3)"
        );
        assert_eq!(read_with("title", "second line"), "title");
    }

    #[test]
    fn angstrom_and_multi_orbital() {
        let text = "c1\nc2\n   -1    0.0 0.0 0.0\n   -2 0.5 0.0 0.0\n    1 0.0 0.5 0.0\n    2 0.0 0.0 0.5\n    1 1.0 1.0 0.0 0.0\n    2   5   6\n 1 10 2 20 3 30 4 40\n";
        let c = read(Path::new("m.cube"), text.as_bytes()).unwrap();
        assert!(c.angstrom_units);
        assert_eq!(c.orbital_numbers, vec![5, 6]);
        assert_eq!(c.grids.len(), 2);
        assert!((c.grids[0].lattice.steps_bohr[0][0] - 0.5 * BOHR_PER_ANGSTROM).abs() < 1e-12);
        assert!((c.atoms[0].position_bohr[0] - BOHR_PER_ANGSTROM).abs() < 1e-12);
        // values (i, j=0, k): order i, k; x fastest in memory
        assert_eq!(c.grids[0].values, vec![1.0, 3.0, 2.0, 4.0]);
        assert_eq!(c.grids[1].values, vec![10.0, 30.0, 20.0, 40.0]);
    }

    /// Mutated and truncated copies of a valid file: errors or values, never a panic.
    #[test]
    fn mutations_never_panic() {
        let text = to_text(
            &sample(),
            &[CubeAtom {
                atomic_number: 1,
                charge_e: 1.0,
                position_bohr: [0.0; 3],
            }],
        );
        let mut seed = 99u64;
        let mut next = || {
            seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (seed >> 33) as usize
        };
        let junk: &[&[u8]] = &[b"-", b"9999999999", b"\n", b" ", b"nan", b"1e400", b"-3", b"0", b"\xff"];
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
            let _ = read(Path::new("m.cube"), &b);
        }
    }

    #[test]
    fn bad_input_is_an_error() {
        let g = sample();
        let text = to_text(&g, &[]);
        for cut in [0, 5, 40, 100, text.len() / 2, text.len() - 20] {
            assert!(read(Path::new("t.cube"), &text.as_bytes()[..cut]).is_err(), "cut {cut}");
        }
        let huge = "a\nb\n 1 0 0 0\n 16000000 1 0 0\n 16000000 0 1 0\n 16000000 0 0 1\n 1 1 0 0 0\n 1\n";
        let e = read(Path::new("h.cube"), huge.as_bytes()).unwrap_err();
        assert!(e.to_string().contains("more than"), "{e}");
        let nan = text.replacen("E-0", "xE-0", 1);
        assert!(read(Path::new("n.cube"), nan.as_bytes()).is_err());
        assert!(read(Path::new("z.cube"), b"a\nb\n-9999999999 0 0 0\n").is_err());
    }
}
