//! The sequence panel, as a user finds it: on adk (tests/data/md) the chain's one-letter sequence is
//! shown under the view (E. coli adenylate kinase begins MRIILLGAPGAGKGTQ); a click on residue 13 picks
//! its CA, a shift-click on 20 extends the pick to 13-20, whose licorice representation then holds
//! exactly those residues' atoms; a double click centres the view on a residue; the tint of each
//! residue is DSSP's class for the frame shown (against mkdssp's assignment of adk's frames 0 and 40,
//! `tests/data/dssp/reference.json`); the panel hides with its × and shows from the View menu.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui::{Event, Modifiers, PointerButton, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::{NodeT, Queryable};
use orbitfield::app::atoms::AtomStyle;
use orbitfield::app::reps::RepKind;
use orbitfield::app::state::AppState;
use orbitfield::ui::sequence::{LABEL_WIDTH, offset};

#[path = "common/adk_state.rs"]
mod adk_state;
#[path = "common/panel_fit.rs"]
mod panel_fit;
use adk_state::adk;

const SIZE: [f32; 2] = [1280.0, 800.0];

/// mkdssp's 8-state codes of adk's frames.
fn mkdssp_adk() -> Vec<String> {
    let path = std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/dssp/reference.json");
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    let adk = v["structures"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["name"] == "adk")
        .unwrap();
    adk["mkdssp"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f.as_str().unwrap().to_string())
        .collect()
}

/// The screen position of the centre of residue `k` (0-based in the chain) of adk's first row.
fn residue_pos(harness: &Harness<'static, AppState>, k: usize) -> Pos2 {
    let node = harness
        .query_all_by_label_contains("Sequence 4AKE: ")
        .find(|n| {
            n.accesskit_node()
                .label()
                .is_some_and(|l| l.ends_with("residues from 1"))
        })
        .expect("the first row");
    let label = node.accesskit_node().label().unwrap_or_default();
    let count: usize = label
        .split(": ")
        .nth(1)
        .and_then(|t| t.split(' ').next())
        .and_then(|n| n.parse().ok())
        .expect("the row names its residue count");
    assert!(k < count, "residue {k} is on the first row of {count}");
    let b = node.accesskit_node().bounding_box().unwrap();
    let (left, width) = (b.x0 as f32, (b.x1 - b.x0) as f32);
    // width = LABEL_WIDTH + offset(count, w) + w, linear in w.
    let w = (width - LABEL_WIDTH) / (offset(count, 1.0) + 1.0);
    Pos2::new(
        left + LABEL_WIDTH + offset(k, w) + 0.5 * w,
        ((b.y0 + b.y1) / 2.0) as f32,
    )
}

/// A click, or a double click, as a hand gives them: press and release in turn, a frame apart.
fn click(harness: &mut Harness<'static, AppState>, pos: Pos2, modifiers: Modifiers, double: bool) {
    // Half a second first, so that no earlier click joins this one.
    for _ in 0..25 {
        harness.step();
    }
    harness.event(Event::PointerMoved(pos));
    harness.step();
    for _ in 0..if double { 2 } else { 1 } {
        for pressed in [true, false] {
            harness.event_modifiers(
                Event::PointerButton {
                    pos,
                    button: PointerButton::Primary,
                    pressed,
                    modifiers,
                },
                modifiers,
            );
            harness.step();
        }
    }
    harness.run();
}

#[test]
fn pick_residues_in_the_sequence_show_them_and_centre_on_one() {
    let mut harness: Harness<'static, AppState> = panel_fit::window_stepping(adk(), SIZE, true, 0.02);
    harness.run();
    // The chain and its sequence as the panel holds them.
    let (letters, resid13, ca13, ca20, atoms_13_20) = {
        let st = harness.state();
        let seq = &st.panels.sequence;
        assert_eq!(seq.chains.len(), 1);
        let chain = &seq.chains[0];
        assert_eq!(chain.label, "4AKE");
        let letters: String = chain.residues.iter().map(|r| r.letter).collect();
        let s = &st.document().unwrap().structure;
        let atoms = (0..s.len()).filter(|&i| (13..=20).contains(&s.resids[i])).count();
        (
            letters,
            chain.residues[12].resid,
            chain.residues[12].trace_atom as usize,
            chain.residues[19].trace_atom as usize,
            atoms,
        )
    };
    assert!(letters.starts_with("MRIILLGAPGAGKGTQ"), "{letters}");
    assert_eq!(letters.len(), 214);
    assert_eq!(resid13, 13);
    let s = harness.state().document().unwrap().structure.clone();
    assert_eq!(s.names[ca13].as_str(), "CA");
    assert_eq!(s.names[ca20].as_str(), "CA");

    // Click residue 13, shift-click residue 20.
    let p13 = residue_pos(&harness, 12);
    click(&mut harness, p13, Modifiers::NONE, false);
    assert_eq!(harness.state().view.pick.as_ref().map(|p| p.atom), Some(ca13));
    let p20 = residue_pos(&harness, 19);
    click(&mut harness, p20, Modifiers::SHIFT, false);
    let sel = harness.state().panels.sequence.picked_selection().unwrap();
    assert_eq!(sel, "segid 4AKE and resid 13 to 20");
    assert!(harness.query_by_label(&sel).is_some(), "the panel shows the pick");

    // Show them as licorice: exactly those residues' atoms.
    harness.get_by_label("Show as licorice").click();
    harness.run();
    let count = harness
        .state()
        .reps()
        .list
        .iter()
        .rev()
        .find_map(|r| match &r.kind {
            RepKind::Atoms(a) if a.style == AtomStyle::Licorice && a.selection == sel => Some(a.count),
            _ => None,
        })
        .expect("a licorice representation of the pick");
    assert_eq!(count, atoms_13_20);

    // A double click centres the view on residue 20's CA.
    let p20 = residue_pos(&harness, 19);
    click(&mut harness, p20, Modifiers::NONE, true);
    let target = harness.state().view.camera.target_angstrom;
    let ca = harness.state().document().unwrap().frame.positions_angstrom[ca20];
    let d: f32 = (0..3).map(|k| (target[k] - ca[k]).powi(2)).sum::<f32>().sqrt();
    assert!(d < 1e-3, "target {target:?} against CA {ca:?}");

    // The tints: DSSP's classes of the frame shown, one per protein residue, as mkdssp 4.2.2 gives
    // them for frames 0 and 40 (tests/data/dssp; mkdssp read coordinates rounded to 0.001 Å, so a
    // residue at a criterion's edge may differ).
    let mkdssp = mkdssp_adk();
    for frame in [0usize, 40] {
        harness
            .state_mut()
            .push(orbitfield::app::state::Command::SetFrame(frame));
        // The frame is applied after the pass that asked for it; the next pass draws it.
        harness.run();
        harness.step();
        let ss = harness
            .state()
            .panels
            .sequence
            .secondary
            .clone()
            .expect("secondary structure");
        assert_eq!(ss.0, (harness.state().document().unwrap().id, frame));
        let ours: Vec<char> = orbitfield::analysis::dssp::codes(&ss.1).chars().collect();
        let want: Vec<char> = mkdssp[frame].chars().collect();
        assert_eq!(ours.len(), want.len());
        let same = ours.iter().zip(&want).filter(|(a, b)| a == b).count();
        assert!(same + 3 >= want.len(), "frame {frame}: {same} of {} agree", want.len());
    }
    assert_ne!(
        mkdssp[0], mkdssp[40],
        "the two frames differ, so a stale assignment would show"
    );

    // Hide it, and show it again from the View menu.
    harness.get_by_label(orbitfield::ui::sequence::HIDE).click();
    harness.run();
    assert_eq!(harness.query_all_by_label_contains("Sequence 4AKE: ").count(), 0);
    // The menu bar's "View" (the left panel has a "View" section below it).
    harness
        .get_all_by_label("View")
        .min_by(|a, b| a.rect().min.y.total_cmp(&b.rect().min.y))
        .unwrap()
        .click();
    harness.run();
    harness.get_by_label("Sequence").click();
    harness.run();
    assert!(harness.query_all_by_label_contains("Sequence 4AKE: ").count() >= 2);
    let outside = panel_fit::outside_their_panels(&harness, SIZE, 1.0, "sequence");
    assert!(outside.is_empty(), "{outside:?}");
}
