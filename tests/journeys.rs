//! User journeys through the whole window, driven through egui_kittest as a new user would click
//! and type: (1) threonine — a density coloured by its potential stays when LUMO is picked in the
//! orbital list (a LUMO orbital representation is added instead), and a typed density isovalue of
//! 0.002 a.u. is kept and labelled so although the lattice's values reach 68 a.u.; (5) the built-in
//! file browser opens a file by its typed path, lists only the files the viewer reads unless asked
//! for all, and Escape closes it. The demo's caption is checked against the torsion the demo's
//! files are built with (5 degrees per frame, from cis to trans).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::Harness;
use egui_kittest::kittest::{Queryable, by};
use orbitfield::app::fields::{FieldChoice, FieldKey, FieldService};
use orbitfield::app::reps::RepKind;
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use orbitfield::model::{Grid3, Lattice};
use std::path::PathBuf;
use std::sync::Arc;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// The whole window over `state`, commands applied after each frame as the app does.
/// Types `path` into the file browser's Path line and presses Go.
fn browse_to(harness: &mut Harness<'static, AppState>, path: &std::path::Path) {
    harness
        .get_by_label("Path")
        .set_text_value_accesskit(&path.display().to_string());
    harness.run();
    harness.get_by_label("Go").click();
    harness.run();
}

fn window(state: AppState, size: [f32; 2]) -> Harness<'static, AppState> {
    let mut harness = Harness::builder()
        .with_size(egui::vec2(size[0], size[1]))
        .build_ui_state(
            |ui, state: &mut AppState| {
                orbitfield::ui::main_ui(ui, state);
                state.apply_pending();
            },
            state,
        );
    harness.run();
    harness
}

/// The field representations: (field, colouring source, isovalue as set).
fn fields(state: &AppState) -> Vec<(FieldChoice, Option<FieldChoice>, Option<f32>)> {
    state
        .reps()
        .fields()
        .map(|(_, f)| (f.field, f.coloring.map(|c| c.source), f.iso.value))
        .collect()
}

/// A density lattice whose values reach 67.7 a.u. (a nucleus on a lattice point), shown by
/// representation `index`: what made the old slider start at 1e-4 x 67.7 = 0.00677 a.u.
fn show_density_grid(state: &mut AppState, index: usize) {
    let doc = state.document().unwrap().id;
    let lattice = Lattice::axis_aligned([-8.0; 3], 0.5, [33, 33, 33]);
    let mut grid = Grid3::zeros(lattice, "density");
    for (n, v) in grid.values.iter_mut().enumerate() {
        *v = 1e-6 * (n % 97) as f32;
    }
    grid.values[lattice.index(16, 16, 16)] = 67.7;
    let key = FieldKey {
        document: doc,
        frame: 0,
        field: FieldChoice::Density,
        dims: [33, 33, 33],
    };
    let rep = state.doc.reps.list.iter_mut().filter_map(|r| match &mut r.kind {
        RepKind::Field(f) => Some(f),
        _ => None,
    });
    let f = rep.into_iter().nth(index).unwrap();
    f.pipeline.shown = Some((key, Arc::new(grid)));
}

#[test]
fn threonine_lumo_keeps_the_coloured_density_and_a_typed_isovalue_is_kept() {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenFiles(vec![data("qm/threonine_hf_631gs_cart.molden.gz")]));
    assert!(state.document().is_some(), "{}", state.panels.status);
    let homo = state.homo_index(orbitfield::model::Spin::Alpha).unwrap();
    // The density coloured by the wavefunction's potential, in the field panel.
    state.apply(Command::SelectField(Some(FieldChoice::Density)));
    state.apply(Command::SetSurfaceColor(Some((
        FieldChoice::WavefunctionPotential,
        Some([-0.05, 0.05]),
    ))));
    let density = (
        FieldChoice::Density,
        Some(FieldChoice::WavefunctionPotential),
        Some(0.002),
    );
    assert_eq!(fields(&state), vec![density]);
    show_density_grid(&mut state, 0);
    let mut harness = window(state, [1280.0, 800.0]);

    // Pick LUMO in the orbital list: the density stays as it was; a LUMO orbital is added.
    let lumo_row = format!("{} LUMO", homo + 2);
    // The panel is scrolled down to the list first, as a user would with the wheel over the
    // list's headings, then the list, with the wheel over its rows, until the LUMO's row is under
    // the headings (each smooth scroll settles before the next).
    let wheel = |harness: &mut Harness<'static, AppState>, at: egui::Pos2, dy: f32| {
        harness.hover_at(at);
        harness.run();
        harness.event(egui::Event::MouseWheel {
            unit: egui::MouseWheelUnit::Point,
            delta: egui::vec2(0.0, dy),
            phase: egui::TouchPhase::Move,
            source: egui::MouseWheelSource::Wheel,
            modifiers: egui::Modifiers::default(),
        });
        harness.run_steps(60);
    };
    let heading = harness.get_by_label("occ.").rect();
    wheel(&mut harness, heading.center(), -400.0);
    let (row, heading) = (
        harness.get_by_label(&lumo_row).rect(),
        harness.get_by_label("occ.").rect(),
    );
    wheel(
        &mut harness,
        egui::pos2(row.center().x, heading.max.y + 30.0),
        heading.max.y + 40.0 - row.min.y,
    );
    let (row, heading) = (
        harness.get_by_label(&lumo_row).rect(),
        harness.get_by_label("occ.").rect(),
    );
    assert!(
        row.min.y > heading.max.y && row.max.y < 680.0,
        "the LUMO's row {row:?} is in view"
    );
    harness.get_by_label(&lumo_row).click();
    harness.run();
    let lumo = FieldChoice::Orbital {
        spin: orbitfield::model::Spin::Alpha,
        index: homo + 1,
    };
    let now = fields(harness.state());
    assert_eq!(now.first(), Some(&density), "the density is unchanged: {now:?}");
    assert!(
        now.iter().any(|(f, c, _)| *f == lumo && c.is_none()),
        "a LUMO representation: {now:?}"
    );
    // Shift+click on HOMO adds a second orbital representation; the LUMO stays.
    harness
        .get_by_label(&format!("{} HOMO", homo + 1))
        .click_modifiers(egui::Modifiers::SHIFT);
    harness.run();
    let now = fields(harness.state());
    assert_eq!(now.len(), 3, "{now:?}");
    assert_eq!(now[0], density);
    assert!(now.iter().any(|(f, _, _)| *f == lumo));

    // Select the density in the representation list; the field panel edits it.
    harness.get_by_label("electron density: Isosurface").click();
    harness.run();
    // Type 0.01 then 0.002 a.u. into the panel's isovalue: each is kept as typed.
    for typed in [0.01f32, 0.002] {
        let slider = harness
            .query_all(
                by().role(egui::accesskit::Role::Slider)
                    .predicate(|n| n.label().is_some_and(|l| l.to_ascii_lowercase().contains("iso"))),
            )
            .max_by(|a, b| a.rect().min.x.total_cmp(&b.rect().min.x))
            .expect("the field panel's isovalue slider");
        slider.set_value_accesskit(f64::from(typed));
        harness.run();
        let iso = fields(harness.state())[0].2.unwrap();
        assert!((iso - typed).abs() <= 1e-6 * typed, "typed {typed}, kept {iso}");
    }
    assert!(
        harness.query_all_by_label_contains("surface at 0.002 a.u.").count() >= 1,
        "the label gives the isovalue with its unit"
    );
    assert_eq!(fields(harness.state())[0].1, Some(FieldChoice::WavefunctionPotential));
}

#[test]
fn the_file_browser_opens_a_typed_path_filters_by_format_and_closes_on_escape() {
    let dir = tempfile::tempdir().unwrap();
    let folder = dir.path().join("inputs");
    std::fs::create_dir(&folder).unwrap();
    let xyz = "3\nwater\nO 0.0 0.0 0.0\nH 0.96 0.0 0.0\nH -0.24 0.93 0.0\n";
    std::fs::write(folder.join("water.xyz"), xyz).unwrap();
    std::fs::write(folder.join("notes.txt"), "not a structure").unwrap();
    let state = AppState::new(Settings::default(), FieldService::default());
    let mut harness = window(state, [1280.0, 800.0]);
    harness
        .state_mut()
        .apply(Command::OpenBrowser(orbitfield::app::browser::Purpose::OpenFiles, None));
    harness.run();
    // A typed folder is shown: the structure is listed, the notes are not.
    browse_to(&mut harness, &folder);
    assert_eq!(
        harness.state().panels.browser.dir,
        std::fs::canonicalize(&folder).unwrap()
    );
    assert!(harness.query_all_by_label_contains("water.xyz").count() == 1);
    assert!(harness.query_all_by_label_contains("notes.txt").count() == 0);
    // "All files" lists the notes too.
    harness
        .state_mut()
        .apply(Command::Browser(orbitfield::app::browser::BrowserAction::ShowAllFiles(
            true,
        )));
    harness.run();
    assert!(harness.query_all_by_label_contains("notes.txt").count() == 1);
    // A typed file is opened.
    browse_to(&mut harness, &folder.join("water.xyz"));
    let st = harness.state();
    assert!(!st.panels.browser.open, "the browser closes once the file opens");
    assert_eq!(
        st.document().map(|d| d.structure.len()),
        Some(3),
        "{}",
        st.panels.status
    );
    // The folder is remembered for the next time.
    assert_eq!(
        st.settings
            .last_folder
            .as_deref()
            .map(std::fs::canonicalize)
            .map(|p| p.unwrap()),
        Some(std::fs::canonicalize(&folder).unwrap())
    );
    // Escape closes the browser (and does not cancel anything else).
    harness
        .state_mut()
        .apply(Command::OpenBrowser(orbitfield::app::browser::Purpose::OpenFiles, None));
    harness.run();
    assert!(harness.state().panels.browser.open);
    assert_eq!(
        harness.state().panels.browser.dir,
        std::fs::canonicalize(&folder).unwrap(),
        "it opens in the last folder"
    );
    harness.key_press(egui::Key::Escape);
    harness.run();
    assert!(!harness.state().panels.browser.open, "Escape closes the browser");
    assert_ne!(harness.state().panels.status, "cancelled");
}

#[test]
fn the_demo_follows_its_orbital_with_translucent_lobes_and_names_the_torsion() {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenDemo);
    assert!(state.view.timeline.playing);
    assert!(state.doc.follow.is_some(), "follow through frames is on");
    let opacities: Vec<f32> = state.reps().fields().map(|(_, f)| f.opacity).collect();
    assert!(
        !opacities.is_empty() && opacities.iter().all(|o| *o < 0.9),
        "{opacities:?}"
    );
    // The demo's files twist H5 about the C-C axis by 5 degrees a frame, from cis (0) to trans.
    for (frame, want) in [(0usize, 0.0f64), (18, 90.0), (36, 180.0), (7, 35.0)] {
        state.apply(Command::SetFrame(frame));
        let caption = state.demo_caption().expect("a caption");
        let angle: f64 = caption
            .split("torsion ")
            .nth(1)
            .and_then(|s| s.split('°').next())
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or_else(|| panic!("an angle in {caption:?}"));
        assert!((angle - want).abs() < 0.5, "frame {frame}: {caption}");
        assert!(caption.starts_with("H3-C1-C2-H5 torsion"), "{caption}");
        // Numbered as the timeline and the `frame` command number frames, from 0.
        assert!(caption.contains(&format!("frame {frame} of 0–36")), "{caption}");
    }
    // Shown over the 3-D view of the window (which keeps repainting while the match runs).
    let mut harness = Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::main_ui(ui, state);
            state.apply_pending();
        },
        state,
    );
    harness.run_steps(3);
    assert!(harness.state().demo_caption().is_some());
}

/// In the demo, which follows its orbital through the frames, a second orbital shift-clicked in
/// the orbital list keeps its own orbital when the frame changes; the first follows on.
#[test]
fn a_second_orbital_added_while_following_keeps_its_own() {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenDemo);
    state.apply(Command::TogglePlaying);
    let t0 = std::time::Instant::now();
    while state.doc.follow.as_ref().is_some_and(|f| f.steps.is_none()) {
        state.poll_follow();
        std::thread::sleep(std::time::Duration::from_millis(10));
        assert!(t0.elapsed().as_secs() < 120, "the orbital was never followed");
    }
    state.apply(Command::SetFrame(4));
    let mut harness = window(state, [1280.0, 800.0]);
    harness.run_steps(2);
    harness.get_by_label("9 LUMO").click_modifiers(egui::Modifiers::SHIFT);
    harness.run_steps(2);
    let st = harness.state_mut();
    st.push(Command::StepFrame(1));
    st.apply_pending();
    harness.run_steps(2);
    let st = harness.state();
    let orbitals: Vec<usize> = st
        .reps()
        .fields()
        .filter_map(|(_, f)| match f.field {
            FieldChoice::Orbital { index, .. } => Some(index),
            _ => None,
        })
        .collect();
    let followed = st.follow_step().expect("still following").index;
    assert_eq!(
        orbitals,
        vec![followed, 8],
        "the first follows, the second keeps the LUMO"
    );
}

/// Escape closes the topmost thing, one per press: the image export dialog over the help window,
/// then the help window, then the measure mode the Add menu started; only then would it cancel jobs.
#[test]
fn escape_closes_dialogs_one_at_a_time_then_ends_the_measure_mode() {
    use orbitfield::app::export::ExportDialog;
    use orbitfield::app::measure::{ClickMode, MeasureKind};
    use orbitfield::app::settings::Settings;
    let mut state = AppState::new(Settings::default(), orbitfield::app::fields::FieldService::default());
    state.apply(Command::OpenFiles(vec![data("md/adk.psf")]));
    let mut harness = window(state, [1280.0, 800.0]);
    // Add > Measurement: distance.
    harness.get_by_label(orbitfield::ui::add::ADD_BUTTON).click();
    harness.run();
    harness.get_by_label("Measurement: distance").click();
    harness.run();
    assert_eq!(
        harness.state().tools.measure.mode,
        ClickMode::Measure(MeasureKind::Distance),
        "the Add menu starts the distance mode"
    );
    harness.state_mut().apply(Command::ToggleHelp);
    harness
        .state_mut()
        .apply(Command::ShowExportDialog(ExportDialog::Image, true));
    harness.run();
    harness.key_press(egui::Key::Escape);
    harness.run();
    let st = harness.state();
    assert!(!st.panels.export.image.open, "the export dialog closes first");
    assert!(st.panels.show_help, "the help window stays for the next press");
    harness.key_press(egui::Key::Escape);
    harness.run();
    assert!(!harness.state().panels.show_help, "then the help window");
    assert_ne!(
        harness.state().tools.measure.mode,
        ClickMode::Pick,
        "the measure mode is still on"
    );
    harness.key_press(egui::Key::Escape);
    harness.run();
    assert_eq!(
        harness.state().tools.measure.mode,
        ClickMode::Pick,
        "then the measure mode ends"
    );
    assert_ne!(harness.state().panels.status, "cancelled");
}

/// The session browser keeps its size whatever the folder holds: its Save button stays where it
/// was going from a folder of files to an empty one (a shrinking window once moved it from under
/// the pointer, and the click landed on the panel behind).
#[test]
fn the_browser_keeps_its_buttons_in_place() {
    let dir = tempfile::tempdir().unwrap();
    let full = dir.path().join("full");
    let empty = dir.path().join("empty");
    std::fs::create_dir(&full).unwrap();
    std::fs::create_dir(&empty).unwrap();
    for k in 0..40 {
        std::fs::write(full.join(format!("session_{k}.ron")), "()").unwrap();
    }
    let state = AppState::new(Settings::default(), FieldService::default());
    let mut harness = window(state, [1280.0, 800.0]);
    let mut save_at = Vec::new();
    for folder in [&full, &empty, &full] {
        harness.state_mut().apply(Command::OpenBrowser(
            orbitfield::app::browser::Purpose::SaveSession,
            None,
        ));
        harness.run();
        browse_to(&mut harness, folder);
        harness.run();
        save_at.push(harness.get_by_label("Save").rect());
    }
    assert_eq!(save_at[0], save_at[1], "empty folder: {save_at:?}");
    assert_eq!(save_at[0], save_at[2], "back to the full one: {save_at:?}");
}

/// File > Open recent lists the files opened last and opens one, as the Files panel's list does.
#[test]
fn file_menu_opens_a_recent_file() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/engine/water_hf_631gs_sph.molden");
    let mut settings = Settings::default();
    settings.push_recent(std::slice::from_ref(&path));
    let state = AppState::new(settings, FieldService::default());
    let mut harness = window(state, [1280.0, 800.0]);
    harness.get_by_label("File").click();
    harness.run();
    harness.get_by_label("Open recent").hover();
    harness.run();
    harness.get_by_label("Open recent").click();
    harness.run();
    let entries: Vec<_> = harness.query_all_by_label("water_hf_631gs_sph.molden").collect();
    assert!(entries.len() >= 2, "the panel's link and the menu's entry");
    // The submenu's entry opens beside the File menu, right of the Files panel's link.
    let menu_entry = entries
        .into_iter()
        .max_by(|a, b| a.rect().min.x.total_cmp(&b.rect().min.x))
        .unwrap();
    menu_entry.click();
    harness.run();
    harness.run();
    let doc = harness.state().document().expect("the recent file opened");
    assert_eq!(doc.structure.len(), 3);
}
