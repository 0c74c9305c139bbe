//! Cartoon meshes off the viewer's thread: one named worker (`orbitfield-cartoon`, a
//! [`LaneWorker`]) runs secondary structure and the cartoon of one frame while the UI keeps drawing
//! the previous one: the mesh itself ([`Polymer::mesh_into`]), or, where the render device writes
//! the mesh (`compute::wgpu::cartoon`), only its per-residue inputs ([`Polymer::rings_into`]).
//!
//! The worker keeps its buffers from frame to frame ([`CartoonBuilder`]: DSSP's, the per-residue
//! inputs'). Where the request carries the field pool's workers and they have GPUs, DSSP of a large
//! protein (where `compute::placement::place` puts [`JobKind::Dssp`] on CUDA) runs on one of them as a device task
//! (`CudaEngine::dssp_frame`, the same codes as the CPU path) while this thread waits; the first
//! device error sends DSSP back to the CPU for the rest of the worker's life, with one warning.
//!
//! Owns [`CartoonWorker`], [`CartoonBuilder`] and [`CartoonBuilt`]. Lanes are cartoon
//! representations: latest wins per lane, results carry the lane and the key they were asked for.
//! Used by the viewer's representation list (`app::reps::cartoon`); `render` and the tests build
//! their cartoons in the update loop itself.

use super::DeviceWorkers;
use super::lanes::LaneWorker;
use crate::analysis::dssp::{DsspOptions, DsspWorkspace, SecondaryStructure};
use crate::analysis::polymer::{CartoonWorkspace, Coloring, Polymer};
use crate::compute::cuda::dssp::{DeviceDsspWorkspace, DsspRoute};
use crate::compute::wgpu::cartoon_inputs::CartoonRings;
use crate::surface::MeshData;
use crate::surface::cartoon::CartoonParams;
use std::sync::{Arc, Mutex};

use crate::compute::placement::JobKind;

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
    pub positions_angstrom: Arc<Vec<[f32; 3]>>,
    pub coloring: Coloring,
    pub params: CartoonParams,
    /// What to build, into which buffers.
    pub output: CartoonOutput,
    /// The field pool's workers: where they have GPUs, DSSP of a large protein runs there.
    pub device_workers: Option<DeviceWorkers>,
}

/// A cartoon made, with the key it was asked for.
pub struct CartoonResult<K> {
    pub key: K,
    pub built: CartoonBuilt,
    /// DSSP ran on a GPU worker.
    pub dssp_on_gpu: bool,
}

/// The cartoon worker.
pub type CartoonWorker<K> = LaneWorker<CartoonRequest<K>, CartoonResult<K>>;

/// Builds cartoons, keeping the buffers of the last frame for the next.
#[derive(Default)]
pub struct CartoonBuilder {
    dssp: DsspWorkspace,
    cartoon: CartoonWorkspace,
    codes: Vec<SecondaryStructure>,
    /// The device path's buffers (taken by the device task while it runs; `None` before the first).
    device: Option<DeviceDsspWorkspace>,
    /// A device error sent DSSP back to the CPU for good.
    device_failed: bool,
}

impl CartoonBuilder {
    /// Builds one request's cartoon (on whatever thread calls it).
    pub fn build<K>(&mut self, r: CartoonRequest<K>) -> CartoonResult<K> {
        let (p, x) = (&r.polymer, &r.positions_angstrom);
        let mut dssp_on_gpu = false;
        let built = match r.output {
            CartoonOutput::Mesh(mut mesh) => {
                p.mesh_into(x, r.coloring, None, &r.params, &mut mesh);
                CartoonBuilt::Mesh(Arc::new(mesh))
            }
            CartoonOutput::Rings(mut rings) => {
                let mut codes = std::mem::take(&mut self.codes);
                dssp_on_gpu = self.secondary(&r.polymer, &r.positions_angstrom, r.device_workers.as_ref(), &mut codes);
                p.rings_for(x, &codes, r.coloring, None, &r.params, &mut rings, &mut self.cartoon);
                self.codes = codes;
                CartoonBuilt::Rings(Arc::new(rings))
            }
        };
        CartoonResult {
            key: r.key,
            built,
            dssp_on_gpu,
        }
    }

    /// The codes of one frame into `codes`: on a GPU worker where there is one and the protein is
    /// large, else here. True when a GPU made them.
    fn secondary(
        &mut self,
        polymer: &Arc<Polymer>,
        positions: &Arc<Vec<[f32; 3]>>,
        workers: Option<&DeviceWorkers>,
        codes: &mut Vec<SecondaryStructure>,
    ) -> bool {
        let options = DsspOptions::default();
        if let Some(w) = workers.filter(|w| w.has_gpu())
            && !self.device_failed
            && dssp_on_device(polymer.protein.len(), w)
        {
            let ws = self.device.take().unwrap_or_default();
            let (tx, rx) = crossbeam::channel::bounded(1);
            let (polymer, positions) = (Arc::clone(polymer), Arc::clone(positions));
            let mut out = std::mem::take(codes);
            let task = Box::new(move |on: super::TaskEngines<'_>| {
                let gpu = on.cuda;
                let mut ws = ws;
                let result = match gpu {
                    Some(engine) => engine
                        .dssp_frame(&polymer.protein, &positions, &options, &mut ws, &mut out)
                        .map_err(|e| format!("{} ({})", e, engine.device_name())),
                    None => Err("the worker has no GPU".to_string()),
                };
                let _ = tx.send((ws, out, result));
            });
            if w.push(task).is_ok()
                && let Ok((ws, out, result)) = rx.recv()
            {
                self.device = Some(ws);
                *codes = out;
                match result {
                    Ok(DsspRoute::Device) => return true,
                    Ok(DsspRoute::Cpu(_)) => return false,
                    Err(e) => {
                        tracing::warn!(
                            "secondary structure on the GPU failed, computing it on the CPU from now on: {e}"
                        );
                        self.device_failed = true;
                    }
                }
            }
        }
        polymer.protein.assign_into(positions, &options, &mut self.dssp, codes);
        false
    }
}

/// Builds one request's cartoon (on whatever thread calls it) with fresh buffers.
pub fn build<K>(r: CartoonRequest<K>) -> CartoonResult<K> {
    CartoonBuilder::default().build(r)
}

/// Starts the cartoon worker. Errors when its thread cannot be started.
pub fn start<K: Send + 'static>() -> Result<CartoonWorker<K>, String> {
    // The builder lives on the worker's thread; the lock is never contended.
    let builder = Mutex::new(CartoonBuilder::default());
    LaneWorker::start("orbitfield-cartoon", "cartoon", move |r| match builder.lock() {
        Ok(mut b) => b.build::<K>(r),
        Err(poisoned) => poisoned.into_inner().build::<K>(r),
    })
}

/// Whether the placement policy puts the DSSP of `residues` residues on the CUDA devices of `workers`.
fn dssp_on_device(residues: usize, workers: &DeviceWorkers) -> bool {
    use crate::compute::placement::{DeviceChoice, Facts, JobSize, place};
    let facts = Facts {
        cuda_devices: workers.names().to_vec(),
        ..Facts::default()
    };
    place(JobKind::Dssp, JobSize { residues }, DeviceChoice::Auto, &facts)
        .is_ok_and(|p| p.engine == crate::compute::placement::Engine::Cuda)
}
