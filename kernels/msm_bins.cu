// Charges sorted into the short-range bins on the device (src/compute/cuda/msm_bins.rs launches these,
// in this order): msmb_count (each charge's bin, counts per bin), msmb_scan_blocks + msmb_scan_sums +
// msmb_add (exclusive prefix sum of the counts: start[b], start[n_bins] = charges binned), msmb_scatter
// (charge indices into their bins' slots), msmb_sort (each bin's indices ascending, so the order within
// a bin is the input order, as the host's stable counting sort leaves it), msmb_gather (the charges as
// msm_slab reads them: float4 (x, y, z relative to the bins' origin, q)). The twin of AtomBins::fill,
// AtomBins::wrap and AtomBins::bin_of in src/compute/esp/bins.rs: the same f64 operations in the same
// order, without FMA contraction (__dmul_rn, __dadd_rn), so every charge lands in the host's bin and
// the arrays equal the host's.

// Twin: MsmBinArgs in src/compute/cuda/msm_bins.rs (30 doubles, then 6 ints: no padding).
struct MsmBinArgs {
    double origin[3];       // corner of bin (0, 0, 0), bohr
    double inverse[3][3];   // bin coordinate t_k = inverse[k] . (x - origin)
    double cell[3][3];      // periodic cell (rows)
    double cell_inv[3][3];  // fractional coordinate f_k = cell_inv[k] . x
    int counts[3];
    int periodic;
    int n_atoms;
    int n_bins;
};

__device__ __forceinline__ double msmb_dot(const double* w, double x, double y, double z) {
    return __dadd_rn(__dadd_rn(__dmul_rn(w[0], x), __dmul_rn(w[1], y)), __dmul_rn(w[2], z));
}

// The bin of charge a = (x, y, z, q) and its (wrapped) position p; -1 for a charge the host skips
// (zero charge, absurd coordinate).
__device__ int msmb_bin(const MsmBinArgs& g, const double* a, double* p) {
    p[0] = a[0];
    p[1] = a[1];
    p[2] = a[2];
    if (a[3] == 0.0) return -1;
    if (g.periodic) {
        double f[3];
        for (int k = 0; k < 3; k++) {
            double t = msmb_dot(g.cell_inv[k], a[0], a[1], a[2]);
            t = __dsub_rn(t, floor(t));
            f[k] = (t >= 1.0) ? 0.0 : t;
        }
        for (int i = 0; i < 3; i++) {
            p[i] = __dadd_rn(__dadd_rn(__dmul_rn(f[0], g.cell[0][i]), __dmul_rn(f[1], g.cell[1][i])),
                             __dmul_rn(f[2], g.cell[2][i]));
        }
    }
    const double d0 = __dsub_rn(p[0], g.origin[0]);
    const double d1 = __dsub_rn(p[1], g.origin[1]);
    const double d2 = __dsub_rn(p[2], g.origin[2]);
    long long c[3];
    for (int k = 0; k < 3; k++) {
        const double t = floor(msmb_dot(g.inverse[k], d0, d1, d2));
        if (!isfinite(t) || fabs(t) > 1e9) return -1;
        long long b = (long long)t;
        if (g.periodic) b = min(max(b, 0LL), (long long)g.counts[k] - 1);
        b = max(b, 0LL);
        c[k] = min(b, (long long)g.counts[k] - 1);
    }
    return (int)(c[0] + (long long)g.counts[0] * (c[1] + (long long)g.counts[1] * c[2]));
}

// atoms: 4 doubles per charge (x, y, z bohr, q e). bin_of[j]: the charge's bin or -1; counts zeroed.
extern "C" __global__ void msmb_count(const double* __restrict__ atoms, MsmBinArgs g, int* __restrict__ bin_of,
                                      int* __restrict__ counts) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= g.n_atoms) return;
    double p[3];
    const int b = msmb_bin(g, atoms + 4 * (long long)j, p);
    bin_of[j] = b;
    if (b >= 0) atomicAdd(&counts[b], 1);
}

// Exclusive scan of 1024 counts per block (launched with 1024 threads): start[i] = sum of the block's
// counts before i; sums[block] = the block's total.
extern "C" __global__ void msmb_scan_blocks(const int* __restrict__ counts, int* __restrict__ start,
                                            int* __restrict__ sums, int n) {
    __shared__ int s[1024];
    const int t = threadIdx.x;
    const int i = blockIdx.x * 1024 + t;
    const int v = (i < n) ? counts[i] : 0;
    s[t] = v;
    __syncthreads();
    for (int off = 1; off < 1024; off <<= 1) {
        const int add = (t >= off) ? s[t - off] : 0;
        __syncthreads();
        s[t] += add;
        __syncthreads();
    }
    if (i < n) start[i] = s[t] - v;
    if (t == 1023) sums[blockIdx.x] = s[1023];
}

// One thread: the blocks' totals to their exclusive prefix sums; start[n] = the grand total.
extern "C" __global__ void msmb_scan_sums(int* __restrict__ sums, int n_blocks, int* __restrict__ start, int n) {
    if (blockIdx.x != 0 || threadIdx.x != 0) return;
    int running = 0;
    for (int b = 0; b < n_blocks; b++) {
        const int v = sums[b];
        sums[b] = running;
        running += v;
    }
    start[n] = running;
}

// start[i] += its block's offset; fill[i] = start[i] (the scatter's cursors).
extern "C" __global__ void msmb_add(int* __restrict__ start, int* __restrict__ fill, const int* __restrict__ sums,
                                    int n) {
    const int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const int v = start[i] + sums[i / 1024];
    start[i] = v;
    fill[i] = v;
}

extern "C" __global__ void msmb_scatter(const int* __restrict__ bin_of, int* __restrict__ fill,
                                        int* __restrict__ index, int n_atoms) {
    const int j = blockIdx.x * blockDim.x + threadIdx.x;
    if (j >= n_atoms) return;
    const int b = bin_of[j];
    if (b < 0) return;
    index[atomicAdd(&fill[b], 1)] = j;
}

// Each bin's charge indices ascending (insertion sort: bins hold a few tens of charges).
extern "C" __global__ void msmb_sort(const int* __restrict__ start, int* __restrict__ index, int n_bins) {
    const int b = blockIdx.x * blockDim.x + threadIdx.x;
    if (b >= n_bins) return;
    const int s0 = start[b], s1 = start[b + 1];
    for (int i = s0 + 1; i < s1; i++) {
        const int v = index[i];
        int k = i - 1;
        while (k >= s0 && index[k] > v) {
            index[k + 1] = index[k];
            k--;
        }
        index[k + 1] = v;
    }
}

// out[s] = (wrapped position - origin, q) in f32 for every binned slot s < start[n_bins].
extern "C" __global__ void msmb_gather(const double* __restrict__ atoms, MsmBinArgs g, const int* __restrict__ start,
                                       const int* __restrict__ index, float4* __restrict__ out) {
    const int s = blockIdx.x * blockDim.x + threadIdx.x;
    if (s >= start[g.n_bins]) return;
    const int j = index[s];
    const double* a = atoms + 4 * (long long)j;
    double p[3];
    msmb_bin(g, a, p);
    out[s] = make_float4((float)__dsub_rn(p[0], g.origin[0]), (float)__dsub_rn(p[1], g.origin[1]),
                         (float)__dsub_rn(p[2], g.origin[2]), (float)a[3]);
}
