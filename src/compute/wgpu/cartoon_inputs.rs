//! The cartoon as compact inputs for the compute passes that write the mesh on the render device
//! (`compute::wgpu::cartoon`, `shaders/cartoon.wgsl`).
//!
//! Owns [`CartoonRings`] and the `#[repr(C)]` records it holds. [`rings_into`] does the CPU half of
//! [`crate::surface::cartoon::build_into`], per residue rather than per ring: for a protein tube one
//! [`CartoonResidue`] per residue (the smoothed trace point, the unit side vector from the carbonyl
//! already made perpendicular to the chain and sign-consistent along it, the section code, the
//! arrowhead marks, colour, value and the index of its first ring), and a [`CartoonPiece`] per tube
//! or set of boxes with the offsets of its rings, bands, vertices and triangles, which depend only
//! on the residue counts and the codes. The first device pass evaluates the spline, the frames and
//! the sections of every ring from these (the rings never cross the bus); the next passes write
//! exactly the mesh [`crate::surface::cartoon::build`] makes, vertex for vertex and index for index (the tests
//! compare the two). Where the CPU carries a frame from ring to ring (a sample without a direction,
//! a residue without a carbonyl: a terminal residue with OT1/OT2), the device looks back along the
//! piece for it. Pieces the per-residue path does not take keep the per-ring path: nucleic-acid
//! tubes (their side vector is carried from ring to ring all along), base slabs, and protein tubes
//! with long runs of residues lacking a usable carbonyl (CA-only models) or with consecutive trace
//! points closer than 1e-3 Angstrom; the CPU writes one [`CartoonRecord`] per ring or box of
//! those, as [`crate::surface::cartoon::build`] makes them. [`rings_of_runs`] makes the same inputs without
//! segments: protein runs given as ranges of residue indices and a function giving each residue,
//! whose records are written straight from it, with buffers the caller keeps from frame to frame
//! ([`RingsWorkspace`]); `analysis::polymer` uses it. Called by the render pass's owner (the
//! viewer's cartoon representations), the benchmark and the tests. Nothing here knows wgpu.

use crate::surface::cartoon::{
    CartoonParams, NucleicResidue, Piece, ProteinResidue, Ring, Segment, Shape, SlabBox, Style, TraceInput, Vec3,
    finite, nucleic_rings, pieces_of, protein_input, sanitized, trace_rings, tube_counts,
};
use rayon::prelude::*;
use std::ops::Range;

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
    /// The first field in which `self` and `other` differ, floats compared bit for bit (`None`:
    /// the same inputs, the same mesh).
    pub fn bitwise_difference(&self, other: &CartoonRings) -> Option<String> {
        fn bytes<T: bytemuck::Pod>(v: &[T]) -> &[u8] {
            bytemuck::cast_slice(v)
        }
        let (a, b) = (self, other);
        if (a.sides, a.segments_per_residue, a.linear, a.with_values)
            != (b.sides, b.segments_per_residue, b.linear, b.with_values)
            || a.arrow_width_factor.to_bits() != b.arrow_width_factor.to_bits()
        {
            return Some("resolution or style".into());
        }
        let tables = [
            ("sections", bytes(&a.sections), bytes(&b.sections)),
            ("angles", bytes(&a.angles), bytes(&b.angles)),
            ("samples", bytes(&a.samples_t), bytes(&b.samples_t)),
            ("host records", bytes(&a.host_records), bytes(&b.host_records)),
            ("host bands", bytes(&a.host_bands), bytes(&b.host_bands)),
        ];
        if let Some((name, _, _)) = tables.iter().find(|(_, x, y)| x != y) {
            return Some(format!("{name} differ"));
        }
        if (a.n_records, a.n_bands, a.n_vertices, a.n_indices) != (b.n_records, b.n_bands, b.n_vertices, b.n_indices) {
            return Some("counts differ".into());
        }
        if a.pieces.len() != b.pieces.len() || a.residues.len() != b.residues.len() {
            return Some(format!(
                "{} pieces and {} residues against {} and {}",
                a.pieces.len(),
                a.residues.len(),
                b.pieces.len(),
                b.residues.len()
            ));
        }
        if let Some((k, (x, y))) = a
            .pieces
            .iter()
            .zip(&b.pieces)
            .enumerate()
            .find(|(_, (x, y))| bytemuck::bytes_of(*x) != bytemuck::bytes_of(*y))
        {
            return Some(format!("piece {k}: {x:?} against {y:?}"));
        }
        a.residues
            .iter()
            .zip(&b.residues)
            .enumerate()
            .find(|(_, (x, y))| bytemuck::bytes_of(*x) != bytemuck::bytes_of(*y))
            .map(|(k, (x, y))| format!("residue {k}: {x:?} against {y:?}"))
    }

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
            let (records, bands) = host_rings(&rings);
            Prepared::Host { records, bands }
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

/// The records of a tube's rings and, per band, the index of the ring that closes it.
fn host_rings(rings: &[Ring]) -> (Vec<CartoonRecord>, Vec<u32>) {
    let bands = rings
        .iter()
        .enumerate()
        .skip(1)
        .filter(|(_, r)| r.joined)
        .map(|(k, _)| k as u32)
        .collect();
    (rings.iter().map(ring_record).collect(), bands)
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

/// The parts of `out` that depend on the parameters alone: resolution, ring angles, sample
/// parameters, style, sections, values.
fn set_header(out: &mut CartoonRings, params: &CartoonParams) {
    let per = params.segments_per_residue;
    out.sides = params.sides as u32;
    out.angles.clear();
    out.angles.extend(
        crate::surface::cartoon::section_angles(params.sides)
            .iter()
            .map(|&(c, s)| [c, s]),
    );
    out.segments_per_residue = per as u32;
    out.samples_t.clear();
    out.samples_t.extend((0..per).map(|s| s as f32 / per as f32));
    out.linear = params.style == Style::Trace;
    out.arrow_width_factor = params.arrow_width_factor;
    let sections = crate::surface::cartoon::protein_sections(params);
    let tip = crate::surface::cartoon::Profile::circle(params.coil_radius_angstrom);
    for (slot, p) in out.sections.iter_mut().zip(sections.iter().chain([&tip])) {
        *slot = [p.a, p.b, p.e, 0.0];
    }
    out.with_values = params.with_values;
}

/// `v` with `n` elements. Every element is written after this: what the buffer holds stays and only
/// a new tail is filled.
fn sized<T: Clone>(v: &mut Vec<T>, n: usize, fill: T) {
    v.truncate(n);
    v.resize(n, fill);
}

/// An offset or count as the device's 32-bit word (saturated).
fn word(x: usize) -> u32 {
    u32::try_from(x).unwrap_or(u32::MAX)
}

/// The compute passes' inputs for all segments (in order), into `out` (reusing its buffers): each
/// piece's inputs are made in parallel (rayon) and copied into disjoint parts of `out`, so the
/// result is the same for any thread count.
pub fn rings_into(segments: &[Segment], params: &CartoonParams, out: &mut CartoonRings) {
    let params = sanitized(params);
    let (pieces, counts) = pieces_of(segments, &params);
    let prepared: Vec<Prepared> = pieces.par_iter().map(|p| Prepared::of(p, &params)).collect();
    let per = params.segments_per_residue;
    set_header(out, &params);
    out.pieces.clear();
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

/// Buffers of [`rings_of_runs`] that its caller keeps from frame to frame beside the
/// [`CartoonRings`] it fills (a frame of the same size then allocates nothing for its protein
/// tubes); what they hold between calls means nothing.
#[derive(Clone, Debug, Default)]
pub struct RingsWorkspace {
    /// The records of the per-residue tubes, each at its residue's index in the caller's numbering.
    staged: Vec<CartoonResidue>,
    /// The pieces, in order, before their offsets are known.
    parts: Vec<Part>,
}

/// One piece of [`rings_of_runs`], made before the offsets are known.
#[derive(Clone, Debug, Default)]
struct Part {
    kind: u32,
    /// [`PIECE_SPLINE`]: where its residues' records start in [`RingsWorkspace::staged`].
    staged: usize,
    /// [`PIECE_SPLINE`]: residues (otherwise 0).
    residues: usize,
    /// Rings (or boxes) and bands on the device.
    records: usize,
    bands: usize,
    vertices: usize,
    indices: usize,
    start_tangent: [f32; 3],
    /// The rings (or boxes) and bands the CPU made (pieces other than [`PIECE_SPLINE`]).
    host_records: Vec<CartoonRecord>,
    host_bands: Vec<u32>,
}

/// A piece whose rings or boxes the CPU makes, as [`Prepared::of`] makes them for pieces off the
/// per-residue path.
fn host_part(piece: &Piece<'_>, params: &CartoonParams) -> Part {
    let (vertices, indices) = piece.counts(params);
    let (kind, host_records, host_bands) = match piece {
        Piece::ProteinTube(res) => {
            let (r, b) = host_rings(&trace_rings(&protein_input(res, params), params));
            (PIECE_TUBE, r, b)
        }
        Piece::NucleicTube(res) => {
            let (r, b) = host_rings(&nucleic_rings(res, params));
            (PIECE_TUBE, r, b)
        }
        Piece::Boxes { boxes } => (PIECE_BOXES, boxes.iter().map(box_record).collect(), Vec::new()),
    };
    Part {
        kind,
        records: host_records.len(),
        bands: host_bands.len(),
        vertices,
        indices,
        host_records,
        host_bands,
        ..Part::default()
    }
}

/// [`CartoonResidue::flags`] section code of a strand.
const STRAND_CODE: u32 = 2;

/// The piece of one protein run, residues `start..start + staged.len()` of `residue` (at least two).
/// On the per-residue path its records go into `staged`, one per residue; otherwise the CPU makes
/// its rings (and `staged` holds nothing of use). The same decision and records as
/// [`Prepared::of`] and [`write_residues`] make through [`protein_input`], in three passes over the
/// run's own records: trace points, carbonyl vectors and codes; the strands' smoothing; side
/// vectors, arrowheads and flags.
fn tube_part(
    start: usize,
    staged: &mut [CartoonResidue],
    residue: &(impl Fn(usize, usize, usize) -> ProteinResidue + Sync),
    params: &CartoonParams,
) -> Part {
    let n = staged.len();
    let per = params.segments_per_residue;
    let cartoon = params.style == Style::Cartoon;
    // The trace point, the carbonyl vector (guide minus trace point) in `side`, the section code,
    // colour and value.
    for (i, slot) in staged.iter_mut().enumerate() {
        let r = residue(start + i, i, n);
        let code = match if cartoon { r.shape } else { Shape::Coil } {
            Shape::Coil => 0,
            Shape::Helix => 1,
            Shape::Strand => STRAND_CODE,
        };
        let carbonyl = r.guide.filter(|g| finite(*g)).map(|g| Vec3(g).sub(Vec3(r.trace)));
        *slot = CartoonResidue {
            point_angstrom: r.trace,
            first_ring: 0,
            side: carbonyl.map_or([0.0; 3], Vec3::to_array),
            color: pack(r.color),
            value: r.value,
            flags: code | if carbonyl.is_none() { RESIDUE_NO_SIDE } else { 0 },
        };
    }
    // Smooth the pleat out of strands (not at their ends).
    let mut previous: Option<(Vec3, u32)> = None;
    for i in 0..n {
        let raw = |r: &CartoonResidue| (Vec3(r.point_angstrom), r.flags & 3);
        let Some(here) = staged.get(i).map(raw) else { break };
        let next = staged.get(i + 1).map(raw);
        if let (Some((a, STRAND_CODE)), (b, STRAND_CODE), Some((c, STRAND_CODE))) = (previous, here, next)
            && let Some(slot) = staged.get_mut(i)
        {
            slot.point_angstrom = a.scale(0.25).add(b.scale(0.5)).add(c.scale(0.25)).to_array();
        }
        previous = Some(here);
    }
    // Side vectors perpendicular to the chain direction, flipped to follow the previous one;
    // arrowheads, flags and first rings; the spacing and the longest run without a side vector.
    let point = |r: &CartoonResidue| Vec3(r.point_angstrom);
    let mut previous_side: Option<Vec3> = None;
    let (mut first_ring, mut after_arrow, mut arrows) = (0usize, false, 0usize);
    let (mut spaced, mut without, mut longest) = (true, 0usize, 0usize);
    for i in 0..n {
        let (Some(before), Some(after), Some(here)) = (
            staged.get(i.saturating_sub(1)),
            staged.get((i + 1).min(n - 1)),
            staged.get(i),
        ) else {
            break;
        };
        let dir = point(after).sub(point(before)).normalized();
        if i > 0 {
            let step = point(here).sub(point(before));
            spaced &= step.dot(step) > MIN_STEP2_ANGSTROM2;
        }
        let code = here.flags & 3;
        let arrow = code == STRAND_CODE
            && staged
                .get(i + 1)
                .is_some_and(|next| next.flags & 3 != STRAND_CODE || i + 2 == n);
        let side = (here.flags & RESIDUE_NO_SIDE == 0)
            .then_some(Vec3(here.side))
            .and_then(|v| match dir {
                Some(t) => v.sub(t.scale(v.dot(t))).normalized(),
                None => v.normalized(),
            })
            .map(|s| {
                if previous_side.is_some_and(|p| p.dot(s) < 0.0) {
                    s.scale(-1.0)
                } else {
                    s
                }
            });
        if side.is_some() {
            previous_side = side;
            without = 0;
        } else {
            without += 1;
            longest = longest.max(without);
        }
        if let Some(slot) = staged.get_mut(i) {
            slot.side = side.map_or([0.0; 3], Vec3::to_array);
            slot.first_ring = word(first_ring);
            slot.flags = code
                | if arrow { RESIDUE_ARROW } else { 0 }
                | if after_arrow { RESIDUE_AFTER_ARROW } else { 0 }
                | if side.is_none() { RESIDUE_NO_SIDE } else { 0 };
        }
        first_ring += per + if arrow { 3 } else { 0 };
        after_arrow = arrow;
        arrows += usize::from(arrow);
    }
    // All but the longest run's last interval (and the piece's last sample) carry the side.
    let carried = longest * per + 1;
    if spaced && n >= 2 && carried <= MAX_CARRIED_SAMPLES {
        let rings = (n - 1) * per + 1 + 3 * arrows;
        let bands = rings.saturating_sub(1 + 2 * arrows);
        let (vertices, indices) = tube_counts(rings, bands, params.sides);
        let tangent = match (staged.first(), staged.last()) {
            (Some(a), Some(b)) => point(b).sub(point(a)).normalized(),
            _ => None,
        };
        Part {
            kind: PIECE_SPLINE,
            staged: start,
            residues: n,
            records: rings,
            bands,
            vertices,
            indices,
            start_tangent: tangent.unwrap_or(Vec3([1.0, 0.0, 0.0])).to_array(),
            ..Part::default()
        }
    } else {
        let res: Vec<ProteinResidue> = (0..n).map(|i| residue(start + i, i, n)).collect();
        host_part(&Piece::ProteinTube(&res), params)
    }
}

/// The first `n` elements of `rest` (fewer where it is shorter), leaving `rest` the others.
fn take_front<'a, T>(rest: &mut &'a mut [T], n: usize) -> &'a mut [T] {
    let all = std::mem::take(rest);
    let (front, tail) = all.split_at_mut(n.min(all.len()));
    *rest = tail;
    front
}

/// [`rings_into`] without segments: the same inputs as `rings_into` makes from a protein segment
/// per run of `runs` (residue `k` of a run being `residue(k, index in the run, run length)`)
/// followed by a nucleic-acid segment per entry of `nucleic`, into `out` (reusing its buffers) and
/// `workspace` (kept by the caller from frame to frame). `runs` are increasing and disjoint ranges
/// of residue indices (runs of fewer than two residues draw nothing; a run starting before the end
/// of the one before is left out), their trace points finite (the caller cuts its chains there).
///
/// The protein runs go from `residue` straight into their records: each run, on the rayon pool,
/// writes one record per residue at its residues' indices in the workspace, or, off the
/// per-residue path, has the CPU make its rings. When the records of the per-residue tubes already
/// lie where `out` wants them (no residues left out before the last such tube), the workspace's
/// buffer becomes `out`'s without a copy. The result is the same for any thread count.
pub fn rings_of_runs(
    runs: &[Range<usize>],
    residue: impl Fn(usize, usize, usize) -> ProteinResidue + Sync,
    nucleic: &[Vec<NucleicResidue>],
    params: &CartoonParams,
    out: &mut CartoonRings,
    workspace: &mut RingsWorkspace,
) {
    let params = sanitized(params);
    set_header(out, &params);
    let ws = workspace;
    let staged_len = runs.iter().map(|r| r.end).max().unwrap_or(0);
    sized(&mut ws.staged, staged_len, CartoonResidue::default());
    let mut jobs = Vec::with_capacity(runs.len());
    {
        let (mut rest, mut at) = (ws.staged.as_mut_slice(), 0usize);
        for run in runs {
            if run.start < at || run.len() < 2 {
                continue;
            }
            take_front(&mut rest, run.start - at);
            jobs.push((run.start, take_front(&mut rest, run.len())));
            at = run.end;
        }
    }
    jobs.into_par_iter()
        .map(|(start, staged)| tube_part(start, staged, &residue, &params))
        .collect_into_vec(&mut ws.parts);
    if !nucleic.is_empty() {
        let pieces: Vec<Piece<'_>> = nucleic
            .par_iter()
            .flat_map_iter(|res| {
                let mut pieces = Vec::new();
                Piece::split_nucleic(res, &params, &mut pieces);
                pieces
            })
            .collect();
        ws.parts.par_extend(pieces.par_iter().map(|p| host_part(p, &params)));
    }
    // Offsets: residues, host records, host bands, device records, device bands.
    out.pieces.clear();
    let mut at = [0usize; 5];
    let (mut vertex, mut index) = (0u64, 0u64);
    let mut in_place = true;
    for part in &ws.parts {
        let (first_input, second) = if part.kind == PIECE_SPLINE {
            in_place &= part.staged == at[0];
            (at[0], part.residues)
        } else {
            (at[1], at[2])
        };
        out.pieces.push(CartoonPiece {
            kind: part.kind,
            first_record: word(at[3]),
            n_records: word(part.records),
            first_band: word(at[4]),
            n_bands: word(part.bands),
            first_vertex: u32::try_from(vertex).unwrap_or(u32::MAX),
            first_triangle: u32::try_from(index / 3).unwrap_or(u32::MAX),
            first_input: word(first_input),
            n_residues_or_first_band: word(second),
            pad: [0; 3],
            start_tangent: part.start_tangent,
            pad2: 0,
        });
        let sizes = [
            part.residues,
            part.host_records.len(),
            part.host_bands.len(),
            part.records,
            part.bands,
        ];
        for (a, s) in at.iter_mut().zip(sizes) {
            *a += s;
        }
        vertex += part.vertices as u64;
        index += part.indices as u64;
    }
    out.n_records = at[3] as u64;
    out.n_bands = at[4] as u64;
    out.n_vertices = vertex;
    out.n_indices = index;
    if in_place {
        // The per-residue tubes' records tile `0..at[0]` of the workspace's buffer.
        std::mem::swap(&mut out.residues, &mut ws.staged);
        out.residues.truncate(at[0]);
    } else {
        sized(&mut out.residues, at[0], CartoonResidue::default());
    }
    sized(&mut out.host_records, at[1], CartoonRecord::default());
    sized(&mut out.host_bands, at[2], 0);
    if in_place && at[1] == 0 && at[2] == 0 {
        return;
    }
    let mut jobs = Vec::with_capacity(ws.parts.len());
    {
        let mut res: &mut [CartoonResidue] = if in_place { &mut [] } else { &mut out.residues };
        let mut rec = out.host_records.as_mut_slice();
        let mut bnd = out.host_bands.as_mut_slice();
        for part in &ws.parts {
            jobs.push((
                part,
                take_front(&mut res, part.residues),
                take_front(&mut rec, part.host_records.len()),
                take_front(&mut bnd, part.host_bands.len()),
            ));
        }
    }
    let staged = ws.staged.as_slice();
    jobs.into_par_iter().for_each(|(part, residues, records, bands)| {
        let from = staged.get(part.staged..).unwrap_or_default();
        for (slot, x) in residues.iter_mut().zip(from) {
            *slot = *x;
        }
        for (slot, x) in records.iter_mut().zip(&part.host_records) {
            *slot = *x;
        }
        for (slot, x) in bands.iter_mut().zip(&part.host_bands) {
            *slot = *x;
        }
    });
}

#[cfg(test)]
mod tests;
