//! The field section: the main field (the first field representation) — which field, its isovalue
//! in the field's unit, the potential's averaging, summation and unit, the lattice, the slice plane
//! and surface colouring. Every number is written with its unit (`app::values`).

use super::widgets::{choice_combo, iso_slider};
use super::{send, tokens};
use crate::app::fields::FieldChoice;
use crate::app::reps::FieldStyle;
use crate::app::state::{AppState, Command, IsoMode};
use crate::app::values::{FieldUnit, PotentialDisplay, default_iso};
use crate::model::Grid3;
use egui::RichText;
use std::sync::Arc;

/// The main field's isovalue as set (computed units, or a fraction of the maximum when relative),
/// or the default of its kind for the grid shown.
pub fn main_iso(state: &AppState) -> Option<f32> {
    let f = state.main_field_rep()?;
    f.iso.value.or_else(|| match &f.pipeline.shown {
        Some((_, grid)) => Some(f.absolute_iso(grid)),
        None => default_iso(f.field),
    })
}

/// The fields `state`'s document can show, in menu order.
pub fn available_fields(state: &AppState) -> Vec<FieldChoice> {
    let Some(doc) = state.document() else {
        return Vec::new();
    };
    let spin = state.doc.spin;
    let mut out = Vec::new();
    if let Some(index) = state.doc.orbital.or(state.homo_index(spin)) {
        out.push(FieldChoice::Orbital { spin, index });
    }
    out.extend(
        [
            FieldChoice::Density,
            FieldChoice::SpinDensity,
            FieldChoice::WavefunctionPotential,
        ]
        .into_iter()
        .chain((0..doc.grids.len()).map(FieldChoice::Volume))
        .chain([crate::app::potential::potential_choice(
            state.settings.potential_window_frames,
        )])
        .filter(|f| doc.has_field(*f)),
    );
    out
}

/// The slider's range in the field's unit: from a ten-thousandth of the largest |value| of the
/// grid shown to that value (without a grid, two decades around the default).
pub fn iso_range(unit: &FieldUnit, grid: Option<&Grid3>, iso: f32) -> [f64; 2] {
    let max = grid
        .and_then(|g| g.min_max())
        .map(|(lo, hi)| f64::from(lo.abs().max(hi.abs())))
        .filter(|m| *m > 0.0)
        .unwrap_or(f64::from(iso.abs()) * 100.0);
    let hi = unit.show(max as f32).abs().max(unit.show(iso).abs());
    let hi = if hi > 0.0 { hi } else { 1.0 };
    [hi * 1e-4, hi]
}

/// Field choice and isovalue (absolute or relative to the maximum), potential settings, lattice,
/// slice and surface colouring of the main field.
pub fn fields_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let Some(doc) = &state.doc.document else {
        ui.label("No document.");
        return;
    };
    let has_wf = !doc.wavefunctions.is_empty();
    let has_charges = doc.potential_lattice.is_some();
    let qm_note = doc.qm.as_ref().map(|q| q.summary());
    let current = state.main_field();
    let name = |f: Option<FieldChoice>| f.map_or_else(|| "None".to_string(), |f| state.describe_field(f));
    let mut choice = current;
    egui::ComboBox::from_label("Field")
        .selected_text(name(current))
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut choice, None, "None");
            for f in available_fields(state) {
                ui.selectable_value(&mut choice, Some(f), name(Some(f)));
            }
        });
    if choice != current {
        send(state, Command::SelectField(choice));
    }
    if let Some(note) = qm_note {
        ui.small(note);
    }
    if has_charges {
        potential_ui(ui, state);
    }
    if let Some(f) = state.main_field_rep() {
        let unit = FieldUnit::of(f.field, state.settings.potential_unit);
        let grid = f.pipeline.shown.as_ref().map(|(_, g)| Arc::clone(g));
        let relative_now = f.iso.relative;
        let mut relative = relative_now;
        ui.horizontal(|ui| {
            ui.label("Isovalue");
            ui.radio_value(&mut relative, false, unit.label.as_str());
            ui.radio_value(&mut relative, true, "× max");
        });
        if relative != relative_now {
            let mode = if relative {
                IsoMode::RelativeToMax
            } else {
                IsoMode::Absolute
            };
            send(state, Command::SetIsoMode(mode));
        }
        if let Some(iso) = main_iso(state) {
            let range = iso_range(&unit, grid.as_deref(), iso);
            if let Some(v) = iso_slider(ui, iso, relative_now, &unit, range) {
                send(state, Command::SetIsoValue(v));
            }
        }
        if let Some(grid) = &grid {
            let iso_abs = state.absolute_iso(grid);
            if let Some((lo, hi)) = grid.min_max() {
                ui.label(
                    RichText::new(format!(
                        "range {} .. {}; surface at ±{}",
                        unit.format(lo),
                        unit.format(hi),
                        unit.format(iso_abs)
                    ))
                    .small(),
                );
            }
        }
    }
    if has_wf {
        let mut points = state.settings.lattice_points;
        ui.horizontal(|ui| {
            let l = ui.label("Lattice points");
            if ui
                .add(egui::DragValue::new(&mut points).range(16..=512))
                .labelled_by(l.id)
                .on_hover_text("Points along the longest axis of computed orbitals and densities")
                .changed()
            {
                send(state, Command::SetLatticePoints(points));
            }
        });
        orbitals_on_ui(ui, state);
    }
    if state.main_field().is_some() {
        slice_ui(ui, state);
        surface_color_ui(ui, state);
    }
    if !state.fields.can_compute() && has_wf {
        ui.label(
            RichText::new(format!("Orbitals cannot be computed: {}", state.fields.backend_name())).color(tokens::ERROR),
        );
    }
    if !state.fields.can_extract() {
        ui.label(RichText::new("Isosurfaces unavailable in this build (no extractor)").color(tokens::ERROR));
    }
}

/// Where orbitals and densities are computed, and where the main field's actually are.
fn orbitals_on_ui(ui: &mut egui::Ui, state: &mut AppState) {
    use crate::app::fields::device::OrbitalsOn;
    let now = state.settings.orbitals_on;
    let mut chosen = now;
    ui.horizontal(|ui| {
        let l = ui.label("Orbitals computed on");
        egui::ComboBox::from_id_salt("orbitals_on")
            .selected_text(now.name())
            .show_ui(ui, |ui| {
                for on in OrbitalsOn::ALL {
                    ui.selectable_value(&mut chosen, on, on.name());
                }
            })
            .response
            .labelled_by(l.id)
            .on_hover_text(
                "auto: the render device when its adapter is a real GPU (isosurfaces straight from the \
                 lattice it computes, nothing copied to the host), else the worker pool",
            );
    });
    if chosen != now {
        send(state, Command::SetOrbitalsOn(chosen));
    }
    if let Some(f) = state.main_field_rep() {
        if let Some(why) = &f.pipeline.device_fallback {
            ui.small(RichText::new(why).color(tokens::ERROR));
        } else if f.pipeline.device_shown.is_some() {
            ui.small("computed on the render device (no host lattice: read-outs are evaluated at the atom)");
        }
    }
}

/// The potential: running average, summation method and unit.
fn potential_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let mut window = state.settings.potential_window_frames;
    ui.horizontal(|ui| {
        ui.label("Potential: mean of last");
        let max = crate::app::potential::MAX_POTENTIAL_WINDOW;
        ui.add(egui::DragValue::new(&mut window).range(1..=max).suffix(" frames"))
            .on_hover_text(format!(
                "Running average of the potential map (1: current frame only). At most {max}: each map sums every averaged frame's charges."
            ));
    });
    if window != state.settings.potential_window_frames {
        send(state, Command::SetPotentialWindow(window));
    }
    use crate::app::settings::PotentialMethod;
    let mut method = state.settings.potential_method;
    ui.horizontal_wrapped(|ui| {
        ui.label("Sum");
        let auto = format!("auto (MSM above {} charges)", PotentialMethod::AUTO_MSM_CHARGES);
        ui.radio_value(&mut method, PotentialMethod::Auto, auto);
        ui.radio_value(&mut method, PotentialMethod::Direct, "direct");
        ui.radio_value(&mut method, PotentialMethod::Msm, "multilevel (MSM)")
            .on_hover_text(
                "Multilevel summation: a = 12 A, h = 2 A, about 1e-3 relative error, cost linear in the charges",
            );
    });
    if method != state.settings.potential_method {
        send(state, Command::SetPotentialMethod(method));
    }
    if let Some(u) = choice_combo(
        ui,
        "Potential unit",
        state.settings.potential_unit,
        &PotentialDisplay::ALL,
        PotentialDisplay::name,
    ) {
        send(state, Command::SetPotentialUnit(u));
    }
}

/// The slice plane of the main field: on/off, orientation (x, y, z or a free normal) and position.
pub fn slice_ui(ui: &mut egui::Ui, state: &mut AppState) {
    use crate::app::slice::SliceNormal;
    let mut show = state.show_slice();
    if ui.checkbox(&mut show, "Slice plane").changed() {
        send(state, Command::SetShowSlice(show));
    }
    if !state.show_slice() {
        return;
    }
    let current = state.slice_plane();
    let mut plane = current;
    ui.horizontal(|ui| {
        let free = matches!(plane.normal, SliceNormal::Free { .. });
        for (n, label) in [(SliceNormal::X, "x"), (SliceNormal::Y, "y"), (SliceNormal::Z, "z")] {
            if ui.selectable_label(plane.normal == n, label).clicked() {
                plane.normal = n;
            }
        }
        if ui.selectable_label(free, "free").clicked() && !free {
            plane.normal = SliceNormal::Free {
                azimuth_degree: 30.0,
                elevation_degree: 30.0,
            };
        }
    });
    if let SliceNormal::Free {
        azimuth_degree,
        elevation_degree,
    } = &mut plane.normal
    {
        ui.add(egui::Slider::new(azimuth_degree, -180.0..=180.0).text("azimuth (deg)"));
        ui.add(egui::Slider::new(elevation_degree, -90.0..=90.0).text("elevation (deg)"));
    }
    ui.add(egui::Slider::new(&mut plane.position, -0.5..=0.5).text("position"));
    if plane != current {
        send(state, Command::SetSlicePlane(plane));
    }
    colormap_ui(ui, state);
}

/// Colouring the main field's surfaces by another field (e.g. the potential on a density surface:
/// a volume read from a file, or the wavefunction's own potential computed per frame): source,
/// range and colormap.
pub fn surface_color_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let Some(doc) = &state.doc.document else {
        return;
    };
    let mut sources: Vec<(FieldChoice, String)> = doc
        .grids
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let [a, b, c] = g.lattice.dims;
            (FieldChoice::Volume(i), format!("Volume {} ({a}x{b}x{c})", i + 1))
        })
        .collect();
    if doc.has_field(FieldChoice::WavefunctionPotential) {
        sources.push((
            FieldChoice::WavefunctionPotential,
            "Potential (wavefunction)".to_string(),
        ));
    }
    if sources.is_empty()
        || !state
            .main_field_rep()
            .is_some_and(|f| f.style == FieldStyle::Isosurface)
    {
        return;
    }
    let coloring = state.surface_color();
    let current = coloring.map(|c| c.source);
    let mut choice = current;
    egui::ComboBox::from_label("Colour surface by")
        .selected_text(
            current
                .and_then(|c| sources.iter().find(|(s, _)| *s == c).map(|(_, n)| n.clone()))
                .unwrap_or_else(|| "Lobe colours".into()),
        )
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut choice, None, "Lobe colours");
            for (source, name) in &sources {
                ui.selectable_value(&mut choice, Some(*source), name);
            }
        });
    if choice != current {
        send(state, Command::SetSurfaceColor(choice.map(|v| (v, None))));
    }
    let Some(c) = coloring else {
        return;
    };
    if let Some(f) = state.main_field_rep() {
        if f.colors_by_vertex_values() {
            ui.label("evaluated exactly at the vertices");
        } else if f.colors_from_lattice() {
            ui.label("sampled trilinearly from a lattice");
        }
    }
    let Some(mut range) = c.range else {
        ui.label("computing the colouring field ...");
        return;
    };
    ui.horizontal(|ui| {
        let l = ui.label("from");
        let a = ui
            .add(egui::DragValue::new(&mut range[0]).speed(1e-3).max_decimals(5))
            .labelled_by(l.id);
        let l = ui.label("to");
        let b = ui
            .add(egui::DragValue::new(&mut range[1]).speed(1e-3).max_decimals(5))
            .labelled_by(l.id);
        if (a.changed() || b.changed()) && range[0] != range[1] {
            send(state, Command::SetSurfaceColor(Some((c.source, Some(range)))));
        }
        if ui
            .button("Auto")
            .on_hover_text("Range of the values on the surface")
            .clicked()
        {
            send(state, Command::SetSurfaceColor(Some((c.source, None))));
        }
    });
    colormap_ui(ui, state);
}

/// The colormap of slices and coloured surfaces.
fn colormap_ui(ui: &mut egui::Ui, state: &mut AppState) {
    use crate::render::colormap::Colormap;
    if let Some(map) = choice_combo(ui, "Colormap", state.settings.colormap, &Colormap::ALL, Colormap::name) {
        send(state, Command::SetColormap(map));
    }
}
