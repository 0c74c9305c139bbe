//! The update loop's render-device step: a field representation whose field the render device
//! computes (`fields::device`) is served there — the frame shown from its look-ahead or packed at
//! once, the next frame prepared ahead while playing — and falls back to the worker pool, said once
//! in words, where the device cannot serve it. Called by `update` for every visible field
//! representation; the draw stage (`app::draw`) records the pass and extracts the surfaces.

use super::{FieldStyle, RepKind};
use crate::app::fields::device::{DeviceFieldError, FieldsOn, RenderFields};
use crate::app::fields::{FieldChoice, FieldKey};
use crate::app::state::AppState;
use crate::compute::wgpu::device_field::DeviceField;
use crate::render::RenderContext;
use std::sync::Arc;

impl AppState {
    /// The render device of `rc` may compute fields from now on (as `settings.orbitals_on`
    /// chooses); look-aheads are packed on a thread of their own. Called by whoever owns the render
    /// context (the window, `render`, the playback bench).
    pub fn use_render_device(&mut self, rc: &RenderContext) {
        self.fields.device.render = RenderFields::of(rc);
        self.fields.device.pack_off_thread();
        self.mark_fields_stale(|_| true);
    }

    /// Sets where orbitals are computed; every representation chooses again (and may say why not).
    pub fn set_orbitals_on(&mut self, on: FieldsOn) {
        self.settings.orbitals_on = on;
        for rep in &mut self.doc.reps.list {
            if let RepKind::Field(f) = &mut rep.kind {
                f.pipeline.device_fallback = None;
                f.pipeline.device_failed = false;
            }
        }
        self.mark_fields_stale(|_| true);
    }

    /// Whether the render device serves representation `i`'s request, or why not.
    fn device_route(&self, i: usize) -> Result<(), DeviceFieldError> {
        let f = self.field_rep(i).ok_or(DeviceFieldError::NotDeviceField)?;
        let computed_there = matches!(
            f.field,
            FieldChoice::Orbital { .. } | FieldChoice::Density | FieldChoice::SpinDensity
        );
        if !computed_there || f.style != FieldStyle::Isosurface {
            return Err(DeviceFieldError::NotDeviceField);
        }
        self.fields
            .device
            .route(self.settings.orbitals_on, self.view.gpu_surfaces)?;
        // The potential of point charges at the vertices is computed on the render device too
        // (`app::draw`); the wavefunction's own needs the host's meshes.
        if f.colors_by_vertex_values() && !f.coloring.is_some_and(|c| c.source.is_potential()) {
            return Err(DeviceFieldError::HostVertexColours);
        }
        if f.iso.relative {
            return Err(DeviceFieldError::RelativeIso);
        }
        if self.document().is_some_and(|d| d.qm.is_some()) {
            return Err(DeviceFieldError::QmRegion);
        }
        Ok(())
    }

    /// Serves representation `i`'s field at `key` on the render device when it can: `Some(changed)`
    /// (what it shows changed), or `None` when the worker pool serves it (the caller goes on).
    pub(super) fn serve_on_device(
        &mut self,
        i: usize,
        key: FieldKey,
        next: &mut Option<Option<super::update::NextFrame>>,
    ) -> Option<bool> {
        let f = self.field_rep(i)?;
        if f.pipeline.device_failed {
            return None;
        }
        if let Err(e) = self.device_route(i) {
            self.device_not_serving(i, e);
            return None;
        }
        let f = self.field_rep(i)?;
        let (field, slot) = (f.field, f.pipeline.slot);
        // Absolute (a relative isovalue is served by the pool).
        let iso = f
            .iso
            .value
            .or_else(|| crate::app::values::default_iso(field))
            .unwrap_or(0.05);
        let p = &f.pipeline;
        let same = !p.stale && p.shown_iso == iso && p.device_shown.as_ref().is_some_and(|(k, _)| *k == key);
        if self.fields.pending(slot).is_some() || self.fields.looking_ahead(slot).is_some() {
            // Nothing of this representation is wanted from the pool any more.
            self.fields.cancel(slot);
        }
        let mut changed = false;
        if !same {
            let job = self.field_job(&key);
            match self.fields.device.serve(slot, key, || job) {
                Ok(d) => {
                    self.set_device_shown(i, key, d, iso);
                    changed = true;
                }
                Err(e) => {
                    self.device_not_serving(i, e);
                    return None;
                }
            }
        }
        if self.view.timeline.playing {
            self.look_ahead(field, slot, next, true);
        }
        Some(changed)
    }

    fn set_device_shown(&mut self, i: usize, key: FieldKey, field: Arc<DeviceField>, iso: f32) {
        if let Some(p) = self.pipeline_mut(i) {
            p.show(None, Some((key, field)), [None, None], iso, false);
            p.asked = None;
            p.device_fallback = None;
        }
        self.view.dirty.surface_color = true;
    }

    /// Representation `i` is served by the worker pool because of `why`: said once per reason when
    /// it was a failure (then the pool keeps it until the setting changes) or a condition such as a
    /// relative isovalue, or the render device was asked for explicitly.
    pub(super) fn device_not_serving(&mut self, i: usize, why: DeviceFieldError) {
        if let Some(slot) = self.field_rep(i).map(|f| f.pipeline.slot) {
            self.fields.device.forget(slot);
        }
        let silent = matches!(why, DeviceFieldError::NotDeviceField | DeviceFieldError::PoolChosen)
            || (why.is_choice() && self.settings.orbitals_on == FieldsOn::Auto);
        if silent {
            if let Some(p) = self.pipeline_mut(i) {
                p.device_fallback = None;
            }
            return;
        }
        let label = match self.doc.reps.list.get(i) {
            Some(r) => self.rep_label(r),
            None => return,
        };
        let msg = format!("{label}: computed by the worker pool, not on the render device ({why})");
        let Some(p) = self.pipeline_mut(i) else {
            return;
        };
        p.device_failed |= why.is_failure();
        if p.device_fallback.as_deref() == Some(msg.as_str()) {
            return;
        }
        p.device_fallback = Some(msg.clone());
        p.asked = None;
        p.stale = true;
        tracing::warn!("{msg}");
        self.panels.status = msg;
    }

    /// The draw stage could not compute representation `i`'s field on the render device: from now
    /// on the worker pool serves it (said once).
    pub fn device_pass_failed(&mut self, id: super::RepId, why: DeviceFieldError) {
        if let Some(i) = self.doc.reps.list.iter().position(|r| r.id == id) {
            self.device_not_serving(i, why);
            if let Some(p) = self.pipeline_mut(i) {
                p.device_shown = None;
                p.revision += 1;
            }
        }
    }
}
