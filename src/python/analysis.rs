//! The trajectory analyses of the Python `System` that need no field engine: a selection's atoms,
//! hydrogen bonds at a frame (`analysis::hbonds`), the RMSD of a selection over the frames
//! (superposed as `model::qm_region::superpose` does, or as the frames stand), its radius of
//! gyration and its solvent-accessible surface area (`analysis::sasa`).

use super::fields::read_frame;
use crate::analysis::hbonds::{HBondCriteria, find};
use crate::io::System;
use crate::model::select::Selection;
use anyhow::{Result, anyhow, bail};

/// The hydrogen bonds among `sel` at `frame`: (donor, hydrogen or -1, acceptor), 0-based.
pub(crate) fn hbonds(system: &mut System, sel: &str, frame: usize, criteria: HBondCriteria) -> Result<Vec<[i64; 3]>> {
    criteria.check().map_err(|e| anyhow!(e))?;
    let parsed = Selection::parse(sel).map_err(|e| anyhow!("sel: {e}"))?;
    let coords = read_frame(system, frame)?;
    let s = &system.structure;
    let picked = parsed.evaluate(s, Some(&coords));
    if !picked.iter().any(|&p| p) {
        bail!("sel: '{sel}' picks no atoms");
    }
    let set = find(
        s,
        &coords.positions_angstrom,
        &picked,
        &s.bonds,
        coords.cell.as_ref(),
        &criteria,
    );
    Ok(set
        .bonds
        .iter()
        .map(|b| {
            [
                i64::from(b.donor),
                b.hydrogen.map_or(-1, i64::from),
                i64::from(b.acceptor),
            ]
        })
        .collect())
}

/// The RMSD (Angstrom) of `sel`'s atoms (picked at the reference frame) from frame `reference`, at
/// each of `frames` (all without): after superposing each frame onto the reference when `fit`.
pub(crate) fn rmsd(
    system: &mut System,
    sel: &str,
    reference: usize,
    fit: bool,
    frames: Option<Vec<usize>>,
) -> Result<Vec<f64>> {
    let parsed = Selection::parse(sel).map_err(|e| anyhow!("sel: {e}"))?;
    let first = read_frame(system, reference)?;
    let atoms = parsed.indices(&system.structure, Some(&first));
    let needed = if fit { 3 } else { 1 };
    if atoms.len() < needed {
        bail!(
            "sel: '{sel}' picks {} atoms; {}",
            atoms.len(),
            if fit {
                "superposing needs at least three"
            } else {
                "give a selection that picks atoms"
            }
        );
    }
    let pick = |p: &[[f32; 3]]| -> Vec<[f64; 3]> {
        atoms
            .iter()
            .filter_map(|&i| p.get(i as usize))
            .map(|q| q.map(f64::from))
            .collect()
    };
    let there = pick(&first.positions_angstrom);
    let frames = frames.unwrap_or_else(|| (0..system.trajectory.n_frames()).collect());
    let mut out = Vec::with_capacity(frames.len());
    for f in frames {
        let here = pick(&read_frame(system, f)?.positions_angstrom);
        if here.len() != there.len() || here.iter().flatten().any(|x| !x.is_finite()) {
            bail!("frame {f}: '{sel}' has atoms without finite positions");
        }
        let value = if fit {
            crate::model::qm_region::superpose(&here, &there)
                .map(|(_, r)| r)
                .ok_or_else(|| anyhow!("frame {f}: '{sel}' cannot be superposed"))?
        } else {
            let sum: f64 = here
                .iter()
                .zip(&there)
                .map(|(a, b)| (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>())
                .sum();
            (sum / here.len() as f64).sqrt()
        };
        out.push(value);
    }
    Ok(out)
}

/// The 0-based indices of the atoms `sel` picks at `frame` (the frame matters to `within` and to
/// coordinate comparisons).
pub(crate) fn select(system: &mut System, sel: &str, frame: usize) -> Result<Vec<u32>> {
    let parsed = Selection::parse(sel).map_err(|e| anyhow!("sel: {e}"))?;
    let coords = if system.trajectory.n_frames() > 0 {
        Some(read_frame(system, frame)?)
    } else {
        None
    };
    Ok(parsed.indices(&system.structure, coords.as_ref()))
}

/// The frames asked for (all without) and the atoms `sel` picks at the first of them (an error
/// when it picks none); no frames, no atoms.
fn frames_and_atoms(system: &mut System, sel: &str, frames: Option<Vec<usize>>) -> Result<(Vec<usize>, Vec<u32>)> {
    let parsed = Selection::parse(sel).map_err(|e| anyhow!("sel: {e}"))?;
    let frames = frames.unwrap_or_else(|| (0..system.trajectory.n_frames()).collect());
    let Some(&first) = frames.first() else {
        return Ok((frames, Vec::new()));
    };
    let first = read_frame(system, first)?;
    let atoms = parsed.indices(&system.structure, Some(&first));
    if atoms.is_empty() {
        bail!("sel: '{sel}' picks no atoms");
    }
    Ok((frames, atoms))
}

/// The positions of `atoms` at `frame` in Angstrom (NaN where an atom has none).
fn positions_of(system: &mut System, atoms: &[u32], frame: usize) -> Result<Vec<[f64; 3]>> {
    let coords = read_frame(system, frame)?;
    Ok(atoms
        .iter()
        .map(|&i| {
            coords
                .positions_angstrom
                .get(i as usize)
                .map_or([f64::NAN; 3], |q| q.map(f64::from))
        })
        .collect())
}

/// The mass-weighted radius of gyration (Angstrom) of `sel`'s atoms (picked at the first of
/// `frames`) at each of `frames` (all without), as the frames stand.
pub(crate) fn rgyr(system: &mut System, sel: &str, frames: Option<Vec<usize>>) -> Result<Vec<f64>> {
    let (frames, atoms) = frames_and_atoms(system, sel, frames)?;
    let masses: Vec<f64> = atoms
        .iter()
        .map(|&i| f64::from(system.structure.mass_dalton(i as usize)))
        .collect();
    let total: f64 = masses.iter().sum();
    if !atoms.is_empty() && (total <= 0.0 || !total.is_finite()) {
        bail!("sel: the atoms '{sel}' picks have no mass (unknown elements and no masses in the files)");
    }
    let mut out = Vec::with_capacity(frames.len());
    for f in frames {
        let here = positions_of(system, &atoms, f)?;
        if let Some(k) = here.iter().position(|q| q.iter().any(|x| !x.is_finite())) {
            bail!("frame {f}: atom {} of '{sel}' has no finite position", atoms[k] + 1);
        }
        out.push(
            crate::analysis::fit::radius_of_gyration(&here, &masses).ok_or_else(|| anyhow!("frame {f}: no mass"))?,
        );
    }
    Ok(out)
}

/// The solvent-accessible surface area (Å²) of each of `sel`'s atoms (picked at the first of
/// `frames`; the selection its own environment) at each of `frames` (all without): one row per
/// frame.
pub(crate) fn sasa(
    system: &mut System,
    sel: &str,
    frames: Option<Vec<usize>>,
    probe_angstrom: f64,
    n_points: usize,
) -> Result<Vec<Vec<f64>>> {
    use crate::analysis::sasa;
    if !(0.0..=10.0).contains(&probe_angstrom) {
        bail!("probe: {probe_angstrom} Å is not a probe radius (0 to 10 Å; water is 1.4)");
    }
    if !(1..=100_000).contains(&n_points) {
        bail!("n_points: {n_points} is not a number of points per atom (1 to 100000; 960 by default)");
    }
    let (frames, atoms) = frames_and_atoms(system, sel, frames)?;
    let radii: Vec<f64> = atoms
        .iter()
        .map(|&i| sasa::radius_angstrom(system.structure.elements[i as usize]))
        .collect();
    let mut out = Vec::with_capacity(frames.len());
    for f in frames {
        let here = positions_of(system, &atoms, f)?;
        out.push(sasa::atom_areas(&here, &radii, probe_angstrom, n_points));
    }
    Ok(out)
}
