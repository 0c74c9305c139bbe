//! The field section: the field representation selected in the representation list (else the
//! first one) — which field, its isovalue in the field's unit over a range set by the field's
//! physics (`iso_range`), the potential's averaging, summation and unit (for a potential), the
//! lattice (for fields of a wavefunction), the slice plane and surface colouring. Only the
//! controls that apply to the representation's kind are shown. Every number is written with its
//! unit (`app::values`); a typed isovalue is kept as typed (the slider's range grows to it).

use super::widgets::{choice_combo, iso_slider};
use super::{send, tokens};
use crate::app::atoms::AtomColoring;
use crate::app::fields::FieldChoice;
use crate::app::reps::{FieldRep, FieldStyle};
use crate::app::state::{AppState, Command, IsoMode};
use crate::app::values::{FieldUnit, PotentialDisplay, default_iso, format_number};
use crate::model::Grid3;
use egui::RichText;
use std::sync::Arc;

/// The isovalue of the representation the field panel edits as set (computed units, or a fraction
/// of the maximum when relative), or the default of its kind for the grid shown.
pub fn panel_iso(state: &AppState) -> Option<f32> {
    shown_iso(state.panel_field_rep()?)
}

/// A field representation's isovalue as set, or the default of its kind for the grid shown.
pub fn shown_iso(f: &FieldRep) -> Option<f32> {
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
        .chain([
            state.esp_source(crate::app::potential::potential_choice(
                state.settings.potential_window_frames,
            )),
            FieldChoice::PotentialPb {
                revision: state.pb.revision,
            },
        ])
        .chain(
            (0..doc.surface_selections.len())
                .filter_map(|i| u16::try_from(i).ok())
                .map(|selection| FieldChoice::MolSurf { selection }),
        )
        .chain(
            (0..doc.ils_maps.len())
                .filter_map(|i| u16::try_from(i).ok())
                .map(FieldChoice::Ils),
        )
        .filter(|f| doc.has_field(*f)),
    );
    // Under the Poisson-Boltzmann model the charges' potential is that solve: listed once.
    let mut seen = Vec::new();
    out.retain(|f| {
        let key = if crate::app::pb::is_pb(*f) { None } else { Some(*f) };
        let new = !seen.contains(&key);
        seen.push(key);
        new
    });
    out
}

/// Isovalues of a potential of charges the slider spans, in kT/e at 300 K (from a hundredth of
/// thermal energy to the strong fields of charged proteins in vacuum).
const POTENTIAL_RANGE_KT_PER_E: [f64; 2] = [0.01, 1.0e4];

/// The slider's range in `unit` (the field's unit), from the field kind's physics rather than the
/// values of the lattice shown: orbitals 1e-4..1 a.u., densities 1e-5..1 a.u., a wavefunction's
/// potential 1e-4..1 a.u., potentials of charges 0.01..10^4 kT/e (in the chosen unit), the
/// molecular surface's dimensionless level 0.01..5; a volume read from a file, whose unit is
/// unknown, from a ten-thousandth of its largest |value| to that value. The range always
/// contains `iso_shown` (the isovalue in `unit`), so a typed value is never clamped.
pub fn iso_range(field: FieldChoice, unit: &FieldUnit, grid: Option<&Grid3>, iso_shown: f64) -> [f64; 2] {
    let [lo, hi] = match field {
        FieldChoice::Orbital { .. } | FieldChoice::WavefunctionPotential => [1e-4, 1.0],
        FieldChoice::Density | FieldChoice::SpinDensity => [1e-5, 1.0],
        FieldChoice::Potential | FieldChoice::PotentialMean { .. } => {
            let kt = PotentialDisplay::KtPerE.unit().per_hartree_per_e();
            POTENTIAL_RANGE_KT_PER_E.map(|v| v / kt * unit.scale)
        }
        FieldChoice::MolSurf { .. } => [0.01, 5.0],
        FieldChoice::Ils(_) => [0.01 * unit.scale, 87.0 * unit.scale],
        // Poisson-Boltzmann potentials, in kT/e: a tenth of thermal energy to 100 kT/e.
        FieldChoice::PotentialPb { .. } => [0.1, 100.0],
        FieldChoice::Volume(_) => {
            let max = grid
                .and_then(|g| g.min_max())
                .map(|(lo, hi)| f64::from(lo.abs().max(hi.abs())))
                .filter(|m| *m > 0.0 && m.is_finite())
                .map_or(iso_shown.abs() * 100.0, |m| m * unit.scale);
            let max = if max > 0.0 { max } else { 1.0 };
            [max * 1e-4, max]
        }
    };
    let v = iso_shown.abs();
    if v.is_finite() && v > 0.0 {
        [lo.min(v), hi.max(v)]
    } else {
        [lo, hi]
    }
}

/// "surface at ±0.050 a.u." (one sign for fields of one sign; the molecular surface's level in
/// words: `surface` is the molecular surface's kind), for the isovalue `iso_abs` in computed units.
pub fn iso_note(
    f: &FieldRep,
    surface: Option<crate::compute::molsurf::SurfaceModel>,
    unit: &FieldUnit,
    grid: Option<&Grid3>,
    iso_abs: f32,
) -> String {
    if let (
        FieldChoice::MolSurf { .. },
        Some(crate::compute::molsurf::SurfaceModel::Excluded { probe_radius_angstrom }),
    ) = (f.field, surface)
    {
        // The field is 0.5 + 0.5 (d - p) / p in the distance d from where a probe centre can be.
        let level = f64::from(iso_abs).clamp(0.0, 1.0);
        let offset = (1.0 - 2.0 * level) * probe_radius_angstrom;
        let place = if offset.abs() < 0.005 {
            "the solvent-excluded surface itself".to_string()
        } else if offset > 0.0 {
            format!("{} Å outside the solvent-excluded surface", format_number(offset))
        } else {
            format!("{} Å inside it", format_number(-offset))
        };
        return format!(
            "surface at level {}: {place} (0.5 is where a {probe_radius_angstrom} Å probe stops; 0 is the \
             probe's centre, the solvent-accessible surface)",
            format_number(level)
        );
    }
    if matches!(f.field, FieldChoice::MolSurf { .. }) {
        return format!(
            "surface at level {} of the atoms' summed Gaussians, as VMD's QuickSurf (at {} an isolated atom's \
             surface lies at its radius; a lower level fills crevices), not a probe-rolled surface",
            format_number(f64::from(iso_abs)),
            format_number(f64::from(crate::model::field::MOLSURF_LEVEL))
        );
    }
    let signed = grid.map_or(f.field.is_signed(), |g| f.is_signed(g));
    let sign = if signed { "±" } else { "" };
    let note = format!("surface at {sign}{}", unit.format(iso_abs));
    // An isovalue beyond every value draws nothing: say so rather than show an empty view.
    let reach = grid
        .and_then(|g| g.min_max())
        .map(|(lo, hi)| if signed { lo.abs().max(hi.abs()) } else { hi });
    match reach {
        Some(m) if m.is_finite() && iso_abs > m => {
            format!(
                "{note}: nothing to draw, the values reach only {sign}{}",
                unit.format(m)
            )
        }
        _ => note,
    }
}

/// "values -0.31 .. 0.29 a.u." for `grid` in `unit` (the molecular surface's level is
/// dimensionless; a volume adds its file's title line, which names what the values are).
pub fn values_note(f: &FieldRep, unit: &FieldUnit, grid: &Grid3) -> Option<String> {
    let (lo, hi) = grid.min_max()?;
    Some(if matches!(f.field, FieldChoice::MolSurf { .. }) {
        format!(
            "values {} .. {} (dimensionless)",
            format_number(f64::from(lo)),
            format_number(f64::from(hi))
        )
    } else if matches!(f.field, FieldChoice::Volume(_)) && !grid.description.trim().is_empty() {
        // A volume's unit is the file's: its own title line says what the values are.
        format!(
            "values {} .. {}; the file says: {}{}",
            unit.format(lo),
            unit.format(hi),
            grid.description.trim(),
            crate::app::values::volume_title_remark(&grid.description).unwrap_or("")
        )
    } else {
        format!("values {} .. {}", unit.format(lo), unit.format(hi))
    })
}

/// The isovalue controls of field representation `f`: absolute or relative, the slider, what the
/// surface is at and the range of the values shown. Returns the commands they make.
pub fn iso_controls_ui(ui: &mut egui::Ui, state: &AppState, f: &FieldRep) -> Vec<crate::app::reps::RepEdit> {
    use crate::app::reps::RepEdit;
    let mut edits = Vec::new();
    if matches!(f.field, FieldChoice::Ils(_)) {
        // A free energy: negative isovalues, no fraction of the maximum.
        edits.extend(super::ils::ils_iso_ui(ui, state, f).map(RepEdit::IsoValue));
        return edits;
    }
    let unit = state.field_unit(f.field);
    let grid = f.pipeline.shown.as_ref().map(|(_, g)| Arc::clone(g));
    let relative_now = f.iso.relative;
    let mut relative = relative_now;
    let label = ui
        .horizontal_wrapped(|ui| {
            let l = ui.label("Isovalue in");
            let abs_label = if unit.label.is_empty() {
                "level"
            } else {
                unit.label.as_str()
            };
            ui.radio_value(&mut relative, false, abs_label);
            ui.radio_value(&mut relative, true, "× max");
            l.id
        })
        .inner;
    if relative != relative_now {
        edits.push(RepEdit::IsoRelative(relative));
    }
    if let Some(iso) = shown_iso(f) {
        let range = iso_range(f.field, &unit, grid.as_deref(), unit.show(iso));
        if let Some(v) = iso_slider(ui, iso, relative_now, &unit, range, label) {
            edits.push(RepEdit::IsoValue(v));
        }
        let iso_abs = grid
            .as_deref()
            .map_or(if relative_now { None } else { Some(iso) }, |g| Some(f.absolute_iso(g)));
        if let Some(iso_abs) = iso_abs {
            let surface = match (f.field, state.document()) {
                (FieldChoice::MolSurf { selection }, Some(d)) => Some(d.surface_model(selection)),
                _ => None,
            };
            let note = iso_note(f, surface, &unit, grid.as_deref(), iso_abs);
            ui.add(egui::Label::new(RichText::new(note).small()).wrap());
        }
        if let Some(note) = grid.as_deref().and_then(|g| values_note(f, &unit, g)) {
            ui.add(egui::Label::new(RichText::new(note).small().weak()).wrap());
        }
    }
    edits
}

/// The field panel: the selected field representation's field, isovalue, potential settings (for
/// a potential), lattice (for fields of a wavefunction), slice and surface colouring.
pub fn fields_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let Some(doc) = &state.doc.document else {
        ui.label("No document.");
        return;
    };
    let has_wf = !doc.wavefunctions.is_empty();
    let has_charges = doc.potential_lattice.is_some();
    let qm_note = doc.qm.as_ref().map(|q| q.summary());
    if let Some(rep) = state.panel_field_id().and_then(|id| state.doc.reps.get(id)) {
        let text = format!("Editing: {}", state.rep_label(rep));
        ui.add(egui::Label::new(RichText::new(text).strong()).wrap())
            .on_hover_text("Select another representation in the list to edit it here");
    }
    let current = state.panel_field();
    let name = |f: Option<FieldChoice>| match f {
        None => "None".to_string(),
        Some(f) if crate::app::pb::is_pb(f) => super::pb::SOURCE_NAME.to_string(),
        Some(f) => state.describe_field(f),
    };
    let mut choice = current;
    super::widgets::labelled_combo(ui, "Field", "panel_field", name(current), |ui| {
        ui.selectable_value(&mut choice, None, "None");
        for f in available_fields(state) {
            ui.selectable_value(&mut choice, Some(f), name(Some(f)));
        }
    });
    if choice != current {
        send(state, Command::SelectField(choice));
    }
    if let Some(note) = qm_note {
        ui.add(egui::Label::new(RichText::new(note).small()).wrap());
    }
    let field = state.panel_field();
    if has_charges && field.is_some_and(|f| f.is_potential()) {
        potential_ui(ui, state);
    }
    if let Some(FieldChoice::Ils(m)) = field {
        super::ils::ils_panel_ui(ui, state, m);
    }
    super::esp_model::esp_model_ui(ui, state);
    super::pb::panel_ui(ui, state);
    let edits = state
        .panel_field_rep()
        .filter(|f| f.is_surface())
        .map(|f| iso_controls_ui(ui, state, f))
        .unwrap_or_default();
    for e in edits {
        match e {
            crate::app::reps::RepEdit::IsoValue(v) => send(state, Command::SetIsoValue(v)),
            crate::app::reps::RepEdit::IsoRelative(r) => send(
                state,
                Command::SetIsoMode(if r { IsoMode::RelativeToMax } else { IsoMode::Absolute }),
            ),
            _ => {}
        }
    }
    if has_wf && field.is_none_or(|f| f.needs_wavefunction()) {
        let mut points = state.settings.lattice_points;
        ui.horizontal(|ui| {
            let l = ui.label("Lattice points");
            if ui
                .add(
                    egui::DragValue::new(&mut points)
                        .update_while_editing(false)
                        .range(16..=512),
                )
                .labelled_by(l.id)
                .on_hover_text("Points along the longest axis of computed orbitals and densities")
                .changed()
            {
                send(state, Command::SetLatticePoints(points));
            }
        });
        orbitals_on_ui(ui, state);
    }
    // A slice of the molecular surface's level says nothing a chemist reads.
    if field.is_some_and(|f| !matches!(f, FieldChoice::MolSurf { .. })) {
        slice_ui(ui, state);
    }
    // A molecular surface: Gaussian or solvent-excluded.
    if let (Some(FieldChoice::MolSurf { selection }), Some(id)) = (field, state.panel_field_id()) {
        let mut commands = Vec::new();
        super::reps::surface_kind_ui(ui, state, id, selection, &mut commands);
        for c in commands {
            send(state, c);
        }
    }
    if field.is_some() {
        surface_color_ui(ui, state);
    }
    if !state.fields.can_compute() && has_wf {
        ui.add(
            egui::Label::new(
                RichText::new(format!("Orbitals cannot be computed: {}", state.fields.backend_name()))
                    .color(tokens::ERROR),
            )
            .wrap(),
        );
    }
    if !state.fields.can_extract() {
        ui.add(
            egui::Label::new(
                RichText::new("Isosurfaces unavailable in this build (no extractor)").color(tokens::ERROR),
            )
            .wrap(),
        );
    }
}

/// Where orbitals and densities are computed, and where the main field's actually are.
fn orbitals_on_ui(ui: &mut egui::Ui, state: &mut AppState) {
    use crate::app::fields::device::FieldsOn;
    let now = state.settings.orbitals_on;
    let mut chosen = now;
    // The combo takes what the panel leaves beside its label (it was cut off at the panel's edge
    // of a narrow window); a choice too long for it is shortened, whole in its menu.
    const LABEL: &str = "Orbitals computed on";
    ui.horizontal(|ui| {
        let l = ui.label(LABEL);
        egui::ComboBox::from_id_salt("orbitals_on")
            .selected_text(now.name())
            .width((ui.available_width() - 8.0).clamp(60.0, 100.0))
            .truncate()
            .show_ui(ui, |ui| {
                for on in FieldsOn::ALL {
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
    if let Some(f) = state.panel_field_rep() {
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
        ui.add(egui::DragValue::new(&mut window).update_while_editing(false).range(1..=max).suffix(" frames"))
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
                "Multilevel summation: a = 12 Å, h = 2 Å, about 1e-3 relative error, cost linear in the charges",
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

/// The slice plane of the field the panel edits: on/off, orientation (x, y, z or a free normal) and
/// position. Ticked, it shows that field's slice (hiding a slice of another field).
pub fn slice_ui(ui: &mut egui::Ui, state: &mut AppState) {
    use crate::app::slice::SliceNormal;
    let mut show = state.panel_slice_shown();
    if ui.checkbox(&mut show, "Slice plane").changed() {
        send(state, Command::SetShowSlice(show));
    }
    if !state.panel_slice_shown() {
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
        labelled_slider(
            ui,
            egui::Slider::new(azimuth_degree, -180.0..=180.0).update_while_editing(false),
            "azimuth (deg)",
        );
        labelled_slider(
            ui,
            egui::Slider::new(elevation_degree, -90.0..=90.0).update_while_editing(false),
            "elevation (deg)",
        );
    }
    labelled_slider(
        ui,
        egui::Slider::new(&mut plane.position, -0.5..=0.5).update_while_editing(false),
        "position",
    );
    slice_range_ui(ui, state, &mut plane);
    if plane != current {
        send(state, Command::SetSlicePlane(plane));
    }
    colormap_ui(ui, state);
}

/// A slider with its number and `text` after it, as wide as the panel leaves for them (the width
/// another slider set for itself would push the row past the panel's edge).
fn labelled_slider(ui: &mut egui::Ui, slider: egui::Slider<'_>, text: &str) -> egui::Response {
    let text_width = egui::WidgetText::from(text)
        .into_galley(
            ui,
            Some(egui::TextWrapMode::Extend),
            f32::INFINITY,
            egui::TextStyle::Body,
        )
        .size()
        .x;
    ui.scope(|ui| {
        // The number beside the slider takes about 50 points, with two gaps.
        let rest = text_width + 50.0 + 2.0 * ui.spacing().item_spacing.x;
        ui.spacing_mut().slider_width = (ui.available_width() - rest).clamp(40.0, 160.0);
        ui.add(slider.text(text))
    })
    .inner
}

/// The slice colormap's ends in the field's unit, with "Auto" (the field's own range: ±5 kT/e for
/// a Poisson-Boltzmann map) once the user has chosen one.
fn slice_range_ui(ui: &mut egui::Ui, state: &mut AppState, plane: &mut crate::app::slice::SlicePlane) {
    let shown = state.doc.reps.drawn_slice().and_then(|f| {
        let (_, grid) = f.pipeline.shown.as_ref()?;
        state.slice_range(f, grid)
    });
    let (Some(range), Some(unit)) = (shown, state.slice_unit()) else {
        return;
    };
    let mut ends = range.map(|v| unit.show(v));
    let mut refused = false;
    ui.label("Colour range");
    ui.horizontal_wrapped(|ui| {
        if ends_ui(ui, &unit, &mut ends) {
            if ends[0] < ends[1] {
                plane.range = Some(ends.map(|v| unit.computed(v)));
            } else {
                refused = true;
            }
        }
        if ui
            .add_enabled(plane.range.is_some(), egui::Button::new("Auto"))
            .on_hover_text("The field's own range: ±5 kT/e for Poisson-Boltzmann, the screened models' ranges, else the 99th percentile of |value|")
            .clicked()
        {
            plane.range = None;
        }
    });
    if refused {
        state.panels.status = format!(
            "slice colour range: the low end ({}) must stay below the high end ({}); kept {} to {}",
            format_number(ends[0]),
            format_number(ends[1]),
            unit.format(range[0]),
            unit.format(range[1])
        );
    }
}

/// "from [low] to [high]", each end dragged or typed in `unit` (shown beside the number); true
/// when either changed.
fn ends_ui(ui: &mut egui::Ui, unit: &FieldUnit, ends: &mut [f64; 2]) -> bool {
    let suffix = format!(" {}", unit.label);
    let speed = ((ends[1] - ends[0]).abs() / 200.0).clamp(1e-6, 1.0);
    // Three significant digits of the larger end (-96.9 kT/e, not -96.8596), at most six decimals.
    let largest = ends[0].abs().max(ends[1].abs());
    let decimals = if largest > 0.0 && largest.is_finite() {
        (2 - largest.log10().floor() as i32).clamp(0, 6) as usize
    } else {
        2
    };
    let mut changed = false;
    for (k, word) in ["from", "to"].into_iter().enumerate() {
        let l = ui.label(word);
        changed |= ui
            .add(
                egui::DragValue::new(&mut ends[k])
                    .update_while_editing(false)
                    .speed(speed)
                    .max_decimals(decimals)
                    .suffix(suffix.clone()),
            )
            .labelled_by(l.id)
            .changed();
    }
    changed
}

/// What colours a surface: its own colour, its atoms (a molecular surface), or another field.
#[derive(Clone, Copy, PartialEq)]
enum SurfaceChoice {
    Own,
    Atoms(AtomColoring),
    Field(FieldChoice),
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
    if doc.structure.charges_e.is_some() && doc.has_field(FieldChoice::Potential) {
        // As `render --color-by esp`: the charges' potential evaluated at the surface's vertices.
        sources.push((FieldChoice::Potential, "Potential (charges)".to_string()));
    }
    if doc.structure.charges_e.is_some() {
        sources.push((
            FieldChoice::PotentialPb { revision: 0 },
            crate::ui::pb::SOURCE_NAME.into(),
        ));
    }
    let Some(f) = state.panel_field_rep().filter(|f| f.style == FieldStyle::Isosurface) else {
        return;
    };
    // The Poisson-Boltzmann entry stands for the colouring in use when that is one, whatever
    // parameters it was solved with (each change of them is a new revision of the field).
    if let Some(c) = f.coloring.map(|c| c.source).filter(|s| crate::app::pb::is_pb(*s)) {
        for (s, _) in sources.iter_mut().filter(|(s, _)| crate::app::pb::is_pb(*s)) {
            *s = c;
        }
    }
    // A surface is not coloured by its own field.
    let own_field = f.field;
    sources.retain(|(s, _)| *s != own_field && !(crate::app::pb::is_pb(*s) && crate::app::pb::is_pb(own_field)));
    // A molecular surface may take its atoms' colours (each point its nearest atom's).
    let atom_schemes: &[AtomColoring] = if matches!(f.field, FieldChoice::MolSurf { .. }) {
        &AtomColoring::ALL[..AtomColoring::ALL.len() - 1]
    } else {
        &[]
    };
    if sources.is_empty() && atom_schemes.is_empty() {
        return;
    }
    let coloring = f.coloring;
    let how = if f.colors_by_vertex_values() {
        Some("evaluated exactly at the vertices")
    } else if f.colors_from_lattice() {
        Some("sampled trilinearly from a lattice")
    } else {
        None
    };
    let current = match (coloring, f.atom_coloring) {
        (Some(c), _) => SurfaceChoice::Field(c.source),
        (None, Some(a)) if atom_schemes.iter().any(|s| s.same_scheme(a)) => SurfaceChoice::Atoms(a),
        _ => SurfaceChoice::Own,
    };
    let mut choice = current;
    // A field of one sign (a density, a molecular surface) has one surface, in one colour.
    let signed = match &f.pipeline.shown {
        Some((_, grid)) => f.is_signed(grid),
        None => f.field.is_signed(),
    };
    let own = if signed { "Lobe colours" } else { "Its own colour" };
    let atoms_name = |a: AtomColoring| format!("{} of its atoms", a.name());
    let selected = match current {
        SurfaceChoice::Field(c) => sources
            .iter()
            .find(|(s, _)| *s == c)
            .map_or_else(|| own.to_string(), |(_, n)| n.clone()),
        SurfaceChoice::Atoms(a) => atoms_name(a),
        SurfaceChoice::Own => own.into(),
    };
    super::widgets::labelled_combo(ui, "Colour surface by", "surface_colour_by", selected, |ui| {
        ui.selectable_value(&mut choice, SurfaceChoice::Own, own);
        for &a in atom_schemes {
            ui.selectable_value(&mut choice, SurfaceChoice::Atoms(a), atoms_name(a));
        }
        for (source, name) in &sources {
            ui.selectable_value(&mut choice, SurfaceChoice::Field(*source), name);
        }
    });
    if choice != current {
        match (choice, state.panel_field_id()) {
            (SurfaceChoice::Atoms(a), Some(id)) => {
                send(state, Command::EditRep(id, crate::app::reps::RepEdit::AtomColoring(a)));
            }
            (SurfaceChoice::Field(source), _) => send(state, Command::SetSurfaceColor(Some((source, None)))),
            _ => send(state, Command::SetSurfaceColor(None)),
        }
    }
    if matches!(current, SurfaceChoice::Atoms(_)) {
        ui.add(
            egui::Label::new(
                RichText::new("each point takes the colour of the atom whose van der Waals sphere lies nearest it")
                    .small(),
            )
            .wrap(),
        );
        return;
    }
    let Some(c) = coloring else {
        return;
    };
    if let Some(how) = how {
        ui.add(egui::Label::new(RichText::new(how).small()).wrap());
    }
    let Some(range) = c.range else {
        ui.label("computing the colouring field …");
        return;
    };
    // The range is edited in the colouring field's unit (kT/e, ... for potentials).
    let unit = state.coloring_unit(c.source);
    let mut shown = range.map(|v| unit.show(v));
    let mut changed = false;
    ui.horizontal_wrapped(|ui| {
        changed |= ends_ui(ui, &unit, &mut shown);
        if ui
            .button("Auto")
            .on_hover_text("Range of the values on the surface")
            .clicked()
        {
            send(state, Command::SetSurfaceColor(Some((c.source, None))));
        }
    });
    let range = shown.map(|v| unit.computed(v));
    if changed && range[0] != range[1] {
        send(state, Command::SetSurfaceColor(Some((c.source, Some(range)))));
    }
    // One colormap serves the slice and the surface: under the slice's range when the panel shows
    // one (a second combo of the same setting would share its id).
    let slice_shows_it = state.panel_slice_shown() && !matches!(state.panel_field(), Some(FieldChoice::MolSurf { .. }));
    if !slice_shows_it {
        colormap_ui(ui, state);
    }
}

/// The colormap of slices and coloured surfaces.
fn colormap_ui(ui: &mut egui::Ui, state: &mut AppState) {
    use crate::render::colormap::Colormap;
    if let Some(map) = choice_combo(ui, "Colormap", state.settings.colormap, &Colormap::ALL, Colormap::name) {
        send(state, Command::SetColormap(map));
    }
}
