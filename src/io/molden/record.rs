//! One Molden record (atoms, basis, orbitals, geometries) assembled into wavefunctions.

use super::conventions::trial_corrections;
use super::sections::*;
use super::*;

pub(super) fn read_record(
    path: &Path,
    sections: &[Section],
    program: Option<String>,
    out: &mut MoldenFile,
) -> Result<(), ReadError> {
    if let Some(s) = sections.iter().find(|s| s.name == "sto") {
        return Err(ReadError::line(
            path,
            s.header_line,
            "Slater-type orbitals ([STO]) are not supported: expected a Gaussian basis in [GTO]",
        ));
    }
    let find = |name: &str| sections.iter().find(|s| s.name == name);
    let Some(atoms_sec) = find("atoms") else {
        // A record with only geometries or frequencies (e.g. a trailing block) carries no wavefunction.
        if sections.iter().any(|s| s.name == "gto" || s.name == "mo") {
            return Err(ReadError::file(
                path,
                "missing [Atoms] section: expected atoms before [GTO] and [MO]",
            ));
        }
        return Ok(());
    };
    let (mut atoms, unit_warning) = read_atoms(path, atoms_sec)?;
    if let Some(p) = find("pseudo") {
        apply_pseudo(path, p, &mut atoms)?;
    }
    let Some(gto_sec) = find("gto") else {
        return Err(ReadError::line(
            path,
            atoms_sec.header_line,
            "missing [GTO] section: expected a basis set after [Atoms]",
        ));
    };
    let raw_shells = read_gto(path, gto_sec, atoms.len())?;
    let mo_sections: Vec<&Section> = sections.iter().filter(|s| s.name == "mo").collect();
    if mo_sections.is_empty() {
        return Err(ReadError::line(
            path,
            gto_sec.header_line,
            "missing [MO] section: expected molecular orbitals",
        ));
    }
    let mut flags = PureFlags::from_sections(sections);
    let mut warnings: Vec<String> = unit_warning.into_iter().collect();

    let mut mo_blocks = Vec::new();
    for s in &mo_sections {
        mo_blocks.push((s.header_line, read_mos(path, s)?));
    }
    let max_index = mo_blocks
        .iter()
        .flat_map(|(_, b)| b.iter())
        .flat_map(|m| m.coefficients.iter().map(|c| c.1))
        .max()
        .unwrap_or(0);
    let count = |f: PureFlags| -> usize {
        raw_shells
            .iter()
            .map(|s| {
                let l = s.l as usize;
                if f.pure(s.l) { 2 * l + 1 } else { (l + 1) * (l + 2) / 2 }
            })
            .sum()
    };
    let mut n_basis = count(flags);
    if max_index != n_basis {
        // Missing or wrong flags are a common writer bug: accept the other convention if it fits exactly.
        let alternatives = [
            PureFlags {
                d: true,
                f: true,
                g: true,
            },
            PureFlags {
                d: false,
                f: false,
                g: false,
            },
            PureFlags {
                d: true,
                f: false,
                g: false,
            },
            PureFlags {
                d: true,
                f: true,
                g: false,
            },
        ];
        let all_dense = mo_blocks
            .iter()
            .flat_map(|(_, b)| b.iter())
            .all(|m| m.coefficients.len() == max_index);
        match alternatives.iter().find(|f| count(**f) == max_index) {
            Some(f) if max_index > n_basis || all_dense => {
                warnings.push(format!(
                    "the orbitals have {max_index} coefficients but the basis flags give {n_basis} functions; read with {} d, {} f, {} g functions instead",
                    if f.d { "pure" } else { "Cartesian" },
                    if f.f { "pure" } else { "Cartesian" },
                    if f.g { "pure" } else { "Cartesian" }
                ));
                flags = *f;
                n_basis = max_index;
            }
            _ if max_index > n_basis => {
                let (line, _) = mo_blocks
                    .iter()
                    .flat_map(|(_, b)| b.iter())
                    .flat_map(|m| m.coefficients.iter())
                    .find(|c| c.1 > n_basis)
                    .map_or((gto_sec.header_line, 0), |c| (c.0, c.1));
                return Err(ReadError::line(
                    path,
                    line,
                    format!("orbital coefficient index {max_index} exceeds the {n_basis} basis functions of [GTO]"),
                ));
            }
            _ => {}
        }
    }
    if n_basis > MAX_FUNCTIONS {
        return Err(ReadError::line(
            path,
            gto_sec.header_line,
            format!("{n_basis} basis functions is more than this reader accepts"),
        ));
    }
    // Writers may skip zero coefficients, but a damaged file must not make us allocate dense
    // orbitals out of all proportion to the coefficients it actually holds.
    let n_mos: usize = mo_blocks.iter().map(|(_, b)| b.len()).sum();
    let n_entries: usize = mo_blocks
        .iter()
        .flat_map(|(_, b)| b.iter())
        .map(|m| m.coefficients.len())
        .sum();
    if n_mos.saturating_mul(n_basis) > n_entries.saturating_mul(100).saturating_add(1_000_000) {
        return Err(ReadError::line(
            path,
            mo_sections.first().map_or(gto_sec.header_line, |s| s.header_line),
            format!(
                "{n_mos} orbitals over {n_basis} basis functions but only {n_entries} coefficients: the file looks damaged"
            ),
        ));
    }

    let geometries = match find("geometries") {
        Some(s) => read_geometries(path, s, atoms.len())?,
        None => Vec::new(),
    };

    let electrons = molpro_electrons(sections);
    let has_pseudo = find("pseudo").is_some();
    let build = |positions: &[[f64; 3]], mos: &[RawMo]| -> Result<(Wavefunction, Vec<String>), ReadError> {
        let qm_atoms: Vec<QmAtom> = atoms
            .iter()
            .zip(positions)
            .map(|(a, p)| QmAtom {
                element: a.element,
                nuclear_charge: a.z,
                position_bohr: *p,
            })
            .collect();
        let shells: Vec<Shell> = raw_shells
            .iter()
            .map(|s| {
                let mut sh = Shell {
                    l: s.l,
                    pure: flags.pure(s.l),
                    atom: s.atom,
                    center_bohr: positions.get(s.atom).copied().unwrap_or([0.0; 3]),
                    exponents: s.exponents.clone(),
                    coefficients: s.coefficients.clone(),
                };
                sh.normalize_contraction();
                sh
            })
            .collect();
        let basis = BasisSet { shells };
        let mut alpha = OrbitalSet {
            n_basis,
            ..Default::default()
        };
        let mut beta = OrbitalSet {
            n_basis,
            ..Default::default()
        };
        for m in mos {
            let set = if m.beta { &mut beta } else { &mut alpha };
            set.energies_hartree.push(m.energy);
            set.occupations.push(m.occupation);
            set.symmetries.push(m.sym.clone());
            let start = set.coefficients.len();
            set.coefficients.resize(start + n_basis, 0.0);
            for &(line, idx, v) in &m.coefficients {
                match set.coefficients.get_mut(start + idx - 1) {
                    Some(c) if idx <= n_basis => *c = v,
                    _ => {
                        return Err(ReadError::line(
                            path,
                            line,
                            format!("basis function index {idx} exceeds the {n_basis} basis functions"),
                        ));
                    }
                }
            }
        }
        let mut occupation_notes = Vec::new();
        let negative: Vec<usize> = alpha
            .occupations
            .iter()
            .chain(&beta.occupations)
            .enumerate()
            .filter(|(_, o)| **o < 0.0)
            .map(|(i, _)| i)
            .collect();
        if !negative.is_empty() {
            // Dalton's ROHF files give some virtual orbitals negative "occupations".
            for o in alpha.occupations.iter_mut().chain(beta.occupations.iter_mut()) {
                if *o < 0.0 {
                    *o = 0.0;
                }
            }
            occupation_notes.push(format!(
                "{} orbitals have negative occupations; read as empty",
                negative.len()
            ));
        }
        if beta.is_empty() && closed_shell_per_spin(&alpha.occupations, &atoms, program.as_deref(), electrons) {
            for o in &mut alpha.occupations {
                *o *= 2.0;
            }
            occupation_notes.push(
                "closed shell written as alpha orbitals with occupations per spin: occupations doubled".to_string(),
            );
        } else if beta.is_empty()
            && let Some(n) = electrons
            && alpha.occupations.iter().all(|&o| o == 0.0 || o == 1.0)
        {
            let sum: f64 = alpha.occupations.iter().sum();
            if sum < n {
                occupation_notes.push(format!(
                    "the file holds the alpha orbitals only ({sum} of the {n} electrons of [Molpro variables] _NELEC); Molpro writes the beta orbitals to a file of their own: open both files, alpha first"
                ));
            }
        }
        let spin = if !beta.is_empty() {
            SpinKind::Unrestricted
        } else if alpha.occupations.contains(&1.0)
            && alpha.occupations.iter().all(|&o| o == 0.0 || o == 1.0 || o == 2.0)
        {
            SpinKind::RestrictedOpen
        } else {
            SpinKind::Restricted
        };
        let mut wf = Wavefunction {
            atoms: qm_atoms,
            basis,
            spin,
            alpha,
            beta: if spin == SpinKind::Unrestricted {
                Some(beta)
            } else {
                None
            },
            program: program.clone(),
            corrections: Vec::new(),
            energy_hartree: None,
            scf_density: None,
        };
        if wf.alpha.is_empty() && wf.beta.as_ref().is_none_or(|b| b.is_empty()) {
            return Err(ReadError::file(path, "no orbitals found in [MO]"));
        }
        let mut w = occupation_notes;
        if !has_pseudo && let Some(note) = valence_only_charges(&mut wf) {
            w.push(note);
        }
        w.extend(check_and_correct(&mut wf, &trial_corrections()));
        w.extend(orbitals_cut_short(&wf));
        Ok((wf, w))
    };

    let base_positions: Vec<[f64; 3]> = atoms.iter().map(|a| a.position_bohr).collect();
    if geometries.len() > 1 && mo_blocks.len() == geometries.len() {
        // Orbitals repeat once per geometry: one wavefunction each.
        for (g, (_, mos)) in geometries.iter().zip(&mo_blocks) {
            let (wf, w) = build(g, mos)?;
            out.wavefunctions.push(wf);
            warnings.extend(w);
        }
    } else {
        for (_, mos) in &mo_blocks {
            let (wf, w) = build(&base_positions, mos)?;
            out.wavefunctions.push(wf);
            warnings.extend(w);
        }
        if geometries.len() > 1 || (geometries.len() == 1 && geometries[0] != base_positions) {
            out.geometries_bohr.extend(geometries);
        }
    }
    for w in warnings {
        if !out.warnings.contains(&w) {
            out.warnings.push(w);
        }
    }
    Ok(())
}

/// A note when every orbital listed is occupied and there are fewer than basis functions: the
/// file was cut short between two orbitals (a job killed while writing it), or written with its
/// occupied orbitals alone; either way the highest listed need not be the HOMO.
fn orbitals_cut_short(wf: &Wavefunction) -> Option<String> {
    let sets: Vec<&crate::model::OrbitalSet> = std::iter::once(&wf.alpha).chain(wf.beta.as_ref()).collect();
    let listed: usize = sets.iter().map(|s| s.len()).sum();
    let n_basis = wf.alpha.n_basis;
    let all_occupied = sets.iter().all(|s| s.occupations.iter().all(|&o| o > 0.0));
    if !all_occupied || sets.iter().all(|s| s.len() >= n_basis) {
        return None;
    }
    let electrons: f64 = sets.iter().flat_map(|s| s.occupations.iter()).sum();
    let nuclear: f64 = wf.atoms.iter().map(|a| a.nuclear_charge).sum();
    Some(format!(
        "the file lists {listed} orbitals for {n_basis} basis functions, every one occupied: it may be \
         cut short (the orbitals hold {electrons} electrons, a charge of {:+}), or written with its \
         occupied orbitals only; the last orbital listed is then not necessarily the HOMO",
        nuclear - electrons
    ))
}

/// True for a closed shell written as alpha orbitals only with occupations per spin (Q-Chem's
/// restricted files): every occupation 0 or 1, and twice their sum is the electron count of the
/// neutral molecule, or the file comes from Q-Chem.
/// `electrons`: the electron count the file states (Molpro's `_NELEC`), which decides alone where
/// given (an open shell's alpha file can hold half the nuclear charge's electrons).
pub(super) fn closed_shell_per_spin(
    occupations: &[f64],
    atoms: &[Atom],
    program: Option<&str>,
    electrons: Option<f64>,
) -> bool {
    if !occupations.iter().all(|&o| o == 0.0 || o == 1.0) {
        return false;
    }
    let sum: f64 = occupations.iter().sum();
    if let Some(n) = electrons {
        return sum > 0.0 && (2.0 * sum - n).abs() < 1e-9;
    }
    let electrons: f64 = atoms.iter().map(|a| a.z).sum();
    sum > 0.0 && ((2.0 * sum - electrons).abs() < 1e-9 || program == Some("Q-Chem"))
}

/// The electron count of Molpro's `[Molpro variables]` section (`_NELEC= 27.0`), when present.
fn molpro_electrons(sections: &[Section]) -> Option<f64> {
    let s = sections.iter().find(|s| s.name == "molpro variables")?;
    s.body.iter().find_map(|l| {
        let (k, v) = l.text.split_once('=')?;
        (k.trim() == "_NELEC")
            .then(|| v.trim().replace(['D', 'd'], "E").parse::<f64>().ok())
            .flatten()
            .filter(|n| n.is_finite() && *n >= 0.0)
    })
}

/// Core electrons that valence-only methods (xtb's GFN methods, semiempirical codes) leave out: the
/// noble-gas core, and the filled d shell from Ga on; `None` past Xe.
fn valence_core(z: f64) -> Option<f64> {
    let core = match z.round() as i64 {
        1..=2 => 0,
        3..=10 => 2,
        11..=18 => 10,
        19..=30 => 18,
        31..=36 => 28,
        37..=48 => 36,
        49..=54 => 46,
        _ => return None,
    };
    Some(f64::from(core))
}

/// A valence-only wavefunction (xtb writes Molden files with the full atomic numbers but orbitals
/// for the valence electrons only): its nuclear charges are taken without the cores, so that the
/// electron count and the electrostatic potential balance. Recognised when the electrons fall short
/// of the atomic numbers by the cores (within a charge of 3) and no occupied orbital lies deeper
/// than -1.5 hartree, where every core orbital from Li on lies. Returns the note to give.
fn valence_only_charges(wf: &mut Wavefunction) -> Option<String> {
    let cores: Vec<f64> = wf
        .atoms
        .iter()
        .map(|a| valence_core(a.nuclear_charge))
        .collect::<Option<_>>()?;
    let core_sum: f64 = cores.iter().sum();
    let z: f64 = wf.atoms.iter().map(|a| a.nuclear_charge).sum();
    let electrons = wf.n_electrons();
    let charge = z - core_sum - electrons;
    if core_sum < 1.0 || charge.abs() > 3.0 + 1e-6 || (charge - charge.round()).abs() > 1e-6 {
        return None;
    }
    let deepest = std::iter::once(&wf.alpha)
        .chain(wf.beta.as_ref())
        .flat_map(|s| s.energies_hartree.iter().zip(&s.occupations))
        .filter(|(_, o)| **o > 0.0)
        .map(|(e, _)| *e)
        .fold(f64::INFINITY, f64::min);
    // Energies of 0 (natural orbitals) tell nothing.
    if !(deepest > -1.5 && deepest < 0.0) {
        return None;
    }
    for (a, c) in wf.atoms.iter_mut().zip(&cores) {
        a.nuclear_charge -= c;
    }
    Some(format!(
        "the orbitals hold {electrons} electrons, none deeper than {deepest:.2} hartree: a valence-only wavefunction (as xtb writes); the nuclear charges are taken without their {core_sum} core electrons (charge {charge:+})"
    ))
}
