//! Measurements of a selection: the RMSD of its atoms from a reference frame (VMD's RMSD
//! Trajectory Tool, MDAnalysis's `rms.RMSD`), its mass-weighted radius of gyration (VMD's
//! `measure rgyr`, MDAnalysis's `radius_of_gyration()`) and its solvent-accessible surface area
//! (VMD's `measure sasa`, `analysis::sasa`), listed with the distances and angles, at
//! the current frame and, plotted or exported, over every frame. With *superpose* each frame is
//! first moved rigidly onto the reference (least squares over the same atoms, no reflection);
//! without, the frames are compared as they stand. Frames are read as the view shows them
//! (molecules made whole, fitted onto frame 0 when the view fits them).
//!
//! Owns [`SelectionSpec`] (the selection's text and what is measured of it, with the reference
//! coordinates or the masses it needs) and [`value`], the value of any measurement at one frame;
//! `app::measure` keeps them in its list and series.

use super::measure::{MeasureKind, Measurement};
use super::state::AppState;
use std::sync::Arc;

/// What is measured of a selection's atoms.
#[derive(Clone, Debug, PartialEq)]
pub enum Quantity {
    /// The RMSD from a reference frame, superposed first when `fit`.
    Rmsd {
        reference_frame: usize,
        fit: bool,
        /// The atoms in the reference frame (Å), in the order of the measurement's atoms.
        reference: Vec<[f64; 3]>,
    },
    /// The radius of gyration, each atom weighted by its mass (dalton, in the measurement's order).
    Rgyr { masses_dalton: Vec<f64> },
    /// The solvent-accessible surface area (Å²) of the atoms with these radii (Å, in the
    /// measurement's order), the selection its own environment, a water probe.
    Sasa { radii_angstrom: Vec<f64> },
}

/// A measurement of a selection: the selection as typed and what is measured of it.
#[derive(Clone, Debug, PartialEq)]
pub struct SelectionSpec {
    pub selection: String,
    pub quantity: Quantity,
}

impl SelectionSpec {
    /// The radius of gyration (`kind` Rgyr: the atoms' masses) or the SASA (`kind` Sasa: their
    /// radii) of `atoms` of `structure`; `None` for another kind, or a radius of gyration of atoms
    /// without mass.
    pub fn of_atoms(
        kind: MeasureKind,
        selection: &str,
        structure: &crate::model::Structure,
        atoms: &[usize],
    ) -> Option<SelectionSpec> {
        let quantity = match kind {
            MeasureKind::Rgyr => {
                let masses_dalton: Vec<f64> = atoms.iter().map(|&i| f64::from(structure.mass_dalton(i))).collect();
                (masses_dalton.iter().sum::<f64>() > 0.0).then_some(Quantity::Rgyr { masses_dalton })?
            }
            MeasureKind::Sasa => Quantity::Sasa {
                radii_angstrom: atoms
                    .iter()
                    .map(|&i| {
                        structure
                            .elements
                            .get(i)
                            .map_or(0.0, |&e| crate::analysis::sasa::radius_angstrom(e))
                    })
                    .collect(),
            },
            _ => return None,
        };
        Some(SelectionSpec {
            selection: selection.to_string(),
            quantity,
        })
    }

    pub fn kind(&self) -> MeasureKind {
        match self.quantity {
            Quantity::Rmsd { .. } => MeasureKind::Rmsd,
            Quantity::Rgyr { .. } => MeasureKind::Rgyr,
            Quantity::Sasa { .. } => MeasureKind::Sasa,
        }
    }
}

/// The Measurements panel's form for a new RMSD or radius of gyration.
#[derive(Clone, Debug)]
pub struct RmsdForm {
    /// The selection typed (empty: not yet chosen for the document; the panel offers `backbone`
    /// for a protein, else the heavy atoms).
    pub selection: String,
    pub reference_frame: usize,
    pub fit: bool,
}

impl Default for RmsdForm {
    fn default() -> Self {
        RmsdForm {
            selection: String::new(),
            reference_frame: 0,
            fit: true,
        }
    }
}

/// The value of a measurement of `atoms` in `positions`: its distance, angle or dihedral, or with
/// `spec` the selection's RMSD or radius of gyration (`None` where an atom is missing or not
/// finite).
pub fn value(atoms: &[usize], spec: Option<&SelectionSpec>, positions_angstrom: &[[f32; 3]]) -> Option<f64> {
    let Some(spec) = spec else {
        return super::measure::measure(atoms, positions_angstrom);
    };
    let mut here = Vec::with_capacity(atoms.len());
    for &i in atoms {
        let q = positions_angstrom.get(i)?;
        if !q.iter().all(|x| x.is_finite()) {
            return None;
        }
        here.push(q.map(f64::from));
    }
    match &spec.quantity {
        Quantity::Rmsd { fit, reference, .. } => {
            if atoms.len() != reference.len() || atoms.is_empty() {
                return None;
            }
            if *fit {
                return crate::model::qm_region::superpose(&here, reference).map(|(_, r)| r);
            }
            let sum: f64 = here
                .iter()
                .zip(reference)
                .map(|(a, b)| (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>())
                .sum();
            Some((sum / atoms.len() as f64).sqrt())
        }
        Quantity::Rgyr { masses_dalton } => crate::analysis::fit::radius_of_gyration(&here, masses_dalton),
        Quantity::Sasa { radii_angstrom } => {
            use crate::analysis::sasa;
            let areas = sasa::atom_areas(
                &here,
                radii_angstrom,
                sasa::WATER_PROBE_ANGSTROM,
                sasa::DEFAULT_SPHERE_POINTS,
            );
            Some(areas.iter().sum())
        }
    }
}

impl AppState {
    /// Adds the RMSD of `selection`'s atoms (picked at the current frame) from frame
    /// `reference_frame`, superposed first when `fit`.
    pub(crate) fn add_rmsd_measurement(&mut self, selection: &str, reference_frame: usize, fit: bool) {
        let parsed = match crate::model::select::Selection::parse(selection) {
            Ok(p) => p,
            Err(e) => return self.error(format!("RMSD: bad selection '{selection}': {e}")),
        };
        let Some(doc) = self.doc.document.as_mut() else {
            return self.error("RMSD: open a trajectory first".into());
        };
        if reference_frame >= doc.n_frames.max(1) {
            let last = doc.n_frames.saturating_sub(1);
            return self.error(format!(
                "RMSD: reference frame {reference_frame}: the document has frames 0 to {last}"
            ));
        }
        let atoms: Vec<usize> = parsed
            .indices(&doc.structure, Some(&doc.frame))
            .into_iter()
            .map(|i| i as usize)
            .collect();
        let needed = if fit { 3 } else { 1 };
        if atoms.len() < needed {
            return self.error(format!(
                "RMSD: '{selection}' picks {} atoms; {}",
                atoms.len(),
                if fit {
                    "superposing needs at least three"
                } else {
                    "give a selection that picks atoms"
                }
            ));
        }
        let mut frame = crate::model::Frame::default();
        if let Err(e) = doc.read_frame(reference_frame, &mut frame) {
            return self.error(format!("RMSD: reading reference frame {reference_frame}: {e}"));
        }
        let mut reference = Vec::with_capacity(atoms.len());
        for &i in &atoms {
            match frame
                .positions_angstrom
                .get(i)
                .filter(|q| q.iter().all(|x| x.is_finite()))
            {
                Some(q) => reference.push(q.map(f64::from)),
                None => {
                    return self.error(format!(
                        "RMSD: atom {} has no finite position in frame {reference_frame}",
                        i + 1
                    ));
                }
            }
        }
        self.push_selection_measurement(
            atoms,
            SelectionSpec {
                selection: selection.to_string(),
                quantity: Quantity::Rmsd {
                    reference_frame,
                    fit,
                    reference,
                },
            },
        );
    }

    /// Adds a selection's mass-weighted radius of gyration (`kind` Rgyr) or its solvent-accessible
    /// surface area (`kind` Sasa, the selection its own environment as in VMD's `measure sasa`), its
    /// atoms picked at the current frame.
    pub(crate) fn add_selection_measurement(&mut self, kind: MeasureKind, selection: &str) {
        let what = match kind {
            MeasureKind::Sasa => "SASA",
            _ => "radius of gyration",
        };
        let Some(atoms) = self.atoms_to_measure(what, selection) else {
            return;
        };
        let spec = self
            .document()
            .and_then(|d| SelectionSpec::of_atoms(kind, selection, &d.structure, &atoms));
        match spec {
            Some(spec) => self.push_selection_measurement(atoms, spec),
            None => self.error(format!(
                "{what}: the atoms '{selection}' picks have no mass (unknown elements and no masses in the files)"
            )),
        }
    }

    /// The atoms `selection` picks at the current frame; `None` (said to the user, `what` naming
    /// the measurement) for a bad selection, no document or no atoms.
    fn atoms_to_measure(&mut self, what: &str, selection: &str) -> Option<Vec<usize>> {
        let parsed = match crate::model::select::Selection::parse(selection) {
            Ok(p) => p,
            Err(e) => {
                self.error(format!("{what}: bad selection '{selection}': {e}"));
                return None;
            }
        };
        let Some(doc) = self.document() else {
            self.error(format!("{what}: open a structure first"));
            return None;
        };
        let atoms: Vec<usize> = parsed
            .indices(&doc.structure, Some(&doc.frame))
            .into_iter()
            .map(|i| i as usize)
            .collect();
        if atoms.is_empty() {
            self.error(format!("{what}: '{selection}' picks no atoms"));
            return None;
        }
        Some(atoms)
    }

    fn push_selection_measurement(&mut self, atoms: Vec<usize>, spec: SelectionSpec) {
        let kind = spec.kind();
        let tools = &mut self.tools.measure;
        tools.next_id += 1;
        let m = Measurement {
            id: tools.next_id,
            atoms,
            spec: Some(Arc::new(spec)),
        };
        tools.list.push(m.clone());
        let shown = self.measurement_value(&m).map(|v| kind.format(v)).unwrap_or_default();
        self.panels.status = format!("{}{}: {shown}", self.measurement_label(&m), self.at_frame_text());
    }
}

/// The label of a selection's measurement: "RMSD of 'backbone' from frame 0, superposed (856
/// atoms)", "radius of gyration of 'protein' (3341 atoms)".
pub fn label(spec: &SelectionSpec) -> String {
    match &spec.quantity {
        Quantity::Rmsd {
            reference_frame,
            fit,
            reference,
        } => format!(
            "RMSD of '{}' from frame {reference_frame}{} ({} atoms)",
            spec.selection,
            if *fit { ", superposed" } else { "" },
            reference.len()
        ),
        Quantity::Rgyr { masses_dalton } => format!(
            "radius of gyration of '{}' ({} atoms)",
            spec.selection,
            masses_dalton.len()
        ),
        Quantity::Sasa { radii_angstrom } => format!(
            "SASA of '{}' ({} atoms, probe {} Å)",
            spec.selection,
            radii_angstrom.len(),
            crate::analysis::sasa::WATER_PROBE_ANGSTROM
        ),
    }
}
