//! Undo and redo of representation, measurement, label and view edits.
//!
//! Owns [`History`]: snapshots of what the user edits (the representations as [`RepSpec`]s, the
//! measurements, the labels, the camera) taken before a command that changes them is carried
//! out. [`AppState::apply_pending`] applies every queued command through
//! [`AppState::apply_recorded`]; commands that change nothing leave no entry, and runs of the same
//! continuous edit (a camera drag, wheel zooming, an opacity slider, typing a selection) settle
//! into one entry until another command, or [`Command::SettleHistory`] (sent by the view when a
//! drag starts), closes it. Frames, playback and settings are not part of the history.
//!
//! Opening other files (or closing the document) starts a new history; the document replaced is
//! kept as a session ([`History::previous_document`]), so that Undo opens it again with its
//! representations, measurements and labels, and Redo goes forward to the newer one.

use super::atoms::AtomColoring;
use super::measure::Measurement;
use super::reps::{RepEdit, RepId, RepSpec};
use super::session::{CameraSpec, Session};
use super::state::{AppState, Command};
use crate::analysis::polymer::Coloring as CartoonColoring;

/// Entries kept for undo.
pub const MAX_UNDO: usize = 200;

/// What an undo step brings back.
#[derive(Clone, Debug, PartialEq)]
pub struct Snapshot {
    pub reps: Vec<RepSpec>,
    pub measurements: Vec<Measurement>,
    pub labels: Vec<usize>,
    pub camera: CameraSpec,
}

/// Which edits settle into one entry.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Group {
    /// Each command its own entry.
    Single,
    /// Orbit and pan of one drag.
    Drag,
    /// Wheel zooming.
    Zoom,
    /// The main field's isovalue.
    MainIso,
    SlicePlane,
    /// A continuous edit of one representation (selection text, isovalue, colour, opacity).
    Rep(RepId, std::mem::Discriminant<RepEdit>),
}

/// The undo and redo stacks.
#[derive(Clone, Debug, Default)]
pub struct History {
    pub undo: Vec<Snapshot>,
    pub redo: Vec<Snapshot>,
    /// The group the last entry is still open for.
    open: Option<Group>,
    /// The document that opening these files (or closing) replaced: Undo, past the last entry,
    /// opens it again.
    pub previous_document: Option<Box<Session>>,
    /// The document an Undo replaced by the previous one: Redo opens it again.
    pub next_document: Option<Box<Session>>,
}

impl History {
    pub fn can_undo(&self) -> bool {
        !self.undo.is_empty() || self.previous_document.is_some()
    }

    pub fn can_redo(&self) -> bool {
        !self.redo.is_empty() || self.next_document.is_some()
    }
}

/// A session's first file's name ("adk.psf").
fn files_name(s: &Session) -> String {
    s.files
        .first()
        .and_then(|p| p.file_name())
        .map_or_else(|| "the files".into(), |n| n.to_string_lossy().into_owned())
}

/// The history group of a command; `None` for commands outside the history.
pub fn group_of(c: &Command) -> Option<Group> {
    use Command as C;
    Some(match c {
        C::Orbit(_) | C::Pan(_) => Group::Drag,
        C::Zoom(_) => Group::Zoom,
        C::SetIsoValue(_) => Group::MainIso,
        C::SetSlicePlane(_) => Group::SlicePlane,
        C::EditRep(
            id,
            e @ (RepEdit::Selection(_)
            | RepEdit::IsoValue(_)
            | RepEdit::Color { .. }
            | RepEdit::Opacity(_)
            | RepEdit::AtomColoring(AtomColoring::Solid(_))
            | RepEdit::CartoonColoring(CartoonColoring::Solid(_))),
        ) => Group::Rep(*id, std::mem::discriminant(e)),
        C::EditRep(..)
        | C::AddRep(_)
        | C::AddFieldRep(_)
        | C::DuplicateRep(_)
        | C::DeleteRep(_)
        | C::MoveRep(..)
        | C::ResetReps
        | C::SetSpin(_)
        | C::SelectOrbital(_)
        | C::SelectField(_)
        | C::SetIsoMode(_)
        | C::SetShowSlice(_)
        | C::SetSurfaceColor(_)
        | C::ResetCamera
        | C::SetCamera(_)
        | C::FitToSelection(_)
        | C::Pick { .. }
        | C::PickAtom(_)
        | C::AddMeasurement(_)
        | C::AddRmsdMeasurement { .. }
        | C::AddSelectionMeasurement { .. }
        | C::DeleteMeasurement(_)
        | C::ClearMeasurements
        | C::ToggleLabel(_)
        | C::LabelSelection(_)
        | C::ClearLabels => Group::Single,
        _ => return None,
    })
}

/// What differs between two snapshots, in words for the status line ("the measurements", "the
/// representations and the view").
fn changed(a: &Snapshot, b: &Snapshot) -> String {
    let parts: Vec<&str> = [
        (a.reps != b.reps, "the representations"),
        (a.measurements != b.measurements, "the measurements"),
        (a.labels != b.labels, "the labels"),
        (a.camera != b.camera, "the view"),
    ]
    .into_iter()
    .filter_map(|(differs, what)| differs.then_some(what))
    .collect();
    match parts.as_slice() {
        [] => "nothing changed".into(),
        [one] => (*one).into(),
        [rest @ .., last] => format!("{} and {last}", rest.join(", ")),
    }
}

impl AppState {
    /// What Undo (`redo` false) or Redo would change now, in words ("the measurements"), for the
    /// Edit menu; `None` when there is nothing to undo or redo.
    pub fn history_step_text(&self, redo: bool) -> Option<String> {
        let h = &self.tools.history;
        let (entry, document) = if redo {
            (h.redo.last(), &h.next_document)
        } else {
            (h.undo.last(), &h.previous_document)
        };
        match (entry, document) {
            (Some(target), _) => Some(changed(&self.snapshot(), target)),
            (None, Some(s)) => Some(format!("open {} again", files_name(s))),
            (None, None) => None,
        }
    }

    /// Keeps the document about to be replaced by other files (or closed), for Undo.
    pub(crate) fn keep_replaced_document(&mut self, replaced: Option<Session>) {
        let h = &mut self.tools.history;
        h.previous_document = replaced.filter(|s| !s.files.is_empty()).map(Box::new);
        h.next_document = None;
    }

    /// Opens a document replaced by an open (Undo, `redo` false) or by an Undo (Redo) again, as
    /// its session was when it was left.
    fn reopen(&mut self, s: Session, redo: bool) {
        let leaving = self.session();
        let before = self.document().map(|d| d.id);
        self.apply_session(&s);
        if self.document().map(|d| d.id) == before {
            // The files could not be read (the error says why): keep the way back.
            let h = &mut self.tools.history;
            if redo {
                h.next_document = Some(Box::new(s));
            } else {
                h.previous_document = Some(Box::new(s));
            }
            return;
        }
        let name = files_name(&s);
        let h = &mut self.tools.history;
        if redo {
            // The open recorded the document left as the one Undo goes back to.
            h.next_document = None;
            self.panels.status = format!("redone: {name} opened again (Ctrl+Z goes back)");
        } else {
            h.previous_document = None;
            h.next_document = leaving.filter(|s| !s.files.is_empty()).map(Box::new);
            self.panels.status = format!(
                "undone: {name} opened again, with its representations, measurements and labels (Ctrl+Shift+Z goes forward)"
            );
        }
    }

    /// What an undo step would bring back now.
    pub fn snapshot(&self) -> Snapshot {
        Snapshot {
            reps: self.doc.reps.list.iter().map(|r| self.rep_spec(r)).collect(),
            measurements: self.tools.measure.list.clone(),
            labels: self.tools.labels.atoms.clone(),
            camera: CameraSpec::of(&self.view.camera),
        }
    }

    /// Applies a command and records what it changed for undo.
    pub fn apply_recorded(&mut self, c: Command) {
        let Some(group) = group_of(&c) else {
            if matches!(c, Command::SettleHistory) {
                self.tools.history.open = None;
            }
            return self.apply(c);
        };
        let before = self.snapshot();
        self.apply(c);
        if self.snapshot() == before {
            return;
        }
        let history = &mut self.tools.history;
        let coalesce = group != Group::Single && history.open == Some(group) && history.can_undo();
        if !coalesce {
            history.undo.push(before);
            if history.undo.len() > MAX_UNDO {
                history.undo.remove(0);
            }
        }
        history.redo.clear();
        history.open = (group != Group::Single).then_some(group);
    }

    /// Brings back the state before the last recorded edit.
    pub(crate) fn undo(&mut self) {
        let Some(previous) = self.tools.history.undo.pop() else {
            match self.tools.history.previous_document.take() {
                Some(s) => self.reopen(*s, false),
                None => self.panels.status = "nothing to undo".into(),
            }
            return;
        };
        let now = self.snapshot();
        let what = changed(&now, &previous);
        self.tools.history.redo.push(now);
        self.tools.history.open = None;
        self.restore(previous);
        self.panels.status = format!("undone: {what} (Ctrl+Shift+Z redoes)");
    }

    /// Does again what the last undo took back.
    pub(crate) fn redo(&mut self) {
        let Some(next) = self.tools.history.redo.pop() else {
            match self.tools.history.next_document.take() {
                Some(s) => self.reopen(*s, true),
                None => self.panels.status = "nothing to redo".into(),
            }
            return;
        };
        let now = self.snapshot();
        let what = changed(&now, &next);
        self.tools.history.undo.push(now);
        self.tools.history.open = None;
        self.restore(next);
        self.panels.status = format!("redone: {what}");
    }

    /// Shows what a snapshot holds (representations are made again only when they differ).
    fn restore(&mut self, s: Snapshot) {
        let reps_now: Vec<RepSpec> = self.doc.reps.list.iter().map(|r| self.rep_spec(r)).collect();
        if reps_now != s.reps {
            let mut skipped = Vec::new();
            if reps_now.len() == s.reps.len() {
                // One edit taken back: only the representations that differ change, in their
                // places, and the others keep what they computed (surfaces, their colours,
                // cartoons). A hide or show is only that.
                let ids: Vec<_> = self.doc.reps.list.iter().map(|r| r.id).collect();
                for (i, ((id, now), then)) in ids.into_iter().zip(&reps_now).zip(&s.reps).enumerate() {
                    if now == then {
                        continue;
                    }
                    if now.kind == then.kind {
                        self.edit_rep(id, RepEdit::Visible(then.visible));
                        continue;
                    }
                    self.delete_rep(id);
                    match self.add_rep(then) {
                        Ok(new) => self.move_rep(new, i),
                        Err(e) => skipped.push(e),
                    }
                }
            } else {
                self.clear_reps();
                for spec in &s.reps {
                    if let Err(e) = self.add_rep(spec) {
                        skipped.push(e);
                    }
                }
            }
            if let Some(super::fields::FieldChoice::Orbital { spin, index }) = self.main_field() {
                self.doc.spin = spin;
                self.doc.orbital = Some(index);
            }
            if !skipped.is_empty() {
                self.error(format!("undo: skipped {}", skipped.join("; ")));
            }
        }
        let measure = &mut self.tools.measure;
        measure.picked.clear();
        measure
            .series
            .retain(|id, _| s.measurements.iter().any(|m| m.id == *id));
        if measure
            .plotted
            .is_some_and(|id| !s.measurements.iter().any(|m| m.id == id))
        {
            measure.plotted = None;
        }
        measure.list = s.measurements;
        self.tools.labels.atoms = s.labels;
        s.camera.apply(&mut self.view.camera);
    }
}
