//! The cartoon as compact per-ring inputs for a compute pass that writes the mesh on the render
//! device (`render::cartoon_compute`, `shaders/cartoon.wgsl`).
//!
//! Owns [`CartoonRings`] and the `#[repr(C)]` records it holds. [`rings_into`] does the CPU half of
//! [`super::build_into`]: the same pieces, splines, frames and sections, but instead of writing every
//! vertex it keeps one [`CartoonRecord`] per ring (centre, tangent, side vector, superellipse
//! parameters, colour, value) and per base-slab box, a [`CartoonPiece`] per tube or set of boxes with
//! the offsets of its vertices and triangles in the mesh, and the rings that close a band. The pass
//! then writes exactly the mesh [`super::build`] makes, vertex for vertex and index for index (the
//! tests compare the two), about 7 times fewer bytes than the mesh itself crossing to the device.
//! Called by the render pass's owner (the viewer's cartoon representations), the benchmark and the
//! tests. Nothing here knows wgpu.

use super::{CartoonParams, Piece, Ring, Segment, SlabBox, nucleic_rings, pieces_of, protein_rings, sanitized};
use rayon::prelude::*;

/// One ring of a tube, or one box, as the compute pass reads it (64 bytes). Twin: `Record` in
/// `shaders/cartoon.wgsl`.
///
/// A ring: `center`, the unit `tangent` and `side` vectors of its frame, the section's half-width
/// `a` (along the side vector), half-thickness `b` and exponent `e`. A box: its centre, its first
/// two unit axes in `tangent` and `side` (the third is their cross product) and its half extents
/// in `a`, `b`, `e`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CartoonRecord {
    pub center_angstrom: [f32; 3],
    pub a_angstrom: f32,
    pub tangent: [f32; 3],
    pub b_angstrom: f32,
    pub side: [f32; 3],
    pub e: f32,
    /// RGBA8 (little-endian bytes r, g, b, a), alpha forced to 255 (drawn as it is).
    pub color: u32,
    pub value: f32,
    /// Bit 0: normals along minus the tangent (the flat faces of an arrowhead's step).
    pub flags: u32,
    pub pad: u32,
}

/// [`CartoonPiece::kind`] of a tube (start cap, rings, end cap).
pub const PIECE_TUBE: u32 = 0;
/// [`CartoonPiece::kind`] of a set of boxes (24 vertices, 12 triangles each).
pub const PIECE_BOXES: u32 = 1;

/// One drawable piece: where its records, bands, vertices and triangles are. Twin: `Piece` in
/// `shaders/cartoon.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CartoonPiece {
    pub kind: u32,
    pub first_record: u32,
    pub n_records: u32,
    /// First entry in [`CartoonRings::bands`] and how many (tubes).
    pub first_band: u32,
    pub n_bands: u32,
    /// Index of the piece's first vertex and first triangle in the whole mesh.
    pub first_vertex: u32,
    pub first_triangle: u32,
    pub pad: u32,
}

/// Everything the compute pass needs for one cartoon; reused from frame to frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CartoonRings {
    /// Vertices around each ring.
    pub sides: u32,
    /// `cos, sin` of each ring vertex's angle (`sides` of them), as the CPU mesh uses them.
    pub angles: Vec<[f32; 2]>,
    pub pieces: Vec<CartoonPiece>,
    pub records: Vec<CartoonRecord>,
    /// Per band of a tube (in order), the index within its piece of the ring that closes it (the
    /// band joins that ring to the one before).
    pub bands: Vec<u32>,
    pub n_vertices: u64,
    pub n_indices: u64,
    /// The values were asked for (`CartoonParams::with_values`).
    pub with_values: bool,
}

impl CartoonRings {
    /// Triangles of the mesh.
    pub fn n_triangles(&self) -> u64 {
        self.n_indices / 3
    }
}

/// Packs a colour for the device, alpha 255 (the mesh is drawn with its own opacity).
fn pack(c: [u8; 4]) -> u32 {
    u32::from_le_bytes([c[0], c[1], c[2], 255])
}

fn ring_record(r: &Ring) -> CartoonRecord {
    CartoonRecord {
        center_angstrom: r.center.to_array(),
        a_angstrom: r.profile.a,
        tangent: r.tangent.to_array(),
        b_angstrom: r.profile.b,
        side: r.side.to_array(),
        e: r.profile.e,
        color: pack(r.color),
        value: r.value,
        // Flat rings face back along the tangent (the only flat normal `trace_rings` makes).
        flags: u32::from(r.flat.is_some()),
        pad: 0,
    }
}

fn box_record(b: &SlabBox) -> CartoonRecord {
    CartoonRecord {
        center_angstrom: b.center.to_array(),
        a_angstrom: b.half[0],
        tangent: b.axes[0].to_array(),
        b_angstrom: b.half[1],
        side: b.axes[1].to_array(),
        e: b.half[2],
        color: pack(b.color),
        value: b.value,
        flags: 0,
        pad: 0,
    }
}

/// The compute pass's inputs for all segments (in order), into `out` (reusing its buffers): the
/// records and bands of each piece are made in parallel (rayon) into disjoint parts of `out`, so
/// the result is the same for any thread count.
pub fn rings_into(segments: &[Segment], params: &CartoonParams, out: &mut CartoonRings) {
    let params = sanitized(params);
    let (pieces, counts) = pieces_of(segments, &params);
    let sizes: Vec<(usize, usize)> = pieces
        .par_iter()
        .map(|p| match p {
            Piece::Boxes { boxes } => (boxes.len(), 0),
            tube => {
                let (rings, bands) = tube.ring_counts(&params);
                (rings, bands)
            }
        })
        .collect();
    let n_records: usize = sizes.iter().map(|s| s.0).sum();
    let n_bands: usize = sizes.iter().map(|s| s.1).sum();
    out.sides = params.sides as u32;
    out.angles.clear();
    out.angles
        .extend(super::section_angles(params.sides).iter().map(|&(c, s)| [c, s]));
    out.with_values = params.with_values;
    out.pieces.clear();
    let (mut record, mut band, mut vertex, mut index) = (0usize, 0usize, 0u64, 0u64);
    for ((piece, &(nr, nb)), &(nv, ni)) in pieces.iter().zip(&sizes).zip(&counts) {
        let kind = match piece {
            Piece::Boxes { .. } => PIECE_BOXES,
            _ => PIECE_TUBE,
        };
        let word = |x: u64| u32::try_from(x).unwrap_or(u32::MAX);
        out.pieces.push(CartoonPiece {
            kind,
            first_record: word(record as u64),
            n_records: word(nr as u64),
            first_band: word(band as u64),
            n_bands: word(nb as u64),
            first_vertex: word(vertex),
            first_triangle: word(index / 3),
            pad: 0,
        });
        record += nr;
        band += nb;
        vertex += nv as u64;
        index += ni as u64;
    }
    out.n_vertices = vertex;
    out.n_indices = index;
    // Every element is written below: keep what the buffers hold and fill only a new tail.
    out.records.truncate(n_records);
    out.records.resize(n_records, CartoonRecord::default());
    out.bands.truncate(n_bands);
    out.bands.resize(n_bands, 0);
    let mut jobs = Vec::with_capacity(pieces.len());
    {
        let (mut rec, mut bnd) = (out.records.as_mut_slice(), out.bands.as_mut_slice());
        for (piece, &(nr, nb)) in pieces.iter().zip(&sizes) {
            let (r, rest) = rec.split_at_mut(nr.min(rec.len()));
            rec = rest;
            let (b, rest) = bnd.split_at_mut(nb.min(bnd.len()));
            bnd = rest;
            jobs.push((piece, r, b));
        }
    }
    jobs.into_par_iter().for_each(|(piece, records, bands)| {
        let rings = match piece {
            Piece::ProteinTube(res) => protein_rings(res, &params),
            Piece::NucleicTube(res) => nucleic_rings(res, &params),
            Piece::Boxes { boxes } => {
                for (slot, b) in records.iter_mut().zip(boxes) {
                    *slot = box_record(b);
                }
                return;
            }
        };
        for (slot, r) in records.iter_mut().zip(&rings) {
            *slot = ring_record(r);
        }
        let closing = rings
            .iter()
            .enumerate()
            .skip(1)
            .filter(|(_, r)| r.joined)
            .map(|(k, _)| k as u32);
        for (slot, k) in bands.iter_mut().zip(closing) {
            *slot = k;
        }
    });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::super::{BaseSlab, NucleicResidue, ProteinResidue, Shape, Style, build};
    use super::*;

    /// A host model of the compute pass (the shader's index arithmetic, written again here): the
    /// mesh's vertex positions at ring vertices and all indices from the records alone.
    fn indices_from_rings(r: &CartoonRings) -> Vec<u32> {
        let s = r.sides;
        let after = |j: u32| if j + 1 == s { 0 } else { j + 1 };
        let mut out = Vec::new();
        for p in &r.pieces {
            let base = p.first_vertex;
            if p.kind == PIECE_BOXES {
                for b in 0..p.n_records {
                    for face in 0..6 {
                        let f = base + b * 24 + face * 4;
                        out.extend([f, f + 1, f + 2, f, f + 2, f + 3]);
                    }
                }
                continue;
            }
            let ring = |k: u32| base + 1 + s + k * s;
            for j in 0..s {
                out.extend([base, base + 1 + after(j), base + 1 + j]);
            }
            for &k in &r.bands[p.first_band as usize..(p.first_band + p.n_bands) as usize] {
                let (prev, here) = (ring(k - 1), ring(k));
                for j in 0..s {
                    let (a, b, c, d) = (prev + j, prev + after(j), here + after(j), here + j);
                    out.extend([a, b, c, a, c, d]);
                }
            }
            let centre = ring(p.n_records);
            for j in 0..s {
                out.extend([centre, centre + 1 + j, centre + 1 + after(j)]);
            }
        }
        out
    }

    fn chain(n: usize, seed: u32) -> Vec<ProteinResidue> {
        let mut x = seed;
        let mut next = || {
            x ^= x << 13;
            x ^= x >> 17;
            x ^= x << 5;
            x
        };
        let shapes = [Shape::Coil, Shape::Helix, Shape::Strand];
        (0..n)
            .map(|k| ProteinResidue {
                trace: [3.8 * k as f32, (next() % 3) as f32, (next() % 2) as f32],
                guide: (next() % 5 != 0).then(|| [3.8 * k as f32, 1.0, 1.2 + (next() % 3) as f32]),
                shape: shapes[(next() % 3) as usize],
                color: [(next() % 256) as u8, 7, 9, 200],
                value: k as f32,
            })
            .collect()
    }

    #[test]
    fn records_layout_and_counts_match_the_cpu_mesh() {
        assert_eq!(std::mem::size_of::<CartoonRecord>(), 64);
        assert_eq!(std::mem::size_of::<CartoonPiece>(), 32);
        let nucleic: Vec<NucleicResidue> = (0..5)
            .map(|k| {
                let z = 3.4 * k as f32;
                NucleicResidue {
                    trace: [9.0, k as f32, z],
                    base: Some(BaseSlab {
                        root: [6.0, k as f32, z],
                        tip: [1.0, k as f32, z],
                        plane: [6.0, k as f32 + 1.0, z],
                    }),
                    color: [0, 0, k as u8, 255],
                    value: k as f32,
                }
            })
            .collect();
        for (trial, style) in Style::ALL.into_iter().enumerate() {
            let segments = vec![
                Segment::Protein(chain(30, 0x1234_5678 + trial as u32)),
                Segment::Nucleic(nucleic.clone()),
                Segment::Protein(chain(3, 0x9e37_79b9 + trial as u32)),
            ];
            let params = CartoonParams {
                style,
                segments_per_residue: 3 + trial,
                ..CartoonParams::default()
            };
            let mesh = build(&segments, &params);
            let mut rings = CartoonRings::default();
            rings_into(&segments, &params, &mut rings);
            assert_eq!(rings.n_vertices as usize, mesh.positions_angstrom.len());
            assert_eq!(rings.n_indices as usize, mesh.indices.len());
            assert_eq!(indices_from_rings(&rings), mesh.indices, "{style:?}");
            // Ring centres are the start caps' centre vertices.
            for p in rings.pieces.iter().filter(|p| p.kind == PIECE_TUBE) {
                let first = rings.records[p.first_record as usize];
                assert_eq!(mesh.positions_angstrom[p.first_vertex as usize], first.center_angstrom);
            }
            // Again into the larger buffers of the first: the same inputs as fresh.
            let mut again = rings.clone();
            rings_into(&segments[..1], &params, &mut again);
            let mut fresh = CartoonRings::default();
            rings_into(&segments[..1], &params, &mut fresh);
            assert_eq!(again, fresh);
        }
    }
}
