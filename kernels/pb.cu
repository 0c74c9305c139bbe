// The linearized Poisson-Boltzmann finite differences on a CUDA device: the seven-point operator
//   (A u)_p = [ex_p (u_p - u_p+x) + ex_p-x (u_p - u_p-x) + (y, z alike)] / h^2 + k2_p u_p
// (ex at (i + 1/2, j, k), ey at (i, j + 1/2, k), ez at (i, j, k + 1/2); k2 = kbar^2 at the points) on a
// lattice of nx x ny x nz points, x fastest; the faces hold Dirichlet values, the unknowns are the
// interior points.
//
// Compiled at run time with NVRTC by src/compute/cuda/pb.rs, which drives the solve: an outer loop of
// residual corrections in float64 (`pb_residual64`: r = f - A u with the iterate, the source and the
// coefficients in double; `pb_add_correction`), each correction solved in float32 by conjugate
// gradients (`pb_apply`, `pb_cg_update_s`, `pb_xpby_s`, `pb_dot`: step lengths read on the device) preconditioned by one symmetric multigrid
// V-cycle (`pb_smooth`: red-black Gauss-Seidel, `pb_mg_residual`, `pb_restrict`: full weighting,
// `pb_prolong_add`: trilinear; coarse coefficients by `pb_coarsen_eps` and `pb_coarsen_k2`) or by the
// diagonal (`pb_jacobi`); the finest level's last half sweep sums r.z (`pb_smooth_h_dot`), a level's first
// starts from zero without reading it (`pb_smooth_h_zero`), and the small levels run in one block (`pb_tail`). Sweeps are
// over-relaxed by omega (`pb_relax`). Corrections are zero on the faces at every level. Dot products accumulate in
// double, one atomicAdd per block.

#define PB_BX 32
#define PB_BY 4
#define PB_BZ 2
#define PB_THREADS (PB_BX * PB_BY * PB_BZ)
// Points of a coarsest level whose iterate `pb_coarse_solve` keeps in shared memory.
#define PB_COARSE_SHARED 4096

__device__ __forceinline__ bool pb_interior(int i, int j, int k, int nx, int ny, int nz) {
    return i > 0 && j > 0 && k > 0 && i < nx - 1 && j < ny - 1 && k < nz - 1;
}

// The kernels that sum into an accumulator run on a capped grid (`cfg1r`, `cfg3r` in the host code) and
// loop over the rest: one atomicAdd per block on one address serializes, so sixteen thousand blocks of
// a 161^3 lattice spent more time adding than reading.
#define PB_STRIDE_LOOP(t, n) \
    for (long long t = (long long)blockIdx.x * PB_THREADS + threadIdx.x; t < (n); t += (long long)gridDim.x * PB_THREADS)
#define PB_Z_LOOP(k) for (int k = blockIdx.z * PB_BZ + threadIdx.z; k < nz; k += gridDim.z * PB_BZ)

// Sums `v` over the block and adds the total to *acc (thread 0). Every thread of the block calls it.
__device__ __forceinline__ void pb_block_add(double v, double* acc) {
    __shared__ double part[PB_THREADS / 32];
    for (int o = 16; o > 0; o >>= 1) v += __shfl_down_sync(0xffffffffu, v, o);
    const int t = threadIdx.x + PB_BX * (threadIdx.y + PB_BY * threadIdx.z);
    if ((t & 31) == 0) part[t >> 5] = v;
    __syncthreads();
    if (t == 0) {
        double s = 0.0;
        for (int w = 0; w < PB_THREADS / 32; ++w) s += part[w];
        atomicAdd(acc, s);
    }
    __syncthreads();
}

// out[p] = (float) in[p].
extern "C" __global__ void pb_to_f32(const double* __restrict__ in, float* __restrict__ out, long long n) {
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p < n) out[p] = (float)in[p];
}

// r = f - A u at the interior points in double, stored as R (0 on the faces); acc[0] += |r|^2 and, with
// WITH_F, acc[1] += |f|^2 over the interior.
template <typename R, bool WITH_F>
__device__ __forceinline__ void pb_residual_t(const double* __restrict__ u, const double* __restrict__ f,
                                              const double* __restrict__ ex, const double* __restrict__ ey,
                                              const double* __restrict__ ez, const double* __restrict__ k2, int nx,
                                              int ny, int nz, double ih2, R* __restrict__ r, double* acc) {
    const int i = blockIdx.x * PB_BX + threadIdx.x;
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    double rr = 0.0, ff = 0.0;
    PB_Z_LOOP(k) {
        if (i < nx && j < ny) {
            const long long pl = (long long)nx * ny;
            const long long p = i + (long long)nx * j + pl * k;
            if (pb_interior(i, j, k, nx, ny, nz)) {
                const double up = u[p];
                const double s = ex[p] * (up - u[p + 1]) + ex[p - 1] * (up - u[p - 1]) + ey[p] * (up - u[p + nx]) +
                                 ey[p - nx] * (up - u[p - nx]) + ez[p] * (up - u[p + pl]) + ez[p - pl] * (up - u[p - pl]);
                const double res = f[p] - (s * ih2 + k2[p] * up);
                r[p] = (R)res;
                rr += res * res;
                if (WITH_F) ff += f[p] * f[p];
            } else {
                r[p] = R(0);
            }
        }
    }
    pb_block_add(rr, acc);
    if (WITH_F) pb_block_add(ff, acc + 1);
}

// The outer loop's residual: r stored as float (the next correction's right side), |f|^2 beside.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_residual64(const double* __restrict__ u, const double* __restrict__ f, const double* __restrict__ ex,
              const double* __restrict__ ey, const double* __restrict__ ez, const double* __restrict__ k2,
              int nx, int ny, int nz, double ih2, float* __restrict__ r, double* acc) {
    pb_residual_t<float, true>(u, f, ex, ey, ez, k2, nx, ny, nz, ih2, r, acc);
}

// u += e (every point; e is zero on the faces).
extern "C" __global__ void pb_add_correction(double* __restrict__ u, const float* __restrict__ e, long long n) {
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p < n) u[p] += (double)e[p];
}

// A kernel `name` of element type T running the stencil pass `body` (`pb_apply_t`, `pb_jacobi_t`): the
// coefficients, the lattice, 1/h^2, an input and an output lattice, and a double accumulator.
#define PB_STENCIL_KERNEL(name, body, T)                                                                     \
    extern "C" __global__ void __launch_bounds__(PB_THREADS)                                                 \
        name(const T* __restrict__ ex, const T* __restrict__ ey, const T* __restrict__ ez,                   \
             const T* __restrict__ k2, int nx, int ny, int nz, T ih2, const T* __restrict__ in,              \
             T* __restrict__ out, double* acc) {                                                             \
        body(ex, ey, ez, k2, nx, ny, nz, ih2, in, out, acc);                                                 \
    }

// y = A x at the interior points (0 on the faces); acc[0] += x . y (summed in double). In float32 for
// the conjugate-gradient corrections (`pb_apply`), in double for the final polish (`pb_apply_d`).
template <typename T>
__device__ __forceinline__ void pb_apply_t(const T* __restrict__ ex, const T* __restrict__ ey, const T* __restrict__ ez,
                                           const T* __restrict__ k2, int nx, int ny, int nz, T ih2,
                                           const T* __restrict__ x, T* __restrict__ y, double* acc) {
    const int i = blockIdx.x * PB_BX + threadIdx.x;
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    double xy = 0.0;
    PB_Z_LOOP(k) {
        if (i < nx && j < ny) {
            const long long pl = (long long)nx * ny;
            const long long p = i + (long long)nx * j + pl * k;
            if (pb_interior(i, j, k, nx, ny, nz)) {
                const T xp = x[p];
                const T s = ex[p] * (xp - x[p + 1]) + ex[p - 1] * (xp - x[p - 1]) + ey[p] * (xp - x[p + nx]) +
                            ey[p - nx] * (xp - x[p - nx]) + ez[p] * (xp - x[p + pl]) + ez[p - pl] * (xp - x[p - pl]);
                const T v = s * ih2 + k2[p] * xp;
                y[p] = v;
                xy += (double)xp * (double)v;
            } else {
                y[p] = T(0);
            }
        }
    }
    pb_block_add(xy, acc);
}

PB_STENCIL_KERNEL(pb_apply, pb_apply_t, float)
PB_STENCIL_KERNEL(pb_apply_d, pb_apply_t, double)

// x += alpha p, r -= alpha q, acc[0] += |r|^2, with alpha = rz / pq read from the device (no host round
// trip): alpha is 0 when the two do not make a step (pq or rz not a positive finite number; the host
// then stops the solve).
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_cg_update_s(float* __restrict__ x, float* __restrict__ r, const float* __restrict__ p, const float* __restrict__ q,
               const double* __restrict__ pq, const double* __restrict__ rz, long long n, double* acc) {
    const double a = *pq, b = *rz;
    const float alpha = (a > 0.0 && b > 0.0 && a < 1e300 && b < 1e300) ? (float)(b / a) : 0.f;
    double rr = 0.0;
    PB_STRIDE_LOOP(t, n) {
        x[t] += alpha * p[t];
        const float v = r[t] - alpha * q[t];
        r[t] = v;
        rr += (double)v * (double)v;
    }
    pb_block_add(rr, acc);
}

// p = z + beta p with beta = rz_new / rz_old read from the device (0 when that is not finite, or
// when rz_old is 0: the first step of a correction).
extern "C" __global__ void pb_xpby_s(float* __restrict__ p, const float* __restrict__ z,
                                     const double* __restrict__ rz_new, const double* __restrict__ rz_old,
                                     long long n) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const double a = *rz_new, b = *rz_old;
    const float beta = (b > 0.0 && a >= 0.0 && a < 1e300 && b < 1e300) ? (float)(a / b) : 0.f;
    // beta 0 (a correction's first step): p = z, without reading p (whatever it holds).
    if (t < n) p[t] = beta == 0.f ? z[t] : z[t] + beta * p[t];
}

// acc[0] += a . b.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_dot(const float* __restrict__ a, const float* __restrict__ b, long long n, double* acc) {
    double s = 0.0;
    PB_STRIDE_LOOP(t, n) s += (double)a[t] * (double)b[t];
    pb_block_add(s, acc);
}

template <typename T>
__device__ __forceinline__ T pb_diag(const T* __restrict__ ex, const T* __restrict__ ey, const T* __restrict__ ez,
                                     const T* __restrict__ k2, long long p, int nx, long long pl, T ih2) {
    return (ex[p] + ex[p - 1] + ey[p] + ey[p - nx] + ez[p] + ez[p - pl]) * ih2 + k2[p];
}

// z = r / diag(A) at the interior points (0 on the faces); acc[0] += r . z (summed in double). In
// float32 (`pb_jacobi`) and in double for the final polish (`pb_jacobi_d`).
template <typename T>
__device__ __forceinline__ void pb_jacobi_t(const T* __restrict__ ex, const T* __restrict__ ey, const T* __restrict__ ez,
                                            const T* __restrict__ k2, int nx, int ny, int nz, T ih2,
                                            const T* __restrict__ r, T* __restrict__ z, double* acc) {
    const int i = blockIdx.x * PB_BX + threadIdx.x;
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    double rz = 0.0;
    PB_Z_LOOP(k) {
        if (i < nx && j < ny) {
            const long long pl = (long long)nx * ny;
            const long long p = i + (long long)nx * j + pl * k;
            if (pb_interior(i, j, k, nx, ny, nz)) {
                const T v = r[p] / pb_diag(ex, ey, ez, k2, p, nx, pl, ih2);
                z[p] = v;
                rz += (double)r[p] * (double)v;
            } else {
                z[p] = T(0);
            }
        }
    }
    pb_block_add(rz, acc);
}

PB_STENCIL_KERNEL(pb_jacobi, pb_jacobi_t, float)
PB_STENCIL_KERNEL(pb_jacobi_d, pb_jacobi_t, double)

// The relaxed update of a point: the Gauss-Seidel value v itself at omega = 1, else x + omega (v - x)
// (red-black successive over-relaxation; the same omega before and after the coarse correction, in
// mirrored colour order, keeps the V-cycle symmetric).
__device__ __forceinline__ float pb_relax(float x, float v, float omega) {
    return omega == 1.f ? v : x + omega * (v - x);
}

// One Gauss-Seidel half sweep over the interior points of colour `colour` ((i + j + k) % 2) of
// A x = b, over-relaxed by omega. Threads run over pairs of points along x.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_smooth(const float* __restrict__ ex, const float* __restrict__ ey, const float* __restrict__ ez,
          const float* __restrict__ k2, int nx, int ny, int nz, float ih2, const float* __restrict__ b,
          float* __restrict__ x, int colour, float omega) {
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    const int k = blockIdx.z * PB_BZ + threadIdx.z;
    const int i = 2 * (blockIdx.x * PB_BX + threadIdx.x) + ((j + k + colour) & 1);
    if (!(i < nx && j < ny && k < nz) || !pb_interior(i, j, k, nx, ny, nz)) return;
    const long long pl = (long long)nx * ny;
    const long long p = i + (long long)nx * j + pl * k;
    const float s = ex[p] * x[p + 1] + ex[p - 1] * x[p - 1] + ey[p] * x[p + nx] + ey[p - nx] * x[p - nx] +
                    ez[p] * x[p + pl] + ez[p - pl] * x[p - pl];
    x[p] = pb_relax(x[p], (b[p] + s * ih2) / pb_diag(ex, ey, ez, k2, p, nx, pl, ih2), omega);
}

// The V-cycle's operator with its coefficients in one byte each, packed per point as (ex, ey, ez, k2)
// in one 32-bit word: the smoothing and residual passes of every level but the coarsest read 4 bytes
// of coefficients per point instead of 16 (the finest level's sweeps are bound by memory). A
// dielectric is a whole number of steps of 9/255 of an octave from 0.5 to 256 (rounded within 1.2 %),
// kbar^2 either 0 or a whole number of steps of 34/254 of an octave from 2^-20 to 2^14 (within 4.7 %;
// next to the dielectric terms of the diagonal it weighs little). The coded coefficients define a fixed
// symmetric positive operator (each coupling is decoded from one stored byte by both points; kbar^2
// stays >= 0), so the V-cycle remains a fixed symmetric preconditioner; conjugate gradients apply the
// float32 operator and the outer loop the float64 one, so the coding bounds only how well the
// preconditioner approximates the inverse, never the solution. The host packs only when the
// dielectrics and kbar^2 lie in these ranges.
#define PB_EPS_LOG2_LO (-1.0f)
#define PB_EPS_LOG2_STEP (9.0f / 255.0f)
#define PB_K2_LOG2_LO (-20.0f)
#define PB_K2_LOG2_STEP (34.0f / 254.0f)

__device__ __forceinline__ float pb_eps_of(unsigned int code) {
    return exp2f(PB_EPS_LOG2_LO + (float)(code & 255u) * PB_EPS_LOG2_STEP);
}

__device__ __forceinline__ float pb_k2_of(unsigned int code) {
    code &= 255u;
    return code == 0u ? 0.f : exp2f(PB_K2_LOG2_LO + (float)(code - 1u) * PB_K2_LOG2_STEP);
}

__device__ __forceinline__ unsigned int pb_eps_code(float v) {
    const float c = rintf((log2f(v) - PB_EPS_LOG2_LO) / PB_EPS_LOG2_STEP);
    return (unsigned int)fminf(fmaxf(c, 0.f), 255.f);
}

__device__ __forceinline__ unsigned int pb_k2_code(float v) {
    if (!(v > 0.f)) return 0u;
    const float c = rintf((log2f(v) - PB_K2_LOG2_LO) / PB_K2_LOG2_STEP);
    return 1u + (unsigned int)fminf(fmaxf(c, 0.f), 254.f);
}

// pk[p] = (ex, ey, ez, k2) of point p, one byte each.
extern "C" __global__ void pb_pack(const float* __restrict__ ex, const float* __restrict__ ey,
                                   const float* __restrict__ ez, const float* __restrict__ k2,
                                   unsigned int* __restrict__ pk, long long n) {
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p < n)
        pk[p] = pb_eps_code(ex[p]) | (pb_eps_code(ey[p]) << 8) | (pb_eps_code(ez[p]) << 16) | (pb_k2_code(k2[p]) << 24);
}

// As `pb_smooth` on the packed coefficients.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_smooth_h(const unsigned int* __restrict__ pk, int nx, int ny, int nz, float ih2, const float* __restrict__ b,
            float* __restrict__ x, int colour, float omega) {
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    const int k = blockIdx.z * PB_BZ + threadIdx.z;
    const int i = 2 * (blockIdx.x * PB_BX + threadIdx.x) + ((j + k + colour) & 1);
    if (!(i < nx && j < ny && k < nz) || !pb_interior(i, j, k, nx, ny, nz)) return;
    const long long pl = (long long)nx * ny;
    const long long p = i + (long long)nx * j + pl * k;
    const unsigned int c = pk[p];
    const float exp_ = pb_eps_of(c), eyp = pb_eps_of(c >> 8), ezp = pb_eps_of(c >> 16), k2p = pb_k2_of(c >> 24);
    const float exm = pb_eps_of(pk[p - 1]), eym = pb_eps_of(pk[p - nx] >> 8), ezm = pb_eps_of(pk[p - pl] >> 16);
    const float s = exp_ * x[p + 1] + exm * x[p - 1] + eyp * x[p + nx] + eym * x[p - nx] + ezp * x[p + pl] +
                    ezm * x[p - pl];
    x[p] = pb_relax(x[p], (b[p] + s * ih2) / ((exp_ + exm + eyp + eym + ezp + ezm) * ih2 + k2p), omega);
}

// The first half sweep of a V-cycle's level, red, from x = 0, as `pb_smooth_h` gives it (every
// neighbour 0: x = omega b / diag at the red interior points) and x = 0 at every other point, in place
// of zeroing x and then sweeping: no read of x, one write of every point.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_smooth_h_zero(const unsigned int* __restrict__ pk, int nx, int ny, int nz, float ih2, const float* __restrict__ b,
                 float* __restrict__ x, float omega) {
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    const int k = blockIdx.z * PB_BZ + threadIdx.z;
    const int pair = blockIdx.x * PB_BX + threadIdx.x;
    if (!(j < ny && k < nz)) return;
    const long long pl = (long long)nx * ny;
    const long long row = (long long)nx * j + pl * k;
    const int i = 2 * pair + ((j + k) & 1);
    const int o = 2 * pair + ((j + k + 1) & 1);
    if (o < nx) x[row + o] = 0.f;
    if (i >= nx) return;
    const long long p = row + i;
    if (!pb_interior(i, j, k, nx, ny, nz)) {
        x[p] = 0.f;
        return;
    }
    const unsigned int c = pk[p];
    const float exp_ = pb_eps_of(c), eyp = pb_eps_of(c >> 8), ezp = pb_eps_of(c >> 16), k2p = pb_k2_of(c >> 24);
    const float exm = pb_eps_of(pk[p - 1]), eym = pb_eps_of(pk[p - nx] >> 8), ezm = pb_eps_of(pk[p - pl] >> 16);
    x[p] = pb_relax(0.f, (b[p] + 0.f * ih2) / ((exp_ + exm + eyp + eym + ezp + ezm) * ih2 + k2p), omega);
}

// As `pb_mg_residual` on the packed coefficients.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_mg_residual_h(const unsigned int* __restrict__ pk, int nx, int ny, int nz, float ih2, const float* __restrict__ b,
                 const float* __restrict__ x, float* __restrict__ t) {
    const int i = blockIdx.x * PB_BX + threadIdx.x;
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    const int k = blockIdx.z * PB_BZ + threadIdx.z;
    if (!(i < nx && j < ny && k < nz)) return;
    const long long pl = (long long)nx * ny;
    const long long p = i + (long long)nx * j + pl * k;
    if (!pb_interior(i, j, k, nx, ny, nz)) {
        t[p] = 0.f;
        return;
    }
    const unsigned int c = pk[p];
    const float exp_ = pb_eps_of(c), eyp = pb_eps_of(c >> 8), ezp = pb_eps_of(c >> 16), k2p = pb_k2_of(c >> 24);
    const float exm = pb_eps_of(pk[p - 1]), eym = pb_eps_of(pk[p - nx] >> 8), ezm = pb_eps_of(pk[p - pl] >> 16);
    const float xp = x[p];
    const float s = exp_ * (xp - x[p + 1]) + exm * (xp - x[p - 1]) + eyp * (xp - x[p + nx]) +
                    eym * (xp - x[p - nx]) + ezp * (xp - x[p + pl]) + ezm * (xp - x[p - pl]);
    t[p] = b[p] - (s * ih2 + k2p * xp);
}

// t = b - A x at the interior points (0 on the faces).
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_mg_residual(const float* __restrict__ ex, const float* __restrict__ ey, const float* __restrict__ ez,
               const float* __restrict__ k2, int nx, int ny, int nz, float ih2, const float* __restrict__ b,
               const float* __restrict__ x, float* __restrict__ t) {
    const int i = blockIdx.x * PB_BX + threadIdx.x;
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    const int k = blockIdx.z * PB_BZ + threadIdx.z;
    if (!(i < nx && j < ny && k < nz)) return;
    const long long pl = (long long)nx * ny;
    const long long p = i + (long long)nx * j + pl * k;
    if (!pb_interior(i, j, k, nx, ny, nz)) {
        t[p] = 0.f;
        return;
    }
    const float xp = x[p];
    const float s = ex[p] * (xp - x[p + 1]) + ex[p - 1] * (xp - x[p - 1]) + ey[p] * (xp - x[p + nx]) +
                    ey[p - nx] * (xp - x[p - nx]) + ez[p] * (xp - x[p + pl]) + ez[p - pl] * (xp - x[p - pl]);
    t[p] = b[p] - (s * ih2 + k2[p] * xp);
}

// Coarse point (I, J, K) of a lattice of (nx - 1) / 2 + 1 points per axis sits on fine point
// (2I, 2J, 2K). Full weighting: bc = sum over the 27 fine neighbours of w_x w_y w_z t / 8, w = 1 at
// the centre and 1/2 at the sides (the transpose of `pb_prolong_add` over 8); 0 on the coarse faces.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_restrict(const float* __restrict__ t, int nx, int ny, int nz, float* __restrict__ bc, int cx, int cy, int cz) {
    const int I = blockIdx.x * PB_BX + threadIdx.x;
    const int J = blockIdx.y * PB_BY + threadIdx.y;
    const int K = blockIdx.z * PB_BZ + threadIdx.z;
    if (!(I < cx && J < cy && K < cz)) return;
    const long long q = I + (long long)cx * J + (long long)cx * cy * K;
    if (!pb_interior(I, J, K, cx, cy, cz)) {
        bc[q] = 0.f;
        return;
    }
    const long long pl = (long long)nx * ny;
    const long long p = 2 * I + (long long)nx * (2 * J) + pl * (2 * K);
    float s = 0.f;
    for (int dz = -1; dz <= 1; ++dz) {
        const float wz = dz == 0 ? 1.f : 0.5f;
        for (int dy = -1; dy <= 1; ++dy) {
            const float wy = dy == 0 ? wz : 0.5f * wz;
            const long long row = p + (long long)nx * dy + pl * dz;
            s += wy * (0.5f * t[row - 1] + t[row] + 0.5f * t[row + 1]);
        }
    }
    bc[q] = 0.125f * s;
}

// x += P xc at the fine interior points: trilinear from the coarse points around (i/2, j/2, k/2).
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_prolong_add(const float* __restrict__ xc, int cx, int cy, int cz, float* __restrict__ x, int nx, int ny, int nz) {
    const int i = blockIdx.x * PB_BX + threadIdx.x;
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    const int k = blockIdx.z * PB_BZ + threadIdx.z;
    if (!(i < nx && j < ny && k < nz) || !pb_interior(i, j, k, nx, ny, nz)) return;
    // The eight corners of the coarse cell, each offset 0 along an axis where the fine point sits on a
    // coarse plane: a point on a coarse plane counts its value twice, so the sum over 8 is trilinear
    // interpolation with the same loads in every lane.
    const long long c0 = (i >> 1) + (long long)cx * (j >> 1) + (long long)cx * cy * (k >> 1);
    const long long dx = i & 1, dy = (j & 1) ? cx : 0, dz = (k & 1) ? (long long)cx * cy : 0;
    const float s = ((xc[c0] + xc[c0 + dx]) + (xc[c0 + dy] + xc[c0 + dx + dy])) +
                    ((xc[c0 + dz] + xc[c0 + dx + dz]) + (xc[c0 + dy + dz] + xc[c0 + dx + dy + dz]));
    x[i + (long long)nx * j + (long long)nx * ny * k] += 0.125f * s;
}

__device__ __forceinline__ int pb_clamp(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

// Coarse dielectric of axis `axis` (0 x, 1 y, 2 z) at coarse (I, J, K) + half a coarse spacing along
// the axis: the two fine edges it spans in series (harmonic mean), averaged across the axis with
// weights 1/4, 1/2, 1/4 in each transverse direction (indices clamped to the lattice).
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_coarsen_eps(const float* __restrict__ e, int nx, int ny, int nz, float* __restrict__ ec, int cx, int cy, int cz,
               int axis) {
    const int I = blockIdx.x * PB_BX + threadIdx.x;
    const int J = blockIdx.y * PB_BY + threadIdx.y;
    const int K = blockIdx.z * PB_BZ + threadIdx.z;
    if (!(I < cx && J < cy && K < cz)) return;
    // Scalars, not small arrays indexed by `axis` (those went to local memory: 55 us a call at 81^3).
    // The transverse axes in order (t1 outer, t2 inner): y, z for x; x, z for y; x, y for z.
    const int i0 = 2 * I, j0 = 2 * J, k0 = 2 * K;
    const long long pl = (long long)nx * ny;
    float s = 0.f;
    for (int d1 = -1; d1 <= 1; ++d1) {
        for (int d2 = -1; d2 <= 1; ++d2) {
            int i = i0, j = j0, k = k0;
            long long step;
            if (axis == 0) {
                j = pb_clamp(j0 + d1, 0, ny - 1);
                k = pb_clamp(k0 + d2, 0, nz - 1);
                step = i + 1 <= nx - 1 ? 1 : 0;
            } else if (axis == 1) {
                i = pb_clamp(i0 + d1, 0, nx - 1);
                k = pb_clamp(k0 + d2, 0, nz - 1);
                step = j + 1 <= ny - 1 ? nx : 0;
            } else {
                i = pb_clamp(i0 + d1, 0, nx - 1);
                j = pb_clamp(j0 + d2, 0, ny - 1);
                step = k + 1 <= nz - 1 ? pl : 0;
            }
            const long long p = i + (long long)nx * j + pl * k;
            const float a = e[p];
            const float b = e[p + step];
            const float h = a + b > 0.f ? 2.f * a * b / (a + b) : 0.f;
            s += (d1 == 0 ? 0.5f : 0.25f) * (d2 == 0 ? 0.5f : 0.25f) * h;
        }
    }
    ec[I + (long long)cx * J + (long long)cx * cy * K] = s;
}

// Coarse kbar^2: full weighting of the fine values around (2I, 2J, 2K) (indices clamped).
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_coarsen_k2(const float* __restrict__ k2, int nx, int ny, int nz, float* __restrict__ kc, int cx, int cy, int cz) {
    const int I = blockIdx.x * PB_BX + threadIdx.x;
    const int J = blockIdx.y * PB_BY + threadIdx.y;
    const int K = blockIdx.z * PB_BZ + threadIdx.z;
    if (!(I < cx && J < cy && K < cz)) return;
    float s = 0.f;
    for (int dz = -1; dz <= 1; ++dz) {
        const int z = pb_clamp(2 * K + dz, 0, nz - 1);
        for (int dy = -1; dy <= 1; ++dy) {
            const int y = pb_clamp(2 * J + dy, 0, ny - 1);
            for (int dx = -1; dx <= 1; ++dx) {
                const int x = pb_clamp(2 * I + dx, 0, nx - 1);
                const float w = (dx == 0 ? 0.5f : 0.25f) * (dy == 0 ? 0.5f : 0.25f) * (dz == 0 ? 0.5f : 0.25f);
                s += w * k2[x + (long long)nx * y + (long long)nx * ny * z];
            }
        }
    }
    kc[I + (long long)cx * J + (long long)cx * cy * K] = s;
}

extern "C" __global__ void pb_fill32(float* __restrict__ out, float v, long long n) {
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p < n) out[p] = v;
}

extern "C" __global__ void pb_fill64(double* __restrict__ out, double v, long long n) {
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p < n) out[p] = v;
}

// u = g on the lattice faces (the boundary values), u unchanged inside.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_set_faces(double* __restrict__ u, const double* __restrict__ g, int nx, int ny, int nz) {
    const int i = blockIdx.x * PB_BX + threadIdx.x;
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    const int k = blockIdx.z * PB_BZ + threadIdx.z;
    if (!(i < nx && j < ny && k < nz) || pb_interior(i, j, k, nx, ny, nz)) return;
    const long long p = i + (long long)nx * j + (long long)nx * ny * k;
    u[p] = g[p];
}

// The coarsest level in one block: x = 0, then `pairs` red-black sweeps and `pairs` black-red sweeps
// (a symmetric operator of b), threads striding over the points.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_coarse_solve(const float* __restrict__ ex, const float* __restrict__ ey, const float* __restrict__ ez,
                const float* __restrict__ k2, int nx, int ny, int nz, float ih2, const float* __restrict__ b,
                float* __restrict__ x, int pairs) {
    // At most ONE_BLOCK_POINTS points: 32-bit indices (64-bit divisions made this 29 us at 6^3), and
    // the iterate in shared memory when it fits (48 half sweeps, each waiting on the last).
    __shared__ float shared_x[PB_COARSE_SHARED];
    const int pl = nx * ny;
    const int n = pl * nz;
    float* xv = n <= PB_COARSE_SHARED ? shared_x : x;
    for (int p = threadIdx.x; p < n; p += blockDim.x) xv[p] = 0.f;
    __syncthreads();
    for (int s = 0; s < 2 * pairs; ++s) {
        for (int half = 0; half < 2; ++half) {
            const int colour = s < pairs ? half : 1 - half;
            for (int p = threadIdx.x; p < n; p += blockDim.x) {
                const int row = p / nx, k = row / ny;
                const int i = p - row * nx, j = row - k * ny;
                if (((i + j + k) & 1) != colour || !pb_interior(i, j, k, nx, ny, nz)) continue;
                const float s6 = ex[p] * xv[p + 1] + ex[p - 1] * xv[p - 1] + ey[p] * xv[p + nx] +
                                 ey[p - nx] * xv[p - nx] + ez[p] * xv[p + pl] + ez[p - pl] * xv[p - pl];
                xv[p] = (b[p] + s6 * ih2) / pb_diag(ex, ey, ez, k2, p, nx, pl, ih2);
            }
            __syncthreads();
        }
    }
    if (xv != x) {
        for (int p = threadIdx.x; p < n; p += blockDim.x) x[p] = xv[p];
    }
}

// Float64 forms for the final polish (used when a float32 correction stalls): r = f - A u written
// in double (0 on the faces), acc[0] += |r|^2.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_residual_d(const double* __restrict__ u, const double* __restrict__ f, const double* __restrict__ ex,
              const double* __restrict__ ey, const double* __restrict__ ez, const double* __restrict__ k2,
              int nx, int ny, int nz, double ih2, double* __restrict__ r, double* acc) {
    pb_residual_t<double, false>(u, f, ex, ey, ez, k2, nx, ny, nz, ih2, r, acc);
}

// x += alpha p, r -= alpha q in double; acc[0] += |r|^2.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_cg_update_d(double* __restrict__ x, double* __restrict__ r, const double* __restrict__ p,
               const double* __restrict__ q, double alpha, long long n, double* acc) {
    double rr = 0.0;
    PB_STRIDE_LOOP(t, n) {
        x[t] += alpha * p[t];
        const double v = r[t] - alpha * q[t];
        r[t] = v;
        rr += v * v;
    }
    pb_block_add(rr, acc);
}

// p = z + beta p in double.
extern "C" __global__ void pb_xpby_d(double* __restrict__ p, const double* __restrict__ z, double beta, long long n) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (t < n) p[t] = z[t] + beta * p[t];
}

// As `pb_smooth_h`, the last half sweep of a V-cycle at the finest level, and acc[0] += b . x over
// every point once the sweep is done (r . z of conjugate gradients, without a pass of its own): each
// thread adds its point of this colour with the value it wrote and the other point of its pair
// (finished by the sweep before). Runs on a capped grid in z (`cfg_smooth_r`).
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_smooth_h_dot(const unsigned int* __restrict__ pk, int nx, int ny, int nz, float ih2, const float* __restrict__ b,
                float* __restrict__ x, int colour, float omega, double* acc) {
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    const int pair = blockIdx.x * PB_BX + threadIdx.x;
    const long long pl = (long long)nx * ny;
    double bx = 0.0;
    PB_Z_LOOP(k) {
        if (j >= ny) break;
        const int i = 2 * pair + ((j + k + colour) & 1);
        const int o = 2 * pair + ((j + k + colour + 1) & 1);
        const long long row = (long long)nx * j + pl * k;
        if (i < nx && pb_interior(i, j, k, nx, ny, nz)) {
            const long long p = row + i;
            const unsigned int c = pk[p];
            const float exp_ = pb_eps_of(c), eyp = pb_eps_of(c >> 8), ezp = pb_eps_of(c >> 16), k2p = pb_k2_of(c >> 24);
            const float exm = pb_eps_of(pk[p - 1]), eym = pb_eps_of(pk[p - nx] >> 8), ezm = pb_eps_of(pk[p - pl] >> 16);
            const float s = exp_ * x[p + 1] + exm * x[p - 1] + eyp * x[p + nx] + eym * x[p - nx] + ezp * x[p + pl] +
                            ezm * x[p - pl];
            const float v = pb_relax(x[p], (b[p] + s * ih2) / ((exp_ + exm + eyp + eym + ezp + ezm) * ih2 + k2p), omega);
            x[p] = v;
            bx += (double)b[p] * (double)v;
        }
        if (o < nx && pb_interior(o, j, k, nx, ny, nz)) bx += (double)b[row + o] * (double)x[row + o];
    }
    pb_block_add(bx, acc);
}

// One level of `pb_tail`, as the host writes it (seven 64-bit words).
struct PbTailLevel {
    int nx, ny, nz;
    float ih2;
    const unsigned int* pk;
    const float* ex;
    const float* ey;
    const float* ez;
    const float* k2;
};

// Most levels `pb_tail` takes.
#define PB_TAIL_LEVELS 8

// One red-black half sweep of `pb_tail` on a level whose iterate, right side and coefficients
// (ex, ey, ez, k2 at c, c + n, c + 2n, c + 3n) are in shared memory: `pb_smooth`'s arithmetic, the
// block's threads striding over pairs of points.
__device__ __forceinline__ void pb_tail_half(const PbTailLevel& L, const float* __restrict__ c,
                                             const float* __restrict__ b, float* __restrict__ x, int colour,
                                             float omega) {
    const int nx = L.nx, ny = L.ny, nz = L.nz, pl = nx * ny, hx = (nx + 1) / 2, n = pl * nz;
    const float ih2 = L.ih2;
    const float *ex = c, *ey = c + n, *ez = c + 2 * n, *k2 = c + 3 * n;
    const int count = hx * ny * nz;
    for (int q = threadIdx.x; q < count; q += blockDim.x) {
        const int row = q / hx, k = row / ny;
        const int j = row - k * ny;
        const int i = 2 * (q - row * hx) + ((j + k + colour) & 1);
        if (i >= nx || !pb_interior(i, j, k, nx, ny, nz)) continue;
        const int p = i + nx * j + pl * k;
        const float s = ex[p] * x[p + 1] + ex[p - 1] * x[p - 1] + ey[p] * x[p + nx] + ey[p - nx] * x[p - nx] +
                        ez[p] * x[p + pl] + ez[p - pl] * x[p - pl];
        x[p] = pb_relax(x[p], (b[p] + s * ih2) / pb_diag(ex, ey, ez, k2, p, nx, pl, ih2), omega);
    }
    __syncthreads();
}

// The V-cycle from one level down to the coarsest in one block of 1024 threads, every level's iterate,
// right side and coefficients in shared memory, by the passes of the level-by-level cycle with the same
// arithmetic: `pb_smooth_h` and `pb_mg_residual_h` (their products and sums in the same order, on the
// one-byte coefficients decoded once into floats), `pb_restrict`, `pb_prolong_add` and
// `pb_coarse_solve`. Launched once instead of some thirty times on lattices of a few thousand points,
// where each launch costs more than its work. Reads b of the first level (`bg`), writes its x (`xg`,
// every point). `packed`: the levels above the coarsest take their coefficients from the one-byte
// codes (as the level-by-level cycle does), else from their floats; the coarsest always from floats.
// Shared memory, in floats: x, b, ex, ey, ez, k2 of every level, then the first level's residual (the
// host sizes it).
extern "C" __global__ void __launch_bounds__(1024)
pb_tail(const PbTailLevel* __restrict__ levels, int count, int sweeps, int packed, float omega, int pairs,
        const float* __restrict__ bg, float* __restrict__ xg) {
    extern __shared__ float pb_tail_sm[];
    __shared__ PbTailLevel lv[PB_TAIL_LEVELS];
    __shared__ int off[PB_TAIL_LEVELS + 1];
    for (int l = threadIdx.x; l < count; l += blockDim.x) lv[l] = levels[l];
    __syncthreads();
    if (threadIdx.x == 0) {
        int o = 0;
        for (int l = 0; l < count; ++l) {
            off[l] = o;
            o += 6 * lv[l].nx * lv[l].ny * lv[l].nz;
        }
        off[count] = o;
    }
    __syncthreads();
    const int n0 = lv[0].nx * lv[0].ny * lv[0].nz;
    float* t = pb_tail_sm + off[count];
    // Coefficients into shared memory; the first level's x = 0 and b.
    for (int l = 0; l < count; ++l) {
        const PbTailLevel& L = lv[l];
        const int n = L.nx * L.ny * L.nz;
        float* c = pb_tail_sm + off[l] + 2 * n;
        const bool codes = packed != 0 && l + 1 < count;
        for (int p = threadIdx.x; p < n; p += blockDim.x) {
            if (codes) {
                const unsigned int w = L.pk[p];
                c[p] = pb_eps_of(w);
                c[n + p] = pb_eps_of(w >> 8);
                c[2 * n + p] = pb_eps_of(w >> 16);
                c[3 * n + p] = pb_k2_of(w >> 24);
            } else {
                c[p] = L.ex[p];
                c[n + p] = L.ey[p];
                c[2 * n + p] = L.ez[p];
                c[3 * n + p] = L.k2[p];
            }
        }
    }
    for (int p = threadIdx.x; p < n0; p += blockDim.x) {
        pb_tail_sm[off[0] + p] = 0.f;
        pb_tail_sm[off[0] + n0 + p] = bg[p];
    }
    __syncthreads();
    // Down: smooth, residual, restrict (the coarse iterate starts at zero).
    for (int l = 0; l + 1 < count; ++l) {
        const PbTailLevel& L = lv[l];
        const int nx = L.nx, ny = L.ny, nz = L.nz, pl = nx * ny, n = pl * nz;
        float* x = pb_tail_sm + off[l];
        const float* b = x + n;
        const float* c = x + 2 * n;
        for (int s = 0; s < sweeps; ++s) {
            pb_tail_half(L, c, b, x, 0, omega);
            pb_tail_half(L, c, b, x, 1, omega);
        }
        const float *ex = c, *ey = c + n, *ez = c + 2 * n, *k2 = c + 3 * n;
        for (int p = threadIdx.x; p < n; p += blockDim.x) {
            const int row = p / nx, k = row / ny;
            const int i = p - row * nx, j = row - k * ny;
            if (!pb_interior(i, j, k, nx, ny, nz)) {
                t[p] = 0.f;
                continue;
            }
            const float xp = x[p];
            const float s = ex[p] * (xp - x[p + 1]) + ex[p - 1] * (xp - x[p - 1]) + ey[p] * (xp - x[p + nx]) +
                            ey[p - nx] * (xp - x[p - nx]) + ez[p] * (xp - x[p + pl]) + ez[p - pl] * (xp - x[p - pl]);
            t[p] = b[p] - (s * L.ih2 + k2[p] * xp);
        }
        __syncthreads();
        const PbTailLevel& D = lv[l + 1];
        const int cx = D.nx, cy = D.ny, cz = D.nz, m = cx * cy * cz;
        float* xc = pb_tail_sm + off[l + 1];
        float* bc = xc + m;
        for (int q = threadIdx.x; q < m; q += blockDim.x) {
            const int row = q / cx, K = row / cy;
            const int I = q - row * cx, J = row - K * cy;
            xc[q] = 0.f;
            if (!pb_interior(I, J, K, cx, cy, cz)) {
                bc[q] = 0.f;
                continue;
            }
            const int p = 2 * I + nx * (2 * J) + pl * (2 * K);
            float s = 0.f;
            for (int dz = -1; dz <= 1; ++dz) {
                const float wz = dz == 0 ? 1.f : 0.5f;
                for (int dy = -1; dy <= 1; ++dy) {
                    const float wy = dy == 0 ? wz : 0.5f * wz;
                    const int r = p + nx * dy + pl * dz;
                    s += wy * (0.5f * t[r - 1] + t[r] + 0.5f * t[r + 1]);
                }
            }
            bc[q] = 0.125f * s;
        }
        __syncthreads();
    }
    // The coarsest level: `pb_coarse_solve`'s sweeps, a point per thread while they fit the block (its
    // couplings, diagonal and right side held in registers through the sweeps), else striding.
    {
        const PbTailLevel& C = lv[count - 1];
        const int nx = C.nx, ny = C.ny, nz = C.nz, pl = nx * ny, nc = pl * nz;
        float* x = pb_tail_sm + off[count - 1];
        const float* b = x + nc;
        const float *ex = x + 2 * nc, *ey = x + 3 * nc, *ez = x + 4 * nc, *k2 = x + 5 * nc;
        const bool held = nc <= (int)blockDim.x;
        const int p = threadIdx.x;
        bool active = false;
        int colour = 0;
        float cxp = 0.f, cxm = 0.f, cyp = 0.f, cym = 0.f, czp = 0.f, czm = 0.f, d = 1.f, bp = 0.f;
        if (held && p < nc) {
            const int row = p / nx, k = row / ny;
            const int i = p - row * nx, j = row - k * ny;
            active = pb_interior(i, j, k, nx, ny, nz);
            colour = (i + j + k) & 1;
            if (active) {
                cxp = ex[p];
                cxm = ex[p - 1];
                cyp = ey[p];
                cym = ey[p - nx];
                czp = ez[p];
                czm = ez[p - pl];
                d = pb_diag(ex, ey, ez, k2, p, nx, pl, C.ih2);
                bp = b[p];
            }
        }
        for (int s = 0; s < 2 * pairs; ++s) {
            for (int half = 0; half < 2; ++half) {
                const int want = s < pairs ? half : 1 - half;
                if (held) {
                    if (active && colour == want) {
                        const float s6 = cxp * x[p + 1] + cxm * x[p - 1] + cyp * x[p + nx] + cym * x[p - nx] +
                                         czp * x[p + pl] + czm * x[p - pl];
                        x[p] = (bp + s6 * C.ih2) / d;
                    }
                } else {
                    for (int q = threadIdx.x; q < nc; q += blockDim.x) {
                        const int row = q / nx, k = row / ny;
                        const int i = q - row * nx, j = row - k * ny;
                        if (((i + j + k) & 1) != want || !pb_interior(i, j, k, nx, ny, nz)) continue;
                        const float s6 = ex[q] * x[q + 1] + ex[q - 1] * x[q - 1] + ey[q] * x[q + nx] +
                                         ey[q - nx] * x[q - nx] + ez[q] * x[q + pl] + ez[q - pl] * x[q - pl];
                        x[q] = (b[q] + s6 * C.ih2) / pb_diag(ex, ey, ez, k2, q, nx, pl, C.ih2);
                    }
                }
                __syncthreads();
            }
        }
    }
    // Up: prolong, smooth in the mirrored order.
    for (int l = count - 2; l >= 0; --l) {
        const PbTailLevel& L = lv[l];
        const PbTailLevel& D = lv[l + 1];
        const int nx = L.nx, ny = L.ny, nz = L.nz, n = nx * ny * nz;
        const int cx = D.nx, cxy = D.nx * D.ny;
        float* x = pb_tail_sm + off[l];
        const float* b = x + n;
        const float* xc = pb_tail_sm + off[l + 1];
        for (int p = threadIdx.x; p < n; p += blockDim.x) {
            const int row = p / nx, k = row / ny;
            const int i = p - row * nx, j = row - k * ny;
            if (!pb_interior(i, j, k, nx, ny, nz)) continue;
            const int c0 = (i >> 1) + cx * (j >> 1) + cxy * (k >> 1);
            const int dx = i & 1, dy = (j & 1) ? cx : 0, dz = (k & 1) ? cxy : 0;
            const float s = ((xc[c0] + xc[c0 + dx]) + (xc[c0 + dy] + xc[c0 + dx + dy])) +
                            ((xc[c0 + dz] + xc[c0 + dx + dz]) + (xc[c0 + dy + dz] + xc[c0 + dx + dy + dz]));
            x[p] += 0.125f * s;
        }
        __syncthreads();
        for (int s = 0; s < sweeps; ++s) {
            pb_tail_half(L, x + 2 * n, b, x, 1, omega);
            pb_tail_half(L, x + 2 * n, b, x, 0, omega);
        }
    }
    for (int p = threadIdx.x; p < n0; p += blockDim.x) xg[p] = pb_tail_sm[off[0] + p];
}
