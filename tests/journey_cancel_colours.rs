//! A protein's molecular surface coloured by its charges' potential at every vertex, on the
//! vertex-values thread, as the window does it: while the colours are computed the status bar shows
//! "colouring surfaces at their vertices…" with Cancel. A click on Cancel stops the colouring (the
//! thread is free again), says so on the status line and in the legend, and the surface is not
//! coloured for that frame behind the user's back; the next frame is coloured again, and its colours
//! are the charges' potential at the vertices.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

#[path = "common/journey.rs"]
mod journey;

use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use journey::{opened, window};
use orbitfield::app::fields::FieldChoice;
use orbitfield::app::reps::{FieldStyle, RepEdit, RepId, RepSpec};
use orbitfield::app::state::{AppState, Command};
use std::time::{Duration, Instant};

const PROGRESS: &str = "colouring surfaces at their vertices…";

fn in_flight(state: &AppState) -> bool {
    state.view.vertex_values.as_ref().is_some_and(|w| w.any_in_flight())
}

/// Steps the window until `done` (at most three minutes).
fn run_until(harness: &mut Harness<'static, AppState>, what: &str, done: impl Fn(&Harness<'static, AppState>) -> bool) {
    let t0 = Instant::now();
    while !done(harness) {
        harness.step();
        assert!(t0.elapsed() < Duration::from_secs(180), "{what} never happened");
        std::thread::sleep(Duration::from_millis(5));
    }
}

fn colours_of_frame(state: &AppState, id: RepId, frame: usize) -> bool {
    let f = state.reps().field(id).unwrap();
    f.wanted_vertex_key().is_some_and(|k| k.mesh.field.frame == frame) && f.vertex_values().is_some()
}

#[test]
fn cancel_stops_the_colouring_and_the_next_frame_is_coloured_again() {
    let mut state = opened(&["md/adk.psf", "md/adk_dims.dcd"], true);
    assert!(state.document().is_some(), "{}", state.panels.status);
    assert!(state.color_vertices_off_thread());
    let id = state
        .add_rep(&RepSpec::field("molsurf:protein", FieldStyle::Isosurface))
        .unwrap();
    let mut harness = window(state);
    run_until(&mut harness, "the surface", |h| {
        h.state().reps().field(id).is_some_and(|f| f.has_lobes())
    });
    harness.state_mut().apply(Command::EditRep(
        id,
        RepEdit::ColorBy(Some((FieldChoice::Potential, None))),
    ));

    // The colouring runs: the progress line shows with its Cancel (a frame already coloured, when
    // the colours came back before the window drew, is stepped past until one is caught running).
    let mut frame = 0;
    loop {
        harness.step();
        // Caught running for the surface of the frame shown (not an earlier frame's colouring
        // still running while the new frame's surface is being made: that surface, arriving after
        // Cancel, would rightly ask for its own colours).
        let st = harness.state();
        let shown_frame = st.document().map(|d| d.frame_index);
        let current = st
            .reps()
            .field(id)
            .and_then(|f| f.wanted_vertex_key())
            .is_some_and(|k| Some(k.mesh.field.frame) == shown_frame);
        if current && in_flight(st) && harness.query_by_label(PROGRESS).is_some() {
            break;
        }
        if colours_of_frame(harness.state(), id, frame) {
            frame += 1;
            assert!(
                frame < 10,
                "the colours always came back before the window showed them running"
            );
            harness.state_mut().apply(Command::SetFrame(frame));
        }
    }
    let cancel = harness
        .query_all_by_label("Cancel")
        .last()
        .expect("Cancel beside the progress line")
        .rect();
    let line = harness.get_by_label(PROGRESS).rect();
    assert!(
        (cancel.center().y - line.center().y).abs() < 10.0 && cancel.left() > line.left(),
        "Cancel {cancel:?} beside the progress line {line:?}"
    );
    // A click lands in the next frame; one that finds the line gone (the colours came back) or the
    // button moved with the percentage is clicked again while the colouring still runs.
    for _ in 0..5 {
        harness.get_all_by_label("Cancel").last().unwrap().click();
        harness.run_steps(3);
        let f = harness.state().reps().field(id).unwrap();
        if f.colours_cancelled() || !in_flight(harness.state()) || harness.query_by_label(PROGRESS).is_none() {
            break;
        }
    }

    let state = harness.state();
    assert!(!in_flight(state), "the colouring is cancelled");
    assert!(!state.busy(), "nothing is waited for after Cancel");
    assert!(state.panels.status.contains("cancelled"), "{}", state.panels.status);
    assert!(harness.query_by_label(PROGRESS).is_none(), "the progress line is gone");
    let f = state.reps().field(id).unwrap();
    assert!(f.colours_cancelled());
    assert!(f.vertex_values().is_none(), "no colours for the cancelled frame");
    let legends = state.legends();
    assert!(
        legends.iter().any(|l| l.title.contains("colouring cancelled")),
        "{:?}",
        legends.iter().map(|l| &l.title).collect::<Vec<_>>()
    );
    // The cancelled frame is not asked for again by itself.
    harness.run_steps(5);
    assert!(
        !in_flight(harness.state()),
        "the cancelled colours were asked for again"
    );

    // The next frame is coloured again, by its charges' potential (eps = 4r by default here).
    let next = frame + 1;
    harness.state_mut().apply(Command::SetFrame(next));
    run_until(&mut harness, "the next frame's colouring asked for", |h| {
        in_flight(h.state()) || colours_of_frame(h.state(), id, next)
    });
    assert!(
        !harness.state().panels.status.contains("cancelled"),
        "the word that colouring was cancelled goes once it is asked for again: {}",
        harness.state().panels.status
    );
    run_until(&mut harness, "the next frame's colours", |h| {
        colours_of_frame(h.state(), id, next)
    });
    let state = harness.state();
    let f = state.reps().field(id).unwrap();
    assert!(!f.colours_cancelled());
    let legends = state.legends();
    assert!(
        legends
            .iter()
            .any(|l| l.title.contains("eps = 4r") && !l.title.contains("cancelled")),
        "{:?}",
        legends.iter().map(|l| &l.title).collect::<Vec<_>>()
    );
    let values = f.vertex_values().unwrap();
    let mesh = f.pipeline.lobes[0].as_ref().unwrap();
    let v = values[0].as_ref().unwrap();
    assert_eq!(v.len(), mesh.positions_angstrom.len());
    // Against the distance-dependent dielectric's own sum at the frame's atoms, in float64:
    // V = sum q / (4 r r) with eps = 4r (r in Angstrom), in hartree/e.
    let files = [journey::data("md/adk.psf"), journey::data("md/adk_dims.dcd")];
    let mut reference = orbitfield::io::load(&files).unwrap();
    let charges = reference.structure.charges_e.clone().unwrap();
    let positions = reference.trajectory.frame(next).unwrap().positions_angstrom;
    let mut checked = 0;
    for (p, &got) in mesh.positions_angstrom.iter().zip(v.iter()).step_by(97) {
        let (mut want, mut terms_abs) = (0.0f64, 0.0f64);
        for (c, &q) in positions.iter().zip(&charges) {
            let mut r2 = 0.0;
            for k in 0..3 {
                r2 += (f64::from(p[k]) - f64::from(c[k])).powi(2);
            }
            let r_angstrom = r2.sqrt();
            let term = f64::from(q) / (4.0 * r_angstrom * (r_angstrom / BOHR_ANGSTROM));
            want += term;
            terms_abs += term.abs();
        }
        // f32 terms: their rounding scales with the terms' magnitudes where they cancel.
        assert!(
            (f64::from(got) - want).abs() <= 1e-4 * want.abs() + 1e-6 * terms_abs,
            "vertex {p:?}: {got} hartree/e, the eps = 4r sum gives {want}"
        );
        checked += 1;
    }
    assert!(checked > 20, "{checked} vertices checked");
}

/// CODATA 2018, written out here (not the library's unit module).
const BOHR_ANGSTROM: f64 = 0.529_177_210_903;
