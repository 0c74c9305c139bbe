// The linearized Poisson-Boltzmann finite differences on any wgpu device, in float32: the seven-point
// operator
//   (A u)_p = [ex_p (u_p - u_p+x) + ex_p-x (u_p - u_p-x) + (y, z alike)] / h^2 + k2_p u_p
// (ex at (i + 1/2, j, k), ey at (i, j + 1/2, k), ez at (i, j, k + 1/2), k2 = kbar^2 at the points; the four
// packed per point as coef = (ex, ey, ez, k2)) on a lattice of nx x ny x nz points, x fastest; the faces
// hold Dirichlet values, the unknowns are the interior points. The same kernels as `kernels/pb.cu`'s
// float32 part.
//
// Host side: `compute::wgpu::pb` (src/compute/wgpu/pb.rs, pb_mg.rs), which keeps the float64 outer loop
// (r = f - A u over the float64 maps) and asks the device to solve A e = r by conjugate gradients
// (`pb_apply`, `pb_cg_update`, `pb_dot_rz`, `pb_xpby`; the scalars alpha and beta computed on the device
// by the one-workgroup reductions `pb_reduce_*`, so a batch of iterations runs without the host)
// preconditioned by one symmetric multigrid V-cycle (`pb_smooth`: red-black Gauss-Seidel,
// `pb_mg_residual`, `pb_restrict`: full weighting, `pb_prolong_add`: trilinear, `pb_coarse_solve`: the
// coarsest level in one workgroup; coarse coefficients by `pb_coarsen`: dielectrics by the harmonic mean
// across and arithmetic mean along the faces, k2 by full weighting). Corrections are zero on the faces at
// every level.
//
// Dot products: each workgroup of 256 invocations sums its terms by a tree in workgroup memory and
// writes one partial sum; `pb_reduce_*` add the partial sums (each invocation a strided run, then a
// tree). Every kernel takes a linear index over (workgroups x, workgroups y) so that any lattice fits the
// 65,535 workgroups per dimension.

const WG: u32 = 256u;
// Iterations recorded per batch in `Scalars.history`.
const HISTORY: u32 = 64u;

// Twin of `compute::wgpu::pb_mg::KernelParams`.
struct Params {
    // This level's points per axis (for `pb_restrict`, `pb_prolong_add` and `pb_coarsen`: the finer one).
    nx: i32,
    ny: i32,
    nz: i32,
    // Points (or pairs of points for `pb_smooth`, partial sums for `pb_reduce_*`) the dispatch covers.
    n: i32,
    // The coarser level's points per axis (`pb_restrict`, `pb_prolong_add`, `pb_coarsen`).
    cx: i32,
    cy: i32,
    cz: i32,
    // Colour of a half sweep ((i + j + k) % 2), or the symmetric sweep pairs of `pb_coarse_solve`.
    colour: i32,
    // 1 / h^2 of this level (1/Angstrom^2).
    ih2: f32,
    pad0: i32,
    pad1: i32,
    pad2: i32,
};

// The conjugate-gradient scalars, on the device (`compute::wgpu::pb_mg::SCALARS_BYTES`, read back as words).
struct Scalars {
    // r . z of the current residual, the step and the direction's factor.
    rz: f32,
    alpha: f32,
    beta: f32,
    // Iterations of this batch so far (reset by the host), and 1 when p . Ap was not positive.
    count: u32,
    flag: u32,
    pad0: u32,
    pad1: u32,
    pad2: u32,
    // |r|^2 after each iteration of the batch.
    history: array<f32, 64>,
};

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> coef: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read> src_a: array<f32>;
@group(0) @binding(3) var<storage, read> src_b: array<f32>;
@group(0) @binding(4) var<storage, read_write> dst: array<f32>;
@group(0) @binding(5) var<storage, read_write> dst2: array<f32>;
@group(0) @binding(6) var<storage, read_write> partial: array<f32>;
@group(0) @binding(7) var<storage, read_write> scalars: Scalars;
@group(0) @binding(8) var<storage, read> scalars_r: Scalars;
@group(0) @binding(9) var<storage, read_write> coef_out: array<vec4<f32>>;
@group(0) @binding(10) var<storage, read> partial_r: array<f32>;

var<workgroup> red: array<f32, 256>;
var<workgroup> red2: array<vec2<f32>, 256>;

fn linear(wg: vec3<u32>, nwg: vec3<u32>, lid: u32) -> i32 {
    return i32((wg.x + wg.y * nwg.x) * WG + lid);
}

fn group_index(wg: vec3<u32>, nwg: vec3<u32>) -> i32 {
    return i32(wg.x + wg.y * nwg.x);
}

fn interior(i: i32, j: i32, k: i32, nx: i32, ny: i32, nz: i32) -> bool {
    return i > 0 && j > 0 && k > 0 && i < nx - 1 && j < ny - 1 && k < nz - 1;
}

fn diag(p: i32, nx: i32, pl: i32, ih2: f32) -> f32 {
    let c = coef[p];
    return (c.x + coef[p - 1].x + c.y + coef[p - nx].y + c.z + coef[p - pl].z) * ih2 + c.w;
}

// sum over the neighbours of eps * x (the off-diagonal part of A, times -h^2).
fn neighbours(p: i32, nx: i32, pl: i32) -> f32 {
    let c = coef[p];
    return c.x * dst[p + 1] + coef[p - 1].x * dst[p - 1] + c.y * dst[p + nx] + coef[p - nx].y * dst[p - nx]
        + c.z * dst[p + pl] + coef[p - pl].z * dst[p - pl];
}

// (A x)_p at an interior point, x = src_b.
fn apply_at(p: i32, nx: i32, pl: i32, ih2: f32) -> f32 {
    let c = coef[p];
    let xp = src_b[p];
    let s = c.x * (xp - src_b[p + 1]) + coef[p - 1].x * (xp - src_b[p - 1]) + c.y * (xp - src_b[p + nx])
        + coef[p - nx].y * (xp - src_b[p - nx]) + c.z * (xp - src_b[p + pl]) + coef[p - pl].z * (xp - src_b[p - pl]);
    return s * ih2 + c.w * xp;
}

// Adds `v` over the workgroup; invocation 0 writes the sum to partial[group]. Every invocation calls it.
fn workgroup_sum(v: f32, lid: u32, group: i32) {
    red[lid] = v;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if lid < s {
            red[lid] = red[lid] + red[lid + s];
        }
        workgroupBarrier();
    }
    if lid == 0u {
        partial[group] = red[0];
    }
}

// dst = 0 at the first n points.
@compute @workgroup_size(256)
fn pb_fill(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let t = linear(wg, nwg, lid);
    if t < params.n {
        dst[t] = 0.0;
    }
}

// dst = A src_b at the interior points (0 on the faces); partial[group] = sum of src_b . dst.
@compute @workgroup_size(256)
fn pb_apply(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
            @builtin(local_invocation_index) lid: u32) {
    let t = linear(wg, nwg, lid);
    let nx = params.nx;
    let ny = params.ny;
    let nz = params.nz;
    let pl = nx * ny;
    var xy = 0.0;
    if t < params.n {
        let i = t % nx;
        let j = (t / nx) % ny;
        let k = t / pl;
        if interior(i, j, k, nx, ny, nz) {
            let v = apply_at(t, nx, pl, params.ih2);
            dst[t] = v;
            xy = src_b[t] * v;
        } else {
            dst[t] = 0.0;
        }
    }
    workgroup_sum(xy, lid, group_index(wg, nwg));
}

// One workgroup: the sum of the params.n partial sums (one strided run per invocation, then a tree).
fn reduce_one(lid: u32) -> f32 {
    var s = 0.0;
    for (var g = i32(lid); g < params.n; g = g + i32(WG)) {
        s = s + partial_r[g];
    }
    red[lid] = s;
    workgroupBarrier();
    for (var w = WG / 2u; w > 0u; w = w >> 1u) {
        if lid < w {
            red[lid] = red[lid] + red[lid + w];
        }
        workgroupBarrier();
    }
    return red[0];
}

// The sums of params.n pairs of partial sums (r . z, r . r).
fn reduce_two(lid: u32) -> vec2<f32> {
    var s = vec2<f32>(0.0, 0.0);
    for (var g = i32(lid); g < params.n; g = g + i32(WG)) {
        s = s + vec2<f32>(partial_r[2 * g], partial_r[2 * g + 1]);
    }
    red2[lid] = s;
    workgroupBarrier();
    for (var w = WG / 2u; w > 0u; w = w >> 1u) {
        if lid < w {
            red2[lid] = red2[lid] + red2[lid + w];
        }
        workgroupBarrier();
    }
    return red2[0];
}

fn finite(v: f32) -> bool {
    return v == v && abs(v) <= 3.0e38;
}

// alpha = rz / (p . Ap) (0 when p . Ap is 0: the residual vanished; flag when it is negative or not
// finite, the host then stops).
@compute @workgroup_size(256)
fn pb_reduce_alpha(@builtin(local_invocation_index) lid: u32) {
    let pq = reduce_one(lid);
    if lid == 0u {
        var alpha = 0.0;
        if pq > 0.0 && finite(pq) && finite(scalars.rz) {
            alpha = scalars.rz / pq;
        } else if !(pq == 0.0) {
            scalars.flag = 1u;
        }
        scalars.alpha = alpha;
    }
}

// rz = r . z of the first residual (the batch's iterations start from it).
@compute @workgroup_size(256)
fn pb_reduce_init(@builtin(local_invocation_index) lid: u32) {
    let s = reduce_two(lid);
    if lid == 0u {
        scalars.rz = s.x;
        scalars.beta = 0.0;
    }
}

// beta = rz_new / rz, rz = rz_new; |r|^2 into the history.
@compute @workgroup_size(256)
fn pb_reduce_beta(@builtin(local_invocation_index) lid: u32) {
    let s = reduce_two(lid);
    if lid == 0u {
        var beta = 0.0;
        if scalars.rz > 0.0 && finite(s.x) {
            beta = s.x / scalars.rz;
        }
        if !finite(s.x) || !finite(s.y) {
            scalars.flag = 1u;
        }
        scalars.beta = beta;
        scalars.rz = s.x;
        let c = scalars.count;
        if c < HISTORY {
            scalars.history[c] = s.y;
        }
        scalars.count = c + 1u;
    }
}

// e += alpha p (dst), r -= alpha q (dst2); p = src_a, q = src_b.
@compute @workgroup_size(256)
fn pb_cg_update(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                @builtin(local_invocation_index) lid: u32) {
    let t = linear(wg, nwg, lid);
    if t < params.n {
        let alpha = scalars_r.alpha;
        dst[t] = dst[t] + alpha * src_a[t];
        dst2[t] = dst2[t] - alpha * src_b[t];
    }
}

// partial[2 group] = sum of r . z, partial[2 group + 1] = sum of r . r; r = src_a, z = src_b.
@compute @workgroup_size(256)
fn pb_dot_rz(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let t = linear(wg, nwg, lid);
    var v = vec2<f32>(0.0, 0.0);
    if t < params.n {
        let r = src_a[t];
        v = vec2<f32>(r * src_b[t], r * r);
    }
    red2[lid] = v;
    workgroupBarrier();
    for (var s = WG / 2u; s > 0u; s = s >> 1u) {
        if lid < s {
            red2[lid] = red2[lid] + red2[lid + s];
        }
        workgroupBarrier();
    }
    if lid == 0u {
        let g = group_index(wg, nwg);
        partial[2 * g] = red2[0].x;
        partial[2 * g + 1] = red2[0].y;
    }
}

// p = z + beta p; z = src_a, p = dst.
@compute @workgroup_size(256)
fn pb_xpby(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
           @builtin(local_invocation_index) lid: u32) {
    let t = linear(wg, nwg, lid);
    if t < params.n {
        dst[t] = src_a[t] + scalars_r.beta * dst[t];
    }
}

// One Gauss-Seidel half sweep of colour params.colour over the interior points of A x = b (b = src_a,
// x = dst). Invocations run over pairs of points along x (params.n pairs).
@compute @workgroup_size(256)
fn pb_smooth(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
             @builtin(local_invocation_index) lid: u32) {
    let t = linear(wg, nwg, lid);
    if t >= params.n {
        return;
    }
    let nx = params.nx;
    let ny = params.ny;
    let nz = params.nz;
    let half = (nx + 1) / 2;
    let j = (t / half) % ny;
    let k = t / (half * ny);
    let i = 2 * (t % half) + ((j + k + params.colour) & 1);
    if !interior(i, j, k, nx, ny, nz) {
        return;
    }
    let pl = nx * ny;
    let p = i + nx * j + pl * k;
    dst[p] = (src_a[p] + neighbours(p, nx, pl) * params.ih2) / diag(p, nx, pl, params.ih2);
}

// dst = b - A x at the interior points (0 on the faces); b = src_a, x = src_b.
@compute @workgroup_size(256)
fn pb_mg_residual(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
    let t = linear(wg, nwg, lid);
    if t >= params.n {
        return;
    }
    let nx = params.nx;
    let ny = params.ny;
    let pl = nx * ny;
    let i = t % nx;
    let j = (t / nx) % ny;
    let k = t / pl;
    if interior(i, j, k, nx, ny, params.nz) {
        dst[t] = src_a[t] - apply_at(t, nx, pl, params.ih2);
    } else {
        dst[t] = 0.0;
    }
}

// Coarse point (I, J, K) sits on fine point (2I, 2J, 2K). Full weighting of the fine residual src_a
// into the coarse right side dst: the sum over the 27 fine neighbours of w_x w_y w_z t / 8, w = 1 at
// the centre and 1/2 at the sides (the transpose of `pb_prolong_add` over 8); 0 on the coarse faces.
@compute @workgroup_size(256)
fn pb_restrict(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
               @builtin(local_invocation_index) lid: u32) {
    let q = linear(wg, nwg, lid);
    let cx = params.cx;
    let cy = params.cy;
    if q >= cx * cy * params.cz {
        return;
    }
    let ci = q % cx;
    let cj = (q / cx) % cy;
    let ck = q / (cx * cy);
    if !interior(ci, cj, ck, cx, cy, params.cz) {
        dst[q] = 0.0;
        return;
    }
    let nx = params.nx;
    let pl = nx * params.ny;
    let p = 2 * ci + nx * (2 * cj) + pl * (2 * ck);
    var s = 0.0;
    for (var dz = -1; dz <= 1; dz = dz + 1) {
        let wz = select(0.5, 1.0, dz == 0);
        for (var dy = -1; dy <= 1; dy = dy + 1) {
            let wy = select(0.5 * wz, wz, dy == 0);
            let row = p + nx * dy + pl * dz;
            s = s + wy * (0.5 * src_a[row - 1] + src_a[row] + 0.5 * src_a[row + 1]);
        }
    }
    dst[q] = 0.125 * s;
}

// x += P xc at the fine interior points (x = dst, xc = src_a): trilinear from the coarse points around
// (i/2, j/2, k/2).
@compute @workgroup_size(256)
fn pb_prolong_add(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
                  @builtin(local_invocation_index) lid: u32) {
    let t = linear(wg, nwg, lid);
    if t >= params.n {
        return;
    }
    let nx = params.nx;
    let ny = params.ny;
    let pl = nx * ny;
    let i = t % nx;
    let j = (t / nx) % ny;
    let k = t / pl;
    if !interior(i, j, k, nx, ny, params.nz) {
        return;
    }
    let ci = i >> 1u;
    let cj = j >> 1u;
    let ck = k >> 1u;
    let ox = i & 1;
    let oy = j & 1;
    let oz = k & 1;
    let cx = params.cx;
    let cpl = cx * params.cy;
    var s = 0.0;
    for (var c = 0; c <= oz; c = c + 1) {
        for (var b = 0; b <= oy; b = b + 1) {
            for (var a = 0; a <= ox; a = a + 1) {
                s = s + src_a[(ci + a) + cx * (cj + b) + cpl * (ck + c)];
            }
        }
    }
    let w = 1.0 / f32((1 + ox) * (1 + oy) * (1 + oz));
    dst[t] = dst[t] + w * s;
}

fn clampi(v: i32, hi: i32) -> i32 {
    return clamp(v, 0, hi);
}

fn fine_index(c: vec3<i32>) -> i32 {
    return c.x + params.nx * c.y + params.nx * params.ny * c.z;
}

// Coarse coefficients at coarse (I, J, K) from the fine ones (coef): per axis the two fine edges the
// coarse edge spans in series (harmonic mean), averaged across the axis with weights 1/4, 1/2, 1/4 in
// each transverse direction; k2 by full weighting of the 27 fine values around (2I, 2J, 2K) (indices
// clamped to the lattice).
@compute @workgroup_size(256)
fn pb_coarsen(@builtin(workgroup_id) wg: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>,
              @builtin(local_invocation_index) lid: u32) {
    let q = linear(wg, nwg, lid);
    let cx = params.cx;
    let cy = params.cy;
    if q >= cx * cy * params.cz {
        return;
    }
    let base = vec3<i32>(2 * (q % cx), 2 * ((q / cx) % cy), 2 * (q / (cx * cy)));
    let hi = vec3<i32>(params.nx - 1, params.ny - 1, params.nz - 1);
    var out = vec4<f32>(0.0, 0.0, 0.0, 0.0);
    for (var axis = 0; axis < 3; axis = axis + 1) {
        let t1 = select(0, 1, axis == 0);
        let t2 = select(2, 1, axis == 2);
        var s = 0.0;
        for (var d1 = -1; d1 <= 1; d1 = d1 + 1) {
            for (var d2 = -1; d2 <= 1; d2 = d2 + 1) {
                var c = base;
                c[t1] = clampi(c[t1] + d1, hi[t1]);
                c[t2] = clampi(c[t2] + d2, hi[t2]);
                var c2 = c;
                c2[axis] = clampi(c[axis] + 1, hi[axis]);
                let a = coef[fine_index(c)][axis];
                let b = coef[fine_index(c2)][axis];
                var h = 0.0;
                if a + b > 0.0 {
                    h = 2.0 * a * b / (a + b);
                }
                s = s + select(0.25, 0.5, d1 == 0) * select(0.25, 0.5, d2 == 0) * h;
            }
        }
        out[axis] = s;
    }
    var k2 = 0.0;
    for (var dz = -1; dz <= 1; dz = dz + 1) {
        let z = clampi(base.z + dz, hi.z);
        for (var dy = -1; dy <= 1; dy = dy + 1) {
            let y = clampi(base.y + dy, hi.y);
            for (var dx = -1; dx <= 1; dx = dx + 1) {
                let x = clampi(base.x + dx, hi.x);
                let w = select(0.25, 0.5, dx == 0) * select(0.25, 0.5, dy == 0) * select(0.25, 0.5, dz == 0);
                k2 = k2 + w * coef[fine_index(vec3<i32>(x, y, z))].w;
            }
        }
    }
    out.w = k2;
    coef_out[q] = out;
}

// The coarsest level in one workgroup: x = 0, then params.colour red-black sweeps and as many
// black-red ones (a symmetric operator of b), invocations striding over the points (b = src_a,
// x = dst).
@compute @workgroup_size(256)
fn pb_coarse_solve(@builtin(local_invocation_index) lid: u32) {
    let nx = params.nx;
    let ny = params.ny;
    let nz = params.nz;
    let pl = nx * ny;
    let n = pl * nz;
    let pairs = params.colour;
    for (var p = i32(lid); p < n; p = p + i32(WG)) {
        dst[p] = 0.0;
    }
    storageBarrier();
    for (var s = 0; s < 2 * pairs; s = s + 1) {
        for (var half = 0; half < 2; half = half + 1) {
            let colour = select(1 - half, half, s < pairs);
            for (var p = i32(lid); p < n; p = p + i32(WG)) {
                let i = p % nx;
                let j = (p / nx) % ny;
                let k = p / pl;
                if ((i + j + k) & 1) == colour && interior(i, j, k, nx, ny, nz) {
                    dst[p] = (src_a[p] + neighbours(p, nx, pl) * params.ih2) / diag(p, nx, pl, params.ih2);
                }
            }
            storageBarrier();
        }
    }
}
