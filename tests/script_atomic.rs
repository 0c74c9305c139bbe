//! A command that fails changes nothing (scripting.md's promise): `rep add surface … color esp` on
//! a topology without coordinates leaves no surface behind, and says why in words (no coordinates,
//! not "no such field"); the topology opened alone is said to have no coordinates.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::script::{self, RunMode};
use std::path::PathBuf;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

#[test]
fn a_failing_rep_add_adds_nothing_and_names_the_missing_coordinates() {
    let mut state = script::headless_state([320, 240]);
    script::run_in(
        &mut state,
        "open md/adk.psf\nrep delete all",
        &data(),
        None,
        RunMode::Headless,
    )
    .unwrap();
    let doc = state.document().unwrap();
    assert!(
        doc.warnings.iter().any(|w| w.contains("gives no coordinates")),
        "{:?}",
        doc.warnings
    );
    let e = script::run_in(
        &mut state,
        "rep add surface protein color esp",
        &data(),
        None,
        RunMode::Headless,
    )
    .unwrap_err();
    assert!(e.message.contains("no coordinates"), "{}", e.message);
    assert!(state.doc.reps.list.is_empty(), "the surface was not added");
    // With coordinates the same command adds one coloured surface (four residues of adk, quick).
    script::run_in(
        &mut state,
        "open pb/adk_res1-4.pqr\nrep delete all\nrep add surface all color esp",
        &data(),
        None,
        RunMode::Headless,
    )
    .unwrap();
    assert_eq!(state.doc.reps.list.len(), 1);
}
