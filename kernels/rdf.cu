// Pair-distance histograms for radial distribution functions (src/compute/cuda/rdf.rs launches these).
//
// All pairs (a, b), a from set A, b from set B: one thread holds RDF_A_PER_THREAD atoms of A in
// registers and walks set B in tiles staged through shared memory (every lane reads the same B atom:
// a broadcast). Distances within r_max are counted in per-warp shared-memory histograms with 32-bit
// shared atomics; a block never counts more than 2^32 - 1 pairs (the host bounds set B per launch),
// and at the end it adds its histogram into the 64-bit global one.
//
// The host prepends `#define RDF_MODE`:
//   0 open boundaries;
//   1 orthorhombic box, positions wrapped into [0, L): minimum image is min(|d|, L - |d|) per axis;
//   2 triclinic box (a along x, b in the xy plane), positions wrapped, box reduced on the host so that
//     |b_x| <= a_x / 2, |c_x| <= a_x / 2, |c_y| <= b_y / 2: the minimum image follows from one
//     rounding per axis in the order c, b, a (exact below half the smallest box width, which the host
//     requires of r_max);
// and `#define RDF_GROUPS 0|1` (1: skip pairs whose group ids match, e.g. the same residue).
//
// float4 positions: x, y, z, and w = group id (as an int bit pattern) when RDF_GROUPS is 1.

#ifndef RDF_MODE
#define RDF_MODE 0
#endif
#ifndef RDF_GROUPS
#define RDF_GROUPS 0
#endif

#define RDF_THREADS 256
#define RDF_WARPS (RDF_THREADS / 32)
#define RDF_TILE 512
#define RDF_A_PER_THREAD 2

struct RdfBox {
    // Rows a, b, c of the (reduced, lower-triangular) box matrix in Angstrom, and inverses of the
    // diagonal. For RDF_MODE 1 only ax, by, cz are used.
    float ax, bx, by, cx, cy, cz;
    float inv_ax, inv_by, inv_cz;
};

__device__ __forceinline__ float rdf_d2(float4 p, float4 q, const RdfBox& box) {
    float dx = p.x - q.x;
    float dy = p.y - q.y;
    float dz = p.z - q.z;
#if RDF_MODE == 1
    dx = fabsf(dx);
    dy = fabsf(dy);
    dz = fabsf(dz);
    dx = fminf(dx, box.ax - dx);
    dy = fminf(dy, box.by - dy);
    dz = fminf(dz, box.cz - dz);
#elif RDF_MODE == 2
    float s = rintf(dz * box.inv_cz);
    dz = fmaf(-s, box.cz, dz);
    dy = fmaf(-s, box.cy, dy);
    dx = fmaf(-s, box.cx, dx);
    s = rintf(dy * box.inv_by);
    dy = fmaf(-s, box.by, dy);
    dx = fmaf(-s, box.bx, dx);
    s = rintf(dx * box.inv_ax);
    dx = fmaf(-s, box.ax, dx);
#endif
    return fmaf(dx, dx, fmaf(dy, dy, dz * dz));
}

// `hist` holds `bins` 64-bit counts; shared memory: RDF_WARPS * bins u32 (when `per_warp`) or bins
// u32, followed by the tile of B.
extern "C" __global__ void __launch_bounds__(RDF_THREADS)
rdf_pairs(const float4* __restrict__ a, int na, const float4* __restrict__ b, int nb,
          unsigned long long* __restrict__ hist, int bins, int per_warp, float r2max, float inv_dr,
          RdfBox box) {
    extern __shared__ unsigned int smem[];
    const int copies = per_warp ? RDF_WARPS : 1;
    unsigned int* shist = smem;
    float4* tile = (float4*)(smem + ((copies * bins + 3) & ~3));
    for (int i = threadIdx.x; i < copies * bins; i += RDF_THREADS) shist[i] = 0u;
    unsigned int* my = shist + (per_warp ? (threadIdx.x >> 5) * bins : 0);

    float4 p[RDF_A_PER_THREAD];
    bool live[RDF_A_PER_THREAD];
    const int base = blockIdx.x * RDF_THREADS * RDF_A_PER_THREAD + threadIdx.x;
#pragma unroll
    for (int k = 0; k < RDF_A_PER_THREAD; k++) {
        int ia = base + k * RDF_THREADS;
        live[k] = ia < na;
        p[k] = live[k] ? a[ia] : make_float4(0.f, 0.f, 0.f, 0.f);
    }
    const int last = bins - 1;
    for (int t0 = 0; t0 < nb; t0 += RDF_TILE) {
        __syncthreads();
        int nt = min(RDF_TILE, nb - t0);
        for (int i = threadIdx.x; i < nt; i += RDF_THREADS) tile[i] = b[t0 + i];
        __syncthreads();
#pragma unroll 4
        for (int j = 0; j < nt; j++) {
            float4 q = tile[j];
#pragma unroll
            for (int k = 0; k < RDF_A_PER_THREAD; k++) {
                float d2 = rdf_d2(p[k], q, box);
#if RDF_GROUPS
                bool same = __float_as_int(p[k].w) == __float_as_int(q.w);
#else
                const bool same = false;
#endif
                if (d2 <= r2max && live[k] && !same) {
                    int bin = min((int)(sqrtf(d2) * inv_dr), last);
                    atomicAdd(&my[bin], 1u);
                }
            }
        }
    }
    __syncthreads();
    for (int i = threadIdx.x; i < bins; i += RDF_THREADS) {
        unsigned long long s = 0;
        for (int c = 0; c < copies; c++) s += shist[c * bins + i];
        if (s) atomicAdd(&hist[i], s);
    }
}

extern "C" __global__ void rdf_zero(unsigned long long* hist, int bins) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < bins) hist[i] = 0ull;
}
