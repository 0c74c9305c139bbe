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
//!
//! Numerics: fp32 arithmetic with the SFU's `ex2.approx.ftz` (exponents pre-scaled by log2 e) and
//! `rsqrt.approx.ftz` (part of the Coulomb sum on the FMA pipe, see `kernels/dcs.cu`); the
//! tests hold the MO kernels to 1e-5 relative (2-norm) against the CPU engine and the Coulomb kernel
//! to 1e-5 against a float64 sum. Every launch writes into a buffer first filled with NaN, and a
//! result with any non-finite value is an error ([`ComputeError::NotFinite`]), so nothing unwritten
//! reaches the caller.
//!
//! Files by job: [`discovery`] (library probing, devices, `ORBITFIELD_DEVICES`), [`nvrtc`] (compile,
//! disk cache, kernel dumps), [`engine`] ([`CudaEngine`], its buffers, the slab protocol and the finite
//! checks), and one file per kernel family: [`mo`], [`dcs`], [`msm`] and [`rdf`].

pub mod dcs;
pub mod discovery;
pub mod engine;
pub mod mo;
pub mod msm;
pub mod nvrtc;
pub mod rdf;

pub use dcs::{DCS_CHUNK, DCS_SRC, DcsVariant};
pub use discovery::{Discovery, devices_from_env, discover, libraries_present};
pub use engine::{CudaEngine, UTIL_SRC, all_finite, copy_all_finite};
pub use mo::{MO_COMMON_SRC, MO_GENERAL_SRC};
pub use nvrtc::{compile_ptx, dump_source};

use crate::compute::ComputeError;
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

fn catch<T>(what: &str, f: impl FnOnce() -> Result<T, String>) -> Result<T, String> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(r) => r,
        Err(_) => Err(format!("{what}: the CUDA library panicked")),
    }
}

fn dev_err(what: &str) -> impl Fn(cudarc::driver::DriverError) -> ComputeError + '_ {
    move |e| ComputeError::Device(format!("{what}: {e:?}"))
}
