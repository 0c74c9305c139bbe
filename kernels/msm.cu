// Multilevel summation on a map lattice (src/compute/cuda/msm.rs launches this): for every point of a
// z-slab, the smoothed short-range sum over binned charges plus, when the plan has one, the cubic
// interpolation of the finest MSM lattice potential. Two kernels do it: msm_tiles (the default: a
// block per tile of points, the charges near the tile staged in shared memory) and msm_slab (a thread
// per point). The long-range levels come from the host (src/compute/esp/msm.rs) or from
// kernels/msm_levels.cu; the conventions are those of src/compute/esp/{bins,kernel,msm}.rs:
//   short range  sum_{r < a} q (1/r - g_a(r)),  g_a(r) = (15/8 - 5/4 s + 3/8 s^2) / a,  s = r^2 / a^2;
//   bins         bin (i, j, k) holds charges start[b] .. start[b + 1], b = i + nx (j + ny k); a point in
//                bin c sees the bins c + d for the neighbour offsets d whose centre lies within
//                a + diagonal / 2 of it; periodic bins wrap, shifting the charges by whole cells;
//   long range   phi(t) = (1 - |t|)(1 + |t| - 3/2 t^2) for |t| <= 1, -1/2 (|t| - 1)(2 - |t|)^2 up to 2,
//                weights phi(u + 1), phi(u), phi(u - 1), phi(u - 2) for points floor(t) - 1 .. + 2.
// Lengths are bohr and relative to the bins' origin, in f32 (the host shifts them); sums in f32.
// A point whose long-range stencil leaves an open MSM lattice gets NaN, which the engine turns into a
// failed tile for the CPU engine to redo.

struct MsmArgs {
    // Target lattice: first point and step vectors (rows).
    float lat_o[3];
    float lat_s[3][3];
    int nx, ny, k0, nz;
    // Bins.
    float bin_inv[3][3];   // bin coordinate t = bin_inv . p
    float bin_v[3][3];     // bin edge vectors (rows)
    int bcount[3];
    int periodic;
    float cell[3][3];      // periodic cell (rows)
    float cell_inv[3][3];  // fractional coordinate f = cell_inv . p
    float a2, inv_a, inv_a2, reach2, min2;
    int n_neigh;
    // Long range (has_lr = 0 for the cutoff method).
    int has_lr;
    int lr_periodic;
    float lr_o[3];
    float lr_inv[3][3];
    int lr_lo[3];
    int lr_dims[3];
};

__device__ __forceinline__ float msm_dot(const float* w, float x, float y, float z) {
    return w[0] * x + w[1] * y + w[2] * z;
}

__device__ __forceinline__ float msm_phi(float t) {
    t = fabsf(t);
    if (t <= 1.0f) return (1.0f - t) * (1.0f + t - 1.5f * t * t);
    if (t < 2.0f) {
        float u = 2.0f - t;
        return -0.5f * (t - 1.0f) * u * u;
    }
    return 0.0f;
}

__device__ __forceinline__ int msm_mod(int m, int n) {
    int r = m % n;
    return r < 0 ? r + n : r;
}

__device__ __forceinline__ int msm_div(int m, int n) {
    int q = m / n;
    return (m % n != 0 && m < 0) ? q - 1 : q;
}

// The centre of bin (c0, c1, c2) (unwrapped bin coordinates, relative to the bins' origin).
__device__ __forceinline__ void msm_bin_centre(const MsmArgs& g, int c0, int c1, int c2, float& bx, float& by,
                                               float& bz) {
    const float t0 = c0 + 0.5f, t1 = c1 + 0.5f, t2 = c2 + 0.5f;
    bx = t0 * g.bin_v[0][0] + t1 * g.bin_v[1][0] + t2 * g.bin_v[2][0];
    by = t0 * g.bin_v[0][1] + t1 * g.bin_v[1][1] + t2 * g.bin_v[2][1];
    bz = t0 * g.bin_v[0][2] + t1 * g.bin_v[1][2] + t2 * g.bin_v[2][2];
}

// Bin (c0, c1, c2) as stored: its index into `start`, and the shift by whole cells that moves its
// stored charges to this periodic image (zero for open bins). False for an open bin outside the grid.
__device__ __forceinline__ bool msm_bin_image(const MsmArgs& g, int c0, int c1, int c2, int& idx, float& sx,
                                              float& sy, float& sz) {
    int w0 = c0, w1 = c1, w2 = c2;
    sx = 0.0f;
    sy = 0.0f;
    sz = 0.0f;
    if (g.periodic) {
        w0 = msm_mod(c0, g.bcount[0]);
        w1 = msm_mod(c1, g.bcount[1]);
        w2 = msm_mod(c2, g.bcount[2]);
        const float d0 = (float)msm_div(c0, g.bcount[0]);
        const float d1 = (float)msm_div(c1, g.bcount[1]);
        const float d2 = (float)msm_div(c2, g.bcount[2]);
        sx = d0 * g.cell[0][0] + d1 * g.cell[1][0] + d2 * g.cell[2][0];
        sy = d0 * g.cell[0][1] + d1 * g.cell[1][1] + d2 * g.cell[2][1];
        sz = d0 * g.cell[0][2] + d1 * g.cell[1][2] + d2 * g.cell[2][2];
    } else if (c0 < 0 || c1 < 0 || c2 < 0 || c0 >= g.bcount[0] || c1 >= g.bcount[1] || c2 >= g.bcount[2]) {
        return false;
    }
    idx = w0 + g.bcount[0] * (w1 + g.bcount[1] * w2);
    return true;
}

// The cubic interpolation of the finest MSM lattice at (qx, qy, qz) (unwrapped, relative to the bins'
// origin); NaN where the stencil leaves an open lattice.
__device__ __forceinline__ float msm_long_range(const MsmArgs& g, const float* __restrict__ lr, float qx, float qy,
                                                float qz) {
    const float dx = qx - g.lr_o[0], dy = qy - g.lr_o[1], dz = qz - g.lr_o[2];
    float t[3];
    for (int a = 0; a < 3; a++) {
        t[a] = msm_dot(g.lr_inv[a], dx, dy, dz);
        if (g.lr_periodic) {
            const float n = (float)g.lr_dims[a];
            const float f = t[a] / n;
            t[a] = (f - floorf(f)) * n;
        }
    }
    int base[3];
    float w[3][4];
    for (int a = 0; a < 3; a++) {
        const float f = floorf(t[a]);
        const float u = t[a] - f;
        base[a] = (int)f - 1;
        w[a][0] = msm_phi(u + 1.0f);
        w[a][1] = msm_phi(u);
        w[a][2] = msm_phi(u - 1.0f);
        w[a][3] = msm_phi(u - 2.0f);
    }
    float e = 0.0f;
    bool outside = false;
    for (int c = 0; c < 4; c++) {
        int m2 = base[2] + c - g.lr_lo[2];
        if (g.lr_periodic) m2 = msm_mod(m2, g.lr_dims[2]);
        else if (m2 < 0 || m2 >= g.lr_dims[2]) { outside = true; continue; }
        for (int bb = 0; bb < 4; bb++) {
            int m1 = base[1] + bb - g.lr_lo[1];
            if (g.lr_periodic) m1 = msm_mod(m1, g.lr_dims[1]);
            else if (m1 < 0 || m1 >= g.lr_dims[1]) { outside = true; continue; }
            float row = 0.0f;
            for (int aa = 0; aa < 4; aa++) {
                int m0 = base[0] + aa - g.lr_lo[0];
                if (g.lr_periodic) m0 = msm_mod(m0, g.lr_dims[0]);
                else if (m0 < 0 || m0 >= g.lr_dims[0]) { outside = true; continue; }
                row += w[0][aa] * lr[m0 + g.lr_dims[0] * (m1 + g.lr_dims[1] * m2)];
            }
            e += row * w[1][bb] * w[2][c];
        }
    }
    return outside ? __int_as_float(0x7fc00000) : e;
}

extern "C" __global__ void msm_slab(float* __restrict__ out, const int* __restrict__ start,
                                    const float4* __restrict__ atoms, const int4* __restrict__ neigh,
                                    const float* __restrict__ lr, MsmArgs g) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    const int kk = blockIdx.z;
    if (i >= g.nx || j >= g.ny || kk >= g.nz) return;
    const int k = g.k0 + kk;
    float px = g.lat_o[0] + i * g.lat_s[0][0] + j * g.lat_s[1][0] + k * g.lat_s[2][0];
    float py = g.lat_o[1] + i * g.lat_s[0][1] + j * g.lat_s[1][1] + k * g.lat_s[2][1];
    float pz = g.lat_o[2] + i * g.lat_s[0][2] + j * g.lat_s[1][2] + k * g.lat_s[2][2];
    const float qx = px, qy = py, qz = pz;  // unwrapped, for the long-range part
    if (g.periodic) {
        float f0 = msm_dot(g.cell_inv[0], px, py, pz);
        float f1 = msm_dot(g.cell_inv[1], px, py, pz);
        float f2 = msm_dot(g.cell_inv[2], px, py, pz);
        f0 -= floorf(f0);
        f1 -= floorf(f1);
        f2 -= floorf(f2);
        px = f0 * g.cell[0][0] + f1 * g.cell[1][0] + f2 * g.cell[2][0];
        py = f0 * g.cell[0][1] + f1 * g.cell[1][1] + f2 * g.cell[2][1];
        pz = f0 * g.cell[0][2] + f1 * g.cell[1][2] + f2 * g.cell[2][2];
    }
    int b[3];
    for (int a = 0; a < 3; a++) {
        int t = (int)floorf(msm_dot(g.bin_inv[a], px, py, pz));
        if (g.periodic) t = min(max(t, 0), g.bcount[a] - 1);
        b[a] = t;
    }
    float sum = 0.0f;
    for (int n = 0; n < g.n_neigh; n++) {
        const int4 d = neigh[n];
        const int c0 = b[0] + d.x, c1 = b[1] + d.y, c2 = b[2] + d.z;
        float bx, by, bz;
        msm_bin_centre(g, c0, c1, c2, bx, by, bz);
        const float ex = px - bx, ey = py - by, ez = pz - bz;
        if (ex * ex + ey * ey + ez * ez > g.reach2) continue;
        int idx;
        float sx, sy, sz;
        if (!msm_bin_image(g, c0, c1, c2, idx, sx, sy, sz)) continue;
        const int s0 = start[idx], s1 = start[idx + 1];
        const float rx = px - sx, ry = py - sy, rz = pz - sz;
        for (int m = s0; m < s1; m++) {
            const float4 q = atoms[m];
            const float dx = rx - q.x, dy = ry - q.y, dz = rz - q.z;
            const float r2 = fmaxf(dx * dx + dy * dy + dz * dz, g.min2);
            const float s = r2 * g.inv_a2;
            const float gs = (1.875f + s * (-1.25f + 0.375f * s)) * g.inv_a;
            sum += (r2 < g.a2) ? q.w * (rsqrtf(r2) - gs) : 0.0f;
        }
    }
    if (g.has_lr) sum += msm_long_range(g, lr, qx, qy, qz);
    out[i + g.nx * (j + g.ny * kk)] = sum;
}

// ---- Tiled short-range sum (msm_tiles) ----
//
// The same sum as msm_slab, organised like a cutoff kernel: a block of MSM_TX x MSM_TY threads owns a
// tile of MSM_TX x MSM_TY x MSM_TZ lattice points (each thread MSM_TZ points along the third lattice
// axis). Tiles are aligned to the whole lattice (tile z index = k / MSM_TZ, k counted from plane 0),
// not to the slab, so a point's tile, and with it every term and its order, is the same whatever
// slabs the lattice is computed in. The block walks the bins that can hold a charge within the cutoff
// of any point of its tile, in lexicographic order of their unwrapped bin coordinates (c2, c1, c0),
// stages their charges in shared memory (shifted by whole cells for periodic images) and every
// thread sums them for its points. Charges beyond the cutoff add an exact zero, so a point's sum is
// the same for any tile that holds it. Periodic: the tile is moved by whole cells so that its first
// point lies in the cell (all its points move together). The long-range interpolation is msm_slab's.

#define MSM_TX 16
#define MSM_TY 8
#define MSM_TZ 4
#define MSM_THREADS (MSM_TX * MSM_TY)
#define MSM_CAP 512
#define MSM_LIST MSM_THREADS


__device__ __forceinline__ float msm_rsqrt(float x) {
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

// Sums `n` staged charges onto this thread's MSM_TZ points (px, py shared when the third lattice step
// is along z only, ZONLY; otherwise each point has its own x, y). The smoothing is written in r^2:
// g_a = c0 + r^2 (c1 + c2 r^2) with c0 = 15/8 / a, c1 = -5/4 / a^3, c2 = 3/8 / a^5; r^2 is at least
// min2, never denormal, so the flush-to-zero reciprocal square root is exact enough (about 2 ulp).
// A charge at r^2 >= a^2 adds exactly zero, whichever tile staged it: so the sum at a point does not
// depend on which charges beyond the cutoff its tile happened to stage. (max(1/r - g_a, 0) would be
// the same sum mathematically, g_a being 1/r's Taylor polynomial about a, but just beyond a its
// rounding is a few 1e-7 / a of either sign, and a point's value would then depend on its tile.)
template <bool ZONLY>
__device__ __forceinline__ void msm_tile_sum(const float4* __restrict__ sh, int n, const float (&px)[MSM_TZ],
                                             const float (&py)[MSM_TZ], const float (&pz)[MSM_TZ],
                                             float (&sum)[MSM_TZ], const MsmArgs& g, float c0, float c1, float c2) {
    for (int m = 0; m < n; m++) {
        const float4 q = sh[m];
        if (ZONLY) {
            const float dx = px[0] - q.x, dy = py[0] - q.y;
            const float dxy2 = fmaf(dx, dx, dy * dy);
#pragma unroll
            for (int z = 0; z < MSM_TZ; z++) {
                const float dz = pz[z] - q.z;
                const float r2 = fmaxf(fmaf(dz, dz, dxy2), g.min2);
                const float t = msm_rsqrt(r2) - fmaf(r2, fmaf(r2, c2, c1), c0);
                sum[z] = fmaf(q.w, (r2 < g.a2) ? t : 0.0f, sum[z]);
            }
        } else {
#pragma unroll
            for (int z = 0; z < MSM_TZ; z++) {
                const float dx = px[z] - q.x, dy = py[z] - q.y, dz = pz[z] - q.z;
                const float r2 = fmaxf(fmaf(dz, dz, fmaf(dy, dy, dx * dx)), g.min2);
                const float t = msm_rsqrt(r2) - fmaf(r2, fmaf(r2, c2, c1), c0);
                sum[z] = fmaf(q.w, (r2 < g.a2) ? t : 0.0f, sum[z]);
            }
        }
    }
}

// Stages the listed pieces of charges in `sh` and sums them onto this thread's points. Each piece is
// read by one thread, moved by its periodic image's shift, and only the charges within cut2 (the
// cutoff widened by 1e-3 of it, which covers the rounding of the box and of the distances) of the
// tile's box [lo, hi] are kept: in order (the pieces' counts
// are added up in list order), so the staged charges, and with them every sum, do not depend on which
// threads run first. A charge dropped here is beyond the cutoff of every point of the tile, where it
// would have added exactly zero (msm_tile_sum). Called by every thread of the block alike.
template <bool ZONLY>
__device__ __forceinline__ void msm_stage_and_sum(float4* sh, const int* l_start, const int* l_count,
                                                  int* l_kept, const float (*l_shift)[3], int* kept_total,
                                                  int n_list, const float4* __restrict__ atoms, int tid,
                                                  const float (&lo)[3], const float (&hi)[3], float cut2,
                                                  const float (&px)[MSM_TZ], const float (&py)[MSM_TZ],
                                                  const float (&pz)[MSM_TZ], float (&sum)[MSM_TZ], const MsmArgs& g,
                                                  float c0, float c1, float c2) {
    __syncthreads();
    float ax = 0.0f, ay = 0.0f, az = 0.0f;
    int b = 0, c = 0;
    if (tid < n_list) {
        b = l_start[tid];
        c = l_count[tid];
        ax = l_shift[tid][0];
        ay = l_shift[tid][1];
        az = l_shift[tid][2];
        int kept = 0;
        for (int m = 0; m < c; m++) {
            const float4 q = atoms[b + m];
            const float ex = fmaxf(fmaxf(lo[0] - (q.x + ax), (q.x + ax) - hi[0]), 0.0f);
            const float ey = fmaxf(fmaxf(lo[1] - (q.y + ay), (q.y + ay) - hi[1]), 0.0f);
            const float ez = fmaxf(fmaxf(lo[2] - (q.z + az), (q.z + az) - hi[2]), 0.0f);
            kept += (ex * ex + ey * ey + ez * ez <= cut2) ? 1 : 0;
        }
        l_kept[tid] = kept;
    }
    __syncthreads();
    if (tid == 0) {
        int o = 0;
        for (int e = 0; e < n_list; e++) {
            const int k = l_kept[e];
            l_kept[e] = o;
            o += k;
        }
        *kept_total = o;
    }
    __syncthreads();
    if (tid < n_list) {
        int o = l_kept[tid];
        for (int m = 0; m < c; m++) {
            const float4 q = atoms[b + m];
            const float x = q.x + ax, y = q.y + ay, z = q.z + az;
            const float ex = fmaxf(fmaxf(lo[0] - x, x - hi[0]), 0.0f);
            const float ey = fmaxf(fmaxf(lo[1] - y, y - hi[1]), 0.0f);
            const float ez = fmaxf(fmaxf(lo[2] - z, z - hi[2]), 0.0f);
            if (ex * ex + ey * ey + ez * ez <= cut2) sh[o++] = make_float4(x, y, z, q.w);
        }
    }
    __syncthreads();
    msm_tile_sum<ZONLY>(sh, *kept_total, px, py, pz, sum, g, c0, c1, c2);
}

template <bool ZONLY>
__device__ __forceinline__ void msm_tiles_body(float* __restrict__ out, const int* __restrict__ start,
                                               const float4* __restrict__ atoms, const float* __restrict__ lr,
                                               const MsmArgs& g, int tile_k0) {
    __shared__ float4 sh[MSM_CAP];
    __shared__ int l_start[MSM_LIST], l_count[MSM_LIST], l_kept[MSM_LIST];
    __shared__ int kept_total;
    __shared__ float l_shift[MSM_LIST][3];
    const int tid = threadIdx.x + MSM_TX * threadIdx.y;
    const int i0 = blockIdx.x * MSM_TX, j0 = blockIdx.y * MSM_TY;
    const int i = i0 + threadIdx.x, j = j0 + threadIdx.y;
    // The tile's extent, clamped to the lattice and the slab (points beyond them are not computed; a
    // bin that can reach a computed point is walked whatever the clamp).
    const int i1 = min(i0 + MSM_TX, g.nx) - 1, j1 = min(j0 + MSM_TY, g.ny) - 1;
    const int k1 = min(tile_k0 + MSM_TZ, g.k0 + g.nz) - 1;
    const int kl = max(tile_k0, g.k0);
    // Periodic: whole cells that bring the tile's first point into the cell (the tile's own first
    // point, whatever the slab, so that a point moves by the same cells in every slab).
    float tsx = 0.0f, tsy = 0.0f, tsz = 0.0f;
    if (g.periodic) {
        const float cx = g.lat_o[0] + i0 * g.lat_s[0][0] + j0 * g.lat_s[1][0] + tile_k0 * g.lat_s[2][0];
        const float cy = g.lat_o[1] + i0 * g.lat_s[0][1] + j0 * g.lat_s[1][1] + tile_k0 * g.lat_s[2][1];
        const float cz = g.lat_o[2] + i0 * g.lat_s[0][2] + j0 * g.lat_s[1][2] + tile_k0 * g.lat_s[2][2];
        const float f0 = -floorf(msm_dot(g.cell_inv[0], cx, cy, cz));
        const float f1 = -floorf(msm_dot(g.cell_inv[1], cx, cy, cz));
        const float f2 = -floorf(msm_dot(g.cell_inv[2], cx, cy, cz));
        tsx = f0 * g.cell[0][0] + f1 * g.cell[1][0] + f2 * g.cell[2][0];
        tsy = f0 * g.cell[0][1] + f1 * g.cell[1][1] + f2 * g.cell[2][1];
        tsz = f0 * g.cell[0][2] + f1 * g.cell[1][2] + f2 * g.cell[2][2];
    }
    // Bounding box of the (moved) tile's corners.
    float lo[3] = {3.0e38f, 3.0e38f, 3.0e38f}, hi[3] = {-3.0e38f, -3.0e38f, -3.0e38f};
    for (int corner = 0; corner < 8; corner++) {
        const int ci = (corner & 1) ? i1 : i0, cj = (corner & 2) ? j1 : j0, ck = (corner & 4) ? k1 : kl;
        const float p[3] = {
            g.lat_o[0] + ci * g.lat_s[0][0] + cj * g.lat_s[1][0] + ck * g.lat_s[2][0] + tsx,
            g.lat_o[1] + ci * g.lat_s[0][1] + cj * g.lat_s[1][1] + ck * g.lat_s[2][1] + tsy,
            g.lat_o[2] + ci * g.lat_s[0][2] + cj * g.lat_s[1][2] + ck * g.lat_s[2][2] + tsz};
        for (int a = 0; a < 3; a++) {
            lo[a] = fminf(lo[a], p[a]);
            hi[a] = fmaxf(hi[a], p[a]);
        }
    }
    // Bins that can hold a charge within the cutoff of the box: bin coordinate t_a = bin_inv[a] . p
    // moves by at most a |bin_inv[a]| over a distance a.
    int blo[3], bhi[3];
    const float a_cut = sqrtf(g.a2);
    for (int a = 0; a < 3; a++) {
        float tmin = 3.0e38f, tmax = -3.0e38f;
        for (int corner = 0; corner < 8; corner++) {
            const float t = msm_dot(g.bin_inv[a], (corner & 1) ? hi[0] : lo[0], (corner & 2) ? hi[1] : lo[1],
                                    (corner & 4) ? hi[2] : lo[2]);
            tmin = fminf(tmin, t);
            tmax = fmaxf(tmax, t);
        }
        const float norm = sqrtf(g.bin_inv[a][0] * g.bin_inv[a][0] + g.bin_inv[a][1] * g.bin_inv[a][1] +
                                 g.bin_inv[a][2] * g.bin_inv[a][2]);
        blo[a] = (int)floorf(tmin - a_cut * norm) - 1;
        bhi[a] = (int)floorf(tmax + a_cut * norm) + 1;
        if (!g.periodic) {
            blo[a] = max(blo[a], 0);
            bhi[a] = min(bhi[a], g.bcount[a] - 1);
        }
    }
    // This thread's points (moved with the tile) and their unwrapped positions for the long range.
    float px[MSM_TZ], py[MSM_TZ], pz[MSM_TZ], sum[MSM_TZ];
#pragma unroll
    for (int z = 0; z < MSM_TZ; z++) {
        const int k = tile_k0 + z;
        px[z] = g.lat_o[0] + i * g.lat_s[0][0] + j * g.lat_s[1][0] + k * g.lat_s[2][0] + tsx;
        py[z] = g.lat_o[1] + i * g.lat_s[0][1] + j * g.lat_s[1][1] + k * g.lat_s[2][1] + tsy;
        pz[z] = g.lat_o[2] + i * g.lat_s[0][2] + j * g.lat_s[1][2] + k * g.lat_s[2][2] + tsz;
        sum[z] = 0.0f;
    }
    const float cut2 = g.a2 * (1.0f + 2.0e-3f);
    const float c0 = 1.875f * g.inv_a, c1 = -1.25f * g.inv_a * g.inv_a2, c2 = 0.375f * g.inv_a * g.inv_a2 * g.inv_a2;
    // Walk the candidate bins (every thread the same walk), listing pieces of at most MSM_CAP charges;
    // when the list or the staging buffer is full, stage the charges and sum them.
    int n_list = 0, fill = 0;
    for (int c2i = blo[2]; c2i <= bhi[2]; c2i++) {
        for (int c1i = blo[1]; c1i <= bhi[1]; c1i++) {
            for (int c0i = blo[0]; c0i <= bhi[0]; c0i++) {
                // Distance from the bin's centre to the tile's box.
                float bx, by, bz;
                msm_bin_centre(g, c0i, c1i, c2i, bx, by, bz);
                const float ex = fmaxf(fmaxf(lo[0] - bx, bx - hi[0]), 0.0f);
                const float ey = fmaxf(fmaxf(lo[1] - by, by - hi[1]), 0.0f);
                const float ez = fmaxf(fmaxf(lo[2] - bz, bz - hi[2]), 0.0f);
                if (ex * ex + ey * ey + ez * ez > g.reach2) continue;
                int idx;
                float sx, sy, sz;
                if (!msm_bin_image(g, c0i, c1i, c2i, idx, sx, sy, sz)) continue;
                int s0 = start[idx];
                int cnt = start[idx + 1] - s0;
                // The bin in pieces that fit.
                while (cnt > 0) {
                    const int take = min(cnt, MSM_CAP - fill);
                    if (tid == 0) {
                        l_start[n_list] = s0;
                        l_count[n_list] = take;
                        l_shift[n_list][0] = sx;
                        l_shift[n_list][1] = sy;
                        l_shift[n_list][2] = sz;
                    }
                    n_list++;
                    fill += take;
                    s0 += take;
                    cnt -= take;
                    if (fill == MSM_CAP || n_list == MSM_LIST) {
                        msm_stage_and_sum<ZONLY>(sh, l_start, l_count, l_kept, l_shift, &kept_total, n_list, atoms,
                                                 tid, lo, hi, cut2, px, py, pz, sum, g, c0, c1, c2);
                        n_list = 0;
                        fill = 0;
                    }
                }
            }
        }
    }
    if (fill > 0) {
        msm_stage_and_sum<ZONLY>(sh, l_start, l_count, l_kept, l_shift, &kept_total, n_list, atoms, tid, lo, hi,
                                 cut2, px, py, pz, sum, g, c0, c1, c2);
    }
    if (i >= g.nx || j >= g.ny) return;
#pragma unroll
    for (int z = 0; z < MSM_TZ; z++) {
        const int k = tile_k0 + z;
        if (k < g.k0 || k >= g.k0 + g.nz) continue;
        float v = sum[z];
        if (g.has_lr) {
            const float qx = px[z] - tsx, qy = py[z] - tsy, qz = pz[z] - tsz;
            v += msm_long_range(g, lr, qx, qy, qz);
        }
        out[i + g.nx * (j + g.ny * (k - g.k0))] = v;
    }
}

// Grid: (ceil(nx / MSM_TX), ceil(ny / MSM_TY), tiles along the third axis from plane
// MSM_TZ * floor(k0 / MSM_TZ) to the slab's last plane); block (MSM_TX, MSM_TY).
extern "C" __global__ void __launch_bounds__(MSM_THREADS)
msm_tiles(float* __restrict__ out, const int* __restrict__ start, const float4* __restrict__ atoms,
          const float* __restrict__ lr, MsmArgs g) {
    const int tile_k0 = (g.k0 / MSM_TZ + (int)blockIdx.z) * MSM_TZ;
    if (g.lat_s[2][0] == 0.0f && g.lat_s[2][1] == 0.0f) {
        msm_tiles_body<true>(out, start, atoms, lr, g, tile_k0);
    } else {
        msm_tiles_body<false>(out, start, atoms, lr, g, tile_k0);
    }
}
