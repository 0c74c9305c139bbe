//! The solvent-excluded surface as a user reaches it: "+ Add" > "Solvent-excluded surface" beside
//! what is shown (nothing replaced), the field panel's "Surface" combo between it and the Gaussian
//! surface, the command line (`rep add ses`, `rep modify N surface gaussian|ses`, a refusal for a
//! field that is not a surface), undo, the log and the session's field text. The mesh drawn is
//! checked against the atoms: no vertex inside a van der Waals sphere, every vertex within a probe
//! radius of one; the Gaussian surface of the same atoms is another mesh.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use orbitfield::app::fields::FieldChoice;
use orbitfield::app::reps::{RepId, RepKind, SpecKind};
use orbitfield::app::state::AppState;
use orbitfield::compute::molsurf::SurfaceModel;
use orbitfield::surface::MeshData;
use std::sync::Arc;

#[path = "common/journey.rs"]
mod journey;
use journey::{opened, type_command, type_line, window};

const PROBE: f32 = 1.4;

/// The kind of surface of representation `n` (1-based, as the commands number them).
fn model_of(state: &AppState, n: usize) -> SurfaceModel {
    let RepKind::Field(f) = &state.reps().list[n - 1].kind else {
        panic!("representation {n} is not a field")
    };
    let FieldChoice::MolSurf { selection } = f.field else {
        panic!("not a molecular surface: {:?}", f.field)
    };
    state.document().unwrap().surface_model(selection)
}

/// Steps the window until representation `id` has its surface (two minutes at most).
fn mesh_of(harness: &mut Harness<'static, AppState>, id: RepId) -> Arc<MeshData> {
    let t0 = std::time::Instant::now();
    loop {
        harness.step();
        if let Some(m) = harness
            .state()
            .reps()
            .field(id)
            .and_then(|f| f.pipeline.lobes[0].clone())
        {
            return m;
        }
        assert!(
            t0.elapsed().as_secs() < 120,
            "no surface: {}",
            harness.state().panels.status
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

/// The gap from each vertex to the nearest van der Waals sphere (negative inside one), Angstrom.
fn gaps(state: &AppState, mesh: &MeshData) -> Vec<f32> {
    let doc = state.document().unwrap();
    let (radii, _) = doc.structure.radii_or_element();
    mesh.positions_angstrom
        .iter()
        .map(|v| {
            doc.frame
                .positions_angstrom
                .iter()
                .zip(&radii)
                .map(|(p, r)| (0..3).map(|k| (p[k] - v[k]).powi(2)).sum::<f32>().sqrt() - r)
                .fold(f32::INFINITY, f32::min)
        })
        .collect()
}

#[test]
fn a_solvent_excluded_surface_from_the_add_menu_the_panel_and_the_command_line() {
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], true));
    harness.run();
    let before: Vec<RepId> = harness.state().reps().list.iter().map(|r| r.id).collect();
    assert!(!before.is_empty());

    // "+ Add", the selection, the entry.
    harness.get_by_label(orbitfield::ui::add::ADD_BUTTON).click();
    harness.run();
    harness.get_by_label("Selection").set_text_value_accesskit("all");
    harness.run();
    harness.get_by_label("Solvent-excluded surface").click();
    harness.run_steps(4);
    let reps = &harness.state().reps().list;
    assert_eq!(reps.len(), before.len() + 1, "added beside what was shown");
    assert!(
        before.iter().all(|id| reps.iter().any(|r| r.id == *id)),
        "nothing replaced"
    );
    let id = reps.last().unwrap().id;
    let n = reps.len();
    assert_eq!(model_of(harness.state(), n), SurfaceModel::EXCLUDED);

    // The mesh: on the atoms' spheres or the probe's, never inside an atom.
    let ses = mesh_of(&mut harness, id);
    let g = gaps(harness.state(), &ses);
    let lattice_slack = 0.15;
    let inside = g.iter().copied().fold(f32::INFINITY, f32::min);
    let outside = g.iter().copied().fold(f32::NEG_INFINITY, f32::max);
    assert!(inside > -lattice_slack, "a vertex {inside} A inside an atom");
    assert!(outside < PROBE, "a vertex {outside} A from every atom");
    // Most of a small molecule's surface is its atoms' spheres (contact faces).
    let on_spheres = g.iter().filter(|d| d.abs() < lattice_slack).count();
    assert!(
        on_spheres * 2 > g.len(),
        "{on_spheres} of {} vertices on the spheres",
        g.len()
    );
    let list = type_line(&mut harness, "rep list").unwrap().1;
    assert!(list.contains("solvent-excluded surface (probe 1.4 Å, all)"), "{list}");

    // The panel's combo, as a user picks it: the Gaussian surface of the same atoms.
    type_command(&mut harness, &format!("rep select {n}"));
    harness
        .query_all_by_role(egui::accesskit::Role::ComboBox)
        .rfind(|n| n.accesskit_node().label().as_deref() == Some("Surface"))
        .expect("the surface combo in the field panel")
        .click();
    harness.run();
    harness.get_by_label("Gaussian (smooth, fast)").click();
    harness.run();
    assert!(matches!(model_of(harness.state(), n), SurfaceModel::Gaussian { .. }));
    let gaussian = mesh_of(&mut harness, id);
    assert_ne!(gaussian.positions_angstrom.len(), ses.positions_angstrom.len());
    type_command(&mut harness, "undo");
    assert_eq!(model_of(harness.state(), n), SurfaceModel::EXCLUDED);

    // The command line, the log and the session's text.
    type_command(&mut harness, &format!("rep modify {n} surface gaussian"));
    assert!(matches!(model_of(harness.state(), n), SurfaceModel::Gaussian { .. }));
    type_command(&mut harness, &format!("rep modify {n} surface ses"));
    assert_eq!(model_of(harness.state(), n), SurfaceModel::EXCLUDED);
    let log = orbitfield::script::log::state_lines(harness.state()).join("\n");
    assert!(log.contains("rep add ses all"), "{log}");
    let rep = harness.state().reps().list.last().unwrap();
    let spec = harness.state().rep_spec(rep);
    match &spec.kind {
        SpecKind::Field { field, .. } => assert_eq!(field, "ses"),
        k => panic!("{k:?}"),
    }
    let (error, text) = type_line(&mut harness, "rep modify 1 surface ses").unwrap();
    assert!(error && text.contains("only a molecular surface"), "{text}");
    let (error, text) = type_line(&mut harness, &format!("rep modify {n} surface ses:9")).unwrap();
    assert!(
        error && text.contains("1.4 Å probe") && text.contains("grid ses --probe"),
        "{text}"
    );
    type_command(&mut harness, "rep add ses all color element");
    let last = harness.state().reps().list.last().unwrap();
    assert!(matches!(&last.kind, RepKind::Field(_)));
    assert_eq!(
        model_of(harness.state(), harness.state().reps().list.len()),
        SurfaceModel::EXCLUDED
    );
}

#[test]
fn grid_ses_writes_the_field_and_refuses_a_bad_probe() {
    let dir = tempfile::tempdir().unwrap();
    let xyz = dir.path().join("water_dimer.xyz");
    std::fs::write(
        &xyz,
        "6\nwater dimer\nO 0.000 0.000 0.000\nH 0.957 0.000 0.000\nH -0.240 0.927 0.000\n\
         O 2.900 0.000 0.000\nH 3.200 0.900 0.300\nH 3.200 -0.500 0.750\n",
    )
    .unwrap();
    let out = dir.path().join("ses.cube");
    let bin = env!("CARGO_BIN_EXE_orbitfield");
    let run = std::process::Command::new(bin)
        .args(["grid", "ses"])
        .arg(&xyz)
        .args(["--spacing", "0.3", "--probe", "1.2", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    assert!(run.status.success(), "{}", String::from_utf8_lossy(&run.stderr));
    let grid = orbitfield::io::cube::read(&out, &std::fs::read(&out).unwrap()).unwrap();
    let values = &grid.grids[0].values;
    assert!(values.iter().all(|v| (0.0..=1.0).contains(v)));
    assert!(values.iter().any(|v| *v > 0.5) && values.iter().any(|v| *v < 0.5));
    let bad = std::process::Command::new(bin)
        .args(["grid", "ses"])
        .arg(&xyz)
        .args(["--probe", "9", "-o"])
        .arg(dir.path().join("bad.cube"))
        .output()
        .unwrap();
    assert!(!bad.status.success());
    let stderr = String::from_utf8_lossy(&bad.stderr);
    assert!(stderr.contains("--probe") && stderr.contains('9'), "{stderr}");
    assert!(!dir.path().join("bad.cube").exists());
}
