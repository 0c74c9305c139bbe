//! The distance part of selections: every atom within a cutoff of a set (`within D of SEL`,
//! `around D SEL`) by a cell list, with minimum-image distances in a periodic cell ([`MinImage`]).

use crate::model::cell::UnitCell;

/// Flags every atom within `cutoff` of any atom flagged in `reference` (a cell list over the
/// reference atoms; minimum image when `cell` is given).
pub(super) fn within(pos: &[[f32; 3]], reference: &[bool], cutoff: f64, cell: Option<&UnitCell>) -> Vec<bool> {
    let n = pos.len();
    let refs: Vec<usize> = (0..n).filter(|&i| reference[i]).collect();
    let mut out = vec![false; n];
    if refs.is_empty() {
        return out;
    }
    let pbc = cell.filter(|c| c.is_valid()).map(MinImage::new);
    let c2 = cutoff * cutoff;
    if let Some(mi) = &pbc {
        return within_periodic(pos, &refs, cutoff, mi);
    }
    let cell_size = cutoff.max(1.0);
    let mut lo = [f64::INFINITY; 3];
    for &j in &refs {
        for k in 0..3 {
            lo[k] = lo[k].min(f64::from(pos[j][k]));
        }
    }
    let key = |p: [f64; 3]| -> [i64; 3] { [0, 1, 2].map(|k| ((p[k] - lo[k]) / cell_size).floor() as i64) };
    let mut grid: std::collections::BTreeMap<[i64; 3], Vec<usize>> = std::collections::BTreeMap::new();
    for &j in &refs {
        let p = pos[j].map(f64::from);
        if p.iter().all(|x| x.is_finite()) {
            grid.entry(key(p)).or_default().push(j);
        }
    }
    for (i, o) in out.iter_mut().enumerate() {
        let p = pos[i].map(f64::from);
        if !p.iter().all(|x| x.is_finite()) {
            continue;
        }
        let k = key(p);
        'search: for dx in -1..=1 {
            for dy in -1..=1 {
                for dz in -1..=1 {
                    if let Some(list) = grid.get(&[k[0] + dx, k[1] + dy, k[2] + dz]) {
                        for &j in list {
                            let q = pos[j];
                            let d2: f64 = (0..3).map(|a| (p[a] - f64::from(q[a])).powi(2)).sum();
                            if d2 <= c2 {
                                *o = true;
                                break 'search;
                            }
                        }
                    }
                }
            }
        }
    }
    out
}

/// Most cells along one axis of the periodic cell list.
const MAX_CELLS_PER_AXIS: usize = 64;

/// [`within`] in a periodic cell: a cell list in fractional coordinates, each axis cut into
/// slabs at least `cutoff` wide, so that a vector no longer than the cutoff crosses at most one
/// slab boundary per axis (its fractional component is at most cutoff / width); candidates in the
/// 27 neighbouring cells (all cells of an axis cut into fewer than three) are tested by the exact
/// minimum image.
fn within_periodic(pos: &[[f32; 3]], refs: &[usize], cutoff: f64, mi: &MinImage) -> Vec<bool> {
    let c2 = cutoff * cutoff;
    let widths = mi.widths();
    let n = widths.map(|w| ((w / cutoff.max(1e-6)).floor() as usize).clamp(1, MAX_CELLS_PER_AXIS));
    let cell_of = |p: [f64; 3]| -> Option<[usize; 3]> {
        if !p.iter().all(|x| x.is_finite()) {
            return None;
        }
        let s = mi.fractional(p);
        Some([0, 1, 2].map(|k| (((s[k] - s[k].floor()) * n[k] as f64) as usize).min(n[k] - 1)))
    };
    let flat = |c: [usize; 3]| (c[0] * n[1] + c[1]) * n[2] + c[2];
    let mut cells: Vec<Vec<usize>> = vec![Vec::new(); n[0] * n[1] * n[2]];
    for &j in refs {
        if let Some(c) = cell_of(pos[j].map(f64::from)) {
            cells[flat(c)].push(j);
        }
    }
    // Neighbouring cells along an axis: one either side, or every cell of a short axis (once).
    let offsets: [Vec<usize>; 3] = n.map(|m| if m >= 3 { vec![m - 1, 0, 1] } else { (0..m).collect() });
    let mut out = vec![false; pos.len()];
    for (i, o) in out.iter_mut().enumerate() {
        let p = pos[i].map(f64::from);
        let Some(c) = cell_of(p) else { continue };
        'search: for &da in &offsets[0] {
            for &db in &offsets[1] {
                for &dc in &offsets[2] {
                    let nb = [(c[0] + da) % n[0], (c[1] + db) % n[1], (c[2] + dc) % n[2]];
                    for &j in &cells[flat(nb)] {
                        if mi.distance2(p, pos[j].map(f64::from)) <= c2 {
                            *o = true;
                            break 'search;
                        }
                    }
                }
            }
        }
    }
    out
}

/// Minimum-image distances in a (possibly triclinic) cell.
#[derive(Clone, Debug)]
pub struct MinImage {
    m: [[f64; 3]; 3],
    inv: [[f64; 3]; 3],
    /// A rectangular box: the nearest image is found axis by axis.
    orthorhombic: bool,
}

impl MinImage {
    /// From a valid cell.
    pub fn new(cell: &UnitCell) -> MinImage {
        let m = cell.matrix_angstrom();
        // Rows a, b, c are lower-triangular: a=(ax,0,0), b=(bx,by,0), c=(cx,cy,cz).
        let (ax, bx, by, cx, cy, cz) = (m[0][0], m[1][0], m[1][1], m[2][0], m[2][1], m[2][2]);
        // Fractional coordinates s solve r = s_a a + s_b b + s_c c.
        let inv = [
            [1.0 / ax, 0.0, 0.0],
            [-bx / (ax * by), 1.0 / by, 0.0],
            [(bx * cy - by * cx) / (ax * by * cz), -cy / (by * cz), 1.0 / cz],
        ];
        let orthorhombic = bx == 0.0 && cx == 0.0 && cy == 0.0;
        MinImage { m, inv, orthorhombic }
    }

    /// Squared minimum-image distance between two points (Angstrom^2). Exact for the nearest image
    /// search over the 27 neighbouring cells after wrapping to fractional [-0.5, 0.5).
    pub fn distance2(&self, p: [f64; 3], q: [f64; 3]) -> f64 {
        let r = self.delta(p, q);
        r[0] * r[0] + r[1] * r[1] + r[2] * r[2]
    }

    /// The shortest vector from `q` to an image of `p` (Angstrom): `p - q` moved by whole cell
    /// vectors, the nearest image found over the 27 neighbouring cells after wrapping to fractional
    /// [-0.5, 0.5) (in a rectangular box the wrapped vector itself).
    pub fn delta(&self, p: [f64; 3], q: [f64; 3]) -> [f64; 3] {
        let s = self.wrapped(p, q);
        if self.orthorhombic {
            return self.cartesian(s);
        }
        let mut best = [f64::INFINITY; 3];
        let mut best2 = f64::INFINITY;
        for i in -1..=1 {
            for j in -1..=1 {
                for k in -1..=1 {
                    let r = self.cartesian([s[0] + f64::from(i), s[1] + f64::from(j), s[2] + f64::from(k)]);
                    let r2 = r[0] * r[0] + r[1] * r[1] + r[2] * r[2];
                    if r2 < best2 {
                        best2 = r2;
                        best = r;
                    }
                }
            }
        }
        best
    }

    /// `p - q` moved by whole cell vectors so that its fractional components lie within half a
    /// cell. That is the nearest image whenever the nearest image is shorter than half the cell's
    /// smallest width ([`MinImage::widths`]): its fractional components are then below one half.
    /// Callers that only need vectors that short save the search of [`MinImage::delta`].
    pub fn delta_rounded(&self, p: [f64; 3], q: [f64; 3]) -> [f64; 3] {
        self.cartesian(self.wrapped(p, q))
    }

    /// The fractional components of `p - q`, each wrapped to [-0.5, 0.5].
    fn wrapped(&self, p: [f64; 3], q: [f64; 3]) -> [f64; 3] {
        let f = self.fractional([p[0] - q[0], p[1] - q[1], p[2] - q[2]]);
        f.map(|x| x - x.round())
    }

    /// The Cartesian vector (Angstrom) of fractional components `f` (rows a, b, c lower-triangular).
    fn cartesian(&self, f: [f64; 3]) -> [f64; 3] {
        [
            f[0] * self.m[0][0] + f[1] * self.m[1][0] + f[2] * self.m[2][0],
            f[1] * self.m[1][1] + f[2] * self.m[2][1],
            f[2] * self.m[2][2],
        ]
    }

    /// Fractional coordinates of a point (its components along the cell vectors a, b, c).
    pub fn fractional(&self, p: [f64; 3]) -> [f64; 3] {
        [
            p[0] * self.inv[0][0] + p[1] * self.inv[1][0] + p[2] * self.inv[2][0],
            p[1] * self.inv[1][1] + p[2] * self.inv[2][1],
            p[2] * self.inv[2][2],
        ]
    }

    /// Distances between the opposite faces of the cell (Angstrom): its widths across a, b and c.
    pub fn widths(&self) -> [f64; 3] {
        // The width across a is 1 / |row a of the inverse's columns| = 1 / |grad s_a|.
        let g = |c: usize| {
            let v = [self.inv[0][c], self.inv[1][c], self.inv[2][c]];
            1.0 / (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]).sqrt()
        };
        [g(0), g(1), g(2)]
    }
}
