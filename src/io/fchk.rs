//! Gaussian formatted checkpoint (fchk) reader.
//!
//! Owns the conversion of Gaussian's basis conventions to `model::basis`: shell types (0 s, 1 p,
//! -1 SP split into s and p, +l Cartesian, -l pure), the Cartesian component orders (g and up:
//! ZZZZ YZZZ ... XXXX; every Cartesian function individually normalised), alpha and beta orbitals,
//! occupations from the electron counts, optional count records ("Number of atoms", "Number of
//! contracted shells"), and the SCF density matrices, against which the orbitals are checked
//! (C n C^T must reproduce "Total SCF Density": a permutation inside a shell, which the overlap
//! cannot see, shows there). Called by `io::load`
//! (through [`read`]) and by tools that want the density matrix (through [`read_full`]).

use super::ReadError;
use super::molden::{Correction, check_and_correct};
use super::text::{lines, shorten};
use crate::model::basis::cartesian_powers;
use crate::model::wavefunction::DensityMatrix;
use crate::model::{BasisSet, Element, Frame, OrbitalSet, QmAtom, Shell, SpinKind, Wavefunction};
use std::path::Path;

/// Everything the fchk reader extracts.
pub struct FchkFile {
    pub wavefunction: Wavefunction,
    /// "Total SCF Density", converted to the internal basis order and normalisation.
    pub total_density: Option<DensityMatrix>,
    /// "Spin SCF Density" (alpha minus beta), converted likewise.
    pub spin_density: Option<DensityMatrix>,
    pub warnings: Vec<String>,
}

/// Largest array accepted (values); a header claiming more is rejected before allocating.
const MAX_VALUES: usize = 400_000_000;

#[derive(Clone, Debug)]
enum Value {
    Int(i64),
    Real(f64),
    Ints(Vec<i64>),
    Reals(Vec<f64>),
    Other,
}

struct Entry {
    name: String,
    line: usize,
    value: Value,
}

fn parse_entries(path: &Path, bytes: &[u8]) -> Result<Vec<Entry>, ReadError> {
    let all: Vec<(usize, &[u8])> = lines(bytes).collect();
    let mut entries = Vec::new();
    let mut i = 2; // title and route lines
    if all.len() < 3 {
        return Err(ReadError::file(
            path,
            "file too short: expected a title line, a job line and labelled sections",
        ));
    }
    while let Some(&(number, raw)) = all.get(i) {
        i += 1;
        let text = String::from_utf8_lossy(raw);
        if text.trim().is_empty() {
            continue;
        }
        if text.len() < 44 || !text.is_char_boundary(40) || !text.is_char_boundary(44) {
            return Err(ReadError::line(
                path,
                number,
                format!(
                    "expected a labelled section 'Name  I|R|C|L  value', found {:?}",
                    shorten(text.trim())
                ),
            ));
        }
        let name = text[..40].trim().to_string();
        let kind = text[40..44].trim().to_string();
        let rest = text[44..].trim();
        let array = rest.starts_with("N=");
        let value = if array {
            let n_text = rest.trim_start_matches("N=").trim();
            let n: usize = n_text
                .parse::<u64>()
                .ok()
                .filter(|&n| n <= MAX_VALUES as u64)
                .map(|n| n as usize)
                .ok_or_else(|| {
                    ReadError::line(
                        path,
                        number,
                        format!("expected an array length after N=, found {:?}", shorten(n_text)),
                    )
                })?;
            let per_line = match kind.as_str() {
                "I" => 6,
                "R" => 5,
                "C" => 5,
                "L" => 72,
                _ => 5,
            };
            let n_lines = n.div_ceil(per_line);
            if i + n_lines > all.len() {
                return Err(ReadError::line(
                    path,
                    number,
                    format!(
                        "section {name:?} declares {n} values but the file ends after {} more lines: truncated",
                        all.len() - i
                    ),
                ));
            }
            match kind.as_str() {
                "I" | "R" => {
                    let mut ints = Vec::new();
                    let mut reals = Vec::new();
                    while ints.len() + reals.len() < n {
                        let Some(&(vn, vraw)) = all.get(i) else {
                            return Err(ReadError::line(
                                path,
                                number,
                                format!("section {name:?}: expected {n} values, the file ends"),
                            ));
                        };
                        i += 1;
                        let vt = String::from_utf8_lossy(vraw);
                        for tok in vt.split_whitespace() {
                            if kind == "I" {
                                let v = tok.parse::<i64>().map_err(|_| {
                                    ReadError::line(
                                        path,
                                        vn,
                                        format!("section {name:?}: expected an integer, found {:?}", shorten(tok)),
                                    )
                                })?;
                                ints.push(v);
                            } else {
                                let v = tok
                                    .replace(['D', 'd'], "E")
                                    .parse::<f64>()
                                    .ok()
                                    .filter(|v| v.is_finite())
                                    .ok_or_else(|| {
                                        ReadError::line(
                                            path,
                                            vn,
                                            format!(
                                                "section {name:?}: expected a finite number, found {:?}",
                                                shorten(tok)
                                            ),
                                        )
                                    })?;
                                reals.push(v);
                            }
                        }
                        if vt.split_whitespace().next().is_none() {
                            return Err(ReadError::line(
                                path,
                                vn,
                                format!("section {name:?}: expected values, found an empty line"),
                            ));
                        }
                    }
                    if ints.len() + reals.len() != n {
                        return Err(ReadError::line(
                            path,
                            number,
                            format!(
                                "section {name:?}: declared {n} values, found {}",
                                ints.len() + reals.len()
                            ),
                        ));
                    }
                    if kind == "I" {
                        Value::Ints(ints)
                    } else {
                        Value::Reals(reals)
                    }
                }
                _ => {
                    i += n_lines;
                    Value::Other
                }
            }
        } else {
            match kind.as_str() {
                "I" => Value::Int(rest.parse::<i64>().map_err(|_| {
                    ReadError::line(
                        path,
                        number,
                        format!("expected an integer for {name:?}, found {:?}", shorten(rest)),
                    )
                })?),
                "R" => Value::Real(
                    rest.replace(['D', 'd'], "E")
                        .parse::<f64>()
                        .ok()
                        .filter(|v| v.is_finite())
                        .ok_or_else(|| {
                            ReadError::line(
                                path,
                                number,
                                format!("expected a finite number for {name:?}, found {:?}", shorten(rest)),
                            )
                        })?,
                ),
                _ => Value::Other,
            }
        };
        entries.push(Entry {
            name,
            line: number,
            value,
        });
    }
    Ok(entries)
}

struct Sections<'a> {
    path: &'a Path,
    entries: Vec<Entry>,
    last_line: usize,
}

impl Sections<'_> {
    fn find(&self, name: &str) -> Option<&Entry> {
        self.entries.iter().find(|e| e.name == name)
    }

    /// Which of the geometries the orbitals belong to, and how many the file holds: Q-Chem's
    /// optimisation and dynamics files repeat "Current cartesian coordinates" for every step, and
    /// the orbitals belong to the last geometry before "Alpha MO coefficients" (an optimisation
    /// writes them after its last step, a dynamics run after its first).
    fn orbital_geometry(&self) -> (usize, usize) {
        let name = "Current cartesian coordinates";
        let mo = self
            .entries
            .iter()
            .position(|e| e.name == "Alpha MO coefficients")
            .unwrap_or(self.entries.len());
        let all: Vec<usize> = (0..self.entries.len())
            .filter(|&i| self.entries[i].name == name)
            .collect();
        let chosen = all.iter().rposition(|&i| i < mo).unwrap_or(0);
        (chosen, all.len())
    }

    /// The `k`-th (0-based) entry of that name, as [`Self::reals`] reads the first.
    fn reals_nth(&self, name: &str, k: usize, n: usize) -> Result<(&[f64], usize), ReadError> {
        match self.entries.iter().filter(|e| e.name == name).nth(k) {
            Some(Entry {
                value: Value::Reals(v),
                line,
                ..
            }) if v.len() == n => Ok((v, *line)),
            Some(Entry {
                value: Value::Reals(v),
                line,
                ..
            }) => Err(ReadError::line(
                self.path,
                *line,
                format!("expected {name:?} to hold {n} numbers, found {}", v.len()),
            )),
            Some(e) => Err(ReadError::line(
                self.path,
                e.line,
                format!("expected {name:?} to be an array of numbers"),
            )),
            None => Err(self.missing(name)),
        }
    }

    fn missing(&self, name: &str) -> ReadError {
        ReadError::line(
            self.path,
            self.last_line,
            format!("missing section {name:?}: the file ends without it"),
        )
    }

    fn int(&self, name: &str) -> Result<i64, ReadError> {
        match self.find(name) {
            Some(Entry {
                value: Value::Int(v), ..
            }) => Ok(*v),
            Some(e) => Err(ReadError::line(
                self.path,
                e.line,
                format!("expected {name:?} to be one integer"),
            )),
            None => Err(self.missing(name)),
        }
    }

    fn real(&self, name: &str) -> Option<f64> {
        match self.find(name) {
            Some(Entry {
                value: Value::Real(v), ..
            }) => Some(*v),
            _ => None,
        }
    }

    fn ints(&self, name: &str, n: usize) -> Result<(&[i64], usize), ReadError> {
        match self.find(name) {
            Some(Entry {
                value: Value::Ints(v),
                line,
                ..
            }) if v.len() == n => Ok((v, *line)),
            Some(e) => Err(ReadError::line(
                self.path,
                e.line,
                format!("expected {name:?} to hold {n} integers"),
            )),
            None => Err(self.missing(name)),
        }
    }

    fn reals(&self, name: &str, n: usize) -> Result<(&[f64], usize), ReadError> {
        self.reals_nth(name, 0, n)
    }

    fn reals_any(&self, name: &str) -> Option<(&[f64], usize)> {
        match self.find(name) {
            Some(Entry {
                value: Value::Reals(v),
                line,
                ..
            }) => Some((v, *line)),
            _ => None,
        }
    }
}

/// Gaussian's Cartesian component order for a shell of angular momentum l.
fn gaussian_cartesian_order(l: u8) -> Vec<[u8; 3]> {
    if l < 4 {
        // s, p, d, f: the same order as Molden's (d: XX YY ZZ XY XZ YZ; f: XXX YYY ZZZ XYY XXY XXZ XZZ YZZ YYZ XYZ).
        return cartesian_powers(l);
    }
    // g and up: ZZZZ YZZZ YYZZ YYYZ YYYY XZZZ ... XXXX (x power rising, then y power rising).
    let mut v = Vec::new();
    for a in 0..=l {
        for b in 0..=(l - a) {
            v.push([a, b, l - a - b]);
        }
    }
    v
}

/// For one shell: internal index of each file component, and the factor that converts a file
/// coefficient into an internal one. Gaussian's Cartesian functions are individually normalised,
/// as the internal ones are (the orbitals of real 6D/10F and Cartesian g/h files are orthonormal
/// that way, and reproduce the file's "Total SCF Density"), so only the order changes.
fn component_map(l: u8, pure: bool) -> Vec<(usize, f64)> {
    if pure {
        return (0..2 * l as usize + 1).map(|k| (k, 1.0)).collect();
    }
    let internal = cartesian_powers(l);
    gaussian_cartesian_order(l)
        .iter()
        .map(|p| (internal.iter().position(|q| q == p).unwrap_or(0), 1.0))
        .collect()
}

/// Reads an fchk file into a wavefunction (see [`read_full`] for the density matrices).
pub fn read(path: &Path, bytes: &[u8]) -> Result<Wavefunction, ReadError> {
    read_full(path, bytes).map(|f| f.wavefunction)
}

/// The atoms and geometries of an fchk file that holds no basis set and no orbitals (Gaussian's
/// optimisation and scan summaries): the geometries of an optimisation's path, or each scan
/// point's last one, as frames; `None` when the file has a basis or orbitals (read it with
/// [`read_full`]).
pub fn read_geometries(path: &Path, bytes: &[u8]) -> Result<Option<super::load::Parsed>, ReadError> {
    let entries = parse_entries(path, bytes)?;
    let s = Sections {
        path,
        entries,
        last_line: lines(bytes).count(),
    };
    if s.find("Shell types").is_some()
        || s.find("Alpha MO coefficients").is_some()
        || s.find("Atomic numbers").is_none()
    {
        return Ok(None);
    }
    let n_atoms = count_or_length(&s, "Number of atoms", "Atomic numbers", 1_000_000)?;
    let (z, _) = s.ints("Atomic numbers", n_atoms)?;
    let mut structure = crate::model::Structure::default();
    for &zi in z {
        let e = u32::try_from(zi)
            .ok()
            .and_then(Element::from_number)
            .unwrap_or(Element::UNKNOWN);
        let name = crate::model::Name8::from(e.symbol());
        let none = crate::model::Name8::EMPTY;
        structure.push_atom(e, name, crate::model::Name8::from("QM"), 1, none, none);
    }
    let per = 3 * n_atoms;
    // Each "Opt point k Geometries" array holds that point's path, geometry after geometry.
    let paths: Vec<&[f64]> = s
        .entries
        .iter()
        .filter(|e| e.name.starts_with("Opt point") && e.name.ends_with("Geometries"))
        .filter_map(|e| match &e.value {
            Value::Reals(v) if per > 0 && !v.is_empty() && v.len() % per == 0 => Some(v.as_slice()),
            _ => None,
        })
        .collect();
    let geometries: Vec<&[f64]> = match paths.as_slice() {
        [] => vec![s.reals("Current cartesian coordinates", per)?.0],
        [one] => one.chunks_exact(per).collect(),
        scan => scan.iter().filter_map(|p| p.chunks_exact(per).last()).collect(),
    };
    let frames: Vec<Frame> = geometries
        .iter()
        .map(|g| Frame {
            positions_angstrom: g
                .chunks_exact(3)
                .map(|p| crate::model::units::angstrom_from_bohr3([p[0], p[1], p[2]]).map(|x| x as f32))
                .collect(),
            ..Frame::default()
        })
        .collect();
    let job = lines(bytes)
        .nth(1)
        .map(|(_, b)| {
            String::from_utf8_lossy(b)
                .split_whitespace()
                .next()
                .unwrap_or("")
                .to_string()
        })
        .unwrap_or_default();
    let warnings = vec![format!(
        "the file holds no basis set and no orbitals (job type {job:?}: Gaussian's optimisation or scan summary): \
         its {} geometr{} loaded, without orbitals",
        frames.len(),
        if frames.len() == 1 { "y is" } else { "ies are" }
    )];
    Ok(Some(super::load::Parsed {
        structure,
        frames,
        warnings,
        frame_energies_hartree: Vec::new(),
    }))
}

/// Reads an fchk file: wavefunction, SCF density matrices, warnings.
pub fn read_full(path: &Path, bytes: &[u8]) -> Result<FchkFile, ReadError> {
    let entries = parse_entries(path, bytes)?;
    let last_line = lines(bytes).count();
    let s = Sections {
        path,
        entries,
        last_line,
    };
    let title_job = lines(bytes)
        .nth(1)
        .map(|(_, b)| String::from_utf8_lossy(b).into_owned())
        .unwrap_or_default();

    // "Number of atoms" is optional (some writers and trimmed files leave it out): the atom count
    // follows from "Atomic numbers".
    if s.find("Shell types").is_none()
        && s.find("Alpha MO coefficients").is_none()
        && s.find("Atomic numbers").is_some()
    {
        return Err(ReadError::line(
            path,
            2,
            format!(
                "the file holds atoms but no basis set and no orbitals (job type {:?}: Gaussian writes an optimisation or scan summary without them), so it has no wavefunction to read",
                title_job.split_whitespace().next().unwrap_or("")
            ),
        ));
    }
    let n_atoms = count_or_length(&s, "Number of atoms", "Atomic numbers", 1_000_000)?;
    let (z, _) = s.ints("Atomic numbers", n_atoms)?;
    let charges = s.reals("Nuclear charges", n_atoms).ok().map(|(c, _)| c.to_vec());
    let (geometry, geometries) = s.orbital_geometry();
    let (coords, _) = s.reals_nth("Current cartesian coordinates", geometry, 3 * n_atoms)?;
    let mut atoms: Vec<QmAtom> = (0..n_atoms)
        .map(|i| QmAtom {
            element: u32::try_from(z[i])
                .ok()
                .and_then(Element::from_number)
                .unwrap_or(Element::UNKNOWN),
            nuclear_charge: charges.as_ref().and_then(|c| c.get(i).copied()).unwrap_or(z[i] as f64),
            position_bohr: [coords[3 * i], coords[3 * i + 1], coords[3 * i + 2]],
        })
        .collect();
    // Gaussian writes the nuclear charges less the ECP cores; Q-Chem the atomic numbers.
    let ecp_note = match (s.int("Charge"), s.int("Number of electrons")) {
        (Ok(q), Ok(n)) => i32::try_from(q)
            .ok()
            .and_then(|q| crate::io::ecp::reconcile(&mut atoms, n as f64, q)),
        _ => None,
    };
    // Gaussian's own records name it; another writer (Q-Chem) leaves them out.
    let by_gaussian = ["Gaussian Version", "Route", "Info1-9"]
        .iter()
        .any(|k| s.find(k).is_some());

    let n_shells = count_or_length(&s, "Number of contracted shells", "Shell types", 10_000_000)?;
    let (types, types_line) = s.ints("Shell types", n_shells)?;
    let (nprim, _) = s.ints("Number of primitives per shell", n_shells)?;
    let (shell_atom, map_line) = s.ints("Shell to atom map", n_shells)?;
    let total_prims: i64 = nprim
        .iter()
        .try_fold(0i64, |acc, &n| if n > 0 { acc.checked_add(n) } else { None })
        .ok_or_else(|| {
            ReadError::line(
                path,
                types_line,
                "expected a positive number of primitives for every shell",
            )
        })?;
    let n_prim_total = usize::try_from(total_prims).unwrap_or(usize::MAX);
    let (exps, exps_line) = s.reals("Primitive exponents", n_prim_total)?;
    let (coefs, _) = s.reals("Contraction coefficients", n_prim_total)?;
    let sp_coefs = s
        .reals("P(S=P) Contraction coefficients", n_prim_total)
        .ok()
        .map(|(c, _)| c);
    // "Coordinates of each shell" is written once, at the first geometry: at another one the
    // shells sit on their atoms.
    let shell_coords = s
        .reals("Coordinates of each shell", 3 * n_shells)
        .ok()
        .map(|(c, _)| c)
        .filter(|_| geometry == 0);

    let mut shells = Vec::new();
    // Per file basis function: (internal index, factor), built shell by shell.
    let mut map: Vec<(usize, f64)> = Vec::new();
    let mut start = 0usize;
    let mut offset = 0usize;
    for k in 0..n_shells {
        let np = nprim[k] as usize;
        let e = &exps[start..start + np];
        let c = &coefs[start..start + np];
        start += np;
        let atom = usize::try_from(shell_atom[k] - 1)
            .ok()
            .filter(|&a| a < n_atoms)
            .ok_or_else(|| {
                ReadError::line(
                    path,
                    map_line,
                    format!(
                        "shell {} sits on atom {}, the file has {n_atoms} atoms",
                        k + 1,
                        shell_atom[k]
                    ),
                )
            })?;
        if e.iter().any(|&x| x <= 0.0) {
            return Err(ReadError::line(
                path,
                exps_line,
                format!("shell {} has a non-positive exponent", k + 1),
            ));
        }
        let center = match shell_coords {
            Some(sc) => [sc[3 * k], sc[3 * k + 1], sc[3 * k + 2]],
            None => atoms[atom].position_bohr,
        };
        let t = types[k];
        let parts: Vec<(u8, bool, Vec<f64>)> = match t {
            -1 => {
                let Some(sp) = sp_coefs else {
                    return Err(ReadError::line(
                        path,
                        types_line,
                        "an SP shell needs \"P(S=P) Contraction coefficients\", which is missing",
                    ));
                };
                vec![(0, false, c.to_vec()), (1, false, sp[start - np..start].to_vec())]
            }
            t if (-7..=7).contains(&t) => {
                let l = t.unsigned_abs() as u8;
                vec![(l, t < -1, c.to_vec())]
            }
            _ => {
                return Err(ReadError::line(
                    path,
                    types_line,
                    format!("shell type {t} is not supported (expected -7..=7)"),
                ));
            }
        };
        for (l, pure, cc) in parts {
            let mut sh = Shell {
                l,
                pure,
                atom,
                center_bohr: center,
                exponents: e.to_vec(),
                coefficients: cc,
            };
            sh.normalize_contraction();
            for (idx, f) in component_map(l, pure) {
                map.push((offset + idx, f));
            }
            offset += sh.n_functions();
            shells.push(sh);
        }
    }
    let basis = BasisSet { shells };
    let n_basis = basis.n_functions();
    let declared = count(&s, "Number of basis functions", 10_000_000)?;
    if declared != n_basis {
        return Err(ReadError::line(
            path,
            types_line,
            format!("the shells give {n_basis} basis functions but \"Number of basis functions\" says {declared}"),
        ));
    }

    let n_alpha_el = s.int("Number of alpha electrons").unwrap_or(0).max(0) as usize;
    let n_beta_el = s.int("Number of beta electrons").unwrap_or(0).max(0) as usize;
    let read_set = |label: &str| -> Result<Option<OrbitalSet>, ReadError> {
        let Some((energies, eline)) = s.reals_any(&format!("{label} Orbital Energies")) else {
            return Ok(None);
        };
        let n_mo = energies.len();
        let name = format!("{label} MO coefficients");
        let (raw, cline) = s.reals_any(&name).ok_or_else(|| s.missing(&name))?;
        if Some(raw.len()) != n_mo.checked_mul(n_basis) {
            return Err(ReadError::line(
                path,
                cline,
                format!(
                    "{name:?} holds {} numbers, expected {n_mo} orbitals x {n_basis} basis functions",
                    raw.len()
                ),
            ));
        }
        let _ = eline;
        let mut coefficients = vec![0.0; raw.len()];
        for (mo, row) in raw.chunks(n_basis).enumerate() {
            for (file_idx, &(idx, f)) in map.iter().enumerate() {
                coefficients[mo * n_basis + idx] = row[file_idx] * f;
            }
        }
        Ok(Some(OrbitalSet {
            energies_hartree: energies.to_vec(),
            occupations: vec![0.0; n_mo],
            symmetries: vec![String::new(); n_mo],
            coefficients,
            n_basis,
        }))
    };
    let mut alpha = read_set("Alpha")?.ok_or_else(|| s.missing("Alpha Orbital Energies"))?;
    let beta = read_set("Beta")?;
    let spin = match &beta {
        Some(_) => SpinKind::Unrestricted,
        None if n_alpha_el != n_beta_el => SpinKind::RestrictedOpen,
        None => SpinKind::Restricted,
    };
    let mut beta = beta;
    match spin {
        SpinKind::Unrestricted => {
            for (i, o) in alpha.occupations.iter_mut().enumerate() {
                *o = if i < n_alpha_el { 1.0 } else { 0.0 };
            }
            if let Some(b) = beta.as_mut() {
                for (i, o) in b.occupations.iter_mut().enumerate() {
                    *o = if i < n_beta_el { 1.0 } else { 0.0 };
                }
            }
        }
        _ => {
            let (lo, hi) = (n_alpha_el.min(n_beta_el), n_alpha_el.max(n_beta_el));
            for (i, o) in alpha.occupations.iter_mut().enumerate() {
                *o = if i < lo {
                    2.0
                } else if i < hi {
                    1.0
                } else {
                    0.0
                };
            }
        }
    }

    let density = |name: &str| -> Result<Option<DensityMatrix>, ReadError> {
        let Some((packed, line)) = s.reals_any(name) else {
            return Ok(None);
        };
        if packed.len() != n_basis * (n_basis + 1) / 2 {
            return Err(ReadError::line(
                path,
                line,
                format!(
                    "{name:?} holds {} numbers, expected {}",
                    packed.len(),
                    n_basis * (n_basis + 1) / 2
                ),
            ));
        }
        let mut values = vec![0.0; n_basis * n_basis];
        let mut k = 0;
        for i in 0..n_basis {
            for j in 0..=i {
                let (ii, fi) = map[i];
                let (jj, fj) = map[j];
                // A file function is f times the internal one (as for the coefficients), so
                // rho = sum P_file phi_file phi_file gives P_int = P_file * f_i * f_j.
                let v = packed[k] * fi * fj;
                values[ii * n_basis + jj] = v;
                values[jj * n_basis + ii] = v;
                k += 1;
            }
        }
        Ok(Some(DensityMatrix { n_basis, values }))
    };
    let total_density = density("Total SCF Density")?;
    let spin_density = density("Spin SCF Density")?;

    let mut wf = Wavefunction {
        atoms,
        basis,
        spin,
        alpha,
        beta: if spin == SpinKind::Unrestricted { beta } else { None },
        program: if title_job.to_ascii_lowercase().contains("qchem") {
            Some("Q-Chem".into())
        } else if by_gaussian {
            Some("Gaussian".into())
        } else {
            None
        },
        corrections: Vec::new(),
        energy_hartree: s.real("Total Energy"),
        scf_density: total_density.clone(),
    };
    // The conversion above is the documented convention; if the orbitals still are not orthonormal,
    // the file may come from a writer with individually normalised Cartesian functions.
    // (A writer that normalises Cartesian functions as x^l, not individually as Gaussian does, is
    // caught by the overlap and corrected.)
    let mut warnings = check_and_correct(
        &mut wf,
        &[
            vec![Correction::UnnormalisedPrimitives],
            vec![Correction::CartesianAsXl],
        ],
    );
    let (total_density, spin_density) = if wf.corrections.is_empty() {
        (total_density, spin_density)
    } else {
        // The density matrices were converted under the convention the orbitals failed: the
        // corrected orbitals define the density instead.
        wf.scf_density = None;
        (None, None)
    };
    // The overlap cannot see a permutation of components inside a shell; the file's own SCF
    // density can: C n C^T must reproduce it.
    // (Not for ROHF files: what Gaussian stores there is not C n C^T of the spatial orbitals.)
    if let Some(p) = &total_density
        && wf.spin != SpinKind::RestrictedOpen
        && let Some(d) = density_deviation(&wf, p)
        && d > DENSITY_TOLERANCE
    {
        warnings.push(format!(
            "the orbitals do not reproduce the file's \"Total SCF Density\" (max deviation {d:.2e} of the largest element): the basis functions may be permuted; orbitals may be wrong"
        ));
    }
    warnings.extend(ecp_note);
    if geometries > 1 {
        warnings.push(format!(
            "{geometries} geometries (the steps of an optimisation or dynamics run): the orbitals and atoms are those of geometry {}, the last before the orbitals",
            geometry + 1
        ));
    }
    Ok(FchkFile {
        wavefunction: wf,
        total_density,
        spin_density,
        warnings,
    })
}

/// Largest deviation, relative to the largest element, accepted between C n C^T and the file's
/// SCF density (both printed to ~9 significant digits).
const DENSITY_TOLERANCE: f64 = 1e-6;

/// max |C n C^T - P| / max |P| over the wavefunction's occupied orbitals; `None` when P is empty or
/// does not match the basis.
fn density_deviation(wf: &Wavefunction, p: &DensityMatrix) -> Option<f64> {
    let n = wf.basis.n_functions();
    if p.n_basis != n || p.values.len() != n * n {
        return None;
    }
    let mut mine = vec![0.0; n * n];
    for set in std::iter::once(&wf.alpha).chain(wf.beta.as_ref()) {
        for (k, &occ) in set.occupations.iter().enumerate() {
            if occ == 0.0 {
                continue;
            }
            let c = set.orbital(k)?;
            for (i, &ci) in c.iter().enumerate() {
                let row = mine.get_mut(i * n..(i + 1) * n)?;
                for (m, &cj) in row.iter_mut().zip(c) {
                    *m += occ * ci * cj;
                }
            }
        }
    }
    let scale = p.values.iter().fold(0.0f64, |m, v| m.max(v.abs()));
    if scale == 0.0 {
        return None;
    }
    Some(
        mine.iter()
            .zip(&p.values)
            .fold(0.0f64, |m, (a, b)| m.max((a - b).abs()))
            / scale,
    )
}

/// The count record `name` when the file has it, else the length of the integer array `array`
/// it counts (optional count records).
fn count_or_length(s: &Sections, name: &str, array: &str, max: usize) -> Result<usize, ReadError> {
    if s.find(name).is_some() {
        return count(s, name, max);
    }
    match s.find(array) {
        Some(Entry {
            value: Value::Ints(v), ..
        }) => Ok(v.len()),
        Some(e) => Err(ReadError::line(
            s.path,
            e.line,
            format!("expected {array:?} to be an array of integers"),
        )),
        None => Err(s.missing(array)),
    }
}

fn count(s: &Sections, name: &str, max: usize) -> Result<usize, ReadError> {
    let v = s.int(name)?;
    if v < 0 || v as u64 > max as u64 {
        let line = s.find(name).map_or(0, |e| e.line);
        return Err(ReadError::line(
            s.path,
            line,
            format!("{name:?} = {v} is out of range (0..={max})"),
        ));
    }
    Ok(v as usize)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gaussian_g_order_and_factors() {
        let o = gaussian_cartesian_order(4);
        assert_eq!(o[0], [0, 0, 4]);
        assert_eq!(o[1], [0, 1, 3]);
        assert_eq!(o[4], [0, 4, 0]);
        assert_eq!(o[14], [4, 0, 0]);
        // g: file component 0 (ZZZZ) is internal component 2; no rescaling.
        let m = component_map(4, false);
        assert_eq!(m[0], (2, 1.0));
        assert_eq!(m[14], (0, 1.0));
        assert!(
            component_map(3, false)
                .iter()
                .enumerate()
                .all(|(k, &(i, f))| i == k && f == 1.0)
        );
    }

    #[test]
    fn short_and_garbled_files_are_errors() {
        let p = Path::new("x.fchk");
        assert!(read(p, b"").is_err());
        assert!(
            read(
                p,
                b"t\nSP\nNumber of atoms                            I   N=  99999999999\n"
            )
            .is_err()
        );
        let e = read(
            p,
            b"t\nSP\nNumber of atoms                            I               2\n",
        )
        .err()
        .unwrap();
        assert!(e.to_string().contains("x.fchk:"), "{e}");
    }
}
