//! Typing over the 3-D view, as a ChimeraX or PyMOL user does: a letter typed while no text field
//! has the keyboard starts a command on the command line, and what follows it in the same frame
//! (a Space, digits) is text, not a shortcut. Digits and Space alone keep their shortcuts. On an
//! empty command line Ctrl+Z undoes the window's last change, and `rep add` takes the Add menu's
//! and PyMOL's words for atom styles.

#![allow(clippy::unwrap_used, clippy::expect_used)]

use egui::{Event, Key, Modifiers};
use egui_kittest::Harness;
use orbitfield::app::measure::ClickMode;
use orbitfield::app::state::AppState;

#[path = "common/journey.rs"]
mod journey;

/// A key pressed with the text it types, as the window gets them from the keyboard.
fn typed(harness: &Harness<'static, AppState>, text: &str) {
    for c in text.chars() {
        let key = match c {
            ' ' => Some(Key::Space),
            c => Key::from_name(&c.to_ascii_uppercase().to_string()),
        };
        if let Some(key) = key {
            harness.event(Event::Key {
                key,
                physical_key: None,
                pressed: true,
                repeat: false,
                modifiers: Modifiers::NONE,
            });
        }
        harness.event(Event::Text(c.to_string()));
    }
}

/// A click on empty space in the view, which takes the keyboard away from the command line.
fn click_view(harness: &Harness<'static, AppState>) {
    for pressed in [true, false] {
        harness.event(Event::PointerButton {
            pos: egui::pos2(640.0, 300.0),
            button: egui::PointerButton::Primary,
            pressed,
            modifiers: Modifiers::NONE,
        });
    }
}

#[test]
fn letters_typed_over_the_view_go_to_the_command_line() {
    let mut harness = journey::window(journey::opened(&["md/adk.psf", "md/adk_dims.dcd"], false));
    harness.run();
    // A whole line typed within one slow frame: its Space does not start playing.
    typed(&harness, "rep list");
    harness.run();
    let st = harness.state();
    assert_eq!(st.panels.console.input, "rep list");
    assert!(!st.view.timeline.playing, "the Space was text");
    harness.key_press(Key::Enter);
    harness.run();
    let (error, text) = harness.state().panels.console.message.clone().expect("the list");
    assert!(!error && text.trim_start().starts_with("1  "), "{text}");

    // Typed a key per frame, after a click on the view took the keyboard away from the line.
    click_view(&harness);
    harness.run();
    for c in "frame 3".chars() {
        typed(&harness, &c.to_string());
        harness.run();
    }
    assert_eq!(harness.state().panels.console.input, "frame 3");
    harness.key_press(Key::Enter);
    harness.run();
    assert_eq!(harness.state().document().unwrap().frame_index, 3);

    // Digits alone keep their shortcuts: 1 starts labelling by clicks, 2 measuring a distance.
    click_view(&harness);
    harness.run();
    typed(&harness, "1");
    harness.run();
    assert_eq!(harness.state().tools.measure.mode, ClickMode::Label);
    assert!(harness.state().panels.console.input.is_empty());
}

/// After a command typed on the line and a click on the view, the first arrow press steps a
/// frame (the line gave the keyboard back with the click).
#[test]
fn the_first_arrow_after_a_click_on_the_view_steps_a_frame() {
    let mut harness = journey::window(journey::opened(&["md/adk.psf", "md/adk_dims.dcd"], false));
    harness.run();
    journey::type_command(&mut harness, "frame 50");
    assert_eq!(harness.state().document().unwrap().frame_index, 50);
    click_view(&harness);
    harness.run();
    for want in [51, 52, 53] {
        harness.key_press(Key::ArrowRight);
        harness.run();
        assert_eq!(harness.state().document().unwrap().frame_index, want);
    }
}

/// After a command, the line keeps the keyboard; with nothing typed on it, Ctrl+Z undoes the
/// window's last change and Ctrl+Shift+Z redoes it, as the `undo` command would.
#[test]
fn ctrl_z_on_an_empty_command_line_undoes_the_last_change() {
    let mut harness = journey::window(journey::opened(&["md/adk.psf", "md/adk_dims.dcd"], false));
    harness.run();
    journey::type_command(&mut harness, "measure distance 1 2");
    assert_eq!(harness.state().tools.measure.list.len(), 1);
    assert!(harness.state().panels.console.input.is_empty());
    harness.key_press_modifiers(Modifiers::COMMAND, Key::Z);
    harness.run();
    assert!(
        harness.state().tools.measure.list.is_empty(),
        "{}",
        harness.state().panels.status
    );
    harness.key_press_modifiers(Modifiers::COMMAND | Modifiers::SHIFT, Key::Z);
    harness.run();
    assert_eq!(
        harness.state().tools.measure.list.len(),
        1,
        "{}",
        harness.state().panels.status
    );
}

/// The Add menu's word for atoms, and PyMOL's sticks and spheres, are styles `rep add` takes.
#[test]
fn rep_add_takes_the_menus_and_pymols_words_for_atom_styles() {
    use orbitfield::app::atoms::AtomStyle;
    use orbitfield::app::reps::RepKind;
    let mut harness = journey::window(journey::opened(&["md/adk.psf"], false));
    harness.run();
    for (word, style) in [
        ("atoms", AtomStyle::Licorice),
        ("sticks", AtomStyle::Licorice),
        ("spheres", AtomStyle::Vdw),
    ] {
        journey::type_command(&mut harness, &format!("rep add {word} resid 1 to 3"));
        let last = harness.state().reps().list.last().unwrap();
        assert!(matches!(&last.kind, RepKind::Atoms(a) if a.style == style), "{word}");
    }
}

/// A command's one-line answer takes a row kept for it: the 3-D view keeps its size (it used to
/// shrink by a row and the molecule jumped) as the answer appears and when it is closed.
#[test]
fn a_command_s_answer_does_not_resize_the_view() {
    let mut harness = journey::window(journey::opened(&["md/adk.psf", "md/adk_dims.dcd"], false));
    harness.run_steps(3);
    let before = harness.state().view.size_px;
    journey::type_command(&mut harness, "measure distance 817 2633");
    harness.run_steps(2);
    let message = harness.state().panels.console.message.clone();
    assert!(message.is_some(), "the command answered");
    assert_eq!(harness.state().view.size_px, before, "with the answer {message:?}");
    harness.key_press(Key::Escape);
    harness.run_steps(2);
    assert!(
        harness.state().panels.console.message.is_none(),
        "Escape closed the answer"
    );
    assert_eq!(harness.state().view.size_px, before, "with the answer closed");
}
