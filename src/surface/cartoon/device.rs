//! The cartoon as compact inputs for the compute passes that write the mesh on the render device
//! (`render::cartoon_compute`, `shaders/cartoon.wgsl`).
//!
//! Owns [`CartoonRings`] and the `#[repr(C)]` records it holds. [`rings_into`] does the CPU half of
//! [`super::build_into`], per residue rather than per ring: for a protein tube one
//! [`CartoonResidue`] per residue (the smoothed trace point, the unit side vector from the carbonyl
//! already made perpendicular to the chain and sign-consistent along it, the section code, the
//! arrowhead marks, colour, value and the index of its first ring), and a [`CartoonPiece`] per tube
//! or set of boxes with the offsets of its rings, bands, vertices and triangles, which depend only
//! on the residue counts and the codes. The first device pass evaluates the spline, the frames and
//! the sections of every ring from these (the rings never cross the bus); the next passes write
//! exactly the mesh [`super::build`] makes, vertex for vertex and index for index (the tests
//! compare the two). Where the CPU carries a frame from ring to ring (a sample without a direction,
//! a residue without a carbonyl: a terminal residue with OT1/OT2), the device looks back along the
//! piece for it. Pieces the per-residue path does not take keep the per-ring path: nucleic-acid
//! tubes (their side vector is carried from ring to ring all along), base slabs, and protein tubes
//! with long runs of residues lacking a usable carbonyl (CA-only models) or with consecutive trace
//! points closer than 1e-3 Angstrom; the CPU writes one [`CartoonRecord`] per ring or box of
//! those, as [`super::build`] makes them. Called by the render pass's owner (the viewer's
//! cartoon representations), the benchmark and the tests. Nothing here knows wgpu.

use super::{
    CartoonParams, Piece, Ring, Segment, SlabBox, TraceInput, Vec3, nucleic_rings, pieces_of, protein_input, sanitized,
    trace_rings,
};
use rayon::prelude::*;

/// One ring of a tube, or one box, as the compute passes read it (64 bytes). Twin: `Record` in
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

/// One residue of a protein tube on the per-residue path (40 bytes). Twin: `Residue` in
/// `shaders/cartoon.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CartoonResidue {
    /// The spline's control point: the trace point, smoothed inside strands.
    pub point_angstrom: [f32; 3],
    /// Index within its piece of the first ring of the residue's interval to the next residue.
    pub first_ring: u32,
    /// Unit side vector from the carbonyl, perpendicular to the chain's local direction and
    /// flipped to follow the previous residue's.
    pub side: [f32; 3],
    /// RGBA8, alpha forced to 255.
    pub color: u32,
    pub value: f32,
    /// Bits 0-1: the section ([`CartoonRings::sections`]); [`RESIDUE_ARROW`],
    /// [`RESIDUE_AFTER_ARROW`], [`RESIDUE_NO_SIDE`].
    pub flags: u32,
}

/// [`CartoonResidue::flags`]: the interval to the next residue holds an arrowhead.
pub const RESIDUE_ARROW: u32 = 4;
/// [`CartoonResidue::flags`]: the previous residue's interval held an arrowhead (this section
/// starts from the arrow's point).
pub const RESIDUE_AFTER_ARROW: u32 = 8;
/// [`CartoonResidue::flags`]: no usable carbonyl, no side vector of its own (`side` is zero).
pub const RESIDUE_NO_SIDE: u32 = 16;

/// Most spline samples in a row without a side vector of their own (carried from the sample
/// before) a tube on the per-residue path may have; the device looks back at most 64 samples
/// (`MAX_LOOK_BACK` in `shaders/cartoon.wgsl`) for the side it carries.
const MAX_CARRIED_SAMPLES: usize = 48;

/// [`CartoonPiece::kind`] of a tube whose rings the CPU wrote (start cap, rings, end cap).
pub const PIECE_TUBE: u32 = 0;
/// [`CartoonPiece::kind`] of a set of boxes (24 vertices, 12 triangles each).
pub const PIECE_BOXES: u32 = 1;
/// [`CartoonPiece::kind`] of a tube whose rings the device makes from its residues.
pub const PIECE_SPLINE: u32 = 2;

/// One drawable piece: where its inputs, rings, bands, vertices and triangles are (64 bytes).
/// Twin: `Piece` in `shaders/cartoon.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, Default, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CartoonPiece {
    pub kind: u32,
    /// First ring (or box) in the device's ring buffer, and how many.
    pub first_record: u32,
    pub n_records: u32,
    /// First band in the device's band buffer and how many (tubes).
    pub first_band: u32,
    pub n_bands: u32,
    /// Index of the piece's first vertex and first triangle in the whole mesh.
    pub first_vertex: u32,
    pub first_triangle: u32,
    /// [`PIECE_SPLINE`]: first entry in [`CartoonRings::residues`]; otherwise first entry in
    /// [`CartoonRings::host_records`].
    pub first_input: u32,
    /// [`PIECE_SPLINE`]: residues; otherwise first entry in [`CartoonRings::host_bands`].
    pub n_residues_or_first_band: u32,
    pub pad: [u32; 3],
    /// [`PIECE_SPLINE`]: the tangent a first ring without a direction of its own takes (first to
    /// last trace point).
    pub start_tangent: [f32; 3],
    pub pad2: u32,
}

/// Everything the compute passes need for one cartoon; reused from frame to frame.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CartoonRings {
    /// Vertices around each ring.
    pub sides: u32,
    /// `cos, sin` of each ring vertex's angle (`sides` of them), as the CPU mesh uses them.
    pub angles: Vec<[f32; 2]>,
    /// Spline samples per residue interval.
    pub segments_per_residue: u32,
    /// `s / segments_per_residue` for each sample `s` of an interval, as the CPU divides.
    pub samples_t: Vec<f32>,
    /// Straight segments between trace points (the trace style).
    pub linear: bool,
    pub arrow_width_factor: f32,
    /// `(a, b, e, 0)` of the protein sections by code (coil or tube, helix, strand), then the
    /// arrow's point.
    pub sections: [[f32; 4]; 4],
    pub pieces: Vec<CartoonPiece>,
    pub residues: Vec<CartoonResidue>,
    /// Rings and boxes of the pieces the CPU writes.
    pub host_records: Vec<CartoonRecord>,
    /// Per band of those tubes (in order), the index within its piece of the ring that closes it
    /// (the band joins that ring to the one before).
    pub host_bands: Vec<u32>,
    /// Rings and boxes, and bands, of all pieces (the device's ring and band buffers).
    pub n_records: u64,
    pub n_bands: u64,
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

    /// Bytes that cross to the device per frame (pieces, residues, host rings and bands).
    pub fn input_bytes(&self) -> usize {
        std::mem::size_of_val(self.pieces.as_slice())
            + std::mem::size_of_val(self.residues.as_slice())
            + std::mem::size_of_val(self.host_records.as_slice())
            + std::mem::size_of_val(self.host_bands.as_slice())
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

/// Closest two consecutive trace points of a per-residue tube may come (squared, Angstrom^2):
/// closer ones may leave spline samples without a direction, whose frames are carried from ring
/// to ring (the per-ring path).
const MIN_STEP2_ANGSTROM2: f32 = 1e-6;

/// One piece's inputs, made before the offsets are known.
enum Prepared {
    /// A protein tube on the per-residue path: its inputs, rings and bands.
    Spline {
        input: TraceInput,
        rings: usize,
        bands: usize,
    },
    /// Rings (or boxes) and bands the CPU made.
    Host {
        records: Vec<CartoonRecord>,
        bands: Vec<u32>,
    },
}

impl Prepared {
    fn of(piece: &Piece<'_>, params: &CartoonParams) -> Prepared {
        let host = |rings: Vec<Ring>| {
            let bands = rings
                .iter()
                .enumerate()
                .skip(1)
                .filter(|(_, r)| r.joined)
                .map(|(k, _)| k as u32)
                .collect();
            Prepared::Host {
                records: rings.iter().map(ring_record).collect(),
                bands,
            }
        };
        match piece {
            Piece::ProteinTube(res) => {
                let input = protein_input(res, params);
                let spaced = input
                    .points
                    .windows(2)
                    .all(|w| matches!(w, [a, b] if b.sub(*a).dot(b.sub(*a)) > MIN_STEP2_ANGSTROM2));
                // The longest run of residues without a side vector: all but the run's last
                // interval (and the piece's last sample) carry the side from sample to sample.
                let longest = input
                    .sides
                    .split(Option::is_some)
                    .map(<[Option<Vec3>]>::len)
                    .max()
                    .unwrap_or(0);
                let carried = longest * params.segments_per_residue + 1;
                if spaced && input.points.len() >= 2 && carried <= MAX_CARRIED_SAMPLES {
                    let arrows = input.arrows.iter().filter(|&&a| a).count();
                    let rings = (input.points.len() - 1) * params.segments_per_residue + 1 + 3 * arrows;
                    let bands = rings.saturating_sub(1 + 2 * arrows);
                    Prepared::Spline { input, rings, bands }
                } else {
                    host(trace_rings(&input, params))
                }
            }
            Piece::NucleicTube(res) => host(nucleic_rings(res, params)),
            Piece::Boxes { boxes } => Prepared::Host {
                records: boxes.iter().map(box_record).collect(),
                bands: Vec::new(),
            },
        }
    }

    /// (residues, host records, host bands, device records, device bands).
    fn sizes(&self) -> [usize; 5] {
        match self {
            Prepared::Spline { input, rings, bands } => [input.points.len(), 0, 0, *rings, *bands],
            Prepared::Host { records, bands } => [0, records.len(), bands.len(), records.len(), bands.len()],
        }
    }
}

/// The residues of a per-residue tube into `out`.
fn write_residues(input: &TraceInput, per: usize, out: &mut [CartoonResidue]) {
    let mut first_ring = 0usize;
    let mut after_arrow = false;
    for (k, slot) in out.iter_mut().enumerate() {
        let arrow = input.arrows.get(k).copied().unwrap_or(false);
        let code = input.codes.get(k).map_or(0, |&c| u32::from(c));
        let side = input.sides.get(k).copied().flatten();
        *slot = CartoonResidue {
            point_angstrom: input.points.get(k).map_or([0.0; 3], |p| p.to_array()),
            first_ring: u32::try_from(first_ring).unwrap_or(u32::MAX),
            side: side.map_or([0.0; 3], Vec3::to_array),
            color: pack(input.colors.get(k).copied().unwrap_or([255; 4])),
            value: input.values.get(k).copied().unwrap_or(0.0),
            flags: code
                | if arrow { RESIDUE_ARROW } else { 0 }
                | if after_arrow { RESIDUE_AFTER_ARROW } else { 0 }
                | if side.is_none() { RESIDUE_NO_SIDE } else { 0 },
        };
        first_ring += per + if arrow { 3 } else { 0 };
        after_arrow = arrow;
    }
}

/// The compute passes' inputs for all segments (in order), into `out` (reusing its buffers): each
/// piece's inputs are made in parallel (rayon) and copied into disjoint parts of `out`, so the
/// result is the same for any thread count.
pub fn rings_into(segments: &[Segment], params: &CartoonParams, out: &mut CartoonRings) {
    let params = sanitized(params);
    let (pieces, counts) = pieces_of(segments, &params);
    let prepared: Vec<Prepared> = pieces.par_iter().map(|p| Prepared::of(p, &params)).collect();
    let per = params.segments_per_residue;
    out.sides = params.sides as u32;
    out.angles.clear();
    out.angles
        .extend(super::section_angles(params.sides).iter().map(|&(c, s)| [c, s]));
    out.segments_per_residue = per as u32;
    out.samples_t.clear();
    out.samples_t.extend((0..per).map(|s| s as f32 / per as f32));
    out.linear = params.style == super::Style::Trace;
    out.arrow_width_factor = params.arrow_width_factor;
    let sections = super::protein_sections(&params);
    let tip = super::Profile::circle(params.coil_radius_angstrom);
    for (slot, p) in out.sections.iter_mut().zip(sections.iter().chain([&tip])) {
        *slot = [p.a, p.b, p.e, 0.0];
    }
    out.with_values = params.with_values;
    out.pieces.clear();
    let word = |x: usize| u32::try_from(x).unwrap_or(u32::MAX);
    let mut at = [0usize; 5];
    let (mut vertex, mut index) = (0u64, 0u64);
    for ((piece, prep), &(nv, ni)) in pieces.iter().zip(&prepared).zip(&counts) {
        let sizes = prep.sizes();
        let (kind, first_input, second, start_tangent) = match (piece, prep) {
            (_, Prepared::Spline { input, .. }) => {
                let tangent = match (input.points.first(), input.points.last()) {
                    (Some(a), Some(b)) => b.sub(*a).normalized(),
                    _ => None,
                };
                let tangent = tangent.unwrap_or(Vec3([1.0, 0.0, 0.0]));
                (PIECE_SPLINE, at[0], sizes[0], tangent.to_array())
            }
            (Piece::Boxes { .. }, _) => (PIECE_BOXES, at[1], at[2], [0.0; 3]),
            _ => (PIECE_TUBE, at[1], at[2], [0.0; 3]),
        };
        out.pieces.push(CartoonPiece {
            kind,
            first_record: word(at[3]),
            n_records: word(sizes[3]),
            first_band: word(at[4]),
            n_bands: word(sizes[4]),
            first_vertex: u32::try_from(vertex).unwrap_or(u32::MAX),
            first_triangle: u32::try_from(index / 3).unwrap_or(u32::MAX),
            first_input: word(first_input),
            n_residues_or_first_band: word(second),
            pad: [0; 3],
            start_tangent,
            pad2: 0,
        });
        for (a, s) in at.iter_mut().zip(sizes) {
            *a += s;
        }
        vertex += nv as u64;
        index += ni as u64;
    }
    out.n_records = at[3] as u64;
    out.n_bands = at[4] as u64;
    out.n_vertices = vertex;
    out.n_indices = index;
    // Every element is written below: keep what the buffers hold and fill only a new tail.
    fn sized<T: Clone>(v: &mut Vec<T>, n: usize, fill: T) {
        v.truncate(n);
        v.resize(n, fill);
    }
    sized(&mut out.residues, at[0], CartoonResidue::default());
    sized(&mut out.host_records, at[1], CartoonRecord::default());
    sized(&mut out.host_bands, at[2], 0);
    let mut jobs = Vec::with_capacity(prepared.len());
    {
        let mut res = out.residues.as_mut_slice();
        let mut rec = out.host_records.as_mut_slice();
        let mut bnd = out.host_bands.as_mut_slice();
        for prep in &prepared {
            let [nr, nh, nb, ..] = prep.sizes();
            let (r, rest) = res.split_at_mut(nr.min(res.len()));
            res = rest;
            let (h, rest) = rec.split_at_mut(nh.min(rec.len()));
            rec = rest;
            let (b, rest) = bnd.split_at_mut(nb.min(bnd.len()));
            bnd = rest;
            jobs.push((prep, r, h, b));
        }
    }
    jobs.into_par_iter()
        .for_each(|(prep, residues, records, bands)| match prep {
            Prepared::Spline { input, .. } => write_residues(input, per, residues),
            Prepared::Host { records: r, bands: b } => {
                for (slot, x) in records.iter_mut().zip(r) {
                    *slot = *x;
                }
                for (slot, x) in bands.iter_mut().zip(b) {
                    *slot = *x;
                }
            }
        });
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used, clippy::indexing_slicing)]
    use super::super::{BaseSlab, NucleicResidue, ProteinResidue, Shape, Style, build};
    use super::*;

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
    fn inputs_layout_and_counts_match_the_cpu_mesh() {
        assert_eq!(std::mem::size_of::<CartoonRecord>(), 64);
        assert_eq!(std::mem::size_of::<CartoonPiece>(), 64);
        assert_eq!(std::mem::size_of::<CartoonResidue>(), 40);
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
            let mut whole = chain(40, 0x2545_f491 + trial as u32);
            for r in &mut whole {
                r.guide = r.guide.or(Some([r.trace[0], 1.0, 1.5]));
            }
            let segments = vec![
                Segment::Protein(chain(30, 0x1234_5678 + trial as u32)),
                Segment::Nucleic(nucleic.clone()),
                Segment::Protein(whole),
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
            let kinds: Vec<u32> = rings.pieces.iter().map(|p| p.kind).collect();
            assert!(
                kinds.contains(&PIECE_SPLINE) && kinds.contains(&PIECE_TUBE),
                "{kinds:?}"
            );
            let (mut records, mut bands) = (0, 0);
            for p in &rings.pieces {
                assert_eq!((p.first_record, p.first_band), (records, bands));
                records += p.n_records;
                bands += p.n_bands;
                if p.kind != PIECE_SPLINE {
                    continue;
                }
                // Each interval's rings start where the previous ones end; the last residue holds
                // the last ring; two rings of each arrowhead's back start no band.
                let res = &rings.residues[p.first_input as usize..][..p.n_residues_or_first_band as usize];
                let arrows = res.iter().filter(|r| r.flags & RESIDUE_ARROW != 0).count() as u32;
                assert_eq!(res.last().unwrap().first_ring + 1, p.n_records);
                assert_eq!(p.n_bands, p.n_records - 1 - 2 * arrows);
                for w in res.windows(2) {
                    let arrow = w[0].flags & RESIDUE_ARROW != 0;
                    let per = params.segments_per_residue as u32;
                    assert_eq!(w[1].first_ring, w[0].first_ring + per + if arrow { 3 } else { 0 });
                    assert_eq!(w[1].flags & RESIDUE_AFTER_ARROW != 0, arrow);
                }
                // Unit side vectors, each within 90 degrees of the one before.
                for w in res.windows(2) {
                    let d: f32 = (0..3).map(|a| w[0].side[a] * w[1].side[a]).sum();
                    assert!(d >= 0.0, "{:?} then {:?}", w[0].side, w[1].side);
                }
            }
            assert_eq!((u64::from(records), u64::from(bands)), (rings.n_records, rings.n_bands));
            // Again into the larger buffers of the first: the same inputs as fresh.
            let mut again = rings.clone();
            rings_into(&segments[..1], &params, &mut again);
            let mut fresh = CartoonRings::default();
            rings_into(&segments[..1], &params, &mut fresh);
            assert_eq!(again, fresh);
        }
    }
}
