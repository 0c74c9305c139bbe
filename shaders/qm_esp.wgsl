// Electrostatic potential of a wavefunction (nuclei plus electron density) on a lattice slab, in
// float32: the wgpu twin of kernels/qm_esp.cu and of the CPU engine in src/compute/cpu/qm_esp.rs.
//
// Host side: src/compute/wgpu/qm_esp.rs, which prepends constants (QM_MAX_L, the Boys table's
// QM_TABLE_ORDERS, QM_TABLE_PER_UNIT, QM_TABLE_MAX_T) and appends, for every total angular
// momentum L up to QM_MAX_L, qm_boys_L (the G_n defined below, as straight-line code) and the entry
// point qm_esp_group_L (the straight-line polynomial of one Hermite distribution), generated from the
// layouts of src/compute/qm_esp/nuclear_attraction.rs.
//
// The host hands the density as the screened distributions of compute::qm_esp (one per pair of
// primitives, the density matrix contracted in), grouped by L, each a record
// [sqrt(p), a_hi, b_hi, c_hi, a_lo, b_lo, c_lo, q'_0 .. q'_(nq-1)] of f32: the centre P in the
// lattice's own coordinates (P = origin + a step_x + b step_y + c step_z, each coordinate an f32
// pair from the host's f64), so the offset P - r from the point (i, j, k) is
// ((a_hi - i) + a_lo) step_x + ...: the index difference is exact where it is small (Sterbenz), and
// the offset carries f32 rounding relative to itself, not to the lattice's extent. Nuclei likewise
// ([a_hi, b_hi, c_hi, a_lo, b_lo, c_lo, Z, 0]).
//
// The coefficients are rescaled on the host so that every factor the device multiplies stays near
// one: with Y = sqrt(p) (P - r), T = |Y|^2, c = max(1, sqrt T) and sigma = 1 / c, the term
// q_(n,m) X^m F_n(T) of the CPU engine is q'_(n,m) (Y / c)^m sigma^(n - |m|) G_n with
// q' = q / p^(|m| / 2) and G_n = c^n F_n(T). q carries p^n, so q' carries p^(n - |m| / 2) =
// p^(L' / 2) for its Hermite index of order L', the factor the screening bound of the
// distribution's largest potential already holds: q' is of that size. |Y / c| <= 1, sigma <= 1 and
// G_n is bounded, so no monomial overflows and no Boys value underflows into a product with an
// infinite one, whatever the exponent or the distance (the f64 engines need no such care). The Boys
// function comes from the same table as on the CPU and in CUDA: below QM_TABLE_MAX_T the Taylor
// series at the highest order around the nearest table point and the downward recursion, above it
// the asymptotic F_0 and the upward recursion.
//
// One invocation per lattice point; every invocation of a workgroup reads the same record (uniform
// loads). The potential accumulates in a (sum, compensation) pair of f32 per point in `acc`:
// qm_esp_nuclei starts it with the nuclear potential, each group dispatch adds a run of records, the
// terms summed plainly in blocks of QM_BLOCK and the blocks added with Kahan compensation, so the
// accumulated rounding stays near (QM_BLOCK + 2) u sum |t_j| (u = 2^-24) for any number of
// distributions. The host reads sum - compensation.

const QM_WX: u32 = 8u;
const QM_WY: u32 = 8u;
const QM_BLOCK: u32 = 16u;

// Twin of `compute::wgpu::qm_esp::QmEspParams`.
struct Params {
    step_x: vec4<f32>,
    step_y: vec4<f32>,
    step_z: vec4<f32>,
    // nx, ny, planes of this dispatch, lattice index k of its first plane.
    dims: vec4<u32>,
    // Word offset of the dispatch's first record, records, words per record.
    base: u32,
    count: u32,
    stride: u32,
    // Always 1 (see kahan_add).
    keep: u32,
    min2: f32,
    // Slab plane of this dispatch's first plane in `acc`.
    out_plane: u32,
    pad0: u32,
    pad1: u32,
};

@group(0) @binding(0) var<uniform> params: Params;
// Records of the distributions (group dispatches) or the nuclei (qm_esp_nuclei).
@group(0) @binding(1) var<storage, read> records: array<f32>;
// Boys table: F_n(i / QM_TABLE_PER_UNIT) at [i * QM_TABLE_ORDERS + n], and exp(-i / QM_TABLE_PER_UNIT).
@group(0) @binding(2) var<storage, read> table: array<f32>;
@group(0) @binding(3) var<storage, read> expt: array<f32>;
@group(0) @binding(4) var<storage, read_write> acc: array<vec2<f32>>;

struct QmPoint {
    inside: bool,
    idx: u32,
    // Lattice coordinates (i, j, k) of the point.
    f: vec3<f32>,
};

fn qm_point(gid: vec3<u32>) -> QmPoint {
    var p: QmPoint;
    let nx = params.dims.x;
    let ny = params.dims.y;
    p.inside = gid.x < nx && gid.y < ny && gid.z < params.dims.z;
    p.f = vec3<f32>(f32(gid.x), f32(gid.y), f32(params.dims.w + gid.z));
    p.idx = gid.x + nx * (gid.y + ny * (gid.z + params.out_plane));
    return p;
}

// P - r (bohr) for the point at lattice coordinates f and the centre whose coordinate pairs start at
// word w of `records`.
fn qm_offset(f: vec3<f32>, w: u32) -> vec3<f32> {
    let hi = vec3<f32>(records[w], records[w + 1u], records[w + 2u]);
    let lo = vec3<f32>(records[w + 3u], records[w + 4u], records[w + 5u]);
    let d = (hi - f) + lo;
    return d.x * params.step_x.xyz + d.y * params.step_y.xyz + d.z * params.step_z.xyz;
}

fn kahan_add(s: ptr<function, f32>, comp: ptr<function, f32>, part: f32) {
    let y = part - *comp;
    let t = *s + y;
    *comp = (select(*s, t, params.keep != 0u) - *s) - y;
    *s = t;
}

// 1 / max(1, sqrt t): inverseSqrt refined by one Newton step (about one ulp).
fn qm_sigma(t: f32) -> f32 {
    if t <= 1.0 {
        return 1.0;
    }
    let r = inverseSqrt(t);
    return fma(0.5 * r, fma(-t * r, r, 1.0), r);
}

// Starts the accumulator with sum_A Z_A / max(|r - R_A|, MIN_DISTANCE) over the nuclei.
@compute @workgroup_size(QM_WX, QM_WY, 1)
fn qm_esp_nuclei(@builtin(global_invocation_id) gid: vec3<u32>) {
    let pt = qm_point(gid);
    if !pt.inside {
        return;
    }
    var s = 0.0;
    var comp = 0.0;
    for (var a = 0u; a < params.count; a++) {
        let b = params.base + params.stride * a;
        let d = qm_offset(pt.f, b);
        let h = max(dot(d, d), params.min2);
        var inv = inverseSqrt(h);
        inv = fma(0.5 * inv, fma(-h * inv, inv, 1.0), inv);
        kahan_add(&s, &comp, records[b + 6u] * inv);
    }
    acc[pt.idx] = vec2<f32>(s, comp);
}
