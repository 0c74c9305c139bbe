//! Measurements and labels: their panels, the plot of a measurement over the trajectory with its
//! CSV export, and what is drawn over the 3-D view (the picked atom's halo, the labels, the
//! measurements as dashed lines with their values).
//!
//! `ui::main_ui` places the panels in the right side panel and the plot window over the view;
//! `ui::view::view_ui` calls [`view_overlay_ui`] after the view's paint callback. The state lives
//! in `app::measure` and `app::labels`; everything here reads it and pushes commands.

use super::{send, tokens};
use crate::app::labels::LabelFormat;
use crate::app::measure::{ClickMode, MEASURE_RGB_ON_DARK, MEASURE_RGB_ON_LIGHT, MeasureKind};
use crate::app::state::{AppState, Command};
use egui::{Color32, Pos2, Rect, RichText, Stroke};
use glam::Vec3;

/// Measurement lines and values in the view (and in the panel, on its dark background).
const MEASURE_COLOR: Color32 = rgb(MEASURE_RGB_ON_DARK);
/// Measurement lines and values over a light background (yellow on white cannot be read).
const MEASURE_COLOR_ON_LIGHT: Color32 = rgb(MEASURE_RGB_ON_LIGHT);

const fn rgb(c: [u8; 3]) -> Color32 {
    Color32::from_rgb(c[0], c[1], c[2])
}
/// Atoms picked towards a measurement not yet complete.
const PENDING_COLOR: Color32 = Color32::from_rgb(255, 140, 40);
/// Picked atoms and hints over a light background.
const PENDING_COLOR_ON_LIGHT: Color32 = Color32::from_rgb(170, 60, 0);

/// Whether the 3-D view's background is dark ([`crate::app::settings::Settings::background_is_dark`]).
pub fn background_is_dark(state: &AppState) -> bool {
    state.settings.background_is_dark()
}

/// The colour of the measurement lines and values over the 3-D view: amber on a dark background,
/// a dark amber on a light one.
pub fn measurement_color(state: &AppState) -> Color32 {
    if background_is_dark(state) {
        MEASURE_COLOR
    } else {
        MEASURE_COLOR_ON_LIGHT
    }
}
/// The picked atom's halo.
const HALO_COLOR: Color32 = Color32::from_rgb(80, 255, 220);

/// The click-mode buttons: measure a distance, angle or dihedral, label atoms, or just pick.
pub fn click_mode_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let mode = state.tools.measure.mode;
    ui.horizontal_wrapped(|ui| {
        for (kind, key) in MeasureKind::ALL.into_iter().zip(["2", "3", "4"]) {
            let on = mode == ClickMode::Measure(kind);
            let text = format!("{} ({key})", capitalised(kind.name()));
            let hover = format!(
                "Click {} atoms in the view to measure their {}",
                kind.atoms(),
                kind.name()
            );
            if ui.selectable_label(on, text).on_hover_text(hover).clicked() {
                send(state, Command::SetClickMode(toggled(mode, ClickMode::Measure(kind))));
            }
        }
        let on = mode == ClickMode::Label;
        if ui
            .selectable_label(on, "Label (1)")
            .on_hover_text("Click atoms in the view to label them; click again to remove")
            .clicked()
        {
            send(state, Command::SetClickMode(toggled(mode, ClickMode::Label)));
        }
    });
    if let ClickMode::Measure(kind) = mode {
        let n = state.tools.measure.picked.len();
        ui.label(
            RichText::new(format!(
                "Click {} more atom{} (Esc: stop)",
                kind.atoms() - n,
                if kind.atoms() - n == 1 { "" } else { "s" }
            ))
            .color(PENDING_COLOR),
        );
    }
}

fn toggled(now: ClickMode, pressed: ClickMode) -> ClickMode {
    if now == pressed { ClickMode::Pick } else { pressed }
}

fn capitalised(s: &str) -> String {
    let mut c = s.chars();
    match c.next() {
        Some(f) => f.to_uppercase().chain(c).collect(),
        None => String::new(),
    }
}

/// The "Measurements" panel: the click modes, then each measurement with its value at this frame
/// (unit beside it), a plot button and a delete button.
pub fn measurements_ui(ui: &mut egui::Ui, state: &mut AppState) {
    click_mode_ui(ui, state);
    rmsd_form_ui(ui, state);
    if state.tools.measure.list.is_empty() {
        ui.label(RichText::new("No measurements yet: press 2, 3 or 4 and click atoms.").weak());
        return;
    }
    let rows: Vec<(u64, String, String)> = state
        .tools
        .measure
        .list
        .iter()
        .map(|m| {
            let value = match (m.kind(), state.measurement_value(m)) {
                (Some(k), Some(v)) => k.format(v),
                _ => "–".into(),
            };
            (m.id, state.measurement_label(m), value)
        })
        .collect();
    // Each measurement: its value (unit beside it) with the plot and delete buttons, and what it
    // measures on a line of its own below (it wraps in a narrow panel).
    for (id, label, value) in rows {
        ui.separator();
        ui.horizontal(|ui| {
            ui.label(RichText::new(value).monospace().strong().color(MEASURE_COLOR));
            let plotted = state.tools.measure.plotted == Some(id);
            if ui
                .selectable_label(plotted, "Plot")
                .on_hover_text("Plot over all frames (with CSV export)")
                .clicked()
            {
                send(state, Command::PlotMeasurement((!plotted).then_some(id)));
            }
            if ui.small_button("×").on_hover_text("Delete this measurement").clicked() {
                send(state, Command::DeleteMeasurement(id));
            }
        });
        ui.add(egui::Label::new(RichText::new(label).small()).wrap());
    }
    ui.separator();
    if ui.button("Delete all measurements").clicked() {
        send(state, Command::ClearMeasurements);
    }
}

/// The labels of the selection form's field and buttons.
pub const RMSD_OF: &str = "Of the atoms";
pub const ADD_RMSD: &str = "Add RMSD";
pub const ADD_RGYR: &str = "Add radius of gyration";
pub const ADD_SASA: &str = "Add SASA";

/// A new measurement of a selection: its RMSD from a reference frame (superposed or not; with
/// two frames or more), its radius of gyration or its SASA.
fn rmsd_form_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let Some(doc) = state.document() else {
        return;
    };
    let n_frames = doc.n_frames;
    let protein = doc
        .structure
        .resnames
        .iter()
        .any(|r| crate::model::select::is_protein_resname(r.as_str()));
    let form = &mut state.tools.measure.rmsd_form;
    if form.selection.is_empty() {
        form.selection = if protein { "backbone" } else { "not hydrogen" }.to_string();
    }
    let (mut add, mut add_rgyr, mut add_sasa) = (false, false, false);
    ui.horizontal_wrapped(|ui| {
        let l = ui.label(RMSD_OF);
        ui.add(
            egui::TextEdit::singleline(&mut form.selection)
                .desired_width(tokens::TEXT_FIELD_WIDTH * 0.7)
                .id_salt("rmsd_selection"),
        )
        .labelled_by(l.id);
    });
    if n_frames >= 2 {
        ui.horizontal_wrapped(|ui| {
            add |= ui
                .button(ADD_RMSD)
                .on_hover_text("List it here; Plot shows it over every frame")
                .clicked();
            let l = ui.label("from frame");
            ui.add(
                egui::DragValue::new(&mut form.reference_frame)
                    .update_while_editing(false)
                    .range(0..=n_frames - 1),
            )
            .labelled_by(l.id);
            ui.checkbox(&mut form.fit, "superpose").on_hover_text(
                "Move each frame rigidly onto the reference first (least squares over the same atoms), as VMD's RMSD \
                 tool and MDAnalysis's rms.RMSD do",
            );
        });
    }
    ui.horizontal_wrapped(|ui| {
        add_rgyr |= ui
            .button(ADD_RGYR)
            .on_hover_text(
                "The mass-weighted radius of gyration of these atoms (as VMD's measure rgyr and MDAnalysis's \
                 radius_of_gyration), listed here; Plot shows it over every frame",
            )
            .clicked();
        add_sasa |= ui
            .button(ADD_SASA)
            .on_hover_text(
                "The solvent-accessible surface area of these atoms, in Å² (Shrake-Rupley, water probe of 1.4 Å, \
                 the atoms their own environment, as VMD's measure sasa), listed here; Plot shows it over every frame",
            )
            .clicked();
    });
    let parses = crate::model::select::Selection::parse(&form.selection);
    if let Err(e) = &parses {
        ui.label(RichText::new(e.to_string()).color(tokens::ERROR).small());
    }
    if (add_rgyr || add_sasa) && parses.is_ok() {
        let selection = form.selection.clone();
        let kind = if add_sasa { MeasureKind::Sasa } else { MeasureKind::Rgyr };
        send(state, Command::AddSelectionMeasurement { kind, selection });
        return;
    }
    if add && parses.is_ok() {
        let (selection, reference, fit) = (form.selection.clone(), form.reference_frame, form.fit);
        send(
            state,
            Command::AddRmsdMeasurement {
                selection,
                reference,
                fit,
            },
        );
    }
}

/// The "Labels" panel: label by a selection, the format, and the labelled atoms (each removable).
pub fn labels_ui(ui: &mut egui::Ui, state: &mut AppState) {
    ui.horizontal(|ui| {
        let edit = ui.add(
            egui::TextEdit::singleline(&mut state.tools.labels.selection_text)
                .hint_text("e.g. name CA")
                .desired_width(tokens::TEXT_FIELD_WIDTH * 0.8),
        );
        let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(egui::Key::Enter));
        if ui.button("Label atoms").clicked() || enter {
            let text = state.tools.labels.selection_text.trim().to_string();
            if !text.is_empty() {
                send(state, Command::LabelSelection(text));
            }
        }
    });
    let mut format = state.tools.labels.format;
    egui::ComboBox::from_label("Label text")
        .selected_text(format.name())
        .show_ui(ui, |ui| {
            for f in LabelFormat::ALL {
                ui.selectable_value(&mut format, f, f.name());
            }
        });
    if format != state.tools.labels.format {
        send(state, Command::SetLabelFormat(format));
    }
    let n = state.tools.labels.atoms.len();
    if n == 0 {
        ui.label(RichText::new("No labels: type a selection, or press 1 and click atoms.").weak());
        return;
    }
    ui.horizontal(|ui| {
        ui.label(format!("{n} label{}", if n == 1 { "" } else { "s" }));
        if ui.button("Remove all labels").clicked() {
            send(state, Command::ClearLabels);
        }
    });
    egui::ScrollArea::vertical()
        .id_salt("labels_list")
        .max_height(160.0)
        .show_rows(
            ui,
            ui.text_style_height(&egui::TextStyle::Body) + 4.0,
            n,
            |ui, range| {
                for &atom in state.tools.labels.atoms.get(range).unwrap_or_default().to_vec().iter() {
                    ui.horizontal(|ui| {
                        if ui.small_button("×").on_hover_text("Remove this label").clicked() {
                            send(state, Command::ToggleLabel(atom));
                        }
                        ui.label(state.label_text(atom));
                    });
                }
            },
        );
}

/// Where a world point lands in the view (points), if in front of the eye.
fn to_screen(state: &AppState, rect: Rect, ppp: f32, p: [f32; 3]) -> Option<Pos2> {
    let (px, _) = state.view.camera.project_to_pixel(Vec3::from(p), state.view.size_px)?;
    Some(rect.min + egui::vec2(px[0], px[1]) / ppp)
}

/// Text with a translucent backing, kept inside the view and off the tags already `placed`
/// (`app::export::annotations::place_tag`).
fn tag(
    painter: &egui::Painter,
    rect: Rect,
    at: Pos2,
    text: String,
    color: Color32,
    dark: bool,
    placed: &mut Vec<[f32; 4]>,
) {
    let galley = painter.layout_no_wrap(text, egui::FontId::proportional(13.0), color);
    let size = galley.size() + egui::vec2(6.0, 2.0);
    let want = at + egui::vec2(6.0, -size.y - 2.0);
    let [x, y] = crate::app::export::annotations::place_tag(
        [want.x, want.y],
        [size.x, size.y],
        [rect.min.x, rect.min.y],
        [rect.max.x, rect.max.y],
        placed,
    );
    let min = Pos2::new(x, y);
    let back = if dark {
        Color32::from_black_alpha(170)
    } else {
        Color32::from_white_alpha(200)
    };
    painter.rect_filled(Rect::from_min_size(min, size), 3.0, back);
    painter.galley(min + egui::vec2(3.0, 1.0), galley, color);
}

/// Draws the picked atom's halo, the labels and the measurements over the 3-D view in `rect`.
pub fn view_overlay_ui(ui: &mut egui::Ui, state: &AppState, rect: Rect) {
    let Some(doc) = state.document() else {
        return;
    };
    let painter = ui.painter_at(rect);
    let ppp = ui.ctx().pixels_per_point();
    let dark = background_is_dark(state);
    let pending = if dark { PENDING_COLOR } else { PENDING_COLOR_ON_LIGHT };
    let positions = &doc.frame.positions_angstrom;
    let at = |atom: usize| positions.get(atom).and_then(|&p| to_screen(state, rect, ppp, p));
    // The picked atom: a ring just outside its sphere.
    if let Some(pick) = &state.view.pick
        && let Some(&p) = positions.get(pick.atom)
        && let Some(c) = to_screen(state, rect, ppp, p)
    {
        let r_px = projected_radius(state, p) / ppp;
        painter.circle_stroke(c, r_px + 3.0, Stroke::new(2.5, HALO_COLOR));
    }
    for &atom in &state.tools.measure.picked {
        if let Some(c) = at(atom) {
            painter.circle_stroke(c, 6.0, Stroke::new(2.0, pending));
        }
    }
    let text_color = if dark { Color32::WHITE } else { Color32::BLACK };
    let mut placed = Vec::new();
    for &atom in &state.tools.labels.atoms {
        if let Some(c) = at(atom) {
            tag(&painter, rect, c, state.label_text(atom), text_color, dark, &mut placed);
        }
    }
    let measure_color = measurement_color(state);
    let stroke = Stroke::new(1.5, measure_color);
    // An RMSD has no line to draw.
    for m in state.tools.measure.list.iter().filter(|m| m.spec.is_none()) {
        let points: Option<Vec<Pos2>> = m.atoms.iter().map(|&a| at(a)).collect();
        let (Some(points), Some(kind)) = (points, m.kind()) else {
            continue;
        };
        painter.extend(egui::Shape::dashed_line(&points, stroke, 6.0, 4.0));
        let Some(value) = state.measurement_value(m) else {
            continue;
        };
        // The value beside the bond it is about: a distance's middle, an angle's vertex, a
        // dihedral's central bond.
        let anchor = match points.as_slice() {
            [a, b] => a.lerp(*b, 0.5),
            [_, b, _] => *b,
            [_, b, c, _] => b.lerp(*c, 0.5),
            _ => continue,
        };
        tag(
            &painter,
            rect,
            anchor,
            kind.format(value),
            measure_color,
            dark,
            &mut placed,
        );
    }
    if let ClickMode::Measure(kind) = state.tools.measure.mode {
        let n = state.tools.measure.picked.len();
        let hint = format!(
            "{}: click atom {} of {} (Esc: stop)",
            capitalised(kind.name()),
            n + 1,
            kind.atoms()
        );
        tag(
            &painter,
            rect,
            rect.left_top() + egui::vec2(4.0, 24.0),
            hint,
            pending,
            dark,
            &mut placed,
        );
    } else if state.tools.measure.mode == ClickMode::Label {
        let hint = "Labels: click atoms (Esc: stop)".to_string();
        tag(
            &painter,
            rect,
            rect.left_top() + egui::vec2(4.0, 24.0),
            hint,
            text_color,
            dark,
            &mut placed,
        );
    }
}

/// The on-screen radius (physical pixels) of the sphere drawn for the atom at `p`.
fn projected_radius(state: &AppState, p: [f32; 3]) -> f32 {
    let r = state
        .view
        .spheres
        .iter()
        .find(|s| s.center_angstrom == p)
        .map_or(0.5, |s| s.radius_angstrom);
    let cam = &state.view.camera;
    let dist = (Vec3::from(p) - cam.eye_angstrom()).length().max(1e-3);
    let half_h = state.view.size_px[1] as f32 * 0.5;
    r * half_h / (dist * (cam.fov_y_radians * 0.5).tan().max(1e-3))
}

/// The plot of a measurement over the trajectory, with the current frame marked and "Export CSV".
pub fn plot_window(ctx: &egui::Context, state: &mut AppState) {
    use egui_plot::{Line, Plot, PlotPoints, VLine};
    let Some(id) = state.tools.measure.plotted else {
        return;
    };
    let Some(m) = state.tools.measure.list.iter().find(|m| m.id == id).cloned() else {
        return;
    };
    let Some(kind) = m.kind() else {
        return;
    };
    let title = state.measurement_label(&m);
    let frame = state.document().map_or(0, |d| d.frame_index);
    let Some(series) = state.tools.measure.series.get(&id) else {
        return;
    };
    let points: Vec<[f64; 2]> = series
        .values
        .iter()
        .enumerate()
        .filter_map(|(i, v)| Some([i as f64, (*v)?]))
        .collect();
    let progress = (!series.done()).then_some((series.values.len(), series.n_frames));
    let error = series.error.clone();
    let mut open = true;
    let screen = ctx.content_rect();
    egui::Window::new("Measurement over the trajectory")
        .open(&mut open)
        .default_pos(Pos2::new(
            screen.center().x - 210.0,
            (screen.max.y - 400.0).max(screen.min.y),
        ))
        .default_size([420.0, 300.0])
        .show(ctx, |ui| {
            ui.label(&title);
            if let Some((read, n)) = progress {
                ui.ctx().request_repaint();
                let done = read as f32 / n.max(1) as f32;
                ui.add(egui::ProgressBar::new(done).text(format!("reading frames: {read} of {n}")));
            }
            if let Some(e) = &error {
                ui.label(RichText::new(e).color(tokens::ERROR));
            }
            let y_label = format!("{} ({})", kind.name(), kind.unit());
            Plot::new(("measurement_plot", id))
                .height(180.0)
                .grid_spacing(egui::Rangef::new(super::widgets::PLOT_GRID_MIN_POINTS, 300.0))
                .x_grid_spacer(|g| super::widgets::round_grid_marks(g, super::widgets::PLOT_X_LABEL_POINTS))
                .y_grid_spacer(|g| super::widgets::round_grid_marks(g, super::widgets::PLOT_Y_LABEL_POINTS))
                .x_axis_formatter(super::widgets::round_mark_text)
                .y_axis_formatter(super::widgets::round_mark_text)
                .x_axis_label("frame")
                .y_axis_label(y_label.clone())
                .show(ui, |plot| {
                    plot.line(Line::new(y_label, PlotPoints::from(points)).color(MEASURE_COLOR));
                    plot.vline(VLine::new("current frame", frame as f64).color(tokens::VIRTUAL));
                });
            ui.horizontal(|ui| {
                let l = ui.label("CSV file");
                ui.add(egui::TextEdit::singleline(&mut state.tools.measure.csv_path).desired_width(220.0))
                    .labelled_by(l.id);
            });
            let path = state.tools.measure.csv_path.trim().to_string();
            if ui
                .add_enabled(!path.is_empty() && progress.is_none(), egui::Button::new("Export CSV"))
                .on_hover_text("frame, time (ps) where known, and the value with its unit")
                .clicked()
            {
                send(state, Command::ExportMeasurementCsv(id, path.into()));
            }
        });
    if !open {
        send(state, Command::PlotMeasurement(None));
    }
}
