//! The command language (`orbitfield::script`) end to end:
//!
//! - `tests/data/scripts/adk_scene.ofc` rebuilds the README's adk scene (cartoon, molecular surface
//!   coloured by the charges' potential, a distance measurement, frame 40) without a window; its
//!   image equals, within a pixel tolerance, the window's render of the session the script saved
//!   (the whole window's UI driven by egui_kittest, then the window's draw stage and export
//!   service on a headless render context: the path `tests/journey_export.rs` takes; Mesa
//!   lavapipe in CI). The measured distance at frame 40 is MDAnalysis's
//!   (`tests/data/measure/adk_measure.json`).
//! - Commands typed into the window's command line (real key events) give the same state as the
//!   same actions done through the panels' commands and keys; each path's action log, replayed into
//!   a fresh viewer, gives the same `Session`, measurements and labels.
//! - Bad commands (unknown verb, bad selection, missing file, bad number) fail with one line naming
//!   the problem and its column; a failing script stops at its line and changes nothing.
//! - `orbitfield run SCRIPT.ofc --headless` writes what the script asks for and reports a failing
//!   line as FILE:LINE:COLUMN.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui::Key;
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::atoms::{AtomColoring, AtomStyle};
use orbitfield::app::draw::SceneSync;
use orbitfield::app::export::ImageRequest;
use orbitfield::app::fields::FieldService;
use orbitfield::app::reps::{RepEdit, RepSpec, SpecKind};
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use orbitfield::render::{GpuScene, RenderContext};
use orbitfield::script::{self, RunMode};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[path = "common/journey.rs"]
mod journey;
use journey::type_command;

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// The whole window's UI at 1280x800 (commands applied after each frame, as the window does).
fn window(state: AppState) -> Harness<'static, AppState> {
    Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::main_ui(ui, state);
            state.apply_pending();
        },
        state,
    )
}

fn quoted(p: &Path) -> String {
    format!("\"{}\"", p.display())
}

/// MDAnalysis's distance between the measured atoms at frame 40.
fn reference_distance_frame_40() -> ([usize; 2], f64) {
    let text = std::fs::read_to_string(data("measure/adk_measure.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let atoms = v["distance"]["atoms"].as_array().unwrap();
    let a = [atoms[0].as_u64().unwrap() as usize, atoms[1].as_u64().unwrap() as usize];
    (a, v["distance"]["values"][40].as_f64().unwrap())
}

/// Fraction of pixels differing by more than `tol` in some channel, and the mean absolute
/// difference per channel.
fn compare(a: &image::RgbaImage, b: &image::RgbaImage, tol: u8) -> (f64, f64) {
    assert_eq!(a.dimensions(), b.dimensions());
    let mut off = 0usize;
    let mut sum = 0u64;
    for (p, q) in a.pixels().zip(b.pixels()) {
        let d = (0..3).map(|k| p[k].abs_diff(q[k])).max().unwrap_or(0);
        off += usize::from(d > tol);
        sum += (0..3).map(|k| u64::from(p[k].abs_diff(q[k]))).sum::<u64>();
    }
    let n = (a.width() * a.height()) as f64;
    (off as f64 / n, sum as f64 / (3.0 * n))
}

#[test]
fn the_adk_scene_script_renders_headless_as_the_window_renders_its_session() {
    let rc = match RenderContext::headless(4) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("skipping: {e}");
            return;
        }
    };
    let dir = tempfile::tempdir().unwrap();
    let headless_png = dir.path().join("headless.png");
    let session_path = dir.path().join("adk.ron");
    let script_path = data("scripts/adk_scene.ofc");
    // A coarser surface lattice than the viewer's default (80 points along the longest axis) keeps
    // the potential at the surface's vertices short in a debug build; the scene is the script's.
    let mut text = format!("set lattice 32\n{}", std::fs::read_to_string(&script_path).unwrap());
    text.push_str(&format!(
        "save image {} size 320x240\nsave session {}\n",
        quoted(&headless_png),
        quoted(&session_path)
    ));
    let mut state = script::headless_state([320, 240]);
    let started = Instant::now();
    let report =
        script::run_in(&mut state, &text, &data("scripts"), None, RunMode::Headless).unwrap_or_else(|e| panic!("{e}"));
    eprintln!("headless run: {:.1} s", started.elapsed().as_secs_f64());
    let session = report.session.expect("a session");
    assert_eq!(session.frame, 40);
    assert_eq!(session.reps.len(), 2, "{:?}", session.reps);
    assert!(matches!(&session.reps[0].kind, SpecKind::Cartoon { selection, .. } if selection == "protein"));
    match &session.reps[1].kind {
        SpecKind::Field {
            field,
            color_by,
            opacity,
            ..
        } => {
            assert_eq!(field, "molsurf:protein");
            assert_eq!(color_by.as_deref(), Some("potential"));
            assert_eq!(*opacity, 0.5);
        }
        k => panic!("not a surface: {k:?}"),
    }
    // The measurement: the atoms named from 1, the distance at frame 40 as MDAnalysis gives it.
    let (atoms, reference) = reference_distance_frame_40();
    let list = &state.tools.measure.list;
    assert_eq!(list.len(), 1);
    assert_eq!(list[0].atoms, atoms.to_vec());
    let p = &state.document().unwrap().frame.positions_angstrom;
    let d: f64 = (0..3)
        .map(|k| f64::from(p[atoms[0]][k] - p[atoms[1]][k]).powi(2))
        .sum::<f64>()
        .sqrt();
    assert!((d - reference).abs() < 2e-3, "distance {d} vs MDAnalysis {reference}");
    let headless = image::open(&headless_png).unwrap().to_rgba8();
    assert_eq!(headless.dimensions(), (320, 240));
    // The surface is coloured by the potential (its legend is shown) and the scene is drawn.
    let legends = state.legends();
    assert!(
        legends.iter().any(|l| l.title.to_lowercase().contains("potential")),
        "{:?}",
        legends.iter().map(|l| &l.title).collect::<Vec<_>>()
    );
    let drawn = headless
        .pixels()
        .filter(|p| u32::from(p[0]) + u32::from(p[1]) + u32::from(p[2]) > 90)
        .count();
    assert!(drawn > 320 * 240 / 20, "{drawn} pixels drawn");
    // The window: the session opened by the panels' command, fields computed by the viewer's
    // own pool, then the window's redraw (draw stage and export service).
    let mut win = AppState::new(Settings::default(), orbitfield::app::default_field_service());
    win.push(Command::OpenSession(session_path.clone()));
    let mut harness = window(win);
    harness.run_steps(2);
    let mut scene = GpuScene::new(&rc);
    let mut sync = SceneSync::new(&rc);
    // Cartoon meshes written on the render device where the window writes them there.
    harness.state_mut().view.gpu_cartoons = sync.writes_cartoons() && rc.capabilities.gpu_cartoons();
    let start = Instant::now();
    loop {
        let state = harness.state_mut();
        state.update_reps();
        sync.sync(&rc, &mut scene, state);
        if !state.busy() && state.document().is_some() {
            break;
        }
        assert!(
            start.elapsed() < Duration::from_secs(600),
            "the window's fields never arrived"
        );
        std::thread::sleep(Duration::from_millis(20));
        harness.step();
    }
    eprintln!("the window's fields: {:.1} s", start.elapsed().as_secs_f64());
    let window_png = dir.path().join("window.png");
    let state = harness.state_mut();
    assert_eq!(
        state.session().as_ref(),
        Some(&session),
        "the window shows the saved session"
    );
    state.apply(Command::ExportImage(ImageRequest {
        path: window_png.clone(),
        size_px: [320, 240],
        supersample: 1,
        transparent: false,
        legend: false,
        annotations: false,
    }));
    sync.sync(&rc, &mut scene, state);
    orbitfield::app::export::service(&rc, &mut scene, state);
    let windowed = image::open(&window_png)
        .unwrap_or_else(|e| panic!("{e}: {}", state.panels.status))
        .to_rgba8();
    let (off, mean) = compare(&headless, &windowed, 24);
    eprintln!(
        "pixels off by more than 24: {:.4}%, mean difference {mean:.3}",
        100.0 * off
    );
    assert!(
        off < 0.01 && mean < 2.0,
        "{:.3}% of pixels differ, mean {mean}",
        100.0 * off
    );
}

/// adk opened without field engines (atoms, measurements and labels need none).
fn adk() -> AppState {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenFiles(vec![data("md/adk.psf"), data("md/adk_dims.dcd")]));
    assert!(state.document().is_some(), "{}", state.panels.status);
    state
}

/// What both paths must agree on: the session, the measurements' atoms and the labels.
fn facts(state: &AppState) -> (orbitfield::app::session::Session, Vec<Vec<usize>>, Vec<usize>) {
    (
        state.session().expect("a document"),
        state.tools.measure.list.iter().map(|m| m.atoms.clone()).collect(),
        state.tools.labels.atoms.clone(),
    )
}

/// Replays an action log into a fresh viewer.
fn replay(log: &str) -> AppState {
    let mut fresh = AppState::new(Settings::default(), FieldService::default());
    script::run_in(&mut fresh, log, Path::new("/"), None, RunMode::Window).unwrap_or_else(|e| panic!("{e}\n{log}"));
    fresh
}

#[test]
fn typed_commands_match_the_panels_and_the_logs_replay_the_session() {
    // Typed into the command line.
    let mut typed = window(adk());
    typed.run();
    for line in [
        "rep add licorice resid 1 to 20 color residue",
        "measure distance 817 2633",
        "label resid 1 and name CA",
        "frame 6",
        "frame next",
        "turn y 30",
        "rep hide 1",
        "zoom 2",
        "set background light",
    ] {
        type_command(&mut typed, line);
    }
    // Up brings the last line back (the history).
    typed.get_by_label(orbitfield::ui::console::LABEL).focus();
    typed.run();
    typed.key_press(Key::ArrowUp);
    typed.run();
    assert_eq!(typed.state().panels.console.input, "set background light");
    typed.state_mut().panels.console.input.clear();

    // The same through the panels' commands and the timeline's key.
    let mut clicked = window(adk());
    clicked.run();
    let first = clicked.state().reps().list[0].id;
    for c in [
        Command::AddRep(RepSpec {
            visible: true,
            kind: SpecKind::Atoms {
                selection: "resid 1 to 20".into(),
                style: AtomStyle::Licorice,
                coloring: AtomColoring::Residue,
                hbonds: Default::default(),
            },
        }),
        Command::AddMeasurement(vec![816, 2632]),
        Command::LabelSelection("resid 1 and name CA".into()),
        Command::SetFrame(6),
    ] {
        clicked.state_mut().push(c);
        clicked.run();
    }
    clicked.key_press(Key::ArrowRight);
    clicked.run();
    for c in [
        Command::Orbit([30f32.to_radians(), 0.0]),
        Command::EditRep(first, RepEdit::Visible(false)),
        Command::Zoom(0.5),
        Command::SetDarkBackground(false),
    ] {
        clicked.state_mut().push(c);
        clicked.run();
    }
    let a = facts(typed.state());
    let b = facts(clicked.state());
    assert_eq!(a.0.frame, 7);
    assert!(!a.0.dark_background);
    assert_eq!(a, b, "typed commands and the panels' path differ");

    // Each path's log replays its session.
    for (name, harness) in [("typed", &typed), ("panels", &clicked)] {
        let log = script::log::of(harness.state()).expect("a log is kept").text();
        eprintln!("{name} log:\n{log}");
        let again = replay(&log);
        assert_eq!(
            facts(&again),
            facts(harness.state()),
            "{name}: the log does not replay\n{log}"
        );
    }
}

/// A colouring's range, typed or dragged in the field panel, is logged in the legend's unit, one line
/// for a drag (where it ended), and replays to the same range: the log wrote `color 2 potential`
/// alone, so a figure's colour scale was lost.
#[test]
fn the_log_keeps_a_colouring_s_range_in_the_legend_s_unit() {
    use orbitfield::app::fields::FieldChoice;
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.observer = Some(Box::new(script::log::ActionLog::default()));
    let text = "open ../md/adk.psf ../md/adk_dims.dcd
rep add surface protein color potential
color 2 potential range -8 2";
    script::run_in(&mut state, text, &data("scripts"), None, RunMode::Window).unwrap_or_else(|e| panic!("{e}"));
    let id = state.reps().list[1].id;
    // Charges without radii: eps = 4r, in kcal/mol/e.
    let unit = state.coloring_unit(state.esp_source(FieldChoice::Potential));
    assert_eq!(unit.label, "kcal/mol/e");
    for [lo, hi] in [[-7.0, 1.0], [-6.5, 2.5], [-6.0, 3.0]] {
        state.push(Command::EditRep(
            id,
            RepEdit::ColorBy(Some((
                FieldChoice::Potential,
                Some([unit.computed(lo), unit.computed(hi)]),
            ))),
        ));
        state.apply_pending();
    }
    let log = script::log::of(&state).unwrap().text();
    let lines: Vec<&str> = log.lines().filter(|l| l.starts_with("color 2 ")).collect();
    assert_eq!(lines, vec!["color 2 potential range -6 3"], "\n{log}");
    let again = replay(&log);
    let range = |s: &AppState| {
        s.reps()
            .list
            .get(1)
            .and_then(|r| s.reps().field(r.id))
            .and_then(|f| f.coloring?.range)
    };
    let (want, got) = (range(&state).unwrap(), range(&again).expect("the replayed range"));
    for k in 0..2 {
        assert!(
            (want[k] - got[k]).abs() <= 1e-6 * want[k].abs(),
            "{got:?} replayed, {want:?} logged\n{log}"
        );
    }
}

#[test]
fn the_log_of_field_representations_slices_and_settings_replays_them() {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.observer = Some(Box::new(script::log::ActionLog::default()));
    let text = "open ../qm/threonine_hf_631gs_sph.molden.gz
rep delete all
rep add ball-and-stick all color element
field add mo:homo
field add density
rep select 3
iso 0.01
color 2 red #2040ff
rep modify 3 opacity 0.6
slice z 0.1
slice range 0.001 0.2
set units V
set background #102030
set colormap viridis
rep duplicate 1
rep move 2 4
field mo:lumo
measure angle 1 2 3
label format full
label element O
rep hide 1
undo
frame last";
    script::run_in(&mut state, text, &data("scripts"), None, RunMode::Window).unwrap_or_else(|e| panic!("{e}"));
    let log = script::log::of(&state).unwrap().text();
    eprintln!("{log}");
    let again = replay(&log);
    assert_eq!(facts(&again), facts(&state), "the log does not replay\n{log}");
    let session = state.session().unwrap();
    assert_eq!(session.reps.len(), 5, "{:?}", session.reps);
    assert!(session.reps.iter().any(|r| matches!(
        r.kind,
        SpecKind::Field {
            style: orbitfield::app::reps::FieldStyle::Slice(_),
            ..
        }
    )));
    // The slice's colour range came back from the log (the session's representation holds it).
    let range = |s: &AppState| {
        s.reps().fields().find_map(|(_, f)| match f.style {
            orbitfield::app::reps::FieldStyle::Slice(p) => p.range,
            _ => None,
        })
    };
    assert_eq!(range(&state), Some([0.001, 0.2]));
    assert_eq!(range(&again), range(&state), "\n{log}");
    assert_eq!(state.settings.background_rgb, Some([0x10, 0x20, 0x30]));
    assert_eq!(again.settings.background_rgb, Some([0x10, 0x20, 0x30]));
    assert_eq!(again.settings.potential_unit, state.settings.potential_unit);
    assert_eq!(again.tools.labels.format, state.tools.labels.format);
}

#[test]
fn bad_commands_name_the_problem_and_the_column_and_change_nothing() {
    let dir = data("scripts");
    let err = |text: &str| script::run_text(text, &dir, RunMode::Headless).unwrap_err();

    let e = err("frmae 3");
    assert_eq!((e.line, e.column), (1, 1));
    assert_eq!(e.message, "unknown command 'frmae'; did you mean 'frame'?");

    let e = err("open ../md/adk.psf\n  open ../md/nothere.psf");
    assert_eq!((e.line, e.column), (2, 8));
    assert!(
        e.message.starts_with("no such file: ") && e.message.ends_with("nothere.psf"),
        "{}",
        e.message
    );

    let line = "rep add licorice within x of protein";
    let e = err(&format!("open ../md/adk.psf\n{line}"));
    assert_eq!(e.line, 2);
    assert_eq!(e.column, line.find(" x ").unwrap() + 2, "{}", e.message);
    assert!(
        e.message.starts_with("bad selection 'within x of protein': "),
        "{}",
        e.message
    );
    assert!(!e.message.contains('\n'), "one line: {}", e.message);

    let e = err("open ../md/adk.psf\nzoom two");
    assert_eq!(
        (e.line, e.column, e.message.as_str()),
        (2, 6, "factor: expected a number, found 'two'")
    );

    // Every on/off setting names itself and the word it was given.
    for setting in ["cell", "whole", "rampabove"] {
        let e = err(&format!("set {setting} maybe"));
        assert_eq!(
            (e.line, e.column, e.message.as_str()),
            (1, setting.len() + 6, format!("{setting} 'maybe': on or off").as_str())
        );
    }

    // A failing script stops at its line; the failing command changes nothing.
    let mut state = script::headless_state([320, 240]);
    script::run_in(
        &mut state,
        "open ../md/adk.psf ../md/adk_dims.dcd; rep add vdw resid 5",
        &dir,
        None,
        RunMode::Headless,
    )
    .unwrap();
    let before = state.session();
    let n_measurements = state.tools.measure.list.len();
    let script_path = dir.join("broken.ofc");
    let e = script::run_in(
        &mut state,
        "frame 3\nrep add cartoon protein ; frame 500\nrep add cpk all",
        &dir,
        Some(&script_path),
        RunMode::Headless,
    )
    .unwrap_err();
    assert_eq!(
        e.to_string(),
        format!(
            "{}:2:33: frame 500: the document has 98 frames (0 to 97)",
            script_path.display()
        )
    );
    let after = state.session().unwrap();
    let mut expected = before.unwrap();
    expected.frame = 3;
    assert_eq!(
        after.reps.len(),
        expected.reps.len() + 1,
        "the cartoon before the failing command stays"
    );
    assert_eq!(after.frame, 3);
    assert_eq!(state.tools.measure.list.len(), n_measurements);

    // A command the viewer refuses (an unwritable session) fails its line the same way.
    let e = script::run_in(
        &mut state,
        "save session /nonexistent-folder/x.ron",
        &dir,
        None,
        RunMode::Headless,
    )
    .unwrap_err();
    assert_eq!((e.line, e.column), (1, 1));
    assert!(e.message.contains("cannot write the session"), "{}", e.message);
    assert_eq!(state.session().unwrap(), after);

    // help comes from the same table.
    let report = script::run_text("help measure", &dir, RunMode::Headless).unwrap();
    assert!(report.output[0].starts_with("measure: "), "{:?}", report.output);
    assert!(report.output[0].contains("measure distance N N"), "{:?}", report.output);
}

#[test]
fn a_script_given_beside_files_runs_once_they_are_open() {
    // As `orbitfield adk.psf adk_dims.dcd show.ofc` starts the window: the files' opening queued,
    // the script waiting for the first frame. It ran before the files opened: its
    // `rep delete all` found no document, and their default representation came after it.
    let dir = tempfile::tempdir().unwrap();
    let script = dir.path().join("show.ofc");
    std::fs::write(&script, "rep delete all\nrep add cartoon protein\nframe 3\n").unwrap();
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.push(Command::OpenFiles(vec![data("md/adk.psf"), data("md/adk_dims.dcd")]));
    state.panels.console.pending_script = Some(script);
    let mut harness = window(state);
    harness.run();
    let state = harness.state();
    assert!(state.panels.console.pending_script.is_none(), "the script ran");
    let reps = state.session().unwrap().reps;
    assert_eq!(reps.len(), 1, "only the script's representation: {reps:?}");
    assert!(matches!(reps[0].kind, SpecKind::Cartoon { .. }), "{reps:?}");
    assert_eq!(state.document().unwrap().frame_index, 3);
}

#[test]
fn in_the_window_a_script_waits_for_the_view_before_saving_an_image() {
    // No field engine: the surface is never computed, so the view never shows the frame.
    let mut state = adk();
    // The view has framed the document (the window's view does this on its first frame).
    state.fit_if_pending();
    let dir = tempfile::tempdir().unwrap();
    let text = format!(
        "rep add surface resid 1\nframe 1; save image {} size 64x48; frame 2\nframe 3",
        quoted(&dir.path().join("x.png"))
    );
    let report = script::run_in(&mut state, &text, &data("scripts"), None, RunMode::Window).unwrap();
    assert!(report.waiting);
    assert_eq!(
        state.document().unwrap().frame_index,
        1,
        "the commands before the image ran"
    );
    let resume = state
        .panels
        .console
        .resume
        .clone()
        .expect("the rest of the script waits");
    assert_eq!((resume.first_line, resume.skip), (2, 1));
    // Still not drawn: it waits again, from the same command.
    let again = script::resume(&mut state, &resume).unwrap();
    assert!(again.waiting);
    assert_eq!(state.panels.console.resume.as_ref(), Some(&resume));
    assert!(state.panels.export.image_requests.is_empty());
    // Once the view is current (no field representation left), the rest runs.
    state.apply(Command::DeleteRep(state.reps().list.last().unwrap().id));
    let done = script::resume(&mut state, &resume).unwrap();
    assert!(!done.waiting);
    assert_eq!(state.panels.export.image_requests.len(), 1);
    assert_eq!(state.document().unwrap().frame_index, 3);
}
