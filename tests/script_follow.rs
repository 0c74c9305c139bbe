//! Small promises of the command language and the panels around a document: `set follow` turns
//! orbital following on and off and the command log writes the checkbox as it; a g(r) belongs to
//! the document it was computed on; a single point's energy is not called "the lowest"; export
//! dialogs open where the last image went.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::app::fields::FieldService;
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use orbitfield::script::{self, RunMode};
use std::path::PathBuf;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

#[test]
fn set_follow_turns_following_off_and_on_and_the_log_writes_the_checkbox() {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.observer = Some(Box::new(script::log::ActionLog::default()));
    state.apply(Command::OpenDemo);
    assert!(state.doc.follow.is_some(), "the demo follows its orbital");
    script::run_in(&mut state, "set follow off", &data("."), None, RunMode::Window).unwrap();
    assert!(state.doc.follow.is_none());
    script::run_in(&mut state, "set follow on", &data("."), None, RunMode::Window).unwrap();
    assert!(state.doc.follow.is_some());
    // The Orbitals panel's checkbox sends the same command.
    state.push(Command::FollowOrbital(false));
    state.apply_pending();
    let log = script::log::of(&state).unwrap().text();
    let tail: Vec<&str> = log.lines().rev().take(3).collect();
    assert_eq!(tail, ["set follow off", "set follow on", "set follow off"], "{log}");
    let e = script::run_in(&mut state, "set follow maybe", &data("."), None, RunMode::Window).unwrap_err();
    assert!(e.message.contains("on or off"), "{e}");
}

#[test]
fn a_g_of_r_is_forgotten_when_other_files_open() {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    let text = "open md/tip125_tric_C36.psf md/tip125_tric_C36.dcd\nrdf name OH2 with name OH2 rmax 5 bins 25";
    script::run_in(&mut state, text, &data("."), None, RunMode::Headless).unwrap();
    let t0 = std::time::Instant::now();
    while state.panels.rdf.is_running() {
        state.update_reps();
        state.pump_rdf();
        std::thread::sleep(std::time::Duration::from_millis(10));
        assert!(t0.elapsed().as_secs() < 120, "the g(r) never finished");
    }
    assert!(state.panels.rdf.run.is_some(), "{:?}", state.panels.rdf.error);
    script::run_in(&mut state, "open md/Molecule.mol2", &data("."), None, RunMode::Headless).unwrap();
    assert!(
        state.panels.rdf.run.is_none(),
        "the water's g(r) is still shown for the new molecule"
    );
    assert_eq!(state.panels.rdf.sel1_text, "name OH2", "the form keeps its values");
}

#[test]
fn a_single_point_s_energy_is_given_alone() {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenFiles(vec![data("qm-logs/ORCA6.0_dvb_sp_hf.out")]));
    let text = state.frame_energy_text().expect("the log's energy");
    assert!(text.starts_with("E = -"), "{text}");
    assert!(!text.contains("lowest") && !text.contains("above"), "{text}");
    // A geometry optimisation's steps are still compared.
    state.apply(Command::OpenFiles(vec![data("qm-logs/GAMESS-US2018_dvb_gopt_a.out")]));
    let text = state.frame_energy_text().expect("the step's energy");
    assert!(text.contains("the lowest") || text.contains("above frame"), "{text}");
}

/// Each export dialog opens in the folder an image or a movie was last asked for in, keeping its
/// own file name.
#[test]
fn export_dialogs_open_where_the_last_image_went() {
    use orbitfield::app::export::{ExportDialog, ImageRequest};
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenFiles(vec![data("md/Molecule.mol2")]));
    state.view.size_px = [800, 600];
    let folder = std::env::temp_dir().join("orbitfield_figures");
    state.apply(Command::ExportImage(ImageRequest {
        path: folder.join("first.png"),
        size_px: [400, 300],
        supersample: 1,
        transparent: false,
        legend: false,
        annotations: false,
    }));
    state.apply(Command::ShowExportDialog(ExportDialog::Movie, true));
    let movie = std::path::PathBuf::from(&state.panels.export.movie.path);
    assert_eq!(movie.parent(), Some(folder.as_path()), "{}", movie.display());
    assert_eq!(movie.file_name().and_then(|n| n.to_str()), Some("orbitfield.mp4"));
    state.apply(Command::ShowExportDialog(ExportDialog::Image, true));
    let image = std::path::PathBuf::from(&state.panels.export.image.path);
    assert_eq!(image.parent(), Some(folder.as_path()), "{}", image.display());
}
