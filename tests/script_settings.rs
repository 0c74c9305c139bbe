//! Commands a new user reached for and did not find, now in the language: the Poisson-Boltzmann
//! model's parameters (`set ionic|epsin|epsout|probe|pbspacing`, what the field panel's rows set,
//! and logged as such), which representation `rep add`/`field add` made, and why a selection of
//! chains picks nothing in a file without chain identifiers.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::app::pb::PbSetting;
use orbitfield::script::{self, RunMode};
use std::path::PathBuf;

fn data() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

#[test]
fn poisson_boltzmann_parameters_are_commands() {
    let mut state = script::headless_state([400, 300]);
    let report = script::run_in(
        &mut state,
        "open pb/adk_res1-4.pqr\nset ionic 0.05; set epsin 4; set epsout 80; set probe 1.2; set pbspacing 1.5",
        &data(),
        None,
        RunMode::Headless,
    )
    .unwrap();
    assert_eq!(report.statements, 6);
    let want = [
        (PbSetting::IonicStrength, 0.05),
        (PbSetting::EpsIn, 4.0),
        (PbSetting::EpsOut, 80.0),
        (PbSetting::Probe, 1.2),
        (PbSetting::Spacing, 1.5),
    ];
    for (which, v) in want {
        assert_eq!(state.pb_value(which), v, "{which:?}");
    }
    assert!(state.pb.legend().contains("0.05 M"), "{}", state.pb.legend());
    // Out of range: refused at the value, naming the range; nothing changed.
    let e = script::run_in(&mut state, "set ionic 9", &data(), None, RunMode::Headless).unwrap_err();
    assert!(e.message.contains("from 0 M to 5 M"), "{}", e.message);
    assert_eq!(e.column, 11);
    assert_eq!(state.pb_value(PbSetting::IonicStrength), 0.05);
}

#[test]
fn adding_a_representation_says_its_number_and_empty_chain_selections_say_why() {
    let report = script::run_text(
        "open md/adk_open.pqr\nrep delete all\nrep add cartoon protein\nfield add potential\nselect chain A\nselect segid XYZ",
        &data(),
        RunMode::Headless,
    )
    .unwrap();
    let out = report.output.join("\n");
    assert!(out.contains("representation 1: "), "{out}");
    assert!(out.contains("representation 2: "), "{out}");
    assert!(
        out.contains("'chain A' selects 0 atoms (the files give no chain identifiers"),
        "{out}"
    );
}
