// The finest level's coefficients as byte indices into a table of the problem's distinct values
// (appended to kernels/pb.cu at build time; driven by src/compute/cuda/pb/codes.rs).
//
// A map built from two dielectrics by APBS's nine-point harmonic smoothing (or none) takes few distinct
// values, and kbar^2 two (0 and eps_out kappa^2). The host lists every value those rules can give
// (sorted, exact doubles); `pb_encode` replaces each point's four float64 coefficients by the indices
// of their values in one 32-bit word and counts the values not in the table (the host then keeps the
// float arrays). The kernels reading the words (`pb_residual64_c`, `pb_apply_pc`, `pb_coarsen_*_c`)
// compute with the table's values, which are the arrays' values, by the same operations in the same
// order: the same results, from 4 bytes per point instead of 32 (float64) or 16 (float32).

// The index of v in the sorted t[0..n), or -1.
__device__ __forceinline__ int pbc_find(const double* t, int n, double v) {
    int lo = 0, hi = n;
    while (lo < hi) {
        const int mid = (lo + hi) >> 1;
        if (t[mid] < v) {
            lo = mid + 1;
        } else {
            hi = mid;
        }
    }
    return (lo < n && t[lo] == v) ? lo : -1;
}

// cx[p] = the indices of ex, ey, ez in tab[0..n_eps) and of kbar^2 in tab[256..256 + n_k2), a byte
// each; pk[p] = the V-cycle's one-byte codes of the same values (as `pb_pack` of their float32
// roundings). A value not in the table adds 1 to *miss (cx[p] is then 0).
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_encode(const double* __restrict__ ex, const double* __restrict__ ey, const double* __restrict__ ez,
          const double* __restrict__ k2, long long n, const double* __restrict__ tab, int n_eps, int n_k2,
          unsigned int* __restrict__ cx, unsigned int* __restrict__ pk, double* miss) {
    __shared__ double st[512];
    for (int t = threadIdx.x; t < 512; t += PB_THREADS) st[t] = tab[t];
    __syncthreads();
    const long long p = (long long)blockIdx.x * PB_THREADS + threadIdx.x;
    if (p >= n) return;
    const double vx = ex[p], vy = ey[p], vz = ez[p], vk = k2[p];
    const int a = pbc_find(st, n_eps, vx), b = pbc_find(st, n_eps, vy), c = pbc_find(st, n_eps, vz);
    const int d = pbc_find(st + 256, n_k2, vk);
    if ((a | b | c | d) < 0) {
        atomicAdd(miss, 1.0);
        cx[p] = 0u;
    } else {
        cx[p] = (unsigned int)a | ((unsigned int)b << 8) | ((unsigned int)c << 16) | ((unsigned int)d << 24);
    }
    pk[p] = pb_eps_code((float)vx) | (pb_eps_code((float)vy) << 8) | (pb_eps_code((float)vz) << 16) |
            (pb_k2_code((float)vk) << 24);
}

// As `pb_residual64`, the coefficients from the coded words and the float64 table.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_residual64_c(const double* __restrict__ u, const double* __restrict__ f, const unsigned int* __restrict__ cx,
                const double* __restrict__ tab, int nx, int ny, int nz, double ih2, float* __restrict__ r,
                double* acc) {
    pb_residual_t<float, true>(u, f, PbCoefC<double>{cx, tab}, nx, ny, nz, ih2, r, acc);
}

// The search direction and its image in one pass: p_new = z + beta p_old (`pb_p_next`, beta from the
// two r.z sums, 0 in a correction's first step) at every point, q = A p_new at the interior points (0
// on the faces) from the coded words and the float32 table, acc[0] += p_new . q. The same values as
// `pb_xpby_s` then `pb_apply`: p_new is formed by the same operation at each of the seven points the
// stencil reads. Out of place (p_old and p_new are two buffers), so no point is read after its update.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_apply_pc(const unsigned int* __restrict__ cx, const float* __restrict__ tab, int nx, int ny, int nz, float ih2,
            const float* __restrict__ z, const float* __restrict__ p_old, float* __restrict__ p_new,
            float* __restrict__ q, const double* __restrict__ rz_new, const double* __restrict__ rz_old,
            double* acc) {
    const PbCoefC<float> co{cx, tab};
    const float beta = pb_beta(rz_new, rz_old);
    const int i = blockIdx.x * PB_BX + threadIdx.x;
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    double xy = 0.0;
    PB_Z_LOOP(k) {
        if (i < nx && j < ny) {
            const long long pl = (long long)nx * ny;
            const long long p = i + (long long)nx * j + pl * k;
            const float xp = pb_p_next(z, p_old, p, beta);
            p_new[p] = xp;
            if (pb_interior(i, j, k, nx, ny, nz)) {
                const float s = co.x(p) * (xp - pb_p_next(z, p_old, p + 1, beta)) +
                                co.x(p - 1) * (xp - pb_p_next(z, p_old, p - 1, beta)) +
                                co.y(p) * (xp - pb_p_next(z, p_old, p + nx, beta)) +
                                co.y(p - nx) * (xp - pb_p_next(z, p_old, p - nx, beta)) +
                                co.z(p) * (xp - pb_p_next(z, p_old, p + pl, beta)) +
                                co.z(p - pl) * (xp - pb_p_next(z, p_old, p - pl, beta));
                const float v = s * ih2 + co.k(p) * xp;
                q[p] = v;
                xy += (double)xp * (double)v;
            } else {
                q[p] = 0.f;
            }
        }
    }
    pb_block_add(xy, acc);
}

// The first coarse level's coefficients from the finest level's coded words (`pb_coarsen_eps`,
// `pb_coarsen_k2` on the table's float32 values).
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_coarsen_eps_c(const unsigned int* __restrict__ cx, const float* __restrict__ tab, int nx, int ny, int nz,
                 float* __restrict__ ec, int cxn, int cyn, int czn, int axis) {
    pb_coarsen_eps_t(PbFieldC{cx, tab, 8u * (unsigned int)axis, 0u}, nx, ny, nz, ec, cxn, cyn, czn, axis);
}

extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_coarsen_k2_c(const unsigned int* __restrict__ cx, const float* __restrict__ tab, int nx, int ny, int nz,
                float* __restrict__ kc, int cxn, int cyn, int czn) {
    pb_coarsen_k2_t(PbFieldC{cx, tab, 24u, 256u}, nx, ny, nz, kc, cxn, cyn, czn);
}
