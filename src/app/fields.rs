//! Field requests: the one place where the viewer asks for a scalar field and its isosurfaces.
//!
//! The app describes what it wants with a [`FieldKey`]; [`FieldService::request`] answers from
//! the cache or hands the job to the [`FieldBackend`] (the jobs pool plugs in here: latest wins, a
//! newer request replaces the pending one) and keeps the previous picture on screen until the
//! result, which carries its key, arrives. Volumes read from files need no computation. Extra
//! field representations each get their own latest-wins [`FieldSlot`] ([`FieldService::add_slot`],
//! [`FieldService::request_in`]); results are routed by their key, and all slots share one cache.
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
    /// Coulomb potential of the structure's partial charges at the current frame (direct sum), on a
    /// lattice fixed for the whole trajectory.
    Potential,
    /// The mean of [`FieldChoice::Potential`] over the last `frames` frames up to the current one
    /// (clamped at frame 0), on the same lattice (`app::potential`).
    PotentialMean { frames: u16 },
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

/// A latest-wins request slot of one extra field representation (the main field has its own).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldSlot(pub u64);

/// Something that computes fields off the UI thread (the jobs pool).
pub trait FieldBackend: Send {
    /// A short description for the jobs panel ("cpu x16", "cuda:0 NVIDIA H100 + cpu").
    fn name(&self) -> String;
    /// Starts `job`; a pending or running older request is superseded (latest wins).
    fn submit(&mut self, key: FieldKey, job: FieldJob);
    /// Starts `job` in the prefetch slot, queued behind the shown field's request; an older
    /// prefetch is superseded. Backends without one ignore it.
    fn submit_prefetch(&mut self, key: FieldKey, job: FieldJob) {
        let _ = (key, job);
    }
    /// Starts `job` in `slot` (an extra representation's own latest-wins slot); an older request
    /// in that slot is superseded, other slots are untouched. Backends with one slot use it.
    fn submit_in(&mut self, slot: FieldSlot, key: FieldKey, job: FieldJob) {
        let _ = slot;
        self.submit(key, job);
    }
    /// Stops the request of `slot`, if any, at its next tile.
    fn cancel_slot(&mut self, slot: FieldSlot) {
        let _ = slot;
    }
    /// Progress of the request running in `slot`, if any.
    fn slot_progress(&self, slot: FieldSlot) -> Option<JobProgress> {
        let _ = slot;
        None
    }
    /// The view now waits for the look-ahead request in flight: serve it like the view's own.
    fn promote_prefetch(&mut self) {}
    /// A finished result, if one is ready (never blocks).
    fn try_recv(&mut self) -> Option<FieldResult>;
    /// Progress of the running job, if any.
    fn progress(&self) -> Option<JobProgress>;
    /// Stops the running job at its next tile.
    fn cancel(&mut self);
    /// Requests that ended cancelled (superseded or stopped) and tiles workers dropped because
    /// of that, since the backend started.
    fn cancellations(&self) -> Cancellations {
        Cancellations::default()
    }
    /// The workers and what they have done.
    fn workers(&self) -> Vec<WorkerRow> {
        Vec::new()
    }
    /// Stage timings of the last finished request.
    fn last_stages(&self) -> Option<StageTimes> {
        None
    }
    /// The backend's workers for device tasks other than fields (RDF frames), when it has a pool.
    fn device_workers(&self) -> Option<crate::jobs::DeviceWorkers> {
        None
    }
}

/// One worker of a backend, for the jobs panel.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct WorkerRow {
    pub name: String,
    pub engine: String,
    pub busy: bool,
    pub tiles_done: u64,
    pub tiles_failed: u64,
    pub tiles_cancelled: u64,
    pub busy_seconds: f64,
    pub last_error: Option<String>,
}

/// Stage timings of the last finished request (seconds; compute is summed over workers).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct StageTimes {
    pub queue: f64,
    pub compute: f64,
    pub assemble: f64,
    pub total: f64,
    pub tiles: usize,
    pub retried: usize,
    pub engines: Vec<String>,
}

/// Cancellation counts of a backend, for the jobs panel and the tests.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Cancellations {
    pub requests: u64,
    pub tiles: u64,
}

/// The jobs pool as the viewer's backend: persistent GPU and CPU workers, one latest-wins slot,
/// results tagged with their key; the UI never waits.
pub struct PoolBackend {
    pool: crate::jobs::Pool<FieldKey>,
    current: Option<crate::jobs::RequestHandle>,
    /// The request of each extra representation's slot.
    slots: std::collections::BTreeMap<FieldSlot, crate::jobs::RequestHandle>,
    cancelled_requests: u64,
    last_stages: Option<StageTimes>,
}

/// The slot the viewer's field requests share (a newer request cancels the older one).
const VIEW_SLOT: crate::jobs::SlotId = crate::jobs::SlotId(1);
/// The slot of playback's look-ahead requests.
const PREFETCH_SLOT: crate::jobs::SlotId = crate::jobs::SlotId(2);
/// Pool slots of extra representations start here.
const FIRST_REPRESENTATION_SLOT: u64 = 1 << 32;

fn pool_slot(slot: FieldSlot) -> crate::jobs::SlotId {
    crate::jobs::SlotId(FIRST_REPRESENTATION_SLOT.saturating_add(slot.0))
}

impl PoolBackend {
    /// Starts the pool (CUDA devices when present, else the CPU).
    pub fn start() -> PoolBackend {
        let pool = crate::jobs::Pool::new(crate::jobs::PoolConfig::default());
        for note in pool.notes() {
            tracing::info!("{note}");
        }
        PoolBackend::with_pool(pool)
    }

    /// Over a given pool (tests choose its engines).
    pub fn with_pool(pool: crate::jobs::Pool<FieldKey>) -> PoolBackend {
        PoolBackend {
            pool,
            current: None,
            slots: std::collections::BTreeMap::new(),
            cancelled_requests: 0,
            last_stages: None,
        }
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

    fn device_workers(&self) -> Option<crate::jobs::DeviceWorkers> {
        Some(self.pool.device_workers())
    }

    fn submit_prefetch(&mut self, key: FieldKey, job: FieldJob) {
        let _ = self
            .pool
            .submit_with_priority(PREFETCH_SLOT, key, job, crate::jobs::Priority::Prefetch);
    }

    fn promote_prefetch(&mut self) {
        self.pool.set_priority(PREFETCH_SLOT, crate::jobs::Priority::Normal);
    }

    fn submit_in(&mut self, slot: FieldSlot, key: FieldKey, job: FieldJob) {
        let h = self.pool.submit(pool_slot(slot), key, job);
        self.slots.insert(slot, h);
    }

    fn cancel_slot(&mut self, slot: FieldSlot) {
        if let Some(h) = self.slots.remove(&slot) {
            h.cancel();
        }
    }

    fn slot_progress(&self, slot: FieldSlot) -> Option<JobProgress> {
        let h = self.slots.get(&slot)?;
        Some(JobProgress {
            label: format!("{:.0}%", h.progress.fraction() * 100.0),
            fraction: h.progress.fraction(),
        })
    }

    fn try_recv(&mut self) -> Option<FieldResult> {
        let r = self.pool.results().try_recv().ok()?;
        if self.current.as_ref().is_some_and(|h| h.generation == r.generation) {
            self.current = None;
        }
        self.slots.retain(|_, h| h.generation != r.generation);
        if r.outcome.is_ok() {
            use std::sync::atomic::Ordering::Relaxed;
            let p = &r.progress;
            let s = |ns: &std::sync::atomic::AtomicU64| ns.load(Relaxed) as f64 * 1e-9;
            self.last_stages = Some(StageTimes {
                queue: s(&p.queue_ns),
                compute: s(&p.compute_ns),
                assemble: s(&p.assemble_ns),
                total: s(&p.total_ns),
                tiles: p.tiles_done.load(Relaxed),
                retried: p.tiles_retried.load(Relaxed),
                engines: r.engines.clone(),
            });
        }
        if matches!(r.outcome, Err(crate::jobs::JobError::Cancelled)) {
            // A superseded request: nothing to show and nothing to report.
            self.cancelled_requests += 1;
            return self.try_recv();
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

    fn workers(&self) -> Vec<WorkerRow> {
        use std::sync::atomic::Ordering::Relaxed;
        self.pool
            .workers()
            .iter()
            .map(|w| WorkerRow {
                name: w.name.clone(),
                engine: w.engine.clone(),
                busy: w.busy.load(Relaxed),
                tiles_done: w.tiles_done.load(Relaxed),
                tiles_failed: w.tiles_failed.load(Relaxed),
                tiles_cancelled: w.tiles_cancelled.load(Relaxed),
                busy_seconds: w.busy_ns.load(Relaxed) as f64 * 1e-9,
                last_error: w.last_error.lock().ok().and_then(|e| e.clone()),
            })
            .collect()
    }

    fn last_stages(&self) -> Option<StageTimes> {
        self.last_stages.clone()
    }

    fn cancellations(&self) -> Cancellations {
        Cancellations {
            requests: self.cancelled_requests,
            tiles: self
                .pool
                .workers()
                .iter()
                .map(|w| w.tiles_cancelled.load(std::sync::atomic::Ordering::Relaxed))
                .sum(),
        }
    }
}

/// Default byte budget of the grid and mesh cache.
pub const DEFAULT_CACHE_BUDGET_BYTES: usize = 1 << 30;

/// Bytes a cached grid holds.
pub fn grid_bytes(g: &Grid3) -> usize {
    g.values.len() * std::mem::size_of::<f32>() + std::mem::size_of::<Grid3>() + g.description.len()
}

/// Bytes a cached mesh holds.
pub fn mesh_bytes(m: &MeshData) -> usize {
    (m.positions_angstrom.len() + m.normals.len()) * 12 + m.indices.len() * 4 + std::mem::size_of::<MeshData>()
}

/// Cache use, for the jobs panel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct CacheUse {
    pub bytes: usize,
    pub budget_bytes: usize,
    pub grids: usize,
    pub meshes: usize,
}

/// Answers field and mesh requests from a byte-budgeted LRU cache, a backend and an extractor.
pub struct FieldService {
    backend: Option<Box<dyn FieldBackend>>,
    extractor: Option<Extractor>,
    /// Entries with the tick of their last use (least recently used evicted first).
    grids: Vec<(FieldKey, Arc<Grid3>, u64)>,
    meshes: Vec<(MeshKey, Option<Arc<MeshData>>, u64)>,
    tick: u64,
    budget_bytes: usize,
    bytes: usize,
    pending: Option<FieldKey>,
    /// The look-ahead request in flight in the prefetch slot, if any (also while the view waits for
    /// it); cleared when its result arrives.
    prefetching: Option<FieldKey>,
    /// The key each extra representation's slot waits for (`None`: nothing), by slot, and whether
    /// the slot's own request computes it (false: it shares another slot's request for that key).
    slots: std::collections::BTreeMap<FieldSlot, Option<(FieldKey, bool)>>,
    /// Slots that shared a request which its own slot then dropped: they must ask for themselves.
    orphaned: std::collections::BTreeSet<FieldSlot>,
    /// The grid each slot waited for, from its arrival until the slot takes it (later arrivals in the
    /// same poll may evict it from the cache first).
    delivered: std::collections::BTreeMap<FieldSlot, (FieldKey, Arc<Grid3>)>,
    next_slot: u64,
    /// The last failure, in words, for the status bar.
    pub last_error: Option<String>,
}

impl Default for FieldService {
    fn default() -> Self {
        FieldService {
            backend: None,
            extractor: None,
            grids: Vec::new(),
            meshes: Vec::new(),
            tick: 0,
            budget_bytes: DEFAULT_CACHE_BUDGET_BYTES,
            bytes: 0,
            pending: None,
            prefetching: None,
            slots: std::collections::BTreeMap::new(),
            delivered: std::collections::BTreeMap::new(),
            orphaned: std::collections::BTreeSet::new(),
            next_slot: 1,
            last_error: None,
        }
    }
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

    /// The backend pool's workers for device tasks (RDF frames), when the backend has a pool.
    pub fn device_workers(&self) -> Option<crate::jobs::DeviceWorkers> {
        self.backend.as_ref().and_then(|b| b.device_workers())
    }

    /// The key of the job in flight, if any.
    pub fn pending(&self) -> Option<FieldKey> {
        self.pending
    }

    /// The backend's workers.
    pub fn workers(&self) -> Vec<WorkerRow> {
        self.backend.as_ref().map(|b| b.workers()).unwrap_or_default()
    }

    /// Stage timings of the backend's last finished request.
    pub fn last_stages(&self) -> Option<StageTimes> {
        self.backend.as_ref().and_then(|b| b.last_stages())
    }

    /// Cancellation counts of the backend.
    pub fn cancellations(&self) -> Cancellations {
        self.backend.as_ref().map(|b| b.cancellations()).unwrap_or_default()
    }

    /// Bytes and entries held, and the budget.
    pub fn cache_use(&self) -> CacheUse {
        CacheUse {
            bytes: self.bytes,
            budget_bytes: self.budget_bytes,
            grids: self.grids.len(),
            meshes: self.meshes.len(),
        }
    }

    /// Sets the cache budget (bytes) and evicts down to it.
    pub fn set_cache_budget(&mut self, bytes: usize) {
        self.budget_bytes = bytes;
        self.evict(None, None);
    }

    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    /// Evicts least recently used entries until the cache fits its budget, sparing the entries
    /// named (the ones about to be shown).
    fn evict(&mut self, keep_grid: Option<FieldKey>, keep_mesh: Option<MeshKey>) {
        while self.bytes > self.budget_bytes {
            let oldest_grid = self
                .grids
                .iter()
                .enumerate()
                .filter(|(_, (k, _, _))| Some(*k) != keep_grid)
                .min_by_key(|(_, (_, _, t))| *t)
                .map(|(i, (_, _, t))| (i, *t));
            let oldest_mesh = self
                .meshes
                .iter()
                .enumerate()
                .filter(|(_, (k, _, _))| Some(*k) != keep_mesh)
                .min_by_key(|(_, (_, _, t))| *t)
                .map(|(i, (_, _, t))| (i, *t));
            match (oldest_grid, oldest_mesh) {
                (Some((i, tg)), Some((_, tm))) if tg <= tm => self.drop_grid(i),
                (_, Some((j, _))) => self.drop_mesh(j),
                (Some((i, _)), None) => self.drop_grid(i),
                (None, None) => break,
            }
        }
    }

    fn drop_grid(&mut self, i: usize) {
        let (_, g, _) = self.grids.remove(i);
        self.bytes = self.bytes.saturating_sub(grid_bytes(&g));
    }

    fn drop_mesh(&mut self, j: usize) {
        let (_, m, _) = self.meshes.remove(j);
        self.bytes = self.bytes.saturating_sub(m.as_deref().map_or(0, mesh_bytes));
    }

    /// Puts a grid in the cache (volumes from files, results).
    pub fn insert(&mut self, key: FieldKey, grid: Arc<Grid3>) {
        if let Some(i) = self.grids.iter().position(|(k, _, _)| *k == key) {
            self.drop_grid(i);
        }
        let t = self.next_tick();
        self.bytes += grid_bytes(&grid);
        self.grids.push((key, grid, t));
        self.evict(Some(key), None);
    }

    /// The grid for `key` from the cache; on a miss, submits `make_job()` (unless that key is
    /// already in flight) and returns `None`.
    pub fn request(&mut self, key: FieldKey, make_job: impl FnOnce() -> Option<FieldJob>) -> Option<Arc<Grid3>> {
        if let Some(pos) = self.grids.iter().position(|(k, _, _)| *k == key) {
            let t = self.next_tick();
            let entry = &mut self.grids[pos];
            entry.2 = t;
            return Some(Arc::clone(&entry.1));
        }
        if self.pending == Some(key) {
            return None;
        }
        if self.prefetching == Some(key) {
            // Already on its way from the look-ahead slot: wait for it instead of asking again, at
            // the priority of the view's own requests.
            self.pending = Some(key);
            if let Some(b) = self.backend.as_mut() {
                b.promote_prefetch();
            }
            return None;
        }
        let backend = self.backend.as_mut()?;
        let job = make_job()?;
        backend.submit(key, job);
        self.pending = Some(key);
        // A backend may finish at once (the inline one does): take what is ready.
        self.poll();
        self.grids
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, g, _)| Arc::clone(g))
    }

    /// A new latest-wins slot for an extra representation.
    pub fn add_slot(&mut self) -> FieldSlot {
        let slot = FieldSlot(self.next_slot);
        self.next_slot += 1;
        self.slots.insert(slot, None);
        slot
    }

    /// Cancels the request in flight in `slot` and forgets the slot.
    pub fn remove_slot(&mut self, slot: FieldSlot) {
        self.cancel_slot(slot);
        self.slots.remove(&slot);
        self.delivered.remove(&slot);
        self.orphaned.remove(&slot);
    }

    /// Cancels the request in flight in `slot`; the slot stays.
    pub fn cancel_slot(&mut self, slot: FieldSlot) {
        self.drop_slot_request(slot, true);
        if let Some(p) = self.slots.get_mut(&slot) {
            *p = None;
        }
    }

    /// Stops `slot`'s own request (cancelled, or with `cancel == false` about to be superseded by a
    /// newer one in the slot); slots that shared it are orphaned.
    fn drop_slot_request(&mut self, slot: FieldSlot, cancel: bool) {
        let Some(Some((key, own))) = self.slots.get(&slot).copied() else {
            return;
        };
        if !own {
            return;
        }
        if cancel && let Some(b) = self.backend.as_mut() {
            b.cancel_slot(slot);
        }
        for (s, p) in self.slots.iter_mut() {
            if *s != slot && *p == Some((key, false)) {
                *p = None;
                self.orphaned.insert(*s);
            }
        }
    }

    /// True (once) when the request `slot` shared was dropped by the slot that owned it, so `slot`
    /// has to ask again.
    pub fn take_orphaned(&mut self, slot: FieldSlot) -> bool {
        self.orphaned.remove(&slot)
    }

    /// The key in flight for `slot` (its own request or one it shares), if any.
    pub fn pending_in(&self, slot: FieldSlot) -> Option<FieldKey> {
        self.slots.get(&slot).copied().flatten().map(|(k, _)| k)
    }

    /// Progress of the request in flight in `slot`.
    pub fn slot_progress(&self, slot: FieldSlot) -> Option<JobProgress> {
        self.pending_in(slot)?;
        self.backend.as_ref().and_then(|b| b.slot_progress(slot))
    }

    /// Like [`FieldService::request`], for an extra representation's own `slot`: the grid for `key`
    /// from the shared cache; on a miss, submits `make_job()` to `slot` (superseding what that slot
    /// had in flight, unless it is this key already) and returns `None`. When another slot already
    /// computes `key`, `slot` shares that request instead of computing the same lattice twice.
    pub fn request_in(
        &mut self,
        slot: FieldSlot,
        key: FieldKey,
        make_job: impl FnOnce() -> Option<FieldJob>,
    ) -> Option<Arc<Grid3>> {
        if let Some(g) = self.cached_in(slot, key) {
            return Some(g);
        }
        if !self.slots.contains_key(&slot) || self.pending_in(slot) == Some(key) {
            return None;
        }
        self.backend.as_ref()?;
        self.delivered.remove(&slot);
        if self.slots.iter().any(|(s, p)| *s != slot && *p == Some((key, true))) {
            // Latest wins in this slot too: what it computed before stops.
            self.drop_slot_request(slot, true);
            self.slots.insert(slot, Some((key, false)));
            return None;
        }
        let job = make_job()?;
        self.drop_slot_request(slot, false);
        let backend = self.backend.as_mut()?;
        backend.submit_in(slot, key, job);
        self.slots.insert(slot, Some((key, true)));
        self.poll();
        self.grids
            .iter()
            .find(|(k, _, _)| *k == key)
            .map(|(_, g, _)| Arc::clone(g))
    }

    /// True when a look-ahead request would be taken now (a backend, and none in flight).
    pub fn can_prefetch(&self) -> bool {
        self.backend.is_some() && self.prefetching.is_none()
    }

    /// Asks for `key` ahead of time (playback's next frame), unless it is cached or already asked for.
    pub fn prefetch(&mut self, key: FieldKey, make_job: impl FnOnce() -> Option<FieldJob>) {
        // One look-ahead at a time: a second would cancel the first in the slot, and the first may
        // be the very request the view now waits for.
        if self.prefetching.is_some() || self.pending == Some(key) || self.grids.iter().any(|(k, _, _)| *k == key) {
            return;
        }
        let Some(backend) = self.backend.as_mut() else {
            return;
        };
        if let Some(job) = make_job() {
            backend.submit_prefetch(key, job);
            self.prefetching = Some(key);
        }
    }

    /// Moves finished results into the cache; returns the keys that arrived.
    pub fn poll(&mut self) -> Vec<FieldKey> {
        let mut arrived = Vec::new();
        while let Some(r) = self.backend.as_mut().and_then(|b| b.try_recv()) {
            if self.pending == Some(r.key) {
                self.pending = None;
            }
            if self.prefetching == Some(r.key) {
                self.prefetching = None;
            }
            // Routed by key: every slot waiting for this key has it now.
            for (slot, p) in self.slots.iter_mut() {
                if p.is_some_and(|(k, _)| k == r.key) {
                    *p = None;
                    if let Ok(g) = &r.grid {
                        self.delivered.insert(*slot, (r.key, Arc::clone(g)));
                    }
                }
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

    /// Cancels the running job and the requests of every representation slot.
    pub fn cancel(&mut self) {
        if let Some(b) = self.backend.as_mut() {
            b.cancel();
            for (slot, p) in self.slots.iter_mut() {
                if p.take().is_some() {
                    b.cancel_slot(*slot);
                }
            }
        }
        self.orphaned.clear();
        self.pending = None;
    }

    /// The grid for `key` if it arrived for `slot` or is cached; never submits.
    pub fn cached_in(&mut self, slot: FieldSlot, key: FieldKey) -> Option<Arc<Grid3>> {
        if self.delivered.get(&slot).is_some_and(|(k, _)| *k == key) {
            return self.delivered.remove(&slot).map(|(_, g)| g);
        }
        self.cached(key)
    }

    /// Takes the grid that arrived for `slot`'s last request, if it has not been taken yet.
    pub fn take_delivered(&mut self, slot: FieldSlot) -> Option<(FieldKey, Arc<Grid3>)> {
        self.delivered.remove(&slot)
    }

    /// The grid for `key` if it is cached (marked as used); never submits.
    pub fn cached(&mut self, key: FieldKey) -> Option<Arc<Grid3>> {
        let pos = self.grids.iter().position(|(k, _, _)| *k == key)?;
        let t = self.next_tick();
        let entry = &mut self.grids[pos];
        entry.2 = t;
        Some(Arc::clone(&entry.1))
    }

    /// The isosurface of `grid` at `iso` (cached by key); `None` when nothing crosses `iso` or no
    /// extractor is available.
    pub fn mesh(&mut self, key: MeshKey, grid: &Grid3) -> Option<Arc<MeshData>> {
        let t = self.next_tick();
        if let Some(entry) = self.meshes.iter_mut().find(|(k, _, _)| *k == key) {
            entry.2 = t;
            return entry.1.clone();
        }
        let extract = self.extractor?;
        let m = extract(grid, f32::from_bits(key.iso_bits)).map(Arc::new);
        self.bytes += m.as_deref().map_or(0, mesh_bytes);
        self.meshes.push((key, m.clone(), t));
        self.evict(Some(key.field), Some(key));
        m
    }

    /// Drops every cached grid and mesh (after a change of what a key computes); requests in
    /// flight are kept.
    pub fn clear_cache(&mut self) {
        self.grids.clear();
        self.meshes.clear();
        self.bytes = 0;
    }

    /// The cached isosurface for `key`: `Some(None)` when it is cached as empty, `None` on a miss.
    pub fn cached_mesh(&mut self, key: MeshKey) -> Option<Option<Arc<MeshData>>> {
        let t = self.next_tick();
        let entry = self.meshes.iter_mut().find(|(k, _, _)| *k == key)?;
        entry.2 = t;
        Some(entry.1.clone())
    }

    /// Caches an isosurface made elsewhere (the extraction thread).
    pub fn insert_mesh(&mut self, key: MeshKey, mesh: Option<Arc<MeshData>>) {
        if self.meshes.iter().any(|(k, _, _)| *k == key) {
            return;
        }
        let t = self.next_tick();
        self.bytes += mesh.as_deref().map_or(0, mesh_bytes);
        self.meshes.push((key, mesh, t));
        self.evict(Some(key.field), Some(key));
    }

    /// The extractor isosurfaces are made with, if any.
    pub fn extractor(&self) -> Option<Extractor> {
        self.extractor
    }

    /// The most recently used cached grid of the same document, field and lattice size as `key`
    /// at another frame (what playback shows while the playhead's own frame is computed).
    pub fn latest_other_frame(&self, key: FieldKey) -> Option<(FieldKey, Arc<Grid3>)> {
        self.grids
            .iter()
            .filter(|(k, _, _)| k.document == key.document && k.field == key.field && k.dims == key.dims)
            .max_by_key(|(_, _, t)| *t)
            .map(|(k, g, _)| (*k, Arc::clone(g)))
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

    /// Holds every job until told to finish it; shares what it was asked with the test.
    struct Manual {
        asked: std::sync::Arc<std::sync::Mutex<Vec<(FieldKey, bool, Lattice)>>>,
        ready: std::sync::Arc<std::sync::Mutex<VecDeque<FieldResult>>>,
    }

    impl FieldBackend for Manual {
        fn name(&self) -> String {
            "manual".into()
        }
        fn submit(&mut self, key: FieldKey, job: FieldJob) {
            self.asked.lock().unwrap().push((key, false, job.lattice));
        }
        fn submit_prefetch(&mut self, key: FieldKey, job: FieldJob) {
            self.asked.lock().unwrap().push((key, true, job.lattice));
        }
        fn try_recv(&mut self) -> Option<FieldResult> {
            self.ready.lock().unwrap().pop_front()
        }
        fn progress(&self) -> Option<JobProgress> {
            None
        }
        fn cancel(&mut self) {}
    }

    #[test]
    fn a_prefetched_key_is_awaited_not_asked_again_and_one_look_ahead_at_a_time() {
        let asked = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let ready = std::sync::Arc::new(std::sync::Mutex::new(VecDeque::new()));
        let mut s = FieldService::new(
            Some(Box::new(Manual {
                asked: asked.clone(),
                ready: ready.clone(),
            })),
            None,
        );
        let key = |frame| FieldKey {
            document: 1,
            frame,
            field: FieldChoice::Density,
            dims: [2, 2, 2],
        };
        s.prefetch(key(1), job);
        assert_eq!(asked.lock().unwrap().len(), 1);
        assert!(asked.lock().unwrap()[0].1, "asked in the prefetch slot");
        // The view now wants frame 1: it waits for the look-ahead instead of asking again.
        assert!(s.request(key(1), || panic!("must not ask again")).is_none());
        assert_eq!(s.pending(), Some(key(1)));
        // While it is in flight, no second look-ahead (it would cancel the awaited one).
        s.prefetch(key(2), job);
        assert_eq!(asked.lock().unwrap().len(), 1);
        let lattice = asked.lock().unwrap()[0].2;
        ready.lock().unwrap().push_back(FieldResult {
            key: key(1),
            grid: Ok(Arc::new(Grid3::zeros(lattice, "test"))),
        });
        assert_eq!(s.poll(), vec![key(1)]);
        assert_eq!(s.pending(), None);
        assert!(s.request(key(1), || panic!("cached now")).is_some());
        s.prefetch(key(2), job);
        assert_eq!(asked.lock().unwrap().len(), 2);
        // Once that look-ahead is in, a cached key is never asked for again.
        ready.lock().unwrap().push_back(FieldResult {
            key: key(2),
            grid: Ok(Arc::new(Grid3::zeros(lattice, "test"))),
        });
        assert_eq!(s.poll(), vec![key(2)]);
        s.prefetch(key(1), || panic!("cached"));
        assert_eq!(asked.lock().unwrap().len(), 2);
    }
}
