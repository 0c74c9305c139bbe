//! Atom bins and the smoothed short-range sum `sum_{r < a} q (1/r - g_a(r))` of the cutoff and
//! multilevel methods.
//!
//! Owns [`AtomBins`]: charges sorted into bins of about [`bin_width_angstrom`] (axis-aligned
//! cubes over the charges' bounding box for open boundaries; parallelepipeds along the cell
//! vectors, charges wrapped into the cell, for periodic ones), stored compressed (`start` offsets
//! into charge arrays sorted by bin), so a bin holds any number of charges and never overflows; and
//! the list of bin offsets whose centre can come within `cutoff + diagonal / 2` of a point of its
//! bin (exact for orthogonal bins, a sphere-culled list; bounded for skewed ones). Built by
//! [`super::EspPlan`]; read by the CPU engine through [`short_range_slab`] and
//! [`AtomBins::short_range_at`]. Bin `(i, j, k)` is `start[i + nx * (j + ny * k)]..start[.. + 1]`.

use super::kernel::{Mat3, combine, cross, det, dot, norm, reciprocal};
use super::screening::ScreenedCutoff;
use crate::compute::ComputeError;
use crate::compute::MIN_DISTANCE_BOHR;
use crate::model::Lattice;
use crate::model::units::bohr_from_angstrom;
use std::ops::Range;

/// Widest target edge of a bin (Angstrom); see [`bin_width_angstrom`].
pub const BIN_WIDTH_ANGSTROM: f64 = 4.0;
/// Narrowest target edge of a bin (Angstrom): at liquid density a bin then still holds about 1.6
/// charges, so the per-bin overhead stays below the pair work.
pub const MIN_BIN_WIDTH_ANGSTROM: f64 = 2.5;

/// The target bin edge for splitting distance `cutoff_angstrom`: a third of it, between
/// [`MIN_BIN_WIDTH_ANGSTROM`] and [`BIN_WIDTH_ANGSTROM`] (4 A for a >= 12 A). A point visits the bins
/// whose centre lies within `a + diagonal / 2`, i.e. about `(1 + 0.87 w / a)^3` times the charges
/// of its cutoff sphere: 2.0x for a = 12 A, w = 4 A, and 2.1x rather than 3.1x for a = 8 A.
pub fn bin_width_angstrom(cutoff_angstrom: f64) -> f64 {
    (cutoff_angstrom / 3.0).clamp(MIN_BIN_WIDTH_ANGSTROM, BIN_WIDTH_ANGSTROM)
}
/// At most this many bins (wider bins for huge systems).
const MAX_BINS: usize = 1 << 21;
/// At most this many neighbour offsets (a cutoff absurdly larger than a bin is refused).
const MAX_NEIGHBOURS: usize = 1 << 21;

/// Charges binned for the short-range sum: see the module documentation.
#[derive(Clone, Debug)]
pub struct AtomBins {
    /// Corner of bin (0,0,0) (bohr).
    pub origin_bohr: [f64; 3],
    /// Bin edge vectors (rows, bohr).
    pub vectors_bohr: Mat3,
    /// Reciprocal of `vectors_bohr`: bin coordinate `t_k = w_k . (x - origin)`.
    pub inverse: Mat3,
    pub counts: [usize; 3],
    /// Periodic cell (rows, bohr) when periodic.
    pub cell_bohr: Option<Mat3>,
    cell_inverse: Mat3,
    /// Charges of bin `b` are `start[b]..start[b + 1]`.
    pub start: Vec<usize>,
    /// Charge coordinates (bohr, wrapped into the cell when periodic) and charges (e), sorted by
    /// bin, as separate arrays so the pair loop vectorises.
    pub x_bohr: Vec<f64>,
    pub y_bohr: Vec<f64>,
    pub z_bohr: Vec<f64>,
    pub charges_e: Vec<f64>,
    /// Bin offsets that may hold charges within the cutoff of any point of a bin.
    pub neighbours: Vec<[i64; 3]>,
    pub cutoff_bohr: f64,
    /// Longest diagonal of a bin (bohr).
    pub diagonal_bohr: f64,
    /// Bounding box of the (open) charges, for culling planes.
    bbox_bohr: [[f64; 3]; 2],
    /// A screened model's smoothed cutoff form ([`super::screening`]) in place of
    /// `1/r - g_a(r)`; `None` for vacuum.
    pub screen: Option<ScreenedCutoff>,
}

impl AtomBins {
    /// Bins for open boundaries, of edge [`bin_width_angstrom`] for the cutoff. Charges must be
    /// finite (checked by the caller).
    pub fn open(positions_bohr: &[[f64; 3]], charges_e: &[f64], cutoff_bohr: f64) -> Result<AtomBins, ComputeError> {
        let width = bin_width_angstrom(crate::model::units::angstrom_from_bohr(cutoff_bohr));
        AtomBins::open_with_width(positions_bohr, charges_e, cutoff_bohr, width)
    }

    /// As [`AtomBins::open`] with a target bin edge of `width_angstrom` (doubled while the bins
    /// would be too many).
    pub fn open_with_width(
        positions_bohr: &[[f64; 3]],
        charges_e: &[f64],
        cutoff_bohr: f64,
        width_angstrom: f64,
    ) -> Result<AtomBins, ComputeError> {
        let mut bins = AtomBins::open_frame_with_width(positions_bohr, cutoff_bohr, width_angstrom)?;
        bins.fill(positions_bohr, charges_e);
        Ok(bins)
    }

    /// The bins of [`AtomBins::open`] without their charges (`start` and the charge arrays empty):
    /// origin, edges, counts, neighbour offsets. [`AtomBins::filled`] sorts the charges in.
    pub fn open_frame(positions_bohr: &[[f64; 3]], cutoff_bohr: f64) -> Result<AtomBins, ComputeError> {
        let width = bin_width_angstrom(crate::model::units::angstrom_from_bohr(cutoff_bohr));
        AtomBins::open_frame_with_width(positions_bohr, cutoff_bohr, width)
    }

    fn open_frame_with_width(
        positions_bohr: &[[f64; 3]],
        cutoff_bohr: f64,
        width_angstrom: f64,
    ) -> Result<AtomBins, ComputeError> {
        if !(width_angstrom.is_finite() && width_angstrom > 0.0) {
            return Err(ComputeError::BadInput(format!(
                "bin width {width_angstrom} A: it must be a positive, finite distance"
            )));
        }
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for p in positions_bohr {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        if !lo.iter().chain(&hi).all(|v| v.is_finite()) {
            return Err(ComputeError::BadInput("no finite charge positions".to_string()));
        }
        let mut width = bohr_from_angstrom(width_angstrom);
        let counts = loop {
            let c: [usize; 3] = std::array::from_fn(|k| (((hi[k] - lo[k]) / width).floor() as usize).saturating_add(1));
            if c.iter()
                .try_fold(1usize, |acc, &n| acc.checked_mul(n))
                .is_some_and(|n| n <= MAX_BINS)
            {
                break c;
            }
            width *= 2.0;
        };
        let vectors = [[width, 0.0, 0.0], [0.0, width, 0.0], [0.0, 0.0, width]];
        let mut bins = AtomBins::empty(lo, vectors, counts, None, cutoff_bohr)?;
        bins.bbox_bohr = [lo, hi];
        Ok(bins)
    }

    /// Bins along the vectors of the periodic cell `cell_bohr` (rows); charges are wrapped into it.
    pub fn periodic(
        positions_bohr: &[[f64; 3]],
        charges_e: &[f64],
        cell_bohr: &Mat3,
        cutoff_bohr: f64,
    ) -> Result<AtomBins, ComputeError> {
        let mut bins = AtomBins::periodic_frame(cell_bohr, cutoff_bohr)?;
        bins.fill(positions_bohr, charges_e);
        Ok(bins)
    }

    /// The bins of [`AtomBins::periodic`] without their charges (see [`AtomBins::open_frame`]).
    pub fn periodic_frame(cell_bohr: &Mat3, cutoff_bohr: f64) -> Result<AtomBins, ComputeError> {
        let volume = det(cell_bohr).abs();
        let mut width = bohr_from_angstrom(bin_width_angstrom(crate::model::units::angstrom_from_bohr(cutoff_bohr)));
        let perp: [f64; 3] = std::array::from_fn(|k| {
            let area = norm(cross(cell_bohr[(k + 1) % 3], cell_bohr[(k + 2) % 3]));
            volume / area
        });
        if !perp.iter().all(|p| p.is_finite() && *p > 0.0) {
            return Err(ComputeError::BadInput("degenerate periodic cell".to_string()));
        }
        let counts = loop {
            let c: [usize; 3] = std::array::from_fn(|k| ((perp[k] / width).floor() as usize).max(1));
            if c.iter()
                .try_fold(1usize, |acc, &n| acc.checked_mul(n))
                .is_some_and(|n| n <= MAX_BINS)
            {
                break c;
            }
            width *= 2.0;
        };
        let vectors: Mat3 = std::array::from_fn(|k| cell_bohr[k].map(|x| x / counts[k] as f64));
        AtomBins::empty([0.0; 3], vectors, counts, Some(*cell_bohr), cutoff_bohr)
    }

    /// These bins (a frame from [`AtomBins::open_frame`] or [`AtomBins::periodic_frame`]) with
    /// `positions_bohr` and `charges_e` sorted in (the charges of [`AtomBins::open`] or
    /// [`AtomBins::periodic`] for the same input).
    pub fn filled(mut self, positions_bohr: &[[f64; 3]], charges_e: &[f64]) -> AtomBins {
        self.fill(positions_bohr, charges_e);
        self
    }

    /// Inverse of the periodic cell (rows: fractional coordinate `f_k = w_k . x`); zero for open
    /// bins.
    pub fn cell_inverse(&self) -> &Mat3 {
        &self.cell_inverse
    }

    fn empty(
        origin_bohr: [f64; 3],
        vectors_bohr: Mat3,
        counts: [usize; 3],
        cell_bohr: Option<Mat3>,
        cutoff_bohr: f64,
    ) -> Result<AtomBins, ComputeError> {
        let inverse = reciprocal(&vectors_bohr).ok_or_else(|| ComputeError::BadInput("degenerate bins".to_string()))?;
        let cell_inverse = match &cell_bohr {
            Some(c) => reciprocal(c).ok_or_else(|| ComputeError::BadInput("degenerate periodic cell".to_string()))?,
            None => [[0.0; 3]; 3],
        };
        // Longest bin diagonal: any two points of bins b and b + d are at least |M d| - diag apart.
        let mut diag: f64 = 0.0;
        for s in [[1.0, 1.0, 1.0], [1.0, 1.0, -1.0], [1.0, -1.0, 1.0], [-1.0, 1.0, 1.0]] {
            diag = diag.max(norm(combine(&vectors_bohr, s)));
        }
        let reach_f: [f64; 3] = std::array::from_fn(|k| ((cutoff_bohr + diag) * norm(inverse[k])).ceil() + 1.0);
        let box_size = reach_f.iter().map(|r| 2.0 * r + 1.0).product::<f64>();
        let reach = reach_f.map(|r| r as i64);
        if !(box_size.is_finite() && box_size <= MAX_NEIGHBOURS as f64) {
            return Err(ComputeError::BadInput(format!(
                "a cutoff of {cutoff_bohr} bohr reaches too many bins of {diag} bohr"
            )));
        }
        // A point of the home bin visits bin d when d's centre is within cutoff + diag / 2 of it
        // (the per-point test of `short_range_with` and the CUDA kernel), so the list holds the
        // offsets whose centre comes that close to the home bin. Orthogonal edges: the exact distance
        // from the centre to the home box (a sphere-culled list); otherwise the bound
        // |M d| - diag / 2 (the home box lies within diag / 2 of its centre).
        let edges = vectors_bohr.map(norm);
        let orthogonal = (0..3).all(|k| {
            let (u, v) = (vectors_bohr[k], vectors_bohr[(k + 1) % 3]);
            dot(u, v).abs() <= 1e-12 * edges[k] * edges[(k + 1) % 3]
        });
        let visit = cutoff_bohr + 0.5 * diag;
        let mut neighbours = Vec::new();
        for c in -reach[2]..=reach[2] {
            for b in -reach[1]..=reach[1] {
                for a in -reach[0]..=reach[0] {
                    let d = [a, b, c];
                    let near = if orthogonal {
                        let gap2: f64 = (0..3)
                            .map(|k| ((d[k].abs() as f64 - 0.5).max(0.0) * edges[k]).powi(2))
                            .sum();
                        gap2.sqrt()
                    } else {
                        norm(combine(&vectors_bohr, d.map(|x| x as f64))) - 0.5 * diag
                    };
                    if near <= visit * (1.0 + 1e-9) {
                        neighbours.push(d);
                    }
                }
            }
        }
        Ok(AtomBins {
            origin_bohr,
            vectors_bohr,
            inverse,
            counts,
            cell_bohr,
            cell_inverse,
            start: Vec::new(),
            x_bohr: Vec::new(),
            y_bohr: Vec::new(),
            z_bohr: Vec::new(),
            charges_e: Vec::new(),
            neighbours,
            cutoff_bohr,
            diagonal_bohr: diag,
            bbox_bohr: [[f64::NEG_INFINITY; 3], [f64::INFINITY; 3]],
            screen: None,
        })
    }

    /// The same bins summing `screen`'s smoothed kernel instead of the vacuum one.
    pub fn with_screen(mut self, screen: Option<ScreenedCutoff>) -> AtomBins {
        self.screen = screen;
        self
    }

    /// Number of bins.
    pub fn n_bins(&self) -> usize {
        self.counts.iter().product()
    }

    /// Wraps a point into the periodic cell (identity for open bins).
    #[inline]
    pub fn wrap(&self, p: [f64; 3]) -> [f64; 3] {
        match &self.cell_bohr {
            Some(cell) => {
                let f: [f64; 3] = std::array::from_fn(|k| {
                    let t = dot(self.cell_inverse[k], p);
                    let t = t - t.floor();
                    if t >= 1.0 { 0.0 } else { t }
                });
                combine(cell, f)
            }
            None => p,
        }
    }

    /// Bin coordinates (may lie outside the bins for open boundaries); `None` for absurd points.
    #[inline]
    fn bin_of(&self, p: [f64; 3]) -> Option<[i64; 3]> {
        let d = [
            p[0] - self.origin_bohr[0],
            p[1] - self.origin_bohr[1],
            p[2] - self.origin_bohr[2],
        ];
        let mut b = [0i64; 3];
        for ((bk, w), &count) in b.iter_mut().zip(&self.inverse).zip(&self.counts) {
            let t = dot(*w, d).floor();
            if !t.is_finite() || t.abs() > 1e9 {
                return None;
            }
            *bk = t as i64;
            if self.cell_bohr.is_some() {
                *bk = (*bk).clamp(0, count as i64 - 1);
            }
        }
        Some(b)
    }

    fn fill(&mut self, positions_bohr: &[[f64; 3]], charges_e: &[f64]) {
        let n_bins = self.n_bins();
        let mut keyed: Vec<(usize, [f64; 3], f64)> = Vec::with_capacity(positions_bohr.len());
        for (p, &q) in positions_bohr.iter().zip(charges_e) {
            if q == 0.0 {
                continue;
            }
            let p = self.wrap(*p);
            let Some(b) = self.bin_of(p) else { continue };
            let c = b.map(|x| x.max(0) as usize);
            let idx = c[0].min(self.counts[0] - 1)
                + self.counts[0] * (c[1].min(self.counts[1] - 1) + self.counts[1] * c[2].min(self.counts[2] - 1));
            keyed.push((idx, p, q));
        }
        // Stable counting sort by bin (deterministic order within a bin).
        let mut start = vec![0usize; n_bins + 1];
        for (idx, _, _) in &keyed {
            if let Some(s) = start.get_mut(idx + 1) {
                *s += 1;
            }
        }
        for i in 0..n_bins {
            start[i + 1] += start[i];
        }
        let mut fill = start.clone();
        let n = keyed.len();
        let (mut xs, mut ys, mut zs, mut qs) = (vec![0.0; n], vec![0.0; n], vec![0.0; n], vec![0.0; n]);
        for (idx, p, q) in keyed {
            if let Some(f) = fill.get_mut(idx)
                && *f < n
            {
                xs[*f] = p[0];
                ys[*f] = p[1];
                zs[*f] = p[2];
                qs[*f] = q;
                *f += 1;
            }
        }
        self.start = start;
        self.x_bohr = xs;
        self.y_bohr = ys;
        self.z_bohr = zs;
        self.charges_e = qs;
    }

    /// Distance from `p` to the open charges' bounding box (0 inside, 0 for periodic bins).
    fn bbox_distance(&self, lo: [f64; 3], hi: [f64; 3]) -> f64 {
        if self.cell_bohr.is_some() {
            return 0.0;
        }
        let [blo, bhi] = self.bbox_bohr;
        let mut d2 = 0.0;
        for k in 0..3 {
            let gap = (blo[k] - hi[k]).max(lo[k] - bhi[k]).max(0.0);
            d2 += gap * gap;
        }
        d2.sqrt()
    }

    /// The smoothed short-range potential `sum_{r < a} q (1/r - g_a(r))` at `p_bohr` (hartree/e),
    /// over all periodic images for periodic bins. Allocates a scratch; loops should call
    /// [`AtomBins::short_range_with`].
    pub fn short_range_at(&self, p_bohr: [f64; 3]) -> f64 {
        self.short_range_with(p_bohr, &mut ShortRangeScratch::default())
    }

    /// As [`AtomBins::short_range_at`], reusing `scratch`: the non-empty bins within reach of the
    /// point's bin (with their image shifts) are listed once per bin and reused while consecutive
    /// points stay in the same bin, and each is culled by the distance from the point to its centre.
    pub fn short_range_with(&self, p_bohr: [f64; 3], scratch: &mut ShortRangeScratch) -> f64 {
        let a = self.cutoff_bohr;
        let p = self.wrap(p_bohr);
        let Some(b) = self.bin_of(p) else { return 0.0 };
        if scratch.bin != Some(b) {
            self.candidates(b, &mut scratch.candidates);
            scratch.bin = Some(b);
        }
        // A bin can hold a charge within the cutoff only if its centre is within cutoff + half diagonal.
        let reach = a + 0.5 * self.diagonal_bohr;
        let reach2 = reach * reach;
        let mut sum = 0.0;
        for c in &scratch.candidates {
            let d = [p[0] - c.centre[0], p[1] - c.centre[1], p[2] - c.centre[2]];
            if d[0] * d[0] + d[1] * d[1] + d[2] * d[2] > reach2 {
                continue;
            }
            let rel = [p[0] - c.shift[0], p[1] - c.shift[1], p[2] - c.shift[2]];
            if let (Some(xs), Some(ys), Some(zs), Some(qs)) = (
                self.x_bohr.get(c.range.clone()),
                self.y_bohr.get(c.range.clone()),
                self.z_bohr.get(c.range.clone()),
                self.charges_e.get(c.range.clone()),
            ) {
                sum += match &self.screen {
                    None => bin_sum(rel, xs, ys, zs, qs, a),
                    Some(s) => screened_bin_sum(rel, xs, ys, zs, qs, s),
                };
            }
        }
        sum
    }

    /// The non-empty bins (with image shift and centre) that can hold charges within the cutoff of
    /// any point of bin `b`, into `out`.
    fn candidates(&self, b: [i64; 3], out: &mut Vec<Candidate>) {
        out.clear();
        let [nx, ny, nz] = self.counts.map(|c| c as i64);
        for d in &self.neighbours {
            let c = [b[0] + d[0], b[1] + d[1], b[2] + d[2]];
            let (cw, shift) = match &self.cell_bohr {
                Some(cell) => {
                    let cw = [c[0].rem_euclid(nx), c[1].rem_euclid(ny), c[2].rem_euclid(nz)];
                    let s = [c[0].div_euclid(nx), c[1].div_euclid(ny), c[2].div_euclid(nz)];
                    (cw, combine(cell, s.map(|x| x as f64)))
                }
                None => {
                    if c[0] < 0 || c[1] < 0 || c[2] < 0 || c[0] >= nx || c[1] >= ny || c[2] >= nz {
                        continue;
                    }
                    (c, [0.0; 3])
                }
            };
            let idx = (cw[0] + nx * (cw[1] + ny * cw[2])) as usize;
            let (Some(&s0), Some(&s1)) = (self.start.get(idx), self.start.get(idx + 1)) else {
                continue;
            };
            if s1 <= s0 {
                continue;
            }
            let t = [c[0] as f64 + 0.5, c[1] as f64 + 0.5, c[2] as f64 + 0.5];
            let local = combine(&self.vectors_bohr, t);
            let centre = std::array::from_fn(|i| self.origin_bohr[i] + local[i]);
            out.push(Candidate {
                centre,
                shift,
                range: s0..s1,
            });
        }
    }
}

/// One bin within reach of a point's bin: its centre (unwrapped, bohr), the image shift to
/// subtract from the point, and its charges.
#[derive(Clone, Debug)]
struct Candidate {
    centre: [f64; 3],
    shift: [f64; 3],
    range: Range<usize>,
}

/// Reusable per-thread state of the short-range sum (the candidate bins of the last point's bin).
#[derive(Clone, Debug, Default)]
pub struct ShortRangeScratch {
    bin: Option<[i64; 3]>,
    candidates: Vec<Candidate>,
}

/// Runs the AVX2 + FMA build of the loop where the CPU has them.
#[inline]
fn bin_sum(p: [f64; 3], xs: &[f64], ys: &[f64], zs: &[f64], qs: &[f64], a: f64) -> f64 {
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx2") && std::arch::is_x86_feature_detected!("fma") {
        // SAFETY: the CPU supports AVX2 and FMA, checked just above.
        return unsafe { bin_sum_avx2(p, xs, ys, zs, qs, a) };
    }
    bin_sum_any(p, xs, ys, zs, qs, a)
}

#[cfg(target_arch = "x86_64")]
#[target_feature(enable = "avx2,fma")]
unsafe fn bin_sum_avx2(p: [f64; 3], xs: &[f64], ys: &[f64], zs: &[f64], qs: &[f64], a: f64) -> f64 {
    bin_sum_any(p, xs, ys, zs, qs, a)
}

#[inline(always)]
fn bin_sum_any(p: [f64; 3], xs: &[f64], ys: &[f64], zs: &[f64], qs: &[f64], a: f64) -> f64 {
    let a2 = a * a;
    let inv_a = 1.0 / a;
    let inv_a2 = inv_a * inv_a;
    let min2 = MIN_DISTANCE_BOHR * MIN_DISTANCE_BOHR;
    let term = |x: f64, y: f64, z: f64, q: f64| {
        let dx = p[0] - x;
        let dy = p[1] - y;
        let dz = p[2] - z;
        let r2 = (dx * dx + dy * dy + dz * dz).max(min2);
        let inv_r = 1.0 / r2.sqrt();
        // g_a(r) = (15/8 - 5/4 s + 3/8 s^2) / a with s = r^2 / a^2, for r < a.
        let s = r2 * inv_a2;
        let g = (1.875 + s * (-1.25 + 0.375 * s)) * inv_a;
        if r2 < a2 { q * (inv_r - g) } else { 0.0 }
    };
    // Four independent partial sums, so the loop runs in SIMD lanes.
    const L: usize = 4;
    let mut lanes = [0.0f64; L];
    let n = xs.len().min(ys.len()).min(zs.len()).min(qs.len());
    let (xs, ys, zs, qs) = (&xs[..n], &ys[..n], &zs[..n], &qs[..n]);
    let mut cx = xs.chunks_exact(L);
    let mut cy = ys.chunks_exact(L);
    let mut cz = zs.chunks_exact(L);
    let mut cq = qs.chunks_exact(L);
    for (((x, y), z), q) in (&mut cx).zip(&mut cy).zip(&mut cz).zip(&mut cq) {
        for (l, lane) in lanes.iter_mut().enumerate() {
            *lane += term(x[l], y[l], z[l], q[l]);
        }
    }
    let mut sum = (lanes[0] + lanes[1]) + (lanes[2] + lanes[3]);
    for (((&x, &y), &z), &q) in cx
        .remainder()
        .iter()
        .zip(cy.remainder())
        .zip(cz.remainder())
        .zip(cq.remainder())
    {
        sum += term(x, y, z, q);
    }
    sum
}

/// The smoothed screened sum of one bin's charges at `p` (f64, scalar: the reference form).
fn screened_bin_sum(p: [f64; 3], xs: &[f64], ys: &[f64], zs: &[f64], qs: &[f64], s: &ScreenedCutoff) -> f64 {
    let min2 = MIN_DISTANCE_BOHR * MIN_DISTANCE_BOHR;
    xs.iter()
        .zip(ys)
        .zip(zs)
        .zip(qs)
        .map(|(((&x, &y), &z), &q)| {
            let (dx, dy, dz) = (p[0] - x, p[1] - y, p[2] - z);
            q * s.term_r2((dx * dx + dy * dy + dz * dz).max(min2))
        })
        .sum()
}

/// Short-range sum of one slab: `out` (x fastest, `dims[0] * dims[1] * z_range.len()` values) is
/// overwritten with [`AtomBins::short_range_at`] at every lattice point of `z_range`. Planes farther
/// than the cutoff from every (open) charge are filled with zeros without visiting any bin.
pub fn short_range_slab(bins: &AtomBins, lattice: &Lattice, z_range: Range<usize>, out: &mut [f64]) {
    let [nx, ny, _] = lattice.dims;
    let plane = nx * ny;
    if plane == 0 {
        return;
    }
    let mut scratch = ShortRangeScratch::default();
    for (k, dst) in z_range.zip(out.chunks_mut(plane)) {
        let corners = [
            lattice.point_bohr(0, 0, k),
            lattice.point_bohr(nx - 1, 0, k),
            lattice.point_bohr(0, ny - 1, k),
            lattice.point_bohr(nx - 1, ny - 1, k),
        ];
        let lo: [f64; 3] = std::array::from_fn(|a| corners.iter().map(|c| c[a]).fold(f64::INFINITY, f64::min));
        let hi: [f64; 3] = std::array::from_fn(|a| corners.iter().map(|c| c[a]).fold(f64::NEG_INFINITY, f64::max));
        if bins.bbox_distance(lo, hi) >= bins.cutoff_bohr {
            dst.iter_mut().for_each(|v| *v = 0.0);
            continue;
        }
        for (j, row) in dst.chunks_mut(nx).enumerate() {
            for (i, o) in row.iter_mut().enumerate() {
                *o = bins.short_range_with(lattice.point_bohr(i, j, k), &mut scratch);
            }
        }
    }
}
