//! Isosurfaces: marching cubes on [`Grid3`] lattices, closed where they meet the lattice's faces
//! ([`cap_faces`]), orbital lobes of both signs, cartoon meshes of
//! polymer backbones ([`cartoon`]), and mesh export.
//!
//! Called by the viewer (`app`, through `jobs`) to turn a computed lattice into a [`MeshData`] for
//! `render`, by the `orbitfield surface` command, by the tests and by the benchmarks. The CPU
//! extractor here is the reference; the GPU pass in `compute::wgpu::marching_cubes` uses the same case tables
//! ([`tables`]) and is tested against it. No egui, wgpu or winit here.
//!
//! Vertices are world positions in Angstrom (the lattice's origin and steps are in bohr and go
//! through `model::units`), one per crossed lattice edge, shared by every triangle using it. Normals
//! come from the field's gradient (central differences on the lattice, one-sided at the border,
//! mapped through the lattice axes) and point outside: away from the region above the level.
//! Triangles wind counter-clockwise seen from outside.

mod caps;
pub mod cartoon;
pub mod export;
mod marching;
pub mod tables;

pub use caps::cap_faces;
pub use marching::Extractor;

use crate::model::Grid3;

/// A triangle mesh on the CPU, ready for upload or export.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct MeshData {
    pub positions_angstrom: Vec<[f32; 3]>,
    /// Unit outward normals, one per vertex.
    pub normals: Vec<[f32; 3]>,
    /// Three vertex indices per triangle, counter-clockwise seen from outside.
    pub indices: Vec<u32>,
    /// A scalar per vertex (for example a potential sampled at the vertices), coloured through the
    /// mesh's colormap and range; empty when the mesh has none.
    pub values: Vec<f32>,
    /// An sRGB colour per vertex with alpha (categorical colourings such as secondary structure or
    /// chain); empty when the mesh is drawn in one colour.
    pub colors_rgba8: Vec<[u8; 4]>,
}

/// The two lobes of a signed field (an orbital): the surface at `+|iso|` around the positive
/// region and the one at `-|iso|` around the negative region, each with normals pointing away from
/// its own lobe.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct TwoSignMesh {
    pub positive: MeshData,
    pub negative: MeshData,
}

/// Extracts the isosurface `value = iso` of `grid`; inside is where the value is above `iso`.
///
/// Returns an empty mesh for a lattice with fewer than two points on an axis, a value count that
/// does not match the lattice, degenerate step vectors, or a non-finite `iso`. Cells touching a
/// non-finite value produce no triangles.
pub fn extract(grid: &Grid3, iso: f32) -> MeshData {
    marching::extract_signed(grid, iso, 1.0)
}

/// Extracts the surface around the region where the value is below `iso` (normals point up the
/// gradient, away from that region).
pub fn extract_below(grid: &Grid3, iso: f32) -> MeshData {
    marching::extract_signed(grid, iso, -1.0)
}

/// As [`extract`] (a positive or zero `iso`) or [`extract_below`] (a negative one), closed by
/// [`cap_faces`] where the region meets the lattice's faces: what the viewer and `orbitfield
/// surface` draw.
pub fn extract_capped(grid: &Grid3, iso: f32) -> MeshData {
    let sign = if iso >= 0.0 { 1.0 } else { -1.0 };
    let mut mesh = marching::extract_signed(grid, iso, sign);
    if !mesh.is_empty() {
        mesh.append(&cap_faces(grid, iso, sign));
    }
    mesh
}

/// Both lobes of a signed field at `+|iso|` and `-|iso|`.
pub fn extract_two_sign(grid: &Grid3, iso: f32) -> TwoSignMesh {
    let level = iso.abs();
    TwoSignMesh {
        positive: extract(grid, level),
        negative: extract_below(grid, -level),
    }
}

impl MeshData {
    /// Number of triangles.
    pub fn triangle_count(&self) -> usize {
        self.indices.len() / 3
    }

    /// True when the mesh has no triangles.
    pub fn is_empty(&self) -> bool {
        self.indices.is_empty()
    }

    fn triangle(&self, t: &[u32]) -> Option<[[f64; 3]; 3]> {
        let p = |i: u32| self.positions_angstrom.get(i as usize).map(|v| v.map(f64::from));
        Some([p(*t.first()?)?, p(*t.get(1)?)?, p(*t.get(2)?)?])
    }

    /// Total triangle area in square Angstrom.
    pub fn area_angstrom2(&self) -> f64 {
        self.indices
            .chunks_exact(3)
            .filter_map(|t| self.triangle(t))
            .map(|[a, b, c]| {
                let n = cross(sub(b, a), sub(c, a));
                0.5 * (n[0] * n[0] + n[1] * n[1] + n[2] * n[2]).sqrt()
            })
            .sum()
    }

    /// Signed volume enclosed by the mesh in cubic Angstrom (divergence theorem); positive for a
    /// closed surface wound counter-clockwise seen from outside.
    pub fn enclosed_volume_angstrom3(&self) -> f64 {
        self.indices
            .chunks_exact(3)
            .filter_map(|t| self.triangle(t))
            .map(|[a, b, c]| {
                let n = cross(b, c);
                (a[0] * n[0] + a[1] * n[1] + a[2] * n[2]) / 6.0
            })
            .sum()
    }

    /// Edges not shared by exactly two triangles once vertices at the same position (to 1e-4 Å)
    /// are taken as one: zero for a closed surface, such as a capped lobe. Triangles that collapse
    /// to a line or a point are left out.
    pub fn open_edges(&self) -> usize {
        let key = |p: &[f32; 3]| p.map(|x| (f64::from(x) * 1e4).round() as i64);
        let mut ids: std::collections::HashMap<[i64; 3], usize> = std::collections::HashMap::new();
        let welded: Vec<usize> = self
            .positions_angstrom
            .iter()
            .map(|p| {
                let n = ids.len();
                *ids.entry(key(p)).or_insert(n)
            })
            .collect();
        let mut uses: std::collections::HashMap<(usize, usize), u32> = std::collections::HashMap::new();
        for t in self.indices.chunks_exact(3) {
            let Some(w) = t
                .iter()
                .map(|&i| welded.get(i as usize).copied())
                .collect::<Option<Vec<_>>>()
            else {
                continue;
            };
            let [a, b, c] = [w[0], w[1], w[2]];
            if a == b || b == c || a == c {
                continue;
            }
            for (x, y) in [(a, b), (b, c), (c, a)] {
                *uses.entry((x.min(y), x.max(y))).or_default() += 1;
            }
        }
        uses.values().filter(|&&n| n != 2).count()
    }

    /// Appends another mesh (indices shifted past this mesh's vertices).
    pub fn append(&mut self, other: &MeshData) {
        let offset = self.positions_angstrom.len() as u32;
        self.positions_angstrom.extend_from_slice(&other.positions_angstrom);
        self.normals.extend_from_slice(&other.normals);
        self.indices.extend(other.indices.iter().map(|&i| i + offset));
        // Per-vertex data survives only when both meshes carry it (or this one is still empty).
        let appended_to_empty = offset == 0;
        if appended_to_empty || self.values.len() == offset as usize {
            self.values.extend_from_slice(&other.values);
        }
        if appended_to_empty || self.colors_rgba8.len() == offset as usize {
            self.colors_rgba8.extend_from_slice(&other.colors_rgba8);
        }
        if self.values.len() != self.positions_angstrom.len() {
            self.values.clear();
        }
        if self.colors_rgba8.len() != self.positions_angstrom.len() {
            self.colors_rgba8.clear();
        }
    }
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
