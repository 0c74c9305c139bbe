//! Host memory registered with the CUDA driver (`cuMemHostRegister`, portable to every context): a
//! grid buffer the worker pool keeps for reuse can be page-locked in place, so that a pipelined
//! slab (`super::pipeline`) is copied by the device straight into the caller's grid instead of
//! through the engine's page-locked chunk buffers and a host copy.
//!
//! Owns [`HostRegistration`] (the registration of one address range, undone when it drops) and the
//! process-wide list of registered ranges that [`is_registered`] reads. The owner of the memory
//! (`jobs::pool_buffers`) keeps the memory alive and unmoved while the registration lives, and
//! drops the registration before the memory goes back to the allocator.

use super::{CudaError, catch, dev_err};
use cudarc::driver::{CudaContext, sys};
use std::sync::{Arc, Mutex, MutexGuard};

/// Registered ranges: (first byte address, length in bytes).
static REGISTERED: Mutex<Vec<(usize, usize)>> = Mutex::new(Vec::new());

fn registered() -> MutexGuard<'static, Vec<(usize, usize)>> {
    // No code that can panic runs under the lock; recover anyway.
    REGISTERED.lock().unwrap_or_else(|p| p.into_inner())
}

/// True when `values` lies inside one registered range (the device may copy into it directly).
pub fn is_registered(values: &[f32]) -> bool {
    let start = values.as_ptr() as usize;
    let end = start + std::mem::size_of_val(values);
    !values.is_empty() && registered().iter().any(|&(s, len)| s <= start && end <= s + len)
}

/// One registered address range; unregistered when dropped.
pub struct HostRegistration {
    ptr: usize,
    bytes: usize,
    ctx: Arc<CudaContext>,
}

impl std::fmt::Debug for HostRegistration {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "HostRegistration({} bytes at {:#x})", self.bytes, self.ptr)
    }
}

impl HostRegistration {
    /// Page-locks `values` for every device (`CU_MEMHOSTREGISTER_PORTABLE`) through `ctx`.
    ///
    /// # Safety
    /// `values` must stay allocated at the same address, and no other registration may overlap
    /// it, until the returned registration has been dropped.
    pub unsafe fn new(ctx: &Arc<CudaContext>, values: &mut [f32]) -> Result<HostRegistration, CudaError> {
        let bytes = std::mem::size_of_val(values);
        if bytes == 0 {
            return Err(CudaError::Driver {
                what: "host registration".into(),
                detail: "empty buffer".into(),
            });
        }
        let ptr = values.as_mut_ptr();
        catch("host registration", || {
            ctx.bind_to_thread().map_err(dev_err("bind"))?;
            // SAFETY: `ptr` points to `bytes` bytes of live host memory (the caller's contract).
            unsafe { sys::cuMemHostRegister_v2(ptr.cast(), bytes, sys::CU_MEMHOSTREGISTER_PORTABLE) }
                .result()
                .map_err(dev_err("host registration"))
        })?;
        registered().push((ptr as usize, bytes));
        Ok(HostRegistration {
            ptr: ptr as usize,
            bytes,
            ctx: ctx.clone(),
        })
    }

    /// Bytes registered.
    pub fn bytes(&self) -> usize {
        self.bytes
    }
}

impl Drop for HostRegistration {
    fn drop(&mut self) {
        // Out of the list first: no slab starts a direct copy into memory about to be unregistered.
        registered().retain(|&(s, len)| (s, len) != (self.ptr, self.bytes));
        let (ptr, ctx) = (self.ptr, self.ctx.clone());
        let done = catch("host unregistration", move || {
            ctx.bind_to_thread().map_err(dev_err("bind"))?;
            // SAFETY: `ptr` was registered by `new` and is unregistered once, here.
            unsafe { sys::cuMemHostUnregister(ptr as *mut std::ffi::c_void) }
                .result()
                .map_err(dev_err("host unregistration"))
        });
        if let Err(e) = done {
            tracing::warn!("{e}");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_range_is_registered_only_inside_a_listed_range() {
        let v = vec![1.0f32; 64];
        assert!(!is_registered(&v));
        let start = v.as_ptr() as usize;
        registered().push((start + 16, 32 * 4));
        assert!(is_registered(&v[4..36]));
        assert!(is_registered(&v[10..20]));
        assert!(!is_registered(&v[3..20]));
        assert!(!is_registered(&v[4..37]));
        assert!(!is_registered(&v[4..4]));
        registered().retain(|&(s, _)| s != start + 16);
        assert!(!is_registered(&v[4..36]));
    }
}
