//! Quantum-chemistry program output ("log") files: Gaussian 09/16 `.log`, GAMESS-US and Firefly
//! `.log`, ORCA 5/6 `.out`, read as a series of geometry steps and the wavefunctions some of those
//! steps print.
//!
//! Owns the program detection, the [`QmLog`] result type and what the three readers share: a fast
//! line cursor, fixed-width coefficient rows, the mapping of each program's printed basis-function
//! labels onto the component order and normalisation of [`crate::model::basis`], and the assembly
//! of frames and wavefunctions with the hints that tell a user which keyword to add when a log
//! lacks the basis or the orbitals. Called by [`crate::io::load`] (dispatch on
//! [`crate::io::Format::QmLog`]), the tests, the benchmark and the fuzz targets.
//!
//! Every optimisation, scan or IRC step is a frame. Steps whose orbitals were printed carry a
//! [`Wavefunction`] whose atoms are that step's geometry, in the orientation the program expressed
//! the orbitals in (Gaussian: the standard orientation unless `nosymm`; GAMESS: its internal frame,
//! e.g. `COORD=PRINAXIS`; ORCA: the input frame).

pub mod gamess;
pub mod gaussian;
pub mod orca;

use super::ReadError;
use crate::model::units::{angstrom_from_bohr3, bohr_from_angstrom3};
use crate::model::{BasisSet, Element, Frame, Name8, OrbitalSet, QmAtom, Shell, SpinKind, Structure, Wavefunction};
use std::path::Path;

mod scan;
#[cfg(test)]
mod tests;

pub(crate) use scan::*;

/// Which program wrote a log.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Program {
    Gaussian,
    Gamess,
    Orca,
}

impl Program {
    pub fn name(self) -> &'static str {
        match self {
            Program::Gaussian => "Gaussian",
            Program::Gamess => "GAMESS",
            Program::Orca => "ORCA",
        }
    }

    /// A banner line that [`Program::detect`] recognises (for building test and fuzz inputs).
    pub fn banner(self) -> &'static [u8] {
        match self {
            Program::Gaussian => b" Entering Gaussian System, Link 0=g16\n",
            Program::Gamess => b"          *         GAMESS VERSION = 30 SEP 2018 (R3)         *\n",
            Program::Orca => b"                                 * O   R   C   A *\n",
        }
    }

    /// Detects the program from the first bytes of a file (banners printed at the top).
    pub fn detect(head: &[u8]) -> Option<Program> {
        let head = &head[..head.len().min(8192)];
        let has = |pat: &[u8]| memchr::memmem::find(head, pat).is_some();
        if has(b"Entering Gaussian System") || has(b"Gaussian, Inc.") {
            Some(Program::Gaussian)
        } else if has(b"O   R   C   A") || has(b"Program Version 6.") || has(b"Program Version 5.") {
            Some(Program::Orca)
        } else if has(b"GAMESS VERSION") || has(b"Firefly version") || has(b"PC GAMESS") || has(b"GAMESS execution") {
            Some(Program::Gamess)
        } else {
            None
        }
    }
}

/// One geometry step of a log.
#[derive(Clone, Debug, PartialEq)]
pub struct Step {
    /// Last SCF energy printed for this geometry.
    pub scf_energy_hartree: Option<f64>,
    /// Index into [`QmLog::wavefunctions`] when this step printed orbitals.
    pub wavefunction: Option<usize>,
    /// 1-based line where the step's geometry was printed.
    pub line: usize,
}

/// A QM log read whole: the structure, one frame per step, and the steps' wavefunctions.
#[derive(Clone, Debug)]
pub struct QmLog {
    pub program: Program,
    /// Atoms (element symbols as names, nuclear charges in `charges_e` left empty).
    pub structure: Structure,
    /// One frame per geometry step, in the orientation the orbitals use.
    pub frames: Vec<Frame>,
    /// Per frame: energy and which wavefunction (if any) it carries.
    pub steps: Vec<Step>,
    /// Wavefunctions of the steps that printed orbitals, in step order.
    pub wavefunctions: Vec<Wavefunction>,
    /// Total molecular charge in e, when printed.
    pub charge: Option<i32>,
    /// Spin multiplicity, when printed.
    pub multiplicity: Option<u32>,
    /// Non-fatal observations, including which keyword to add for missing orbitals or basis.
    pub warnings: Vec<String>,
    /// Orbital energies and occupations printed without orbitals that can be drawn (no
    /// wavefunction was built): the last table of the log.
    pub levels: Option<crate::model::OrbitalLevels>,
}

impl QmLog {
    /// Frame index of each wavefunction.
    pub fn wavefunction_frames(&self) -> Vec<usize> {
        self.steps
            .iter()
            .enumerate()
            .filter(|(_, s)| s.wavefunction.is_some())
            .map(|(i, _)| i)
            .collect()
    }
}

/// Reads a QM log, detecting the program from its banner.
pub fn read(path: &Path, bytes: &[u8]) -> Result<QmLog, ReadError> {
    match Program::detect(bytes) {
        Some(Program::Gaussian) => gaussian::read(path, bytes),
        Some(Program::Gamess) => gamess::read(path, bytes),
        Some(Program::Orca) => orca::read(path, bytes),
        None => Err(ReadError::file(
            path,
            "not a recognised QM log: expected a Gaussian ('Entering Gaussian System'), GAMESS ('GAMESS VERSION') \
             or ORCA ('O   R   C   A') banner near the top of the file",
        )),
    }
}

/// Rejects a file written by a different program than the reader's, naming which one it is.
pub(crate) fn check_program(path: &Path, bytes: &[u8], wanted: Program) -> Result<(), ReadError> {
    match Program::detect(bytes) {
        Some(p) if p == wanted => Ok(()),
        Some(p) => Err(ReadError::file(
            path,
            format!(
                "this is a {} output, not a {} log: open it with the {} reader",
                p.name(),
                wanted.name(),
                p.name()
            ),
        )),
        None => Err(ReadError::file(
            path,
            format!(
                "not a {} log: its banner was not found near the top of the file",
                wanted.name()
            ),
        )),
    }
}

// ---------------------------------------------------------------------------------------------
// Basis functions as printed, and their mapping onto the model's conventions.

/// A printed basis function: Cartesian powers, or a real solid harmonic (l, m).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Ao {
    Cart([u8; 3]),
    Pure(u8, i8),
}

impl Ao {
    pub fn l(self) -> u8 {
        match self {
            Ao::Cart(p) => p[0] + p[1] + p[2],
            Ao::Pure(l, _) => l,
        }
    }
}

/// Angular momentum of a shell letter (S, P, D, F, G, H, I; either case).
pub(crate) fn l_of_letter(c: u8) -> Option<u8> {
    match c.to_ascii_uppercase() {
        b'S' => Some(0),
        b'P' => Some(1),
        b'D' => Some(2),
        b'F' => Some(3),
        b'G' => Some(4),
        b'H' => Some(5),
        b'I' => Some(6),
        _ => None,
    }
}

/// Cartesian powers of a label made only of X, Y and Z letters ("XXY" -> [2,1,0]).
pub(crate) fn cart_from_letters(s: &[u8]) -> Option<[u8; 3]> {
    if s.is_empty() || s.len() > 8 {
        return None;
    }
    let mut p = [0u8; 3];
    for &c in s {
        match c.to_ascii_uppercase() {
            b'X' => p[0] += 1,
            b'Y' => p[1] += 1,
            b'Z' => p[2] += 1,
            _ => return None,
        }
    }
    Some(p)
}

/// Cartesian components of angular momentum `l` in the model's order (see `model::basis`).
pub fn cartesian_order(l: u8) -> Vec<[u8; 3]> {
    crate::model::basis::cartesian_powers(l)
}

/// Position of a real solid harmonic of order `m` in the model's order m = 0, +1, -1, +2, -2, ...
pub(crate) fn pure_index(l: u8, m: i8) -> Option<usize> {
    let a = m.unsigned_abs();
    if a > l {
        return None;
    }
    Some(match m.signum() {
        0 => 0,
        1 => 2 * a as usize - 1,
        _ => 2 * a as usize,
    })
}

/// A contracted shell as printed: coefficients multiply normalised primitives.
#[derive(Clone, Debug, PartialEq)]
pub(crate) struct ShellTemplate {
    pub l: u8,
    pub exponents: Vec<f64>,
    pub coefficients: Vec<f64>,
}

/// Scales coefficients of normalised primitives so that the contracted function has unit norm.
pub(crate) fn normalised_contraction(l: u8, exponents: &[f64], coefficients: &[f64]) -> Option<Vec<f64>> {
    let power = f64::from(l) + 1.5;
    let mut s = 0.0;
    for (a, ca) in exponents.iter().zip(coefficients) {
        for (b, cb) in exponents.iter().zip(coefficients) {
            s += ca * cb * (2.0 * (a * b).sqrt() / (a + b)).powf(power);
        }
    }
    (s.is_finite() && s > 0.0).then(|| coefficients.iter().map(|c| c / s.sqrt()).collect())
}

/// Orbital coefficients as printed: one row per printed basis function.
#[derive(Clone, Debug, Default)]
pub(crate) struct RawOrbitals {
    pub energies_hartree: Vec<f64>,
    pub occupations: Vec<f64>,
    pub symmetries: Vec<String>,
    /// Orbital-major: `[orbital][row]`.
    pub coefficients: Vec<f64>,
    pub n_rows: usize,
    /// Line where the block began.
    pub line: usize,
}

impl RawOrbitals {
    pub fn n_orbitals(&self) -> usize {
        self.coefficients.len().checked_div(self.n_rows).unwrap_or(0)
    }

    /// Appends a block of `k` orbitals given row-major (`[row][k]`).
    pub fn push_block(&mut self, block: &[f64], k: usize) {
        if k == 0 || self.n_rows == 0 {
            return;
        }
        let start = self.coefficients.len();
        self.coefficients.resize(start + k * self.n_rows, 0.0);
        for (r, row) in block.chunks_exact(k).enumerate() {
            for (j, v) in row.iter().enumerate() {
                if let Some(slot) = self.coefficients.get_mut(start + j * self.n_rows + r) {
                    *slot = *v;
                }
            }
        }
    }
}

/// Where each printed row goes in the model's basis, and with which factor.
pub(crate) struct RowMap {
    pub basis: BasisSet,
    pub target: Vec<(usize, f64)>,
}

/// Builds the basis set on `atoms` from per-atom shell templates and maps the printed rows
/// (`labels`, each with a sign or scale factor) onto the model's component order. Purity of each
/// shell with l >= 2 comes from its printed labels.
pub(crate) fn map_rows(
    atoms: &[QmAtom],
    shells_per_atom: &[Vec<ShellTemplate>],
    labels: &[(Ao, f64)],
) -> Result<RowMap, String> {
    if shells_per_atom.len() != atoms.len() {
        return Err(format!(
            "the basis set printout covers {} atoms but the geometry has {}",
            shells_per_atom.len(),
            atoms.len()
        ));
    }
    let mut basis = BasisSet::default();
    let mut target = vec![(0usize, 0.0f64); labels.len()];
    let mut row = 0usize;
    let mut offset = 0usize;
    for (atom, (a, shells)) in atoms.iter().zip(shells_per_atom).enumerate() {
        for t in shells {
            let Some(&(first, _)) = labels.get(row) else {
                return Err(format!(
                    "the basis set printout has more functions than the {} rows of the orbital coefficients",
                    labels.len()
                ));
            };
            let pure = t.l >= 2 && matches!(first, Ao::Pure(..));
            let n = if pure {
                2 * t.l as usize + 1
            } else {
                (t.l as usize + 1) * (t.l as usize + 2) / 2
            };
            let order = if pure { Vec::new() } else { cartesian_order(t.l) };
            let mut seen = vec![false; n];
            if row + n > labels.len() {
                return Err(format!(
                    "the orbital coefficients have {} rows, fewer than the basis set printout needs",
                    labels.len()
                ));
            }
            for (r, (slot, &(ao, factor))) in target.iter_mut().zip(labels).enumerate().skip(row).take(n) {
                let idx = match ao {
                    Ao::Pure(l, m) if pure && l == t.l => pure_index(l, m),
                    Ao::Cart(p) if !pure && ao.l() == t.l => order.iter().position(|q| *q == p),
                    _ => None,
                };
                let Some(idx) = idx.filter(|&i| !seen.get(i).copied().unwrap_or(true)) else {
                    return Err(format!(
                        "orbital coefficient row {} ({ao:?}) does not fit shell l={} of atom {} in the basis set printout",
                        r + 1,
                        t.l,
                        atom + 1
                    ));
                };
                seen[idx] = true;
                *slot = (offset + idx, factor);
            }
            let Some(coefficients) = normalised_contraction(t.l, &t.exponents, &t.coefficients) else {
                return Err(format!(
                    "a shell of atom {} has a contraction that cannot be normalised",
                    atom + 1
                ));
            };
            basis.shells.push(Shell {
                l: t.l,
                pure,
                atom,
                center_bohr: a.position_bohr,
                exponents: t.exponents.clone(),
                coefficients,
            });
            row += n;
            offset += n;
        }
    }
    if row != labels.len() {
        return Err(format!(
            "the basis set printout has {row} functions but the orbital coefficients have {} rows",
            labels.len()
        ));
    }
    Ok(RowMap { basis, target })
}

/// Reorders printed orbitals into the model's basis order.
pub(crate) fn orbital_set(raw: &RawOrbitals, map: &RowMap, default_occupations: &[f64]) -> OrbitalSet {
    let n_basis = map.target.len();
    let n_orb = raw.n_orbitals();
    let mut coefficients = vec![0.0; n_orb * n_basis];
    for (o, src) in raw.coefficients.chunks_exact(n_basis.max(1)).enumerate() {
        for (v, &(t, f)) in src.iter().zip(&map.target) {
            if let Some(slot) = coefficients.get_mut(o * n_basis + t) {
                *slot = v * f;
            }
        }
    }
    let mut energies = raw.energies_hartree.clone();
    energies.resize(n_orb, 0.0);
    let mut occupations = if raw.occupations.len() == n_orb {
        raw.occupations.clone()
    } else {
        default_occupations.to_vec()
    };
    occupations.resize(n_orb, 0.0);
    let mut symmetries = raw.symmetries.clone();
    symmetries.resize(n_orb, String::new());
    OrbitalSet {
        energies_hartree: energies,
        occupations,
        symmetries,
        coefficients,
        n_basis,
    }
}

/// Occupations from electron counts: `per` electrons in each of the first `n` orbitals.
pub(crate) fn aufbau(n_orbitals: usize, n_double: usize, n_single: usize, restricted: bool) -> Vec<f64> {
    (0..n_orbitals)
        .map(|i| {
            if restricted {
                if i < n_double {
                    2.0
                } else if i < n_double + n_single {
                    1.0
                } else {
                    0.0
                }
            } else if i < n_double {
                1.0
            } else {
                0.0
            }
        })
        .collect()
}

// ---------------------------------------------------------------------------------------------
// What the program readers collect, and how it becomes a QmLog.

/// A geometry as printed.
#[derive(Clone, Debug, Default)]
pub(crate) struct Geometry {
    pub elements: Vec<Element>,
    pub nuclear_charges: Vec<f64>,
    pub positions_bohr: Vec<[f64; 3]>,
    pub line: usize,
}

impl Geometry {
    fn same_as(&self, other: &Geometry) -> bool {
        self.same_within(other, 1e-6)
    }

    /// The same elements, every coordinate within `tol_bohr`.
    pub fn same_within(&self, other: &Geometry, tol_bohr: f64) -> bool {
        self.elements == other.elements
            && self
                .positions_bohr
                .iter()
                .zip(&other.positions_bohr)
                .all(|(a, b)| a.iter().zip(b).all(|(x, y)| (x - y).abs() < tol_bohr))
    }

    pub fn atoms(&self) -> Vec<QmAtom> {
        self.elements
            .iter()
            .zip(&self.nuclear_charges)
            .zip(&self.positions_bohr)
            .map(|((&element, &nuclear_charge), &position_bohr)| QmAtom {
                element,
                nuclear_charge,
                position_bohr,
            })
            .collect()
    }
}

/// Orbitals printed for one step.
#[derive(Clone, Debug)]
pub(crate) struct PrintedOrbitals {
    pub alpha: RawOrbitals,
    pub beta: Option<RawOrbitals>,
    pub labels: Vec<(Ao, f64)>,
}

/// One step while collecting.
#[derive(Clone, Debug)]
pub(crate) struct RawStep {
    pub geometry: Geometry,
    pub energy_hartree: Option<f64>,
    pub orbitals: Option<PrintedOrbitals>,
    /// The step's time in a dynamics run (femtoseconds, as Gaussian prints it).
    pub time_fs: Option<f64>,
}

/// Everything a program reader found.
#[derive(Debug)]
pub(crate) struct Collected {
    pub program: Program,
    pub version: Option<String>,
    pub steps: Vec<RawStep>,
    pub shells_per_atom: Option<Vec<Vec<ShellTemplate>>>,
    pub charge: Option<i32>,
    pub multiplicity: Option<u32>,
    pub n_alpha: Option<usize>,
    pub n_beta: Option<usize>,
    /// ROHF-type single set of orbitals with singly occupied ones.
    pub restricted_open: bool,
    pub warnings: Vec<String>,
    /// Keyword hint when the basis set was not printed.
    pub basis_hint: &'static str,
    /// Keyword hint when no orbitals were printed.
    pub orbitals_hint: &'static str,
    /// Whether the program's normal-termination line was seen.
    pub terminated_normally: bool,
    /// An error-termination line, when one was seen.
    pub error_line: Option<(usize, String)>,
    /// The last printed table of orbital energies (ORCA's), kept for logs whose orbitals cannot be
    /// drawn.
    pub levels: Option<crate::model::OrbitalLevels>,
    /// Core electrons that effective core potentials remove (0-based atom, electrons), as printed.
    pub ecp_cores: Vec<(usize, u32)>,
}

impl Collected {
    pub fn new(program: Program, basis_hint: &'static str, orbitals_hint: &'static str) -> Collected {
        Collected {
            program,
            version: None,
            steps: Vec::new(),
            shells_per_atom: None,
            charge: None,
            multiplicity: None,
            n_alpha: None,
            n_beta: None,
            restricted_open: false,
            warnings: Vec::new(),
            basis_hint,
            orbitals_hint,
            terminated_normally: false,
            error_line: None,
            levels: None,
            ecp_cores: Vec::new(),
        }
    }

    /// A newly printed geometry starts a step, unless it repeats the last one (programs print the
    /// same geometry in several places: input echo, final summary).
    pub fn push_geometry(&mut self, g: Geometry) {
        if let Some(last) = self.steps.last_mut()
            && last.geometry.same_as(&g)
        {
            return;
        }
        self.steps.push(RawStep {
            geometry: g,
            energy_hartree: None,
            orbitals: None,
            time_fs: None,
        });
    }

    /// A geometry printed with fewer digits (`tol_bohr`) than an earlier print of it: the same step
    /// when it matches the last one within that, else a new step.
    pub fn push_rounded_geometry(&mut self, g: Geometry, tol_bohr: f64) {
        if self
            .steps
            .last()
            .is_some_and(|last| last.geometry.same_within(&g, tol_bohr))
        {
            return;
        }
        self.push_geometry(g);
    }

    pub fn set_energy(&mut self, e: f64) {
        if let Some(last) = self.steps.last_mut() {
            last.energy_hartree = Some(e);
        }
    }

    /// Attaches orbitals to the current step (a later print in the same step replaces them).
    pub fn set_orbitals(&mut self, path: &Path, o: PrintedOrbitals) -> Result<(), ReadError> {
        match self.steps.last_mut() {
            Some(last) => {
                last.orbitals = Some(o);
                Ok(())
            }
            None => Err(ReadError::line(
                path,
                o.alpha.line,
                "orbital coefficients were printed before any geometry: expected a coordinate table first",
            )),
        }
    }
}

/// Turns what a reader collected into frames, steps and wavefunctions.
pub(crate) fn finish(path: &Path, c: Collected) -> Result<QmLog, ReadError> {
    let program_name = c.program.name();
    let Some(first) = c.steps.first() else {
        let why = match &c.error_line {
            Some((n, l)) => format!(" (the job failed: line {n}: {l:?})"),
            None if !c.terminated_normally => " (the log may be truncated or the job may have stopped early)".into(),
            None => String::new(),
        };
        return Err(ReadError::file(
            path,
            format!("no geometry found in this {program_name} log{why}"),
        ));
    };
    let n_atoms = first.geometry.elements.len();
    let mut structure = Structure::default();
    structure.reserve(n_atoms);
    for &e in &first.geometry.elements {
        structure.push_atom(
            e,
            Name8::from(e.symbol()),
            Name8::from("QM"),
            1,
            Name8::EMPTY,
            Name8::EMPTY,
        );
    }
    let mut warnings = c.warnings;
    if let Some((n, l)) = &c.error_line {
        warnings.push(format!(
            "the job ended with an error (line {n}: {l:?}); steps up to it are loaded"
        ));
    } else if !c.terminated_normally {
        warnings.push(format!(
            "no {program_name} normal-termination line: the job did not finish or the log was cut; steps found are loaded"
        ));
    }
    let program = match &c.version {
        Some(v) => format!("{program_name} {v}"),
        None => program_name.to_string(),
    };
    // The nuclear charges less the cores of the effective core potentials, the same at every step:
    // as printed, or inferred from the log's charge and electrons (`io::ecp`).
    let mut first_atoms = first.geometry.atoms();
    crate::io::ecp::apply_cores(&mut first_atoms, &c.ecp_cores);
    let ecp_note = match (c.charge, c.n_alpha) {
        (Some(q), Some(a)) => {
            let n_electrons = (a + c.n_beta.unwrap_or(a)) as f64;
            crate::io::ecp::reconcile(&mut first_atoms, n_electrons, q)
        }
        _ => None,
    };
    let cores: Vec<(usize, u32)> = first_atoms
        .iter()
        .enumerate()
        .map(|(i, a)| {
            (
                i,
                (f64::from(a.element.number()) - a.nuclear_charge).round().max(0.0) as u32,
            )
        })
        .filter(|&(_, core)| core > 0)
        .collect();
    let mut frames = Vec::with_capacity(c.steps.len());
    let mut steps = Vec::with_capacity(c.steps.len());
    let mut wavefunctions = Vec::new();
    let mut warned_basis = false;
    let mut unscaled_cartesians: Option<bool> = None;
    let mut corrections: Vec<String> = Vec::new();
    for raw in &c.steps {
        let g = &raw.geometry;
        if g.elements != first.geometry.elements {
            let (a, b) = (&first.geometry.elements, &g.elements);
            let what = match crate::io::fields::AtomsDiffer::compare(
                a,
                b,
                |e| *e,
                |i| a.get(i) != b.get(i),
                |e| e.symbol().to_string(),
            ) {
                Some(d) => d.describe("the first step's"),
                None => format!("this geometry has {} atoms, the first step's {}", b.len(), a.len()),
            };
            return Err(ReadError::line(
                path,
                g.line,
                format!("{what}: expected one molecule throughout"),
            ));
        }
        frames.push(Frame {
            positions_angstrom: g
                .positions_bohr
                .iter()
                .map(|&p| angstrom_from_bohr3(p).map(|x| x as f32))
                .collect(),
            cell: None,
            time_ps: raw.time_fs.map(|t| t / 1000.0),
            step: Some(steps.len() as i64),
        });
        let mut step = Step {
            scf_energy_hartree: raw.energy_hartree,
            wavefunction: None,
            line: g.line,
        };
        if let Some(o) = &raw.orbitals {
            match &c.shells_per_atom {
                None => {
                    if !warned_basis {
                        warnings.push(format!(
                            "orbitals are printed but the basis set is not, so no wavefunction can be built: {}",
                            c.basis_hint
                        ));
                        warned_basis = true;
                    }
                }
                Some(shells) => {
                    let mut atoms = g.atoms();
                    crate::io::ecp::apply_cores(&mut atoms, &cores);
                    // Gaussian's Cartesian functions of l >= 2: which normalisation the printed
                    // coefficients refer to is decided once per log, by orthonormality.
                    if unscaled_cartesians.is_none() && o.labels.iter().any(|(_, f)| *f != 1.0) {
                        let v = cartesians_individually_normalised(&atoms, shells, o, c.n_alpha.unwrap_or(0));
                        if v {
                            corrections.push(
                                "Cartesian functions of l >= 2 read as individually normalised (the log's \
                                 coefficients are orthonormal so, not with Gaussian's x^l normalisation)"
                                    .to_string(),
                            );
                        }
                        unscaled_cartesians = Some(v);
                    }
                    let unit: Vec<(Ao, f64)>;
                    let labels = if unscaled_cartesians == Some(true) {
                        unit = o.labels.iter().map(|&(a, _)| (a, 1.0)).collect();
                        &unit
                    } else {
                        &o.labels
                    };
                    let map = map_rows(&atoms, shells, labels).map_err(|m| ReadError::line(path, o.alpha.line, m))?;
                    let n_alpha = c.n_alpha.unwrap_or(0);
                    let n_beta = c.n_beta.unwrap_or(n_alpha);
                    let (spin, alpha, beta) = match &o.beta {
                        Some(b) => {
                            let a_occ = aufbau(o.alpha.n_orbitals(), n_alpha, 0, false);
                            let b_occ = aufbau(b.n_orbitals(), n_beta, 0, false);
                            (
                                SpinKind::Unrestricted,
                                orbital_set(&o.alpha, &map, &a_occ),
                                Some(orbital_set(b, &map, &b_occ)),
                            )
                        }
                        None => {
                            let (d, s) = (n_alpha.min(n_beta), n_alpha.abs_diff(n_beta));
                            let occ = aufbau(o.alpha.n_orbitals(), d, s, true);
                            let kind = if s > 0 || c.restricted_open {
                                SpinKind::RestrictedOpen
                            } else {
                                SpinKind::Restricted
                            };
                            (kind, orbital_set(&o.alpha, &map, &occ), None)
                        }
                    };
                    step.wavefunction = Some(wavefunctions.len());
                    wavefunctions.push(Wavefunction {
                        atoms,
                        basis: map.basis,
                        spin,
                        alpha,
                        beta,
                        program: Some(program.clone()),
                        corrections: corrections.clone(),
                        energy_hartree: raw.energy_hartree,
                        scf_density: None,
                    });
                }
            }
        }
        steps.push(step);
    }
    if let Some(note) = ecp_note.filter(|_| !wavefunctions.is_empty()) {
        warnings.push(note);
    }
    let levels = match c.levels.filter(|_| wavefunctions.is_empty()) {
        // Orbitals printed without a basis set (a semi-empirical GAMESS job prints none): their
        // energies still make the orbital list and diagram.
        None if wavefunctions.is_empty() => c
            .steps
            .iter()
            .rev()
            .find_map(|s| s.orbitals.as_ref())
            .map(|o| printed_levels(o, c.n_alpha, c.n_beta)),
        levels => levels,
    };
    if c.steps.iter().all(|s| s.orbitals.is_none())
        && !warnings.iter().any(|w| w.starts_with("only orbitals from number"))
    {
        let listed = if levels.is_some() {
            " (the orbital energies are listed from its table)"
        } else {
            ""
        };
        warnings.push(format!(
            "no molecular orbitals in this log{listed}: {}",
            c.orbitals_hint
        ));
    }
    Ok(QmLog {
        program: c.program,
        structure,
        frames,
        steps,
        wavefunctions,
        charge: c.charge,
        multiplicity: c.multiplicity,
        warnings,
        levels,
    })
}

/// The energies, occupations (printed, else filled in order from the electron counts) and
/// symmetries of printed orbitals, without their coefficients.
fn printed_levels(o: &PrintedOrbitals, n_alpha: Option<usize>, n_beta: Option<usize>) -> crate::model::OrbitalLevels {
    let n_alpha = n_alpha.unwrap_or(0);
    let n_beta = n_beta.unwrap_or(n_alpha);
    let set = |raw: &RawOrbitals, default: Vec<f64>| {
        let n = raw.energies_hartree.len();
        let mut occupations = if raw.occupations.len() == n {
            raw.occupations.clone()
        } else {
            default
        };
        occupations.resize(n, 0.0);
        let mut symmetries = raw.symmetries.clone();
        symmetries.resize(n, String::new());
        crate::model::LevelSet {
            energies_hartree: raw.energies_hartree.clone(),
            occupations,
            symmetries,
        }
    };
    let n = o.alpha.energies_hartree.len();
    match &o.beta {
        Some(b) => crate::model::OrbitalLevels {
            alpha: set(&o.alpha, aufbau(n, n_alpha, 0, false)),
            beta: Some(set(b, aufbau(b.energies_hartree.len(), n_beta, 0, false))),
        },
        None => crate::model::OrbitalLevels {
            alpha: set(&o.alpha, aufbau(n, n_alpha.min(n_beta), n_alpha.abs_diff(n_beta), true)),
            beta: None,
        },
    }
}

/// True when the printed coefficients of Cartesian functions of l >= 2 refer to individually
/// normalised functions: the occupied alpha orbitals are orthonormal that way (to the printed
/// digits) and are not with the labels' x^l scale factors.
fn cartesians_individually_normalised(
    atoms: &[crate::model::QmAtom],
    shells: &[Vec<ShellTemplate>],
    o: &PrintedOrbitals,
    n_alpha: usize,
) -> bool {
    use crate::model::overlap::{orthonormality_deviation, overlap_matrix};
    let deviation = |labels: &[(Ao, f64)]| -> Option<f64> {
        let map = map_rows(atoms, shells, labels).ok()?;
        let n = o.alpha.n_orbitals();
        let set = orbital_set(&o.alpha, &map, &aufbau(n, n_alpha, 0, false));
        let s = overlap_matrix(&map.basis);
        let occupied: Vec<usize> = (0..n_alpha.min(n).max(1)).collect();
        orthonormality_deviation(&set, &s, &occupied)
    };
    let unit: Vec<(Ao, f64)> = o.labels.iter().map(|&(a, _)| (a, 1.0)).collect();
    match (deviation(&o.labels), deviation(&unit)) {
        (Some(scaled), Some(unscaled)) => unscaled < 1e-3 && scaled > 10.0 * unscaled,
        _ => false,
    }
}

/// Element from a nuclear charge printed as a float (rounded); `None` when out of range.
pub(crate) fn element_from_charge(z: f64) -> Option<Element> {
    if !(0.5..200.0).contains(&z) {
        return None;
    }
    Element::from_number(z.round() as u32)
}

/// Builds an atom position from Angstrom values.
pub(crate) fn bohr_from(p_angstrom: [f64; 3]) -> [f64; 3] {
    bohr_from_angstrom3(p_angstrom)
}
