// The solvent-excluded surface's field on a lattice (src/compute/cuda/ses.rs launches it; the
// definition is src/compute/ses.rs, the CPU reference src/compute/cpu/ses.rs): 0 outside the atoms'
// spheres inflated by the probe (where a probe centre can be), else 0.5 + 0.5 clamp((d - p) / p, -1, 1)
// with d the distance to the nearest point a probe centre can reach:
// - the nearest sampled probe centre (within 2p; 2p when none is);
// - where that distance is below the band (p plus a margin), for each inflated sphere i whose surface
//   can come nearer: R_i - |x - a_i| when no neighbour holds the point of sphere i straight out
//   through x; else, for each neighbour j that holds it, the nearest point of the circle where
//   spheres i and j meet, when no third neighbour of i holds it.
//
// One thread per lattice point. Spheres and probe centres arrive sorted into cells of the lattice's
// box (a counting sort on the host); SesGrid::cw is a cell's width in bohr, lo its corner relative
// to the lattice origin; items outside the box sit in the border cells, so a query clamped to the
// box still finds them. Positions are relative to the lattice origin (bohr, f32).

#define SES_BLOCK 128

// Twin of `SesGrid` in src/compute/cuda/ses.rs (20 four-byte fields).
struct SesGrid {
    int nx, ny, k0, nzs;
    float hx, hy, hz;
    float lox, loy, loz;
    float cw;
    int cnx, cny, cnz;
    float probe;      // p
    float reach;      // 2p
    float band;       // the exact terms apply below this distance
    float rmax;       // the largest inflated radius
    int n_total;      // nx * ny * nzs
    int pad;
};

__device__ __forceinline__ void ses_cell_range(const SesGrid& g, float c, float r, float lo, int n, int* a, int* b) {
    int i0 = (int)floorf((c - r - lo) / g.cw);
    int i1 = (int)floorf((c + r - lo) / g.cw);
    *a = max(i0, 0);
    *b = min(i1, n - 1);
}

__device__ __forceinline__ float ses_d2(float3 a, float3 b) {
    const float dx = a.x - b.x, dy = a.y - b.y, dz = a.z - b.z;
    return dx * dx + dy * dy + dz * dz;
}

// Whether a neighbour of sphere i other than `except` holds q (strictly).
__device__ bool ses_held(const float4* __restrict__ spheres, const unsigned int* __restrict__ nb_start,
                         const unsigned int* __restrict__ nb, int i, float3 q, int except) {
    for (unsigned int s = nb_start[i]; s < nb_start[i + 1]; s++) {
        const int k = (int)nb[s];
        if (k == except) continue;
        const float4 b = spheres[k];
        if (ses_d2(q, make_float3(b.x, b.y, b.z)) < b.w * b.w) return true;
    }
    return false;
}

// The exact terms of sphere i at x (rho = |x - a_i|, 0 < rho < R_i); a negative value when none.
__device__ float ses_boundary(const float4* __restrict__ spheres, const unsigned int* __restrict__ nb_start,
                              const unsigned int* __restrict__ nb, int i, float3 x, float rho) {
    const float4 A = spheres[i];
    const float3 a = make_float3(A.x, A.y, A.z);
    const float big = A.w;
    const float s = big / rho;
    const float3 q = make_float3(a.x + s * (x.x - a.x), a.y + s * (x.y - a.y), a.z + s * (x.z - a.z));
    float best = -1.0f;
    bool buried = false;
    for (unsigned int e = nb_start[i]; e < nb_start[i + 1]; e++) {
        const int j = (int)nb[e];
        const float4 B = spheres[j];
        const float3 b = make_float3(B.x, B.y, B.z);
        if (ses_d2(q, b) >= B.w * B.w) continue;
        buried = true;
        // The circle where spheres i and j meet, and its point nearest x.
        const float d = sqrtf(ses_d2(a, b));
        if (!(d > 0.0f && d < big + B.w && d > fabsf(big - B.w))) continue;
        const float3 n = make_float3((b.x - a.x) / d, (b.y - a.y) / d, (b.z - a.z) / d);
        const float t = (big * big - B.w * B.w + d * d) / (2.0f * d);
        const float radius = sqrtf(fmaxf(big * big - t * t, 0.0f));
        const float3 c = make_float3(a.x + t * n.x, a.y + t * n.y, a.z + t * n.z);
        const float3 v = make_float3(x.x - c.x, x.y - c.y, x.z - c.z);
        const float along = v.x * n.x + v.y * n.y + v.z * n.z;
        const float3 w = make_float3(v.x - along * n.x, v.y - along * n.y, v.z - along * n.z);
        const float len = sqrtf(w.x * w.x + w.y * w.y + w.z * w.z);
        if (len <= 1e-6f * fmaxf(radius, 1.0f)) continue;
        const float k = radius / len;
        const float3 p = make_float3(c.x + k * w.x, c.y + k * w.y, c.z + k * w.z);
        if (ses_held(spheres, nb_start, nb, i, p, j)) continue;
        const float dist = sqrtf(ses_d2(x, p));
        best = best < 0.0f ? dist : fminf(best, dist);
    }
    return buried ? best : big - rho;
}

// Grid: ceil(n_total / SES_BLOCK) blocks of SES_BLOCK threads; `out` holds the slab's values, x fastest.
extern "C" __global__ void __launch_bounds__(SES_BLOCK)
ses_field(const float4* __restrict__ spheres, const unsigned int* __restrict__ sphere_order,
          const unsigned int* __restrict__ sphere_start, const unsigned int* __restrict__ nb_start,
          const unsigned int* __restrict__ nb, const float4* __restrict__ probes,
          const unsigned int* __restrict__ probe_start, SesGrid g, float* __restrict__ out) {
    const int t = blockIdx.x * SES_BLOCK + threadIdx.x;
    if (t >= g.n_total) return;
    const int i = t % g.nx;
    const int j = (t / g.nx) % g.ny;
    const int kz = t / (g.nx * g.ny);
    const float3 x = make_float3(i * g.hx, j * g.hy, (g.k0 + kz) * g.hz);
    int cx0, cx1, cy0, cy1, cz0, cz1;
    // Inside the accessible surface?
    ses_cell_range(g, x.x, g.rmax, g.lox, g.cnx, &cx0, &cx1);
    ses_cell_range(g, x.y, g.rmax, g.loy, g.cny, &cy0, &cy1);
    ses_cell_range(g, x.z, g.rmax, g.loz, g.cnz, &cz0, &cz1);
    bool inside = false;
    for (int cz = cz0; cz <= cz1 && !inside; cz++) {
        for (int cy = cy0; cy <= cy1 && !inside; cy++) {
            const int row = g.cnx * (cy + g.cny * cz);
            for (unsigned int s = sphere_start[row + cx0]; s < sphere_start[row + cx1 + 1]; s++) {
                const float4 A = spheres[sphere_order[s]];
                if (ses_d2(x, make_float3(A.x, A.y, A.z)) < A.w * A.w) {
                    inside = true;
                    break;
                }
            }
        }
    }
    if (!inside) {
        out[t] = 0.0f;
        return;
    }
    // The sampled centres.
    float best = g.reach * g.reach;
    int px0, px1, py0, py1, pz0, pz1;
    ses_cell_range(g, x.x, g.reach, g.lox, g.cnx, &px0, &px1);
    ses_cell_range(g, x.y, g.reach, g.loy, g.cny, &py0, &py1);
    ses_cell_range(g, x.z, g.reach, g.loz, g.cnz, &pz0, &pz1);
    for (int cz = pz0; cz <= pz1; cz++) {
        for (int cy = py0; cy <= py1; cy++) {
            const int row = g.cnx * (cy + g.cny * cz);
            for (unsigned int s = probe_start[row + px0]; s < probe_start[row + px1 + 1]; s++) {
                const float4 c = probes[s];
                best = fminf(best, ses_d2(x, make_float3(c.x, c.y, c.z)));
            }
        }
    }
    // The exact terms, where they can move the surface.
    if (best < g.band * g.band) {
        for (int cz = cz0; cz <= cz1; cz++) {
            for (int cy = cy0; cy <= cy1; cy++) {
                const int row = g.cnx * (cy + g.cny * cz);
                for (unsigned int s = sphere_start[row + cx0]; s < sphere_start[row + cx1 + 1]; s++) {
                    const int si = (int)sphere_order[s];
                    const float4 A = spheres[si];
                    const float d2 = ses_d2(x, make_float3(A.x, A.y, A.z));
                    if (!(d2 < A.w * A.w)) continue;
                    const float rho = sqrtf(d2);
                    const float core = fmaxf(A.w - g.reach, 0.0f);
                    if (rho <= core || (A.w - rho) * (A.w - rho) >= best || !(rho > 0.0f)) continue;
                    const float d = ses_boundary(spheres, nb_start, nb, si, x, rho);
                    if (d >= 0.0f) best = fminf(best, d * d);
                }
            }
        }
    }
    const float d = sqrtf(best);
    out[t] = 0.5f + 0.5f * fminf(fmaxf((d - g.probe) / g.probe, -1.0f), 1.0f);
}
