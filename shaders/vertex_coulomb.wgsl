// The Coulomb potential of point charges at every vertex of a mesh that the marching-cubes pass
// (`marching_cubes.wgsl`) left on the render device: read from its vertex buffer, written into a
// per-vertex colour buffer that the mesh pipelines draw through the colormap (`mesh.wgsl`,
// `vs_mesh_colors`). Host side: `render::vertex_potential` (src/render/vertex_potential.rs).
//
// Each workgroup takes WORKGROUP * PER_THREAD consecutive vertices (each invocation PER_THREAD of
// them, WORKGROUP apart, so loads and stores are coalesced; their positions stay in registers) and
// walks the charges in tiles of TILE staged in workgroup memory as vec4 (x, y, z, q), so each charge
// read from workgroup memory feeds PER_THREAD pairs. PER_THREAD is a pipeline constant (one
// pipeline per variant, `VertexPotentialVariant` on the host). Accuracy in f32: the distance is
// taken from the f32 positions with one rounding per component, r^2 with fmas; 1/r is
// `inverseSqrt` refined by one Newton step (about one ulp, and not biased in one direction the way
// a hardware approximation may be); the TILE terms of a tile are summed in blocks of BLOCK and the
// tiles' partial sums are added with Kahan compensation, once per tile (which a compiler that
// reassociates would remove: see `keep`). What is left is the f32 rounding of each term, as on the
// CPU (`compute::cpu::potential`).

const WORKGROUP: u32 = 128u;
// The most vertices one invocation may take: the length of its register arrays.
const MAX_PER_THREAD: u32 = 16u;
const TILE: u32 = 256u;
const BLOCK: u32 = 8u;
// Refine 1/r with a Newton step (a pipeline of its own without, to measure what it costs).
override NEWTON: bool = true;
// Vertices per invocation, 1..=MAX_PER_THREAD (the host sets it with the dispatch's size).
override PER_THREAD: u32 = 8u;

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
    pad0: f32,
    pad1: f32,
    pad2: f32,
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

var<workgroup> tile: array<vec4<f32>, TILE>;
var<workgroup> vertex_count: u32;

fn position(i: u32, n: u32) -> vec3<f32> {
    let k = 6u * min(i, max(n, 1u) - 1u);
    return vec3<f32>(vertices[k], vertices[k + 1u], vertices[k + 2u]);
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

@compute @workgroup_size(128)
fn vertex_potential(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    if lid == 0u {
        vertex_count = min(counters[0], params.vertex_capacity);
    }
    let n = workgroupUniformLoad(&vertex_count);
    let first = (wg.x + wg.y * params.groups_x) * WORKGROUP * PER_THREAD;
    if first >= n {
        return;
    }
    // The loops over k have a trip count fixed when the pipeline is created, so the compiler can
    // unroll them and keep the arrays in registers.
    var p: array<vec3<f32>, MAX_PER_THREAD>;
    var s: array<f32, MAX_PER_THREAD>;
    var comp: array<f32, MAX_PER_THREAD>;
    for (var k = 0u; k < PER_THREAD; k++) {
        p[k] = position(first + lid + k * WORKGROUP, n);
        s[k] = 0.0;
        comp[k] = 0.0;
    }
    for (var start = 0u; start < params.n_charges; start += TILE) {
        workgroupBarrier();
        for (var t = lid; t < TILE; t += WORKGROUP) {
            tile[t] = charges[start + t];
        }
        workgroupBarrier();
        // Blocks of BLOCK terms summed plainly, blocks into the tile's sum, tiles into the total
        // with Kahan compensation: no partial sum grows over more than a few dozen additions.
        var part: array<f32, MAX_PER_THREAD>;
        for (var k = 0u; k < PER_THREAD; k++) {
            part[k] = 0.0;
        }
        for (var j = 0u; j < TILE; j += BLOCK) {
            var block: array<f32, MAX_PER_THREAD>;
            for (var k = 0u; k < PER_THREAD; k++) {
                block[k] = 0.0;
            }
            for (var b = 0u; b < BLOCK; b++) {
                let c = tile[j + b];
                for (var k = 0u; k < PER_THREAD; k++) {
                    block[k] = fma(c.w, inv_distance(p[k], c.xyz), block[k]);
                }
            }
            for (var k = 0u; k < PER_THREAD; k++) {
                part[k] += block[k];
            }
        }
        // Kahan: the tile's sum into the running one. `keep` is 1 at run time but unknown to the
        // compiler, so the compensation is not simplified away as algebraically zero.
        for (var k = 0u; k < PER_THREAD; k++) {
            let y = part[k] - comp[k];
            let t = s[k] + y;
            comp[k] = (select(s[k], t, params.keep != 0u) - s[k]) - y;
            s[k] = t;
        }
    }
    for (var k = 0u; k < PER_THREAD; k++) {
        let i = first + lid + k * WORKGROUP;
        if i < n {
            values[i] = VertexValue((s[k] - comp[k]) * params.scale, 0u);
        }
    }
}
