// Direct Coulomb summation of point charges onto an axis-aligned lattice (potential maps).
//
// Compiled at run time with NVRTC by src/compute/cuda/ (dcs.rs launches it; the host prepends
// DCS_UNROLL, DCS_ROWS, DCS_SOFT, DCS_RSQ, DCS_BLOCK_Y, DCS_MIN_BLOCKS, DCS_MAX_REGS, DCS_SOFT_PHASE and DCS_ATOM_UNROLL for the variant it selects, `DcsVariant`). Atoms travel
// in constant memory in chunks of DCS_CHUNK float4 (x, y, z relative to the lattice origin in bohr,
// charge in e, all four times sqrt(1/2): see below); the host launches once per chunk and the kernel adds the chunk's float sum into a
// double accumulator, so long sums keep their precision. One launch covers all planes of the slab
// (blockIdx.z = plane), so z is a per-block constant. Each thread owns DCS_UNROLL points of each of
// DCS_ROWS lattice rows of one plane (points strided by the block width: coalesced stores; rows
// strided by the block height); per atom it computes dz^2 once, dy^2 + dz^2 once per row and dx once
// per point column, so the work per evaluation is near one add, the r^2 FMA, the reciprocal square
// root and the accumulating FMA.
//
// Half-square distances: the host scales coordinates and spacings by sqrt(1/2) and charges by
// sqrt(1/2) (`DcsPrepared` in src/compute/cuda/dcs.rs), so the kernel's fmaf chain yields h = r^2 / 2
// directly. That is the operand of the Newton step y (3/2 - h y^2), which saves the FMA pipe one
// multiply per soft evaluation; the SFU evaluation w * rsqrt(h) = (q / sqrt 2) (sqrt 2 / r) = q / r
// needs no correction, and the soft forms, which return 1/r, take the charge w sqrt 2.
//
// The reciprocal square root is the bound: the special-function unit (SFU) returns 16 per clock per
// SM, the FMA pipe 128 lanes per clock. The SFU form uses rsqrt.approx.ftz (about 2 ulp; the
// flush-to-zero form avoids the denormal fix-up instructions the non-ftz form adds around every call,
// and h is never denormal for a lattice in bohr). DCS_SOFT of the DCS_UNROLL * DCS_ROWS evaluations
// per atom instead take their reciprocal square root on the FMA pipe, so both pipes work at once:
// DCS_RSQ 0 is rsqrt_fma (bit-trick seed, one Newton step and one third-order step, relative error
// below 2e-7, 9 instructions), DCS_RSQ 1 is rsqrt_newton2 (tuned seed and two tuned Newton steps, 8
// instructions, relative error below 8e-7 and of both signs).

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
#ifndef DCS_BLOCK_Y
#define DCS_BLOCK_Y 8
#endif
// Blocks per multiprocessor the register allocation must leave room for (0: no such bound).
// Registers per thread the compiler may use (0: no such cap; takes the place of DCS_MIN_BLOCKS).
#ifndef DCS_MAX_REGS
#define DCS_MAX_REGS 0
#endif
// Rotation of the pattern of FMA-pipe evaluations (see dcs_soft).
#ifndef DCS_SOFT_PHASE
#define DCS_SOFT_PHASE 0
#endif
// Atoms per iteration of the atom loop (its unroll factor).
#ifndef DCS_ATOM_UNROLL
#define DCS_ATOM_UNROLL 2
#endif
// The pragma takes a constant expression, not a macro.
constexpr int dcs_atom_unroll = DCS_ATOM_UNROLL;
#ifndef DCS_MIN_BLOCKS
#define DCS_MIN_BLOCKS 0
#endif
#define DCS_EVALS (DCS_UNROLL * DCS_ROWS)

__constant__ float4 dcs_atoms[DCS_CHUNK];

__device__ __forceinline__ float rsqrt_sfu(float x) {
    float r;
    asm("rsqrt.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

// 1/sqrt(2 h) for normal positive h without the SFU. The seed 0x5f3759df - (bits(2h) >> 1), that is
// 0x5ef759df - (bits(h) >> 1), is within 3.5% of the root; the Newton step y (3/2 - h y^2) leaves a
// relative error below 1.8e-3; the last step y (1 - t/2 + 3 t^2 / 8) with t = 2 h y^2 - 1 = 2 t' is
// third order (error about 5/16 t^3 < 2e-8, plus rounding), written as y + (y t') (3/2 t' - 1).
__device__ __forceinline__ float rsqrt_fma(float h) {
    float y = __int_as_float(0x5ef759df - (__float_as_int(h) >> 1));
    y = y * fmaf(-h * y, y, 1.5f);
    float t = fmaf(h * y, y, -0.5f);
    float p = fmaf(1.5f, t, -1.0f);
    return fmaf(y * t, p, y);
}

// 1/sqrt(2 h) for normal positive h without the SFU: seed 0x5ef76908 - (bits(h) >> 1) (0x5f376908
// for 2h) and two steps y (c - h y^2) whose constants c (1.500879, 1.5000006) minimise the largest
// relative error over a binade (7.3e-7 in float32 arithmetic, errors of both signs, so sums of many
// terms do not drift one way).
__device__ __forceinline__ float rsqrt_newton2(float h) {
    float y = __int_as_float(0x5ef76908 - (__float_as_int(h) >> 1));
    y = y * fmaf(-h * y, y, 1.500879f);
    return y * fmaf(-h * y, y, 1.5000006f);
}

// Evaluation k of DCS_EVALS takes the FMA pipe when (k' * DCS_SOFT) mod DCS_EVALS < DCS_SOFT with
// k' = (k + DCS_SOFT_PHASE) mod DCS_EVALS: exactly DCS_SOFT of them, spread evenly, the pattern
// rotated by the phase (a compile-time choice per unrolled evaluation). The soft ones
// weight by ws = w sqrt 2 = q, the others by w = q / sqrt 2.
__device__ __forceinline__ bool dcs_soft(int k) {
    return (((k + DCS_SOFT_PHASE) % DCS_EVALS) * DCS_SOFT) % DCS_EVALS < DCS_SOFT;
}

#if DCS_MAX_REGS > 0
#define DCS_BOUNDS __maxnreg__(DCS_MAX_REGS)
#elif DCS_MIN_BLOCKS > 0
#define DCS_BOUNDS __launch_bounds__(DCS_BLOCK_X * DCS_BLOCK_Y, DCS_MIN_BLOCKS)
#else
#define DCS_BOUNDS __launch_bounds__(DCS_BLOCK_X * DCS_BLOCK_Y)
#endif

// A variant may also alternate the chunks between two streams, each with its own module (its own
// constant-memory chunk) and its own double accumulator, so that one chunk's blocks start on the
// multiprocessors the other's last blocks leave idle; dcs_finish adds the two.
//
// The chunk's atoms may be split into `parts` ranges (blockIdx.z = plane * parts + part), so that a
// launch has enough blocks to fill the last wave of the multiprocessors; with more than one part,
// the blocks of a tile add their sums with double-precision atomics.
extern "C" __global__ void DCS_BOUNDS
dcs_chunk(double* __restrict__ acc, int nx, int ny, int nz, int k0, float spacing_x, float spacing_y,
          float spacing_z, int natoms, int parts) {
    int i0 = blockIdx.x * DCS_BLOCK_X * DCS_UNROLL + threadIdx.x;
    int j0 = blockIdx.y * DCS_BLOCK_Y * DCS_ROWS + threadIdx.y;
    int kk = blockIdx.z / parts;
    int part = blockIdx.z - kk * parts;
    if (j0 >= ny || kk >= nz) return;
    const int a_begin = (int)(((long long)natoms * part) / parts);
    const int a_end = (int)(((long long)natoms * (part + 1)) / parts);
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
#pragma unroll dcs_atom_unroll
    for (int a = a_begin; a < a_end; ++a) {
        float4 at = dcs_atoms[a];
        const float ws = at.w * 1.41421356f;
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
                const int k = v * DCS_UNROLL + u;
                float h = fmaf(dx[u], dx[u], dyz2);
                if (dcs_soft(k)) {
#if DCS_RSQ == 1
                    e[v][u] = fmaf(ws, rsqrt_newton2(h), e[v][u]);
#else
                    e[v][u] = fmaf(ws, rsqrt_fma(h), e[v][u]);
#endif
                } else {
                    e[v][u] = fmaf(at.w, rsqrt_sfu(h), e[v][u]);
                }
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
            if (i >= nx) continue;
            if (parts == 1) {
                acc[row + i] += (double)e[v][u];
            } else {
                atomicAdd(&acc[row + i], (double)e[v][u]);
            }
        }
    }
}

extern "C" __global__ void dcs_zero(double* acc, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) acc[i] = 0.0;
}

// out = acc (+ acc2 when `two`: the second stream's sums, see `DcsVariant::streams`).
extern "C" __global__ void dcs_finish(float* __restrict__ out, const double* __restrict__ acc,
                                      const double* __restrict__ acc2, size_t n, int two) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)(two ? acc[i] + acc2[i] : acc[i]);
}

// Screened Coulomb models (src/compute/esp/screening.rs, `ScreenGpu`; launched by
// `launch_dcs_screened` in src/compute/cuda/dcs.rs): DCS_SCREENED_POINTS lattice points of one row per
// thread (strided by the block width: coalesced stores), sharing each atom's load and its dy^2 + dz^2;
// the chunk's atoms as dcs_chunk reads them (coordinates and charges times sqrt(1/2)). Model 1
// (distance-dependent dielectric) adds q a / r^2, model 2 (Debye-Hueckel) q a exp(-b r) / r with
// 1/r from the SFU's reciprocal square root and the exponential from its ex2 (`__expf`): about 2e-7
// relative per term, plus 6e-8 b r from the exponent's rounding, where the term is exp(-b r) small;
// r^2 is clamped below at min2 (bohr^2) as on the CPU. The chunk's float sum goes into the double
// accumulator.
#define DCS_SCREENED_POINTS 4
extern "C" __global__ void dcs_screened_chunk(double* __restrict__ acc, int nx, int ny, int nz, int k0,
                                              float spacing_x, float spacing_y, float spacing_z, int natoms,
                                              int model, float sa, float sb, float min2) {
    const int i0 = blockIdx.x * blockDim.x * DCS_SCREENED_POINTS + threadIdx.x;
    const int j = blockIdx.y * blockDim.y + threadIdx.y;
    const int kk = blockIdx.z;
    if (i0 >= nx || j >= ny || kk >= nz) return;
    const float y = j * spacing_y, z = (kk + k0) * spacing_z;
    float xs[DCS_SCREENED_POINTS], e[DCS_SCREENED_POINTS];
#pragma unroll
    for (int u = 0; u < DCS_SCREENED_POINTS; ++u) {
        xs[u] = (i0 + u * (int)blockDim.x) * spacing_x;
        e[u] = 0.0f;
    }
    if (model == 1) {
        for (int a = 0; a < natoms; ++a) {
            const float4 at = dcs_atoms[a];
            const float dy = y - at.y, dz = z - at.z;
            const float yz = fmaf(dy, dy, dz * dz);
            const float q = at.w * 1.41421356f * sa;
#pragma unroll
            for (int u = 0; u < DCS_SCREENED_POINTS; ++u) {
                const float dx = xs[u] - at.x;
                const float r2 = fmaxf(2.0f * fmaf(dx, dx, yz), min2);
                e[u] = fmaf(q, 1.0f / r2, e[u]);
            }
        }
    } else {
        for (int a = 0; a < natoms; ++a) {
            const float4 at = dcs_atoms[a];
            const float dy = y - at.y, dz = z - at.z;
            const float yz = fmaf(dy, dy, dz * dz);
            const float q = at.w * 1.41421356f * sa;
#pragma unroll
            for (int u = 0; u < DCS_SCREENED_POINTS; ++u) {
                const float dx = xs[u] - at.x;
                const float r2 = fmaxf(2.0f * fmaf(dx, dx, yz), min2);
                const float inv_r = rsqrt_sfu(r2);
                e[u] = fmaf(q * inv_r, __expf(-sb * (r2 * inv_r)), e[u]);
            }
        }
    }
#pragma unroll
    for (int u = 0; u < DCS_SCREENED_POINTS; ++u) {
        const int i = i0 + u * (int)blockDim.x;
        if (i < nx) acc[(size_t)nx * ((size_t)j + (size_t)ny * (size_t)kk) + i] += (double)e[u];
    }
}
