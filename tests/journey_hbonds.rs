//! Hydrogen bonds in the viewer, as a user finds them: on adk (tests/data/md), Add > Hydrogen bonds of
//! the protein; the editor says how many there are, and that number is MDAnalysis's for the frame
//! (`tests/data/hbonds/reference.json.gz`); the dashes are drawn between donors and acceptors; a new
//! frame finds the bonds again; the criteria typed in a command change them, and undo brings the
//! defaults back. The editor's widgets stay inside the left panel.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui::{Key, Modifiers};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::analysis::hbonds::{HBondCriteria, find};
use orbitfield::app::atoms::AtomStyle;
use orbitfield::app::reps::RepKind;
use orbitfield::app::state::{AppState, Command};
use std::io::Read;

#[path = "common/adk_state.rs"]
mod adk_state;
#[path = "common/journey.rs"]
mod journey;
#[path = "common/panel_fit.rs"]
mod panel_fit;
use adk_state::{adk, data};
use journey::{type_command, type_line};

const SIZE: [f32; 2] = [1280.0, 800.0];

/// MDAnalysis's number of hydrogen bonds in adk's frame `f`.
fn reference_count(f: usize) -> usize {
    let mut text = String::new();
    flate2::read::GzDecoder::new(std::fs::File::open(data("hbonds/reference.json.gz")).unwrap())
        .read_to_string(&mut text)
        .unwrap();
    let v: serde_json::Value = serde_json::from_str(&text).unwrap();
    v["systems"]["adk"]["frames"][f.to_string()].as_array().unwrap().len()
}

/// The hydrogen-bond representation: its number in the list (from 1) and its bonds' count.
fn hbond_rep(state: &AppState) -> (usize, usize, HBondCriteria) {
    let (n, a) = state
        .reps()
        .list
        .iter()
        .enumerate()
        .find_map(|(i, r)| match &r.kind {
            RepKind::Atoms(a) if a.style == AtomStyle::HBonds => Some((i + 1, a)),
            _ => None,
        })
        .expect("a hydrogen-bond representation");
    (n, a.hbond_set().expect("bonds found").bonds.len(), a.hbonds)
}

/// What `analysis::hbonds` finds among the protein's atoms at the frame shown.
fn expected(state: &AppState, criteria: &HBondCriteria) -> usize {
    let doc = state.document().unwrap();
    let picked = orbitfield::model::select::Selection::parse("protein")
        .unwrap()
        .evaluate(&doc.structure, Some(&doc.frame));
    find(
        &doc.structure,
        &doc.frame.positions_angstrom,
        &picked,
        &doc.bonds,
        doc.frame.cell.as_ref(),
        criteria,
    )
    .bonds
    .len()
}

/// Thin dashes in the scene (the hydrogen bonds'; bonds are 0.2 Å thick).
fn dashes(state: &AppState) -> usize {
    state.view.cylinders.iter().filter(|c| c.radius_angstrom < 0.1).count()
}

#[test]
fn add_hydrogen_bonds_read_their_count_step_a_frame_change_the_criteria_and_undo() {
    let mut harness: Harness<'static, AppState> = panel_fit::window_of(adk(), SIZE, true);
    harness.run();
    harness.get_by_label(orbitfield::ui::add::ADD_BUTTON).click();
    harness.run();
    harness.get_by_label("Selection").set_text_value_accesskit("protein");
    harness.run();
    harness.get_by_label("Hydrogen bonds").click();
    harness.run();

    // Frame 0: MDAnalysis's count, said in the editor, drawn as dashes.
    let (n, count, criteria) = hbond_rep(harness.state());
    assert_eq!(criteria, HBondCriteria::default());
    assert_eq!(count, reference_count(0));
    let said = format!("{count} hydrogen bonds");
    assert!(
        harness.query_by_label_contains(&said).is_some(),
        "the editor says '{said}'"
    );
    let drawn = dashes(harness.state());
    assert!(drawn >= 3 * count, "{drawn} dashes for {count} bonds");
    // In their own colour, not oxygen's red or nitrogen's blue (the representation colours by element).
    let own = orbitfield::render::gpu::pack_rgba(orbitfield::app::atoms::HBOND_RGBA);
    let thin: Vec<_> = harness
        .state()
        .view
        .cylinders
        .iter()
        .filter(|c| c.radius_angstrom < 0.1)
        .collect();
    assert!(thin.iter().all(|c| c.color_a == own && c.color_b == own));
    let outside = panel_fit::outside_their_panels(&harness, SIZE, 1.0, "hydrogen bonds");
    assert!(outside.is_empty(), "{outside:?}");

    // Frame 40: found again.
    harness.state_mut().push(Command::SetFrame(40));
    harness.run();
    assert_eq!(harness.state().document().unwrap().frame_index, 40);
    assert_eq!(hbond_rep(harness.state()).1, reference_count(40));

    // Looser criteria typed as a command: more bonds, as the search finds them with those criteria.
    type_command(&mut harness, &format!("rep modify {n} hbonds 3.4 130"));
    let (_, looser, c) = hbond_rep(harness.state());
    assert_eq!((c.distance_angstrom, c.angle_degrees), (3.4, 130.0));
    assert_eq!(looser, expected(harness.state(), &c));
    assert!(looser > reference_count(40), "{looser}");
    // A criterion out of range is refused in words and changes nothing.
    let said = type_line(&mut harness, &format!("rep modify {n} hbonds 3.4 200"));
    assert!(
        said.as_ref()
            .is_some_and(|(error, text)| *error && text.contains("200")),
        "{said:?}"
    );
    assert_eq!(hbond_rep(harness.state()).2, c);
    harness.state_mut().panels.console.input.clear();

    // Undo (Ctrl+Z, the command line left with Escape): the defaults and MDAnalysis's count again.
    harness.key_press(Key::Escape);
    harness.run();
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    let (_, back, c) = hbond_rep(harness.state());
    assert_eq!(c, HBondCriteria::default());
    assert_eq!(back, reference_count(40));
}
