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
//
// Cell list (`rdf_cells`, host side `compute::wgpu::rdf::CellGrid`; the CUDA twin is `rdf_cells` in
// kernels/rdf.cu): the host sorts both sets into cells at least r_max wide (plus a margin above f32
// rounding; triclinic boxes: slabs of the fractional coordinates as thick along each box height)
// and passes each cell's first atom (`a_start`, `b_start`, cells + 1 entries), and the work units:
// (cell, first atom) of each run of up to CELL_TA atoms of a cell of A (the CUDA kernel has a block
// per cell; units split crowded cells and occupy more of a large GPU). Workgroups stride over the
// units; a workgroup stages its unit's atoms of A and tiles of TILE atoms of each neighbour cell of
// B in workgroup memory, and its invocations share out the pairs of the two tiles. Every pair goes
// through `d2_of` and the binning of `rdf_pairs`, so the counts are the all-pairs counts exactly.
// Periodic grids have at least 3 cells per side (the 27 neighbours are distinct cells).
// `params.half` 1 (set A and set B are the same atoms): the cell itself and 13 of its neighbours
// are visited, a pair of different cells counted twice. The workgroup histogram is added into
// storage before it could pass `params.flush` (at most 2^31 - 1) counts; storage holds 64-bit
// counts as (low word at bin, high word at bins + bin), the carry added where the low word wraps.

const WG: u32 = 256u;
const A_PER: u32 = 2u;
const TILE: u32 = 256u;
const MAX_BINS: u32 = 2048u;
const CELL_WG: u32 = 128u;
const CELL_TA: u32 = 64u;

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
    // Cell list only: cells per axis, 1 for a periodic grid, 1 when set A is set B, and a neighbour
    // (0..27) not visited (27: none; tests show that the comparison can fail).
    nx: u32,
    ny: u32,
    nz: u32,
    periodic: u32,
    half: u32,
    skip: u32,
    // Work units, and the most counts the workgroup histogram takes between flushes.
    units: u32,
    flush: u32,
};

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> set_a: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> set_b: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read_write> hist: array<atomic<u32>>;

var<workgroup> shist: array<atomic<u32>, MAX_BINS>;
var<workgroup> tile: array<vec4<f32>, TILE>;
var<workgroup> cell_a: array<vec4<f32>, CELL_TA>;
@group(0) @binding(4) var<storage, read> a_start: array<u32>;
@group(0) @binding(5) var<storage, read> b_start: array<u32>;
@group(0) @binding(6) var<storage, read> units: array<vec2<u32>>;

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

// Adds the workgroup histogram into the 64-bit storage counts and clears it.
fn flush_cells(lid: u32, bins: u32) {
    workgroupBarrier();
    for (var i = lid; i < bins; i += CELL_WG) {
        let s = atomicExchange(&shist[i], 0u);
        if s != 0u {
            let old = atomicAdd(&hist[i], s);
            if old > 0xffffffffu - s {
                atomicAdd(&hist[params.bins + i], 1u);
            }
        }
    }
    workgroupBarrier();
}

// One neighbour coordinate: wrapped on a periodic grid, or -1 outside an open one.
fn neighbour_axis(c: u32, off: u32, n: u32) -> i32 {
    var v = i32(c) + i32(off) - 1;
    if params.periodic == 1u {
        if v < 0 {
            v += i32(n);
        } else if v >= i32(n) {
            v -= i32(n);
        }
    } else if v >= i32(n) {
        v = -1;
    }
    return v;
}

@compute @workgroup_size(CELL_WG)
fn rdf_cells(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(num_workgroups) nwg: vec3<u32>,
    @builtin(local_invocation_index) lid: u32,
) {
    let bins = min(params.bins, MAX_BINS);
    for (var i = lid; i < bins; i += CELL_WG) {
        atomicStore(&shist[i], 0u);
    }
    let last = bins - 1u;
    let s_first = select(0u, 13u, params.half == 1u);
    // Pairs counted into the workgroup histogram since the last flush (the same in every invocation).
    var pending = 0u;
    for (var u = wg.x; u < params.units; u += nwg.x) {
        let unit = units[u];
        let c = unit.x;
        let at = unit.y;
        let cx = c % params.nx;
        let cy = (c / params.nx) % params.ny;
        let cz = c / (params.nx * params.ny);
        let na = min(CELL_TA, a_start[c + 1u] - at);
        workgroupBarrier();
        for (var i = lid; i < na; i += CELL_WG) {
            cell_a[i] = set_a[at + i];
        }
        for (var s = s_first; s < 27u; s++) {
            let x = neighbour_axis(cx, s % 3u, params.nx);
            let y = neighbour_axis(cy, (s / 3u) % 3u, params.ny);
            let z = neighbour_axis(cz, s / 9u, params.nz);
            if s == params.skip || x < 0 || y < 0 || z < 0 {
                continue;
            }
            let nc = u32(x) + params.nx * (u32(y) + params.ny * u32(z));
            let w = select(1u, 2u, params.half == 1u && s != 13u);
            let b0 = b_start[nc];
            let b1 = b_start[nc + 1u];
            for (var bt = b0; bt < b1; bt += TILE) {
                let nb = min(TILE, b1 - bt);
                let work = na * nb * w;
                if pending + work > params.flush {
                    flush_cells(lid, bins);
                    pending = 0u;
                }
                pending += work;
                workgroupBarrier();
                for (var i = lid; i < nb; i += CELL_WG) {
                    tile[i] = set_b[bt + i];
                }
                workgroupBarrier();
                // Pair k = i * nb + j for k = lid, lid + CELL_WG, ...
                let total = na * nb;
                let di = CELL_WG / nb;
                let dj = CELL_WG % nb;
                var i = lid / nb;
                var j = lid % nb;
                for (var k = lid; k < total; k += CELL_WG) {
                    let p = cell_a[i];
                    let q = tile[j];
                    let d2 = d2_of(p, q);
                    let same = params.groups == 1u && bitcast<u32>(p.w) == bitcast<u32>(q.w);
                    if d2 <= params.r2max && !same {
                        let bin = min(u32(sqrt(d2) * params.inv_dr), last);
                        atomicAdd(&shist[bin], w);
                    }
                    i += di;
                    j += dj;
                    if j >= nb {
                        j -= nb;
                        i += 1u;
                    }
                }
            }
        }
    }
    flush_cells(lid, bins);
}
