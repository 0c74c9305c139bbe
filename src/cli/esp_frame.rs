//! One frame's charges for a potential ([`esp_frame`]): a structure's partial charges at the
//! frame's coordinates, or a wavefunction's nuclear or Mulliken charges; and, under a screened
//! model, the solute's alone ([`screened_solute`]). Shared by `grid`, `points`, `ions` and the
//! frame series of `grid esp`.

use super::grid::{ChargeModel, EspArgs};
use super::grid_source::*;
use anyhow::{Result, bail};
use orbitfield::analysis::charges::{mulliken_charges_e, nuclear_charges_e, point_charges};
use orbitfield::analysis::esp_series::{frame_boundary, frame_charges, require_charges};
use orbitfield::compute::PointCharges;
use orbitfield::compute::esp::Boundary;
use orbitfield::compute::esp::screening::Dielectric;
use orbitfield::io::System;
use orbitfield::io::cube::CubeAtom;
use orbitfield::model::units::angstrom_from_bohr3;

/// One frame's potential input: charges, boundary and the atoms for file headers.
pub struct EspFrame {
    pub charges: PointCharges,
    pub boundary: Boundary,
    pub atoms: Vec<CubeAtom>,
    /// Where the charges come from, for headers ("partial charges", "Mulliken charges").
    pub model: &'static str,
}

impl EspFrame {
    /// Atom positions in Angstrom.
    pub fn positions_angstrom(&self) -> Vec<[f64; 3]> {
        self.charges
            .positions_bohr
            .iter()
            .map(|&p| angstrom_from_bohr3(p))
            .collect()
    }
}

/// The charges of `system` at `frame` for a potential, by `esp`'s charge model: a structure's
/// partial charges with the frame's coordinates (and cell, with --pbc), or a wavefunction's nuclear
/// or Mulliken charges at its nuclei.
pub fn esp_frame(system: &mut System, esp: &EspArgs, frame: usize) -> Result<EspFrame> {
    if !system.wavefunctions.is_empty() {
        let wf = frame_wavefunction(system, frame)?;
        if esp.pbc {
            bail!("--pbc needs a periodic box; a wavefunction is an isolated molecule");
        }
        let (charges, model) = match esp.charges.unwrap_or(ChargeModel::Nuclear) {
            ChargeModel::Nuclear => (nuclear_charges_e(wf), "nuclear charges"),
            ChargeModel::Mulliken => (mulliken_charges_e(wf)?, "Mulliken charges"),
            ChargeModel::File => bail!(
                "--charges file needs a structure with partial charges; for a wavefunction use --charges nuclear or mulliken"
            ),
        };
        let atoms = wf
            .atoms
            .iter()
            .zip(&charges)
            .map(|(a, &q)| CubeAtom {
                atomic_number: u32::from(a.element.number()),
                charge_e: q,
                position_bohr: a.position_bohr,
            })
            .collect();
        return Ok(EspFrame {
            charges: point_charges(wf, charges),
            boundary: Boundary::Open,
            atoms,
            model,
        });
    }
    if let Some(model @ (ChargeModel::Nuclear | ChargeModel::Mulliken)) = esp.charges {
        let name = if model == ChargeModel::Nuclear {
            "nuclear"
        } else {
            "mulliken"
        };
        bail!("--charges {name} needs a wavefunction (molden, fchk, wfn or wfx file)");
    }
    let charges = require_charges(system)?;
    let coords = read_frame(system, frame)?;
    let s = &system.structure;
    let name = |i: usize| -> String {
        format!(
            "{} {}{}",
            s.names.get(i).map(|n| n.as_str()).unwrap_or("?"),
            s.resnames.get(i).map(|n| n.as_str()).unwrap_or("?"),
            s.resids.get(i).copied().unwrap_or(0)
        )
    };
    let point = frame_charges(frame, &coords, &charges, Some(&name as &dyn Fn(usize) -> String))?;
    let boundary = frame_boundary(frame, &coords, esp.pbc, &system.trajectory.origin)?;
    let atoms = orbitfield::analysis::esp_series::cube_atoms(&s.elements, &point);
    Ok(EspFrame {
        charges: point,
        boundary,
        atoms,
        model: "partial charges",
    })
}

/// `--sel`: only the charges of the atoms `sel` picks at `frame` make the potential, whatever the
/// model (it replaces the screened models' default of leaving the solvent out). Said once.
pub fn selected_charges(system: &mut System, esp: &mut EspFrame, sel: &str, frame: usize) -> Result<()> {
    let coords = read_frame(system, frame)?;
    let (keep, _) = orbitfield::compute::pb::setup::solute(&system.structure, Some(&coords), Some(sel))
        .map_err(|e| anyhow::anyhow!("--sel: {e}"))?;
    let n = esp.charges.charges_e.len();
    if keep.len() != n {
        bail!("--sel: the selection has {} atoms, the charges {n}", keep.len());
    }
    let kept = keep.iter().filter(|&&k| k).count();
    esp.charges = orbitfield::compute::esp::screening::kept_charges(&esp.charges, &keep);
    SELECTION_NOTE.call_once(|| {
        eprintln!(
            "note: the potential of the charges of '{sel}': {kept} of {n} atoms ({} left out)",
            n - kept
        )
    });
    Ok(())
}

static SELECTION_NOTE: std::sync::Once = std::sync::Once::new();

/// Said once per run, not per frame.
static SOLVENT_NOTE: std::sync::Once = std::sync::Once::new();

/// Under a screened model (`dielectric` not vacuum) a structure's explicit water and electrolyte
/// ions are left out of `esp`'s charges: the medium stands for them (said once per run).
pub fn screened_solute(system: &System, esp: &mut EspFrame, dielectric: Dielectric) {
    if dielectric.is_vacuum() || !system.wavefunctions.is_empty() {
        return;
    }
    if let Some((q, note)) = orbitfield::compute::esp::screening::solute_charges(&system.structure, &esp.charges) {
        esp.charges = q;
        SOLVENT_NOTE.call_once(|| eprintln!("note: {note}"));
    }
}
