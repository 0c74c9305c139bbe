//! RMSD measurements: the root-mean-square deviation of a selection's atoms from a reference frame,
//! listed with the distances and angles, at the current frame and, plotted or exported, over every
//! frame (VMD's RMSD Trajectory Tool, MDAnalysis's `rms.RMSD`). With *superpose* each frame is first
//! moved rigidly onto the reference (least squares over the same atoms, no reflection); without,
//! the frames are compared as they stand. Frames are read as the view shows them (molecules made
//! whole, fitted onto frame 0 when the view fits them).
//!
//! Owns [`RmsdSpec`] (the selection's text, the reference frame and its coordinates, whether to
//! superpose) and [`value`], the value of any measurement at one frame; `app::measure` keeps them
//! in its list and series.

use super::measure::{MeasureKind, Measurement};
use super::state::AppState;
use std::sync::Arc;

/// What an RMSD measurement compares.
#[derive(Clone, Debug, PartialEq)]
pub struct RmsdSpec {
    /// The selection as typed.
    pub selection: String,
    pub reference_frame: usize,
    /// Superpose each frame onto the reference before the deviation is taken.
    pub fit: bool,
    /// The selection's atoms in the reference frame (Å), in the order of the measurement's atoms.
    pub reference: Vec<[f64; 3]>,
}

/// The Measurements panel's form for a new RMSD.
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
/// `rmsd` the RMSD from the reference (`None` where an atom is missing or not finite).
pub fn value(atoms: &[usize], rmsd: Option<&RmsdSpec>, positions_angstrom: &[[f32; 3]]) -> Option<f64> {
    let Some(spec) = rmsd else {
        return super::measure::measure(atoms, positions_angstrom);
    };
    if atoms.len() != spec.reference.len() || atoms.is_empty() {
        return None;
    }
    let mut here = Vec::with_capacity(atoms.len());
    for &i in atoms {
        let q = positions_angstrom.get(i)?;
        if !q.iter().all(|x| x.is_finite()) {
            return None;
        }
        here.push(q.map(f64::from));
    }
    if spec.fit {
        return crate::model::qm_region::superpose(&here, &spec.reference).map(|(_, r)| r);
    }
    let sum: f64 = here
        .iter()
        .zip(&spec.reference)
        .map(|(a, b)| (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f64>())
        .sum();
    Some((sum / atoms.len() as f64).sqrt())
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
        let tools = &mut self.tools.measure;
        tools.next_id += 1;
        let m = Measurement {
            id: tools.next_id,
            atoms,
            rmsd: Some(Arc::new(RmsdSpec {
                selection: selection.to_string(),
                reference_frame,
                fit,
                reference,
            })),
        };
        tools.list.push(m.clone());
        let shown = self
            .measurement_value(&m)
            .map(|v| MeasureKind::Rmsd.format(v))
            .unwrap_or_default();
        self.panels.status = format!("{}: {shown}", self.measurement_label(&m));
    }
}

/// The label of an RMSD measurement: "RMSD of 'backbone' from frame 0, superposed (856 atoms)".
pub fn label(spec: &RmsdSpec) -> String {
    format!(
        "RMSD of '{}' from frame {}{} ({} atoms)",
        spec.selection,
        spec.reference_frame,
        if spec.fit { ", superposed" } else { "" },
        spec.reference.len()
    )
}
