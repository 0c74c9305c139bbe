// The general MO kernel: the basis in device arrays (shells, primitives, contracted coefficients).
// Compiled after kernels/mo_common.cuh (the host concatenates the two; see src/compute/cuda/mod.rs).
//
// mo_general computes one orbital term; mo_general_multi computes up to MO_MAX_CHANNELS orbitals of
// one wavefunction at once (the orbitals several representations show at one frame): the screening
// and the radial factors (the exponentials) are shared, each orbital contracts them with its own
// coefficients (`coefs + c * ncoefs`) into its own output slab (`out + c * slab_n`). Host twin:
// src/compute/cuda/mo/batch.rs (MO_MAX_CHANNELS there).

#define MO_MAX_CHANNELS 8

// The body of both kernels: `nch` channels (at most MAXC, a compile-time bound so the accumulators
// stay in registers). Channel c is stored with mode (squared_mask >> c) & 1 (0 psi, 1 psi^2) when
// MAXC > 1, with `mode` and `w` otherwise.
template <int MAXC>
__device__ __forceinline__ void mo_general_body(float* __restrict__ out, const LatticeArgs& g,
                                                const ShellRec* __restrict__ shells, int nshells,
                                                const float2* __restrict__ prims, const float* __restrict__ coefs,
                                                int ncoefs, int nch, int slab_n, int mode, float w,
                                                int squared_mask) {
    __shared__ int list[CHUNK];
    __shared__ float dmin2s[CHUNK];  // squared distance of the brick to each kept shell's centre
    __shared__ int warp_counts[NTHREADS / 32];
    int idx;
    float px, py, pz, bcx, bcy, bcz, brad;
    bool inside = brick_point(g, &idx, &px, &py, &pz, &bcx, &bcy, &bcz, &brad);
    int tid = threadIdx.x + BX * (threadIdx.y + BY * threadIdx.z);
    float psi[MAXC];
#pragma unroll
    for (int c = 0; c < MAXC; ++c) psi[c] = 0.0f;
    for (int base = 0; base < nshells; base += CHUNK) {
        int n = 0;
        int end = min(nshells, base + CHUNK);
        for (int s0 = base; s0 < end; s0 += NTHREADS) {
            int s = s0 + tid;
            bool keep = false;
            float dmin2 = 0.0f;
            if (s < end) {
                ShellRec sh = shells[s];
                float dx = sh.cx - bcx, dy = sh.cy - bcy, dz = sh.cz - bcz;
                float d = fmaxf(sqrtf(dx * dx + dy * dy + dz * dz) - brad, 0.0f);
                dmin2 = d * d;
                keep = dmin2 <= sh.cutoff2;
            }
            n += compact_ordered(keep, s, dmin2, list + n, dmin2s + n, warp_counts);
        }
        for (int t = 0; t < n; ++t) {
            ShellRec sh = shells[list[t]];
            float dmin2 = dmin2s[t];  // block-uniform: primitives negligible over the brick are skipped
            float dx = px - sh.cx, dy = py - sh.cy, dz = pz - sh.cz;
            float r2 = dx * dx + dy * dy + dz * dz;
            float radial = 0.0f;
            for (int p = 0; p < sh.nprim; ++p) {
                float2 pr = __ldg(prims + sh.prim_start + p);  // (alpha * log2 e, coefficient)
                if (pr.x * dmin2 < PRIM_SKIP_LOG2) radial = fmaf(pr.y, ex2_ftz(-pr.x * r2), radial);
            }
#pragma unroll
            for (int c = 0; c < MAXC; ++c) {
                if (c < nch) {
                    psi[c] = fmaf(radial, angular_any(sh.l, coefs + c * ncoefs + sh.coef_start, dx, dy, dz), psi[c]);
                }
            }
        }
        __syncthreads();
    }
    if (!inside) return;
    if (MAXC == 1) {
        store_value(out, idx, psi[0], mode, w);
        return;
    }
#pragma unroll
    for (int c = 0; c < MAXC; ++c) {
        if (c < nch) store_value(out + (size_t)c * slab_n, idx, psi[c], (squared_mask >> c) & 1, 1.0f);
    }
}

extern "C" __global__ void __launch_bounds__(NTHREADS)
mo_general(float* __restrict__ out, const LatticeArgs g, const ShellRec* __restrict__ shells, int nshells,
           const float2* __restrict__ prims, const float* __restrict__ coefs, int mode, float w) {
    mo_general_body<1>(out, g, shells, nshells, prims, coefs, 0, 1, 0, mode, w, 0);
}

// `nch` orbitals (1..MO_MAX_CHANNELS), coefficients `ncoefs` apart, outputs `slab_n` apart; the
// shells' cutoffs are the largest over the channels. mo_general_multi2 is the same for at most two
// orbitals (the HOMO and LUMO of two representations) with fewer registers.
extern "C" __global__ void __launch_bounds__(NTHREADS)
mo_general_multi(float* __restrict__ out, const LatticeArgs g, const ShellRec* __restrict__ shells, int nshells,
                 const float2* __restrict__ prims, const float* __restrict__ coefs, int ncoefs, int nch,
                 int slab_n, int squared_mask) {
    mo_general_body<MO_MAX_CHANNELS>(out, g, shells, nshells, prims, coefs, ncoefs, nch, slab_n, 0, 1.0f,
                                     squared_mask);
}

extern "C" __global__ void __launch_bounds__(NTHREADS)
mo_general_multi2(float* __restrict__ out, const LatticeArgs g, const ShellRec* __restrict__ shells, int nshells,
                  const float2* __restrict__ prims, const float* __restrict__ coefs, int ncoefs, int nch,
                  int slab_n, int squared_mask) {
    mo_general_body<2>(out, g, shells, nshells, prims, coefs, ncoefs, nch, slab_n, 0, 1.0f, squared_mask);
}
