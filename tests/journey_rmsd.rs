//! RMSD over a trajectory, as a user makes it: on adk (tests/data/md), the Measurements panel's
//! form adds the backbone's RMSD from frame 0 (superposed); its value at frame 0 is zero and its
//! plot over every frame is MDAnalysis's `rms.RMSD` (tests/data/measure/adk_rmsd.json); the C-alphas'
//! RMSD from frame 10 as the frames stand, typed as a command with `keep`, is MDAnalysis's too; its
//! CSV names the unit; undo takes it back.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::measure::MeasureKind;
use orbitfield::app::state::AppState;

#[path = "common/adk_state.rs"]
mod adk_state;
#[path = "common/journey.rs"]
mod journey;
#[path = "common/panel_fit.rs"]
mod panel_fit;
use adk_state::{adk, data};
use journey::type_command;

fn reference(key: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(data("measure/adk_rmsd.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v[key].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

/// The series of the last measurement, computed over every frame.
fn last_series(harness: &mut Harness<'static, AppState>) -> (MeasureKind, Vec<f64>) {
    let st = harness.state_mut();
    let m = st.tools.measure.list.last().cloned().expect("a measurement");
    let s = st.finish_series(m.id).expect("a series");
    assert!(s.error.is_none(), "{:?}", s.error);
    (
        m.kind().unwrap(),
        s.values.iter().map(|v| v.expect("a value")).collect(),
    )
}

/// The largest difference between a series and its reference.
fn largest_difference(got: &[f64], want: &[f64]) -> f64 {
    assert_eq!(got.len(), want.len());
    got.iter().zip(want).map(|(a, b)| (a - b).abs()).fold(0.0, f64::max)
}

/// Types `selection` into the Measurements panel's form and clicks `button`; the measurement
/// added.
fn add_from_form(
    harness: &mut Harness<'static, AppState>,
    selection: &str,
    button: &str,
) -> orbitfield::app::measure::Measurement {
    harness
        .get_by_label(orbitfield::ui::measure::RMSD_OF)
        .set_text_value_accesskit(selection);
    harness.run();
    harness.get_by_label(button).click();
    harness.run();
    harness
        .state()
        .tools
        .measure
        .list
        .last()
        .cloned()
        .expect("a measurement")
}

#[test]
fn rmsd_of_the_backbone_and_of_the_c_alphas_over_the_frames_are_mdanalysis_s() {
    let mut harness = panel_fit::window_of(adk(), [1280.0, 800.0], true);
    harness.run();
    // The form: MDAnalysis's backbone, from frame 0, superposed (the default).
    let m = add_from_form(
        &mut harness,
        "protein and name N CA C O",
        orbitfield::ui::measure::ADD_RMSD,
    );
    assert_eq!(m.kind(), Some(MeasureKind::Rmsd));
    assert_eq!(m.atoms.len(), 855);
    let status = harness.state().panels.status.clone();
    assert!(
        status.contains("RMSD of 'protein and name N CA C O' from frame 0, superposed (855 atoms) at frame 0: "),
        "{status}"
    );
    let at0 = harness.state().measurement_value(&m).unwrap();
    assert!(at0 < 1e-4, "{at0}");
    let want = reference("backbone_fit_ref0");
    let (_, got) = last_series(&mut harness);
    assert_eq!(got.len(), want.len());
    let worst = largest_difference(&got, &want);
    assert!(worst < 1e-3, "largest difference from MDAnalysis {worst} Å");
    assert!(want.iter().any(|&x| x > 3.0), "the trajectory moves");

    // Typed: the C-alphas from frame 10, as the frames stand.
    type_command(&mut harness, "measure rmsd name CA reference 10 keep");
    assert_eq!(harness.state().tools.measure.list.len(), 2);
    let want = reference("ca_nofit_ref10");
    let (kind, got) = last_series(&mut harness);
    assert_eq!(kind, MeasureKind::Rmsd);
    let worst = largest_difference(&got, &want);
    assert!(worst < 1e-3, "largest difference from MDAnalysis {worst} Å");
    assert!(got[10] < 1e-6);

    // Its CSV: the frame, the time, the value in Å.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rmsd.csv");
    let id = harness.state().tools.measure.list.last().unwrap().id;
    harness
        .state_mut()
        .push(orbitfield::app::state::Command::ExportMeasurementCsv(id, path.clone()));
    harness.run();
    let csv = std::fs::read_to_string(&path).unwrap();
    let mut lines = csv.lines();
    assert_eq!(lines.next(), Some("frame,time_ps,rmsd_angstrom"));
    assert_eq!(lines.count(), want.len());

    // Undo (Ctrl+Z, the command line left with Escape) takes the typed one back.
    harness.key_press(Key::Escape);
    harness.run();
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(harness.state().tools.measure.list.len(), 1);
}

#[test]
fn radius_of_gyration_over_the_frames_is_mdanalysis_s() {
    let mut harness = panel_fit::window_of(adk(), [1280.0, 800.0], true);
    harness.run();
    // The same form's second button, on the atoms typed there.
    let m = add_from_form(&mut harness, "protein", orbitfield::ui::measure::ADD_RGYR);
    assert_eq!(m.kind(), Some(MeasureKind::Rgyr));
    assert_eq!(m.atoms.len(), 3341);
    let status = harness.state().panels.status.clone();
    assert!(
        status.contains("radius of gyration of 'protein' (3341 atoms)"),
        "{status}"
    );
    assert!(status.ends_with(" Å"), "{status}");
    let want = reference("protein_rgyr");
    let (_, got) = last_series(&mut harness);
    assert_eq!(got.len(), want.len());
    let worst = largest_difference(&got, &want);
    assert!(worst < 1e-3, "largest difference from MDAnalysis {worst} Å");
    let (lo, hi) = want.iter().fold((f64::MAX, 0.0f64), |(l, h), &x| (l.min(x), h.max(x)));
    assert!(hi - lo > 0.2, "the radius changes over the trajectory: {lo}..{hi}");

    // Typed, on the C-alphas; the command log writes it back as the same command.
    type_command(&mut harness, "measure rgyr name CA keep");
    let (kind, got) = last_series(&mut harness);
    assert_eq!(kind, MeasureKind::Rgyr);
    let want = reference("ca_rgyr");
    let worst = largest_difference(&got, &want);
    assert!(worst < 1e-3, "largest difference from MDAnalysis {worst} Å");
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("rgyr.csv");
    let id = harness.state().tools.measure.list.last().unwrap().id;
    harness
        .state_mut()
        .push(orbitfield::app::state::Command::ExportMeasurementCsv(id, path.clone()));
    harness.run();
    let csv = std::fs::read_to_string(&path).unwrap();
    assert_eq!(csv.lines().next(), Some("frame,time_ps,rgyr_angstrom"));

    // A selection picking nothing is refused in words, under the command line.
    let shown = journey::type_line(&mut harness, "measure rgyr resname XYZ keep");
    assert!(
        shown
            .as_ref()
            .is_some_and(|(error, text)| *error && text.contains("picks no atoms")),
        "{shown:?}"
    );
    assert_eq!(harness.state().tools.measure.list.len(), 2);
    harness.key_press(Key::Escape);
    harness.run();

    // A session keeps both and reopens them as they were.
    let session = harness.state().session().expect("a session");
    assert_eq!(session.rgyr, ["protein", "name CA"]);
    harness.state_mut().apply_session(&session);
    harness.run();
    let kinds: Vec<Option<MeasureKind>> = harness.state().tools.measure.list.iter().map(|m| m.kind()).collect();
    assert_eq!(kinds, [Some(MeasureKind::Rgyr); 2]);
}

/// The SASA of `key`'s entry in the MDTraj reference (tests/data/measure/adk_sasa.json).
fn sasa_reference(key: &str) -> Vec<f64> {
    let text = std::fs::read_to_string(data("measure/adk_sasa.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v[key].as_array().unwrap().iter().map(|x| x.as_f64().unwrap()).collect()
}

#[test]
fn sasa_at_two_frames_is_mdtraj_s() {
    let mut harness = panel_fit::window_of(adk(), [1280.0, 800.0], true);
    harness.run();
    let m = add_from_form(&mut harness, "protein", orbitfield::ui::measure::ADD_SASA);
    assert_eq!(m.kind(), Some(MeasureKind::Sasa));
    let status = harness.state().panels.status.clone();
    assert!(
        status.contains("SASA of 'protein' (3341 atoms, probe 1.4 Å)"),
        "{status}"
    );
    assert!(status.ends_with(" Å²"), "{status}");
    let want = sasa_reference("protein_total_angstrom2");
    let at = |harness: &Harness<'static, AppState>| harness.state().measurement_value(&m).unwrap();
    assert!((at(&harness) - want[0]).abs() < 1.0, "{} vs {}", at(&harness), want[0]);
    type_command(&mut harness, "frame 40");
    assert!((at(&harness) - want[1]).abs() < 1.0, "{} vs {}", at(&harness), want[1]);
    // Residues 1-50 alone, typed.
    type_command(&mut harness, "measure sasa resid 1 to 50 keep");
    let m = harness.state().tools.measure.list.last().cloned().unwrap();
    let want = sasa_reference("n_terminal_total_angstrom2");
    let got = harness.state().measurement_value(&m).unwrap();
    assert!((got - want[1]).abs() < 1.0, "{got} vs {}", want[1]);
    assert_eq!(harness.state().session().unwrap().sasa, ["protein", "resid 1 to 50"]);
}
