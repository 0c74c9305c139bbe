//! Which representation a panel edits: the one selected in the representation list. The field
//! panel edits the selected field representation (else the first one, the main field); the orbital
//! list and the energy diagram edit the selected orbital representation (else the topmost one, else
//! they add one) and never turn a density or potential representation into an orbital; a
//! shift-click adds another orbital representation. `rep list` names them with their numbers, in
//! the words of [`AppState::rep_label`].
//!
//! Called by `app::apply` (orbital, field and isovalue commands), `app::orbitals` (following an
//! orbital through frames), the draw stage (which representation's phase follows) and `ui`.

use super::{FieldRep, FieldStyle, Rep, RepEdit, RepId, RepKind};
use crate::app::fields::FieldChoice;
use crate::app::state::AppState;

impl AppState {
    /// What representation `id` shows, in words ("protein: Licorice", "HOMO (orbital 5):
    /// Isosurface").
    pub fn rep_label(&self, rep: &Rep) -> String {
        match &rep.kind {
            // The selection drawn (a text that does not parse leaves the last valid one in use).
            RepKind::Atoms(a) => format!("{}: {}", a.selection_in_use(), a.style.name()),
            // A molecular surface is named by what it is and what colours it, not "Isosurface".
            RepKind::Field(f)
                if matches!(
                    (f.field, f.style),
                    (FieldChoice::MolSurf { .. }, FieldStyle::Isosurface)
                ) =>
            {
                match self.surface_colour_words(f) {
                    Some(c) => format!("{}, {c}", self.describe_field(f.field)),
                    None => self.describe_field(f.field),
                }
            }
            RepKind::Field(f) => format!("{}: {}", self.describe_field(f.field), f.style.name()),
            RepKind::Cartoon(c) => format!("{}: {}", c.selection_in_use(), c.style.name()),
        }
    }

    /// How a field representation's surfaces are coloured, in words ("coloured by potential
    /// (charges)", "coloured by chain", "in orange"); `None` in its own colours.
    fn surface_colour_words(&self, f: &super::FieldRep) -> Option<String> {
        use crate::app::atoms::AtomColoring;
        match (f.coloring, f.atom_coloring) {
            (Some(c), _) => Some(format!("coloured by {}", self.describe_field(c.source))),
            (None, Some(AtomColoring::Solid(rgb))) => Some(format!("in {}", crate::model::color::color_word(rgb))),
            (None, Some(AtomColoring::BFactor)) => Some("coloured by B-factor".into()),
            (None, Some(a)) => Some(format!("coloured by {}", a.name().to_lowercase())),
            (None, None) => None,
        }
    }

    /// Selects representation `id` in the list (the field panel shows its controls; an orbital
    /// representation's orbital becomes the orbital list's selection).
    pub fn select_rep(&mut self, id: RepId) {
        let Some(rep) = self.doc.reps.get(id) else {
            return;
        };
        if let RepKind::Field(f) = &rep.kind
            && let FieldChoice::Orbital { spin, index } = f.field
        {
            self.doc.spin = spin;
            self.doc.orbital = Some(index);
            self.panels.scroll_to_orbital = true;
        }
        self.doc.reps.selected = Some(id);
    }

    /// The selected representation, if it is still in the list.
    pub fn selected_rep_id(&self) -> Option<RepId> {
        self.doc.reps.selected.filter(|id| self.doc.reps.get(*id).is_some())
    }

    /// The field representation the field panel edits: the selected one when it is a field
    /// representation, else the first field representation.
    pub fn panel_field_id(&self) -> Option<RepId> {
        self.selected_rep_id()
            .filter(|id| self.doc.reps.field(*id).is_some())
            .or_else(|| self.main_field_id())
    }

    /// The field representation the field panel edits ([`AppState::panel_field_id`]).
    pub fn panel_field_rep(&self) -> Option<&FieldRep> {
        self.doc.reps.field(self.panel_field_id()?)
    }

    /// The field the field panel edits.
    pub fn panel_field(&self) -> Option<FieldChoice> {
        self.panel_field_rep().map(|f| f.field)
    }

    /// The orbital representation the orbital list edits: the selected one when it shows an
    /// orbital, else the topmost shown orbital representation, else the topmost hidden one (Up
    /// and Down step the orbital the user sees, not one hidden above it).
    pub fn orbital_rep_id(&self) -> Option<RepId> {
        let is_orbital = |f: &FieldRep| matches!(f.field, FieldChoice::Orbital { .. });
        self.selected_rep_id()
            .filter(|id| self.doc.reps.field(*id).is_some_and(is_orbital))
            .or_else(|| {
                self.doc
                    .reps
                    .fields()
                    .find(|(r, f)| r.visible && is_orbital(f))
                    .map(|(r, _)| r.id)
            })
            .or_else(|| self.doc.reps.fields().find(|(_, f)| is_orbital(f)).map(|(r, _)| r.id))
    }

    /// The orbital Up and Down step from, and its spin: the orbital representation's
    /// ([`AppState::orbital_rep_id`]), else the orbital list's selection, else the HOMO.
    pub fn stepped_orbital(&self) -> Option<(crate::model::Spin, usize)> {
        let rep = self.orbital_rep_id().and_then(|id| self.doc.reps.field(id));
        if let Some(FieldChoice::Orbital { spin, index }) = rep.map(|f| f.field) {
            return Some((spin, index));
        }
        let spin = self.doc.spin;
        Some((spin, self.doc.orbital.or(self.homo_index(spin))?))
    }

    /// Shows orbital `index` of `spin`: in the orbital representation the orbital list edits
    /// ([`AppState::orbital_rep_id`]), or in a new one when there is none or `new` is set. The
    /// representation shown becomes the selected one; other representations are left as they are.
    pub fn show_orbital(&mut self, spin: crate::model::Spin, index: usize, new: bool) {
        let field = FieldChoice::Orbital { spin, index };
        self.doc.spin = spin;
        self.doc.orbital = Some(index);
        match self.orbital_rep_id().filter(|_| !new) {
            Some(id) => {
                self.edit_rep(id, RepEdit::Field(field));
                // An orbital picked (in the list, or with Up/Down) is one to see: a hidden
                // orbital representation is shown again rather than changed out of sight.
                if self.doc.reps.get(id).is_some_and(|r| !r.visible) {
                    self.edit_rep(id, RepEdit::Visible(true));
                }
                self.doc.reps.selected = Some(id);
            }
            None => {
                let before = self.doc.reps.list.len();
                self.add_field_rep(field);
                if self.doc.reps.list.len() > before {
                    self.doc.reps.selected = self.doc.reps.list.last().map(|r| r.id);
                }
            }
        }
        self.load_potential_windows(None);
    }

    /// Shows `field` in the representation the field panel edits (a new representation when there
    /// is none); `None` removes that representation.
    pub fn set_panel_field(&mut self, field: Option<FieldChoice>) {
        match (field, self.panel_field_id()) {
            (None, Some(id)) => self.delete_rep(id),
            (None, None) => {}
            (Some(f), Some(id)) => self.edit_rep(id, RepEdit::Field(f)),
            (Some(f), None) => self.add_field_rep(f),
        }
        self.load_potential_windows(None);
    }

    /// The representation whose orbital follows the frames, or keeps its phase through a series
    /// (its lobe colours swap where the orbital's phase flips): while following, the one that
    /// follows (`Follow::rep`, while it still shows an orbital), else the orbital representation
    /// the orbital list edits.
    pub fn followed_rep_id(&self) -> Option<RepId> {
        let is_orbital = |id: &RepId| {
            self.doc
                .reps
                .field(*id)
                .is_some_and(|f| matches!(f.field, FieldChoice::Orbital { .. }))
        };
        match &self.doc.follow {
            Some(f) => f.rep.filter(is_orbital).or_else(|| self.orbital_rep_id()),
            None if self.doc.phase.is_some() => self.orbital_rep_id(),
            None => None,
        }
    }
}

impl AppState {
    /// `rep list`: each representation's number, what it shows and how it is coloured, one per
    /// line ("2  protein: Cartoon, coloured by secondary structure (hidden)").
    pub fn rep_list_text(&self) -> String {
        let list = &self.doc.reps.list;
        if list.is_empty() {
            return "no representations (rep add STYLE [SELECTION] adds one)".into();
        }
        let lines: Vec<String> = list
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let colour = match &r.kind {
                    RepKind::Atoms(a) => Some(a.coloring.name().to_string()),
                    RepKind::Cartoon(c) => Some(match c.color_by {
                        Some(k) => self.describe_field(k.source),
                        None => c.coloring.name().to_string(),
                    }),
                    // A molecular surface's label says it already.
                    RepKind::Field(f)
                        if matches!(f.field, FieldChoice::MolSurf { .. }) && f.style == FieldStyle::Isosurface =>
                    {
                        None
                    }
                    RepKind::Field(f) => f.coloring.map(|c| self.describe_field(c.source)),
                };
                let colour = colour.map(|c| format!(", coloured by {c}")).unwrap_or_default();
                let hidden = if r.visible { "" } else { " (hidden)" };
                let selected = if self.doc.reps.selected == Some(r.id) {
                    " (selected)"
                } else {
                    ""
                };
                format!("{:>3}  {}{colour}{hidden}{selected}", i + 1, self.rep_label(r))
            })
            .collect();
        lines.join("\n")
    }
}
