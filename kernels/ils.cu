// Implicit ligand sampling (Cohen et al. 2006): probe occupancy exp(-U/kT) at the sample points of a
// map, summed over the probe's orientations, for one frame.
//
// Compiled at run time with NVRTC by src/compute/cuda/ils.rs (which launches it; the host prepares the
// atoms there). Sample point (a, b, c) sits at (a, b, c) * step from the first sample point (step =
// `step` + `step_lo`, a double split into two floats); atom positions arrive relative to that point,
// sorted into cubic bins (x fastest) of `bin` Angstrom over the samples' box grown by `reach` (cutoff
// plus the probe's radius), only atoms with a dispersion term, each as two float4: `atoms` (x, y, z,
// sqrt(eps_i / kT)) with x, y, z the float nearest the position, and `lows` (the position's remainder
// x - float(x), ..., and rmin_i / 2), together a position good to about 1e-12 A. The probe's atoms
// (sqrt(eps_j / kT), rmin_j / 2, |o_j|, |o_j|^2) live in constant memory; the orientation offsets o_j
// (per sample class, orientation and probe atom, stored as -2 o_j) in global memory.
//
// Precision: the energies are float32 sums of float32 pair terms, so the differences of positions
// must be formed where they are small. The point kernel places its block's atoms relative to the
// corner of its points' box (in double, from both floats) and its points likewise, so a sample-atom
// difference carries the rounding of numbers under ~15 A (about 5e-7 A), not of positions up to the
// map's size (about 4e-6 A at 90 A, which moved energies near contact by up to 2e-4 kT). The bound
// pass keeps the rounded positions relative to the first sample point: its margin covers that.
//
// Three passes per frame:
// 1. `ils_bound`: one block per region of 4 x 4 x 4 sample points. Per point a lower bound on the
//    probe's energy over every orientation: per system atom i and probe atom j, the smallest value of
//    the pair term over the distances the probe atom can take, |d - |o_j|| .. d + |o_j| (d: the atom's
//    distance from the point; the hard cutoff included), summed. Atoms within `near` of the region
//    are bounded per point; the others once per region over every distance from the region's box
//    (weaker, still a bound). For a probe of two atoms on a line through the sample point (O2, CO,
//    NO: o_1 = -k o_0, k > 0), a near atom's two terms are bounded together: with t the cosine between
//    the probe's axis and the atom's direction, r_0^2 = d^2 + |o_0|^2 - 2 |o_0| d t and
//    r_1^2 = d^2 + |o_1|^2 + 2 |o_1| d t, so over each of ILS_JOINT pieces of t in [-1, 1] the sum is at
//    least the sum of the two terms' minima over their distance ranges there; the smallest piece is
//    the bound (both probe atoms cannot sit at |d - |o_j|| at once: about half the points go).
//    Two alike atoms at o and -o (O2) share every distance range (one term, twice; piece q of one
//    atom is piece ILS_JOINT - 1 - q of the other), so each range's minimum is taken once.
//    A point whose bound exceeds `threshold` (the map's cap plus a margin)
//    has every orientation's exp(-U/kT) below exp(-threshold): it is excluded and adds 0. The region
//    writes a 64-bit mask of its kept points and their count.
// 2. `ils_scan`: the regions' counts to offsets (one block), so the kept points form one list in
//    region order.
// 3. `ils_points_k*_g*`: 64 / G kept points per block (a compact piece of the list), each point's
//    orientations split over G threads (G = 4 from 32 orientations: the smaller box of 16 points
//    streams fewer atoms per point). The block gathers the atoms within reach of the points' box
//    into shared memory (several passes where they do not fit), those within the cutoff of every
//    point of the box apart from the rest (no cutoff test per pair).
//    Each thread holds K orientations' offsets of one probe atom in registers and streams the tile
//    (all threads read one atom at a time: a broadcast), adding eps_ij [(R/r)^12 - 2 (R/r)^6] (in kT)
//    to K energies; r^2 = d^2 + |o|^2 - 2 d.o (three FMAs), 1/r^2 by the SFU's reciprocal
//    (rcp.approx, 1 ulp), then the remaining probe atoms and the next K orientations (a probe of two
//    alike atoms at o and -o, O2, takes both from one dot product: c + t and c - t). Per point the
//    sum over orientations of exp(-U) goes to `samples` (which holds 0 for excluded points).
// `ils_voxels` averages the samples of each voxel.

#define ILS_MAX_PROBE 16
#define ILS_BLOCK 64
#define ILS_NEAR 512
#define ILS_JOINT 16

__constant__ float4 ils_probe[ILS_MAX_PROBE];

// Twin of `IlsArgs` in src/compute/cuda/ils.rs (same field order).
struct IlsArgs {
    int nx, ny, nz;            // sample points per axis (voxels times s)
    int rx, ry, rz;            // regions of 4 x 4 x 4 sample points per axis (multiples of 4)
    int s;                     // sample points per voxel edge
    int classes;               // orientation classes (1 or s^3)
    int bx, by, bz;            // bins per axis
    float step;                // sample spacing, Angstrom
    float bin;                 // bin edge, Angstrom
    float blo_x, blo_y, blo_z; // corner of bin (0, 0, 0) relative to the first sample point
    float cutoff;              // Angstrom
    float cutoff2;             // squared cutoff
    float reach;               // cutoff + probe radius
    float a_max;               // probe radius (largest |o_j|)
    float near;                // atoms closer than this to a region are bounded per point
    float threshold;           // kT: points whose energy bound exceeds it are excluded
    int n_orient;              // orientations per sample point
    int n_probe;               // probe atoms
    int tile;                  // atoms the shared tile of `ils_points_k*` holds
    int pair;                  // 1: two probe atoms alike with o_1 = -o_0 (O2): streamed together
    int joint;                 // 1: two probe atoms with o_1 = -k o_0, k > 0: near atoms bounded jointly
    float step_lo;             // step - (float)step: the sample spacing is step + step_lo
};

__device__ __forceinline__ int ils_clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Regions are listed brick by brick (4 x 4 x 4 regions, bricks x fastest), in Morton order inside a
// brick, so that consecutive kept points lie close together.
__device__ __forceinline__ int ils_code(const IlsArgs& g, int x, int y, int z) {
    const int brick = (x >> 2) + (g.rx >> 2) * ((y >> 2) + (g.ry >> 2) * (z >> 2));
    const int m = (x & 1) | ((y & 1) << 1) | ((z & 1) << 2) | ((x & 2) << 2) | ((y & 2) << 3) | ((z & 2) << 4);
    return brick * 64 + m;
}

__device__ __forceinline__ void ils_region(const IlsArgs& g, int code, int& x, int& y, int& z) {
    const int brick = code >> 6, m = code & 63;
    const int qx = g.rx >> 2, qy = g.ry >> 2;
    x = (brick % qx) * 4 + (m & 1) + ((m >> 2) & 2);
    y = ((brick / qx) % qy) * 4 + ((m >> 1) & 1) + ((m >> 3) & 2);
    z = (brick / (qx * qy)) * 4 + ((m >> 2) & 1) + ((m >> 4) & 2);
}

__device__ __forceinline__ float ils_rcp(float x) {
    float r;
    asm("rcp.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

// The smallest value of e [(R/r)^12 - 2 (R/r)^6] over r in [lo, hi], 0 for r >= rc (hard cutoff).
__device__ float ils_pair_min(float lo, float hi, float R, float e, float rc) {
    if (lo >= rc || !(e > 0.f)) return 0.f;
    const float r = fminf(fmaxf(R, lo), fminf(hi, rc));
    const float s2 = __fdividef(R * R, r * r);
    const float s6 = s2 * s2 * s2;
    float v = e * s6 * (s6 - 2.f);
    if (hi >= rc) v = fminf(v, 0.f);
    return v;
}

// Distance from p to the box [lo, hi] on one axis (0 inside), and to its far side.
__device__ __forceinline__ float ils_gap(float p, float lo, float hi) { return fmaxf(0.f, fmaxf(lo - p, p - hi)); }
__device__ __forceinline__ float ils_far(float p, float lo, float hi) { return fmaxf(p - lo, hi - p); }

// The run of atoms of bin row (y, z) within `r` of the box [lo, hi] along x (false: none).
__device__ bool ils_row(const IlsArgs& g, const int* __restrict__ starts, float3 lo, float3 hi, float r, int y,
                        int z, int& a0, int& a1) {
    const float ylo = g.blo_y + y * g.bin, zlo = g.blo_z + z * g.bin;
    const float dy = fmaxf(0.f, fmaxf(ylo - hi.y, lo.y - (ylo + g.bin)));
    const float dz = fmaxf(0.f, fmaxf(zlo - hi.z, lo.z - (zlo + g.bin)));
    const float rem2 = r * r - dy * dy - dz * dz;
    if (rem2 < 0.f) return false;
    const float rem = sqrtf(rem2);
    const int x0 = ils_clampi((int)floorf((lo.x - rem - g.blo_x) / g.bin), 0, g.bx - 1);
    const int x1 = ils_clampi((int)floorf((hi.x + rem - g.blo_x) / g.bin), 0, g.bx - 1);
    const int row = g.bx * (y + g.by * z);
    a0 = starts[row + x0];
    a1 = starts[row + x1 + 1];
    return a0 < a1;
}

__device__ __forceinline__ void ils_rows(const IlsArgs& g, float3 lo, float3 hi, float r, int& y0, int& y1, int& z0,
                                         int& z1) {
    y0 = ils_clampi((int)floorf((lo.y - r - g.blo_y) / g.bin), 0, g.by - 1);
    y1 = ils_clampi((int)floorf((hi.y + r - g.blo_y) / g.bin), 0, g.by - 1);
    z0 = ils_clampi((int)floorf((lo.z - r - g.blo_z) / g.bin), 0, g.bz - 1);
    z1 = ils_clampi((int)floorf((hi.z + r - g.blo_z) / g.bin), 0, g.bz - 1);
}

__device__ float ils_block_sum(float v, float* red) {
    for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xffffffffu, v, o);
    if ((threadIdx.x & 31) == 0) red[threadIdx.x >> 5] = v;
    __syncthreads();
    float s = 0.f;
    for (int w = 0; w < ILS_BLOCK / 32; ++w) s += red[w];
    return s;
}

extern "C" __global__ void __launch_bounds__(ILS_BLOCK)
ils_bound(const float4* __restrict__ atoms, const float4* __restrict__ lows, const int* __restrict__ starts, IlsArgs g,
          unsigned long long* __restrict__ masks, int* __restrict__ counts) {
    __shared__ float4 near_at[ILS_NEAR];
    __shared__ float near_rh[ILS_NEAR];
    __shared__ int n_near;
    __shared__ float red[ILS_BLOCK / 32];
    const int t = threadIdx.x;
    const int region = ils_code(g, blockIdx.x, blockIdx.y, blockIdx.z);
    if ((int)blockIdx.x * 4 >= g.nx || (int)blockIdx.y * 4 >= g.ny || (int)blockIdx.z * 4 >= g.nz) {
        // A region of the padding: no points.
        if (t == 0) {
            masks[region] = 0ull;
            counts[region] = 0;
        }
        return;
    }
    const int ix = blockIdx.x * 4 + (t & 3), iy = blockIdx.y * 4 + ((t >> 2) & 3), iz = blockIdx.z * 4 + (t >> 4);
    const bool inside = ix < g.nx && iy < g.ny && iz < g.nz;
    const float px = ix * g.step, py = iy * g.step, pz = iz * g.step;
    const float3 lo = make_float3(blockIdx.x * 4 * g.step, blockIdx.y * 4 * g.step, blockIdx.z * 4 * g.step);
    const float3 hi = make_float3(min((int)blockIdx.x * 4 + 3, g.nx - 1) * g.step,
                                  min((int)blockIdx.y * 4 + 3, g.ny - 1) * g.step,
                                  min((int)blockIdx.z * 4 + 3, g.nz - 1) * g.step);
    if (t == 0) n_near = 0;
    __syncthreads();
    const int n_bound = g.pair ? 1 : g.n_probe;
    const float twice = g.pair ? 2.f : 1.f;
    // Atoms beyond `near`: bounded once for the whole box. Each warp takes every other bin row (a
    // row holds about twenty atoms within reach: a warp's lanes, not the block's threads, go round).
    float far = 0.f;
    int y0, y1, z0, z1;
    ils_rows(g, lo, hi, g.reach, y0, y1, z0, z1);
    const int ny_rows = y1 - y0 + 1, n_rows = ny_rows * (z1 - z0 + 1);
    for (int r = t >> 5; r < n_rows; r += ILS_BLOCK / 32) {
        const int y = y0 + r % ny_rows, z = z0 + r / ny_rows;
        int a0, a1;
        if (!ils_row(g, starts, lo, hi, g.reach, y, z, a0, a1)) continue;
        for (int a = a0 + (t & 31); a < a1; a += 32) {
            const float4 at = atoms[a];
            const float gx = ils_gap(at.x, lo.x, hi.x), gy = ils_gap(at.y, lo.y, hi.y),
                        gz = ils_gap(at.z, lo.z, hi.z);
            const float dmin = sqrtf(gx * gx + gy * gy + gz * gz);
            if (dmin >= g.reach) continue;
            const float ri = lows[a].w;
            if (dmin < g.near) {
                const int slot = atomicAdd(&n_near, 1);
                if (slot < ILS_NEAR) {
                    near_at[slot] = at;
                    near_rh[slot] = ri;
                    continue;
                }
            }
            const float fx = ils_far(at.x, lo.x, hi.x), fy = ils_far(at.y, lo.y, hi.y),
                        fz = ils_far(at.z, lo.z, hi.z);
            const float dmax = sqrtf(fx * fx + fy * fy + fz * fz);
            // Two alike probe atoms at o and -o (O2) take the same range: one term, twice.
            for (int j = 0; j < n_bound; ++j) {
                const float4 pj = ils_probe[j];
                far += twice *
                       ils_pair_min(fmaxf(dmin - pj.z, 0.f), dmax + pj.z, ri + pj.y, at.w * pj.x, g.cutoff);
            }
        }
    }
    __syncthreads();
    float bound = ils_block_sum(far, red);
    const int nn = min(n_near, ILS_NEAR);
    for (int i = 0; i < nn; ++i) {
        const float4 at = near_at[i];
        const float dx = at.x - px, dy = at.y - py, dz = at.z - pz;
        const float d = sqrtf(dx * dx + dy * dy + dz * dz);
        const float ri = near_rh[i];
        for (int j = 0; j < n_bound; ++j) {
            const float4 pj = ils_probe[j];
            bound += twice * ils_pair_min(fabsf(d - pj.z), d + pj.z, ri + pj.y, at.w * pj.x, g.cutoff);
        }
    }
    if (g.joint) {
        // A point not yet excluded: per near atom that may repel some orientation, the joint bound of
        // its two terms replaces their separate minima (never smaller, so the sum only grows and the
        // loop may stop once the point is excluded).
        const float4 p0 = ils_probe[0], p1 = ils_probe[1];
        for (int i = 0; i < nn && !(bound > g.threshold); ++i) {
            const float4 at = near_at[i];
            const float dx = at.x - px, dy = at.y - py, dz = at.z - pz;
            const float d = sqrtf(dx * dx + dy * dy + dz * dz);
            const float ri = near_rh[i];
            const float R0 = ri + p0.y, e0 = at.w * p0.x, R1 = ri + p1.y, e1 = at.w * p1.x;
            const float m0 = ils_pair_min(fabsf(d - p0.z), d + p0.z, R0, e0, g.cutoff);
            const float sep = g.pair ? 2.f * m0 : m0 + ils_pair_min(fabsf(d - p1.z), d + p1.z, R1, e1, g.cutoff);
            if (!(sep > 0.f)) continue;
            const float c0 = d * d + p0.w, c1 = d * d + p1.w, k0 = 2.f * p0.z * d, k1 = 2.f * p1.z * d;
            float best = 3.0e38f;
            if (g.pair) {
                // Alike atoms at o and -o: atom 1 over piece q spans the distances atom 0 spans over
                // piece ILS_JOINT - 1 - q (t -> -t), so the pieces' minima m_q serve both atoms, each
                // distance boundary is one square root, and piece q's sum m_q + m_(J-1-q) is piece
                // (J-1-q)'s.
                float m[ILS_JOINT];
                float hi = sqrtf(fmaxf(c0 + k0, 0.f));
#pragma unroll
                for (int q = 0; q < ILS_JOINT; ++q) {
                    const float t1 = -1.f + 2.f * (q + 1) / ILS_JOINT;
                    const float lo = sqrtf(fmaxf(c0 - k0 * t1, 0.f));
                    m[q] = ils_pair_min(lo, hi, R0, e0, g.cutoff);
                    hi = lo;
                }
#pragma unroll
                for (int q = 0; q < ILS_JOINT / 2; ++q) best = fminf(best, m[q] + m[ILS_JOINT - 1 - q]);
            } else {
                for (int q = 0; q < ILS_JOINT; ++q) {
                    const float t0 = -1.f + 2.f * q / ILS_JOINT, t1 = -1.f + 2.f * (q + 1) / ILS_JOINT;
                    const float r0lo = sqrtf(fmaxf(c0 - k0 * t1, 0.f)), r0hi = sqrtf(fmaxf(c0 - k0 * t0, 0.f));
                    const float r1lo = sqrtf(fmaxf(c1 + k1 * t0, 0.f)), r1hi = sqrtf(fmaxf(c1 + k1 * t1, 0.f));
                    best = fminf(best, ils_pair_min(r0lo, r0hi, R0, e0, g.cutoff) +
                                           ils_pair_min(r1lo, r1hi, R1, e1, g.cutoff));
                }
            }
            bound += fmaxf(best - sep, 0.f);
        }
    }
    // NaN (never expected) keeps the point.
    const bool keep = inside && !(bound > g.threshold);
    const unsigned w = __ballot_sync(0xffffffffu, keep);
    __shared__ unsigned words[ILS_BLOCK / 32];
    if ((t & 31) == 0) words[t >> 5] = w;
    __syncthreads();
    if (t == 0) {
        const unsigned long long m = (unsigned long long)words[0] | ((unsigned long long)words[1] << 32);
        masks[region] = m;
        counts[region] = __popcll(m);
    }
}

// Exclusive prefix sums of `counts` (n entries) into `offsets` (n + 1 entries). One block of 1024.
extern "C" __global__ void __launch_bounds__(1024) ils_scan(const int* __restrict__ counts, int n,
                                                           int* __restrict__ offsets) {
    __shared__ int part[1024];
    const int t = threadIdx.x;
    const int per = (n + 1023) / 1024;
    const int b0 = min(t * per, n), b1 = min(b0 + per, n);
    int s = 0;
    for (int i = b0; i < b1; ++i) s += counts[i];
    part[t] = s;
    __syncthreads();
    for (int o = 1; o < 1024; o <<= 1) {
        const int v = t >= o ? part[t - o] : 0;
        __syncthreads();
        part[t] += v;
        __syncthreads();
    }
    int run = part[t] - s;
    for (int i = b0; i < b1; ++i) {
        offsets[i] = run;
        run += counts[i];
    }
    if (t == 1023) offsets[n] = part[1023];
}

// The position of the k-th (from 0) set bit of m.
__device__ int ils_nth_bit(unsigned long long m, int k) {
    unsigned w = (unsigned)m;
    int base = 0;
    const int c = __popc(w);
    if (k >= c) {
        k -= c;
        w = (unsigned)(m >> 32);
        base = 32;
    }
    for (int i = 0; i < k; ++i) w &= w - 1;
    return base + __ffs(w) - 1;
}

// One gather pass: the atoms within reach of the points' box, from the cursor (row, next) on, into
// the tile (inner atoms from the front, the rest from the back) until the tile is nearly full. The
// box is [glo, ghi] relative to the first sample point (rounded: it only picks the bin rows) and
// [0, lhi] relative to its corner `org` (double); tile positions are relative to `org`, formed in
// double from both floats of each atom and rounded once. Every thread of the block calls it with the
// same cursor. True when every atom has been gathered.
__device__ bool ils_gather(const float4* __restrict__ atoms, const float4* __restrict__ lows,
                           const int* __restrict__ starts, const IlsArgs& g, float3 glo, float3 ghi, double3 org,
                           float3 lhi, float4* tile, float* tile_rh, int* counters, int& row, int& next) {
    const int t = threadIdx.x;
    if (t == 0) {
        counters[0] = 0;
        counters[1] = 0;
    }
    __syncthreads();
    int y0, y1, z0, z1;
    ils_rows(g, glo, ghi, g.reach, y0, y1, z0, z1);
    const float3 lo = make_float3(0.f, 0.f, 0.f);
    const float3 hi = lhi;
    const int ny = y1 - y0 + 1;
    const int n_rows = ny * (z1 - z0 + 1);
    const float inner = g.cutoff - g.a_max;
    const float inner2 = inner > 0.f ? inner * inner : -1.f;
    const float reach2 = g.reach * g.reach;
    while (row < n_rows) {
        int a0, a1;
        if (!ils_row(g, starts, glo, ghi, g.reach, y0 + row % ny, z0 + row / ny, a0, a1)) {
            ++row;
            next = -1;
            continue;
        }
        if (next < 0) next = a0;
        while (next < a1) {
            const int used = counters[0] + counters[1];
            __syncthreads();
            if (used > g.tile - ILS_BLOCK) return false;
            const int a = next + t;
            if (a < a1) {
                const float4 h = atoms[a];
                const float4 l = lows[a];
                const float4 at = make_float4((float)(((double)h.x - org.x) + (double)l.x),
                                              (float)(((double)h.y - org.y) + (double)l.y),
                                              (float)(((double)h.z - org.z) + (double)l.z), h.w);
                const float gx = ils_gap(at.x, lo.x, hi.x), gy = ils_gap(at.y, lo.y, hi.y),
                            gz = ils_gap(at.z, lo.z, hi.z);
                if (gx * gx + gy * gy + gz * gz < reach2) {
                    const float fx = ils_far(at.x, lo.x, hi.x), fy = ils_far(at.y, lo.y, hi.y),
                                fz = ils_far(at.z, lo.z, hi.z);
                    const bool in = fx * fx + fy * fy + fz * fz < inner2;
                    const int slot = in ? atomicAdd(&counters[0], 1) : g.tile - 1 - atomicAdd(&counters[1], 1);
                    if (g.pair) {
                        // Two alike probe atoms (O2): the tile holds the pair's coefficients A =
                        // e R^12 and -B = -2 e R^6 (in kT) in place of sqrt(eps_i / kT) and rmin_i / 2,
                        // formed as `ils_stream` forms them, once per block instead of per thread.
                        const float4 pj = ils_probe[0];
                        const float R = l.w + pj.y;
                        const float R2 = R * R;
                        const float R6 = R2 * R2 * R2;
                        const float eR6 = at.w * pj.x * R6;
                        tile[slot] = make_float4(at.x, at.y, at.z, eR6 * R6);
                        tile_rh[slot] = -2.f * eR6;
                    } else {
                        tile[slot] = at;
                        tile_rh[slot] = l.w;
                    }
                }
            }
            next += ILS_BLOCK;
            __syncthreads();
        }
        ++row;
        next = -1;
    }
    return true;
}

// The atoms of the tile's outer part, per warp: within the cutoff of every orientation for every
// lane's point (d < cutoff - |o| less a margin: the unmasked sum, the same numbers as the masked one),
// beyond it for every lane (d > cutoff + |o| plus a margin: skipped, every term would be masked), or
// mixed (each term tested). The margin of 1e-4 A is far above the rounding of d^2 in float32
// (about 1e-6 A here), so a lane never takes a path whose terms differ from the masked sum's.
#define ILS_OUT 0
#define ILS_IN 1
#define ILS_MIXED 2
struct IlsLanes {
    float inner2, outer2;
};

__device__ __forceinline__ IlsLanes ils_lanes(float cutoff2, float radius) {
    const float cutoff = sqrtf(cutoff2);
    const float ri = cutoff - radius - 1e-4f, ro = cutoff + radius + 1e-4f;
    IlsLanes l;
    l.inner2 = ri > 0.f ? ri * ri : -1.f;
    l.outer2 = ro * ro;
    return l;
}

// Every lane of the warp calls it with its own point's difference to the same atom.
__device__ __forceinline__ int ils_lane_class(const IlsLanes& l, float dx, float dy, float dz) {
    const float d2 = fmaf(dx, dx, fmaf(dy, dy, dz * dz));
    if (__all_sync(0xffffffffu, d2 > l.outer2)) return ILS_OUT;
    return __all_sync(0xffffffffu, d2 < l.inner2) ? ILS_IN : ILS_MIXED;
}

// Adds the tile's atoms to the K energies u of one probe atom (offsets ow = -2 o_j).
template <int K>
__device__ __forceinline__ void ils_stream(const float4* tile, const float* tile_rh, int n_in, int first_out,
                                           int end, float px, float py, float pz, float4 pj, float a2,
                                           const float3* ow, float cutoff2, float* u) {
    for (int i = 0; i < n_in; ++i) {
        const float4 at = tile[i];
        const float dx = at.x - px, dy = at.y - py, dz = at.z - pz;
        const float c = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, a2)));
        const float R = tile_rh[i] + pj.y;
        const float R2 = R * R;
        const float R6 = R2 * R2 * R2;
        const float eR6 = at.w * pj.x * R6;
        const float A = eR6 * R6, nB = -2.f * eR6;
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const float r2 = fmaf(dx, ow[k].x, fmaf(dy, ow[k].y, fmaf(dz, ow[k].z, c)));
            const float inv = ils_rcp(r2);
            const float inv3 = inv * inv * inv;
            u[k] = fmaf(fmaf(A, inv3, nB), inv3, u[k]);
        }
    }
    const IlsLanes lanes = ils_lanes(cutoff2, pj.z);
    for (int i = first_out; i < end; ++i) {
        const float4 at = tile[i];
        const float dx = at.x - px, dy = at.y - py, dz = at.z - pz;
        const int cls = ils_lane_class(lanes, dx, dy, dz);
        if (cls == ILS_OUT) continue;
        const float c = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, a2)));
        const float R = tile_rh[i] + pj.y;
        const float R2 = R * R;
        const float R6 = R2 * R2 * R2;
        const float eR6 = at.w * pj.x * R6;
        const float A = eR6 * R6, nB = -2.f * eR6;
        if (cls == ILS_IN) {
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const float r2 = fmaf(dx, ow[k].x, fmaf(dy, ow[k].y, fmaf(dz, ow[k].z, c)));
                const float inv = ils_rcp(r2);
                const float inv3 = inv * inv * inv;
                u[k] = fmaf(fmaf(A, inv3, nB), inv3, u[k]);
            }
        } else {
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const float r2 = fmaf(dx, ow[k].x, fmaf(dy, ow[k].y, fmaf(dz, ow[k].z, c)));
                const float inv = r2 < cutoff2 ? ils_rcp(r2) : 0.f;
                const float inv3 = inv * inv * inv;
                u[k] = fmaf(fmaf(A, inv3, nB), inv3, u[k]);
            }
        }
    }
}

// As `ils_stream` for a probe of two alike atoms at o and -o (offsets ow = -2 o of the first): one
// dot product gives both distances, r^2 = c + t and c - t. The tile holds each atom's A and -B
// (`ils_gather`).
template <int K>
__device__ __forceinline__ void ils_stream_pair(const float4* tile, const float* tile_rh, int n_in, int first_out,
                                                int end, float px, float py, float pz, float4 pj, float a2,
                                                const float3* ow, float cutoff2, float* u) {
    for (int i = 0; i < n_in; ++i) {
        const float4 at = tile[i];
        const float dx = at.x - px, dy = at.y - py, dz = at.z - pz;
        const float c = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, a2)));
        const float A = at.w, nB = tile_rh[i];
#pragma unroll
        for (int k = 0; k < K; ++k) {
            const float t = fmaf(dx, ow[k].x, fmaf(dy, ow[k].y, dz * ow[k].z));
            const float ia = ils_rcp(c + t), ib = ils_rcp(c - t);
            const float a3 = ia * ia * ia, b3 = ib * ib * ib;
            u[k] = fmaf(fmaf(A, a3, nB), a3, u[k]);
            u[k] = fmaf(fmaf(A, b3, nB), b3, u[k]);
        }
    }
    const IlsLanes lanes = ils_lanes(cutoff2, pj.z);
    for (int i = first_out; i < end; ++i) {
        const float4 at = tile[i];
        const float dx = at.x - px, dy = at.y - py, dz = at.z - pz;
        const int cls = ils_lane_class(lanes, dx, dy, dz);
        if (cls == ILS_OUT) continue;
        const float c = fmaf(dx, dx, fmaf(dy, dy, fmaf(dz, dz, a2)));
        const float A = at.w, nB = tile_rh[i];
        if (cls == ILS_IN) {
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const float t = fmaf(dx, ow[k].x, fmaf(dy, ow[k].y, dz * ow[k].z));
                const float ia = ils_rcp(c + t), ib = ils_rcp(c - t);
                const float a3 = ia * ia * ia, b3 = ib * ib * ib;
                u[k] = fmaf(fmaf(A, a3, nB), a3, u[k]);
                u[k] = fmaf(fmaf(A, b3, nB), b3, u[k]);
            }
        } else {
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const float t = fmaf(dx, ow[k].x, fmaf(dy, ow[k].y, dz * ow[k].z));
                const float ra = c + t, rb = c - t;
                const float ia = ra < cutoff2 ? ils_rcp(ra) : 0.f, ib = rb < cutoff2 ? ils_rcp(rb) : 0.f;
                const float a3 = ia * ia * ia, b3 = ib * ib * ib;
                u[k] = fmaf(fmaf(A, a3, nB), a3, u[k]);
                u[k] = fmaf(fmaf(A, b3, nB), b3, u[k]);
            }
        }
    }
}

// K orientations per pass and G orientation groups: a block of ILS_BLOCK threads takes
// P = ILS_BLOCK / G kept points, and thread t works on point t % P and on the orientations
// o0 + 0..K-1 with o0 = (t / P) K + pass G K (the same number of passes for every thread, so the
// block's barriers match; orientations past the last add nothing). The groups' sums are added in a
// fixed order. Fewer points per block make the box of the points, and so the atoms streamed for each
// point, smaller.
template <int K, int G>
__device__ void ils_points(const float4* __restrict__ atoms, const float4* __restrict__ lows,
                           const int* __restrict__ starts, const float4* __restrict__ off,
                           const unsigned long long* __restrict__ masks, const int* __restrict__ offsets,
                           const IlsArgs& g, float* __restrict__ samples) {
    constexpr int P = ILS_BLOCK / G;
    extern __shared__ float4 tile[];
    float* tile_rh = (float*)(tile + g.tile);
    __shared__ int counters[2];
    __shared__ int box[6];
    __shared__ float part[ILS_BLOCK];
    const int t = threadIdx.x;
    // A warp holds 32 / G points (each with its G threads), so the atoms each warp keeps (the
    // per-warp classes of `ils_stream`) are those within reach of fewer points.
    constexpr int PW = 32 / G;
    const int slot = (t >> 5) * PW + (t & 31) % PW, group = (t & 31) / PW;
    const int n_regions = g.rx * g.ry * g.rz;
    const int total = offsets[n_regions];
    if ((int)blockIdx.x * P >= total) return;
    const int gi = blockIdx.x * P + slot;
    const bool active = gi < total;
    int ix = 0, iy = 0, iz = 0;
    if (active) {
        int a = 0, b = n_regions - 1;
        while (a < b) {
            const int mid = (a + b + 1) >> 1;
            if (offsets[mid] <= gi) a = mid;
            else b = mid - 1;
        }
        const int bit = ils_nth_bit(masks[a], gi - offsets[a]);
        int bxr, byr, bzr;
        ils_region(g, a, bxr, byr, bzr);
        ix = bxr * 4 + (bit & 3);
        iy = byr * 4 + ((bit >> 2) & 3);
        iz = bzr * 4 + (bit >> 4);
    }
    if (t == 0) {
        box[0] = box[1] = box[2] = 0x7fffffff;
        box[3] = box[4] = box[5] = -1;
    }
    __syncthreads();
    if (active) {
        atomicMin(&box[0], ix);
        atomicMin(&box[1], iy);
        atomicMin(&box[2], iz);
        atomicMax(&box[3], ix);
        atomicMax(&box[4], iy);
        atomicMax(&box[5], iz);
    }
    __syncthreads();
    // The box of the block's points: rounded, relative to the first sample point, for the bin rows;
    // exact (double) for its corner `org`, which the tile's atoms and the points are relative to.
    const float3 glo = make_float3(box[0] * g.step, box[1] * g.step, box[2] * g.step);
    const float3 ghi = make_float3(box[3] * g.step, box[4] * g.step, box[5] * g.step);
    const double step = (double)g.step + (double)g.step_lo;
    const double3 org = make_double3(box[0] * step, box[1] * step, box[2] * step);
    const float3 lhi = make_float3((float)((box[3] - box[0]) * step), (float)((box[4] - box[1]) * step),
                                   (float)((box[5] - box[2]) * step));
    const float px = (float)((ix - box[0]) * step), py = (float)((iy - box[1]) * step),
                pz = (float)((iz - box[2]) * step);
    const int cls = g.classes == 1 ? 0 : (ix % g.s) + g.s * ((iy % g.s) + g.s * (iz % g.s));

    int row = 0, next = -1;
    const bool whole = ils_gather(atoms, lows, starts, g, glo, ghi, org, lhi, tile, tile_rh, counters, row, next);
    int n_in = counters[0], n_out = counters[1];
    float rho = 0.f;
    const int passes = (g.n_orient + G * K - 1) / (G * K);
    for (int pass = 0; pass < passes; ++pass) {
        const int o0 = group * K + pass * G * K;
        float u[K];
#pragma unroll
        for (int k = 0; k < K; ++k) u[k] = 0.f;
        const int n_streams = g.pair ? 1 : g.n_probe;
        for (int j = 0; j < n_streams; ++j) {
            const float4 pj = ils_probe[j];
            if (!(pj.x > 0.f)) continue;
            float3 ow[K];
#pragma unroll
            for (int k = 0; k < K; ++k) {
                const int o = o0 + k;
                const float4 v = o < g.n_orient ? off[((size_t)cls * g.n_orient + o) * g.n_probe + j]
                                                : make_float4(0.f, 0.f, 0.f, 0.f);
                ow[k] = make_float3(v.x, v.y, v.z);
            }
            if (whole) {
                if (g.pair) {
                    ils_stream_pair<K>(tile, tile_rh, n_in, g.tile - n_out, g.tile, px, py, pz, pj, pj.w, ow,
                                       g.cutoff2, u);
                } else {
                    ils_stream<K>(tile, tile_rh, n_in, g.tile - n_out, g.tile, px, py, pz, pj, pj.w, ow, g.cutoff2,
                                  u);
                }
            } else {
                int r = 0, nx = -1;
                bool done = false;
                while (!done) {
                    __syncthreads();
                    done = ils_gather(atoms, lows, starts, g, glo, ghi, org, lhi, tile, tile_rh, counters, r, nx);
                    const int a = counters[0], b = counters[1];
                    if (g.pair) {
                        ils_stream_pair<K>(tile, tile_rh, a, g.tile - b, g.tile, px, py, pz, pj, pj.w, ow, g.cutoff2,
                                           u);
                    } else {
                        ils_stream<K>(tile, tile_rh, a, g.tile - b, g.tile, px, py, pz, pj, pj.w, ow, g.cutoff2, u);
                    }
                }
            }
        }
#pragma unroll
        for (int k = 0; k < K; ++k) {
            if (o0 + k < g.n_orient) rho += expf(-u[k]);
        }
    }
    part[t] = rho;
    __syncthreads();
    if (group == 0 && active) {
        float sum = 0.f;
#pragma unroll
        for (int q = 0; q < G; ++q) sum += part[(slot / PW) * 32 + q * PW + slot % PW];
        samples[(size_t)ix + (size_t)g.nx * ((size_t)iy + (size_t)g.ny * (size_t)iz)] = sum;
    }
}

#define ILS_POINTS(K, G)                                                                                            \
    extern "C" __global__ void __launch_bounds__(ILS_BLOCK)                                                         \
    ils_points_k##K##_g##G(const float4* __restrict__ atoms, const float4* __restrict__ lows,                       \
                           const int* __restrict__ starts, const float4* __restrict__ off,                          \
                           const unsigned long long* __restrict__ masks, const int* __restrict__ offsets,           \
                           IlsArgs g, float* __restrict__ samples) {                                                \
        ils_points<K, G>(atoms, lows, starts, off, masks, offsets, g, samples);                                     \
    }
ILS_POINTS(1, 1)
ILS_POINTS(8, 1)
ILS_POINTS(10, 1)
ILS_POINTS(13, 1)
ILS_POINTS(15, 1)
ILS_POINTS(16, 1)
ILS_POINTS(17, 1)
ILS_POINTS(8, 4)
ILS_POINTS(10, 4)
ILS_POINTS(13, 4)
ILS_POINTS(15, 4)
ILS_POINTS(16, 4)
ILS_POINTS(17, 4)

// Mean of each voxel's s^3 samples, times `scale` (1 / orientations evaluated): voxel (i, j, k) holds
// samples (i s .. i s + s - 1, ...).
extern "C" __global__ void ils_voxels(const float* __restrict__ samples, int snx, int sny, int s, float scale,
                                      float* __restrict__ voxels, int vx, int vy, int vz) {
    const size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t n = (size_t)vx * vy * vz;
    if (v >= n) return;
    const int i = (int)(v % vx), j = (int)((v / vx) % vy), k = (int)(v / ((size_t)vx * vy));
    float sum = 0.f;
    for (int c = 0; c < s; ++c) {
        for (int b = 0; b < s; ++b) {
            const size_t row = (size_t)snx * ((size_t)(j * s + b) + (size_t)sny * (size_t)(k * s + c));
            for (int a = 0; a < s; ++a) sum += samples[row + i * s + a];
        }
    }
    voxels[v] = sum * scale / (float)(s * s * s);
}
