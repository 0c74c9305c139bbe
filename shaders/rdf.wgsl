// Pair-distance histograms for radial distribution functions: every pair (a, b), a from set A, b from
// set B. Host side: `compute::wgpu::rdf` (src/compute/wgpu/rdf.rs), which lays the sets out with
// `compute::cuda::rdf::PairGeometry` (positions wrapped into the box, the box reduced); the CUDA twin
// is `rdf_pairs` in kernels/rdf.cu, and the arithmetic here is the same f32 operations.
//
// One invocation holds A_PER atoms of A (WG apart) and walks set B in tiles of TILE staged in
// workgroup memory. Distances within r_max are counted in a workgroup histogram of u32 atomics; at the
// end the workgroup adds it into this dispatch's row of the u32 histogram in storage (the host bounds
// the pairs of one dispatch below 2^32 and adds the rows in u64).
//
// Boundary modes (`params.mode`): 0 open; 1 orthorhombic, minimum image min(|d|, L - |d|) per axis;
// 2 triclinic (lower-triangular reduced box), one rounding per axis in the order c, b, a.
// `params.groups` 1: skip pairs whose group ids (the bit pattern in w) match.

const WG: u32 = 256u;
const A_PER: u32 = 2u;
const TILE: u32 = 256u;
const MAX_BINS: u32 = 2048u;

// Twin of `compute::wgpu::rdf::RdfParams`.
struct Params {
    // Atoms of A in this dispatch, the first of them, atoms of B.
    na: u32,
    a_first: u32,
    nb: u32,
    bins: u32,
    mode: u32,
    groups: u32,
    // Row of the histogram buffer this dispatch adds into.
    row: u32,
    pad: u32,
    r2max: f32,
    inv_dr: f32,
    // Reduced box (Angstrom): rows a = (ax, 0, 0), b = (bx, by, 0), c = (cx, cy, cz).
    ax: f32,
    bx: f32,
    by: f32,
    cx: f32,
    cy: f32,
    cz: f32,
    inv_ax: f32,
    inv_by: f32,
    inv_cz: f32,
    pad2: f32,
};

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> set_a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> set_b: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> hist: array<atomic<u32>>;

var<workgroup> shist: array<atomic<u32>, MAX_BINS>;
var<workgroup> tile: array<vec4<f32>, TILE>;

fn d2_of(p: vec4<f32>, q: vec4<f32>) -> f32 {
    var dx = p.x - q.x;
    var dy = p.y - q.y;
    var dz = p.z - q.z;
    if params.mode == 1u {
        dx = abs(dx);
        dy = abs(dy);
        dz = abs(dz);
        dx = min(dx, params.ax - dx);
        dy = min(dy, params.by - dy);
        dz = min(dz, params.cz - dz);
    } else if params.mode == 2u {
        var s = round(dz * params.inv_cz);
        dz = fma(-s, params.cz, dz);
        dy = fma(-s, params.cy, dy);
        dx = fma(-s, params.cx, dx);
        s = round(dy * params.inv_by);
        dy = fma(-s, params.by, dy);
        dx = fma(-s, params.bx, dx);
        s = round(dx * params.inv_ax);
        dx = fma(-s, params.ax, dx);
    }
    return fma(dx, dx, fma(dy, dy, dz * dz));
}

@compute @workgroup_size(WG)
fn rdf_pairs(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    let bins = min(params.bins, MAX_BINS);
    for (var i = lid; i < bins; i += WG) {
        atomicStore(&shist[i], 0u);
    }
    var p: array<vec4<f32>, A_PER>;
    var live: array<bool, A_PER>;
    let base = wg.x * WG * A_PER + lid;
    for (var k = 0u; k < A_PER; k++) {
        let ia = base + k * WG;
        live[k] = ia < params.na;
        p[k] = set_a[params.a_first + min(ia, max(params.na, 1u) - 1u)];
    }
    let last = bins - 1u;
    for (var t0 = 0u; t0 < params.nb; t0 += TILE) {
        workgroupBarrier();
        let nt = min(TILE, params.nb - t0);
        for (var i = lid; i < nt; i += WG) {
            tile[i] = set_b[t0 + i];
        }
        workgroupBarrier();
        for (var j = 0u; j < nt; j++) {
            let q = tile[j];
            for (var k = 0u; k < A_PER; k++) {
                let d2 = d2_of(p[k], q);
                let same = params.groups == 1u && bitcast<u32>(p[k].w) == bitcast<u32>(q.w);
                if d2 <= params.r2max && live[k] && !same {
                    let bin = min(u32(sqrt(d2) * params.inv_dr), last);
                    atomicAdd(&shist[bin], 1u);
                }
            }
        }
    }
    workgroupBarrier();
    let row = params.row * params.bins;
    for (var i = lid; i < bins; i += WG) {
        let s = atomicLoad(&shist[i]);
        if s != 0u {
            atomicAdd(&hist[row + i], s);
        }
    }
}
