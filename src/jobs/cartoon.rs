//! Cartoon meshes off the viewer's thread: one named worker (`orbitfield-cartoon`, a
//! [`LaneWorker`]) runs secondary structure and the cartoon mesh of one frame
//! ([`Polymer::mesh`]) while the UI keeps drawing the previous one.
//!
//! Owns [`CartoonWorker`]. Lanes are cartoon representations: latest wins per lane, results carry
//! the lane and the key they were asked for. Used by the viewer's representation list
//! (`app::reps::cartoon`); `render` and the tests build their cartoons in the update loop itself.

use super::lanes::LaneWorker;
use crate::analysis::polymer::{Coloring, Polymer};
use crate::surface::MeshData;
use crate::surface::cartoon::CartoonParams;
use std::sync::Arc;

/// One frame's cartoon asked for.
pub struct CartoonRequest<K> {
    pub key: K,
    pub polymer: Arc<Polymer>,
    /// The frame's atom positions (Angstrom).
    pub positions_angstrom: Vec<[f32; 3]>,
    pub coloring: Coloring,
    pub params: CartoonParams,
    /// An earlier mesh no longer used, whose buffers the new one reuses (large cartoons then
    /// touch no fresh memory per frame).
    pub recycled: Option<MeshData>,
}

/// A cartoon made, with the key it was asked for.
pub struct CartoonResult<K> {
    pub key: K,
    pub mesh: Arc<MeshData>,
}

/// The cartoon worker.
pub type CartoonWorker<K> = LaneWorker<CartoonRequest<K>, CartoonResult<K>>;

/// Builds one request's cartoon (on whatever thread calls it).
pub fn build<K>(r: CartoonRequest<K>) -> CartoonResult<K> {
    let mut mesh = r.recycled.unwrap_or_default();
    r.polymer
        .mesh_into(&r.positions_angstrom, r.coloring, None, &r.params, &mut mesh);
    CartoonResult {
        key: r.key,
        mesh: Arc::new(mesh),
    }
}

/// Starts the cartoon worker. Errors when its thread cannot be started.
pub fn start<K: Send + 'static>() -> Result<CartoonWorker<K>, String> {
    LaneWorker::start("orbitfield-cartoon", "cartoon", build::<K>)
}
