//! Journey 3 of the viewer, driven through egui_kittest on the whole window's UI: on adk
//! (tests/data/md), press 2 and pick two C-alphas, press 4 and pick a backbone phi's four atoms,
//! step frames, and compare the values the panel shows with MDAnalysis's (committed with its
//! script, tests/data/measure/adk_measure.py); plot the distance over the trajectory and export
//! its CSV, whose rows must match the same reference. Then the tools around it: undo and redo of
//! measurements, labels and camera drags, labels by selection and by click, the pick highlight
//! cleared by a click on empty space, and the background colour.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::measure::{ClickMode, MeasureKind};
use orbitfield::app::state::{AppState, Command};

#[path = "common/adk_state.rs"]
mod adk_state;
use adk_state::{adk, data, front_atom};

/// MDAnalysis's values for every frame of adk_dims.dcd.
struct Reference {
    time_ps: Vec<f64>,
    distance_atoms: Vec<usize>,
    distance: Vec<f64>,
    dihedral_atoms: Vec<usize>,
    dihedral: Vec<f64>,
}

fn reference() -> Reference {
    let text = std::fs::read_to_string(data("measure/adk_measure.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let nums =
        |x: &serde_json::Value| -> Vec<f64> { x.as_array().unwrap().iter().map(|y| y.as_f64().unwrap()).collect() };
    let idx = |x: &serde_json::Value| -> Vec<usize> { nums(x).into_iter().map(|y| y as usize).collect() };
    Reference {
        time_ps: nums(&v["time_ps"]),
        distance_atoms: idx(&v["distance"]["atoms"]),
        distance: nums(&v["distance"]["values"]),
        dihedral_atoms: idx(&v["dihedral"]["atoms"]),
        dihedral: nums(&v["dihedral"]["values"]),
    }
}

/// Tolerances: positions are single precision (about 1e-5 relative).
const DISTANCE_TOL: f64 = 2e-3;
const DIHEDRAL_TOL: f64 = 2e-2;

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

/// A click on `atom`: the pick command the view's click resolves to (the atoms of a protein hide
/// one another, so the pixel of an atom's centre may show another atom).
fn click_atom(harness: &mut Harness<'static, AppState>, atom: usize) {
    harness.state_mut().push(Command::PickAtom(Some(atom)));
    harness.run();
    assert_eq!(harness.state().view.pick.as_ref().map(|p| p.atom), Some(atom));
}

fn close(a: f64, b: f64, tol: f64) -> bool {
    let d = (a - b).abs();
    d < tol || (360.0 - d).abs() < tol
}

#[test]
fn journey_measure_a_distance_and_a_dihedral_step_frames_plot_and_export_csv() {
    let r = reference();
    let mut harness = window(adk());
    harness.run();
    assert_eq!(harness.state().document().unwrap().n_frames, r.distance.len());
    // Press 2 and click the two C-alphas.
    harness.key_press(Key::Num2);
    harness.run();
    assert_eq!(
        harness.state().tools.measure.mode,
        ClickMode::Measure(MeasureKind::Distance)
    );
    for &a in &r.distance_atoms {
        click_atom(&mut harness, a);
    }
    // Press 4 and click the four backbone atoms.
    harness.key_press(Key::Num4);
    harness.run();
    for &a in &r.dihedral_atoms {
        click_atom(&mut harness, a);
    }
    let list = harness.state().tools.measure.list.clone();
    assert_eq!(list.len(), 2, "{}", harness.state().panels.status);
    assert_eq!(list[0].atoms, r.distance_atoms);
    assert_eq!(list[0].kind(), Some(MeasureKind::Distance));
    assert_eq!(list[1].atoms, r.dihedral_atoms);
    assert_eq!(list[1].kind(), Some(MeasureKind::Dihedral));
    // Step frames with the arrow key; the values follow the frame and the panel shows them.
    for step in 1..=3 {
        harness.key_press(Key::ArrowRight);
        harness.run();
        let st = harness.state();
        let frame = st.document().unwrap().frame_index;
        assert_eq!(frame, step);
        let d = st.measurement_value(&list[0]).unwrap();
        let phi = st.measurement_value(&list[1]).unwrap();
        assert!(
            close(d, r.distance[frame], DISTANCE_TOL),
            "frame {frame}: {d} vs {}",
            r.distance[frame]
        );
        assert!(
            close(phi, r.dihedral[frame], DIHEDRAL_TOL),
            "frame {frame}: {phi} vs {}",
            r.dihedral[frame]
        );
        let shown = format!("{:.2} Å", d);
        assert!(harness.query_by_label(&shown).is_some(), "the panel shows {shown}");
    }
    // Plot the distance over the trajectory.
    harness.query_all_by_label("Plot").next().unwrap().click();
    for _ in 0..20 {
        harness.run();
        if !harness.state().measure_series_pending() {
            break;
        }
    }
    let st = harness.state();
    let series = &st.tools.measure.series[&list[0].id];
    assert!(series.done() && series.error.is_none());
    assert_eq!(series.values.len(), r.distance.len());
    for (i, (v, want)) in series.values.iter().zip(&r.distance).enumerate() {
        assert!(close(v.unwrap(), *want, DISTANCE_TOL), "frame {i}: {v:?} vs {want}");
    }
    // The CSV file is offered in the working folder, as images and movies are, not beside the
    // input files: "adk_dims_distance_N.csv".
    let offered = std::path::PathBuf::from(&st.tools.measure.csv_path);
    assert_eq!(offered.parent(), Some(std::path::Path::new("")), "{offered:?}");
    assert!(
        offered.to_string_lossy().starts_with("adk_dims_distance_"),
        "{offered:?}"
    );
    // Export its CSV through the plot window.
    let dir = tempfile::tempdir().unwrap();
    let csv = dir.path().join("distance.csv");
    harness
        .get_by_label("CSV file")
        .set_text_value_accesskit(csv.to_str().unwrap());
    harness.run();
    harness.get_by_label("Export CSV").click();
    harness.run();
    let text = std::fs::read_to_string(&csv).unwrap_or_else(|e| panic!("{e}: {}", harness.state().panels.status));
    let mut lines = text.lines();
    assert_eq!(lines.next(), Some("frame,time_ps,distance_angstrom"));
    let rows: Vec<Vec<f64>> = lines
        .map(|l| l.split(',').map(|x| x.parse::<f64>().unwrap()).collect())
        .collect();
    assert_eq!(rows.len(), r.distance.len());
    for (i, row) in rows.iter().enumerate() {
        assert_eq!(row[0], i as f64);
        assert!(
            (row[1] - r.time_ps[i]).abs() < 1e-3,
            "frame {i}: time {} vs {}",
            row[1],
            r.time_ps[i]
        );
        assert!(
            close(row[2], r.distance[i], DISTANCE_TOL),
            "frame {i}: {} vs {}",
            row[2],
            r.distance[i]
        );
    }
    let leftovers: Vec<_> = std::fs::read_dir(dir.path()).unwrap().collect();
    assert_eq!(leftovers.len(), 1, "no temporary file is left beside the CSV");
    // The dihedral over every frame, too.
    let phi = harness.state_mut().finish_series(list[1].id).unwrap().clone();
    for (i, (v, want)) in phi.values.iter().zip(&r.dihedral).enumerate() {
        assert!(close(v.unwrap(), *want, DIHEDRAL_TOL), "frame {i}: {v:?} vs {want}");
    }
    // Undo takes the dihedral back, redo brings it again; delete from the panel.
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert_eq!(harness.state().tools.measure.list.len(), 1);
    harness.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    harness.run();
    assert_eq!(harness.state().tools.measure.list, list);
}

#[test]
fn undo_restores_representations_measurements_labels_and_camera_drags_as_single_steps() {
    let mut state = adk();
    let n_reps = state.reps().list.len();
    let camera0 = state.snapshot().camera;
    // One drag of many mouse events is one step; the next drag is another.
    state.push(Command::SettleHistory);
    for _ in 0..10 {
        state.push(Command::Orbit([0.02, 0.01]));
    }
    state.apply_pending();
    let camera1 = state.snapshot().camera;
    state.push(Command::SettleHistory);
    for _ in 0..5 {
        state.push(Command::Pan([0.01, 0.0]));
    }
    state.apply_pending();
    assert_eq!(state.tools.history.undo.len(), 2);
    // A representation added, then its opacity dragged (one step), then labels by selection.
    state.push(Command::AddRep(orbitfield::app::reps::RepSpec::atoms(
        "resname ARG",
        orbitfield::app::atoms::AtomStyle::Vdw,
    )));
    state.apply_pending();
    assert_eq!(state.reps().list.len(), n_reps + 1);
    state.push(Command::LabelSelection("name CA".into()));
    state.push(Command::AddMeasurement(vec![0, 1]));
    // A command that changes nothing leaves no step.
    state.push(Command::SetFrame(0));
    state.push(Command::AddMeasurement(vec![3, 3]));
    state.apply_pending();
    assert_eq!(state.tools.labels.atoms.len(), 214, "adk has 214 C-alphas");
    assert_eq!(state.tools.measure.list.len(), 1);
    assert_eq!(state.tools.history.undo.len(), 5);
    // The Edit menu names what Undo and Redo would change.
    assert_eq!(state.history_step_text(false).as_deref(), Some("the measurements"));
    assert_eq!(state.history_step_text(true), None);
    // Undo, step by step.
    state.push(Command::Undo);
    state.apply_pending();
    assert!(state.tools.measure.list.is_empty());
    assert_eq!(state.history_step_text(false).as_deref(), Some("the labels"));
    assert_eq!(state.history_step_text(true).as_deref(), Some("the measurements"));
    state.push(Command::Undo);
    state.apply_pending();
    assert!(state.tools.labels.atoms.is_empty());
    state.push(Command::Undo);
    state.apply_pending();
    assert_eq!(state.reps().list.len(), n_reps);
    state.push(Command::Undo);
    state.apply_pending();
    assert_eq!(state.snapshot().camera, camera1, "the pan is undone as one step");
    state.push(Command::Undo);
    state.apply_pending();
    assert_eq!(state.snapshot().camera, camera0, "the drag is undone as one step");
    state.push(Command::Undo);
    state.apply_pending();
    assert_eq!(state.panels.status, "nothing to undo");
    // Redo all the way; a new edit clears what is left to redo.
    for _ in 0..5 {
        state.push(Command::Redo);
    }
    state.apply_pending();
    assert_eq!(state.reps().list.len(), n_reps + 1);
    assert_eq!(state.tools.labels.atoms.len(), 214);
    assert_eq!(state.tools.measure.list.len(), 1);
    state.push(Command::Undo);
    state.push(Command::ClearLabels);
    state.apply_pending();
    assert!(!state.tools.history.can_redo());
    // Opening another document starts a fresh history, whose Undo opens the one replaced.
    state.push(Command::OpenFiles(vec![data("md/adk.psf"), data("md/adk_dims.dcd")]));
    state.apply_pending();
    assert!(state.tools.history.undo.is_empty() && state.tools.history.redo.is_empty());
    assert_eq!(state.history_step_text(false).as_deref(), Some("open adk.psf again"));
    assert!(state.tools.measure.list.is_empty() && state.tools.labels.atoms.is_empty());
}

#[test]
fn a_click_in_label_mode_labels_an_atom_and_a_click_on_empty_space_clears_the_pick() {
    let mut harness = window(adk());
    harness.run();
    // A click at the pixel of the frontmost atom picks it; in pick mode that labels nothing.
    let (front, pixel) = front_atom(harness.state());
    let size_px = harness.state().view.size_px;
    harness.state_mut().push(Command::Pick { pixel, size_px });
    harness.run();
    assert_eq!(harness.state().view.pick.as_ref().map(|p| p.atom), Some(front));
    assert!(
        harness.state().tools.labels.atoms.is_empty(),
        "a plain pick labels nothing"
    );
    // In label mode a click labels the atom.
    let atom = reference().distance_atoms[0];
    harness.key_press(Key::Num1);
    harness.run();
    assert_eq!(harness.state().tools.measure.mode, ClickMode::Label);
    click_atom(&mut harness, atom);
    assert_eq!(harness.state().tools.labels.atoms, vec![atom]);
    assert_eq!(harness.state().label_text(atom), "ALA55:CA");
    harness.get_by_label("Labels").click();
    harness.run();
    assert!(
        harness.query_by_label("ALA55:CA").is_some(),
        "the labels panel lists it"
    );
    // A click at a pixel labels the atom there; a second click there removes its label.
    harness.state_mut().push(Command::Pick { pixel, size_px });
    harness.run();
    assert_eq!(harness.state().tools.labels.atoms, vec![atom, front]);
    harness.state_mut().push(Command::Pick { pixel, size_px });
    harness.run();
    assert_eq!(harness.state().tools.labels.atoms, vec![atom]);
    // A click on empty space (the view's corner) clears the pick and its highlight.
    let size_px = harness.state().view.size_px;
    harness.state_mut().push(Command::Pick {
        pixel: [1.0, 1.0],
        size_px,
    });
    harness.run();
    assert!(harness.state().view.pick.is_none());
    // Escape leaves label mode; the label stays.
    harness.key_press(Key::Escape);
    harness.run();
    assert_eq!(harness.state().tools.measure.mode, ClickMode::Pick);
    assert_eq!(harness.state().tools.labels.atoms, vec![atom]);
}

#[test]
fn the_background_colour_is_kept_in_the_settings() {
    let mut state = adk();
    state.push(Command::SetBackgroundColor([30, 60, 90]));
    state.apply_pending();
    assert_eq!(state.settings.background_srgb(), [30, 60, 90]);
    assert!(
        state.settings.dark_background,
        "labels are drawn light on a dark colour"
    );
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("settings.ron");
    state.settings.save(&path).unwrap();
    let (back, msg) = orbitfield::app::settings::Settings::load(&path);
    assert_eq!(msg, None);
    assert_eq!(back.background_srgb(), [30, 60, 90]);
    state.push(Command::SetDarkBackground(false));
    state.apply_pending();
    assert_eq!(state.settings.background_srgb(), [255, 255, 255]);
}

#[test]
fn the_chosen_background_colour_is_what_an_offscreen_render_clears_to() {
    use orbitfield::render::{GpuScene, OffscreenTarget, RenderContext, render_once};
    let rc = match RenderContext::headless(1) {
        Ok(rc) => rc,
        Err(e) => {
            eprintln!("skipping: {e}");
            return;
        }
    };
    let mut state = adk();
    state.push(Command::SetBackgroundColor([30, 60, 90]));
    state.apply_pending();
    let size = [96u32, 64u32];
    state.view.size_px = size;
    state.apply(Command::ResetCamera);
    let mut sync = orbitfield::app::draw::SceneSync::new(&rc);
    let mut scene = GpuScene::new(&rc);
    let target = OffscreenTarget::new(&rc, size);
    sync.sync(&rc, &mut scene, &mut state);
    render_once(&rc, &scene, &target, &state.view.camera);
    let img = target.read_rgba(&rc).unwrap();
    let corner = img.get_pixel(1, 1).0;
    assert!(
        corner[..3].iter().zip([30u8, 60, 90]).all(|(&a, b)| a.abs_diff(b) <= 2),
        "the corner is {corner:?}"
    );
    let centre = img.get_pixel(48, 32).0;
    assert_ne!(&centre[..3], &[30, 60, 90], "the protein is drawn over it");
}

/// In a homodimer residue numbers repeat: a measurement names each atom's chain, as its 3-D label
/// does ("distance OD2 A:ASP25 – OD2 B:ASP25"). The atoms are found in the file here, numbered
/// from 1 in the file's order (its own serials skip one after the TER record), and the value is
/// the distance between the file's coordinates.
#[test]
fn a_measurement_in_a_dimer_names_the_chains() {
    use std::io::Read;
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(data("md/4E43.pdb.gz")).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    // (1-based index, chain, coordinates) of OD2 of ASP 25 in each chain.
    let mut found = Vec::new();
    let mut index = 0;
    for line in text.lines().take_while(|l| !l.starts_with("ENDMDL")) {
        if !(line.starts_with("ATOM") || line.starts_with("HETATM")) {
            continue;
        }
        index += 1;
        if line[12..16].trim() == "OD2" && &line[17..20] == "ASP" && line[22..26].trim() == "25" {
            let xyz: Vec<f64> = [30..38, 38..46, 46..54]
                .map(|r| line[r].trim().parse().unwrap())
                .to_vec();
            found.push((index, line[21..22].to_string(), xyz));
        }
    }
    assert_eq!(found.len(), 2, "one OD2 of ASP 25 per chain");
    let (a, b) = (&found[0], &found[1]);
    assert_ne!(a.1, b.1);
    let mut state = AppState::new(
        orbitfield::app::settings::Settings::default(),
        orbitfield::app::fields::FieldService::default(),
    );
    state.apply(Command::OpenFiles(vec![data("md/4E43.pdb.gz")]));
    let mut harness = window(state);
    harness.run();
    harness.get_by_label(orbitfield::ui::console::LABEL).focus();
    harness.run();
    harness
        .get_by_label(orbitfield::ui::console::LABEL)
        .type_text(&format!("measure distance {} {}", a.0, b.0));
    harness.run();
    harness.key_press(Key::Enter);
    harness.run();
    let status = harness.state().panels.status.clone();
    let want = format!("distance OD2 {}:ASP25 – OD2 {}:ASP25: ", a.1, b.1);
    assert!(status.starts_with(&want), "{status}");
    let d: f64 = (0..3).map(|k| (a.2[k] - b.2[k]).powi(2)).sum::<f64>().sqrt();
    assert!(status.contains(&format!("{d:.2} Å")), "{status} against {d:.3} Å");
    let m = harness.state().tools.measure.list.last().unwrap().clone();
    assert_eq!(harness.state().measurement_label(&m), want.trim_end_matches(": "));
}

/// A click a few pixels beside an atom's thin licorice sphere, seen from afar, picks that atom (as
/// VMD picks the nearest atom within a few pixels); well away from every atom it picks nothing.
#[test]
fn a_click_beside_a_thin_stick_picks_its_atom() {
    use glam::Vec3;
    let mut harness = window(adk());
    harness.run();
    let st = harness.state();
    let size = st.view.size_px;
    let cam = &st.view.camera;
    // The sphere drawn furthest right on the screen, and a click 4 pixels further right.
    let (k, p) = st
        .view
        .spheres
        .iter()
        .enumerate()
        .filter_map(|(k, s)| {
            cam.project_to_pixel(Vec3::from_array(s.center_angstrom), size)
                .map(|(p, _)| (k, p))
        })
        .max_by(|a, b| a.1[0].total_cmp(&b.1[0]))
        .unwrap();
    let click = [p[0] + 4.0, p[1]];
    let (o, d) = cam.ray_through_pixel(click, size);
    let centers: Vec<[f32; 3]> = st.view.spheres.iter().map(|s| s.center_angstrom).collect();
    let radii: Vec<f32> = st.view.spheres.iter().map(|s| s.radius_angstrom).collect();
    assert!(
        orbitfield::render::camera::pick_sphere(o, d, &centers, &radii).is_none(),
        "the click misses every drawn sphere"
    );
    let atom = st
        .document()
        .unwrap()
        .frame
        .positions_angstrom
        .iter()
        .position(|q| *q == centers[k]);
    assert!(atom.is_some());
    assert_eq!(st.atom_at(click, size), atom, "the atom beside the click");
    assert_eq!(st.atom_at([p[0] + 30.0, p[1]], size), None, "nothing 30 pixels away");
}
