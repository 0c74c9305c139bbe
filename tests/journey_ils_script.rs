//! The ligand free-energy map (implicit ligand sampling) and the RDF from the command language:
//!
//! - typed into the window's command line (real key events through egui_kittest), `ils start probe
//!   xe spacing 2 subres 1 frames 0:2` on the tz2 trajectory (AMBER prmtop with Lennard-Jones
//!   coefficients, NetCDF frames; tests/data/md/amber) computes a map of two frames that equals,
//!   voxel for voxel, the map the ILS form's Start button computes with the same values; `ils
//!   cancel` after it changes nothing;
//! - the action log of the form's and panels' commands (ILS start, pause, continue, a pathway from
//!   a picked atom, an RDF, a second map cancelled) holds `ils …` and `rdf …` lines that plan back
//!   to the same commands, and the log replayed without a window gives the same map, pathway and
//!   g(r);
//! - `rdf "…" with "…"` typed in the command line fills the RDF panel and opens its section; with the
//!   same water oxygens twice, no atom is paired with itself (nothing at r = 0, the peak at the first
//!   shell).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::app::fields::FieldService;
use orbitfield::app::ils::{IlsForm, ProbeChoice};
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use orbitfield::script::{self, RunMode};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

#[path = "common/journey.rs"]
mod journey;
use journey::{type_command, window};

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

/// The peptide of tz2 (its waters left out).
const ATOMS: &str = "not resname WAT";

fn tz2_files() -> Vec<PathBuf> {
    vec![
        data("md/amber/tz2.truncoct.parm7.bz2"),
        data("md/amber/tz2.truncoct.nc"),
    ]
}

fn open() -> AppState {
    let mut state = AppState::new(
        Settings::default(),
        FieldService::new(None, orbitfield::app::default_extractor()),
    );
    state.apply(Command::OpenFiles(tz2_files()));
    assert!(state.document().is_some(), "{}", state.panels.status);
    state
}

/// Updates `state` until its ILS maps and RDF are done.
fn finish(state: &mut AppState) {
    let t0 = Instant::now();
    while state.panels.ils.is_running() || state.panels.ils.queued() > 0 || state.panels.rdf.is_running() {
        state.update_reps();
        state.pump_rdf();
        assert!(t0.elapsed() < Duration::from_secs(600), "{}", state.panels.status);
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// The largest difference between two maps' values, kT (the lattices must agree).
fn largest_difference(a: &orbitfield::model::Grid3, b: &orbitfield::model::Grid3) -> f32 {
    assert_eq!(a.lattice.dims, b.lattice.dims);
    for k in 0..3 {
        assert!((a.lattice.origin_bohr[k] - b.lattice.origin_bohr[k]).abs() < 1e-9);
    }
    a.values
        .iter()
        .zip(&b.values)
        .map(|(x, y)| (x - y).abs())
        .fold(0.0, f32::max)
}

#[test]
fn ils_start_typed_in_the_command_line_equals_the_forms_start() {
    let mut state = open();
    // The atoms are the form's (typed there before); the command sets the rest.
    state.panels.ils.form.selection = ATOMS.into();
    state.panels.ils.form.around = ATOMS.into();
    let mut harness = window(state);
    harness.run();
    type_command(&mut harness, "ils start probe xe spacing 2 subres 1 frames 0:2");
    let t0 = Instant::now();
    while harness.state().panels.ils.is_running() {
        harness.run();
        assert!(
            t0.elapsed() < Duration::from_secs(600),
            "{}",
            harness.state().panels.status
        );
        std::thread::sleep(Duration::from_millis(5));
    }
    let want_form = IlsForm {
        probe: ProbeChoice::Xe,
        spacing_angstrom: 2.0,
        subres: 1,
        frames: "0:2".into(),
        selection: ATOMS.into(),
        around: ATOMS.into(),
        ..IlsForm::default()
    };
    let typed = harness.state().document().unwrap().ils_maps[0].clone();
    assert_eq!(harness.state().document().unwrap().ils_maps.len(), 1);
    assert_eq!(
        (typed.frames_done, typed.frames_total),
        (2, 2),
        "{}",
        harness.state().panels.status
    );
    assert!(!typed.cancelled);
    assert_eq!(typed.form, want_form);
    assert_eq!(harness.state().panels.ils.form, want_form, "the form shows the values");
    let typed_grid = typed.grid.clone().expect("the map has its frames");

    // The form's Start with the same values.
    let mut clicked = open();
    clicked.panels.ils.form = want_form.clone();
    clicked.apply(Command::StartIls);
    finish(&mut clicked);
    let m = &clicked.document().unwrap().ils_maps[0];
    assert_eq!(m.frames_done, 2);
    assert_eq!(m.map, typed.map);
    let worst = largest_difference(&typed_grid, m.grid.as_ref().unwrap());
    println!(
        "{} voxels, largest difference {worst:e} kT (engine {})",
        typed_grid.values.len(),
        typed.engine
    );
    // Both run on the same workers (the CPU engine here; where a GPU takes some frames, within
    // its float32 rounding).
    assert!(worst <= 1e-4, "the typed map differs from the form's by {worst} kT");

    // Stopping a finished map is harmless.
    let errors = harness.state().panels.error_count;
    type_command(&mut harness, "ils cancel");
    for _ in 0..5 {
        harness.run();
    }
    let after = &harness.state().document().unwrap().ils_maps[0];
    assert_eq!(harness.state().panels.error_count, errors);
    assert!(!after.cancelled && after.frames_done == 2);
    assert!(std::sync::Arc::ptr_eq(after.grid.as_ref().unwrap(), &typed_grid));
}

/// What the form and panels did, as planned back from the log: every `ils`/`rdf` line.
fn planned_lines(state: &AppState, log: &str) -> Vec<Vec<Command>> {
    let mut out = Vec::new();
    for st in script::lex::statements(log).unwrap() {
        if !matches!(st.words[0].text.as_str(), "ils" | "rdf") {
            continue;
        }
        let parsed = script::verbs::parse(&st, Path::new("/")).unwrap_or_else(|e| panic!("{e:?}: {}", st.source));
        match script::plan::plan(&parsed, state) {
            Ok(script::plan::Plan::Commands(c)) => out.push(c),
            other => panic!("{}: {other:?}", st.source),
        }
    }
    out
}

#[test]
fn the_log_of_the_ils_form_and_rdf_panel_plans_back_and_replays() {
    let mut state = AppState::new(
        Settings::default(),
        FieldService::new(None, orbitfield::app::default_extractor()),
    );
    state.observer = Some(Box::new(script::log::ActionLog::default()));
    state.push(Command::OpenFiles(tz2_files()));
    state.apply_pending();
    assert!(state.document().is_some(), "{}", state.panels.status);

    // The ILS form filled in and started, paused and continued from the field panel.
    let form = IlsForm {
        probe: ProbeChoice::Xe,
        spacing_angstrom: 2.0,
        subres: 1,
        orientations: 7,
        frames: "0:2".into(),
        selection: ATOMS.into(),
        around: String::new(),
        align: "name CA".into(),
        ..IlsForm::default()
    };
    state.panels.ils.form = form.clone();
    state.push(Command::StartIls);
    state.apply_pending();
    for c in [Command::PauseIls(true), Command::PauseIls(false)] {
        state.push(c);
        state.apply_pending();
    }
    // The RDF panel's values and its button.
    state.panels.rdf.sel1_text = "resname WAT and name O".into();
    state.panels.rdf.sel2_text = "not resname WAT and element N".into();
    state.panels.rdf.r_max_angstrom = 6.5;
    state.panels.rdf.bins = 26;
    state.push(Command::StartRdf);
    state.apply_pending();
    finish(&mut state);
    assert_eq!(state.panels.error_count, 0, "{:?}", state.panels.errors);

    // A pathway to bulk from a picked C-alpha.
    let doc = state.document().unwrap();
    let ca = (0..doc.structure.len())
        .filter(|&i| doc.structure.names[i].as_str() == "CA")
        .nth(3)
        .unwrap();
    for c in [Command::PickAtom(Some(ca)), Command::IlsPath(0, false)] {
        state.push(c);
        state.apply_pending();
    }
    assert_eq!(state.panels.error_count, 0, "{:?}", state.panels.errors);
    // A second map, stopped at once (it keeps what it has).
    state.panels.ils.form.frames = "0:1".into();
    for c in [Command::StartIls, Command::CancelIls] {
        state.push(c);
        state.apply_pending();
    }
    // Pausing and stopping with nothing running change nothing and are not written.
    for c in [Command::PauseIls(true), Command::CancelIls, Command::CancelRdf] {
        state.push(c);
        state.apply_pending();
    }
    assert_eq!(state.panels.error_count, 0, "{:?}", state.panels.errors);

    let log = script::log::of(&state).expect("a log is kept").text();
    println!("{log}");
    let second = IlsForm {
        frames: "0:1".into(),
        ..form.clone()
    };
    let want = vec![
        vec![Command::SetIlsForm(form.clone()), Command::StartIls],
        vec![Command::PauseIls(true)],
        vec![Command::PauseIls(false)],
        vec![
            Command::SetRdfForm {
                selection1: "resname WAT and name O".into(),
                selection2: "not resname WAT and element N".into(),
                r_max_angstrom: 6.5,
                bins: 26,
            },
            Command::StartRdf,
        ],
        vec![Command::IlsPathFromAtom(0, ca, false)],
        vec![Command::SetIlsForm(second), Command::StartIls],
        vec![Command::CancelIls],
    ];
    assert_eq!(planned_lines(&state, &log), want, "{log}");

    // A log begun on this document would first rebuild both maps.
    let rebuild = script::log::state_lines(&state);
    assert_eq!(rebuild[1], script::log::ils_start_line(&form), "{rebuild:?}");
    assert!(
        rebuild[2].starts_with("ils start ") && rebuild[3] == "rep delete all",
        "{rebuild:?}"
    );

    // The log replayed without a window: the same first map, pathway and g(r).
    let mut replay = script::headless_state([320, 240]);
    script::run_in(&mut replay, &log, Path::new("/"), None, RunMode::Headless).unwrap_or_else(|e| panic!("{e}\n{log}"));
    let (a, b) = (
        &state.document().unwrap().ils_maps[0],
        &replay.document().unwrap().ils_maps[0],
    );
    assert_eq!(a.form, b.form);
    assert_eq!((b.frames_done, b.paths.len()), (2, 1));
    let worst = largest_difference(a.grid.as_ref().unwrap(), b.grid.as_ref().unwrap());
    assert!(worst <= 1e-4, "the replayed map differs by {worst} kT");
    let (pa, pb) = (&a.paths[0], &b.paths[0]);
    println!(
        "path from atom {}: barrier {} kT, {} points; replayed {} kT, {} points",
        pa.from_atom + 1,
        pa.path.barrier,
        pa.path.points_angstrom.len(),
        pb.path.barrier,
        pb.path.points_angstrom.len()
    );
    assert_eq!(pa.from_angstrom, pb.from_angstrom);
    assert!((pa.path.barrier - pb.path.barrier).abs() <= 1e-3);
    assert_eq!(pa.path.points_angstrom, pb.path.points_angstrom);
    let (ga, gb) = (
        &state.panels.rdf.run.as_ref().unwrap().rdf,
        &replay.panels.rdf.run.as_ref().unwrap().rdf,
    );
    assert_eq!(ga.g.len(), 26);
    assert!(ga.g.iter().any(|&g| g > 0.0), "g(r) is all zero: {:?}", ga.g);
    assert_eq!(ga.r_angstrom, gb.r_angstrom);
    let worst_g = ga.g.iter().zip(&gb.g).map(|(x, y)| (x - y).abs()).fold(0.0, f64::max);
    assert!(worst_g <= 1e-9, "the replayed g(r) differs by {worst_g}");
}

#[test]
fn in_the_window_a_pathway_waits_for_the_map_that_is_filling_in() {
    let mut state = open();
    let doc = state.document().unwrap();
    let ca = (0..doc.structure.len())
        .filter(|&i| doc.structure.names[i].as_str() == "CA")
        .nth(3)
        .unwrap();
    let text = format!(
        "ils start probe xe sel \"{ATOMS}\" around \"{ATOMS}\" spacing 2 subres 1 frames 0:2\nils path 1 {}",
        ca + 1
    );
    let report = script::run_in(&mut state, &text, Path::new("/"), None, RunMode::Window).unwrap();
    assert!(report.waiting, "the pathway waits for the map");
    assert_eq!(report.statements, 1);
    assert!(state.document().unwrap().ils_maps[0].paths.is_empty());
    // The window's updates, and the command line going on with the script at each.
    let t0 = Instant::now();
    while let Some(r) = state.panels.console.resume.take() {
        state.update_reps();
        script::resume(&mut state, &r).unwrap_or_else(|e| panic!("{e}"));
        assert!(t0.elapsed() < Duration::from_secs(600), "{}", state.panels.status);
        std::thread::sleep(Duration::from_millis(5));
    }
    let m = &state.document().unwrap().ils_maps[0];
    assert_eq!(m.frames_done, 2, "the pathway is found on the whole map");
    assert_eq!(m.paths.len(), 1, "{}", state.panels.status);
    assert_eq!(m.paths[0].from_atom, ca);
    assert_eq!(m.paths[0].frames, 2);
}

/// `rdf "…" with "…"` typed in the command line (each side quoted) fills the RDF panel and opens its
/// section, which starts closed, so the g(r) being computed is in view inside the right panel.
#[test]
fn rdf_typed_in_the_command_line_opens_the_panel() {
    use egui_kittest::kittest::Queryable;
    let state = open();
    let mut harness = window(state);
    harness.run();
    assert!(
        harness.query_by_label("Selection 1").is_none(),
        "the RDF section starts closed"
    );
    type_command(
        &mut harness,
        r#"rdf "resname WAT and name O" with "resname WAT and name O" rmax 6 bins 60"#,
    );
    harness.run();
    let rdf = &harness.state().panels.rdf;
    assert_eq!(rdf.sel1_text, "resname WAT and name O");
    assert_eq!(rdf.sel2_text, "resname WAT and name O");
    assert_eq!((rdf.r_max_angstrom, rdf.bins), (6.0, 60));
    let label = harness.get_by_label("Selection 1");
    let r = label.rect();
    assert!(
        r.min.x >= 1280.0 * 0.5 && r.max.x <= 1280.0,
        "the panel's field sits in the right panel: {r:?}"
    );
    finish(harness.state_mut());
    let rdf = &harness.state().panels.rdf;
    assert!(rdf.error.is_none(), "{:?}", rdf.error);
    // The same atoms twice: no atom is paired with itself, so nothing sits at r = 0 and the highest
    // bin is water's first shell (2.5-3.1 A), as in VMD's gofr.
    let g = &rdf.run.as_ref().unwrap().rdf;
    assert_eq!(g.g[0], 0.0, "self pairs counted at r = 0: {:?}", &g.g[..3]);
    let peak = (0..g.g.len()).max_by(|&a, &b| g.g[a].total_cmp(&g.g[b])).unwrap();
    assert!(
        (2.5..3.1).contains(&g.r_angstrom[peak]),
        "highest bin at {} A",
        g.r_angstrom[peak]
    );
    // g(r) is plotted alone on its own scale; the cumulative count is the other choice.
    assert!(!harness.state().panels.rdf.show_cumulative);
    harness.run();
    harness.get_by_label("n(r)").click();
    harness.run();
    assert!(harness.state().panels.rdf.show_cumulative);
}
