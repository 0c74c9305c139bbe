//! The one update loop of the representation list.
//!
//! [`AppState::update_reps`] runs once per UI frame (the window, `render`, the playback bench):
//! every visible field representation asks for its field at the current frame in its own slot
//! (served by the worker pool, or by the render device where it computes the field itself: `device`)
//! whenever the frame or its settings change, looks ahead to the next frame while playing, keeps
//! its previous picture until its new grid arrives, and makes its isosurfaces (inline, on the
//! isosurface thread in its own lane, or — with GPU surfaces — in the draw stage). While playback
//! drops frames, a representation whose request is in flight lets it finish and shows its newest
//! finished frame meanwhile. A representation whose surfaces are coloured by a computed field
//! (`SurfaceColoring`) asks for that field at the same frame and lattice in its colour slot; one
//! coloured by a potential (of point charges, or the wavefunction's own) asks instead for its values
//! at the vertices of the lobes shown (`analysis::vertex_values`, on the vertex-values thread when
//! the viewer started it, keyed by lobes and colouring field, latest wins, cached per
//! representation); a wavefunction's potential falls back to its lattice, sampled trilinearly and
//! said once, where the surfaces outgrow `analysis::vertex_values::qm_vertices_fit` or the
//! wavefunction is a QM region's (placed on MD frames); a cartoon coloured by a field asks for its
//! values at the vertices of its mesh the same way (`cartoon`). The
//! requests of one update leave together (`FieldService::flush`), so the orbitals several
//! representations ask for at one frame are computed in one batch.
//! [`AppState::rebuild_atoms`] turns the visible atom representations
//! into sphere, cylinder and line instances (their union, each in its own style and colours).

use super::{AtomsRep, FieldStyle, RepKind, ValuesKey};
use crate::app::atoms;
use crate::app::fields::{FieldChoice, FieldKey, MeshKey};
use crate::app::state::AppState;
use crate::jobs::lanes::Done;
use crate::jobs::mesher::{LobesRequest, LobesResult};
use crate::jobs::vertex_values::{VertexSource, VertexValuesRequest, VertexValuesResult};
use crate::model::{Frame, Grid3};
use std::sync::Arc;

/// The next frame playback shows, read once per update for every look-ahead.
pub(super) struct NextFrame {
    index: usize,
    frame: Frame,
}

impl AppState {
    /// Drives every field and cartoon representation one step: requests, look-ahead, arrivals,
    /// surfaces, cartoon meshes (`cartoon`).
    /// Returns true when what a representation shows changed.
    pub fn update_reps(&mut self) -> bool {
        // The list itself changed (added, removed, reordered, hidden): the draw stage uploads again,
        // but the return value speaks only of what the representations show.
        let list_changed = std::mem::take(&mut self.doc.reps.changed);
        let mut changed = false;
        if let Some(w) = self.document().and_then(|d| d.take_qm_warning()) {
            self.error(w);
        }
        let arrived = !self.fields.poll().is_empty();
        // Frames added to a running ligand-sampling map redraw it.
        self.pump_ils();
        let arrived = self.poll_pb() | arrived;
        // A series' orbital keeps its phase from frame to frame.
        self.refresh_phase();
        let meshed: Vec<LobesResult<FieldKey>> = self.view.mesher.as_mut().map(|m| m.try_recv()).unwrap_or_default();
        let context = self
            .document()
            .map(|d| (d.id, d.frame_index, self.settings.lattice_points));
        let context_changed = std::mem::replace(&mut self.doc.reps.context, context) != context;
        let mut next: Option<Option<NextFrame>> = None;
        let mut built = self.take_cartoons();
        let mut valued = self.take_vertex_values();
        for i in 0..self.doc.reps.list.len() {
            changed |= self.update_field_rep(i, arrived, context_changed, &meshed, &mut next);
            changed |= self.update_surface_atom_colors(i);
            changed |= self.update_cartoon_rep(i, &mut built);
            changed |= self.update_cartoon_values(i, &mut valued);
            if self.field_rep(i).is_some_and(|f| f.colors_by_vertex_values()) {
                changed |= self.update_vertex_colors(i, &mut valued);
            } else {
                self.update_color_field(i);
            }
        }
        // Every representation has asked: this frame's requests (and look-aheads) go out together.
        self.fields.flush();
        if changed || list_changed {
            self.view.dirty.meshes = true;
        }
        changed
    }

    /// One field representation's step (see [`AppState::update_reps`]); true when what it shows
    /// changed.
    fn update_field_rep(
        &mut self,
        i: usize,
        arrived: bool,
        context_changed: bool,
        meshed: &[LobesResult<FieldKey>],
        next: &mut Option<Option<NextFrame>>,
    ) -> bool {
        let Some(rep) = self.doc.reps.list.get(i) else {
            return false;
        };
        let (id, visible) = (rep.id, rep.visible);
        let RepKind::Field(f) = &rep.kind else {
            return false;
        };
        let (field, slot, stale, asked) = (f.field, f.pipeline.slot, f.pipeline.stale, f.pipeline.asked);
        let shown_key = f.pipeline.shown.as_ref().map(|(k, _)| *k);
        let playing = self.view.timeline.playing;
        let mut changed = self.take_meshed(i, meshed.iter().find(|r| r.lane == id.0));
        if !visible {
            if self.fields.pending(slot).is_some() || self.fields.looking_ahead(slot).is_some() {
                self.fields.cancel(slot);
            }
            self.fields.device.forget(slot);
            if let Some(p) = self.pipeline_mut(i) {
                p.asked = None;
                p.meshing = None;
                if std::mem::take(&mut p.stale) {
                    changed = true;
                }
            }
            return changed;
        }
        let orphaned = self.fields.take_orphaned(slot);
        // What arrived for this slot (kept aside, so a crowded cache cannot evict it first).
        let delivered = self.fields.take_delivered(slot);
        let leaving_preview = self
            .field_rep(i)
            .is_some_and(|f| f.pipeline.preview && !playing && f.pipeline.meshing.is_none());
        if !(context_changed || stale || orphaned || arrived || delivered.is_some() || leaving_preview) {
            return changed;
        }
        let Some(key) = self.document().and_then(|d| {
            let settings = self.field_settings();
            d.field_key_at(field, d.frame_index, &d.frame, settings)
        }) else {
            if let Some(p) = self.pipeline_mut(i) {
                changed |= p.clear();
            }
            return changed;
        };
        // The Poisson-Boltzmann potential comes from its own worker (`app::pb`), latest wins.
        if crate::app::pb::is_pb(field) {
            let key = self.pb_key(key);
            if shown_key == Some(key) && !stale {
                return changed;
            }
            let Some(grid) = self.pb_grid(key) else {
                return changed;
            };
            return changed | self.show_grid(i, key, grid, leaving_preview);
        }
        // The render device computes it itself where it can (`device`); else the pool serves it.
        if let Some(shown) = self.serve_on_device(i, key, next) {
            return changed | shown;
        }
        let dropping = playing && !self.settings.compute_every_frame;
        let mut grid = if let FieldChoice::Volume(v) = field {
            self.document().and_then(|d| d.grids.get(v).cloned())
        } else if let FieldChoice::Ils(m) = field {
            self.document()
                .and_then(|d| d.ils_maps.get(usize::from(m)))
                .and_then(|m| m.grid.clone())
        } else if let Some((_, g)) = delivered.as_ref().filter(|(k, _)| *k == key) {
            Some(Arc::clone(g))
        } else if dropping && self.fields.pending(slot).is_some_and(|p| p != key) {
            // Playing faster than frames are computed: let the request in flight finish (a new one
            // would cancel it and nothing would ever be shown); the frames in between are dropped.
            None
        } else if orphaned || asked != Some(key) {
            // Asked once per key and change (a failed request is not repeated every frame).
            let job = self.field_job(&key);
            if let Some(p) = self.pipeline_mut(i) {
                p.asked = Some(key);
            }
            self.fields.request(slot, key, || job)
        } else {
            self.fields.cached_for(slot, key)
        };
        if playing && !matches!(field, FieldChoice::Volume(_) | FieldChoice::Ils(_)) {
            self.look_ahead(field, slot, next, false);
        }
        let mut key = key;
        if grid.is_none() && dropping {
            // The newest finished frame of its own field while the playhead's is computed.
            let own = delivered
                .filter(|(k, _)| k.document == key.document && k.field == key.field && k.dims == key.dims)
                .or_else(|| self.fields.latest_other_frame(key));
            if let Some((k, g)) = own.filter(|(k, _)| Some(*k) != shown_key) {
                key = k;
                grid = Some(g);
            }
        }
        let Some(grid) = grid else {
            // Keep the previous picture until the new field arrives.
            return changed;
        };
        let grid = self.placed_grid(&key, grid);
        changed | self.show_grid(i, key, grid, leaving_preview)
    }

    /// Representation `i`'s computed colouring field at the current frame: asked for once per key in
    /// its colour slot, kept until the next frame's arrives; the draw stage takes it up.
    fn update_color_field(&mut self, i: usize) {
        let Some(rep) = self.doc.reps.list.get(i) else {
            return;
        };
        let RepKind::Field(f) = &rep.kind else {
            return;
        };
        // A volume coloured onto surfaces that did not exist yet: its range from their values
        // once they do (the whole map's would be set by the values near the nuclei).
        if let (Some(c @ super::SurfaceColoring { range: None, .. }), true) = (f.coloring, f.has_lobes())
            && let FieldChoice::Volume(v) = c.source
            && let Some(grid) = self.document().and_then(|d| d.grids.get(v)).cloned()
        {
            let range = super::ranges::surface_value_range(&f.pipeline.lobes, &grid);
            if let Some(RepKind::Field(f)) = self.doc.reps.list.get_mut(i).map(|r| &mut r.kind)
                && let Some(c) = f.coloring.as_mut()
            {
                c.range = Some(range);
            }
            self.view.dirty.surface_color = true;
            return;
        }
        let (Some(c), Some(channel), true) = (f.coloring, f.pipeline.color.as_ref(), rep.visible) else {
            return;
        };
        if matches!(c.source, FieldChoice::Volume(_)) {
            return;
        }
        let (slot, asked) = (channel.slot, channel.asked);
        let shown = channel.shown.as_ref().map(|(k, _)| *k);
        let Some(key) = self.document().and_then(|d| {
            let settings = self.field_settings();
            d.field_key_at(c.source, d.frame_index, &d.frame, settings)
        }) else {
            return;
        };
        let pb = crate::app::pb::is_pb(c.source);
        let key = if pb { self.pb_key(key) } else { key };
        if shown == Some(key) {
            return;
        }
        let delivered = self.fields.take_delivered(slot);
        let grid = if pb {
            self.pb_grid(key)
        } else if let Some((_, g)) = delivered.filter(|(k, _)| *k == key) {
            Some(g)
        } else if asked != Some(key) {
            let job = self.field_job(&key);
            if let Some(c) = self.pipeline_mut(i).and_then(|p| p.color.as_mut()) {
                c.asked = Some(key);
            }
            self.fields.request(slot, key, || job)
        } else {
            self.fields.cached_for(slot, key)
        };
        let Some(grid) = grid else {
            return;
        };
        let grid = self.placed_grid(&key, grid);
        if let Some(RepKind::Field(f)) = self.doc.reps.list.get_mut(i).map(|r| &mut r.kind) {
            if let Some(c) = f.coloring.as_mut()
                && c.range.is_none()
            {
                c.range = Some(if pb {
                    let r = crate::app::pb::PB_RANGE_KT_PER_E;
                    [-r, r]
                } else {
                    super::ranges::surface_value_range(&f.pipeline.lobes, &grid)
                });
            }
            if let Some(c) = f.pipeline.color.as_mut() {
                c.shown = Some((key, grid));
            }
        }
        self.view.dirty.surface_color = true;
    }

    /// Representation `i`'s colours by a potential at the vertices (of point charges, or the
    /// wavefunction's own): its values at the vertices of the lobes shown, taken from the
    /// vertex-values thread, from the cache, or asked for (on that thread in the representation's
    /// lane, latest wins, else here). The lobes stay uncoloured until their values arrive; values
    /// for lobes no longer shown fill the cache only. True when the colours shown changed.
    fn update_vertex_colors(&mut self, i: usize, valued: &mut Vec<Done<VertexValuesResult<ValuesKey>>>) -> bool {
        if self.qm_potential_falls_back(i) {
            self.update_color_field(i);
            return true;
        }
        let Some(rep) = self.doc.reps.list.get(i) else {
            return false;
        };
        let (lane, visible) = (rep.id.0, rep.visible);
        let RepKind::Field(f) = &rep.kind else {
            return false;
        };
        let want = f.wanted_vertex_key();
        let mut failure = None;
        let mut changed = false;
        if let Some(pos) = valued.iter().position(|d| d.lane == lane) {
            let done = valued.swap_remove(pos).output;
            match (done.key, done.values) {
                (ValuesKey::Lobes(key), Ok(values)) => {
                    if let Some(c) = self.pipeline_mut(i).and_then(|p| p.color.as_mut()) {
                        c.insert_vertices(key, values.clone());
                        if Some(key) == want {
                            c.vertices = Some((key, values));
                            changed = true;
                        }
                    }
                }
                (ValuesKey::Cartoon(_), Ok(_)) => {}
                (_, Err(e)) => failure = Some(e),
            }
        }
        if let Some(e) = failure {
            self.error(format!("surface colours: {e}"));
        }
        let Some(want) = want.filter(|_| visible) else {
            return self.vertex_colors_shown(i, changed);
        };
        let Some(c) = self.pipeline(i).and_then(|p| p.color.as_ref()) else {
            return false;
        };
        if c.vertices.as_ref().is_some_and(|(k, _)| *k == want) {
            return self.vertex_colors_shown(i, changed);
        }
        if let Some(values) = c.cached_vertices(&want) {
            if let Some(c) = self.pipeline_mut(i).and_then(|p| p.color.as_mut()) {
                c.vertices = Some((want, values));
            }
            return self.vertex_colors_shown(i, true);
        }
        let in_flight = self.view.vertex_values.as_ref().is_some_and(|w| w.in_flight(lane));
        if c.cancelled_vertices == Some(want) {
            return self.vertex_colors_shown(i, changed);
        }
        if c.asked_vertices == Some(want) && (in_flight || self.view.vertex_values.is_none()) {
            // Asked already (and failed, when computed here): not again every frame.
            return self.vertex_colors_shown(i, changed);
        }
        // The charges or the wavefunction at the lobes' own frame: the current one, or, while
        // playing drops frames, the earlier one the lobes were computed for (read again from the
        // trajectory), so the surface shown gets its colours without waiting for the timeline.
        let index = want.mesh.field.frame;
        let model = self.vertex_charges_model();
        // The Poisson-Boltzmann solution of the lobes' frame (asked for until it arrives).
        let pb = match want.source {
            FieldChoice::PotentialPb { .. } => match self.pb_grid_of_frame(index) {
                Some(g) => Some(g),
                None => return self.vertex_colors_shown(i, changed),
            },
            _ => None,
        };
        let Some(source) = self.document_mut().and_then(|d| match want.source {
            FieldChoice::WavefunctionPotential => d
                .wavefunction_at(index)
                .map(|wf| VertexSource::Wavefunction(Arc::clone(wf))),
            FieldChoice::PotentialPb { .. } => pb.map(|g| VertexSource::Volume(g, model.offset_angstrom)),
            s if d.frame_index == index => d
                .point_charges_at(s, index, &d.frame, !model.dielectric.is_vacuum())
                .map(|q| VertexSource::Charges(Arc::new(q), model)),
            s => {
                let mut frame = Frame::default();
                d.read_frame(index, &mut frame).ok()?;
                d.point_charges_at(s, index, &frame, !model.dielectric.is_vacuum())
                    .map(|q| VertexSource::Charges(Arc::new(q), model))
            }
        }) else {
            return self.vertex_colors_shown(i, changed);
        };
        let lobes = self.pipeline(i).map(|p| p.lobes.clone()).unwrap_or_default();
        if let Some(c) = self.pipeline_mut(i).and_then(|p| p.color.as_mut()) {
            c.asked_vertices = Some(want);
        }
        let request = VertexValuesRequest {
            key: ValuesKey::Lobes(want),
            lobes,
            source,
        };
        match self.view.vertex_values.as_mut() {
            Some(w) => {
                w.submit(lane, request);
                self.colouring_asked_again();
            }
            None => {
                let done = crate::jobs::vertex_values::compute(request);
                match done.values {
                    Ok(values) => {
                        if let Some(c) = self.pipeline_mut(i).and_then(|p| p.color.as_mut()) {
                            c.insert_vertices(want, values.clone());
                            c.vertices = Some((want, values));
                        }
                        changed = true;
                    }
                    Err(e) => self.error(format!("surface colours: {e}")),
                }
            }
        }
        self.vertex_colors_shown(i, changed)
    }

    /// True when representation `i`, coloured by the wavefunction's own potential at the vertices,
    /// turns to the potential's lattice now: its lobes have more vertices than the lattice has
    /// points (`analysis::vertex_values::qm_vertices_fit`), or the wavefunction is a QM region's
    /// (computed in its own frame and placed on the MD frame's lattice). Said once; the colours
    /// come from the lattice, sampled trilinearly, while the representation keeps that colouring.
    fn qm_potential_falls_back(&mut self, i: usize) -> bool {
        let Some(f) = self.field_rep(i) else {
            return false;
        };
        let Some(want) = f
            .wanted_vertex_key()
            .filter(|k| k.source == FieldChoice::WavefunctionPotential)
        else {
            return false;
        };
        let vertices: usize = f
            .pipeline
            .lobes
            .iter()
            .flatten()
            .map(|m| m.positions_angstrom.len())
            .sum();
        let lattice_points: usize = want.mesh.field.dims.iter().product();
        let why = if self.document().is_some_and(|d| d.qm.is_some()) {
            "the wavefunction describes a QM region placed on the MD frames".to_string()
        } else if !crate::analysis::vertex_values::qm_vertices_fit(vertices, lattice_points) {
            format!("the surfaces have {vertices} vertices, more than the {lattice_points} points of its lattice")
        } else {
            return false;
        };
        if let Some(c) = self.pipeline_mut(i).and_then(|p| p.color.as_mut()) {
            c.lattice_fallback = true;
            c.vertices = None;
            c.asked_vertices = None;
        }
        let msg = format!(
            "surface colours: the wavefunction's potential is sampled trilinearly from its lattice, not \
             evaluated at the vertices ({why})"
        );
        tracing::warn!("{msg}");
        self.panels.status = msg;
        self.view.dirty.meshes = true;
        self.view.dirty.surface_color = true;
        true
    }

    /// After representation `i`'s vertex colours changed (`changed`): its range is chosen from the
    /// values when none is set, and the surfaces are uploaded again with them. Returns `changed`.
    fn vertex_colors_shown(&mut self, i: usize, changed: bool) -> bool {
        if !changed {
            return false;
        }
        if let Some(RepKind::Field(f)) = self.doc.reps.list.get_mut(i).map(|r| &mut r.kind) {
            f.keep_colored_lobes();
        }
        if let Some(RepKind::Field(f)) = self.doc.reps.list.get_mut(i).map(|r| &mut r.kind)
            && f.coloring.is_some_and(|c| c.range.is_none())
        {
            let range = f
                .vertex_values()
                .map(|v| super::ranges::value_range(v.iter().flatten().flat_map(|v| v.iter().copied()).collect()));
            if let (Some(c), Some(range)) = (f.coloring.as_mut(), range) {
                c.range = Some(range);
            }
        }
        self.view.dirty.meshes = true;
        self.view.dirty.surface_color = true;
        true
    }

    /// Takes the vertex-values thread's finished values (newest per representation).
    fn take_vertex_values(&mut self) -> Vec<Done<VertexValuesResult<ValuesKey>>> {
        self.view
            .vertex_values
            .as_mut()
            .map(|w| w.try_recv())
            .unwrap_or_default()
    }

    /// Surface colours by a potential at the vertices and cartoon colours by a field are computed
    /// from now on on a thread of their own. Returns false when the thread cannot start (they are
    /// then computed in the update loop).
    pub fn color_vertices_off_thread(&mut self) -> bool {
        if self.view.vertex_values.is_none() {
            let progress = crate::jobs::vertex_values::VertexProgress::default();
            self.view.vertex_values = crate::jobs::vertex_values::start_counting(progress.clone()).ok();
            self.view.vertex_progress = progress;
        }
        self.view.vertex_values.is_some()
    }

    /// Shows `grid` (for `key`) in representation `i`: at once for a slice, with its surfaces
    /// otherwise (extracted here, on the isosurface thread, or by the draw stage on the GPU).
    fn show_grid(&mut self, i: usize, key: FieldKey, grid: Arc<Grid3>, leaving_preview: bool) -> bool {
        let Some(rep) = self.doc.reps.list.get(i) else {
            return false;
        };
        let id = rep.id;
        let RepKind::Field(f) = &rep.kind else {
            return false;
        };
        let iso = f.absolute_iso(&grid);
        let signed = f.is_signed(&grid);
        let surface = f.style == FieldStyle::Isosurface;
        let p = &f.pipeline;
        let same = p
            .shown
            .as_ref()
            .is_some_and(|(k, g)| *k == key && Arc::ptr_eq(g, &grid));
        if !p.stale && same && p.shown_iso == iso && !leaving_preview && p.meshing.is_none() {
            return false;
        }
        if !surface || self.view.gpu_surfaces {
            self.set_shown(i, key, grid, iso, [None, None], false);
            return true;
        }
        if self.view.mesher.is_some() {
            let preview = self.view.preview_surfaces_while_playing && self.view.timeline.playing;
            let cached = if preview {
                [None, None]
            } else {
                let minus = if signed {
                    self.fields.cached_mesh(MeshKey::new(key, -iso))
                } else {
                    Some(None)
                };
                [self.fields.cached_mesh(MeshKey::new(key, iso)), minus]
            };
            if let [Some(plus), Some(minus)] = cached {
                self.set_shown(i, key, grid, iso, [plus, minus], false);
                return true;
            }
            // Extracted off this thread; the previous picture stays until the lobes arrive.
            let asked = (key, iso, preview);
            let already = self
                .pipeline(i)
                .and_then(|p| p.meshing.as_ref())
                .is_some_and(|(k, _, v, pr)| (*k, *v, *pr) == asked);
            if !already {
                if let Some(m) = self.view.mesher.as_mut() {
                    m.submit(
                        id.0,
                        LobesRequest {
                            key,
                            grid: Arc::clone(&grid),
                            iso,
                            signed,
                            preview,
                        },
                    );
                }
                if let Some(p) = self.pipeline_mut(i) {
                    p.meshing = Some((key, grid, iso, preview));
                    p.stale = false;
                }
            }
            return false;
        }
        let plus = self.fields.mesh(MeshKey::new(key, iso), &grid);
        let minus = if signed {
            self.fields.mesh(MeshKey::new(key, -iso), &grid)
        } else {
            None
        };
        self.set_shown(i, key, grid, iso, [plus, minus], false);
        true
    }

    /// Takes representation `i`'s lobes from the isosurface thread when they are the ones it waits
    /// for; true when they are shown now.
    fn take_meshed(&mut self, i: usize, done: Option<&LobesResult<FieldKey>>) -> bool {
        let Some(done) = done else {
            return false;
        };
        let Some((key, grid, iso, preview)) = self
            .pipeline_mut(i)
            .and_then(|p| p.meshing.take_if(|(k, _, _, pr)| *k == done.key && *pr == done.preview))
        else {
            return false;
        };
        let [plus, minus] = done.lobes.clone();
        if !preview {
            // Previews are not cached.
            self.fields.insert_mesh(MeshKey::new(key, iso), plus.clone());
            self.fields.insert_mesh(MeshKey::new(key, -iso), minus.clone());
        }
        self.set_shown(i, key, grid, iso, [plus, minus], preview);
        true
    }

    fn set_shown(
        &mut self,
        i: usize,
        key: FieldKey,
        grid: Arc<Grid3>,
        iso: f32,
        lobes: [Option<Arc<crate::surface::MeshData>>; 2],
        preview: bool,
    ) {
        let is_slice = self
            .field_rep(i)
            .is_some_and(|f| matches!(f.style, FieldStyle::Slice(_)));
        if let Some(p) = self.pipeline_mut(i) {
            p.show(Some((key, grid)), None, lobes, iso, preview);
        }
        if is_slice {
            self.view.dirty.slice = true;
        }
        self.view.dirty.surface_color = true;
    }

    /// Asks for `field` at the next frame playback will show in `slot`'s look-ahead lane (reading
    /// that frame once for all representations): from the pool, or prepared for the render device
    /// (`on_device`).
    pub(super) fn look_ahead(
        &mut self,
        field: FieldChoice,
        slot: crate::app::fields::FieldSlot,
        next: &mut Option<Option<NextFrame>>,
        on_device: bool,
    ) {
        let free = if on_device {
            self.fields.device.can_prefetch(slot)
        } else {
            self.fields.can_prefetch(slot)
        };
        if !free {
            return;
        }
        if next.is_none() {
            *next = Some(self.read_next_frame());
        }
        let Some(Some(n)) = next.as_ref() else {
            return;
        };
        if let FieldChoice::PotentialMean { frames } = field
            && let Some(doc) = self.doc.document.as_mut()
            && doc.load_potential_window(n.index, frames).is_err()
        {
            return;
        }
        let Some(key) = self.field_key_at(field, n.index, &n.frame) else {
            return;
        };
        let job = self.field_job_at(&key, &n.frame);
        if on_device {
            self.fields.device.prefetch(slot, key, || job);
        } else {
            self.fields.prefetch(slot, key, || job);
        }
    }

    /// The frame after the current one (the first when looping at the end), read from the
    /// trajectory.
    fn read_next_frame(&mut self) -> Option<NextFrame> {
        let looping = self.view.timeline.looping;
        let doc = self.doc.document.as_mut()?;
        let n = doc.n_frames;
        let index = if doc.frame_index + 1 < n {
            doc.frame_index + 1
        } else if looping && n > 1 {
            0
        } else {
            return None;
        };
        let mut frame = Frame::default();
        doc.read_frame(index, &mut frame).ok()?;
        Some(NextFrame { index, frame })
    }

    pub(super) fn field_rep(&self, i: usize) -> Option<&super::FieldRep> {
        match &self.doc.reps.list.get(i)?.kind {
            RepKind::Field(f) => Some(f),
            RepKind::Atoms(_) | RepKind::Cartoon(_) => None,
        }
    }

    fn pipeline(&self, i: usize) -> Option<&super::FieldPipeline> {
        self.field_rep(i).map(|f| &f.pipeline)
    }

    pub(super) fn pipeline_mut(&mut self, i: usize) -> Option<&mut super::FieldPipeline> {
        match &mut self.doc.reps.list.get_mut(i)?.kind {
            RepKind::Field(f) => Some(&mut f.pipeline),
            RepKind::Atoms(_) | RepKind::Cartoon(_) => None,
        }
    }

    /// Rebuilds sphere, cylinder and line instances from the visible atom representations at the
    /// current frame (their union, in list order), and the box outline.
    pub fn rebuild_atoms(&mut self) {
        let view = &mut self.view;
        view.spheres.clear();
        view.cylinders.clear();
        view.lines.clear();
        view.dirty.atoms = true;
        let Some(doc) = self.doc.document.as_ref() else {
            return;
        };
        for rep in &mut self.doc.reps.list {
            let (visible, RepKind::Atoms(a)) = (rep.visible, &mut rep.kind) else {
                continue;
            };
            refresh_atoms(a, doc, visible);
            if !visible {
                continue;
            }
            let Some((_, _, colors)) = a.cache.colors.as_ref() else {
                continue;
            };
            let pos = &doc.frame.positions_angstrom;
            let c = &a.cache;
            atoms::push_spheres(
                &doc.structure,
                pos,
                Some(&c.indices),
                colors,
                a.style,
                &mut view.spheres,
            );
            // Bonds that span the periodic box (a molecule in pieces) are not drawn across it.
            let within;
            let bonds = match doc.frame.cell.as_ref() {
                Some(cell) => {
                    within = crate::model::whole::bonds_within_box(pos, Some(cell), &c.bonds);
                    &within
                }
                None => &c.bonds,
            };
            if a.style == atoms::AtomStyle::HBonds {
                if let Some((_, set)) = c.hbonds.as_ref() {
                    let uniform = (a.coloring == atoms::AtomColoring::Element).then_some(atoms::HBOND_RGBA);
                    atoms::push_hbond_dashes(
                        &set.bonds,
                        pos,
                        doc.frame.cell.as_ref(),
                        colors,
                        uniform,
                        &mut view.cylinders,
                    );
                }
            } else if a.style == atoms::AtomStyle::Lines {
                atoms::push_lines(bonds, &doc.multiple_bonds, &c.lone, pos, colors, 4.0, &mut view.lines);
            } else {
                atoms::push_cylinders(
                    bonds,
                    &doc.multiple_bonds,
                    pos,
                    colors,
                    a.style,
                    4.0,
                    &mut view.cylinders,
                );
            }
        }
        if let Some(cell) = doc
            .frame
            .cell
            .filter(|c| c.is_valid() && doc.cell_shown(self.settings.show_cell))
        {
            // A crystal's cell starts at the origin by definition (fractional coordinate zero).
            let origin = if doc.crystal_cell {
                cell.origin_angstrom
            } else {
                cell.drawn_origin_angstrom(&doc.frame.positions_angstrom)
            }
            .map(|x| x as f32);
            view.lines.extend(atoms::box_lines(&cell, origin, [200, 200, 120, 255]));
        }
        // Ligand pathways on free-energy maps, as tubes.
        let paths = self.ils_path_cylinders();
        self.view.cylinders.extend(paths);
    }
}

/// Brings an atom representation's selection, bonds and colours up to date for `doc` (selections
/// that depend on coordinates are evaluated again at each frame), and its hydrogen bonds when it
/// draws them and is `visible`.
fn refresh_atoms(a: &mut AtomsRep, doc: &crate::app::document::Document, visible: bool) {
    let frame_dependent = a.parsed().needs_positions();
    let key = (doc.id, frame_dependent.then_some(doc.frame_index));
    if a.cache.key != Some(key) {
        let mask = a.parsed().evaluate(&doc.structure, Some(&doc.frame));
        let c = &mut a.cache;
        c.indices = mask
            .iter()
            .enumerate()
            .filter(|(_, m)| **m)
            .map(|(i, _)| i as u32)
            .collect();
        let picked = |i: u32| mask.get(i as usize).copied().unwrap_or(false);
        c.bonds = doc
            .bonds
            .iter()
            .filter(|b| picked(b[0]) && picked(b[1]))
            .copied()
            .collect();
        let mut bonded = vec![false; mask.len()];
        for b in &c.bonds {
            for &i in b {
                if let Some(x) = bonded.get_mut(i as usize) {
                    *x = true;
                }
            }
        }
        c.lone = c
            .indices
            .iter()
            .copied()
            .filter(|&i| !bonded.get(i as usize).copied().unwrap_or(false))
            .collect();
        c.key = Some(key);
        a.count = c.indices.len();
    }
    if a.cache
        .colors
        .as_ref()
        .is_none_or(|(d, c, _)| *d != doc.id || *c != a.coloring)
    {
        a.cache.colors = Some((doc.id, a.coloring, atoms::atom_colors(&doc.structure, a.coloring)));
    }
    // Hydrogen bonds are found for shown representations only (a hidden one forgets its bonds).
    if a.style == atoms::AtomStyle::HBonds && visible {
        let key = (doc.id, doc.frame_index, a.hbonds);
        if a.cache.hbonds.as_ref().is_none_or(|(k, _)| *k != key) {
            let mut picked = vec![false; doc.structure.len()];
            for &i in &a.cache.indices {
                if let Some(p) = picked.get_mut(i as usize) {
                    *p = true;
                }
            }
            let set = crate::analysis::hbonds::find(
                &doc.structure,
                &doc.frame.positions_angstrom,
                &picked,
                &doc.bonds,
                doc.frame.cell.as_ref(),
                &a.hbonds,
            );
            a.cache.hbonds = Some((key, set));
        }
    } else {
        a.cache.hbonds = None;
    }
}
