// Electrostatic potential of a wavefunction (nuclei plus electron density) on a lattice, in float64:
// the device twin of the CPU engine in src/compute/cpu/qm_esp.rs.
//
// Compiled at run time with NVRTC by src/compute/cuda/qm_esp.rs, which prepends code generated from
// the polynomial layouts of src/compute/cpu/nuclear_attraction.rs: QM_MAX_L, the Boys table constants
// (QM_TABLE_ORDERS, QM_TAYLOR, QM_TABLE_PER_UNIT, QM_TABLE_MAX_T, QM_EXP_NEGLIGIBLE_T), QM_MIN_D2 and,
// for every total angular momentum L up to QM_MAX_L, qm_poly<L>: the straight-line polynomial
// sum_n F_n sum_m q_(n,m) X^m of one Hermite distribution.
//
// The host hands the density as screened distributions (one per pair of primitives, the density
// matrix already contracted in), grouped by L, each a record [p, Px, Py, Pz, q_0 .. q_(nq-1)] of
// doubles. One launch per group: one thread per lattice point loops over the group's records (every
// thread of a warp reads the same record: a broadcast), evaluates the Boys function from the table
// (Taylor series at the highest order, downward recursion) or its asymptotic form, and adds the
// polynomial into a double accumulator. qm_esp_nuclei starts the accumulator with the nuclear
// potential, qm_esp_finish rounds it into the float output (first poisoned with NaN by the host).

struct QmLattice {  // twin of QmLatticeArgs in src/compute/cuda/qm_esp.rs
    double origin[3];
    double steps[9];  // steps[3 * axis + component], bohr
    int nx, ny, nz, k0;
};

#define QM_BX 8
#define QM_BY 8
#define QM_BZ 2
#define QM_THREADS (QM_BX * QM_BY * QM_BZ)

// This thread's lattice point (bohr) and its index in the slab; false outside the slab.
__device__ __forceinline__ bool qm_point(const QmLattice& g, size_t* idx, double* x, double* y, double* z) {
    int i = blockIdx.x * QM_BX + threadIdx.x;
    int j = blockIdx.y * QM_BY + threadIdx.y;
    int kk = blockIdx.z * QM_BZ + threadIdx.z;
    if (i >= g.nx || j >= g.ny || kk >= g.nz) return false;
    double fi = (double)i, fj = (double)j, fk = (double)(kk + g.k0);
    *x = g.origin[0] + fi * g.steps[0] + fj * g.steps[3] + fk * g.steps[6];
    *y = g.origin[1] + fi * g.steps[1] + fj * g.steps[4] + fk * g.steps[7];
    *z = g.origin[2] + fi * g.steps[2] + fj * g.steps[5] + fk * g.steps[8];
    *idx = (size_t)i + (size_t)g.nx * ((size_t)j + (size_t)g.ny * (size_t)kk);
    return true;
}

// F_0(t) .. F_L(t) into F, as src/compute/cpu/boys.rs: below QM_TABLE_MAX_T the Taylor series of
// F_L and exp(-t) around the nearest table point (|dt| <= 1/32) and the downward recursion; above it
// F_0 = sqrt(pi / t) / 2 and the upward recursion.
template <int L>
__device__ __forceinline__ void qm_boys(double t, const double* __restrict__ table,
                                        const double* __restrict__ expt, double* F) {
    if (t < QM_TABLE_MAX_T) {
        int row = (int)(t * QM_TABLE_PER_UNIT + 0.5);
        double x = (double)row * (1.0 / QM_TABLE_PER_UNIT) - t;
        const double* v = table + row * QM_TABLE_ORDERS + L;
        double f = __ldg(v + QM_TAYLOR - 1);
        double e = 1.0;
#pragma unroll
        for (int k = QM_TAYLOR - 1; k >= 1; --k) {
            double xk = x * (1.0 / (double)k);
            f = fma(f, xk, __ldg(v + k - 1));
            e = fma(e, xk, 1.0);
        }
        e *= __ldg(expt + row);
        F[L] = f;
#pragma unroll
        for (int n = L; n >= 1; --n) {
            f = fma(2.0 * t, f, e) * (1.0 / (double)(2 * n - 1));
            F[n - 1] = f;
        }
    } else {
        double f = 0.886226925452758 * rsqrt(t);
        F[0] = f;
        if (L > 0) {
            double e = t < QM_EXP_NEGLIGIBLE_T ? exp(-t) : 0.0;
            double inv2t = 0.5 / t;
#pragma unroll
            for (int n = 0; n < L; ++n) {
                f = ((double)(2 * n + 1) * f - e) * inv2t;
                F[n + 1] = f;
            }
        }
    }
}

template <int L>
__device__ __forceinline__ void qm_group(double* __restrict__ acc, const QmLattice& g,
                                         const double* __restrict__ rec, int count, int stride,
                                         const double* __restrict__ table, const double* __restrict__ expt) {
    size_t idx;
    double x, y, z;
    if (!qm_point(g, &idx, &x, &y, &z)) return;
    double s = 0.0;
    for (int i = 0; i < count; ++i) {
        const double* r = rec + (size_t)i * (size_t)stride;
        double p = __ldg(r);
        double dx = __ldg(r + 1) - x;
        double dy = __ldg(r + 2) - y;
        double dz = __ldg(r + 3) - z;
        double t = p * fma(dx, dx, fma(dy, dy, dz * dz));
        double F[L + 1];
        qm_boys<L>(t, table, expt, F);
        s += qm_poly<L>(r + 4, dx, dy, dz, F);
    }
    acc[idx] += s;
}

#define QM_GROUP_KERNEL(L)                                                                              \
    extern "C" __global__ void __launch_bounds__(QM_THREADS)                                            \
        qm_esp_group_##L(double* __restrict__ acc, const QmLattice g, const double* __restrict__ rec,    \
                         int count, int stride, const double* __restrict__ table,                       \
                         const double* __restrict__ expt) {                                            \
        qm_group<L>(acc, g, rec, count, stride, table, expt);                                           \
    }

#if QM_MAX_L >= 0
QM_GROUP_KERNEL(0)
#endif
#if QM_MAX_L >= 1
QM_GROUP_KERNEL(1)
#endif
#if QM_MAX_L >= 2
QM_GROUP_KERNEL(2)
#endif
#if QM_MAX_L >= 3
QM_GROUP_KERNEL(3)
#endif
#if QM_MAX_L >= 4
QM_GROUP_KERNEL(4)
#endif
#if QM_MAX_L >= 5
QM_GROUP_KERNEL(5)
#endif
#if QM_MAX_L >= 6
QM_GROUP_KERNEL(6)
#endif
#if QM_MAX_L >= 7
QM_GROUP_KERNEL(7)
#endif
#if QM_MAX_L >= 8
QM_GROUP_KERNEL(8)
#endif
#if QM_MAX_L >= 9
QM_GROUP_KERNEL(9)
#endif
#if QM_MAX_L >= 10
QM_GROUP_KERNEL(10)
#endif
#if QM_MAX_L >= 11
QM_GROUP_KERNEL(11)
#endif
#if QM_MAX_L >= 12
QM_GROUP_KERNEL(12)
#endif
#if QM_MAX_L >= 13
QM_GROUP_KERNEL(13)
#endif
#if QM_MAX_L >= 14
QM_GROUP_KERNEL(14)
#endif

// Starts the accumulator: sum_A Z_A / max(|r - R_A|, QM_MIN_DISTANCE) over nuclei (x, y, z, Z).
extern "C" __global__ void __launch_bounds__(QM_THREADS)
qm_esp_nuclei(double* __restrict__ acc, const QmLattice g, const double4* __restrict__ nuclei, int n) {
    size_t idx;
    double x, y, z;
    if (!qm_point(g, &idx, &x, &y, &z)) return;
    double v = 0.0;
    for (int a = 0; a < n; ++a) {
        double4 nu = nuclei[a];
        double dx = nu.x - x, dy = nu.y - y, dz = nu.z - z;
        double d2 = fmax(fma(dx, dx, fma(dy, dy, dz * dz)), QM_MIN_D2);
        v = fma(nu.w, rsqrt(d2), v);
    }
    acc[idx] = v;
}

// Rounds the accumulated potential into the float output.
extern "C" __global__ void qm_esp_finish(float* __restrict__ out, const double* __restrict__ acc, size_t n) {
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = (float)acc[i];
}
