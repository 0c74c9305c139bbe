//! Extra field representations: fields shown beside the main one (e.g. the HOMO and LUMO
//! isosurfaces plus a potential slice), each with its own field, isovalue, colours, visibility and
//! latest-wins request slot in the [`FieldService`](super::fields::FieldService).
//!
//! `AppState` applies the representation commands here and calls
//! [`AppState::update_representations`] once per frame (the window, after `update_field`): each
//! visible representation asks for its field at the current frame whenever the frame or its
//! settings change, keeps its previous picture until the new grid arrives, and only ever shows a
//! grid of its own key (results are routed by key through the shared cache). The window draws
//! their lobes beside the main field's and the slice of the topmost visible representation that
//! has one; the panels list them.

use super::fields::{FieldChoice, FieldKey, FieldSlot, MeshKey};
use super::state::{AppState, IsoMode};
use crate::model::Grid3;
use crate::surface::MeshData;
use std::sync::Arc;

/// A change to one representation (the payload of `Command::EditRepresentation`).
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum RepresentationEdit {
    Visible(bool),
    /// Isovalue in the representation's mode (must be finite and positive).
    IsoValue(f32),
    IsoMode(IsoMode),
    /// Colour of the positive (0) or negative (1) lobe.
    Color {
        lobe: usize,
        rgb: [f32; 3],
    },
    /// Draw isosurfaces.
    Surfaces(bool),
    /// Draw the field on the slice plane.
    Slice(bool),
}

/// One extra field representation.
pub struct FieldRepresentation {
    /// Unique within a run (commands name representations by it).
    pub id: u64,
    /// Its own latest-wins request slot.
    pub slot: FieldSlot,
    pub field: FieldChoice,
    /// What it shows, in words ("HOMO (orbital 5, Alpha)").
    pub label: String,
    pub iso_value: f32,
    pub iso_mode: IsoMode,
    /// Positive and negative lobe colours.
    pub colors: [[f32; 3]; 2],
    pub visible: bool,
    pub surfaces: bool,
    pub slice: bool,
    /// The grid shown (an older key while a newer one is computed).
    pub shown: Option<(FieldKey, Arc<Grid3>)>,
    /// Its positive and negative lobes (CPU extraction; empty when the window extracts on the GPU).
    pub lobes: [Option<Arc<MeshData>>; 2],
    /// The key last asked for.
    asked: Option<FieldKey>,
    /// Its settings changed since `shown` was made.
    stale: bool,
}

impl FieldRepresentation {
    /// Absolute isovalue for `grid` under this representation's mode.
    pub fn absolute_iso(&self, grid: &Grid3) -> f32 {
        match self.iso_mode {
            IsoMode::Absolute => self.iso_value,
            IsoMode::RelativeToMax => {
                let max = grid.min_max().map_or(0.0, |(lo, hi)| lo.abs().max(hi.abs()));
                self.iso_value.min(1.0) * max
            }
        }
    }

    /// Makes it rebuild its picture at the next update.
    pub fn mark_stale(&mut self) {
        self.stale = true;
    }

    /// True when its field has a sign (two lobes).
    pub fn is_signed(&self) -> bool {
        matches!(self.field, FieldChoice::Orbital { .. } | FieldChoice::Potential)
    }
}

/// Lobe colour pairs given to representations in turn (positive, negative).
pub const REPRESENTATION_COLORS: [[[f32; 3]; 2]; 4] = [
    [[0.95, 0.6, 0.1], [0.1, 0.7, 0.7]],
    [[0.3, 0.8, 0.3], [0.7, 0.3, 0.8]],
    [[0.95, 0.85, 0.2], [0.3, 0.5, 1.0]],
    [[0.9, 0.4, 0.6], [0.4, 0.8, 0.95]],
];

/// The extra representations of the open document.
#[derive(Default)]
pub struct Representations {
    /// Topmost first.
    pub list: Vec<FieldRepresentation>,
    next_id: u64,
}

impl AppState {
    /// What `field` is, in words, for the open document.
    pub fn describe_field(&self, field: FieldChoice) -> String {
        match field {
            FieldChoice::Orbital { spin, index } => {
                let label = self
                    .orbital_rows(spin)
                    .get(index)
                    .map(|r| r.label.clone())
                    .unwrap_or_default();
                if label.is_empty() {
                    format!("orbital {} ({spin:?})", index + 1)
                } else {
                    format!("{label} (orbital {}, {spin:?})", index + 1)
                }
            }
            FieldChoice::Density => "electron density".into(),
            FieldChoice::Volume(i) => format!("volume {}", i + 1),
            FieldChoice::Potential => "potential (charges)".into(),
        }
    }

    fn representation_error(&mut self, msg: String) {
        tracing::warn!("{msg}");
        self.status = msg.clone();
        self.errors.push(msg);
        if self.errors.len() > 20 {
            self.errors.remove(0);
        }
    }

    /// Adds a representation of `field` (refused with a message when the document lacks it).
    pub fn add_representation(&mut self, field: FieldChoice) {
        let Some(doc) = self.document.as_ref() else {
            self.representation_error("add a representation: open a document first".into());
            return;
        };
        let available = match field {
            FieldChoice::Orbital { spin, index } => doc
                .wavefunction()
                .and_then(|w| w.orbitals(spin))
                .is_some_and(|set| index < set.len()),
            FieldChoice::Density => doc.wavefunction().is_some(),
            FieldChoice::Volume(i) => i < doc.grids.len(),
            FieldChoice::Potential => doc.potential_lattice.is_some(),
        };
        if !available {
            let what = self.describe_field(field);
            self.representation_error(format!("the document has no {what} to show"));
            return;
        }
        let slot = self.fields.add_slot();
        let reps = &mut self.representations;
        reps.next_id += 1;
        let id = reps.next_id;
        let colors = REPRESENTATION_COLORS[reps.list.len() % REPRESENTATION_COLORS.len()];
        let (iso_value, iso_mode) = match field {
            // Potentials diverge at the nuclei: a fraction of the maximum would hug them.
            FieldChoice::Potential => (0.05, IsoMode::Absolute),
            _ => (self.settings.iso_value, self.iso_mode),
        };
        let label = self.describe_field(field);
        self.representations.list.push(FieldRepresentation {
            id,
            slot,
            field,
            label,
            iso_value,
            iso_mode,
            colors,
            visible: true,
            surfaces: true,
            slice: field == FieldChoice::Potential,
            shown: None,
            lobes: [None, None],
            asked: None,
            stale: true,
        });
        self.dirty.slice = true;
    }

    /// Removes representation `id` and cancels its request.
    pub fn remove_representation(&mut self, id: u64) {
        if let Some(pos) = self.representations.list.iter().position(|r| r.id == id) {
            let r = self.representations.list.remove(pos);
            self.fields.remove_slot(r.slot);
            self.representations_changed = true;
            self.dirty.slice = true;
        }
    }

    /// Removes every representation (the document closed or changed).
    pub fn clear_representations(&mut self) {
        for r in std::mem::take(&mut self.representations.list) {
            self.fields.remove_slot(r.slot);
        }
        self.representations_changed = true;
    }

    /// Applies one edit to representation `id`.
    pub fn edit_representation(&mut self, id: u64, edit: RepresentationEdit) {
        let Some(r) = self.representations.list.iter_mut().find(|r| r.id == id) else {
            return;
        };
        match edit {
            RepresentationEdit::Visible(v) => r.visible = v,
            RepresentationEdit::IsoValue(v) => {
                if !(v.is_finite() && v > 0.0) {
                    return;
                }
                r.iso_value = v;
            }
            RepresentationEdit::IsoMode(m) => r.iso_mode = m,
            RepresentationEdit::Color { lobe, rgb } => {
                let Some(c) = r.colors.get_mut(lobe) else {
                    return;
                };
                if rgb.iter().all(|x| x.is_finite()) {
                    *c = rgb.map(|x| x.clamp(0.0, 1.0));
                }
            }
            RepresentationEdit::Surfaces(s) => r.surfaces = s,
            RepresentationEdit::Slice(s) => r.slice = s,
        }
        r.stale = true;
        self.dirty.slice = true;
    }

    /// The key of `field` at the current frame, by the main field's rules
    /// ([`AppState::current_field_key`]).
    pub fn representation_key(&mut self, field: FieldChoice) -> Option<FieldKey> {
        let main = self.field.replace(field);
        let key = self.current_field_key();
        self.field = main;
        key
    }

    /// The grid the slice plane shows: the topmost visible representation with a slice (once it has
    /// a grid), else the main field when its slice is on.
    pub fn slice_grid(&self) -> Option<&Arc<Grid3>> {
        let rep = self
            .representations
            .list
            .iter()
            .find(|r| r.visible && r.slice && r.shown.is_some());
        match rep {
            Some(r) => r.shown.as_ref().map(|(_, g)| g),
            None if self.show_slice => self.shown_field.as_ref().map(|(_, g)| g),
            None => None,
        }
    }

    /// Requests every visible representation's field for the current frame and takes the grids
    /// that arrived; returns true when what a representation shows changed.
    pub fn update_representations(&mut self) -> bool {
        let mut changed = std::mem::take(&mut self.representations_changed);
        if self.representations.list.is_empty() {
            return changed;
        }
        if !self.fields.poll().is_empty() {
            // The main field looks at arrivals too: have it check the cache on its next update.
            self.dirty.meshes = true;
        }
        let dropping = self.timeline.playing && !self.settings.compute_every_frame;
        for i in 0..self.representations.list.len() {
            let Some(r) = self.representations.list.get(i) else {
                break;
            };
            let (field, slot, stale, asked) = (r.field, r.slot, r.stale, r.asked);
            let shown_key = r.shown.as_ref().map(|(k, _)| *k);
            if !r.visible {
                if self.fields.pending_in(slot).is_some() {
                    self.fields.cancel_slot(slot);
                }
                if let Some(r) = self.representations.list.get_mut(i) {
                    r.asked = None;
                    if std::mem::take(&mut r.stale) {
                        changed = true;
                    }
                }
                continue;
            }
            let Some(key) = self.representation_key(field) else {
                if let Some(r) = self.representations.list.get_mut(i)
                    && r.shown.take().is_some()
                {
                    r.lobes = [None, None];
                    changed = true;
                }
                continue;
            };
            let mut grid = if let FieldChoice::Volume(v) = field {
                self.document.as_ref().and_then(|d| d.grids.get(v).cloned())
            } else if dropping && self.fields.pending_in(slot).is_some_and(|p| p != key) {
                // Let the request in flight finish (see `update_field`); the frames between drop.
                None
            } else if stale || asked != Some(key) {
                let job = self.field_job(&key);
                if let Some(r) = self.representations.list.get_mut(i) {
                    r.asked = Some(key);
                }
                self.fields.request_in(slot, key, || job)
            } else {
                self.fields.cached(key)
            };
            let mut key = key;
            if grid.is_none()
                && dropping
                && let Some((k, g)) = self.fields.latest_other_frame(key)
                && Some(k) != shown_key
            {
                // The newest finished frame of its own field while the playhead's is computed.
                key = k;
                grid = Some(g);
            }
            let Some(grid) = grid else {
                continue;
            };
            if !stale && shown_key == Some(key) {
                continue;
            }
            let Some(r) = self.representations.list.get(i) else {
                break;
            };
            let iso = r.absolute_iso(&grid);
            let lobes = if self.gpu_surfaces || !r.surfaces {
                [None, None]
            } else {
                let mk = |v: f32| MeshKey {
                    field: key,
                    iso_bits: v.to_bits(),
                };
                let minus = if r.is_signed() {
                    self.fields.mesh(mk(-iso), &grid)
                } else {
                    None
                };
                [self.fields.mesh(mk(iso), &grid), minus]
            };
            if let Some(r) = self.representations.list.get_mut(i) {
                if r.slice {
                    self.dirty.slice = true;
                }
                r.lobes = lobes;
                r.shown = Some((key, grid));
                r.stale = false;
                changed = true;
            }
        }
        changed
    }
}
