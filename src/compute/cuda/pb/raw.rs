//! Launches of the CUDA Poisson-Boltzmann solver's inner loop (conjugate gradients and the multigrid
//! V-cycle) by raw device addresses, without cudarc's per-argument stream events.
//!
//! Owns [`Ptrs`] (the addresses of a level's buffers, taken once when they are allocated),
//! [`launch`], [`zero`] and [`read_acc`]. The engine runs more than one stream, so cudarc records and
//! waits on an event for every buffer argument of every launch: two driver calls per argument, while
//! a V-cycle on a 161^3 lattice is some sixty launches, most of them on small coarse levels that take
//! the GPU microseconds. Every buffer these launches touch belongs to the solver and is used on its
//! one stream only, so the stream's order alone orders the uses; the buffers are freed
//! stream-ordered on that stream, after every launch that names them.

use super::drv;
use crate::compute::pb::PbError;
use cudarc::driver::{CudaFunction, CudaSlice, CudaStream, DevicePtr, DeviceRepr, LaunchConfig};
use std::ffi::c_void;
use std::sync::Arc;

/// A device address (`CUdeviceptr`) as a kernel argument.
pub(super) type Addr = cudarc::driver::sys::CUdeviceptr;

/// The address of `slice` on `stream`.
pub(super) fn addr<T: DeviceRepr>(stream: &Arc<CudaStream>, slice: &CudaSlice<T>) -> Addr {
    let (ptr, _sync) = slice.device_ptr(stream);
    ptr
}

/// The addresses of one multigrid level's float32 buffers.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct Ptrs {
    pub eps: [Addr; 3],
    pub k2: Addr,
    pub b: Addr,
    pub x: Addr,
    pub t: Addr,
    /// The packed one-byte coefficients (`pb_pack`).
    pub pk: Addr,
}

/// Builds the argument list of a raw launch: the address of each value, in the kernel's order.
macro_rules! raw_args {
    ($($v:expr),* $(,)?) => {
        [$( (&$v) as *const _ as *mut std::ffi::c_void ),*]
    };
}
pub(super) use raw_args;

/// Launches `f` on `stream`.
///
/// # Safety
/// `args` point at values of the kernel's parameter types, in its order, alive for the call; every
/// buffer they name lives on `stream` and is large enough for what the kernel reads and writes.
pub(super) unsafe fn launch(
    stream: &CudaStream,
    f: &CudaFunction,
    cfg: LaunchConfig,
    args: &mut [*mut c_void],
    what: &'static str,
) -> Result<(), PbError> {
    // SAFETY: the caller's contract.
    unsafe {
        cudarc::driver::result::launch_kernel(
            f.cu_function(),
            cfg.grid_dim,
            cfg.block_dim,
            cfg.shared_mem_bytes,
            stream.cu_stream(),
            args,
        )
    }
    .map_err(|e| drv(what)(e))
}

/// Sets `bytes` bytes at `ptr` to zero, in `stream`'s order.
///
/// # Safety
/// `ptr` names at least `bytes` bytes of a buffer used on `stream`.
pub(super) unsafe fn zero(stream: &CudaStream, ptr: Addr, bytes: usize) -> Result<(), PbError> {
    // SAFETY: the caller's contract.
    unsafe { cudarc::driver::result::memset_d8_async(ptr, 0, bytes, stream.cu_stream()) }.map_err(|e| drv("memset")(e))
}

/// The solver's eight float64 accumulators at `acc`, once `stream` has reached this point.
///
/// # Safety
/// `acc` names at least eight doubles of a buffer used on `stream`.
pub(super) unsafe fn read_acc(stream: &CudaStream, acc: Addr) -> Result<[f64; 8], PbError> {
    let mut out = [f64::NAN; 8];
    // SAFETY: the caller's contract; `out` holds eight doubles.
    unsafe { cudarc::driver::result::memcpy_dtoh_async(&mut out[..], acc, stream.cu_stream()) }
        .map_err(|e| drv("download")(e))?;
    stream.synchronize().map_err(|e| drv("synchronize")(e))?;
    Ok(out)
}
