//! Journey of the Poisson-Boltzmann colouring, driven through egui_kittest on the whole window's UI:
//! on adk (tests/data/md/adk.psf + adk_dims.dcd, CHARMM charges from the PSF, radii by element),
//! add the protein's molecular surface coloured by the Poisson-Boltzmann potential through the
//! "+ Add" menu, then play three frames one at a time. At every frame the surface's colouring shows
//! that frame's solution, the legend names the model and its parameters at +-5 kT/e, and the
//! potential at the surface's vertices takes both signs (a protein's surface has acidic and basic
//! patches). The molecular surface is computed by the CPU engine inline on a small lattice; the
//! Poisson-Boltzmann solve runs on the CPU engine's worker at a coarse 1.5 A spacing.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::fields::{FieldBackend, FieldChoice, FieldService, InlineBackend};
use orbitfield::app::reps::RepId;
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use orbitfield::compute::pb::PbEngine;
use std::time::{Duration, Instant};

#[path = "common/adk_state.rs"]
mod adk_state;
use adk_state::data;

/// adk with the CPU engine computing fields inline and the PB worker on the CPU at 1.5 A.
fn adk_with_engines() -> AppState {
    let backend = orbitfield::app::blocking_engine().map(|e| Box::new(InlineBackend::new(e)) as Box<dyn FieldBackend>);
    let settings = Settings {
        lattice_points: 32,
        ..Settings::default()
    };
    let mut state = AppState::new(
        settings,
        FieldService::new(backend, orbitfield::app::default_extractor()),
    );
    state.pb.engine = PbEngine::Cpu;
    state.pb.spacing_angstrom = 1.5;
    state.apply(Command::OpenFiles(vec![data("md/adk.psf"), data("md/adk_dims.dcd")]));
    assert!(state.document().is_some(), "{}", state.panels.status);
    state
}

fn window(state: AppState) -> Harness<'static, AppState> {
    Harness::builder().with_size(egui::vec2(1280.0, 800.0)).build_ui_state(
        |ui, state: &mut AppState| {
            orbitfield::ui::main_ui(ui, state);
            state.apply_pending();
            state.update_reps();
        },
        state,
    )
}

/// Runs frames until `done` holds, at most two minutes.
fn run_until(harness: &mut Harness<'static, AppState>, what: &str, done: impl Fn(&AppState) -> bool) {
    let t0 = Instant::now();
    while !done(harness.state()) {
        harness.step();
        assert!(t0.elapsed() < Duration::from_secs(120), "{what} never happened");
        std::thread::sleep(Duration::from_millis(5));
    }
}

/// At frame `frame`: the colouring shows that frame's Poisson-Boltzmann solution, the legend names
/// the model at +-5 kT/e, and the vertices' potentials take both signs beyond +-0.5 kT/e.
fn check_frame(harness: &mut Harness<'static, AppState>, id: RepId, frame: usize) {
    run_until(harness, &format!("frame {frame}'s PB colours"), |st| {
        st.reps()
            .field(id)
            .is_some_and(|f| f.color_shows_frame(frame) && f.pipeline.lobes[0].is_some())
    });
    let st = harness.state();
    assert!(st.pb.failure.is_none(), "{:?}", st.pb.failure);
    let f = st.reps().field(id).unwrap();
    let c = f.coloring.unwrap();
    assert!(matches!(c.source, FieldChoice::PotentialPb { .. }));
    assert_eq!(c.range, Some([-5.0, 5.0]), "the default range is +-5 kT/e");
    let legends = st.legends();
    let legend = legends
        .iter()
        .find(|l| l.title.contains("Poisson-Boltzmann, 0.15 M, eps 2/78.5"))
        .unwrap_or_else(|| {
            panic!(
                "a legend names the model: {:?}",
                legends.iter().map(|l| &l.title).collect::<Vec<_>>()
            )
        });
    assert_eq!(legend.unit, "kT/e");
    assert_eq!(legend.range, [-5.0, 5.0]);
    let (key, grid) = f.pipeline.color.as_ref().unwrap().shown.as_ref().unwrap();
    assert_eq!(key.frame, frame);
    assert!(grid.description.contains("Poisson-Boltzmann"), "{}", grid.description);
    let mut values = Vec::new();
    for mesh in f.pipeline.lobes.iter().flatten() {
        values.extend(
            mesh.positions_angstrom
                .iter()
                .filter_map(|p| grid.trilinear_at_angstrom(*p, false)),
        );
    }
    let negative = values.iter().filter(|v| **v < -0.5).count();
    let positive = values.iter().filter(|v| **v > 0.5).count();
    let (lo, hi) = values
        .iter()
        .fold((f32::MAX, f32::MIN), |(a, b), v| (a.min(*v), b.max(*v)));
    println!(
        "frame {frame}: {} vertices, {negative} below -0.5 kT/e, {positive} above +0.5 kT/e, range {lo:.2}..{hi:.2} kT/e; last solve {:?}",
        values.len(),
        st.pb.last_solve
    );
    assert!(values.len() > 1000, "{} vertices", values.len());
    assert!(
        negative > 50 && positive > 50,
        "both signs on the surface: {negative} negative, {positive} positive"
    );
    assert!(lo > -1000.0 && hi < 1000.0, "screened, not a vacuum sum: {lo}..{hi}");
}

#[test]
fn surface_coloured_by_poisson_boltzmann_plays_three_frames() {
    let mut harness = window(adk_with_engines());
    harness.run();
    assert!(harness.state().pb_unavailable().is_none(), "adk's PSF carries charges");

    harness.get_by_label(orbitfield::ui::add::ADD_BUTTON).click();
    harness.run();
    harness.get_by_label("Selection").set_text_value_accesskit("protein");
    harness.run();
    harness.get_by_label(orbitfield::ui::pb::ADD_PB_SURFACE).click();
    harness.run();
    let id = harness
        .state()
        .reps()
        .fields()
        .find(|(_, f)| matches!(f.field, FieldChoice::MolSurf { .. }))
        .map(|(r, _)| r.id)
        .expect("a molecular surface was added");
    check_frame(&mut harness, id, 0);
    // adk's PSF gives no radii: the element radii are said on the status line.
    assert!(
        harness.state().panels.status.contains("radii") || harness.state().panels.errors.is_empty(),
        "{}",
        harness.state().panels.status
    );

    // Play three frames, one at a time.
    for frame in 1..=3 {
        harness.get_by_label("Play").click();
        harness.run();
        let fps = harness.state().view.timeline.fps;
        harness.state_mut().tick(1.0 / fps + 1e-4);
        harness.run();
        harness.get_by_label("Pause").click();
        harness.run();
        assert_eq!(harness.state().document().unwrap().frame_index, frame);
        check_frame(&mut harness, id, frame);
    }
}
