//! What a fit of the view frames: the atoms the visible representations draw (PyMOL's `orient`,
//! ChimeraX's `view`), or every atom while an orbital, a potential or a volume is drawn; the bounds
//! the renderer's clipping planes and the view's reset use.

use super::state::{AppState, Command};

impl AppState {
    /// Bounds of the current frame's atoms (padded).
    pub fn scene_bounds(&self) -> Option<([f32; 3], [f32; 3])> {
        super::atoms::bounds(&self.document()?.frame.positions_angstrom, 2.0)
    }

    /// The sphere a fit frames: around the current frame's shown atoms ([`AppState::shown_atoms`]),
    /// 2 Å beyond the farthest (orbital lobes and surfaces reach past the atoms' centres).
    pub fn scene_sphere(&self) -> Option<([f32; 3], f32)> {
        let doc = self.document()?;
        let all = &doc.frame.positions_angstrom;
        match self.shown_atoms() {
            Some(idx) => {
                let picked: Vec<[f32; 3]> = idx.iter().filter_map(|&i| all.get(i as usize).copied()).collect();
                super::atoms::bounding_sphere(&picked, 2.0).or_else(|| super::atoms::bounding_sphere(all, 2.0))
            }
            None => super::atoms::bounding_sphere(all, 2.0),
        }
    }

    /// The atoms the visible representations draw (atoms, cartoons, molecular surfaces), as PyMOL's
    /// `orient` and ChimeraX's `view` frame what is shown: a protein drawn alone in its water box
    /// is framed, not the box. `None` (every atom) when a visible field other than a molecular
    /// surface is drawn (an orbital, a potential, a volume) or nothing is.
    pub fn shown_atoms(&self) -> Option<Vec<u32>> {
        use super::reps::RepKind;
        let doc = self.document()?;
        let mut shown = vec![false; doc.structure.len()];
        let mut any = false;
        let mut mark = |flags: Vec<bool>| {
            for (s, f) in shown.iter_mut().zip(flags) {
                *s |= f;
            }
        };
        for rep in self.doc.reps.list.iter().filter(|r| r.visible) {
            match &rep.kind {
                RepKind::Atoms(a) => mark(a.parsed().evaluate(&doc.structure, Some(&doc.frame))),
                RepKind::Cartoon(c) => mark(c.parsed().evaluate(&doc.structure, Some(&doc.frame))),
                RepKind::Field(f) => match f.field {
                    super::fields::FieldChoice::MolSurf { selection } => {
                        let text = doc.surface_selections.get(usize::from(selection))?;
                        let sel = crate::model::select::Selection::parse(text).ok()?;
                        mark(sel.evaluate(&doc.structure, Some(&doc.frame)));
                    }
                    _ => return None,
                },
            }
            any = true;
        }
        if !any {
            return None;
        }
        let idx: Vec<u32> = (0..shown.len() as u32).filter(|&i| shown[i as usize]).collect();
        (!idx.is_empty()).then_some(idx)
    }

    /// Frames the document if a fit is pending; called by the view once it knows its size.
    pub fn fit_if_pending(&mut self) {
        if self.view.fit_pending {
            self.view.fit_pending = false;
            self.apply(Command::ResetCamera);
        }
    }
}
