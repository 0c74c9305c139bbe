// Small helper kernels of the CUDA engine (src/compute/cuda/mod.rs): poisoning output buffers and
// checking them for non-finite values.

// Fills `out` with NaN before a field kernel runs, so a point the kernel failed to write is caught by
// the host's finiteness check instead of passing as a stale or zero value.
extern "C" __global__ void fill_nan(float* out, int n) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) out[i] = __int_as_float(0x7fffffff);
}

// Sets `*flag` to 1 when any of the `n` values of `v` is NaN or infinite: the device's finiteness
// check of a chunk the engine copies straight into the caller's registered memory.
extern "C" __global__ void flag_nonfinite(const float* v, int n, int* flag) {
    int i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n && (__float_as_uint(v[i]) & 0x7f800000u) == 0x7f800000u) *flag = 1;
}
