//! Shared by the wgpu engine test files: the engine on the first high-performance adapter (Mesa
//! lavapipe in CI, the GPU's own driver where there is one), or `None` with the reason printed (a
//! failed assertion instead when `ORBITFIELD_REQUIRE_WGPU=1`).

use orbitfield::compute::SlabEngine;
use orbitfield::compute::wgpu::engine::WgpuEngine;

/// True when `ORBITFIELD_REQUIRE_WGPU=1`: a missing adapter or engine fails the test.
#[allow(dead_code)]
pub fn required() -> bool {
    std::env::var("ORBITFIELD_REQUIRE_WGPU").is_ok_and(|v| v == "1")
}

/// The wgpu engine for the `what` test, or `None` (printing why).
pub fn engine(what: &str) -> Option<WgpuEngine> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = match pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
        power_preference: wgpu::PowerPreference::HighPerformance,
        ..Default::default()
    })) {
        Ok(a) => a,
        Err(e) => {
            assert!(!required(), "no wgpu adapter: {e}");
            eprintln!("skipping the {what} test: no adapter ({e})");
            return None;
        }
    };
    match WgpuEngine::new(&adapter) {
        Ok(e) => {
            eprintln!("{what} on {}", e.name());
            Some(e)
        }
        Err(e) => {
            assert!(!required(), "no wgpu engine: {e}");
            eprintln!("skipping the {what} test: {e}");
            None
        }
    }
}
