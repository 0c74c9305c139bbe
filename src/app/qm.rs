//! A document's QM region: orbitals of wavefunctions that describe part of an MD system, drawn on
//! the moving atoms frame by frame.
//!
//! Owns [`QmDocument`], which `state::Document` holds when `io::load_with` resolved a QM region.
//! `AppState::field_key_at` and `field_job_at` go through it for orbital and density fields: the
//! lattice is chosen around the region's atoms in the MD frame, the job computes on that lattice
//! carried into the wavefunction's frame (`analysis::qm_region`), and [`QmDocument::place`] gives
//! the result back its MD-frame lattice before it is shown or cached.

use super::fields::{FieldChoice, FieldKey};
use crate::analysis::qm_region::{QmRegion, RegionFit, placed_job, wavefunction_index};
use crate::compute::{Field, FieldJob};
use crate::model::{Frame, Grid3, Lattice, Wavefunction};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

/// Remembered placements; beyond this many the oldest keys are forgotten (their grids, if still
/// cached, are shown unplaced: recomputed on the next request of that frame).
const MAX_PLACEMENTS: usize = 1 << 14;

/// A QM region of a document and what the viewer remembers about its frames.
#[derive(Debug)]
pub struct QmDocument {
    pub region: QmRegion,
    /// One wavefunction serves every frame, carried rigidly with the region (an approximation:
    /// the orbitals do not follow the atoms' internal motion).
    pub single_wavefunction: bool,
    /// For each key computed: (lattice of the job in the wavefunction's frame, MD-frame lattice).
    placements: Mutex<BTreeMap<FieldKey, (Lattice, Lattice)>>,
    warned: AtomicBool,
    warning: Mutex<Option<String>>,
}

impl QmDocument {
    pub fn new(region: QmRegion, n_wavefunctions: usize, n_frames: usize) -> QmDocument {
        QmDocument {
            region,
            single_wavefunction: n_wavefunctions == 1 && n_frames > 1,
            placements: Mutex::new(BTreeMap::new()),
            warned: AtomicBool::new(false),
            warning: Mutex::new(None),
        }
    }

    /// For the status line: which atoms, and how the wavefunctions serve the frames.
    pub fn summary(&self) -> String {
        let series = if self.single_wavefunction {
            "one wavefunction carried rigidly with the region (approximation: orbitals do not follow internal motion)"
        } else {
            "one wavefunction per frame"
        };
        format!("QM region of {}; {series}", self.region.describe())
    }

    fn fit(
        &self,
        wavefunctions: &[Arc<Wavefunction>],
        n_frames: usize,
        index: usize,
        frame: &Frame,
    ) -> Option<(RegionFit, Arc<Wavefunction>)> {
        let wf = wavefunctions.get(wavefunction_index(wavefunctions.len(), n_frames, index)?)?;
        match self.region.fit(wf, index, frame) {
            Ok(fit) => Some((fit, Arc::clone(wf))),
            Err(e) => {
                self.warn(e.to_string());
                None
            }
        }
    }

    fn warn(&self, message: String) {
        if !self.warned.swap(true, Ordering::AcqRel)
            && let Ok(mut w) = self.warning.lock()
        {
            *w = Some(message);
        }
    }

    /// The warning of the first poor fit (or failed placement), once.
    pub fn take_warning(&self) -> Option<String> {
        self.warning.lock().ok().and_then(|mut w| w.take())
    }

    /// The region's atoms in frame `index` (made whole, Angstrom): what the lattice is chosen around.
    pub fn positions_angstrom(
        &self,
        wavefunctions: &[Arc<Wavefunction>],
        n_frames: usize,
        index: usize,
        frame: &Frame,
    ) -> Option<Vec<[f32; 3]>> {
        self.fit(wavefunctions, n_frames, index, frame)
            .map(|(fit, _)| fit.positions_angstrom())
    }

    /// The job for `key` (an orbital or the density) at frame `key.frame` whose coordinates are
    /// `frame`, on the lattice `lattice_for` chooses around the region's atoms in the MD frame.
    pub fn job(
        &self,
        wavefunctions: &[Arc<Wavefunction>],
        n_frames: usize,
        key: &FieldKey,
        frame: &Frame,
        lattice_for: impl FnOnce(&[[f32; 3]]) -> Option<Lattice>,
    ) -> Option<FieldJob> {
        let field = match key.field {
            FieldChoice::Orbital { spin, index } => Field::Orbital { spin, index },
            FieldChoice::Density => Field::Density,
            _ => return None,
        };
        let (fit, wf) = self.fit(wavefunctions, n_frames, key.frame, frame)?;
        if let Some(w) = fit.warning(key.frame) {
            self.warn(w);
        }
        let lattice_md = lattice_for(&fit.positions_angstrom())?;
        let placed = placed_job(&fit, field, &wf, lattice_md);
        if let Ok(mut p) = self.placements.lock() {
            if p.len() >= MAX_PLACEMENTS {
                p.clear();
            }
            p.insert(*key, (placed.job.lattice, placed.lattice_md));
        }
        Some(placed.job)
    }

    /// `grid` (the result for `key`) on its MD-frame lattice: relabelled when it was computed in the
    /// wavefunction's frame, unchanged otherwise.
    pub fn place(&self, key: &FieldKey, grid: Arc<Grid3>) -> Arc<Grid3> {
        let Some((wf_lattice, md_lattice)) = self.placements.lock().ok().and_then(|p| p.get(key).copied()) else {
            return grid;
        };
        if grid.lattice == wf_lattice && wf_lattice != md_lattice {
            let mut g = Grid3::clone(&grid);
            g.lattice = md_lattice;
            Arc::new(g)
        } else {
            grid
        }
    }
}
