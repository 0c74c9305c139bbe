//! Finding CUDA devices without panicking: probing the driver and NVRTC libraries, reading
//! `ORBITFIELD_DEVICES`, and opening one [`CudaEngine`] per usable device. Called by the worker pool in
//! `jobs`, by the bench command and by the GPU tests; whatever fails comes back as a note and the
//! caller falls back to the CPU engine.

use super::engine::CudaEngine;
use super::{CudaError, catch, dev_err};
use cudarc::driver::CudaContext;
use std::panic::catch_unwind;
use std::sync::Arc;

/// Devices found, and why any were not (one line each).
pub struct Discovery {
    pub engines: Vec<Arc<CudaEngine>>,
    pub notes: Vec<CudaError>,
}

/// True when both libcuda and libnvrtc can be loaded (checked without touching the driver).
pub fn libraries_present() -> Result<(), CudaError> {
    // SAFETY: these only try to dlopen the libraries and report whether that worked.
    let cuda = catch_unwind(|| unsafe { cudarc::driver::sys::is_culib_present() }).unwrap_or(false);
    if !cuda {
        return Err(CudaError::NoDriverLibrary);
    }
    // SAFETY: as above, for NVRTC.
    let nvrtc = catch_unwind(|| unsafe { cudarc::nvrtc::sys::is_culib_present() }).unwrap_or(false);
    if !nvrtc {
        return Err(CudaError::NoNvrtcLibrary);
    }
    Ok(())
}

/// Device ordinals from `ORBITFIELD_DEVICES` ("0,2"), or `None` when unset. Invalid entries are
/// reported and ignored.
pub fn devices_from_env() -> (Option<Vec<usize>>, Vec<CudaError>) {
    match std::env::var("ORBITFIELD_DEVICES") {
        Ok(s) if !s.trim().is_empty() => {
            let mut out = Vec::new();
            let mut notes = Vec::new();
            for part in s.split(',') {
                match part.trim().parse::<usize>() {
                    Ok(d) if !out.contains(&d) => out.push(d),
                    Ok(_) => {}
                    Err(_) => notes.push(CudaError::BadDeviceList(part.trim().to_string())),
                }
            }
            (Some(out), notes)
        }
        _ => (None, Vec::new()),
    }
}

/// The number of CUDA devices the driver reports, without opening any (0 when the libraries or the
/// driver are missing). Batch ranks use it to share a node's devices.
pub fn device_count() -> usize {
    if libraries_present().is_err() {
        return 0;
    }
    catch("cuInit", || {
        cudarc::driver::result::init().map_err(dev_err("cuInit"))?;
        CudaContext::device_count().map_err(dev_err("cuDeviceGetCount"))
    })
    .map_or(0, |n| n.max(0) as usize)
}

/// Finds usable CUDA devices (all, or those in `selection`), creating a context and a stream for each
/// and compiling the Coulomb kernel as a smoke test. Never panics.
pub fn discover(selection: Option<&[usize]>) -> Discovery {
    let mut notes = Vec::new();
    if let Err(e) = libraries_present() {
        notes.push(e);
        return Discovery {
            engines: Vec::new(),
            notes,
        };
    }
    let count = match catch("cuInit", || {
        cudarc::driver::result::init().map_err(dev_err("cuInit"))?;
        CudaContext::device_count().map_err(dev_err("cuDeviceGetCount"))
    }) {
        Ok(n) => n.max(0) as usize,
        Err(e) => {
            notes.push(e);
            return Discovery {
                engines: Vec::new(),
                notes,
            };
        }
    };
    if count == 0 {
        notes.push(CudaError::NoDevices);
    }
    let wanted: Vec<usize> = match selection {
        Some(s) => s.to_vec(),
        None => (0..count).collect(),
    };
    let mut engines = Vec::new();
    for ordinal in wanted {
        if ordinal >= count {
            notes.push(CudaError::NoSuchDevice { ordinal, count });
            continue;
        }
        match CudaEngine::new(ordinal) {
            Ok(e) => engines.push(Arc::new(e)),
            Err(e) => notes.push(CudaError::Unusable {
                ordinal,
                reason: Box::new(e),
            }),
        }
    }
    Discovery { engines, notes }
}

/// The names of the CUDA devices the driver reports, by ordinal, without creating a context or
/// compiling a kernel (`compute::placement::Facts::probe_cuda`, `orbitfield info --devices`).
pub fn device_names() -> Result<Vec<String>, CudaError> {
    libraries_present()?;
    catch("cuDeviceGetName", || {
        cudarc::driver::result::init().map_err(dev_err("cuInit"))?;
        let count = CudaContext::device_count().map_err(dev_err("cuDeviceGetCount"))?;
        (0..count)
            .map(|ordinal| {
                let dev = cudarc::driver::result::device::get(ordinal).map_err(dev_err("cuDeviceGet"))?;
                cudarc::driver::result::device::get_name(dev).map_err(dev_err("cuDeviceGetName"))
            })
            .collect()
    })
}
