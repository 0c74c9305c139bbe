//! The viewer's frames fitted onto frame 0 (`analysis::fit::FrameFit`), as VMD's RMSD trajectory
//! tool, ChimeraX's `align` and PyMOL's `intra_fit` do: each frame the document shows is moved
//! rigidly so that a selection's atoms (C-alpha atoms of a protein by default) lie as close as they
//! can to frame 0's. A protein that turns and drifts through its box then holds still, and its
//! per-frame fields are computed around the fitted coordinates.
//!
//! A fitted frame has no periodic box: the box does not turn with the atoms, so it is not drawn,
//! and lattices are placed around the atoms instead of filling it. Analyses of the trajectory that
//! need the box (RDF, implicit ligand sampling) read the frames as the file gives them (made whole
//! or not), never fitted. Owns `AppState::set_fit` (`Command::FitFrames`, the View menu's "Fit
//! frames to frame 0", the `fit` verb).

use super::state::AppState;
use crate::analysis::fit::FrameFit;

impl AppState {
    /// Fits every frame onto frame 0 by `selection` (`Some(None)`: the default selection), or
    /// shows frames as read (`None`). Computed fields are dropped (their frames moved), the
    /// document takes a new id, and the status line says what was fitted.
    pub(crate) fn set_fit(&mut self, fit: Option<Option<String>>) {
        let id = self.doc.next_id;
        let Some(doc) = self.doc.document.as_mut() else {
            self.error("fit: no system is open".into());
            return;
        };
        let made = match &fit {
            None => None,
            Some(_) if !doc.wavefunctions.is_empty() || doc.qm.is_some() => {
                self.error(
                    "fit: the frames carry wavefunctions, whose orbitals stay where their own coordinates put them; \
                     frames with orbitals are not fitted"
                        .into(),
                );
                return;
            }
            Some(_) if doc.n_frames < 2 => {
                self.error("fit: one frame; there is nothing to fit it to".into());
                return;
            }
            Some(sel) => match FrameFit::new(&doc.structure, &mut doc.trajectory, sel.as_deref()) {
                Ok(f) => Some(f),
                Err(e) => {
                    self.error(e);
                    return;
                }
            },
        };
        let status = match &made {
            Some(f) => {
                let boxed = if doc.periodic {
                    "; the periodic box is not drawn while frames are fitted"
                } else {
                    ""
                };
                format!(
                    "frames fitted onto frame 0 by {} atoms ({}){boxed}",
                    f.n_atoms(),
                    f.selection
                )
            }
            None => "frames as read, not fitted".into(),
        };
        if let Err(e) = doc.set_fit(made) {
            self.error(e.to_string());
            return;
        }
        self.doc.next_id += 1;
        if let Some(doc) = self.doc.document.as_mut() {
            doc.id = id;
        }
        self.panels.status = status;
        self.fields.clear_cache();
        self.mark_fields_stale(|_| true);
        self.load_potential_windows(None);
        self.rebuild_atoms();
    }

    /// The selection frames are fitted by, if they are.
    pub fn fit_selection(&self) -> Option<&str> {
        self.document()?.fit.as_ref().map(|f| f.selection.as_str())
    }
}
