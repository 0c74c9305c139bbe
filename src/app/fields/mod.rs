//! Field requests: the one place where the viewer asks for a scalar field and its isosurfaces.
//!
//! Every field representation owns a [`FieldSlot`] ([`FieldService::add_slot`]) and describes what
//! it wants with a [`FieldKey`]. [`FieldService::request`] answers from the cache or hands the job
//! to the [`FieldBackend`] in the slot's view lane (the jobs pool plugs in here: latest wins per
//! lane), and [`FieldService::prefetch`] asks for playback's next frame in the slot's look-ahead
//! lane; requests reach the backend together at [`FieldService::flush`] (once per update), so
//! the backend can compute one frame's orbitals in one batch. The representation keeps its previous
//! picture until the result, which carries its key, arrives; results are routed by key to every
//! slot waiting for it, and a slot asking for a key another slot already computes shares that
//! request instead of computing the lattice twice. All slots share one byte-budgeted cache
//! ([`cache`]). Isosurface meshes are made by an [`Extractor`] (the `surface` module's marching
//! cubes) and cached by [`MeshKey`]. Fields the render device computes itself are served by the
//! [`device`] source with the same slot, key and job (no host lattice, not cached). Called by
//! `app::reps` (the representation update loop), the panels (progress) and the CLI.

pub mod backend;
pub mod cache;
pub mod device;

pub use backend::{Cancellations, FieldBackend, InlineBackend, Lane, PoolBackend, StageTimes, WorkerRow};
pub use cache::{CacheUse, DEFAULT_CACHE_BUDGET_BYTES, grid_bytes, mesh_bytes};

use crate::compute::FieldJob;
use crate::model::{Grid3, Spin};
use crate::surface::MeshData;
use std::collections::BTreeMap;
use std::sync::Arc;

/// Which field of a document.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum FieldChoice {
    /// One molecular orbital's amplitude.
    Orbital { spin: Spin, index: usize },
    /// Total electron density.
    Density,
    /// Spin density (alpha minus beta) of an unrestricted or restricted-open wavefunction.
    SpinDensity,
    /// A volume read from a file (index into the document's grids).
    Volume(usize),
    /// Coulomb potential of the structure's partial charges at the current frame (direct sum), on a
    /// lattice fixed for the whole trajectory.
    Potential,
    /// The mean of [`FieldChoice::Potential`] over the last `frames` frames up to the current one
    /// (clamped at frame 0), on the same lattice (`app::potential`).
    PotentialMean { frames: u16 },
    /// Electrostatic potential of the frame's wavefunction (nuclei and electron density,
    /// `Field::QmPotential`), on the orbitals' lattice, in hartree/e.
    WavefunctionPotential,
    /// Molecular-surface density (`Field::MolSurf`, surface at 0.5) of the atoms of the document's
    /// surface selection `selection` (an index into `Document::surface_selections`), on a lattice
    /// around them that follows them frame by frame.
    MolSurf { selection: u16 },
    /// The implicit-ligand-sampling free-energy map `Document::ils_maps[i]` (PMF of a gas probe in
    /// kT, `app::ils`), growing as its frames are added: the key's frame is the number of frames
    /// it holds.
    Ils(u16),
    /// Poisson-Boltzmann potential (kT/e) of the structure's charges and radii at the current frame
    /// (`app::pb`), on a lattice around the frame's atoms; `revision` counts the parameter changes.
    PotentialPb { revision: u32 },
}

impl FieldChoice {
    /// True for fields computed from a wavefunction.
    pub fn needs_wavefunction(self) -> bool {
        matches!(
            self,
            FieldChoice::Orbital { .. }
                | FieldChoice::Density
                | FieldChoice::SpinDensity
                | FieldChoice::WavefunctionPotential
        )
    }

    /// True for the potential of the structure's charges (single frame or running mean).
    pub fn is_potential(self) -> bool {
        matches!(self, FieldChoice::Potential | FieldChoice::PotentialMean { .. })
    }

    /// True for an electrostatic potential: of the structure's charges, or a wavefunction's own
    /// (drawn red = negative, white = 0, blue = positive: `Colormap::for_values`).
    pub fn is_electrostatic(self) -> bool {
        self.is_potential()
            || self == FieldChoice::WavefunctionPotential
            || matches!(self, FieldChoice::PotentialPb { .. })
    }

    /// True when the field takes both signs (two lobes: at +iso and -iso); a volume's sign is
    /// decided by its values.
    pub fn is_signed(self) -> bool {
        !matches!(
            self,
            FieldChoice::Density | FieldChoice::Volume(_) | FieldChoice::MolSurf { .. } | FieldChoice::Ils(_)
        )
    }
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

impl MeshKey {
    pub fn new(field: FieldKey, iso: f32) -> MeshKey {
        MeshKey {
            field,
            iso_bits: iso.to_bits(),
        }
    }
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

/// Progress of a running job, for the jobs panel and the progress line.
#[derive(Clone, Debug, PartialEq)]
pub struct JobProgress {
    pub label: String,
    /// 0..1.
    pub fraction: f32,
}

/// The request slot of one field representation: its own latest-wins view and look-ahead lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct FieldSlot(pub u64);

/// Where the grid a slot waits for comes from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Source {
    /// The slot's own request in this lane.
    Own(Lane),
    /// Another slot's request for the same key.
    Shared,
}

/// What the service knows about one slot.
#[derive(Default)]
struct SlotState {
    /// The key the view waits for and where it comes from.
    waiting: Option<(FieldKey, Source)>,
    /// The look-ahead request in flight in the slot's own look-ahead lane (also while the view
    /// waits for it); cleared when its result arrives.
    look_ahead: Option<FieldKey>,
    /// The grid the slot waited for, from its arrival until the slot takes it (later arrivals in
    /// the same poll may evict it from the cache first).
    delivered: Option<(FieldKey, Arc<Grid3>)>,
    /// The request the slot shared was dropped by the slot that owned it: it must ask again.
    orphaned: bool,
}

/// Answers field and mesh requests from a byte-budgeted LRU cache, a backend and an extractor.
#[derive(Default)]
pub struct FieldService {
    backend: Option<Box<dyn FieldBackend>>,
    extractor: Option<Extractor>,
    cache: cache::FieldCache,
    slots: BTreeMap<FieldSlot, SlotState>,
    next_slot: u64,
    /// The last failure, in words, for the status bar.
    pub last_error: Option<String>,
    /// The render-device source: requests the render device computes itself ([`device`]).
    pub device: device::DeviceSource,
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

    /// The extractor isosurfaces are made with, if any.
    pub fn extractor(&self) -> Option<Extractor> {
        self.extractor
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
        self.cache.usage()
    }

    /// Sets the cache budget (bytes) and evicts down to it.
    pub fn set_cache_budget(&mut self, bytes: usize) {
        self.cache.set_budget(bytes);
    }

    /// Drops every cached grid and mesh (after a change of what a key computes); requests in
    /// flight are kept.
    pub fn clear_cache(&mut self) {
        self.cache.clear();
    }

    /// Drops the cached grids and meshes of the fields `drop` names (after a change of what their
    /// keys compute); requests in flight are kept.
    pub fn forget(&mut self, drop: impl Fn(FieldChoice) -> bool) {
        self.cache.forget(drop);
    }

    /// Puts a grid in the cache (volumes from files, results computed elsewhere).
    pub fn insert(&mut self, key: FieldKey, grid: Arc<Grid3>) {
        self.cache.insert_grid(key, grid);
    }

    /// The grid for `key` if it is cached (marked as used); never submits.
    pub fn cached(&mut self, key: FieldKey) -> Option<Arc<Grid3>> {
        self.cache.grid(key)
    }

    /// The most recently used cached grid of the same document, field and lattice size as `key`
    /// (what dropping playback shows while the playhead's own frame is computed).
    pub fn latest_other_frame(&self, key: FieldKey) -> Option<(FieldKey, Arc<Grid3>)> {
        self.cache.latest_like(key)
    }

    /// A new slot for a field representation.
    pub fn add_slot(&mut self) -> FieldSlot {
        self.next_slot += 1;
        let slot = FieldSlot(self.next_slot);
        self.slots.insert(slot, SlotState::default());
        slot
    }

    /// Cancels what `slot` has in flight and forgets the slot.
    pub fn remove_slot(&mut self, slot: FieldSlot) {
        self.cancel(slot);
        self.device.forget(slot);
        self.slots.remove(&slot);
    }

    /// The key `slot` waits for (its own request or one it shares), if any.
    pub fn pending(&self, slot: FieldSlot) -> Option<FieldKey> {
        self.slots.get(&slot)?.waiting.map(|(k, _)| k)
    }

    /// True while any slot waits for a field.
    pub fn any_pending(&self) -> bool {
        self.slots.values().any(|s| s.waiting.is_some())
    }

    /// The key in flight in `slot`'s look-ahead lane, if any.
    pub fn looking_ahead(&self, slot: FieldSlot) -> Option<FieldKey> {
        self.slots.get(&slot)?.look_ahead
    }

    /// True (once) when the request `slot` shared was dropped by the slot that owned it, so `slot`
    /// has to ask again.
    pub fn take_orphaned(&mut self, slot: FieldSlot) -> bool {
        self.slots
            .get_mut(&slot)
            .is_some_and(|s| std::mem::take(&mut s.orphaned))
    }

    /// Takes the grid that arrived for `slot`'s last request, if it has not been taken yet.
    pub fn take_delivered(&mut self, slot: FieldSlot) -> Option<(FieldKey, Arc<Grid3>)> {
        self.slots.get_mut(&slot)?.delivered.take()
    }

    /// The grid for `key` if it arrived for `slot` or is cached; never submits.
    pub fn cached_for(&mut self, slot: FieldSlot, key: FieldKey) -> Option<Arc<Grid3>> {
        if let Some(s) = self.slots.get_mut(&slot)
            && s.delivered.as_ref().is_some_and(|(k, _)| *k == key)
        {
            return s.delivered.take().map(|(_, g)| g);
        }
        self.cache.grid(key)
    }

    /// Progress of what `slot` waits for.
    pub fn progress(&self, slot: FieldSlot) -> Option<JobProgress> {
        let backend = self.backend.as_ref()?;
        let (key, source) = self.slots.get(&slot)?.waiting?;
        match source {
            Source::Own(lane) => backend.progress(lane),
            Source::Shared => self.slots.iter().find_map(|(s, st)| match st.waiting {
                Some((k, Source::Own(lane))) if k == key && *s != slot => backend.progress(lane),
                _ => None,
            }),
        }
    }

    /// Progress of everything the view waits for (the mean over slots), for the status line.
    pub fn overall_progress(&self) -> Option<JobProgress> {
        let parts: Vec<f32> = self
            .slots
            .keys()
            .filter_map(|&s| self.progress(s).map(|p| p.fraction))
            .collect();
        if parts.is_empty() {
            return None;
        }
        let fraction = parts.iter().sum::<f32>() / parts.len() as f32;
        Some(JobProgress {
            label: format!(
                "computing {} field{} ({:.0}%)",
                parts.len(),
                if parts.len() == 1 { "" } else { "s" },
                fraction * 100.0
            ),
            fraction,
        })
    }

    /// Which slot computes `key` in its own lane (view or look-ahead), other than `except`.
    fn computing(&self, key: FieldKey, except: FieldSlot) -> Option<(FieldSlot, bool)> {
        self.slots.iter().find_map(|(s, st)| {
            if *s == except {
                return None;
            }
            if matches!(st.waiting, Some((k, Source::Own(lane))) if k == key && !lane.look_ahead) {
                Some((*s, false))
            } else if st.look_ahead == Some(key) {
                Some((*s, true))
            } else {
                None
            }
        })
    }

    /// Stops `slot`'s own view-lane request (`cancel`: stopped now; otherwise about to be
    /// superseded by a newer one in the lane); slots that shared it are orphaned.
    fn drop_view_request(&mut self, slot: FieldSlot, cancel: bool) {
        let Some(Some((key, Source::Own(lane)))) = self.slots.get(&slot).map(|s| s.waiting) else {
            return;
        };
        if lane.look_ahead {
            // A promoted look-ahead: it finishes in its own lane and fills the cache.
            return;
        }
        if cancel && let Some(b) = self.backend.as_mut() {
            b.cancel(lane);
        }
        self.orphan_sharers(slot, key);
    }

    fn orphan_sharers(&mut self, owner: FieldSlot, key: FieldKey) {
        for (s, st) in self.slots.iter_mut() {
            if *s != owner && st.waiting == Some((key, Source::Shared)) {
                st.waiting = None;
                st.orphaned = true;
            }
        }
    }

    /// The grid for `key` for `slot`: what arrived for it or the cache; on a miss, submits
    /// `make_job()` to the slot's view lane (superseding what it had in flight there, unless it is
    /// this key already) and returns `None`. When the slot's look-ahead already computes `key`,
    /// that request is promoted and awaited; when another slot computes it, `slot` shares it.
    pub fn request(
        &mut self,
        slot: FieldSlot,
        key: FieldKey,
        make_job: impl FnOnce() -> Option<FieldJob>,
    ) -> Option<Arc<Grid3>> {
        if let Some(g) = self.cached_for(slot, key) {
            return Some(g);
        }
        let st = self.slots.get(&slot)?;
        if st.waiting.is_some_and(|(k, _)| k == key) {
            return None;
        }
        self.backend.as_ref()?;
        if st.look_ahead == Some(key) {
            // Already on its way from the look-ahead lane: wait for it at the view's priority.
            self.drop_view_request(slot, true);
            if let Some(b) = self.backend.as_mut() {
                b.promote(slot);
            }
            if let Some(st) = self.slots.get_mut(&slot) {
                st.waiting = Some((key, Source::Own(Lane::look_ahead(slot))));
                st.delivered = None;
            }
            return None;
        }
        if let Some((owner, look_ahead)) = self.computing(key, slot) {
            // Latest wins in this slot too: what it computed before stops.
            self.drop_view_request(slot, true);
            if look_ahead && let Some(b) = self.backend.as_mut() {
                b.promote(owner);
            }
            if let Some(st) = self.slots.get_mut(&slot) {
                st.waiting = Some((key, Source::Shared));
                st.delivered = None;
            }
            return None;
        }
        let job = make_job()?;
        self.drop_view_request(slot, false);
        let lane = Lane::view(slot);
        self.backend.as_mut()?.submit(lane, key, job);
        if let Some(st) = self.slots.get_mut(&slot) {
            st.waiting = Some((key, Source::Own(lane)));
            st.delivered = None;
        }
        // A backend may finish at once (an inline one does): take what is ready.
        self.receive();
        self.cached_for(slot, key)
    }

    /// True when `slot` would take a look-ahead request now (a backend, and none in flight).
    pub fn can_prefetch(&self, slot: FieldSlot) -> bool {
        self.backend.is_some() && self.slots.get(&slot).is_some_and(|s| s.look_ahead.is_none())
    }

    /// Asks for `key` ahead of time in `slot`'s look-ahead lane (playback's next frame), unless it
    /// is cached, already asked for, or one is in flight (a second would cancel the first, which
    /// may be the very request the view now waits for).
    pub fn prefetch(&mut self, slot: FieldSlot, key: FieldKey, make_job: impl FnOnce() -> Option<FieldJob>) {
        let Some(st) = self.slots.get(&slot) else {
            return;
        };
        if st.look_ahead.is_some() || st.waiting.is_some_and(|(k, _)| k == key) || self.cache.contains(key) {
            return;
        }
        if self.computing(key, slot).is_some() {
            // Another representation computes it already; it will be in the cache.
            return;
        }
        let Some(backend) = self.backend.as_mut() else {
            return;
        };
        if let Some(job) = make_job() {
            backend.submit(Lane::look_ahead(slot), key, job);
            if let Some(st) = self.slots.get_mut(&slot) {
                st.look_ahead = Some(key);
            }
        }
    }

    /// Hands the requests made since the last flush to the backend together (called once per
    /// update, after every representation has asked: one frame's orbitals are batched).
    pub fn flush(&mut self) {
        if let Some(b) = self.backend.as_mut() {
            b.flush();
        }
    }

    /// Submits what waits ([`FieldService::flush`]), then moves finished results into the cache and
    /// to the slots waiting for them; returns the keys that arrived.
    pub fn poll(&mut self) -> Vec<FieldKey> {
        self.flush();
        self.device.receive();
        self.receive()
    }

    fn receive(&mut self) -> Vec<FieldKey> {
        let mut arrived = Vec::new();
        while let Some(r) = self.backend.as_mut().and_then(|b| b.try_recv()) {
            for st in self.slots.values_mut() {
                if st.look_ahead == Some(r.key) {
                    st.look_ahead = None;
                }
                if st.waiting.is_some_and(|(k, _)| k == r.key) {
                    st.waiting = None;
                    if let Ok(g) = &r.grid {
                        st.delivered = Some((r.key, Arc::clone(g)));
                    }
                }
            }
            match r.grid {
                Ok(g) => {
                    self.cache.insert_grid(r.key, g);
                    arrived.push(r.key);
                }
                Err(e) => self.last_error = Some(e),
            }
        }
        arrived
    }

    /// Cancels what `slot` has in flight (view and look-ahead); slots sharing its requests are
    /// orphaned. The slot stays.
    pub fn cancel(&mut self, slot: FieldSlot) {
        let Some(st) = self.slots.get(&slot) else {
            return;
        };
        let (waiting, look_ahead) = (st.waiting, st.look_ahead);
        if let Some((key, Source::Own(_))) = waiting {
            self.orphan_sharers(slot, key);
        }
        if let Some(key) = look_ahead {
            self.orphan_sharers(slot, key);
        }
        if let Some(b) = self.backend.as_mut() {
            if matches!(waiting, Some((_, Source::Own(lane))) if !lane.look_ahead) {
                b.cancel(Lane::view(slot));
            }
            if look_ahead.is_some() {
                b.cancel(Lane::look_ahead(slot));
            }
        }
        if let Some(st) = self.slots.get_mut(&slot) {
            st.waiting = None;
            st.look_ahead = None;
            st.delivered = None;
        }
    }

    /// Cancels what every slot has in flight.
    pub fn cancel_all(&mut self) {
        let slots: Vec<FieldSlot> = self.slots.keys().copied().collect();
        for s in slots {
            self.cancel(s);
        }
        for st in self.slots.values_mut() {
            st.orphaned = false;
        }
    }

    /// The isosurface of `grid` at `iso` (cached by key); `None` when nothing crosses `iso` or no
    /// extractor is available.
    pub fn mesh(&mut self, key: MeshKey, grid: &Grid3) -> Option<Arc<MeshData>> {
        if let Some(m) = self.cache.mesh(key) {
            return m;
        }
        let extract = self.extractor?;
        let m = extract(grid, f32::from_bits(key.iso_bits)).map(Arc::new);
        self.cache.insert_mesh(key, m.clone());
        m
    }

    /// The cached isosurface for `key`: `Some(None)` when it is cached as empty, `None` on a miss.
    pub fn cached_mesh(&mut self, key: MeshKey) -> Option<Option<Arc<MeshData>>> {
        self.cache.mesh(key)
    }

    /// Caches an isosurface made elsewhere (the extraction thread).
    pub fn insert_mesh(&mut self, key: MeshKey, mesh: Option<Arc<MeshData>>) {
        self.cache.insert_mesh(key, mesh);
    }
}

#[cfg(test)]
mod tests;
