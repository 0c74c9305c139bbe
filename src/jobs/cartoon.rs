//! Cartoon meshes off the viewer's thread: one named worker (`orbitfield-cartoon`, a
//! [`LaneWorker`]) runs secondary structure and the cartoon of one frame while the UI keeps drawing
//! the previous one: the mesh itself ([`Polymer::mesh_into`]), or, where the render device writes
//! the mesh (`render::cartoon_compute`), only its per-residue inputs ([`Polymer::rings_into`]).
//!
//! Owns [`CartoonWorker`] and [`CartoonBuilt`]. Lanes are cartoon representations: latest wins per
//! lane, results carry the lane and the key they were asked for. Used by the viewer's
//! representation list (`app::reps::cartoon`); `render` and the tests build their cartoons in the
//! update loop itself.

use super::lanes::LaneWorker;
use crate::analysis::polymer::{Coloring, Polymer};
use crate::surface::MeshData;
use crate::surface::cartoon::CartoonParams;
use crate::surface::cartoon::device::CartoonRings;
use std::sync::Arc;

/// One frame's cartoon as built: the mesh, or the render device's inputs for it.
#[derive(Clone, Debug)]
pub enum CartoonBuilt {
    Mesh(Arc<MeshData>),
    Rings(Arc<CartoonRings>),
}

impl CartoonBuilt {
    /// The mesh, when built on the CPU.
    pub fn mesh(&self) -> Option<&Arc<MeshData>> {
        match self {
            CartoonBuilt::Mesh(m) => Some(m),
            CartoonBuilt::Rings(_) => None,
        }
    }

    /// Host bytes it holds.
    pub fn bytes(&self) -> usize {
        match self {
            CartoonBuilt::Mesh(m) => m.positions_angstrom.len() * 28 + m.indices.len() * 4 + m.values.len() * 4,
            CartoonBuilt::Rings(r) => r.input_bytes(),
        }
    }
}

/// An earlier cartoon no longer used, whose buffers the new one reuses (large cartoons then touch
/// no fresh memory per frame); its kind says what to build.
pub enum CartoonOutput {
    Mesh(MeshData),
    Rings(CartoonRings),
}

/// One frame's cartoon asked for.
pub struct CartoonRequest<K> {
    pub key: K,
    pub polymer: Arc<Polymer>,
    /// The frame's atom positions (Angstrom).
    pub positions_angstrom: Vec<[f32; 3]>,
    pub coloring: Coloring,
    pub params: CartoonParams,
    /// What to build, into which buffers.
    pub output: CartoonOutput,
}

/// A cartoon made, with the key it was asked for.
pub struct CartoonResult<K> {
    pub key: K,
    pub built: CartoonBuilt,
}

/// The cartoon worker.
pub type CartoonWorker<K> = LaneWorker<CartoonRequest<K>, CartoonResult<K>>;

/// Builds one request's cartoon (on whatever thread calls it).
pub fn build<K>(r: CartoonRequest<K>) -> CartoonResult<K> {
    let (p, x) = (&r.polymer, &r.positions_angstrom);
    let built = match r.output {
        CartoonOutput::Mesh(mut mesh) => {
            p.mesh_into(x, r.coloring, None, &r.params, &mut mesh);
            CartoonBuilt::Mesh(Arc::new(mesh))
        }
        CartoonOutput::Rings(mut rings) => {
            p.rings_into(x, r.coloring, None, &r.params, &mut rings);
            CartoonBuilt::Rings(Arc::new(rings))
        }
    };
    CartoonResult { key: r.key, built }
}

/// Starts the cartoon worker. Errors when its thread cannot be started.
pub fn start<K: Send + 'static>() -> Result<CartoonWorker<K>, String> {
    LaneWorker::start("orbitfield-cartoon", "cartoon", build::<K>)
}
