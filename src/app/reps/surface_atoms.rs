//! A molecular surface coloured by its atoms: each vertex of its lobes takes the colour of the atom
//! of the surface's selection whose van der Waals sphere lies nearest it
//! (`analysis::vertex_atoms`), in an atom colouring scheme (element, residue, chain, charge,
//! B-factor or one colour), as ChimeraX colours a surface by chain and VMD's QuickSurf by any
//! colouring method. Made in the update loop when the lobes, the scheme or the frame change; drawn
//! by `app::draw` as the mesh's own colours.

use super::{FieldRep, RepKind};
use crate::analysis::vertex_atoms::nearest_sphere_atoms;
use crate::app::atoms::{AtomColoring, atom_colors};
use crate::app::fields::FieldChoice;
use crate::app::state::AppState;
use crate::model::select::Selection;
use crate::surface::MeshData;
use std::sync::Arc;

/// Grey for a vertex whose atom has no colour (never expected: every atom has one).
const NO_COLOR: [u8; 4] = [160, 160, 160, 255];

/// The colours of a representation's lobes by their atoms, and what they were made of.
pub(crate) struct VertexAtomColors {
    lobes: [Option<Arc<MeshData>>; 2],
    coloring: AtomColoring,
    /// The document and frame whose atoms were used.
    context: (u64, usize),
    colors: [Option<Vec<[u8; 4]>>; 2],
}

fn same_lobes(a: &[Option<Arc<MeshData>>; 2], b: &[Option<Arc<MeshData>>; 2]) -> bool {
    a.iter().zip(b).all(|(x, y)| match (x, y) {
        (Some(x), Some(y)) => Arc::ptr_eq(x, y),
        (None, None) => true,
        _ => false,
    })
}

impl FieldRep {
    /// The colours of lobe `k`'s vertices by their atoms, when the surface is coloured by its atoms
    /// and they were made for `mesh`.
    pub fn lobe_atom_colors(&self, k: usize, mesh: &Arc<MeshData>) -> Option<&[[u8; 4]]> {
        self.atom_coloring?;
        let c = self.pipeline.atom_rgba.as_ref()?;
        let made_for = c.lobes.get(k)?.as_ref().is_some_and(|l| Arc::ptr_eq(l, mesh));
        let colors = c.colors.get(k)?.as_deref()?;
        (made_for && colors.len() == mesh.positions_angstrom.len()).then_some(colors)
    }
}

impl AppState {
    /// Representation `i`'s vertex colours by its atoms, made again when its lobes, its scheme or
    /// the frame changed (and dropped when it is no longer coloured so); true when they changed.
    pub(super) fn update_surface_atom_colors(&mut self, i: usize) -> bool {
        let Some(RepKind::Field(f)) = self.doc.reps.list.get(i).map(|r| &r.kind) else {
            return false;
        };
        let (Some(coloring), FieldChoice::MolSurf { selection }) = (f.atom_coloring, f.field) else {
            return self.pipeline_mut(i).is_some_and(|p| p.atom_rgba.take().is_some());
        };
        let Some(doc) = self.document() else {
            return false;
        };
        let context = (doc.id, doc.frame_index);
        let lobes = f.pipeline.lobes.clone();
        if let Some(c) = &f.pipeline.atom_rgba
            && c.coloring == coloring
            && c.context == context
            && same_lobes(&c.lobes, &lobes)
        {
            return false;
        }
        let flags = doc
            .surface_selections
            .get(usize::from(selection))
            .and_then(|text| Selection::parse(text).ok())
            .map(|s| s.evaluate(&doc.structure, Some(&doc.frame)))
            .unwrap_or_default();
        let (radii, _) = doc.structure.radii_or_element();
        let palette = atom_colors(&doc.structure, coloring);
        let colors = lobes.each_ref().map(|lobe| {
            let mesh = lobe.as_ref()?;
            let atoms = nearest_sphere_atoms(&mesh.positions_angstrom, &doc.frame.positions_angstrom, &radii, |a| {
                flags.get(a).copied().unwrap_or(false)
            })?;
            Some(
                atoms
                    .iter()
                    .map(|&a| palette.get(a as usize).copied().unwrap_or(NO_COLOR))
                    .collect(),
            )
        });
        if let Some(p) = self.pipeline_mut(i) {
            p.atom_rgba = Some(VertexAtomColors {
                lobes,
                coloring,
                context,
                colors,
            });
        }
        true
    }
}
