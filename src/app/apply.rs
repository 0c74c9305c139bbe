//! Carrying out commands: opening and closing documents, moving through frames, the camera,
//! picking, playback and the settings the panels change. Representation commands are applied in
//! `app::reps`, sessions in `app::session`, the file browser in `app::browser`.
//!
//! Called by [`AppState::apply_pending`] after each layout (and directly by tests and the CLI).

use super::document::Document;
use super::state::{AppState, Command, IsoMode, PickInfo};
use crate::io::System;
use crate::model::Spin;
use glam::Vec3;
use std::path::PathBuf;

/// How far from a cartoon residue's CA (or a nucleotide's P) a click still picks it, in Å: about
/// half a helix ribbon's width.
pub const CARTOON_PICK_RADIUS_ANGSTROM: f32 = 2.0;

/// How far from an atom's centre on the screen a click still picks it when it misses every
/// drawn sphere (pixels).
pub const PICK_SLACK_PX: f32 = 6.0;

impl AppState {
    /// Applies one command.
    pub fn apply(&mut self, c: Command) {
        match c {
            Command::OpenFiles(paths) => self.open_files(&paths, None),
            Command::OpenFilesWithQmRegion { paths, qm_region } => self.open_files(&paths, Some(qm_region)),
            Command::OpenDialog => self.panels.open_dialog_requested = true,
            Command::Quit => self.panels.quit_requested = true,
            Command::SaveDialog => self.panels.save_dialog_requested = true,
            Command::OpenBrowser(purpose, message) => self.open_browser(purpose, message),
            Command::Browser(action) => self.browser_action(action),
            Command::OpenDemo => self.open_demo(),
            Command::CloseDocument => self.close_document(),
            Command::SaveSession(path) => self.save_session(&path),
            Command::OpenSession(path) => self.open_session(&path),
            Command::SetFrame(i) => self.set_frame(i),
            Command::StepFrame(d) => {
                if let Some(doc) = self.document() {
                    let n = doc.n_frames as i64;
                    if n > 0 {
                        let mut i = doc.frame_index as i64 + d;
                        i = if self.view.timeline.looping {
                            i.rem_euclid(n)
                        } else {
                            i.clamp(0, n - 1)
                        };
                        self.set_frame(i as usize);
                    }
                }
            }
            Command::SetPlaying(p) => self.view.timeline.playing = p,
            // One frame (or none) has nothing to play: Space leaves the Play button as it is.
            Command::TogglePlaying => {
                let frames = self.document().map_or(0, |d| d.n_frames);
                self.view.timeline.playing = !self.view.timeline.playing && frames > 1;
            }
            Command::SetPlaybackFps(f) => {
                self.view.timeline.fps = f.clamp(0.5, 120.0);
                self.settings.playback_fps = self.view.timeline.fps;
            }
            Command::SetLoop(l) => {
                self.view.timeline.looping = l;
                self.settings.playback_loop = l;
            }
            Command::PickUpNewFrames => {
                if let Some(doc) = &mut self.doc.document {
                    self.panels.status = match doc.pick_up_new_frames() {
                        Ok(0) => "no new frames".into(),
                        Ok(k) => format!(
                            "{k} new frame{} loaded ({} in all)",
                            if k == 1 { "" } else { "s" },
                            doc.n_frames
                        ),
                        Err(e) => format!("new frames: {e}"),
                    };
                }
            }
            Command::SetSpin(s) => {
                self.doc.spin = s;
                let shown = self
                    .orbital_rep_id()
                    .and_then(|id| self.doc.reps.field(id))
                    .map(|f| f.field);
                if let Some(super::fields::FieldChoice::Orbital { index, .. }) = shown {
                    self.show_orbital(s, index, false);
                }
            }
            Command::SelectOrbital(o) => {
                if self.doc.follow.is_some()
                    && self.follow_step().map(|s| s.index) != o
                    && self.orbital_rep_id() == self.followed_rep_id()
                {
                    // Picking another orbital by hand for the following representation stops
                    // following (another representation's pick leaves it following).
                    self.doc.follow = None;
                    self.panels.status =
                        "following stopped: an orbital picked by hand (tick Follow through frames to follow it)".into();
                }
                // The orbital representation the list edits (or a new one); never another kind.
                match o {
                    Some(index) => self.show_orbital(self.doc.spin, index, false),
                    None => self.doc.orbital = None,
                }
            }
            Command::SelectField(f) => {
                // The potential is shown averaged over the window the settings give.
                let f = match f {
                    Some(p) if p.is_potential() => Some(super::potential::potential_choice(
                        self.settings.potential_window_frames,
                    )),
                    f => f,
                };
                if let Some(super::fields::FieldChoice::Orbital { index, spin }) = f {
                    self.doc.orbital = Some(index);
                    self.doc.spin = spin;
                }
                self.set_panel_field(f);
            }
            Command::SetPotentialMethod(m) => {
                if m != self.settings.potential_method {
                    self.settings.potential_method = m;
                    // Cached maps were summed the other way: computed again.
                    self.fields.clear_cache();
                    self.mark_fields_stale(|f| f.is_potential());
                }
            }
            Command::SetPotentialWindow(n) => {
                let n = n.clamp(1, super::potential::MAX_POTENTIAL_WINDOW);
                self.settings.potential_window_frames = n;
                self.set_potential_window(n);
            }
            Command::SetEspModel(m) => self.set_esp_model(m),
            Command::SetRampAbove(on) => self.set_ramp_above(on),
            Command::SetPbValue(which, v) => self.set_pb_value(which, v),
            Command::SetPotentialUnit(u) => {
                self.settings.potential_unit = u;
                self.view.dirty.slice = true;
                self.panels.status = self
                    .potential_unit_note(u)
                    .unwrap_or_else(|| format!("potentials in {}", u.label()));
            }
            Command::SetIsoValue(v) => {
                if let Some(id) = self.panel_field_id() {
                    self.edit_rep(id, super::reps::RepEdit::IsoValue(v));
                }
            }
            Command::SetIsoMode(m) => {
                if let Some(id) = self.panel_field_id() {
                    self.edit_rep(id, super::reps::RepEdit::IsoRelative(m == IsoMode::RelativeToMax));
                }
            }
            Command::SetDarkBackground(d) => {
                self.settings.dark_background = d;
                self.settings.background_rgb = None;
                self.view.dirty.style = true;
            }
            Command::ShowCell(on) => {
                self.settings.show_cell = on;
                if let Some(doc) = self.document_mut() {
                    doc.show_cell = Some(on);
                }
                self.rebuild_atoms();
            }
            Command::MakeWhole(on) => self.set_make_whole(on),
            Command::FitFrames(fit) => self.set_fit(fit),
            Command::SetDepthCue(d) => {
                self.settings.depth_cue = d.clamp(0.0, 1.0);
                self.view.dirty.style = true;
            }
            Command::SetEnergiesInEv(e) => self.settings.energies_in_ev = e,
            Command::SetShowSlice(s) => self.show_main_slice(s),
            Command::SetSlicePlane(p) => self.set_slice_plane(p),
            Command::ResetCamera => {
                let aspect = self.aspect();
                if let Some((center, radius)) = self.scene_sphere() {
                    // A three-quarter view: planar molecules and their orbitals show depth.
                    let camera = &mut self.view.camera;
                    camera.rotation = glam::Quat::IDENTITY;
                    camera.orbit(0.5, 0.6);
                    camera.fit_to_sphere(Vec3::from(center), radius, aspect);
                }
            }
            Command::Orbit([dx, dy]) => self.view.camera.orbit(dx, dy),
            Command::Pan([dx, dy]) => self.view.camera.pan(dx, dy),
            Command::Zoom(f) => self.view.camera.zoom(f),
            Command::SetCamera(spec) => {
                spec.apply(&mut self.view.camera);
                self.view.fit_pending = false;
            }
            Command::Pick { pixel, size_px } => self.pick_at(pixel, size_px),
            Command::CancelJobs => {
                self.fields.cancel_all();
                let (solve, back) = self.cancel_pb();
                self.panels.status = if self.cancel_vertex_values() {
                    super::esp_model::COLOURS_CANCELLED.into()
                } else if let Some(back) = back {
                    super::pb::returned_to(&back)
                } else if solve {
                    super::pb::SOLVE_CANCELLED.into()
                } else {
                    "cancelled".into()
                };
            }
            Command::FetchPdb(id) => self.start_fetch(&id),
            Command::CancelFetch => self.cancel_fetch(),
            Command::CancelSave => {
                if let Some(job) = &self.panels.save_job {
                    job.cancel();
                }
            }
            Command::SetSurfaceColor(choice) => {
                if let Some(id) = self.panel_field_id() {
                    self.edit_rep(id, super::reps::RepEdit::ColorBy(choice));
                }
            }
            Command::FitToSelection(text) => self.fit_to_selection(&text),
            Command::FollowOrbital(on) => {
                let was_following = self.doc.follow.is_some();
                self.doc.follow = None;
                if on {
                    self.start_follow();
                } else if was_following {
                    // The status line said it was followed: it says it no longer is.
                    self.panels.status = "orbital no longer followed: each frame shows the same orbital number".into();
                }
                self.mark_fields_stale(|f| matches!(f, super::fields::FieldChoice::Orbital { .. }));
                self.view.dirty.style = true;
            }
            Command::SetLatticePoints(n) => {
                self.settings.lattice_points = n.clamp(16, 512);
                self.mark_fields_stale(|f| f.needs_wavefunction());
            }
            Command::SetCacheBudgetMib(mib) => {
                self.settings.cache_budget_mib = mib.clamp(16, 1 << 20);
                self.fields
                    .set_cache_budget(self.settings.cache_budget_mib as usize * (1 << 20));
            }
            Command::SetComputeEveryFrame(on) => self.settings.compute_every_frame = on,
            Command::SetOrbitalsOn(on) => self.set_orbitals_on(on),
            Command::SetColormap(c) => {
                self.settings.colormap = c;
                self.view.dirty.slice = true;
                self.view.dirty.surface_color = true;
            }
            Command::StartRdf => match &self.doc.document {
                Some(doc) => {
                    self.panels.rdf.reveal = true;
                    if let Err(e) = self.panels.rdf.start(doc, self.fields.device_workers()) {
                        self.error(e);
                    }
                }
                None => self.error("RDF: open a trajectory first".into()),
            },
            Command::SetRdfForm {
                selection1,
                selection2,
                r_max_angstrom,
                bins,
            } => {
                let rdf = &mut self.panels.rdf;
                rdf.sel1_text = selection1;
                rdf.sel2_text = selection2;
                rdf.r_max_angstrom = r_max_angstrom;
                rdf.bins = bins;
            }
            Command::SetIlsForm(form) => self.panels.ils.form = form,
            Command::StartIls => self.start_ils(),
            Command::PauseIls(paused) => self.pause_ils(paused),
            Command::CancelIls => self.cancel_ils(),
            Command::IlsPath(map, to_end) => self.ils_path(map, None, to_end),
            Command::IlsMarkPathEnd(map) => self.ils_mark_path_end(map, None),
            Command::IlsPathFromAtom(map, atom, to_end) => self.ils_path(map, Some(atom), to_end),
            Command::IlsMarkPathEndAtAtom(map, atom) => self.ils_mark_path_end(map, Some(atom)),
            Command::IlsClearPaths(map) => self.ils_clear_paths(map),
            Command::CancelRdf => {
                self.panels.rdf.cancel();
                self.panels.status = "RDF cancelled".into();
            }
            Command::ToggleHelp => self.panels.show_help = !self.panels.show_help,
            Command::Screenshot(p) => self.view.screenshot_requests.push(p),
            // What the user adds is what the panels edit next.
            Command::AddRep(spec) => match self.add_rep(&spec) {
                Ok(id) => self.select_rep(id),
                Err(e) => self.error(e),
            },
            Command::AddFieldRep(f) => {
                let before = self.doc.reps.list.len();
                self.add_field_rep(f);
                if self.doc.reps.list.len() > before
                    && let Some(id) = self.doc.reps.list.last().map(|r| r.id)
                {
                    self.select_rep(id);
                }
            }
            Command::DuplicateRep(id) => self.duplicate_rep(id),
            Command::DeleteRep(id) => self.delete_rep(id),
            Command::MoveRep(id, to) => self.move_rep(id, to),
            Command::EditRep(id, edit) => self.edit_rep(id, edit),
            Command::SaveRepsAsDefault => self.save_reps_as_default(),
            Command::ResetReps => self.reset_reps(),
            Command::SelectRep(id) => self.select_rep(id),
            Command::AddOrbitalRep(index) => self.show_orbital(self.doc.spin, index, true),
            c @ (Command::SetClickMode(_)
            | Command::AddMeasurement(_)
            | Command::AddRmsdMeasurement { .. }
            | Command::AddSelectionMeasurement { .. }
            | Command::DeleteMeasurement(_)
            | Command::ClearMeasurements
            | Command::PlotMeasurement(_)
            | Command::ExportMeasurementCsv(..)
            | Command::ToggleLabel(_)
            | Command::LabelSelection(_)
            | Command::ClearLabels
            | Command::SetLabelFormat(_)
            | Command::Undo
            | Command::Redo
            | Command::SettleHistory
            | Command::SetBackgroundColor(_)
            | Command::PickAtom(_)) => self.apply_tool(c),
            c @ (Command::ShowExportDialog(..)
            | Command::ExportImage(_)
            | Command::StartMovie(_)
            | Command::CancelMovie) => self.apply_export(c),
        }
    }

    /// Opens a loaded system as the current document.
    pub fn open_system(&mut self, name: String, system: System) {
        self.open_system_with_qm_region(name, system, None);
    }

    /// Opens a loaded system whose wavefunctions describe a QM region of it (`io::load_with`).
    pub fn open_system_with_qm_region(
        &mut self,
        name: String,
        system: System,
        region: Option<crate::analysis::qm_region::QmRegion>,
    ) {
        let id = self.doc.next_id;
        self.doc.next_id += 1;
        let spacing = self.settings.potential_spacing_angstrom;
        let whole = self.settings.make_whole;
        let replaced = self.session();
        match Document::from_system(id, name, system, spacing, whole).map(|d| d.with_qm_region(region)) {
            Ok(doc) => {
                let mut status = format!(
                    "{}: {} atoms, {} frame{}{}",
                    doc.name,
                    doc.structure.len(),
                    doc.n_frames,
                    if doc.n_frames == 1 { "" } else { "s" },
                    if doc.wavefunctions.is_empty() {
                        String::new()
                    } else {
                        let n = doc.wavefunctions.len();
                        format!(", {n} wavefunction{}", if n == 1 { "" } else { "s" })
                    }
                );
                if let Some(qm) = &doc.qm {
                    status.push_str("; ");
                    status.push_str(&qm.summary());
                }
                if doc
                    .warnings
                    .iter()
                    .any(|w| w.starts_with(crate::model::charges::NOTE_START))
                {
                    status.push_str("; CHARMM22 charges by residue and atom name (the Files section says more)");
                }
                for w in &doc.warnings {
                    tracing::info!("{w}");
                }
                self.panels.status = status;
                self.tools.reset_for_document();
                self.keep_replaced_document(replaced);
                self.panels.rdf.forget_document();
                self.clear_reps();
                // Poisson-Boltzmann for charges with radii from the files, else eps = 4r.
                self.esp.model = super::esp_model::EspModel::for_structure(&doc.structure);
                self.esp.revision = self.esp.revision.wrapping_add(1);
                // The Add menu's selection: a solvated system's solute, not its water box.
                self.panels.new_selection = if doc.solute_mask.is_some() {
                    SOLUTE_SELECTION.into()
                } else {
                    "all".into()
                };
                self.doc.document = Some(doc);
                self.doc.follow = None;
                self.view.pick = None;
                self.view.timeline.playing = false;
                self.doc.spin = Spin::Alpha;
                self.doc.orbital = self.homo_index(Spin::Alpha);
                self.reset_reps();
                self.view.fit_pending = true;
                self.panels.scroll_to_orbital = true;
            }
            Err(e) => self.error(e.to_string()),
        }
    }

    fn close_document(&mut self) {
        let replaced = self.session();
        self.tools.reset_for_document();
        self.keep_replaced_document(replaced);
        self.panels.rdf.forget_document();
        self.clear_reps();
        self.doc.document = None;
        self.doc.orbital = None;
        self.doc.follow = None;
        self.view.pick = None;
        self.view.spheres.clear();
        self.view.cylinders.clear();
        self.view.lines.clear();
        self.view.dirty = super::state::Dirty {
            atoms: true,
            meshes: true,
            style: true,
            slice: true,
            surface_color: true,
        };
    }

    pub(crate) fn open_files(&mut self, paths: &[PathBuf], qm_region: Option<String>) {
        // A folder or a pattern gives its files (a folder of Molden frames opens as a series).
        let files = match super::open_paths::expand(paths) {
            Ok(files) => files,
            Err(e) => {
                self.error(e);
                return;
            }
        };
        match crate::io::load_with(
            &files,
            &crate::io::LoadOptions {
                qm_region: qm_region.clone(),
            },
        ) {
            Ok((system, region)) => {
                let name = paths
                    .first()
                    .and_then(|p| p.file_name())
                    .map(|n| n.to_string_lossy().into_owned())
                    .unwrap_or_default();
                self.settings.push_recent(paths);
                self.open_system_with_qm_region(name, system, region);
                if let Some(doc) = self.document_mut() {
                    doc.qm_selection = qm_region;
                }
            }
            Err(e) => self.error(e.to_string()),
        }
    }

    /// Makes molecules whole across the periodic box in every frame, or shows frames as written:
    /// the document takes a new id, so every field, surface and cartoon of the old coordinates is
    /// computed again.
    fn set_make_whole(&mut self, on: bool) {
        self.settings.make_whole = on;
        let id = self.doc.next_id;
        let Some(doc) = self.doc.document.as_mut() else {
            return;
        };
        if !doc.periodic {
            return;
        }
        let refit = doc.fit.as_ref().map(|f| f.selection.clone());
        match doc.set_whole(on) {
            Ok(note) => {
                self.doc.next_id += 1;
                doc.id = id;
                self.panels.status = note.unwrap_or_else(|| {
                    if on {
                        "molecules made whole across the periodic box".into()
                    } else {
                        "coordinates as the file wrote them".into()
                    }
                });
            }
            Err(e) => {
                self.error(e.to_string());
                return;
            }
        }
        self.fields.clear_cache();
        self.mark_fields_stale(|_| true);
        self.load_potential_windows(None);
        self.rebuild_atoms();
        if let Some(selection) = refit {
            // The reference frame moved with the molecules: fit onto it again.
            let said = std::mem::take(&mut self.panels.status);
            self.set_fit(Some(Some(selection)));
            self.panels.status = said;
        }
    }

    pub(crate) fn set_frame(&mut self, i: usize) {
        let Some(doc) = self.document_mut() else {
            return;
        };
        if let Err(e) = doc.set_frame(i) {
            self.error(e.to_string());
            return;
        }
        self.load_potential_windows(None);
        self.rebuild_atoms();
        self.apply_follow();
    }

    /// Reads the frames the running-average potentials of the representations need at frame
    /// `index` (the current frame when `None`).
    pub(crate) fn load_potential_windows(&mut self, index: Option<usize>) {
        let windows: Vec<u16> = self
            .doc
            .reps
            .fields()
            .filter(|(r, _)| r.visible)
            .filter_map(|(_, f)| match f.field {
                super::fields::FieldChoice::PotentialMean { frames } => Some(frames),
                _ => None,
            })
            .collect();
        let Some(doc) = self.doc.document.as_mut() else {
            return;
        };
        let index = index.unwrap_or(doc.frame_index);
        for frames in windows {
            if let Err(e) = doc.load_potential_window(index, frames) {
                self.error(format!("running-average potential: {e}"));
                return;
            }
        }
    }

    fn fit_to_selection(&mut self, text: &str) {
        let Some(doc) = self.document() else {
            return;
        };
        let selection = match crate::model::select::Selection::parse(text) {
            Ok(s) => s,
            Err(e) => {
                self.error(format!("fit to selection: {e}"));
                return;
            }
        };
        let picked: Vec<[f32; 3]> = selection
            .indices(&doc.structure, Some(&doc.frame))
            .iter()
            .filter_map(|&i| doc.frame.positions_angstrom.get(i as usize).copied())
            .collect();
        match super::atoms::bounding_sphere(&picked, 2.0) {
            Some((center, radius)) => {
                let aspect = self.aspect();
                self.view.camera.fit_to_sphere(Vec3::from(center), radius, aspect);
                self.panels.status = format!("view fitted to {} atoms of '{text}'", picked.len());
            }
            None => self.error(format!("fit to selection: '{text}' selects no atoms")),
        }
    }

    /// Feeds the RDF computation the next frames and takes its finished ones; true when its plot
    /// changed.
    pub fn pump_rdf(&mut self) -> bool {
        match self.panels.rdf.pump(self.doc.document.as_mut()) {
            Ok(changed) => changed,
            Err(e) => {
                self.error(e);
                true
            }
        }
    }

    /// Advances playback by `dt` seconds; returns true when the frame changed.
    pub fn tick(&mut self, dt_seconds: f32) -> bool {
        let Some(doc) = self.document() else {
            return false;
        };
        if !self.view.timeline.playing || doc.n_frames < 2 {
            return false;
        }
        let (i, n) = (doc.frame_index, doc.n_frames);
        // "Compute every frame" (movie export): hold the frame until its surfaces are shown.
        // Otherwise playback keeps its rate and the surfaces follow as fast as frames are computed.
        if self.settings.compute_every_frame && self.fields.can_compute() && self.reps_waiting() {
            return false;
        }
        self.view.timeline.accumulator += dt_seconds.clamp(0.0, 1.0);
        let step = 1.0 / self.view.timeline.fps.max(0.5);
        if self.view.timeline.accumulator < step {
            return false;
        }
        self.view.timeline.accumulator = 0.0;
        if i + 1 >= n {
            if self.view.timeline.looping {
                self.set_frame(0);
            } else {
                self.view.timeline.playing = false;
                return false;
            }
        } else {
            self.set_frame(i + 1);
        }
        true
    }

    fn pick_at(&mut self, pixel: [f32; 2], size_px: [u32; 2]) {
        if self.document().is_none() {
            return;
        }
        let (atom, surface) = self.pick_target(pixel, size_px);
        self.pick_atom_on_surface(atom, surface.as_ref());
    }

    /// The atom drawn nearest the eye at `pixel` of a view of `size_px`, if any: an atom's sphere,
    /// a shown cartoon's residue (its CA, or a nucleotide's P) within
    /// [`CARTOON_PICK_RADIUS_ANGSTROM`] of the ray, as PyMOL and ChimeraX pick a cartoon, or the
    /// atom of a molecular surface drawn in front of them ([`AppState::surface_hit`]).
    pub fn atom_at(&self, pixel: [f32; 2], size_px: [u32; 2]) -> Option<usize> {
        self.pick_target(pixel, size_px).0
    }

    /// [`AppState::atom_at`], with the molecular surface hit when a surface is what was clicked.
    fn pick_target(
        &self,
        pixel: [f32; 2],
        size_px: [u32; 2],
    ) -> (Option<usize>, Option<super::surface_pick::SurfaceHit>) {
        let Some(doc) = self.document() else {
            return (None, None);
        };
        let (o, d) = self.view.camera.ray_through_pixel(pixel, size_px);
        let centers: Vec<[f32; 3]> = self.view.spheres.iter().map(|s| s.center_angstrom).collect();
        let radii: Vec<f32> = self.view.spheres.iter().map(|s| s.radius_angstrom).collect();
        // Spheres skip atoms with non-finite coordinates; map back through positions.
        let sphere = crate::render::camera::pick_sphere(o, d, &centers, &radii).and_then(|(k, t)| {
            let c = centers.get(k)?;
            Some((doc.frame.positions_angstrom.iter().position(|p| p == c)?, t))
        });
        let guides: Vec<usize> = self
            .reps()
            .cartoons()
            .filter(|(r, _)| r.visible)
            .flat_map(|(_, c)| c.guide_atoms())
            .filter(|&a| {
                doc.frame
                    .positions_angstrom
                    .get(a)
                    .is_some_and(|p| p.iter().all(|x| x.is_finite()))
            })
            .collect();
        let guide_centers: Vec<[f32; 3]> = guides.iter().map(|&a| doc.frame.positions_angstrom[a]).collect();
        let guide_radii = vec![CARTOON_PICK_RADIUS_ANGSTROM; guides.len()];
        let cartoon =
            crate::render::camera::pick_sphere(o, d, &guide_centers, &guide_radii).map(|(k, t)| (guides[k], t));
        let nearest = match (sphere, cartoon) {
            (Some(a), Some(b)) => Some(if b.1 < a.1 { b } else { a }),
            (a, b) => a.or(b),
        };
        match self.surface_hit(o, d) {
            Some(hit) if nearest.is_none_or(|(_, t)| hit.distance_angstrom < t) => (hit.atom, Some(hit)),
            // Nothing under the pointer itself: the atom drawn nearest it on the screen, within a
            // few pixels, as VMD picks (thin sticks seen from afar are narrower than a click).
            _ if nearest.is_none() => (self.atom_near_pixel(pixel, size_px), None),
            _ => (nearest.map(|(atom, _)| atom), None),
        }
    }

    /// The atom drawn as a sphere whose centre lies nearest `pixel` on the screen, within
    /// [`PICK_SLACK_PX`] (the one nearer the eye of two as near).
    fn atom_near_pixel(&self, pixel: [f32; 2], size_px: [u32; 2]) -> Option<usize> {
        let cam = &self.view.camera;
        let mut best: Option<(f32, f32, [f32; 3])> = None;
        for s in &self.view.spheres {
            let Some((p, depth)) = cam.project_to_pixel(glam::Vec3::from_array(s.center_angstrom), size_px) else {
                continue;
            };
            let gap = ((p[0] - pixel[0]).powi(2) + (p[1] - pixel[1]).powi(2)).sqrt();
            if gap <= PICK_SLACK_PX && best.is_none_or(|(g, z, _)| (gap, depth) < (g, z)) {
                best = Some((gap, depth, s.center_angstrom));
            }
        }
        let (_, _, c) = best?;
        self.document()?.frame.positions_angstrom.iter().position(|p| *p == c)
    }

    /// What a click on `atom` (or on empty space) does: the pick and its highlight, and the click
    /// mode's label or measurement step.
    pub(crate) fn pick_atom(&mut self, atom: Option<usize>) {
        self.pick_atom_on_surface(atom, None);
    }

    /// [`AppState::pick_atom`] for a click on a molecular surface: the read-out gives the surface's
    /// value where it was clicked.
    fn pick_atom_on_surface(&mut self, atom: Option<usize>, surface: Option<&super::surface_pick::SurfaceHit>) {
        let n_atoms = self.document().map_or(0, |d| d.structure.len());
        let atom = atom.filter(|&a| a < n_atoms);
        let at_point = surface.and_then(|h| self.describe_surface_hit(h));
        self.view.pick = atom.map(|atom| PickInfo {
            atom,
            text: self.describe_atom_reading(atom, at_point.clone()),
        });
        self.pick_for_tools(atom);
    }

    /// "atom 3 C2 (C) ETH 1 chain A, charge -0.120 e, HOMO (orbital 9) 1.2e-2 a.u." for the status
    /// line.
    pub fn describe_atom(&self, atom: usize) -> String {
        self.describe_atom_reading(atom, None)
    }

    /// [`AppState::describe_atom`], with `surface_reading` in place of the nearest coloured
    /// surface's value when given.
    fn describe_atom_reading(&self, atom: usize, surface_reading: Option<String>) -> String {
        let Some(doc) = self.document() else {
            return String::new();
        };
        let s = &doc.structure;
        let mut text = match self.qm_atom_name(atom) {
            // A wavefunction's atoms have no residue: "atom 3 C3 (C)".
            Some(name) => format!(
                "atom {} {name} ({})",
                atom + 1,
                s.elements.get(atom).map(|e| e.symbol()).unwrap_or("?")
            ),
            None => format!(
                "atom {} {} ({}) {} {}",
                atom + 1,
                s.names.get(atom).map(|n| n.to_string()).unwrap_or_default(),
                s.elements.get(atom).map(|e| e.symbol()).unwrap_or("?"),
                s.resnames.get(atom).map(|n| n.to_string()).unwrap_or_default(),
                s.resid_text(atom)
            ),
        };
        if let Some(c) = s.chains.get(atom).filter(|c| !c.is_empty()) {
            text.push_str(&format!(" chain {c}"));
        }
        if let Some(q) = s.charges_e.as_ref().and_then(|q| q.get(atom)) {
            text.push_str(&format!(", charge {q:+.3} e"));
        }
        if let Some(b) = s.bfactors.as_ref().and_then(|b| b.get(atom)).filter(|b| b.is_finite()) {
            text.push_str(&format!(", B {b:.1} Å²"));
        }
        // The field named, with its unit ("HOMO (orbital 5) -0.012 a.u."); a molecular surface's
        // level is the surface's own construction, not a value anyone reads, so it is not given.
        let readable = |key: &super::fields::FieldKey| !matches!(key.field, super::fields::FieldChoice::MolSurf { .. });
        if let (Some(p), Some((key, grid))) = (doc.frame.positions_angstrom.get(atom), self.shown_field())
            && readable(key)
            && let Some(v) = super::values::sample_grid(grid, *p)
        {
            let unit = self.field_unit(key.field);
            text.push_str(&format!(", {} {}", self.describe_field(key.field), unit.format(v)));
        } else if let (Some(p), Some(key)) = (
            doc.frame.positions_angstrom.get(atom),
            self.main_field_rep()
                .and_then(|f| f.pipeline.device_shown.as_ref())
                .map(|(k, _)| *k),
        ) && readable(&key)
            && let Some(v) = self.field_at_point(&key, p.map(f64::from))
        {
            // Computed on the render device (no host lattice): evaluated exactly at the atom.
            let unit = self.field_unit(key.field);
            text.push_str(&format!(
                ", {} {} (at the atom)",
                self.describe_field(key.field),
                unit.format(v as f32)
            ));
        }
        // A surface coloured by a potential or a map: its value where the surface passes nearest.
        if let Some(reading) = surface_reading {
            text.push_str(&reading);
        } else if let Some(p) = doc.frame.positions_angstrom.get(atom)
            && let Some(near) = self.surface_colour_near(*p)
        {
            text.push_str(&near);
        }
        text
    }

    /// The colouring value of a shown coloured surface at its vertex nearest to `p` (Angstrom),
    /// when one lies within [`SURFACE_READ_RADIUS_ANGSTROM`]: ", potential (Poisson-Boltzmann)
    /// -1.84 kT/e on the surface 1.9 Å away". Surfaces extracted on the render device have no
    /// vertices on the host and give none.
    fn surface_colour_near(&self, p: [f32; 3]) -> Option<String> {
        let doc = self.document()?;
        // (squared distance, value, colouring field) of the nearest vertex with a value.
        let mut best: Option<(f32, f32, super::fields::FieldChoice)> = None;
        for rep in self.reps().list.iter().filter(|r| r.visible) {
            let super::reps::RepKind::Field(f) = &rep.kind else {
                continue;
            };
            let Some(coloring) = f.coloring else {
                continue;
            };
            let (lobes, values) = f.drawn_lobes();
            let grid = f.color_grid(doc);
            for (k, mesh) in lobes.iter().enumerate() {
                let Some(mesh) = mesh else { continue };
                let Some((i, d2)) = nearest_vertex(&mesh.positions_angstrom, p) else {
                    continue;
                };
                if d2 > SURFACE_READ_RADIUS_ANGSTROM.powi(2) || best.is_some_and(|b| b.0 <= d2) {
                    continue;
                }
                let at_vertex = values.and_then(|v| v[k].as_ref()).and_then(|v| v.get(i).copied());
                let value = at_vertex
                    .or_else(|| super::values::sample_grid(grid.as_deref()?, *mesh.positions_angstrom.get(i)?));
                if let Some(v) = value.filter(|v| v.is_finite()) {
                    best = Some((d2, v, coloring.source));
                }
            }
        }
        let (d2, v, source) = best?;
        Some(format!(
            ", {} {} on the surface {:.1} Å away",
            self.describe_field(source),
            self.coloring_unit(source).format(v),
            d2.sqrt()
        ))
    }

    /// `key`'s field (at the current frame) at one point, by the CPU engine.
    fn field_at_point(&self, key: &super::fields::FieldKey, p_angstrom: [f64; 3]) -> Option<f64> {
        let job = self.field_job(key)?;
        let p = crate::model::units::bohr_from_angstrom3(p_angstrom);
        crate::compute::cpu::evaluate_points(&job.field, &job.input, &[p])
            .ok()?
            .first()
            .copied()
    }
}

/// How far from a picked atom a coloured surface is read ([`AppState::describe_atom`]): a surface
/// atom's nearest vertex lies about its radius plus the probe's away; a buried atom's, further.
pub const SURFACE_READ_RADIUS_ANGSTROM: f32 = 4.0;

/// The vertex of `positions` nearest to `p` and its squared distance (Angstrom^2).
fn nearest_vertex(positions: &[[f32; 3]], p: [f32; 3]) -> Option<(usize, f32)> {
    let mut best: Option<(usize, f32)> = None;
    for (i, v) in positions.iter().enumerate() {
        let d2 = (v[0] - p[0]).powi(2) + (v[1] - p[1]).powi(2) + (v[2] - p[2]).powi(2);
        if best.is_none_or(|b| d2 < b.1) {
            best = Some((i, d2));
        }
    }
    best
}

/// The Add menu's selection on a system with explicit water or electrolyte ions.
pub const SOLUTE_SELECTION: &str = "not water and not ion";
