//! Caps where an isosurface meets the lattice's faces: the part of each of the six faces where the
//! field lies inside the level, as flat triangles, so a lobe or density cut by the box reads as a
//! solid cut rather than an open shell (ChimeraX's `capFaces`, on by default there too). A cube
//! file's box (PySCF's 3-bohr margin) cuts a density at 0.002 a.u. and diffuse orbitals.
//!
//! Each face is cut into the squares of its lattice points; a square's inside part is the polygon
//! its corners and edge crossings trace in order (marching squares without a table), fanned into
//! triangles. Crossings are placed on the lattice edges exactly as [`super::marching`] places
//! them, so a cap's rim meets the surface's boundary. Normals are the face's outward normal.

use super::MeshData;
use crate::model::Grid3;
use crate::model::units::angstrom_from_bohr3;

/// The caps of the region where `sign * value > sign * iso` on the six faces of `grid`'s lattice.
/// Empty when the region does not reach a face, or for lattices [`super::extract`] makes no surface of.
pub fn cap_faces(grid: &Grid3, iso: f32, sign: f32) -> MeshData {
    let mut mesh = MeshData::default();
    let dims = grid.lattice.dims;
    if dims.iter().any(|&d| d < 2) || grid.values.len() != grid.lattice.n_points() || !iso.is_finite() {
        return mesh;
    }
    let face = Faces {
        values: &grid.values,
        dims,
        sign,
        iso: sign * iso,
        origin_angstrom: angstrom_from_bohr3(grid.lattice.origin_bohr),
        steps_angstrom: grid.lattice.steps_bohr.map(angstrom_from_bohr3),
    };
    for axis in 0..3 {
        for high in [false, true] {
            face.cap(axis, high, &mut mesh);
        }
    }
    mesh
}

struct Faces<'a> {
    values: &'a [f32],
    dims: [usize; 3],
    sign: f32,
    iso: f32,
    origin_angstrom: [f64; 3],
    steps_angstrom: [[f64; 3]; 3],
}

impl Faces<'_> {
    fn value(&self, p: [usize; 3]) -> f32 {
        self.sign * self.values[p[0] + self.dims[0] * (p[1] + self.dims[1] * p[2])]
    }

    fn position(&self, f: [f64; 3]) -> [f32; 3] {
        let (s, o) = (&self.steps_angstrom, &self.origin_angstrom);
        [0, 1, 2].map(|c| (o[c] + f[0] * s[0][c] + f[1] * s[1][c] + f[2] * s[2][c]) as f32)
    }

    /// The crossing on the lattice edge from `p` one step along `axis`, placed as the marching
    /// cubes extractor places it (from the lower point, the same rounding).
    fn crossing(&self, p: [usize; 3], axis: usize) -> [f32; 3] {
        let mut q = p;
        q[axis] += 1;
        let (va, vb) = (self.value(p), self.value(q));
        let t = (self.iso - va) / (vb - va);
        let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.5 };
        let mut f = p.map(|x| x as f64);
        f[axis] += f64::from(t);
        self.position(f)
    }

    /// Appends the caps of the face normal to `axis` at its first (or last, `high`) plane.
    fn cap(&self, axis: usize, high: bool, mesh: &mut MeshData) {
        let (u, v) = ((axis + 1) % 3, (axis + 2) % 3);
        let plane = if high { self.dims[axis] - 1 } else { 0 };
        // Outward: along the axis's step at the last plane, against it at the first, whatever the
        // handedness of the steps.
        let s = &self.steps_angstrom;
        let mut n = cross(s[u], s[v]);
        if (dot(n, s[axis]) < 0.0) == high {
            n = n.map(|x| -x);
        }
        let len = dot(n, n).sqrt();
        if !(len > 0.0 && len.is_finite()) {
            return;
        }
        let normal = n.map(|x| (x / len) as f32);
        let point = |a: usize, b: usize| {
            let mut p = [0usize; 3];
            p[axis] = plane;
            p[u] = a;
            p[v] = b;
            p
        };
        let mut polygon: Vec<[f32; 3]> = Vec::with_capacity(8);
        for b in 0..self.dims[v] - 1 {
            for a in 0..self.dims[u] - 1 {
                // Corners in order round the square, with the axis each edge runs along (+1: from
                // this corner up the axis; -1: from the next corner up to this one).
                let corners = [point(a, b), point(a + 1, b), point(a + 1, b + 1), point(a, b + 1)];
                let vals = corners.map(|p| self.value(p));
                if vals.iter().any(|x| !x.is_finite()) {
                    continue;
                }
                let inside = vals.map(|x| x > self.iso);
                if !inside.iter().any(|&x| x) {
                    continue;
                }
                polygon.clear();
                for k in 0..4 {
                    let next = (k + 1) % 4;
                    if inside[k] {
                        polygon.push(self.position(corners[k].map(|x| x as f64)));
                    }
                    if inside[k] != inside[next] {
                        // Edges 0 and 2 run along u, 1 and 3 along v; the crossing is measured from
                        // the lower corner of the edge.
                        let (from, along) = match k {
                            0 => (corners[0], u),
                            1 => (corners[1], v),
                            2 => (corners[3], u),
                            _ => (corners[0], v),
                        };
                        polygon.push(self.crossing(from, along));
                    }
                }
                fan(&polygon, normal, mesh);
            }
        }
    }
}

/// Appends the fan of a convex polygon, wound counter-clockwise seen along `normal`.
fn fan(polygon: &[[f32; 3]], normal: [f32; 3], mesh: &mut MeshData) {
    if polygon.len() < 3 {
        return;
    }
    let base = mesh.positions_angstrom.len() as u32;
    mesh.positions_angstrom.extend_from_slice(polygon);
    mesh.normals.extend(std::iter::repeat_n(normal, polygon.len()));
    let p = |i: usize| polygon[i].map(f64::from);
    let n64 = normal.map(f64::from);
    for i in 1..polygon.len() - 1 {
        let (a, b, c) = (p(0), p(i), p(i + 1));
        let ab = [b[0] - a[0], b[1] - a[1], b[2] - a[2]];
        let ac = [c[0] - a[0], c[1] - a[1], c[2] - a[2]];
        let (i0, i1, i2) = (base, base + i as u32, base + i as u32 + 1);
        if dot(cross(ab, ac), n64) >= 0.0 {
            mesh.indices.extend_from_slice(&[i0, i1, i2]);
        } else {
            mesh.indices.extend_from_slice(&[i0, i2, i1]);
        }
    }
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

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::*;
    use crate::model::Lattice;

    /// `radius - |x - centre|` on a lattice of `n` points a side with step `h` (bohr).
    fn ball(n: usize, h: f64, centre_bohr: [f64; 3], radius_bohr: f64) -> Grid3 {
        let lattice = Lattice {
            origin_bohr: [0.0; 3],
            steps_bohr: [[h, 0.0, 0.0], [0.0, h, 0.0], [0.0, 0.0, h]],
            dims: [n; 3],
        };
        let mut values = Vec::with_capacity(n * n * n);
        for k in 0..n {
            for j in 0..n {
                for i in 0..n {
                    let p = [i, j, k].map(|x| x as f64 * h);
                    let d = ((p[0] - centre_bohr[0]).powi(2)
                        + (p[1] - centre_bohr[1]).powi(2)
                        + (p[2] - centre_bohr[2]).powi(2))
                    .sqrt();
                    values.push((radius_bohr - d) as f32);
                }
            }
        }
        Grid3 {
            lattice,
            values,
            description: String::new(),
        }
    }

    fn is_closed(mesh: &MeshData) -> bool {
        mesh.open_edges() == 0
    }

    /// A ball cut by a face (its centre on the face, random radius): with its cap the mesh is closed
    /// and encloses the half ball's volume; without, it is open. The cap is flat on the face, wound
    /// outward, and the same holds for the region below a level and a left-handed lattice.
    #[test]
    fn a_cut_ball_is_closed_by_its_cap() {
        let seed = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .subsec_nanos();
        let radius_bohr = 2.0 + f64::from(seed % 1000) / 1000.0;
        let (n, h) = (41, 0.2);
        let centre = [0.0, 4.0, 4.0];
        let grid = ball(n, h, centre, radius_bohr);
        let surface = super::super::extract(&grid, 0.0);
        assert!(!is_closed(&surface), "the half ball's shell is open");
        let caps = cap_faces(&grid, 0.0, 1.0);
        assert!(!caps.is_empty());
        assert!(
            caps.positions_angstrom.iter().all(|p| p[0].abs() < 1e-6),
            "the cap lies on the face x = 0"
        );
        assert!(
            caps.normals.iter().all(|n| (n[0] + 1.0).abs() < 1e-6),
            "and faces out (-x)"
        );
        let mut whole = surface.clone();
        whole.append(&caps);
        assert!(is_closed(&whole), "shell and cap make a closed surface");
        let r = crate::model::units::angstrom_from_bohr(radius_bohr);
        let expected = 2.0 / 3.0 * std::f64::consts::PI * r.powi(3);
        let got = whole.enclosed_volume_angstrom3();
        assert!(
            (got / expected - 1.0).abs() < 0.02,
            "{got} against {expected} A^3 (radius {r} A)"
        );

        // The region below a level: a hole cut by the face at x = last plane.
        let far = ball(n, h, [(n - 1) as f64 * h, 4.0, 4.0], radius_bohr);
        let negated = Grid3 {
            values: far.values.iter().map(|v| -v).collect(),
            ..far
        };
        let mut below = super::super::extract_below(&negated, 0.0);
        // The cap at x = 0 above lies in a plane through the origin, where it adds nothing to the
        // divergence sum; this one does: the shell's sum alone is not the volume.
        assert!((below.enclosed_volume_angstrom3() / expected - 1.0).abs() > 0.05);
        let caps = cap_faces(&negated, 0.0, -1.0);
        assert!(caps.normals.iter().all(|n| (n[0] - 1.0).abs() < 1e-6), "faces out (+x)");
        below.append(&caps);
        assert!(is_closed(&below));
        let got = below.enclosed_volume_angstrom3();
        assert!((got / expected - 1.0).abs() < 0.02, "{got} against {expected} A^3");

        // A left-handed lattice (z step negative): the same volume, still positive.
        let mut left = grid.clone();
        left.lattice.steps_bohr[2] = [0.0, 0.0, -h];
        left.lattice.origin_bohr = [0.0, 0.0, 8.0];
        let mut whole = super::super::extract(&left, 0.0);
        whole.append(&cap_faces(&left, 0.0, 1.0));
        assert!(is_closed(&whole));
        let got = whole.enclosed_volume_angstrom3();
        assert!((got / expected - 1.0).abs() < 0.02, "{got} against {expected} A^3");
    }

    /// A ball inside the box has no caps; a lattice with non-finite corners skips those squares.
    #[test]
    fn no_caps_where_nothing_meets_a_face() {
        let grid = ball(21, 0.2, [2.0; 3], 1.0);
        assert!(cap_faces(&grid, 0.0, 1.0).is_empty());
        let mut cut = ball(21, 0.2, [0.0, 2.0, 2.0], 1.5);
        let full = cap_faces(&cut, 0.0, 1.0).triangle_count();
        cut.values[21 * (10 + 21 * 10)] = f32::NAN;
        let holed = cap_faces(&cut, 0.0, 1.0).triangle_count();
        assert!(holed < full && holed > 0, "{holed} of {full}");
    }
}
