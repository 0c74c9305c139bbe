// DSSP on the device: the passes of src/analysis/dssp.rs that read coordinates (amide hydrogens,
// chain breaks, the hydrogen-bond search, n-turns, bends, polyproline angles and bridge partners),
// launched by src/compute/cuda/dssp.rs. The host finishes the codes from what these write (ladders,
// helices, turns, bends and polyproline stretches: src/analysis/dssp.rs, `finish_from_device`).
//
// Compiled after kernels/rdf.cu, whose counting sort bins the CA atoms into cells at least 9 A wide.
//
// Exactness: every single-precision operation the CPU code rounds is written here as a
// round-to-nearest intrinsic (__fmul_rn, __fadd_rn, __fsub_rn, __fdiv_rn, __fsqrt_rn), which the
// compiler never fuses into multiply-adds, in the CPU's order of operations; energies are double
// precision with IEEE division and rounding halves away from zero, as mkdssp and the CPU code
// compute them. So the bonds, flags and partners are bit for bit the CPU's. Where the CPU decides
// an angle by a library arc tangent (a bend within 1e-3 of 70 degrees' cosine, a dihedral within
// 1e-3 radians of a polyproline range's end) the flag says "unsure" and the host decides it.
//
// Layouts (src/compute/cuda/dssp.rs is the twin):
//   backbone: 12 floats per residue, N, CA, C, O (x, y, z each), in the order of the protein residues;
//   meta: per residue, the chain ordinal in bits 0-30 and bit 31 set for proline;
//   acc: per donor residue, its (at most two) bonded acceptors, 0xffffffff where none.

#define DSSP_NONE 0xffffffffu
#define DSSP_TURN3 1u
#define DSSP_TURN4 2u
#define DSSP_TURN5 4u
#define DSSP_BREAK 8u
#define DSSP_BEND 16u
#define DSSP_BEND_UNSURE 32u
#define DSSP_PP 64u
#define DSSP_PP_UNSURE 128u
#define DSSP_MAX_HITS 8

struct DsspRanges {
    // sin and cos of the phi range's low and high ends, then of psi's (as the host computes them).
    float phi_sl, phi_cl, phi_sh, phi_ch;
    float psi_sl, psi_cl, psi_sh, psi_ch;
};

__device__ __forceinline__ float3 dssp_at(const float* __restrict__ bb, int r, int atom) {
    const float* p = bb + 12 * (size_t)r + 3 * atom;
    return make_float3(p[0], p[1], p[2]);
}

__device__ __forceinline__ float3 dssp_sub(float3 a, float3 b) {
    return make_float3(__fsub_rn(a.x, b.x), __fsub_rn(a.y, b.y), __fsub_rn(a.z, b.z));
}

__device__ __forceinline__ float dssp_dot(float3 a, float3 b) {
    return __fadd_rn(__fadd_rn(__fmul_rn(a.x, b.x), __fmul_rn(a.y, b.y)), __fmul_rn(a.z, b.z));
}

__device__ __forceinline__ float3 dssp_cross(float3 a, float3 b) {
    return make_float3(__fsub_rn(__fmul_rn(a.y, b.z), __fmul_rn(b.y, a.z)),
                       __fsub_rn(__fmul_rn(a.z, b.x), __fmul_rn(b.z, a.x)),
                       __fsub_rn(__fmul_rn(a.x, b.y), __fmul_rn(b.x, a.y)));
}

__device__ __forceinline__ float dssp_distance(float3 a, float3 b) {
    float3 d = dssp_sub(a, b);
    return __fsqrt_rn(dssp_dot(d, d));
}

// Per residue: its CA as a sortable item (w = residue index), its amide hydrogen, and whether a
// chain break comes before it (a change of chain, or C(i-1)-N(i) above 2.5 A). The hydrogen is
// 1 A from N along the previous residue's C - O, for every residue but proline (also after a
// break, as mkdssp places it).
extern "C" __global__ void dssp_backbone(const float* __restrict__ bb, const unsigned int* __restrict__ meta, int m,
                                         float4* __restrict__ items, float4* __restrict__ hydrogens,
                                         unsigned char* __restrict__ breaks) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    float3 n = dssp_at(bb, i, 0);
    float3 ca = dssp_at(bb, i, 1);
    float3 h = n;
    unsigned char brk = 0;
    unsigned int me = meta[i];
    if (i > 0) {
        float3 pc = dssp_at(bb, i - 1, 2);
        float3 po = dssp_at(bb, i - 1, 3);
        if ((me & 0x7fffffffu) != (meta[i - 1] & 0x7fffffffu) || dssp_distance(pc, n) > 2.5f) brk = 1;
        if (!(me >> 31)) {
            float d = dssp_distance(pc, po);
            h = make_float3(__fadd_rn(n.x, __fdiv_rn(__fsub_rn(pc.x, po.x), d)),
                            __fadd_rn(n.y, __fdiv_rn(__fsub_rn(pc.y, po.y), d)),
                            __fadd_rn(n.z, __fdiv_rn(__fsub_rn(pc.z, po.z), d)));
        }
    }
    items[i] = make_float4(ca.x, ca.y, ca.z, __int_as_float(i));
    hydrogens[i] = make_float4(h.x, h.y, h.z, 0.0f);
    breaks[i] = brk;
}

// The hydrogen-bond energy (kcal/mol) of donor N-H with acceptor C=O, as mkdssp rounds and floors it.
__device__ __forceinline__ double dssp_energy(float3 h, float3 n, float3 c, float3 o) {
    const double min_energy = (double)(-9.9f);
    const double coupling = (double)(-27.888f);
    float d_ho = dssp_distance(h, o);
    float d_hc = dssp_distance(h, c);
    float d_nc = dssp_distance(n, c);
    float d_no = dssp_distance(n, o);
    double e;
    if (d_ho < 0.5f || d_hc < 0.5f || d_nc < 0.5f || d_no < 0.5f) {
        e = min_energy;
    } else {
        double q0 = __ddiv_rn(coupling, (double)d_ho);
        double q1 = __ddiv_rn(coupling, (double)d_hc);
        double q2 = __ddiv_rn(coupling, (double)d_nc);
        double q3 = __ddiv_rn(coupling, (double)d_no);
        e = __dsub_rn(__dadd_rn(__dsub_rn(q0, q1), q2), q3);
    }
    e = __ddiv_rn(round(__dmul_rn(e, 1000.0)), 1000.0);
    return e < min_energy ? min_energy : e;
}

// One thread per donor, in cell order (the items sorted by the CA cell list): the acceptors whose
// CA lies within 9 A (all in the 27 cells around the donor's), but not the donor itself or the
// residue before it; keeps the two lowest (energy, index) pairs below -0.5 kcal/mol. Proline
// donates no bond.
extern "C" __global__ void dssp_hbonds(const float4* __restrict__ sorted, const unsigned int* __restrict__ starts,
                                       RdfCells g, int m, const float* __restrict__ bb,
                                       const float4* __restrict__ hydrogens, const unsigned int* __restrict__ meta,
                                       uint2* __restrict__ acc) {
    int t = blockIdx.x * blockDim.x + threadIdx.x;
    if (t >= m) return;
    float4 p = sorted[t];
    int i = __float_as_int(p.w);
    unsigned int best0 = DSSP_NONE, best1 = DSSP_NONE;
    if (!(meta[i] >> 31)) {
        double e0 = 0.0, e1 = 0.0;
        float4 h4 = hydrogens[i];
        float3 h = make_float3(h4.x, h4.y, h4.z);
        float3 n = dssp_at(bb, i, 0);
        float3 ca = make_float3(p.x, p.y, p.z);
        int cx = rdf_cell_axis(p.x, g.lo_x, g.inv_wx, g.nx);
        int cy = rdf_cell_axis(p.y, g.lo_y, g.inv_wy, g.ny);
        int cz = rdf_cell_axis(p.z, g.lo_z, g.inv_wz, g.nz);
        for (int z = max(cz - 1, 0); z <= min(cz + 1, g.nz - 1); z++) {
            for (int y = max(cy - 1, 0); y <= min(cy + 1, g.ny - 1); y++) {
                int row = g.nx * (y + g.ny * z);
                unsigned int a = starts[row + max(cx - 1, 0)];
                unsigned int b = starts[row + min(cx + 1, g.nx - 1) + 1];
                for (unsigned int u = a; u < b; u++) {
                    float4 q = sorted[u];
                    int j = __float_as_int(q.w);
                    if (j == i || j == i - 1) continue;
                    if (!(dssp_distance(ca, make_float3(q.x, q.y, q.z)) < 9.0f)) continue;
                    double e = dssp_energy(h, n, dssp_at(bb, j, 2), dssp_at(bb, j, 3));
                    if (!(e < -0.5)) continue;
                    unsigned int uj = (unsigned int)j;
                    if (e < e0 || (e == e0 && uj < best0)) {
                        best1 = best0;
                        e1 = e0;
                        best0 = uj;
                        e0 = e;
                    } else if (e < e1 || (e == e1 && uj < best1)) {
                        best1 = uj;
                        e1 = e;
                    }
                }
            }
        }
    }
    acc[i] = make_uint2(best0, best1);
}

__device__ __forceinline__ bool dssp_bond(const uint2* __restrict__ acc, int donor, int acceptor) {
    uint2 a = acc[donor];
    return a.x == (unsigned int)acceptor || a.y == (unsigned int)acceptor;
}

// Residues a <= b in one chain with no break between them.
__device__ __forceinline__ bool dssp_connected(const unsigned char* __restrict__ breaks, int a, int b) {
    for (int k = a + 1; k <= b; k++)
        if (breaks[k]) return false;
    return true;
}

// Where the dihedral p1-p2-p3-p4 lies against a range (sin and cos of its ends): 1 inside, 0
// outside, 2 unsure (within 1e-3 radians of an end, or not finite).
__device__ int dssp_in_range(float3 p1, float3 p2, float3 p3, float3 p4, float sl, float cl, float sh, float ch) {
    float3 v12 = dssp_sub(p1, p2);
    float3 v43 = dssp_sub(p4, p3);
    float3 z = dssp_sub(p2, p3);
    float3 p = dssp_cross(z, v12);
    float3 x = dssp_cross(z, v43);
    float3 y = dssp_cross(z, x);
    float u = dssp_dot(x, x);
    float v = dssp_dot(y, y);
    // An undefined angle counts as 360 degrees: outside both ranges.
    if (!(u > 0.0f && v > 0.0f)) return 0;
    float uu = __fdiv_rn(dssp_dot(p, x), __fsqrt_rn(u));
    float vv = __fdiv_rn(dssp_dot(p, y), __fsqrt_rn(v));
    if (!(uu != 0.0f || vv != 0.0f)) return 0;
    float r = __fsqrt_rn(__fadd_rn(__fmul_rn(uu, uu), __fmul_rn(vv, vv)));
    if (isfinite(r) && r > 1e-20f) {
        float after_lo = __fdiv_rn(__fsub_rn(__fmul_rn(vv, cl), __fmul_rn(uu, sl)), r);
        float before_hi = __fdiv_rn(__fsub_rn(__fmul_rn(uu, sh), __fmul_rn(vv, ch)), r);
        if (after_lo > 1e-3f && before_hi > 1e-3f) return 1;
        if (after_lo < -1e-3f || before_hi < -1e-3f) return 0;
    }
    return 2;
}

// mkdssp's bridge test for residues i < j: 1 parallel, 2 antiparallel, 0 none.
__device__ int dssp_bridge(const uint2* __restrict__ acc, const unsigned char* __restrict__ breaks, int m, int i, int j) {
    if (i == 0 || j + 1 >= m || !dssp_connected(breaks, i - 1, i + 1) || !dssp_connected(breaks, j - 1, j + 1)) return 0;
    int a = i - 1, b = i, c = i + 1, d = j - 1, e = j, f = j + 1;
    if ((dssp_bond(acc, c, e) && dssp_bond(acc, e, a)) || (dssp_bond(acc, f, b) && dssp_bond(acc, b, d))) return 1;
    if ((dssp_bond(acc, c, d) && dssp_bond(acc, f, a)) || (dssp_bond(acc, e, b) && dssp_bond(acc, b, e))) return 2;
    return 0;
}

// Per residue i: its flags (n-turns starting at i, a break before it, bend, polyproline II angles)
// and its bridge partners j >= i + 3 (at most eight, ascending; bit 31 of j set when parallel),
// found among the acceptors of i and i + 1 and the residues after them, as the CPU finds them.
extern "C" __global__ void dssp_flags(const float* __restrict__ bb, const uint2* __restrict__ acc,
                                      const unsigned char* __restrict__ breaks, int m, DsspRanges ranges,
                                      unsigned char* __restrict__ flags, unsigned int* __restrict__ hit_count,
                                      uint2* __restrict__ hit_slots) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    unsigned int f = breaks[i] ? DSSP_BREAK : 0u;
    for (int kind = 0; kind < 3; kind++) {
        int stride = kind + 3;
        if (i + stride < m && dssp_connected(breaks, i, i + stride) && dssp_bond(acc, i + stride, i)) f |= 1u << kind;
    }
    if (i >= 2 && i + 2 < m && dssp_connected(breaks, i - 2, i + 2)) {
        float3 a = dssp_at(bb, i - 2, 1), b = dssp_at(bb, i, 1), c = dssp_at(bb, i + 2, 1);
        float3 v12 = dssp_sub(b, a);
        float3 v34 = dssp_sub(c, b);
        float x = __fmul_rn(dssp_dot(v12, v12), dssp_dot(v34, v34));
        float ckap = x > 0.0f ? __fdiv_rn(dssp_dot(v12, v34), __fsqrt_rn(x)) : 0.0f;
        if (ckap >= -1.0f && ckap < 0.341f) {
            f |= DSSP_BEND;
        } else if (!(ckap > 0.343f)) {
            f |= DSSP_BEND_UNSURE;
        }
    }
    if (i > 0 && i + 1 < m && !breaks[i] && !breaks[i + 1]) {
        int phi = dssp_in_range(dssp_at(bb, i - 1, 2), dssp_at(bb, i, 0), dssp_at(bb, i, 1), dssp_at(bb, i, 2),
                                ranges.phi_sl, ranges.phi_cl, ranges.phi_sh, ranges.phi_ch);
        int psi = dssp_in_range(dssp_at(bb, i, 0), dssp_at(bb, i, 1), dssp_at(bb, i, 2), dssp_at(bb, i + 1, 0),
                                ranges.psi_sl, ranges.psi_cl, ranges.psi_sh, ranges.psi_ch);
        if (phi == 1 && psi == 1) {
            f |= DSSP_PP;
        } else if (phi != 0 && psi != 0) {
            f |= DSSP_PP_UNSURE;
        }
    }
    flags[i] = (unsigned char)f;
    unsigned int count = 0;
    if (i >= 1 && i + 1 < m) {
        unsigned int js[8];
        for (int k = 0; k < 8; k++) js[k] = DSSP_NONE;
        for (int s = 0; s < 2; s++) {
            uint2 a = acc[i + s];
            unsigned int two[2] = {a.x, a.y};
            for (int k = 0; k < 2; k++) {
                if (two[k] != DSSP_NONE) {
                    js[4 * s + 2 * k] = two[k];
                    js[4 * s + 2 * k + 1] = two[k] + 1u;
                }
            }
        }
        for (int k = 1; k < 8; k++) {
            unsigned int v = js[k];
            int l = k - 1;
            while (l >= 0 && js[l] > v) {
                js[l + 1] = js[l];
                l--;
            }
            js[l + 1] = v;
        }
        unsigned int last = DSSP_NONE;
        for (int k = 0; k < 8; k++) {
            unsigned int j = js[k];
            if (j == DSSP_NONE || j == last) continue;
            last = j;
            if (j >= (unsigned int)i + 3u && j + 1u < (unsigned int)m) {
                int kind = dssp_bridge(acc, breaks, m, i, (int)j);
                if (kind != 0) {
                    hit_slots[DSSP_MAX_HITS * (size_t)i + count] = make_uint2((unsigned int)i, j | (kind == 1 ? 0x80000000u : 0u));
                    count++;
                }
            }
        }
    }
    hit_count[i] = count;
}

// The partners into one list in residue order (`starts` from the scan of the counts).
extern "C" __global__ void dssp_compact(const uint2* __restrict__ hit_slots, const unsigned int* __restrict__ starts,
                                        int m, uint2* __restrict__ hits) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= m) return;
    unsigned int a = starts[i], n = starts[i + 1] - a;
    for (unsigned int k = 0; k < n; k++) hits[a + k] = hit_slots[DSSP_MAX_HITS * (size_t)i + k];
}
