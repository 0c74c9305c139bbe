//! Panels driven through egui_kittest: click an orbital, move the frame slider, play, change the
//! style, open files; then check the application state the clicks produced.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::atoms::AtomStyle;
use orbitfield::app::fields::{FieldChoice, FieldService};
use orbitfield::app::settings::Settings;
use orbitfield::app::state::AppState;
use orbitfield::io::System;
use orbitfield::model::{
    BasisSet, Element, Frame, Name8, OrbitalSet, QmAtom, Spin, SpinKind, Structure, Trajectory, Wavefunction,
};
use std::path::PathBuf;

#[path = "common/water_series.rs"]
mod water_series;
use water_series::water_series;

/// Hydrogen molecule, 4 frames stretching the bond, with a restricted wavefunction of four
/// orbitals (one occupied) per frame.
fn h2_series() -> System {
    let mut s = Structure::default();
    for n in ["H1", "H2"] {
        s.push_atom(
            Element(1),
            Name8::from(n),
            Name8::from("H2"),
            1,
            Name8::EMPTY,
            Name8::EMPTY,
        );
    }
    let frames: Vec<Frame> = (0..4)
        .map(|i| Frame {
            positions_angstrom: vec![[0.0, 0.0, 0.0], [0.7 + 0.1 * i as f32, 0.0, 0.0]],
            ..Frame::default()
        })
        .collect();
    let wf = Wavefunction {
        atoms: vec![
            QmAtom {
                element: Element(1),
                nuclear_charge: 1.0,
                position_bohr: [0.0; 3],
            };
            2
        ],
        basis: BasisSet::default(),
        spin: SpinKind::Restricted,
        alpha: OrbitalSet {
            energies_hartree: vec![-0.59, 0.20, 0.45, 0.90],
            occupations: vec![2.0, 0.0, 0.0, 0.0],
            symmetries: vec!["sg".into(), "su".into(), "sg".into(), "su".into()],
            coefficients: Vec::new(),
            n_basis: 0,
        },
        beta: None,
        program: None,
        corrections: Vec::new(),
        energy_hartree: None,
        scf_density: None,
    };
    System {
        structure: s,
        trajectory: Trajectory::from_frames(2, frames, "test"),
        wavefunctions: vec![wf; 4],
        grids: Vec::new(),
        warnings: Vec::new(),
        paths: vec![PathBuf::from("h2.molden")],
        wavefunction_frames: Vec::new(),
        frame_energies_hartree: Vec::new(),
        orbital_levels: None,
    }
}

fn state_with_h2() -> AppState {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.open_system("h2".into(), h2_series());
    state
}

#[test]
fn orbital_list_marks_homo_and_selects_lumo() {
    let state = state_with_h2();
    assert_eq!(state.doc.orbital, Some(0), "the HOMO is selected on opening");
    let mut harness = Harness::new_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::panels::orbitals_ui(ui, state);
            state.apply_pending();
        },
        state,
    );
    harness.run();
    harness.get_by_label("1 HOMO");
    // The unit is the column's.
    harness.get_by_label("E (eV)");
    harness.get_by_label("-16.055");
    harness.get_by_label("2 LUMO").click();
    harness.run();
    assert_eq!(harness.state().doc.orbital, Some(1));
    assert_eq!(
        harness.state().main_field(),
        Some(FieldChoice::Orbital {
            spin: Spin::Alpha,
            index: 1
        })
    );
    harness.get_by_label("hartree").click();
    harness.run();
    assert!(!harness.state().settings.energies_in_ev);
    harness.get_by_label("E (Eh)");
    harness.get_by_label("-0.59000");
}

#[test]
fn timeline_slider_buttons_and_play() {
    let mut harness = Harness::new_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::panels::timeline_ui(ui, state);
            state.apply_pending();
        },
        state_with_h2(),
    );
    harness.run();
    harness.get_by_label(">").click();
    harness.run();
    let doc = harness.state().document().unwrap();
    assert_eq!(doc.frame_index, 1);
    assert!((doc.frame.positions_angstrom[1][0] - 0.8).abs() < 1e-6);
    harness
        .get_by_role(egui::accesskit::Role::Slider)
        .set_value_accesskit(3.0);
    harness.run();
    let doc = harness.state().document().unwrap();
    assert_eq!(doc.frame_index, 3);
    assert!((doc.frame.positions_angstrom[1][0] - 1.0).abs() < 1e-6);
    // The sphere instances follow the frame.
    assert!((harness.state().view.spheres[1].center_angstrom[0] - 1.0).abs() < 1e-6);
    harness.get_by_label("Play").click();
    harness.run();
    assert!(harness.state().view.timeline.playing);
    // Playing with looping wraps from the last frame to the first.
    let st = harness.state_mut();
    assert!(st.tick(1.0));
    assert_eq!(st.document().unwrap().frame_index, 0);
}

#[test]
fn style_combo_changes_representation() {
    let mut harness = Harness::new_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::panels::reps_ui(ui, state);
            state.apply_pending();
        },
        state_with_h2(),
    );
    harness.run();
    let before = harness.state().view.spheres[0].radius_angstrom;
    harness.get_by_label("Style").click();
    harness.run();
    harness.get_by_label("VDW (space filling)").click();
    harness.run();
    let st = harness.state();
    let (_, atoms) = st.reps().atoms().next().unwrap();
    assert_eq!(atoms.style, AtomStyle::Vdw);
    // Space filling draws each atom at its element's van der Waals radius.
    let vdw_h = orbitfield::model::Element(1).vdw_radius_angstrom();
    assert!((st.view.spheres[0].radius_angstrom - vdw_h).abs() < 1e-6 && before < 0.5 * vdw_h);
    assert!(st.view.cylinders.is_empty(), "space filling draws no bonds");
}

#[test]
fn files_panel_open_dialog_recent_and_bad_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("garbage.xyz");
    std::fs::write(&bad, b"\x00\x01 definitely not a structure").unwrap();
    let mut settings = Settings::default();
    settings.push_recent(std::slice::from_ref(&bad));
    let state = AppState::new(settings, FieldService::default());
    let mut harness = Harness::new_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::panels::files_ui(ui, state);
            state.apply_pending();
        },
        state,
    );
    harness.run();
    harness.get_by_label("Open…").click();
    harness.run();
    assert!(harness.state().panels.open_dialog_requested);
    harness.get_by_label("garbage.xyz").click();
    harness.run();
    let st = harness.state();
    assert!(st.document().is_none());
    assert!(
        st.panels.status.contains("garbage.xyz"),
        "the error names the file: {}",
        st.panels.status
    );
}

#[test]
fn whole_window_lays_out_and_help_toggles() {
    let mut harness = Harness::builder().with_size(egui::vec2(1200.0, 800.0)).build_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::main_ui(ui, state);
            state.apply_pending();
        },
        state_with_h2(),
    );
    harness.run();
    assert!(harness.state().view.size_px[0] > 300, "the 3-D view gets the middle");
    harness.get_by_label("Help").click();
    harness.run();
    assert!(harness.state().panels.show_help);
    harness.get_by_label("Play / pause the trajectory");
}

#[test]
fn open_a_molden_file_pick_an_orbital_and_get_its_lobes() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/engine/water_hf_631gs_sph.molden");
    let mut settings = Settings::default();
    settings.push_recent(std::slice::from_ref(&path));
    let state = AppState::new(settings, orbitfield::app::default_field_service());
    let mut harness = Harness::new_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::panels::files_ui(ui, state);
            orbitfield::ui::panels::orbitals_ui(ui, state);
            state.apply_pending();
        },
        state,
    );
    harness.run();
    harness.get_by_label("water_hf_631gs_sph.molden").click();
    harness.run();
    {
        let st = harness.state();
        let doc = st.document().expect("the file opened");
        assert_eq!(doc.structure.len(), 3);
        assert_eq!(doc.bonds, vec![[0, 1], [0, 2]]);
        assert_eq!(st.doc.orbital, Some(4), "water has five doubly occupied orbitals");
        // The status line counts in the singular where there is one.
        assert!(
            st.panels.status.contains("3 atoms, 1 frame, 1 wavefunction")
                && !st.panels.status.contains("1 wavefunctions"),
            "{}",
            st.panels.status
        );
    }
    harness.get_by_label("5 HOMO");
    harness.get_by_label("4 HOMO-1").click();
    harness.run();
    let st = harness.state_mut();
    assert_eq!(st.doc.orbital, Some(3));
    // The jobs pool computes off the UI thread: poll as the window does each frame.
    let t0 = std::time::Instant::now();
    while !st.update_reps() {
        assert!(t0.elapsed().as_secs() < 120, "the field never arrived");
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    let (key, grid) = st.shown_field().cloned().unwrap();
    assert_eq!(
        key.field,
        FieldChoice::Orbital {
            spin: Spin::Alpha,
            index: 3
        }
    );
    assert!(grid.min_max().is_some_and(|(lo, hi)| lo < -0.05 && hi > 0.05));
    assert!(
        st.lobes()
            .iter()
            .all(|l| l.as_ref().is_some_and(|m| !m.indices.is_empty()))
    );
    // Picking the oxygen in the middle of the default view names it and gives the field value.
    st.view.size_px = [400, 400];
    st.apply(orbitfield::app::state::Command::ResetCamera);
    let o = st.document().unwrap().frame.positions_angstrom[0];
    let (pixel, _) = st
        .view
        .camera
        .project_to_pixel(glam::Vec3::from(o), [400, 400])
        .unwrap();
    st.apply(orbitfield::app::state::Command::Pick {
        pixel,
        size_px: [400, 400],
    });
    let pick = st.view.pick.clone().expect("the oxygen is hit");
    assert_eq!(pick.atom, 0);
    assert!(
        // The field is named with its unit: HOMO-1's value at the oxygen.
        pick.text.contains("(O)") && pick.text.contains("HOMO-1 (orbital 4) ") && pick.text.ends_with(" a.u."),
        "{}",
        pick.text
    );
}

#[test]
fn demo_opens_playing_with_the_homo_selected() {
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(orbitfield::app::state::Command::OpenDemo);
    let doc = state.document().expect("the demo loads");
    assert_eq!(doc.n_frames, 37);
    assert_eq!(doc.structure.len(), 6);
    assert!(state.view.timeline.playing);
    // Ethylene: 16 electrons, the HOMO is orbital 8 (the pi orbital).
    assert_eq!(state.doc.orbital, Some(7));
}

/// The RDF panel over tip125 (10 frames): start from the button, let the frames stream through the
/// workers, and compare with the CPU accumulator run directly.
#[test]
fn rdf_panel_streams_frames_into_the_plot() {
    use orbitfield::analysis::rdf::{RdfAccumulator, RdfSettings};
    use orbitfield::model::select::Selection;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
    let paths = vec![dir.join("tip125_tric_C36.psf"), dir.join("tip125_tric_C36.dcd")];
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.open_system("tip125".into(), orbitfield::io::load(&paths).unwrap());
    state.panels.rdf.r_max_angstrom = 4.0;
    state.panels.rdf.bins = 40;
    let mut harness = Harness::new_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::panels::rdf_ui(ui, state);
            state.apply_pending();
            state.pump_rdf();
        },
        state,
    );
    harness.run();
    harness.get_by_label("Compute g(r)").click();
    for _ in 0..2000 {
        harness.run();
        if harness
            .state()
            .panels
            .rdf
            .run
            .as_ref()
            .is_some_and(|r| r.finished.is_some())
        {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let run = harness.state().panels.rdf.run.as_ref().unwrap();
    assert_eq!((run.frames_done, run.n_frames), (10, 10), "all frames histogrammed");
    assert!(harness.state().panels.rdf.error.is_none());
    // The same g(r) as the accumulator fed directly, with an atom never paired with itself (each
    // atom its own exclusion group, as VMD's gofr leaves those pairs out).
    let mut system = orbitfield::io::load(&paths).unwrap();
    let idx = Selection::parse("name OW OH2")
        .unwrap()
        .indices(&system.structure, None);
    let mut acc = RdfAccumulator::new(RdfSettings {
        r_max_angstrom: 4.0,
        bins: 40,
        exclude_same_group: true,
    })
    .unwrap();
    let own: Vec<u32> = (0..system.structure.len() as u32).collect();
    let mut frame = orbitfield::model::Frame::default();
    for f in 0..10 {
        system.trajectory.read_frame(f, &mut frame).unwrap();
        acc.add_frame(f, &frame, &idx, &idx, Some(&own)).unwrap();
    }
    assert_eq!(run.accumulator, acc);
    harness.run();
    harness.get_by_label_contains("10 of 10 frames");

    // A selection that matches nothing is refused with a message, before anything runs.
    harness.state_mut().panels.rdf.sel1_text = "resname NOPE".into();
    harness.get_by_label("Compute g(r)").click();
    harness.run();
    let err = harness.state().panels.rdf.error.clone().unwrap();
    assert!(err.contains("selects no atoms"), "{err}");
}

/// Scrubbing 100 frames in a burst through the real worker pool: only the last frame's surface
/// is ever shown after the burst, the superseded requests are cancelled by the workers, and the
/// cache never holds more than its budget.
#[test]
fn scrubbing_100_frames_shows_only_the_last_and_stays_in_budget() {
    let mut state = AppState::new(Settings::default(), orbitfield::app::default_field_service());
    state.open_system("water series".into(), water_series(100));
    let wait_shown = |st: &mut AppState, frame: usize, seen: &mut Vec<usize>| {
        let t0 = std::time::Instant::now();
        loop {
            if st.update_reps() {
                let k = st.shown_field().unwrap().0;
                seen.push(k.frame);
            }
            if st.shown_field().is_some_and(|(k, _)| k.frame == frame) {
                return;
            }
            assert!(
                t0.elapsed().as_secs() < 120,
                "frame {frame} never arrived (seen {seen:?})"
            );
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
    };
    let mut seen = Vec::new();
    wait_shown(&mut state, 0, &mut seen);
    let one = orbitfield::app::fields::grid_bytes(&state.shown_field().unwrap().1);
    // Room for three lattices (and their meshes): far less than 100 frames would take.
    let budget = 3 * one + one / 2;
    state.fields.set_cache_budget(budget);
    let before = state.fields.cancellations();
    let mut burst_seen = Vec::new();
    for f in 1..100 {
        state.apply(orbitfield::app::state::Command::SetFrame(f));
        if state.update_reps() {
            burst_seen.push(state.shown_field().unwrap().0.frame);
        }
        assert!(state.fields.cache_use().bytes <= budget, "over budget at frame {f}");
    }
    let mut after_burst = Vec::new();
    wait_shown(&mut state, 99, &mut after_burst);
    assert_eq!(
        after_burst,
        vec![99],
        "only the last request's surface is shown after the burst"
    );
    assert!(
        burst_seen.iter().all(|&f| f == 0),
        "nothing but the old picture during the burst: {burst_seen:?}"
    );
    assert!(
        state.lobes().iter().any(|l| l.is_some()),
        "the last frame has its lobes"
    );
    // Cancelled results come back from the workers (they reach the service as cancellations).
    let t0 = std::time::Instant::now();
    let mut c = state.fields.cancellations();
    while c.requests - before.requests < 90 && t0.elapsed().as_secs() < 30 {
        state.update_reps();
        std::thread::sleep(std::time::Duration::from_millis(5));
        c = state.fields.cancellations();
    }
    assert!(c.requests - before.requests >= 90, "cancelled requests seen: {c:?}");
    let cache = state.fields.cache_use();
    assert!(
        cache.bytes <= budget && cache.grids <= 3,
        "{cache:?} with budget {budget}"
    );
}

/// The jobs panel lists the pool's workers with their tiles and the last field's stage timings.
#[test]
fn jobs_panel_shows_workers_tiles_and_stage_times() {
    let mut state = AppState::new(Settings::default(), orbitfield::app::default_field_service());
    state.open_system("water series".into(), water_series(2));
    let t0 = std::time::Instant::now();
    while state.shown_field().is_none() {
        state.update_reps();
        assert!(t0.elapsed().as_secs() < 120, "no field");
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let workers = state.fields.workers();
    assert!(!workers.is_empty());
    assert!(workers.iter().map(|w| w.tiles_done).sum::<u64>() > 0, "{workers:?}");
    let stages = state.fields.last_stages().unwrap();
    assert!(
        stages.tiles > 0 && stages.total > 0.0 && stages.compute > 0.0,
        "{stages:?}"
    );
    let mut harness = Harness::new_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::panels::jobs_ui(ui, state);
            state.apply_pending();
        },
        state,
    );
    harness.run();
    harness.get_by_label_contains("last field:");
    harness.get_by_label_contains("done, 0 failed");
    harness.get_by_label_contains("Cache:");
}

/// The slice controls: switch the plane on, pick the x axis, then a free normal.
#[test]
fn slice_plane_controls_set_axis_and_free_normal() {
    use orbitfield::app::slice::SliceNormal;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/engine/water_homo_24.cube");
    let mut state = AppState::new(Settings::default(), orbitfield::app::default_field_service());
    state.open_system("water homo".into(), orbitfield::io::load(&[path]).unwrap());
    let mut harness = Harness::new_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::panels::fields_ui(ui, state);
            state.apply_pending();
        },
        state,
    );
    harness.run();
    harness.get_by_label("Slice plane").click();
    harness.run();
    assert!(harness.state().show_slice());
    harness.get_by_label("x").click();
    harness.run();
    assert_eq!(harness.state().slice_plane().normal, SliceNormal::X);
    harness.get_by_label("free").click();
    harness.run();
    assert!(matches!(harness.state().slice_plane().normal, SliceNormal::Free { .. }));
    harness.run();
    assert!(harness.query_all_by_label_contains("azimuth").count() >= 1);
}

/// Where orbitals are computed: the field panel's combo sets the setting (auto by default).
#[test]
fn field_panel_sets_where_orbitals_are_computed() {
    use orbitfield::app::fields::device::FieldsOn;
    let mut harness = Harness::new_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::panels::fields_ui(ui, state);
            state.apply_pending();
        },
        state_with_h2(),
    );
    harness.run();
    assert_eq!(harness.state().settings.orbitals_on, FieldsOn::Auto);
    harness.get_by_label("Orbitals computed on").click();
    harness.run();
    harness.get_by_label("worker pool").click();
    harness.run();
    assert_eq!(harness.state().settings.orbitals_on, FieldsOn::Pool);
    harness.get_by_label("Orbitals computed on").click();
    harness.run();
    harness.get_by_label("render device").click();
    harness.run();
    assert_eq!(harness.state().settings.orbitals_on, FieldsOn::RenderDevice);
}

/// The potential of a trajectory's charges per frame: a fixed lattice, values equal to the direct
/// float64 sum over the frame's charges, following the frames.
#[test]
fn potential_map_follows_the_md_frames_on_a_fixed_lattice() {
    use orbitfield::app::state::Command;
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
    let paths = vec![dir.join("adk.psf"), dir.join("adk_dims.dcd")];
    // A coarse map keeps the debug-build test quick.
    let settings = Settings {
        potential_spacing_angstrom: 4.0,
        ..Settings::default()
    };
    let mut state = AppState::new(settings, orbitfield::app::default_field_service());
    state.open_system("adk".into(), orbitfield::io::load(&paths).unwrap());
    // The vacuum Coulomb sum is what this test holds to its f64 reference.
    state.apply(Command::SetEspModel(orbitfield::app::esp_model::EspModel::Vacuum));
    state.apply(Command::SelectField(Some(FieldChoice::Potential)));
    let check = |state: &mut AppState, frame: usize| -> orbitfield::model::Lattice {
        state.apply(Command::SetFrame(frame));
        let t0 = std::time::Instant::now();
        while state.shown_field().is_none_or(|(k, _)| k.frame != frame) {
            state.update_reps();
            assert!(t0.elapsed().as_secs() < 300, "frame {frame} never arrived");
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        let grid = state.shown_field().unwrap().1.clone();
        let doc = state.document().unwrap();
        let q = doc.structure.charges_e.as_ref().unwrap();
        // A corner region point, far from atoms: the direct sum over this frame's charges.
        let [nx, ny, nz] = grid.lattice.dims;
        for (i, j, k) in [(1, 1, 1), (nx - 2, ny / 2, nz / 3)] {
            let p = grid.lattice.point_bohr(i, j, k);
            let mut v = 0.0f64;
            for (x, c) in doc.frame.positions_angstrom.iter().zip(q) {
                let x = orbitfield::model::units::bohr_from_angstrom3(x.map(f64::from));
                v += f64::from(*c) / ((p[0] - x[0]).powi(2) + (p[1] - x[1]).powi(2) + (p[2] - x[2]).powi(2)).sqrt();
            }
            let got = f64::from(grid.get(i, j, k).unwrap());
            assert!(
                (got - v).abs() <= 1e-5 * v.abs().max(1e-3),
                "frame {frame} ({i},{j},{k}): {got} vs {v}"
            );
        }
        grid.lattice
    };
    let first = check(&mut state, 0);
    let later = check(&mut state, 40);
    assert_eq!(first, later, "the lattice stays fixed across frames");
}

/// Following the HOMO of the demo's ethylene torsion: the background matching arrives, the orbital
/// list follows the pi orbital through the 90-degree crossing (it is the LUMO by index at 180
/// degrees), and picking another orbital by hand stops following.
#[test]
fn follow_the_pi_orbital_through_the_demo_torsion() {
    use orbitfield::app::state::Command;
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenDemo);
    state.apply(Command::SetPlaying(false));
    state.apply(Command::SetFrame(0));
    let homo0 = state.homo_index(Spin::Alpha).unwrap();
    state.apply(Command::SelectOrbital(Some(homo0)));
    state.apply(Command::FollowOrbital(true));
    let t0 = std::time::Instant::now();
    while !state.poll_follow() {
        assert!(t0.elapsed().as_secs() < 120, "the matching never finished");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    let n = state.document().unwrap().n_frames;
    assert_eq!(n, 37);
    for f in 0..n {
        state.apply(Command::SetFrame(f));
        let step = state.follow_step().unwrap().clone();
        assert!(step.overlap > 0.95 && !step.ambiguous, "frame {f}: {step:?}");
        assert_eq!(state.doc.orbital, Some(step.index));
    }
    let last_homo = state.homo_index(Spin::Alpha).unwrap();
    assert_eq!(
        state.doc.orbital,
        Some(last_homo + 1),
        "the followed pi orbital is the LUMO at 180 degrees"
    );
    assert!(
        state.panels.status.contains("orbital followed"),
        "{}",
        state.panels.status
    );
    state.apply(Command::FollowOrbital(false));
    assert!(
        state.panels.status.contains("no longer followed"),
        "the status line does not keep saying it is followed: {}",
        state.panels.status
    );
    state.apply(Command::FollowOrbital(true));
    while !state.poll_follow() {
        assert!(t0.elapsed().as_secs() < 240, "the matching never finished");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    // The orbital list says what is followed: the orbital and the frame it was picked at.
    let (frame, index) = (state.document().unwrap().frame_index, state.doc.orbital.unwrap());
    let mut harness = Harness::new_ui_state(
        |ui, st: &mut AppState| orbitfield::ui::orbitals::orbitals_ui(ui, st),
        state,
    );
    harness.run();
    let said = format!("following orbital {} of frame {frame}", index + 1);
    assert!(harness.query_by_label(&said).is_some(), "'{said}' is shown");
    let state = harness.state_mut();
    state.apply(Command::SelectOrbital(Some(0)));
    assert!(state.doc.follow.is_none(), "a hand-picked orbital ends following");
}

/// "Fit to" a selection frames its atoms (the camera's distance shrinks for a small part of adk), and
/// a bad selection is reported with the offending token.
#[test]
fn fit_view_to_a_selection() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.open_system(
        "adk".into(),
        orbitfield::io::load(&[dir.join("adk.psf"), dir.join("adk_dims.dcd")]).unwrap(),
    );
    state.fit_if_pending();
    let whole = state.view.camera.distance_angstrom;
    state.panels.fit_selection_text = "resid 10 to 12".into();
    let mut harness = Harness::new_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::panels::view_options_ui(ui, state);
            state.apply_pending();
        },
        state,
    );
    harness.run();
    harness.get_by_label("Fit").click();
    harness.run();
    let near = harness.state().view.camera.distance_angstrom;
    assert!(
        near < 0.5 * whole,
        "fitting three residues: {near} vs {whole} for the protein"
    );
    harness.state_mut().panels.fit_selection_text = "resid 10 to (".into();
    harness.get_by_label("Fit").click();
    harness.run();
    assert!(
        harness.state().panels.status.contains("fit to selection"),
        "{}",
        harness.state().panels.status
    );
}
