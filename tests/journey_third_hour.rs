//! A third newcomer's first hour, on a smaller screen and with the numbers a chemist reads:
//!
//! - On a 1024x700 window (a laptop, a projector) the field panel's controls stay inside it: a
//!   protein's potential, a molecule's density coloured by its own potential with a slice, and a
//!   PQR surface coloured by its Poisson-Boltzmann potential while the solve runs (that one also at
//!   1280x800). Its content was wider than the panel and was cut off at the panel's left edge and
//!   past the window's right edge.
//! - A molecule's measurements and picked atoms are named as its labels are, as QM programs number
//!   atoms ("angle C1 – C2 – C3"): they read "C QM1" for every carbon, the one residue the reader
//!   files a wavefunction's atoms in. One labelled atom is "1 atom", not "1 atoms".
//! - Choosing a potential unit that the charges' potential does not take (kcal/mol/e stays for the
//!   eps = 4r model, as ChimeraX shows it) says so, instead of changing nothing without a word.
//! - The timeline says how many frames there are ("of 0–97") and the frame's time where the
//!   trajectory gives it ("t = 40.0 ps"); a single geometry says "(one frame)", and its Play and
//!   step buttons are disabled (they did nothing). The button that loads frames a running
//!   simulation appended says so ("New frames"; it was "+").
//! - "Slice plane" slices the field the panel edits: ticked while it edits a density under the HOMO,
//!   it showed the HOMO's slice (the first field in the list) under "Editing: electron density". The
//!   `slice` verb follows the panel as well, and one plane is drawn at a time.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use orbitfield::app::fields::FieldChoice;
use orbitfield::app::state::{AppState, Command};

#[path = "common/journey.rs"]
mod journey;
#[path = "common/panel_fit.rs"]
mod panel_fit;
use journey::{opened, type_command, type_line_stepping, window};
use panel_fit::{assert_inside_their_panels, window_of as panel_window};

/// Fails listing the widgets outside the window or their panel at `size`.
fn assert_fits(harness: &Harness<'static, AppState>, size: [f32; 2], what: &str) {
    // egui rounds a panel and its content apart by up to a point at 1024 points wide.
    assert_inside_their_panels(harness, size, 1.5, what);
}

#[test]
fn the_field_panel_fits_a_1024x700_window() {
    const SMALL: [f32; 2] = [1024.0, 700.0];
    // A protein's potential map: its running mean, summation and unit rows.
    let mut state = opened(&["md/adk.psf", "md/adk_dims.dcd"], false);
    state.apply(Command::SelectField(Some(FieldChoice::Potential)));
    let mut harness = panel_window(state, SMALL, true);
    harness.run();
    assert_fits(&harness, SMALL, "adk's potential");

    // A molecule's density coloured by its own potential, with a slice and its colour range.
    let mut harness = panel_window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], true), SMALL, true);
    harness.run();
    type_command(&mut harness, "field add density");
    type_command(&mut harness, "color 3 esp");
    type_command(&mut harness, "slice z 0");
    harness.run();
    assert_fits(&harness, SMALL, "threonine's density");
}

#[test]
fn a_poisson_boltzmann_surface_fits_its_panel_while_it_solves() {
    for size in [[1024.0, 700.0], [1280.0, 800.0]] {
        let mut harness = panel_window(opened(&["md/adk_open.pqr"], false), size, true);
        harness.run_steps(2);
        type_line_stepping(&mut harness, "rep add surface protein color pb");
        type_line_stepping(&mut harness, "rep select 2");
        harness.run_steps(4);
        assert!(
            harness.state().pb.solving() || harness.state().pb.last_solve.is_some(),
            "the surface's potential is being solved"
        );
        assert_fits(&harness, size, "adk's surface coloured by Poisson-Boltzmann");
    }
}

#[test]
fn a_molecules_measurements_name_its_atoms_as_its_labels_do() {
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false));
    harness.run();
    type_command(&mut harness, "measure angle 1 2 3");
    let st = harness.state();
    let names: Vec<String> = (0..3).map(|a| st.label_text(a)).collect();
    assert_eq!(names, ["C1", "C2", "C3"], "threonine's first three atoms are carbons");
    let m = st.tools.measure.list.last().expect("the angle is listed");
    let text = st.measurement_label(m);
    assert_eq!(text, "angle C1 – C2 – C3");
    assert!(
        harness.query_by_label(&text).is_some(),
        "the Measurements panel shows '{text}'"
    );
    let picked = harness.state().describe_atom(2);
    assert!(picked.starts_with("atom 3 C3 (C)"), "{picked}");
    assert!(!picked.contains("QM"), "{picked}");

    // A structure's atoms keep their residue names; one labelled atom is one atom.
    let mut harness = window(opened(&["md/adk.psf", "md/adk_dims.dcd"], false));
    harness.run();
    type_command(&mut harness, "measure distance 817 2633");
    let st = harness.state();
    let m = st.tools.measure.list.last().unwrap();
    assert_eq!(st.measurement_label(m), "distance CA ALA55 – CA VAL169");
    type_command(&mut harness, "label resid 12 and name CA");
    assert_eq!(
        harness.state().panels.status,
        "labelled 1 atom of 'resid 12 and name CA'"
    );

    // Labels that name residues put one label on each residue, on its CA (ChimeraX's `label :LYS`).
    type_command(&mut harness, "label format residue");
    type_command(&mut harness, "label resname LYS");
    let st = harness.state();
    let s = &st.document().unwrap().structure;
    let lysines: std::collections::BTreeSet<_> = (0..s.len())
        .filter(|&i| s.resnames[i].as_str().trim() == "LYS")
        .map(|i| (s.segids[i].as_str().to_string(), s.resids[i]))
        .collect();
    assert!(lysines.len() > 10, "adk has many lysines: {lysines:?}");
    assert_eq!(
        st.panels.status,
        format!("labelled {} residues of 'resname LYS'", lysines.len())
    );
    let new = &st.tools.labels.atoms[1..];
    assert_eq!(new.len(), lysines.len());
    for &a in new {
        assert_eq!(s.names[a].as_str().trim(), "CA", "atom {a} of a lysine");
        assert_eq!(s.resnames[a].as_str().trim(), "LYS");
    }
    // Asking again labels nothing twice.
    type_command(&mut harness, "label resname LYS or resid 12");
    assert_eq!(harness.state().tools.labels.atoms.len(), 1 + lysines.len());
}

#[test]
fn a_potential_unit_the_model_does_not_take_is_said() {
    // adk's PSF: charges without radii, so the model is eps = 4r, shown in kcal/mol/e.
    let mut harness = window(opened(&["md/adk.psf", "md/adk_dims.dcd"], false));
    harness.run();
    type_command(&mut harness, "set units V");
    let status = harness.state().panels.status.clone();
    assert!(
        status.contains("stays in kcal/mol/e") && status.contains("in V"),
        "{status}"
    );
    assert_eq!(
        harness.state().potential_display(FieldChoice::Potential),
        orbitfield::app::values::PotentialDisplay::KcalPerMolPerE
    );
    // In vacuum the charges' potential takes the unit: nothing to say.
    type_command(&mut harness, "set model vacuum");
    type_command(&mut harness, "set units kT/e");
    let status = harness.state().panels.status.clone();
    assert!(!status.contains("stays"), "{status}");
    assert_eq!(
        harness.state().potential_display(FieldChoice::Potential),
        orbitfield::app::values::PotentialDisplay::KtPerE
    );
}

#[test]
fn the_timeline_says_how_many_frames_and_when() {
    let mut harness = window(opened(&["md/adk.psf", "md/adk_dims.dcd"], false));
    harness.run();
    type_command(&mut harness, "frame 40");
    assert!(
        harness.query_all_by_label("of 0–97").count() > 0,
        "98 frames, numbered from 0"
    );
    let t = harness.state().document().unwrap().frame.time_ps;
    let t = t.expect("adk_dims.dcd gives each frame's time");
    let text = orbitfield::ui::timeline::time_text(t);
    assert!(harness.query_by_label(&text).is_some(), "the timeline shows '{text}'");
    for label in ["Play", "<", ">", "New frames"] {
        assert!(!harness.get_by_label(label).accesskit_node().is_disabled(), "{label}");
    }
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false));
    harness.run();
    assert!(harness.query_all_by_label("(one frame)").count() > 0);
    for label in ["Play", "<", ">"] {
        assert!(harness.get_by_label(label).accesskit_node().is_disabled(), "{label}");
    }
    assert_eq!(orbitfield::ui::timeline::time_text(40.0), "t = 40.0 ps");
    assert_eq!(orbitfield::ui::timeline::time_text(25_000.0), "t = 25.00 ns");
}

#[test]
fn the_slice_plane_cuts_the_field_the_panel_edits() {
    use orbitfield::app::reps::FieldStyle;
    let visible_slices = |h: &Harness<'_, AppState>| -> Vec<FieldChoice> {
        h.state()
            .reps()
            .fields()
            .filter(|(r, f)| r.visible && matches!(f.style, FieldStyle::Slice(_)))
            .map(|(_, f)| f.field)
            .collect()
    };
    let mut harness = window(opened(&["qm/threonine_hf_631gs_sph.molden.gz"], false));
    harness.run();
    // The density below the HOMO, selected: the panel edits it, and its "Slice plane" slices it.
    type_command(&mut harness, "field add density");
    type_command(&mut harness, "rep select 3");
    assert_eq!(harness.state().panel_field(), Some(FieldChoice::Density));
    harness.get_by_label("Slice plane").click();
    harness.run();
    assert_eq!(visible_slices(&harness), vec![FieldChoice::Density]);
    assert!(harness.state().panel_slice_shown());
    // The HOMO selected: its box is unticked (the plane drawn is the density's); ticking it shows
    // the HOMO's slice alone.
    type_command(&mut harness, "rep select 2");
    assert!(!harness.state().panel_slice_shown());
    harness.get_by_label("Slice plane").click();
    harness.run();
    let homo = harness.state().panel_field().expect("the HOMO");
    assert!(matches!(homo, FieldChoice::Orbital { .. }), "{homo:?}");
    assert_eq!(visible_slices(&harness), vec![homo]);
    // The script verb follows the panel too, and "slice off" hides every slice. (The slices were
    // added below their fields, so the density is no longer the third representation.)
    let density = harness
        .state()
        .reps()
        .list
        .iter()
        .position(|r| matches!(&r.kind, orbitfield::app::reps::RepKind::Field(f) if f.field == FieldChoice::Density && !matches!(f.style, FieldStyle::Slice(_))))
        .expect("the density");
    type_command(&mut harness, &format!("rep select {}", density + 1));
    type_command(&mut harness, "slice z 0");
    assert_eq!(visible_slices(&harness), vec![FieldChoice::Density]);
    type_command(&mut harness, "slice off");
    assert!(visible_slices(&harness).is_empty());
}
