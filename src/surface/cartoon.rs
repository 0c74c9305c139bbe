//! Cartoon meshes of polymer backbones: ribbons for helices, arrows for strands, tubes for coil, a
//! plain tube or CA trace for every residue, and nucleic acids as a backbone tube with base slabs.
//!
//! Owns the geometry only: it takes plain per-residue data ([`Segment`]: trace points, carbonyl
//! guide points, a [`Shape`] per residue, colours, scalar values), already cut at chain breaks, and
//! returns one [`MeshData`] with unit normals, per-vertex colours (`colors_rgba8`) and, on request,
//! per-vertex values. Who calls it: the cartoon input builder in `analysis::polymer` (which reads
//! structures, secondary structure and colour schemes), the benchmarks and the tests; meant for the
//! viewer's cartoon representation through a worker in `jobs`. Nothing here knows molecules.
//!
//! Geometry: a Catmull-Rom spline through the trace points (CA; P for nucleic acids), with strand
//! points smoothed (each the average of itself and its neighbours, weights 1/4, 1/2, 1/4) so
//! pleated strands become flat arrows. A frame moves along the spline: the tangent, and a side
//! vector from the residue's carbonyl direction (guide point minus trace point) made perpendicular to
//! the tangent and flipped where it would turn by more than 90 degrees from the previous residue's
//! (no twisted ribbons); residues without a guide carry the previous side vector along. Every ring is
//! a superellipse in that frame (circle for coil, flat ellipse for helix ribbons, rounded box for
//! strands) with the same vertex count, so shapes blend over one residue; strands end in an
//! arrowhead (a step out to 1.6 times the strand width at the last strand residue, narrowing to the
//! coil tube at the next one). Each piece is closed by flat caps, so every cross-section is closed
//! and the surface is watertight; triangles wind counter-clockwise seen from outside. Colours are
//! those of the residue nearest along the spline; values are interpolated between residues.
//!
//! Segments are independent: the mesh sizes are counted first, then segments fill their parts of
//! one output in parallel (rayon), so the output is the same for any thread count.

use super::MeshData;
use rayon::prelude::*;

mod emit;
use emit::*;

/// How a residue is drawn in the cartoon style.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Shape {
    /// Tube (coil, turns, bends, isolated bridges).
    #[default]
    Coil,
    /// Flat ribbon (alpha, 3-10 and pi helices).
    Helix,
    /// Flat arrow (strands in a ladder); the arrowhead sits at the last residue of a run.
    Strand,
}

/// Drawing style of a whole cartoon.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize)]
pub enum Style {
    /// Helix ribbons, strand arrows, coil tubes.
    #[default]
    Cartoon,
    /// One smooth tube of [`CartoonParams::tube_radius_angstrom`] for every residue.
    Tube,
    /// Straight segments between trace points, [`CartoonParams::trace_radius_angstrom`] thick.
    Trace,
}

impl Style {
    pub const ALL: [Style; 3] = [Style::Cartoon, Style::Tube, Style::Trace];

    /// The word on the command line and in labels: `cartoon`, `tube`, `trace`.
    pub fn word(self) -> &'static str {
        match self {
            Style::Cartoon => "cartoon",
            Style::Tube => "tube",
            Style::Trace => "trace",
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Style::Cartoon => "Cartoon",
            Style::Tube => "Tube",
            Style::Trace => "Trace",
        }
    }

    /// The style a word names (`cartoon`, `ribbon`, `tube`, `trace`), case-insensitive.
    pub fn parse(word: &str) -> Option<Style> {
        match word.trim().to_ascii_lowercase().as_str() {
            "cartoon" | "ribbon" | "ribbons" => Some(Style::Cartoon),
            "tube" => Some(Style::Tube),
            "trace" => Some(Style::Trace),
            _ => None,
        }
    }
}

/// One residue of a protein chain.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProteinResidue {
    /// CA position (Angstrom).
    pub trace: [f32; 3],
    /// Carbonyl O position, which orients the ribbon; `None` carries the previous orientation.
    pub guide: Option<[f32; 3]>,
    pub shape: Shape,
    pub color: [u8; 4],
    /// Scalar written to `MeshData::values` when [`CartoonParams::with_values`] is set.
    pub value: f32,
}

/// The slab of one nucleotide base: a flat box from `root` (C1') to `tip` (the base atom farthest
/// from the sugar), lying in the plane that also holds `plane` (another base atom).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct BaseSlab {
    pub root: [f32; 3],
    pub tip: [f32; 3],
    pub plane: [f32; 3],
}

/// One nucleotide.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct NucleicResidue {
    /// Backbone trace point: P (or, for a residue without one, C4').
    pub trace: [f32; 3],
    pub base: Option<BaseSlab>,
    pub color: [u8; 4],
    pub value: f32,
}

/// A continuous piece of one chain (the caller cuts chains at breaks).
#[derive(Clone, Debug, PartialEq)]
pub enum Segment {
    Protein(Vec<ProteinResidue>),
    Nucleic(Vec<NucleicResidue>),
}

/// Sizes (Angstrom) and resolution.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct CartoonParams {
    pub style: Style,
    /// Spline samples per residue (at least 1).
    pub segments_per_residue: usize,
    /// Vertices around each cross-section (at least 4; multiples of 4 keep box corners sharp).
    pub sides: usize,
    pub coil_radius_angstrom: f32,
    pub helix_width_angstrom: f32,
    pub helix_thickness_angstrom: f32,
    pub strand_width_angstrom: f32,
    pub strand_thickness_angstrom: f32,
    /// Width of the arrowhead's base, as a multiple of the strand width.
    pub arrow_width_factor: f32,
    pub tube_radius_angstrom: f32,
    pub trace_radius_angstrom: f32,
    /// Radius of the nucleic-acid backbone tube.
    pub nucleic_radius_angstrom: f32,
    pub base_width_angstrom: f32,
    pub base_thickness_angstrom: f32,
    /// Fill `MeshData::values` from the residues' values.
    pub with_values: bool,
}

impl Default for CartoonParams {
    fn default() -> CartoonParams {
        CartoonParams {
            style: Style::Cartoon,
            segments_per_residue: 8,
            sides: 16,
            coil_radius_angstrom: 0.3,
            helix_width_angstrom: 2.4,
            helix_thickness_angstrom: 0.5,
            strand_width_angstrom: 2.0,
            strand_thickness_angstrom: 0.5,
            arrow_width_factor: 1.6,
            tube_radius_angstrom: 0.5,
            trace_radius_angstrom: 0.3,
            nucleic_radius_angstrom: 0.8,
            base_width_angstrom: 1.6,
            base_thickness_angstrom: 0.5,
            with_values: false,
        }
    }
}

impl CartoonParams {
    /// Resolution that keeps large systems interactive: full detail up to 5,000 residues, then
    /// fewer samples and sides (6 x 10 up to 50,000 residues, 4 x 8 beyond).
    pub fn for_residue_count(residues: usize) -> CartoonParams {
        let (segments_per_residue, sides) = match residues {
            0..=5_000 => (8, 16),
            5_001..=50_000 => (6, 10),
            _ => (4, 8),
        };
        CartoonParams {
            segments_per_residue,
            sides,
            ..CartoonParams::default()
        }
    }
}

/// Builds the mesh of all segments (in order). Segments with fewer than two usable residues draw
/// nothing; non-finite trace points cut a segment, non-finite guides count as missing.
pub fn build(segments: &[Segment], params: &CartoonParams) -> MeshData {
    let mut mesh = MeshData::default();
    build_into(segments, params, &mut mesh);
    mesh
}

/// [`build`] into `mesh`, reusing its buffers (the previous frame's mesh: a frame's cartoon then
/// touches no fresh memory).
pub fn build_into(segments: &[Segment], params: &CartoonParams, mesh: &mut MeshData) {
    let params = sanitized(params);
    let (pieces, counts) = pieces_of(segments, &params);
    let n_vertices: usize = counts.iter().map(|c| c.0).sum();
    let n_indices: usize = counts.iter().map(|c| c.1).sum();
    // Every element is written below, so the buffers keep what they hold (the previous frame's
    // mesh) and only a new tail is filled: a frame of the same size writes each byte once.
    fn sized<T: Clone>(v: &mut Vec<T>, n: usize, fill: T) {
        v.truncate(n);
        v.resize(n, fill);
    }
    sized(&mut mesh.positions_angstrom, n_vertices, [0.0; 3]);
    sized(&mut mesh.normals, n_vertices, [0.0; 3]);
    sized(&mut mesh.indices, n_indices, 0);
    sized(&mut mesh.values, if params.with_values { n_vertices } else { 0 }, 0.0);
    sized(&mut mesh.colors_rgba8, n_vertices, [0; 4]);
    // Disjoint output slices, one per piece, filled in parallel.
    let mut jobs = Vec::with_capacity(pieces.len());
    {
        let mut pos = mesh.positions_angstrom.as_mut_slice();
        let mut nor = mesh.normals.as_mut_slice();
        let mut idx = mesh.indices.as_mut_slice();
        let mut col = mesh.colors_rgba8.as_mut_slice();
        let mut val = mesh.values.as_mut_slice();
        let mut first_vertex = 0usize;
        for (piece, &(nv, ni)) in pieces.iter().zip(&counts) {
            let (p, rest) = pos.split_at_mut(nv);
            pos = rest;
            let (n, rest) = nor.split_at_mut(nv);
            nor = rest;
            let (i, rest) = idx.split_at_mut(ni);
            idx = rest;
            let (c, rest) = col.split_at_mut(nv);
            col = rest;
            let (v, rest) = val.split_at_mut(if params.with_values { nv } else { 0 });
            val = rest;
            jobs.push((
                piece,
                Out {
                    positions: p,
                    normals: n,
                    indices: i,
                    colors: c,
                    values: v,
                    vertex: 0,
                    index: 0,
                    base: first_vertex as u32,
                },
            ));
            first_vertex += nv;
        }
    }
    jobs.into_par_iter()
        .for_each(|(piece, mut out)| piece.emit(&params, &mut out));
}

/// The drawable pieces of all segments (in order) and the (vertices, indices) each writes.
pub(crate) fn pieces_of<'a>(segments: &'a [Segment], params: &CartoonParams) -> (Vec<Piece<'a>>, Vec<(usize, usize)>) {
    let pieces: Vec<Piece> = segments.par_iter().flat_map_iter(|s| Piece::split(s, params)).collect();
    let counts: Vec<(usize, usize)> = pieces.par_iter().map(|p| p.counts(params)).collect();
    (pieces, counts)
}

/// Parameters with sizes and counts in range (no NaN, no zero sides).
pub(crate) fn sanitized(p: &CartoonParams) -> CartoonParams {
    let len = |x: f32, d: f32| if x.is_finite() && x > 0.0 { x } else { d };
    let d = CartoonParams::default();
    CartoonParams {
        style: p.style,
        segments_per_residue: p.segments_per_residue.clamp(1, 64),
        sides: p.sides.clamp(4, 64),
        coil_radius_angstrom: len(p.coil_radius_angstrom, d.coil_radius_angstrom),
        helix_width_angstrom: len(p.helix_width_angstrom, d.helix_width_angstrom),
        helix_thickness_angstrom: len(p.helix_thickness_angstrom, d.helix_thickness_angstrom),
        strand_width_angstrom: len(p.strand_width_angstrom, d.strand_width_angstrom),
        strand_thickness_angstrom: len(p.strand_thickness_angstrom, d.strand_thickness_angstrom),
        arrow_width_factor: len(p.arrow_width_factor, d.arrow_width_factor),
        tube_radius_angstrom: len(p.tube_radius_angstrom, d.tube_radius_angstrom),
        trace_radius_angstrom: len(p.trace_radius_angstrom, d.trace_radius_angstrom),
        nucleic_radius_angstrom: len(p.nucleic_radius_angstrom, d.nucleic_radius_angstrom),
        base_width_angstrom: len(p.base_width_angstrom, d.base_width_angstrom),
        base_thickness_angstrom: len(p.base_thickness_angstrom, d.base_thickness_angstrom),
        with_values: p.with_values,
    }
}

/// Where one piece writes its vertices and triangles.
struct Out<'a> {
    positions: &'a mut [[f32; 3]],
    normals: &'a mut [[f32; 3]],
    indices: &'a mut [u32],
    colors: &'a mut [[u8; 4]],
    values: &'a mut [f32],
    /// Next vertex and index to write (local).
    vertex: usize,
    index: usize,
    /// Index of this piece's first vertex in the whole mesh.
    base: u32,
}

impl Out<'_> {
    fn vertex(&mut self, p: Vec3, n: Vec3, color: [u8; 4], value: f32) -> u32 {
        let k = self.vertex;
        if let Some(x) = self.positions.get_mut(k) {
            *x = p.to_array();
        }
        if let Some(x) = self.normals.get_mut(k) {
            *x = n.to_array();
        }
        if let Some(x) = self.colors.get_mut(k) {
            *x = color;
        }
        if let Some(x) = self.values.get_mut(k) {
            *x = value;
        }
        self.vertex += 1;
        self.base + k as u32
    }

    fn triangle(&mut self, a: u32, b: u32, c: u32) {
        if let Some([x, y, z]) = self.indices.get_mut(self.index..self.index + 3) {
            (*x, *y, *z) = (a, b, c);
        }
        self.index += 3;
    }
}

/// A small 3-vector in single precision with the operations the frames need.
#[derive(Clone, Copy, Debug, PartialEq, Default)]
pub(crate) struct Vec3(pub(crate) [f32; 3]);

impl Vec3 {
    pub(crate) fn to_array(self) -> [f32; 3] {
        self.0
    }
    pub(crate) fn add(self, o: Vec3) -> Vec3 {
        Vec3([self.0[0] + o.0[0], self.0[1] + o.0[1], self.0[2] + o.0[2]])
    }
    pub(crate) fn sub(self, o: Vec3) -> Vec3 {
        Vec3([self.0[0] - o.0[0], self.0[1] - o.0[1], self.0[2] - o.0[2]])
    }
    pub(crate) fn scale(self, s: f32) -> Vec3 {
        Vec3(self.0.map(|x| x * s))
    }
    pub(crate) fn dot(self, o: Vec3) -> f32 {
        self.0[0] * o.0[0] + self.0[1] * o.0[1] + self.0[2] * o.0[2]
    }
    pub(crate) fn cross(self, o: Vec3) -> Vec3 {
        let (a, b) = (self.0, o.0);
        Vec3([
            a[1] * b[2] - a[2] * b[1],
            a[2] * b[0] - a[0] * b[2],
            a[0] * b[1] - a[1] * b[0],
        ])
    }
    fn length(self) -> f32 {
        self.dot(self).sqrt()
    }
    /// Unit vector, or `None` when too short to have a direction.
    pub(crate) fn normalized(self) -> Option<Vec3> {
        let l = self.length();
        (l > 1e-6 && l.is_finite()).then(|| self.scale(1.0 / l))
    }
    fn lerp(self, o: Vec3, t: f32) -> Vec3 {
        self.add(o.sub(self).scale(t))
    }
    /// Some unit vector perpendicular to this unit vector.
    fn any_perpendicular(self) -> Vec3 {
        let a = self.0.map(f32::abs);
        let axis = if a[0] <= a[1] && a[0] <= a[2] {
            Vec3([1.0, 0.0, 0.0])
        } else if a[1] <= a[2] {
            Vec3([0.0, 1.0, 0.0])
        } else {
            Vec3([0.0, 0.0, 1.0])
        };
        self.cross(axis).normalized().unwrap_or(Vec3([0.0, 0.0, 1.0]))
    }
}

pub(crate) fn finite(p: [f32; 3]) -> bool {
    p.iter().all(|x| x.is_finite())
}

/// Superellipse cross-section: half-width `a` along the side vector, half-thickness `b` along the
/// binormal, exponent `e` (2 = ellipse, larger = boxier).
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) struct Profile {
    pub(crate) a: f32,
    pub(crate) b: f32,
    pub(crate) e: f32,
}

impl Profile {
    pub(crate) fn circle(r: f32) -> Profile {
        Profile { a: r, b: r, e: 2.0 }
    }

    fn lerp(self, o: Profile, t: f32) -> Profile {
        Profile {
            a: self.a + (o.a - self.a) * t,
            b: self.b + (o.b - self.b) * t,
            e: self.e + (o.e - self.e) * t,
        }
    }

    /// Point and outward normal (in the section's 2-D frame) at angle parameter (cos, sin).
    #[cfg(test)]
    fn at(self, c: f32, s: f32) -> ([f32; 2], [f32; 2]) {
        self.place(SectionPowers::new(self.e, c, s))
    }

    /// Point and outward normal from the angle's powers for this section's exponent.
    fn place(self, w: SectionPowers) -> ([f32; 2], [f32; 2]) {
        let point = [self.a * w.point[0], self.b * w.point[1]];
        let normal = [w.normal[0] / self.a.max(1e-6), w.normal[1] / self.b.max(1e-6)];
        (point, normal)
    }
}

/// The signed powers of one angle's (cos, sin) a superellipse of exponent `e` needs: 2/e for the
/// point, 2 - 2/e for the normal. Depends on the exponent only, so a tube computes them once per
/// exponent (the sections of a run share one) instead of at every vertex.
#[derive(Clone, Copy, Debug)]
struct SectionPowers {
    point: [f32; 2],
    normal: [f32; 2],
}

impl SectionPowers {
    pub(crate) fn new(e: f32, c: f32, s: f32) -> SectionPowers {
        let p = 2.0 / e;
        let q = 2.0 - p;
        if p == 1.0 {
            // An ellipse (coil, helix, tube): x^1 is x exactly, so these are the general powers
            // below without calling powf.
            return SectionPowers {
                point: [c, s],
                normal: [c, s],
            };
        }
        let pw = |x: f32, k: f32| x.signum() * x.abs().powf(k);
        SectionPowers {
            point: [pw(c, p), pw(s, p)],
            normal: [pw(c, q), pw(s, q)],
        }
    }
}

/// One ring of the tube: where, in which frame, which section, and how its normals point.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Ring {
    pub(crate) center: Vec3,
    pub(crate) tangent: Vec3,
    pub(crate) side: Vec3,
    pub(crate) profile: Profile,
    pub(crate) color: [u8; 4],
    pub(crate) value: f32,
    /// Normals along this (unit) direction instead of the section's (the faces of a step).
    pub(crate) flat: Option<Vec3>,
    /// False for the first ring after a step's flat pair: no band joins it to the previous ring.
    pub(crate) joined: bool,
}

/// A closed box with flat faces (base slabs and their stems).
#[derive(Clone, Copy, Debug)]
pub(crate) struct SlabBox {
    pub(crate) center: Vec3,
    /// Right-handed unit axes.
    pub(crate) axes: [Vec3; 3],
    /// Half extents along the axes.
    pub(crate) half: [f32; 3],
    pub(crate) color: [u8; 4],
    pub(crate) value: f32,
}

/// A drawable piece: a tube along a run of residues (its rings are built where the piece is
/// written, so that they stay in cache and no frame holds all of them at once) or a set of boxes.
pub(crate) enum Piece<'a> {
    ProteinTube(&'a [ProteinResidue]),
    NucleicTube(&'a [NucleicResidue]),
    Boxes { boxes: Vec<SlabBox> },
}

impl<'a> Piece<'a> {
    /// Splits a segment at non-finite trace points into its pieces.
    fn split(segment: &'a Segment, params: &CartoonParams) -> Vec<Piece<'a>> {
        let mut out = Vec::new();
        match segment {
            Segment::Protein(res) => {
                for run in res.split(|r| !finite(r.trace)) {
                    if run.len() >= 2 {
                        out.push(Piece::ProteinTube(run));
                    }
                }
            }
            Segment::Nucleic(res) => Piece::split_nucleic(res, params, &mut out),
        }
        out
    }

    /// The pieces of a nucleic-acid segment (tubes and their base slabs) onto `out`.
    pub(crate) fn split_nucleic(res: &'a [NucleicResidue], params: &CartoonParams, out: &mut Vec<Piece<'a>>) {
        for run in res.split(|r| !finite(r.trace)) {
            if run.len() >= 2 {
                out.push(Piece::NucleicTube(run));
                let boxes = base_boxes(run, params);
                if !boxes.is_empty() {
                    out.push(Piece::Boxes { boxes });
                }
            }
        }
    }

    /// Vertices and indices this piece writes.
    pub(crate) fn counts(&self, params: &CartoonParams) -> (usize, usize) {
        let s = params.sides;
        match self {
            Piece::ProteinTube(_) | Piece::NucleicTube(_) => {
                let (rings, bands) = self.ring_counts(params);
                tube_counts(rings, bands, s)
            }
            Piece::Boxes { boxes } => (boxes.len() * 24, boxes.len() * 36),
        }
    }

    /// The rings [`trace_rings`] makes for this tube and the bands between them (rings joined to
    /// the one before), without making them: one ring per spline sample, `segments_per_residue`
    /// per residue interval and one at the end, three more at each arrowhead's back (the step),
    /// two of which start no band.
    fn ring_counts(&self, params: &CartoonParams) -> (usize, usize) {
        let (n, arrows) = match self {
            Piece::ProteinTube(res) => (res.len(), protein_arrows(res, params).iter().filter(|&&a| a).count()),
            Piece::NucleicTube(res) => (res.len(), 0),
            Piece::Boxes { .. } => return (0, 0),
        };
        let rings = n.saturating_sub(1) * params.segments_per_residue + 1 + 3 * arrows;
        (rings, rings.saturating_sub(1 + 2 * arrows))
    }

    fn emit(&self, params: &CartoonParams, out: &mut Out<'_>) {
        match self {
            Piece::ProteinTube(res) => emit_tube(&protein_rings(res, params), params.sides, out),
            Piece::NucleicTube(res) => emit_tube(&nucleic_rings(res, params), params.sides, out),
            Piece::Boxes { boxes } => {
                for b in boxes {
                    emit_box(b, out);
                }
            }
        }
    }
}

/// Vertices and indices of a tube of `rings` rings, `bands` bands between them and `sides` vertices
/// around: the rings and two caps (a centre plus a ring each).
pub(crate) fn tube_counts(rings: usize, bands: usize, sides: usize) -> (usize, usize) {
    ((rings + 2) * sides + 2, (bands * 2 * sides + 2 * sides) * 3)
}

/// Catmull-Rom point and derivative at parameter `t` in [0, 1] between `p1` and `p2`.
fn catmull_rom(p0: Vec3, p1: Vec3, p2: Vec3, p3: Vec3, t: f32) -> (Vec3, Vec3) {
    let t2 = t * t;
    let t3 = t2 * t;
    let w = [
        -0.5 * t3 + t2 - 0.5 * t,
        1.5 * t3 - 2.5 * t2 + 1.0,
        -1.5 * t3 + 2.0 * t2 + 0.5 * t,
        0.5 * t3 - 0.5 * t2,
    ];
    let d = [
        -1.5 * t2 + 2.0 * t - 0.5,
        4.5 * t2 - 5.0 * t,
        -4.5 * t2 + 4.0 * t + 0.5,
        1.5 * t2 - t,
    ];
    let p = p0
        .scale(w[0])
        .add(p1.scale(w[1]))
        .add(p2.scale(w[2]))
        .add(p3.scale(w[3]));
    let dp = p0
        .scale(d[0])
        .add(p1.scale(d[1]))
        .add(p2.scale(d[2]))
        .add(p3.scale(d[3]));
    (p, dp)
}

/// Per-residue inputs the tube builder needs, whatever the polymer.
pub(crate) struct TraceInput {
    pub(crate) points: Vec<Vec3>,
    /// Unit side vectors (perpendicular to the local chain direction), already sign-consistent.
    pub(crate) sides: Vec<Option<Vec3>>,
    /// The sections residues take, by [`TraceInput::codes`].
    pub(crate) sections: [Profile; 3],
    /// Per residue, its section in `sections` (0 coil or tube, 1 helix, 2 strand).
    pub(crate) codes: Vec<u8>,
    /// Residues whose interval to the next residue holds an arrowhead (from their section's width
    /// times the arrow factor down to `tip`).
    pub(crate) arrows: Vec<bool>,
    /// Section at an arrow's point (the coil tube).
    pub(crate) tip: Profile,
    pub(crate) colors: Vec<[u8; 4]>,
    pub(crate) values: Vec<f32>,
    /// Straight segments (trace style) instead of the spline.
    pub(crate) linear: bool,
}

fn protein_rings(res: &[ProteinResidue], params: &CartoonParams) -> Vec<Ring> {
    trace_rings(&protein_input(res, params), params)
}

/// The sections of a protein tube by [`TraceInput::codes`] (coil or tube, helix, strand).
pub(crate) fn protein_sections(params: &CartoonParams) -> [Profile; 3] {
    match params.style {
        Style::Tube => [Profile::circle(params.tube_radius_angstrom); 3],
        Style::Trace => [Profile::circle(params.trace_radius_angstrom); 3],
        Style::Cartoon => [
            Profile::circle(params.coil_radius_angstrom),
            Profile {
                a: 0.5 * params.helix_width_angstrom,
                b: 0.5 * params.helix_thickness_angstrom,
                e: 2.0,
            },
            Profile {
                a: 0.5 * params.strand_width_angstrom,
                b: 0.5 * params.strand_thickness_angstrom,
                e: 6.0,
            },
        ],
    }
}

/// The per-residue inputs of a protein tube: smoothed trace points, sign-consistent side vectors,
/// sections, arrowheads, colours and values.
pub(crate) fn protein_input(res: &[ProteinResidue], params: &CartoonParams) -> TraceInput {
    let n = res.len();
    let raw: Vec<Vec3> = res.iter().map(|r| Vec3(r.trace)).collect();
    let shape = |k: usize| match params.style {
        Style::Cartoon => res.get(k).map_or(Shape::Coil, |r| r.shape),
        _ => Shape::Coil,
    };
    // Smooth the pleat out of strands (not at their ends).
    let points: Vec<Vec3> = (0..n)
        .map(|k| {
            let inner = k > 0
                && k + 1 < n
                && shape(k) == Shape::Strand
                && shape(k - 1) == Shape::Strand
                && shape(k + 1) == Shape::Strand;
            if inner {
                raw[k - 1]
                    .scale(0.25)
                    .add(raw[k].scale(0.5))
                    .add(raw[k + 1].scale(0.25))
            } else {
                raw[k]
            }
        })
        .collect();
    // Side vectors from the carbonyls, perpendicular to the chain direction, flipped to follow the
    // previous one.
    let mut sides: Vec<Option<Vec3>> = Vec::with_capacity(n);
    let mut previous: Option<Vec3> = None;
    for k in 0..n {
        let dir = points[(k + 1).min(n - 1)].sub(points[k.saturating_sub(1)]).normalized();
        let side = res[k]
            .guide
            .filter(|g| finite(*g))
            .and_then(|g| {
                let v = Vec3(g).sub(raw[k]);
                match dir {
                    Some(t) => v.sub(t.scale(v.dot(t))).normalized(),
                    None => v.normalized(),
                }
            })
            .map(|s| {
                if previous.is_some_and(|p| p.dot(s) < 0.0) {
                    s.scale(-1.0)
                } else {
                    s
                }
            });
        if side.is_some() {
            previous = side;
        }
        sides.push(side);
    }
    let codes: Vec<u8> = (0..n)
        .map(|k| match shape(k) {
            Shape::Coil => 0,
            Shape::Helix => 1,
            Shape::Strand => 2,
        })
        .collect();
    let arrows = protein_arrows(res, params);
    TraceInput {
        points,
        sides,
        sections: protein_sections(params),
        codes,
        arrows,
        tip: Profile::circle(params.coil_radius_angstrom),
        colors: res.iter().map(|r| r.color).collect(),
        values: res.iter().map(|r| r.value).collect(),
        linear: params.style == Style::Trace,
    }
}

/// The residues whose interval to the next holds an arrowhead: the last residue of each strand run;
/// a run at the very end of the piece points its arrow over its own last interval.
fn protein_arrows(res: &[ProteinResidue], params: &CartoonParams) -> Vec<bool> {
    let n = res.len();
    let shape = |k: usize| match params.style {
        Style::Cartoon => res.get(k).map_or(Shape::Coil, |r| r.shape),
        _ => Shape::Coil,
    };
    let mut arrows = vec![false; n];
    for k in 0..n {
        if shape(k) != Shape::Strand {
            continue;
        }
        if k + 1 < n && shape(k + 1) != Shape::Strand {
            if let Some(a) = arrows.get_mut(k) {
                *a = true;
            }
        } else if k + 1 == n
            && k >= 1
            && shape(k - 1) == Shape::Strand
            && let Some(a) = arrows.get_mut(k - 1)
        {
            *a = true;
        }
    }
    arrows
}

pub(crate) fn nucleic_rings(res: &[NucleicResidue], params: &CartoonParams) -> Vec<Ring> {
    let n = res.len();
    let radius = match params.style {
        Style::Cartoon => params.nucleic_radius_angstrom,
        Style::Tube => params.tube_radius_angstrom,
        Style::Trace => params.trace_radius_angstrom,
    };
    trace_rings(
        &TraceInput {
            points: res.iter().map(|r| Vec3(r.trace)).collect(),
            sides: vec![None; n],
            sections: [Profile::circle(radius); 3],
            codes: vec![0; n],
            arrows: vec![false; n],
            tip: Profile::circle(radius),
            colors: res.iter().map(|r| r.color).collect(),
            values: res.iter().map(|r| r.value).collect(),
            linear: params.style == Style::Trace,
        },
        params,
    )
}

impl TraceInput {
    /// The section of residue `k` (the coil's past the end).
    fn section(&self, k: usize) -> Profile {
        let code = self.codes.get(k).map_or(0, |&c| usize::from(c));
        self.sections.get(code).copied().unwrap_or(self.tip)
    }
}

/// Rings along the trace: `segments_per_residue` per residue interval, plus the flat pair of each
/// arrowhead step.
pub(crate) fn trace_rings(input: &TraceInput, params: &CartoonParams) -> Vec<Ring> {
    let n = input.points.len();
    let per = params.segments_per_residue;
    let mut rings = Vec::with_capacity((n.saturating_sub(1)) * per + 1 + 2 * input.arrows.len());
    let point = |k: isize| -> Vec3 {
        let n = n as isize;
        if k < 0 {
            // Reflected end points keep the end tangents along the first and last bonds.
            input.points[0].scale(2.0).sub(input.points[1.min(n as usize - 1)])
        } else if k >= n {
            input.points[(n - 1) as usize]
                .scale(2.0)
                .sub(input.points[(n - 2).max(0) as usize])
        } else {
            input.points[k as usize]
        }
    };
    let mut tangent_prev = input.points[n - 1]
        .sub(input.points[0])
        .normalized()
        .unwrap_or(Vec3([1.0, 0.0, 0.0]));
    let mut side_prev: Option<Vec3> = None;
    for k in 0..n {
        let last = k + 1 == n;
        let steps = if last { 1 } else { per };
        for s in 0..steps {
            let t = s as f32 / per as f32;
            let (center, derivative) = if last {
                let (p, d) = if input.linear {
                    (point(k as isize), point(k as isize).sub(point(k as isize - 1)))
                } else {
                    catmull_rom(
                        point(k as isize - 2),
                        point(k as isize - 1),
                        point(k as isize),
                        point(k as isize + 1),
                        1.0,
                    )
                };
                (p, d)
            } else if input.linear {
                let (a, b) = (point(k as isize), point(k as isize + 1));
                (a.lerp(b, t), b.sub(a))
            } else {
                catmull_rom(
                    point(k as isize - 1),
                    point(k as isize),
                    point(k as isize + 1),
                    point(k as isize + 2),
                    t,
                )
            };
            let tangent = derivative.normalized().unwrap_or(tangent_prev);
            // Side vector: interpolated between the residues' carbonyl directions, else carried.
            let wanted = match (input.sides[k], input.sides.get(k + 1).copied().flatten()) {
                (Some(a), Some(b)) if !last => Some(a.lerp(b, t)),
                (Some(a), _) => Some(a),
                (None, Some(b)) if !last => Some(b),
                _ => None,
            }
            .or(side_prev);
            let side = wanted
                .and_then(|w| w.sub(tangent.scale(w.dot(tangent))).normalized())
                .or_else(|| side_prev.and_then(|w| w.sub(tangent.scale(w.dot(tangent))).normalized()))
                .unwrap_or_else(|| tangent.any_perpendicular());
            tangent_prev = tangent;
            side_prev = Some(side);
            let near = if t < 0.5 || last { k } else { k + 1 };
            let color = input.colors.get(near).copied().unwrap_or([255; 4]);
            let value = if last {
                input.values[k]
            } else {
                input.values[k] + (input.values[k + 1] - input.values[k]) * t
            };
            let p_here = input.section(k);
            let p_next = if last { p_here } else { input.section(k + 1) };
            let ring = |profile: Profile, flat: Option<Vec3>, joined: bool| Ring {
                center,
                tangent,
                side,
                profile,
                color,
                value,
                flat,
                joined,
            };
            if !last && input.arrows[k] {
                let head = Profile {
                    a: p_here.a * params.arrow_width_factor,
                    ..p_here
                };
                if s == 0 {
                    // The arrowhead's back: the body's end, a flat step out, the head's base.
                    rings.push(ring(p_here, None, true));
                    rings.push(ring(p_here, Some(tangent.scale(-1.0)), false));
                    rings.push(ring(head, Some(tangent.scale(-1.0)), true));
                    rings.push(ring(head, None, false));
                } else {
                    rings.push(ring(head.lerp(input.tip, t), None, true));
                }
            } else {
                // After an arrowhead the section starts from its point.
                let start = if k > 0 && input.arrows[k - 1] {
                    input.tip
                } else {
                    p_here
                };
                let profile = if last { start } else { start.lerp(p_next, t) };
                rings.push(ring(profile, None, true));
            }
        }
    }
    rings
}

/// `(cos, sin)` of the angle of each of a section's `sides` vertices.
pub(crate) fn section_angles(sides: usize) -> Vec<(f32, f32)> {
    (0..sides)
        .map(|j| {
            let a = std::f32::consts::TAU * j as f32 / sides as f32;
            (a.cos(), a.sin())
        })
        .collect()
}

/// Writes the rings as bands of quads, closed by a flat cap at each end.
#[cfg(test)]
mod tests;
