//! The whole window as the journey tests drive it (egui_kittest): [`window`] builds it at 1280x800
//! with commands applied and representations updated after each frame, and [`type_command`] (or
//! [`type_line`], which returns what is shown under the line) types a line into its command line.
//! Shared by the journey tests and `tests/script.rs`; a test file takes what it needs.
#![allow(dead_code)]

use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::state::AppState;

/// The whole window at 1280x800, commands applied and representations updated after each frame.
pub fn window(state: AppState) -> Harness<'static, AppState> {
    Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::main_ui(ui, state);
            state.apply_pending();
            state.update_reps();
        },
        state,
    )
}

/// Types `line` into the command line and presses Enter; returns what is shown under the line
/// (error or not, and the text).
pub fn type_line(harness: &mut Harness<'static, AppState>, line: &str) -> Option<(bool, String)> {
    harness.get_by_label(orbitfield::ui::console::LABEL).focus();
    harness.run();
    harness.get_by_label(orbitfield::ui::console::LABEL).type_text(line);
    harness.run();
    harness.key_press(Key::Enter);
    harness.run();
    harness.state().panels.console.message.clone()
}

/// Types `line` into the command line and presses Enter; the line must run without a problem.
pub fn type_command(harness: &mut Harness<'static, AppState>, line: &str) {
    type_line(harness, line);
    let c = &harness.state().panels.console;
    assert!(
        c.message.as_ref().is_none_or(|(error, _)| !error),
        "{line}: {:?}",
        c.message
    );
    assert!(c.input.is_empty(), "{line}: the line was not run ({:?})", c.input);
}
