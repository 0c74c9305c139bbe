//! The panels: files, representations, orbitals (list and energy diagram), fields, timeline,
//! jobs, status bar, help, and the 3-D view with its mouse handling.

use super::{SHORTCUTS, send, tokens};
use crate::app::fields::FieldChoice;
use crate::app::representation::{ColorBy, DrawStyle};
use crate::app::state::{AppState, Command, IsoMode};
use crate::model::Spin;
use crate::model::units::EV_PER_HARTREE;
use egui::{Key, RichText, Sense};

/// The whole window: menu, side panels, timeline and status bar, and the 3-D view in the middle.
pub fn main_ui(ui: &mut egui::Ui, state: &mut AppState) {
    shortcuts(ui, state);
    dropped_files(ui, state);
    egui::Panel::top("orbitfield_menu").show(ui, |ui| menu_ui(ui, state));
    egui::Panel::bottom("orbitfield_status").show(ui, |ui| status_bar_ui(ui, state));
    egui::Panel::bottom("orbitfield_timeline").show(ui, |ui| timeline_ui(ui, state));
    egui::Panel::left("orbitfield_left")
        .default_size(tokens::SIDE_PANEL_WIDTH)
        .show(ui, |ui| {
            egui::ScrollArea::vertical().id_salt("left_scroll").show(ui, |ui| {
                egui::CollapsingHeader::new("Files")
                    .default_open(true)
                    .show(ui, |ui| files_ui(ui, state));
                egui::CollapsingHeader::new("Representation")
                    .default_open(true)
                    .show(ui, |ui| representation_ui(ui, state));
                egui::CollapsingHeader::new("Jobs")
                    .default_open(true)
                    .show(ui, |ui| jobs_ui(ui, state));
            });
        });
    egui::Panel::right("orbitfield_right")
        .default_size(tokens::SIDE_PANEL_WIDTH)
        .show(ui, |ui| {
            egui::ScrollArea::vertical().id_salt("right_scroll").show(ui, |ui| {
                egui::CollapsingHeader::new("Fields")
                    .default_open(true)
                    .show(ui, |ui| fields_ui(ui, state));
                egui::CollapsingHeader::new("Representations")
                    .default_open(true)
                    .show(ui, |ui| representations_ui(ui, state));
                egui::CollapsingHeader::new("Orbitals")
                    .default_open(true)
                    .show(ui, |ui| orbitals_ui(ui, state));
                egui::CollapsingHeader::new("RDF")
                    .default_open(false)
                    .show(ui, |ui| rdf_ui(ui, state));
            });
        });
    egui::CentralPanel::default()
        .frame(egui::Frame::NONE)
        .show(ui, |ui| view_ui(ui, state));
    let mut open = state.show_help;
    egui::Window::new("Keyboard and mouse")
        .open(&mut open)
        .collapsible(false)
        .show(ui.ctx(), help_ui);
    if open != state.show_help {
        send(state, Command::ToggleHelp);
    }
}

/// Keyboard shortcuts (ignored while a text field has focus).
pub fn shortcuts(ui: &mut egui::Ui, state: &mut AppState) {
    if ui.ctx().egui_wants_keyboard_input() {
        return;
    }
    let (open, space, left, right, home, end, up, down, plus, minus, r, esc, help) = ui.input(|i| {
        (
            i.modifiers.command && i.key_pressed(Key::O),
            i.key_pressed(Key::Space),
            i.key_pressed(Key::ArrowLeft),
            i.key_pressed(Key::ArrowRight),
            i.key_pressed(Key::Home),
            i.key_pressed(Key::End),
            i.key_pressed(Key::ArrowUp),
            i.key_pressed(Key::ArrowDown),
            i.key_pressed(Key::Plus) || i.key_pressed(Key::Equals),
            i.key_pressed(Key::Minus),
            !i.modifiers.command && i.key_pressed(Key::R),
            i.key_pressed(Key::Escape),
            i.key_pressed(Key::F1) || i.key_pressed(Key::Questionmark),
        )
    });
    if open {
        send(state, Command::OpenDialog);
    }
    if space {
        send(state, Command::TogglePlaying);
    }
    if left {
        send(state, Command::StepFrame(-1));
    }
    if right {
        send(state, Command::StepFrame(1));
    }
    if home {
        send(state, Command::SetFrame(0));
    }
    if end {
        send(state, Command::SetFrame(usize::MAX));
    }
    if up || down {
        let n = state.orbital_rows(state.spin).len();
        if n > 0 {
            let cur = state.orbital.or(state.homo_index(state.spin)).unwrap_or(0);
            let next = if up {
                (cur + 1).min(n - 1)
            } else {
                cur.saturating_sub(1)
            };
            send(state, Command::SelectOrbital(Some(next)));
        }
    }
    if plus {
        send(state, Command::SetIsoValue(state.settings.iso_value * 1.25));
    }
    if minus {
        send(state, Command::SetIsoValue(state.settings.iso_value / 1.25));
    }
    if r {
        send(state, Command::ResetCamera);
    }
    if esc {
        send(state, Command::CancelJobs);
    }
    if help {
        send(state, Command::ToggleHelp);
    }
}

fn dropped_files(ui: &mut egui::Ui, state: &mut AppState) {
    let paths: Vec<std::path::PathBuf> = ui.input(|i| {
        i.raw
            .dropped_files
            .iter()
            .map(|f| f.path().to_path_buf())
            .filter(|p| !p.as_os_str().is_empty())
            .collect()
    });
    if !paths.is_empty() {
        send(state, Command::OpenFiles(paths));
    }
}

fn menu_ui(ui: &mut egui::Ui, state: &mut AppState) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| {
            if ui.button("Open…").clicked() {
                send(state, Command::OpenDialog);
            }
            if ui.button("Open demo").clicked() {
                send(state, Command::OpenDemo);
            }
            if ui.button("Close").clicked() {
                send(state, Command::CloseDocument);
            }
            if ui.button("Save screenshot").clicked() {
                send(state, Command::Screenshot(std::path::PathBuf::from("orbitfield.png")));
            }
        });
        ui.menu_button("View", |ui| {
            if ui.button("Reset view (R)").clicked() {
                send(state, Command::ResetCamera);
            }
            let mut dark = state.settings.dark_background;
            if ui.checkbox(&mut dark, "Dark background").changed() {
                send(state, Command::SetDarkBackground(dark));
            }
        });
        if ui.button("Help").clicked() {
            send(state, Command::ToggleHelp);
        }
    });
}

/// Files: open, demo, recent list, and what is open.
pub fn files_ui(ui: &mut egui::Ui, state: &mut AppState) {
    ui.horizontal(|ui| {
        if ui.button("Open…").clicked() {
            send(state, Command::OpenDialog);
        }
        if ui.button("Demo").clicked() {
            send(state, Command::OpenDemo);
        }
    });
    if let Some(doc) = &state.document {
        ui.label(RichText::new(&doc.name).strong());
        ui.label(format!(
            "{} atoms, {} bonds, {} frames",
            doc.structure.len(),
            doc.bonds.len(),
            doc.n_frames
        ));
        for w in doc.warnings.iter().take(5) {
            ui.label(RichText::new(w).small().weak());
        }
    } else {
        ui.label("Drop files here or open them.");
    }
    if !state.settings.recent.is_empty() {
        ui.add_space(tokens::SECTION_GAP);
        ui.label(RichText::new("Recent").weak());
        let recent = state.settings.recent.clone();
        for files in recent {
            let label = files
                .iter()
                .map(|p| {
                    p.file_name()
                        .map_or_else(|| p.display().to_string(), |n| n.to_string_lossy().into_owned())
                })
                .collect::<Vec<_>>()
                .join(" + ");
            if ui.link(label).on_hover_text(format!("{:?}", files)).clicked() {
                send(state, Command::OpenFiles(files));
            }
        }
    }
}

/// Representation: draw style, colouring, surfaces, background.
pub fn representation_ui(ui: &mut egui::Ui, state: &mut AppState) {
    ui.horizontal(|ui| {
        let l = ui.label("Fit to");
        let edit = ui
            .add(egui::TextEdit::singleline(&mut state.fit_selection_text).desired_width(110.0))
            .labelled_by(l.id);
        let enter = edit.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter));
        if ui.button("Fit").clicked() || enter {
            send(state, Command::FitToSelection(state.fit_selection_text.clone()));
        }
    });
    if let Some(style) = choice_combo(ui, "Style", state.settings.style, &DrawStyle::ALL, DrawStyle::name) {
        send(state, Command::SetStyle(style));
    }
    if let Some(c) = choice_combo(ui, "Colour by", state.settings.color_by, &ColorBy::ALL, ColorBy::name) {
        send(state, Command::SetColorBy(c));
    }
    let mut opacity = state.settings.surface_opacity;
    if ui
        .add(egui::Slider::new(&mut opacity, 0.05..=1.0).text("Surface opacity"))
        .changed()
    {
        send(state, Command::SetOpacity(opacity));
    }
    let mut cue = state.settings.depth_cue;
    if ui
        .add(egui::Slider::new(&mut cue, 0.0..=1.0).text("Depth cue"))
        .changed()
    {
        send(state, Command::SetDepthCue(cue));
    }
    let mut dark = state.settings.dark_background;
    if ui.checkbox(&mut dark, "Dark background").changed() {
        send(state, Command::SetDarkBackground(dark));
    }
}

/// Field choice and isovalue (absolute or relative to the maximum), slice toggle.
pub fn fields_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let Some(doc) = &state.document else {
        ui.label("No document.");
        return;
    };
    let has_wf = !doc.wavefunctions.is_empty();
    let has_charges = doc.potential_lattice.is_some();
    let n_grids = doc.grids.len();
    let qm_note = doc.qm.as_ref().map(|q| q.summary());
    let current = state.field;
    let name = |f: Option<FieldChoice>| match f {
        None => "None".to_string(),
        Some(FieldChoice::Orbital { spin, index }) => format!("Orbital {} ({spin:?})", index + 1),
        Some(FieldChoice::Density) => "Electron density".to_string(),
        Some(FieldChoice::Volume(i)) => format!("Volume {}", i + 1),
        Some(FieldChoice::Potential) => "Electrostatic potential (charges)".to_string(),
        Some(FieldChoice::PotentialMean { frames }) => format!("Electrostatic potential, mean of {frames} frames"),
    };
    let mut choice = current;
    egui::ComboBox::from_label("Field")
        .selected_text(name(current))
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut choice, None, "None");
            if has_wf {
                let orb = state
                    .orbital
                    .or(state.homo_index(state.spin))
                    .map(|index| FieldChoice::Orbital {
                        spin: state.spin,
                        index,
                    });
                if let Some(o) = orb {
                    ui.selectable_value(&mut choice, Some(o), name(Some(o)));
                }
                ui.selectable_value(&mut choice, Some(FieldChoice::Density), "Electron density");
            }
            for i in 0..n_grids {
                ui.selectable_value(
                    &mut choice,
                    Some(FieldChoice::Volume(i)),
                    name(Some(FieldChoice::Volume(i))),
                );
            }
            if has_charges {
                ui.selectable_value(
                    &mut choice,
                    Some(FieldChoice::Potential),
                    name(Some(FieldChoice::Potential)),
                );
            }
        });
    if choice != current {
        send(state, Command::SelectField(choice));
    }
    if let Some(note) = qm_note {
        ui.small(note);
    }
    if has_charges {
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
        ui.horizontal(|ui| {
            ui.label("Potential: sum");
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
    }
    let mut relative = state.iso_mode == IsoMode::RelativeToMax;
    ui.horizontal(|ui| {
        ui.label("Isovalue");
        if ui.radio_value(&mut relative, false, "absolute").changed()
            || ui.radio_value(&mut relative, true, "× max").changed()
        {
            send(
                state,
                Command::SetIsoMode(if relative {
                    IsoMode::RelativeToMax
                } else {
                    IsoMode::Absolute
                }),
            );
        }
    });
    let mut iso = state.settings.iso_value;
    if iso_slider(ui, &mut iso, relative, 1.0) {
        send(state, Command::SetIsoValue(iso));
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
    }
    if let Some((_, grid)) = &state.shown_field {
        let iso_abs = state.absolute_iso(grid);
        if let Some((lo, hi)) = grid.min_max() {
            ui.label(RichText::new(format!("range {lo:.3e} .. {hi:.3e}; surface at ±{iso_abs:.3e}")).small());
        }
    }
    slice_ui(ui, state);
    surface_color_ui(ui, state);
    if !state.fields.can_compute() && has_wf {
        ui.label(
            RichText::new(format!("Orbitals cannot be computed: {}", state.fields.backend_name())).color(tokens::ERROR),
        );
    }
    if !state.fields.can_extract() {
        ui.label(RichText::new("Isosurfaces unavailable in this build (no extractor)").color(tokens::ERROR));
    }
}

/// Extra field representations: one row each (visibility, field, isovalue, lobe colours, surface
/// and slice switches, remove) and buttons that add one.
pub fn representations_ui(ui: &mut egui::Ui, state: &mut AppState) {
    use crate::app::multi::RepresentationEdit as Edit;
    let Some(doc) = &state.document else {
        ui.label("No document.");
        return;
    };
    let has_wf = doc.wavefunction().is_some();
    let has_charges = doc.potential_lattice.is_some();
    let n_grids = doc.grids.len();
    let mut commands = Vec::new();
    for r in &state.representations.list {
        let id = r.id;
        ui.push_id(("representation", id), |ui| {
            ui.horizontal(|ui| {
                let mut visible = r.visible;
                if ui.checkbox(&mut visible, r.label.as_str()).changed() {
                    commands.push(Command::EditRepresentation(id, Edit::Visible(visible)));
                }
                if ui.small_button("Remove").clicked() {
                    commands.push(Command::RemoveRepresentation(id));
                }
            });
            ui.horizontal(|ui| {
                let mut relative = r.iso_mode == IsoMode::RelativeToMax;
                let mut iso = r.iso_value;
                if iso_slider(ui, &mut iso, relative, 10.0) {
                    commands.push(Command::EditRepresentation(id, Edit::IsoValue(iso)));
                }
                if ui.checkbox(&mut relative, "x max").changed() {
                    let mode = if relative {
                        IsoMode::RelativeToMax
                    } else {
                        IsoMode::Absolute
                    };
                    commands.push(Command::EditRepresentation(id, Edit::IsoMode(mode)));
                }
            });
            ui.horizontal(|ui| {
                let lobes = if r.is_signed() { 2 } else { 1 };
                for lobe in 0..lobes {
                    let mut rgb = r.colors[lobe];
                    if ui
                        .color_edit_button_rgb(&mut rgb)
                        .on_hover_text(if lobe == 0 { "positive lobe" } else { "negative lobe" })
                        .changed()
                    {
                        commands.push(Command::EditRepresentation(id, Edit::Color { lobe, rgb }));
                    }
                }
                let mut surfaces = r.surfaces;
                if ui.checkbox(&mut surfaces, "surfaces").changed() {
                    commands.push(Command::EditRepresentation(id, Edit::Surfaces(surfaces)));
                }
                let mut slice = r.slice;
                if ui
                    .checkbox(&mut slice, "slice")
                    .on_hover_text("One slice is drawn: the topmost visible representation's with its slice on")
                    .changed()
                {
                    commands.push(Command::EditRepresentation(id, Edit::Slice(slice)));
                }
            });
        });
        ui.separator();
    }
    if state.representations.list.iter().any(|r| r.slice && r.visible) {
        ui.label(
            RichText::new(
                "The slice plane shows the topmost visible representation with a slice (plane set under Fields).",
            )
            .small(),
        );
    }
    ui.horizontal_wrapped(|ui| {
        ui.label("Add:");
        let spin = state.spin;
        if has_wf && let Some(homo) = state.homo_index(spin) {
            if ui.button("HOMO").clicked() {
                commands.push(Command::AddRepresentation(FieldChoice::Orbital { spin, index: homo }));
            }
            let n = state.orbital_rows(spin).len();
            if homo + 1 < n && ui.button("LUMO").clicked() {
                commands.push(Command::AddRepresentation(FieldChoice::Orbital {
                    spin,
                    index: homo + 1,
                }));
            }
        }
        if has_wf && ui.button("density").clicked() {
            commands.push(Command::AddRepresentation(FieldChoice::Density));
        }
        if has_charges && ui.button("potential").clicked() {
            commands.push(Command::AddRepresentation(FieldChoice::Potential));
        }
        for i in 0..n_grids {
            if ui.button(format!("volume {}", i + 1)).clicked() {
                commands.push(Command::AddRepresentation(FieldChoice::Volume(i)));
            }
        }
    });
    if has_wf {
        let n = state.orbital_rows(state.spin).len();
        let id = egui::Id::unique("orbitfield_add_orbital_number");
        let mut number: usize = ui.data(|d| d.get_temp(id)).unwrap_or(1);
        ui.horizontal(|ui| {
            let l = ui.label("Orbital");
            ui.add(egui::DragValue::new(&mut number).range(1..=n.max(1)))
                .labelled_by(l.id);
            if ui.button("Add orbital").clicked() && number >= 1 && number <= n {
                commands.push(Command::AddRepresentation(FieldChoice::Orbital {
                    spin: state.spin,
                    index: number - 1,
                }));
            }
        });
        ui.data_mut(|d| d.insert_temp(id, number));
    }
    for c in commands {
        send(state, c);
    }
}

/// The slice plane: on/off, orientation (x, y, z or a free normal) and position.
pub fn slice_ui(ui: &mut egui::Ui, state: &mut AppState) {
    use crate::app::slice::SliceNormal;
    let mut show = state.show_slice;
    if ui.checkbox(&mut show, "Slice plane").changed() {
        send(state, Command::SetShowSlice(show));
    }
    // The plane is shared with the representations that draw a slice.
    if !state.show_slice && !state.representations.list.iter().any(|r| r.visible && r.slice) {
        return;
    }
    let mut plane = state.slice_plane;
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
    if plane != state.slice_plane {
        send(state, Command::SetSlicePlane(plane));
    }
}

/// Colouring the surfaces by a volume (e.g. the potential on a density surface): volume, range and
/// colormap.
pub fn surface_color_ui(ui: &mut egui::Ui, state: &mut AppState) {
    use crate::render::colormap::Colormap;
    let Some(doc) = &state.document else {
        return;
    };
    let volumes: Vec<String> = doc
        .grids
        .iter()
        .enumerate()
        .map(|(i, g)| {
            let [a, b, c] = g.lattice.dims;
            format!("Volume {} ({a}x{b}x{c})", i + 1)
        })
        .collect();
    let current = state.surface_color.map(|c| c.volume);
    let mut choice = current;
    egui::ComboBox::from_label("Colour surface by")
        .selected_text(
            current
                .and_then(|i| volumes.get(i).cloned())
                .unwrap_or_else(|| "Lobe colours".into()),
        )
        .show_ui(ui, |ui| {
            ui.selectable_value(&mut choice, None, "Lobe colours");
            for (i, name) in volumes.iter().enumerate() {
                ui.selectable_value(&mut choice, Some(i), name);
            }
        });
    if choice != current {
        send(state, Command::SetSurfaceColor(choice.map(|v| (v, None))));
    }
    let Some(c) = state.surface_color else {
        return;
    };
    let mut range = c.range;
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
            send(state, Command::SetSurfaceColor(Some((c.volume, Some(range)))));
        }
        if ui
            .button("Auto")
            .on_hover_text("Range of the values on the surface")
            .clicked()
        {
            send(state, Command::SetSurfaceColor(Some((c.volume, None))));
        }
    });
    if let Some(map) = choice_combo(ui, "Colormap", state.settings.colormap, &Colormap::ALL, Colormap::name) {
        send(state, Command::SetColormap(map));
    }
}

/// The logarithmic isovalue slider: a fraction of the largest |value| (0.001..1) when `relative`,
/// else an absolute value from 0.0001 to `max_absolute`. True when the user moved it.
fn iso_slider(ui: &mut egui::Ui, iso: &mut f32, relative: bool, max_absolute: f32) -> bool {
    let range = if relative { 0.001..=1.0 } else { 0.0001..=max_absolute };
    ui.add(
        egui::Slider::new(iso, range)
            .logarithmic(true)
            .text("iso")
            .max_decimals(5),
    )
    .changed()
}

/// A combo box over `all`, showing each choice by `name`; the new choice when the user changed it.
fn choice_combo<T: Copy + PartialEq>(
    ui: &mut egui::Ui,
    label: &str,
    current: T,
    all: &[T],
    name: fn(T) -> &'static str,
) -> Option<T> {
    let mut value = current;
    egui::ComboBox::from_label(label)
        .selected_text(name(value))
        .show_ui(ui, |ui| {
            for &v in all {
                ui.selectable_value(&mut value, v, name(v));
            }
        });
    (value != current).then_some(value)
}

/// The colormap legend of coloured surfaces, drawn over the bottom-right corner of the 3-D view.
fn color_legend_ui(ui: &egui::Ui, state: &AppState, view: egui::Rect) {
    let Some(c) = state.surface_color else {
        return;
    };
    let bar = egui::Rect::from_min_size(
        egui::pos2(view.right() - 190.0, view.bottom() - 46.0),
        egui::vec2(170.0, 12.0),
    );
    let painter = ui.painter_at(view);
    painter.rect_filled(
        bar.expand(22.0).translate(egui::vec2(0.0, 8.0)),
        4.0,
        egui::Color32::from_black_alpha(150),
    );
    let steps = 48;
    for k in 0..steps {
        let t0 = k as f32 / steps as f32;
        let [r, g, b, _] = state.settings.colormap.sample((k as f32 + 0.5) / steps as f32);
        let x0 = bar.left() + t0 * bar.width();
        let cell = egui::Rect::from_min_max(
            egui::pos2(x0, bar.top()),
            egui::pos2(x0 + bar.width() / steps as f32 + 0.5, bar.bottom()),
        );
        painter.rect_filled(cell, 0.0, egui::Color32::from_rgb(r, g, b));
    }
    let text = |pos: egui::Pos2, align: egui::Align2, s: String| {
        painter.text(pos, align, s, egui::FontId::proportional(11.0), egui::Color32::WHITE);
    };
    text(
        bar.left_bottom() + egui::vec2(0.0, 3.0),
        egui::Align2::LEFT_TOP,
        format!("{:.3}", c.range[0]),
    );
    text(
        bar.right_bottom() + egui::vec2(0.0, 3.0),
        egui::Align2::RIGHT_TOP,
        format!("{:.3}", c.range[1]),
    );
    text(
        bar.center_top() - egui::vec2(0.0, 3.0),
        egui::Align2::CENTER_BOTTOM,
        format!("Volume {} (file units)", c.volume + 1),
    );
}

/// "Follow through frames": match the selected orbital frame by frame by overlap, and say how good
/// the match at this frame is.
fn follow_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let series = state
        .document
        .as_ref()
        .is_some_and(|d| d.wavefunctions.len() > 1 && d.wavefunctions.len() == d.n_frames);
    if !series {
        return;
    }
    let mut on = state.follow.is_some();
    if ui
        .checkbox(&mut on, "Follow through frames")
        .on_hover_text("Match this orbital in every frame by maximum overlap, with its phase kept")
        .changed()
    {
        send(state, Command::FollowOrbital(on));
    }
    if state.follow.as_ref().is_some_and(|f| f.steps.is_none()) {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label("matching…");
        });
    } else if let Some(step) = state.follow_step() {
        let text = format!(
            "overlap with the previous frame {:.3}{}",
            step.overlap,
            if step.runner_up > 0.0 {
                format!(", next best {:.3}", step.runner_up)
            } else {
                String::new()
            }
        );
        if step.ambiguous {
            ui.label(RichText::new(format!("ambiguous match: {text}")).color(tokens::ERROR));
        } else {
            ui.label(RichText::new(text).small());
        }
    }
}

/// The orbital list (energy, occupation, symmetry, HOMO/LUMO), spin switch and energy diagram.
pub fn orbitals_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let rows = state.orbital_rows(state.spin);
    if rows.is_empty() {
        ui.label("No wavefunction.");
        return;
    }
    ui.horizontal(|ui| {
        if state.is_unrestricted() {
            let mut spin = state.spin;
            ui.selectable_value(&mut spin, Spin::Alpha, "alpha");
            ui.selectable_value(&mut spin, Spin::Beta, "beta");
            if spin != state.spin {
                send(state, Command::SetSpin(spin));
            }
        }
        let mut ev = state.settings.energies_in_ev;
        ui.selectable_value(&mut ev, true, "eV");
        ui.selectable_value(&mut ev, false, "hartree");
        if ev != state.settings.energies_in_ev {
            send(state, Command::SetEnergiesInEv(ev));
        }
    });
    energy_diagram_ui(ui, state, &rows);
    follow_ui(ui, state);
    let selected = state.orbital;
    let homo = state.homo_index(state.spin).unwrap_or(0);
    egui::ScrollArea::vertical()
        .id_salt("orbital_list")
        .max_height(260.0)
        .show(ui, |ui| {
            egui::Grid::new("orbital_grid")
                .striped(true)
                .num_columns(4)
                .show(ui, |ui| {
                    ui.label(RichText::new("#").strong());
                    ui.label(RichText::new("energy").strong());
                    ui.label(RichText::new("occ").strong());
                    ui.label(RichText::new("sym").strong());
                    ui.end_row();
                    // Frontier orbitals first in view: list from high to low energy around the gap.
                    for row in rows
                        .iter()
                        .rev()
                        .filter(|r| r.index + 12 >= homo && r.index <= homo + 12)
                    {
                        let text = if row.label.is_empty() {
                            format!("{}", row.index + 1)
                        } else {
                            format!("{} {}", row.index + 1, row.label)
                        };
                        let r = ui.selectable_label(selected == Some(row.index), text);
                        if r.clicked() {
                            send(state, Command::SelectOrbital(Some(row.index)));
                        }
                        if state.scroll_to_orbital && selected == Some(row.index) {
                            r.scroll_to_me(Some(egui::Align::Center));
                            state.scroll_to_orbital = false;
                        }
                        ui.label(state.format_energy(row.energy_hartree));
                        ui.label(format!("{:.2}", row.occupation));
                        ui.label(&row.symmetry);
                        ui.end_row();
                    }
                });
        });
}

/// Horizontal extent of each shown level in the energy diagram: degenerate levels (within 1e-4
/// hartree) sit side by side, so each can be seen and clicked.
pub fn level_extents(energies_hartree: &[f64]) -> Vec<[f64; 2]> {
    let mut out = vec![[0.0, 1.0]; energies_hartree.len()];
    let mut k = 0;
    while k < energies_hartree.len() {
        let mut end = k + 1;
        while end < energies_hartree.len() && (energies_hartree[end] - energies_hartree[k]).abs() < 1e-4 {
            end += 1;
        }
        let n = (end - k) as f64;
        for (j, slot) in out[k..end].iter_mut().enumerate() {
            let w = 1.0 / n;
            *slot = [j as f64 * w + 0.08 * w, (j as f64 + 1.0) * w - 0.08 * w];
        }
        k = end;
    }
    out
}

/// The energy-level diagram around the frontier orbitals; clicking a level selects its orbital.
fn energy_diagram_ui(ui: &mut egui::Ui, state: &mut AppState, rows: &[crate::app::state::OrbitalRow]) {
    use egui_plot::{Line, Plot, PlotPoints};
    let homo = state.homo_index(state.spin).unwrap_or(0);
    let mut shown: Vec<_> = rows
        .iter()
        .filter(|r| r.index + 5 >= homo && r.index <= homo + 6 && r.energy_hartree.is_finite())
        .collect();
    shown.sort_by(|a, b| {
        a.energy_hartree
            .total_cmp(&b.energy_hartree)
            .then(a.index.cmp(&b.index))
    });
    let extents = level_extents(&shown.iter().map(|r| r.energy_hartree).collect::<Vec<_>>());
    let selected = state.orbital;
    let response = Plot::new("energy_levels")
        .height(160.0)
        .allow_drag(false)
        .allow_zoom(false)
        .allow_scroll(false)
        .allow_boxed_zoom(false)
        .allow_double_click_reset(false)
        .show_x(false)
        .y_axis_label("eV")
        .show(ui, |plot| {
            for (r, x) in shown.iter().zip(&extents) {
                let e = r.energy_hartree * EV_PER_HARTREE;
                let color = if Some(r.index) == selected {
                    tokens::SELECTED
                } else if r.occupation > 0.5 {
                    tokens::OCCUPIED
                } else {
                    tokens::VIRTUAL
                };
                let name = if r.label.is_empty() {
                    format!("{}", r.index + 1)
                } else {
                    r.label.clone()
                };
                plot.line(
                    Line::new(name, PlotPoints::from(vec![[x[0], e], [x[1], e]]))
                        .color(color)
                        .width(if Some(r.index) == selected { 3.0 } else { 1.5 }),
                );
            }
        });
    if response.response.clicked()
        && let Some(pos) = response.response.interact_pointer_pos()
    {
        // The level under the pointer: inside its horizontal extent, nearest on screen, within 8 points.
        let t = &response.transform;
        let p = t.value_from_position(pos);
        let best = shown
            .iter()
            .zip(&extents)
            .filter(|(_, x)| p.x >= x[0] - 0.05 && p.x <= x[1] + 0.05)
            .map(|(r, _)| {
                let y = t
                    .position_from_point(&egui_plot::PlotPoint::new(0.0, r.energy_hartree * EV_PER_HARTREE))
                    .y;
                (r.index, (y - pos.y).abs())
            })
            .filter(|(_, d)| *d <= 8.0)
            .min_by(|a, b| a.1.total_cmp(&b.1));
        if let Some((index, _)) = best {
            send(state, Command::SelectOrbital(Some(index)));
        }
    }
}

/// Frame slider, play/pause, speed, loop.
pub fn timeline_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let Some(doc) = &state.document else {
        ui.label("No trajectory.");
        return;
    };
    let n = doc.n_frames;
    let mut frame = doc.frame_index;
    ui.horizontal(|ui| {
        let play_label = if state.timeline.playing { "Pause" } else { "Play" };
        if ui.button(play_label).clicked() {
            send(state, Command::TogglePlaying);
        }
        if ui.button("<").on_hover_text("Previous frame").clicked() {
            send(state, Command::StepFrame(-1));
        }
        if ui.button(">").on_hover_text("Next frame").clicked() {
            send(state, Command::StepFrame(1));
        }
        let last = n.saturating_sub(1);
        ui.spacing_mut().slider_width = (ui.available_width() - 330.0).max(80.0);
        if ui
            .add_enabled(n > 1, egui::Slider::new(&mut frame, 0..=last).text("frame"))
            .changed()
        {
            send(state, Command::SetFrame(frame));
        }
        let mut fps = state.timeline.fps;
        if ui
            .add(
                egui::DragValue::new(&mut fps)
                    .range(0.5..=120.0)
                    .speed(0.2)
                    .suffix(" fps"),
            )
            .changed()
        {
            send(state, Command::SetPlaybackFps(fps));
        }
        let mut looping = state.timeline.looping;
        if ui.checkbox(&mut looping, "loop").changed() {
            send(state, Command::SetLoop(looping));
        }
        let mut every = state.settings.compute_every_frame;
        if ui
            .checkbox(&mut every, "every frame")
            .on_hover_text("Wait for each frame's surface (for movies) instead of dropping frames to keep the rate")
            .changed()
        {
            send(state, Command::SetComputeEveryFrame(every));
        }
    });
}

/// Field engine, running job with progress and cancel.
pub fn jobs_ui(ui: &mut egui::Ui, state: &mut AppState) {
    ui.label(format!("Engine: {}", state.fields.backend_name()));
    for line in state.graphics.iter().filter(|l| !l.is_empty()) {
        ui.label(RichText::new(line).small());
    }
    progress_ui(ui, state);
    let workers = state.fields.workers();
    if !workers.is_empty() {
        egui::Grid::new("jobs_workers").striped(true).show(ui, |ui| {
            ui.label(RichText::new("worker").small());
            ui.label(RichText::new("tiles").small());
            ui.label(RichText::new("busy s").small());
            ui.end_row();
            for w in &workers {
                let name = format!("{} ({})", w.engine, if w.busy { "busy" } else { "idle" });
                let label = ui.label(RichText::new(name).small());
                if let Some(e) = &w.last_error {
                    label.on_hover_text(format!("last error: {e}"));
                }
                ui.label(
                    RichText::new(format!(
                        "{} done, {} failed, {} dropped",
                        w.tiles_done, w.tiles_failed, w.tiles_cancelled
                    ))
                    .small(),
                );
                ui.label(RichText::new(format!("{:.2}", w.busy_seconds)).small());
                ui.end_row();
            }
        });
    }
    if let Some(t) = state.fields.last_stages() {
        ui.label(
            RichText::new(format!(
                "last field: {:.1} ms (queued {:.1}, computing {:.1} over {} tiles{}, assembling {:.1}) on {}",
                t.total * 1e3,
                t.queue * 1e3,
                t.compute * 1e3,
                t.tiles,
                if t.retried > 0 {
                    format!(", {} retried", t.retried)
                } else {
                    String::new()
                },
                t.assemble * 1e3,
                t.engines.join(" + ")
            ))
            .small(),
        );
    }
    if let Some(e) = &state.fields.last_error {
        ui.label(RichText::new(e).color(tokens::ERROR));
    }
    // One line per representation slot: what it computes and how far it is.
    for r in &state.representations.list {
        let line = match (state.fields.pending_in(r.slot), &r.shown) {
            (Some(k), _) => {
                let pct = state
                    .fields
                    .slot_progress(r.slot)
                    .map_or(String::new(), |p| format!(" ({:.0}%)", p.fraction * 100.0));
                format!("{}: computing frame {}{pct}", r.label, k.frame + 1)
            }
            (None, Some((k, _))) => format!("{}: frame {} shown", r.label, k.frame + 1),
            (None, None) if r.visible => format!("{}: waiting", r.label),
            (None, None) => format!("{}: hidden", r.label),
        };
        ui.label(RichText::new(line).small());
    }
    let cache = state.fields.cache_use();
    let mib = |b: usize| b as f64 / f64::from(1u32 << 20);
    ui.label(format!(
        "Cache: {:.1} of {:.0} MiB ({} lattices, {} meshes)",
        mib(cache.bytes),
        mib(cache.budget_bytes),
        cache.grids,
        cache.meshes
    ));
    let mut budget = state.settings.cache_budget_mib;
    ui.horizontal(|ui| {
        let l = ui.label("Cache budget");
        if ui
            .add(egui::DragValue::new(&mut budget).range(16..=65536).suffix(" MiB"))
            .labelled_by(l.id)
            .changed()
        {
            send(state, Command::SetCacheBudgetMib(budget));
        }
    });
    let c = state.fields.cancellations();
    if c.requests > 0 {
        ui.label(
            RichText::new(format!(
                "{} superseded requests cancelled ({} tiles dropped)",
                c.requests, c.tiles
            ))
            .small(),
        );
    }
}

fn progress_ui(ui: &mut egui::Ui, state: &mut AppState) {
    if let Some(p) = state.fields.progress() {
        ui.horizontal(|ui| {
            ui.add(egui::ProgressBar::new(p.fraction).text(&p.label).desired_width(160.0));
            if ui.button("Cancel").clicked() {
                send(state, Command::CancelJobs);
            }
        });
    } else if state.fields.pending().is_some() {
        ui.horizontal(|ui| {
            ui.spinner();
            ui.label("computing…");
            if ui.button("Cancel").clicked() {
                send(state, Command::CancelJobs);
            }
        });
    }
}

/// g(r) between two selections over the trajectory: the form, a progress line with cancel, and the
/// plot, which grows as frames arrive.
pub fn rdf_ui(ui: &mut egui::Ui, state: &mut AppState) {
    use egui_plot::{Legend, Line, Plot, PlotPoints};
    let running = state.rdf.is_running();
    egui::Grid::new("rdf_form").num_columns(2).show(ui, |ui| {
        let l = ui.label("Selection 1");
        ui.add(egui::TextEdit::singleline(&mut state.rdf.sel1_text).id_salt("rdf_sel1"))
            .labelled_by(l.id);
        ui.end_row();
        let l = ui.label("Selection 2");
        ui.add(egui::TextEdit::singleline(&mut state.rdf.sel2_text).id_salt("rdf_sel2"))
            .labelled_by(l.id);
        ui.end_row();
        let l = ui.label("r max (Å)");
        ui.add(
            egui::DragValue::new(&mut state.rdf.r_max_angstrom)
                .range(0.5..=100.0)
                .speed(0.1),
        )
        .labelled_by(l.id);
        ui.end_row();
        let l = ui.label("Bins");
        ui.add(egui::DragValue::new(&mut state.rdf.bins).range(1..=10000))
            .labelled_by(l.id);
        ui.end_row();
    });
    ui.horizontal(|ui| {
        let can_start = state.document.as_ref().is_some_and(|d| d.n_frames > 0);
        if ui.add_enabled(can_start, egui::Button::new("Compute g(r)")).clicked() {
            send(state, Command::StartRdf);
        }
        if running {
            ui.add(
                egui::ProgressBar::new(state.rdf.progress())
                    .desired_width(90.0)
                    .show_percentage(),
            );
            if ui.button("Cancel").clicked() {
                send(state, Command::CancelRdf);
            }
        }
    });
    if let Some(e) = &state.rdf.error {
        ui.label(RichText::new(e).color(tokens::ERROR));
    }
    let Some(run) = &state.rdf.run else {
        return;
    };
    let seconds = run.finished.unwrap_or_else(|| run.started.elapsed().as_secs_f64());
    ui.label(format!(
        "{} of {} frames, {:.1} s{}",
        run.frames_done,
        run.n_frames,
        seconds,
        if run.engine.is_empty() {
            String::new()
        } else {
            format!(", {}", run.engine)
        }
    ));
    let g: Vec<[f64; 2]> = run
        .rdf
        .r_angstrom
        .iter()
        .zip(&run.rdf.g)
        .map(|(&r, &g)| [r, g])
        .collect();
    let n: Vec<[f64; 2]> = run
        .rdf
        .r_angstrom
        .iter()
        .zip(&run.rdf.n_cumulative)
        .map(|(&r, &n)| [r, n])
        .collect();
    Plot::new("rdf_plot")
        .height(180.0)
        .legend(Legend::default())
        .x_axis_label("r (Å)")
        .show(ui, |plot| {
            plot.line(Line::new("g(r)", PlotPoints::from(g)).color(tokens::POSITIVE));
            plot.line(Line::new("n(r)", PlotPoints::from(n)).color(tokens::VIRTUAL));
        });
}

/// FPS, status, picked atom, progress line.
pub fn status_bar_ui(ui: &mut egui::Ui, state: &mut AppState) {
    ui.horizontal(|ui| {
        ui.label(format!("{:5.1} FPS", state.fps));
        ui.separator();
        if let Some(p) = &state.pick {
            ui.label(&p.text);
            ui.separator();
        }
        ui.label(&state.status);
        progress_ui(ui, state);
    });
}

/// The shortcut list.
pub fn help_ui(ui: &mut egui::Ui) {
    egui::Grid::new("help_grid").striped(true).show(ui, |ui| {
        for (keys, what) in SHORTCUTS {
            ui.label(RichText::new(*keys).monospace());
            ui.label(*what);
            ui.end_row();
        }
    });
}

/// The 3-D view: reserves the space, turns mouse input into camera commands and picks, and adds
/// the paint callback that shows the rendered image.
pub fn view_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let size = ui.available_size();
    let (rect, response) = ui.allocate_exact_size(size, Sense::click_and_drag());
    let ppp = ui.ctx().pixels_per_point();
    let size_px = [
        (rect.width() * ppp).round().max(1.0) as u32,
        (rect.height() * ppp).round().max(1.0) as u32,
    ];
    state.view_size_px = size_px;
    state.fit_if_pending();
    if response.dragged_by(egui::PointerButton::Primary) {
        let d = response.drag_delta();
        send(state, Command::Orbit([d.x * 0.01, d.y * 0.01]));
    } else if response.dragged_by(egui::PointerButton::Secondary) || response.dragged_by(egui::PointerButton::Middle) {
        let d = response.drag_delta();
        let h = rect.height().max(1.0);
        send(state, Command::Pan([d.x / h, d.y / h]));
    }
    if response.hovered() {
        let scroll = ui.input(|i| i.smooth_scroll_delta.y);
        if scroll != 0.0 {
            send(state, Command::Zoom((-scroll * 0.002).exp()));
        }
    }
    if response.clicked()
        && let Some(pos) = response.interact_pointer_pos()
    {
        let local = (pos - rect.min) * ppp;
        send(
            state,
            Command::Pick {
                pixel: [local.x, local.y],
                size_px,
            },
        );
    }
    ui.painter().add(crate::render::callback::view_paint_callback(rect));
    color_legend_ui(ui, state, rect);
    if state.document.is_none() {
        ui.painter().text(
            rect.center(),
            egui::Align2::CENTER_CENTER,
            "Drop files here, press Ctrl+O, or File > Open demo",
            egui::FontId::proportional(16.0),
            ui.visuals().weak_text_color(),
        );
    }
}
