//! The viewer's state with adk open (tests/data/md), shared by `tests/reps_ui.rs` and
//! `tests/cartoon_reps.rs`.

use orbitfield::app::fields::FieldService;
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use std::path::PathBuf;

/// A file under tests/data.
#[allow(dead_code)] // not every test that opens adk reads other files
pub fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// adk (a protein with water) opened without field engines.
#[allow(dead_code)] // a journey that computes fields opens adk with an engine
pub fn adk() -> AppState {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenFiles(vec![data("md/adk.psf"), data("md/adk_dims.dcd")]));
    assert!(state.document().is_some(), "{}", state.panels.status);
    state
}

/// The representation editor on `state`, as the side panel shows it (commands applied each frame).
#[allow(dead_code)] // not every test that opens adk drives the editor
pub fn reps_editor(state: AppState) -> egui_kittest::Harness<'static, AppState> {
    egui_kittest::Harness::builder()
        .with_size(egui::vec2(400.0, 1400.0))
        .build_ui_state(
            |ui, state: &mut AppState| {
                egui::ScrollArea::vertical().show(ui, |ui| orbitfield::ui::panels::reps_ui(ui, state));
                state.apply_pending();
            },
            state,
        )
}

/// The atom drawn nearest the eye and the view pixel of its centre (nothing hides it there): a
/// click there picks it.
#[allow(dead_code)] // not every test that opens adk clicks in the view
pub fn front_atom(state: &AppState) -> (usize, [f32; 2]) {
    let positions = &state.document().expect("a document").frame.positions_angstrom;
    let drawn = state.view.spheres.iter().filter_map(|s| {
        let (pixel, depth) = state
            .view
            .camera
            .project_to_pixel(glam::Vec3::from(s.center_angstrom), state.view.size_px)?;
        let atom = positions.iter().position(|p| *p == s.center_angstrom)?;
        Some((depth, atom, pixel))
    });
    let (_, atom, pixel) = drawn.min_by(|a, b| a.0.total_cmp(&b.0)).expect("atoms are drawn");
    (atom, pixel)
}
