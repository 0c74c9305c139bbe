// Molecular orbitals (and |psi|^2, densities as sums of weighted |psi|^2) on a lattice, written into a
// storage buffer on the render device: the lattice that the marching-cubes passes
// (shaders/marching_cubes.wgsl) read with no copy through the host.
//
// Driven by src/render/mo_compute.rs (`MoCompute`); the basis is packed by src/compute/packed_mo.rs,
// the same packing as the general CUDA kernel (kernels/mo.cu, kernels/mo_common.cuh), and this pass
// follows that kernel: one invocation per lattice point, a workgroup is an 8 x 8 x 4 brick of points.
// Before evaluating, the workgroup screens the shells: a shell is kept when its cutoff sphere reaches
// the brick's bounding sphere. Kept shells are compacted in order (a prefix sum in workgroup memory),
// so the summation order, and the result, do not depend on scheduling. A primitive is skipped for the
// brick when 2^(-alpha' dmin^2) < 2^-40 (PRIM_SKIP_LOG2).
//
// Each shell carries the orbital's coefficients already contracted with its angular functions: a
// homogeneous polynomial of degree l in the monomials x^a y^b z^c ordered a = l..0, b = l-a..0,
// c = l-a-b. Exponents are pre-scaled by log2(e); radial factors use exp2. f32 throughout.
//
// Two entry points, chosen by `MoPassVariant` in src/render/mo_compute.rs: `evaluate` (one point per
// invocation) and `evaluate_z4` (four points per invocation, strided by 4 planes along z, so an
// 8 x 8 x 4 workgroup covers an 8 x 8 x 16 brick): each shell's and primitive's loads, the screening
// and the coefficient reads are shared by the four points, which are evaluated as vec4 lanes with
// the same operations in the same order as `evaluate` (the results agree to f32 rounding).

// Twin of `GpuShell` in src/compute/cuda/mo/plan.rs (and `ShellRec` in kernels/mo_common.cuh).
struct Shell {
    center: vec3<f32>,   // bohr, relative to the lattice origin
    cutoff2: f32,        // bohr^2; negative: the shell contributes nothing
    l: i32,
    prim_start: i32,
    nprim: i32,
    coef_start: i32,
}

// Twin of `MoParams` in src/render/mo_compute.rs.
struct Params {
    step_x: vec4<f32>,   // bohr
    step_y: vec4<f32>,
    step_z: vec4<f32>,
    // nx, ny, nz of the whole lattice, and the first plane of this dispatch.
    dims: vec4<u32>,
    shell_start: u32,    // this term's shells in `shells`
    n_shells: u32,
    coef_start: u32,     // this term's coefficients in `coefs`
    mode: u32,           // 0: out = psi; 1: out = w psi^2; 2: out += w psi^2
    weight: f32,
    brick_radius: f32,   // bohr: the bounding sphere of an 8 x 8 x 4 brick (with a rounding margin)
    pad0: f32,
    pad1: f32,
}

const BX: u32 = 8u;
const BY: u32 = 8u;
const BZ: u32 = 4u;
const NTHREADS: u32 = 256u;
const PRIM_SKIP_LOG2: f32 = 40.0;
// Points per invocation along z in `evaluate_z4` (twin of `Z4_POINTS` in src/render/mo_compute.rs).
const PZ: u32 = 4u;
const MAX_L: i32 = 6;

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> shells: array<Shell>;
@group(0) @binding(2) var<storage, read> prims: array<vec2<f32>>;
@group(0) @binding(3) var<storage, read> coefs: array<f32>;
@group(0) @binding(4) var<storage, read_write> values: array<f32>;

var<workgroup> scan: array<u32, 256>;
var<workgroup> kept: array<u32, 256>;
var<workgroup> kept_dmin2: array<f32, 256>;

// sum over the monomials of degree l of c[m] x^a y^b z^c, in the order a = l..0, b = l-a..0. No
// private arrays (dynamically indexed, they can live in slow memory): for each a, the row's terms
// y^b z^(l-a-b) run b downwards as z^c times y^(l-a-c), the powers of y taken from a running product.
fn ipow(v: f32, n: i32) -> f32 {
    var r = 1.0;
    for (var i = 0; i < n; i++) {
        r *= v;
    }
    return r;
}

fn angular(l: i32, c0: u32, x: f32, y: f32, z: f32) -> f32 {
    if l == 0 {
        return coefs[c0];
    }
    var acc = 0.0;
    var m = c0;
    var xa = ipow(x, l);
    for (var a = l; a >= 0; a--) {
        let n = l - a;
        // Row a: c = 0..n, b = n - c.
        var row = 0.0;
        var zc = 1.0;
        for (var c = 0; c <= n; c++) {
            row = fma(coefs[m], ipow(y, n - c) * zc, row);
            zc *= z;
            m++;
        }
        acc = fma(row, xa, acc);
        // x^(a-1): recomputed rather than divided (x may be 0).
        xa = ipow(x, a - 1);
    }
    return acc;
}

// The workgroup's screening of shells base..base + 256 against the brick's bounding sphere (centre
// `bc`, radius `brad`): the kept shells' indices and distances, compacted in order, in `kept` and
// `kept_dmin2`; returns how many (the same for every invocation). Called in uniform control flow.
fn screen_shells(base: u32, tid: u32, bc: vec3<f32>, brad: f32) -> u32 {
    let s = base + tid;
    var keep = 0u;
    var dmin2 = 0.0;
    if s < params.n_shells {
        let sh = shells[params.shell_start + s];
        let d = max(length(sh.center - bc) - brad, 0.0);
        dmin2 = d * d;
        keep = select(0u, 1u, dmin2 <= sh.cutoff2);
    }
    // Inclusive prefix sum of the flags (Hillis-Steele).
    scan[tid] = keep;
    workgroupBarrier();
    for (var off = 1u; off < NTHREADS; off *= 2u) {
        var v = scan[tid];
        if tid >= off {
            v += scan[tid - off];
        }
        workgroupBarrier();
        scan[tid] = v;
        workgroupBarrier();
    }
    if keep == 1u {
        let pos = scan[tid] - 1u;
        kept[pos] = s;
        kept_dmin2[pos] = dmin2;
    }
    return workgroupUniformLoad(&scan[NTHREADS - 1u]);
}

@compute @workgroup_size(8, 8, 4)
fn evaluate(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    let k0 = params.dims.w;
    let i = wg.x * BX + lid.x;
    let j = wg.y * BY + lid.y;
    let k = wg.z * BZ + lid.z + k0;
    let sx = params.step_x.xyz;
    let sy = params.step_y.xyz;
    let sz = params.step_z.xyz;
    let p = f32(i) * sx + f32(j) * sy + f32(k) * sz;
    // Centre of the brick (the same for every invocation of the workgroup).
    let ci = f32(wg.x * BX) + 0.5 * f32(BX - 1u);
    let cj = f32(wg.y * BY) + 0.5 * f32(BY - 1u);
    let ck = f32(wg.z * BZ + k0) + 0.5 * f32(BZ - 1u);
    let bc = ci * sx + cj * sy + ck * sz;
    let brad = params.brick_radius;
    let n_shells = params.n_shells;
    var psi = 0.0;
    for (var base = 0u; base < n_shells; base += NTHREADS) {
        let n = screen_shells(base, tid, bc, brad);
        for (var t = 0u; t < n; t++) {
            let sh = shells[params.shell_start + kept[t]];
            // Block-uniform: primitives negligible over the whole brick are skipped.
            let bd2 = kept_dmin2[t];
            let d = p - sh.center;
            let r2 = dot(d, d);
            var radial = 0.0;
            for (var q = 0; q < sh.nprim; q++) {
                let pr = prims[u32(sh.prim_start + q)];
                if pr.x * bd2 < PRIM_SKIP_LOG2 {
                    radial = fma(pr.y, exp2(-pr.x * r2), radial);
                }
            }
            let ang = angular(min(sh.l, MAX_L), params.coef_start + u32(sh.coef_start), d.x, d.y, d.z);
            psi = fma(radial, ang, psi);
        }
        workgroupBarrier();
    }
    let dims = params.dims;
    if i < dims.x && j < dims.y && k < dims.z {
        let idx = i + dims.x * (j + dims.y * k);
        let w = params.weight;
        if params.mode == 0u {
            values[idx] = psi;
        } else if params.mode == 1u {
            values[idx] = w * psi * psi;
        } else {
            values[idx] = values[idx] + w * psi * psi;
        }
    }
}

// As `ipow` and `angular`, on four points at once (the lanes of x, y, z).
fn ipow4(v: vec4<f32>, n: i32) -> vec4<f32> {
    var r = vec4<f32>(1.0);
    for (var i = 0; i < n; i++) {
        r *= v;
    }
    return r;
}

fn angular4(l: i32, c0: u32, x: vec4<f32>, y: vec4<f32>, z: vec4<f32>) -> vec4<f32> {
    if l == 0 {
        return vec4<f32>(coefs[c0]);
    }
    var acc = vec4<f32>(0.0);
    var m = c0;
    var xa = ipow4(x, l);
    for (var a = l; a >= 0; a--) {
        let n = l - a;
        var row = vec4<f32>(0.0);
        var zc = vec4<f32>(1.0);
        for (var c = 0; c <= n; c++) {
            row = fma(vec4<f32>(coefs[m]), ipow4(y, n - c) * zc, row);
            zc *= z;
            m++;
        }
        acc = fma(row, xa, acc);
        xa = ipow4(x, a - 1);
    }
    return acc;
}

// Four points per invocation: planes k, k + 4, k + 8, k + 12 of a brick of 8 x 8 x 16 points
// (`params.brick_radius` is that brick's). The host uses it only where a z-slab boundary falls on
// a multiple of 16 planes, so no point is written by two dispatches.
@compute @workgroup_size(8, 8, 4)
fn evaluate_z4(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) tid: u32,
) {
    let k0 = params.dims.w;
    let i = wg.x * BX + lid.x;
    let j = wg.y * BY + lid.y;
    let kb = wg.z * BZ * PZ + lid.z + k0;
    let ks = vec4<u32>(kb, kb + BZ, kb + 2u * BZ, kb + 3u * BZ);
    let sx = params.step_x.xyz;
    let sy = params.step_y.xyz;
    let sz = params.step_z.xyz;
    let pxy = f32(i) * sx + f32(j) * sy;
    let fk = vec4<f32>(ks);
    // The four points' coordinates, one lane each (as `p` in `evaluate`).
    let px = pxy.x + fk * sz.x;
    let py = pxy.y + fk * sz.y;
    let pz = pxy.z + fk * sz.z;
    let ci = f32(wg.x * BX) + 0.5 * f32(BX - 1u);
    let cj = f32(wg.y * BY) + 0.5 * f32(BY - 1u);
    let ck = f32(wg.z * BZ * PZ + k0) + 0.5 * f32(BZ * PZ - 1u);
    let bc = ci * sx + cj * sy + ck * sz;
    let brad = params.brick_radius;
    let n_shells = params.n_shells;
    var psi = vec4<f32>(0.0);
    for (var base = 0u; base < n_shells; base += NTHREADS) {
        let n = screen_shells(base, tid, bc, brad);
        for (var t = 0u; t < n; t++) {
            let sh = shells[params.shell_start + kept[t]];
            let bd2 = kept_dmin2[t];
            let dx = px - sh.center.x;
            let dy = py - sh.center.y;
            let dz = pz - sh.center.z;
            let r2 = dx * dx + dy * dy + dz * dz;
            var radial = vec4<f32>(0.0);
            for (var q = 0; q < sh.nprim; q++) {
                let pr = prims[u32(sh.prim_start + q)];
                if pr.x * bd2 < PRIM_SKIP_LOG2 {
                    radial = fma(vec4<f32>(pr.y), exp2(-pr.x * r2), radial);
                }
            }
            let ang = angular4(min(sh.l, MAX_L), params.coef_start + u32(sh.coef_start), dx, dy, dz);
            psi = fma(radial, ang, psi);
        }
        workgroupBarrier();
    }
    let dims = params.dims;
    if i < dims.x && j < dims.y {
        let w = params.weight;
        for (var m = 0u; m < PZ; m++) {
            let k = ks[m];
            if k < dims.z {
                let idx = i + dims.x * (j + dims.y * k);
                let v = psi[m];
                if params.mode == 0u {
                    values[idx] = v;
                } else if params.mode == 1u {
                    values[idx] = w * v * v;
                } else {
                    values[idx] = values[idx] + w * v * v;
                }
            }
        }
    }
}
