//! The menu bar (File, View, Add, Help), keyboard shortcuts and dropped files.

use super::{Purpose, send};
use crate::app::state::{AppState, Command};
use crate::app::values::PotentialDisplay;
use egui::Key;

/// Keyboard shortcuts (ignored while a text field has focus).
pub fn shortcuts(ui: &mut egui::Ui, state: &mut AppState) {
    if ui.ctx().egui_wants_keyboard_input() {
        return;
    }
    let (open, space, left, right, home, end, up, down, plus, minus, r, c, esc, help) = ui.input(|i| {
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
            !i.modifiers.command && i.key_pressed(Key::Num0),
            !i.modifiers.command && i.key_pressed(Key::Period),
            i.key_pressed(Key::Escape),
            i.key_pressed(Key::F1) || i.key_pressed(Key::Questionmark),
        )
    });
    if open {
        send(state, Command::OpenDialog);
    }
    if ui.input(|i| i.modifiers.command && i.key_pressed(Key::Q)) {
        send(state, Command::Quit);
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
    if (up || down)
        && state.orbital_levels().is_none()
        && let Some((spin, cur)) = state.stepped_orbital()
    {
        let n = state.orbital_rows(spin).len();
        if n > 0 {
            let next = if up {
                (cur + 1).min(n - 1)
            } else {
                cur.saturating_sub(1)
            };
            if spin != state.doc.spin {
                send(state, Command::SetSpin(spin));
            }
            send(state, Command::SelectOrbital(Some(next)));
        }
    }
    if (plus || minus)
        && let Some(f) = state.panel_field_rep()
        && let Some(iso) = super::fields::shown_iso(f)
    {
        // The next round value in the unit shown (0.05, 0.056, 0.068, 0.082, 0.1 a.u.), not
        // 0.05 x 1.25 = 0.0625, 0.078125.
        let unit = if f.iso.relative {
            crate::app::values::FieldUnit {
                scale: 1.0,
                label: String::new(),
            }
        } else {
            state.field_unit(f.field)
        };
        let next = next_round_value(unit.show(iso), plus);
        send(state, Command::SetIsoValue(unit.computed(next)));
    }
    if r {
        send(state, Command::ResetCamera);
    }
    if c {
        centre_on_picked_atom(state);
    }
    if esc {
        escape(ui.ctx(), state);
    }
    if help {
        send(state, Command::ToggleHelp);
    }
}

/// Turns the view about the atom last clicked (C, or a double click on an atom), as `center`
/// does for a selection; without one, the status line says how.
pub(super) fn centre_on_picked_atom(state: &mut AppState) {
    let position = state.view.pick.as_ref().and_then(|p| {
        let doc = state.document()?;
        doc.frame.positions_angstrom.get(p.atom).copied()
    });
    match position.filter(|q| q.iter().all(|x| x.is_finite())) {
        Some(q) => {
            let mut spec = crate::app::session::CameraSpec::of(&state.view.camera);
            spec.target_angstrom = q;
            send(state, Command::SetCamera(spec));
        }
        None => {
            state.panels.status =
                "click an atom, then press . to centre the view on it (or type center SELECTION)".into();
        }
    }
}

/// Escape closes the topmost dialog or menu — an open menu or popup (egui closes it), the file
/// browser, the export dialogs, the help window, the measurement plot — then ends a measure or label
/// mode, and only when none of these is open cancels the running field jobs. One press does one of
/// these.
fn escape(ctx: &egui::Context, state: &mut AppState) {
    use crate::app::export::ExportDialog;
    use crate::app::measure::ClickMode;
    if egui::Popup::is_any_open(ctx) {
        return;
    }
    if state.panels.browser.open {
        send(state, Command::Browser(crate::app::browser::BrowserAction::Close));
    } else if state.panels.export.movie.open {
        send(state, Command::ShowExportDialog(ExportDialog::Movie, false));
    } else if state.panels.export.image.open {
        send(state, Command::ShowExportDialog(ExportDialog::Image, false));
    } else if state.panels.show_help {
        send(state, Command::ToggleHelp);
    } else if state.tools.measure.plotted.is_some() {
        send(state, Command::PlotMeasurement(None));
    } else if state.panels.ramachandran.open {
        state.panels.ramachandran.open = false;
    } else if state.tools.measure.mode != ClickMode::Pick {
        send(state, Command::SetClickMode(ClickMode::Pick));
    } else if state.panels.console.message.is_some() {
        // The command line's message (a long `help`) is put away before anything is cancelled.
        state.panels.console.message = None;
    } else {
        send(state, Command::CancelJobs);
    }
}

pub(super) fn dropped_files(ui: &mut egui::Ui, state: &mut AppState) {
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

pub(super) fn menu_ui(ui: &mut egui::Ui, state: &mut AppState) {
    egui::MenuBar::new().ui(ui, |ui| {
        ui.menu_button("File", |ui| {
            if ui.add(egui::Button::new("Open…").shortcut_text("Ctrl+O")).clicked() {
                send(state, Command::OpenDialog);
            }
            // The files opened last, as in the Files panel.
            let recent = state.settings.recent.clone();
            ui.add_enabled_ui(!recent.is_empty(), |ui| {
                ui.menu_button("Open recent", |ui| {
                    for files in recent {
                        let (label, hover) = super::files::recent_label(&files);
                        if ui.button(label).on_hover_text(hover).clicked() {
                            send(state, Command::OpenFiles(files));
                        }
                    }
                });
            });
            if ui.button("Open with the built-in browser…").clicked() {
                send(state, Command::OpenBrowser(Purpose::OpenFiles, None));
            }
            if ui
                .button(super::fetch::FETCH_MENU)
                .on_hover_text("Download an entry of the Protein Data Bank by its ID (1ubq) and open it")
                .clicked()
            {
                state.panels.fetch.form_open = true;
            }
            super::files::session_buttons_ui(ui, state);
            if ui.button("Open demo").clicked() {
                send(state, Command::OpenDemo);
            }
            if ui.button("Close").clicked() {
                send(state, Command::CloseDocument);
            }
            ui.separator();
            if ui.button("Export image…").clicked() {
                send(
                    state,
                    Command::ShowExportDialog(crate::app::export::ExportDialog::Image, true),
                );
            }
            if ui.button("Record movie…").clicked() {
                send(
                    state,
                    Command::ShowExportDialog(crate::app::export::ExportDialog::Movie, true),
                );
            }
            ui.separator();
            if ui.add(egui::Button::new("Quit").shortcut_text("Ctrl+Q")).clicked() {
                send(state, Command::Quit);
            }
        });
        ui.menu_button("View", |ui| {
            if ui.button("Reset view (0)").clicked() {
                send(state, Command::ResetCamera);
            }
            let mut left = state.panels.left_open;
            if ui.checkbox(&mut left, "Representations panel").changed() {
                state.panels.left_open = left;
            }
            let mut right = state.panels.right_open;
            if ui.checkbox(&mut right, "Fields and orbitals panel").changed() {
                state.panels.right_open = right;
            }
            let mut sequence = !state.panels.sequence.hidden;
            if ui.checkbox(&mut sequence, "Sequence").changed() {
                state.panels.sequence.hidden = !sequence;
            }
            let mut dark = state.settings.dark_background;
            if ui.checkbox(&mut dark, "Dark background").changed() {
                send(state, Command::SetDarkBackground(dark));
            }
            let mut cell = state
                .document()
                .map_or(state.settings.show_cell, |d| d.cell_shown(state.settings.show_cell));
            if ui.checkbox(&mut cell, "Unit cell").changed() {
                send(state, Command::ShowCell(cell));
            }
            let mut whole = state.settings.make_whole;
            if ui.checkbox(&mut whole, "Whole molecules").changed() {
                send(state, Command::MakeWhole(whole));
            }
            super::reps::fit_checkbox(ui, state);
            ui.menu_button("Potential unit", |ui| {
                for u in PotentialDisplay::ALL {
                    if ui
                        .selectable_label(state.settings.potential_unit == u, u.name())
                        .clicked()
                    {
                        send(state, Command::SetPotentialUnit(u));
                    }
                }
            });
        });
        ui.menu_button("Add", |ui| super::add::add_menu_ui(ui, state));
        super::tools::menus_ui(ui, state);
        if ui.button("Help").clicked() {
            send(state, Command::ToggleHelp);
        }
    });
}

/// Values of the E12 series (1, 1.2, 1.5, 1.8, 2.2, 2.7, 3.3, 3.9, 4.7, 5.6, 6.8, 8.2 times a power of
/// ten), about 20 % apart: what + and - step an isovalue through.
const E12: [f64; 12] = [1.0, 1.2, 1.5, 1.8, 2.2, 2.7, 3.3, 3.9, 4.7, 5.6, 6.8, 8.2];

/// The E12 value next above `v` (`up`) or next below it; `v` itself where it is not a positive
/// finite number.
pub(crate) fn next_round_value(v: f64, up: bool) -> f64 {
    if !(v.is_finite() && v > 0.0) {
        return v;
    }
    let decade = v.log10().floor();
    let candidates = (-1..=1).flat_map(|d| E12.map(|m| m * 10f64.powf(decade + f64::from(d))));
    let tolerance = 1e-6 * v;
    if up {
        candidates.filter(|&c| c > v + tolerance).fold(f64::INFINITY, f64::min)
    } else {
        candidates.filter(|&c| c < v - tolerance).fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::next_round_value;

    #[test]
    fn plus_and_minus_step_through_round_values() {
        let close = |a: f64, b: f64| (a - b).abs() < 1e-9 * b;
        assert!(close(next_round_value(0.05, true), 0.056));
        assert!(close(next_round_value(0.056, true), 0.068));
        assert!(close(next_round_value(0.082, true), 0.1));
        assert!(close(next_round_value(0.05, false), 0.047));
        assert!(close(next_round_value(0.1, false), 0.082));
        assert!(
            close(next_round_value(0.0625, true), 0.068),
            "a value between steps goes to the next"
        );
        assert!(close(next_round_value(0.0625, false), 0.056));
        assert!(close(next_round_value(5.0, true), 5.6));
        assert_eq!(next_round_value(0.0, true), 0.0);
        assert!(next_round_value(f64::NAN, true).is_nan());
    }
}
