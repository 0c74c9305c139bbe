// The molecular-surface density (src/compute/molsurf.rs: a truncated Gaussian per atom, level 0.5) on
// an axis-aligned lattice, written into a storage buffer on the render device: the lattice that the
// marching-cubes passes (shaders/marching_cubes.wgsl) read with no copy through the host.
//
// Driven by src/render/molsurf_compute.rs (`MolSurfCompute`). Per frame only the positions arrive
// (Angstrom, three f32 per atom, as the frame holds them); everything below works in Angstrom.
// Passes, in order, each one dispatch (wgpu orders them):
//   bin_count    per atom: its cell of the lattice (cells `cell_width` points wide, atoms outside the
//                lattice in the border cells, atoms beyond their reach dropped) and its rank in that
//                cell, from an atomic counter per cell (cleared before the pass);
//   scan_local   exclusive prefix sum of the counts, 1024 cells per workgroup, block totals aside;
//   scan_blocks  one workgroup: exclusive prefix sum of the block totals, and the grand total;
//   scan_add     each cell's start: its local prefix plus its block's;
//   bin_scatter  per atom: its record (nearest lattice point, offset from it, Gaussian) at its slot;
//   field        a workgroup is a brick of 8 x 8 x 16 points, each invocation a column of 8 points
//                along z. The brick visits the cells within the reach of its points, rows of cells
//                (contiguous in the sorted order) scanned into one list, atoms staged through
//                workgroup memory 128 at a time; an atom whose truncation sphere misses the brick is
//                skipped by the whole workgroup. Per atom and column: one square root for the
//                column's z-range inside the cutoff, two exponentials at its first point, then the
//                Gaussian's z factor by recurrence, two multiplies per point:
//                  g(z + h) = g(z) r,  r(z + h) = r(z) q,  r(z) = exp(-a h (2 z + h)),  q = exp(-2 a h^2).
//
// Precision: each atom holds its nearest lattice index (int) and its offset from that point (f32, at
// most half a step), so a displacement (i - ia) h - off carries only its own rounding. The offset
// is computed from the exact difference of the position's and the origin's parts on a 2^-12 A grain
// (integer arithmetic in f32: compilers may reassociate float sums, so no error-free transformation
// that relies on the order of additions is used) and each step as a 7-bit part (whose products with indices below
// 2^17 are exact, without relying on a fused multiply-add, which Vulkan does not promise) plus the
// rest, so it does not carry the rounding of the atom's distance from the origin. The recurrence adds a few ulp per step (at most 7 steps).

// Twin of `MsParams` in src/render/molsurf_compute.rs.
struct Params {
    origin_hi: vec4<f32>,   // Angstrom: the lattice origin as hi (a multiple of 2^-12) + lo
    origin_lo: vec4<f32>,
    step: vec4<f32>,        // hx, hy, hz (Angstrom); w: log2 of the Gaussians' amplitude
    step_hi: vec4<f32>,     // the steps to 7 significant bits (exact products with the indices)
    step_lo: vec4<f32>,     // the rest: step_hi + step_lo is the f64 step to f32 rounding of the rest
    inv_step: vec4<f32>,    // 1 / step
    dims: vec4<u32>,        // nx, ny, nz of the lattice; w: the first plane of this dispatch
    cells: vec4<i32>,       // cells per axis; w: cells in all
    cell_width: vec4<i32>,  // lattice points per cell and axis
    reach: vec4<i32>,       // lattice points per axis beyond which no atom reaches
    counts: vec4<u32>,      // atoms; invocations per dispatch row of the atom passes; scan blocks;
                            // invocations per dispatch row of scan_add
}

// Twin of `MsAtomParams` in src/render/molsurf_compute.rs: the Gaussian of one atom.
struct AtomParams {
    expo2: f32,   // exponent times log2(e), Angstrom^-2
    rc2: f32,     // truncation radius squared, Angstrom^2; negative: the atom adds nothing
    q: f32,       // exp(-2 a hz^2) of the current lattice
    pad: f32,
}

// One atom in cell order: nearest lattice point; offset from it (Angstrom) and exponent;
// truncation radius squared and the recurrence factor q.
struct AtomRec {
    idx: vec4<i32>,
    off: vec4<f32>,
    gau: vec4<f32>,
}

const NONE: u32 = 0xffffffffu;
const GRAIN: f32 = 4096.0;   // 2^12 per Angstrom: origin_hi and the positions' high parts
const BX: u32 = 8u;
const BY: u32 = 8u;
const BZ: u32 = 2u;
const PZ: u32 = 8u;
const NT: u32 = 256u;        // invocations of the scan passes
const SCAN_PER: u32 = 4u;    // cells per scan invocation
const WG: u32 = 128u;        // invocations of the field pass (BX * BY * BZ)
const ATOM_WG: u32 = 256u;   // invocations of the atom passes

@group(0) @binding(0) var<uniform> p: Params;
@group(0) @binding(1) var<storage, read> positions: array<f32>;
@group(0) @binding(2) var<storage, read> atom_params: array<AtomParams>;
@group(0) @binding(3) var<storage, read_write> cell_rank: array<u32>;
@group(0) @binding(4) var<storage, read_write> counts: array<atomic<u32>>;
@group(0) @binding(5) var<storage, read_write> starts: array<u32>;
@group(0) @binding(6) var<storage, read_write> block_sums: array<u32>;
@group(0) @binding(7) var<storage, read_write> sorted: array<AtomRec>;
@group(0) @binding(8) var<storage, read_write> values: array<f32>;

var<workgroup> sc: array<u32, 256>;
var<workgroup> row_first: array<u32, 128>;
var<workgroup> st_idx: array<vec4<i32>, 128>;
var<workgroup> st_off: array<vec4<f32>, 128>;
var<workgroup> st_gau: array<vec4<f32>, 128>;

// Inclusive prefix sum over the workgroup's first `n` invocations (Hillis-Steele in `sc`); every
// invocation of the workgroup must call it.
fn scan_incl(t: u32, v: u32, n: u32) -> u32 {
    sc[t] = v;
    workgroupBarrier();
    for (var off = 1u; off < n; off *= 2u) {
        var x = sc[t];
        if t >= off && t < n {
            x += sc[t - off];
        }
        workgroupBarrier();
        sc[t] = x;
        workgroupBarrier();
    }
    return sc[t];
}

// Point k of a column: the term (f.x) when k is in [pmin, pmax]; from pmin on, the factors advance
// (f.x *= f.y, f.y *= f.z: the next point's term and ratio). Arguments are evaluated left to right.
fn zstep(k: i32, pmin: i32, pmax: i32, f: ptr<function, vec3<f32>>) -> f32 {
    let v = select(0.0, (*f).x, k >= pmin && k <= pmax);
    if k >= pmin {
        (*f).x *= (*f).y;
        (*f).y *= (*f).z;
    }
    return v;
}

// 2^x as 2^n 2^f with f in [-0.5, 0.5]: exp2's error bound grows with |x| (Vulkan allows
// 3 + 2 |x| ulp), so the reduced argument keeps the term within a few ulp.
fn exp2r(x: f32) -> f32 {
    let n = round(x);
    return ldexp(exp2(x - n), i32(n));
}

// The atom's position relative to the lattice origin (Angstrom).
fn rel_position(a: u32) -> vec3<f32> {
    let x = vec3<f32>(positions[3u * a], positions[3u * a + 1u], positions[3u * a + 2u]);
    return (x - p.origin_hi.xyz) - p.origin_lo.xyz;
}

// The atom's cell, or NONE when it is beyond its reach of the lattice (or not finite).
fn cell_of(a: u32) -> u32 {
    let prm = atom_params[a];
    if !(prm.rc2 > 0.0) {
        return NONE;
    }
    let x = rel_position(a) * p.inv_step.xyz;
    let n = vec3<f32>(p.dims.xyz) - 1.0;
    let reach = sqrt(prm.rc2) * p.inv_step.xyz + 1.0;
    if !(all(x >= -reach) && all(x <= n + reach)) {
        return NONE;
    }
    let c = clamp(vec3<i32>(floor(x / vec3<f32>(p.cell_width.xyz))), vec3<i32>(0), p.cells.xyz - 1);
    return u32(c.x + p.cells.x * (c.y + p.cells.y * c.z));
}

@compute @workgroup_size(256)
fn bin_count(@builtin(global_invocation_id) gid: vec3<u32>) {
    let a = gid.x + gid.y * p.counts.y;
    if a >= p.counts.x {
        return;
    }
    let c = cell_of(a);
    var rank = 0u;
    if c != NONE {
        rank = atomicAdd(&counts[c], 1u);
    }
    cell_rank[2u * a] = c;
    cell_rank[2u * a + 1u] = rank;
}

@compute @workgroup_size(256)
fn scan_local(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let n_cells = u32(p.cells.w);
    let c0 = (wg.x * NT + t) * SCAN_PER;
    var v: array<u32, 4>;
    var sum = 0u;
    for (var e = 0u; e < SCAN_PER; e++) {
        let c = c0 + e;
        var x = 0u;
        if c < n_cells {
            x = atomicLoad(&counts[c]);
        }
        v[e] = sum;
        sum += x;
    }
    let incl = scan_incl(t, sum, NT);
    let before = incl - sum;
    for (var e = 0u; e < SCAN_PER; e++) {
        let c = c0 + e;
        if c < n_cells {
            starts[c] = before + v[e];
        }
    }
    if t == NT - 1u {
        block_sums[wg.x] = incl;
    }
}

@compute @workgroup_size(256)
fn scan_blocks(@builtin(local_invocation_index) t: u32) {
    let n_blocks = p.counts.z;
    var carry = 0u;
    for (var base = 0u; base < n_blocks; base += NT * SCAN_PER) {
        let b0 = base + t * SCAN_PER;
        var v: array<u32, 4>;
        var sum = 0u;
        for (var e = 0u; e < SCAN_PER; e++) {
            var x = 0u;
            if b0 + e < n_blocks {
                x = block_sums[b0 + e];
            }
            v[e] = sum;
            sum += x;
        }
        let incl = scan_incl(t, sum, NT);
        let total = workgroupUniformLoad(&sc[NT - 1u]);
        for (var e = 0u; e < SCAN_PER; e++) {
            if b0 + e < n_blocks {
                block_sums[b0 + e] = carry + incl - sum + v[e];
            }
        }
        carry += total;
    }
    if t == 0u {
        starts[u32(p.cells.w)] = carry;
    }
}

@compute @workgroup_size(256)
fn scan_add(@builtin(global_invocation_id) gid: vec3<u32>) {
    let c = gid.x + gid.y * p.counts.w;
    if c < u32(p.cells.w) {
        starts[c] += block_sums[c / (NT * SCAN_PER)];
    }
}

@compute @workgroup_size(256)
fn bin_scatter(@builtin(global_invocation_id) gid: vec3<u32>) {
    let a = gid.x + gid.y * p.counts.y;
    if a >= p.counts.x {
        return;
    }
    let c = cell_rank[2u * a];
    if c == NONE {
        return;
    }
    let slot = starts[c] + cell_rank[2u * a + 1u];
    // The position as a multiple of 2^-12 A plus the rest (both exact), so that the difference from
    // the origin's high part (also a multiple of 2^-12) is exact within 4096 A.
    let x = vec3<f32>(positions[3u * a], positions[3u * a + 1u], positions[3u * a + 2u]);
    let x_hi = floor(x * GRAIN) * (1.0 / GRAIN);
    let s = x_hi - p.origin_hi.xyz;
    let tail = (x - x_hi) - p.origin_lo.xyz;
    let ia = round((s + tail) * p.inv_step.xyz);
    let off = ((s - ia * p.step_hi.xyz) - ia * p.step_lo.xyz) + tail;
    let prm = atom_params[a];
    sorted[slot] = AtomRec(
        vec4<i32>(vec3<i32>(ia), 0),
        vec4<f32>(off, prm.expo2),
        vec4<f32>(prm.rc2, prm.q, 0.0, 0.0),
    );
}

@compute @workgroup_size(8, 8, 2)
fn field(
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(local_invocation_id) lid: vec3<u32>,
    @builtin(local_invocation_index) t: u32,
) {
    let nx = i32(p.dims.x);
    let ny = i32(p.dims.y);
    let nz = i32(p.dims.z);
    let h = p.step.xyz;
    let lamp = p.step.w;
    let i = i32(wg.x * BX + lid.x);
    let j = i32(wg.y * BY + lid.y);
    let bk0 = i32(p.dims.w + wg.z * BZ * PZ);
    let kc0 = bk0 + i32(lid.z * PZ);
    // The brick's points, then the cells within reach of them.
    let b0 = vec3<i32>(i32(wg.x * BX), i32(wg.y * BY), bk0);
    let b1 = min(b0 + vec3<i32>(i32(BX), i32(BY), i32(BZ * PZ)), vec3<i32>(nx, ny, nz)) - 1;
    let c0 = max(b0 - p.reach.xyz, vec3<i32>(0)) / p.cell_width.xyz;
    let c1 = min((b1 + p.reach.xyz) / p.cell_width.xyz, p.cells.xyz - 1);
    let ncy = u32(c1.y - c0.y + 1);
    let n_rows = ncy * u32(c1.z - c0.z + 1);
    // The column's 8 sums (two vectors, not an indexed array: nothing may spill to slow memory).
    var acc0 = vec4<f32>(0.0);
    var acc1 = vec4<f32>(0.0);
    for (var rb = 0u; rb < n_rows; rb += WG) {
        // This batch of rows: each one's first atom and, scanned, where its atoms start in the list.
        let r = rb + t;
        var len = 0u;
        var first = 0u;
        if r < n_rows {
            let cy = c0.y + i32(r % ncy);
            let cz = c0.z + i32(r / ncy);
            let row = u32(p.cells.x * (cy + p.cells.y * cz));
            first = starts[row + u32(c0.x)];
            len = starts[row + u32(c1.x) + 1u] - first;
        }
        row_first[t] = first;
        let incl = scan_incl(t, len, WG);
        let total = workgroupUniformLoad(&sc[WG - 1u]);
        for (var base = 0u; base < total; base += WG) {
            let idx = base + t;
            if idx < total {
                // The row holding list entry idx: the first whose inclusive end exceeds it.
                var lo = 0u;
                var hi = WG - 1u;
                while lo < hi {
                    let mid = (lo + hi) / 2u;
                    if sc[mid] > idx {
                        hi = mid;
                    } else {
                        lo = mid + 1u;
                    }
                }
                var before = 0u;
                if lo > 0u {
                    before = sc[lo - 1u];
                }
                let rec = sorted[row_first[lo] + idx - before];
                // Distance from the atom to the brick's box; atoms that miss it are marked.
                let dlo = vec3<f32>(b0 - rec.idx.xyz) * h - rec.off.xyz;
                let dhi = vec3<f32>(b1 - rec.idx.xyz) * h - rec.off.xyz;
                let d = max(max(dlo, -dhi), vec3<f32>(0.0));
                var gau = rec.gau;
                if dot(d, d) > gau.x {
                    gau.x = -1.0;
                }
                st_idx[idx - base] = rec.idx;
                st_off[idx - base] = rec.off;
                st_gau[idx - base] = gau;
            }
            workgroupBarrier();
            let m = min(WG, total - base);
            for (var s = 0u; s < m; s++) {
                let g4 = st_gau[s];
                let rc2 = g4.x;
                if rc2 < 0.0 {
                    continue;
                }
                let ia = st_idx[s];
                let o = st_off[s];
                let dx = f32(i - ia.x) * h.x - o.x;
                let dy = f32(j - ia.y) * h.y - o.y;
                let dxy2 = fma(dx, dx, dy * dy);
                if dxy2 > rc2 {
                    continue;
                }
                // The column's points within the cutoff: |dz0 + q h| <= w.
                let w = sqrt(rc2 - dxy2);
                let dz0 = f32(kc0 - ia.z) * h.z - o.z;
                let pmin = max(i32(ceil((-w - dz0) * p.inv_step.z)), 0);
                let pmax = min(i32(floor((w - dz0) * p.inv_step.z)), i32(PZ) - 1);
                if pmin > pmax {
                    continue;
                }
                let a2 = o.w;
                let dzs = f32(kc0 + pmin - ia.z) * h.z - o.z;
                let g = exp2r(lamp - a2 * fma(dzs, dzs, dxy2));
                let rr = exp2r(-a2 * h.z * fma(2.0, dzs, h.z));
                var f = vec3<f32>(g, rr, g4.y);
                acc0 += vec4<f32>(zstep(0, pmin, pmax, &f), zstep(1, pmin, pmax, &f), zstep(2, pmin, pmax, &f), zstep(3, pmin, pmax, &f));
                acc1 += vec4<f32>(zstep(4, pmin, pmax, &f), zstep(5, pmin, pmax, &f), zstep(6, pmin, pmax, &f), zstep(7, pmin, pmax, &f));
            }
            workgroupBarrier();
        }
    }
    if i >= nx || j >= ny {
        return;
    }
    let plane = u32(nx) * u32(ny);
    let first = u32(i) + u32(nx) * u32(j) + plane * u32(kc0);
    let n_here = nz - kc0;
    for (var k = 0; k < 4; k++) {
        if k < n_here {
            values[first + plane * u32(k)] = acc0[k];
        }
        if k + 4 < n_here {
            values[first + plane * u32(k + 4)] = acc1[k];
        }
    }
}
