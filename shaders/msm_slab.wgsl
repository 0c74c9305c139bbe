// Cutoff and multilevel-summation potentials on a lattice slab: for every point, the smoothed
// short-range sum over binned charges within the cutoff plus, when the plan has one, the cubic
// interpolation of the finest MSM lattice potential. Host side: `compute::wgpu::msm`
// (src/compute/wgpu/msm.rs); the CUDA twin is `msm_slab` in kernels/msm.cu, the CPU reference
// `EspPlan::fill_slab` (src/compute/esp/mod.rs). Conventions (src/compute/esp/{bins,kernel,msm}.rs):
//   short range  sum_{r < a} q (k(r) - (c0 + c1 r^2 + c2 r^4)), k(r) = 1/r (vacuum: the polynomial is
//                g_a), a / r^2 (eps = slope r) or a exp(-b r) / r (Debye-Hueckel);
//   bins         bin (i, j, k) holds charges start[b] .. start[b + 1], b = i + nx (j + ny k); a point in
//                bin c visits the bins c + d for the neighbour offsets d whose centre lies within
//                a + diagonal / 2 of it; periodic bins wrap, shifting the charges by whole cells;
//   long range   phi(t) = (1 - |t|)(1 + |t| - 3/2 t^2) for |t| <= 1, -1/2 (|t| - 1)(2 - |t|)^2 up to 2,
//                weights phi(u + 1), phi(u), phi(u - 1), phi(u - 2) for points floor(t) - 1 .. + 2.
// Lengths are bohr relative to the bins' origin, in f32 (the host shifts them). Each bin's terms are
// summed plainly, the bins' sums with Kahan compensation. A point whose long-range stencil leaves an
// open MSM lattice gets NaN (the host evaluates it exactly instead).

struct Params {
    // Target lattice: the slab's plane 0 point (relative to the bins' origin) and step vectors.
    lat_o: vec4<f32>,
    lat_s0: vec4<f32>,
    lat_s1: vec4<f32>,
    lat_s2: vec4<f32>,
    // nx, ny, planes of this dispatch, the dispatch's first plane counted from the slab's first.
    dims: vec4<u32>,
    // Bin coordinate t_k = bin_inv_k . p; bin edge vectors.
    bin_inv0: vec4<f32>,
    bin_inv1: vec4<f32>,
    bin_inv2: vec4<f32>,
    bin_v0: vec4<f32>,
    bin_v1: vec4<f32>,
    bin_v2: vec4<f32>,
    // Bin counts; w: 1 for periodic bins.
    bcount: vec4<i32>,
    // Periodic cell (rows) and its inverse (fractional coordinate f_k = cell_inv_k . p).
    cell0: vec4<f32>,
    cell1: vec4<f32>,
    cell2: vec4<f32>,
    cell_inv0: vec4<f32>,
    cell_inv1: vec4<f32>,
    cell_inv2: vec4<f32>,
    // a^2, (a + diagonal / 2)^2, squared distance floor, the kernel's a.
    cut: vec4<f32>,
    // The smoothing polynomial c0, c1, c2; w: the kernel's b.
    poly: vec4<f32>,
    // Neighbour offsets, has long range, periodic long range, kernel model (0 vacuum, 1, 2).
    flags: vec4<i32>,
    // Bits of the NaN written for points outside an open MSM lattice; the Kahan switch (1 keeps the
    // compensation: a uniform the compiler cannot fold away).
    marks: vec4<u32>,
    // Finest MSM lattice: index 0 (relative to the bins' origin), its reciprocal step vectors,
    // lowest index and dims.
    lr_o: vec4<f32>,
    lr_inv0: vec4<f32>,
    lr_inv1: vec4<f32>,
    lr_inv2: vec4<f32>,
    lr_lo: vec4<i32>,
    lr_dims: vec4<i32>,
}

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> bin_start: array<i32>;
@group(0) @binding(2) var<storage, read> atoms: array<vec4<f32>>;
@group(0) @binding(3) var<storage, read> neighbours: array<vec4<i32>>;
@group(0) @binding(4) var<storage, read> long_range: array<f32>;
@group(0) @binding(5) var<storage, read_write> values: array<f32>;

const WX: u32 = 8u;
const WY: u32 = 8u;

fn phi(t_in: f32) -> f32 {
    let t = abs(t_in);
    if t <= 1.0 {
        return (1.0 - t) * (1.0 + t - 1.5 * t * t);
    }
    if t < 2.0 {
        let u = 2.0 - t;
        return -0.5 * (t - 1.0) * u * u;
    }
    return 0.0;
}

fn imod(m: i32, n: i32) -> i32 {
    let r = m % n;
    return select(r, r + n, r < 0);
}

fn idiv(m: i32, n: i32) -> i32 {
    let q = m / n;
    return select(q, q - 1, (m % n != 0) && (m < 0));
}

fn weights(u: f32) -> vec4<f32> {
    return vec4<f32>(phi(u + 1.0), phi(u), phi(u - 1.0), phi(u - 2.0));
}

// The cubic interpolation of the finest MSM lattice at q (unwrapped, relative to the bins' origin);
// NaN where the stencil leaves an open lattice.
fn interpolate(q: vec3<f32>) -> f32 {
    let d = q - params.lr_o.xyz;
    var t = vec3<f32>(dot(params.lr_inv0.xyz, d), dot(params.lr_inv1.xyz, d), dot(params.lr_inv2.xyz, d));
    let periodic = params.flags.z != 0;
    let n = params.lr_dims.xyz;
    if periodic {
        let nf = vec3<f32>(n);
        let f = t / nf;
        t = (f - floor(f)) * nf;
    }
    let fl = floor(t);
    let u = t - fl;
    let base = vec3<i32>(clamp(fl, vec3<f32>(-1.0e7), vec3<f32>(1.0e7))) - vec3<i32>(1) - params.lr_lo.xyz;
    let wx = weights(u.x);
    let wy = weights(u.y);
    let wz = weights(u.z);
    var e = 0.0;
    var outside = false;
    for (var c = 0; c < 4; c++) {
        var m2 = base.z + c;
        if periodic {
            m2 = imod(m2, n.z);
        } else if m2 < 0 || m2 >= n.z {
            outside = true;
            continue;
        }
        for (var b = 0; b < 4; b++) {
            var m1 = base.y + b;
            if periodic {
                m1 = imod(m1, n.y);
            } else if m1 < 0 || m1 >= n.y {
                outside = true;
                continue;
            }
            var row = 0.0;
            for (var a = 0; a < 4; a++) {
                var m0 = base.x + a;
                if periodic {
                    m0 = imod(m0, n.x);
                } else if m0 < 0 || m0 >= n.x {
                    outside = true;
                    continue;
                }
                row += wx[a] * long_range[u32(m0 + n.x * (m1 + n.y * m2))];
            }
            e += row * wy[b] * wz[c];
        }
    }
    if outside {
        return bitcast<f32>(params.marks.x);
    }
    return e;
}

// The smoothed term of a unit charge at squared distance r2 (below the cutoff).
fn term(r2_in: f32) -> f32 {
    let r2 = max(r2_in, params.cut.z);
    var inv_r = inverseSqrt(r2);
    // One Newton step: inv_r (1 + e / 2), e = 1 - r2 inv_r^2.
    inv_r = fma(0.5 * inv_r, fma(-r2 * inv_r, inv_r, 1.0), inv_r);
    var k = inv_r;
    if params.flags.w == 1 {
        k = params.cut.w * inv_r * inv_r;
    } else if params.flags.w == 2 {
        k = params.cut.w * inv_r * exp(-params.poly.w / inv_r);
    }
    return k - (params.poly.x + r2 * (params.poly.y + r2 * params.poly.z));
}

@compute @workgroup_size(WX, WY, 1)
fn msm_slab(@builtin(global_invocation_id) gid: vec3<u32>) {
    let i = gid.x;
    let j = gid.y;
    let kk = gid.z;
    if i >= params.dims.x || j >= params.dims.y || kk >= params.dims.z {
        return;
    }
    let k = params.dims.w + kk;
    let q = params.lat_o.xyz + f32(i) * params.lat_s0.xyz + f32(j) * params.lat_s1.xyz + f32(k) * params.lat_s2.xyz;
    var p = q;
    let periodic = params.bcount.w != 0;
    if periodic {
        // Whole cells subtracted (none for a point inside the cell, which keeps its coordinates).
        let f = vec3<f32>(dot(params.cell_inv0.xyz, p), dot(params.cell_inv1.xyz, p), dot(params.cell_inv2.xyz, p));
        let s = floor(f);
        p = p - (s.x * params.cell0.xyz + s.y * params.cell1.xyz + s.z * params.cell2.xyz);
    }
    let tb = floor(vec3<f32>(dot(params.bin_inv0.xyz, p), dot(params.bin_inv1.xyz, p), dot(params.bin_inv2.xyz, p)));
    var b = vec3<i32>(clamp(tb, vec3<f32>(-1.0e7), vec3<f32>(1.0e7)));
    let counts = params.bcount.xyz;
    if periodic {
        b = clamp(b, vec3<i32>(0), counts - vec3<i32>(1));
    }
    var sum = 0.0;
    var comp = 0.0;
    for (var n = 0; n < params.flags.x; n++) {
        let c = b + neighbours[n].xyz;
        let ct = vec3<f32>(c) + vec3<f32>(0.5);
        let centre = ct.x * params.bin_v0.xyz + ct.y * params.bin_v1.xyz + ct.z * params.bin_v2.xyz;
        let e = p - centre;
        if dot(e, e) > params.cut.y {
            continue;
        }
        var w = c;
        var shift = vec3<f32>(0.0);
        if periodic {
            w = vec3<i32>(imod(c.x, counts.x), imod(c.y, counts.y), imod(c.z, counts.z));
            let s = vec3<f32>(vec3<i32>(idiv(c.x, counts.x), idiv(c.y, counts.y), idiv(c.z, counts.z)));
            shift = s.x * params.cell0.xyz + s.y * params.cell1.xyz + s.z * params.cell2.xyz;
        } else if any(c < vec3<i32>(0)) || any(c >= counts) {
            continue;
        }
        let idx = u32(w.x + counts.x * (w.y + counts.y * w.z));
        let s0 = bin_start[idx];
        let s1 = bin_start[idx + 1u];
        let r = p - shift;
        var part = 0.0;
        for (var m = s0; m < s1; m++) {
            let a = atoms[m];
            let d = r - a.xyz;
            let r2 = dot(d, d);
            if r2 < params.cut.x {
                part += a.w * term(r2);
            }
        }
        let y = part - comp;
        let t = sum + y;
        comp = (select(sum, t, params.marks.y != 0u) - sum) - y;
        sum = t;
    }
    if params.flags.y != 0 {
        sum += interpolate(q);
    }
    values[i + params.dims.x * (j + params.dims.y * k)] = sum;
}

// ---- Tiled short-range sum (msm_tiles, the default) ----
//
// The same sum, organised like the CUDA engine's msm_tiles: a workgroup of TX x TY invocations owns a
// tile of TX x TY x TZ lattice points (each invocation TZ points along the third lattice axis, tiles
// counted from the dispatch's first plane). The workgroup walks the bins that can reach its tile's box
// (every invocation the same walk, TX * TY bins at a time), stages their charges in workgroup memory
// (moved by whole cells for periodic images), CAP at a time, and every invocation sums them for its
// points, each block plainly and the blocks with Kahan compensation: each charge is read once per tile
// instead of once per point. Charges beyond the cutoff add
// exactly zero. Periodic: the tile is moved by whole cells so that its first point lies in the cell
// (all its points move together). The long-range interpolation is msm_slab's.

const TX: u32 = 16u;
const TY: u32 = 8u;
const TZ: u32 = 4u;
const CAP: u32 = 512u;

var<workgroup> staged: array<vec4<f32>, CAP>;
// Per listed bin: first charge, count, offset among the listed charges; the image shift.
var<workgroup> list_start: array<i32, TX * TY>;
var<workgroup> list_count: array<i32, TX * TY>;
var<workgroup> list_offset: array<i32, TX * TY>;
var<workgroup> list_shift: array<vec4<f32>, TX * TY>;
var<workgroup> listed_total: i32;

fn lattice_point(i: u32, j: u32, k: u32) -> vec3<f32> {
    return params.lat_o.xyz + f32(i) * params.lat_s0.xyz + f32(j) * params.lat_s1.xyz + f32(k) * params.lat_s2.xyz;
}

@compute @workgroup_size(TX, TY, 1)
fn msm_tiles(
    @builtin(workgroup_id) wid: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    let nx = params.dims.x;
    let ny = params.dims.y;
    let k_end = params.dims.w + params.dims.z;
    let i0 = wid.x * TX;
    let j0 = wid.y * TY;
    let k0 = params.dims.w + wid.z * TZ;
    let i1 = min(i0 + TX, nx) - 1u;
    let j1 = min(j0 + TY, ny) - 1u;
    let k1 = min(k0 + TZ, k_end) - 1u;
    let periodic = params.bcount.w != 0;
    let counts = params.bcount.xyz;
    // Periodic: whole cells that bring the tile's first point into the cell.
    var ts = vec3<f32>(0.0);
    if periodic {
        let c = lattice_point(i0, j0, k0);
        let f = -floor(vec3<f32>(dot(params.cell_inv0.xyz, c), dot(params.cell_inv1.xyz, c), dot(params.cell_inv2.xyz, c)));
        ts = f.x * params.cell0.xyz + f.y * params.cell1.xyz + f.z * params.cell2.xyz;
    }
    // Bounding box of the (moved) tile's corners.
    var lo = vec3<f32>(3.0e38);
    var hi = vec3<f32>(-3.0e38);
    for (var corner = 0u; corner < 8u; corner++) {
        let ci = select(i0, i1, (corner & 1u) != 0u);
        let cj = select(j0, j1, (corner & 2u) != 0u);
        let ck = select(k0, k1, (corner & 4u) != 0u);
        let p = lattice_point(ci, cj, ck) + ts;
        lo = min(lo, p);
        hi = max(hi, p);
    }
    // Bins that can hold a charge within the cutoff of the box: bin coordinate t_a = bin_inv_a . p
    // moves by at most a |bin_inv_a| over a distance a.
    let a_cut = sqrt(params.cut.x);
    var blo = vec3<i32>(0);
    var bhi = vec3<i32>(-1);
    var tmin = vec3<f32>(3.0e38);
    var tmax = vec3<f32>(-3.0e38);
    for (var corner = 0u; corner < 8u; corner++) {
        let p = select(lo, hi, vec3<bool>((corner & 1u) != 0u, (corner & 2u) != 0u, (corner & 4u) != 0u));
        let t = vec3<f32>(dot(params.bin_inv0.xyz, p), dot(params.bin_inv1.xyz, p), dot(params.bin_inv2.xyz, p));
        tmin = min(tmin, t);
        tmax = max(tmax, t);
    }
    let reach = a_cut * vec3<f32>(length(params.bin_inv0.xyz), length(params.bin_inv1.xyz), length(params.bin_inv2.xyz));
    blo = vec3<i32>(clamp(floor(tmin - reach), vec3<f32>(-1.0e6), vec3<f32>(1.0e6))) - vec3<i32>(1);
    bhi = vec3<i32>(clamp(floor(tmax + reach), vec3<f32>(-1.0e6), vec3<f32>(1.0e6))) + vec3<i32>(1);
    if !periodic {
        blo = max(blo, vec3<i32>(0));
        bhi = min(bhi, counts - vec3<i32>(1));
    }
    let span = max(bhi - blo + vec3<i32>(1), vec3<i32>(0));
    let n_bins = span.x * span.y * span.z;
    // This invocation's points (moved with the tile).
    let i = i0 + lid.x;
    let j = j0 + lid.y;
    var p: array<vec3<f32>, TZ>;
    var sum: array<f32, TZ>;
    var comp: array<f32, TZ>;
    for (var z = 0u; z < TZ; z++) {
        p[z] = lattice_point(i, j, k0 + z) + ts;
        sum[z] = 0.0;
        comp[z] = 0.0;
    }
    let n_threads = i32(TX * TY);
    for (var base = 0; base < n_bins; base += n_threads) {
        // List up to TX * TY bins, one per invocation.
        var count = 0;
        var first = 0;
        var shift = vec3<f32>(0.0);
        let flat = base + i32(tid);
        if flat < n_bins {
            let c = blo + vec3<i32>(flat % span.x, (flat / span.x) % span.y, flat / (span.x * span.y));
            let ct = vec3<f32>(c) + vec3<f32>(0.5);
            let centre = ct.x * params.bin_v0.xyz + ct.y * params.bin_v1.xyz + ct.z * params.bin_v2.xyz;
            let e = max(max(lo - centre, centre - hi), vec3<f32>(0.0));
            var w = c;
            var inside = dot(e, e) <= params.cut.y;
            if periodic {
                w = vec3<i32>(imod(c.x, counts.x), imod(c.y, counts.y), imod(c.z, counts.z));
                let s = vec3<f32>(vec3<i32>(idiv(c.x, counts.x), idiv(c.y, counts.y), idiv(c.z, counts.z)));
                shift = s.x * params.cell0.xyz + s.y * params.cell1.xyz + s.z * params.cell2.xyz;
            }
            if inside {
                let idx = u32(w.x + counts.x * (w.y + counts.y * w.z));
                first = bin_start[idx];
                count = bin_start[idx + 1u] - first;
            }
        }
        list_start[tid] = first;
        list_count[tid] = count;
        list_shift[tid] = vec4<f32>(shift, 0.0);
        workgroupBarrier();
        if tid == 0u {
            var o = 0;
            for (var e = 0; e < n_threads; e++) {
                list_offset[e] = o;
                o += list_count[e];
            }
            listed_total = o;
        }
        let total = workgroupUniformLoad(&listed_total);
        let my_offset = list_offset[tid];
        // Stage the listed charges CAP at a time and sum them.
        for (var off = 0; off < total; off += i32(CAP)) {
            let m_from = max(off - my_offset, 0);
            let m_to = min(off + i32(CAP) - my_offset, count);
            for (var m = m_from; m < m_to; m++) {
                let a = atoms[first + m];
                staged[my_offset + m - off] = vec4<f32>(a.xyz + shift, a.w);
            }
            workgroupBarrier();
            let n = min(total - off, i32(CAP));
            var part: array<f32, TZ>;
            for (var z = 0u; z < TZ; z++) {
                part[z] = 0.0;
            }
            for (var m = 0; m < n; m++) {
                let a = staged[m];
                for (var z = 0u; z < TZ; z++) {
                    let d = p[z] - a.xyz;
                    let r2 = dot(d, d);
                    part[z] += select(0.0, a.w * term(r2), r2 < params.cut.x);
                }
            }
            // The block's sums into the totals with Kahan compensation.
            for (var z = 0u; z < TZ; z++) {
                let y = part[z] - comp[z];
                let t = sum[z] + y;
                comp[z] = (select(sum[z], t, params.marks.y != 0u) - sum[z]) - y;
                sum[z] = t;
            }
            workgroupBarrier();
        }
    }
    if i >= nx || j >= ny {
        return;
    }
    for (var z = 0u; z < TZ; z++) {
        let k = k0 + z;
        if k >= k_end {
            continue;
        }
        var v = sum[z];
        if params.flags.y != 0 {
            v += interpolate(p[z] - ts);
        }
        values[i + nx * (j + ny * k)] = v;
    }
}
