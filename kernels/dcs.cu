// Direct Coulomb summation of point charges onto an axis-aligned lattice (potential maps).
//
// Compiled at run time with NVRTC by src/compute/cuda/ (dcs.rs launches it). Atoms travel in constant
// memory in chunks of DCS_CHUNK float4 (x, y, z relative to the lattice origin in bohr, charge in e);
// the host launches once per chunk and the kernel adds the chunk's float sum into a double accumulator,
// so long sums keep their precision. Each thread owns DCS_UNROLL points of one lattice row, strided
// by the block width (coalesced stores); dy^2 + dz^2 is computed once per atom and reused for all of
// them. rsqrtf is the special-function-unit reciprocal square root (about 2 ulp).

#define DCS_CHUNK 4000
#define DCS_UNROLL 16
#define DCS_BLOCK_X 16
#define DCS_BLOCK_Y 16

__constant__ float4 dcs_atoms[DCS_CHUNK];

extern "C" __global__ void __launch_bounds__(DCS_BLOCK_X * DCS_BLOCK_Y)
dcs_chunk(double* __restrict__ acc, int nx, int ny, int nz, int k0, float spacing_x, float spacing_y,
          float spacing_z, int natoms) {
    int i0 = blockIdx.x * DCS_BLOCK_X * DCS_UNROLL + threadIdx.x;
    int j = blockIdx.y * DCS_BLOCK_Y + threadIdx.y;
    int kk = blockIdx.z;
    if (j >= ny || kk >= nz) return;
    float y = j * spacing_y;
    float z = (kk + k0) * spacing_z;
    float x0 = i0 * spacing_x;
    float dxstep = DCS_BLOCK_X * spacing_x;
    float e[DCS_UNROLL];
#pragma unroll
    for (int u = 0; u < DCS_UNROLL; ++u) e[u] = 0.0f;
#pragma unroll 4
    for (int a = 0; a < natoms; ++a) {
        float4 at = dcs_atoms[a];
        float dy = y - at.y, dz = z - at.z;
        float dyz2 = fmaf(dy, dy, dz * dz);
        float dx0 = x0 - at.x;
#pragma unroll
        for (int u = 0; u < DCS_UNROLL; ++u) {
            float dx = fmaf((float)u, dxstep, dx0);
            e[u] = fmaf(at.w, rsqrtf(fmaf(dx, dx, dyz2)), e[u]);
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
