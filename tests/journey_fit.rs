//! Frames fitted onto frame 0, as a user of VMD's RMSD trajectory tool, ChimeraX's `align` or
//! PyMOL's `intra_fit` expects (`app::fit`):
//!
//! - The solvated AdK of `adk_oplsaa.gro` + `.xtc` (a rhombic dodecahedron box), made whole, then
//!   "Fit frames to frame 0" in the View menu: the status line names the atoms (214 C-alpha) and
//!   says the box is not drawn; the shown frame loses its box, and the document takes a new id
//!   (every computed field is computed again on the moved coordinates).
//! - The last frame, fitted, against properties any least-squares fit must have, checked without
//!   the fit's own code: its C-alpha centroid is frame 0's; no small rotation about that centroid
//!   nor small shift lowers the C-alpha RMSD (a minimum); every distance between atoms is the
//!   frame's as read (a rigid motion).
//! - `fit off` gives the frame as read, with its box; a selection of no atoms, or a wavefunction's
//!   single geometry, is refused in words and fits nothing.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui_kittest::kittest::Queryable;

#[path = "common/journey.rs"]
mod journey;
use journey::{opened, type_command, type_line, window};

type P = [f64; 3];

fn ca_positions(state: &orbitfield::app::state::AppState) -> Vec<P> {
    let doc = state.document().unwrap();
    let ca = orbitfield::model::select::Selection::parse("protein and name CA")
        .unwrap()
        .indices(&doc.structure, Some(&doc.frame));
    ca.iter()
        .map(|&i| doc.frame.positions_angstrom[i as usize].map(f64::from))
        .collect()
}

fn centroid(p: &[P]) -> P {
    let mut c = [0.0; 3];
    for q in p {
        for k in 0..3 {
            c[k] += q[k] / p.len() as f64;
        }
    }
    c
}

fn rmsd(a: &[P], b: &[P]) -> f64 {
    let s: f64 = a
        .iter()
        .zip(b)
        .map(|(p, q)| (0..3).map(|k| (p[k] - q[k]).powi(2)).sum::<f64>())
        .sum();
    (s / a.len() as f64).sqrt()
}

/// `p` turned by `angle` radians about axis `k` (0 x, 1 y, 2 z) through `c`, then shifted by `t`.
fn moved(p: &[P], c: P, k: usize, angle: f64, t: P) -> Vec<P> {
    let (s, co) = angle.sin_cos();
    let (a, b) = ((k + 1) % 3, (k + 2) % 3);
    p.iter()
        .map(|q| {
            let mut r = [q[0] - c[0], q[1] - c[1], q[2] - c[2]];
            let (x, y) = (r[a], r[b]);
            r[a] = co * x - s * y;
            r[b] = s * x + co * y;
            [r[0] + c[0] + t[0], r[1] + c[1] + t[1], r[2] + c[2] + t[2]]
        })
        .collect()
}

#[test]
fn frames_fitted_onto_frame_0_hold_the_protein_still_and_stay_rigid() {
    let mut harness = window(opened(&["md/adk_oplsaa.gro", "md/adk_oplsaa.xtc"], false));
    harness.run();
    let n = harness.state().document().unwrap().n_frames;
    assert!(n > 2, "{n} frames");
    let reference = ca_positions(harness.state());
    // The last frame as read (made whole), before any fit.
    type_command(&mut harness, &format!("frame {}", n - 1));
    let raw = harness.state().document().unwrap().frame.clone();
    assert!(raw.cell.is_some());
    let raw_ca = ca_positions(harness.state());
    let id = harness.state().document().unwrap().id;
    // The View menu's checkbox (the menu bar's "View" is the topmost; the left panel has a "View"
    // section below it).
    harness
        .get_all_by_label("View")
        .min_by(|a, b| a.rect().min.y.total_cmp(&b.rect().min.y))
        .unwrap()
        .click();
    harness.run();
    harness.get_by_label("Fit frames to frame 0").click();
    harness.run();
    let state = harness.state();
    let status = state.panels.status.clone();
    assert!(
        status.contains("frames fitted onto frame 0 by 214 atoms (protein and name CA)")
            && status.contains("periodic box is not drawn"),
        "{status}"
    );
    assert_eq!(state.fit_selection(), Some("protein and name CA"));
    let doc = state.document().unwrap();
    assert_ne!(doc.id, id, "fields are keyed anew");
    assert_eq!(doc.frame_index, n - 1);
    assert!(doc.frame.cell.is_none(), "a fitted frame has no box");
    let fitted = doc.frame.clone();
    let ca = ca_positions(state);
    // A least-squares fit puts the centroids together...
    let (c, c0) = (centroid(&ca), centroid(&reference));
    for k in 0..3 {
        assert!((c[k] - c0[k]).abs() < 2e-3, "centroid {c:?} vs frame 0's {c0:?}");
    }
    // ...at a minimum of the RMSD: no small turn or shift does better.
    let best = rmsd(&ca, &reference);
    assert!(best < rmsd(&raw_ca, &reference), "the fit lowers the RMSD");
    for k in 0..3 {
        for angle in [-0.01, 0.01] {
            let r = rmsd(&moved(&ca, c, k, angle, [0.0; 3]), &reference);
            assert!(r >= best - 1e-4, "a turn of {angle} rad about axis {k}: {r} < {best}");
        }
        let mut t = [0.0; 3];
        t[k] = 0.05;
        assert!(rmsd(&moved(&ca, c, k, 0.0, t), &reference) >= best - 1e-4);
    }
    // A rigid motion: distances between atoms are the frame's as read.
    let count = raw.positions_angstrom.len();
    for (i, j) in [(0, count - 1), (17, 4000 % count), (123, 2345 % count), (5, 6)] {
        let d = |f: &orbitfield::model::Frame| {
            let (a, b) = (f.positions_angstrom[i], f.positions_angstrom[j]);
            (0..3).map(|k| (a[k] - b[k]).powi(2)).sum::<f32>().sqrt()
        };
        assert!((d(&fitted) - d(&raw)).abs() < 2e-3, "atoms {i}-{j}");
    }
    // Off: the frame as read, box and all.
    type_command(&mut harness, "fit off");
    let doc = harness.state().document().unwrap();
    assert_eq!(doc.frame, raw);
    assert_eq!(harness.state().fit_selection(), None);
    // Another selection by the verb; a selection of nothing is refused and changes nothing.
    type_command(&mut harness, "fit protein and backbone");
    assert_eq!(harness.state().fit_selection(), Some("protein and backbone"));
    let before = harness.state().document().unwrap().frame.clone();
    let said = type_line(&mut harness, "fit resname XYZ");
    assert!(
        said.as_ref()
            .is_some_and(|(error, t)| *error && t.contains("'resname XYZ' picks 0 atoms")),
        "{said:?}"
    );
    let state = harness.state();
    assert_eq!(state.fit_selection(), Some("protein and backbone"));
    assert_eq!(state.document().unwrap().frame, before);
    // A wavefunction's single geometry has nothing to fit.
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false));
    harness.run();
    let said = type_line(&mut harness, "fit");
    assert!(
        said.as_ref()
            .is_some_and(|(error, t)| *error && t.contains("frames with orbitals are not fitted")),
        "{said:?}"
    );
    assert_eq!(harness.state().fit_selection(), None);
    assert!(harness.query_by_label("Fit frames to frame 0").is_none());
}
