//! The Ramachandran plot, as a user opens it: on adk (tests/data/md), *Measure > Ramachandran plot*
//! shows phi and psi of every residue with both, and they are MDAnalysis's `Ramachandran` angles
//! (tests/data/measure/adk_rama.json) at frame 0 and, after stepping, at frame 40; the chain's ends
//! have one angle each and are not plotted; the window closes with its ×.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui_kittest::kittest::Queryable;
use orbitfield::app::state::Command;

#[path = "common/adk_state.rs"]
mod adk_state;
#[path = "common/panel_fit.rs"]
mod panel_fit;
use adk_state::{adk, data};

/// MDAnalysis's (resid, phi, psi) at frame `f`.
fn reference(f: usize) -> Vec<(i32, f64, f64)> {
    let text = std::fs::read_to_string(data("measure/adk_rama.json")).unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    let resids = v["resids"].as_array().unwrap();
    v["frames"][f.to_string()]
        .as_array()
        .unwrap()
        .iter()
        .zip(resids)
        .map(|(a, r)| {
            (
                r.as_i64().unwrap() as i32,
                a[0].as_f64().unwrap(),
                a[1].as_f64().unwrap(),
            )
        })
        .collect()
}

/// The window's points as (resid, phi, psi), both angles defined.
fn shown(state: &orbitfield::app::state::AppState) -> Vec<(i32, f64, f64)> {
    let doc = state.document().unwrap();
    let starts = doc.structure.residue_starts();
    let (_, points) = state.panels.ramachandran.points.as_ref().expect("points");
    points
        .iter()
        .filter_map(|(p, _, _)| {
            let resid = doc.structure.resids[starts[p.residue]];
            Some((resid, p.phi_degree?, p.psi_degree?))
        })
        .collect()
}

fn angle_diff(a: f64, b: f64) -> f64 {
    ((a - b + 540.0).rem_euclid(360.0) - 180.0).abs()
}

#[test]
fn the_plot_shows_mdanalysis_s_angles_and_follows_the_frame() {
    let mut harness = panel_fit::window_of(adk(), [1280.0, 800.0], true);
    harness.run();
    harness.get_by_label("Measure").click();
    harness.run();
    harness.get_by_label(orbitfield::ui::ramachandran::TITLE).click();
    harness.run();
    assert!(harness.state().panels.ramachandran.open);
    assert!(harness.query_by_label_contains("212 residues at this frame").is_some());
    for frame in [0usize, 40] {
        if frame > 0 {
            harness.state_mut().push(Command::SetFrame(frame));
            harness.run();
            harness.step();
        }
        let got = shown(harness.state());
        let want = reference(frame);
        assert_eq!(got.len(), want.len(), "frame {frame}");
        for ((r, phi, psi), (wr, wphi, wpsi)) in got.iter().zip(&want) {
            assert_eq!(r, wr);
            assert!(
                angle_diff(*phi, *wphi) < 0.01 && angle_diff(*psi, *wpsi) < 0.01,
                "frame {frame} residue {r}: ({phi}, {psi}) against ({wphi}, {wpsi})"
            );
        }
    }
    // The chain's ends: one angle each, not plotted.
    let (_, points) = harness.state().panels.ramachandran.points.as_ref().unwrap();
    assert!(points.first().unwrap().0.phi_degree.is_none());
    assert!(points.last().unwrap().0.psi_degree.is_none());
    // Escape closes the plot, as it does the other windows.
    harness.key_press(egui::Key::Escape);
    harness.run();
    assert!(!harness.state().panels.ramachandran.open, "Escape closes the plot");
}
