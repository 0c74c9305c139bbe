//! Shared by the GPU test files: the first CUDA device, or `None` with the reason printed (a failed
//! assertion instead when `ORBITFIELD_REQUIRE_CUDA=1`).

use orbitfield::compute::cuda::{self, CudaEngine};
use std::sync::Arc;

/// Device 0's engine, or `None` (printing why) where there is no usable CUDA device.
pub fn device() -> Option<Arc<CudaEngine>> {
    let required = std::env::var("ORBITFIELD_REQUIRE_CUDA")
        .map(|v| v == "1")
        .unwrap_or(false);
    let found = cuda::discover(Some(&[0]));
    match found.engines.into_iter().next() {
        Some(e) => Some(e),
        None => {
            let why = found
                .notes
                .iter()
                .map(ToString::to_string)
                .collect::<Vec<_>>()
                .join("; ");
            assert!(!required, "ORBITFIELD_REQUIRE_CUDA=1 but no CUDA device: {why}");
            println!("skipped: no CUDA device ({why})");
            None
        }
    }
}
