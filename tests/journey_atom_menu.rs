//! The 3-D view's right-click menu, as a user finds it: on adk (tests/data/md), right-click the atom
//! drawn in front; the menu names it; "Show RES as licorice" adds a representation of exactly that
//! residue's atoms, "Hydrogen bonds around RES" the hydrogen bonds of the residues within 5 Å, "Label
//! atom" its label; undo takes the last back; a right click on empty space offers the view's reset.

#![allow(clippy::unwrap_used, clippy::expect_used, clippy::indexing_slicing)]

use egui::{Event, Modifiers, PointerButton, Pos2};
use egui_kittest::Harness;
use egui_kittest::kittest::Queryable;
use orbitfield::app::atoms::AtomStyle;
use orbitfield::app::reps::RepKind;
use orbitfield::app::state::AppState;

#[path = "common/adk_state.rs"]
mod adk_state;
#[path = "common/panel_fit.rs"]
mod panel_fit;
use adk_state::{adk, front_atom};

const SIZE: [f32; 2] = [1280.0, 800.0];

/// The 3-D view's top-left corner on screen: right of the left panel, under the menu bar.
fn view_origin(harness: &Harness<'static, AppState>) -> Pos2 {
    let rects = panel_fit::panel_rects(harness);
    let get = |name: &str| rects.iter().find(|(n, _)| *n == name).map(|(_, r)| *r).unwrap();
    Pos2::new(get("orbitfield_left").max.x, get("orbitfield_menu").max.y)
}

/// The atom drawn nearest the eye and its centre's position on screen.
fn front_atom_on_screen(harness: &Harness<'static, AppState>) -> (usize, Pos2) {
    let (atom, pixel) = front_atom(harness.state());
    let o = view_origin(harness);
    (atom, Pos2::new(o.x + pixel[0], o.y + pixel[1]))
}

fn right_click(harness: &mut Harness<'static, AppState>, pos: Pos2) {
    harness.event(Event::PointerMoved(pos));
    for pressed in [true, false] {
        harness.event(Event::PointerButton {
            pos,
            button: PointerButton::Secondary,
            pressed,
            modifiers: Modifiers::NONE,
        });
        harness.step();
    }
    harness.run();
}

fn reps_of_style(state: &AppState, style: AtomStyle) -> Vec<(String, usize)> {
    state
        .reps()
        .list
        .iter()
        .filter_map(|r| match &r.kind {
            RepKind::Atoms(a) if a.style == style => Some((a.selection.clone(), a.count)),
            _ => None,
        })
        .collect()
}

#[test]
fn right_click_an_atom_show_its_residue_its_hydrogen_bonds_label_it_and_undo() {
    let mut harness: Harness<'static, AppState> = panel_fit::window_of(adk(), SIZE, true);
    harness.run();
    let (atom, pos) = front_atom_on_screen(&harness);
    right_click(&mut harness, pos);
    assert_eq!(harness.state().view.menu_atom, Some(atom));
    let (resname, resid) = {
        let s = &harness.state().document().unwrap().structure;
        (s.resnames[atom].as_str().trim().to_string(), s.resids[atom])
    };
    let residue_atoms = {
        let s = &harness.state().document().unwrap().structure;
        let seg = s.segids[atom];
        (0..s.len())
            .filter(|&i| s.resids[i] == resid && s.segids[i] == seg)
            .count()
    };
    let show = format!("Show {resname}{resid} as licorice");
    let licorice_before = reps_of_style(harness.state(), AtomStyle::Licorice).len();
    harness.get_by_label(&show).click();
    harness.run();
    let licorice = reps_of_style(harness.state(), AtomStyle::Licorice);
    assert_eq!(licorice.len(), licorice_before + 1, "{licorice:?}");
    let (sel, count) = licorice.last().unwrap();
    assert_eq!(*count, residue_atoms, "{sel}");
    assert!(harness.query_by_label(&show).is_none(), "the menu closed");

    // Hydrogen bonds among the residues within 5 Å.
    right_click(&mut harness, pos);
    harness
        .get_by_label(&format!("Hydrogen bonds around {resname}{resid}"))
        .click();
    harness.run();
    let hb = reps_of_style(harness.state(), AtomStyle::HBonds);
    assert_eq!(hb.len(), 1);
    assert!(hb[0].0.contains("within 5 of"), "{}", hb[0].0);
    assert!(hb[0].1 > residue_atoms, "{hb:?}");

    // Label it; undo takes the label back.
    right_click(&mut harness, pos);
    harness.get_by_label("Label atom").click();
    harness.run();
    assert_eq!(harness.state().tools.labels.atoms, vec![atom]);
    harness.key_press_modifiers(Modifiers::COMMAND, egui::Key::Z);
    harness.run();
    assert!(harness.state().tools.labels.atoms.is_empty());

    // Empty space: the view's reset.
    let o = view_origin(&harness);
    right_click(&mut harness, Pos2::new(o.x + 5.0, o.y + 5.0));
    assert_eq!(harness.state().view.menu_atom, None);
    assert!(harness.query_by_label("Reset view (0)").is_some());
}
