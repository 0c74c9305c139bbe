//! egui panels; functions taking `&mut egui::Ui` are named `*_ui`.
//!
//! The window (in `app`) calls [`main_ui`] once per frame with the [`AppState`]; panels read the
//! state and push [`Command`]s, which the app applies after the layout. Nothing here touches files,
//! threads or the GPU beyond adding the 3-D view's paint callback where the view goes.

pub mod panels;
pub mod tokens;

pub use panels::main_ui;

use crate::app::state::{AppState, Command};

/// Keyboard shortcuts: (keys, what they do). Shown in the help window and handled by
/// [`panels::shortcuts`].
pub const SHORTCUTS: &[(&str, &str)] = &[
    ("Ctrl+O", "Open files"),
    ("Space", "Play / pause the trajectory"),
    ("Left / Right", "Previous / next frame"),
    ("Home / End", "First / last frame"),
    ("Up / Down", "Previous / next orbital"),
    ("+ / -", "Raise / lower the isovalue"),
    ("R", "Reset the view"),
    ("Escape", "Cancel running field jobs"),
    ("F1 or ?", "Show this help"),
    ("Left drag", "Rotate"),
    ("Right or middle drag", "Pan"),
    ("Wheel", "Zoom"),
    ("Click an atom", "Show its name, residue, charge and field value"),
];

/// Pushes a command (shorthand used by the panels).
fn send(state: &mut AppState, c: Command) {
    state.push(c);
}
