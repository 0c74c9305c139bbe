//! The CUDA field engine: device discovery, NVRTC compilation of `kernels/*.cu` (cached in memory and
//! on disk) and kernel launches for orbitals, densities and Coulomb potential maps.
//!
//! Called by `jobs` (one persistent worker thread per device owns one [`CudaEngine`]), by the bench
//! command and by the GPU tests. Discovery never panics: cudarc panics when libcuda is missing, so the
//! driver and NVRTC libraries are probed first ([`discover`]); whatever fails comes back as a note,
//! and the caller falls back to the CPU engine.
//!
//! MO fields come in two kernel forms ([`MoForm`]): the general kernel (`kernels/mo.cu`, basis in
//! device arrays) and one generated per basis set (`mo::specialise`: exponents and contraction coefficients as
//! literals, one device function per distinct atom type, orbital coefficients and screening radii in
//! constant memory). Under `MoForm::Auto` both are built when the basis fits constant memory, the first
//! launch of a job times both on its first orbital and the faster is kept for the job's other launches.
//! Several orbitals of one wavefunction (the HOMO and LUMO two representations show at one frame, batched
//! by `jobs`) go in one launch of the general kernel's multi-orbital form (`mo::batch`), which shares
//! the screening and the exponentials; its first batch of a shape is timed against the orbitals one by
//! one and the faster is kept.
//!
//! Numerics: fp32 arithmetic with the SFU's `ex2.approx.ftz` (exponents pre-scaled by log2 e) and
//! `rsqrt.approx.ftz` (part of the Coulomb sum on the FMA pipe, see `kernels/dcs.cu`); the
//! tests hold the MO kernels to 1e-5 relative (2-norm) against the CPU engine and the Coulomb kernel
//! to 1e-5 against a float64 sum; the MSM plan stages (`msm_bins`, `msm_levels`) run in f64 and
//! are held to the host's bins exactly and to its levels within 1e-10. Every launch writes into a
//! buffer first filled with NaN, and a result with any non-finite value is an error
//! ([`ComputeError::NotFinite`]), so nothing unwritten reaches the caller.
//!
//! Files by job: [`discovery`] (library probing, devices, `ORBITFIELD_DEVICES`), [`nvrtc`] (compile,
//! disk cache, kernel dumps), [`engine`] ([`CudaEngine`], its buffers, the slab protocol and the finite
//! checks), `pipeline` (orbital slabs in chunks whose copies back overlap the next chunk's
//! kernels), [`host_register`] (grid buffers page-locked in place, which the chunks are copied
//! straight into), and one file per kernel family: [`mo`], [`dcs`], [`msm`] (with [`msm_bins`] and
//! [`msm_levels`], the plan's binning and long-range levels), [`qm_esp`], [`molsurf`], [`rdf`] and [`dssp`]
//! (secondary structure per frame: the coordinate passes of DSSP, held byte for byte to the CPU's), and
//! [`pb`] (the linearized Poisson-Boltzmann solver: multigrid-preconditioned conjugate gradients).

pub mod dcs;
pub mod discovery;
pub mod dssp;
pub mod engine;
pub mod host_register;
pub mod mo;
pub mod molsurf;
pub mod msm;
pub mod msm_bins;
pub mod msm_levels;
pub mod nvrtc;
pub mod pb;
mod pipeline;
pub mod qm_esp;
pub mod rdf;
pub mod ses;
// Implicit ligand sampling (kernels/ils.cu).
pub mod ils;

pub use dcs::{DCS_CHUNK, DCS_SRC, DcsVariant, SoftRsqrt};
pub use discovery::{Discovery, device_count, devices_from_env, discover, libraries_present};
pub use engine::{CudaEngine, UTIL_SRC, all_finite, copy_all_finite};
pub use host_register::{HostRegistration, is_registered};
pub use mo::{MO_COMMON_SRC, MO_GENERAL_SRC};
pub use nvrtc::{compile_ptx, dump_source};
pub use pipeline::PipelineStats;

use std::panic::{AssertUnwindSafe, catch_unwind};

/// Which form of the MO kernel to use.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MoForm {
    /// The specialised kernel when the basis fits constant memory, else the general one.
    Auto,
    /// Basis in device arrays.
    General,
    /// Basis compiled in as literals (falls back to general when it does not fit).
    Specialised,
}

/// Why CUDA cannot be used here, or why a call into the CUDA driver or NVRTC failed. Discovery
/// reports these as notes (one per device not used); inside a computation they arrive as
/// [`crate::compute::ComputeError::Cuda`], and the pool retries the tile elsewhere.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CudaError {
    #[error("no CUDA driver library (libcuda.so) found")]
    NoDriverLibrary,
    #[error("no NVRTC library (libnvrtc.so) found")]
    NoNvrtcLibrary,
    #[error("the CUDA driver reports no devices")]
    NoDevices,
    #[error("cuda:{ordinal}: no such device ({count} present)")]
    NoSuchDevice { ordinal: usize, count: usize },
    /// An entry of `ORBITFIELD_DEVICES` that is not a device number.
    #[error("ORBITFIELD_DEVICES: '{0}' is not a device number")]
    BadDeviceList(String),
    /// A device that was found but could not be opened.
    #[error("cuda:{ordinal}: {reason}")]
    Unusable { ordinal: usize, reason: Box<CudaError> },
    /// The CUDA library panicked (cudarc panics where a symbol is missing) during `what`.
    #[error("{what}: the CUDA library panicked")]
    Panicked { what: String },
    /// A driver call failed: what was being done and the driver's error code.
    #[error("{what} failed: {detail}")]
    Driver { what: String, detail: String },
    /// NVRTC rejected a kernel source; `log` is the compiler's output.
    #[error("NVRTC compile error: {log}")]
    Compile { log: String },
    /// NVRTC failed other than by rejecting the source.
    #[error("NVRTC: {detail}")]
    Nvrtc { detail: String },
    /// An earlier panic on this device left the engine's state unusable.
    #[error("engine state poisoned by an earlier panic")]
    Poisoned,
}

/// Runs `f`, turning a panic inside the CUDA library into [`CudaError::Panicked`].
fn catch<T>(what: &str, f: impl FnOnce() -> Result<T, CudaError>) -> Result<T, CudaError> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => Err(CudaError::Panicked { what: what.to_string() }),
    }
}

/// Maps a driver error to [`CudaError::Driver`] naming what was being done.
/// The launch grid over a slab of `n` points per axis, one block of `block` points per brick.
fn brick_launch(
    n: [i32; 3],
    block: (u32, u32, u32),
) -> Result<cudarc::driver::LaunchConfig, crate::compute::ComputeError> {
    let cfg = cudarc::driver::LaunchConfig {
        grid_dim: (
            (n[0].max(0) as u32).div_ceil(block.0),
            (n[1].max(0) as u32).div_ceil(block.1),
            (n[2].max(0) as u32).div_ceil(block.2),
        ),
        block_dim: block,
        shared_mem_bytes: 0,
    };
    if cfg.grid_dim.1 > 65535 || cfg.grid_dim.2 > 65535 {
        return Err(crate::compute::ComputeError::Device(
            "lattice too large for one launch".into(),
        ));
    }
    Ok(cfg)
}

/// Runs `a` then `b` (both working on `state`) on the engine's stream and returns their device
/// times in milliseconds (CUDA events; waits for both).
fn time_two<S>(
    engine: &engine::CudaEngine,
    state: &mut S,
    a: impl FnOnce(&mut S) -> Result<(), crate::compute::ComputeError>,
    b: impl FnOnce(&mut S) -> Result<(), crate::compute::ComputeError>,
) -> Result<(f32, f32), crate::compute::ComputeError> {
    let flags = Some(cudarc::driver::sys::CUevent_flags::CU_EVENT_DEFAULT);
    let ev: Vec<_> = (0..3)
        .map(|_| engine.ctx.new_event(flags))
        .collect::<Result<_, _>>()
        .map_err(dev_err("event"))?;
    let [e0, e1, e2] = ev.as_slice() else {
        return Err(crate::compute::ComputeError::Device("events".into()));
    };
    e0.record(&engine.stream).map_err(dev_err("event record"))?;
    a(state)?;
    e1.record(&engine.stream).map_err(dev_err("event record"))?;
    b(state)?;
    e2.record(&engine.stream).map_err(dev_err("event record"))?;
    e2.synchronize().map_err(dev_err("event sync"))?;
    let ta = e0.elapsed_ms(e1).map_err(dev_err("elapsed"))?;
    let tb = e1.elapsed_ms(e2).map_err(dev_err("elapsed"))?;
    Ok((ta, tb))
}

fn dev_err(what: &str) -> impl Fn(cudarc::driver::DriverError) -> CudaError + '_ {
    move |e| CudaError::Driver {
        what: what.to_string(),
        detail: format!("{e:?}"),
    }
}

/// Tests: uniform numbers in [0, 1) from a xorshift seeded by the clock (the seed is printed), so
/// every run draws fresh inputs.
#[cfg(test)]
pub(crate) fn test_numbers() -> impl FnMut() -> f64 {
    let seed = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(1, |d| d.as_nanos() as u64);
    println!("seed {seed}");
    let mut s = seed | 1;
    move || {
        s ^= s << 13;
        s ^= s >> 7;
        s ^= s << 17;
        (s >> 11) as f64 / (1u64 << 53) as f64
    }
}
