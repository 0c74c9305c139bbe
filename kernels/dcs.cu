// Direct Coulomb summation of point charges onto an axis-aligned lattice (potential maps).
//
// Compiled at run time with NVRTC by src/compute/cuda/ (dcs.rs launches it; the host prepends
// DCS_UNROLL, DCS_ROWS, DCS_SOFT and DCS_RSQ for the variant it selects, `DcsVariant`). Atoms travel
// in constant memory in chunks of DCS_CHUNK float4 (x, y, z relative to the lattice origin in bohr,
// charge in e); the host launches once per chunk and the kernel adds the chunk's float sum into a
// double accumulator, so long sums keep their precision. One launch covers all planes of the slab
// (blockIdx.z = plane), so z is a per-block constant. Each thread owns DCS_UNROLL points of each of
// DCS_ROWS lattice rows of one plane (points strided by the block width: coalesced stores; rows
// strided by the block height); per atom it computes dz^2 once, dy^2 + dz^2 once per row and dx once
// per point column, so the work per evaluation is near one add, the r^2 FMA, the reciprocal square
// root and the accumulating FMA.
//
// The reciprocal square root is the bound: the special-function unit (SFU) returns 16 per clock per
// SM, the FMA pipe 128 lanes per clock. The SFU form uses rsqrt.approx.ftz (about 2 ulp; the
// flush-to-zero form avoids the denormal fix-up instructions the non-ftz form adds around every call,
// and r^2 is never denormal for a lattice in bohr). DCS_SOFT of the DCS_UNROLL * DCS_ROWS evaluations
// per atom instead take their reciprocal square root on the FMA pipe, so both pipes work at once:
// DCS_RSQ 0 is rsqrt_fma (bit-trick seed, one Newton step and one third-order step, relative error
// below 2e-7), DCS_RSQ 1 is rsqrt_newton2 (tuned seed and two tuned Newton steps, two instructions
// fewer, relative error below 8e-7 and of both signs).

#define DCS_CHUNK 4000
#ifndef DCS_UNROLL
#define DCS_UNROLL 8
#endif
#ifndef DCS_ROWS
#define DCS_ROWS 1
#endif
#ifndef DCS_SOFT
#define DCS_SOFT 1
#endif
#ifndef DCS_RSQ
#define DCS_RSQ 0
#endif
#define DCS_BLOCK_X 32
#define DCS_BLOCK_Y 8
#define DCS_EVALS (DCS_UNROLL * DCS_ROWS)

__constant__ float4 dcs_atoms[DCS_CHUNK];

__device__ __forceinline__ float rsqrt_sfu(float x) {
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

// 1/sqrt(x) for normal positive x without the SFU. The seed 0x5f3759df - (bits >> 1) is within
// 3.5% of the root; the Newton step y (3 - x y^2) / 2 leaves a relative error below 1.8e-3; the last
// step y (1 - t/2 + 3 t^2 / 8) with t = x y^2 - 1 is third order (error about 5/16 t^3 < 2e-8, plus
// rounding).
__device__ __forceinline__ float rsqrt_fma(float x) {
    float y = __int_as_float(0x5f3759df - (__float_as_int(x) >> 1));
    float hx = 0.5f * x;
    y = y * fmaf(-hx * y, y, 1.5f);
    float t = fmaf(x * y, y, -1.0f);
    float p = fmaf(0.375f, t, -0.5f);
    return fmaf(y * t, p, y);
}

// 1/sqrt(x) for normal positive x without the SFU, in 9 instructions: seed 0x5f376908 - (bits >> 1)
// and two steps y (c - x y^2 / 2) whose constants c (1.500879, 1.5000006) minimise the largest
// relative error over a binade (7.3e-7 in float32 arithmetic, errors of both signs, so sums of many
// terms do not drift one way).
__device__ __forceinline__ float rsqrt_newton2(float x) {
    float y = __int_as_float(0x5f376908 - (__float_as_int(x) >> 1));
    float hx = 0.5f * x;
    y = y * fmaf(-hx * y, y, 1.500879f);
    return y * fmaf(-hx * y, y, 1.5000006f);
}

// Evaluation k of DCS_EVALS takes the FMA pipe when (k * DCS_SOFT) mod DCS_EVALS < DCS_SOFT: exactly
// DCS_SOFT of them, spread evenly (a compile-time choice per unrolled evaluation).
__device__ __forceinline__ float dcs_rsqrt(float r2, int k) {
    if ((k * DCS_SOFT) % DCS_EVALS < DCS_SOFT) {
#if DCS_RSQ == 1
        return rsqrt_newton2(r2);
#else
        return rsqrt_fma(r2);
#endif
    }
    return rsqrt_sfu(r2);
}

extern "C" __global__ void __launch_bounds__(DCS_BLOCK_X * DCS_BLOCK_Y)
dcs_chunk(double* __restrict__ acc, int nx, int ny, int nz, int k0, float spacing_x, float spacing_y,
          float spacing_z, int natoms) {
    int i0 = blockIdx.x * DCS_BLOCK_X * DCS_UNROLL + threadIdx.x;
    int j0 = blockIdx.y * DCS_BLOCK_Y * DCS_ROWS + threadIdx.y;
    int kk = blockIdx.z;
    if (j0 >= ny || kk >= nz) return;
    float z = (kk + k0) * spacing_z;
    float x[DCS_UNROLL];
    float y[DCS_ROWS];
    float e[DCS_ROWS][DCS_UNROLL];
#pragma unroll
    for (int u = 0; u < DCS_UNROLL; ++u) x[u] = (float)(i0 + u * DCS_BLOCK_X) * spacing_x;
#pragma unroll
    for (int v = 0; v < DCS_ROWS; ++v) {
        y[v] = (float)(j0 + v * DCS_BLOCK_Y) * spacing_y;
#pragma unroll
        for (int u = 0; u < DCS_UNROLL; ++u) e[v][u] = 0.0f;
    }
#pragma unroll 2
    for (int a = 0; a < natoms; ++a) {
        float4 at = dcs_atoms[a];
        float dz = z - at.z;
        float dz2 = dz * dz;
        float dx[DCS_UNROLL];
#pragma unroll
        for (int u = 0; u < DCS_UNROLL; ++u) dx[u] = x[u] - at.x;
#pragma unroll
        for (int v = 0; v < DCS_ROWS; ++v) {
            float dy = y[v] - at.y;
            float dyz2 = fmaf(dy, dy, dz2);
#pragma unroll
            for (int u = 0; u < DCS_UNROLL; ++u) {
                float r2 = fmaf(dx[u], dx[u], dyz2);
                e[v][u] = fmaf(at.w, dcs_rsqrt(r2, v * DCS_UNROLL + u), e[v][u]);
            }
        }
    }
#pragma unroll
    for (int v = 0; v < DCS_ROWS; ++v) {
        int j = j0 + v * DCS_BLOCK_Y;
        if (j >= ny) continue;
        size_t row = (size_t)nx * ((size_t)j + (size_t)ny * (size_t)kk);
#pragma unroll
        for (int u = 0; u < DCS_UNROLL; ++u) {
            int i = i0 + u * DCS_BLOCK_X;
            if (i < nx) acc[row + i] += (double)e[v][u];
        }
    }
}

extern "C" __global__ void dcs_zero(double* acc, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) acc[i] = 0.0;
}

extern "C" __global__ void dcs_finish(float* __restrict__ out, const double* __restrict__ acc, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)acc[i];
}
