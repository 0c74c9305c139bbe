// Cartoon mesh as compute passes: per-residue inputs -> rings -> vertices, per-vertex colours and
// indices, in the buffers the mesh pipeline draws.
//
// Owned by `src/render/cartoon_compute.rs`, which uploads the inputs that `surface::cartoon::device`
// makes on the CPU and records the passes:
//   0. make_rings     (one thread per ring or box, bind group 1): the spline point, frame and
//                     section of each ring of a per-residue tube (as `surface::cartoon::trace_rings`
//                     makes them), or a copy of a ring or box the CPU made; and the bands;
//   1. make_vertices  (one thread per vertex): position, normal and colour of one vertex;
//   2. make_triangles (one thread per triangle): its three indices.
// Counts and offsets of every piece are known on the host, so no atomics: a thread finds its piece
// by binary search over the pieces' first ring (vertex, triangle), then its residue, ring and angle.
// The layout is the CPU mesh's (`surface::cartoon::emit_tube`, `emit_box`), vertex for vertex:
//   tube: start-cap centre, start-cap rim (first ring, normals -tangent), every ring, end-cap
//         centre, end-cap rim (last ring, normals +tangent); triangles: start cap, the bands
//         (two per quad) of each joined ring, end cap;
//   boxes: 24 vertices (6 faces of 4 corners) and 12 triangles each.

// Twin of `CartoonPassParams` in src/render/cartoon_compute.rs (repr(C), 1392 bytes).
struct Params {
    sides: u32,
    n_pieces: u32,
    n_vertices: u32,
    n_triangles: u32,
    // Threads per row of the 2-D dispatch (64 * workgroups along x).
    threads_per_row: u32,
    // Rings and boxes of all pieces.
    n_records: u32,
    segments_per_residue: u32,
    // 1: straight segments between trace points (the trace style).
    linear: u32,
    arrow_width_factor: f32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    // (a, b, e, 0) of the sections by residue code (coil or tube, helix, strand), then the arrow's
    // point.
    sections: array<vec4<f32>, 4>,
    // t = s / segments_per_residue of sample s, four per element.
    samples_t: array<vec4<f32>, 16>,
    // (cos, sin, 0, 0) of each ring vertex's angle.
    angles: array<vec4<f32>, 64>,
}

// Twin of `CartoonPiece` in src/surface/cartoon/device.rs (64 bytes).
struct Piece {
    kind: u32,
    first_record: u32,
    n_records: u32,
    first_band: u32,
    n_bands: u32,
    first_vertex: u32,
    first_triangle: u32,
    // PIECE_SPLINE: first residue; else first host record.
    first_input: u32,
    // PIECE_SPLINE: residues; else first host band.
    n_residues_or_first_band: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    // PIECE_SPLINE: tangent of a first ring without a direction of its own.
    start_tangent_x: f32,
    start_tangent_y: f32,
    start_tangent_z: f32,
    pad3: u32,
}

// Twin of `CartoonRecord` in src/surface/cartoon/device.rs (64 bytes). A ring: centre, frame
// (tangent, side), superellipse half-width a, half-thickness b, exponent e. A box: centre, first
// two axes in tangent and side, half extents in a, b, e.
struct Record {
    center: vec3<f32>,
    a: f32,
    tangent: vec3<f32>,
    b: f32,
    side: vec3<f32>,
    e: f32,
    color: u32,
    value: f32,
    // Bit 0: normals along -tangent (flat faces of an arrowhead's step).
    flags: u32,
    pad: u32,
}

// Twin of `CartoonResidue` in src/surface/cartoon/device.rs (40 bytes): spline control point,
// index of its interval's first ring in the piece, unit side vector, colour, value, flags (bits
// 0-1 section code, RESIDUE_ARROW, RESIDUE_AFTER_ARROW, RESIDUE_NO_SIDE).
struct Residue {
    px: f32,
    py: f32,
    pz: f32,
    first_ring: u32,
    sx: f32,
    sy: f32,
    sz: f32,
    color: u32,
    value: f32,
    flags: u32,
}

const PIECE_BOXES: u32 = 1u;
const PIECE_SPLINE: u32 = 2u;
const RESIDUE_ARROW: u32 = 4u;
const RESIDUE_AFTER_ARROW: u32 = 8u;
const RESIDUE_NO_SIDE: u32 = 16u;
const FLOATS_PER_VERTEX: u32 = 6u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> pieces: array<Piece>;
@group(0) @binding(2) var<storage, read> records: array<Record>;
@group(0) @binding(3) var<storage, read> bands: array<u32>;
// Position (Angstrom) and normal per vertex: `MeshVertex` of src/render/gpu.rs.
@group(0) @binding(4) var<storage, read_write> vertices: array<f32>;
// Value bits and RGBA8 per vertex: `MeshVertexColor` of src/render/gpu.rs.
@group(0) @binding(5) var<storage, read_write> colors: array<u32>;
@group(0) @binding(6) var<storage, read_write> indices: array<u32>;

fn thread_index(gid: vec3<u32>) -> u32 {
    return gid.x + gid.y * params.threads_per_row;
}

// The last piece whose first vertex (first triangle, `by_triangle`) is at most `id`.
fn piece_of(id: u32, by_triangle: bool) -> u32 {
    var lo = 0u;
    var hi = params.n_pieces;
    loop {
        if (hi - lo <= 1u) {
            break;
        }
        let mid = (lo + hi) / 2u;
        let p = pieces[mid];
        if (select(p.first_vertex, p.first_triangle, by_triangle) <= id) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

// sign(x) |x|^k (0 at 0).
fn signed_pow(x: f32, k: f32) -> f32 {
    if (x == 0.0) {
        return 0.0;
    }
    return sign(x) * pow(abs(x), k);
}

struct Vertex {
    position: vec3<f32>,
    normal: vec3<f32>,
}

// Vertex j of ring `r`; `flat` overrides the section's normal when its length is not zero.
fn ring_vertex(r: Record, j: u32, flat: vec3<f32>) -> Vertex {
    let cs = params.angles[j];
    let c = cs.x;
    let s = cs.y;
    var point = vec2<f32>(c, s);
    var normal = vec2<f32>(c, s);
    let p = 2.0 / r.e;
    if (p != 1.0) {
        let q = 2.0 - p;
        point = vec2<f32>(signed_pow(c, p), signed_pow(s, p));
        normal = vec2<f32>(signed_pow(c, q), signed_pow(s, q));
    }
    let binormal = cross(r.tangent, r.side);
    let pt = vec2<f32>(r.a * point.x, r.b * point.y);
    let nt = vec2<f32>(normal.x / max(r.a, 1e-6), normal.y / max(r.b, 1e-6));
    var out: Vertex;
    out.position = r.center + r.side * pt.x + binormal * pt.y;
    if (dot(flat, flat) > 0.0) {
        out.normal = flat;
    } else {
        let n = r.side * nt.x + binormal * nt.y;
        let len = length(n);
        if (len > 1e-6 && len <= 3.4e38) {
            out.normal = n * (1.0 / len);
        } else {
            out.normal = r.side * c + binormal * s;
        }
    }
    return out;
}

fn box_vertex(r: Record, l: u32) -> Vertex {
    let face = l / 4u;
    let m = l % 4u;
    var axes = array<vec3<f32>, 3>(r.tangent, r.side, cross(r.tangent, r.side));
    var half = array<f32, 3>(r.a, r.b, r.e);
    let k = face / 2u;
    let sgn = select(-1.0, 1.0, face % 2u == 0u);
    let u = axes[(k + 1u) % 3u];
    let v = axes[(k + 2u) % 3u];
    let hu = half[(k + 1u) % 3u];
    let hv = half[(k + 2u) % 3u];
    // Corners (-1,-1), (1,-1), (1,1), (-1,1): counter-clockwise seen from outside.
    let ca = select(-1.0, 1.0, m == 1u || m == 2u);
    let cb = select(-1.0, 1.0, m >= 2u);
    let n = axes[k] * sgn;
    let centre = r.center + n * half[k];
    var out: Vertex;
    out.position = centre + u * (ca * hu) + v * (cb * hv * sgn);
    out.normal = n;
    return out;
}

@compute @workgroup_size(64)
fn make_vertices(@builtin(global_invocation_id) gid: vec3<u32>) {
    let v = thread_index(gid);
    if (v >= params.n_vertices) {
        return;
    }
    let piece = pieces[piece_of(v, false)];
    let l = v - piece.first_vertex;
    let s = params.sides;
    var r: Record;
    var out: Vertex;
    if (piece.kind == PIECE_BOXES) {
        r = records[piece.first_record + l / 24u];
        out = box_vertex(r, l % 24u);
    } else {
        let rings_end = 1u + s + piece.n_records * s;
        if (l == 0u) {
            r = records[piece.first_record];
            out.position = r.center;
            out.normal = -r.tangent;
        } else if (l <= s) {
            r = records[piece.first_record];
            out = ring_vertex(r, l - 1u, -r.tangent);
        } else if (l < rings_end) {
            let k = (l - 1u - s) / s;
            r = records[piece.first_record + k];
            var flat = vec3<f32>(0.0);
            if ((r.flags & 1u) != 0u) {
                flat = -r.tangent;
            }
            out = ring_vertex(r, (l - 1u - s) % s, flat);
        } else if (l == rings_end) {
            r = records[piece.first_record + piece.n_records - 1u];
            out.position = r.center;
            out.normal = r.tangent;
        } else {
            r = records[piece.first_record + piece.n_records - 1u];
            out = ring_vertex(r, l - rings_end - 1u, r.tangent);
        }
    }
    let o = v * FLOATS_PER_VERTEX;
    vertices[o] = out.position.x;
    vertices[o + 1u] = out.position.y;
    vertices[o + 2u] = out.position.z;
    vertices[o + 3u] = out.normal.x;
    vertices[o + 4u] = out.normal.y;
    vertices[o + 5u] = out.normal.z;
    colors[2u * v] = bitcast<u32>(r.value);
    colors[2u * v + 1u] = r.color;
}

@compute @workgroup_size(64)
fn make_triangles(@builtin(global_invocation_id) gid: vec3<u32>) {
    let t = thread_index(gid);
    if (t >= params.n_triangles) {
        return;
    }
    let piece = pieces[piece_of(t, true)];
    let l = t - piece.first_triangle;
    let s = params.sides;
    let base = piece.first_vertex;
    var tri: vec3<u32>;
    if (piece.kind == PIECE_BOXES) {
        let f = base + (l / 12u) * 24u + ((l % 12u) / 2u) * 4u;
        if (l % 2u == 0u) {
            tri = vec3<u32>(f, f + 1u, f + 2u);
        } else {
            tri = vec3<u32>(f, f + 2u, f + 3u);
        }
    } else {
        let band_triangles = 2u * s * piece.n_bands;
        if (l < s) {
            let j = l;
            let after = select(j + 1u, 0u, j + 1u == s);
            tri = vec3<u32>(base, base + 1u + after, base + 1u + j);
        } else if (l < s + band_triangles) {
            let m = l - s;
            let q = m % (2u * s);
            let j = q / 2u;
            let after = select(j + 1u, 0u, j + 1u == s);
            let k = bands[piece.first_band + m / (2u * s)];
            let here = base + 1u + s + k * s;
            let prev = here - s;
            let a = prev + j;
            if (q % 2u == 0u) {
                tri = vec3<u32>(a, prev + after, here + after);
            } else {
                tri = vec3<u32>(a, here + after, here + j);
            }
        } else {
            let j = l - s - band_triangles;
            let after = select(j + 1u, 0u, j + 1u == s);
            let centre = base + 1u + s + piece.n_records * s;
            tri = vec3<u32>(centre, centre + 1u + j, centre + 1u + after);
        }
    }
    indices[3u * t] = tri.x;
    indices[3u * t + 1u] = tri.y;
    indices[3u * t + 2u] = tri.z;
}

// ---- Pass 0: rings (bind group 1) ----

@group(1) @binding(0) var<uniform> ring_params: Params;
@group(1) @binding(1) var<storage, read> ring_pieces: array<Piece>;
@group(1) @binding(2) var<storage, read> residues: array<Residue>;
@group(1) @binding(3) var<storage, read> host_records: array<Record>;
@group(1) @binding(4) var<storage, read> host_bands: array<u32>;
// The ring buffer `records` of group 0, and its bands.
@group(1) @binding(5) var<storage, read_write> rings: array<Record>;
@group(1) @binding(6) var<storage, read_write> ring_bands: array<u32>;

// Farthest a ring looks back for a sample with a direction and side vector of its own (the CPU
// sends pieces whose samples could lack them for longer on the per-ring path: long runs of
// residues without carbonyls, coincident trace points).
const MAX_LOOK_BACK: u32 = 64u;

// The last piece whose first ring is at most `id`.
fn piece_of_ring(id: u32) -> u32 {
    var lo = 0u;
    var hi = ring_params.n_pieces;
    loop {
        if (hi - lo <= 1u) {
            break;
        }
        let mid = (lo + hi) / 2u;
        if (ring_pieces[mid].first_record <= id) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    return lo;
}

fn control_point(p: Piece, k: u32) -> vec3<f32> {
    let r = residues[p.first_input + k];
    return vec3<f32>(r.px, r.py, r.pz);
}

// The side vector of residue k (w = 1), or w = 0 where it has none.
fn side_of(p: Piece, k: u32) -> vec4<f32> {
    let r = residues[p.first_input + k];
    return vec4<f32>(r.sx, r.sy, r.sz, select(1.0, 0.0, (r.flags & RESIDUE_NO_SIDE) != 0u));
}

// Control point k, reflected past the ends (keeps the end tangents along the first and last bonds).
fn spline_point(p: Piece, k: i32) -> vec3<f32> {
    let n = i32(p.n_residues_or_first_band);
    if (k < 0) {
        return control_point(p, 0u) * 2.0 - control_point(p, u32(min(1, n - 1)));
    }
    if (k >= n) {
        return control_point(p, u32(n - 1)) * 2.0 - control_point(p, u32(max(n - 2, 0)));
    }
    return control_point(p, u32(k));
}

fn sample_t(s: u32) -> f32 {
    return ring_params.samples_t[s / 4u][s % 4u];
}

// x.x + y.y + z.z in the CPU's order.
fn dot3(a: vec3<f32>, b: vec3<f32>) -> f32 {
    return a.x * b.x + a.y * b.y + a.z * b.z;
}

fn cross3(a: vec3<f32>, b: vec3<f32>) -> vec3<f32> {
    return vec3<f32>(a.y * b.z - a.z * b.y, a.z * b.x - a.x * b.z, a.x * b.y - a.y * b.x);
}

// The unit vector along v (w = 1), or w = 0 when v is too short to have a direction.
fn unit(v: vec3<f32>) -> vec4<f32> {
    let l = sqrt(dot3(v, v));
    if (l > 1e-6 && l <= 3.4028235e38) {
        return vec4<f32>(v * (1.0 / l), 1.0);
    }
    return vec4<f32>(0.0);
}

// Some unit vector perpendicular to the unit vector v.
fn any_perpendicular(v: vec3<f32>) -> vec3<f32> {
    let a = abs(v);
    var axis = vec3<f32>(0.0, 0.0, 1.0);
    if (a.x <= a.y && a.x <= a.z) {
        axis = vec3<f32>(1.0, 0.0, 0.0);
    } else if (a.y <= a.z) {
        axis = vec3<f32>(0.0, 1.0, 0.0);
    }
    let u = unit(cross3(v, axis));
    return select(vec3<f32>(0.0, 0.0, 1.0), u.xyz, u.w > 0.0);
}

// The unit part of w perpendicular to the unit vector t (w = 0 when none).
fn perpendicular_part(w: vec3<f32>, t: vec3<f32>) -> vec4<f32> {
    return unit(w - t * dot3(w, t));
}

struct Sample {
    center: vec3<f32>,
    derivative: vec3<f32>,
}

fn catmull_rom(p0: vec3<f32>, p1: vec3<f32>, p2: vec3<f32>, p3: vec3<f32>, t: f32) -> Sample {
    let t2 = t * t;
    let t3 = t2 * t;
    let w0 = -0.5 * t3 + t2 - 0.5 * t;
    let w1 = 1.5 * t3 - 2.5 * t2 + 1.0;
    let w2 = -1.5 * t3 + 2.0 * t2 + 0.5 * t;
    let w3 = 0.5 * t3 - 0.5 * t2;
    let d0 = -1.5 * t2 + 2.0 * t - 0.5;
    let d1 = 4.5 * t2 - 5.0 * t;
    let d2 = -4.5 * t2 + 4.0 * t + 0.5;
    let d3 = 1.5 * t2 - t;
    var out: Sample;
    out.center = p0 * w0 + p1 * w1 + p2 * w2 + p3 * w3;
    out.derivative = p0 * d0 + p1 * d1 + p2 * d2 + p3 * d3;
    return out;
}

// Residue and sample within its interval of spline sample m of a piece.
fn sample_residue(p: Piece, m: u32) -> vec2<u32> {
    let per = ring_params.segments_per_residue;
    let k = min(m / per, p.n_residues_or_first_band - 1u);
    return vec2<u32>(k, m - k * per);
}

// Point and derivative of the spline at sample m: Catmull-Rom through four of the control points
// k - 2 .. k + 2 around its residue k (straight segments for the trace style).
fn spline_sample(p: Piece, m: u32) -> Sample {
    let ks = sample_residue(p, m);
    let k = i32(ks.x);
    let last = ks.x + 1u == p.n_residues_or_first_band;
    // The last sample is the end (t = 1) of the interval before.
    let first = select(k - 1, k - 2, last);
    let t = select(sample_t(ks.y), 1.0, last);
    var q: array<vec3<f32>, 4>;
    for (var i = 0; i < 4; i++) {
        q[i] = spline_point(p, first + i);
    }
    if (ring_params.linear != 0u) {
        var out: Sample;
        if (last) {
            out.center = q[2];
            out.derivative = q[2] - q[1];
        } else {
            out.center = q[1] + (q[2] - q[1]) * t;
            out.derivative = q[2] - q[1];
        }
        return out;
    }
    return catmull_rom(q[0], q[1], q[2], q[3], t);
}

// The side vector sample m asks for (w = 0: none): its residues' carbonyl sides interpolated, or
// the one of them that has one (the first at a piece's last sample).
fn wanted_side(p: Piece, m: u32) -> vec4<f32> {
    let ks = sample_residue(p, m);
    let a = side_of(p, ks.x);
    if (ks.x + 1u == p.n_residues_or_first_band) {
        return a;
    }
    let b = side_of(p, ks.x + 1u);
    if (a.w > 0.0 && b.w > 0.0) {
        return vec4<f32>(a.xyz + (b.xyz - a.xyz) * sample_t(ks.y), 1.0);
    }
    return select(b, a, a.w > 0.0);
}

struct Frame {
    center: vec3<f32>,
    // The unit tangent (w = 1), or w = 0 where the spline has no direction.
    tangent: vec4<f32>,
    // The side vector asked for (w = 0: none).
    wanted: vec4<f32>,
}

fn sample_frame(p: Piece, m: u32) -> Frame {
    let s = spline_sample(p, m);
    var out: Frame;
    out.center = s.center;
    out.tangent = unit(s.derivative);
    out.wanted = wanted_side(p, m);
    return out;
}

fn section(code: u32) -> vec3<f32> {
    return ring_params.sections[code & 3u].xyz;
}

@compute @workgroup_size(64)
fn make_rings(@builtin(global_invocation_id) gid: vec3<u32>) {
    let r = gid.x + gid.y * ring_params.threads_per_row;
    if (r >= ring_params.n_records) {
        return;
    }
    let p = ring_pieces[piece_of_ring(r)];
    let l = r - p.first_record;
    if (p.kind != PIECE_SPLINE) {
        rings[r] = host_records[p.first_input + l];
        if (l < p.n_bands) {
            ring_bands[p.first_band + l] = host_bands[p.n_residues_or_first_band + l];
        }
        return;
    }
    let n = p.n_residues_or_first_band;
    let per = ring_params.segments_per_residue;
    // The residue whose interval holds ring l: the last whose first ring is at most l.
    var lo = 0u;
    var hi = n;
    loop {
        if (hi - lo <= 1u) {
            break;
        }
        let mid = (lo + hi) / 2u;
        if (residues[p.first_input + mid].first_ring <= l) {
            lo = mid;
        } else {
            hi = mid;
        }
    }
    let k = lo;
    let here = residues[p.first_input + k];
    let o = l - here.first_ring;
    let last = k + 1u == n;
    let arrow = !last && (here.flags & RESIDUE_ARROW) != 0u;
    // Sample within the interval, and which of an arrowhead's four back rings (4: none).
    var s = o;
    var variant = 4u;
    if (last) {
        s = 0u;
    } else if (arrow) {
        if (o < 4u) {
            s = 0u;
            variant = o;
        } else {
            s = o - 3u;
        }
    }
    let m = k * per + s;
    let t = select(sample_t(s), 0.0, last);
    // The CPU carries the tangent and side vector from sample to sample where a sample has none
    // of its own. A sample with its own tangent and side vector depends on no other: look back
    // for the nearest such sample b <= m, then carry the frame forward from it to m as the CPU
    // does (from the piece's start tangent and no side before the first sample).
    var center = vec3<f32>(0.0);
    var tangent = vec3<f32>(p.start_tangent_x, p.start_tangent_y, p.start_tangent_z);
    var side = vec3<f32>(0.0);
    var has_side = false;
    // One loop for both ways (one copy of the spline's code): back from m, then forward.
    var i = m;
    var steps = 0u;
    var forward = false;
    loop {
        let f = sample_frame(p, i);
        if (i == m && !forward) {
            center = f.center;
        }
        if (!forward) {
            var own = vec4<f32>(0.0);
            if (f.tangent.w > 0.0 && f.wanted.w > 0.0) {
                own = perpendicular_part(f.wanted.xyz, f.tangent.xyz);
            }
            if (own.w > 0.0) {
                tangent = f.tangent.xyz;
                side = own.xyz;
                has_side = true;
                if (i == m) {
                    break;
                }
                forward = true;
                i += 1u;
                continue;
            }
            if (i > 0u && steps < MAX_LOOK_BACK) {
                i -= 1u;
                steps += 1u;
                continue;
            }
            // No such sample: carry from the start tangent and no side, from this sample on.
            forward = true;
        }
        tangent = select(tangent, f.tangent.xyz, f.tangent.w > 0.0);
        var next = vec4<f32>(0.0);
        if (f.wanted.w > 0.0) {
            next = perpendicular_part(f.wanted.xyz, tangent);
        }
        if (next.w == 0.0 && has_side) {
            next = perpendicular_part(side, tangent);
        }
        side = select(any_perpendicular(tangent), next.xyz, next.w > 0.0);
        has_side = true;
        if (i >= m) {
            break;
        }
        i += 1u;
    }
    var near = k + 1u;
    if (t < 0.5 || last) {
        near = k;
    }
    var value = here.value;
    let p_here = section(here.flags);
    var p_next = p_here;
    if (!last) {
        let next = residues[p.first_input + k + 1u];
        value = here.value + (next.value - here.value) * t;
        p_next = section(next.flags);
    }
    let tip = ring_params.sections[3].xyz;
    var profile: vec3<f32>;
    var flat = false;
    var joined = true;
    if (arrow) {
        let head = vec3<f32>(p_here.x * ring_params.arrow_width_factor, p_here.y, p_here.z);
        if (s == 0u) {
            profile = select(p_here, head, variant >= 2u);
            flat = variant == 1u || variant == 2u;
            joined = variant == 0u || variant == 2u;
        } else {
            profile = head + (tip - head) * t;
        }
    } else {
        var start = p_here;
        if (k > 0u && (here.flags & RESIDUE_AFTER_ARROW) != 0u) {
            start = tip;
        }
        profile = select(start + (p_next - start) * t, start, last);
    }
    var out: Record;
    out.center = center;
    out.a = profile.x;
    out.tangent = tangent;
    out.b = profile.y;
    out.side = side;
    out.e = profile.z;
    out.color = residues[p.first_input + near].color;
    out.value = value;
    out.flags = select(0u, 1u, flat);
    out.pad = 0u;
    rings[r] = out;
    if (l > 0u && joined) {
        // Bands close at every joined ring but the first: two rings of each arrowhead's back start
        // none.
        var arrows_before = 0u;
        if (k > 0u) {
            arrows_before = (here.first_ring - k * per) / 3u;
        }
        var extra = 0u;
        if (arrow) {
            extra = select(0u, 1u, o > 1u) + select(0u, 1u, o > 3u);
        }
        ring_bands[p.first_band + l - 1u - 2u * arrows_before - extra] = l;
    }
}
