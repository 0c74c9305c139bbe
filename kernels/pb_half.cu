// The finest level of the V-cycle in half precision (appended to kernels/pb.cu at build time; driven
// by src/compute/cuda/pb/multigrid.rs and cg.rs with `set_half_vcycle`).
//
// The finest level's right side and iterate are stored as IEEE half floats (2 bytes a point instead
// of 4), scaled so the right side's root mean square is PBH_RMS: the V-cycle is linear, so it runs on
// S r and returns S z, with S = PBH_RMS / rms(r) computed by every kernel from the same |r|^2 (the
// previous iteration's, on the device), so all of them use one S. Its arithmetic stays float32; only
// the stored values are rounded (11 bits), which makes the preconditioner inexact by about 5e-4 of
// its output. Together with the one-byte coefficients a sweep's data is a third of the float32
// level's, small enough for the device's L2 cache to hold between sweeps.

// The right side's root mean square after scaling: well inside half's range (6e-5 .. 65504) for the
// right side (a residual peaks at some hundreds of times its mean) and for the iterate (about the
// right side over the diagonal, 50 to 2000 per square Angstrom at these spacings).
#define PBH_RMS 32.0f

__device__ __forceinline__ float pbh_load(unsigned short v) {
    float f;
    asm("cvt.f32.f16 %0, %1;" : "=f"(f) : "h"(v));
    return f;
}

// Rounded to the nearest half; beyond half's largest finite value it is that value (a NaN stays NaN).
__device__ __forceinline__ unsigned short pbh_store(float f) {
    const float c = f > 65504.f ? 65504.f : (f < -65504.f ? -65504.f : f);
    unsigned short v;
    asm("cvt.rn.f16.f32 %0, %1;" : "=h"(v) : "f"(c));
    return v;
}

// S from |r|^2 over n points (1 when that is not a positive finite number).
__device__ __forceinline__ float pbh_scale(const double* __restrict__ rr, long long n) {
    const double v = *rr;
    if (!(v > 0.0 && v < 1e300) || n <= 0) return 1.f;
    return (float)((double)PBH_RMS / sqrt(v / (double)n));
}

// The level's first half sweep, red, from x = 0 (as `pb_smooth_h_zero`), on S r: b16 = S r at every
// point (0 on the faces) and x16 = omega b / diag at the red interior points, 0 elsewhere.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_smooth_h_zero16(const unsigned int* __restrict__ pk, int nx, int ny, int nz, float ih2, const float* __restrict__ r,
                   const double* __restrict__ rr, long long n, unsigned short* __restrict__ b16,
                   unsigned short* __restrict__ x16, float omega) {
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    const int k = blockIdx.z * PB_BZ + threadIdx.z;
    const int pair = blockIdx.x * PB_BX + threadIdx.x;
    if (!(j < ny && k < nz)) return;
    const float sc = pbh_scale(rr, n);
    const long long pl = (long long)nx * ny;
    const long long row = (long long)nx * j + pl * k;
    const int i = 2 * pair + ((j + k) & 1);
    const int o = 2 * pair + ((j + k + 1) & 1);
    if (o < nx) {
        const bool in = pb_interior(o, j, k, nx, ny, nz);
        b16[row + o] = pbh_store(in ? sc * r[row + o] : 0.f);
        x16[row + o] = 0;
    }
    if (i >= nx) return;
    const long long p = row + i;
    if (!pb_interior(i, j, k, nx, ny, nz)) {
        b16[p] = 0;
        x16[p] = 0;
        return;
    }
    const unsigned short bs = pbh_store(sc * r[p]);
    b16[p] = bs;
    const unsigned int c = pk[p];
    const float exp_ = pb_eps_of(c), eyp = pb_eps_of(c >> 8), ezp = pb_eps_of(c >> 16), k2p = pb_k2_of(c >> 24);
    const float exm = pb_eps_of(pk[p - 1]), eym = pb_eps_of(pk[p - nx] >> 8), ezm = pb_eps_of(pk[p - pl] >> 16);
    x16[p] = pbh_store(pb_relax(0.f, pbh_load(bs) / ((exp_ + exm + eyp + eym + ezp + ezm) * ih2 + k2p), omega));
}

// The relaxed Gauss-Seidel value at interior point p of x16 (as `pb_smooth_h`).
__device__ __forceinline__ float pbh_relaxed(const unsigned int* __restrict__ pk, int nx, long long pl, float ih2,
                                             const unsigned short* __restrict__ b16, const unsigned short* x16,
                                             long long p, float omega) {
    const unsigned int c = pk[p];
    const float exp_ = pb_eps_of(c), eyp = pb_eps_of(c >> 8), ezp = pb_eps_of(c >> 16), k2p = pb_k2_of(c >> 24);
    const float exm = pb_eps_of(pk[p - 1]), eym = pb_eps_of(pk[p - nx] >> 8), ezm = pb_eps_of(pk[p - pl] >> 16);
    const float s = exp_ * pbh_load(x16[p + 1]) + exm * pbh_load(x16[p - 1]) + eyp * pbh_load(x16[p + nx]) +
                    eym * pbh_load(x16[p - nx]) + ezp * pbh_load(x16[p + pl]) + ezm * pbh_load(x16[p - pl]);
    return pb_relax(pbh_load(x16[p]), (pbh_load(b16[p]) + s * ih2) / ((exp_ + exm + eyp + eym + ezp + ezm) * ih2 + k2p),
                    omega);
}

// One half sweep of colour `colour` on the half-precision level (as `pb_smooth_h`).
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_smooth_h16(const unsigned int* __restrict__ pk, int nx, int ny, int nz, float ih2,
              const unsigned short* __restrict__ b16, unsigned short* x16, int colour, float omega) {
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    const int k = blockIdx.z * PB_BZ + threadIdx.z;
    const int i = 2 * (blockIdx.x * PB_BX + threadIdx.x) + ((j + k + colour) & 1);
    if (!(i < nx && j < ny && k < nz) || !pb_interior(i, j, k, nx, ny, nz)) return;
    const long long pl = (long long)nx * ny;
    const long long p = i + (long long)nx * j + pl * k;
    x16[p] = pbh_store(pbh_relaxed(pk, nx, pl, ih2, b16, x16, p, omega));
}

// The V-cycle's last half sweep on the half-precision level (as `pb_smooth_h_dot`), and
// acc[0] += r . z over every point, z = x16 / S the preconditioned residual conjugate gradients use.
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_smooth_h_dot16(const unsigned int* __restrict__ pk, int nx, int ny, int nz, float ih2,
                  const unsigned short* __restrict__ b16, unsigned short* x16, int colour, float omega,
                  const float* __restrict__ r, const double* __restrict__ rr, long long n, double* acc) {
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    const int pair = blockIdx.x * PB_BX + threadIdx.x;
    const long long pl = (long long)nx * ny;
    const double inv = 1.0 / (double)pbh_scale(rr, n);
    double rz = 0.0;
    PB_Z_LOOP(k) {
        if (j >= ny) break;
        const int i = 2 * pair + ((j + k + colour) & 1);
        const int o = 2 * pair + ((j + k + colour + 1) & 1);
        const long long row = (long long)nx * j + pl * k;
        if (i < nx && pb_interior(i, j, k, nx, ny, nz)) {
            const long long p = row + i;
            const unsigned short v = pbh_store(pbh_relaxed(pk, nx, pl, ih2, b16, x16, p, omega));
            x16[p] = v;
            rz += (double)r[p] * (double)pbh_load(v) * inv;
        }
        if (o < nx && pb_interior(o, j, k, nx, ny, nz)) rz += (double)r[row + o] * (double)pbh_load(x16[row + o]) * inv;
    }
    pb_block_add(rz, acc);
}

// t = b - A x on the half-precision level, in float32 (as `pb_mg_residual_h`).
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_mg_residual_h16(const unsigned int* __restrict__ pk, int nx, int ny, int nz, float ih2,
                   const unsigned short* __restrict__ b16, const unsigned short* __restrict__ x16,
                   float* __restrict__ t) {
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
    const float xp = pbh_load(x16[p]);
    const float s = exp_ * (xp - pbh_load(x16[p + 1])) + exm * (xp - pbh_load(x16[p - 1])) +
                    eyp * (xp - pbh_load(x16[p + nx])) + eym * (xp - pbh_load(x16[p - nx])) +
                    ezp * (xp - pbh_load(x16[p + pl])) + ezm * (xp - pbh_load(x16[p - pl]));
    t[p] = pbh_load(b16[p]) - (s * ih2 + k2p * xp);
}

// x16 += P xc at the fine interior points (as `pb_prolong_add`).
extern "C" __global__ void __launch_bounds__(PB_THREADS)
pb_prolong_add16(const float* __restrict__ xc, int cx, int cy, int cz, unsigned short* __restrict__ x16, int nx, int ny,
                 int nz) {
    const int i = blockIdx.x * PB_BX + threadIdx.x;
    const int j = blockIdx.y * PB_BY + threadIdx.y;
    const int k = blockIdx.z * PB_BZ + threadIdx.z;
    if (!(i < nx && j < ny && k < nz) || !pb_interior(i, j, k, nx, ny, nz)) return;
    const long long c0 = (i >> 1) + (long long)cx * (j >> 1) + (long long)cx * cy * (k >> 1);
    const long long dx = i & 1, dy = (j & 1) ? cx : 0, dz = (k & 1) ? (long long)cx * cy : 0;
    const float s = ((xc[c0] + xc[c0 + dx]) + (xc[c0 + dy] + xc[c0 + dx + dy])) +
                    ((xc[c0 + dz] + xc[c0 + dx + dz]) + (xc[c0 + dy + dz] + xc[c0 + dx + dy + dz]));
    const long long p = i + (long long)nx * j + (long long)nx * ny * k;
    x16[p] = pbh_store(pbh_load(x16[p]) + 0.125f * s);
}

// p = z + beta p with z = x16 / S (as `pb_xpby_s`).
extern "C" __global__ void pb_xpby_s16(float* __restrict__ p, const unsigned short* __restrict__ x16,
                                       const double* __restrict__ rr, long long n_scale,
                                       const double* __restrict__ rz_new, const double* __restrict__ rz_old,
                                       long long n) {
    const long long t = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    const float beta = pb_beta(rz_new, rz_old);
    const float inv = (float)(1.0 / (double)pbh_scale(rr, n_scale));
    if (t >= n) return;
    const float z = pbh_load(x16[t]) * inv;
    p[t] = beta == 0.f ? z : z + beta * p[t];
}
