// The coefficient maps of the linearized Poisson-Boltzmann finite differences built on the device, as
// the CPU engine builds them (src/compute/cpu/pb_maps.rs, pb_surface.rs, after APBS's Vpmg_fillco), so
// that the device's maps equal the host's: the dielectric on the three staggered lattices from the
// molecular surface (`srfm mol`) and its nine-point harmonic smoothing (`smol`), the ion accessibility,
// the charges spread with the host's weights (computed here by the same operations), and the boundary
// values on the faces (`sdh`, `mdh`).
//
// Compiled at run time with NVRTC by src/compute/cuda/pb/maps.rs. Every comparison that decides whether
// a lattice point lies inside a sphere uses the explicitly rounded double operations (__dmul_rn,
// __dadd_rn, __dsub_rn), so no multiply-add is contracted and each decision is the host's bit for bit.
//
// Masks: one byte per point, four planes of n points: the lattices staggered along x, y, z (1 = inside
// the molecular surface) and the ion lattice (1 = within an atom's radius plus the ion radius).

#define PBM_NB_CAP 512
#define PBM_SAS_THREADS 128

__device__ __forceinline__ double pbm_d2(double ax, double ay, double az, double bx, double by, double bz) {
    const double dx = __dsub_rn(ax, bx), dy = __dsub_rn(ay, by), dz = __dsub_rn(az, bz);
    return __dadd_rn(__dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy)), __dmul_rn(dz, dz));
}

// The solvent-accessible surface points (APBS Vacc_atomSASPoints), one block per atom `a`: the reference
// sphere `refs` (3 doubles per point) scaled to radius + probe around the atom, kept when no other atom's
// centre lies closer than its radius + probe. Neighbours come from a cell list of cubic cells of side
// `cell` (cell (cx, cy, cz) holds atoms `cell_atoms[cell_start[c] .. cell_start[c + 1]]`, c = cx + ncx
// (cy + ncy cz), cell coordinates relative to `key0`, the host's floor(x / cell)). Kept points are
// appended to `out` (3 doubles each) at an index taken from `count`; points past `cap` are counted, not
// written. A neighbour list longer than PBM_NB_CAP sets `overflow`.
extern "C" __global__ void __launch_bounds__(PBM_SAS_THREADS)
pbm_sas(const double* __restrict__ pos, const double* __restrict__ radius, int n_atoms,
        const int* __restrict__ cell_start, const int* __restrict__ cell_atoms, int ncx, int ncy, int ncz,
        int key0x, int key0y, int key0z, double cell, int reach, double probe, double tiny,
        const double* __restrict__ refs, int nref, double* __restrict__ out, unsigned long long cap,
        unsigned long long* count, int* overflow) {
    __shared__ double nbx[PBM_NB_CAP], nby[PBM_NB_CAP], nbz[PBM_NB_CAP], nbl[PBM_NB_CAP];
    __shared__ int nnb;
    const int a = blockIdx.x;
    if (a >= n_atoms) return;
    const double ri = radius[a];
    if (!(ri > tiny)) return;
    const double ax = pos[3 * a], ay = pos[3 * a + 1], az = pos[3 * a + 2];
    const double rad = __dadd_rn(ri, probe);
    if (threadIdx.x == 0) nnb = 0;
    __syncthreads();
    const int kx = (int)floor(ax / cell) - key0x, ky = (int)floor(ay / cell) - key0y, kz = (int)floor(az / cell) - key0z;
    const int side = 2 * reach + 1;
    const int ncells = side * side * side;
    for (int c = threadIdx.x; c < ncells; c += blockDim.x) {
        const int cx = kx + c % side - reach, cy = ky + (c / side) % side - reach, cz = kz + c / (side * side) - reach;
        if (cx < 0 || cy < 0 || cz < 0 || cx >= ncx || cy >= ncy || cz >= ncz) continue;
        const int id = cx + ncx * (cy + ncy * cz);
        for (int s = cell_start[id]; s < cell_start[id + 1]; ++s) {
            const int j = cell_atoms[s];
            if (j == a) continue;
            const double bx = pos[3 * j], by = pos[3 * j + 1], bz = pos[3 * j + 2];
            const double rj = radius[j];
            const double lim = __dadd_rn(__dadd_rn(rad, rj), probe);
            if (pbm_d2(ax, ay, az, bx, by, bz) < __dmul_rn(lim, lim)) {
                const int slot = atomicAdd(&nnb, 1);
                if (slot < PBM_NB_CAP) {
                    const double l = __dadd_rn(rj, probe);
                    nbx[slot] = bx;
                    nby[slot] = by;
                    nbz[slot] = bz;
                    nbl[slot] = __dmul_rn(l, l);
                }
            }
        }
    }
    __syncthreads();
    const int m = nnb;
    if (m > PBM_NB_CAP) {
        if (threadIdx.x == 0) atomicExch(overflow, 1);
        return;
    }
    // The deepest overlaps first (ranked by how far each neighbour's probe sphere reaches past the
    // atom's centre, nbl - d^2, larger first; ties by slot): most buried points then stop at the first
    // or second test. Whether a point is buried does not depend on the order.
    __shared__ double key[PBM_NB_CAP];
    __shared__ short order[PBM_NB_CAP];
    for (int s = threadIdx.x; s < m; s += blockDim.x) key[s] = nbl[s] - pbm_d2(ax, ay, az, nbx[s], nby[s], nbz[s]);
    __syncthreads();
    for (int s = threadIdx.x; s < m; s += blockDim.x) {
        const double ks = key[s];
        int rank = 0;
        for (int t = 0; t < m; ++t) rank += (key[t] > ks || (key[t] == ks && t < s)) ? 1 : 0;
        order[rank] = (short)s;
    }
    __syncthreads();
    // Warp-uniform rounds (blockDim is a multiple of 32), so every lane takes part in the ballot.
    for (int t0 = 0; t0 < nref; t0 += blockDim.x) {
        const int t = t0 + threadIdx.x;
        double cx = 0.0, cy = 0.0, cz = 0.0;
        bool buried = true;
        if (t < nref) {
            cx = __dadd_rn(__dmul_rn(rad, refs[3 * t]), ax);
            cy = __dadd_rn(__dmul_rn(rad, refs[3 * t + 1]), ay);
            cz = __dadd_rn(__dmul_rn(rad, refs[3 * t + 2]), az);
            buried = false;
            for (int q = 0; q < m && !buried; ++q) {
                const int s = order[q];
                buried = pbm_d2(cx, cy, cz, nbx[s], nby[s], nbz[s]) < nbl[s];
            }
        }
        // One atomicAdd per warp for the warp's exposed points (adds on one address serialize; the
        // points' order in `out` does not matter: marking is the same whatever the order).
        const unsigned exposed = __ballot_sync(0xffffffffu, !buried);
        const int lane = threadIdx.x & 31;
        unsigned long long base = 0;
        if (lane == 0 && exposed) base = atomicAdd(count, (unsigned long long)__popc(exposed));
        base = __shfl_sync(0xffffffffu, base, 0);
        if (!buried) {
            const unsigned long long o = base + __popc(exposed & ((1u << lane) - 1u));
            if (o < cap) {
                out[3 * o] = cx;
                out[3 * o + 1] = cy;
                out[3 * o + 2] = cz;
            }
        }
    }
}

// Sets mask[p] = value at every point p of plane `plane` of `masks` (lattice min + h (i, j, k), shifted
// per plane: `mins` holds 3 doubles per plane) within radius r of a sphere's centre (`<=`, as the host's
// mark_spheres). Spheres: `centres` (3 doubles each) and radii `radii[s] + radius` (the sum rounded once,
// as the host's), or `radius` for all when `radii` is null. One warp per sphere and plane (blockIdx.y =
// plane offset from `plane0`); its lanes take the columns of the sphere's bounding box.
extern "C" __global__ void
pbm_mark(const double* __restrict__ centres, const double* __restrict__ radii, double radius, long long n_spheres,
         const double* __restrict__ mins, int plane0, double h, int nx, int ny, int nz,
         unsigned char* __restrict__ masks, unsigned char value) {
    const long long warp = ((long long)blockIdx.x * blockDim.x + threadIdx.x) >> 5;
    const int lane = threadIdx.x & 31;
    if (warp >= n_spheres) return;
    const int plane = plane0 + blockIdx.y;
    const double r = radii ? __dadd_rn(radii[warp], radius) : radius;
    const double r2 = __dmul_rn(r, r);
    const double px = __dsub_rn(centres[3 * warp], mins[3 * plane]);
    const double py = __dsub_rn(centres[3 * warp + 1], mins[3 * plane + 1]);
    const double pz = __dsub_rn(centres[3 * warp + 2], mins[3 * plane + 2]);
    const double ext = __dadd_rn(r, 0.5 * h);
    // The box of points to test: every point within r lies at least h / 2 inside it, so bounds from a
    // product with 1 / h (one rounding from the quotient's) never leave such a point out.
    const double inv_h = 1.0 / h;
    const int i0 = max(0, (int)ceil((px - ext) * inv_h)), i1 = min(nx - 1, (int)floor((px + ext) * inv_h));
    const int j0 = max(0, (int)ceil((py - ext) * inv_h)), j1 = min(ny - 1, (int)floor((py + ext) * inv_h));
    const int k0 = max(0, (int)ceil((pz - ext) * inv_h)), k1 = min(nz - 1, (int)floor((pz + ext) * inv_h));
    if (i1 < i0 || j1 < j0 || k1 < k0) return;
    const int wx = i1 - i0 + 1, wy = j1 - j0 + 1;
    const int columns = wx * wy;
    const long long plane_points = (long long)nx * ny;
    unsigned char* mask = masks + (long long)plane * plane_points * nz;
    // A lane per column (i, j) of the box, walking up k: dx^2 + dy^2 is formed once per column and a
    // point costs dz^2 and one addition, summed in the host's order ((dx^2 + dy^2) + dz^2, each
    // rounded), so the decisions are the host's bit for bit. Column index to (i, j) by a float
    // reciprocal (exact: c < 2^20, and c / wx is at least 1 / (2 wx) from the next integer).
    const float inv_wx = 1.0f / (float)wx;
    for (int c = lane; c < columns; c += 32) {
        const int jj = (int)(((float)c + 0.5f) * inv_wx);
        const int i = i0 + (c - jj * wx), j = j0 + jj;
        const double dx = __dsub_rn(px, __dmul_rn(h, (double)i));
        const double dy = __dsub_rn(py, __dmul_rn(h, (double)j));
        const double dxy = __dadd_rn(__dmul_rn(dx, dx), __dmul_rn(dy, dy));
        // dxy + dz^2 rounds to at least dxy: a column outside the circle has no point inside.
        if (dxy > r2) continue;
        unsigned char* at = mask + i + (long long)nx * j + plane_points * k0;
        for (int k = k0; k <= k1; ++k, at += plane_points) {
            const double dz = __dsub_rn(pz, __dmul_rn(h, (double)k));
            const double d2 = __dadd_rn(dxy, __dmul_rn(dz, dz));
            // Written only where it differs (measured: fewer stores beat the extra load, as
            // overlapping spheres mark most points many times over); a read that may be stale
            // (another warp's write not seen yet) only costs a write, as every writer stores `value`.
            if (d2 <= r2 && *at != value) *at = value;
        }
    }
}

// (i, j, k) of point p of a lattice nx points wide and ny deep (x fastest): by 32-bit divisions when p
// fits (a 64-bit division costs several times as many instructions, and these kernels are bound by
// theirs).
__device__ __forceinline__ void pbm_ijk(long long p, int nx, int ny, int& i, int& j, int& k) {
    if (p <= 0xffffffffLL) {
        const unsigned u = (unsigned)p, row = u / (unsigned)nx, plane = row / (unsigned)ny;
        i = (int)(u - row * (unsigned)nx);
        j = (int)(row - plane * (unsigned)ny);
        k = (int)plane;
    } else {
        i = (int)(p % nx);
        j = (int)((p / nx) % ny);
        k = (int)(p / ((long long)nx * ny));
    }
}

// The staggered dielectric from the masks: raw (eps_in inside, eps_out outside) when `smooth` is 0, else
// the host's nine-point harmonic smoothing (same terms, same order of the sums).
extern "C" __global__ void
pbm_dielectric(const unsigned char* __restrict__ masks, int nx, int ny, int nz, double eps_in, double eps_out,
               int smooth, double* __restrict__ ex, double* __restrict__ ey, double* __restrict__ ez) {
    const long long n = (long long)nx * ny * nz;
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n) return;
    int i, j, k;
    pbm_ijk(p, nx, ny, i, j, k);
    const unsigned char* m1 = masks;
    const unsigned char* m2 = masks + n;
    const unsigned char* m3 = masks + 2 * n;
#define PBM_AT(m, ii, jj, kk) ((m)[(ii) + (long long)nx * ((jj) + (long long)ny * (kk))] ? eps_in : eps_out)
    // 1 / eps of a point, from the two reciprocals (each division correctly rounded, as the host's).
    const double inv_in = 1.0 / eps_in, inv_out = 1.0 / eps_out;
#define PBM_INV(m, ii, jj, kk) ((m)[(ii) + (long long)nx * ((jj) + (long long)ny * (kk))] ? inv_in : inv_out)
    if (!smooth) {
        ex[p] = PBM_AT(m1, i, j, k);
        ey[p] = PBM_AT(m2, i, j, k);
        ez[p] = PBM_AT(m3, i, j, k);
        return;
    }
    // x-shifted
    double f = PBM_INV(m1, i, j, k) + PBM_INV(m2, i, j, k) + PBM_INV(m3, i, j, k);
    double c = 3.0;
    if (j > 0) { f += PBM_INV(m2, i, j - 1, k); c += 1.0; }
    if (k > 0) { f += PBM_INV(m3, i, j, k - 1); c += 1.0; }
    if (i + 1 < nx) {
        f += PBM_INV(m2, i + 1, j, k) + PBM_INV(m3, i + 1, j, k);
        c += 2.0;
        if (j > 0) { f += PBM_INV(m2, i + 1, j - 1, k); c += 1.0; }
        if (k > 0) { f += PBM_INV(m3, i + 1, j, k - 1); c += 1.0; }
    }
    ex[p] = c / f;
    // y-shifted
    f = PBM_INV(m2, i, j, k) + PBM_INV(m1, i, j, k) + PBM_INV(m3, i, j, k);
    c = 3.0;
    if (i > 0) { f += PBM_INV(m1, i - 1, j, k); c += 1.0; }
    if (k > 0) { f += PBM_INV(m3, i, j, k - 1); c += 1.0; }
    if (j + 1 < ny) {
        f += PBM_INV(m1, i, j + 1, k) + PBM_INV(m3, i, j + 1, k);
        c += 2.0;
        if (i > 0) { f += PBM_INV(m1, i - 1, j + 1, k); c += 1.0; }
        if (k > 0) { f += PBM_INV(m3, i, j + 1, k - 1); c += 1.0; }
    }
    ey[p] = c / f;
    // z-shifted
    f = PBM_INV(m3, i, j, k) + PBM_INV(m1, i, j, k) + PBM_INV(m2, i, j, k);
    c = 3.0;
    if (i > 0) { f += PBM_INV(m1, i - 1, j, k); c += 1.0; }
    if (j > 0) { f += PBM_INV(m2, i, j - 1, k); c += 1.0; }
    if (k + 1 < nz) {
        f += PBM_INV(m1, i, j, k + 1) + PBM_INV(m2, i, j, k + 1);
        c += 2.0;
        if (i > 0) { f += PBM_INV(m1, i - 1, j, k + 1); c += 1.0; }
        if (j > 0) { f += PBM_INV(m2, i, j - 1, k + 1); c += 1.0; }
    }
    ez[p] = c / f;
#undef PBM_AT
#undef PBM_INV
}

// kbar^2 at the points: `value` (eps_out kappa^2) where ions may go (the ion plane of `masks`, the fourth,
// is 0), zero elsewhere.
extern "C" __global__ void pbm_kbar2(const unsigned char* __restrict__ masks, long long n, double value,
                                     double* __restrict__ k2) {
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p < n) k2[p] = masks[3 * n + p] ? 0.0 : value;
}

// APBS's bspline2 (the host's `prep::bspline2`, the same operations in the same order, each rounded).
__device__ double pbm_bspline2(double x) {
    const double m2m = (x >= 0.0 && x <= 2.0) ? __dsub_rn(1.0, fabs(__dsub_rn(x, 1.0))) : 0.0;
    const double m2 = (x >= 1.0 && x <= 3.0) ? __dsub_rn(1.0, fabs(__dsub_rn(x, 2.0))) : 0.0;
    if (!(x >= 0.0 && x <= 3.0)) return 0.0;
    return __dadd_rn(__dmul_rn(__dmul_rn(0.5, x), m2m), __dmul_rn(__dmul_rn(0.5, __dsub_rn(3.0, x)), m2));
}

// The charges spread onto the source, one thread per atom, with the host's weights (`prep::weights_1d`:
// trilinear when `spline` is 0, else APBS's spl2 B-spline, computed by the same rounded operations) and
// `scale q` (scale = 4 pi l_B / h^3); the sums over charges in any order (atomicAdd). A charge whose
// spread leaves the lattice interior: with `partial` (a focused lattice) its interior weights only are
// added, else nothing of it is and `bad` takes the smallest such atom index.
extern "C" __global__ void pbm_spread(const double* __restrict__ pos, const double* __restrict__ q, int n_atoms,
                                      double ox, double oy, double oz, double h, int spline, double scale,
                                      int partial, int nx, int ny, int nz, double* __restrict__ f,
                                      int* __restrict__ bad) {
    const int a = blockIdx.x * blockDim.x + threadIdx.x;
    if (a >= n_atoms) return;
    const double qa = q[a];
    if (qa == 0.0) return;
    const double o[3] = {ox, oy, oz};
    const int dims[3] = {nx, ny, nz};
    long long first[3];
    int len[3];
    double w[3][4];
    for (int k = 0; k < 3; ++k) {
        const double t = __ddiv_rn(__dsub_rn(pos[3 * a + k], o[k]), h);
        const double fl = floor(t);
        if (spline) {
            first[k] = (long long)fl - 1;
            for (int c = 0; c < 4; ++c) w[k][c] = pbm_bspline2(__dsub_rn(__dadd_rn(1.5, (double)(first[k] + c)), t));
            len[k] = w[k][3] == 0.0 ? 3 : 4;
        } else {
            const double u = __dsub_rn(t, fl);
            first[k] = (long long)fl;
            w[k][0] = __dsub_rn(1.0, u);
            w[k][1] = u;
            w[k][2] = 0.0;
            w[k][3] = 0.0;
            len[k] = 2;
        }
        if (!partial && (first[k] < 1 || first[k] + len[k] > (long long)dims[k] - 1)) {
            atomicMin(bad, a);
            return;
        }
    }
    const double sq = __dmul_rn(scale, qa);
    for (int c = 0; c < len[2]; ++c) {
        const long long z = first[2] + c;
        if (z < 1 || z > nz - 2) continue;
        for (int b = 0; b < len[1]; ++b) {
            const long long y = first[1] + b;
            if (y < 1 || y > ny - 2) continue;
            for (int x = 0; x < len[0]; ++x) {
                const long long xi = first[0] + x;
                if (xi < 1 || xi > nx - 2) continue;
                const double v = __dmul_rn(__dmul_rn(__dmul_rn(sq, w[0][x]), w[1][b]), w[2][c]);
                atomicAdd(f + xi + (long long)nx * (y + (long long)ny * z), v);
            }
        }
    }
}

// APBS's multipolebc radial factors (the host's multipole_factors).
__device__ void pbm_multipole(double r, double kappa, double eps_p, double eps_w, double a, double* t) {
    const double eps_r = eps_w / eps_p;
    const double r2 = r * r, r3 = r * r * r;
    const double r5 = r3 * r2;
    t[0] = 1.0 / eps_w / r;
    t[1] = -1.0 / eps_w / r3;
    t[2] = 3.0 / eps_w / r5;
    if (kappa < 1e-12) {
        t[1] *= 3.0 * eps_r / (1.0 + 2.0 * eps_r);
        t[2] *= 5.0 * eps_r / (2.0 + 3.0 * eps_r);
    } else {
        const double ka = kappa * a, kr = kappa * r;
        const double ka2 = ka * ka, ka3 = ka * ka * ka, kr2 = kr * kr;
        const double e = exp(ka - kr);
        t[0] *= e / (1.0 + ka);
        t[1] *= 3.0 * eps_r * e * (1.0 + kr) / (1.0 + ka + eps_r * (2.0 + 2.0 * ka + ka2));
        t[2] *= 5.0 * eps_r * e * (3.0 + 3.0 * kr + kr2) /
                (6.0 + 6.0 * ka + 2.0 * ka2 + eps_r * (9.0 + 9.0 * ka + 4.0 * ka2 + ka3));
    }
}

// Boundary values on the faces (zero inside). `m` (21 doubles): centre (0..3), solute radius (3), charge
// (4), dipole (5..8), quadrupole (8..17, row-major), kappa (17), eps_in (18), eps_out (19), Bjerrum length
// (20). `mode` 0: `sdh` from the multipoles; 1: `mdh`, one Debye-Hueckel sphere per atom (`pos`, `q`,
// `radius`), summed in the atoms' order.
extern "C" __global__ void pbm_boundary(int mode, const double* __restrict__ m, double ox, double oy, double oz,
                                        double h, int nx, int ny, int nz, const double* __restrict__ pos,
                                        const double* __restrict__ q, const double* __restrict__ radius, int n_atoms,
                                        double* __restrict__ g) {
    const long long n = (long long)nx * ny * nz;
    const long long p = (long long)blockIdx.x * blockDim.x + threadIdx.x;
    if (p >= n) return;
    int i, j, k;
    pbm_ijk(p, nx, ny, i, j, k);
    const bool face = i == 0 || j == 0 || k == 0 || i + 1 == nx || j + 1 == ny || k + 1 == nz;
    if (!face) {
        g[p] = 0.0;
        return;
    }
    const double x = ox + h * i, y = oy + h * j, z = oz + h * k;
    const double kappa = m[17], eps_in = m[18], eps_out = m[19], lb = m[20];
    if (mode == 0) {
        const double dx = x - m[0], dy = y - m[1], dz = z - m[2];
        const double r = fmax(sqrt(dx * dx + dy * dy + dz * dz), 1e-6);
        double t[3];
        pbm_multipole(r, kappa, eps_in, eps_out, m[3], t);
        const double* d = m + 5;
        const double* qd = m + 8;
        double v = m[4] * t[0];
        v -= (d[0] * dx + d[1] * dy + d[2] * dz) * t[1];
        v += (qd[0] * dx * dx + qd[4] * dy * dy + qd[8] * dz * dz + 2.0 * qd[1] * dx * dy + 2.0 * qd[2] * dx * dz +
              2.0 * qd[5] * dy * dz) *
             t[2];
        g[p] = lb * v;
    } else {
        double v = 0.0;
        for (int a = 0; a < n_atoms; ++a) {
            const double dx = x - pos[3 * a], dy = y - pos[3 * a + 1], dz = z - pos[3 * a + 2];
            const double r = fmax(sqrt(dx * dx + dy * dy + dz * dz), 1e-6);
            const double ra = radius[a];
            v += lb * q[a] * exp(-kappa * (r - ra)) / (eps_out * (1.0 + kappa * ra) * r);
        }
        g[p] = v;
    }
}
