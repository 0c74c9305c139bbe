//! Surface and cartoon colours by a field off the viewer's thread: one named worker
//! (`orbitfield-vertex-values`, a [`LaneWorker`]) evaluates a field exactly at the vertices of a
//! representation's meshes while the UI keeps drawing the previous colours. Three sources: the
//! Coulomb potential of a frame's point charges
//! ([`crate::analysis::vertex_values::potential_at_vertices`]: direct sum, multilevel summation
//! above its size threshold), a wavefunction's own electrostatic potential
//! ([`crate::analysis::vertex_values::qm_potential_at_vertices`]: the CPU engine's point
//! evaluation), and a loaded volume sampled there
//! ([`crate::analysis::vertex_values::volume_at_vertices`]).
//!
//! Owns [`VertexValuesWorker`]. Lanes are representations (a field's lobes, a cartoon's mesh):
//! latest wins per lane, results carry the lane and the key they were asked for. A removed or
//! cancelled lane (the viewer's Cancel, a representation deleted, the window closed) stops its
//! evaluation within a few thousand vertices (`compute::cpu::evaluate_points_until`). Used by the
//! viewer's representation list (`app::reps::update`, `app::reps::cartoon`); `render` and the tests
//! compute the values in the update loop itself ([`compute`]).

use super::lanes::LaneWorker;
use crate::compute::PointCharges;
use crate::model::{Grid3, Wavefunction};
use crate::surface::MeshData;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

/// The values of a surface's two lobes (a lobe without a mesh has none).
pub type LobeValues = [Option<Arc<Vec<f32>>>; 2];

/// What the values at the vertices are of.
#[derive(Clone)]
pub enum VertexSource {
    /// The potential of point charges (a frame's partial charges, or their mean over a window;
    /// hartree/e) in a medium, sampled at an offset along the normals.
    Charges(Arc<PointCharges>, ChargesModel),
    /// A wavefunction's own electrostatic potential: its nuclei and electron density (hartree/e).
    Wavefunction(Arc<Wavefunction>),
    /// A loaded or computed volume sampled trilinearly (its units), at an offset along the normals
    /// (Angstrom; 0 at the vertices).
    Volume(Arc<Grid3>, f32),
}

/// The medium of a potential of charges at vertices and where it is sampled.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ChargesModel {
    pub dielectric: crate::compute::esp::screening::Dielectric,
    /// The values are taken this far outside the surface along each vertex's normal (Angstrom; 0
    /// at the vertex itself).
    pub offset_angstrom: f32,
}

/// `mesh` with its vertices moved `offset_angstrom` along their normals (itself at 0).
fn offset_mesh(mesh: &Arc<MeshData>, offset_angstrom: f32) -> Arc<MeshData> {
    if offset_angstrom == 0.0 || mesh.normals.len() != mesh.positions_angstrom.len() {
        return Arc::clone(mesh);
    }
    let positions = mesh
        .positions_angstrom
        .iter()
        .zip(&mesh.normals)
        .map(|(p, n)| std::array::from_fn(|k| p[k] + offset_angstrom * n[k]))
        .collect();
    Arc::new(MeshData {
        positions_angstrom: positions,
        normals: mesh.normals.clone(),
        indices: Vec::new(),
        values: Vec::new(),
        colors_rgba8: Vec::new(),
    })
}

/// The values of `source` asked for at the vertices of `lobes` (a cartoon is one lobe).
pub struct VertexValuesRequest<K> {
    pub key: K,
    pub lobes: [Option<Arc<MeshData>>; 2],
    pub source: VertexSource,
}

/// The values computed (one per vertex of each lobe, in the source's units), with the key they were
/// asked for; or why they could not be.
pub struct VertexValuesResult<K> {
    pub key: K,
    pub values: Result<LobeValues, String>,
}

/// The vertex-values worker.
pub type VertexValuesWorker<K> = LaneWorker<VertexValuesRequest<K>, VertexValuesResult<K>>;

/// How far the worker's evaluation has come: vertices done (counted at each look at the
/// cancellation, every few thousand) of those asked for; both zero while it is idle. Shared
/// between the worker's thread and the viewer's progress line.
#[derive(Clone, Debug, Default)]
pub struct VertexProgress(Arc<[AtomicUsize; 2]>);

impl VertexProgress {
    /// The share done (0 to 1) while an evaluation runs, `None` while idle.
    pub fn fraction(&self) -> Option<f32> {
        let [done, total] = [&self.0[0], &self.0[1]].map(|a| a.load(Ordering::Relaxed));
        (total > 0).then(|| (done.min(total) as f32 / total as f32).min(0.99))
    }

    fn begin(&self, total: usize) {
        self.0[0].store(0, Ordering::Relaxed);
        self.0[1].store(total, Ordering::Relaxed);
    }

    fn advance(&self) {
        self.0[0].fetch_add(crate::compute::cpu::POINTS_PER_STOP_CHECK, Ordering::Relaxed);
    }
}

/// Computes one request's values (on whatever thread calls it).
pub fn compute<K>(r: VertexValuesRequest<K>) -> VertexValuesResult<K> {
    compute_until(r, &|| false)
}

/// [`compute`] that gives up (with the message "cancelled") once `stop` says so: the worker's
/// cancellation, looked at every few thousand vertices.
pub fn compute_until<K>(r: VertexValuesRequest<K>, stop: &(dyn Fn() -> bool + Sync)) -> VertexValuesResult<K> {
    compute_counting(r, stop, None)
}

/// [`compute_until`] that counts its progress into `progress`.
fn compute_counting<K>(
    r: VertexValuesRequest<K>,
    stop: &(dyn Fn() -> bool + Sync),
    progress: Option<&VertexProgress>,
) -> VertexValuesResult<K> {
    let total: usize = r.lobes.iter().flatten().map(|m| m.positions_angstrom.len()).sum();
    if let Some(p) = progress {
        p.begin(total);
    }
    let counted = || {
        if let Some(p) = progress {
            p.advance();
        }
        stop()
    };
    let result = evaluate(r, &counted);
    if let Some(p) = progress {
        p.begin(0);
    }
    result
}

fn evaluate<K>(r: VertexValuesRequest<K>, stop: &(dyn Fn() -> bool + Sync)) -> VertexValuesResult<K> {
    use crate::analysis::vertex_values::{
        potential_at_vertices_in_until, qm_potential_at_vertices_until, volume_at_vertices,
    };
    let mut out: LobeValues = [None, None];
    for (slot, lobe) in out.iter_mut().zip(&r.lobes) {
        if let Some(mesh) = lobe {
            let values = match &r.source {
                VertexSource::Charges(q, model) => {
                    potential_at_vertices_in_until(&offset_mesh(mesh, model.offset_angstrom), q, model.dielectric, stop)
                        .map_err(|e| e.to_string())
                }
                VertexSource::Wavefunction(wf) => {
                    qm_potential_at_vertices_until(mesh, wf, stop).map_err(|e| e.to_string())
                }
                VertexSource::Volume(grid, offset) => volume_at_vertices(&offset_mesh(mesh, *offset), grid)
                    .ok_or_else(|| "the volume cannot be sampled (its lattice has no cells)".to_string()),
            };
            match values {
                Ok(v) => *slot = Some(Arc::new(v)),
                Err(e) => {
                    return VertexValuesResult {
                        key: r.key,
                        values: Err(e),
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
    start_counting(VertexProgress::default())
}

/// [`start`], the worker counting its progress into `progress`.
pub fn start_counting<K: Send + 'static>(progress: VertexProgress) -> Result<VertexValuesWorker<K>, String> {
    LaneWorker::start_cancellable(
        "orbitfield-vertex-values",
        "vertex colouring",
        move |r: VertexValuesRequest<K>, stop: &(dyn Fn() -> bool + Sync)| compute_counting(r, stop, Some(&progress)),
    )
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use std::sync::Mutex;

    /// The progress read at each look at the cancellation rises to the whole, and reads idle
    /// once the values are in; the values are the same as without counting.
    #[test]
    fn progress_rises_while_the_vertices_are_evaluated() {
        let n = 3 * crate::compute::cpu::POINTS_PER_STOP_CHECK + 123;
        let mesh = Arc::new(MeshData {
            positions_angstrom: (0..n).map(|i| [i as f32 * 0.01, 5.0, 0.0]).collect(),
            ..MeshData::default()
        });
        let charges = Arc::new(PointCharges {
            positions_bohr: vec![[0.0; 3], [1.0, 2.0, 3.0]],
            charges_e: vec![1.0, -0.5],
        });
        let request = || VertexValuesRequest {
            key: 0u8,
            lobes: [Some(Arc::clone(&mesh)), None],
            source: VertexSource::Charges(Arc::clone(&charges), ChargesModel::default()),
        };
        let progress = VertexProgress::default();
        let seen = Mutex::new(Vec::new());
        let stop = || {
            seen.lock().unwrap().push(progress.fraction());
            false
        };
        let counted = compute_counting(request(), &stop, Some(&progress));
        let seen = seen.into_inner().unwrap();
        assert!(seen.iter().all(Option::is_some), "{seen:?}");
        let f: Vec<f32> = seen.into_iter().flatten().collect();
        assert!(f.windows(2).all(|w| w[0] <= w[1]), "{f:?}");
        assert!(*f.last().unwrap() >= 0.7, "{f:?}");
        assert_eq!(progress.fraction(), None, "idle once done");
        let plain = compute(request());
        assert_eq!(counted.values.unwrap()[0], plain.values.unwrap()[0]);
    }
}
