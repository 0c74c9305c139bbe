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

// ---- Cell list (src/compute/cuda/rdf.rs, `CellPlan`) ----
//
// For r_max well below the box, atoms are sorted into cells at least r_max wide (a counting sort on
// the device: rdf_cell_index counts atoms per cell, rdf_cell_scan turns counts into starts, and
// rdf_cell_scatter places each atom), and rdf_cells visits only the pairs of neighbouring cells.
// Every visited pair goes through rdf_d2 and the binning of rdf_pairs, so the histogram equals the
// all-pairs kernel's exactly (integer counts); the host widens the cells by a margin above f32
// rounding so no pair within r_max lies in cells that are not neighbours. Periodic grids have at
// least 3 cells per side, so the 27 neighbours of a cell are distinct cells. When set A and set B
// are the same atoms (RDF_HALF 1), only the cell itself and 13 of its neighbours are visited, and a
// pair of different cells counts twice ((a, b) and (b, a); rdf_d2 is symmetric), the cell itself
// once per ordered pair, as the all-pairs kernel does.

#ifndef RDF_HALF
#define RDF_HALF 0
#endif
#define RDF_CELL_THREADS 128
#define RDF_CELL_WARPS (RDF_CELL_THREADS / 32)
#define RDF_CELL_TA 128
#define RDF_CELL_TB 512

// The twin of `CellPlan` in src/compute/cuda/rdf.rs (same field order).
struct RdfCells {
    int nx, ny, nz;
    int periodic;
    float lo_x, lo_y, lo_z;
    float inv_wx, inv_wy, inv_wz;
};

__device__ __forceinline__ int rdf_cell_axis(float p, float lo, float inv_w, int n) {
    int c = (int)((p - lo) * inv_w);
    return min(max(c, 0), n - 1);
}

__device__ __forceinline__ int rdf_cell_of(float4 p, const RdfCells& g) {
    int cx = rdf_cell_axis(p.x, g.lo_x, g.inv_wx, g.nx);
    int cy = rdf_cell_axis(p.y, g.lo_y, g.inv_wy, g.ny);
    int cz = rdf_cell_axis(p.z, g.lo_z, g.inv_wz, g.nz);
    return cx + g.nx * (cy + g.ny * cz);
}

extern "C" __global__ void rdf_cell_index(const float4* __restrict__ pos, int n, RdfCells g,
                                          int* __restrict__ cell_of, unsigned int* __restrict__ counts) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    int c = rdf_cell_of(pos[i], g);
    cell_of[i] = c;
    atomicAdd(&counts[c], 1u);
}

// One block of 1024 threads: starts[c] = sum of counts[0..c) for c in 0..=ncells; counts becomes a
// copy of starts[0..ncells) (the fill cursor of rdf_cell_scatter).
extern "C" __global__ void __launch_bounds__(1024)
rdf_cell_scan(unsigned int* __restrict__ counts, unsigned int* __restrict__ starts, int ncells) {
    __shared__ unsigned int part[1024];
    int t = threadIdx.x;
    int per = (ncells + 1023) / 1024;
    int b = min(t * per, ncells), e = min(b + per, ncells);
    unsigned int s = 0;
    for (int c = b; c < e; c++) s += counts[c];
    part[t] = s;
    __syncthreads();
    for (int off = 1; off < 1024; off <<= 1) {
        unsigned int v = t >= off ? part[t - off] : 0u;
        __syncthreads();
        part[t] += v;
        __syncthreads();
    }
    unsigned int run = part[t] - s;
    for (int c = b; c < e; c++) {
        unsigned int k = counts[c];
        starts[c] = run;
        counts[c] = run;
        run += k;
    }
    if (t == 1023) starts[ncells] = part[1023];
}

extern "C" __global__ void rdf_cell_scatter(const float4* __restrict__ pos, int n, const int* __restrict__ cell_of,
                                            unsigned int* __restrict__ fill, float4* __restrict__ sorted) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    unsigned int slot = atomicAdd(&fill[cell_of[i]], 1u);
    sorted[slot] = pos[i];
}

__device__ __forceinline__ void rdf_flush(unsigned int* shist, int copies, int bins,
                                          unsigned long long* __restrict__ hist) {
    __syncthreads();
    for (int i = threadIdx.x; i < bins; i += RDF_CELL_THREADS) {
        unsigned long long s = 0;
        for (int c = 0; c < copies; c++) {
            s += shist[c * bins + i];
            shist[c * bins + i] = 0u;
        }
        if (s) atomicAdd(&hist[i], s);
    }
    __syncthreads();
}

// Blocks walk the cells of set A's grid (grid-stride). Shared memory: the histogram copies (per warp
// when `per_warp`), then a tile of RDF_CELL_TA atoms of A and one of RDF_CELL_TB atoms of B.
extern "C" __global__ void __launch_bounds__(RDF_CELL_THREADS)
rdf_cells(const float4* __restrict__ a, const unsigned int* __restrict__ a_start, const float4* __restrict__ b,
          const unsigned int* __restrict__ b_start, RdfCells g, unsigned long long* __restrict__ hist, int bins,
          int per_warp, float r2max, float inv_dr, RdfBox box) {
    extern __shared__ unsigned int smem[];
    const int copies = per_warp ? RDF_CELL_WARPS : 1;
    unsigned int* shist = smem;
    float4* ta = (float4*)(smem + ((copies * bins + 3) & ~3));
    float4* tb = ta + RDF_CELL_TA;
    for (int i = threadIdx.x; i < copies * bins; i += RDF_CELL_THREADS) shist[i] = 0u;
    unsigned int* my = shist + (per_warp ? (threadIdx.x >> 5) * bins : 0);
    const int last = bins - 1;
    const int ncells = g.nx * g.ny * g.nz;
    // Pairs counted into the shared copies since the last flush (the same value in every thread); a
    // flush before it could pass 2^31 keeps the 32-bit shared counts exact.
    unsigned long long pending = 0;
    __syncthreads();
    for (int c = blockIdx.x; c < ncells; c += gridDim.x) {
        const int cx = c % g.nx, cy = (c / g.nx) % g.ny, cz = c / (g.nx * g.ny);
        const unsigned int a0 = a_start[c], a1 = a_start[c + 1];
        for (unsigned int at = a0; at < a1; at += RDF_CELL_TA) {
            const int na = (int)min((unsigned int)RDF_CELL_TA, a1 - at);
#if RDF_HALF
            for (int s = 13; s < 27; s++) {
#else
            for (int s = 0; s < 27; s++) {
#endif
                int nx = cx + s % 3 - 1, ny = cy + (s / 3) % 3 - 1, nz = cz + s / 9 - 1;
                if (g.periodic) {
                    nx = nx < 0 ? nx + g.nx : (nx >= g.nx ? nx - g.nx : nx);
                    ny = ny < 0 ? ny + g.ny : (ny >= g.ny ? ny - g.ny : ny);
                    nz = nz < 0 ? nz + g.nz : (nz >= g.nz ? nz - g.nz : nz);
                } else if (nx < 0 || nx >= g.nx || ny < 0 || ny >= g.ny || nz < 0 || nz >= g.nz) {
                    continue;
                }
                const int nc = nx + g.nx * (ny + g.ny * nz);
#if RDF_HALF
                const unsigned int w = s == 13 ? 1u : 2u;
#else
                const unsigned int w = 1u;
#endif
                const unsigned int b0 = b_start[nc], b1 = b_start[nc + 1];
                for (unsigned int bt = b0; bt < b1; bt += RDF_CELL_TB) {
                    const int nb = (int)min((unsigned int)RDF_CELL_TB, b1 - bt);
                    const unsigned long long work = (unsigned long long)na * (unsigned long long)nb * w;
                    if (pending + work > 0x7fffffffull) {
                        rdf_flush(shist, copies, bins, hist);
                        pending = 0;
                    }
                    pending += work;
                    __syncthreads();
                    for (int i = threadIdx.x; i < na; i += RDF_CELL_THREADS) ta[i] = a[at + i];
                    for (int i = threadIdx.x; i < nb; i += RDF_CELL_THREADS) tb[i] = b[bt + i];
                    __syncthreads();
                    // Pair k = i * nb + j, k = threadIdx.x, threadIdx.x + RDF_CELL_THREADS, ...
                    const int total = na * nb;
                    const int di = RDF_CELL_THREADS / nb, dj = RDF_CELL_THREADS % nb;
                    int i = threadIdx.x / nb, j = threadIdx.x % nb;
                    for (int k = threadIdx.x; k < total; k += RDF_CELL_THREADS) {
                        float4 p = ta[i], q = tb[j];
                        float d2 = rdf_d2(p, q, box);
#if RDF_GROUPS
                        bool same = __float_as_int(p.w) == __float_as_int(q.w);
#else
                        const bool same = false;
#endif
                        if (d2 <= r2max && !same) {
                            int bin = min((int)(sqrtf(d2) * inv_dr), last);
                            atomicAdd(&my[bin], w);
                        }
                        i += di;
                        j += dj;
                        if (j >= nb) {
                            j -= nb;
                            i += 1;
                        }
                    }
                }
            }
        }
    }
    rdf_flush(shist, copies, bins, hist);
}
