//! One colour for a representation, as PyMOL's `color red, sele` and ChimeraX's `color sel red`:
//! atoms and cartoons take a colour name, `#rrggbb` or `r,g,b` on the command line and a colour
//! picker under the representation's colour choice. The colour reaches every drawn atom, undo takes
//! it back, a colour dragged in the picker is one undo step and one line of the command log, and
//! the log replays it. (The rendered pixels are checked in `tests/cartoon_render.rs`.)

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui_kittest::kittest::Queryable;
use orbitfield::analysis::polymer::Coloring as CartoonColoring;
use orbitfield::app::atoms::{AtomColoring, atom_colors};
use orbitfield::app::fields::FieldService;
use orbitfield::app::reps::{RepEdit, RepKind};
use orbitfield::app::settings::Settings;
use orbitfield::app::state::{AppState, Command};
use orbitfield::script::{self, RunMode};
use std::path::Path;

#[path = "common/journey.rs"]
mod journey;
#[path = "common/panel_fit.rs"]
mod panel_fit;
use journey::{opened, type_command, type_line};

fn atoms_coloring(state: &AppState, n: usize) -> AtomColoring {
    match &state.reps().list[n - 1].kind {
        RepKind::Atoms(a) => a.coloring,
        _ => panic!("representation {n} is not atoms"),
    }
}

fn cartoon_coloring(state: &AppState, n: usize) -> CartoonColoring {
    match &state.reps().list[n - 1].kind {
        RepKind::Cartoon(c) => c.coloring,
        _ => panic!("representation {n} is not a cartoon"),
    }
}

#[test]
fn atoms_and_cartoons_take_one_colour() {
    let mut harness = panel_fit::window_of(opened(&["md/adk.psf", "md/adk_dims.dcd"], false), [1280.0, 800.0], true);
    harness.run();
    type_command(&mut harness, "rep delete all");
    type_command(&mut harness, "rep add licorice resid 1 to 20 color red");
    type_command(&mut harness, "rep add cartoon protein color 255,128,0");
    let st = harness.state();
    assert_eq!(atoms_coloring(st, 1), AtomColoring::Solid([220, 40, 40]), "red by name");
    assert_eq!(cartoon_coloring(st, 2), CartoonColoring::Solid([255, 128, 0]));
    let s = &st.document().unwrap().structure;
    assert!(
        atom_colors(s, atoms_coloring(st, 1))
            .iter()
            .all(|c| *c == [220, 40, 40, 255]),
        "every atom red"
    );

    // `color N` with a colour, then the scheme again; undo goes back one step at a time.
    type_command(&mut harness, "color 1 #2040ff");
    assert_eq!(
        atoms_coloring(harness.state(), 1),
        AtomColoring::Solid([0x20, 0x40, 0xff])
    );
    type_command(&mut harness, "color 2 ss");
    assert_eq!(
        cartoon_coloring(harness.state(), 2),
        CartoonColoring::SecondaryStructure
    );
    type_command(&mut harness, "undo");
    assert_eq!(
        cartoon_coloring(harness.state(), 2),
        CartoonColoring::Solid([255, 128, 0])
    );
    type_command(&mut harness, "undo");
    assert_eq!(atoms_coloring(harness.state(), 1), AtomColoring::Solid([220, 40, 40]));

    // A word that is neither a scheme nor a colour is named, with what is accepted.
    let (error, text) = type_line(&mut harness, "color 1 reddish").unwrap();
    assert!(
        error && text.contains("'reddish'") && text.contains("#rrggbb"),
        "{text}"
    );
    harness.state_mut().panels.console.input.clear();

    // The representation panel shows the colour's picker under the colour choice, inside the panel.
    let first = harness.state().reps().list[0].id;
    harness.state_mut().apply(Command::SelectRep(first));
    harness.run();
    harness.run();
    assert!(
        harness.query_by_label("Atom colour").is_some(),
        "the solid colour's picker is shown"
    );
    panel_fit::assert_inside_their_panels(&harness, [1280.0, 800.0], 1.0, "an atom colour's picker");

    // A colour dragged in the picker: many edits, one undo step and one log line.
    let id = harness.state().reps().list[0].id;
    let before = harness.state().tools.history.undo.len();
    for k in 0..10u8 {
        harness.state_mut().push(Command::EditRep(
            id,
            RepEdit::AtomColoring(AtomColoring::Solid([10 * k, 100, 200])),
        ));
        harness.run();
    }
    harness.state_mut().push(Command::SettleHistory);
    harness.run();
    assert_eq!(harness.state().tools.history.undo.len(), before + 1, "one undo step");
    assert_eq!(atoms_coloring(harness.state(), 1), AtomColoring::Solid([90, 100, 200]));

    // The command log replays the colours.
    let log = script::log::of(harness.state()).unwrap().text();
    eprintln!("{log}");
    assert!(log.contains("color 1 #5a64c8"), "{log}");
    assert!(!log.contains("color 1 #0064c8"), "a drag is one line\n{log}");
    let mut fresh = AppState::new(Settings::default(), FieldService::default());
    script::run_in(&mut fresh, &log, Path::new("/"), None, RunMode::Window).unwrap_or_else(|e| panic!("{e}\n{log}"));
    assert_eq!(atoms_coloring(&fresh, 1), AtomColoring::Solid([90, 100, 200]));
    assert_eq!(cartoon_coloring(&fresh, 2), CartoonColoring::Solid([255, 128, 0]));

    // A session file keeps them.
    let session = harness.state().session().unwrap();
    let text = ron::to_string(&session).unwrap();
    let back: orbitfield::app::session::Session = ron::from_str(&text).unwrap();
    assert_eq!(back.reps, session.reps);
}
