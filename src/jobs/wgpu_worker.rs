//! wgpu workers of the pool: which adapters get one, and their engines.
//!
//! Owns [`discover`] (every adapter wgpu finds on Vulkan, Metal and DirectX 12, one engine per
//! physical device, [`WgpuOptions`] deciding which of them take pool work) and [`WgpuDiscovery`].
//! A wgpu worker is an ordinary GPU worker of the pool ([`super::EngineSpec`] with `is_gpu`): it
//! takes tiles, a failed tile is retried on another device and then on the CPU, and fields the wgpu
//! engine does not compute (`WgpuEngine::supports`) are passed to the CPU workers, all by
//! `super::worker` as for CUDA. Rules:
//! - software adapters (Mesa lavapipe and llvmpipe, WARP) take no pool work unless
//!   [`WgpuOptions::include_software`] (tests; `ORBITFIELD_WGPU=software`);
//! - an NVIDIA adapter is left to the CUDA workers when CUDA found a device, unless
//!   [`WgpuOptions::nvidia_on_wgpu`];
//! - for now none start unless `ORBITFIELD_WGPU` asks (`on`, `software`, `nvidia`, `all`): the pool
//!   test (`tests/wgpu_engine.rs`) passes on lavapipe but did not finish on the H200's Vulkan adapter
//!   (2026-11-28, not yet understood), so the pool's default stays CUDA and CPU until it does.
//!
//! Adapters are enumerated and their devices opened once per process (the engines are shared by
//! every pool started afterwards). Called by `Pool::new`; the placement policy connects its
//! `--device` choice through [`WgpuOptions`].

use crate::compute::wgpu::engine::{WgpuEngine, is_software};
use std::sync::{Arc, OnceLock};

/// Which adapters get a worker.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WgpuOptions {
    /// Start no wgpu worker at all.
    pub off: bool,
    /// Software adapters take pool work too.
    pub include_software: bool,
    /// NVIDIA adapters take pool work even when CUDA workers run.
    pub nvidia_on_wgpu: bool,
}

impl WgpuOptions {
    /// From `ORBITFIELD_WGPU`: `on` (hardware adapters), `software` (software adapters too),
    /// `nvidia` (NVIDIA adapters too, beside CUDA), `all` (both); unset or anything else: none.
    pub fn from_env() -> WgpuOptions {
        let v = std::env::var("ORBITFIELD_WGPU").unwrap_or_default();
        let v = v.trim();
        WgpuOptions {
            off: !["on", "software", "nvidia", "all"].contains(&v),
            include_software: v == "software" || v == "all",
            nvidia_on_wgpu: v == "nvidia" || v == "all",
        }
    }
}

/// The engines a pool may use and one line per adapter left out (why).
#[derive(Clone, Default)]
pub struct WgpuDiscovery {
    pub engines: Vec<Arc<WgpuEngine>>,
    pub notes: Vec<String>,
}

/// PCI vendor id of NVIDIA.
const NVIDIA: u32 = 0x10de;

/// Every adapter found once per process, with its engine (or why none) opened when first asked.
struct Found {
    info: wgpu::AdapterInfo,
    adapter: wgpu::Adapter,
    engine: OnceLock<Result<Arc<WgpuEngine>, String>>,
}

fn found() -> &'static [Found] {
    static FOUND: OnceLock<Vec<Found>> = OnceLock::new();
    FOUND.get_or_init(|| {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        desc.backends = backends();
        let instance = wgpu::Instance::new(desc);
        let mut adapters = pollster::block_on(instance.enumerate_adapters(backends()));
        // One physical device may appear on several backends: keep the first of each.
        adapters.sort_by_key(|a| backend_rank(a.get_info().backend));
        let mut seen: Vec<(u32, u32, String)> = Vec::new();
        let mut out = Vec::new();
        for a in adapters {
            let info = a.get_info();
            let key = (info.vendor, info.device, info.name.clone());
            if seen.contains(&key) {
                continue;
            }
            seen.push(key);
            out.push(Found {
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

/// The engines for a pool with `options`, when CUDA found `cuda_devices` devices.
pub fn discover(options: WgpuOptions, cuda_devices: usize) -> WgpuDiscovery {
    let mut d = WgpuDiscovery::default();
    if options.off {
        return d;
    }
    for f in found() {
        let what = format!("wgpu adapter {} ({:?})", f.info.name, f.info.backend);
        if is_software(&f.info) && !options.include_software {
            // A software adapter computes on the CPU the CPU workers already use: no line needed.
            continue;
        }
        if f.info.vendor == NVIDIA && cuda_devices > 0 && !options.nvidia_on_wgpu {
            // The CUDA workers serve NVIDIA devices; no line needed.
            continue;
        }
        let engine = f
            .engine
            .get_or_init(|| WgpuEngine::new(&f.adapter).map(Arc::new).map_err(|e| e.to_string()));
        match engine {
            Ok(e) => d.engines.push(e.clone()),
            Err(e) => d.notes.push(format!("{what}: {e}")),
        }
    }
    d
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn off_starts_no_worker() {
        let off = WgpuOptions {
            off: true,
            ..WgpuOptions::default()
        };
        let d = discover(off, 0);
        assert!(d.engines.is_empty() && d.notes.is_empty());
    }
}
