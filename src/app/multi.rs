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
        self.asked = None;
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
    /// What the keys were last worked out for (document, frame, lattice points): while it stays
    /// and nothing arrives or changes, an update costs no key computation.
    context: Option<(u64, usize, u32)>,
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
            FieldChoice::PotentialMean { frames } => format!("potential (charges), mean of {frames} frames"),
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
            FieldChoice::Potential | FieldChoice::PotentialMean { .. } => doc.potential_lattice.is_some(),
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
        r.mark_stale();
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

    /// True while a visible representation waits for a field in flight.
    pub fn representations_waiting(&self) -> bool {
        self.representations
            .list
            .iter()
            .any(|r| r.visible && self.fields.pending_in(r.slot).is_some())
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
        let context = self
            .document
            .as_ref()
            .map(|d| (d.id, d.frame_index, self.settings.lattice_points));
        let context_changed = std::mem::replace(&mut self.representations.context, context) != context;
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
            let orphaned = self.fields.take_orphaned(slot);
            // What arrived for this slot (kept aside, so a crowded cache cannot evict it first).
            let arrived = self.fields.take_delivered(slot);
            if !(context_changed || stale || orphaned || arrived.is_some()) {
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
            } else if let Some((_, g)) = arrived.as_ref().filter(|(k, _)| *k == key) {
                Some(Arc::clone(g))
            } else if dropping && self.fields.pending_in(slot).is_some_and(|p| p != key) {
                // Let the request in flight finish (see `update_field`); the frames between drop.
                None
            } else if orphaned || asked != Some(key) {
                // Asked once per key and change (a failed request is not repeated every frame).
                let job = self.field_job(&key);
                if let Some(r) = self.representations.list.get_mut(i) {
                    r.asked = Some(key);
                }
                self.fields.request_in(slot, key, || job)
            } else {
                self.fields.cached_in(slot, key)
            };
            let mut key = key;
            if grid.is_none() && dropping {
                // The newest finished frame of its own field while the playhead's is computed.
                let own = arrived
                    .filter(|(k, _)| k.document == key.document && k.field == key.field && k.dims == key.dims)
                    .or_else(|| self.fields.latest_other_frame(key));
                if let Some((k, g)) = own.filter(|(k, _)| Some(*k) != shown_key) {
                    key = k;
                    grid = Some(g);
                }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]
    use super::*;
    use crate::app::fields::{FieldBackend, FieldResult, FieldService, JobProgress};
    use crate::app::settings::Settings;
    use crate::app::state::Command;
    use crate::compute::{Field, FieldInput, FieldJob};
    use crate::io::System;
    use crate::model::{Frame, Spin, Trajectory};
    use std::collections::VecDeque;
    use std::sync::Mutex;

    /// Requests held until the test releases them; the latest per slot, and the superseded ones
    /// (answered too, as a pool answers a request that finished before it was superseded).
    #[derive(Default)]
    struct Held {
        live: Vec<(Option<FieldSlot>, FieldKey, FieldJob)>,
        superseded: Vec<(FieldKey, FieldJob)>,
        cancelled_slots: Vec<FieldSlot>,
        ready: VecDeque<FieldResult>,
    }

    struct HeldBackend(Arc<Mutex<Held>>);

    impl FieldBackend for HeldBackend {
        fn name(&self) -> String {
            "held".into()
        }
        fn submit(&mut self, key: FieldKey, job: FieldJob) {
            self.submit_slot(None, key, job);
        }
        fn submit_in(&mut self, slot: FieldSlot, key: FieldKey, job: FieldJob) {
            self.submit_slot(Some(slot), key, job);
        }
        fn cancel_slot(&mut self, slot: FieldSlot) {
            let mut h = self.0.lock().unwrap();
            h.cancelled_slots.push(slot);
            h.live.retain(|(s, _, _)| *s != Some(slot));
        }
        fn try_recv(&mut self) -> Option<FieldResult> {
            self.0.lock().unwrap().ready.pop_front()
        }
        fn progress(&self) -> Option<JobProgress> {
            None
        }
        fn cancel(&mut self) {}
    }

    impl HeldBackend {
        fn submit_slot(&mut self, slot: Option<FieldSlot>, key: FieldKey, job: FieldJob) {
            let mut h = self.0.lock().unwrap();
            if let Some(pos) = h.live.iter().position(|(s, _, _)| *s == slot) {
                let (_, k, j) = h.live.remove(pos);
                h.superseded.push((k, j));
            }
            h.live.push((slot, key, job));
        }
    }

    /// Computes every held request on the CPU engine, newest first (so stale answers come last).
    fn release(held: &Arc<Mutex<Held>>) {
        let mut h = held.lock().unwrap();
        let mut all: Vec<(FieldKey, FieldJob)> = std::mem::take(&mut h.superseded);
        all.extend(std::mem::take(&mut h.live).into_iter().map(|(_, k, j)| (k, j)));
        for (key, job) in all.into_iter().rev() {
            let grid = crate::compute::cpu::evaluate_grid(&job).unwrap();
            h.ready.push_back(FieldResult {
                key,
                grid: Ok(Arc::new(grid)),
            });
        }
    }

    /// Water (HF/6-31G*) with TIP3P-like charges, moved along x over `frames` frames, one
    /// wavefunction per frame.
    fn charged_water(frames: usize) -> System {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/engine/water_hf_631gs_sph.molden");
        let mut base = crate::io::load(std::slice::from_ref(&path)).unwrap();
        base.structure.charges_e = Some(vec![-0.834, 0.417, 0.417]);
        let mut frame0 = Frame::default();
        base.trajectory.read_frame(0, &mut frame0).unwrap();
        let mut wfs = Vec::new();
        let mut list = Vec::new();
        for f in 0..frames {
            let dx = 0.05 * f as f64;
            let mut wf = base.wavefunctions[0].clone();
            for a in &mut wf.atoms {
                a.position_bohr[0] += crate::model::units::bohr_from_angstrom(dx);
            }
            wfs.push(wf);
            let mut fr = frame0.clone();
            for p in &mut fr.positions_angstrom {
                p[0] += dx as f32;
            }
            list.push(fr);
        }
        System {
            trajectory: Trajectory::from_frames(base.structure.len(), list, "test"),
            structure: base.structure,
            wavefunctions: wfs,
            grids: Vec::new(),
            warnings: Vec::new(),
            paths: vec![path],
        }
    }

    fn small_settings() -> Settings {
        Settings {
            lattice_points: 16,
            potential_spacing_angstrom: 2.0,
            ..Settings::default()
        }
    }

    /// The orbital's grid computed directly on the CPU engine for the document's frame `frame`, on
    /// `lattice`.
    fn direct_orbital(state: &AppState, frame: usize, index: usize, lattice: crate::model::Lattice) -> Vec<f32> {
        let doc = state.document.as_ref().unwrap();
        let job = FieldJob {
            field: Field::Orbital {
                spin: Spin::Alpha,
                index,
            },
            lattice,
            input: FieldInput::Wavefunction(Arc::clone(&doc.wavefunctions[frame])),
        };
        crate::compute::cpu::evaluate_grid(&job).unwrap().values
    }

    /// The potential of the current frame's charges at lattice point (i, j, k), summed in f64.
    fn direct_potential(state: &AppState, grid: &Grid3, (i, j, k): (usize, usize, usize)) -> f64 {
        let doc = state.document.as_ref().unwrap();
        let p = grid.lattice.point_bohr(i, j, k);
        let q = doc.structure.charges_e.as_ref().unwrap();
        doc.frame
            .positions_angstrom
            .iter()
            .zip(q)
            .map(|(x, c)| {
                let x = crate::model::units::bohr_from_angstrom3(x.map(f64::from));
                let r = ((p[0] - x[0]).powi(2) + (p[1] - x[1]).powi(2) + (p[2] - x[2]).powi(2)).sqrt();
                f64::from(*c) / r
            })
            .sum()
    }

    #[test]
    fn per_frame_potential_by_multilevel_summation_matches_the_direct_sum() {
        use crate::app::settings::PotentialMethod;
        let held = Arc::new(Mutex::new(Held::default()));
        let service = FieldService::new(
            Some(Box::new(HeldBackend(held.clone()))),
            crate::app::default_extractor(),
        );
        let settings = Settings {
            potential_spacing_angstrom: 3.0,
            ..Settings::default()
        };
        let mut state = AppState::new(settings, service);
        let md = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
        let system = crate::io::load(&[md.join("adk.psf"), md.join("adk_dims.dcd")]).unwrap();
        state.open_system("adk".into(), system);
        state.apply(Command::SelectField(Some(FieldChoice::Potential)));
        let grid_by = |state: &mut AppState, method: PotentialMethod| {
            state.apply(Command::SetPotentialMethod(method));
            state.update_field();
            let input = held
                .lock()
                .unwrap()
                .live
                .last()
                .map(|(_, _, j)| j.input.clone())
                .unwrap();
            let deferred = matches!(input, FieldInput::DeferredElectrostatics(_));
            // 3341 charges: `Auto` sums directly.
            assert_eq!(deferred, method == PotentialMethod::Msm, "{method:?}: {input:?}");
            release(&held);
            state.update_field();
            state.shown_field.as_ref().unwrap().1.clone()
        };
        let direct = grid_by(&mut state, PotentialMethod::Auto);
        let msm = grid_by(&mut state, PotentialMethod::Msm);
        assert_eq!(direct.lattice, msm.lattice);
        let (mut num, mut den) = (0.0f64, 0.0f64);
        for (a, b) in msm.values.iter().zip(&direct.values) {
            num += f64::from(a - b).powi(2);
            den += f64::from(*b).powi(2);
        }
        let err = (num / den).sqrt();
        assert!(err > 0.0 && err < 1e-2, "MSM against the direct sum: {err:.2e}");
    }

    /// Calls `update_field` until it reports a change (the extraction thread delivers).
    fn until_shown(state: &mut AppState) {
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
        while !state.update_field() {
            assert!(std::time::Instant::now() < deadline, "the lobes never arrived");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    }

    #[test]
    fn surfaces_extracted_off_thread_arrive_with_their_grid_and_keep_the_old_picture_meanwhile() {
        let held = Arc::new(Mutex::new(Held::default()));
        let service = FieldService::new(
            Some(Box::new(HeldBackend(held.clone()))),
            crate::app::default_extractor(),
        );
        let mut state = AppState::new(small_settings(), service);
        state.gpu_surfaces = false;
        assert!(state.extract_surfaces_off_thread());
        state.open_system("water".into(), charged_water(3));
        let homo = state.homo_index(Spin::Alpha).unwrap();
        let check = |state: &AppState, frame: usize| {
            let (key, grid) = state.shown_field.as_ref().unwrap();
            assert_eq!(key.frame, frame);
            // The grid is the frame's own orbital, the lobes are its surfaces.
            let direct = direct_orbital(state, frame, homo, grid.lattice);
            let worst = grid
                .values
                .iter()
                .zip(&direct)
                .map(|(a, b)| (a - b).abs())
                .fold(0.0f32, f32::max);
            assert!(worst < 1e-5, "frame {frame}: grid differs by {worst}");
            let iso = state.absolute_iso(grid);
            let plus = crate::surface::extract(grid, iso);
            let minus = crate::surface::extract_below(grid, -iso);
            assert!(plus.triangle_count() > 0 && minus.triangle_count() > 0);
            assert_eq!(
                state.lobes[0].as_ref().unwrap().positions_angstrom,
                plus.positions_angstrom
            );
            assert_eq!(
                state.lobes[1].as_ref().unwrap().positions_angstrom,
                minus.positions_angstrom
            );
        };
        state.update_field();
        release(&held);
        // The grid has arrived; its lobes are extracted off this thread, nothing is shown yet.
        assert!(!state.update_field());
        assert!(state.shown_field.is_none() || state.surfaces_pending());
        until_shown(&mut state);
        assert!(!state.surfaces_pending());
        check(&state, 0);
        // The next frame: until its lobes arrive, frame 0 stays on screen.
        state.apply(Command::SetFrame(2));
        state.update_field();
        release(&held);
        state.update_field();
        if state.surfaces_pending() {
            check(&state, 0);
        }
        until_shown(&mut state);
        check(&state, 2);
        // Back to frame 0: grid and lobes from the cache, shown at once.
        state.apply(Command::SetFrame(0));
        assert!(state.update_field());
        check(&state, 0);

        // Previews while playing: the lobes of every second lattice point, not cached; the full
        // surfaces come back when playback stops.
        state.preview_surfaces_while_playing = true;
        state.timeline.playing = true;
        state.apply(Command::SetFrame(1));
        state.update_field();
        release(&held);
        state.update_field();
        until_shown(&mut state);
        {
            let (key, grid) = state.shown_field.as_ref().unwrap();
            assert_eq!(key.frame, 1);
            let iso = state.absolute_iso(grid);
            let coarse = grid.every_second_point();
            let plus = crate::surface::extract(&coarse, iso);
            assert!(plus.triangle_count() > 0);
            assert_eq!(
                state.lobes[0].as_ref().unwrap().positions_angstrom,
                plus.positions_angstrom
            );
            assert!(plus.triangle_count() < crate::surface::extract(grid, iso).triangle_count());
        }
        state.timeline.playing = false;
        until_shown(&mut state);
        check(&state, 1);
    }

    #[test]
    fn homo_lumo_and_potential_each_show_their_own_field_after_scrubbing() {
        let held = Arc::new(Mutex::new(Held::default()));
        let service = FieldService::new(
            Some(Box::new(HeldBackend(held.clone()))),
            crate::app::default_extractor(),
        );
        let mut state = AppState::new(small_settings(), service);
        state.open_system("water".into(), charged_water(4));
        state.apply(Command::SelectField(None));
        let homo = state.homo_index(Spin::Alpha).unwrap();
        for f in [
            FieldChoice::Orbital {
                spin: Spin::Alpha,
                index: homo,
            },
            FieldChoice::Orbital {
                spin: Spin::Alpha,
                index: homo + 1,
            },
            FieldChoice::Potential,
        ] {
            state.apply(Command::AddRepresentation(f));
        }
        assert_eq!(state.representations.list.len(), 3);
        let slots: Vec<FieldSlot> = state.representations.list.iter().map(|r| r.slot).collect();
        assert!(slots[0] != slots[1] && slots[1] != slots[2] && slots[0] != slots[2]);
        state.update_representations();
        // One request per representation, each in its own slot.
        assert_eq!(held.lock().unwrap().live.len(), 3);
        // Scrub: each representation's slot keeps only its newest request.
        for f in 1..=2 {
            state.apply(Command::SetFrame(f));
            assert!(
                !state.update_representations(),
                "nothing arrived, the old picture stays"
            );
        }
        {
            let h = held.lock().unwrap();
            assert_eq!(h.live.len(), 3);
            assert!(h.live.iter().all(|(s, k, _)| s.is_some() && k.frame == 2));
            assert_eq!(h.superseded.len(), 6);
        }
        // A budget of about three orbital lattices: the stale answers are evicted, never more held.
        let one = 16 * 16 * 16 * 4;
        let budget = 3 * one + one / 2;
        state.fields.set_cache_budget(budget);
        release(&held);
        assert!(state.update_representations());
        assert!(
            state.fields.cache_use().bytes <= budget,
            "{:?}",
            state.fields.cache_use()
        );
        for r in &state.representations.list {
            let (key, grid) = r.shown.as_ref().unwrap();
            assert_eq!((key.frame, key.field), (2, r.field), "{}", r.label);
            match r.field {
                FieldChoice::Orbital { index, .. } => {
                    let direct = direct_orbital(&state, 2, index, grid.lattice);
                    let worst = direct
                        .iter()
                        .zip(&grid.values)
                        .map(|(a, b)| (a - b).abs())
                        .fold(0.0f32, f32::max);
                    assert!(worst < 1e-6, "{}: differs by {worst}", r.label);
                    assert!(r.lobes[0].is_some() && r.lobes[1].is_some(), "{}", r.label);
                }
                FieldChoice::Potential => {
                    let [nx, ny, nz] = grid.lattice.dims;
                    for p in [(0, 0, 0), (nx / 2, ny / 3, nz - 1), (nx - 1, ny - 1, nz / 2)] {
                        let v = direct_potential(&state, grid, p);
                        let got = f64::from(grid.get(p.0, p.1, p.2).unwrap());
                        assert!((got - v).abs() <= 1e-5 * v.abs().max(1e-3), "{p:?}: {got} vs {v}");
                    }
                }
                _ => unreachable!(),
            }
        }
        // HOMO and LUMO are different orbitals (the comparison above can tell them apart).
        let [a, b] = [0, 1].map(|i| state.representations.list[i].shown.as_ref().unwrap().1.clone());
        assert!(a.values.iter().zip(&b.values).any(|(x, y)| (x - y).abs() > 1e-3));
        // The slice shows the potential (the only representation with a slice).
        assert!(Arc::ptr_eq(
            state.slice_grid().unwrap(),
            &state.representations.list[2].shown.as_ref().unwrap().1
        ));

        // Next frame; removing the LUMO cancels its request, the others go on.
        state.apply(Command::SetFrame(3));
        state.update_representations();
        let lumo = state.representations.list[1].id;
        state.apply(Command::RemoveRepresentation(lumo));
        assert_eq!(held.lock().unwrap().cancelled_slots, vec![slots[1]]);
        assert_eq!(held.lock().unwrap().live.len(), 2);
        assert_eq!(state.fields.pending_in(slots[1]), None);
        release(&held);
        assert!(state.update_representations());
        assert!(state.fields.cache_use().bytes <= budget);
        let shown: Vec<(usize, FieldChoice)> = state
            .representations
            .list
            .iter()
            .map(|r| r.shown.as_ref().map(|(k, _)| (k.frame, k.field)).unwrap())
            .collect();
        assert_eq!(shown, vec![(3, slots_field(&state, 0)), (3, FieldChoice::Potential)]);
    }

    fn slots_field(state: &AppState, i: usize) -> FieldChoice {
        state.representations.list[i].field
    }

    #[test]
    fn hidden_representations_cancel_and_edits_are_checked() {
        let held = Arc::new(Mutex::new(Held::default()));
        let service = FieldService::new(Some(Box::new(HeldBackend(held.clone()))), None);
        let mut state = AppState::new(small_settings(), service);
        state.open_system("water".into(), charged_water(2));
        state.apply(Command::AddRepresentation(FieldChoice::Density));
        // Refused: no such orbital, and no volume.
        state.apply(Command::AddRepresentation(FieldChoice::Orbital {
            spin: Spin::Alpha,
            index: 10_000,
        }));
        state.apply(Command::AddRepresentation(FieldChoice::Volume(0)));
        assert_eq!(state.representations.list.len(), 1);
        let r = &state.representations.list[0];
        let (id, slot) = (r.id, r.slot);
        state.update_representations();
        assert_eq!(
            state.fields.pending_in(slot).map(|k| k.field),
            Some(FieldChoice::Density)
        );
        state.apply(Command::EditRepresentation(id, RepresentationEdit::Visible(false)));
        state.update_representations();
        assert_eq!(held.lock().unwrap().cancelled_slots, vec![slot]);
        assert_eq!(state.fields.pending_in(slot), None);
        state.apply(Command::EditRepresentation(id, RepresentationEdit::IsoValue(f32::NAN)));
        state.apply(Command::EditRepresentation(
            id,
            RepresentationEdit::Color { lobe: 7, rgb: [1.0; 3] },
        ));
        let r = &state.representations.list[0];
        assert!(r.iso_value.is_finite() && r.iso_value > 0.0);
        // Closing the document forgets the representations and their slots.
        state.apply(Command::CloseDocument);
        assert!(state.representations.list.is_empty());
    }

    #[test]
    fn dropping_playback_shows_each_representations_newest_finished_frame() {
        let held = Arc::new(Mutex::new(Held::default()));
        let service = FieldService::new(Some(Box::new(HeldBackend(held.clone()))), None);
        let mut state = AppState::new(small_settings(), service);
        state.open_system("water".into(), charged_water(5));
        state.apply(Command::SelectField(None));
        let homo = state.homo_index(Spin::Alpha).unwrap();
        let orbital = |index| FieldChoice::Orbital {
            spin: Spin::Alpha,
            index,
        };
        state.apply(Command::AddRepresentation(orbital(homo)));
        state.apply(Command::AddRepresentation(FieldChoice::Potential));
        state.settings.compute_every_frame = false;
        state.timeline.playing = true;
        let shown = |state: &AppState| -> Vec<Option<(usize, FieldChoice)>> {
            state
                .representations
                .list
                .iter()
                .map(|r| r.shown.as_ref().map(|(k, _)| (k.frame, k.field)))
                .collect()
        };
        state.update_representations();
        assert!(state.representations_waiting());
        // The playhead moves on while frame 0 is computed: no new request supersedes it.
        state.apply(Command::SetFrame(1));
        state.update_representations();
        assert!(held.lock().unwrap().live.iter().all(|(_, k, _)| k.frame == 0));
        // Frame 0 arrives: shown (the newest finished frame of each), and frame 1 is asked for.
        release(&held);
        assert!(state.update_representations());
        assert_eq!(
            shown(&state),
            vec![Some((0, orbital(homo))), Some((0, FieldChoice::Potential))]
        );
        assert!(held.lock().unwrap().live.iter().all(|(_, k, _)| k.frame == 1));
        state.apply(Command::SetFrame(2));
        state.update_representations();
        state.apply(Command::SetFrame(3));
        state.update_representations();
        release(&held);
        assert!(state.update_representations());
        assert_eq!(
            shown(&state),
            vec![Some((1, orbital(homo))), Some((1, FieldChoice::Potential))]
        );
        assert!(held.lock().unwrap().live.iter().all(|(_, k, _)| k.frame == 3));
    }

    #[test]
    fn two_representations_of_one_field_share_one_request_and_one_lattice() {
        let held = Arc::new(Mutex::new(Held::default()));
        let service = FieldService::new(Some(Box::new(HeldBackend(held.clone()))), None);
        let mut state = AppState::new(small_settings(), service);
        state.open_system("water".into(), charged_water(3));
        state.apply(Command::SelectField(None));
        state.apply(Command::AddRepresentation(FieldChoice::Density));
        state.apply(Command::AddRepresentation(FieldChoice::Density));
        let [a, b] = [0, 1].map(|i| state.representations.list[i].slot);
        state.update_representations();
        assert_eq!(held.lock().unwrap().live.len(), 1, "one request for the shared key");
        assert!(state.fields.pending_in(a).is_some() && state.fields.pending_in(b).is_some());
        release(&held);
        assert!(state.update_representations());
        let [ga, gb] = [0, 1].map(|i| state.representations.list[i].shown.as_ref().unwrap().1.clone());
        assert!(Arc::ptr_eq(&ga, &gb), "one lattice");
        assert_eq!(state.fields.cache_use().grids, 1);
        // Next frame: the second shares the first's request; hiding the first cancels it, and the
        // second then asks for itself.
        state.apply(Command::SetFrame(1));
        state.update_representations();
        assert_eq!(held.lock().unwrap().live.len(), 1);
        let first = state.representations.list[0].id;
        state.apply(Command::EditRepresentation(first, RepresentationEdit::Visible(false)));
        state.update_representations();
        {
            let h = held.lock().unwrap();
            assert_eq!(h.cancelled_slots, vec![a]);
            assert_eq!(h.live.len(), 1);
            assert_eq!((h.live[0].0, h.live[0].1.frame), (Some(b), 1));
        }
        release(&held);
        assert!(state.update_representations());
        let (k, _) = state.representations.list[1].shown.as_ref().unwrap();
        assert_eq!((k.frame, k.field), (1, FieldChoice::Density));
    }

    /// Fails every request.
    struct Failing(Arc<Mutex<(usize, VecDeque<FieldResult>)>>);

    impl FieldBackend for Failing {
        fn name(&self) -> String {
            "failing".into()
        }
        fn submit(&mut self, key: FieldKey, _job: FieldJob) {
            let mut g = self.0.lock().unwrap();
            g.0 += 1;
            g.1.push_back(FieldResult {
                key,
                grid: Err("out of memory".into()),
            });
        }
        fn try_recv(&mut self) -> Option<FieldResult> {
            self.0.lock().unwrap().1.pop_front()
        }
        fn progress(&self) -> Option<JobProgress> {
            None
        }
        fn cancel(&mut self) {}
    }

    #[test]
    fn a_failed_request_is_not_repeated_every_frame() {
        let calls = Arc::new(Mutex::new((0, VecDeque::new())));
        let service = FieldService::new(Some(Box::new(Failing(calls.clone()))), None);
        let mut state = AppState::new(small_settings(), service);
        state.open_system("water".into(), charged_water(2));
        state.apply(Command::SelectField(None));
        state.apply(Command::AddRepresentation(FieldChoice::Potential));
        for _ in 0..5 {
            state.update_representations();
        }
        assert_eq!(calls.lock().unwrap().0, 1);
        assert_eq!(state.fields.last_error.as_deref(), Some("out of memory"));
        assert!(!state.representations_waiting());
        // A change asks again.
        let id = state.representations.list[0].id;
        state.apply(Command::EditRepresentation(id, RepresentationEdit::IsoValue(0.1)));
        state.update_representations();
        assert_eq!(calls.lock().unwrap().0, 2);
    }
}
