// Marching cubes as a compute pass: lattice values -> shared vertices + triangle indices + draw args.
//
// Owned by `src/render/mc_compute.rs`, which creates the pipelines once and records the passes:
//   1. make_vertices  (one thread per column of COLUMN lattice points along z): one vertex per
//                      crossed edge leaving a point, slot taken from a per-workgroup block of the
//                      global counter, slot remembered per edge (dedup on the GPU);
//   2. make_triangles (one thread per column of COLUMN cells): the case table gives edges, edges
//                      give vertex slots;
//   3. finish         (one thread): writes DrawIndexedIndirect arguments (zero on overflow).
// Numbering of corners, edges and cases is the one of `src/surface/tables.rs`, whose generated table
// is uploaded unchanged into `cases`. Values are multiplied by `sign` first, so the same code extracts
// the negative lobe of an orbital. Inside is `sign * value > iso`; a non-finite value makes no surface.

// Twin of `McParams` in src/render/mc_compute.rs (repr(C), 160 bytes).
struct Params {
    origin_angstrom: vec4<f32>,
    step_x_angstrom: vec4<f32>,
    step_y_angstrom: vec4<f32>,
    step_z_angstrom: vec4<f32>,
    // Rows of the matrix taking a lattice-index gradient to a world-space gradient.
    grad_row_x: vec4<f32>,
    grad_row_y: vec4<f32>,
    grad_row_z: vec4<f32>,
    // nx, ny, nz, and 1 when the lattice frame is left-handed (winding flipped).
    dims: vec4<u32>,
    iso: f32,
    sign: f32,
    vertex_capacity: u32,
    index_capacity: u32,
    // Threads per row of the 2-D dispatch (64 * workgroups along x).
    threads_per_row: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
}

const MAX_TRIANGLES: u32 = 10u;
const FLOATS_PER_VERTEX: u32 = 6u;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> values: array<f32>;
// [0, 256): triangle count per case; then 256 * MAX_TRIANGLES * 3 edge numbers.
@group(0) @binding(2) var<storage, read> cases: array<u32>;
// Vertex slot of each lattice edge: 3 * point + axis.
@group(0) @binding(3) var<storage, read_write> edge_vertex: array<u32>;
// Position (Angstrom) then normal, 6 floats per vertex.
@group(0) @binding(4) var<storage, read_write> vertices: array<f32>;
@group(0) @binding(5) var<storage, read_write> indices: array<u32>;
// [0]: vertices made, [1]: indices made (may exceed the capacities: the host reads them to grow).
@group(0) @binding(6) var<storage, read_write> counters: array<atomic<u32>, 2>;
// DrawIndexedIndirect: index_count, instance_count, first_index, base_vertex, first_instance.
@group(0) @binding(7) var<storage, read_write> draw_args: array<u32, 5>;

fn is_finite(v: f32) -> bool {
    return (bitcast<u32>(v) & 0x7f800000u) != 0x7f800000u;
}

fn point_index(p: vec3<u32>) -> u32 {
    return p.x + params.dims.x * (p.y + params.dims.y * p.z);
}

fn value_at(p: vec3<u32>) -> f32 {
    return params.sign * values[point_index(p)];
}

fn thread_id(gid: vec3<u32>) -> u32 {
    return gid.x + gid.y * params.threads_per_row;
}

// Derivative along one axis: central inside, one-sided at the border or next to a non-finite value.
fn derivative(p: vec3<u32>, axis: u32) -> f32 {
    let n = params.dims[axis];
    let i = p[axis];
    let here = value_at(p);
    var lo = 0.0;
    var hi = 0.0;
    var has_lo = false;
    var has_hi = false;
    if (i > 0u) {
        var q = p;
        q[axis] = i - 1u;
        lo = value_at(q);
        has_lo = is_finite(lo);
    }
    if (i + 1u < n) {
        var q = p;
        q[axis] = i + 1u;
        hi = value_at(q);
        has_hi = is_finite(hi);
    }
    if (has_lo && has_hi) {
        return 0.5 * (hi - lo);
    }
    if (has_hi && is_finite(here)) {
        return hi - here;
    }
    if (has_lo && is_finite(here)) {
        return here - lo;
    }
    return 0.0;
}

fn gradient(p: vec3<u32>) -> vec3<f32> {
    return vec3<f32>(derivative(p, 0u), derivative(p, 1u), derivative(p, 2u));
}

fn step_vector(axis: u32) -> vec3<f32> {
    if (axis == 0u) {
        return params.step_x_angstrom.xyz;
    }
    if (axis == 1u) {
        return params.step_y_angstrom.xyz;
    }
    return params.step_z_angstrom.xyz;
}

fn write_vertex(p: vec3<u32>, axis: u32, va: f32, vb: f32, slot: u32) {
    var q = p;
    q[axis] = p[axis] + 1u;
    var t = (params.iso - va) / (vb - va);
    if (!is_finite(t)) {
        t = 0.5;
    }
    t = clamp(t, 0.0, 1.0);
    var f = vec3<f32>(p);
    f[axis] = f[axis] + t;
    let pos = params.origin_angstrom.xyz + f.x * params.step_x_angstrom.xyz + f.y * params.step_y_angstrom.xyz
        + f.z * params.step_z_angstrom.xyz;
    let g = mix(gradient(p), gradient(q), t);
    let w = vec3<f32>(dot(params.grad_row_x.xyz, g), dot(params.grad_row_y.xyz, g), dot(params.grad_row_z.xyz, g));
    let len = length(w);
    var normal: vec3<f32>;
    if (len > 0.0 && is_finite(len)) {
        normal = -w / len;
    } else {
        var dir = -1.0;
        if (va > params.iso) {
            dir = 1.0;
        }
        normal = dir * normalize(step_vector(axis));
    }
    let base = slot * FLOATS_PER_VERTEX;
    vertices[base + 0u] = pos.x;
    vertices[base + 1u] = pos.y;
    vertices[base + 2u] = pos.z;
    vertices[base + 3u] = normal.x;
    vertices[base + 4u] = normal.y;
    vertices[base + 5u] = normal.z;
}

// Slots are handed out per workgroup: each thread takes its offset from a workgroup counter, then
// one thread adds the workgroup's total to the global counter. A single global counter taken by
// every crossing (millions on a large surface) serialises in the memory system; this takes one
// global atomic per 64 threads. No thread returns before the barriers (uniform control flow).
var<workgroup> group_count: atomic<u32>;
var<workgroup> group_base: u32;

// Each invocation takes a column of COLUMN points (or cells) along z: the index arithmetic is done
// once, and a value (or a cell's upper face) loaded for one is reused by the next.
const COLUMN: u32 = 4u;

// The offset of this thread's slots in the workgroup's block and the block's start in the global
// counter `which`, for `count` slots of this thread.
fn take_slots(lid: u32, count: u32, which: u32) -> u32 {
    var local = 0u;
    if (count > 0u) {
        local = atomicAdd(&group_count, count);
    }
    workgroupBarrier();
    if (lid == 0u) {
        let total = atomicLoad(&group_count);
        if (total > 0u) {
            group_base = atomicAdd(&counters[which], total);
        }
    }
    workgroupBarrier();
    return group_base + local;
}

@compute @workgroup_size(64)
fn make_vertices(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if (lid == 0u) {
        atomicStore(&group_count, 0u);
    }
    workgroupBarrier();
    let id = thread_id(gid);
    let nx = params.dims.x;
    let ny = params.dims.y;
    let nz = params.dims.z;
    let columns_z = (nz + COLUMN - 1u) / COLUMN;
    // Bit 3 k + axis: the edge along `axis` leaving the column's point k is crossed.
    var crossed = 0u;
    var count = 0u;
    var p0 = vec3<u32>(0u);
    if (id < nx * ny * columns_z) {
        p0 = vec3<u32>(id % nx, (id / nx) % ny, (id / (nx * ny)) * COLUMN);
        let k_end = min(COLUMN, nz - p0.z);
        var va = value_at(p0);
        for (var k = 0u; k < k_end; k = k + 1u) {
            let p = vec3<u32>(p0.x, p0.y, p0.z + k);
            // The value above is the next point's own.
            var above = 0.0;
            if (p.z + 1u < nz) {
                above = value_at(vec3<u32>(p.x, p.y, p.z + 1u));
            }
            if (is_finite(va)) {
                let inside = va > params.iso;
                if (p.x + 1u < nx) {
                    let b = value_at(vec3<u32>(p.x + 1u, p.y, p.z));
                    if (is_finite(b) && (b > params.iso) != inside) {
                        crossed = crossed | (1u << (3u * k));
                        count = count + 1u;
                    }
                }
                if (p.y + 1u < ny) {
                    let b = value_at(vec3<u32>(p.x, p.y + 1u, p.z));
                    if (is_finite(b) && (b > params.iso) != inside) {
                        crossed = crossed | (1u << (3u * k + 1u));
                        count = count + 1u;
                    }
                }
                if (p.z + 1u < nz && is_finite(above) && (above > params.iso) != inside) {
                    crossed = crossed | (1u << (3u * k + 2u));
                    count = count + 1u;
                }
            }
            va = above;
        }
    }
    var slot = take_slots(lid, count, 0u);
    while (crossed != 0u) {
        let bit = firstTrailingBit(crossed);
        crossed = crossed & (crossed - 1u);
        let k = bit / 3u;
        let axis = bit % 3u;
        let p = vec3<u32>(p0.x, p0.y, p0.z + k);
        var q = p;
        q[axis] = p[axis] + 1u;
        edge_vertex[3u * point_index(p) + axis] = slot;
        if (slot < params.vertex_capacity) {
            write_vertex(p, axis, value_at(p), value_at(q), slot);
        }
        slot = slot + 1u;
    }
}

// Lattice offset of the lower corner of edge e (see src/surface/tables.rs).
fn edge_origin(e: u32) -> vec3<u32> {
    let axis = e / 4u;
    let a = e & 1u;
    let b = (e >> 1u) & 1u;
    if (axis == 0u) {
        return vec3<u32>(0u, a, b);
    }
    if (axis == 1u) {
        return vec3<u32>(a, 0u, b);
    }
    return vec3<u32>(a, b, 0u);
}

// The inside bits (in case order: bit x + 2 y) of the four corners of a cell's face at height `z`,
// the cell's lower corner being `cell`; 16 when a corner is not finite. A cell's case index is its
// lower face's bits plus its upper face's shifted by 4.
fn face_bits(cell: vec3<u32>, z: u32) -> u32 {
    var bits = 0u;
    for (var c = 0u; c < 4u; c = c + 1u) {
        let v = value_at(vec3<u32>(cell.x + (c & 1u), cell.y + ((c >> 1u) & 1u), z));
        if (!is_finite(v)) {
            return 16u;
        }
        if (v > params.iso) {
            bits = bits | (1u << c);
        }
    }
    return bits;
}

@compute @workgroup_size(64)
fn make_triangles(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(local_invocation_index) lid: u32) {
    if (lid == 0u) {
        atomicStore(&group_count, 0u);
    }
    workgroupBarrier();
    let id = thread_id(gid);
    let cx = params.dims.x - 1u;
    let cy = params.dims.y - 1u;
    let cz = params.dims.z - 1u;
    let columns_z = (cz + COLUMN - 1u) / COLUMN;
    // Case index of the column's cell k in bits 8 k ..; 0 (no triangles) for a cell with a
    // non-finite corner or beyond the lattice.
    var case_indices = 0u;
    var n_total = 0u;
    var cell0 = vec3<u32>(0u);
    if (id < cx * cy * columns_z) {
        cell0 = vec3<u32>(id % cx, (id / cx) % cy, (id / (cx * cy)) * COLUMN);
        let k_end = min(COLUMN, cz - cell0.z);
        var low = face_bits(cell0, cell0.z);
        for (var k = 0u; k < k_end; k = k + 1u) {
            let high = face_bits(cell0, cell0.z + k + 1u);
            if (low < 16u && high < 16u) {
                let case_index = low | (high << 4u);
                case_indices = case_indices | (case_index << (8u * k));
                n_total = n_total + cases[case_index];
            }
            low = high;
        }
    }
    var base = take_slots(lid, 3u * n_total, 1u);
    if (n_total == 0u || base + 3u * n_total > params.index_capacity) {
        return;
    }
    for (var k = 0u; k < COLUMN; k = k + 1u) {
        let case_index = (case_indices >> (8u * k)) & 255u;
        let n = cases[case_index];
        let cell = vec3<u32>(cell0.x, cell0.y, cell0.z + k);
        let table = 256u + case_index * MAX_TRIANGLES * 3u;
        for (var t = 0u; t < n; t = t + 1u) {
            var tri: array<u32, 3>;
            for (var s = 0u; s < 3u; s = s + 1u) {
                let e = cases[table + 3u * t + s];
                let point = point_index(cell + edge_origin(e));
                tri[s] = edge_vertex[3u * point + e / 4u];
            }
            indices[base + 3u * t] = tri[0];
            if (params.dims.w != 0u) {
                indices[base + 3u * t + 1u] = tri[2];
                indices[base + 3u * t + 2u] = tri[1];
            } else {
                indices[base + 3u * t + 1u] = tri[1];
                indices[base + 3u * t + 2u] = tri[2];
            }
        }
        base = base + 3u * n;
    }
}

@compute @workgroup_size(1)
fn finish() {
    let n_vertices = atomicLoad(&counters[0]);
    let n_indices = atomicLoad(&counters[1]);
    var count = n_indices;
    if (n_vertices > params.vertex_capacity || n_indices > params.index_capacity) {
        count = 0u;
    }
    draw_args[0] = count;
    draw_args[1] = 1u;
    draw_args[2] = 0u;
    draw_args[3] = 0u;
    draw_args[4] = 0u;
}
