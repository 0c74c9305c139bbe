//! Opening other files replaces the document; Undo opens the one replaced again, as it was left:
//! its files, frame, representations, measurements and labels. Redo goes forward to the newer one.
//! Driven through the whole window (egui_kittest): commands typed in the command line, Undo and Redo
//! from the Edit menu, whose entries name what they do.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::kittest::{NodeT, Queryable};
use orbitfield::app::reps::RepSpec;
use orbitfield::app::state::AppState;

#[path = "common/journey.rs"]
mod journey;
use journey::{data, opened, type_command, window};

/// What the user would see of a document: its name, frame, representations, measurements' atoms
/// and labels.
fn seen(state: &AppState) -> (String, usize, Vec<RepSpec>, Vec<Vec<usize>>, Vec<usize>) {
    let doc = state.document().expect("a document is open");
    (
        doc.name.clone(),
        doc.frame_index,
        state.reps().list.iter().map(|r| state.rep_spec(r)).collect(),
        state.tools.measure.list.iter().map(|m| m.atoms.clone()).collect(),
        state.tools.labels.atoms.clone(),
    )
}

fn edit_menu_entry(harness: &mut egui_kittest::Harness<'static, AppState>, starts: &str) -> String {
    harness.get_by_label("Edit").click();
    harness.run();
    let label = harness
        .query_all_by_label_contains(starts)
        .filter_map(|n| n.accesskit_node().label())
        .next()
        .unwrap_or_else(|| panic!("no Edit menu entry {starts:?}"));
    harness.get_by_label(&label).click();
    harness.run();
    label
}

#[test]
fn undo_after_open_brings_back_the_document_replaced() {
    let mut harness = window(opened(&["md/adk.psf", "md/adk_dims.dcd"], false));
    harness.run();
    type_command(&mut harness, "rep add cartoon protein");
    type_command(&mut harness, "measure distance 10 300");
    type_command(&mut harness, "label resid 12 and name CA");
    type_command(&mut harness, "frame 5");
    let adk = seen(harness.state());
    assert_eq!(adk.1, 5);
    assert_eq!(adk.3.len(), 1);
    assert_eq!(adk.4.len(), 1);

    let molden = data("qm/threonine_hf_631gs_sph.molden.gz");
    type_command(&mut harness, &format!("open {}", molden.display()));
    let threonine = seen(harness.state());
    assert_ne!(threonine.0, adk.0, "the molden file is open");
    assert!(threonine.3.is_empty() && threonine.4.is_empty());

    let undo = edit_menu_entry(&mut harness, "Undo");
    assert!(undo.contains("open adk.psf again"), "{undo}");
    assert_eq!(seen(harness.state()), adk, "{}", harness.state().panels.status);
    assert!(harness.state().panels.status.contains("adk.psf opened again"));

    let redo = edit_menu_entry(&mut harness, "Redo");
    assert!(redo.contains("open threonine_hf_631gs_sph.molden.gz again"), "{redo}");
    assert_eq!(seen(harness.state()), threonine);

    // And back once more: the way back is kept after a redo.
    edit_menu_entry(&mut harness, "Undo");
    assert_eq!(seen(harness.state()), adk);
}

/// A document that cannot be read again (its file gone) leaves the open one as it is, with the
/// reason, and keeps the way back.
#[test]
fn undo_to_a_file_gone_keeps_the_open_document() {
    let dir = std::env::temp_dir().join(format!("orbitfield_reopen_{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let pqr = dir.join("two.pqr");
    std::fs::write(
        &pqr,
        "ATOM      1 NA    NA     1       0.000   0.000   0.000  1.0000 1.8680\n\
         ATOM      2 CL    CL     2       6.000   0.000   0.000 -1.0000 2.2700\nEND\n",
    )
    .unwrap();
    let mut harness = window(opened(&[], false));
    harness.run();
    type_command(&mut harness, &format!("open {}", pqr.display()));
    let molden = data("qm/threonine_hf_631gs_sph.molden.gz");
    type_command(&mut harness, &format!("open {}", molden.display()));
    std::fs::remove_dir_all(&dir).unwrap();
    let threonine = seen(harness.state());
    edit_menu_entry(&mut harness, "Undo");
    assert_eq!(seen(harness.state()), threonine, "the open document is left as it was");
    let errors = &harness.state().panels.status;
    assert!(errors.contains("two.pqr"), "{errors}");
    assert!(harness.state().tools.history.can_undo(), "the way back is kept");
}
