//! Field requests: the one place where the viewer asks for a scalar field and its isosurfaces.
//!
//! The app describes what it wants with a [`FieldKey`]; [`FieldService::request`] answers from
//! the cache or hands the job to the [`FieldBackend`] (the jobs pool plugs in here: latest wins, a
//! newer request replaces the pending one) and keeps the previous picture on screen until the
//! result, which carries its key, arrives. Volumes read from files need no computation.
//! Isosurface meshes are made by an [`Extractor`] (the `surface` module's marching cubes) and
//! cached by [`MeshKey`].

use crate::compute::FieldJob;
use crate::model::{Grid3, Spin};
use crate::surface::MeshData;
use std::sync::Arc;

/// Which field of a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FieldChoice {
    /// One molecular orbital's amplitude.
    Orbital { spin: Spin, index: usize },
    /// Total electron density.
    Density,
    /// A volume read from a file (index into the document's grids).
    Volume(usize),
}

/// A field of one frame of one document on one lattice.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldKey {
    pub document: u64,
    pub frame: usize,
    pub field: FieldChoice,
    /// Points per axis of the lattice (the lattice itself follows from document and frame).
    pub dims: [usize; 3],
}

/// A mesh of one field at one isovalue (stored as bits so keys compare exactly).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MeshKey {
    pub field: FieldKey,
    pub iso_bits: u32,
}

/// Isosurface extraction: the surface through `iso` of a grid (around the region above a positive
/// `iso`, below a negative one), or `None` when it is empty.
pub type Extractor = fn(&Grid3, f32) -> Option<MeshData>;

/// A finished (or failed) field computation, with the key it was asked for.
#[derive(Clone, Debug)]
pub struct FieldResult {
    pub key: FieldKey,
    pub grid: Result<Arc<Grid3>, String>,
}

/// Progress of the running job, for the jobs panel and the progress line.
#[derive(Clone, Debug, PartialEq)]
pub struct JobProgress {
    pub label: String,
    /// 0..1.
    pub fraction: f32,
}

/// Something that computes fields off the UI thread (the jobs pool).
pub trait FieldBackend: Send {
    /// A short description for the jobs panel ("cpu x16", "cuda:0 NVIDIA H100 + cpu").
    fn name(&self) -> String;
    /// Starts `job`; a pending or running older request is superseded (latest wins).
    fn submit(&mut self, key: FieldKey, job: FieldJob);
    /// A finished result, if one is ready (never blocks).
    fn try_recv(&mut self) -> Option<FieldResult>;
    /// Progress of the running job, if any.
    fn progress(&self) -> Option<JobProgress>;
    /// Stops the running job at its next tile.
    fn cancel(&mut self);
}

/// The jobs pool as the viewer's backend: persistent GPU and CPU workers, one latest-wins slot,
/// results tagged with their key; the UI never waits.
pub struct PoolBackend {
    pool: crate::jobs::Pool<FieldKey>,
    current: Option<crate::jobs::RequestHandle>,
}

/// The slot the viewer's field requests share (a newer request cancels the older one).
const VIEW_SLOT: crate::jobs::SlotId = crate::jobs::SlotId(1);

impl PoolBackend {
    /// Starts the pool (CUDA devices when present, else the CPU).
    pub fn start() -> PoolBackend {
        let pool = crate::jobs::Pool::new(crate::jobs::PoolConfig::default());
        for note in pool.notes() {
            tracing::info!("{note}");
        }
        PoolBackend { pool, current: None }
    }
}

impl FieldBackend for PoolBackend {
    fn name(&self) -> String {
        let names: Vec<String> = self.pool.workers().iter().map(|w| w.name.clone()).collect();
        if names.is_empty() {
            "jobs pool (no workers)".to_string()
        } else {
            names.join(", ")
        }
    }

    fn submit(&mut self, key: FieldKey, job: FieldJob) {
        self.current = Some(self.pool.submit(VIEW_SLOT, key, job));
    }

    fn try_recv(&mut self) -> Option<FieldResult> {
        let r = self.pool.results().try_recv().ok()?;
        if self.current.as_ref().is_some_and(|h| h.generation == r.generation) {
            self.current = None;
        }
        Some(FieldResult {
            key: r.key,
            grid: r.outcome.map(Arc::new).map_err(|e| e.to_string()),
        })
    }

    fn progress(&self) -> Option<JobProgress> {
        let h = self.current.as_ref()?;
        Some(JobProgress {
            label: format!("computing the field ({:.0}%)", h.progress.fraction() * 100.0),
            fraction: h.progress.fraction(),
        })
    }

    fn cancel(&mut self) {
        if let Some(h) = self.current.take() {
            h.cancel();
        }
    }
}

/// How many computed grids stay cached (frames of a playing trajectory, other orbitals).
const GRID_CACHE: usize = 48;
/// How many meshes stay cached.
const MESH_CACHE: usize = 96;

/// Answers field and mesh requests from caches, a backend and an extractor.
#[derive(Default)]
pub struct FieldService {
    backend: Option<Box<dyn FieldBackend>>,
    extractor: Option<Extractor>,
    grids: Vec<(FieldKey, Arc<Grid3>)>,
    meshes: Vec<(MeshKey, Option<Arc<MeshData>>)>,
    pending: Option<FieldKey>,
    /// The last failure, in words, for the status bar.
    pub last_error: Option<String>,
}

impl FieldService {
    pub fn new(backend: Option<Box<dyn FieldBackend>>, extractor: Option<Extractor>) -> FieldService {
        FieldService {
            backend,
            extractor,
            ..FieldService::default()
        }
    }

    /// True when computed fields can be requested.
    pub fn can_compute(&self) -> bool {
        self.backend.is_some()
    }

    /// True when isosurfaces can be extracted.
    pub fn can_extract(&self) -> bool {
        self.extractor.is_some()
    }

    /// The backend's name, or why there is none.
    pub fn backend_name(&self) -> String {
        self.backend
            .as_ref()
            .map_or_else(|| "no field engine in this build".to_string(), |b| b.name())
    }

    /// The key of the job in flight, if any.
    pub fn pending(&self) -> Option<FieldKey> {
        self.pending
    }

    /// Puts a grid in the cache (volumes from files, results).
    pub fn insert(&mut self, key: FieldKey, grid: Arc<Grid3>) {
        self.grids.retain(|(k, _)| *k != key);
        self.grids.push((key, grid));
        if self.grids.len() > GRID_CACHE {
            self.grids.remove(0);
        }
    }

    /// The grid for `key` from the cache; on a miss, submits `make_job()` (unless that key is
    /// already in flight) and returns `None`.
    pub fn request(&mut self, key: FieldKey, make_job: impl FnOnce() -> Option<FieldJob>) -> Option<Arc<Grid3>> {
        if let Some(pos) = self.grids.iter().position(|(k, _)| *k == key) {
            let entry = self.grids.remove(pos);
            let grid = Arc::clone(&entry.1);
            self.grids.push(entry);
            return Some(grid);
        }
        if self.pending == Some(key) {
            return None;
        }
        let backend = self.backend.as_mut()?;
        let job = make_job()?;
        backend.submit(key, job);
        self.pending = Some(key);
        // A backend may finish at once (the inline one does): take what is ready.
        self.poll();
        self.grids.iter().find(|(k, _)| *k == key).map(|(_, g)| Arc::clone(g))
    }

    /// Moves finished results into the cache; returns the keys that arrived.
    pub fn poll(&mut self) -> Vec<FieldKey> {
        let mut arrived = Vec::new();
        while let Some(r) = self.backend.as_mut().and_then(|b| b.try_recv()) {
            if self.pending == Some(r.key) {
                self.pending = None;
            }
            match r.grid {
                Ok(g) => {
                    self.insert(r.key, g);
                    arrived.push(r.key);
                }
                Err(e) => self.last_error = Some(e),
            }
        }
        arrived
    }

    /// Progress of the running job.
    pub fn progress(&self) -> Option<JobProgress> {
        self.backend.as_ref().and_then(|b| b.progress())
    }

    /// Cancels the running job.
    pub fn cancel(&mut self) {
        if let Some(b) = self.backend.as_mut() {
            b.cancel();
        }
        self.pending = None;
    }

    /// The isosurface of `grid` at `iso` (cached by key); `None` when nothing crosses `iso` or no
    /// extractor is available.
    pub fn mesh(&mut self, key: MeshKey, grid: &Grid3) -> Option<Arc<MeshData>> {
        if let Some((_, m)) = self.meshes.iter().find(|(k, _)| *k == key) {
            return m.clone();
        }
        let extract = self.extractor?;
        let m = extract(grid, f32::from_bits(key.iso_bits)).map(Arc::new);
        self.meshes.push((key, m.clone()));
        if self.meshes.len() > MESH_CACHE {
            self.meshes.remove(0);
        }
        m
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::compute::{Field, FieldInput, PointCharges};
    use crate::model::Lattice;
    use std::collections::VecDeque;

    /// Finishes each job at once with a constant grid; remembers what it was asked.
    struct Instant {
        done: VecDeque<FieldResult>,
        submitted: Vec<FieldKey>,
    }

    impl FieldBackend for Instant {
        fn name(&self) -> String {
            "instant".into()
        }
        fn submit(&mut self, key: FieldKey, job: FieldJob) {
            self.submitted.push(key);
            let grid = Grid3 {
                values: vec![1.0; job.lattice.n_points()],
                lattice: job.lattice,
                description: "test".into(),
            };
            self.done.push_back(FieldResult {
                key,
                grid: Ok(Arc::new(grid)),
            });
        }
        fn try_recv(&mut self) -> Option<FieldResult> {
            self.done.pop_front()
        }
        fn progress(&self) -> Option<JobProgress> {
            None
        }
        fn cancel(&mut self) {}
    }

    fn job() -> Option<FieldJob> {
        Some(FieldJob {
            field: Field::Potential,
            lattice: Lattice::axis_aligned([0.0; 3], 1.0, [2, 2, 2]),
            input: FieldInput::Charges(Arc::new(PointCharges::default())),
        })
    }

    #[test]
    fn miss_submits_once_then_hits() {
        let mut s = FieldService::new(
            Some(Box::new(Instant {
                done: VecDeque::new(),
                submitted: Vec::new(),
            })),
            None,
        );
        let key = FieldKey {
            document: 1,
            frame: 3,
            field: FieldChoice::Density,
            dims: [2, 2, 2],
        };
        // This backend finishes at submit, so the first request already answers.
        assert!(s.request(key, job).is_some());
        assert_eq!(s.pending(), None);
        assert!(s.poll().is_empty());
        let g = s.request(key, || panic!("a cached key must not submit")).unwrap();
        assert_eq!(g.values.len(), 8);
        let mk = MeshKey {
            field: key,
            iso_bits: 0.5f32.to_bits(),
        };
        assert!(s.mesh(mk, &g).is_none(), "no extractor");
    }
}
