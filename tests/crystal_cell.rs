//! A crystal structure's unit cell (a PDB or mmCIF entry of one model with CRYST1 / `_cell`) is not
//! drawn until asked for, as VMD, PyMOL and ChimeraX leave it out; a simulation's box (GRO, or any
//! trajectory) is drawn as before; `set cell on` draws the crystal's, and a session keeps that.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

#[path = "common/journey.rs"]
mod journey;
use journey::{opened, type_command, window};

/// Line vertices drawn (the box is twelve edges of two vertices).
fn lines(h: &egui_kittest::Harness<'static, orbitfield::app::state::AppState>) -> usize {
    h.state().view.lines.len()
}

#[test]
fn a_crystal_s_cell_waits_to_be_asked_for_and_a_simulation_s_box_is_drawn() {
    for file in ["md/4E43.pdb.gz", "md/4E43.cif.gz"] {
        let mut harness = window(opened(&[file], false));
        harness.run();
        let doc = harness.state().document().unwrap();
        assert!(doc.periodic && doc.crystal_cell, "{file}");
        assert!(harness.state().settings.show_cell, "the setting is unchanged");
        assert!(!doc.cell_shown(true), "{file}");
        let without = lines(&harness);
        type_command(&mut harness, "set cell on");
        harness.run();
        assert_eq!(
            lines(&harness),
            without + 24,
            "{file}: the cell is drawn when asked for"
        );
        let session = harness.state().session().unwrap();
        assert!(session.show_cell);
    }
    // A simulation's box: drawn from the start.
    let mut harness = window(opened(&["md/adk_oplsaa.gro"], false));
    harness.run();
    let doc = harness.state().document().unwrap();
    assert!(doc.periodic && !doc.crystal_cell);
    assert!(doc.cell_shown(harness.state().settings.show_cell));
}
