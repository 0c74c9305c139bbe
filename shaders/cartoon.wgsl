// Cartoon mesh as a compute pass: per-ring records -> vertices, per-vertex colours and indices, in
// the buffers the mesh pipeline draws.
//
// Owned by `src/render/cartoon_compute.rs`, which uploads the records that `surface::cartoon::device`
// makes on the CPU and records the passes:
//   1. make_vertices  (one thread per vertex): position, normal and colour of one vertex;
//   2. make_triangles (one thread per triangle): its three indices.
// Counts and offsets of every piece are known on the host, so no atomics: a thread finds its piece
// by binary search over the pieces' first vertex (or triangle), then its ring and angle. The layout
// is the CPU mesh's (`surface::cartoon::emit_tube`, `emit_box`), vertex for vertex:
//   tube: start-cap centre, start-cap rim (first ring, normals -tangent), every ring, end-cap
//         centre, end-cap rim (last ring, normals +tangent); triangles: start cap, the bands
//         (two per quad) of each joined ring, end cap;
//   boxes: 24 vertices (6 faces of 4 corners) and 12 triangles each.

// Twin of `CartoonPassParams` in src/render/cartoon_compute.rs (repr(C), 1056 bytes).
struct Params {
    sides: u32,
    n_pieces: u32,
    n_vertices: u32,
    n_triangles: u32,
    // Threads per row of the 2-D dispatch (64 * workgroups along x).
    threads_per_row: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    // (cos, sin, 0, 0) of each ring vertex's angle.
    angles: array<vec4<f32>, 64>,
}

// Twin of `CartoonPiece` in src/surface/cartoon/device.rs (32 bytes).
struct Piece {
    kind: u32,
    first_record: u32,
    n_records: u32,
    first_band: u32,
    n_bands: u32,
    first_vertex: u32,
    first_triangle: u32,
    pad: u32,
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

const PIECE_BOXES: u32 = 1u;
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
