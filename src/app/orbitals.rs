//! The orbitals of the open document as the orbital list shows them (energies, occupations,
//! HOMO/LUMO labels by [`Wavefunction::homo`](crate::model::Wavefunction::homo)), fields in words,
//! and following one orbital through a wavefunction series by overlap (`analysis::tracking`, run
//! as a background task).
//!
//! Called by the panels (rows, labels), by `app::apply` (selection, following) and by the
//! representation list (labels).

use super::fields::FieldChoice;
use super::state::{AppState, Follow};
use crate::model::units::EV_PER_HARTREE;
use crate::model::{Spin, SpinKind, Wavefunction};
use std::sync::Arc;

/// One row of the orbital list.
#[derive(Clone, Debug, PartialEq)]
pub struct OrbitalRow {
    pub index: usize,
    pub energy_hartree: f64,
    pub occupation: f64,
    pub symmetry: String,
    /// "HOMO", "LUMO", "HOMO-1", "LUMO+2", or empty.
    pub label: String,
    /// At or below the HOMO ([`Wavefunction::homo`]).
    pub occupied: bool,
}

/// "HOMO-2" .. "LUMO+3" for orbital `i` when `homo` is the HOMO's index, else empty.
pub fn frontier_label(i: usize, homo: Option<usize>) -> String {
    let Some(h) = homo else {
        return String::new();
    };
    let d = i as i64 - h as i64;
    match d {
        0 => "HOMO".into(),
        1 => "LUMO".into(),
        -3..=-1 => format!("HOMO{d}"),
        2..=4 => format!("LUMO+{}", d - 1),
        _ => String::new(),
    }
}

/// The orbital list's `n` rows from a channel's energies, occupations and symmetries, labelled
/// from its HOMO: a wavefunction's orbitals and a log's orbital energies alike.
fn rows(
    n: usize,
    energies_hartree: &[f64],
    occupations: &[f64],
    symmetries: &[String],
    homo: Option<usize>,
) -> Vec<OrbitalRow> {
    (0..n)
        .map(|i| OrbitalRow {
            index: i,
            energy_hartree: energies_hartree.get(i).copied().unwrap_or(f64::NAN),
            occupation: occupations.get(i).copied().unwrap_or(0.0),
            symmetry: symmetries.get(i).cloned().unwrap_or_default(),
            label: frontier_label(i, homo),
            occupied: homo.is_some_and(|h| i <= h),
        })
        .collect()
}

impl AppState {
    /// Rows of the orbital list for a spin channel.
    pub fn orbital_rows(&self, spin: Spin) -> Vec<OrbitalRow> {
        let Some(wf) = self.document().and_then(|d| d.wavefunction()) else {
            return self.level_rows(spin);
        };
        let Some(set) = wf.orbitals(spin) else {
            return Vec::new();
        };
        rows(
            set.len(),
            &set.energies_hartree,
            &set.occupations,
            &set.symmetries,
            wf.homo(spin),
        )
    }

    /// Rows of a log's orbital energies printed without orbitals that can be drawn
    /// (`Document::orbital_levels`); empty without them.
    fn level_rows(&self, spin: Spin) -> Vec<OrbitalRow> {
        let Some(levels) = self.orbital_levels() else {
            return Vec::new();
        };
        let set = levels.levels(spin);
        rows(
            set.energies_hartree.len(),
            &set.energies_hartree,
            &set.occupations,
            &set.symmetries,
            levels.homo(spin),
        )
    }

    /// The orbital energies of a document whose log printed no orbitals that can be drawn: the
    /// orbital list shows them, and nothing can be drawn from them.
    pub fn orbital_levels(&self) -> Option<&crate::model::OrbitalLevels> {
        let doc = self.document()?;
        doc.wavefunction()
            .is_none()
            .then_some(doc.orbital_levels.as_ref())
            .flatten()
    }

    /// Index of the highest occupied orbital of a spin channel ([`Wavefunction::homo`]).
    pub fn homo_index(&self, spin: Spin) -> Option<usize> {
        match self.document()?.wavefunction() {
            Some(wf) => wf.homo(spin),
            None => self.orbital_levels()?.homo(spin),
        }
    }

    /// True when the wavefunction (or the orbital energies listed) has separate beta orbitals.
    pub fn is_unrestricted(&self) -> bool {
        self.document()
            .and_then(|d| d.wavefunction())
            .is_some_and(|w| w.spin == SpinKind::Unrestricted)
            || self.orbital_levels().is_some_and(|l| l.beta.is_some())
    }

    /// Formats an energy in the chosen unit.
    pub fn format_energy(&self, hartree: f64) -> String {
        if self.settings.energies_in_ev {
            format!("{:.3} eV", hartree * EV_PER_HARTREE)
        } else {
            format!("{hartree:.5} Eh")
        }
    }

    /// What `field` is, in words, for the open document ("HOMO (orbital 5)"; "HOMO (orbital 5,
    /// Alpha)" for an open shell).
    pub fn describe_field(&self, field: FieldChoice) -> String {
        match field {
            FieldChoice::Orbital { spin, index } => {
                let label = self
                    .orbital_rows(spin)
                    .get(index)
                    .map(|r| r.label.clone())
                    .unwrap_or_default();
                // A closed shell's orbitals have no spin to name.
                let open_shell = self
                    .document()
                    .and_then(|d| d.wavefunction())
                    .is_some_and(|w| w.beta.is_some());
                // A log that printed orbitals at some frames only: this frame has none to show.
                if label.is_empty()
                    && self.document().is_some_and(|d| d.wavefunction().is_none())
                    && let Some(frames) = self.document().and_then(|d| d.frames_with_orbitals_text())
                {
                    return format!("orbital {} (orbitals at {frames} only)", index + 1);
                }
                match (label.is_empty(), open_shell) {
                    (true, true) => format!("orbital {} ({spin:?})", index + 1),
                    (true, false) => format!("orbital {}", index + 1),
                    (false, true) => format!("{label} (orbital {}, {spin:?})", index + 1),
                    (false, false) => format!("{label} (orbital {})", index + 1),
                }
            }
            FieldChoice::Density => "electron density".into(),
            FieldChoice::SpinDensity => "spin density".into(),
            // The map's own title where it has one ("volume 1: Data from APBS 3.4.1"), shortened.
            FieldChoice::Volume(i) => match self
                .document()
                .and_then(|d| d.grids.get(i))
                .map(|g| crate::app::values::volume_title(&g.description))
                .filter(|t| !t.is_empty())
            {
                Some(t) if t.chars().count() > 40 => {
                    format!("volume {}: {}…", i + 1, t.chars().take(39).collect::<String>())
                }
                Some(t) => format!("volume {}: {t}", i + 1),
                None => format!("volume {}", i + 1),
            },
            FieldChoice::Potential => "potential (charges)".into(),
            FieldChoice::PotentialMean { frames } => format!("potential (charges), mean of {frames} frames"),
            FieldChoice::WavefunctionPotential => "potential (wavefunction)".into(),
            // The legends give the model's parameters in place of the parenthesis.
            FieldChoice::PotentialPb { .. } => "potential (Poisson-Boltzmann)".into(),
            FieldChoice::MolSurf { selection } => {
                let what = match self.document().map(|d| d.surface_model(selection)) {
                    Some(crate::compute::molsurf::SurfaceModel::Excluded { probe_radius_angstrom }) => {
                        format!("solvent-excluded surface (probe {probe_radius_angstrom} Å")
                    }
                    _ => "molecular surface (".to_string(),
                };
                match self
                    .document()
                    .and_then(|d| d.surface_selections.get(usize::from(selection)))
                {
                    Some(sel) if what.ends_with('(') => format!("{what}{sel})"),
                    Some(sel) => format!("{what}, {sel})"),
                    None if what.ends_with('(') => "molecular surface".into(),
                    None => format!("{what})"),
                }
            }
            FieldChoice::Ils(i) => match self.document().and_then(|d| d.ils_maps.get(usize::from(i))) {
                Some(m) => m.title(),
                None => "ligand free energy (ILS)".into(),
            },
        }
    }

    /// Starts following the selected orbital from the current frame (a background task).
    pub(crate) fn start_follow(&mut self) {
        let Some(doc) = self.document() else {
            return;
        };
        let (Some(index), n) = (self.doc.orbital, doc.wavefunctions.len()) else {
            self.error("select an orbital to follow".into());
            return;
        };
        if n < 2 || n != doc.n_frames {
            self.error("following an orbital needs one wavefunction per frame".into());
            return;
        }
        let anchor = doc.frame_index.min(n - 1);
        let spin = self.doc.spin;
        let document = doc.id;
        let wfs = doc.wavefunctions.clone();
        let task = crate::jobs::task::Task::spawn("follow", move || {
            use crate::analysis::tracking::track;
            let forward = track(wfs.get(anchor..).unwrap_or(&[]), spin, index).map_err(|e| e.to_string())?;
            let back: Vec<Arc<Wavefunction>> = wfs.iter().take(anchor + 1).rev().cloned().collect();
            let backward = track(&back, spin, index).map_err(|e| e.to_string())?;
            // Frames 0..anchor from the backward pass (reversed), anchor.. from the forward one.
            let mut steps: Vec<_> = backward.into_iter().skip(1).rev().collect();
            steps.extend(forward);
            Ok(steps)
        });
        match task {
            Ok(task) => {
                let rep = self.orbital_rep_id();
                self.doc.follow = Some(Follow {
                    document,
                    rep,
                    spin,
                    anchor_frame: anchor,
                    anchor_index: index,
                    steps: None,
                    task: Some(task),
                });
                self.panels.status = "matching the orbital through the frames…".into();
            }
            Err(e) => self.error(e),
        }
    }

    /// Takes a finished follow computation; true when it arrived.
    pub fn poll_follow(&mut self) -> bool {
        let Some(f) = self.doc.follow.as_mut() else {
            return false;
        };
        let Some(result) = f.task.as_mut().and_then(|t| t.try_take()) else {
            return false;
        };
        f.task = None;
        match result {
            Ok(steps) => {
                let ambiguous = steps.iter().filter(|s| s.ambiguous).count();
                f.steps = Some(steps);
                self.panels.status = if ambiguous > 0 {
                    format!("orbital followed through the frames; {ambiguous} matches are ambiguous")
                } else {
                    "orbital followed through the frames".into()
                };
                self.apply_follow();
                self.view.dirty.style = true;
                self.view.dirty.meshes = true;
            }
            Err(e) => {
                self.doc.follow = None;
                self.error(format!("cannot follow the orbital: {e}"));
            }
        }
        true
    }

    /// The followed orbital's step at the current frame.
    pub fn follow_step(&self) -> Option<&crate::analysis::tracking::TrackStep> {
        self.follow_step_at(self.document()?.frame_index)
    }

    /// The followed orbital's match at frame `frame`.
    fn follow_step_at(&self, frame: usize) -> Option<&crate::analysis::tracking::TrackStep> {
        let doc = self.document()?;
        let f = self.doc.follow.as_ref().filter(|f| f.document == doc.id)?;
        f.steps.as_ref()?.get(frame)
    }

    /// Selects the followed orbital's match at the current frame (shown by the orbital
    /// representation the orbital list edits, or by a new one when there is no field at all).
    pub(crate) fn apply_follow(&mut self) {
        let Some((index, spin)) = self
            .follow_step()
            .map(|s| s.index)
            .zip(self.doc.follow.as_ref().map(|f| f.spin))
        else {
            return;
        };
        self.doc.orbital = Some(index);
        self.doc.spin = spin;
        let field = FieldChoice::Orbital { spin, index };
        match self.followed_rep_id() {
            // The selection in the list stays where the user put it.
            Some(id) if self.doc.reps.field(id).is_some_and(|f| f.field != field) => {
                self.edit_rep(id, super::reps::RepEdit::Field(field));
            }
            Some(_) => {}
            None if self.main_field().is_none() => {
                self.show_orbital(spin, index, true);
                let made = self.orbital_rep_id();
                if let Some(f) = self.doc.follow.as_mut() {
                    f.rep = made;
                }
            }
            None => {}
        }
    }

    /// A legend for each visible pair of lobes of a signed field that is not coloured by another
    /// and not a potential (whose red and blue read negative and positive already): an orbital, a
    /// spin density, an orbital's cube; its bar shows the negative lobe's colour beside the
    /// positive one's, its ends -iso and +iso in the field's unit. Without it nothing says which
    /// colour is which sign (alpha or beta excess, for a spin density).
    pub fn lobe_legends(&self) -> Vec<super::values::Legend> {
        let flip_main = self.follow_flips_sign();
        let main = self.followed_rep_id();
        let byte = |c: [f32; 3]| c.map(|x| (x.clamp(0.0, 1.0) * 255.0).round() as u8);
        let mut out = Vec::new();
        for (r, f) in self.doc.reps.fields() {
            let two_signs = match &f.pipeline.shown {
                Some((_, grid)) => f.is_signed(grid),
                None => f.field.is_signed(),
            };
            let shown = f.pipeline.shown.is_some() || f.pipeline.device_shown.is_some();
            if !r.visible
                || !f.is_surface()
                || f.coloring.is_some()
                || !two_signs
                || !shown
                || self.is_electrostatic(f.field)
            {
                continue;
            }
            let [pos, neg] = if flip_main && Some(r.id) == main {
                [f.colors[1], f.colors[0]]
            } else {
                f.colors
            };
            let unit = self.field_unit(f.field);
            let iso = unit.show(f.pipeline.shown_iso.abs());
            out.push(super::values::Legend {
                title: format!(
                    "{}: lobes at ±{} {}",
                    self.describe_field(f.field),
                    super::values::format_number(iso),
                    unit.label
                ),
                range: [-iso, iso],
                unit: unit.label,
                colormap: self.settings.colormap,
                solid_rgb: None,
                lobes: Some([byte(neg), byte(pos)]),
            });
        }
        out
    }

    /// True when the followed orbital representation ([`AppState::followed_rep_id`]) has its phase
    /// flipped to continue the followed one (lobe colours swap), or, without following, when the
    /// orbital it shows changed sign since the series' first frame ([`AppState::refresh_phase`]).
    ///
    /// The sign is the one of the frame whose orbital is drawn: during playback the surfaces shown
    /// can be a frame behind the frame counter, and their colours follow their own frame's phase
    /// (they were swapped for a frame at a time where the phase flips).
    pub fn follow_flips_sign(&self) -> bool {
        let (Some(id), Some(doc)) = (self.followed_rep_id(), self.document()) else {
            return false;
        };
        let frame = self
            .doc
            .reps
            .field(id)
            .and_then(|f| f.pipeline.shown_key())
            .filter(|k| k.document == doc.id)
            .map_or(doc.frame_index, |k| k.frame);
        if self.doc.follow.is_some() {
            return self.follow_step_at(frame).is_some_and(|s| s.sign < 0.0);
        }
        self.phase_sign_at(frame) < 0.0
    }

    /// The orbital the orbital list's representation shows, as (spin, index), when the document
    /// is a series of wavefunctions, one per frame.
    fn series_orbital(&self) -> Option<(u64, Spin, usize)> {
        let doc = self.document()?;
        if doc.wavefunctions.len() < 2 || !doc.wavefunction_frames.is_empty() {
            return None;
        }
        let id = self.orbital_rep_id()?;
        match self.doc.reps.field(id)?.field {
            FieldChoice::Orbital { spin, index } => Some((doc.id, spin, index)),
            _ => None,
        }
    }

    /// The shown orbital's phase at the current frame: -1 where it is drawn with its lobes'
    /// colours swapped to continue frame 0's phase, else +1.
    pub fn phase_sign(&self) -> f64 {
        self.document().map_or(1.0, |d| self.phase_sign_at(d.frame_index))
    }

    /// The shown orbital's phase at frame `frame` ([`AppState::phase_sign`]).
    fn phase_sign_at(&self, frame: usize) -> f64 {
        let (Some(p), Some(key)) = (self.doc.phase.as_ref(), self.series_orbital()) else {
            return 1.0;
        };
        if p.key != key {
            return 1.0;
        }
        p.signs.as_ref().and_then(|s| s.get(frame)).copied().unwrap_or(1.0)
    }

    /// True while the shown orbital's phase is computed.
    pub fn phase_pending(&self) -> bool {
        self.doc.phase.as_ref().is_some_and(|p| p.task.is_some())
    }

    /// Starts or takes the computation of the shown orbital's phase through a wavefunction series
    /// (`analysis::tracking::phase_signs`, on a thread of its own); true when one arrived. Nothing
    /// while an orbital is followed (following continues the phase itself).
    pub fn refresh_phase(&mut self) -> bool {
        let key = if self.doc.follow.is_some() {
            None
        } else {
            self.series_orbital()
        };
        let Some(key) = key else {
            self.doc.phase = None;
            return false;
        };
        if let Some(p) = self.doc.phase.as_mut().filter(|p| p.key == key) {
            let Some(result) = p.task.as_mut().and_then(|t| t.try_take()) else {
                return false;
            };
            p.task = None;
            match result {
                Ok(signs) => p.signs = Some(signs),
                Err(e) => tracing::warn!("orbital phase not continued: {e}"),
            }
            self.view.dirty.style = true;
            self.view.dirty.meshes = true;
            return true;
        }
        let Some(doc) = self.document() else {
            return false;
        };
        let wfs = doc.wavefunctions.clone();
        let (_, spin, index) = key;
        let task = crate::jobs::task::Task::spawn("phase", move || {
            crate::analysis::tracking::phase_signs(&wfs, spin, index).map_err(|e| e.to_string())
        });
        self.doc.phase = Some(Phase {
            key,
            signs: None,
            task: task.ok(),
        });
        false
    }
}

/// The phase of the orbital shown through a wavefunction series ([`AppState::refresh_phase`]).
pub struct Phase {
    /// (document, spin, orbital index) it was computed for.
    key: (u64, Spin, usize),
    /// +1 or -1 per frame, once computed.
    signs: Option<Vec<f64>>,
    task: Option<crate::jobs::task::Task<Result<Vec<f64>, String>>>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frontier_labels() {
        let labels: Vec<String> = (0..5).map(|i| frontier_label(i, Some(2))).collect();
        assert_eq!(labels, ["HOMO-2", "HOMO-1", "HOMO", "LUMO", "LUMO+1"]);
        assert_eq!(frontier_label(0, None), "");
    }
}
