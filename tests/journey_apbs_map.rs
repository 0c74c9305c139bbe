//! An APBS potential map opened beside its molecule (`tests/data/pb/apbs_map/res1-4_pot.dx.gz`,
//! written by APBS 3.4.1 from `small.in`: "# Data from APBS 3.4.1", "# POTENTIAL (kT/e)") is drawn
//! as the potentials computed here are: its isosurfaces red at -1 kT/e and blue at +1, its slice and
//! a surface coloured by it on the red-white-blue scale (red negative), every number in kT/e, not in
//! "(file units)". A volume that names no potential keeps the file's units and the diverging scale.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui_kittest::Harness;
use orbitfield::app::fields::{FieldBackend, FieldChoice, FieldService, InlineBackend};
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use orbitfield::render::colormap::Colormap;
use std::path::PathBuf;
use std::time::{Duration, Instant};

fn data(rel: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data").join(rel)
}

fn window(state: AppState) -> Harness<'static, AppState> {
    Harness::builder().with_size(egui::vec2(1280.0, 900.0)).build_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::main_ui(ui, state);
            state.apply_pending();
            state.update_reps();
        },
        state,
    )
}

fn run_until(harness: &mut Harness<'static, AppState>, what: &str, done: impl Fn(&AppState) -> bool) {
    let t0 = Instant::now();
    while !done(harness.state()) {
        harness.step();
        assert!(t0.elapsed() < Duration::from_secs(120), "{what} never happened");
        std::thread::sleep(Duration::from_millis(5));
    }
}

#[test]
fn an_apbs_map_is_drawn_red_negative_in_kt_per_e() {
    let backend = orbitfield::app::blocking_engine().map(|e| Box::new(InlineBackend::new(e)) as Box<dyn FieldBackend>);
    let mut state = AppState::new(
        Settings::default(),
        FieldService::new(backend, orbitfield::app::default_extractor()),
    );
    state.apply(Command::OpenFiles(vec![
        data("pb/adk_res1-4.pqr"),
        data("pb/apbs_map/res1-4_pot.dx.gz"),
    ]));
    assert!(state.document().is_some(), "{}", state.panels.status);
    let map = FieldChoice::Volume(0);
    assert!(state.is_electrostatic(map));
    assert_eq!(state.field_unit(map).label, "kT/e");
    assert_eq!(state.coloring_unit(map).label, "kT/e");

    // Its isosurfaces: blue positive, red negative, as a computed potential's.
    state.apply(Command::AddFieldRep(map));
    let (_, f) = state.reps().fields().find(|(_, f)| f.field == map).unwrap();
    let [pc, nc] = f.colors;
    assert!(pc[2] > pc[0] && nc[0] > nc[2], "{pc:?} {nc:?}");

    // Its slice, in kT/e on the red-white-blue scale.
    let mut harness = window(state);
    harness.state_mut().apply(Command::SetShowSlice(true));
    harness.run_steps(4);
    run_until(&mut harness, "the slice", |st| {
        st.legends().iter().any(|l| l.title.ends_with(", slice"))
    });
    let legends = harness.state().legends();
    let slice = legends.iter().find(|l| l.title.ends_with(", slice")).unwrap();
    assert_eq!(slice.unit, "kT/e");
    assert_eq!(slice.colormap, Colormap::RedWhiteBlue);
    // The range the solver's own map starts at (+-5 kT/e), not the map's extremes; the legend names
    // the map by its own title.
    assert_eq!(slice.range, [-5.0, 5.0]);
    assert!(slice.title.contains("volume 1: Data from APBS"), "{}", slice.title);
    // A molecular surface coloured by the map starts at the same +-5 kT/e.
    let mut spec = orbitfield::app::reps::RepSpec::field("molsurf", orbitfield::app::reps::FieldStyle::Isosurface);
    if let orbitfield::app::reps::SpecKind::Field { color_volume, .. } = &mut spec.kind {
        *color_volume = Some(0);
    }
    harness.state_mut().apply(Command::AddRep(spec));
    let coloring = harness
        .state()
        .reps()
        .fields()
        .find_map(|(_, f)| f.coloring.filter(|c| c.source == map))
        .expect("a surface coloured by the map");
    assert_eq!(coloring.range, Some([-5.0, 5.0]));

    // A density's cube (a volume that names no potential) keeps its scale.
    let mut other = AppState::new(Settings::default(), FieldService::default());
    other.apply(Command::OpenFiles(vec![data(
        "qm/esp/threonine_hf_631gs_cart.density_lattice.cube.gz",
    )]));
    assert!(!other.is_electrostatic(FieldChoice::Volume(0)));
    assert_eq!(other.field_unit(FieldChoice::Volume(0)).label, "(file units)");
}
