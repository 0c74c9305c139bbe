//! Undo and redo keep what they did not take back: a surface's colour range and a slice of the
//! Poisson-Boltzmann potential survive an undo of an unrelated representation edit, and a saved
//! session keeps the range. The representations' records (`RepSpec`) held a colouring's source but
//! not its range, so any undo that rebuilt the list reset the range to the default (the tryout saw
//! -8..2 kT/e go back to +-5).

#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "common/journey.rs"]
mod journey;
use journey::{settle_pb, two_ions_pqr, type_command_stepping, window};
use orbitfield::app::reps::{FieldStyle, SpecKind};
use orbitfield::app::state::AppState;

/// The surface's colour range (computed units: kT/e for Poisson-Boltzmann) and the slices' ranges.
fn ranges(state: &AppState) -> (Option<[f32; 2]>, Vec<Option<[f32; 2]>>) {
    let surface = state
        .reps()
        .fields()
        .find(|(_, f)| f.style == FieldStyle::Isosurface)
        .and_then(|(_, f)| f.coloring?.range);
    let slices = state
        .reps()
        .fields()
        .filter_map(|(_, f)| match f.style {
            FieldStyle::Slice(p) => Some(p.range),
            FieldStyle::Isosurface => None,
        })
        .collect();
    (surface, slices)
}

#[test]
fn undo_and_redo_keep_a_colour_range_and_a_slice() {
    let dir = tempfile::tempdir().unwrap();
    let mut harness = window(two_ions_pqr(dir.path()));
    harness.run_steps(3);
    type_command_stepping(&mut harness, "rep add surface all color pb");
    settle_pb(&mut harness);
    type_command_stepping(&mut harness, "color 2 pb range -8 2");
    type_command_stepping(&mut harness, "slice range -1 1");
    settle_pb(&mut harness);
    let want = (Some([-8.0f32, 2.0]), vec![Some([-1.0f32, 1.0])]);
    assert_eq!(ranges(harness.state()), want);

    // An unrelated edit, undone and redone.
    type_command_stepping(&mut harness, "rep hide 1");
    type_command_stepping(&mut harness, "undo");
    settle_pb(&mut harness);
    assert!(harness.state().reps().list[0].visible, "the hide was undone");
    assert_eq!(ranges(harness.state()), want, "undo kept the range and the slice");
    type_command_stepping(&mut harness, "redo");
    settle_pb(&mut harness);
    assert!(!harness.state().reps().list[0].visible, "the hide was redone");
    assert_eq!(ranges(harness.state()), want, "redo kept the range and the slice");

    // A session keeps the range.
    let session = harness.state().session().unwrap();
    let kept = session.reps.iter().find_map(|r| match &r.kind {
        SpecKind::Field {
            style: FieldStyle::Isosurface,
            color_range,
            ..
        } => *color_range,
        _ => None,
    });
    assert_eq!(kept, Some([-8.0, 2.0]));
}

/// Undoing a hide shows the surface again with the colours it had, at once: the representations
/// are the same ones (their ids, their meshes and values at the vertices kept), not made again
/// and coloured from scratch (the tryout's 4E43 surface took a minute and a half to colour again,
/// and its cartoon went blank while it was rebuilt).
#[test]
fn undoing_a_hide_keeps_what_was_computed() {
    let mut harness = window(journey::opened(&["inputs/twob2.pqr"], true));
    harness.run_steps(3);
    type_command_stepping(&mut harness, "rep add surface all");
    let ids = |s: &AppState| s.reps().list.iter().map(|r| r.id).collect::<Vec<_>>();
    let surface = |s: &AppState| {
        let (_, f) = s
            .reps()
            .fields()
            .find(|(_, f)| f.style == FieldStyle::Isosurface)
            .unwrap();
        f.pipeline.lobes[0].clone().unwrap()
    };
    let t0 = std::time::Instant::now();
    while harness
        .state()
        .reps()
        .fields()
        .all(|(_, f)| f.pipeline.lobes[0].is_none())
    {
        assert!(t0.elapsed().as_secs() < 60, "the surface never arrived");
        harness.step();
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let before = ids(harness.state());
    let mesh = surface(harness.state());
    type_command_stepping(&mut harness, "rep hide 2");
    type_command_stepping(&mut harness, "undo");
    let state = harness.state();
    assert!(state.reps().list[1].visible, "the hide was undone");
    assert_eq!(ids(state), before, "the same representations");
    assert!(
        std::sync::Arc::ptr_eq(&mesh, &surface(state)),
        "the surface's mesh kept"
    );
    type_command_stepping(&mut harness, "redo");
    assert!(!harness.state().reps().list[1].visible, "the hide was redone");
    assert_eq!(ids(harness.state()), before, "still the same representations");

    // Another representation's colouring changed and taken back: that one is made again in its
    // place, the surface is left as it was.
    type_command_stepping(&mut harness, "rep show 2");
    type_command_stepping(&mut harness, "rep modify 1 color chain");
    type_command_stepping(&mut harness, "undo");
    let state = harness.state();
    let after = ids(state);
    assert_eq!(after.len(), 2);
    assert_ne!(after[0], before[0], "the atoms' representation was made again");
    assert_eq!(after[1], before[1], "the surface's was not");
    assert!(std::sync::Arc::ptr_eq(&mesh, &surface(state)), "its mesh kept");
    let spec = state.rep_spec(&state.reps().list[0]);
    assert!(
        matches!(spec.kind, SpecKind::Atoms { coloring, .. } if coloring != orbitfield::app::atoms::AtomColoring::Chain),
        "the colouring taken back"
    );
}
