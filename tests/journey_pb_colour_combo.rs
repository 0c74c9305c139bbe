//! The field panel's "Colour surface by" names the Poisson-Boltzmann colouring in use after its
//! parameters change (each change is a new revision of the field; the combo read "Its own colour"
//! while the surface stayed coloured), and picking that entry again keeps the colour range. The
//! legend says when the radii were the elements' (the files give none).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/journey.rs"]
mod journey;
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use journey::{settle_pb, two_ions_pqr, type_command_stepping, window};
use orbitfield::app::state::AppState;

const COMBO: &str = "Colour surface by";

/// The value the combo shows.
fn shown(harness: &Harness<'static, AppState>) -> String {
    harness
        .query_all_by_role(egui::accesskit::Role::ComboBox)
        .find(|n| n.accesskit_node().label().as_deref() == Some(COMBO))
        .expect("the colouring combo in the field panel")
        .accesskit_node()
        .value()
        .unwrap_or_default()
}

fn surface_range(state: &AppState) -> Option<[f32; 2]> {
    state.reps().fields().find_map(|(_, f)| f.coloring?.range)
}

#[test]
fn the_colouring_combo_names_poisson_boltzmann_after_its_parameters_change() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = window(two_ions_pqr(dir.path()));
    harness.run_steps(3);
    type_command_stepping(&mut harness, "rep add surface all color pb");
    settle_pb(&mut harness);
    type_command_stepping(&mut harness, "color 2 pb range -5 5");
    type_command_stepping(&mut harness, "rep select 2");
    settle_pb(&mut harness);
    let pb = orbitfield::ui::pb::SOURCE_NAME;
    assert_eq!(shown(&harness), pb);

    type_command_stepping(&mut harness, "set ionic 0.1");
    settle_pb(&mut harness);
    assert_eq!(shown(&harness), pb, "after the ionic strength changed");
    assert_eq!(surface_range(harness.state()), Some([-5.0, 5.0]));

    // Picking the entry in use again changes nothing.
    harness
        .query_all_by_role(egui::accesskit::Role::ComboBox)
        .find(|n| n.accesskit_node().label().as_deref() == Some(COMBO))
        .unwrap()
        .click();
    harness.run_steps(2);
    harness.query_all_by_label(pb).last().expect("the entry").click();
    harness.run_steps(2);
    settle_pb(&mut harness);
    assert_eq!(surface_range(harness.state()), Some([-5.0, 5.0]), "the range kept");
    assert_eq!(shown(&harness), pb);

    // A surface added after the change is named the same.
    type_command_stepping(&mut harness, "rep add surface all color pb");
    type_command_stepping(&mut harness, "rep select 3");
    settle_pb(&mut harness);
    assert_eq!(shown(&harness), pb, "a surface added later");
}

/// Without radii in the files (a PSF), the legend says the solve took each element's radius, as a
/// headless script's image shows it; a PQR's own radii add nothing to it.
#[test]
fn the_legend_says_when_radii_came_from_the_elements() {
    let mut harness = window(journey::opened(&["md/adk.psf", "md/adk_dims.dcd"], false));
    harness.run_steps(3);
    type_command_stepping(&mut harness, "rep add surface protein color pb");
    settle_pb(&mut harness);
    let legend = harness.state().pb.legend();
    assert!(
        legend.ends_with(", Bondi radii by element"),
        "{legend} / {} / {:?}",
        harness.state().panels.status,
        harness.state().pb.failure
    );
    let dir = tempfile::tempdir().unwrap();
    let mut harness = window(two_ions_pqr(dir.path()));
    harness.run_steps(3);
    type_command_stepping(&mut harness, "rep add surface all color pb");
    settle_pb(&mut harness);
    let legend = harness.state().pb.legend();
    assert!(!legend.contains("radii"), "{legend}");
}
