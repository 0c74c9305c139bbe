//! A molecular surface's atoms changed after it was added, as a user changes them: by command
//! (`rep modify N selection TEXT`, `rep modify N field molsurf:TEXT`) and in the representation's
//! own selection box (taken on Enter). Each gives the surface of the new atoms; a selection that
//! does not parse is refused at its column.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui::Key;
use egui_kittest::kittest::Queryable;
use orbitfield::app::fields::FieldChoice;

#[path = "common/journey.rs"]
mod journey;
use journey::{opened, type_command, type_line, window};

/// The atoms of the surface that representation `n` (1-based) shows.
fn surface_atoms(harness: &egui_kittest::Harness<'static, orbitfield::app::state::AppState>, n: usize) -> String {
    let state = harness.state();
    let rep = &state.reps().list[n - 1];
    let f = state.reps().field(rep.id).expect("a field representation");
    let FieldChoice::MolSurf { selection } = f.field else {
        panic!("representation {n} shows {:?}", f.field);
    };
    state.document().unwrap().surface_selections[usize::from(selection)].clone()
}

#[test]
fn a_surface_s_atoms_are_changed_by_command_and_in_its_box() {
    let mut harness = window(opened(&["md/adk.psf", "md/adk_dims.dcd"], true));
    harness.run();
    type_command(&mut harness, "rep add surface all");
    let n = harness.state().reps().list.len();
    assert_eq!(surface_atoms(&harness, n), "all");

    type_command(&mut harness, &format!("rep modify {n} selection resid 1 to 60"));
    assert_eq!(surface_atoms(&harness, n), "resid 1 to 60");
    type_command(&mut harness, &format!("rep modify {n} field molsurf:protein"));
    assert_eq!(surface_atoms(&harness, n), "protein");
    let (error, text) = type_line(&mut harness, &format!("rep modify {n} selection resid 1 tto 5")).unwrap();
    assert!(error && text.contains("bad selection"), "{text}");
    assert_eq!(surface_atoms(&harness, n), "protein");

    // The box under the representation: typed, then Enter.
    let rep_id = harness.state().reps().list[n - 1].id;
    harness
        .state_mut()
        .push(orbitfield::app::state::Command::SelectRep(rep_id));
    harness.run();
    let boxes: Vec<_> = harness
        .query_all_by_role(egui::accesskit::Role::TextInput)
        .filter(|n| format!("{n:?}").contains("value: \"protein\""))
        .collect();
    assert!(!boxes.is_empty(), "the surface's selection box shows its atoms");
    boxes[0].focus();
    harness.run();
    harness.key_press_modifiers(egui::Modifiers::COMMAND, Key::A);
    harness.run();
    let field = harness
        .query_all_by_role(egui::accesskit::Role::TextInput)
        .find(|n| n.is_focused())
        .unwrap();
    field.type_text("resid 100 to 120");
    harness.run();
    assert_eq!(surface_atoms(&harness, n), "protein", "nothing recomputed before Enter");
    harness.key_press(Key::Enter);
    harness.run();
    assert_eq!(surface_atoms(&harness, n), "resid 100 to 120");
    // The other representations keep their atoms.
    let first = harness.state().reps().list[0].id;
    let atoms = harness
        .state()
        .reps()
        .atoms()
        .find(|(r, _)| r.id == first)
        .map(|(_, a)| a.selection.clone());
    assert_eq!(atoms.as_deref(), Some("protein or nucleic"));
}
