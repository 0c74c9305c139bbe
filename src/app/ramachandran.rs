//! The Ramachandran plot's model (`ui::ramachandran` draws it): phi and psi of every protein
//! residue at the frame shown (`analysis::ramachandran`), with each residue's class (glycine,
//! proline, other) and label, computed again when the frame changes (the backbone once per
//! document).

use super::state::AppState;
use crate::analysis::dssp::ProteinBackbone;
use crate::analysis::ramachandran::{PhiPsi, phi_psi, residue_class};

/// One residue's point, its class ("GLY", "PRO", "other") and its label ("LYS13").
pub type RamaPoint = (PhiPsi, &'static str, String);

/// The window's state: open or not, and the points of (document, frame).
#[derive(Default)]
pub struct RamachandranPanel {
    pub open: bool,
    /// (document, frame) and each residue's point with its class and label.
    pub points: Option<((u64, usize), Vec<RamaPoint>)>,
    /// The document's protein backbone and residue starts, found once per document.
    backbone: Option<(u64, ProteinBackbone, Vec<usize>)>,
}

impl AppState {
    /// Brings the points up to date for the frame shown.
    pub fn refresh_ramachandran(&mut self) {
        let AppState { doc, panels, .. } = self;
        let Some(document) = doc.document.as_ref() else {
            panels.ramachandran.points = None;
            return;
        };
        let key = (document.id, document.frame_index);
        if panels.ramachandran.points.as_ref().is_some_and(|(k, _)| *k == key) {
            return;
        }
        let s = &document.structure;
        let panel = &mut panels.ramachandran;
        if panel.backbone.as_ref().is_none_or(|(id, _, _)| *id != document.id) {
            panel.backbone = Some((document.id, ProteinBackbone::new(s), s.residue_starts()));
        }
        let Some((_, backbone, starts)) = panel.backbone.as_ref() else {
            return;
        };
        let points = phi_psi(backbone, &document.frame.positions_angstrom)
            .into_iter()
            .map(|p| {
                let a = starts.get(p.residue).copied().unwrap_or(0);
                let label = format!(
                    "{}{}",
                    s.resnames.get(a).map_or("?", |r| r.as_str()),
                    s.resids.get(a).copied().unwrap_or(0)
                );
                (p, residue_class(s, starts, p.residue), label)
            })
            .collect();
        panel.points = Some((key, points));
    }
}
