//! The whole window as the journey tests drive it (egui_kittest): [`window`] builds it at 1280x800
//! with commands applied and representations updated after each frame, and [`type_command`] (or
//! [`type_line`], which returns what is shown under the line) types a line into its command line;
//! [`opened`] is a state with files open, [`two_ions_pqr`] a small system with charges and radii,
//! and [`type_line_stepping`] and [`settle_pb`] drive the window while a Poisson-Boltzmann solve
//! keeps it repainting. Shared by the journey tests and `tests/script.rs`; a test file takes what it
//! needs.
#![allow(dead_code)]

use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::fields::{FieldBackend, FieldService, InlineBackend};
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use std::path::{Path, PathBuf};

/// A file under `tests/data`.
pub fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// A state with `files` (under `tests/data`) open; with `engine`, the CPU engine computes fields
/// inline on a 32-point lattice (potentials every 3 A).
pub fn opened(files: &[&str], engine: bool) -> AppState {
    let backend = if engine {
        orbitfield::app::blocking_engine().map(|e| Box::new(InlineBackend::new(e)) as Box<dyn FieldBackend>)
    } else {
        None
    };
    let settings = Settings {
        lattice_points: 32,
        potential_spacing_angstrom: 3.0,
        ..Settings::default()
    };
    let mut state = AppState::new(
        settings,
        FieldService::new(backend, orbitfield::app::default_extractor()),
    );
    if !files.is_empty() {
        state.apply(Command::OpenFiles(files.iter().map(|f| data(f)).collect()));
    }
    state
}

/// Two ions 6 A apart, with charges and radii (PQR), written into `dir`; the state with it open
/// (default settings, the app's own Poisson-Boltzmann service).
pub fn two_ions_pqr(dir: &Path) -> AppState {
    let pqr = dir.join("ions.pqr");
    std::fs::write(
        &pqr,
        "ATOM      1 NA    NA     1       0.000   0.000   0.000  1.0000 1.8680\n\
         ATOM      2 CL    CL     2       6.000   0.000   0.000 -1.0000 2.2700\nEND\n",
    )
    .unwrap_or_else(|e| panic!("{e}"));
    let mut state = AppState::new(
        Settings::default(),
        FieldService::new(None, orbitfield::app::default_extractor()),
    );
    state.apply(Command::OpenFiles(vec![pqr]));
    assert!(state.document().is_some(), "{}", state.panels.status);
    state
}

/// As [`type_line`], stepping frames (a solve's spinner keeps the window repainting, so it never
/// settles).
pub fn type_line_stepping(harness: &mut Harness<'static, AppState>, line: &str) -> Option<(bool, String)> {
    harness.get_by_label(orbitfield::ui::console::LABEL).focus();
    harness.run_steps(2);
    harness.get_by_label(orbitfield::ui::console::LABEL).type_text(line);
    harness.run_steps(2);
    harness.key_press(Key::Enter);
    harness.run_steps(3);
    harness.state().panels.console.message.clone()
}

/// As [`type_command`], stepping frames.
pub fn type_command_stepping(harness: &mut Harness<'static, AppState>, line: &str) {
    let message = type_line_stepping(harness, line);
    assert!(message.as_ref().is_none_or(|(error, _)| !error), "{line}: {message:?}");
}

/// Steps frames until the Poisson-Boltzmann solve is done (at most a minute).
pub fn settle_pb(harness: &mut Harness<'static, AppState>) {
    let t0 = std::time::Instant::now();
    loop {
        harness.step();
        let st = harness.state_mut();
        st.poll_pb();
        if !st.pb.solving() {
            break;
        }
        assert!(t0.elapsed().as_secs() < 60, "the solve never finished");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    harness.run_steps(2);
}

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

/// The drawn slice's legend, once the slice has arrived (at most two minutes; a Poisson-Boltzmann
/// solve it waits for is polled).
pub fn slice_legend(harness: &mut Harness<'static, AppState>) -> orbitfield::app::values::Legend {
    let t0 = std::time::Instant::now();
    loop {
        harness.step();
        harness.state_mut().poll_pb();
        if let Some(l) = harness
            .state()
            .legends()
            .into_iter()
            .find(|l| l.title.ends_with(", slice"))
        {
            return l;
        }
        assert!(t0.elapsed().as_secs() < 120, "the slice never arrived");
    }
}
