//! Clicks on molecular surfaces: where a click's ray first meets a shown molecular surface, the
//! atom whose patch of surface it is, and the surface's colouring value at that point. A surface
//! drawn in front of the atoms is what the user clicks, as in ChimeraX and PyMOL: the click picks
//! the surface's atom nearest the point, measured from its van der Waals sphere.
//!
//! Surfaces extracted on the render device keep their vertices there and are not hit.

use super::fields::FieldChoice;
use super::reps::RepKind;
use super::state::AppState;
use glam::Vec3;

/// Where a ray meets a shown molecular surface first.
#[derive(Clone, Debug, PartialEq)]
pub struct SurfaceHit {
    /// How far along the ray (Angstrom for a unit direction).
    pub distance_angstrom: f32,
    /// The point on the surface.
    pub point_angstrom: [f32; 3],
    /// The atom of the surface's selection whose van der Waals sphere lies nearest the point.
    pub atom: Option<usize>,
    /// The colouring field and its value at the point (computed units), when the surface is
    /// coloured and its values are there.
    pub value: Option<(FieldChoice, f32)>,
}

impl AppState {
    /// The first shown molecular surface met by the ray from `origin` along unit `dir`.
    pub(crate) fn surface_hit(&self, origin: Vec3, dir: Vec3) -> Option<SurfaceHit> {
        let doc = self.document()?;
        // The nearest hit (its atom found last) and its surface's selection.
        let mut best: Option<(SurfaceHit, u16)> = None;
        for rep in self.reps().list.iter().filter(|r| r.visible) {
            let RepKind::Field(f) = &rep.kind else {
                continue;
            };
            let FieldChoice::MolSurf { selection } = f.field else {
                continue;
            };
            let (lobes, values) = f.drawn_lobes();
            for (k, mesh) in lobes.iter().enumerate() {
                let Some(mesh) = mesh else { continue };
                let Some(hit) =
                    crate::render::camera::pick_triangle(origin, dir, &mesh.positions_angstrom, &mesh.indices)
                else {
                    continue;
                };
                if best.as_ref().is_some_and(|b| b.0.distance_angstrom <= hit.distance) {
                    continue;
                }
                let point = (origin + dir * hit.distance).to_array();
                let at_vertices = values.and_then(|v| v[k].as_ref()).and_then(|v| {
                    let w = hit.weights;
                    let [a, b, c] = hit.vertices.map(|i| v.get(i).copied());
                    Some(w[0] * a? + w[1] * b? + w[2] * c?)
                });
                let value = f.coloring.and_then(|coloring| {
                    let v = at_vertices.or_else(|| super::values::sample_grid(f.color_grid(doc)?.as_ref(), point))?;
                    v.is_finite().then_some((coloring.source, v))
                });
                let hit = SurfaceHit {
                    distance_angstrom: hit.distance,
                    point_angstrom: point,
                    atom: None,
                    value,
                };
                best = Some((hit, selection));
            }
        }
        let (mut hit, selection) = best?;
        hit.atom = self.surface_atom_near(selection, hit.point_angstrom);
        Some(hit)
    }

    /// The atom of surface selection `selection` whose van der Waals sphere (the file's radius,
    /// else the element's) lies nearest `p`.
    fn surface_atom_near(&self, selection: u16, p: [f32; 3]) -> Option<usize> {
        let doc = self.document()?;
        let text = doc.surface_selections.get(usize::from(selection))?;
        let flags = crate::model::select::Selection::parse(text)
            .ok()?
            .evaluate(&doc.structure, Some(&doc.frame));
        let (radii, _) = doc.structure.radii_or_element();
        let atoms =
            crate::analysis::vertex_atoms::nearest_sphere_atoms(&[p], &doc.frame.positions_angstrom, &radii, |i| {
                flags.get(i).copied().unwrap_or(false)
            })?;
        atoms.first().map(|&a| a as usize)
    }

    /// ", potential (Poisson-Boltzmann) -1.84 kT/e where clicked on the surface" for a surface hit
    /// with a value.
    pub(crate) fn describe_surface_hit(&self, hit: &SurfaceHit) -> Option<String> {
        let (source, v) = hit.value?;
        Some(format!(
            ", {} {} where clicked on the surface",
            self.describe_field(source),
            self.coloring_unit(source).format(v)
        ))
    }
}
