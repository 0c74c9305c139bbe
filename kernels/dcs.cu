// Direct Coulomb summation of point charges onto an axis-aligned lattice (potential maps).
//
// Compiled at run time with NVRTC by src/compute/cuda/ (mod.rs launches it; the host prepends
// DCS_UNROLL and DCS_SOFT when it selects another variant). Atoms travel in constant memory in chunks
// of DCS_CHUNK float4 (x, y, z relative to the lattice origin in bohr, charge in e); the host launches
// once per chunk and the kernel adds the chunk's float sum into a double accumulator, so long sums
// keep their precision. One launch covers all planes of the slab (blockIdx.z = plane), so dz is a
// per-block constant held in a register. Each thread owns DCS_UNROLL points of one lattice row,
// strided by the block width (coalesced stores); dy^2 + dz^2 is computed once per atom and reused
// for all of them.
//
// The reciprocal square root is the bound: the special-function unit (SFU) returns 16 per clock per
// SM. The SFU form uses rsqrt.approx.ftz (about 2 ulp; the flush-to-zero form avoids the denormal
// fix-up instructions the non-ftz form adds around every call, and r^2 is never denormal for a
// lattice in bohr). DCS_SOFT of the DCS_UNROLL points instead take their reciprocal square root on
// the FMA pipe (rsqrt_fma: a bit-trick seed, one Newton step and one third-order step, relative error
// below 2e-7), so both pipes work at once.

#define DCS_CHUNK 4000
#ifndef DCS_UNROLL
#define DCS_UNROLL 8
#endif
#ifndef DCS_SOFT
#define DCS_SOFT 1
#endif
#define DCS_BLOCK_X 32
#define DCS_BLOCK_Y 8

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

extern "C" __global__ void __launch_bounds__(DCS_BLOCK_X * DCS_BLOCK_Y)
dcs_chunk(double* __restrict__ acc, int nx, int ny, int nz, int k0, float spacing_x, float spacing_y,
          float spacing_z, int natoms) {
    int i0 = blockIdx.x * DCS_BLOCK_X * DCS_UNROLL + threadIdx.x;
    int j = blockIdx.y * DCS_BLOCK_Y + threadIdx.y;
    int kk = blockIdx.z;
    if (j >= ny || kk >= nz) return;
    float y = j * spacing_y;
    float z = (kk + k0) * spacing_z;
    float x[DCS_UNROLL];
    float e[DCS_UNROLL];
#pragma unroll
    for (int u = 0; u < DCS_UNROLL; ++u) {
        x[u] = (float)(i0 + u * DCS_BLOCK_X) * spacing_x;
        e[u] = 0.0f;
    }
#pragma unroll 2
    for (int a = 0; a < natoms; ++a) {
        float4 at = dcs_atoms[a];
        float dy = y - at.y, dz = z - at.z;
        float dyz2 = fmaf(dy, dy, dz * dz);
#pragma unroll
        for (int u = 0; u < DCS_UNROLL; ++u) {
            float dx = x[u] - at.x;
            float r2 = fmaf(dx, dx, dyz2);
            float inv = (u < DCS_UNROLL - DCS_SOFT) ? rsqrt_sfu(r2) : rsqrt_fma(r2);
            e[u] = fmaf(at.w, inv, e[u]);
        }
    }
    size_t row = (size_t)nx * ((size_t)j + (size_t)ny * (size_t)kk);
#pragma unroll
    for (int u = 0; u < DCS_UNROLL; ++u) {
        int i = i0 + u * DCS_BLOCK_X;
        if (i < nx) acc[row + i] += (double)e[u];
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
