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
    origin_angstrom: [f64; 3],
    steps_angstrom: [[f64; 3]; 3],
    /// Maps a gradient in lattice index space to world space (inverse transpose of the axes, up
    /// to a positive scale).
    gradient_to_world: [[f32; 3]; 3],
    /// True when the step vectors form a left-handed frame (winding must be flipped).
    flip: bool,
}

/// One chunk's output; `shared_tail` vertices at its end repeat the next chunk's first ones.
/// Kept by [`Extractor`] between calls together with the chunk's scratch planes.
#[derive(Debug, Default)]
pub(super) struct Chunk {
    positions: Vec<[f32; 3]>,
    normals: Vec<[f32; 3]>,
    indices: Vec<u32>,
    shared_tail: usize,
    scratch: Scratch,
}

/// Per-chunk plane buffers: point classes, row summaries and edge-to-vertex caches.
#[derive(Debug, Default)]
struct Scratch {
    cls_lo: Vec<u8>,
    cls_hi: Vec<u8>,
    rows_lo: Vec<u8>,
    rows_hi: Vec<u8>,
    xe_lo: Vec<u32>,
    ye_lo: Vec<u32>,
    xe_hi: Vec<u32>,
    ye_hi: Vec<u32>,
    ze: Vec<u32>,
}

/// Reusable working memory of the extractor: chunk outputs and scratch planes. Reusing one across
/// extractions (an iso-value slider, trajectory playback) avoids fresh allocations per call.
#[derive(Debug, Default)]
pub struct Extractor {
    chunks: Vec<Chunk>,
}

/// Extracts the surface of `sign * value = sign * iso`, with inside where `sign * value > sign * iso`.
pub(super) fn extract_signed(grid: &Grid3, iso: f32, sign: f32) -> MeshData {
    let mut mesh = MeshData::default();
    Extractor::default().extract_signed_into(grid, iso, sign, &mut mesh);
    mesh
}

impl Extractor {
    /// An extractor with no memory reserved yet.
    pub fn new() -> Extractor {
        Extractor::default()
    }

    /// Like [`super::extract`], writing into `out` (its previous contents are replaced, its
    /// capacity reused).
    pub fn extract_into(&mut self, grid: &Grid3, iso: f32, out: &mut MeshData) {
        self.extract_signed_into(grid, iso, 1.0, out);
    }

    /// Like [`super::extract_below`], writing into `out`.
    pub fn extract_below_into(&mut self, grid: &Grid3, iso: f32, out: &mut MeshData) {
        self.extract_signed_into(grid, iso, -1.0, out);
    }

    fn extract_signed_into(&mut self, grid: &Grid3, iso: f32, sign: f32, out: &mut MeshData) {
        out.positions_angstrom.clear();
        out.normals.clear();
        out.indices.clear();
        out.values.clear();
        out.colors_rgba8.clear();
        let Some(frame) = Extraction::new(grid, iso, sign) else {
            return;
        };
        let layers = frame.dims[2] - 1;
        let threads = rayon::current_num_threads().max(1);
        let per_chunk = layers.div_ceil(threads * 4).max(4);
        let starts: Vec<usize> = (0..layers).step_by(per_chunk).collect();
        self.chunks.resize_with(starts.len(), Chunk::default);
        self.chunks
            .par_iter_mut()
            .zip(&starts)
            .for_each(|(chunk, &k0)| run_chunk(&frame, k0, (k0 + per_chunk).min(layers), chunk));
        merge(&self.chunks, out);
    }
}

impl<'a> Extraction<'a> {
    /// The extraction setup, or `None` when the grid cannot have a surface (see [`super::extract`]).
    fn new(grid: &'a Grid3, iso: f32, sign: f32) -> Option<Extraction<'a>> {
        let lattice = &grid.lattice;
        let dims = lattice.dims;
        let n_points = lattice.n_points();
        if dims.iter().any(|&d| d < 2) || grid.values.len() != n_points || !iso.is_finite() {
            return None;
        }
        // Vertex indices are u32: three edges per point must fit.
        if n_points > (u32::MAX as usize) / 3 {
            return None;
        }
        let (gradient_to_world, det) = inverse_transpose(lattice.steps_bohr)?;
        Some(Extraction {
            values: &grid.values,
            dims,
            sign,
            iso: sign * iso,
            origin_angstrom: angstrom_from_bohr3(lattice.origin_bohr),
            steps_angstrom: lattice.steps_bohr.map(angstrom_from_bohr3),
            gradient_to_world: normalised_f32(gradient_to_world),
            flip: det < 0.0,
        })
    }
}

/// Concatenates the chunks (dropping each shared tail) into `mesh`, copying in parallel.
fn merge(chunks: &[Chunk], mesh: &mut MeshData) {
    let last = chunks.len().saturating_sub(1);
    let kept: Vec<usize> = chunks
        .iter()
        .enumerate()
        .map(|(i, c)| {
            if i == last {
                c.positions.len()
            } else {
                c.positions.len() - c.shared_tail
            }
        })
        .collect();
    let n_vertices: usize = kept.iter().sum();
    let n_indices: usize = chunks.iter().map(|c| c.indices.len()).sum();
    mesh.positions_angstrom.resize(n_vertices, [0.0; 3]);
    mesh.normals.resize(n_vertices, [0.0; 3]);
    mesh.indices.resize(n_indices, 0);
    // Carve the outputs into one disjoint piece per chunk.
    let mut pieces = Vec::with_capacity(chunks.len());
    let (mut pos, mut nor, mut idx) = (
        mesh.positions_angstrom.as_mut_slice(),
        mesh.normals.as_mut_slice(),
        mesh.indices.as_mut_slice(),
    );
    let mut offset = 0u32;
    for (c, &keep) in chunks.iter().zip(&kept) {
        let (p, rest_p) = std::mem::take(&mut pos).split_at_mut(keep);
        let (n, rest_n) = std::mem::take(&mut nor).split_at_mut(keep);
        let (i, rest_i) = std::mem::take(&mut idx).split_at_mut(c.indices.len());
        (pos, nor, idx) = (rest_p, rest_n, rest_i);
        pieces.push((c, keep, offset, p, n, i));
        offset += keep as u32;
    }
    pieces.into_par_iter().for_each(|(c, keep, offset, p, n, i)| {
        p.copy_from_slice(&c.positions[..keep]);
        n.copy_from_slice(&c.normals[..keep]);
        for (dst, &src) in i.iter_mut().zip(&c.indices) {
            *dst = src + offset;
        }
    });
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

/// The matrix scaled so its largest entry is 1, in f32 (directions only; avoids f32 overflow for
/// tiny steps).
fn normalised_f32(m: [[f64; 3]; 3]) -> [[f32; 3]; 3] {
    let big = m.iter().flatten().fold(0.0f64, |a, &x| a.max(x.abs()));
    let scale = if big > 0.0 && big.is_finite() { 1.0 / big } else { 1.0 };
    m.map(|row| row.map(|x| (x * scale) as f32))
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

    /// Lattice-index gradient at point `p`.
    #[inline]
    fn gradient(&self, p: [usize; 3]) -> [f32; 3] {
        let [nx, ny, nz] = self.dims;
        // Fast path away from the border: plain central differences, accepted when finite (a
        // finite result means every value used was finite).
        if p[0] > 0 && p[1] > 0 && p[2] > 0 && p[0] + 1 < nx && p[1] + 1 < ny && p[2] + 1 < nz {
            let plane = nx * ny;
            let c = p[0] + nx * (p[1] + ny * p[2]);
            let v = self.values;
            let h = 0.5 * self.sign;
            let g = [
                h * (v[c + 1] - v[c - 1]),
                h * (v[c + nx] - v[c - nx]),
                h * (v[c + plane] - v[c - plane]),
            ];
            if g.iter().all(|x| x.is_finite()) {
                return g;
            }
        }
        [0, 1, 2].map(|axis| self.derivative(axis, p) as f32)
    }

    /// Makes the vertex on the edge from point `p` one step along `axis`.
    #[inline]
    fn vertex(&self, p: [usize; 3], axis: usize, out: &mut Chunk) -> u32 {
        let mut q = p;
        q[axis] += 1;
        let va = self.value(p[0], p[1], p[2]);
        let vb = self.value(q[0], q[1], q[2]);
        let t = (self.iso - va) / (vb - va);
        let t = if t.is_finite() { t.clamp(0.0, 1.0) } else { 0.5 };
        let mut f = [p[0] as f64, p[1] as f64, p[2] as f64];
        f[axis] += f64::from(t);
        let s = &self.steps_angstrom;
        let o = &self.origin_angstrom;
        let position = [
            (o[0] + f[0] * s[0][0] + f[1] * s[1][0] + f[2] * s[2][0]) as f32,
            (o[1] + f[0] * s[0][1] + f[1] * s[1][1] + f[2] * s[2][1]) as f32,
            (o[2] + f[0] * s[0][2] + f[1] * s[1][2] + f[2] * s[2][2]) as f32,
        ];
        let ga = self.gradient(p);
        let gb = self.gradient(q);
        let g = [
            ga[0] + t * (gb[0] - ga[0]),
            ga[1] + t * (gb[1] - ga[1]),
            ga[2] + t * (gb[2] - ga[2]),
        ];
        let m = &self.gradient_to_world;
        let w = [
            m[0][0] * g[0] + m[0][1] * g[1] + m[0][2] * g[2],
            m[1][0] * g[0] + m[1][1] * g[1] + m[1][2] * g[2],
            m[2][0] * g[0] + m[2][1] * g[1] + m[2][2] * g[2],
        ];
        let len2 = w[0] * w[0] + w[1] * w[1] + w[2] * w[2];
        // Outward is down the gradient of the signed value.
        let normal = if len2 > f32::MIN_POSITIVE && len2.is_finite() {
            let inv = -1.0 / len2.sqrt();
            [w[0] * inv, w[1] * inv, w[2] * inv]
        } else {
            // Flat or broken gradient: point along the edge, from the inside end to the outside end.
            let e = s[axis];
            let el = (e[0] * e[0] + e[1] * e[1] + e[2] * e[2]).sqrt().max(f64::MIN_POSITIVE);
            let dir = if va > self.iso { 1.0 } else { -1.0 };
            e.map(|x| (dir * x / el) as f32)
        };
        let index = out.positions.len() as u32;
        out.positions.push(position);
        out.normals.push(normal);
        index
    }

    /// Creates vertices on the crossed x- and y-edges of plane `k`, point by point (x-edge first).
    fn plane_vertices(&self, k: usize, cls: &[u8], rows: &[u8], xe: &mut [u32], ye: &mut [u32], out: &mut Chunk) {
        let [nx, ny, _] = self.dims;
        for j in 0..ny {
            let row = j * nx;
            let next_row = rows.get(j + 1).copied().unwrap_or(rows[j]);
            if uniform(rows[j], next_row) {
                continue;
            }
            let here = &cls[row..row + nx];
            // The next row, or this row again on the last one (no y-edges: never crossed).
            let above = if j + 1 < ny { &cls[row + nx..row + 2 * nx] } else { here };
            // Crossings as bit masks over blocks of 64 points: no unpredictable branch per edge.
            for i0 in (0..nx).step_by(64) {
                let i1 = (i0 + 64).min(nx);
                let mut mx = 0u64;
                let mut my = 0u64;
                for i in i0..i1 {
                    let a = here[i];
                    let b = if i + 1 < nx { here[i + 1] } else { a };
                    let c = above[i];
                    mx |= u64::from(crossed(a, b)) << (i - i0);
                    my |= u64::from(crossed(a, c)) << (i - i0);
                }
                let mut m = mx | my;
                while m != 0 {
                    let t = m.trailing_zeros() as usize;
                    m &= m - 1;
                    let i = i0 + t;
                    if mx >> t & 1 != 0 {
                        xe[row + i] = self.vertex([i, j, k], 0, out);
                    }
                    if my >> t & 1 != 0 {
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
            for i0 in (0..nx).step_by(64) {
                let i1 = (i0 + 64).min(nx);
                let mut m = 0u64;
                for i in i0..i1 {
                    m |= u64::from(crossed(row_lo[i], row_hi[i])) << (i - i0);
                }
                while m != 0 {
                    let i = i0 + m.trailing_zeros() as usize;
                    m &= m - 1;
                    ze[i + j * nx] = self.vertex([i, j, k], 2, out);
                }
            }
        }
    }
}

/// True when an edge between points of classes `a` and `b` carries a vertex.
#[inline]
fn crossed(a: u8, b: u8) -> bool {
    (a | b) & NOT_FINITE == 0 && (a ^ b) & INSIDE != 0
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
fn run_chunk(f: &Extraction<'_>, k0: usize, k1: usize, out: &mut Chunk) {
    let [nx, ny, _] = f.dims;
    let plane = nx * ny;
    out.positions.clear();
    out.normals.clear();
    out.indices.clear();
    out.shared_tail = 0;
    // Generous reservations: untouched capacity costs address space, not memory.
    let guess = (plane * (k1 - k0 + 1) / 4).max(1024);
    out.positions.reserve(guess);
    out.normals.reserve(guess);
    out.indices.reserve(guess * 6);
    let Scratch {
        mut cls_lo,
        mut cls_hi,
        mut rows_lo,
        mut rows_hi,
        mut xe_lo,
        mut ye_lo,
        mut xe_hi,
        mut ye_hi,
        mut ze,
    } = std::mem::take(&mut out.scratch);
    // Caches are written before they are read, so stale contents never matter.
    for v in [&mut cls_lo, &mut cls_hi] {
        v.resize(plane, 0);
    }
    for v in [&mut rows_lo, &mut rows_hi] {
        v.resize(ny, 0);
    }
    for v in [&mut xe_lo, &mut ye_lo, &mut xe_hi, &mut ye_hi, &mut ze] {
        v.resize(plane, 0);
    }
    let lookup = EdgeLookup::new(nx);
    let table = &*CASES;

    f.classify_plane(k0, &mut cls_lo, &mut rows_lo);
    f.plane_vertices(k0, &cls_lo, &rows_lo, &mut xe_lo, &mut ye_lo, out);
    for k in k0..k1 {
        f.classify_plane(k + 1, &mut cls_hi, &mut rows_hi);
        f.z_vertices(k, &cls_lo, &cls_hi, (&rows_lo, &rows_hi), &mut ze, out);
        let before_top = out.positions.len();
        f.plane_vertices(k + 1, &cls_hi, &rows_hi, &mut xe_hi, &mut ye_hi, out);
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
            let (l0, l1) = (&cls_lo[row..row + nx], &cls_lo[row + nx..row + 2 * nx]);
            let (h0, h1) = (&cls_hi[row..row + nx], &cls_hi[row + nx..row + 2 * nx]);
            for i in 0..nx - 1 {
                let b = row + i;
                let c = [l0[i], l0[i + 1], l1[i], l1[i + 1], h0[i], h0[i + 1], h1[i], h1[i + 1]];
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
                    let vertex = |e: u8| {
                        let e = usize::from(e);
                        caches[usize::from(lookup.cache[e])][b + lookup.offset[e]]
                    };
                    let v = [vertex(tri[0]), vertex(tri[1]), vertex(tri[2])];
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
    out.scratch = Scratch {
        cls_lo,
        cls_hi,
        rows_lo,
        rows_hi,
        xe_lo,
        ye_lo,
        xe_hi,
        ye_hi,
        ze,
    };
}
