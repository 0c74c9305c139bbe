// Multilevel summation on a map lattice (src/compute/cuda/msm.rs launches this): for every point of a
// z-slab, the smoothed short-range sum over binned charges plus, when the plan has one, the cubic
// interpolation of the finest MSM lattice potential. The long-range levels are computed on the host
// (src/compute/esp/msm.rs); the conventions are those of src/compute/esp/{bins,kernel,msm}.rs:
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
        const float t0 = c0 + 0.5f, t1 = c1 + 0.5f, t2 = c2 + 0.5f;
        const float ex = px - (t0 * g.bin_v[0][0] + t1 * g.bin_v[1][0] + t2 * g.bin_v[2][0]);
        const float ey = py - (t0 * g.bin_v[0][1] + t1 * g.bin_v[1][1] + t2 * g.bin_v[2][1]);
        const float ez = pz - (t0 * g.bin_v[0][2] + t1 * g.bin_v[1][2] + t2 * g.bin_v[2][2]);
        if (ex * ex + ey * ey + ez * ez > g.reach2) continue;
        int w0 = c0, w1 = c1, w2 = c2;
        float sx = 0.0f, sy = 0.0f, sz = 0.0f;
        if (g.periodic) {
            w0 = msm_mod(c0, g.bcount[0]);
            w1 = msm_mod(c1, g.bcount[1]);
            w2 = msm_mod(c2, g.bcount[2]);
            const float s0 = (float)msm_div(c0, g.bcount[0]);
            const float s1 = (float)msm_div(c1, g.bcount[1]);
            const float s2 = (float)msm_div(c2, g.bcount[2]);
            sx = s0 * g.cell[0][0] + s1 * g.cell[1][0] + s2 * g.cell[2][0];
            sy = s0 * g.cell[0][1] + s1 * g.cell[1][1] + s2 * g.cell[2][1];
            sz = s0 * g.cell[0][2] + s1 * g.cell[1][2] + s2 * g.cell[2][2];
        } else if (c0 < 0 || c1 < 0 || c2 < 0 || c0 >= g.bcount[0] || c1 >= g.bcount[1] || c2 >= g.bcount[2]) {
            continue;
        }
        const int idx = w0 + g.bcount[0] * (w1 + g.bcount[1] * w2);
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
    if (g.has_lr) {
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
        sum = outside ? __int_as_float(0x7fc00000) : sum + e;
    }
    out[i + g.nx * (j + g.ny * kk)] = sum;
}
