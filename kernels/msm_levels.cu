// The long-range levels of multilevel summation on the device (src/compute/cuda/msm_levels.rs launches
// these, in this order): anterpolation of the charges onto the finest lattice, restriction to every
// coarser level, the top level, then per level from the second-coarsest down the lattice cutoff plus
// the prolongation of the coarser level's potential; the finest potential is finally converted to
// f32 for msm_slab (kernels/msm.cu). Each kernel is a line-by-line twin of a host function in
// src/compute/esp/msm.rs (named at each kernel), over the same lattice layouts: level point (i, j, k)
// is stored at i + nx (j + ny k), lattice index lo + (i, j, k); periodic levels have lo = 0 and wrap
// every index, open ones are zero outside. Sums in f64.
//
// Anterpolation adds every charge's 64 weighted contributions with 64-bit integer atomics in fixed
// point (value * scale, scale a power of two chosen on the host so that no sum can overflow), so the
// result does not depend on the order the atomics land in: the map is the same on every run.

__device__ __forceinline__ double msml_phi(double t) {
    t = fabs(t);
    if (t <= 1.0) return (1.0 - t) * (1.0 + t - 1.5 * t * t);
    if (t < 2.0) {
        const double u = 2.0 - t;
        return -0.5 * (t - 1.0) * u * u;
    }
    return 0.0;
}

// phi_weights: first lattice index floor(t) - 1 and the four weights.
__device__ __forceinline__ long long msml_weights(double t, double* w) {
    const double f = floor(t);
    const double u = t - f;
    w[0] = msml_phi(u + 1.0);
    w[1] = msml_phi(u);
    w[2] = msml_phi(u - 1.0);
    w[3] = msml_phi(u - 2.0);
    return (long long)f - 1;
}

// Local index m along an axis of n points: wrapped when periodic, -1 when outside an open lattice.
__device__ __forceinline__ long long msml_wrap(long long m, long long n, int periodic) {
    if (periodic && n > 0) {
        m %= n;
        if (m < 0) m += n;
    }
    return (m < 0 || m >= n) ? -1 : m;
}

// Floor division (b > 0).
__device__ __forceinline__ long long msml_floordiv(long long a, long long b) {
    long long q = a / b;
    return (a % b != 0 && a < 0) ? q - 1 : q;
}

// Twin of msm::spread / msm::anterpolate. atoms[4 j ..] = (t0, t1, t2, q): lattice coordinates (from
// LevelGeometry::charge_coords) and charge. acc (n0 n1 n2 values, zeroed) receives llrint(value *
// scale) per contribution.
extern "C" __global__ void msml_anterpolate(unsigned long long* __restrict__ acc, const double* __restrict__ atoms,
                                            int n_atoms, int lo0, int lo1, int lo2, int n0, int n1, int n2,
                                            int periodic, double scale) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n_atoms) return;
    const double* a = atoms + 4 * (long long)j;
    double wx[4], wy[4], wz[4];
    const long long b0 = msml_weights(a[0], wx);
    const long long b1 = msml_weights(a[1], wy);
    const long long b2 = msml_weights(a[2], wz);
    for (int dk = 0; dk < 4; dk++) {
        const long long m2 = msml_wrap(b2 + dk - lo2, n2, periodic);
        if (m2 < 0) continue;
        for (int dj = 0; dj < 4; dj++) {
            const long long m1 = msml_wrap(b1 + dj - lo1, n1, periodic);
            if (m1 < 0) continue;
            const double qyz = a[3] * wy[dj] * wz[dk];
            for (int di = 0; di < 4; di++) {
                const long long m0 = msml_wrap(b0 + di - lo0, n0, periodic);
                if (m0 < 0) continue;
                const long long v = llrint(qyz * wx[di] * scale);
                atomicAdd(&acc[m0 + (long long)n0 * (m1 + (long long)n1 * m2)], (unsigned long long)v);
            }
        }
    }
}

// Fixed point back to f64: q[i] = (signed) acc[i] / scale.
extern "C" __global__ void msml_from_fixed(double* __restrict__ q, const unsigned long long* __restrict__ acc, int n,
                                           double inv_scale) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    q[i] = (double)(long long)acc[i] * inv_scale;
}

// Twin of msm::axis_pass: one 1-D pass along `axis` (src and dst agree on the other two dims).
// Restriction: dst[N] = sum_d J_d src[2N + d - 3]; prolongation: dst[M] = sum_{|M - 2N| <= 3}
// J_{M - 2N + 3} src[N] (global indices). `accumulate`: dst += the sum instead of dst = the sum.
extern "C" __global__ void msml_axis_pass(const double* __restrict__ src, int s0, int s1, int s2, int src_lo,
                                          double* __restrict__ dst, int d0, int d1, int d2, int dst_lo, int axis,
                                          int periodic, int restrict_, int accumulate) {
    const long long idx = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const long long total = (long long)d0 * d1 * d2;
    if (idx >= total) return;
    const double two_scale[7] = {-0.0625, 0.0, 0.5625, 1.0, 0.5625, 0.0, -0.0625};
    const long long c[3] = {idx % d0, (idx / d0) % d1, idx / ((long long)d0 * d1)};
    const long long ss[3] = {1, s0, (long long)s0 * s1};
    const long long sdims[3] = {s0, s1, s2};
    long long base = 0;
    for (int a = 0; a < 3; a++) {
        if (a != axis) base += c[a] * ss[a];
    }
    const long long g = c[axis] + dst_lo;
    const long long ns = sdims[axis];
    double acc = 0.0;
    if (restrict_) {
        for (int t = 0; t < 7; t++) {
            const double w = two_scale[t];
            if (w == 0.0) continue;
            const long long m = msml_wrap(2 * g + t - 3 - src_lo, ns, periodic);
            if (m >= 0) acc += w * src[base + m * ss[axis]];
        }
    } else {
        const long long n_first = -msml_floordiv(3 - g, 2);  // ceil((g - 3) / 2)
        const long long n_last = msml_floordiv(g + 3, 2);
        for (long long n = n_first; n <= n_last; n++) {
            const long long t = g - 2 * n + 3;
            const double w = (t >= 0 && t < 7) ? two_scale[t] : 0.0;
            if (w == 0.0) continue;
            const long long m = msml_wrap(n - src_lo, ns, periodic);
            if (m >= 0) acc += w * src[base + m * ss[axis]];
        }
    }
    if (accumulate) dst[idx] += acc;
    else dst[idx] = acc;
}

// Twin of msm::lattice_cutoff: e_m = sum over stencil rows (dy, dz, dx0, len) and their weights
// w_t of (w_t scale) q[m - (dx0 + t, dy, dz)] (scale = 2^-l on level l), rows and weights in the
// host's order. rows[r] = (dy, dz, dx0, len); offsets[r] = first weight of row r in `weights`.
// One thread per lattice point, x fastest, so a warp reads consecutive values of each source row.
extern "C" __global__ void msml_cutoff(const double* __restrict__ q, double* __restrict__ e, int nx, int ny, int nz,
                                       int periodic, const int4* __restrict__ rows, const int* __restrict__ offsets,
                                       int n_rows, const double* __restrict__ weights, double scale) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= nx * ny * nz) return;
    const int ox = idx % nx, oy = (idx / nx) % ny, oz = idx / (nx * ny);
    double acc = 0.0;
    for (int r = 0; r < n_rows; r++) {
        const int4 row = rows[r];
        const int sz = (int)msml_wrap(oz - row.y, nz, periodic);
        const int sy = (int)msml_wrap(oy - row.x, ny, periodic);
        if (sz < 0 || sy < 0) continue;
        const double* src = q + nx * (sy + ny * sz);
        const double* w = weights + offsets[r];
        const int first = ox - row.z;  // source x of weight 0; weight t reads first - t
        if (periodic) {
            int sx = (int)msml_wrap(first, nx, 1);
            for (int t = 0; t < row.w; t++) {
                acc += (w[t] * scale) * src[sx];
                sx = (sx == 0) ? nx - 1 : sx - 1;
            }
        } else {
            // 0 <= first - t < nx
            const int t0 = max(0, first - (nx - 1));
            const int t1 = min(row.w - 1, first);
            for (int t = t0; t <= t1; t++) acc += (w[t] * scale) * src[first - t];
        }
    }
    e[idx] = acc;
}

// Twin of msm::top_level_open_with: e_m = sum_n q_n table[(m - n) + (dims - 1)], all pairs of the
// top level, sources in storage order.
extern "C" __global__ void msml_top_open(const double* __restrict__ q, double* __restrict__ e, int nx, int ny, int nz,
                                         const double* __restrict__ table) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    const int n = nx * ny * nz;
    if (idx >= n) return;
    const int i = idx % nx, j = (idx / nx) % ny, k = idx / (nx * ny);
    const int kx = 2 * nx - 1, ky = 2 * ny - 1;
    double acc = 0.0;
    for (int s = 0; s < n; s++) {
        const double v = q[s];
        if (v == 0.0) continue;
        const int si = s % nx, sj = (s / nx) % ny, sk = s / (nx * ny);
        const int a = i + nx - 1 - si, b = j + ny - 1 - sj, c = k + nz - 1 - sk;
        acc += v * table[a + kx * (b + ky * c)];
    }
    e[idx] = acc;
}

// Twin of msm::top_level_periodic: e_m = sum_n q_n kernel[(m - n) mod dims].
extern "C" __global__ void msml_top_periodic(const double* __restrict__ q, double* __restrict__ e, int nx, int ny,
                                             int nz, const double* __restrict__ kernel) {
    const int idx = blockIdx.x * blockDim.x + threadIdx.x;
    const int n = nx * ny * nz;
    if (idx >= n) return;
    const int i = idx % nx, j = (idx / nx) % ny, k = idx / (nx * ny);
    double acc = 0.0;
    for (int s = 0; s < n; s++) {
        const double v = q[s];
        if (v == 0.0) continue;
        const int si = s % nx, sj = (s / nx) % ny, sk = s / (nx * ny);
        const int a = (i + nx - si) % nx, b = (j + ny - sj) % ny, c = (k + nz - sk) % nz;
        acc += v * kernel[a + nx * (b + ny * c)];
    }
    e[idx] = acc;
}

// NaN into every value of a level buffer before it is computed (an unwritten value shows).
extern "C" __global__ void msml_fill_nan(double* __restrict__ v, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) v[i] = __longlong_as_double(0x7ff8000000000000LL);
}

// The finest potential in f32 for msm_slab.
extern "C" __global__ void msml_to_f32(float* __restrict__ out, const double* __restrict__ e, int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    out[i] = (float)e[i];
}
