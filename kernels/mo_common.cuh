// Molecular-orbital kernels: helpers shared by the general form (kernels/mo.cu, basis in device arrays)
// and the form generated for one basis set (src/compute/cuda/mo.rs, basis as literals).
//
// Compiled at run time with NVRTC by src/compute/cuda/ (see mod.rs there), which also generates the
// specialised form (basis as literals) from the same helpers below. Twin of the host structs in
// src/compute/cuda/mo.rs: `ShellRec` <-> `GpuShell` (#[repr(C)], same field order).
//
// One thread per lattice point; a block is an 8 x 8 x 4 brick of points. Before evaluating, the block
// screens the shells: a shell is kept when its cutoff sphere reaches the brick's bounding sphere. The
// kept shells are compacted in order (ballot + prefix sum), so the summation order, and therefore the
// result, does not depend on scheduling.
//
// Each shell carries its orbital coefficients already contracted with the angular functions: a
// homogeneous polynomial of degree l in Cartesian monomials, ordered a = l..0, b = l-a..0, c = l-a-b.
// Radial factors use 2^x with exponents pre-scaled by log2(e), through ex2_ftz below.

#define BX 8
#define BY 8
#define BZ 4
#define NTHREADS (BX * BY * BZ)
#define CHUNK 1024
#define PRIM_SKIP_LOG2 40.0f  // 2^-40: primitive negligible (mo.rs PRIM_SKIP_LOG2)

// 2^x on the special-function unit (ex2.approx, about 2 ulp, the instruction exp2f also uses). The
// flush-to-zero form: the non-ftz exp2f wraps every call in four extra instructions that rescale
// results below 2^-126, which a Gaussian radial factor never needs (they are zero to float accuracy).
__device__ __forceinline__ float ex2_ftz(float x) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

struct ShellRec {
    float cx, cy, cz;  // centre relative to the lattice origin, bohr
    float cutoff2;     // squared radius beyond which the shell's contribution is negligible, bohr^2
    int l;
    int prim_start;
    int nprim;
    int coef_start;    // into the contracted angular coefficients of the current orbital
};

struct LatticeArgs {
    float s[9];        // step vectors (bohr), s[3*axis + component]
    int nx, ny, nz;    // points of the slab
    int k0;            // first lattice plane of the slab
};

template <int L>
__device__ __forceinline__ float angular_poly(const float* __restrict__ c, float x, float y, float z) {
    float xp[L + 1], yp[L + 1], zp[L + 1];
    xp[0] = 1.0f; yp[0] = 1.0f; zp[0] = 1.0f;
#pragma unroll
    for (int i = 1; i <= L; ++i) { xp[i] = xp[i - 1] * x; yp[i] = yp[i - 1] * y; zp[i] = zp[i - 1] * z; }
    float acc = 0.0f;
    int m = 0;
#pragma unroll
    for (int a = L; a >= 0; --a) {
#pragma unroll
        for (int b = L - a; b >= 0; --b) {
            acc = fmaf(__ldg(c + m), xp[a] * yp[b] * zp[L - a - b], acc);
            ++m;
        }
    }
    return acc;
}

#ifndef GEN_MAX_L
#define GEN_MAX_L 6  // the host defines the basis set's highest l, so unused cases cost no registers
#endif

__device__ __forceinline__ float angular_any(int l, const float* __restrict__ c, float x, float y, float z) {
    switch (l) {
        case 0: return __ldg(c);
#if GEN_MAX_L >= 1
        case 1: return angular_poly<1>(c, x, y, z);
#endif
#if GEN_MAX_L >= 2
        case 2: return angular_poly<2>(c, x, y, z);
#endif
#if GEN_MAX_L >= 3
        case 3: return angular_poly<3>(c, x, y, z);
#endif
#if GEN_MAX_L >= 4
        case 4: return angular_poly<4>(c, x, y, z);
#endif
#if GEN_MAX_L >= 5
        case 5: return angular_poly<5>(c, x, y, z);
#endif
#if GEN_MAX_L >= 6
        case 6: return angular_poly<6>(c, x, y, z);
#endif
        default: return __int_as_float(0x7fc00000);  // NaN: rejected by the host check
    }
}

// Position of this thread's point relative to the lattice origin, and whether it lies in the slab.
__device__ __forceinline__ bool brick_point(const LatticeArgs& g, int* idx, float* px, float* py, float* pz,
                                            float* bcx, float* bcy, float* bcz, float* brad) {
    int i = blockIdx.x * BX + threadIdx.x;
    int j = blockIdx.y * BY + threadIdx.y;
    int kk = blockIdx.z * BZ + threadIdx.z;
    float fi = (float)i, fj = (float)j, fk = (float)(kk + g.k0);
    *px = fi * g.s[0] + fj * g.s[3] + fk * g.s[6];
    *py = fi * g.s[1] + fj * g.s[4] + fk * g.s[7];
    *pz = fi * g.s[2] + fj * g.s[5] + fk * g.s[8];
    // Bounding sphere of the whole brick (all threads compute the same values).
    float ci = blockIdx.x * BX + 0.5f * (BX - 1), cj = blockIdx.y * BY + 0.5f * (BY - 1);
    float ck = blockIdx.z * BZ + g.k0 + 0.5f * (BZ - 1);
    *bcx = ci * g.s[0] + cj * g.s[3] + ck * g.s[6];
    *bcy = ci * g.s[1] + cj * g.s[4] + ck * g.s[7];
    *bcz = ci * g.s[2] + cj * g.s[5] + ck * g.s[8];
    // Farthest corner of the brick (a parallelepiped): the largest of |hx s0 +- hy s1 +- hz s2|.
    float hx = 0.5f * (BX - 1), hy = 0.5f * (BY - 1), hz = 0.5f * (BZ - 1);
    float r = 0.0f;
#pragma unroll
    for (int c = 0; c < 4; ++c) {
        float sy = (c & 1) ? -hy : hy, sz = (c & 2) ? -hz : hz;
        float vx = hx * g.s[0] + sy * g.s[3] + sz * g.s[6];
        float vy = hx * g.s[1] + sy * g.s[4] + sz * g.s[7];
        float vz = hx * g.s[2] + sy * g.s[5] + sz * g.s[8];
        r = fmaxf(r, sqrtf(vx * vx + vy * vy + vz * vz));
    }
    r *= 1.0001f;  // rounding margin
    *brad = r;
    *idx = i + g.nx * (j + g.ny * kk);
    return i < g.nx && j < g.ny && kk < g.nz;
}

// Ordered compaction of the flags of one chunk: returns the number kept, writes their ids (and one
// value each) to list (and vals).
__device__ __forceinline__ int compact_ordered(bool keep, int id, float val, int* list, float* vals,
                                               int* warp_counts) {
    int tid = threadIdx.x + BX * (threadIdx.y + BY * threadIdx.z);
    int lane = tid & 31, warp = tid >> 5;
    unsigned ballot = __ballot_sync(0xffffffffu, keep);
    if (lane == 0) warp_counts[warp] = __popc(ballot);
    __syncthreads();
    int before = 0, total = 0;
#pragma unroll
    for (int w = 0; w < NTHREADS / 32; ++w) {
        int c = warp_counts[w];
        before += (w < warp) ? c : 0;
        total += c;
    }
    if (keep) {
        int pos = before + __popc(ballot & ((1u << lane) - 1u));
        list[pos] = id;
        vals[pos] = val;
    }
    __syncthreads();
    return total;
}

// mode 0: out = psi; mode 1: out = w * psi^2; mode 2: out += w * psi^2.
__device__ __forceinline__ void store_value(float* out, int idx, float psi, int mode, float w) {
    if (mode == 0) out[idx] = psi;
    else if (mode == 1) out[idx] = w * psi * psi;
    else out[idx] += w * psi * psi;
}
