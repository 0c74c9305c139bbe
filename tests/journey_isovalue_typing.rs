//! The isovalue typed into the Field panel's number, one key per frame as a person types: the
//! orbital's isovalue becomes what was typed (it used to snap back to the old value after each
//! keystroke, because every half-typed number was offered as the value and refused).

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui::Key;
use egui_kittest::kittest::Queryable;

#[path = "common/journey.rs"]
mod journey;
use journey::{opened, window};

#[test]
fn an_isovalue_typed_key_by_key_is_the_isovalue() {
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], true));
    harness.run();
    let homo = harness.state().panel_field_id().expect("the HOMO is shown");
    // The Field panel's number (the right panel's; the representation editor on the left has one too).
    fn spin<'h>(h: &'h egui_kittest::Harness<'static, orbitfield::app::state::AppState>) -> egui_kittest::Node<'h> {
        h.query_all_by_role(egui::accesskit::Role::SpinButton)
            .filter(|n| format!("{n:?}").contains("Isovalue in"))
            .max_by(|a, b| a.rect().min.x.total_cmp(&b.rect().min.x))
            .expect("the isovalue's number")
    }
    for (typed, want) in [("0.02", 0.02f32), ("0.1", 0.1), ("0.0025", 0.0025)] {
        spin(&harness).click();
        harness.run();
        // One key per frame, as typed by hand; the edit selected the old text when it opened.
        for c in typed.chars() {
            harness
                .query_all_by_role(egui::accesskit::Role::TextInput)
                .next()
                .expect("the number opens for typing")
                .type_text(&c.to_string());
            harness.run();
        }
        harness.key_press(Key::Enter);
        harness.run();
        let iso = harness.state().reps().field(homo).unwrap().iso.value;
        assert!(
            iso.is_some_and(|v| (v - want).abs() < 1e-6 * want),
            "typed {typed}: the isovalue is {iso:?}"
        );
    }
}
