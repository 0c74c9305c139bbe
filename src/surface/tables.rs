//! Marching-cubes case tables, generated here from the cube's geometry (called by the CPU extractor
//! in [`super::marching`] and uploaded as-is by the GPU pass in `compute::wgpu::marching_cubes`).
//!
//! Numbering used everywhere in this crate (CPU and WGSL):
//!
//! - corner `c` of a cell sits at lattice offset `(c & 1, (c >> 1) & 1, (c >> 2) & 1)`;
//! - edge `e = 4 * axis + j` joins the corner `lo` with `lo | (1 << axis)`, where `j` packs the two
//!   other coordinates of `lo` in axis order (x-edges: `y + 2z`, y-edges: `x + 2z`, z-edges: `x + 2y`);
//! - the case index of a cell has bit `c` set when corner `c` is inside (value above the level).
//!
//! The triangulation is the classic one of Lorensen and Cline: the surface inside a cell is a set of
//! closed polygons whose sides lie on the cell's faces, each polygon fanned into triangles. A face
//! whose inside corners lie on a diagonal is ambiguous; there the two inside corners are always
//! separated from each other (the outside corners connect). Because the decision depends only on the
//! face's own corners, the two cells sharing a face agree on it and the surface has no cracks. This
//! is the same choice the table in scikit-image's `method='lorensen'` makes (the tests compare
//! triangle counts for all 256 cases). Triangles wind counter-clockwise seen from outside (from
//! lower values), in lattice coordinates.

use std::sync::LazyLock;

/// Most triangles any case produces (twelve crossed edges make at most ten triangles).
pub const MAX_TRIANGLES: usize = 10;

/// Corners joined by each edge, `(lower, upper)` along the edge's axis.
pub const EDGE_CORNERS: [(u8, u8); 12] = {
    let mut out = [(0u8, 0u8); 12];
    let mut e = 0;
    while e < 12 {
        let axis = e / 4;
        let j = e % 4;
        let (a, b) = (j & 1, j >> 1);
        // The two other coordinates in axis order.
        let lo = match axis {
            0 => (a << 1) | (b << 2),
            1 => a | (b << 2),
            _ => a | (b << 1),
        };
        out[e] = (lo as u8, (lo | (1 << axis)) as u8);
        e += 1;
    }
    out
};

/// The edge joining two corners that differ in one coordinate.
const fn edge_between(c1: u8, c2: u8) -> u8 {
    let diff = c1 ^ c2;
    let lo = c1 & c2;
    let axis = match diff {
        1 => 0,
        2 => 1,
        _ => 2,
    };
    let (a, b) = match axis {
        0 => ((lo >> 1) & 1, (lo >> 2) & 1),
        1 => (lo & 1, (lo >> 2) & 1),
        _ => (lo & 1, (lo >> 1) & 1),
    };
    axis * 4 + a + 2 * b
}

/// Lattice offset of a corner.
pub const fn corner_offset(c: u8) -> [u8; 3] {
    [c & 1, (c >> 1) & 1, (c >> 2) & 1]
}

/// Triangles of every case, as triples of edge numbers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CaseTable {
    /// Number of triangles of each case.
    pub counts: [u8; 256],
    /// Triangles of each case; entries past `counts[case]` are zero.
    pub triangles: [[[u8; 3]; MAX_TRIANGLES]; 256],
}

/// The table, generated once on first use.
pub static CASES: LazyLock<CaseTable> = LazyLock::new(generate);

fn corner_pos(c: u8) -> [f64; 3] {
    corner_offset(c).map(f64::from)
}

fn edge_mid(e: u8) -> [f64; 3] {
    let (a, b) = EDGE_CORNERS[usize::from(e)];
    let (pa, pb) = (corner_pos(a), corner_pos(b));
    [0.5 * (pa[0] + pb[0]), 0.5 * (pa[1] + pb[1]), 0.5 * (pa[2] + pb[2])]
}

fn sub(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [a[0] - b[0], a[1] - b[1], a[2] - b[2]]
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

fn dot(a: [f64; 3], b: [f64; 3]) -> f64 {
    a[0] * b[0] + a[1] * b[1] + a[2] * b[2]
}

/// Builds the triangles of one case.
fn triangulate(case: u8) -> Vec<[u8; 3]> {
    let inside = |c: u8| case & (1 << c) != 0;

    // Oriented polygon sides on the six faces: next[from_edge] = to_edge.
    let mut next = [u8::MAX; 12];
    for axis in 0..3u8 {
        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
        for side in 0..2u8 {
            let base = side << axis;
            let ring = [base, base | (1 << u), base | (1 << u) | (1 << v), base | (1 << v)];
            let mut normal = [0.0; 3];
            normal[usize::from(axis)] = if side == 1 { 1.0 } else { -1.0 };
            // Face edge i joins ring[i] and ring[i + 1].
            let crossed: Vec<usize> = (0..4)
                .filter(|&i| inside(ring[i]) != inside(ring[(i + 1) % 4]))
                .collect();
            // Pairs (a, b) of face-edge positions; the side cut off holds ring[a + 1 ..= b].
            let pairs: Vec<(usize, usize)> = match crossed.len() {
                2 => vec![(crossed[0], crossed[1])],
                4 => {
                    // Cut off each inside corner between its two face edges.
                    (0..4).filter(|&i| inside(ring[i])).map(|i| ((i + 3) % 4, i)).collect()
                }
                _ => Vec::new(),
            };
            for (a, b) in pairs {
                let ea = edge_between(ring[a], ring[(a + 1) % 4]);
                let eb = edge_between(ring[b], ring[(b + 1) % 4]);
                let (p, q) = (edge_mid(ea), edge_mid(eb));
                let m = [0.5 * (p[0] + q[0]), 0.5 * (p[1] + q[1]), 0.5 * (p[2] + q[2])];
                let cut = ring[(a + 1) % 4];
                // Direction across the side towards the outside region (lower values).
                let towards_outside = if inside(cut) {
                    sub(m, corner_pos(cut))
                } else {
                    sub(corner_pos(cut), m)
                };
                // The surface's normal points outside; its boundary runs counter-clockwise around
                // that normal, which puts the cell's interior to the left of the side.
                let d = sub(q, p);
                let (from, to) = if dot(cross(towards_outside, d), normal) < 0.0 {
                    (ea, eb)
                } else {
                    (eb, ea)
                };
                next[usize::from(from)] = to;
            }
        }
    }

    let mut triangles = Vec::new();
    let mut visited = [false; 12];
    for start in 0..12u8 {
        if next[usize::from(start)] == u8::MAX || visited[usize::from(start)] {
            continue;
        }
        let mut ring = Vec::new();
        let mut e = start;
        while e != u8::MAX && !visited[usize::from(e)] {
            visited[usize::from(e)] = true;
            ring.push(e);
            e = next[usize::from(e)];
        }
        let positions: Vec<usize> = (0..ring.len()).collect();
        let ok = |a: usize, b: usize| !share_face(ring[a], ring[b]);
        // Every polygon here has a triangulation whose diagonals avoid the faces (checked for all
        // cases by the tests); the plain fan is the fallback that keeps the count regardless.
        match triangulate_polygon(&positions, &ok) {
            Some(tris) => triangles.extend(tris.iter().map(|t| t.map(|p| ring[p]))),
            None => {
                for i in 1..ring.len().saturating_sub(1) {
                    triangles.push([ring[0], ring[i], ring[i + 1]]);
                }
            }
        }
    }
    triangles
}

/// Bit mask of the cell faces (`2 * axis + side`) an edge lies on.
fn edge_faces(e: u8) -> u8 {
    let (lo, _) = EDGE_CORNERS[usize::from(e) % 12];
    let axis = e / 4;
    let mut mask = 0u8;
    for b in 0..3u8 {
        if b != axis {
            mask |= 1 << (2 * b + ((lo >> b) & 1));
        }
    }
    mask
}

/// True when two edges lie on a common cell face: a diagonal between their vertices would run
/// along that face, where the neighbouring cell's surface may run too (a non-manifold seam).
fn share_face(a: u8, b: u8) -> bool {
    edge_faces(a) & edge_faces(b) != 0
}

/// Triangulates the polygon whose corners are `idx` (in loop order) using only diagonals that
/// `ok` accepts; triangles keep the loop's orientation. `None` when no such triangulation exists.
fn triangulate_polygon(idx: &[usize], ok: &dyn Fn(usize, usize) -> bool) -> Option<Vec<[usize; 3]>> {
    let n = idx.len();
    if n < 3 {
        return Some(Vec::new());
    }
    let (a, b) = (idx[0], idx[n - 1]);
    // The side (b, a) closes the loop; choose the apex of its triangle.
    for k in 1..n - 1 {
        let c = idx[k];
        if (k == 1 || ok(a, c)) && (k == n - 2 || ok(c, b)) {
            let Some(left) = triangulate_polygon(&idx[..=k], ok) else {
                continue;
            };
            let Some(right) = triangulate_polygon(&idx[k..], ok) else {
                continue;
            };
            let mut out = left;
            out.push([a, c, b]);
            out.extend(right);
            return Some(out);
        }
    }
    None
}

fn generate() -> CaseTable {
    let mut table = CaseTable {
        counts: [0; 256],
        triangles: [[[0; 3]; MAX_TRIANGLES]; 256],
    };
    for case in 0..=255u8 {
        let tris = triangulate(case);
        let n = tris.len().min(MAX_TRIANGLES);
        table.counts[usize::from(case)] = n as u8;
        for (slot, t) in table.triangles[usize::from(case)]
            .iter_mut()
            .zip(tris.into_iter().take(n))
        {
            *slot = t;
        }
    }
    table
}

/// The crossed edges of a case, as a bit mask (bit `e` set when edge `e` has a vertex).
pub fn crossed_edges(case: u8) -> u16 {
    let mut mask = 0u16;
    for (e, &(a, b)) in EDGE_CORNERS.iter().enumerate() {
        if ((case >> a) & 1) != ((case >> b) & 1) {
            mask |= 1 << e;
        }
    }
    mask
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn edges_join_neighbouring_corners() {
        for (e, &(a, b)) in EDGE_CORNERS.iter().enumerate() {
            assert_eq!((a ^ b).count_ones(), 1, "edge {e}");
            assert_eq!(usize::from(edge_between(a, b)), e);
            assert_eq!(usize::from(edge_between(b, a)), e);
        }
    }

    #[test]
    fn every_case_closes_and_uses_exactly_its_crossed_edges() {
        for case in 0..=255u8 {
            let tris = triangulate(case);
            assert!(tris.len() <= MAX_TRIANGLES, "case {case}");
            let mut used = 0u16;
            for t in &tris {
                for &e in t {
                    used |= 1 << e;
                }
            }
            assert_eq!(used, crossed_edges(case), "case {case}");
            // Closed polygons: every undirected triangle side inside the cell's surface is shared by
            // two triangles in opposite directions, except polygon sides, which lie on faces.
            let mut directed = std::collections::BTreeMap::new();
            for t in &tris {
                for k in 0..3 {
                    *directed.entry((t[k], t[(k + 1) % 3])).or_insert(0) += 1;
                }
            }
            for (&(a, b), &n) in &directed {
                assert_eq!(n, 1, "case {case}: side {a}->{b} used twice in one direction");
            }
        }
    }

    #[test]
    fn no_diagonal_runs_along_a_cell_face() {
        for case in 0..=255u8 {
            let tris = triangulate(case);
            let mut directed = std::collections::BTreeSet::new();
            for t in &tris {
                for k in 0..3 {
                    directed.insert((t[k], t[(k + 1) % 3]));
                }
            }
            for &(a, b) in &directed {
                // A side used in both directions is an interior diagonal of a polygon.
                if directed.contains(&(b, a)) {
                    assert!(!share_face(a, b), "case {case}: diagonal {a}-{b} lies on a face");
                }
            }
        }
    }

    #[test]
    fn classic_counts_of_the_fifteen_families() {
        // Single corner: one triangle; an edge: two; two corners on a face diagonal: two triangles
        // (separated); two opposite corners of the cell: two; three corners on a face: three;
        // a whole face: two. The complement of a face diagonal joins the outside corners' region
        // around a separated pair of outside corners: one hexagon, four triangles.
        let t = &*CASES;
        assert_eq!(t.counts[0], 0);
        assert_eq!(t.counts[255], 0);
        assert_eq!(t.counts[0b0000_0001], 1);
        assert_eq!(t.counts[0b0000_0011], 2);
        assert_eq!(t.counts[0b0000_1001], 2);
        assert_eq!(t.counts[0b1000_0001], 2);
        assert_eq!(t.counts[0b0000_0111], 3);
        assert_eq!(t.counts[0b0000_1111], 2);
        assert_eq!(t.counts[255 - 0b0000_1001], 4);
    }
}
