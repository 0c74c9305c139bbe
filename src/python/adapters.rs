//! Systems built from arrays handed over by Python: a wavefunction (shells, orbitals; the PySCF
//! adapter converts to the conventions of `model::basis` before calling) and MD frames with a
//! structure (the MDAnalysis adapter). Every length and index is checked here; a mismatch is an
//! `OrbitfieldError` naming it.

use super::OrbitfieldError;
use super::system::PySystem;
use crate::io::System;
use crate::model::basis::{BasisSet, MAX_L, Shell};
use crate::model::element::{Element, guess_from_name};
use crate::model::name::Name8;
use crate::model::trajectory::{Frame, Trajectory};
use crate::model::wavefunction::{OrbitalSet, QmAtom, SpinKind, Wavefunction};
use crate::model::{Structure, cell::UnitCell};
use pyo3::prelude::*;

fn error(message: String) -> PyErr {
    OrbitfieldError::new_err(message)
}

/// One shell as Python hands it over: (l, pure, atom index, exponents in bohr^-2, coefficients of
/// normalised primitives).
type ShellParts = (u8, bool, usize, Vec<f64>, Vec<f64>);

/// One orbital set: (energies in hartree, occupations, coefficients [n_orbitals][n_basis] flat,
/// in orbitfield's function order and normalisation).
type OrbitalParts = (Vec<f64>, Vec<f64>, Vec<f64>);

fn orbital_set(which: &str, parts: OrbitalParts, n_basis: usize) -> PyResult<OrbitalSet> {
    let (energies, occupations, coefficients) = parts;
    let n = energies.len();
    if occupations.len() != n {
        return Err(error(format!(
            "{which}: {n} orbital energies but {} occupations",
            occupations.len()
        )));
    }
    if coefficients.len() != n * n_basis {
        return Err(error(format!(
            "{which}: {} coefficients for {n} orbitals over {n_basis} basis functions (expected {})",
            coefficients.len(),
            n * n_basis
        )));
    }
    if let Some(bad) = energies
        .iter()
        .chain(&occupations)
        .chain(&coefficients)
        .find(|x| !x.is_finite())
    {
        return Err(error(format!("{which}: a value is not finite ({bad})")));
    }
    Ok(OrbitalSet {
        energies_hartree: energies,
        occupations,
        symmetries: vec![String::new(); n],
        coefficients,
        n_basis,
    })
}

/// A system holding one wavefunction (its atoms as the structure, one frame).
#[pyfunction]
#[pyo3(signature = (numbers, nuclear_charges, positions_bohr, shells, alpha, beta=None, program=None, energy_hartree=None))]
#[allow(clippy::too_many_arguments)]
pub(super) fn wavefunction_system(
    numbers: Vec<u32>,
    nuclear_charges: Vec<f64>,
    positions_bohr: Vec<[f64; 3]>,
    shells: Vec<ShellParts>,
    alpha: OrbitalParts,
    beta: Option<OrbitalParts>,
    program: Option<String>,
    energy_hartree: Option<f64>,
) -> PyResult<PySystem> {
    let n_atoms = numbers.len();
    if nuclear_charges.len() != n_atoms || positions_bohr.len() != n_atoms {
        return Err(error(format!(
            "{n_atoms} atomic numbers, {} nuclear charges and {} positions: one of each per atom",
            nuclear_charges.len(),
            positions_bohr.len()
        )));
    }
    let mut atoms = Vec::with_capacity(n_atoms);
    for (i, ((&z, &charge), &p)) in numbers.iter().zip(&nuclear_charges).zip(&positions_bohr).enumerate() {
        let Some(element) = Element::from_number(z).filter(|_| z > 0) else {
            return Err(error(format!(
                "atom {i}: atomic number {z} is not an element (ghost atoms are not supported)"
            )));
        };
        if !p.iter().all(|x| x.is_finite()) || !charge.is_finite() {
            return Err(error(format!("atom {i}: position or charge is not finite")));
        }
        atoms.push(QmAtom {
            element,
            nuclear_charge: charge,
            position_bohr: p,
        });
    }
    let mut basis = BasisSet::default();
    for (k, (l, pure, atom, exponents, coefficients)) in shells.into_iter().enumerate() {
        if l > MAX_L {
            return Err(error(format!("shell {k}: angular momentum {l} is above {MAX_L}")));
        }
        let Some(center) = positions_bohr.get(atom) else {
            return Err(error(format!(
                "shell {k}: atom {atom} does not exist ({n_atoms} atoms)"
            )));
        };
        if exponents.is_empty() || exponents.len() != coefficients.len() {
            return Err(error(format!(
                "shell {k}: {} exponents and {} coefficients",
                exponents.len(),
                coefficients.len()
            )));
        }
        if exponents.iter().any(|&a| !(a.is_finite() && a > 0.0)) || coefficients.iter().any(|c| !c.is_finite()) {
            return Err(error(format!(
                "shell {k}: exponents must be positive and coefficients finite"
            )));
        }
        basis.shells.push(Shell {
            l,
            pure: pure && l >= 2,
            atom,
            center_bohr: *center,
            exponents,
            coefficients,
        });
    }
    let n_basis = basis.n_functions();
    let alpha = orbital_set("alpha orbitals", alpha, n_basis)?;
    let beta = beta.map(|b| orbital_set("beta orbitals", b, n_basis)).transpose()?;
    let spin = if beta.is_some() {
        SpinKind::Unrestricted
    } else if alpha.occupations.iter().any(|&o| (o - 1.0).abs() < 1e-8) {
        SpinKind::RestrictedOpen
    } else {
        SpinKind::Restricted
    };
    let wf = Wavefunction {
        atoms,
        basis,
        spin,
        alpha,
        beta,
        program,
        corrections: Vec::new(),
        energy_hartree,
        scf_density: None,
    };
    let (structure, frame) = crate::io::load::structure_from_wavefunction(&wf);
    let n = structure.len();
    Ok(PySystem::new(System {
        structure,
        trajectory: Trajectory::from_frames(n, vec![frame], "a wavefunction from Python"),
        wavefunctions: vec![wf],
        grids: Vec::new(),
        warnings: Vec::new(),
        paths: Vec::new(),
        wavefunction_frames: Vec::new(),
        frame_energies_hartree: Vec::new(),
        orbital_levels: None,
    }))
}

/// A system of MD frames: per-atom columns and positions as bytes of f32 [n_frames][n_atoms][3]
/// in Angstrom; cells as (a, b, c, alpha, beta, gamma) per frame (None: no box).
#[pyfunction]
#[pyo3(signature = (elements, names, resnames, resids, segids, charges, masses, positions, cells=None, times_ps=None, origin=None))]
#[allow(clippy::too_many_arguments)]
pub(super) fn md_system(
    elements: Vec<String>,
    names: Vec<String>,
    resnames: Vec<String>,
    resids: Vec<i32>,
    segids: Vec<String>,
    charges: Option<Vec<f64>>,
    masses: Option<Vec<f64>>,
    positions: &[u8],
    cells: Option<Vec<Option<[f64; 6]>>>,
    times_ps: Option<Vec<f64>>,
    origin: Option<String>,
) -> PyResult<PySystem> {
    let n = names.len();
    let columns = [
        ("elements", elements.len()),
        ("resnames", resnames.len()),
        ("resids", resids.len()),
        ("segids", segids.len()),
        ("charges", charges.as_ref().map_or(n, Vec::len)),
        ("masses", masses.as_ref().map_or(n, Vec::len)),
    ];
    if let Some((what, len)) = columns.iter().find(|(_, len)| *len != n) {
        return Err(error(format!("{n} atom names but {len} {what}: one per atom")));
    }
    let mut structure = Structure::default();
    structure.reserve(n);
    for i in 0..n {
        let (name, resname) = (names[i].as_str(), resnames[i].as_str());
        let element = Element::from_symbol(elements[i].trim())
            .unwrap_or_else(|| guess_from_name(name.as_bytes(), resname.as_bytes()));
        structure.push_atom(
            element,
            Name8::from(name),
            Name8::from(resname),
            resids[i],
            Name8::EMPTY,
            Name8::from(segids[i].as_str()),
        );
    }
    structure.charges_e = charges.map(|q| q.iter().map(|&x| x as f32).collect());
    structure.masses_dalton = masses.map(|m| m.iter().map(|&x| x as f32).collect());
    let per_frame = n * 12;
    if per_frame == 0 || !positions.len().is_multiple_of(per_frame) {
        return Err(error(format!(
            "positions: {} bytes is not a whole number of frames of {n} atoms (float32 x, y, z)",
            positions.len()
        )));
    }
    let n_frames = positions.len() / per_frame;
    if let Some(c) = &cells
        && c.len() != n_frames
    {
        return Err(error(format!("{n_frames} frames but {} cells", c.len())));
    }
    if let Some(t) = &times_ps
        && t.len() != n_frames
    {
        return Err(error(format!("{n_frames} frames but {} times", t.len())));
    }
    let mut frames = Vec::with_capacity(n_frames);
    for (f, chunk) in positions.chunks_exact(per_frame).enumerate() {
        let positions_angstrom: Vec<[f32; 3]> = chunk
            .chunks_exact(12)
            .map(|p| {
                let v = |k: usize| {
                    let mut b = [0u8; 4];
                    b.copy_from_slice(&p[4 * k..4 * k + 4]);
                    f32::from_ne_bytes(b)
                };
                [v(0), v(1), v(2)]
            })
            .collect();
        if positions_angstrom.iter().flatten().any(|x| !x.is_finite()) {
            return Err(error(format!("frame {f}: a coordinate is not finite")));
        }
        let cell = cells
            .as_ref()
            .and_then(|c| c.get(f).copied().flatten())
            .map(|c| UnitCell::new([c[0], c[1], c[2]], [c[3], c[4], c[5]]))
            .filter(UnitCell::is_valid);
        frames.push(Frame {
            positions_angstrom,
            cell,
            time_ps: times_ps.as_ref().and_then(|t| t.get(f).copied()),
            ..Frame::default()
        });
    }
    structure.check_consistent().map_err(error)?;
    Ok(PySystem::new(System {
        structure,
        trajectory: Trajectory::from_frames(n, frames, origin.unwrap_or_else(|| "frames from Python".into())),
        wavefunctions: Vec::new(),
        grids: Vec::new(),
        warnings: Vec::new(),
        paths: Vec::new(),
        wavefunction_frames: Vec::new(),
        frame_energies_hartree: Vec::new(),
        orbital_levels: None,
    }))
}
