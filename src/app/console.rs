//! The command line's state in the window, and the hook through which the action log sees every
//! command.
//!
//! Owns [`ConsoleState`] (the typed line, its history, the last message, the log view's state, a
//! script to run when the window starts) and the [`CommandObserver`] trait: an observer set on
//! [`AppState::observer`] is told before and after each command that
//! [`AppState::apply_pending`] carries out, whether the panels or a script pushed it. The command
//! language, and the text each command is logged as, live outside `app` (in `script`), so that the
//! state does not depend on the language.

use super::state::{AppState, Command};
use std::path::PathBuf;

/// Told of every command [`AppState::apply_pending`] carries out.
pub trait CommandObserver {
    /// Before `command` is applied to `state`.
    fn before(&mut self, state: &AppState, command: &Command);
    /// After `command` was applied; `failed` when it reported an error.
    fn after(&mut self, state: &AppState, command: &Command, failed: bool);
    /// The observer as `Any`, for the panel that shows it.
    fn as_any(&self) -> &dyn std::any::Any;
    fn as_any_mut(&mut self) -> &mut dyn std::any::Any;
}

/// The command line under the view.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct ConsoleState {
    /// The line being typed.
    pub input: String,
    /// Lines entered, oldest first.
    pub history: Vec<String>,
    /// Where Up/Down are in the history (`None`: at the line being typed).
    pub history_pos: Option<usize>,
    /// What the last line said: an error (true) or a report.
    pub message: Option<(bool, String)>,
    /// The message shown and the document open when it was first shown with nothing queued: an
    /// error is forgotten once another document is open (it spoke of the one before).
    pub message_anchor: Option<(String, Option<u64>)>,
    /// The completions Tab offered last (shown under the line when there are several).
    pub completions: Vec<String>,
    /// The action log is shown.
    pub show_log: bool,
    /// Where "Save as script…" writes the log.
    pub log_path: String,
    /// A script to run once the window shows its first frame (`orbitfield SCRIPT.ofc`).
    pub pending_script: Option<PathBuf>,
    /// The rest of a script, waiting for the view to show the current frame before it saves an
    /// image or a movie.
    pub resume: Option<ScriptResume>,
}

/// Where a script waiting for the view goes on.
#[derive(Clone, Debug, PartialEq)]
pub struct ScriptResume {
    /// The script from the waiting command's line on.
    pub text: String,
    pub base_dir: PathBuf,
    pub file: Option<PathBuf>,
    /// The line number (from 1) of the first line of `text` in the script.
    pub first_line: usize,
    /// Commands of the first line already carried out.
    pub skip: usize,
    /// Commands of the whole script carried out before it waited (the report counts them all).
    pub done: usize,
}
