//! The QM user's electrostatic potential map in one step: *+ Add > Density coloured by its
//! potential (ESP map)* adds the electron density's surface coloured by the wavefunction's own
//! potential, as GaussView's mapped surface; a structure without a wavefunction has no such entry.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/journey.rs"]
mod journey;
use egui_kittest::kittest::Queryable;
use orbitfield::app::fields::FieldChoice;
use orbitfield::ui::add::{ADD_BUTTON, ESP_MAP};

#[test]
fn the_add_menu_maps_the_potential_on_the_density() {
    let mut harness = journey::window(journey::opened(&["engine/water_hf_631gs_sph.molden"], true));
    harness.run();
    let before = harness.state().reps().list.len();
    harness.get_by_label(ADD_BUTTON).click();
    harness.run();
    harness.get_by_label(ESP_MAP).click();
    harness.run();
    let state = harness.state();
    assert_eq!(state.reps().list.len(), before + 1);
    let (_, f) = state.reps().fields().last().unwrap();
    assert_eq!(f.field, FieldChoice::Density);
    assert_eq!(f.coloring.map(|c| c.source), Some(FieldChoice::WavefunctionPotential));

    let mut harness = journey::window(journey::opened(&["md/adk.psf", "md/adk_dims.dcd"], false));
    harness.run();
    harness.get_by_label(ADD_BUTTON).click();
    harness.run();
    assert!(harness.query_by_label(ESP_MAP).is_none(), "no wavefunction, no entry");
}
