//! wgpu workers of the pool: which adapters get one, and their engines.
//!
//! Owns [`discover`] (the adapters of `compute::wgpu::adapters`, one engine per physical device,
//! [`WgpuOptions`] deciding which of them take pool work) and [`WgpuDiscovery`].
//! A wgpu worker is an ordinary GPU worker of the pool ([`super::EngineSpec`] with `is_gpu`): it
//! takes tiles, a failed tile is retried on another device and then on the CPU, and fields the wgpu
//! engine does not compute (`WgpuEngine::supports`) are passed to the CPU workers, all by
//! `super::worker` as for CUDA. Rules:
//! - software adapters (Mesa lavapipe and llvmpipe, WARP) take no pool work unless
//!   [`WgpuOptions::include_software`] (tests; `ORBITFIELD_WGPU=software`);
//! - an NVIDIA adapter is left to the CUDA workers when CUDA found a device, unless
//!   [`WgpuOptions::nvidia_on_wgpu`];
//! - `ORBITFIELD_WGPU` changes the default (hardware adapters): `off` (none), `software` (software
//!   adapters too), `nvidia` (NVIDIA adapters too, beside CUDA), `all` (both).
//!
//! Adapters are enumerated and their devices opened once per process (the engines are shared by
//! every pool started afterwards). Called by `Pool::new`; the placement policy connects its
//! `--device` choice through [`WgpuOptions`].

use crate::compute::wgpu::adapters::adapters;
use crate::compute::wgpu::engine::WgpuEngine;
use std::sync::Arc;

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
    /// Hardware adapters (NVIDIA ones only where CUDA found no device): `--device gpu`.
    pub fn hardware() -> WgpuOptions {
        WgpuOptions::default()
    }

    /// Every adapter, software and NVIDIA ones included: `--device wgpu`.
    pub fn forced() -> WgpuOptions {
        WgpuOptions {
            off: false,
            include_software: true,
            nvidia_on_wgpu: true,
        }
    }

    /// From `ORBITFIELD_WGPU`: unset or `on`: hardware adapters; `off`: none; `software`
    /// (software adapters too), `nvidia` (NVIDIA adapters too, beside CUDA), `all` (both).
    pub fn from_env() -> WgpuOptions {
        let v = std::env::var("ORBITFIELD_WGPU").unwrap_or_default();
        let v = v.trim();
        WgpuOptions {
            off: v == "off",
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

/// The engines for a pool with `options`, when CUDA found `cuda_devices` devices.
pub fn discover(options: WgpuOptions, cuda_devices: usize) -> WgpuDiscovery {
    let mut d = WgpuDiscovery::default();
    if options.off {
        return d;
    }
    for f in adapters() {
        if f.is_software() && !options.include_software {
            // A software adapter computes on the CPU the CPU workers already use: no line needed.
            continue;
        }
        if f.is_nvidia() && cuda_devices > 0 && !options.nvidia_on_wgpu {
            // The CUDA workers serve NVIDIA devices; no line needed.
            continue;
        }
        match f.engine() {
            Ok(e) => d.engines.push(e),
            Err(e) => d.notes.push(format!("{}: {e}", f.describe())),
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
