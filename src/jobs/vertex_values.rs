//! Surface colours by a potential off the viewer's thread: one named worker
//! (`orbitfield-vertex-values`, a [`LaneWorker`]) evaluates a potential exactly at the vertices of
//! a representation's surfaces while the UI keeps drawing the previous colours. Two sources: the
//! Coulomb potential of a frame's point charges
//! ([`crate::analysis::vertex_values::potential_at_vertices`]: direct sum, multilevel summation
//! above its size threshold) and a wavefunction's own electrostatic potential
//! ([`crate::analysis::vertex_values::qm_potential_at_vertices`]: the CPU engine's point
//! evaluation).
//!
//! Owns [`VertexValuesWorker`]. Lanes are field representations: latest wins per lane, results carry
//! the lane and the key they were asked for. Used by the viewer's representation list
//! (`app::reps::update`); `render` and the tests compute the values in the update loop itself
//! ([`compute`]).

use super::lanes::LaneWorker;
use crate::compute::PointCharges;
use crate::model::Wavefunction;
use crate::surface::MeshData;
use std::sync::Arc;

/// The values of a surface's two lobes (a lobe without a mesh has none).
pub type LobeValues = [Option<Arc<Vec<f32>>>; 2];

/// Whose potential is evaluated at the vertices.
pub enum VertexSource {
    /// Point charges (a frame's partial charges, or their mean over a window).
    Charges(Arc<PointCharges>),
    /// A wavefunction's nuclei and electron density.
    Wavefunction(Arc<Wavefunction>),
}

/// The potential of `source` asked for at the vertices of `lobes`.
pub struct VertexValuesRequest<K> {
    pub key: K,
    pub lobes: [Option<Arc<MeshData>>; 2],
    pub source: VertexSource,
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
    use crate::analysis::vertex_values::{potential_at_vertices, qm_potential_at_vertices};
    let mut out: LobeValues = [None, None];
    for (slot, lobe) in out.iter_mut().zip(&r.lobes) {
        if let Some(mesh) = lobe {
            let values = match &r.source {
                VertexSource::Charges(q) => potential_at_vertices(mesh, q),
                VertexSource::Wavefunction(wf) => qm_potential_at_vertices(mesh, wf),
            };
            match values {
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
