// Implicit ligand sampling (Cohen et al. 2006) on any wgpu device: per sample point of one frame the
// sum over the probe's orientations of exp(shift - U/kT), then per voxel the sum over its sample
// points. Host side: `compute::wgpu::ils` (src/compute/wgpu/ils.rs), which lays out the atoms and
// divides by the counts and exp(shift) in float64; the definitions are those of `compute::ils`.
//
// Coordinates: sample points sit on a lattice of step `delta` (the map spacing over subres) from the
// first sample point; sample point g (integer indices) is g * delta. Atoms are sorted into cubic bins
// of `m` steps whose corners sit on the same lattice (bin n's corner is (l + n m) steps), and each
// atom is stored relative to its own bin's corner (|x| < 4 A, rounded once by the host from float64).
// An atom's offset from a sample point is then its stored position plus (l + n m - g) * delta, an
// integer of small size times the step: every float32 difference is of small numbers, never of two
// absolute positions.
//
// `ils_samples`: one invocation per sample point, a workgroup per tile of 4 x 4 x 4 points (all its
// invocations walk the same bins, so atom loads are broadcasts). A point is excluded (adds 0) when an
// atom lies within that atom's exclusion radius of it (the CPU engine's rule, `compute::ils`). Per
// orientation the energy U/kT = sum over bins, atoms and probe atoms with r^2 < cutoff^2 of
// e_i e_j s6 (s6 - 2), s6 = ((rh_i + rh_j)^2 / r^2)^3, summed in blocks: per bin, per row of bins, then
// over rows. Four orientations go together (one vec4 lane each), so each atom is read once per four.
// `ils_voxels`: one invocation per voxel, the sum of its s^3 samples (positive terms).

const TILE: i32 = 4;
const WG_VOXELS: u32 = 64u;

// Twin of `compute::wgpu::ils::IlsParams`.
struct Params {
    // Sample points per axis (the whole map).
    nx: i32,
    ny: i32,
    nz: i32,
    // Sample points per voxel edge, orientation classes (1 or s^3), orientations, probe atoms.
    s: i32,
    classes: i32,
    n_orient: i32,
    n_probe: i32,
    // Bins per axis, bin edge in steps, the corner of bin 0 in steps (all axes).
    bx: i32,
    by: i32,
    bz: i32,
    m: i32,
    l: i32,
    // Steps covering the reach and the largest exclusion radius (rounded up).
    reach_steps: i32,
    excl_steps: i32,
    // First sample plane (z) and first voxel plane of this dispatch.
    z0: i32,
    k0: i32,
    // Voxel planes of this dispatch, voxels per axis (x, y).
    kn: i32,
    vx: i32,
    vy: i32,
    pad0: i32,
    // Sample step, Angstrom; squared cutoff, A^2; reach (cutoff + probe radius), A; exponent shift.
    delta: f32,
    cutoff2: f32,
    reach: f32,
    shift: f32,
};

@group(0) @binding(0) var<uniform> params: Params;
// Per atom two words: (x, y, z relative to its bin's corner, sqrt(eps / kT)), (rmin / 2, exclusion
// radius squared, 0, 0).
@group(0) @binding(1) var<storage, read> atoms: array<vec4<f32>>;
// Bin b holds atoms starts[b] .. starts[b + 1] (bins x fastest).
@group(0) @binding(2) var<storage, read> starts: array<u32>;
// Per probe atom: (sqrt(eps / kT), rmin / 2, 0, 0).
@group(0) @binding(3) var<storage, read> probe: array<vec4<f32>>;
// Offsets of probe atom j in the orientations 4 q .. 4 q + 3 of class c (q < ceil(n_orient / 4)):
// their x, y and z at 3 ((c * ceil(n_orient / 4) + q) * n_probe + j) + 0, 1, 2.
@group(0) @binding(4) var<storage, read> offsets: array<vec4<f32>>;
// Per sample point of this dispatch's planes: sum over orientations of exp(shift - U).
@group(0) @binding(5) var<storage, read_write> samples: array<f32>;
// Per voxel of the map: sum over its sample points.
@group(0) @binding(6) var<storage, read_write> voxels: array<f32>;

fn floor_div(a: i32, b: i32) -> i32 {
    let q = a / b;
    return select(q, q - 1, (a % b != 0) && ((a < 0) != (b < 0)));
}

fn bin_index(x: i32, y: i32, z: i32) -> i32 {
    return x + params.bx * (y + params.by * z);
}

// Distance (in steps) from the range [lo, hi] of sample indices to bin n's range on one axis.
fn gap_steps(lo: i32, hi: i32, n: i32) -> i32 {
    let b0 = params.l + n * params.m;
    let b1 = b0 + params.m;
    return max(0, max(b0 - hi, lo - b1));
}

// True when an atom lies within its exclusion radius of sample point g.
fn excluded(g: vec3<i32>) -> bool {
    if params.excl_steps <= 0 {
        return false;
    }
    let lo = vec3<i32>(
        max(floor_div(g.x - params.excl_steps - params.l, params.m), 0),
        max(floor_div(g.y - params.excl_steps - params.l, params.m), 0),
        max(floor_div(g.z - params.excl_steps - params.l, params.m), 0),
    );
    let hi = vec3<i32>(
        min(floor_div(g.x + params.excl_steps - params.l, params.m), params.bx - 1),
        min(floor_div(g.y + params.excl_steps - params.l, params.m), params.by - 1),
        min(floor_div(g.z + params.excl_steps - params.l, params.m), params.bz - 1),
    );
    for (var z = lo.z; z <= hi.z; z++) {
        for (var y = lo.y; y <= hi.y; y++) {
            for (var x = lo.x; x <= hi.x; x++) {
                let corner = vec3<i32>(params.l + x * params.m, params.l + y * params.m, params.l + z * params.m);
                let off = vec3<f32>(corner - g) * params.delta;
                let b = bin_index(x, y, z);
                let a1 = starts[b + 1];
                for (var a = starts[b]; a < a1; a++) {
                    let d = atoms[2u * a].xyz + off;
                    let w = atoms[2u * a + 1u];
                    if dot(d, d) < w.y {
                        return true;
                    }
                }
            }
        }
    }
    return false;
}

@compute @workgroup_size(4, 4, 4)
fn ils_samples(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    // The tile's sample indices (z relative to the whole map).
    let t0 = vec3<i32>(i32(wg.x) * TILE, i32(wg.y) * TILE, params.z0 + i32(wg.z) * TILE);
    let t1 = min(t0 + vec3<i32>(TILE - 1), vec3<i32>(params.nx - 1, params.ny - 1, params.nz - 1));
    let g = t0 + vec3<i32>(lid);
    let z_end = params.z0 + params.kn * params.s;
    if g.x >= params.nx || g.y >= params.ny || g.z >= params.nz || g.z >= z_end {
        return;
    }
    let slot = u32(g.x) + u32(params.nx) * (u32(g.y) + u32(params.ny) * u32(g.z - params.z0));
    if excluded(g) {
        samples[slot] = 0.0;
        return;
    }
    var cls = 0;
    if params.classes > 1 {
        let c = g % vec3<i32>(params.s);
        cls = (c.x + params.s * (c.y + params.s * c.z)) % params.classes;
    }
    // The bins that may hold atoms within reach of the tile (the same for every invocation).
    let blo = vec3<i32>(
        max(floor_div(t0.x - params.reach_steps - params.l, params.m), 0),
        max(floor_div(t0.y - params.reach_steps - params.l, params.m), 0),
        max(floor_div(t0.z - params.reach_steps - params.l, params.m), 0),
    );
    let bhi = vec3<i32>(
        min(floor_div(t1.x + params.reach_steps - params.l, params.m), params.bx - 1),
        min(floor_div(t1.y + params.reach_steps - params.l, params.m), params.by - 1),
        min(floor_div(t1.z + params.reach_steps - params.l, params.m), params.bz - 1),
    );
    let reach2 = params.reach * params.reach;
    let d2 = params.delta * params.delta;
    let groups = (params.n_orient + 3) / 4;
    var rho = 0.0;
    for (var grp = 0; grp < groups; grp++) {
        let first = (cls * groups + grp) * params.n_probe;
        var u = vec4<f32>(0.0);
        for (var z = blo.z; z <= bhi.z; z++) {
            let gz = f32(gap_steps(t0.z, t1.z, z));
            for (var y = blo.y; y <= bhi.y; y++) {
                let gy = f32(gap_steps(t0.y, t1.y, y));
                if (gz * gz + gy * gy) * d2 >= reach2 {
                    continue;
                }
                var row = vec4<f32>(0.0);
                for (var x = blo.x; x <= bhi.x; x++) {
                    let gx = f32(gap_steps(t0.x, t1.x, x));
                    if (gz * gz + gy * gy + gx * gx) * d2 >= reach2 {
                        continue;
                    }
                    let corner = vec3<i32>(params.l + x * params.m, params.l + y * params.m, params.l + z * params.m);
                    let off = vec3<f32>(corner - g) * params.delta;
                    let b = bin_index(x, y, z);
                    let a1 = starts[b + 1];
                    var bin = vec4<f32>(0.0);
                    for (var a = starts[b]; a < a1; a++) {
                        let p = atoms[2u * a];
                        let rh = atoms[2u * a + 1u].x;
                        let d0 = p.xyz + off;
                        for (var j = 0; j < params.n_probe; j++) {
                            let pj = probe[j];
                            if pj.x > 0.0 {
                                // Four orientations at once: x, y and z of probe atom j's offsets.
                                let k = 3 * (first + j);
                                let dx = vec4<f32>(d0.x) - offsets[k];
                                let dy = vec4<f32>(d0.y) - offsets[k + 1];
                                let dz = vec4<f32>(d0.z) - offsets[k + 2];
                                let r2 = dx * dx + dy * dy + dz * dz;
                                let big_r = rh + pj.y;
                                let s2 = vec4<f32>(big_r * big_r) / r2;
                                let s6 = s2 * s2 * s2;
                                let t = (p.w * pj.x) * s6 * (s6 - vec4<f32>(2.0));
                                bin += select(vec4<f32>(0.0), t, r2 < vec4<f32>(params.cutoff2));
                            }
                        }
                    }
                    row += bin;
                }
                u += row;
            }
        }
        let e = exp(vec4<f32>(params.shift) - u);
        for (var k = 0; k < 4; k++) {
            if grp * 4 + k < params.n_orient {
                rho += e[k];
            }
        }
    }
    samples[slot] = rho;
}

@compute @workgroup_size(64)
fn ils_voxels(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) nwg: vec3<u32>) {
    let v = gid.x + gid.y * nwg.x * WG_VOXELS;
    let per_plane = u32(params.vx * params.vy);
    if v >= per_plane * u32(params.kn) {
        return;
    }
    let i = i32(v % u32(params.vx));
    let j = i32((v / u32(params.vx)) % u32(params.vy));
    let k = i32(v / per_plane);
    let s = params.s;
    var sum = 0.0;
    for (var c = 0; c < s; c++) {
        for (var b = 0; b < s; b++) {
            let row = u32(params.nx) * (u32(j * s + b) + u32(params.ny) * u32(k * s + c));
            for (var a = 0; a < s; a++) {
                sum += samples[row + u32(i * s + a)];
            }
        }
    }
    voxels[v + per_plane * u32(params.k0)] = sum;
}
