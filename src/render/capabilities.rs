//! `Capabilities`: what the adapter and device the view draws on can do, read once at start, and
//! which rendering path each feature takes there, with the reason as text.
//!
//! Built by [`crate::render::RenderContext`] when it is created (window, headless `render`,
//! benchmarks, tests) from the adapter's backend, downlevel flags, limits and texture-format
//! features and the limits the device was actually created with (a device asked for fewer limits
//! than its adapter has cannot use the rest). The app reads it to choose the isosurface extractor and
//! shows [`Capabilities::summary`] in the jobs panel and in `--verbose` output.

use super::context::{ACCUM_FORMAT, COLOR_FORMAT, DEPTH_FORMAT, REVEAL_FORMAT};

/// Storage buffers the marching-cubes compute pass binds in one stage (`shaders/marching_cubes.wgsl`).
pub const MC_STORAGE_BUFFERS: u32 = 7;
/// Workgroup size of the marching-cubes compute pass.
pub const MC_WORKGROUP_SIZE: u32 = 64;

/// How transparent surfaces are drawn.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Transparency {
    /// Weighted blended order-independent transparency (needs blendable half-float targets).
    WeightedBlended,
    /// Surfaces blended over the opaque scene in draw order ("over" operator).
    PlainAlpha,
}

/// What the view may use on this adapter, and why.
#[derive(Clone, Debug, PartialEq)]
pub struct Capabilities {
    /// Adapter name, backend and type, e.g. `llvmpipe (LLVM 15.0.6, 256 bits) (Gl, Cpu)`.
    pub adapter: String,
    pub backend: wgpu::Backend,
    /// A software rasteriser (lavapipe, llvmpipe, WARP): it shares the CPU cores with the field
    /// engines.
    pub software: bool,
    /// The device can run the marching-cubes compute pass (tests and benchmarks use it wherever it
    /// runs).
    pub mc_compute_supported: bool,
    /// Isosurfaces extracted by the compute pass on the render device; else the CPU mesher thread.
    pub gpu_marching_cubes: bool,
    /// Surfaces extracted on the render device and coloured by the potential of point charges get
    /// their values there too (`compute::wgpu::vertex_potential`); else such a colouring takes the CPU
    /// meshes and the vertex-values thread. Follows `gpu_marching_cubes` (same compute needs, and a
    /// software rasteriser's compute shares the cores of the CPU path).
    pub gpu_vertex_potential: bool,
    /// The device can run the orbital pass of `compute::wgpu::orbital` (molecular orbitals evaluated on
    /// the render device). The viewer computes orbitals and densities there where `orbitals_on`
    /// says (`app::fields::device`: `auto` only on a hardware adapter; on a software rasteriser the
    /// CPU engine is faster).
    pub orbital_pass_supported: bool,
    pub transparency: Transparency,
    /// A lattice can colour surfaces as a 3-D texture; else per-vertex values do.
    pub volume_textures: bool,
    /// MSAA samples of the scene passes (1 or 4).
    pub sample_count: u32,
    /// One reason per choice, in the order of the fields above.
    pub reasons: Vec<String>,
}

/// The facts the choices are made from (separate from wgpu types so the rules can be tested).
#[derive(Clone, Debug, PartialEq)]
pub struct AdapterFacts {
    pub adapter: String,
    pub backend: wgpu::Backend,
    pub software: bool,
    pub compute_shaders: bool,
    /// The device's limits admit the orbital pass (`compute::wgpu::orbital::device_supports`).
    pub orbital_pass_fits: bool,
    /// Of the device as created.
    pub max_storage_buffers_per_stage: u32,
    pub max_compute_invocations_per_workgroup: u32,
    pub max_compute_workgroups_per_dimension: u32,
    pub max_texture_dimension_3d: u32,
    /// Both weighted-blended targets render and blend.
    pub oit_formats_blend: bool,
    /// Colour and depth targets take 4 samples (and the accumulation targets, when used).
    pub msaa4: bool,
}

impl AdapterFacts {
    /// Reads the facts from an adapter and the limits its device was created with.
    pub fn read(adapter: &wgpu::Adapter, device_limits: &wgpu::Limits) -> AdapterFacts {
        let info = adapter.get_info();
        let downlevel = adapter.get_downlevel_capabilities();
        let renders_and_blends = |f: wgpu::TextureFormat| {
            let ff = adapter.get_texture_format_features(f);
            ff.allowed_usages.contains(wgpu::TextureUsages::RENDER_ATTACHMENT)
                && ff.flags.contains(wgpu::TextureFormatFeatureFlags::BLENDABLE)
        };
        let oit_formats_blend = renders_and_blends(ACCUM_FORMAT) && renders_and_blends(REVEAL_FORMAT);
        let x4 = |f: wgpu::TextureFormat| {
            adapter
                .get_texture_format_features(f)
                .flags
                .contains(wgpu::TextureFormatFeatureFlags::MULTISAMPLE_X4)
        };
        let msaa4 =
            x4(COLOR_FORMAT) && x4(DEPTH_FORMAT) && (!oit_formats_blend || (x4(ACCUM_FORMAT) && x4(REVEAL_FORMAT)));
        let compute_shaders = downlevel.flags.contains(wgpu::DownlevelFlags::COMPUTE_SHADERS);
        AdapterFacts {
            adapter: format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type),
            backend: info.backend,
            software: info.device_type == wgpu::DeviceType::Cpu,
            compute_shaders,
            orbital_pass_fits: crate::compute::wgpu::orbital::device_supports(device_limits, compute_shaders).is_ok(),
            max_storage_buffers_per_stage: device_limits.max_storage_buffers_per_shader_stage,
            max_compute_invocations_per_workgroup: device_limits.max_compute_invocations_per_workgroup,
            max_compute_workgroups_per_dimension: device_limits.max_compute_workgroups_per_dimension,
            max_texture_dimension_3d: device_limits.max_texture_dimension_3d,
            oit_formats_blend,
            msaa4,
        }
    }
}

impl Capabilities {
    /// The device can write cartoon meshes with the compute pass of `compute::wgpu::cartoon`: it
    /// runs compute passes (the cartoon pass binds fewer storage buffers than the marching cubes)
    /// and has usable 3-D textures, so that a volume colouring surfaces colours those meshes too
    /// (per-vertex colouring by a volume needs CPU meshes). Tests and benchmarks use it wherever
    /// it runs.
    pub fn cartoon_pass_supported(&self) -> bool {
        self.mc_compute_supported && self.volume_textures
    }

    /// The viewer's cartoon meshes are written on this device: where it can, and not on a software
    /// rasteriser (there the pass runs on the CPU cores too, far slower than the CPU mesh;
    /// `benches/RESULTS.md`).
    pub fn gpu_cartoons(&self) -> bool {
        self.cartoon_pass_supported() && !self.software
    }

    /// Reads the adapter once and chooses every path (see [`Capabilities::choose`]).
    pub fn read(adapter: &wgpu::Adapter, device: &wgpu::Device, want_samples: u32) -> Capabilities {
        Capabilities::choose(&AdapterFacts::read(adapter, &device.limits()), want_samples)
    }

    /// The paths for these facts. `want_samples` is the caller's MSAA wish (1 or 4); a software
    /// rasteriser draws without multisampling (4 samples cost it most of its frame rate).
    pub fn choose(f: &AdapterFacts, want_samples: u32) -> Capabilities {
        let mut reasons = Vec::new();
        let compute_fits = f.compute_shaders
            && f.max_storage_buffers_per_stage >= MC_STORAGE_BUFFERS
            && f.max_compute_invocations_per_workgroup >= MC_WORKGROUP_SIZE
            && f.max_compute_workgroups_per_dimension >= 1;
        let gpu_marching_cubes = compute_fits && !f.software;
        reasons.push(if gpu_marching_cubes {
            "isosurfaces: GPU marching cubes (compute pass on the render device), coloured by charges' potential there too".to_string()
        } else if !f.compute_shaders {
            "isosurfaces: CPU mesher (the device has no compute shaders)".to_string()
        } else if f.max_storage_buffers_per_stage < MC_STORAGE_BUFFERS {
            format!(
                "isosurfaces: CPU mesher (the device allows {} storage buffers per stage, the compute pass needs {MC_STORAGE_BUFFERS})",
                f.max_storage_buffers_per_stage
            )
        } else if !compute_fits {
            "isosurfaces: CPU mesher (the device's compute workgroup limits are too small)".to_string()
        } else {
            "isosurfaces: CPU mesher (a software rasteriser's compute shares the cores of the field engines)".to_string()
        });
        let transparency = if f.oit_formats_blend {
            reasons.push("transparency: weighted blended (half-float targets blend)".to_string());
            Transparency::WeightedBlended
        } else {
            reasons.push("transparency: plain alpha (half-float targets do not blend here)".to_string());
            Transparency::PlainAlpha
        };
        let volume_textures = f.max_texture_dimension_3d >= 64;
        reasons.push(if volume_textures {
            format!(
                "volume colouring: 3-D textures (up to {} per axis)",
                f.max_texture_dimension_3d
            )
        } else {
            "volume colouring: per-vertex values (no usable 3-D textures)".to_string()
        });
        let sample_count = if want_samples < 4 {
            reasons.push("MSAA: off (not asked for)".to_string());
            1
        } else if f.software {
            reasons.push("MSAA: off (software rasteriser)".to_string());
            1
        } else if !f.msaa4 {
            reasons.push("MSAA: off (the targets take no 4 samples here)".to_string());
            1
        } else {
            reasons.push("MSAA: 4x".to_string());
            4
        };
        Capabilities {
            adapter: f.adapter.clone(),
            backend: f.backend,
            software: f.software,
            mc_compute_supported: compute_fits,
            gpu_marching_cubes,
            gpu_vertex_potential: gpu_marching_cubes,
            orbital_pass_supported: f.orbital_pass_fits && f.compute_shaders,
            transparency,
            volume_textures,
            sample_count,
            reasons,
        }
    }

    /// One line for the jobs panel and `--verbose` output.
    pub fn summary(&self) -> String {
        format!("{}: {}", self.adapter, self.reasons.join("; "))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn facts() -> AdapterFacts {
        AdapterFacts {
            adapter: "test".into(),
            backend: wgpu::Backend::Vulkan,
            software: false,
            compute_shaders: true,
            orbital_pass_fits: true,
            max_storage_buffers_per_stage: 8,
            max_compute_invocations_per_workgroup: 256,
            max_compute_workgroups_per_dimension: 65_535,
            max_texture_dimension_3d: 2048,
            oit_formats_blend: true,
            msaa4: true,
        }
    }

    #[test]
    fn full_hardware_takes_every_gpu_path() {
        let c = Capabilities::choose(&facts(), 4);
        assert!(c.gpu_marching_cubes && c.volume_textures && c.orbital_pass_supported);
        assert!(c.gpu_vertex_potential);
        assert_eq!((c.transparency, c.sample_count), (Transparency::WeightedBlended, 4));
        assert_eq!(c.reasons.len(), 4);
    }

    #[test]
    fn webgl2_limits_fall_back_to_the_cpu_mesher() {
        // The OpenGL backend with WebGL2 default limits: no storage buffers in compute.
        let f = AdapterFacts {
            backend: wgpu::Backend::Gl,
            max_storage_buffers_per_stage: 0,
            ..facts()
        };
        let c = Capabilities::choose(&f, 4);
        assert!(!c.gpu_marching_cubes);
        assert!(c.summary().contains("0 storage buffers"), "{}", c.summary());
        // The orbital pass's own rule on the same limits.
        let webgl = wgpu::Limits::downlevel_webgl2_defaults();
        assert!(crate::compute::wgpu::orbital::device_supports(&webgl, true).is_err());
    }

    #[test]
    fn software_and_missing_formats_degrade() {
        let f = AdapterFacts {
            software: true,
            oit_formats_blend: false,
            max_texture_dimension_3d: 0,
            ..facts()
        };
        let c = Capabilities::choose(&f, 4);
        assert!(!c.gpu_marching_cubes && !c.volume_textures && !c.gpu_vertex_potential);
        assert_eq!((c.transparency, c.sample_count), (Transparency::PlainAlpha, 1));
        let f = AdapterFacts {
            compute_shaders: false,
            msaa4: false,
            ..facts()
        };
        let c = Capabilities::choose(&f, 4);
        assert!(!c.gpu_marching_cubes);
        assert_eq!(c.sample_count, 1);
    }
}
