//! A slice of the Poisson-Boltzmann potential, then the electrostatic model switched to eps = 4r
//! while the charges' potential has not been computed yet (no field engine here, as on a slow
//! machine for minutes): the slice must not draw the old Poisson-Boltzmann map under the new
//! model's range and legend (it read "Poisson-Boltzmann … ±0.016 kT/e", a range in hartree/e shown
//! as kT/e, and drew the map saturated). Until the new map arrives no slice and no slice legend are
//! drawn.

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/journey.rs"]
mod journey;
use journey::{settle_pb, two_ions_pqr, type_command_stepping, window};

#[test]
fn a_slice_switched_to_another_model_does_not_draw_the_old_map_under_the_new_legend() {
    let dir = tempfile::tempdir().unwrap();
    let state = two_ions_pqr(dir.path());
    let mut harness = window(state);
    harness.run_steps(3);
    type_command_stepping(&mut harness, "rep add surface all color pb");
    settle_pb(&mut harness);
    type_command_stepping(&mut harness, "slice range -1 1");
    settle_pb(&mut harness);
    let slice_titles = |h: &egui_kittest::Harness<'static, orbitfield::app::state::AppState>| -> Vec<String> {
        h.state()
            .legends()
            .into_iter()
            .map(|l| l.title)
            .filter(|t| t.contains("slice"))
            .collect()
    };
    let before = slice_titles(&harness);
    assert!(
        before.len() == 1 && before[0].contains("Poisson-Boltzmann"),
        "the PB slice is drawn: {before:?}"
    );
    assert!(harness.state().doc.reps.drawn_slice().is_some());

    type_command_stepping(&mut harness, "set model 4r");
    harness.run_steps(5);
    let st = harness.state();
    let slice = st
        .reps()
        .fields()
        .find(|(_, f)| matches!(f.style, orbitfield::app::reps::FieldStyle::Slice(_)))
        .map(|(_, f)| f)
        .expect("the slice representation stays");
    assert_eq!(
        slice.field,
        orbitfield::app::fields::FieldChoice::Potential,
        "it now cuts the charges' potential"
    );
    assert!(
        st.doc.reps.drawn_slice().is_none(),
        "the old map is not drawn under the new model"
    );
    let after = slice_titles(&harness);
    assert!(
        after.iter().all(|t| !t.contains("Poisson-Boltzmann")),
        "no legend names the old model: {after:?}"
    );
}
