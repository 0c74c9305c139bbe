//! The representation editor, sessions and the built-in file browser driven through egui_kittest:
//! add atoms by a selection, see a selection error as it is typed, reorder and hide; save a session
//! and reopen it through the browser; open files with the browser the viewer falls back to.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::atoms::AtomStyle;
use orbitfield::app::browser::Purpose;
use orbitfield::app::fields::{FieldChoice, FieldService};
use orbitfield::app::reps::RepKind;
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};

#[path = "common/adk_state.rs"]
mod adk_state;
use adk_state::{adk, data, reps_editor};

/// The selections of the atom representations, in list order.
fn atom_selections(state: &AppState) -> Vec<String> {
    state.reps().atoms().map(|(_, a)| a.selection.clone()).collect()
}

/// The show/hide box of the representation named `label` in the list (left of its name, which
/// selects it).
fn visibility_box<'h>(harness: &'h Harness<'_, AppState>, label: &'h str) -> egui_kittest::Node<'h> {
    let name = harness.get_by_label(label).rect();
    harness
        .query_all(egui_kittest::kittest::by().role(egui::accesskit::Role::CheckBox))
        .find(|n| {
            let r = n.rect();
            (r.center().y - name.center().y).abs() < 10.0 && r.max.x <= name.min.x + 1.0
        })
        .expect("its show/hide box")
}

#[test]
fn a_protein_starts_in_licorice_and_the_editor_adds_checks_reorders_and_hides() {
    let state = adk();
    // By content: the protein in licorice (no space-filling spheres hiding everything).
    let first = state.reps().atoms().next().map(|(_, a)| (a.selection.clone(), a.style));
    assert_eq!(first, Some(("protein or nucleic".into(), AtomStyle::Licorice)));
    let n_before = state.reps().list.len();
    let mut harness = reps_editor(state);
    harness.run();
    // Add: type a selection and press the button.
    harness
        .get_by_label("Atoms")
        .set_text_value_accesskit("all and resid 1 to 3");
    harness.run();
    harness.get_by_label("Add atoms").click();
    harness.run();
    let st = harness.state();
    assert_eq!(st.reps().list.len(), n_before + 1);
    let (_, added) = st.reps().atoms().last().unwrap();
    assert_eq!(added.selection, "all and resid 1 to 3");
    assert_eq!(added.error, None);
    assert!(added.count > 20, "three residues of atoms are counted: {}", added.count);
    // A selection that does not parse: the error shows at once, the last valid selection stays.
    let spheres_before = harness.state().view.spheres.len() + harness.state().view.cylinders.len();
    let text = harness
        .query_all(
            egui_kittest::kittest::by()
                .value("all and resid 1 to 3")
                .role(egui::accesskit::Role::TextInput),
        )
        .max_by(|a, b| a.rect().min.y.total_cmp(&b.rect().min.y))
        .expect("the new representation's selection field (the add field is above the list)");
    text.set_text_value_accesskit("all and resid 1 to 3 and (");
    harness.run();
    let (_, a) = harness.state().reps().atoms().last().unwrap();
    assert_eq!(a.selection, "all and resid 1 to 3 and (");
    let error = a.error.clone().expect("a parse error");
    assert!(harness.query_by_label(&error).is_some(), "the error is shown: {error}");
    // Columns count from 1, as on the command line: the text's 26 characters end at column 27.
    assert!(error.contains("at column 27"), "{error}");
    // The title names the selection drawn, not the text that does not parse.
    let title = {
        let st = harness.state();
        st.rep_label(st.reps().list.last().unwrap())
    };
    assert!(title.starts_with("all and resid 1 to 3: "), "{title}");
    assert_eq!(
        harness.state().view.spheres.len() + harness.state().view.cylinders.len(),
        spheres_before,
        "the atoms drawn stay as they were"
    );
    // Reorder: the new representation moves up one place.
    let n = harness.state().reps().list.len();
    harness.query_all_by_label("Up").nth(n - 1).unwrap().click();
    harness.run();
    let list = &harness.state().reps().list;
    assert!(matches!(&list[n - 2].kind, RepKind::Atoms(a) if a.selection.starts_with("all and resid")));
    // Hide the protein: its atoms leave the picture.
    let drawn = |st: &AppState| st.view.spheres.len() + st.view.cylinders.len() + st.view.lines.len();
    let before = drawn(harness.state());
    visibility_box(&harness, "protein or nucleic: Licorice").click();
    harness.run();
    let shown: Vec<(String, bool)> = harness
        .state()
        .reps()
        .list
        .iter()
        .map(|r| (harness.state().rep_label(r), r.visible))
        .collect();
    assert_eq!(shown[1], ("protein or nucleic: Licorice".into(), false), "{shown:?}");
    assert!(
        drawn(harness.state()) < before / 2,
        "hiding the protein removes its atoms"
    );
    // Duplicate and delete.
    harness.query_all_by_label("Duplicate").next().unwrap().click();
    harness.run();
    assert_eq!(harness.state().reps().list.len(), n + 1);
    harness.query_all_by_label("Delete").next().unwrap().click();
    harness.run();
    assert_eq!(harness.state().reps().list.len(), n);
    assert_eq!(atom_selections(harness.state())[1], "protein or nucleic");
}

#[test]
fn a_session_saved_and_reopened_through_the_browser_shows_the_same_view() {
    let dir = tempfile::tempdir().unwrap();
    let session = dir.path().join("view.ron");
    let mut state = adk();
    state.apply(Command::AddRep(orbitfield::app::reps::RepSpec::atoms(
        "resname ARG",
        AtomStyle::Vdw,
    )));
    state.apply(Command::SelectField(Some(FieldChoice::Potential)));
    state.apply(Command::SetShowSlice(true));
    state.apply(Command::SetFrame(2));
    state.apply(Command::Orbit([0.3, 0.2]));
    state.apply(Command::SaveSession(session.clone()));
    assert!(session.is_file(), "{}", state.panels.status);
    let saved = state.session().unwrap();
    // A fresh viewer opens it from File > Open session (the built-in browser).
    let mut fresh = AppState::new(Settings::default(), FieldService::default());
    fresh.apply(Command::OpenBrowser(Purpose::OpenSession, None));
    fresh.apply(Command::Browser(orbitfield::app::browser::BrowserAction::Chdir(
        dir.path().to_path_buf(),
    )));
    let mut harness = Harness::builder().with_size(egui::vec2(1200.0, 800.0)).build_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::main_ui(ui, state);
            state.apply_pending();
        },
        fresh,
    );
    harness.run();
    harness.get_by_label_contains("view.ron").click();
    harness.run();
    harness.get_by_label("Open").click();
    harness.run();
    let st = harness.state();
    let reopened = st.session().expect("the session's files are open");
    assert_eq!(reopened.reps, saved.reps);
    assert_eq!(reopened.frame, 2);
    let (a, b) = (reopened.camera.unwrap(), saved.camera.unwrap());
    for k in 0..4 {
        assert!((a.rotation[k] - b.rotation[k]).abs() < 1e-5, "{a:?} vs {b:?}");
    }
    assert!((a.distance_angstrom - b.distance_angstrom).abs() < 1e-3);
    assert!(st.show_slice(), "the potential slice is back");
    assert!(!st.panels.browser.open);
}

#[test]
fn the_built_in_browser_opens_files_when_the_desktop_has_no_dialog() {
    let dir = tempfile::tempdir().unwrap();
    let sub = dir.path().join("inputs");
    std::fs::create_dir(&sub).unwrap();
    std::fs::copy(data("engine/water_hf_631gs_sph.molden"), sub.join("water.molden")).unwrap();
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenBrowser(
        Purpose::OpenFiles,
        Some("No desktop file dialog: the built-in browser instead.".into()),
    ));
    state.apply(Command::Browser(orbitfield::app::browser::BrowserAction::Chdir(
        dir.path().to_path_buf(),
    )));
    let mut harness = Harness::builder().with_size(egui::vec2(1200.0, 800.0)).build_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::main_ui(ui, state);
            state.apply_pending();
        },
        state,
    );
    harness.run();
    harness.get_by_label("No desktop file dialog: the built-in browser instead.");
    // Nothing ticked: Open says so and stays.
    harness.get_by_label("Open").click();
    harness.run();
    assert!(harness.state().panels.browser.open);
    harness.get_by_label("choose a file first");
    harness.get_by_label("inputs/").click();
    harness.run();
    harness.get_by_label_contains("water.molden").click();
    harness.run();
    harness.get_by_label("Open").click();
    harness.run();
    let st = harness.state();
    assert!(!st.panels.browser.open);
    let doc = st.document().expect("the file opened");
    assert_eq!(doc.structure.len(), 3);
}
