//! The CPU marching-cubes extractor behind [`super::extract`] and [`super::extract_two_sign`].
//!
//! The lattice is cut into runs of z-layers of cells ("chunks") processed in parallel with rayon.
//! Each chunk walks its layers bottom to top with three reusable edge-index caches (x- and y-edges
//! of the lower and upper point plane, z-edges between them), creating one vertex per crossed
//! lattice edge before any cell uses it. Vertices are created in a fixed order (per plane: x- and
//! y-edges, then the z-edges up to the next plane), so the last plane of one chunk holds exactly the
//! vertices the next chunk creates first: concatenating the chunks and dropping that duplicated
//! plane yields globally shared vertices with no index remapping.
//!
//! A corner is inside when its (signed) value is above the level. Cells with a non-finite corner
//! produce nothing, and edges with a non-finite end get no vertex.

use super::MeshData;
use super::tables::{CASES, EDGE_CORNERS, corner_offset};
use crate::model::Grid3;
use crate::model::units::angstrom_from_bohr3;
use rayon::prelude::*;

/// Class bits of a lattice point.
const INSIDE: u8 = 1;
const NOT_FINITE: u8 = 2;
/// Row summary: the row's points are not all of one class.
const MIXED: u8 = 0xFF;

/// True when rows `a` and `b` hold no crossing between or within them.
#[inline]
fn uniform(a: u8, b: u8) -> bool {
    a == b && a != MIXED
}

/// The lattice and level shared by all chunks.
struct Extraction<'a> {
    values: &'a [f32],
    dims: [usize; 3],
    /// Multiplies every value (+1 or -1) so one code path extracts both signs.
    sign: f32,
    iso: f32,
    origin_bohr: [f64; 3],
    steps_bohr: [[f64; 3]; 3],
    /// Maps a gradient in lattice index space to world space (inverse transpose of the axes).
    gradient_to_world: [[f64; 3]; 3],
    /// True when the step vectors form a left-handed frame (winding must be flipped).
    flip: bool,
}

/// One chunk's output; `shared_tail` vertices at its end repeat the next chunk's first ones.
struct Chunk {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    indices: Vec<u32>,
    shared_tail: usize,
}

/// Extracts the surface of `sign * value = sign * iso`, with inside where `sign * value > sign * iso`.
pub(super) fn extract_signed(grid: &Grid3, iso: f32, sign: f32) -> MeshData {
    let lattice = &grid.lattice;
    let dims = lattice.dims;
    let n_points = lattice.n_points();
    if dims.iter().any(|&d| d < 2) || grid.values.len() != n_points || !iso.is_finite() {
        return MeshData::default();
    }
    // Vertex indices are u32: three edges per point must fit.
    if n_points > (u32::MAX as usize) / 3 {
        return MeshData::default();
    }
    let Some((gradient_to_world, det)) = inverse_transpose(lattice.steps_bohr) else {
        return MeshData::default();
    };
    let frame = Extraction {
        values: &grid.values,
        dims,
        sign,
        iso: sign * iso,
        origin_bohr: lattice.origin_bohr,
        steps_bohr: lattice.steps_bohr,
        gradient_to_world,
        flip: det < 0.0,
    };

    let layers = dims[2] - 1;
    let threads = rayon::current_num_threads().max(1);
    let per_chunk = layers.div_ceil(threads * 4).max(4);
    let starts: Vec<usize> = (0..layers).step_by(per_chunk).collect();
    let chunks: Vec<Chunk> = starts
        .par_iter()
        .map(|&k0| run_chunk(&frame, k0, (k0 + per_chunk).min(layers)))
        .collect();

    merge(chunks)
}

fn merge(chunks: Vec<Chunk>) -> MeshData {
    let last = chunks.len().saturating_sub(1);
    let kept = |i: usize, c: &Chunk| {
        if i == last {
            c.positions.len()
        } else {
            c.positions.len() - c.shared_tail
        }
    };
    let n_vertices: usize = chunks.iter().enumerate().map(|(i, c)| kept(i, c)).sum();
    let n_indices: usize = chunks.iter().map(|c| c.indices.len()).sum();
    let mut mesh = MeshData {
        positions_angstrom: Vec::with_capacity(n_vertices),
        normals: Vec::with_capacity(n_vertices),
        indices: Vec::with_capacity(n_indices),
    };
    for (i, c) in chunks.iter().enumerate() {
        let offset = mesh.positions_angstrom.len() as u32;
        let keep = kept(i, c);
        mesh.positions_angstrom.extend_from_slice(&c.positions[..keep]);
        mesh.normals.extend_from_slice(&c.normals[..keep]);
        mesh.indices.extend(c.indices.iter().map(|&v| v + offset));
    }
    mesh
}

/// Inverse transpose of the matrix whose columns are the step vectors, and its determinant.
fn inverse_transpose(steps: [[f64; 3]; 3]) -> Option<([[f64; 3]; 3], f64)> {
    let [a, b, c] = steps;
    // Columns a, b, c; rows of the inverse are (b x c, c x a, a x b) / det.
    let bc = cross(b, c);
    let det = a[0] * bc[0] + a[1] * bc[1] + a[2] * bc[2];
    if !det.is_finite() || det == 0.0 {
        return None;
    }
    let ca = cross(c, a);
    let ab = cross(a, b);
    // Inverse M^-1 has rows bc/det, ca/det, ab/det; its transpose has those as columns, so
    // world_gradient = M^-T g = bc * g0 + ca * g1 + ab * g2 (all / det).
    let mut out = [[0.0; 3]; 3];
    for r in 0..3 {
        out[r] = [bc[r] / det, ca[r] / det, ab[r] / det];
    }
    Some((out, det))
}

fn cross(a: [f64; 3], b: [f64; 3]) -> [f64; 3] {
    [
        a[1] * b[2] - a[2] * b[1],
        a[2] * b[0] - a[0] * b[2],
        a[0] * b[1] - a[1] * b[0],
    ]
}

impl Extraction<'_> {
    #[inline]
    fn value(&self, i: usize, j: usize, k: usize) -> f32 {
        self.sign * self.values[i + self.dims[0] * (j + self.dims[1] * k)]
    }

    /// Classifies the points of plane `k` into `out` (x fastest), and summarises each row in
    /// `rows`: its common class when all its points share one, else [`MIXED`].
    fn classify_plane(&self, k: usize, out: &mut [u8], rows: &mut [u8]) {
        let nx = self.dims[0];
        let plane = nx * self.dims[1];
        let src = &self.values[k * plane..(k + 1) * plane];
        let (sign, iso) = (self.sign, self.iso);
        for ((row_out, row_src), summary) in out.chunks_exact_mut(nx).zip(src.chunks_exact(nx)).zip(rows.iter_mut()) {
            let mut any = 0u8;
            let mut all = INSIDE | NOT_FINITE;
            for (c, &v) in row_out.iter_mut().zip(row_src) {
                let v = sign * v;
                let class = if !v.is_finite() { NOT_FINITE } else { u8::from(v > iso) };
                *c = class;
                any |= class;
                all &= class;
            }
            *summary = if any == all { any } else { MIXED };
        }
    }

    /// Derivative along one lattice axis: central inside, one-sided at the border or next to a
    /// non-finite neighbour, zero when nothing finite is available.
    #[inline]
    fn derivative(&self, axis: usize, p: [usize; 3]) -> f64 {
        let n = self.dims[axis];
        let at = |q: usize| {
            let mut r = p;
            r[axis] = q;
            self.value(r[0], r[1], r[2])
        };
        let i = p[axis];
        let here = at(i);
        let lo = (if i > 0 { Some(at(i - 1)) } else { None }).filter(|v| v.is_finite());
        let hi = (if i + 1 < n { Some(at(i + 1)) } else { None }).filter(|v| v.is_finite());
        match (lo, hi) {
            (Some(l), Some(h)) => 0.5 * (f64::from(h) - f64::from(l)),
            (None, Some(h)) if here.is_finite() => f64::from(h) - f64::from(here),
            (Some(l), None) if here.is_finite() => f64::from(here) - f64::from(l),
            _ => 0.0,
        }
    }

    fn gradient(&self, p: [usize; 3]) -> [f64; 3] {
        [self.derivative(0, p), self.derivative(1, p), self.derivative(2, p)]
    }

    /// Makes the vertex on the edge from point `p` one step along `axis`.
    fn vertex(&self, p: [usize; 3], axis: usize, out: &mut Chunk) -> u32 {
        let mut q = p;
        q[axis] += 1;
        let va = self.value(p[0], p[1], p[2]);
        let vb = self.value(q[0], q[1], q[2]);
        let t = f64::from(self.iso - va) / f64::from(vb - va);
        let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.5 };
        let mut f = [p[0] as f64, p[1] as f64, p[2] as f64];
        f[axis] += t;
        let s = &self.steps_bohr;
        let o = &self.origin_bohr;
        let bohr = [
            o[0] + f[0] * s[0][0] + f[1] * s[1][0] + f[2] * s[2][0],
            o[1] + f[0] * s[0][1] + f[1] * s[1][1] + f[2] * s[2][1],
            o[2] + f[0] * s[0][2] + f[1] * s[1][2] + f[2] * s[2][2],
        ];
        let ga = self.gradient(p);
        let gb = self.gradient(q);
        let g = [0, 1, 2].map(|a| (1.0 - t) * ga[a] + t * gb[a]);
        let m = &self.gradient_to_world;
        let w = [0, 1, 2].map(|r| m[r][0] * g[0] + m[r][1] * g[1] + m[r][2] * g[2]);
        let len = (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]).sqrt();
        // Outward is down the gradient of the signed value.
        let normal = if len > 0.0 && len.is_finite() {
            w.map(|x| (-x / len) as f32)
        } else {
            // Flat or broken gradient: point along the edge, from the inside end to the outside end.
            let e = s[axis];
            let el = (e[0] * e[0] + e[1] * e[1] + e[2] * e[2]).sqrt().max(f64::MIN_POSITIVE);
            let dir = if va > self.iso { 1.0 } else { -1.0 };
            e.map(|x| (dir * x / el) as f32)
        };
        let index = out.positions.len() as u32;
        out.positions.push(angstrom_from_bohr3(bohr).map(|x| x as f32));
        out.normals.push(normal);
        index
    }

    /// Creates vertices on the crossed x- and y-edges of plane `k`.
    fn plane_vertices(&self, k: usize, cls: &[u8], rows: &[u8], xe: &mut [u32], ye: &mut [u32], out: &mut Chunk) {
        let [nx, ny, _] = self.dims;
        for j in 0..ny {
            let row = j * nx;
            let next_row = rows.get(j + 1).copied().unwrap_or(rows[j]);
            if uniform(rows[j], next_row) {
                continue;
            }
            for i in 0..nx {
                let a = cls[row + i];
                if i + 1 < nx {
                    let b = cls[row + i + 1];
                    if (a | b) & NOT_FINITE == 0 && (a ^ b) & INSIDE != 0 {
                        xe[row + i] = self.vertex([i, j, k], 0, out);
                    }
                }
                if j + 1 < ny {
                    let b = cls[row + nx + i];
                    if (a | b) & NOT_FINITE == 0 && (a ^ b) & INSIDE != 0 {
                        ye[row + i] = self.vertex([i, j, k], 1, out);
                    }
                }
            }
        }
    }

    /// Creates vertices on the crossed z-edges between planes `k` and `k + 1`.
    fn z_vertices(&self, k: usize, lo: &[u8], hi: &[u8], rows: (&[u8], &[u8]), ze: &mut [u32], out: &mut Chunk) {
        let nx = self.dims[0];
        for (j, (row_lo, row_hi)) in lo.chunks_exact(nx).zip(hi.chunks_exact(nx)).enumerate() {
            if uniform(rows.0[j], rows.1[j]) {
                continue;
            }
            for (i, (&a, &b)) in row_lo.iter().zip(row_hi).enumerate() {
                if (a | b) & NOT_FINITE == 0 && (a ^ b) & INSIDE != 0 {
                    ze[i + j * nx] = self.vertex([i, j, k], 2, out);
                }
            }
        }
    }
}

/// Which cache holds each edge's vertex and at what offset from the cell's base point.
struct EdgeLookup {
    /// 0: x lower plane, 1: x upper, 2: y lower, 3: y upper, 4: z.
    cache: [u8; 12],
    offset: [usize; 12],
}

impl EdgeLookup {
    fn new(nx: usize) -> EdgeLookup {
        let mut cache = [0u8; 12];
        let mut offset = [0usize; 12];
        for (e, &(lo, _)) in EDGE_CORNERS.iter().enumerate() {
            let [x, y, z] = corner_offset(lo);
            let axis = e / 4;
            cache[e] = match axis {
                0 => z,
                1 => 2 + z,
                _ => 4,
            };
            offset[e] = usize::from(x) + nx * usize::from(y);
        }
        EdgeLookup { cache, offset }
    }
}

/// Runs the cell layers `k0..k1` (points `k0..=k1`).
fn run_chunk(f: &Extraction<'_>, k0: usize, k1: usize) -> Chunk {
    let [nx, ny, _] = f.dims;
    let plane = nx * ny;
    let mut out = Chunk {
        positions: Vec::new(),
        normals: Vec::new(),
        indices: Vec::new(),
        shared_tail: 0,
    };
    let mut cls_lo = vec![0u8; plane];
    let mut cls_hi = vec![0u8; plane];
    let mut rows_lo = vec![0u8; ny];
    let mut rows_hi = vec![0u8; ny];
    let mut xe_lo = vec![0u32; plane];
    let mut ye_lo = vec![0u32; plane];
    let mut xe_hi = vec![0u32; plane];
    let mut ye_hi = vec![0u32; plane];
    let mut ze = vec![0u32; plane];
    let lookup = EdgeLookup::new(nx);
    let table = &*CASES;

    f.classify_plane(k0, &mut cls_lo, &mut rows_lo);
    f.plane_vertices(k0, &cls_lo, &rows_lo, &mut xe_lo, &mut ye_lo, &mut out);
    for k in k0..k1 {
        f.classify_plane(k + 1, &mut cls_hi, &mut rows_hi);
        f.z_vertices(k, &cls_lo, &cls_hi, (&rows_lo, &rows_hi), &mut ze, &mut out);
        let before_top = out.positions.len();
        f.plane_vertices(k + 1, &cls_hi, &rows_hi, &mut xe_hi, &mut ye_hi, &mut out);
        if k + 1 == k1 {
            out.shared_tail = out.positions.len() - before_top;
        }
        let caches: [&[u32]; 5] = [&xe_lo, &xe_hi, &ye_lo, &ye_hi, &ze];
        for j in 0..ny - 1 {
            let r = rows_lo[j];
            if uniform(r, rows_lo[j + 1]) && uniform(r, rows_hi[j]) && uniform(r, rows_hi[j + 1]) {
                continue;
            }
            let row = j * nx;
            for i in 0..nx - 1 {
                let b = row + i;
                let c = [
                    cls_lo[b],
                    cls_lo[b + 1],
                    cls_lo[b + nx],
                    cls_lo[b + nx + 1],
                    cls_hi[b],
                    cls_hi[b + 1],
                    cls_hi[b + nx],
                    cls_hi[b + nx + 1],
                ];
                let mut case = 0usize;
                let mut any = 0u8;
                for (bit, &v) in c.iter().enumerate() {
                    case |= usize::from(v & INSIDE) << bit;
                    any |= v;
                }
                if case == 0 || case == 255 || any & NOT_FINITE != 0 {
                    continue;
                }
                let n = usize::from(table.counts[case]);
                for tri in &table.triangles[case][..n] {
                    let v = tri.map(|e| {
                        let e = usize::from(e);
                        caches[usize::from(lookup.cache[e])][b + lookup.offset[e]]
                    });
                    if f.flip {
                        out.indices.extend_from_slice(&[v[0], v[2], v[1]]);
                    } else {
                        out.indices.extend_from_slice(&v);
                    }
                }
            }
        }
        std::mem::swap(&mut cls_lo, &mut cls_hi);
        std::mem::swap(&mut rows_lo, &mut rows_hi);
        std::mem::swap(&mut xe_lo, &mut xe_hi);
        std::mem::swap(&mut ye_lo, &mut ye_hi);
    }
    out
}
