//! The byte-budgeted LRU cache of computed lattices and their isosurface meshes, shared by every
//! representation. Owned by the [`FieldService`](super::FieldService); nothing else touches it.

use super::{FieldKey, MeshKey};
use crate::model::Grid3;
use crate::surface::MeshData;
use std::sync::Arc;

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

/// Grids and meshes with the tick of their last use (least recently used evicted first).
pub(super) struct FieldCache {
    grids: Vec<(FieldKey, Arc<Grid3>, u64)>,
    meshes: Vec<(MeshKey, Option<Arc<MeshData>>, u64)>,
    tick: u64,
    budget_bytes: usize,
    bytes: usize,
}

impl Default for FieldCache {
    fn default() -> Self {
        FieldCache {
            grids: Vec::new(),
            meshes: Vec::new(),
            tick: 0,
            budget_bytes: DEFAULT_CACHE_BUDGET_BYTES,
            bytes: 0,
        }
    }
}

impl FieldCache {
    fn next_tick(&mut self) -> u64 {
        self.tick += 1;
        self.tick
    }

    pub(super) fn usage(&self) -> CacheUse {
        CacheUse {
            bytes: self.bytes,
            budget_bytes: self.budget_bytes,
            grids: self.grids.len(),
            meshes: self.meshes.len(),
        }
    }

    pub(super) fn set_budget(&mut self, bytes: usize) {
        self.budget_bytes = bytes;
        self.evict(None, None);
    }

    pub(super) fn contains(&self, key: FieldKey) -> bool {
        self.grids.iter().any(|(k, _, _)| *k == key)
    }

    /// The grid for `key`, marked as used.
    pub(super) fn grid(&mut self, key: FieldKey) -> Option<Arc<Grid3>> {
        let pos = self.grids.iter().position(|(k, _, _)| *k == key)?;
        let t = self.next_tick();
        let entry = self.grids.get_mut(pos)?;
        entry.2 = t;
        Some(Arc::clone(&entry.1))
    }

    pub(super) fn insert_grid(&mut self, key: FieldKey, grid: Arc<Grid3>) {
        if let Some(i) = self.grids.iter().position(|(k, _, _)| *k == key) {
            self.drop_grid(i);
        }
        let t = self.next_tick();
        self.bytes += grid_bytes(&grid);
        self.grids.push((key, grid, t));
        self.evict(Some(key), None);
    }

    /// The cached mesh for `key`: `Some(None)` when it is cached as empty.
    pub(super) fn mesh(&mut self, key: MeshKey) -> Option<Option<Arc<MeshData>>> {
        let t = self.next_tick();
        let entry = self.meshes.iter_mut().find(|(k, _, _)| *k == key)?;
        entry.2 = t;
        Some(entry.1.clone())
    }

    pub(super) fn insert_mesh(&mut self, key: MeshKey, mesh: Option<Arc<MeshData>>) {
        if self.meshes.iter().any(|(k, _, _)| *k == key) {
            return;
        }
        let t = self.next_tick();
        self.bytes += mesh.as_deref().map_or(0, mesh_bytes);
        self.meshes.push((key, mesh, t));
        self.evict(Some(key.field), Some(key));
    }

    /// Drops the grids and meshes of the fields `drop` names.
    pub(super) fn forget(&mut self, drop: impl Fn(super::FieldChoice) -> bool) {
        self.grids.retain(|(k, _, _)| !drop(k.field));
        self.meshes.retain(|(k, _, _)| !drop(k.field.field));
        self.bytes = self.grids.iter().map(|(_, g, _)| grid_bytes(g)).sum::<usize>()
            + self
                .meshes
                .iter()
                .map(|(_, m, _)| m.as_deref().map_or(0, mesh_bytes))
                .sum::<usize>();
    }

    pub(super) fn clear(&mut self) {
        self.grids.clear();
        self.meshes.clear();
        self.bytes = 0;
    }

    /// The most recently used grid of the same document, field and lattice size as `key`.
    pub(super) fn latest_like(&self, key: FieldKey) -> Option<(FieldKey, Arc<Grid3>)> {
        self.grids
            .iter()
            .filter(|(k, _, _)| k.document == key.document && k.field == key.field && k.dims == key.dims)
            .max_by_key(|(_, _, t)| *t)
            .map(|(k, g, _)| (*k, Arc::clone(g)))
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
        if i < self.grids.len() {
            let (_, g, _) = self.grids.remove(i);
            self.bytes = self.bytes.saturating_sub(grid_bytes(&g));
        }
    }

    fn drop_mesh(&mut self, j: usize) {
        if j < self.meshes.len() {
            let (_, m, _) = self.meshes.remove(j);
            self.bytes = self.bytes.saturating_sub(m.as_deref().map_or(0, mesh_bytes));
        }
    }
}
