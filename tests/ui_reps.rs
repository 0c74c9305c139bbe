//! The representations panel driven through egui_kittest: orbitals, densities and potentials
//! added side by side, shown and hidden, computed per frame; saving atoms and frames.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::fields::{FieldChoice, FieldService};
use orbitfield::app::reps::{FieldStyle, RepKind};
use orbitfield::app::settings::Settings;
use orbitfield::app::state::AppState;
use orbitfield::io::System;
use orbitfield::model::Spin;
use std::path::PathBuf;

#[path = "common/water_series.rs"]
mod water_series;
use water_series::water_series;

/// selects it).
/// The show/hide box of the representation named `label` in the list (left of its name, which
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
