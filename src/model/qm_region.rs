//! QM regions inside MD trajectories: which atoms of a simulated system a wavefunction describes,
//! and where that wavefunction sits in each MD frame.
//!
//! A QM/MM run gives a trajectory of the whole system and wavefunctions of the QM atoms only,
//! usually in the QM program's own orientation. A [`QmRegion`] maps wavefunction atom `i` to a
//! system atom (from a selection, in index order; the identity when the system is the wavefunction's
//! atoms; otherwise found by matching the first wavefunction's geometry to frame 0). Per frame,
//! [`QmRegion::fit`] makes the region whole across periodic boundaries and finds the proper rigid
//! motion (least squares, f64, det +1) that carries the wavefunction's atoms onto the region's atoms,
//! with its RMSD. `analysis::qm_region::placed_job` then computes an orbital on a lattice chosen in
//! the MD frame (the lattice carried into the wavefunction's frame by the inverse motion).
//!
//! Part of the model (geometry of atoms and wavefunctions, no fields) so that `io::load_with` can
//! resolve `--qm-region` without reaching into `analysis`; `analysis::qm_region` re-exports it with
//! the field jobs. Called by `io::load_with`, the viewer's documents (`app::qm`) and the tests in
//! `tests/qm_region.rs`.

use crate::model::select::{Selection, SelectionError};
use crate::model::units::{ANGSTROM_PER_BOHR, angstrom_from_bohr3, bohr_from_angstrom3};
use crate::model::{Frame, Lattice, Structure, UnitCell, Wavefunction};

/// Above this RMSD between the wavefunction's geometry and the region's atoms, users are warned.
pub const RMSD_WARNING_ANGSTROM: f64 = 0.1;
/// How far a pair distance of the system may differ from the wavefunction's for the automatic match.
pub const MATCH_TOLERANCE_ANGSTROM: f64 = 0.4;
/// Two different atom sets whose fits are this close are reported as ambiguous.
const AMBIGUITY_MARGIN_ANGSTROM: f64 = 0.1;
/// Bounds on the automatic search, so a pathological system fails with a message instead of hanging.
const MAX_SEARCH_NODES: usize = 2_000_000;
const MAX_SOLUTIONS: usize = 512;
/// Root candidates times atoms beyond which the automatic search is not tried (it runs while files
/// open): about a second of distance checks.
const MAX_PAIR_CHECKS: usize = 100_000_000;

/// Why a QM region could not be set up or placed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum QmRegionError {
    #[error("--qm-region: {0}")]
    Selection(#[from] SelectionError),
    #[error("the QM region \"{selection}\" selects {selected} atoms but the wavefunction has {wavefunction} atoms")]
    CountMismatch {
        selection: String,
        selected: usize,
        wavefunction: usize,
    },
    /// Atom numbers are 1-based in the message.
    #[error(
        "the QM region \"{selection}\" does not match the wavefunction: its atom {} is {wavefunction_element} but the region's atom {} (system atom {}, {system_name}) is {system_element}",
        wavefunction_atom + 1, wavefunction_atom + 1, system_atom + 1
    )]
    ElementMismatch {
        selection: String,
        wavefunction_atom: usize,
        wavefunction_element: String,
        system_atom: usize,
        system_name: String,
        system_element: String,
    },
    #[error(
        "the wavefunction's {wavefunction} atoms were not found among the system's {system} atoms ({why}); give the QM atoms with --qm-region SELECTION"
    )]
    NotFound {
        system: usize,
        wavefunction: usize,
        why: String,
    },
    #[error(
        "the wavefunction's {wavefunction} atoms match {places} places in the system (e.g. starting at system atoms {} and {}); give the QM atoms with --qm-region SELECTION",
        first + 1, second + 1
    )]
    Ambiguous {
        wavefunction: usize,
        places: usize,
        first: usize,
        second: usize,
    },
    #[error("frame {frame}: {message}")]
    Frame { frame: usize, message: String },
    #[error(
        "{wavefunctions} wavefunctions for {frames} trajectory frames: give one wavefunction per frame, or a single one"
    )]
    SeriesLength { wavefunctions: usize, frames: usize },
    #[error("a QM region needs a wavefunction")]
    NoWavefunction,
}

/// How a region's atoms were chosen.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum RegionSource {
    /// A user's selection, atoms in index order.
    Selection(String),
    /// The system has exactly the wavefunction's atoms.
    SameAtoms,
    /// Found by matching the wavefunction's geometry to the first frame.
    Matched,
}

/// Wavefunction atom `i` is system atom `atoms[i]`.
#[derive(Clone, Debug, PartialEq)]
pub struct QmRegion {
    pub atoms: Vec<usize>,
    pub source: RegionSource,
}

/// A proper rigid motion: `md = rotation * wf + translation_bohr` (rotation row-major, det +1).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct RigidTransform {
    pub rotation: [[f64; 3]; 3],
    pub translation_bohr: [f64; 3],
}

impl RigidTransform {
    pub const IDENTITY: RigidTransform = RigidTransform {
        rotation: [[1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]],
        translation_bohr: [0.0; 3],
    };

    /// `rotation * v` (a direction: no translation).
    pub fn rotate(&self, v: [f64; 3]) -> [f64; 3] {
        let r = &self.rotation;
        [
            r[0][0] * v[0] + r[0][1] * v[1] + r[0][2] * v[2],
            r[1][0] * v[0] + r[1][1] * v[1] + r[1][2] * v[2],
            r[2][0] * v[0] + r[2][1] * v[1] + r[2][2] * v[2],
        ]
    }

    /// `rotation^T * v`.
    pub fn rotate_inverse(&self, v: [f64; 3]) -> [f64; 3] {
        let r = &self.rotation;
        [
            r[0][0] * v[0] + r[1][0] * v[1] + r[2][0] * v[2],
            r[0][1] * v[0] + r[1][1] * v[1] + r[2][1] * v[2],
            r[0][2] * v[0] + r[1][2] * v[1] + r[2][2] * v[2],
        ]
    }

    /// A wavefunction-frame point (bohr) in the MD frame.
    pub fn apply(&self, p_bohr: [f64; 3]) -> [f64; 3] {
        let q = self.rotate(p_bohr);
        [
            q[0] + self.translation_bohr[0],
            q[1] + self.translation_bohr[1],
            q[2] + self.translation_bohr[2],
        ]
    }

    /// An MD-frame point (bohr) in the wavefunction's frame.
    pub fn apply_inverse(&self, p_bohr: [f64; 3]) -> [f64; 3] {
        let t = self.translation_bohr;
        self.rotate_inverse([p_bohr[0] - t[0], p_bohr[1] - t[1], p_bohr[2] - t[2]])
    }

    /// An MD-frame lattice expressed in the wavefunction's frame: point (i,j,k) of the result is the
    /// wavefunction-frame image of point (i,j,k) of `md`.
    pub fn lattice_to_wavefunction(&self, md: &Lattice) -> Lattice {
        Lattice {
            origin_bohr: self.apply_inverse(md.origin_bohr),
            steps_bohr: md.steps_bohr.map(|s| self.rotate_inverse(s)),
            dims: md.dims,
        }
    }
}

/// The region placed in one MD frame.
#[derive(Clone, Debug, PartialEq)]
pub struct RegionFit {
    /// Carries the wavefunction's atoms onto the region's atoms.
    pub transform: RigidTransform,
    pub rmsd_bohr: f64,
    /// The region's atoms in this frame (made whole), in wavefunction atom order, bohr.
    pub positions_bohr: Vec<[f64; 3]>,
}

impl RegionFit {
    pub fn rmsd_angstrom(&self) -> f64 {
        self.rmsd_bohr * ANGSTROM_PER_BOHR
    }

    /// The region's atoms in Angstrom (what the viewer's lattice helpers take).
    pub fn positions_angstrom(&self) -> Vec<[f32; 3]> {
        self.positions_bohr
            .iter()
            .map(|p| angstrom_from_bohr3(*p).map(|x| x as f32))
            .collect()
    }

    /// The user-facing warning when the fit is poor, `None` when it is within
    /// [`RMSD_WARNING_ANGSTROM`].
    pub fn warning(&self, frame: usize) -> Option<String> {
        let rmsd = self.rmsd_angstrom();
        (rmsd > RMSD_WARNING_ANGSTROM || !rmsd.is_finite()).then(|| {
            format!("frame {frame}: the QM region's atoms differ from the wavefunction's geometry by {rmsd:.2} A RMSD (different frames?)")
        })
    }
}

/// Nearest-image displacements in a (possibly triclinic) cell, Angstrom.
struct Images {
    m: [[f64; 3]; 3],
    inv: [[f64; 3]; 3],
    /// Edge lengths of a rectangular box, where rounding per axis is exact and cheap.
    orthorhombic: Option<[f64; 3]>,
}

impl Images {
    fn new(cell: Option<UnitCell>) -> Option<Images> {
        let cell = cell.filter(UnitCell::is_valid)?;
        let m = cell.matrix_angstrom();
        let inv = invert3(m)?;
        let orthorhombic = cell.is_orthorhombic().then_some([m[0][0], m[1][1], m[2][2]]);
        Some(Images { m, inv, orthorhombic })
    }

    /// The image of `d` (a displacement) nearest to zero: wrapped to fractional [-0.5, 0.5), then the
    /// shortest of the 27 neighbouring images (exact for triclinic cells too).
    fn nearest(&self, d: [f64; 3]) -> [f64; 3] {
        if let Some(l) = self.orthorhombic {
            return std::array::from_fn(|k| d[k] - l[k] * (d[k] / l[k]).round());
        }
        // Row vector d = s M, so s = d M^-1.
        let s: [f64; 3] = std::array::from_fn(|k| (0..3).map(|r| d[r] * self.inv[r][k]).sum());
        let s = s.map(|x| x - x.round());
        let mut best = [f64::INFINITY; 3];
        let mut best2 = f64::INFINITY;
        for i in -1..=1 {
            for j in -1..=1 {
                for k in -1..=1 {
                    let f = [s[0] + f64::from(i), s[1] + f64::from(j), s[2] + f64::from(k)];
                    let v: [f64; 3] = std::array::from_fn(|c| (0..3).map(|r| f[r] * self.m[r][c]).sum());
                    let d2 = dot(v, v);
                    if d2 < best2 {
                        best2 = d2;
                        best = v;
                    }
                }
            }
        }
        best
    }
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

fn invert3(m: [[f64; 3]; 3]) -> Option<[[f64; 3]; 3]> {
    let c = |r0: usize, c0: usize, r1: usize, c1: usize| m[r0][c0] * m[r1][c1] - m[r0][c1] * m[r1][c0];
    let det = m[0][0] * c(1, 1, 2, 2) - m[0][1] * c(1, 0, 2, 2) + m[0][2] * c(1, 0, 2, 1);
    if !det.is_finite() || det.abs() < 1e-12 {
        return None;
    }
    let adj = [
        [c(1, 1, 2, 2), -c(0, 1, 2, 2), c(0, 1, 1, 2)],
        [-c(1, 0, 2, 2), c(0, 0, 2, 2), -c(0, 0, 1, 2)],
        [c(1, 0, 2, 1), -c(0, 0, 2, 1), c(0, 0, 1, 1)],
    ];
    Some(adj.map(|row| row.map(|x| x / det)))
}

/// Eigenvector of the largest eigenvalue of a symmetric 4x4 matrix (cyclic Jacobi rotations).
fn largest_eigenvector4(mut a: [[f64; 4]; 4]) -> [f64; 4] {
    let mut v = [[0.0; 4]; 4];
    for (i, row) in v.iter_mut().enumerate() {
        row[i] = 1.0;
    }
    for _sweep in 0..64 {
        let off: f64 = (0..4)
            .flat_map(|p| ((p + 1)..4).map(move |q| (p, q)))
            .map(|(p, q)| a[p][q] * a[p][q])
            .sum();
        let scale: f64 = (0..4).map(|i| a[i][i] * a[i][i]).sum::<f64>() + off;
        if off <= 1e-30 * scale.max(1e-300) {
            break;
        }
        for p in 0..4 {
            for q in (p + 1)..4 {
                if a[p][q].abs() < 1e-300 {
                    continue;
                }
                let theta = (a[q][q] - a[p][p]) / (2.0 * a[p][q]);
                let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
                let t = if theta == 0.0 { 1.0 } else { t };
                let c = 1.0 / (t * t + 1.0).sqrt();
                let s = t * c;
                // A <- J^T A J with the rotation J in the (p, q) plane: columns, then rows.
                for row in a.iter_mut() {
                    let (akp, akq) = (row[p], row[q]);
                    row[p] = c * akp - s * akq;
                    row[q] = s * akp + c * akq;
                }
                let (rp, rq) = (a[p], a[q]);
                a[p] = std::array::from_fn(|k| c * rp[k] - s * rq[k]);
                a[q] = std::array::from_fn(|k| s * rp[k] + c * rq[k]);
                for row in v.iter_mut() {
                    let (vkp, vkq) = (row[p], row[q]);
                    row[p] = c * vkp - s * vkq;
                    row[q] = s * vkp + c * vkq;
                }
            }
        }
    }
    let mut best = 0;
    for i in 1..4 {
        if a[i][i] > a[best][best] {
            best = i;
        }
    }
    [v[0][best], v[1][best], v[2][best], v[3][best]]
}

/// The proper rigid motion that carries `from` onto `to` in the least-squares sense, and the RMSD
/// after it (same unit as the input). Solved with unit quaternions (Horn 1987), which gives the
/// Kabsch rotation restricted to det +1 without a reflection fix-up. `None` for empty, unequal or
/// non-finite input.
pub fn superpose(from: &[[f64; 3]], to: &[[f64; 3]]) -> Option<(RigidTransform, f64)> {
    let n = from.len();
    if n == 0 || to.len() != n || from.iter().chain(to).flatten().any(|x| !x.is_finite()) {
        return None;
    }
    let centroid = |pts: &[[f64; 3]]| {
        let mut c = [0.0; 3];
        for p in pts {
            for k in 0..3 {
                c[k] += p[k];
            }
        }
        c.map(|x| x / n as f64)
    };
    let (cf, ct) = (centroid(from), centroid(to));
    // Correlation S[a][b] = sum (from - cf)_a (to - ct)_b.
    let mut s = [[0.0; 3]; 3];
    for (p, q) in from.iter().zip(to) {
        let (x, y) = (sub(*p, cf), sub(*q, ct));
        for a in 0..3 {
            for b in 0..3 {
                s[a][b] += x[a] * y[b];
            }
        }
    }
    let [[sxx, sxy, sxz], [syx, syy, syz], [szx, szy, szz]] = s;
    let nmat = [
        [sxx + syy + szz, syz - szy, szx - sxz, sxy - syx],
        [syz - szy, sxx - syy - szz, sxy + syx, szx + sxz],
        [szx - sxz, sxy + syx, -sxx + syy - szz, syz + szy],
        [sxy - syx, szx + sxz, syz + szy, -sxx - syy + szz],
    ];
    let q = largest_eigenvector4(nmat);
    let norm = q.iter().map(|x| x * x).sum::<f64>().sqrt();
    if !norm.is_finite() || norm <= 0.0 {
        return None;
    }
    let [w, x, y, z] = q.map(|c| c / norm);
    let rotation = [
        [
            w * w + x * x - y * y - z * z,
            2.0 * (x * y - w * z),
            2.0 * (x * z + w * y),
        ],
        [
            2.0 * (x * y + w * z),
            w * w - x * x + y * y - z * z,
            2.0 * (y * z - w * x),
        ],
        [
            2.0 * (x * z - w * y),
            2.0 * (y * z + w * x),
            w * w - x * x - y * y + z * z,
        ],
    ];
    let mut t = RigidTransform {
        rotation,
        translation_bohr: [0.0; 3],
    };
    let rc = t.rotate(cf);
    t.translation_bohr = sub(ct, rc);
    let sum2: f64 = from
        .iter()
        .zip(to)
        .map(|(p, q)| {
            let d = sub(t.apply(*p), *q);
            dot(d, d)
        })
        .sum();
    Some((t, (sum2 / n as f64).sqrt()))
}

/// Index of the wavefunction that serves frame `frame`: its own for a series of one per frame, the
/// only one otherwise.
pub fn wavefunction_index(n_wavefunctions: usize, n_frames: usize, frame: usize) -> Option<usize> {
    if n_wavefunctions > 1 && n_wavefunctions == n_frames {
        (frame < n_wavefunctions).then_some(frame)
    } else if n_wavefunctions >= 1 {
        Some(0)
    } else {
        None
    }
}

/// The wavefunction of frame `frame`: by `wavefunction_frames` (the frame of each wavefunction)
/// when given, `None` at a frame that printed no orbitals; else as [`wavefunction_index`].
pub fn wavefunction_of_frame(
    wavefunction_frames: &[usize],
    n_wavefunctions: usize,
    n_frames: usize,
    frame: usize,
) -> Option<usize> {
    if wavefunction_frames.is_empty() {
        wavefunction_index(n_wavefunctions, n_frames, frame)
    } else {
        wavefunction_frames
            .iter()
            .position(|&f| f == frame)
            .filter(|&k| k < n_wavefunctions)
    }
}

/// Checks that `n_wavefunctions` can serve a trajectory of `n_frames`: one, or one per frame.
pub fn check_series(n_wavefunctions: usize, n_frames: usize) -> Result<(), QmRegionError> {
    match n_wavefunctions {
        0 => Err(QmRegionError::NoWavefunction),
        1 => Ok(()),
        n if n == n_frames => Ok(()),
        n => Err(QmRegionError::SeriesLength {
            wavefunctions: n,
            frames: n_frames,
        }),
    }
}

impl QmRegion {
    /// The region from a selection (atoms in index order), the identity when the system is exactly
    /// the wavefunction's atoms, or else the atoms found by geometry in `frame0`.
    pub fn resolve(
        selection: Option<&str>,
        structure: &Structure,
        frame0: Option<&Frame>,
        wf: &Wavefunction,
    ) -> Result<QmRegion, QmRegionError> {
        match selection {
            Some(text) => QmRegion::from_selection(text, structure, frame0, wf),
            None => QmRegion::find(structure, frame0, wf),
        }
    }

    /// The atoms a selection picks, in index order; their count and elements must be the
    /// wavefunction's.
    pub fn from_selection(
        text: &str,
        structure: &Structure,
        frame0: Option<&Frame>,
        wf: &Wavefunction,
    ) -> Result<QmRegion, QmRegionError> {
        let selection = Selection::parse(text)?;
        let atoms: Vec<usize> = selection
            .indices(structure, frame0)
            .into_iter()
            .map(|i| i as usize)
            .collect();
        if atoms.len() != wf.atoms.len() {
            return Err(QmRegionError::CountMismatch {
                selection: text.to_string(),
                selected: atoms.len(),
                wavefunction: wf.atoms.len(),
            });
        }
        for (i, (&a, qa)) in atoms.iter().zip(&wf.atoms).enumerate() {
            let e = structure.elements.get(a).copied();
            if e != Some(qa.element) {
                return Err(QmRegionError::ElementMismatch {
                    selection: text.to_string(),
                    wavefunction_atom: i,
                    wavefunction_element: qa.element.symbol().to_string(),
                    system_atom: a,
                    system_name: structure.names.get(a).map(|n| n.to_string()).unwrap_or_default(),
                    system_element: e.map_or("?", |e| e.symbol()).to_string(),
                });
            }
        }
        Ok(QmRegion {
            atoms,
            source: RegionSource::Selection(text.to_string()),
        })
    }

    /// The identity when the system has exactly the wavefunction's atoms (same count and elements);
    /// otherwise the one set of system atoms whose frame-0 geometry matches the wavefunction's
    /// (elements and all pair distances within [`MATCH_TOLERANCE_ANGSTROM`], minimum image in a
    /// periodic box), ordered by the best rigid fit. Fails when there is no match or several.
    pub fn find(structure: &Structure, frame0: Option<&Frame>, wf: &Wavefunction) -> Result<QmRegion, QmRegionError> {
        let (n, m) = (wf.atoms.len(), structure.len());
        let not_found = |why: String| QmRegionError::NotFound {
            system: m,
            wavefunction: n,
            why,
        };
        if n == 0 {
            return Err(not_found("the wavefunction has no atoms".into()));
        }
        if m == n && structure.elements.iter().zip(&wf.atoms).all(|(e, a)| *e == a.element) {
            return Ok(QmRegion {
                atoms: (0..n).collect(),
                source: RegionSource::SameAtoms,
            });
        }
        if n > m {
            return Err(not_found("the system is smaller".into()));
        }
        let Some(frame) = frame0.filter(|f| f.positions_angstrom.len() == m) else {
            return Err(not_found("the system has no coordinates to match".into()));
        };
        let pos: Vec<[f64; 3]> = frame.positions_angstrom.iter().map(|p| p.map(f64::from)).collect();
        let wf_pos: Vec<[f64; 3]> = wf.atoms.iter().map(|a| angstrom_from_bohr3(a.position_bohr)).collect();
        let images = Images::new(frame.cell);
        let disp = |a: [f64; 3], b: [f64; 3]| {
            let d = sub(a, b);
            images.as_ref().map_or(d, |im| im.nearest(d))
        };
        let dist = |a: [f64; 3], b: [f64; 3]| {
            let d = disp(a, b);
            dot(d, d).sqrt()
        };
        let wf_dist: Vec<Vec<f64>> = wf_pos
            .iter()
            .map(|p| wf_pos.iter().map(|q| dot(sub(*p, *q), sub(*p, *q)).sqrt()).collect())
            .collect();
        // Root: the wavefunction atom whose element is rarest in the system.
        let count_of = |e| structure.elements.iter().filter(|x| **x == e).count();
        let mut root = 0;
        let mut root_count = usize::MAX;
        for (i, a) in wf.atoms.iter().enumerate() {
            let c = count_of(a.element);
            let need = wf.atoms.iter().filter(|b| b.element == a.element).count();
            if c < need {
                return Err(not_found(format!(
                    "it has {c} {} atoms, the wavefunction {need}",
                    a.element.symbol()
                )));
            }
            if c < root_count {
                root_count = c;
                root = i;
            }
        }
        // Search order: each next atom the one nearest to those already placed (tight constraints early).
        let mut order = vec![root];
        let mut placed = vec![false; n];
        placed[root] = true;
        while order.len() < n {
            let mut next = None;
            let mut best = f64::INFINITY;
            for i in (0..n).filter(|&i| !placed[i]) {
                let d = order.iter().map(|&o| wf_dist[i][o]).fold(f64::INFINITY, f64::min);
                if d < best {
                    best = d;
                    next = Some(i);
                }
            }
            let Some(i) = next else { break };
            placed[i] = true;
            order.push(i);
        }
        let reach = wf_dist[root].iter().copied().fold(0.0, f64::max) + MATCH_TOLERANCE_ANGSTROM;
        let wanted: Vec<_> = wf.atoms.iter().map(|a| a.element).collect();
        let relevant = structure.elements.iter().filter(|e| wanted.contains(e)).count();
        if root_count.saturating_mul(relevant) > MAX_PAIR_CHECKS {
            return Err(not_found(format!(
                "too many places to try automatically: {root_count} {} atoms among {relevant} candidates",
                wanted[root].symbol()
            )));
        }
        let mut search = Search {
            order: &order,
            wanted: &wanted,
            wf_dist: &wf_dist,
            elements: &structure.elements,
            pos: &pos,
            dist: &dist,
            nodes: 0,
            solutions: Vec::new(),
        };
        for c0 in (0..m).filter(|&c| structure.elements[c] == wanted[root]) {
            let near: Vec<usize> = (0..m)
                .filter(|&j| j != c0 && wanted.contains(&structure.elements[j]) && dist(pos[c0], pos[j]) <= reach)
                .collect();
            let mut assigned = vec![c0];
            search.extend(&near, &mut assigned);
            if search.nodes > MAX_SEARCH_NODES || search.solutions.len() >= MAX_SOLUTIONS {
                break;
            }
        }
        if search.nodes > MAX_SEARCH_NODES {
            return Err(not_found(
                "the geometric search gave up: too many candidate atoms".into(),
            ));
        }
        // Fit every solution rigidly (region made whole around its root) and keep the best per atom set.
        let wf_bohr: Vec<[f64; 3]> = wf.atoms.iter().map(|a| a.position_bohr).collect();
        let mut fits: Vec<(Vec<usize>, f64)> = Vec::new();
        for assignment in &search.solutions {
            let mut mapping = vec![0usize; n];
            for (k, &w) in order.iter().enumerate() {
                mapping[w] = assignment[k];
            }
            let anchor = pos[mapping[root]];
            let whole: Vec<[f64; 3]> = mapping
                .iter()
                .map(|&a| {
                    let d = disp(pos[a], anchor);
                    bohr_from_angstrom3([anchor[0] + d[0], anchor[1] + d[1], anchor[2] + d[2]])
                })
                .collect();
            if let Some((_, rmsd)) = superpose(&wf_bohr, &whole) {
                fits.push((mapping, rmsd * ANGSTROM_PER_BOHR));
            }
        }
        fits.sort_by(|a, b| a.1.total_cmp(&b.1));
        let Some((best, best_rmsd)) = fits.first().cloned() else {
            return Err(not_found(format!(
                "no set of atoms has the wavefunction's elements and distances within {MATCH_TOLERANCE_ANGSTROM} A in frame 0"
            )));
        };
        let set_of = |v: &[usize]| {
            let mut s = v.to_vec();
            s.sort_unstable();
            s
        };
        let best_set = set_of(&best);
        let mut other_sets: Vec<Vec<usize>> = Vec::new();
        for (mapping, rmsd) in &fits {
            let s = set_of(mapping);
            if s != best_set && *rmsd <= best_rmsd + AMBIGUITY_MARGIN_ANGSTROM && !other_sets.contains(&s) {
                other_sets.push(s);
            }
        }
        if let Some(other) = other_sets.first() {
            return Err(QmRegionError::Ambiguous {
                wavefunction: n,
                places: other_sets.len() + 1,
                first: best_set
                    .first()
                    .copied()
                    .unwrap_or(0)
                    .min(other.first().copied().unwrap_or(0)),
                second: best_set
                    .first()
                    .copied()
                    .unwrap_or(0)
                    .max(other.first().copied().unwrap_or(0)),
            });
        }
        Ok(QmRegion {
            atoms: best,
            source: RegionSource::Matched,
        })
    }

    /// Places the region in `frame` (index `frame_index`, for messages): its atoms made whole by
    /// the minimum image against the first region atom when the frame has a box, converted to bohr,
    /// and the rigid motion from `wf`'s atoms onto them.
    pub fn fit(&self, wf: &Wavefunction, frame_index: usize, frame: &Frame) -> Result<RegionFit, QmRegionError> {
        let err = |message: String| QmRegionError::Frame {
            frame: frame_index,
            message,
        };
        if wf.atoms.len() != self.atoms.len() {
            return Err(err(format!(
                "the wavefunction has {} atoms, the QM region {}",
                wf.atoms.len(),
                self.atoms.len()
            )));
        }
        let mut region = Vec::with_capacity(self.atoms.len());
        for &a in &self.atoms {
            let p = frame.positions_angstrom.get(a).ok_or_else(|| {
                err(format!(
                    "the QM region's atom {} is past the frame's {} atoms",
                    a + 1,
                    frame.positions_angstrom.len()
                ))
            })?;
            if p.iter().any(|x| !x.is_finite()) {
                return Err(err(format!("the QM region's atom {} has no finite position", a + 1)));
            }
            region.push(p.map(f64::from));
        }
        if let (Some(images), Some(&anchor)) = (Images::new(frame.cell), region.first()) {
            for p in region.iter_mut() {
                let d = images.nearest(sub(*p, anchor));
                *p = [anchor[0] + d[0], anchor[1] + d[1], anchor[2] + d[2]];
            }
        }
        let positions_bohr: Vec<[f64; 3]> = region.into_iter().map(bohr_from_angstrom3).collect();
        let wf_bohr: Vec<[f64; 3]> = wf.atoms.iter().map(|a| a.position_bohr).collect();
        let (transform, rmsd_bohr) =
            superpose(&wf_bohr, &positions_bohr).ok_or_else(|| err("the QM region cannot be superposed".into()))?;
        Ok(RegionFit {
            transform,
            rmsd_bohr,
            positions_bohr,
        })
    }

    /// A short description for status lines ("17 atoms, resname THR").
    pub fn describe(&self) -> String {
        let how = match &self.source {
            RegionSource::Selection(t) => format!("\"{t}\""),
            RegionSource::SameAtoms => "all atoms".to_string(),
            RegionSource::Matched => "found by geometry".to_string(),
        };
        format!("{} atoms, {how}", self.atoms.len())
    }
}

/// The depth-first search of [`QmRegion::find`].
struct Search<'a, D: Fn([f64; 3], [f64; 3]) -> f64> {
    order: &'a [usize],
    wanted: &'a [crate::model::Element],
    wf_dist: &'a [Vec<f64>],
    elements: &'a [crate::model::Element],
    pos: &'a [[f64; 3]],
    dist: &'a D,
    nodes: usize,
    /// System atoms in search order, one per wavefunction atom of `order`.
    solutions: Vec<Vec<usize>>,
}

impl<D: Fn([f64; 3], [f64; 3]) -> f64> Search<'_, D> {
    fn extend(&mut self, near: &[usize], assigned: &mut Vec<usize>) {
        if self.nodes > MAX_SEARCH_NODES || self.solutions.len() >= MAX_SOLUTIONS {
            return;
        }
        let depth = assigned.len();
        let Some(&w) = self.order.get(depth) else {
            self.solutions.push(assigned.clone());
            return;
        };
        for &j in near {
            if self.elements.get(j) != self.wanted.get(w) || assigned.contains(&j) {
                continue;
            }
            self.nodes += 1;
            let fits = assigned.iter().zip(self.order).all(|(&a, &wo)| {
                let d = (self.dist)(self.pos[j], self.pos[a]);
                (d - self.wf_dist[w][wo]).abs() <= MATCH_TOLERANCE_ANGSTROM
            });
            if fits {
                assigned.push(j);
                self.extend(near, assigned);
                assigned.pop();
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::fresh::rotation_about;

    #[test]
    fn superpose_recovers_a_known_motion() {
        let pts = [
            [0.0, 0.0, 0.0],
            [1.5, 0.1, -0.3],
            [-0.4, 2.0, 0.7],
            [0.9, -1.1, 1.9],
            [2.2, 1.3, 0.4],
        ];
        for (axis, angle) in [
            ([1.0, 2.0, 3.0], 2.9),
            ([0.0, 0.0, 1.0], std::f64::consts::PI),
            ([1.0, -1.0, 0.2], 0.01),
        ] {
            let r = rotation_about(axis, angle);
            let t = [3.0, -7.5, 0.25];
            let known = RigidTransform {
                rotation: r,
                translation_bohr: t,
            };
            let moved: Vec<[f64; 3]> = pts.iter().map(|p| known.apply(*p)).collect();
            let (fit, rmsd) = superpose(&pts, &moved).unwrap();
            assert!(rmsd < 1e-10, "{rmsd}");
            for a in 0..3 {
                for b in 0..3 {
                    assert!(
                        (fit.rotation[a][b] - r[a][b]).abs() < 1e-10,
                        "{:?} vs {:?}",
                        fit.rotation,
                        r
                    );
                }
                assert!((fit.translation_bohr[a] - t[a]).abs() < 1e-9);
            }
            let p = [0.3, -0.2, 5.0];
            let back = fit.apply_inverse(fit.apply(p));
            assert!(back.iter().zip(p).all(|(a, b)| (a - b).abs() < 1e-12));
        }
    }

    #[test]
    fn superpose_never_reflects() {
        // A mirror image: the best proper rotation cannot reach RMSD 0.
        let pts = [[0.0, 0.0, 0.0], [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]];
        let mirrored: Vec<[f64; 3]> = pts.iter().map(|p| [p[0], p[1], -p[2]]).collect();
        let (fit, rmsd) = superpose(&pts, &mirrored).unwrap();
        let r = fit.rotation;
        let det = r[0][0] * (r[1][1] * r[2][2] - r[1][2] * r[2][1]) - r[0][1] * (r[1][0] * r[2][2] - r[1][2] * r[2][0])
            + r[0][2] * (r[1][0] * r[2][1] - r[1][1] * r[2][0]);
        assert!((det - 1.0).abs() < 1e-12, "{det}");
        assert!(rmsd > 0.1, "{rmsd}");
    }

    #[test]
    fn nearest_image_in_a_triclinic_cell() {
        let cell = UnitCell::new([10.0, 11.0, 12.0], [80.0, 95.0, 70.0]);
        let im = Images::new(Some(cell)).unwrap();
        let m = cell.matrix_angstrom();
        let d = [0.5, -0.3, 0.2];
        let shifted: [f64; 3] = std::array::from_fn(|c| d[c] + 2.0 * m[0][c] - m[1][c] + 3.0 * m[2][c]);
        let back = im.nearest(shifted);
        assert!(back.iter().zip(d).all(|(a, b)| (a - b).abs() < 1e-9), "{back:?}");
    }

    #[test]
    fn nearest_image_in_a_rectangular_cell() {
        let im = Images::new(Some(UnitCell::orthorhombic([10.0, 20.0, 30.0]))).unwrap();
        let back = im.nearest([9.5, -19.0, 44.0]);
        let want = [-0.5, 1.0, 14.0];
        assert!(back.iter().zip(want).all(|(a, b)| (a - b).abs() < 1e-12), "{back:?}");
    }

    #[test]
    fn series_lengths() {
        assert_eq!(wavefunction_index(5, 5, 3), Some(3));
        assert_eq!(wavefunction_index(1, 5, 3), Some(0));
        assert_eq!(wavefunction_index(0, 5, 3), None);
        // A log with orbitals at its first and last steps: those frames only.
        assert_eq!(wavefunction_of_frame(&[0, 6], 2, 7, 0), Some(0));
        assert_eq!(wavefunction_of_frame(&[0, 6], 2, 7, 6), Some(1));
        assert_eq!(wavefunction_of_frame(&[0, 6], 2, 7, 3), None);
        assert_eq!(wavefunction_of_frame(&[], 1, 7, 3), Some(0));
        assert!(check_series(3, 5).is_err());
        assert!(check_series(1, 5).is_ok());
        assert!(check_series(5, 5).is_ok());
    }
}
