//! Radial distribution functions g(r) between two atom selections, on the CPU.
//!
//! Normalisation follows MDAnalysis `InterRDF` (norm = "rdf"): for every frame all pairs (a, b)
//! with a in selection 1 and b in selection 2 are histogrammed by distance over (0, r_max];
//! g(r) = counts / (frames * shell_volume * N_pairs / mean_volume), where N_pairs = n1 * n2 minus
//! the pairs removed by exclusions. Periodic boxes use the minimum image, for orthorhombic and
//! triclinic cells alike: selection 2 is wrapped into the cell, the periodic images within r_max of
//! the cell are added, and a plain cell list finds pairs; this is exact as long as r_max is below half
//! the cell's smallest width (otherwise an error says so). Frames are independent, and partial
//! results combine by adding histograms ([`RdfAccumulator::merge`]), so a frame range is the unit of
//! work for batch and distributed runs. Called by the `rdf` command and the viewer's RDF panel.

use crate::model::{Frame, UnitCell};
use rayon::prelude::*;

pub use crate::model::rdf::RdfSettings;

/// Words of [`RdfError::RangeExceedsHalfBox`]'s message, by which a caller that streams frames
/// recognises it (and looks for the narrowest box of the frames asked for).
pub const HALF_BOX_WORDS: &str = "larger than half the periodic box's smallest width";

/// Half the smallest width of `cell` (the largest r_max its minimum image allows), Angstrom.
pub fn half_min_width(cell: &crate::model::UnitCell) -> Option<f64> {
    Some(0.5 * Periodic::new(cell).ok()?.min_width)
}

/// Why an RDF cannot be computed.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RdfError {
    #[error("r_max must be positive and finite, got {0}")]
    BadRange(f64),
    #[error("the number of bins must be between 1 and 10000000, got {0}")]
    BadBins(usize),
    #[error("selection {0} is empty: nothing to histogram")]
    EmptySelection(u8),
    #[error(
        "r_max = {r_max:.3} A is larger than half the periodic box's smallest width at frame {frame} ({half:.3} A): \
         under the minimum image convention distances beyond that are ambiguous; give an r_max of {half:.2} A or less"
    )]
    RangeExceedsHalfBox { r_max: f64, half: f64, frame: usize },
    #[error("the periodic box of frame {0} is degenerate (zero or negative volume)")]
    BadBox(usize),
    #[error("frame {frame} has non-finite coordinates for atom {atom}")]
    NotFinite { frame: usize, atom: usize },
    #[error("frame {frame} has {found} atoms, the selection indices need {needed}")]
    AtomCount { frame: usize, found: usize, needed: usize },
}

/// Histogram and normalisation terms accumulated over frames.
#[derive(Clone, Debug, PartialEq)]
pub struct RdfAccumulator {
    pub settings: RdfSettings,
    /// Pair counts per bin (64-bit, so billions of pairs never overflow).
    pub counts: Vec<u64>,
    pub frames: u64,
    /// Sum over frames of the box volume (Angstrom^3); 0 for non-periodic frames.
    pub volume_sum_angstrom3: f64,
    /// Sum over frames of the number of pairs considered (n1 * n2 - excluded pairs).
    pub pair_sum: f64,
    /// Sum over frames of the size of selection 1 (for cumulative counts).
    pub n1_sum: f64,
}

/// The finished result.
#[derive(Clone, Debug, PartialEq)]
pub struct Rdf {
    /// Bin centres in Angstrom.
    pub r_angstrom: Vec<f64>,
    pub g: Vec<f64>,
    /// Average number of selection-2 atoms within r of a selection-1 atom (cumulative).
    pub n_cumulative: Vec<f64>,
}

impl RdfSettings {
    pub fn validate(&self) -> Result<(), RdfError> {
        if !(self.r_max_angstrom.is_finite() && self.r_max_angstrom > 0.0) {
            return Err(RdfError::BadRange(self.r_max_angstrom));
        }
        if self.bins == 0 || self.bins > 10_000_000 {
            return Err(RdfError::BadBins(self.bins));
        }
        Ok(())
    }
}

impl RdfAccumulator {
    pub fn new(settings: RdfSettings) -> Result<RdfAccumulator, RdfError> {
        settings.validate()?;
        Ok(RdfAccumulator {
            counts: vec![0; settings.bins],
            settings,
            frames: 0,
            volume_sum_angstrom3: 0.0,
            pair_sum: 0.0,
            n1_sum: 0.0,
        })
    }

    /// Adds another accumulator's frames (same settings) to this one.
    pub fn merge(&mut self, other: &RdfAccumulator) {
        for (a, b) in self.counts.iter_mut().zip(&other.counts) {
            *a += b;
        }
        self.frames += other.frames;
        self.volume_sum_angstrom3 += other.volume_sum_angstrom3;
        self.pair_sum += other.pair_sum;
        self.n1_sum += other.n1_sum;
    }

    /// Checks one frame against the settings and selections (non-empty selections, atom indices in
    /// range, finite coordinates, a valid box with r_max at most half its smallest width) and returns
    /// its periodic cell. Every engine calls this before histogramming a frame.
    pub fn check_frame(
        &self,
        frame_index: usize,
        frame: &Frame,
        sel1: &[u32],
        sel2: &[u32],
        groups: Option<&[u32]>,
    ) -> Result<Option<UnitCell>, RdfError> {
        if sel1.is_empty() {
            return Err(RdfError::EmptySelection(1));
        }
        if sel2.is_empty() {
            return Err(RdfError::EmptySelection(2));
        }
        let pos = &frame.positions_angstrom;
        let needed = sel1.iter().chain(sel2).map(|&i| i as usize + 1).max().unwrap_or(0);
        if pos.len() < needed || groups.is_some_and(|g| g.len() < needed) {
            return Err(RdfError::AtomCount {
                frame: frame_index,
                found: pos.len(),
                needed,
            });
        }
        for &i in sel1.iter().chain(sel2) {
            if !pos[i as usize].iter().all(|x| x.is_finite()) {
                return Err(RdfError::NotFinite {
                    frame: frame_index,
                    atom: i as usize,
                });
            }
        }
        let cell = match frame.cell {
            Some(c) if c.is_valid() => Some(c),
            Some(_) => return Err(RdfError::BadBox(frame_index)),
            None => None,
        };
        if let Some(c) = &cell {
            let half = 0.5 * Periodic::new(c)?.min_width;
            let r_max = self.settings.r_max_angstrom;
            if r_max > half {
                return Err(RdfError::RangeExceedsHalfBox {
                    r_max,
                    half,
                    frame: frame_index,
                });
            }
        }
        Ok(cell)
    }

    /// Adds the pair counts of one checked frame (from any engine) with its normalisation terms.
    pub fn add_counts(
        &mut self,
        counts: &[u64],
        cell: Option<UnitCell>,
        sel1: &[u32],
        sel2: &[u32],
        groups: Option<&[u32]>,
    ) {
        for (c, n) in self.counts.iter_mut().zip(counts) {
            *c += n;
        }
        let mut pairs = sel1.len() as f64 * sel2.len() as f64;
        if self.settings.exclude_same_group
            && let Some(g) = groups
        {
            pairs -= excluded_pairs(sel1, sel2, g);
        }
        self.pair_sum += pairs;
        self.n1_sum += sel1.len() as f64;
        self.frames += 1;
        self.volume_sum_angstrom3 += cell.map_or(0.0, |c| c.volume_angstrom3());
    }

    /// Histograms one frame on the CPU. `sel1`/`sel2` are atom indices; `groups` (one id per atom)
    /// is used when `exclude_same_group` is set.
    pub fn add_frame(
        &mut self,
        frame_index: usize,
        frame: &Frame,
        sel1: &[u32],
        sel2: &[u32],
        groups: Option<&[u32]>,
    ) -> Result<(), RdfError> {
        let cell = self.check_frame(frame_index, frame, sel1, sel2, groups)?;
        let counts = self.frame_counts_cpu(frame, cell, sel1, sel2, groups)?;
        self.add_counts(&counts, cell, sel1, sel2, groups);
        Ok(())
    }

    /// The CPU engine's pair counts of one checked frame (cell list, per-thread histograms).
    pub fn frame_counts_cpu(
        &self,
        frame: &Frame,
        cell: Option<UnitCell>,
        sel1: &[u32],
        sel2: &[u32],
        groups: Option<&[u32]>,
    ) -> Result<Vec<u64>, RdfError> {
        let pos = &frame.positions_angstrom;
        let s = &self.settings;
        let r_max = s.r_max_angstrom;
        let periodic = cell.map(|c| Periodic::new(&c)).transpose()?;
        let exclude = if s.exclude_same_group { groups } else { None };

        // Points of selection 2 (wrapped, plus periodic images near the cell), with their atom index.
        let mut b_points: Vec<([f64; 3], u32)> = Vec::with_capacity(sel2.len());
        match &periodic {
            Some(p) => {
                for &j in sel2 {
                    let f = p.fractional(pos[j as usize].map(f64::from));
                    let f = f.map(|x| x - x.floor());
                    let margin = p.margins(r_max);
                    for sa in -1i32..=1 {
                        for sb in -1i32..=1 {
                            for sc in -1i32..=1 {
                                let g = [f[0] + f64::from(sa), f[1] + f64::from(sb), f[2] + f64::from(sc)];
                                if (0..3).all(|k| g[k] >= -margin[k] && g[k] < 1.0 + margin[k]) {
                                    b_points.push((p.cartesian(g), j));
                                }
                            }
                        }
                    }
                }
            }
            None => b_points.extend(sel2.iter().map(|&j| (pos[j as usize].map(f64::from), j))),
        }
        let a_points: Vec<([f64; 3], u32)> = sel1
            .iter()
            .map(|&i| {
                let p = pos[i as usize].map(f64::from);
                let p = match &periodic {
                    Some(per) => per.cartesian(per.fractional(p).map(|x| x - x.floor())),
                    None => p,
                };
                (p, i)
            })
            .collect();

        let grid = CellGrid::new(&b_points, r_max);
        let bins = s.bins;
        let inv_dr = bins as f64 / r_max;
        let r2max = r_max * r_max;
        let counts = a_points
            .par_chunks(256)
            .fold(
                || vec![0u64; bins],
                |mut hist, chunk| {
                    for &(p, i) in chunk {
                        grid.for_each_near(p, |q, j| {
                            let d2 = (p[0] - q[0]).powi(2) + (p[1] - q[1]).powi(2) + (p[2] - q[2]).powi(2);
                            if d2 <= r2max {
                                if let Some(g) = exclude
                                    && g[i as usize] == g[j as usize]
                                {
                                    return;
                                }
                                let bin = (d2.sqrt() * inv_dr) as usize;
                                // r == r_max falls in the last bin, as numpy.histogram's closed last edge.
                                let bin = bin.min(bins - 1);
                                hist[bin] += 1;
                            }
                        });
                    }
                    hist
                },
            )
            .reduce(
                || vec![0u64; bins],
                |mut a, b| {
                    for (x, y) in a.iter_mut().zip(b) {
                        *x += y;
                    }
                    a
                },
            );
        Ok(counts)
    }

    /// Normalises the histogram. Without any periodic frame the volume is undefined; then g(r) is
    /// normalised by the pair count and shell volume only (a density of one pair per cubic Angstrom),
    /// and `n_cumulative` is still exact.
    pub fn finish(&self) -> Rdf {
        let s = &self.settings;
        let dr = s.r_max_angstrom / s.bins as f64;
        let frames = self.frames.max(1) as f64;
        let mean_volume = self.volume_sum_angstrom3 / frames;
        let mean_pairs = self.pair_sum / frames;
        let density = if mean_volume > 0.0 {
            mean_pairs / mean_volume
        } else {
            mean_pairs
        };
        let mut r = Vec::with_capacity(s.bins);
        let mut g = Vec::with_capacity(s.bins);
        let mut n_cum = Vec::with_capacity(s.bins);
        let mut cum = 0u64;
        for (k, &c) in self.counts.iter().enumerate() {
            let r0 = k as f64 * dr;
            let r1 = r0 + dr;
            let shell = 4.0 / 3.0 * std::f64::consts::PI * (r1.powi(3) - r0.powi(3));
            r.push(r0 + 0.5 * dr);
            g.push(if density > 0.0 {
                c as f64 / (frames * shell * density)
            } else {
                0.0
            });
            cum += c;
            n_cum.push(if self.n1_sum > 0.0 {
                cum as f64 / self.n1_sum
            } else {
                0.0
            });
        }
        Rdf {
            r_angstrom: r,
            g,
            n_cumulative: n_cum,
        }
    }
}

/// Number of (a, b) pairs with a in sel1, b in sel2 and the same group.
fn excluded_pairs(sel1: &[u32], sel2: &[u32], groups: &[u32]) -> f64 {
    let mut by_group: std::collections::BTreeMap<u32, u64> = std::collections::BTreeMap::new();
    for &j in sel2 {
        *by_group.entry(groups[j as usize]).or_default() += 1;
    }
    sel1.iter()
        .map(|&i| by_group.get(&groups[i as usize]).copied().unwrap_or(0) as f64)
        .sum()
}

/// A periodic cell with fractional/Cartesian conversion (lower-triangular box matrix).
struct Periodic {
    m: [[f64; 3]; 3],
    /// Perpendicular widths along a, b, c (distance between opposite faces), Angstrom.
    widths: [f64; 3],
    min_width: f64,
}

impl Periodic {
    fn new(cell: &UnitCell) -> Result<Periodic, RdfError> {
        let m = cell.matrix_angstrom();
        let cross = |u: [f64; 3], v: [f64; 3]| {
            [
                u[1] * v[2] - u[2] * v[1],
                u[2] * v[0] - u[0] * v[2],
                u[0] * v[1] - u[1] * v[0],
            ]
        };
        let norm = |u: [f64; 3]| (u[0] * u[0] + u[1] * u[1] + u[2] * u[2]).sqrt();
        let vol = cell.volume_angstrom3();
        let widths = [
            vol / norm(cross(m[1], m[2])),
            vol / norm(cross(m[2], m[0])),
            vol / norm(cross(m[0], m[1])),
        ];
        if vol.is_nan() || vol <= 0.0 || widths.iter().any(|w| !w.is_finite() || *w <= 0.0) {
            return Err(RdfError::BadBox(0));
        }
        Ok(Periodic {
            m,
            widths,
            min_width: widths.iter().copied().fold(f64::INFINITY, f64::min),
        })
    }

    fn fractional(&self, r: [f64; 3]) -> [f64; 3] {
        let m = &self.m;
        let sc = r[2] / m[2][2];
        let sb = (r[1] - sc * m[2][1]) / m[1][1];
        let sa = (r[0] - sb * m[1][0] - sc * m[2][0]) / m[0][0];
        [sa, sb, sc]
    }

    fn cartesian(&self, s: [f64; 3]) -> [f64; 3] {
        let m = &self.m;
        [
            s[0] * m[0][0] + s[1] * m[1][0] + s[2] * m[2][0],
            s[1] * m[1][1] + s[2] * m[2][1],
            s[2] * m[2][2],
        ]
    }

    /// Fractional margins that contain every point within `r` of the cell.
    fn margins(&self, r: f64) -> [f64; 3] {
        self.widths.map(|w| r / w)
    }
}

/// A uniform Cartesian cell list over points, searched within one cell size.
struct CellGrid<'a> {
    points: &'a [([f64; 3], u32)],
    origin: [f64; 3],
    size: f64,
    dims: [usize; 3],
    /// Start of each cell's run in `order` (prefix sums; length = cells + 1).
    starts: Vec<u32>,
    order: Vec<u32>,
}

impl<'a> CellGrid<'a> {
    fn new(points: &'a [([f64; 3], u32)], cutoff: f64) -> CellGrid<'a> {
        let mut lo = [f64::INFINITY; 3];
        let mut hi = [f64::NEG_INFINITY; 3];
        for (p, _) in points {
            for k in 0..3 {
                lo[k] = lo[k].min(p[k]);
                hi[k] = hi[k].max(p[k]);
            }
        }
        if points.is_empty() {
            lo = [0.0; 3];
            hi = [0.0; 3];
        }
        // Keep the cell count bounded (at most ~2^21 cells) by growing the cell size if needed.
        let mut size = cutoff;
        let dims_for = |size: f64| [0, 1, 2].map(|k| (((hi[k] - lo[k]) / size).floor() as usize + 1).max(1));
        let mut dims = dims_for(size);
        while dims.iter().product::<usize>() > (1 << 21) {
            size *= 1.5;
            dims = dims_for(size);
        }
        let n_cells = dims.iter().product::<usize>();
        let cell_of = |p: [f64; 3]| -> usize {
            let c = [0, 1, 2].map(|k| (((p[k] - lo[k]) / size) as usize).min(dims[k] - 1));
            c[0] + dims[0] * (c[1] + dims[1] * c[2])
        };
        let mut counts = vec![0u32; n_cells + 1];
        for (p, _) in points {
            counts[cell_of(*p) + 1] += 1;
        }
        for k in 1..counts.len() {
            counts[k] += counts[k - 1];
        }
        let mut fill = counts.clone();
        let mut order = vec![0u32; points.len()];
        for (idx, (p, _)) in points.iter().enumerate() {
            let c = cell_of(*p);
            order[fill[c] as usize] = idx as u32;
            fill[c] += 1;
        }
        CellGrid {
            points,
            origin: lo,
            size,
            dims,
            starts: counts,
            order,
        }
    }

    /// Calls `f(point, atom)` for every point in the 27 cells around `p`.
    #[inline]
    fn for_each_near(&self, p: [f64; 3], mut f: impl FnMut([f64; 3], u32)) {
        let c = [0, 1, 2].map(|k| ((p[k] - self.origin[k]) / self.size).floor() as i64);
        for dz in -1..=1i64 {
            let z = c[2] + dz;
            if z < 0 || z >= self.dims[2] as i64 {
                continue;
            }
            for dy in -1..=1i64 {
                let y = c[1] + dy;
                if y < 0 || y >= self.dims[1] as i64 {
                    continue;
                }
                let x0 = (c[0] - 1).max(0);
                let x1 = (c[0] + 1).min(self.dims[0] as i64 - 1);
                if x0 > x1 {
                    continue;
                }
                let row = self.dims[0] * (y as usize + self.dims[1] * z as usize);
                let s = self.starts[row + x0 as usize] as usize;
                let e = self.starts[row + x1 as usize + 1] as usize;
                for &idx in &self.order[s..e] {
                    let (q, j) = self.points[idx as usize];
                    f(q, j);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lcg(seed: &mut u64) -> f64 {
        *seed = seed.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
        (*seed >> 11) as f64 / (1u64 << 53) as f64
    }

    /// Brute force over all pairs and all images within +-3 cells (positions span up to three cells):
    /// the definition.
    fn brute(frame: &Frame, sel1: &[u32], sel2: &[u32], s: &RdfSettings) -> Vec<u64> {
        let cell = frame.cell.unwrap();
        let m = cell.matrix_angstrom();
        let mut h = vec![0u64; s.bins];
        for &i in sel1 {
            for &j in sel2 {
                let p = frame.positions_angstrom[i as usize].map(f64::from);
                let q = frame.positions_angstrom[j as usize].map(f64::from);
                let mut best = f64::INFINITY;
                for a in -3..=3 {
                    for b in -3..=3 {
                        for c in -3..=3 {
                            let t = [0, 1, 2]
                                .map(|k| f64::from(a) * m[0][k] + f64::from(b) * m[1][k] + f64::from(c) * m[2][k]);
                            let d2: f64 = (0..3).map(|k| (p[k] - q[k] + t[k]).powi(2)).sum();
                            best = best.min(d2);
                        }
                    }
                }
                let d = best.sqrt();
                if d <= s.r_max_angstrom {
                    let bin = ((d / s.r_max_angstrom * s.bins as f64) as usize).min(s.bins - 1);
                    h[bin] += 1;
                }
            }
        }
        h
    }

    #[test]
    fn cell_list_equals_brute_force_minimum_image_triclinic() {
        let mut seed = 7u64;
        for (lengths, angles) in [
            ([21.0, 23.0, 25.0], [90.0, 90.0, 90.0]),
            ([24.0, 24.0, 24.0], [60.0, 60.0, 90.0]),
            ([22.0, 25.0, 27.0], [75.0, 80.0, 100.0]),
        ] {
            let cell = UnitCell::new(lengths, angles);
            let m = cell.matrix_angstrom();
            let n = 160;
            let positions: Vec<[f32; 3]> = (0..n)
                .map(|_| {
                    // Some atoms deliberately outside the primary cell.
                    let s = [
                        lcg(&mut seed) * 3.0 - 1.0,
                        lcg(&mut seed) * 3.0 - 1.0,
                        lcg(&mut seed) * 3.0 - 1.0,
                    ];
                    [0, 1, 2].map(|k| (s[0] * m[0][k] + s[1] * m[1][k] + s[2] * m[2][k]) as f32)
                })
                .collect();
            let frame = Frame {
                positions_angstrom: positions,
                cell: Some(cell),
                ..Frame::default()
            };
            let sel1: Vec<u32> = (0..80).collect();
            let sel2: Vec<u32> = (60..160).collect();
            let settings = RdfSettings {
                r_max_angstrom: 8.0,
                bins: 40,
                exclude_same_group: false,
            };
            let mut acc = RdfAccumulator::new(settings.clone()).unwrap();
            acc.add_frame(0, &frame, &sel1, &sel2, None).unwrap();
            let expected = brute(&frame, &sel1, &sel2, &settings);
            assert_eq!(acc.counts, expected, "cell {lengths:?} {angles:?}");
        }
    }

    #[test]
    fn ideal_gas_gives_one() {
        let mut seed = 99u64;
        let cell = UnitCell::new([30.0, 30.0, 30.0], [70.0, 80.0, 90.0]);
        let m = cell.matrix_angstrom();
        let mut acc = RdfAccumulator::new(RdfSettings {
            r_max_angstrom: 10.0,
            bins: 10,
            exclude_same_group: false,
        })
        .unwrap();
        for f in 0..5 {
            let positions: Vec<[f32; 3]> = (0..2000)
                .map(|_| {
                    let s = [lcg(&mut seed), lcg(&mut seed), lcg(&mut seed)];
                    [0, 1, 2].map(|k| (s[0] * m[0][k] + s[1] * m[1][k] + s[2] * m[2][k]) as f32)
                })
                .collect();
            let frame = Frame {
                positions_angstrom: positions,
                cell: Some(cell),
                ..Frame::default()
            };
            let sel1: Vec<u32> = (0..1000).collect();
            let sel2: Vec<u32> = (1000..2000).collect();
            acc.add_frame(f, &frame, &sel1, &sel2, None).unwrap();
        }
        let rdf = acc.finish();
        for (r, g) in rdf.r_angstrom.iter().zip(&rdf.g).skip(2) {
            assert!((g - 1.0).abs() < 0.05, "g({r}) = {g}");
        }
    }

    #[test]
    fn bad_inputs_are_errors() {
        let bad = RdfAccumulator::new(RdfSettings {
            r_max_angstrom: f64::NAN,
            bins: 10,
            exclude_same_group: false,
        });
        assert!(bad.is_err());
        let mut acc = RdfAccumulator::new(RdfSettings {
            r_max_angstrom: 12.0,
            bins: 10,
            exclude_same_group: false,
        })
        .unwrap();
        let frame = Frame {
            positions_angstrom: vec![[0.0; 3]; 4],
            cell: Some(UnitCell::orthorhombic([20.0, 20.0, 20.0])),
            ..Frame::default()
        };
        let e = acc.add_frame(0, &frame, &[0, 1], &[2, 3], None).unwrap_err();
        assert!(matches!(e, RdfError::RangeExceedsHalfBox { .. }), "{e}");
        assert!(acc.add_frame(0, &frame, &[], &[2], None).is_err());
        assert!(acc.add_frame(0, &frame, &[0], &[9], None).is_err());
        let nan = Frame {
            positions_angstrom: vec![[f32::NAN, 0.0, 0.0]; 4],
            cell: None,
            ..Frame::default()
        };
        assert!(acc.add_frame(0, &nan, &[0], &[1], None).is_err());
    }
}
