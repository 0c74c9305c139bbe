// The molecular-surface density on a lattice (src/compute/cuda/molsurf.rs launches it; the definition
// is src/compute/molsurf.rs, the CPU reference src/compute/cpu/molsurf.rs): the sum over atoms of
// amp * exp(-expo * r^2) where r^2 <= rc2 (the truncation radius squared), zero beyond, computed as
// 2^(log2(amp) - expo * log2(e) * r^2) on the special-function unit (the host stores both factors
// in that form).
//
// The atoms arrive binned into cells of the lattice by the counting sort of kernels/rdf.cu
// (rdf_cell_index, rdf_cell_scan, rdf_cell_scatter) run on float4 positions in lattice-index units,
// whose w holds the atom's index as an int bit pattern. A cell is MsGrid::cw{x,y,z} lattice points
// wide (about half the reach); MsGrid::r{x,y,z}, the reach, is more than the largest truncation radius
// in points, with a margin far above the f32 rounding of the binning. Atoms outside the lattice sit in
// the border cells. A block of MS_BX x MS_BY x (MS_BZ * MS_PZ) points (each thread MS_PZ points along
// z) visits the cells that hold its brick widened by the reach on every side, one row of cells
// (contiguous in the sorted order) at a time, staging the atoms through shared memory.
//
// Precision: each atom holds its nearest lattice index (int) and its offset from that point (f32,
// at most half a step per axis), so a displacement (i - ia) * h - off carries only its own f32
// rounding, however far the lattice lies from the origin. f32 sums of the tens of positive terms that reach a point keep the values within a few 1e-7
// relative of the CPU engine's float64 sum; only points at an atom's truncation radius (to f32
// rounding) can differ, by that atom's truncated tail (1e-3). ex2.approx (about 2 ulp) of arguments
// above -10 (terms above 1e-3) adds a few 1e-7 relative.

#define MS_BX 8
#define MS_BY 8
#define MS_BZ 4
#define MS_PZ 2
#define MS_THREADS (MS_BX * MS_BY * MS_BZ)

// Twin of `MsAtom` in src/compute/cuda/molsurf.rs (40 bytes, no padding on either side).
struct MsAtom {
    int ix, iy, iz;
    float ox, oy, oz;
    float expo2; // Gaussian exponent times log2(e), bohr^-2
    float lamp;  // log2 of the amplitude
    float rc2;   // truncation radius squared, bohr^2
    int pad;
};

// 2^x on the special-function unit (the instruction exp2f also uses); arguments here are above -10.
__device__ __forceinline__ float ms_ex2(float x) {
    float r;
    asm("ex2.approx.ftz.f32 %0, %1;" : "=f"(r) : "f"(x));
    return r;
}

// Twin of `MsGrid` in src/compute/cuda/molsurf.rs (16 four-byte fields).
struct MsGrid {
    int nx, ny;
    int k0, nzs;
    float hx, hy, hz;
    int cwx, cwy, cwz;
    int cnx, cny, cnz;
    int rx, ry, rz;
};

// Grid: (ceil(nx / MS_BX), ceil(ny / MS_BY), ceil(nzs / (MS_BZ * MS_PZ))) blocks of
// (MS_BX, MS_BY, MS_BZ) threads. `out` holds the slab's nx * ny * nzs values, x fastest.
extern "C" __global__ void __launch_bounds__(MS_THREADS)
molsurf_field(const MsAtom* __restrict__ atoms, const float4* __restrict__ sorted,
              const unsigned int* __restrict__ start, MsGrid g, float* __restrict__ out) {
    // The staged atoms, as three vectors each (three shared loads per atom, broadcast to the warp).
    __shared__ int4 t_idx[MS_THREADS];
    __shared__ float4 t_off[MS_THREADS];
    __shared__ float2 t_gau[MS_THREADS];
    const int t = threadIdx.x + MS_BX * (threadIdx.y + MS_BY * threadIdx.z);
    const int i = blockIdx.x * MS_BX + threadIdx.x;
    const int j = blockIdx.y * MS_BY + threadIdx.y;
    const int kz0 = blockIdx.z * (MS_BZ * MS_PZ);
    float acc[MS_PZ];
    int k[MS_PZ];
#pragma unroll
    for (int p = 0; p < MS_PZ; p++) {
        acc[p] = 0.0f;
        k[p] = g.k0 + kz0 + threadIdx.z + p * MS_BZ;
    }
    // The brick's points, then the cells that can reach them.
    const int bi0 = blockIdx.x * MS_BX, bi1 = min(bi0 + MS_BX, g.nx) - 1;
    const int bj0 = blockIdx.y * MS_BY, bj1 = min(bj0 + MS_BY, g.ny) - 1;
    const int bk0 = g.k0 + kz0, bk1 = g.k0 + min(kz0 + MS_BZ * MS_PZ, g.nzs) - 1;
    const int cx0 = max(bi0 - g.rx, 0) / g.cwx, cx1 = min((bi1 + g.rx) / g.cwx, g.cnx - 1);
    const int cy0 = max(bj0 - g.ry, 0) / g.cwy, cy1 = min((bj1 + g.ry) / g.cwy, g.cny - 1);
    const int cz0 = max(bk0 - g.rz, 0) / g.cwz, cz1 = min((bk1 + g.rz) / g.cwz, g.cnz - 1);
    for (int cz = cz0; cz <= cz1; cz++) {
        for (int cy = cy0; cy <= cy1; cy++) {
            const int row = g.cnx * (cy + g.cny * cz);
            const unsigned int s0 = start[row + cx0];
            const unsigned int s1 = start[row + cx1 + 1];
            for (unsigned int base = s0; base < s1; base += MS_THREADS) {
                const int m = (int)min((unsigned int)MS_THREADS, s1 - base);
                __syncthreads();
                if (t < m) {
                    const MsAtom A = atoms[__float_as_int(sorted[base + t].w)];
                    t_idx[t] = make_int4(A.ix, A.iy, A.iz, 0);
                    t_off[t] = make_float4(A.ox, A.oy, A.oz, A.expo2);
                    t_gau[t] = make_float2(A.lamp, A.rc2);
                }
                __syncthreads();
                for (int a = 0; a < m; a++) {
                    const int4 c = t_idx[a];
                    const float4 o = t_off[a];
                    const float2 w = t_gau[a];
                    const float dx = (float)(i - c.x) * g.hx - o.x;
                    const float dy = (float)(j - c.y) * g.hy - o.y;
                    const float dxy2 = dx * dx + dy * dy;
                    if (dxy2 > w.y) continue;
#pragma unroll
                    for (int p = 0; p < MS_PZ; p++) {
                        const float dz = (float)(k[p] - c.z) * g.hz - o.z;
                        const float r2 = dxy2 + dz * dz;
                        if (r2 <= w.y) acc[p] += ms_ex2(fmaf(-o.w, r2, w.x));
                    }
                }
            }
        }
    }
    if (i >= g.nx || j >= g.ny) return;
#pragma unroll
    for (int p = 0; p < MS_PZ; p++) {
        const int kz = kz0 + threadIdx.z + p * MS_BZ;
        if (kz < g.nzs) out[i + g.nx * (j + g.ny * kz)] = acc[p];
    }
}
