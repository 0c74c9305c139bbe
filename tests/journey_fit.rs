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
//!   single geometry, is refused in words and fits nothing; a saved session keeps the fit.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui_kittest::kittest::Queryable;

#[path = "common/journey.rs"]
mod journey;
use journey::{opened, type_command, type_line, window};

#[path = "common/fit_checks.rs"]
mod fit_checks;
use fit_checks::{P, assert_least_squares, rmsd};

fn ca_positions(state: &orbitfield::app::state::AppState) -> Vec<P> {
    let doc = state.document().unwrap();
    let ca = orbitfield::model::select::Selection::parse("protein and name CA")
        .unwrap()
        .indices(&doc.structure, Some(&doc.frame));
    ca.iter()
        .map(|&i| doc.frame.positions_angstrom[i as usize].map(f64::from))
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
    // A least-squares fit: the centroids together, at a minimum of the RMSD.
    assert!(
        rmsd(&ca, &reference) < rmsd(&raw_ca, &reference),
        "the fit lowers the RMSD"
    );
    assert_least_squares(&ca, &reference, 2e-3, "the last frame");
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
    // A saved session keeps the fit.
    let tmp = tempfile::tempdir().unwrap();
    let path = tmp.path().join("fitted.ofs");
    state.session().unwrap().save(&path).unwrap();
    let mut reopened = opened(&[], false);
    reopened.apply_session(&orbitfield::app::session::Session::load(&path).unwrap());
    assert_eq!(reopened.fit_selection(), Some("protein and backbone"));
    assert_eq!(reopened.document().unwrap().frame, before);
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

/// "Save atoms / frames" writes the frames as the view shows them: molecules made whole (the
/// wrapped AdK's chain in one piece) and, while frames are fitted, fitted onto frame 0 without a
/// box; the status line says how they are written.
#[test]
fn saved_frames_are_the_frames_the_view_shows() {
    let mut state = opened(&["md/adk_oplsaa.gro", "md/adk_oplsaa.xtc"], false);
    let reference = ca_positions(&state);
    state.apply(orbitfield::app::state::Command::FitFrames(Some(None)));
    state.panels.save_selection_text = "protein and name CA".into();
    state.panels.save_frames_text = "0:10:3".into();
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("ca.pdb");
    state.save_to(&out);
    let status = state.panels.status.clone();
    assert!(
        status.contains("fitted onto frame 0 by 'protein and name CA'"),
        "{status}"
    );
    let mut polls = 0;
    while state.poll_save() && state.panels.save_job.is_some() {
        polls += 1;
        assert!(polls < 60_000, "the save did not finish");
        std::thread::sleep(std::time::Duration::from_millis(1));
    }
    assert!(state.panels.errors.is_empty(), "{:?}", state.panels.errors);
    let mut back = orbitfield::io::load(&[out]).unwrap();
    assert_eq!(back.structure.len(), 214);
    assert_eq!(back.trajectory.n_frames(), 4);
    for k in 0..4 {
        let f = back.trajectory.frame(k).unwrap();
        let ca: Vec<P> = f.positions_angstrom.iter().map(|p| p.map(f64::from)).collect();
        // PDB keeps 0.001 A.
        assert_least_squares(&ca, &reference, 5e-3, &format!("saved frame {k}"));
        let longest = ca
            .windows(2)
            .map(|w| (0..3).map(|i| (w[0][i] - w[1][i]).powi(2)).sum::<f64>().sqrt())
            .fold(0.0, f64::max);
        assert!(longest < 4.3, "saved frame {k}: the chain is in pieces ({longest} A)");
    }
}

/// `measure rmsd` compares the frames as the view shows them: with frames fitted, the current frame
/// against the fitted reference frame (read through the timeline here), not against that frame as
/// the file has it.
#[test]
fn rmsd_while_fitted_compares_fitted_frames() {
    let mut harness = window(opened(&["md/adk_oplsaa.gro", "md/adk_oplsaa.xtc"], false));
    harness.run();
    type_command(&mut harness, "fit");
    type_command(&mut harness, "frame 5");
    let five = ca_positions(harness.state());
    type_command(&mut harness, "frame 9");
    let nine = ca_positions(harness.state());
    let said = type_line(&mut harness, "measure rmsd protein and name CA reference 5");
    let text = said.map(|(_, t)| t).unwrap_or_default();
    let value: f64 = text
        .rsplit(": ")
        .next()
        .and_then(|v| v.trim_end_matches(" A").trim().parse().ok())
        .unwrap_or_else(|| panic!("no value in {text:?}"));
    let want = rmsd(&nine, &five);
    assert!((value - want).abs() < 2e-4, "{value} vs {want} ({text})");
}
