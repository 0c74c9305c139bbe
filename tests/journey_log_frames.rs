//! A geometry optimisation's log that printed orbitals at its first and last steps only (GAMESS,
//! `tests/data/qm-logs`), opened in the window as a user opens it: the HOMO is drawn at frame 0; at
//! frame 3 the Orbitals panel and the orbital representation's name both say that this frame has no
//! orbitals and which frames have them, and nothing is drawn as if it had; at frame 6 the last
//! step's orbitals are back under their own name.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui_kittest::kittest::Queryable;

#[path = "common/journey.rs"]
mod journey;
use journey::{opened, type_command, window};

/// Whether some widget's text contains `text`.
fn shown(harness: &egui_kittest::Harness<'static, orbitfield::app::state::AppState>, text: &str) -> bool {
    harness.query_all_by_label_contains(text).next().is_some()
}

const NONE_HERE: &str = "No orbitals at this frame: the log printed them at frames 0 and 6 only.";

#[test]
fn an_optimisation_log_shows_its_orbitals_where_it_printed_them_and_says_so_elsewhere() {
    let state = opened(&["qm-logs/GAMESS-US2018_dvb_gopt_a.out"], true);
    assert!(state.document().is_some(), "{}", state.panels.status);
    let mut harness = window(state);
    // The HOMO's lobes are drawn at frame 0 (computed by the real worker pool).
    let drawn = |h: &egui_kittest::Harness<'static, orbitfield::app::state::AppState>| {
        h.state()
            .reps()
            .fields()
            .any(|(_, f)| f.pipeline.shown.is_some() || f.pipeline.lobes.iter().any(Option::is_some))
    };
    for _ in 0..600 {
        harness.run_steps(1);
        if drawn(&harness) {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(drawn(&harness), "the HOMO is drawn at frame 0");
    assert_eq!(harness.state().document().unwrap().frame_index, 0);
    assert!(!shown(&harness, NONE_HERE));
    assert!(
        shown(&harness, "HOMO (orbital"),
        "the HOMO's representation is listed at frame 0"
    );

    type_command(&mut harness, "frame 3");
    harness.run_steps(4);
    assert_eq!(harness.state().document().unwrap().frame_index, 3);
    assert!(shown(&harness, NONE_HERE), "the Orbitals panel says why it is empty");
    assert!(
        shown(&harness, "(orbitals at frames 0 and 6 only)"),
        "the orbital representation says this frame has none"
    );
    assert!(!shown(&harness, "HOMO (orbital"));
    assert!(harness.state().document().unwrap().wavefunction().is_none());
    assert!(!drawn(&harness), "frame 0's lobes are not drawn on frame 3");

    type_command(&mut harness, "frame 6");
    harness.run_steps(4);
    assert!(!shown(&harness, NONE_HERE));
    assert!(shown(&harness, "HOMO (orbital"));
    assert!(!shown(&harness, "orbitals at frames"));
}

/// The same log's energies: the timeline names the frame's energy and how far it lies above the
/// lowest step; a click on it opens the energy plot, whose text follows the frame.
#[test]
fn an_optimisation_log_shows_each_step_s_energy_and_plots_them() {
    let state = opened(&["qm-logs/GAMESS-US2018_dvb_gopt_a.out"], true);
    let energies = state.document().unwrap().frame_energies_hartree.clone();
    assert_eq!(energies.len(), 7);
    let mut harness = window(state);
    harness.run_steps(4);
    // GAMESS printed -382.0506353326 at the first step and -382.0506677654 at the last (the log's
    // "FINAL R-B3LYP ENERGY IS" lines): 0.02 kcal/mol apart.
    let first = "E = -382.050635 Eh, +0.02 kcal/mol above frame 6";
    let labels: Vec<String> = harness
        .query_all_by_label_contains("E =")
        .map(|n| format!("{n:?}"))
        .collect();
    assert!(
        shown(&harness, first),
        "the timeline names frame 0's energy: {labels:?}"
    );
    assert!(!harness.state().panels.energies.open);
    harness.get_by_label_contains(first).click();
    harness.run_steps(4);
    assert!(harness.state().panels.energies.open, "the link opens the plot");
    assert!(shown(&harness, "7 frames with an energy"));
    assert!(shown(&harness, "Frame 0: E = -382.050635 Eh"));

    type_command(&mut harness, "frame 6");
    harness.run_steps(4);
    assert!(shown(&harness, "Frame 6: E = -382.050668 Eh, the lowest"));
    let screen = harness.ctx.content_rect();
    let title = harness.get_by_label(orbitfield::ui::energies::TITLE).rect();
    assert!(screen.contains_rect(title), "{title:?} inside {screen:?}");
}
