// The long-range levels of multilevel summation on a wgpu device, in f32 (src/compute/wgpu/msm_levels.rs
// dispatches these in the order of the CUDA engine's schedule): anterpolation of the charges onto
// the finest lattice, restriction to every coarser level, the top level, then per level from the
// second-coarsest down the lattice cutoff plus the prolongation of the coarser level's potential.
// The finest potential is the f32 lattice msm_slab.wgsl interpolates. Each entry point is a twin of
// a kernel of kernels/msm_levels.cu (named at each) over the same lattice layouts: level point
// (i, j, k) is stored at i + nx (j + ny k), lattice index lo + (i, j, k); periodic levels have
// lo = 0 and wrap every index, open ones are zero outside.
//
// Anterpolation adds every charge's 64 weighted contributions in 64-bit fixed point (value * scale,
// scale a power of two chosen on the host so that no sum can overflow) as two 32-bit words per
// lattice point (atomicAdd on the low word, its carry added to the high word), so the sum is exact
// and does not depend on the order the atomics land in. Lattice cutoff and top level: each row of
// the stencil (or each run of the top lattice) summed plainly, the blocks with Kahan compensation.

const WG: u32 = 64u;

struct Params {
    // x: invocations; y: periodic (1) or open (0); z: restriction (1) or prolongation (0) for
    // axis, stencil rows for cutoff; w: accumulate into dst (axis).
    n: vec4<i32>,
    // Source dims (x, y, z); w: the source's lo along the axis (axis).
    src: vec4<i32>,
    // Destination dims (x, y, z); w: the destination's lo along the axis (axis).
    dst: vec4<i32>,
    // anterpolate: the finest lattice's lo (x, y, z); axis: w = the axis.
    lo: vec4<i32>,
    // anterpolate: x = fixed-point scale; from_fixed: x = 2^32 / scale, y = 1 / scale;
    // cutoff: x = 2^-level.
    f: vec4<f32>,
}

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> src: array<f32>;
@group(0) @binding(2) var<storage, read_write> dst: array<f32>;
// anterpolate: per charge (b0, b1, b2, 0), the first lattice index of its stencil per axis;
// cutoff: per stencil row (dy, dz, dx0, len) then (first weight, 0, 0, 0).
@group(0) @binding(3) var<storage, read> ints: array<vec4<i32>>;
// anterpolate: per charge (u0, u1, u2, q), u the fractional lattice coordinate; cutoff: the
// stencil's weights; top: the top level's kernel table.
@group(0) @binding(4) var<storage, read> reals: array<f32>;
// anterpolate / from_fixed: the finest charges in fixed point, (low, high) words per point.
@group(0) @binding(5) var<storage, read_write> acc: array<atomic<u32>>;

fn invocation(gid: vec3<u32>, nwg: vec3<u32>) -> i32 {
    return i32(gid.x + gid.y * nwg.x * WG);
}

fn phi(t_in: f32) -> f32 {
    let t = abs(t_in);
    if (t <= 1.0) {
        return (1.0 - t) * (1.0 + t - 1.5 * t * t);
    }
    if (t < 2.0) {
        let u = 2.0 - t;
        return -0.5 * (t - 1.0) * u * u;
    }
    return 0.0;
}

fn phi4(u: f32) -> vec4<f32> {
    return vec4<f32>(phi(u + 1.0), phi(u), phi(u - 1.0), phi(u - 2.0));
}

// Local index m along an axis of n points: wrapped when periodic, -1 outside an open lattice.
fn wrap(m: i32, n: i32, periodic: bool) -> i32 {
    var r = m;
    if (periodic && n > 0) {
        r = m % n;
        if (r < 0) {
            r += n;
        }
    }
    if (r < 0 || r >= n) {
        return -1;
    }
    return r;
}

// Floor division (b > 0).
fn floordiv(a: i32, b: i32) -> i32 {
    let q = a / b;
    if (a % b != 0 && a < 0) {
        return q - 1;
    }
    return q;
}

// Adds the integer x (|x| < 2^62, an f32 holding an integer) to the 64-bit word pair at point s.
fn add_fixed(s: i32, x: f32) {
    var hi: u32;
    var lo: u32;
    if (abs(x) < 2147483648.0) {
        let v = i32(x);
        lo = bitcast<u32>(v);
        hi = select(0u, 0xffffffffu, v < 0);
    } else {
        // x = hi 2^32 + lo with 0 <= lo < 2^32, both exact: x is a multiple of its ulp (>= 256),
        // so x - hi 2^32 needs at most 24 bits.
        let h = floor(x * 2.3283064365386963e-10);
        let l = x - h * 4294967296.0;
        lo = u32(l);
        hi = bitcast<u32>(i32(h));
    }
    let old = atomicAdd(&acc[2 * s], lo);
    let carry = select(0u, 1u, old + lo < old);
    atomicAdd(&acc[2 * s + 1], hi + carry);
}

// Twin of msml_anterpolate: one invocation per charge.
@compute @workgroup_size(64)
fn anterpolate(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let j = invocation(gid, nwg);
    if (j >= p.n.x) {
        return;
    }
    let periodic = p.n.y != 0;
    let b = ints[j];
    let a = vec4<f32>(reals[4 * j], reals[4 * j + 1], reals[4 * j + 2], reals[4 * j + 3]);
    let wx = phi4(a.x);
    let wy = phi4(a.y);
    let wz = phi4(a.z);
    let scale = p.f.x;
    for (var dk = 0; dk < 4; dk++) {
        let m2 = wrap(b.z + dk - p.lo.z, p.dst.z, periodic);
        if (m2 < 0) {
            continue;
        }
        for (var dj = 0; dj < 4; dj++) {
            let m1 = wrap(b.y + dj - p.lo.y, p.dst.y, periodic);
            if (m1 < 0) {
                continue;
            }
            let qyz = a.w * wy[dj] * wz[dk];
            for (var di = 0; di < 4; di++) {
                let m0 = wrap(b.x + di - p.lo.x, p.dst.x, periodic);
                if (m0 < 0) {
                    continue;
                }
                add_fixed(m0 + p.dst.x * (m1 + p.dst.y * m2), round(qyz * wx[di] * scale));
            }
        }
    }
}

// Twin of msml_from_fixed: dst[i] = (signed 64-bit acc[i]) / scale.
@compute @workgroup_size(64)
fn from_fixed(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let i = invocation(gid, nwg);
    if (i >= p.n.x) {
        return;
    }
    let lo = atomicLoad(&acc[2 * i]);
    let hi = bitcast<i32>(atomicLoad(&acc[2 * i + 1]));
    dst[i] = f32(hi) * p.f.x + f32(lo) * p.f.y;
}

// Twin of msml_axis_pass: one 1-D pass along the axis (source and destination agree on the other
// two dims). Restriction: dst[N] = sum_d J_d src[2N + d - 3]; prolongation: dst[M] =
// sum_{|M - 2N| <= 3} J_{M - 2N + 3} src[N] (global indices).
@compute @workgroup_size(64)
fn axis_pass(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = invocation(gid, nwg);
    if (idx >= p.n.x) {
        return;
    }
    let periodic = p.n.y != 0;
    let axis = p.lo.w;
    let d = p.dst.xyz;
    let c = vec3<i32>(idx % d.x, (idx / d.x) % d.y, idx / (d.x * d.y));
    let ss = vec3<i32>(1, p.src.x, p.src.x * p.src.y);
    var base = 0;
    for (var a = 0; a < 3; a++) {
        if (a != axis) {
            base += c[a] * ss[a];
        }
    }
    let g = c[axis] + p.dst.w;
    let ns = p.src[axis];
    let stride = ss[axis];
    let src_lo = p.src.w;
    var two_scale = array<f32, 7>(-0.0625, 0.0, 0.5625, 1.0, 0.5625, 0.0, -0.0625);
    var sum = 0.0;
    if (p.n.z != 0) {
        for (var t = 0; t < 7; t++) {
            let w = two_scale[t];
            if (w == 0.0) {
                continue;
            }
            let m = wrap(2 * g + t - 3 - src_lo, ns, periodic);
            if (m >= 0) {
                sum += w * src[base + m * stride];
            }
        }
    } else {
        let n_first = -floordiv(3 - g, 2);
        let n_last = floordiv(g + 3, 2);
        for (var n = n_first; n <= n_last; n++) {
            let t = g - 2 * n + 3;
            if (t < 0 || t >= 7) {
                continue;
            }
            let w = two_scale[t];
            if (w == 0.0) {
                continue;
            }
            let m = wrap(n - src_lo, ns, periodic);
            if (m >= 0) {
                sum += w * src[base + m * stride];
            }
        }
    }
    if (p.n.w != 0) {
        dst[idx] += sum;
    } else {
        dst[idx] = sum;
    }
}

// Twin of msml_cutoff: e_m = sum over stencil rows (dy, dz, dx0, len) and their weights w_t of
// (w_t scale) q[m - (dx0 + t, dy, dz)], one invocation per lattice point (x fastest), each row
// summed plainly and the rows with Kahan compensation.
@compute @workgroup_size(64)
fn cutoff(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = invocation(gid, nwg);
    if (idx >= p.n.x) {
        return;
    }
    let periodic = p.n.y != 0;
    let nx = p.dst.x;
    let ny = p.dst.y;
    let nz = p.dst.z;
    let ox = idx % nx;
    let oy = (idx / nx) % ny;
    let oz = idx / (nx * ny);
    let scale = p.f.x;
    var sum = 0.0;
    var comp = 0.0;
    for (var r = 0; r < p.n.z; r++) {
        let row = ints[2 * r];
        let off = ints[2 * r + 1].x;
        let sz = wrap(oz - row.y, nz, periodic);
        let sy = wrap(oy - row.x, ny, periodic);
        if (sz < 0 || sy < 0) {
            continue;
        }
        let srow = nx * (sy + ny * sz);
        let first = ox - row.z;
        var part = 0.0;
        if (periodic) {
            var sx = wrap(first, nx, true);
            for (var t = 0; t < row.w; t++) {
                part += (reals[off + t] * scale) * src[srow + sx];
                sx = select(sx - 1, nx - 1, sx == 0);
            }
        } else {
            let t0 = max(0, first - (nx - 1));
            let t1 = min(row.w - 1, first);
            for (var t = t0; t <= t1; t++) {
                part += (reals[off + t] * scale) * src[srow + first - t];
            }
        }
        let y = part - comp;
        let s = sum + y;
        comp = (s - sum) - y;
        sum = s;
    }
    dst[idx] = sum;
}

// The cutoff by workgroup tiles of TX x TY points of one plane: for each source plane the stencil
// reaches (`ints[n.w + p]` = (dz, first row, rows, 0), p < lo.z), the workgroup stages the source
// points its tile's rows read, (TX + 2 rx) x (TY + 2 ry) with (rx, ry) = lo.xy the stencil's radius
// (wrapped when periodic, zero outside an open lattice), then each invocation sums those rows from
// workgroup memory in the order of `cutoff` (each row plainly, the rows with Kahan compensation).
// The host dispatches it when the staged region fits STAGE values.
const TX: u32 = 16u;
const TY: u32 = 16u;
const STAGE: u32 = 4080u;
var<workgroup> staged: array<f32, STAGE>;

@compute @workgroup_size(TX, TY, 1)
fn cutoff_tiles(@builtin(workgroup_id) wid: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let periodic = p.n.y != 0;
    let nx = p.dst.x;
    let ny = p.dst.y;
    let nz = p.dst.z;
    let rx = p.lo.x;
    let ry = p.lo.y;
    let x0 = i32(wid.x * TX);
    let y0 = i32(wid.y * TY);
    let oz = i32(wid.z);
    let lx = i32(lid.x);
    let ly = i32(lid.y);
    let ox = x0 + lx;
    let oy = y0 + ly;
    let w = i32(TX) + 2 * rx;
    let h = i32(TY) + 2 * ry;
    let scale = p.f.x;
    let flat = ly * i32(TX) + lx;
    var sum = 0.0;
    var comp = 0.0;
    for (var pl = 0; pl < p.lo.z; pl++) {
        let plane = ints[p.n.w + pl];
        let sz = wrap(oz - plane.x, nz, periodic);
        if (sz < 0) {
            continue;
        }
        workgroupBarrier();
        for (var i = flat; i < w * h; i += i32(TX * TY)) {
            let sx = wrap(x0 - rx + i % w, nx, periodic);
            let sy = wrap(y0 - ry + i / w, ny, periodic);
            var v = 0.0;
            if (sx >= 0 && sy >= 0) {
                v = src[sx + nx * (sy + ny * sz)];
            }
            staged[i] = v;
        }
        workgroupBarrier();
        for (var r = plane.y; r < plane.y + plane.z; r++) {
            let row = ints[2 * r];
            let off = ints[2 * r + 1].x;
            // Weight t reads source x = ox - (dx0 + t), staged at lx + rx - dx0 - t.
            let base = (ly + ry - row.x) * w + lx + rx - row.z;
            var part = 0.0;
            for (var t = 0; t < row.w; t++) {
                part += (reals[off + t] * scale) * staged[base - t];
            }
            let y = part - comp;
            let s = sum + y;
            comp = (s - sum) - y;
            sum = s;
        }
    }
    if (ox < nx && oy < ny) {
        dst[ox + nx * (oy + ny * oz)] = sum;
    }
}

// Twins of msml_top_open and msml_top_periodic: e_m = sum_n q_n table[m - n], all pairs of the top
// level, sources in storage order, each x run summed plainly and the runs with Kahan compensation.
// Open: table index (m - n) + (dims - 1) in a (2 nx - 1) x (2 ny - 1) table; periodic:
// (m - n) mod dims.
@compute @workgroup_size(64)
fn top(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let idx = invocation(gid, nwg);
    if (idx >= p.n.x) {
        return;
    }
    let periodic = p.n.y != 0;
    let nx = p.dst.x;
    let ny = p.dst.y;
    let nz = p.dst.z;
    let i = idx % nx;
    let j = (idx / nx) % ny;
    let k = idx / (nx * ny);
    let kx = 2 * nx - 1;
    let ky = 2 * ny - 1;
    var sum = 0.0;
    var comp = 0.0;
    for (var sk = 0; sk < nz; sk++) {
        for (var sj = 0; sj < ny; sj++) {
            var part = 0.0;
            let srow = nx * (sj + ny * sk);
            for (var si = 0; si < nx; si++) {
                let v = src[srow + si];
                var t: i32;
                if (periodic) {
                    t = (i + nx - si) % nx + nx * ((j + ny - sj) % ny + ny * ((k + nz - sk) % nz));
                } else {
                    t = (i + nx - 1 - si) + kx * ((j + ny - 1 - sj) + ky * (k + nz - 1 - sk));
                }
                part += v * reals[t];
            }
            let y = part - comp;
            let s = sum + y;
            comp = (s - sum) - y;
            sum = s;
        }
    }
    dst[idx] = sum;
}
