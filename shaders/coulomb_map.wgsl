// Direct Coulomb summation of point charges onto a lattice slab (potential maps), with the screened
// models of `compute::esp::screening`. Host side: `compute::wgpu::coulomb` (src/compute/wgpu/coulomb.rs);
// the CUDA twin is `dcs_chunk` / `dcs_screened_chunk` in kernels/dcs.cu.
//
// A workgroup is WX x WY invocations; each invocation owns ROWS points of one lattice column along
// y (rows j0 + v * WY, v < ROWS) at its x index i, in plane k of the slab (one plane per workgroup
// along z). Writes of a row are consecutive across the WX invocations (coalesced). The charges are
// walked in tiles of TILE staged in workgroup memory as vec4 (x, y, z, q), x, y, z in bohr relative
// to the lattice origin (f32 from the host's f64 difference). On an axis-aligned lattice (AXIS) the
// invocation computes dx^2 + dz^2 once per charge and only dy and the reciprocal square root per
// point; on a general lattice each point's offset is a sum of step vectors.
//
// Accuracy (f32): 1/r is `inverseSqrt` refined by one Newton step (about one ulp); r^2 is clamped
// below at `min2` (MIN_DISTANCE_BOHR^2) as on the CPU. Each point's terms are summed in blocks of
// BLOCK plainly, the blocks of a tile plainly, and the tiles' sums with Kahan compensation (`keep`
// stops a reassociating compiler from removing it). The rounding of the accumulation is then below
// about (BLOCK + TILE / BLOCK + 2) u sum |t_j| (u = 2^-24) for any number of charges, instead of
// growing with their count.

const WX: u32 = 32u;
const WY: u32 = 2u;
const ROWS: u32 = 8u;
const TILE: u32 = 256u;
const BLOCK: u32 = 8u;
// 1: the lattice's steps are along x, y and z (diagonal); 0: any steps.
override AXIS: u32 = 1u;
// 0: 1/r; 1: the model in `params.model` (1: a / r^2, 2: a exp(-b r) / r).
override SCREENED: u32 = 0u;

// Twin of `compute::wgpu::coulomb::CoulombMapParams`.
struct Params {
    step_x: vec4<f32>,
    step_y: vec4<f32>,
    step_z: vec4<f32>,
    // nx, ny, planes of this slab, first plane of the slab (lattice index k).
    dims: vec4<u32>,
    // Charges in the buffer (a multiple of TILE, zero charges as padding).
    n_charges: u32,
    model: u32,
    screen_a: f32,
    screen_b: f32,
    min2: f32,
    // Always 1 (see the Kahan step).
    keep: u32,
    // Slab plane of this dispatch's first plane in `values` (dispatches cover runs of planes).
    out_plane: u32,
    pad: u32,
};

@group(0) @binding(0) var<uniform> params: Params;
@group(0) @binding(1) var<storage, read> charges: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> values: array<f32>;

var<workgroup> tile: array<vec4<f32>, TILE>;

// The terms of a charge q at four points of squared distances d2.
fn terms(d2: vec4<f32>, q: f32) -> vec4<f32> {
    let h = max(d2, vec4<f32>(params.min2));
    var r = inverseSqrt(h);
    // r (1 + e/2), e = 1 - h r^2 from an fma.
    let e = fma(-h * r, r, vec4<f32>(1.0));
    r = fma(0.5 * r, e, r);
    if SCREENED == 0u {
        return q * r;
    }
    if params.model == 1u {
        return (q * params.screen_a) * r * r;
    }
    return (q * params.screen_a) * r * exp(-params.screen_b / r);
}

fn kahan_add(s: ptr<function, vec4<f32>>, comp: ptr<function, vec4<f32>>, part: vec4<f32>) {
    let y = part - *comp;
    let t = *s + y;
    *comp = (select(*s, t, params.keep != 0u) - *s) - y;
    *s = t;
}

@compute @workgroup_size(WX, WY, 1)
fn coulomb_map(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) lindex: u32,
) {
    let i = wg.x * WX + lid.x;
    let j0 = wg.y * WY * ROWS + lid.y;
    let kk = wg.z;
    let nx = params.dims.x;
    let ny = params.dims.y;
    let k = f32(params.dims.w + kk);
    // The point (i, j0, k) relative to the origin; row v adds v * WY * step_y.
    let base = f32(i) * params.step_x.xyz + f32(j0) * params.step_y.xyz + k * params.step_z.xyz;
    let rs = f32(WY) * params.step_y.xyz;
    let va = vec4<f32>(0.0, 1.0, 2.0, 3.0);
    let vb = vec4<f32>(4.0, 5.0, 6.0, 7.0);
    // Offsets of rows 0-3 (a) and 4-7 (b) from the point (i, j0, k), per axis.
    let oxa = va * rs.x;
    let oya = va * rs.y;
    let oza = va * rs.z;
    let oxb = vb * rs.x;
    let oyb = vb * rs.y;
    let ozb = vb * rs.z;
    var sa = vec4<f32>(0.0);
    var sb = vec4<f32>(0.0);
    var ca = vec4<f32>(0.0);
    var cb = vec4<f32>(0.0);
    for (var start = 0u; start < params.n_charges; start += TILE) {
        workgroupBarrier();
        for (var t = lindex; t < TILE; t += WX * WY) {
            tile[t] = charges[start + t];
        }
        workgroupBarrier();
        var pa = vec4<f32>(0.0);
        var pb = vec4<f32>(0.0);
        for (var jb = 0u; jb < TILE; jb += BLOCK) {
            var ba = vec4<f32>(0.0);
            var bb = vec4<f32>(0.0);
            for (var c = 0u; c < BLOCK; c++) {
                let ch = tile[jb + c];
                let d0 = base - ch.xyz;
                if AXIS == 1u {
                    let dxz2 = vec4<f32>(fma(d0.x, d0.x, d0.z * d0.z));
                    let dya = vec4<f32>(d0.y) + oya;
                    let dyb = vec4<f32>(d0.y) + oyb;
                    ba += terms(fma(dya, dya, dxz2), ch.w);
                    bb += terms(fma(dyb, dyb, dxz2), ch.w);
                } else {
                    let dxa = vec4<f32>(d0.x) + oxa;
                    let dya = vec4<f32>(d0.y) + oya;
                    let dza = vec4<f32>(d0.z) + oza;
                    let dxb = vec4<f32>(d0.x) + oxb;
                    let dyb = vec4<f32>(d0.y) + oyb;
                    let dzb = vec4<f32>(d0.z) + ozb;
                    ba += terms(fma(dxa, dxa, fma(dya, dya, dza * dza)), ch.w);
                    bb += terms(fma(dxb, dxb, fma(dyb, dyb, dzb * dzb)), ch.w);
                }
            }
            pa += ba;
            pb += bb;
        }
        kahan_add(&sa, &ca, pa);
        kahan_add(&sb, &cb, pb);
    }
    if i >= nx {
        return;
    }
    let ra = sa - ca;
    let rb = sb - cb;
    for (var v = 0u; v < 4u; v++) {
        let j = j0 + v * WY;
        if j < ny {
            values[i + nx * (j + ny * (kk + params.out_plane))] = ra[v];
        }
        let j2 = j0 + (v + 4u) * WY;
        if j2 < ny {
            values[i + nx * (j2 + ny * (kk + params.out_plane))] = rb[v];
        }
    }
}
