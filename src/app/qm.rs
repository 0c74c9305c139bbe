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
            FieldChoice::WavefunctionPotential => Field::QmPotential,
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::expect_used)]

    use super::*;
    use crate::app::fields::FieldService;
    use crate::app::settings::Settings;
    use crate::app::state::{AppState, Command};
    use crate::compute::cpu::points::PointEvaluator;
    use crate::io::System;
    use crate::model::units::{angstrom_from_bohr3, bohr_from_angstrom3};
    use crate::model::{Element, Name8, Spin, Structure, Trajectory};
    use std::path::PathBuf;

    /// A rotation by `angle` about `axis` and a translation (Angstrom), written out independently.
    fn motion(axis: [f64; 3], angle: f64, t: [f64; 3]) -> impl Fn([f64; 3]) -> [f64; 3] + Copy {
        let n = (axis[0] * axis[0] + axis[1] * axis[1] + axis[2] * axis[2]).sqrt();
        let [x, y, z] = axis.map(|v| v / n);
        let (s, c) = angle.sin_cos();
        let k = 1.0 - c;
        let r = [
            [k * x * x + c, k * x * y - s * z, k * x * z + s * y],
            [k * x * y + s * z, k * y * y + c, k * y * z - s * x],
            [k * x * z - s * y, k * y * z + s * x, k * z * z + c],
        ];
        move |p: [f64; 3]| std::array::from_fn(|i| (0..3).map(|j| r[i][j] * p[j]).sum::<f64>() + t[i])
    }

    fn inverse(m: impl Fn([f64; 3]) -> [f64; 3], p: [f64; 3]) -> [f64; 3] {
        // R^T (p - t): columns of R from the images of the unit vectors.
        let t = m([0.0; 3]);
        let cols = [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]].map(|e| {
            let q = m(e);
            [q[0] - t[0], q[1] - t[1], q[2] - t[2]]
        });
        let d = [p[0] - t[0], p[1] - t[1], p[2] - t[2]];
        cols.map(|c| c[0] * d[0] + c[1] * d[1] + c[2] * d[2])
    }

    #[test]
    fn one_wavefunction_for_many_frames_is_called_an_approximation() {
        let region = QmRegion {
            atoms: vec![3, 4, 5],
            source: crate::analysis::qm_region::RegionSource::Selection("resname LIG".into()),
        };
        let single = QmDocument::new(region.clone(), 1, 40).summary();
        assert!(
            single.contains("carried rigidly") && single.contains("approximation"),
            "{single}"
        );
        assert!(single.contains("3 atoms") && single.contains("resname LIG"), "{single}");
        let series = QmDocument::new(region, 40, 40).summary();
        assert!(!series.contains("approximation"), "{series}");
    }

    /// The viewer's path (Document, field_key_at, field_job_at, placed_grid) gives the orbital of
    /// each frame's wavefunction at the inverse-moved points of the MD-frame lattice.
    #[test]
    fn document_jobs_place_orbitals_on_the_md_atoms() {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/data/qm/threonine_md");
        let wfs: Vec<Wavefunction> = (0..2)
            .map(|f| {
                let p = dir.join(format!("threonine_md_{f:03}.molden.gz"));
                crate::io::load(&[p]).unwrap().wavefunctions.remove(0)
            })
            .collect();
        let motions = [
            motion([1.0, 2.0, -0.5], 2.1, [20.0, 18.0, 25.0]),
            motion([-0.3, 0.2, 1.0], -1.2, [5.0, 30.0, 12.0]),
        ];
        let mut structure = Structure::default();
        for _ in 0..3 {
            for e in [Element::O, Element::H, Element::H] {
                structure.push_atom(
                    e,
                    Name8::from(e.symbol()),
                    Name8::from("HOH"),
                    1,
                    Name8::EMPTY,
                    Name8::EMPTY,
                );
            }
        }
        let first = structure.len();
        for a in &wfs[0].atoms {
            structure.push_atom(
                a.element,
                Name8::from(a.element.symbol()),
                Name8::from("THR"),
                2,
                Name8::EMPTY,
                Name8::EMPTY,
            );
        }
        let waters = [[6.0, 0.0, 0.0], [0.0, 7.0, 0.0], [0.0, 0.0, -6.5]];
        let frames: Vec<Frame> = wfs
            .iter()
            .zip(motions)
            .map(|(wf, m)| {
                let mut pos: Vec<[f64; 3]> = Vec::new();
                for o in waters {
                    pos.extend([o, [o[0] + 0.96, o[1], o[2]], [o[0], o[1] + 0.96, o[2]]].map(m));
                }
                pos.extend(wf.atoms.iter().map(|a| m(angstrom_from_bohr3(a.position_bohr))));
                Frame {
                    positions_angstrom: pos.iter().map(|p| p.map(|x| x as f32)).collect(),
                    ..Frame::default()
                }
            })
            .collect();
        let region = QmRegion::resolve(None, &structure, frames.first(), &wfs[0]).unwrap();
        assert_eq!(region.atoms, (first..first + wfs[0].atoms.len()).collect::<Vec<_>>());
        let n = structure.len();
        let system = System {
            structure,
            trajectory: Trajectory::from_frames(n, frames, "test"),
            wavefunctions: wfs.clone(),
            grids: Vec::new(),
            warnings: Vec::new(),
            paths: vec![PathBuf::from("system.xyz")],
            wavefunction_frames: Vec::new(),
            frame_energies_hartree: Vec::new(),
            orbital_levels: None,
        };
        let settings = Settings {
            lattice_points: 16,
            ..Settings::default()
        };
        let mut state = AppState::new(settings, FieldService::default());
        state.open_system_with_qm_region("qm".into(), system, Some(region));
        let status = &state.panels.status;
        assert!(status.contains("QM region of 17 atoms"), "{status}");
        assert!(status.contains("one wavefunction per frame"), "{status}");
        let homo = state.homo_index(Spin::Alpha).unwrap();
        let orbital = FieldChoice::Orbital {
            spin: Spin::Alpha,
            index: homo,
        };
        state.set_main_field(Some(orbital));
        for (f, m) in motions.iter().enumerate() {
            state.apply(Command::SetFrame(f));
            let frame = state.document().unwrap().frame.clone();
            let key = state.field_key_at(orbital, f, &frame).unwrap();
            let job = state.field_job_at(&key, &frame).unwrap();
            assert!(!job.lattice.is_axis_aligned());
            let computed = Arc::new(crate::compute::cpu::evaluate_grid(&job).unwrap());
            let grid = state.placed_grid(&key, computed);
            let l = grid.lattice;
            assert!(l.is_axis_aligned() && l.dims == key.dims, "{l:?}");
            // The lattice surrounds the region's atoms in the MD frame (4 A padding).
            let far = l.point_bohr(l.dims[0] - 1, l.dims[1] - 1, l.dims[2] - 1);
            for p in &frame.positions_angstrom[first..] {
                let p = bohr_from_angstrom3(p.map(f64::from));
                assert!(
                    (0..3).all(|k| p[k] > l.origin_bohr[k] && p[k] < far[k]),
                    "{p:?} outside {l:?}"
                );
            }
            let field = Field::Orbital {
                spin: Spin::Alpha,
                index: homo,
            };
            let eval = PointEvaluator::new(&wfs[f]);
            let mut worst = 0.0f64;
            let mut scale = 0.0f64;
            for k in (0..l.dims[2]).step_by(3) {
                for j in (0..l.dims[1]).step_by(2) {
                    for i in (0..l.dims[0]).step_by(2) {
                        let p_wf = bohr_from_angstrom3(inverse(m, angstrom_from_bohr3(l.point_bohr(i, j, k))));
                        let r = eval.value(&field, p_wf).unwrap();
                        let g = f64::from(grid.get(i, j, k).unwrap());
                        worst = worst.max((g - r).abs());
                        scale = scale.max(r.abs());
                    }
                }
            }
            assert!(scale > 1e-2, "frame {f}: no orbital on the sampled points");
            assert!(worst <= 1e-5 * scale, "frame {f}: {worst} vs {scale}");
            assert_eq!(state.document().unwrap().qm.as_ref().unwrap().take_warning(), None);
        }
    }
}
