//! The command line under the 3-D view: a line for the command language (`script`), with history
//! (Up/Down), Tab completion of verbs, selection words and file names, errors shown inline under
//! it, and the action log (every change made in the window, as commands) with "Save as script…".
//! The line sits in a bottom panel of its own, so it covers no other control.

use super::tokens;
use crate::app::state::AppState;
use crate::script::{self, RunMode};
use egui::{Key, RichText};
use std::path::Path;

/// The command line's label (tests find the line by it).
pub const LABEL: &str = "Command";

/// The command line, its message and the log.
pub fn console_ui(ui: &mut egui::Ui, state: &mut AppState) {
    if state.observer.is_none() {
        state.observer = Some(Box::new(script::log::ActionLog::default()));
    }
    // A script given beside files runs once they are open (the queue holds their opening until
    // the first frame applies it): its `rep delete all` would otherwise see no document, and the
    // files' default representations would come after it.
    if !state.has_pending()
        && let Some(path) = state.panels.console.pending_script.take()
    {
        run_script_file(state, &path);
    } else if state.panels.console.pending_script.is_some() {
        ui.ctx().request_repaint();
    }
    if let Some(r) = state.panels.console.resume.take() {
        let result = script::resume(state, &r);
        report(state, r.file.as_deref(), result);
        if state.panels.console.resume.is_some() {
            // Still waiting: come back on the next frame.
            ui.ctx().request_repaint_after(std::time::Duration::from_millis(50));
        }
    }
    let id = line_id();
    let focused = ui.memory(|m| m.has_focus(id));
    if focused {
        keys(ui, state, id);
    }
    if state.panels.console.show_log {
        log_ui(ui, state);
    }
    // The log, completions and the last message above the line: the panel grows upward from the
    // window's bottom edge, so the line itself never moves under the pointer.
    let console = &state.panels.console;
    if console.completions.len() > 1 {
        ui.label(RichText::new(console.completions.join("  ")).small().monospace());
    }
    forget_stale_error(state);
    message_ui(ui, state);
    let mut entered = false;
    ui.horizontal(|ui| {
        let label = ui.label(LABEL);
        let log_button_width = 90.0;
        let edit = egui::TextEdit::singleline(&mut state.panels.console.input)
            .id(id)
            .hint_text("help · open FILE · rep add cartoon protein · frame 40")
            .font(egui::TextStyle::Monospace)
            .lock_focus(true)
            .desired_width((ui.available_width() - log_button_width).max(100.0));
        let response = ui.add(edit).labelled_by(label.id);
        if response.lost_focus() && ui.input(|i| i.key_pressed(Key::Enter)) {
            entered = true;
            response.request_focus();
        }
        let log_label = if state.panels.console.show_log {
            "Hide log"
        } else {
            "Log"
        };
        if ui
            .button(log_label)
            .on_hover_text("Every change made in the window, as commands")
            .clicked()
        {
            state.panels.console.show_log = !state.panels.console.show_log;
        }
    });
    if entered {
        run_line(state);
        // A line that failed stays for correcting, selected (as ChimeraX keeps it): typing
        // replaces it, an arrow key starts editing it.
        if state.panels.console.message.as_ref().is_some_and(|(error, _)| *error)
            && !state.panels.console.input.is_empty()
            && let Some(mut s) = egui::TextEdit::load_state(ui.ctx(), id)
        {
            s.cursor
                .set_char_range(Some(egui::text_selection::CCursorRange::select_all_str(
                    &state.panels.console.input,
                )));
            s.store(ui.ctx(), id);
        }
        ui.ctx().request_repaint();
    }
}

/// The command line's widget id.
fn line_id() -> egui::Id {
    egui::Id::unique("orbitfield_command_line")
}

/// A letter typed while no text field has the keyboard starts a command on the line, as ChimeraX
/// and PyMOL take what is typed over their graphics: the line takes the focus with its cursor at
/// the end, and reads this frame's typing itself (so a Space or digit typed after the letter is
/// text, not a shortcut). Digits, Space, arrows and the other keys keep their shortcuts. Runs
/// before the shortcuts.
pub fn take_typed_letters(ui: &mut egui::Ui, state: &mut AppState) {
    if ui.ctx().egui_wants_keyboard_input() || egui::Popup::is_any_open(ui.ctx()) {
        return;
    }
    let letter = ui.input(|i| {
        !i.modifiers.command
            && !i.modifiers.alt
            && i.events
                .iter()
                .any(|e| matches!(e, egui::Event::Text(t) if t.chars().next().is_some_and(char::is_alphabetic)))
    });
    if !letter {
        return;
    }
    let id = line_id();
    ui.memory_mut(|m| m.request_focus(id));
    let mut s = egui::TextEdit::load_state(ui.ctx(), id).unwrap_or_default();
    let end = egui::text::CCursor::new(state.panels.console.input.chars().count());
    s.cursor
        .set_char_range(Some(egui::text_selection::CCursorRange::one(end)));
    s.store(ui.ctx(), id);
}

/// Lines of a message shown before it scrolls.
const MESSAGE_LINES: usize = 12;

/// The last command's message above the line, whole: a long one (`help`) scrolls within
/// [`MESSAGE_LINES`] lines; *Close* (or Escape) puts it away.
fn message_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let Some((error, text)) = &state.panels.console.message else {
        // The row is kept while empty: a one-line message then takes its place without growing
        // the panel, and the 3-D view above does not shrink and jump as it appears and goes.
        // Laid out as a one-line message (its text and its small button), but not shown.
        ui.horizontal_top(|ui| {
            ui.set_invisible();
            ui.label(RichText::new(" ").small().monospace());
            let _ = ui.small_button(" ");
        });
        return;
    };
    let rich = RichText::new(text.as_str()).small().monospace();
    let rich = if *error { rich.color(tokens::ERROR) } else { rich };
    let n_lines = text.lines().count();
    let mut close = false;
    ui.horizontal_top(|ui| {
        let close_width = 60.0;
        let width = (ui.available_width() - close_width).max(100.0);
        if n_lines > MESSAGE_LINES {
            let row = ui.text_style_height(&egui::TextStyle::Small) + ui.spacing().item_spacing.y.min(2.0);
            egui::ScrollArea::vertical()
                .id_salt("orbitfield_command_message")
                .max_height(row * MESSAGE_LINES as f32)
                .max_width(width)
                .auto_shrink([false, true])
                // The bar shows there is more to read without hovering first.
                .scroll_bar_visibility(egui::scroll_area::ScrollBarVisibility::AlwaysVisible)
                .show(ui, |ui| ui.add(egui::Label::new(rich).wrap()));
        } else {
            ui.allocate_ui(egui::vec2(width, 0.0), |ui| ui.add(egui::Label::new(rich).wrap()));
        }
        close = ui
            .small_button("Close")
            .on_hover_text(if n_lines > MESSAGE_LINES {
                format!("{n_lines} lines: scroll to read them all. Escape also closes this.")
            } else {
                "Escape also closes this".to_string()
            })
            .clicked();
    });
    if close {
        state.panels.console.message = None;
    }
}

/// An error the command line showed is put away once another document is open: it spoke of
/// the one before (a file that did not open, a selection of its atoms). Anchored only once
/// nothing is queued, so a script's own `open` does not hide the error of a line after it.
fn forget_stale_error(state: &mut AppState) {
    if state.has_pending() {
        return;
    }
    let document = state.document().map(|d| d.id);
    let c = &mut state.panels.console;
    let Some((error, text)) = &c.message else {
        c.message_anchor = None;
        return;
    };
    match &c.message_anchor {
        Some((anchored, at)) if anchored == text => {
            if *error && *at != document {
                c.message = None;
                c.message_anchor = None;
            }
        }
        _ => c.message_anchor = Some((text.clone(), document)),
    }
}

/// Up/Down through the history, Tab to complete (before the line sees the keys). On an empty
/// line, Ctrl+Z and Ctrl+Shift+Z (or Ctrl+Y) undo and redo the window's last change, as after a
/// command the line keeps the keyboard and has no text of its own to undo.
fn keys(ui: &mut egui::Ui, state: &mut AppState, id: egui::Id) {
    if state.panels.console.input.is_empty() {
        let (redo, undo) = ui.input_mut(super::tools::take_undo_keys);
        if redo {
            state.push(crate::app::state::Command::Redo);
        } else if undo {
            state.push(crate::app::state::Command::Undo);
        }
    }
    let (up, down, tab) = ui.input_mut(|i| {
        (
            i.consume_key(egui::Modifiers::NONE, Key::ArrowUp),
            i.consume_key(egui::Modifiers::NONE, Key::ArrowDown),
            i.consume_key(egui::Modifiers::NONE, Key::Tab),
        )
    });
    let c = &mut state.panels.console;
    let mut changed = false;
    if up && !c.history.is_empty() {
        let pos = c.history_pos.map_or(c.history.len() - 1, |p| p.saturating_sub(1));
        c.history_pos = Some(pos);
        c.input = c.history[pos].clone();
        changed = true;
    }
    if down && let Some(p) = c.history_pos {
        if p + 1 < c.history.len() {
            c.history_pos = Some(p + 1);
            c.input = c.history[p + 1].clone();
        } else {
            c.history_pos = None;
            c.input.clear();
        }
        changed = true;
    }
    if tab {
        let (start, words) = script::complete::complete(&c.input, Path::new("."));
        match words.as_slice() {
            [] => {}
            [one] => {
                let space = if one.ends_with('/') { "" } else { " " };
                c.input = format!("{}{one}{space}", &c.input[..start]);
                c.completions.clear();
            }
            many => {
                let common = common_prefix(many);
                if common.len() > c.input.len() - start {
                    c.input = format!("{}{common}", &c.input[..start]);
                }
                c.completions = many.to_vec();
            }
        }
        changed = true;
    }
    if changed {
        // The cursor to the end of the new text.
        if let Some(mut s) = egui::TextEdit::load_state(ui.ctx(), id) {
            let end = egui::text::CCursor::new(c.input.chars().count());
            s.cursor
                .set_char_range(Some(egui::text_selection::CCursorRange::one(end)));
            s.store(ui.ctx(), id);
        }
    }
}

fn common_prefix(words: &[String]) -> String {
    let Some(first) = words.first() else {
        return String::new();
    };
    let mut n = first.len();
    for w in &words[1..] {
        n = n.min(first.bytes().zip(w.bytes()).take_while(|(a, b)| a == b).count());
    }
    while !first.is_char_boundary(n) {
        n -= 1;
    }
    first[..n].to_string()
}

/// Runs the typed line (the window applies what it did after the layout, as for any control).
pub fn run_line(state: &mut AppState) {
    state.panels.console.message_anchor = None;
    let line = state.panels.console.input.trim().to_string();
    if line.is_empty() {
        return;
    }
    let c = &mut state.panels.console;
    // A new line stops a script waiting for the view.
    c.resume = None;
    if c.history.last() != Some(&line) {
        c.history.push(line.clone());
    }
    c.history_pos = None;
    c.completions.clear();
    let status_before = state.panels.status.clone();
    let result = script::run_in(state, &line, Path::new("."), None, RunMode::Window);
    keep_status_unless_new(state, &result, status_before);
    let c = &mut state.panels.console;
    match result {
        Ok(report) => {
            c.input.clear();
            c.message = if report.waiting {
                Some((false, "waiting for the view to finish drawing…".into()))
            } else {
                (!report.output.is_empty()).then(|| (false, report.output.join("\n")))
            };
        }
        // The line stays for correcting; the message points at the column.
        Err(e) => {
            c.message = Some((
                true,
                format!(
                    "{}^ column {}: {}",
                    " ".repeat(e.column.saturating_sub(1)),
                    e.column,
                    e.message
                ),
            ))
        }
    }
}

fn run_script_file(state: &mut AppState, path: &Path) {
    let text = match std::fs::read_to_string(path) {
        Ok(t) => t,
        Err(e) => {
            let msg = format!("{}: {e}", path.display());
            state.record_error(msg.clone());
            state.panels.console.message = Some((true, msg));
            return;
        }
    };
    let dir = script::exec::base_dir_of(path);
    let status_before = state.panels.status.clone();
    let result = script::run_in(state, &text, &dir, Some(path), RunMode::Window);
    keep_status_unless_new(state, &result, status_before);
    report(state, Some(path), result);
}

/// An error shown under the line is not repeated on the status line: it goes back to what it said
/// (the error list keeps the error).
fn keep_status_unless_new<T>(state: &mut AppState, result: &Result<T, script::ScriptError>, status_before: String) {
    if let Err(e) = result
        && state.panels.status != status_before
        && !state.panels.status.is_empty()
        && e.message.contains(state.panels.status.as_str())
    {
        state.panels.status = status_before;
    }
}

/// What a script run says under the line.
fn report(state: &mut AppState, path: Option<&Path>, result: Result<script::RunReport, script::ScriptError>) {
    state.panels.console.message_anchor = None;
    let name = path.map_or("script".to_string(), |p| p.display().to_string());
    // A script file's failure is kept as an error too (a terminal that started the window hears of it).
    if let (Some(_), Err(e)) = (path, &result) {
        state.record_error(e.to_string());
    }
    state.panels.console.message = Some(match result {
        Ok(r) if r.waiting => (false, format!("{name}: waiting for the view to finish drawing…")),
        Ok(r) => (
            false,
            match r.statements {
                1 => format!("{name}: 1 command"),
                n => format!("{name}: {n} commands"),
            },
        ),
        Err(e) => (true, e.to_string()),
    });
}

/// The action log and "Save as script…".
fn log_ui(ui: &mut egui::Ui, state: &mut AppState) {
    let lines: Vec<String> = script::log::of(state).map(|l| l.lines.clone()).unwrap_or_default();
    egui::ScrollArea::vertical()
        .id_salt("action_log")
        .max_height(120.0)
        .stick_to_bottom(true)
        .show(ui, |ui| {
            for l in &lines {
                ui.label(RichText::new(l).small().monospace());
            }
            if lines.is_empty() {
                ui.label(RichText::new("Nothing done yet.").small().weak());
            }
        });
    ui.horizontal(|ui| {
        let l = ui.label("Script file");
        ui.add(
            egui::TextEdit::singleline(&mut state.panels.console.log_path)
                .hint_text("session.ofc")
                .desired_width(tokens::TEXT_FIELD_WIDTH),
        )
        .labelled_by(l.id);
        if ui.button("Save as script…").clicked() {
            let path = state.panels.console.log_path.trim().to_string();
            let result = if path.is_empty() {
                Err("type a file name for the script".to_string())
            } else {
                script::log::of(state)
                    .ok_or_else(|| "no log is kept".to_string())
                    .and_then(|log| log.save(Path::new(&path)))
            };
            state.panels.console.message = Some(match result {
                Ok(()) => (false, format!("log saved to {path}")),
                Err(e) => (true, e),
            });
        }
    });
}
