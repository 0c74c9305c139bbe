// The Coulomb potential of point charges at every vertex of a mesh that the marching-cubes pass
// (`marching_cubes.wgsl`) left on the render device: read from its vertex buffer, written into a
// per-vertex colour buffer that the mesh pipelines draw through the colormap (`mesh.wgsl`,
// `vs_mesh_colors`). Host side: `render::vertex_potential` (src/render/vertex_potential.rs).
//
// Each workgroup takes WORKGROUP * PER_THREAD consecutive vertices (each invocation PER_THREAD of
// them, WORKGROUP apart, so loads and stores are coalesced; their positions stay in registers) and
// one run of the charges: all of them, or one of `parts` runs when the vertex blocks alone are too
// few to keep a large device busy (the runs' sums are then added by `sum_parts`). It walks its
// charges in tiles of TILE staged in workgroup memory as vec4 (x, y, z, q), so each charge
// read from workgroup memory feeds PER_THREAD pairs. PER_THREAD is a pipeline constant (one
// pipeline per variant, `VertexPotentialVariant` on the host). Accuracy in f32: the distance is
// taken from the f32 positions with one rounding per component, r^2 with fmas; 1/r is
// `inverseSqrt` refined by one Newton step (about one ulp, and not biased in one direction the way
// a hardware approximation may be); the TILE terms of a tile are summed in blocks of BLOCK and the
// tiles' partial sums are added with Kahan compensation, once per tile (which a compiler that
// reassociates would remove: see `keep`). What is left is the f32 rounding of each term, as on the
// CPU (`compute::cpu::potential`).

// Invocations per workgroup: 128 or 64 (a pipeline constant like PER_THREAD: smaller groups spread
// a surface of few vertices over more of a large device's multiprocessors). TILE is a multiple.
override WORKGROUP: u32 = 128u;
// The most vertices one invocation may take.
const MAX_PER_THREAD: u32 = 16u;
const TILE: u32 = 256u;
const BLOCK: u32 = 8u;
// Refine 1/r with a Newton step (a pipeline of its own without, to measure what it costs).
override NEWTON: bool = true;
// Vertices per invocation: 4, 8 or 16 (the host sets it with the dispatch's size). The vertices
// are held in groups of four written out by hand, the groups beyond PER_THREAD / 4 behind branches
// on this constant, so no loop has to be unrolled for the positions and sums to stay in registers.
override PER_THREAD: u32 = 8u;
// 0: the vacuum pass (1/r). 1: the screened pass, whose model `params.model` picks at run time:
// 1 a / r^2 (distance-dependent dielectric), 2 a exp(-b r) / r (Debye-Hueckel), r in Angstrom,
// `a` and `b` from `render::vertex_potential::VertexScreening`.
override SCREENED: u32 = 0u;

// Twin of `render::vertex_potential::CoulombParams`.
struct Params {
    // Charges in the buffer: a multiple of TILE (padded with zero charges far away).
    n_charges: u32,
    // Vertices the vertex and value buffers hold.
    vertex_capacity: u32,
    // Workgroups along x of the dispatch (the group index is x + y * groups_x).
    groups_x: u32,
    // Always 1 (see the Kahan step).
    keep: u32,
    // hartree/e per (e/Angstrom): the length of an Angstrom in bohr, inverted.
    scale: f32,
    // The charges are split into `parts` runs of `tiles_per_part` tiles; each workgroup sums one
    // run for its vertices. With one part the sums go straight to `values`, else into `partials`
    // (part-major, `vertex_capacity` per part), which `sum_parts` adds in order.
    parts: u32,
    tiles_per_part: u32,
    // Vertex blocks (workgroups) per part.
    blocks: u32,
    // The screened pass's model (1 or 2) and its parameters (Angstrom units; see SCREENED).
    model: u32,
    screen_a: f32,
    screen_b: f32,
    // Each vertex is moved this far along its normal before the sum (Angstrom; 0 at the vertex:
    // PyMOL's surface_ramp_above_mode samples 1.4 A outside).
    offset_angstrom: f32,
};

// Twin of `render::gpu::MeshVertexColor` (the mesh pipelines' second vertex buffer).
struct VertexValue {
    value: f32,
    // 0: draw `value` through the colormap.
    color: u32,
};

@group(0) @binding(0) var<uniform> params: Params;
// The marching-cubes pass's counters: vertices and indices the surface needed.
@group(0) @binding(1) var<storage, read> counters: array<u32>;
// The marching-cubes pass's vertices: position (Angstrom) then normal, 6 floats each.
@group(0) @binding(2) var<storage, read> vertices: array<f32>;
// x, y, z (Angstrom) and charge (e).
@group(0) @binding(3) var<storage, read> charges: array<vec4<f32>>;
@group(0) @binding(4) var<storage, read_write> values: array<VertexValue>;
// Unscaled sums per part and vertex when `parts` > 1.
@group(0) @binding(5) var<storage, read_write> partials: array<f32>;

var<workgroup> tile: array<vec4<f32>, TILE>;
var<workgroup> vertex_count: u32;

fn position(i: u32, n: u32) -> vec3<f32> {
    let k = 6u * min(i, max(n, 1u) - 1u);
    let p = vec3<f32>(vertices[k], vertices[k + 1u], vertices[k + 2u]);
    if params.offset_angstrom == 0.0 {
        return p;
    }
    let normal = vec3<f32>(vertices[k + 3u], vertices[k + 4u], vertices[k + 5u]);
    return p + params.offset_angstrom * normal;
}

// 1/r at `p` from the charge at `c`.
fn inv_distance(p: vec3<f32>, c: vec3<f32>) -> f32 {
    let d = p - c;
    let d2 = fma(d.x, d.x, fma(d.y, d.y, d.z * d.z));
    var r = inverseSqrt(d2);
    if NEWTON {
        // r (1 + e/2), e = 1 - r^2 r0^2 from an fma.
        let e = fma(-d2 * r, r, 1.0);
        r = fma(0.5 * r, e, r);
    }
    return r;
}

// The positions of the vertices `i`, `i + WORKGROUP`, `i + 2 WORKGROUP`, `i + 3 WORKGROUP`.
fn positions4(i: u32, n: u32) -> array<vec3<f32>, 4> {
    return array<vec3<f32>, 4>(
        position(i, n),
        position(i + WORKGROUP, n),
        position(i + 2u * WORKGROUP, n),
        position(i + 3u * WORKGROUP, n),
    );
}

// The kernel of a unit charge at `c` seen at `p`: 1/r, or the screened pass's model.
fn kernel(p: vec3<f32>, c: vec3<f32>) -> f32 {
    let ir = inv_distance(p, c);
    if SCREENED == 0u {
        return ir;
    }
    if params.model == 1u {
        return params.screen_a * ir * ir;
    }
    return params.screen_a * ir * exp(-params.screen_b / ir);
}

// The terms of the charge `c` (x, y, z, q) at four vertices `p`, added to `acc`.
fn add_terms(acc: vec4<f32>, p: array<vec3<f32>, 4>, c: vec4<f32>) -> vec4<f32> {
    let r = vec4<f32>(
        kernel(p[0], c.xyz),
        kernel(p[1], c.xyz),
        kernel(p[2], c.xyz),
        kernel(p[3], c.xyz),
    );
    return fma(vec4<f32>(c.w), r, acc);
}

// Kahan: a tile's sum `part` into the running sum `s` with compensation `comp`. `keep` is 1 at run
// time but unknown to the compiler, so the compensation is not simplified away as algebraically
// zero.
fn kahan_add(s: ptr<function, vec4<f32>>, comp: ptr<function, vec4<f32>>, part: vec4<f32>) {
    let y = part - *comp;
    let t = *s + y;
    *comp = (select(*s, t, params.keep != 0u) - *s) - y;
    *s = t;
}

// Writes the four values of `sum - comp` for the vertices `i`, `i + WORKGROUP`, ... below `n`:
// scaled into `values`, or unscaled into this part's run of `partials`.
fn store4(i: u32, n: u32, part: u32, s: vec4<f32>, comp: vec4<f32>) {
    let v = s - comp;
    for (var k = 0u; k < 4u; k++) {
        let j = i + k * WORKGROUP;
        if j < n {
            if params.parts == 1u {
                values[j] = VertexValue(v[k] * params.scale, 0u);
            } else {
                partials[part * params.vertex_capacity + j] = v[k];
            }
        }
    }
}

// One invocation per vertex: the parts' sums added in part order, scaled into `values`.
@compute @workgroup_size(64)
fn sum_parts(@builtin(global_invocation_id) gid: vec3<u32>) {
    let j = gid.x + gid.y * params.groups_x * 64u;
    let n = min(counters[0], params.vertex_capacity);
    if j >= n {
        return;
    }
    var s = 0.0;
    for (var part = 0u; part < params.parts; part++) {
        s += partials[part * params.vertex_capacity + j];
    }
    values[j] = VertexValue(s * params.scale, 0u);
}

@compute @workgroup_size(WORKGROUP)
fn vertex_potential(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    if lid == 0u {
        vertex_count = min(counters[0], params.vertex_capacity);
    }
    let n = workgroupUniformLoad(&vertex_count);
    let group = wg.x + wg.y * params.groups_x;
    let part = group / params.blocks;
    let first = (group % params.blocks) * WORKGROUP * PER_THREAD;
    let charge_start = part * params.tiles_per_part * TILE;
    let charge_end = min(params.n_charges, charge_start + params.tiles_per_part * TILE);
    if first >= n || part >= params.parts {
        return;
    }
    // Vertex first + lid + k * WORKGROUP of the workgroup's is in group k / 4 of four: positions
    // g<k/4>, sum s<k/4>.
    let i = first + lid;
    let w = WORKGROUP;
    let g0 = positions4(i, n);
    var g1 = g0;
    var g2 = g0;
    var g3 = g0;
    if PER_THREAD > 4u {
        g1 = positions4(i + 4u * w, n);
    }
    if PER_THREAD > 8u {
        g2 = positions4(i + 8u * w, n);
        g3 = positions4(i + 12u * w, n);
    }
    var s0 = vec4<f32>(0.0);
    var s1 = vec4<f32>(0.0);
    var s2 = vec4<f32>(0.0);
    var s3 = vec4<f32>(0.0);
    var c0 = vec4<f32>(0.0);
    var c1 = vec4<f32>(0.0);
    var c2 = vec4<f32>(0.0);
    var c3 = vec4<f32>(0.0);
    for (var start = charge_start; start < charge_end; start += TILE) {
        workgroupBarrier();
        for (var t = lid; t < TILE; t += WORKGROUP) {
            tile[t] = charges[start + t];
        }
        workgroupBarrier();
        // Blocks of BLOCK terms summed plainly, blocks into the tile's sum, tiles into the total
        // with Kahan compensation: no partial sum grows over more than a few dozen additions.
        var part0 = vec4<f32>(0.0);
        var part1 = vec4<f32>(0.0);
        var part2 = vec4<f32>(0.0);
        var part3 = vec4<f32>(0.0);
        for (var j = 0u; j < TILE; j += BLOCK) {
            var b0 = vec4<f32>(0.0);
            var b1 = vec4<f32>(0.0);
            var b2 = vec4<f32>(0.0);
            var b3 = vec4<f32>(0.0);
            for (var b = 0u; b < BLOCK; b++) {
                let c = tile[j + b];
                b0 = add_terms(b0, g0, c);
                if PER_THREAD > 4u {
                    b1 = add_terms(b1, g1, c);
                }
                if PER_THREAD > 8u {
                    b2 = add_terms(b2, g2, c);
                    b3 = add_terms(b3, g3, c);
                }
            }
            part0 += b0;
            part1 += b1;
            part2 += b2;
            part3 += b3;
        }
        kahan_add(&s0, &c0, part0);
        if PER_THREAD > 4u {
            kahan_add(&s1, &c1, part1);
        }
        if PER_THREAD > 8u {
            kahan_add(&s2, &c2, part2);
            kahan_add(&s3, &c3, part3);
        }
    }
    store4(i, n, part, s0, c0);
    if PER_THREAD > 4u {
        store4(i + 4u * w, n, part, s1, c1);
    }
    if PER_THREAD > 8u {
        store4(i + 8u * w, n, part, s2, c2);
        store4(i + 12u * w, n, part, s3, c3);
    }
}
