// The general MO kernel: the basis in device arrays (shells, primitives, contracted coefficients).
// Compiled after kernels/mo_common.cuh (the host concatenates the two; see src/compute/cuda/mod.rs).

extern "C" __global__ void __launch_bounds__(NTHREADS)
mo_general(float* __restrict__ out, const LatticeArgs g, const ShellRec* __restrict__ shells, int nshells,
           const float2* __restrict__ prims, const float* __restrict__ coefs, int mode, float w) {
    __shared__ int list[CHUNK];
    __shared__ float dmin2s[CHUNK];  // squared distance of the brick to each kept shell's centre
    __shared__ int warp_counts[NTHREADS / 32];
    int idx;
    float px, py, pz, bcx, bcy, bcz, brad;
    bool inside = brick_point(g, &idx, &px, &py, &pz, &bcx, &bcy, &bcz, &brad);
    int tid = threadIdx.x + BX * (threadIdx.y + BY * threadIdx.z);
    float psi = 0.0f;
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
            psi = fmaf(radial, angular_any(sh.l, coefs + sh.coef_start, dx, dy, dz), psi);
        }
        __syncthreads();
    }
    if (inside) store_value(out, idx, psi, mode, w);
}

