//! The tools' menus and keys: the Edit menu (undo, redo), the Measure menu (distance, angle,
//! dihedral, labels), their keyboard shortcuts (Ctrl+Z, Ctrl+Shift+Z, VMD's 2/3/4, L, Escape), and
//! the background colour picker of the View options. Called by `ui::main_ui`, `ui::menu` and the
//! View options; the state lives in `app::tools`.

use super::send;
use crate::app::measure::{ClickMode, MeasureKind};
use crate::app::state::{AppState, Command};
use egui::{Key, Modifiers};

/// Keyboard shortcuts of the tools, shown in the help window after `ui::SHORTCUTS`.
pub const TOOL_SHORTCUTS: &[(&str, &str)] = &[
    ("Ctrl+Z", "Undo a representation, measurement, label or view edit"),
    ("Ctrl+Shift+Z or Ctrl+Y", "Redo"),
    (
        "2 / 3 / 4",
        "Measure a distance / angle / dihedral: click 2, 3 or 4 atoms",
    ),
    ("1", "Label atoms by clicking them (Escape stops), as VMD's 1"),
];

/// Ctrl+Shift+Z (or Ctrl+Y) and Ctrl+Z, consumed: (redo, undo).
pub(super) fn take_undo_keys(i: &mut egui::InputState) -> (bool, bool) {
    let redo =
        i.consume_key(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z) || i.consume_key(Modifiers::COMMAND, Key::Y);
    (redo, i.consume_key(Modifiers::COMMAND, Key::Z))
}

/// The tools' keys (ignored while a text field has focus).
pub fn shortcuts(ui: &mut egui::Ui, state: &mut AppState) {
    if ui.ctx().egui_wants_keyboard_input() {
        return;
    }
    let (redo, undo, keys) = ui.input_mut(|i| {
        let (redo, undo) = take_undo_keys(i);
        let plain = !i.modifiers.command && !i.modifiers.alt;
        let keys = [Key::Num2, Key::Num3, Key::Num4, Key::Num1].map(|k| plain && i.key_pressed(k));
        (redo, undo, keys)
    });
    if redo {
        send(state, Command::Redo);
    } else if undo {
        send(state, Command::Undo);
    }
    let mode = state.tools.measure.mode;
    let [two, three, four, l] = keys;
    let pressed = if two {
        Some(ClickMode::Measure(MeasureKind::Distance))
    } else if three {
        Some(ClickMode::Measure(MeasureKind::Angle))
    } else if four {
        Some(ClickMode::Measure(MeasureKind::Dihedral))
    } else if l {
        Some(ClickMode::Label)
    } else {
        None
    };
    if let Some(p) = pressed {
        // The key of the mode that is on turns it off (VMD's toggle).
        send(
            state,
            Command::SetClickMode(if p == mode { ClickMode::Pick } else { p }),
        );
    }
}

/// The Edit and Measure menus of the menu bar.
pub fn menus_ui(ui: &mut egui::Ui, state: &mut AppState) {
    ui.menu_button("Edit", |ui| {
        let h = &state.tools.history;
        let (can_undo, can_redo) = (h.can_undo(), h.can_redo());
        // What each would change, named: "Undo (the measurements)".
        let text = |verb: &str, what: Option<String>| match what {
            Some(w) => format!("{verb} ({w})"),
            None => verb.to_string(),
        };
        let undo_text = text("Undo", state.history_step_text(false));
        let redo_text = text("Redo", state.history_step_text(true));
        if ui
            .add_enabled(can_undo, egui::Button::new(undo_text).shortcut_text("Ctrl+Z"))
            .clicked()
        {
            send(state, Command::Undo);
        }
        if ui
            .add_enabled(can_redo, egui::Button::new(redo_text).shortcut_text("Ctrl+Shift+Z"))
            .clicked()
        {
            send(state, Command::Redo);
        }
    });
    ui.menu_button("Measure", |ui| {
        let mode = state.tools.measure.mode;
        for (kind, key) in MeasureKind::ALL.into_iter().zip(["2", "3", "4"]) {
            let text = format!("{} ({} atoms)", kind.name(), kind.atoms());
            let on = mode == ClickMode::Measure(kind);
            if ui.add(egui::Button::selectable(on, text).shortcut_text(key)).clicked() {
                send(state, Command::SetClickMode(ClickMode::Measure(kind)));
                ui.close();
            }
        }
        if ui
            .add(egui::Button::selectable(mode == ClickMode::Label, "label atoms by clicking").shortcut_text("1"))
            .clicked()
        {
            send(state, Command::SetClickMode(ClickMode::Label));
            ui.close();
        }
        if ui
            .add(egui::Button::selectable(mode == ClickMode::Pick, "pick only").shortcut_text("Esc"))
            .clicked()
        {
            send(state, Command::SetClickMode(ClickMode::Pick));
            ui.close();
        }
        ui.separator();
        if ui
            .button(super::ramachandran::TITLE)
            .on_hover_text("Phi against psi of every protein residue at this frame")
            .clicked()
        {
            state.panels.ramachandran.open = true;
            ui.close();
        }
        let has_energies = state.frame_energies().is_some();
        if ui
            .add_enabled(has_energies, egui::Button::new(super::energies::TITLE))
            .on_hover_text("The total energy of each step of a QM optimisation, scan or dynamics log")
            .on_disabled_hover_text(
                "Open a QM log (Gaussian, ORCA, GAMESS) or a series of files that print their energies",
            )
            .clicked()
        {
            state.panels.energies.open = true;
            ui.close();
        }
        ui.separator();
        if ui.button("Delete all measurements").clicked() {
            send(state, Command::ClearMeasurements);
        }
        if ui.button("Remove all labels").clicked() {
            send(state, Command::ClearLabels);
        }
    });
}

/// The background colour of the 3-D view (saved in the settings, used by image exports too).
pub fn background_ui(ui: &mut egui::Ui, state: &mut AppState) {
    ui.horizontal_wrapped(|ui| {
        let mut rgb = state.settings.background_srgb();
        let l = ui.label("Background");
        if ui.color_edit_button_srgb(&mut rgb).labelled_by(l.id).changed() {
            send(state, Command::SetBackgroundColor(rgb));
        }
        for (name, c) in [
            ("Black", [0, 0, 0]),
            ("White", [255, 255, 255]),
            ("Grey", [128, 128, 128]),
        ] {
            if ui.small_button(name).clicked() {
                send(state, Command::SetBackgroundColor(c));
            }
        }
    });
}
