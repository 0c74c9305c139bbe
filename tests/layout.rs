//! The window's layout at common sizes: at 1280x800 and 1920x1080, with both side panels and every
//! collapsing header open, for a protein trajectory (adk), a wavefunction (threonine) and a density's
//! cube file (whose isovalue is written in "(file units)" and whose title line is shown), every
//! widget's rectangle (egui_kittest's accesskit node bounds) lies inside the window and, when it
//! starts inside a panel, inside that panel — no control or label past a panel's edge, where it
//! would be clipped. Panels scroll vertically, so only their width is checked against content.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::kittest::Queryable;
use orbitfield::app::fields::{FieldChoice, FieldService};
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use std::path::PathBuf;

#[path = "common/panel_fit.rs"]
mod panel_fit;
use panel_fit::{assert_inside_their_panels, open_side_headers, window_of};

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

fn adk() -> AppState {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenFiles(vec![data("md/adk.psf"), data("md/adk_dims.dcd")]));
    assert!(state.document().is_some(), "{}", state.panels.status);
    // A field with its potential controls and a surface coloured by the charges' potential.
    state.apply(Command::SelectField(Some(FieldChoice::Potential)));
    state
}

fn threonine() -> AppState {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenFiles(vec![data("qm/threonine_hf_631gs_cart.molden.gz")]));
    assert!(state.document().is_some(), "{}", state.panels.status);
    state.apply(Command::AddFieldRep(FieldChoice::Density));
    // The density's envelope starts translucent over the opaque HOMO it encloses.
    let opacities: Vec<(FieldChoice, f32)> = state.reps().fields().map(|(_, f)| (f.field, f.opacity)).collect();
    assert!(
        matches!(opacities.as_slice(), [(FieldChoice::Orbital { .. }, o), (FieldChoice::Density, d)]
            if *o == 1.0 && *d == orbitfield::app::reps::DENSITY_OPACITY && *d < 1.0),
        "{opacities:?}"
    );
    state.apply(Command::SetShowSlice(true));
    state
}

/// Lays out the whole window over `state` at `size`, opens every collapsing header of the side
/// panels, and checks every node's rectangle.
fn check(state: AppState, size: [f32; 2], what: &str) {
    let mut harness = window_of(state, size, false);
    harness.run();
    open_side_headers(&mut harness);
    assert_inside_their_panels(&harness, size, 0.5, what);
}

#[test]
fn adk_fits_its_panels_at_1280x800_and_1920x1080() {
    check(adk(), [1280.0, 800.0], "adk");
    check(adk(), [1920.0, 1080.0], "adk");
}

#[test]
fn threonine_fits_its_panels_at_1280x800_and_1920x1080() {
    check(threonine(), [1280.0, 800.0], "threonine");
    check(threonine(), [1920.0, 1080.0], "threonine");
}

#[test]
fn a_density_cube_fits_its_panels_at_1280x800() {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenFiles(vec![data(
        "qm/esp/threonine_hf_631gs_cart.density_lattice.cube.gz",
    )]));
    assert!(state.document().is_some(), "{}", state.panels.status);
    let size = [1280.0, 800.0];
    let mut harness = window_of(state, size, true);
    harness.run_steps(4);
    open_side_headers(&mut harness);
    // The isovalue is the density's convention, and the file's title line is what the note shows.
    assert!(
        harness
            .query_all_by_label_contains("surface at 0.002 (file units)")
            .next()
            .is_some()
    );
    assert!(
        harness
            .query_all_by_label_contains("the file says: threonine_hf_631gs_cart: electron density")
            .next()
            .is_some()
    );
    assert_inside_their_panels(&harness, size, 0.5, "density cube");
}

/// A GAMESS log's orbital list has a symmetry column (AU, BG): the list still fits the right panel,
/// at 1280x800 and at 1024x640.
#[test]
fn a_gamess_orbital_list_with_symmetries_fits_its_panel() {
    for size in [[1280.0, 800.0], [1024.0, 640.0]] {
        let mut state = AppState::new(Settings::default(), FieldService::default());
        state.apply(Command::OpenFiles(vec![data("qm-logs/GAMESS-US2018_dvb_sp.out")]));
        assert!(state.document().is_some(), "{}", state.panels.status);
        let mut harness = window_of(state, size, true);
        harness.run_steps(4);
        open_side_headers(&mut harness);
        assert!(harness.query_all_by_label("sym").next().is_some(), "no symmetry column");
        assert_inside_their_panels(&harness, size, 0.5, "GAMESS orbitals");
    }
}

/// A cartoon coloured by the charges' potential: its Colour combo, naming the long model, stays in
/// the left panel beside or below its label (it once wrapped the label letter by letter).
#[test]
fn a_cartoon_coloured_by_potential_fits_its_panel() {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data");
    orbitfield::script::run_in(
        &mut state,
        "open md/adk_open.pqr\nrep delete all\nrep add cartoon protein color esp",
        &dir,
        None,
        orbitfield::script::RunMode::Headless,
    )
    .unwrap();
    let size = [1280.0, 800.0];
    let mut harness = window_of(state, size, true);
    // The potential's spinner keeps repainting: a fixed number of frames, the editor open.
    harness.run_steps(8);
    // The combo (named by its label) is one line high: it was 90 points tall, its label wrapped
    // beside it letter by letter.
    let combo = harness
        .query_all_by_label("Colour")
        .filter_map(|n| panel_fit::bounds(&n))
        .next()
        .expect("the Colour combo");
    assert!(combo.height() < 40.0, "the Colour combo is {combo:?}");
    assert_inside_their_panels(&harness, size, 0.5, "cartoon by potential");
}

/// The command line stays where it is while the user works: a command's message, playback (Play
/// turning into Pause) and a QM log's step energy do not move it (a click meant for it landed in
/// the view, and typed letters ran as the view's keys).
#[test]
fn the_command_line_does_not_move() {
    for files in [
        vec![data("md/adk.psf"), data("md/adk_dims.dcd")],
        vec![data("qm-logs/ORCA6.0_dvb_gopt.out")],
    ] {
        let mut state = AppState::new(Settings::default(), FieldService::default());
        state.apply(Command::OpenFiles(files.clone()));
        assert!(state.document().is_some(), "{}", state.panels.status);
        let mut harness = window_of(state, [1280.0, 800.0], false);
        harness.run();
        let line = |h: &egui_kittest::Harness<'static, AppState>| h.get_by_label(orbitfield::ui::console::LABEL).rect();
        let at_start = line(&harness);
        harness.get_by_label(orbitfield::ui::console::LABEL).focus();
        harness.run();
        harness
            .get_by_label(orbitfield::ui::console::LABEL)
            .type_text("measure distance 1 2");
        harness.run();
        harness.key_press(egui::Key::Enter);
        // Frame by frame: the frame the message first shows in must not draw the line lower,
        // as nothing may repaint after it.
        for step in 0..3 {
            harness.step();
            assert_eq!(line(&harness), at_start, "{files:?}: frame {step} after Enter");
        }
        harness.run();
        assert!(
            harness.state().panels.console.message.is_some(),
            "a message under the line"
        );
        assert_eq!(line(&harness), at_start, "{files:?}: after a command");
        harness.state_mut().apply(Command::TogglePlaying);
        harness.run();
        assert_eq!(line(&harness), at_start, "{files:?}: while playing");
        harness.state_mut().apply(Command::TogglePlaying);
        harness.state_mut().apply(Command::SetFrame(0));
        harness.run();
        assert_eq!(line(&harness), at_start, "{files:?}: at another step");
    }
}

/// `help` prints more lines than the command line shows at once: the message scrolls within a
/// dozen lines (the view keeps most of the window), *Close* and Escape put it away, and an error
/// about a file that did not open goes once another document is open.
#[test]
fn a_long_message_scrolls_closes_and_an_old_error_goes() {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenFiles(vec![data("md/adk.psf"), data("md/adk_dims.dcd")]));
    assert!(state.document().is_some(), "{}", state.panels.status);
    let mut harness = window_of(state, [1280.0, 800.0], false);
    harness.run();
    harness.run();
    let line = |h: &egui_kittest::Harness<'static, AppState>| h.get_by_label(orbitfield::ui::console::LABEL).rect();
    let at_start = line(&harness);
    let enter = |h: &mut egui_kittest::Harness<'static, AppState>, text: &str| {
        h.get_by_label(orbitfield::ui::console::LABEL).focus();
        h.run();
        h.get_by_label(orbitfield::ui::console::LABEL).type_text(text);
        h.run();
        h.key_press(egui::Key::Enter);
        h.run();
        h.run();
    };
    enter(&mut harness, "help");
    let (error, text) = harness.state().panels.console.message.clone().expect("help's message");
    assert!(!error);
    assert!(text.lines().count() > 20, "{text}");
    assert!(!text.contains("more lines"), "the whole text is kept: {text}");
    // The scroll area measures its text in the frame after it appears.
    harness.run();
    harness.run();
    assert_eq!(line(&harness), at_start, "the line stays where it was");
    let view_height = harness.state().view.size_px[1];
    assert!(
        view_height >= 400,
        "the message takes the view's room: {view_height} px left"
    );
    let close = harness.get_by_label("Close").rect();
    assert!(
        close.min.y >= 0.0 && close.max.y <= 800.0 && close.max.x <= 1280.0,
        "{close:?}"
    );
    harness.get_by_label("Close").click();
    harness.run();
    harness.run();
    assert!(harness.state().panels.console.message.is_none(), "Close put it away");

    enter(&mut harness, "help");
    assert!(harness.state().panels.console.message.is_some());
    harness.key_press(egui::Key::Escape);
    harness.run();
    harness.run();
    assert!(harness.state().panels.console.message.is_none(), "Escape put it away");

    enter(&mut harness, "open no_such_structure.pdb");
    let (error, text) = harness.state().panels.console.message.clone().expect("the error");
    assert!(error, "{text}");
    harness.run();
    assert!(
        harness.state().panels.console.message.is_some(),
        "it stays while the same document is open"
    );
    harness
        .state_mut()
        .apply(Command::OpenFiles(vec![data("qm/threonine_hf_631gs_cart.molden.gz")]));
    harness.run();
    harness.run();
    assert!(
        harness.state().panels.console.message.is_none(),
        "the error about the file that did not open went with the document it spoke of"
    );
}

/// A window made small and then large again gives its side panels back their width: egui keeps a
/// panel clamped to what the small window allowed, which cut the orbital energies ("-11.485 …").
#[test]
fn side_panels_get_their_width_back_after_the_window_was_small() {
    let size = [1344.0, 806.0];
    let mut harness = window_of(threonine(), size, false);
    harness.run();
    let widths = |h: &egui_kittest::Harness<'_, AppState>| -> Vec<(&'static str, f32)> {
        panel_fit::panel_rects(h)
            .into_iter()
            .filter(|(id, _)| id.starts_with("orbitfield_left") || id.starts_with("orbitfield_right"))
            .map(|(id, r)| (id, r.width()))
            .collect()
    };
    let before = widths(&harness);
    assert_eq!(before.len(), 2, "{before:?}");
    for small in [[500.0, 350.0], [220.0, 160.0]] {
        harness.set_size(egui::vec2(small[0], small[1]));
        harness.run();
    }
    let squeezed = widths(&harness);
    assert!(
        squeezed.iter().zip(&before).any(|(s, b)| s.1 < b.1 - 10.0),
        "the small window narrows the panels: {squeezed:?} from {before:?}"
    );
    harness.set_size(egui::vec2(size[0], size[1]));
    harness.run();
    for _ in 0..3 {
        harness.run();
    }
    let after = widths(&harness);
    for ((id, b), (_, a)) in before.iter().zip(&after) {
        assert!((a - b).abs() < 1.0, "{id}: {a} after, {b} before");
    }
}

/// Opening the Jobs section keeps the left panel's width: its rows wrap inside the panel (a grid of
/// the workers widened the panel to its maximum, and the sequence under the view re-wrapped).
#[test]
fn opening_the_jobs_section_does_not_widen_the_left_panel() {
    let size = [1280.0, 800.0];
    // The viewer's own field service, with its worker pool listed in the section.
    let mut state = AppState::new(Settings::default(), orbitfield::app::default_field_service());
    state.apply(Command::OpenFiles(vec![data("md/adk.psf"), data("md/adk_dims.dcd")]));
    let mut harness = window_of(state, size, false);
    harness.run();
    let left = |h: &egui_kittest::Harness<'_, AppState>| -> f32 {
        panel_fit::panel_rects(h)
            .into_iter()
            .find(|(id, _)| id.starts_with("orbitfield_left"))
            .map(|(_, r)| r.width())
            .expect("the left panel")
    };
    let before = left(&harness);
    harness.get_by_label("Jobs").click();
    harness.run();
    harness.run();
    assert!(
        harness.query_by_label_contains(" failed, ").is_some(),
        "the Jobs section is open and lists its workers"
    );
    let after = left(&harness);
    assert!(
        (after - before).abs() < 1.0,
        "{after} wide with Jobs open, {before} before"
    );
}

/// A g(r) computed in the RDF section keeps the right panel's width, with its form, plot and the
/// sections below inside it (the tryouts saw the panel widen and its fields cut at the window's
/// edge once the plot appeared).
#[test]
fn a_computed_rdf_keeps_the_right_panel_as_wide_as_it_was() {
    let size = [1280.0, 800.0];
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenFiles(vec![data("md/adk.psf"), data("md/adk_dims.dcd")]));
    let mut harness = window_of(state, size, false);
    harness.run();
    let right = |h: &egui_kittest::Harness<'_, AppState>| -> f32 {
        panel_fit::panel_rects(h)
            .into_iter()
            .find(|(id, _)| id.starts_with("orbitfield_right"))
            .map(|(_, r)| r.width())
            .expect("the right panel")
    };
    let before = right(&harness);
    open_side_headers(&mut harness);
    harness.state_mut().panels.rdf.sel1_text = "name CA".into();
    harness.state_mut().panels.rdf.sel2_text = "name CA".into();
    harness.state_mut().apply(Command::StartRdf);
    let t0 = std::time::Instant::now();
    while harness.state().panels.rdf.is_running() {
        assert!(t0.elapsed().as_secs() < 120, "the g(r) never finished");
        harness.state_mut().pump_rdf();
        harness.step();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    harness.run_steps(4);
    assert!(harness.state().panels.rdf.run.is_some(), "a g(r) is shown");
    // adk's frames have no box: the panel says what g(r) is normalised to.
    assert!(
        harness
            .query_by_label_contains("No periodic box: g(r) is normalised")
            .is_some()
    );
    let after = right(&harness);
    assert!(
        (after - before).abs() < 1.0,
        "{after} wide with a g(r), {before} before"
    );
    assert_inside_their_panels(&harness, size, 0.5, "a computed g(r)");
}
