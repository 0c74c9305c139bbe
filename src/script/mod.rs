//! The command language: ChimeraX/VMD-like verbs, one command per line or `;` separated, for the
//! window's command line, `.ofc` scripts and headless runs.
//!
//! `script` owns the language: the one table of verbs ([`verbs`]; the
//! analyses' verbs, `ils` and `rdf`, in `verbs_tools`) from which the parser, `help`,
//! completion ([`complete`]) and the reference `docs/scripting.md` are made; the tokenizer with
//! byte columns ([`lex`]) and the reading of a statement against the table ([`parse`]); checking a statement against the state before anything changes
//! ([`plan`]; the analyses' statements in `plan_tools`, the slice's in `plan_slice`, the measurements' in `plan_measure`); carrying it out through the same `app::state::Command`s the window's controls push
//! ([`exec`]); and the action log ([`log`]): every command applied through
//! `AppState::apply_pending`, from the panels too, written back as command text, so that a saved
//! log replays the session. `script` stands above `app` (and `io`, `model`, `render`); `ui` and
//! the command line use it; `app` does not (it calls the log through
//! `app::console::CommandObserver`).
//!
//! [`run_text`] is the entry for front ends: a script run without a window, fields computed on the
//! calling thread, images and movies drawn offscreen.

pub mod complete;
pub mod exec;
pub mod lex;
pub mod log;
pub mod parse;
pub mod plan;
mod plan_color;
mod plan_measure;
mod plan_slice;
mod plan_tools;
pub mod verbs;
mod verbs_tools;

use crate::app::state::AppState;
use std::path::{Path, PathBuf};

/// How a script runs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum RunMode {
    /// Without a window: fields computed on the calling thread and awaited after each command,
    /// images and movies drawn by an offscreen renderer.
    Headless,
    /// In the window: commands are applied and the window computes and draws as usual (images
    /// are written after its next redraw).
    Window,
}

/// What a finished script did.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct RunReport {
    /// Commands carried out.
    pub statements: usize,
    /// What commands reported (help, selection counts, RMSD, files written), in order.
    pub output: Vec<String>,
    /// The session at the end (`None` when nothing is open).
    pub session: Option<crate::app::session::Session>,
    /// In the window: the script waits for the view before saving an image or a movie, and goes
    /// on by itself (`app::console::ConsoleState::resume`).
    pub waiting: bool,
}

/// Why a script stopped: the file (if any), line and byte column (1-based) of the failing
/// command, and one line saying what is wrong.
#[derive(Clone, Debug, PartialEq, thiserror::Error)]
pub struct ScriptError {
    pub file: Option<PathBuf>,
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.file {
            Some(p) => write!(f, "{}:{}:{}: {}", p.display(), self.line, self.column, self.message),
            None => write!(f, "line {}, column {}: {}", self.line, self.column, self.message),
        }
    }
}

/// A viewer state for headless runs: fields computed on the calling thread by the CPU engine,
/// isosurfaces extracted inline, the view `size_px`.
pub fn headless_state(size_px: [u32; 2]) -> AppState {
    let backend = crate::app::blocking_engine()
        .map(|e| Box::new(crate::app::fields::InlineBackend::new(e)) as Box<dyn crate::app::fields::FieldBackend>);
    let mut state = AppState::new(
        crate::app::settings::Settings::default(),
        crate::app::fields::FieldService::new(backend, crate::app::default_extractor()),
    );
    state.view.size_px = size_px;
    state
}

/// Runs a script's text on a fresh headless viewer (`mode` must be [`RunMode::Headless`]; the
/// window runs scripts through [`run_in`]); paths are relative to `base_dir`. Stops at the first
/// failing command, which changes nothing.
pub fn run_text(text: &str, base_dir: &Path, mode: RunMode) -> Result<RunReport, ScriptError> {
    let mut state = headless_state([800, 600]);
    state.observer = Some(Box::new(log::ActionLog::default()));
    run_in(&mut state, text, base_dir, None, mode)
}

/// Runs a script file headless (its paths relative to its folder).
pub fn run_file(path: &Path) -> Result<RunReport, ScriptError> {
    let text = std::fs::read_to_string(path).map_err(|e| ScriptError {
        file: Some(path.to_path_buf()),
        line: 0,
        column: 0,
        message: format!("cannot read the script: {e}"),
    })?;
    let mut state = headless_state([800, 600]);
    run_in(
        &mut state,
        &text,
        &exec::base_dir_of(path),
        Some(path),
        RunMode::Headless,
    )
}

/// Runs `text` on `state` (the window's command line, tests): `file` names the script in errors.
pub fn run_in(
    state: &mut AppState,
    text: &str,
    base_dir: &Path,
    file: Option<&Path>,
    mode: RunMode,
) -> Result<RunReport, ScriptError> {
    finish(exec::Runner::new(state, mode), |r| r.run_text(text, base_dir, file))
}

/// Goes on with a script that waited for the window's view (`app::console::ScriptResume`); it may
/// wait again.
pub fn resume(state: &mut AppState, r: &crate::app::console::ScriptResume) -> Result<RunReport, ScriptError> {
    let mut runner = exec::Runner::new(state, RunMode::Window);
    // The report counts the commands carried out before the script waited too.
    runner.statements = r.done;
    finish(runner, |runner| {
        runner.run_from(&r.text, &r.base_dir, r.file.as_deref(), r.first_line, r.skip)
    })
}

fn finish(
    mut runner: exec::Runner<'_>,
    run: impl FnOnce(&mut exec::Runner<'_>) -> Result<(), ScriptError>,
) -> Result<RunReport, ScriptError> {
    let result = run(&mut runner);
    let report = RunReport {
        statements: runner.statements,
        output: std::mem::take(&mut runner.output),
        session: runner.state.session(),
        waiting: runner.resume.is_some(),
    };
    runner.state.panels.console.resume = runner.resume.take();
    result.map(|()| report)
}
