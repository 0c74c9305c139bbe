//! Journey 2 of the viewer, driven through egui_kittest on the whole window's UI: on adk
//! (tests/data/md/adk.psf + adk_dims.dcd), add a cartoon and a molecular surface coloured by the
//! charges' potential through the "+ Add" menu, play three frames, and undo twice (Ctrl+Z): the
//! representation list is back to what the document opened with; redo brings the cartoon back.
//! Field work runs on the CPU engine inline, on a small lattice.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::fields::{FieldBackend, FieldChoice, FieldService, InlineBackend};
use orbitfield::app::reps::{RepKind, RepSpec};
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use std::time::{Duration, Instant};

#[path = "common/adk_state.rs"]
mod adk_state;
use adk_state::data;

#[path = "common/journey.rs"]
mod journey;
use journey::window;

/// adk with the CPU engine computing fields inline (32 lattice points a side).
fn adk_with_engine() -> AppState {
    let backend = orbitfield::app::blocking_engine().map(|e| Box::new(InlineBackend::new(e)) as Box<dyn FieldBackend>);
    let settings = Settings {
        lattice_points: 32,
        ..Settings::default()
    };
    let mut state = AppState::new(
        settings,
        FieldService::new(backend, orbitfield::app::default_extractor()),
    );
    state.apply(Command::OpenFiles(vec![data("md/adk.psf"), data("md/adk_dims.dcd")]));
    assert!(state.document().is_some(), "{}", state.panels.status);
    state
}

fn specs(state: &AppState) -> Vec<RepSpec> {
    state.reps().list.iter().map(|r| state.rep_spec(r)).collect()
}

/// Opens the representations panel's "+ Add" menu.
fn open_add_menu(harness: &mut Harness<'static, AppState>) {
    harness.get_by_label(orbitfield::ui::add::ADD_BUTTON).click();
    harness.run();
}

/// Runs frames until `done` holds (the inline engine computes on this thread), at most two minutes.
fn run_until(harness: &mut Harness<'static, AppState>, what: &str, done: impl Fn(&AppState) -> bool) {
    let t0 = Instant::now();
    while !done(harness.state()) {
        harness.step();
        assert!(t0.elapsed() < Duration::from_secs(120), "{what} never happened");
        std::thread::sleep(Duration::from_millis(2));
    }
}

#[test]
fn add_cartoon_and_a_potential_coloured_surface_play_three_frames_and_undo_twice() {
    let mut harness = window(adk_with_engine());
    harness.run();
    let opened = specs(harness.state());

    // Add > Cartoon of the protein.
    open_add_menu(&mut harness);
    harness.get_by_label("Selection").set_text_value_accesskit("protein");
    harness.run();
    harness.get_by_label("Cartoon").click();
    harness.run();
    let cartoons = harness
        .state()
        .reps()
        .list
        .iter()
        .filter(|r| matches!(r.kind, RepKind::Cartoon(_)))
        .count();
    assert_eq!(cartoons, 1, "a cartoon was added: {:?}", specs(harness.state()));

    // Add > Molecular surface coloured by potential.
    open_add_menu(&mut harness);
    harness.get_by_label("Selection").set_text_value_accesskit("protein");
    harness.run();
    let entry = orbitfield::ui::add::charges_surface_entry(harness.state().esp.model);
    harness.get_by_label(&entry).click();
    harness.run();
    let surface_id = {
        let st = harness.state();
        let (id, rep) = st
            .reps()
            .fields()
            .find(|(_, f)| matches!(f.field, FieldChoice::MolSurf { .. }))
            .map(|(r, f)| (r.id, f))
            .expect("a molecular surface was added");
        let coloring = rep.coloring.as_ref().expect("the surface is coloured");
        assert_eq!(
            coloring.source,
            FieldChoice::Potential,
            "coloured by the charges' potential"
        );
        id
    };
    assert_eq!(specs(harness.state()).len(), opened.len() + 2);

    // Its colours arrive for frame 0, both signs present on a protein's surface.
    run_until(&mut harness, "frame 0's colours", |st| {
        st.reps().field(surface_id).is_some_and(|f| f.color_shows_frame(0))
    });

    // Play three frames, then pause.
    harness.get_by_label("Play").click();
    harness.run();
    assert!(harness.state().view.timeline.playing);
    let fps = harness.state().view.timeline.fps;
    for _ in 0..3 {
        harness.state_mut().tick(1.0 / fps + 1e-4);
    }
    harness.run();
    harness.get_by_label("Pause").click();
    harness.run();
    assert!(!harness.state().view.timeline.playing);
    assert_eq!(
        harness.state().document().unwrap().frame_index,
        3,
        "three frames played"
    );
    run_until(&mut harness, "frame 3's colours", |st| {
        st.reps().field(surface_id).is_some_and(|f| f.color_shows_frame(3))
    });
    let range = harness
        .state()
        .reps()
        .field(surface_id)
        .unwrap()
        .coloring
        .as_ref()
        .unwrap()
        .range;
    let range = range.expect("a colour range once the values arrived");
    assert!(
        range[0] < 0.0 && range[1] > 0.0,
        "negative and positive potential on the surface: {range:?}"
    );

    // Undo twice: the surface, then the cartoon, leave; the frame stays (frames are not edits).
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(specs(harness.state()).len(), opened.len() + 1, "the surface is undone");
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(
        specs(harness.state()),
        opened,
        "back to the representations the document opened with"
    );
    assert_eq!(harness.state().document().unwrap().frame_index, 3);

    // Redo brings the cartoon back.
    harness.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    harness.run();
    let back = specs(harness.state());
    assert_eq!(back.len(), opened.len() + 1);
    assert!(
        harness
            .state()
            .reps()
            .list
            .iter()
            .any(|r| matches!(r.kind, RepKind::Cartoon(_))),
        "redo restores the cartoon: {back:?}"
    );
}
