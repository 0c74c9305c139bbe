//! Surface colours by the potential of point charges off the viewer's thread: one named worker
//! (`orbitfield-vertex-values`, a [`LaneWorker`]) evaluates the Coulomb potential of a frame's
//! charges exactly at the vertices of a representation's surfaces
//! ([`crate::analysis::vertex_values::potential_at_vertices`]: direct sum, multilevel summation
//! above its size threshold) while the UI keeps drawing the previous colours.
//!
//! Owns [`VertexValuesWorker`]. Lanes are field representations: latest wins per lane, results carry
//! the lane and the key they were asked for. Used by the viewer's representation list
//! (`app::reps::update`); `render` and the tests compute the values in the update loop itself
//! ([`compute`]).

use super::lanes::LaneWorker;
use crate::compute::PointCharges;
use crate::surface::MeshData;
use std::sync::Arc;

/// The values of a surface's two lobes (a lobe without a mesh has none).
pub type LobeValues = [Option<Arc<Vec<f32>>>; 2];

/// The potential of `charges` asked for at the vertices of `lobes`.
pub struct VertexValuesRequest<K> {
    pub key: K,
    pub lobes: [Option<Arc<MeshData>>; 2],
    pub charges: Arc<PointCharges>,
}

/// The values computed (hartree/e, one per vertex of each lobe), with the key they were asked for;
/// or why they could not be.
pub struct VertexValuesResult<K> {
    pub key: K,
    pub values: Result<LobeValues, String>,
}

/// The vertex-values worker.
pub type VertexValuesWorker<K> = LaneWorker<VertexValuesRequest<K>, VertexValuesResult<K>>;

/// Computes one request's values (on whatever thread calls it).
pub fn compute<K>(r: VertexValuesRequest<K>) -> VertexValuesResult<K> {
    let mut out: LobeValues = [None, None];
    for (slot, lobe) in out.iter_mut().zip(&r.lobes) {
        if let Some(mesh) = lobe {
            match crate::analysis::vertex_values::potential_at_vertices(mesh, &r.charges) {
                Ok(v) => *slot = Some(Arc::new(v)),
                Err(e) => {
                    return VertexValuesResult {
                        key: r.key,
                        values: Err(e.to_string()),
                    };
                }
            }
        }
    }
    VertexValuesResult {
        key: r.key,
        values: Ok(out),
    }
}

/// Starts the vertex-values worker. Errors when its thread cannot be started.
pub fn start<K: Send + 'static>() -> Result<VertexValuesWorker<K>, String> {
    LaneWorker::start("orbitfield-vertex-values", "surface colouring", compute::<K>)
}
