//! A chemist's ESP-on-density picture from two PySCF cube files (water's density and its
//! molecular electrostatic potential, `tests/data/engine`): the density's 0.002 a.u. surface
//! coloured by the potential map through the command language, as a script run at start-up does
//! (before the surface exists).
//!
//! - The colour range comes from the potential on the surface, not from the whole map (whose
//!   values near the nuclei are tens of times larger and would leave the surface one colour).
//! - `color 2 volume:2 range LOW HIGH` sets the colormap's ends in the legend's unit, `range auto`
//!   goes back to the surface's; extra words are refused at their column.
//! - `slice` on the coloured surface cuts the potential it is coloured by.
//! - Space does not start playback of a single geometry.
//! - A density cube's surface starts translucent (an orbital cube's opaque).

#![allow(clippy::unwrap_used, clippy::expect_used)]

use orbitfield::app::fields::FieldChoice;
use orbitfield::app::state::AppState;
use orbitfield::script::{self, RunMode};

#[path = "common/journey.rs"]
mod journey;

fn run(state: &mut AppState, line: &str) -> Result<(), String> {
    let dir = std::env::temp_dir();
    script::run_in(state, line, &dir, None, RunMode::Window)
        .map(|_| ())
        .map_err(|e| format!("{}:{}: {}", e.line, e.column, e.message))
}

/// The density surface representation (the one coloured by the map).
fn density_rep(state: &AppState) -> &orbitfield::app::reps::FieldRep {
    state
        .reps()
        .fields()
        .find(|(_, f)| f.is_surface())
        .map(|(_, f)| f)
        .expect("the density's surface")
}

/// The 2nd-98th percentile half-width of |values| (what a range "from the values" spans).
fn spread(values: &mut [f32]) -> f32 {
    values.sort_by(|a, b| a.abs().total_cmp(&b.abs()));
    values[(values.len() - 1) * 98 / 100].abs()
}

#[test]
fn a_potential_cube_colours_the_density_surface_over_the_surfaces_values() {
    let mut state = journey::opened(&["engine/water_density_24.cube", "engine/water_mep_24.cube"], false);
    assert!(
        !density_rep(&state).has_lobes(),
        "a start-up script runs before the surface exists"
    );
    // A density read from a cube starts translucent, as a computed one does; an orbital's is opaque.
    assert_eq!(density_rep(&state).opacity, orbitfield::app::reps::DENSITY_OPACITY);
    let homo = journey::opened(&["engine/water_homo_24.cube"], false);
    assert_eq!(density_rep(&homo).opacity, 1.0);
    // Gaussian's cubegen titles a potential "Electrostatic potential from Total SCF Density": a
    // potential, opaque.
    let dir = tempfile::tempdir().unwrap();
    let gaussian = dir.path().join("esp.cube");
    let mep = std::fs::read_to_string(journey::data("engine/water_mep_24.cube")).unwrap();
    let body = mep.split_once('\n').unwrap().1;
    std::fs::write(
        &gaussian,
        format!("Electrostatic potential from Total SCF Density\n{body}"),
    )
    .unwrap();
    let potential = journey::opened(&[gaussian.to_str().unwrap()], false);
    assert_eq!(density_rep(&potential).opacity, 1.0);
    run(&mut state, "color 2 volume:2").unwrap();
    for _ in 0..50 {
        state.update_reps();
        if density_rep(&state).coloring.and_then(|c| c.range).is_some() {
            break;
        }
    }
    let f = density_rep(&state);
    let c = f.coloring.expect("coloured");
    assert!(matches!(c.source, FieldChoice::Volume(_)));
    let range = c.range.expect("a range once the surface exists");
    assert!(f.has_lobes());

    // The map at the surface's vertices, and the whole map, sampled independently.
    let FieldChoice::Volume(v) = c.source else {
        unreachable!()
    };
    let grid = state.document().unwrap().grids[v].clone();
    assert!(
        grid.description.to_lowercase().contains("electrostatic"),
        "{}",
        grid.description
    );
    let mut on_surface: Vec<f32> = f
        .pipeline
        .lobes
        .iter()
        .flatten()
        .flat_map(|m| m.positions_angstrom.iter())
        .filter_map(|p| grid.trilinear_at_angstrom(*p, false))
        .collect();
    assert!(on_surface.len() > 100, "{} vertices", on_surface.len());
    let surface_spread = spread(&mut on_surface);
    let map_spread = spread(&mut grid.values.clone());
    println!("range {range:?} a.u.; on the surface {surface_spread}, whole map {map_spread}");
    assert!(range[0] < 0.0 && range[1] == -range[0], "{range:?}");
    assert!(
        (range[1] - surface_spread).abs() < 0.05 * surface_spread,
        "the surface's values ({surface_spread}) set the range {range:?}"
    );
    assert!(
        map_spread > 3.0 * surface_spread,
        "the whole map's spread {map_spread} is far wider"
    );

    // The colormap's ends typed in the legend's unit, then back to the surface's.
    run(&mut state, "color 2 volume:2 range -0.05 0.05").unwrap();
    state.update_reps();
    let legend = state
        .legends()
        .into_iter()
        .find(|l| l.title.contains("surface"))
        .expect("a legend");
    assert!(
        (legend.range[0] + 0.05).abs() < 1e-6 && (legend.range[1] - 0.05).abs() < 1e-6 && legend.unit == "a.u.",
        "{legend:?}"
    );
    assert_eq!(density_rep(&state).coloring.unwrap().range, Some([-0.05, 0.05]));
    run(&mut state, "color 2 volume:2 range auto").unwrap();
    state.update_reps();
    let auto = density_rep(&state).coloring.unwrap().range.unwrap();
    assert!((auto[1] - surface_spread).abs() < 0.05 * surface_spread, "{auto:?}");

    // Words the statement does not take are refused where they stand.
    let e = run(&mut state, "color 2 volume:2 extra").unwrap_err();
    assert!(e.contains("unexpected 'extra'") && e.starts_with("1:18:"), "{e}");
    let e = run(&mut state, "color 2 volume:2 range 0.1 -0.1").unwrap_err();
    assert!(e.contains("low end must be below"), "{e}");
    let e = run(&mut state, "color 2 red blue green").unwrap_err();
    assert!(
        e.contains("unexpected 'green' (a surface takes two colours)") && e.starts_with("1:18:"),
        "{e}"
    );

    // A slice of the coloured surface cuts the potential.
    run(&mut state, "slice z").unwrap();
    assert_eq!(state.slice_field(), Ok(c.source));
}

/// Space plays a trajectory; a single geometry has nothing to play, and the timeline stays as it is.
#[test]
fn space_does_not_play_a_single_geometry() {
    let state = journey::opened(&["engine/water_density_24.cube"], false);
    let mut harness = journey::window(state);
    harness.run();
    harness.key_press(egui::Key::Space);
    harness.run();
    assert!(!harness.state().view.timeline.playing, "one frame: nothing plays");
    let mut state = journey::opened(&["md/adk.psf", "md/adk_dims.dcd"], false);
    state.apply(orbitfield::app::state::Command::TogglePlaying);
    assert!(state.view.timeline.playing, "98 frames play");
}
