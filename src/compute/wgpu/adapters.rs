//! The wgpu adapters of this process for compute (not the window's render device).
//!
//! Owns [`adapters`]: every adapter wgpu finds on Vulkan, Metal, DirectX 12 (or `WGPU_BACKEND`), one per
//! physical device, enumerated once per process, each with its compute engine opened when first
//! asked ([`Adapter::engine`]) and the facts the pool's rules read ([`Adapter::is_software`],
//! [`Adapter::is_nvidia`], [`Adapter::describe`]).

use super::engine::{WgpuEngine, is_software};
use std::sync::{Arc, OnceLock};

/// PCI vendor id of NVIDIA.
const NVIDIA: u32 = 0x10de;

/// One physical adapter, with its engine (or why none) opened when first asked.
pub struct Adapter {
    info: wgpu::AdapterInfo,
    adapter: wgpu::Adapter,
    engine: OnceLock<Result<Arc<WgpuEngine>, String>>,
}

impl Adapter {
    /// "wgpu adapter NAME (BACKEND)".
    pub fn describe(&self) -> String {
        format!("wgpu adapter {} ({:?})", self.info.name, self.info.backend)
    }

    /// Mesa lavapipe/llvmpipe, WARP and other adapters that compute on the CPU.
    pub fn is_software(&self) -> bool {
        is_software(&self.info)
    }

    /// An NVIDIA device (which the CUDA engine serves when CUDA is present).
    pub fn is_nvidia(&self) -> bool {
        self.info.vendor == NVIDIA
    }

    /// The compute engine on this adapter, opened once; the reason as text when it cannot be.
    pub fn engine(&self) -> Result<Arc<WgpuEngine>, String> {
        self.engine
            .get_or_init(|| WgpuEngine::new(&self.adapter).map(Arc::new).map_err(|e| e.to_string()))
            .clone()
    }
}

/// Every adapter found once per process (the first backend of each physical device).
pub fn adapters() -> &'static [Adapter] {
    static FOUND: OnceLock<Vec<Adapter>> = OnceLock::new();
    FOUND.get_or_init(|| {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        desc.backends = backends();
        let instance = wgpu::Instance::new(desc);
        let mut found = pollster::block_on(instance.enumerate_adapters(backends()));
        // One physical device may appear on several backends: keep the first of each.
        found.sort_by_key(|a| backend_rank(a.get_info().backend));
        let mut seen: Vec<(u32, u32, String)> = Vec::new();
        let mut out = Vec::new();
        for a in found {
            let info = a.get_info();
            let key = (info.vendor, info.device, info.name.clone());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            out.push(Adapter {
                info,
                adapter: a,
                engine: OnceLock::new(),
            });
        }
        out
    })
}

/// The backends searched: `WGPU_BACKEND`, else Vulkan, Metal, DirectX 12 and WebGPU.
fn backends() -> wgpu::Backends {
    wgpu::Backends::from_env().unwrap_or(wgpu::Backends::PRIMARY)
}

fn backend_rank(b: wgpu::Backend) -> u8 {
    match b {
        wgpu::Backend::Vulkan | wgpu::Backend::Metal | wgpu::Backend::Dx12 => 0,
        _ => 1,
    }
}
