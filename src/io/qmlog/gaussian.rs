//! Gaussian 09/16 log reader, called through [`super::read`] (and directly by tests and fuzzing).
//!
//! Reads every printed geometry (the standard orientation when the log prints one, since the
//! orbitals are expressed in it; the input orientation under `nosymm`), `Charge = .. Multiplicity
//! = ..`, `SCF Done` energies, the `gfinput` basis ("AO basis set in the form of general basis
//! input", coefficients of normalised primitives, `SP` shells split into S and P), electron counts,
//! and the `pop=full` orbital blocks ("Molecular Orbital Coefficients", or the Alpha/Beta pair of
//! an unrestricted job). Whether each d/f/g shell is pure (5D/7F) or Cartesian (6D/10F) is read
//! from the printed function labels (`3D+1` vs `3XY`), which also give the component order.
//! Gaussian's pure order (m = 0, +1, -1, ...) matches `model::basis`; Cartesian components are
//! permuted by their labels and rescaled from Gaussian's x^l normalisation (every function of a
//! shell normalised like x^l, as in its fchk files) to individually normalised functions.
//! A Born-Oppenheimer dynamics (BOMD) gives one step per point of its trajectory ("Summary
//! information for step N": time, potential energy, coordinates), not one per energy evaluation.
//! Without `pop=full`, the last population analysis's "Alpha/Beta occ./virt. eigenvalues" lines
//! give the orbital levels (`QmLog::levels`) for the orbital list.

use super::{
    Ao, Collected, Geometry, Lines, PrintedOrbitals, Program, RawOrbitals, RawStep, ShellTemplate, bohr_from, contains,
    int, l_of_letter, num, row_values, text, tokens, trim, trim_start,
};
use crate::io::ReadError;
use crate::model::Element;
use std::path::Path;

const FIELD_WIDTH: usize = 10;
/// Sanity limit on atoms and basis functions.
const MAX_ITEMS: usize = 1_000_000;

/// Which orientation table gives the frames.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Orientation {
    Standard,
    Input,
    ZMatrix,
}

/// Reads a Gaussian log. See the module documentation.
pub fn read(path: &Path, bytes: &[u8]) -> Result<super::QmLog, ReadError> {
    super::check_program(path, bytes, Program::Gaussian)?;
    let c = collect(path, bytes)?;
    super::finish(path, c)
}

fn collect(path: &Path, bytes: &[u8]) -> Result<Collected, ReadError> {
    // `Pop=NaturalOrbitals` prints natural orbitals in place of the canonical ones: `pop=full` is
    // there already, so the hint names what is missing instead.
    let natural_only = memchr::memmem::find(bytes, b"Natural Orbital Coefficients").is_some()
        && memchr::memmem::find(bytes, b"Molecular Orbital Coefficients").is_none();
    let mut c = Collected::new(
        Program::Gaussian,
        "add `gfinput` to the route section (e.g. `#p b3lyp/6-31g(d) pop=full gfinput`)",
        if natural_only {
            "it prints natural orbitals (`Pop=NaturalOrbitals`), which are not read; the canonical orbitals \
             need `pop=full` without NaturalOrbitals (and `gfinput` for the basis set)"
        } else {
            "add `pop=full` to the route section (and `gfinput` for the basis set)"
        },
    );
    // The standard orientation when it is printed at (about) every step or the orbitals are
    // expressed in it; else the input orientation (`nosymm`, and Born-Oppenheimer dynamics,
    // which print the standard orientation once and the input orientation at every step).
    let count = |pat: &[u8]| memchr::memmem::find_iter(bytes, pat).count();
    let (standard, input) = (count(b"Standard orientation:"), count(b"Input orientation:"));
    let orbitals = memchr::memmem::find(bytes, b"Molecular Orbital Coefficients").is_some();
    let orientation = if standard > 0 && (orbitals || 2 * standard >= input) {
        Orientation::Standard
    } else if input > 0 {
        Orientation::Input
    } else {
        Orientation::ZMatrix
    };
    let mut levels = Levels::default();
    let mut points: Vec<TrajectoryPoint> = Vec::new();
    let mut lines = Lines::new(bytes);
    while let Some(line) = lines.next_line() {
        let t = trim_start(line);
        let Some(&first) = t.first() else { continue };
        if (first == b'A' || first == b'B') && contains(t, b"eigenvalues --") {
            levels.line(t, lines.line_no());
            continue;
        }
        match first {
            b'S' => {
                if t.starts_with(b"Standard orientation:") {
                    if orientation == Orientation::Standard {
                        let g = read_orientation(path, &mut lines)?;
                        c.push_geometry(g);
                    }
                } else if t.starts_with(b"Summary information for step") {
                    let step = tokens(t).nth(4).and_then(int);
                    if let (Some(step), Some(p)) = (step, read_point(&mut lines)) {
                        // A step printed again (redone with a new Hessian) replaces the first print.
                        match points.iter_mut().find(|q| q.step == step) {
                            Some(q) => *q = TrajectoryPoint { step, ..p },
                            None => points.push(TrajectoryPoint { step, ..p }),
                        }
                    }
                } else if t.starts_with(b"SCF Done:") {
                    let e = t
                        .iter()
                        .position(|&b| b == b'=')
                        .and_then(|i| tokens(&t[i + 1..]).next())
                        .and_then(num)
                        .ok_or_else(|| {
                            ReadError::line(
                                path,
                                lines.line_no(),
                                format!("expected `SCF Done: E(..) = energy`, found {:?}", text(t)),
                            )
                        })?;
                    c.set_energy(e);
                }
            }
            b'I' if t.starts_with(b"Input orientation:") && orientation == Orientation::Input => {
                let g = read_orientation(path, &mut lines)?;
                c.push_geometry(g);
            }
            b'Z' if t.starts_with(b"Z-Matrix orientation:") && orientation == Orientation::ZMatrix => {
                let g = read_orientation(path, &mut lines)?;
                c.push_geometry(g);
            }
            b'C' if t.starts_with(b"Charge =") && contains(t, b"Multiplicity =") => {
                let toks: Vec<&[u8]> = tokens(t).collect();
                c.charge = toks.get(2).and_then(|v| int(v)).and_then(|v| i32::try_from(v).ok());
                c.multiplicity = toks.get(5).and_then(|v| int(v)).and_then(|v| u32::try_from(v).ok());
            }
            b'G' if c.version.is_none() && (t.starts_with(b"Gaussian 16:") || t.starts_with(b"Gaussian 09:")) => {
                c.version = Some(String::from_utf8_lossy(&t[9..11]).into_owned());
            }
            b'A' => {
                if t.starts_with(b"AO basis set in the form of general basis input") {
                    if c.shells_per_atom.is_none() {
                        c.shells_per_atom = Some(read_gfinput(path, &mut lines)?);
                    }
                } else if t.starts_with(b"Alpha Molecular Orbital Coefficients") {
                    if !all_orbitals_follow(lines, &mut c.warnings) {
                        continue;
                    }
                    let (alpha, labels) = read_mo_blocks(path, &mut lines)?;
                    let mut beta = None;
                    // The beta set follows directly.
                    let save = lines;
                    let next = lines.next_line().map(trim_start);
                    if next.is_some_and(|n| n.starts_with(b"Beta Molecular Orbital Coefficients")) {
                        let (b, beta_labels) = read_mo_blocks(path, &mut lines)?;
                        if beta_labels != labels {
                            return Err(ReadError::line(
                                path,
                                b.line,
                                "the beta orbitals are printed over different basis functions than the alpha ones",
                            ));
                        }
                        beta = Some(b);
                    } else {
                        lines = save;
                    }
                    c.set_orbitals(path, PrintedOrbitals { alpha, beta, labels })?;
                }
            }
            b'M' if t.starts_with(b"Molecular Orbital Coefficients") => {
                if !all_orbitals_follow(lines, &mut c.warnings) {
                    continue;
                }
                let (alpha, labels) = read_mo_blocks(path, &mut lines)?;
                c.set_orbitals(
                    path,
                    PrintedOrbitals {
                        alpha,
                        beta: None,
                        labels,
                    },
                )?;
            }
            b'P' if t.starts_with(b"Pseudopotential Parameters") && c.ecp_cores.is_empty() => {
                c.ecp_cores = read_pseudopotentials(&mut lines);
            }
            b'N' if t.starts_with(b"Normal termination of Gaussian") => {
                c.terminated_normally = true;
            }
            b'E' if t.starts_with(b"Error termination") && c.error_line.is_none() => {
                c.error_line = Some((lines.line_no(), text(t)));
            }
            b'0'..=b'9' if trim(t).ends_with(b"beta electrons") && contains(t, b"alpha electrons") => {
                let toks: Vec<&[u8]> = tokens(t).collect();
                c.n_alpha = toks.first().and_then(|v| int(v)).and_then(|v| usize::try_from(v).ok());
                c.n_beta = toks.get(3).and_then(|v| int(v)).and_then(|v| usize::try_from(v).ok());
            }
            _ => {}
        }
    }
    if orientation == Orientation::Input {
        trajectory_points_as_steps(&mut c, points);
    }
    match levels.finish() {
        Ok(l) => c.levels = l,
        Err(no) => c.warnings.push(format!(
            "the orbital energies on line {no} are not numbers in 10-character columns; the orbital energies are not listed"
        )),
    }
    Ok(c)
}

/// One point of a Born-Oppenheimer trajectory as its "Summary information for step N" block gives
/// it: the time, the potential energy and the coordinates (bohr, in the input orientation).
struct TrajectoryPoint {
    step: i64,
    time_fs: f64,
    potential_hartree: f64,
    positions_bohr: Vec<[f64; 3]>,
    line: usize,
}

/// The rest of a "Summary information for step N" block: `Time (fs)`, `EKin = ..; EPot = ..;`,
/// then `Cartesian coordinates: (bohr)` and one `I= k X= x Y= y Z= z` line per atom. `None` when
/// a part is missing or unreadable (the step is then not a trajectory point).
fn read_point(lines: &mut Lines) -> Option<TrajectoryPoint> {
    let line = lines.line_no();
    let (mut time_fs, mut potential) = (None, None);
    for _ in 0..40 {
        let t = trim_start(lines.next_line()?);
        if t.starts_with(b"Time (fs)") {
            time_fs = tokens(t).nth(2).and_then(num);
        } else if t.starts_with(b"EKin =") {
            let at = memchr::memmem::find(t, b"EPot =")?;
            potential = tokens(t.get(at + 6..)?)
                .next()
                .map(|v| v.strip_suffix(b";").unwrap_or(v))
                .and_then(num);
        } else if t.starts_with(b"Cartesian coordinates: (bohr)") {
            break;
        }
    }
    let mut positions_bohr = Vec::new();
    loop {
        let save = *lines;
        let Some(l) = lines.next_line() else { break };
        let t = trim_start(l);
        if !t.starts_with(b"I=") || positions_bohr.len() >= MAX_ITEMS {
            *lines = save;
            break;
        }
        // "I=    1 X=   4.78D-01 Y=   2.65D+00 Z=   3.53D-01": the first word after each of the
        // last three `=`.
        let v: Vec<f64> = t
            .split(|&b| b == b'=')
            .skip(2)
            .filter_map(|f| tokens(f).next().and_then(num))
            .collect();
        positions_bohr.push(<[f64; 3]>::try_from(v.get(..3)?).ok()?);
    }
    Some(TrajectoryPoint {
        step: 0,
        time_fs: time_fs?,
        potential_hartree: potential?,
        positions_bohr,
        line,
    })
}

/// Born-Oppenheimer dynamics: the trajectory's points, one per "Summary information for step N"
/// (the last print of each N), are the steps, with their times and potential energies. The
/// other energy evaluations are not points of the trajectory: the input geometry, the sampled
/// start point and the evaluations that rescale it to the requested energy (the first point is the
/// rescaled one), and the predicted geometries whose corrected positions the summaries give. Left
/// as printed when orbitals were printed (they belong to the evaluations) or a point's atoms are
/// not the log's.
fn trajectory_points_as_steps(c: &mut Collected, points: Vec<TrajectoryPoint>) {
    let Some(first) = c.steps.first().map(|s| s.geometry.clone()) else {
        return;
    };
    let n = first.elements.len();
    if points.is_empty()
        || c.steps.iter().any(|s| s.orbitals.is_some())
        || points.iter().any(|p| p.positions_bohr.len() != n)
    {
        return;
    }
    c.steps = points
        .into_iter()
        .map(|p| RawStep {
            geometry: Geometry {
                positions_bohr: p.positions_bohr,
                line: p.line,
                ..first.clone()
            },
            energy_hartree: Some(p.potential_hartree),
            orbitals: None,
            time_fs: Some(p.time_fs),
        })
        .collect();
}

/// The orbital energies of the population analysis printed last ("Alpha  occ. eigenvalues --",
/// "Alpha virt. eigenvalues --", then "Beta ..." for an unrestricted job), read where the
/// orbitals themselves are not printed (no `pop=full`): the orbital list and diagram.
#[derive(Default)]
struct Levels {
    /// Per channel (alpha, beta): (energy in hartree, occupied).
    rows: [Vec<(f64, bool)>; 2],
    /// The line of the eigenvalue line before, to tell a new printout from a continued one.
    last_line: usize,
    /// The first line of the current printout whose values could not be read.
    unreadable: Option<usize>,
}

impl Levels {
    fn line(&mut self, t: &[u8], no: usize) {
        let channel = if t.starts_with(b"Alpha") {
            0
        } else if t.starts_with(b"Beta") {
            1
        } else {
            return;
        };
        if channel == 0 && no != self.last_line + 1 {
            // A new population analysis: it replaces the one before.
            *self = Levels::default();
        }
        self.last_line = no;
        let occupied = contains(t, b" occ. ");
        match eigenvalues(t) {
            Some(v) => {
                if let Some(rows) = self.rows.get_mut(channel) {
                    rows.extend(v.into_iter().map(|e| (e, occupied)));
                }
            }
            None => {
                self.unreadable.get_or_insert(no);
            }
        }
    }

    /// The levels (occupations 2 and 0, or 1 and 0 per channel of an unrestricted job); `Err` with
    /// the line of values that could not be read.
    fn finish(self) -> Result<Option<crate::model::OrbitalLevels>, usize> {
        if let Some(no) = self.unreadable {
            return Err(no);
        }
        let [alpha, beta] = self.rows;
        if alpha.is_empty() {
            return Ok(None);
        }
        let per_level = if beta.is_empty() { 2.0 } else { 1.0 };
        let set = |rows: &[(f64, bool)]| crate::model::LevelSet {
            energies_hartree: rows.iter().map(|r| r.0).collect(),
            occupations: rows.iter().map(|r| if r.1 { per_level } else { 0.0 }).collect(),
            symmetries: vec![String::new(); rows.len()],
        };
        Ok(Some(crate::model::OrbitalLevels {
            alpha: set(&alpha),
            beta: (!beta.is_empty()).then(|| set(&beta)),
        }))
    }
}

/// The values of an eigenvalue line: after "--" and one blank, fields of 10 characters (Fortran
/// F10.5), which run together when a value fills its field ("-100.20301-100.20250"). `None` when a
/// field is not a number (Gaussian's `**********`).
pub(super) fn eigenvalues(t: &[u8]) -> Option<Vec<f64>> {
    let at = memchr::memmem::find(t, b"--")?;
    let rest = t.get(at + 3..).unwrap_or(b"");
    let mut out = Vec::with_capacity(5);
    for field in rest.chunks(FIELD_WIDTH) {
        let f = trim(field);
        if f.is_empty() {
            continue;
        }
        out.push(num(f)?);
    }
    Some(out)
}

/// The core electrons of each centre from the "Pseudopotential Parameters" table: rows `centre
/// atomic-number valence-electrons` between the header's rules and the closing one.
fn read_pseudopotentials(lines: &mut Lines) -> Vec<(usize, u32)> {
    let mut cores = Vec::new();
    let mut rules = 0;
    while let Some(l) = lines.next_line() {
        let t = trim(l);
        if t.starts_with(b"=====") {
            rules += 1;
            if rules == 3 {
                break;
            }
            continue;
        }
        let row: Vec<i64> = tokens(t).map_while(int).collect();
        if let [centre, z, valence] = row[..]
            && tokens(t).count() == 3
            && centre >= 1
            && (0..z).contains(&valence)
            && let (Ok(i), Ok(core)) = (usize::try_from(centre - 1), u32::try_from(z - valence))
            && core > 0
        {
            cores.push((i, core));
        }
    }
    cores
}

/// Reads the table after an "... orientation:" line.
fn read_orientation(path: &Path, lines: &mut Lines) -> Result<Geometry, ReadError> {
    let start = lines.line_no();
    let mut dashes = 0;
    let mut g = Geometry {
        line: start,
        ..Geometry::default()
    };
    loop {
        let Some(l) = lines.next_line() else {
            return Err(lines.truncated(path, "the coordinate table", start));
        };
        let t = trim(l);
        if t.starts_with(b"----") {
            dashes += 1;
            if dashes == 3 {
                break;
            }
            continue;
        }
        if dashes < 2 {
            continue;
        }
        let toks: Vec<&[u8]> = tokens(t).collect();
        let n = toks.len();
        let parsed = (n == 6 || n == 5)
            .then(|| {
                let z = int(toks[1])?;
                Some((z, [num(toks[n - 3])?, num(toks[n - 2])?, num(toks[n - 1])?]))
            })
            .flatten();
        let Some((z, p)) = parsed else {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                format!(
                    "expected `center atomic-number [type] x y z` in the coordinate table, found {:?}",
                    text(t)
                ),
            ));
        };
        if g.elements.len() >= MAX_ITEMS {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                "coordinate table has too many atoms",
            ));
        }
        let element = u32::try_from(z)
            .ok()
            .and_then(Element::from_number)
            .unwrap_or(Element::UNKNOWN);
        g.elements.push(element);
        g.nuclear_charges.push(f64::from(element.number()));
        g.positions_bohr.push(bohr_from(p));
    }
    if g.elements.is_empty() {
        return Err(ReadError::line(path, start, "the coordinate table has no atoms"));
    }
    Ok(g)
}

/// Reads the `gfinput` basis: per centre, shells until `****`, centres until a line that does not
/// start one.
fn read_gfinput(path: &Path, lines: &mut Lines) -> Result<Vec<Vec<ShellTemplate>>, ReadError> {
    let start = lines.line_no();
    let mut atoms: Vec<Vec<ShellTemplate>> = Vec::new();
    let eof = |lines: &Lines| lines.truncated(path, "the basis set printout", start);
    loop {
        let save = *lines;
        let Some(l) = lines.next_line() else { break };
        let toks: Vec<&[u8]> = tokens(l).collect();
        // Centre header: "<centre> 0".
        let is_header = toks.len() == 2 && int(toks[0]).is_some() && toks[1] == b"0";
        if !is_header {
            *lines = save;
            break;
        }
        let centre = int(toks[0]).unwrap_or(0);
        if centre != atoms.len() as i64 + 1 {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                format!(
                    "expected basis set of centre {}, found centre {centre}",
                    atoms.len() + 1
                ),
            ));
        }
        let mut shells = Vec::new();
        loop {
            let Some(l) = lines.next_line() else {
                return Err(eof(lines));
            };
            let t = trim(l);
            if t.starts_with(b"****") {
                break;
            }
            let toks: Vec<&[u8]> = tokens(t).collect();
            let bad = || {
                ReadError::line(
                    path,
                    lines.line_no(),
                    format!(
                        "expected a shell header `TYPE nprim scale` or `****` in the basis set, found {:?}",
                        text(t)
                    ),
                )
            };
            if toks.len() < 3 {
                return Err(bad());
            }
            let kind = toks[0].to_ascii_uppercase();
            let ls: Vec<u8> = if kind == b"SP" {
                vec![0, 1]
            } else if kind.len() == 1 {
                vec![l_of_letter(kind[0]).ok_or_else(bad)?]
            } else {
                return Err(bad());
            };
            let nprim = int(toks[1]).filter(|&n| (1..=1000).contains(&n)).ok_or_else(bad)? as usize;
            let scale = num(toks[2]).filter(|&s| s > 0.0).ok_or_else(bad)?;
            let mut exps = Vec::with_capacity(nprim);
            let mut coefs: Vec<Vec<f64>> = vec![Vec::with_capacity(nprim); ls.len()];
            for _ in 0..nprim {
                let Some(l) = lines.next_line() else {
                    return Err(eof(lines));
                };
                let vals: Option<Vec<f64>> = tokens(l).map(num).collect();
                match vals {
                    Some(v) if v.len() == 1 + ls.len() && v[0] > 0.0 => {
                        exps.push(v[0] * scale * scale);
                        for (k, c) in coefs.iter_mut().enumerate() {
                            c.push(v[1 + k]);
                        }
                    }
                    _ => {
                        return Err(ReadError::line(
                            path,
                            lines.line_no(),
                            format!(
                                "expected a primitive `exponent {}` (positive exponent), found {:?}",
                                if ls.len() == 2 {
                                    "s-coefficient p-coefficient"
                                } else {
                                    "coefficient"
                                },
                                text(l)
                            ),
                        ));
                    }
                }
            }
            for (&l, coefficients) in ls.iter().zip(coefs) {
                shells.push(ShellTemplate {
                    l,
                    exponents: exps.clone(),
                    coefficients,
                });
            }
        }
        atoms.push(shells);
        if atoms.len() > MAX_ITEMS {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                "basis set printout has too many centres",
            ));
        }
    }
    if atoms.is_empty() {
        return Err(ReadError::line(path, start, "the basis set printout has no centres"));
    }
    Ok(atoms)
}

/// Basis function label of a coefficient row ("2PX", "3D+1", "3XY", "4F 0").
pub(crate) fn ao_from_label(label: &[u8]) -> Option<Ao> {
    let t = trim(label);
    let digits = t.iter().take_while(|b| b.is_ascii_digit()).count();
    let s = &t[digits..];
    let first = *s.first()?;
    match first.to_ascii_uppercase() {
        b'S' if s.len() == 1 => Some(Ao::Cart([0, 0, 0])),
        b'P' if s.len() == 2 => super::cart_from_letters(&s[1..])
            .filter(|p| p.iter().sum::<u8>() == 1)
            .map(Ao::Cart),
        b'X' | b'Y' | b'Z' => super::cart_from_letters(s).map(Ao::Cart),
        c => {
            let l = l_of_letter(c).filter(|&l| l >= 2)?;
            let rest: Vec<u8> = s[1..].iter().copied().filter(|b| !b.is_ascii_whitespace()).collect();
            let m = std::str::from_utf8(&rest).ok()?.parse::<i8>().ok()?;
            (m.unsigned_abs() <= l).then_some(Ao::Pure(l, m))
        }
    }
}

/// Gaussian normalises every Cartesian function of a shell like its x^l member (as in its fchk
/// files); the model normalises each one, so a coefficient of x^a y^b z^c is scaled by
/// sqrt((2a-1)!!(2b-1)!!(2c-1)!! / (2l-1)!!).
fn cartesian_factor(ao: Ao) -> f64 {
    use crate::model::basis::double_factorial;
    match ao {
        Ao::Cart(p) if ao.l() >= 2 => {
            let num: f64 = p.iter().map(|&e| double_factorial(2 * i64::from(e) - 1)).product();
            (num / double_factorial(2 * i64::from(ao.l()) - 1)).sqrt()
        }
        _ => 1.0,
    }
}

/// True for a line of orbital numbers (the first line of a block).
fn index_line(t: &[u8]) -> Option<Vec<i64>> {
    let v: Option<Vec<i64>> = tokens(t).map(int).collect();
    v.filter(|v| !v.is_empty() && v.len() <= 10)
}

/// True when the orbital blocks after a heading start at orbital 1. Gaussian prints only the
/// orbitals near the gap without `pop=full` (and for some post-HF jobs); such a block is left
/// unread, said once, and the log's geometries still load.
fn all_orbitals_follow(mut lines: Lines, warnings: &mut Vec<String>) -> bool {
    let first = lines.next_line().and_then(index_line).and_then(|v| v.first().copied());
    if first.is_none_or(|f| f == 1) {
        return true;
    }
    let w = format!(
        "only orbitals from number {} on are printed at line {}: no wavefunction is built from them (add \
         `pop=full` to the route section for all of them)",
        first.unwrap_or(0),
        lines.line_no()
    );
    if !warnings.iter().any(|x| x.starts_with("only orbitals from number")) {
        warnings.push(w);
    }
    false
}

/// Reads the coefficient blocks after a "Molecular Orbital Coefficients" heading.
fn read_mo_blocks(path: &Path, lines: &mut Lines) -> Result<(RawOrbitals, Vec<(Ao, f64)>), ReadError> {
    let start = lines.line_no();
    let mut raw = RawOrbitals {
        line: start,
        ..RawOrbitals::default()
    };
    let mut labels: Vec<(Ao, f64)> = Vec::new();
    let mut block = Vec::new();
    let truncated = |lines: &Lines| {
        ReadError::line(
            path,
            lines.line_no(),
            format!("file ends inside the orbital coefficients that start at line {start} (the log is truncated)"),
        )
    };
    let mut expected_index = 1i64;
    loop {
        let save = *lines;
        let Some(l) = lines.next_line() else {
            return Err(truncated(lines));
        };
        let Some(indices) = index_line(l) else {
            *lines = save;
            break;
        };
        let k = indices.len();
        if indices.first() != Some(&expected_index) {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                if expected_index == 1 {
                    format!(
                        "the orbitals printed start at number {}, not 1: only some orbitals were printed; add `pop=full` to the route section",
                        indices.first().copied().unwrap_or(0)
                    )
                } else {
                    format!(
                        "expected orbital number {expected_index} to start this block, found {:?}",
                        text(l)
                    )
                },
            ));
        }
        expected_index += k as i64;
        // Symmetry / occupation line, then eigenvalues.
        let Some(sym) = lines.next_line() else {
            return Err(truncated(lines));
        };
        // Gaussian 03 and older write the heading in capitals.
        let is_eigenvalues = |t: &[u8]| {
            trim_start(t)
                .get(..11)
                .is_some_and(|w| w.eq_ignore_ascii_case(b"Eigenvalues"))
        };
        let (sym, eig) = if is_eigenvalues(sym) {
            (None, sym)
        } else {
            let Some(e) = lines.next_line() else {
                return Err(truncated(lines));
            };
            (Some(sym), e)
        };
        if !is_eigenvalues(eig) {
            return Err(ReadError::line(
                path,
                lines.line_no(),
                format!("expected `Eigenvalues --` in the orbital block, found {:?}", text(eig)),
            ));
        }
        let mut energies = Vec::with_capacity(k);
        if row_values(eig, FIELD_WIDTH, k, &mut energies).is_none() {
            // Overflowed fields ("**********") or an unusual layout: numbers after "--", else 0.
            energies = tokens(eig).skip(2).map(|t| num(t).unwrap_or(0.0)).collect();
            energies.resize(k, 0.0);
        }
        raw.energies_hartree.extend(energies);
        match sym {
            Some(s) => {
                let syms: Vec<String> = tokens(s)
                    .map(|t| {
                        let t = String::from_utf8_lossy(t);
                        let name = t.split("--").next().unwrap_or("");
                        name.trim_matches(|c| c == '(' || c == ')').to_string()
                    })
                    .collect();
                raw.symmetries
                    .extend((0..k).map(|i| syms.get(i).cloned().unwrap_or_default()));
            }
            None => raw.symmetries.extend((0..k).map(|_| String::new())),
        }
        block.clear();
        let mut rows = 0usize;
        loop {
            if raw.n_rows > 0 && rows == raw.n_rows {
                break;
            }
            let save = *lines;
            let Some(l) = lines.next_line() else {
                return Err(truncated(lines));
            };
            let label = row_values(l, FIELD_WIDTH, k, &mut block);
            let ao = label.and_then(|lab| lab.get(11..)).and_then(ao_from_label);
            let ok = ao.is_some();
            if label.is_some() && !ok {
                block.truncate(block.len() - k);
            }
            if !ok {
                if lines.at_end() {
                    return Err(truncated(lines));
                }
                if raw.n_rows == 0 && rows > 0 {
                    *lines = save;
                    break;
                }
                return Err(ReadError::line(
                    path,
                    lines.line_no(),
                    format!(
                        "expected a coefficient row `n atom element label` and {k} numbers, found {:?}",
                        text(l)
                    ),
                ));
            }
            if raw.n_rows == 0 {
                if labels.len() >= MAX_ITEMS {
                    return Err(ReadError::line(path, lines.line_no(), "too many basis functions"));
                }
                if let Some(a) = ao {
                    labels.push((a, cartesian_factor(a)));
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn labels() {
        assert_eq!(ao_from_label(b"1S"), Some(Ao::Cart([0, 0, 0])));
        assert_eq!(ao_from_label(b"2PY"), Some(Ao::Cart([0, 1, 0])));
        assert_eq!(ao_from_label(b"3XY"), Some(Ao::Cart([1, 1, 0])));
        assert_eq!(ao_from_label(b"3D 0"), Some(Ao::Pure(2, 0)));
        assert_eq!(ao_from_label(b"4F-3"), Some(Ao::Pure(3, -3)));
        assert_eq!(ao_from_label(b"3D+3"), None);
        assert_eq!(ao_from_label(b"Density"), None);
        // xx keeps its factor, xy is scaled by sqrt(1/3), xyz (f) by sqrt(1/15).
        assert_eq!(cartesian_factor(Ao::Cart([2, 0, 0])), 1.0);
        assert!((cartesian_factor(Ao::Cart([1, 1, 0])) - (1.0f64 / 3.0).sqrt()).abs() < 1e-15);
        assert!((cartesian_factor(Ao::Cart([1, 1, 1])) - (1.0f64 / 15.0).sqrt()).abs() < 1e-15);
    }
}
