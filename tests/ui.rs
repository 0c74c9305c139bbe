//! Panels driven through egui_kittest: click an orbital, move the frame slider, play, change the
//! style, open files; then check the application state the clicks produced.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::atoms::AtomStyle;
use orbitfield::app::fields::{FieldChoice, FieldService};
use orbitfield::app::reps::{FieldStyle, RepKind};
use orbitfield::app::settings::Settings;
use orbitfield::app::state::AppState;
use orbitfield::io::System;
use orbitfield::model::{
    BasisSet, Element, Frame, Name8, OrbitalSet, QmAtom, Spin, SpinKind, Structure, Trajectory, Wavefunction,
};
use std::path::PathBuf;

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

/// Water (HF/6-31G*) moved along x over 100 frames, one wavefunction per frame.
fn water_series(frames: usize) -> System {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/engine/water_hf_631gs_sph.molden");
    let base = orbitfield::io::load(std::slice::from_ref(&path)).unwrap();
    let wf0 = base.wavefunctions[0].clone();
    let mut frame0 = orbitfield::model::Frame::default();
    let mut traj = base.trajectory;
    traj.read_frame(0, &mut frame0).unwrap();
    let mut wfs = Vec::new();
    let mut list = Vec::new();
    for f in 0..frames {
        let dx = 0.01 * f as f64;
        let mut wf = wf0.clone();
        for a in &mut wf.atoms {
            a.position_bohr[0] += orbitfield::model::units::bohr_from_angstrom(dx);
        }
        wfs.push(wf);
        let mut fr = frame0.clone();
        for p in &mut fr.positions_angstrom {
            p[0] += dx as f32;
        }
        list.push(fr);
    }
    System {
        trajectory: Trajectory::from_frames(base.structure.len(), list, "test"),
        structure: base.structure,
        wavefunctions: wfs,
        grids: Vec::new(),
        warnings: Vec::new(),
        paths: vec![path],
        wavefunction_frames: Vec::new(),
        frame_energies_hartree: Vec::new(),
        orbital_levels: None,
    }
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

/// The show/hide box of the representation named `label` in the list (left of its name, which
/// selects it).
fn visibility_box<'h>(harness: &'h Harness<'_, AppState>, label: &'h str) -> egui_kittest::Node<'h> {
    let name = harness.get_by_label(label).rect();
    harness
        .query_all(egui_kittest::kittest::by().role(egui::accesskit::Role::CheckBox))
        .find(|n| {
            let r = n.rect();
            (r.center().y - name.center().y).abs() < 10.0 && r.max.x <= name.min.x + 1.0
        })
        .expect("its show/hide box")
}

/// The representations panel of `state`, laid out once.
fn reps_panel(state: AppState) -> Harness<'static, AppState> {
    let mut harness = Harness::builder().with_size(egui::vec2(500.0, 2000.0)).build_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::panels::reps_ui(ui, state);
            state.apply_pending();
        },
        state,
    );
    harness.run();
    harness
}

/// Water with TIP3P-like charges over `frames` frames: orbitals, density and a potential.
fn charged_water_series(frames: usize) -> System {
    let mut s = water_series(frames);
    s.structure.charges_e = Some(vec![-0.834, 0.417, 0.417]);
    s
}

/// HOMO, LUMO and potential representations added from the panel, computed by the real worker
/// pool beside the main field while the frames are scrubbed: each ends showing its own field at the
/// last frame (checked against the CPU engine and a direct f64 sum), the jobs panel has a line per
/// representation, and removing one from the panel drops it.
#[test]
fn representations_panel_adds_homo_lumo_and_potential_computed_side_by_side() {
    use orbitfield::app::state::Command;
    use orbitfield::compute::{Field, FieldInput, FieldJob};
    let settings = Settings {
        lattice_points: 16,
        potential_spacing_angstrom: 2.0,
        ..Settings::default()
    };
    let mut state = AppState::new(settings, orbitfield::app::default_field_service());
    state.open_system("charged water".into(), charged_water_series(6));
    // The vacuum Coulomb sum is what this test holds to its f64 reference.
    state.apply(Command::SetEspModel(orbitfield::app::esp_model::EspModel::Vacuum));
    let mut harness = reps_panel(state);
    for label in ["HOMO", "LUMO", "Potential (charges)"] {
        harness.get_by_label(orbitfield::ui::add::ADD_BUTTON).click();
        harness.run();
        harness.get_by_label(label).click();
        harness.run();
    }
    let mut state = harness.into_state();
    let fields: Vec<FieldChoice> = state.reps().fields().map(|(_, f)| f.field).collect();
    let homo = state.homo_index(Spin::Alpha).unwrap();
    let homo_field = FieldChoice::Orbital {
        spin: Spin::Alpha,
        index: homo,
    };
    // The document's own HOMO (the main field), then the three added.
    assert_eq!(
        fields,
        vec![
            homo_field,
            homo_field,
            FieldChoice::Orbital {
                spin: Spin::Alpha,
                index: homo + 1
            },
            FieldChoice::Potential
        ]
    );
    for f in 0..6 {
        state.apply(Command::SetFrame(f));
        state.update_reps();
        state.update_reps();
    }
    let t0 = std::time::Instant::now();
    while !state
        .reps()
        .fields()
        .all(|(_, r)| r.pipeline.shown.as_ref().is_some_and(|(k, _)| k.frame == 5))
    {
        state.update_reps();
        state.update_reps();
        assert!(
            t0.elapsed().as_secs() < 120,
            "the representations never reached frame 5"
        );
        std::thread::sleep(std::time::Duration::from_millis(2));
    }
    let doc = state.document().unwrap();
    for (rep, r) in state.reps().fields() {
        let label = state.rep_label(rep);
        let (key, grid) = r.pipeline.shown.as_ref().unwrap();
        assert_eq!(key.field, r.field);
        match r.field {
            FieldChoice::Orbital { spin, index } => {
                let job = FieldJob {
                    field: Field::Orbital { spin, index },
                    lattice: grid.lattice,
                    input: FieldInput::Wavefunction(doc.wavefunctions[5].clone()),
                };
                let direct = orbitfield::compute::cpu::evaluate_grid(&job).unwrap();
                let worst = direct
                    .values
                    .iter()
                    .zip(&grid.values)
                    .map(|(a, b)| (a - b).abs())
                    .fold(0.0f32, f32::max);
                assert!(worst < 1e-5, "{label}: {worst}");
            }
            _ => {
                let q = doc.structure.charges_e.as_ref().unwrap();
                let [nx, ny, nz] = grid.lattice.dims;
                for (i, j, k) in [(0, 0, 0), (nx / 2, ny / 2, nz - 1)] {
                    let p = grid.lattice.point_bohr(i, j, k);
                    let mut v = 0.0f64;
                    for (x, c) in doc.frame.positions_angstrom.iter().zip(q) {
                        let x = orbitfield::model::units::bohr_from_angstrom3(x.map(f64::from));
                        v += f64::from(*c)
                            / ((p[0] - x[0]).powi(2) + (p[1] - x[1]).powi(2) + (p[2] - x[2]).powi(2)).sqrt();
                    }
                    let got = f64::from(grid.get(i, j, k).unwrap());
                    assert!((got - v).abs() <= 1e-5 * v.abs().max(1e-3), "{got} vs {v}");
                }
            }
        }
        assert!(r.pipeline.lobes[0].is_some(), "{label} has its surface");
    }
    let mut harness = Harness::builder().with_size(egui::vec2(500.0, 2400.0)).build_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::panels::jobs_ui(ui, state);
            orbitfield::ui::panels::reps_ui(ui, state);
            state.apply_pending();
        },
        state,
    );
    harness.run();
    harness.get_by_label(&format!("LUMO (orbital {}): Isosurface: frame 5 shown", homo + 2));
    assert_eq!(harness.query_all_by_label_contains("frame 5 shown").count(), 4);
    // Delete the main field (the atoms come first in the list): the next HOMO takes its place.
    harness.query_all_by_label("Delete").nth(1).unwrap().click();
    harness.run();
    let fields: Vec<FieldChoice> = harness.state().reps().fields().map(|(_, f)| f.field).collect();
    assert_eq!(fields.len(), 3);
    assert_eq!(harness.state().main_field(), Some(homo_field));
    // The potential's visibility box hides it; its Slice button draws it as a slice instead.
    visibility_box(&harness, "potential (charges): Isosurface").click();
    harness.run();
    let visible = |st: &AppState, i: usize| st.reps().fields().nth(i).map(|(r, _)| r.visible);
    assert_eq!(visible(harness.state(), 2), Some(false));
    harness.query_all_by_label("Slice").nth(2).unwrap().click();
    harness.run();
    let (_, r) = harness.state().reps().fields().nth(2).unwrap();
    assert!(
        matches!(r.style, FieldStyle::Slice(_)),
        "a slice instead of isosurfaces"
    );
    assert!(matches!(harness.state().reps().list[0].kind, RepKind::Atoms(_)));
}

/// The wavefunction's own potential added from the representations panel: computed through the
/// worker pool on the orbitals' lattice (`Field::QmPotential`, checked against the CPU engine's
/// exact evaluator at lattice points), shown as two surfaces at -0.03 and +0.03 a.u., and named
/// `esp` in saved representations.
#[test]
fn representations_panel_adds_the_wavefunction_potential() {
    use orbitfield::app::state::Command;
    use orbitfield::compute::{Field, FieldInput};
    let settings = Settings {
        lattice_points: 16,
        ..Settings::default()
    };
    let mut state = AppState::new(settings, orbitfield::app::default_field_service());
    state.open_system("water".into(), water_series(2));
    let mut harness = reps_panel(state);
    harness.get_by_label(orbitfield::ui::add::ADD_BUTTON).click();
    harness.run();
    harness.get_by_label("Potential (wavefunction)").click();
    harness.run();
    let mut state = harness.into_state();
    state.apply(Command::SetFrame(1));
    let t0 = std::time::Instant::now();
    let id = loop {
        state.update_reps();
        let shown = state.reps().fields().find(|(_, f)| {
            f.field == FieldChoice::WavefunctionPotential
                && f.pipeline.shown.as_ref().is_some_and(|(k, _)| k.frame == 1)
        });
        if let Some((rep, _)) = shown {
            break rep.id;
        }
        assert!(t0.elapsed().as_secs() < 120, "the potential never arrived");
        std::thread::sleep(std::time::Duration::from_millis(2));
    };
    let doc = state.document().unwrap();
    let r = state.reps().field(id).unwrap();
    let (_, grid) = r.pipeline.shown.as_ref().unwrap();
    let [nx, ny, nz] = grid.lattice.dims;
    let ijk = [(0, 0, 0), (nx / 2, ny / 2, nz - 1), (nx - 1, ny / 3, nz / 2)];
    let points: Vec<[f64; 3]> = ijk.iter().map(|&(i, j, k)| grid.lattice.point_bohr(i, j, k)).collect();
    let input = FieldInput::Wavefunction(doc.wavefunctions[1].clone());
    let exact = orbitfield::compute::cpu::evaluate_points(&Field::QmPotential, &input, &points).unwrap();
    for (&(i, j, k), want) in ijk.iter().zip(&exact) {
        let got = f64::from(grid.get(i, j, k).unwrap());
        assert!((got - want).abs() <= 1e-5 * want.abs().max(1e-3), "{got} vs {want}");
    }
    assert_eq!(r.absolute_iso(grid), 0.03);
    assert!(r.field.is_signed());
    let text = orbitfield::app::reps::spec::field_text(r.field, Some(doc));
    assert_eq!(text, "esp");
    assert_eq!(
        orbitfield::app::reps::spec::parse_field(&text, doc),
        Ok(FieldChoice::WavefunctionPotential)
    );
}

/// The density surface coloured by the wavefunction's potential through the representation list:
/// the colours follow the frames (each frame's potential evaluated at the vertices of that frame's
/// density surface, checked against the CPU engine's exact evaluator; no lattice of the potential
/// is computed), the legend names it in kT/e like the other potentials, and lobe colours come back
/// when the colouring is switched off.
#[test]
fn density_surface_coloured_by_the_wavefunction_potential_follows_the_frames() {
    use orbitfield::app::state::Command;
    use orbitfield::compute::{Field, FieldInput};
    use orbitfield::model::units::bohr_from_angstrom3;
    let settings = Settings {
        lattice_points: 16,
        ..Settings::default()
    };
    let mut state = AppState::new(settings, orbitfield::app::default_field_service());
    state.open_system("water".into(), water_series(3));
    state.apply(Command::SelectField(Some(FieldChoice::Density)));
    state.apply(Command::SetSurfaceColor(Some((
        FieldChoice::WavefunctionPotential,
        None,
    ))));
    assert_eq!(
        state.surface_color().map(|c| c.source),
        Some(FieldChoice::WavefunctionPotential)
    );
    for frame in [1, 2] {
        state.apply(Command::SetFrame(frame));
        let t0 = std::time::Instant::now();
        while !state.main_field_rep().is_some_and(|f| {
            f.pipeline.shown.as_ref().is_some_and(|(k, _)| k.frame == frame) && f.color_shows_frame(frame)
        }) {
            state.update_reps();
            assert!(t0.elapsed().as_secs() < 120, "frame {frame} never arrived");
            std::thread::sleep(std::time::Duration::from_millis(2));
        }
        let doc = state.document().unwrap();
        let f = state.main_field_rep().unwrap();
        let (key, _) = f.pipeline.shown.as_ref().unwrap();
        assert_eq!(key.field, FieldChoice::Density);
        assert!(f.colors_by_vertex_values() && !f.colors_from_lattice());
        assert!(f.color_grid(doc).is_none(), "no lattice of the potential");
        assert!(f.pipeline.color.as_ref().unwrap().shown.is_none());
        let mesh = f.pipeline.lobes[0].as_ref().unwrap();
        let values = f.vertex_values().unwrap()[0].as_ref().unwrap();
        assert_eq!(values.len(), mesh.positions_angstrom.len());
        assert!(values.len() > 50, "{} vertices", values.len());
        let points: Vec<[f64; 3]> = mesh
            .positions_angstrom
            .iter()
            .map(|p| bohr_from_angstrom3(p.map(f64::from)))
            .collect();
        let input = FieldInput::Wavefunction(doc.wavefunctions[frame].clone());
        let exact = orbitfield::compute::cpu::evaluate_points(&Field::QmPotential, &input, &points).unwrap();
        for (got, want) in values.iter().zip(&exact) {
            let got = f64::from(*got);
            assert!((got - want).abs() <= 1e-5 * want.abs().max(1e-3), "{got} vs {want}");
        }
    }
    let range = state.surface_color().unwrap().range.unwrap();
    assert!(range[0] < 0.0 && range[1] > 0.0 && range[0] == -range[1], "{range:?}");
    let legend = state.legends().into_iter().next().unwrap();
    assert_eq!(
        legend.title,
        "surface coloured by potential (wavefunction: nuclei and electron density, vacuum) at its vertices"
    );
    assert_eq!(legend.unit, "kT/e");
    // 1 hartree/e = 1052.6 kT/e at 300 K (27.211386 V / 0.0258520 V).
    assert!((legend.range[1] / f64::from(range[1]) - 1052.58).abs() < 0.05);
    state.apply(Command::SetSurfaceColor(None));
    let f = state.main_field_rep().unwrap();
    assert!(f.coloring.is_none() && f.pipeline.color.is_none());
}

/// "Save as…" writes in the background: the status says it is saving, the job reports once, and
/// the file holds the selected atoms of the selected frames as the source has them.
#[test]
fn save_atoms_and_frames_runs_as_a_background_job() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/md");
    let paths = vec![dir.join("tip125_tric_C36.psf"), dir.join("tip125_tric_C36.dcd")];
    let mut source = orbitfield::io::load(&paths).unwrap();
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.open_system("tip125".into(), orbitfield::io::load(&paths).unwrap());
    state.panels.save_selection_text = "name OH2".into();
    state.panels.save_frames_text = "2:9:3".into();
    let out_dir = tempfile::tempdir().unwrap();
    let out = out_dir.path().join("oxygens.pdb");
    state.save_to(&out);
    assert!(state.panels.save_job.is_some(), "{}", state.panels.status);
    let mut polls = 0;
    while state.poll_save() && state.panels.save_job.is_some() {
        polls += 1;
        assert!(polls < 20_000, "the save did not finish");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(state.panels.errors.is_empty(), "{:?}", state.panels.errors);
    assert!(
        state.panels.status.starts_with("saved 3 frames"),
        "{}",
        state.panels.status
    );
    assert!(!state.poll_save(), "the result is reported once");
    let oxygens: Vec<usize> = (0..source.structure.len())
        .filter(|&i| source.structure.names[i].as_str() == "OH2")
        .collect();
    let mut back = orbitfield::io::load(&[out]).unwrap();
    assert_eq!(back.structure.len(), oxygens.len());
    assert_eq!(back.trajectory.n_frames(), 3);
    for (k, fi) in [2usize, 5, 8].into_iter().enumerate() {
        let want = source.trajectory.frame(fi).unwrap();
        let got = back.trajectory.frame(k).unwrap();
        for (p, &a) in got.positions_angstrom.iter().zip(&oxygens) {
            let w = want.positions_angstrom[a];
            assert!(
                (0..3).all(|d| (p[d] - w[d]).abs() <= 6e-4),
                "frame {fi} atom {a}: {p:?} vs {w:?}"
            );
        }
    }
}

/// Up/Down (or a click in the orbital list) with the orbital representation hidden shows the
/// orbital picked: it used to change the hidden representation, and nothing on screen moved.
#[test]
fn picking_an_orbital_shows_a_hidden_orbital_representation() {
    use orbitfield::app::reps::RepEdit;
    use orbitfield::app::state::Command;
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/engine/water_hf_631gs_sph.molden");
    let mut state = AppState::new(Settings::default(), FieldService::default());
    state.apply(Command::OpenFiles(vec![path]));
    let id = state.orbital_rep_id().expect("the HOMO is shown");
    state.apply(Command::EditRep(id, RepEdit::Visible(false)));
    state.apply(Command::AddFieldRep(FieldChoice::Density));
    state.apply(Command::SelectOrbital(Some(5)));
    let rep = state.reps().get(id).expect("the same representation");
    assert!(rep.visible, "the orbital picked is shown");
    let RepKind::Field(f) = &rep.kind else {
        panic!("a field")
    };
    assert_eq!(
        f.field,
        FieldChoice::Orbital {
            spin: Spin::Alpha,
            index: 5
        }
    );
    assert_eq!(state.reps().fields().count(), 2, "no representation added or replaced");
}
