// Implicit ligand sampling (Cohen et al. 2006): probe occupancy exp(-U/kT) at the sample points of a
// map, summed over the probe's orientations, for one frame.
//
// Compiled at run time with NVRTC by src/compute/cuda/ils.rs (which launches it; the host prepares the
// atoms in src/compute/ils.rs). Sample point (a, b, c) sits at (a, b, c) * step from the first sample
// point; atom positions arrive relative to that point. Atoms are sorted into cubic bins (x fastest) of
// `bin` Angstrom over the samples' box grown by `reach` (cutoff plus the probe's radius): float4
// (x, y, z, sqrt(eps_i / kT)) and float2 (rmin_i / 2, squared exclusion radius). The probe's atom
// offsets per orientation (float4, orientation o, atom j at o * n_probe + j) and its parameters
// (sqrt(eps_j / kT), rmin_j / 2) live in constant memory; orientations beyond ILS_MAX_OFF / n_probe
// take further launches that add to `out` (`accumulate`).
//
// One thread per sample point. The s^3 sample points of a voxel fall in s^3 position classes
// (a + s (b + s c) for the sample offsets a, b, c); a block holds ILS_BX x ILS_BY x ILS_BZ voxels' points
// of one class (blockIdx.z = z block * s^3 + class), so the class's orientation offsets (the set turned by
// the class's rotation, see `Orientations` in src/model/ils.rs; one set for all classes where
// `classes` is 1) are read by every thread of the block at one address. First the exclusion pass:
// a point with an atom closer than that atom's exclusion radius is excluded (it lies above the map's
// cap whatever the orientation; see src/compute/ils.rs); a block whose points are all excluded stops
// there. Then per bin row (y, z) within reach of the block's box, the run of bins along x that the
// row's remaining reach allows (contiguous atoms); all threads of a warp read the same atom (one
// broadcast load) and add its Lennard-Jones term eps_ij [(R/r)^12 - 2 (R/r)^6] (in kT) to ILS_OG
// orientation sums held in registers, for every pair within the cutoff (hard cutoff, no switching).
// The reciprocal is the SFU's approximation (__fdividef) refined by one Newton step; exp is __expf.
// A second kernel averages the samples of each voxel.

#define ILS_MAX_OFF 2048
#define ILS_MAX_PROBE 16
#define ILS_OG 16
#define ILS_BX 8
#define ILS_BY 4
#define ILS_BZ 4

__constant__ float4 ils_off[ILS_MAX_OFF];
__constant__ float2 ils_probe[ILS_MAX_PROBE];

// Twin of `IlsArgs` in src/compute/cuda/ils.rs (same field order).
struct IlsArgs {
    int nx, ny, nz;           // sample points per axis (voxels times s)
    int vx, vy, vz;           // voxels per axis
    int s;                    // sample points per voxel edge
    int classes;              // orientation classes in constant memory (1 or s^3)
    int bx, by, bz;           // bins per axis
    float step;               // sample spacing, Angstrom
    float bin;                // bin edge, Angstrom
    float blo_x, blo_y, blo_z; // corner of bin (0, 0, 0) relative to the first sample point
    float reach;              // cutoff + probe radius
    float cutoff2;            // squared cutoff
    float excl_reach;         // largest exclusion radius
    int n_orient;             // orientations in this launch
    int n_probe;              // probe atoms per orientation
    int accumulate;           // add to `out` instead of writing it
};

__device__ __forceinline__ int ils_clampi(int v, int lo, int hi) { return v < lo ? lo : (v > hi ? hi : v); }

extern "C" __global__ void __launch_bounds__(ILS_BX * ILS_BY * ILS_BZ)
ils_samples(const float4* __restrict__ atoms, const float2* __restrict__ par, const int* __restrict__ starts,
            IlsArgs g, float* __restrict__ out) {
    const int s3 = g.s * g.s * g.s;
    const int pc = blockIdx.z % s3;
    const int zb = blockIdx.z / s3;
    const int oc = g.classes == 1 ? 0 : pc;
    const int cx = pc % g.s, cy = (pc / g.s) % g.s, cz = pc / (g.s * g.s);
    const int vx = blockIdx.x * ILS_BX + threadIdx.x;
    const int vy = blockIdx.y * ILS_BY + threadIdx.y;
    const int vz = zb * ILS_BZ + threadIdx.z;
    const bool inside = vx < g.vx && vy < g.vy && vz < g.vz;
    const int ix = vx * g.s + cx, iy = vy * g.s + cy, iz = vz * g.s + cz;
    const float px = ix * g.step, py = iy * g.step, pz = iz * g.step;
    const size_t idx = inside ? (size_t)ix + (size_t)g.nx * ((size_t)iy + (size_t)g.ny * (size_t)iz) : 0;

    // Exclusion pass over the bins within the largest exclusion radius of this point.
    bool excluded = !inside;
    if (inside && g.excl_reach > 0.f) {
        const int x0 = ils_clampi((int)floorf((px - g.excl_reach - g.blo_x) / g.bin), 0, g.bx - 1);
        const int x1 = ils_clampi((int)floorf((px + g.excl_reach - g.blo_x) / g.bin), 0, g.bx - 1);
        const int y0 = ils_clampi((int)floorf((py - g.excl_reach - g.blo_y) / g.bin), 0, g.by - 1);
        const int y1 = ils_clampi((int)floorf((py + g.excl_reach - g.blo_y) / g.bin), 0, g.by - 1);
        const int z0 = ils_clampi((int)floorf((pz - g.excl_reach - g.blo_z) / g.bin), 0, g.bz - 1);
        const int z1 = ils_clampi((int)floorf((pz + g.excl_reach - g.blo_z) / g.bin), 0, g.bz - 1);
        for (int z = z0; z <= z1 && !excluded; ++z) {
            for (int y = y0; y <= y1 && !excluded; ++y) {
                const int row = g.bx * (y + g.by * z);
                const int a1 = starts[row + x1 + 1];
                for (int a = starts[row + x0]; a < a1; ++a) {
                    const float4 at = atoms[a];
                    const float dx = at.x - px, dy = at.y - py, dz = at.z - pz;
                    if (dx * dx + dy * dy + dz * dz < par[a].y) {
                        excluded = true;
                        break;
                    }
                }
            }
        }
    }
    if (__syncthreads_and(excluded)) {
        if (inside && !g.accumulate) out[idx] = 0.f;
        return;
    }

    // The block's box of sample points.
    const float tx0 = ((int)blockIdx.x * ILS_BX * g.s + cx) * g.step;
    const float ty0 = ((int)blockIdx.y * ILS_BY * g.s + cy) * g.step;
    const float tz0 = (zb * ILS_BZ * g.s + cz) * g.step;
    const float tx1 = ((min((int)(blockIdx.x + 1) * ILS_BX, g.vx) - 1) * g.s + cx) * g.step;
    const float ty1 = ((min((int)(blockIdx.y + 1) * ILS_BY, g.vy) - 1) * g.s + cy) * g.step;
    const float tz1 = ((min((zb + 1) * ILS_BZ, g.vz) - 1) * g.s + cz) * g.step;
    const float reach2 = g.reach * g.reach;
    const int y0 = ils_clampi((int)floorf((ty0 - g.reach - g.blo_y) / g.bin), 0, g.by - 1);
    const int y1 = ils_clampi((int)floorf((ty1 + g.reach - g.blo_y) / g.bin), 0, g.by - 1);
    const int z0 = ils_clampi((int)floorf((tz0 - g.reach - g.blo_z) / g.bin), 0, g.bz - 1);
    const int z1 = ils_clampi((int)floorf((tz1 + g.reach - g.blo_z) / g.bin), 0, g.bz - 1);

    float rho = 0.f;
    for (int o0 = 0; o0 < g.n_orient; o0 += ILS_OG) {
        const int no = min(ILS_OG, g.n_orient - o0);
        float u[ILS_OG];
#pragma unroll
        for (int k = 0; k < ILS_OG; ++k) u[k] = 0.f;
        for (int z = z0; z <= z1; ++z) {
            const float zlo = g.blo_z + z * g.bin, zhi = zlo + g.bin;
            const float dz = fmaxf(0.f, fmaxf(zlo - tz1, tz0 - zhi));
            for (int y = y0; y <= y1; ++y) {
                const float ylo = g.blo_y + y * g.bin, yhi = ylo + g.bin;
                const float dy = fmaxf(0.f, fmaxf(ylo - ty1, ty0 - yhi));
                const float rem2 = reach2 - dy * dy - dz * dz;
                if (rem2 < 0.f) continue;
                const float rem = sqrtf(rem2);
                const int x0 = ils_clampi((int)floorf((tx0 - rem - g.blo_x) / g.bin), 0, g.bx - 1);
                const int x1 = ils_clampi((int)floorf((tx1 + rem - g.blo_x) / g.bin), 0, g.bx - 1);
                const int row = g.bx * (y + g.by * z);
                const int a1 = starts[row + x1 + 1];
                for (int a = starts[row + x0]; a < a1; ++a) {
                    const float4 at = atoms[a];
                    if (at.w == 0.f) continue;
                    const float rh = par[a].x;
                    const float dx = at.x - px, dy2 = at.y - py, dz2 = at.z - pz;
                    for (int j = 0; j < g.n_probe; ++j) {
                        const float2 pj = ils_probe[j];
                        const float e = at.w * pj.x;
                        const float r = rh + pj.y;
                        const float r2min = r * r;
#pragma unroll
                        for (int k = 0; k < ILS_OG; ++k) {
                            if (k < no) {
                                const float4 o = ils_off[(oc * g.n_orient + o0 + k) * g.n_probe + j];
                                const float qx = dx - o.x, qy = dy2 - o.y, qz = dz2 - o.z;
                                const float r2 = fmaxf(fmaf(qx, qx, fmaf(qy, qy, qz * qz)), 1e-12f);
                                float inv = __fdividef(1.f, r2);
                                inv = inv * fmaf(-r2, inv, 2.f);
                                const float s2 = r2min * inv;
                                const float s6 = s2 * s2 * s2;
                                const float t = e * s6 * (s6 - 2.f);
                                u[k] += (r2 < g.cutoff2 && e > 0.f) ? t : 0.f;
                            }
                        }
                    }
                }
            }
        }
#pragma unroll
        for (int k = 0; k < ILS_OG; ++k) {
            if (k < no) rho += __expf(-u[k]);
        }
    }
    if (inside) {
        if (excluded) {
            if (!g.accumulate) out[idx] = 0.f;
        } else {
            out[idx] = g.accumulate ? out[idx] + rho : rho;
        }
    }
}

// Mean of each voxel's s^3 samples, times `scale` (1 / orientations evaluated): voxel (i, j, k) holds
// samples (i s .. i s + s - 1, ...).
extern "C" __global__ void ils_voxels(const float* __restrict__ samples, int snx, int sny, int s, float scale,
                                      float* __restrict__ voxels, int vx, int vy, int vz) {
    const size_t v = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    const size_t n = (size_t)vx * vy * vz;
    if (v >= n) return;
    const int i = (int)(v % vx), j = (int)((v / vx) % vy), k = (int)(v / ((size_t)vx * vy));
    float sum = 0.f;
    for (int c = 0; c < s; ++c) {
        for (int b = 0; b < s; ++b) {
            const size_t row = (size_t)snx * ((size_t)(j * s + b) + (size_t)sny * (size_t)(k * s + c));
            for (int a = 0; a < s; ++a) sum += samples[row + i * s + a];
        }
    }
    voxels[v] = sum * scale / (float)(s * s * s);
}
