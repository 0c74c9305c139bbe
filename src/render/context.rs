//! `RenderContext`: the wgpu device and queue and every scene pipeline, created once.
//!
//! The app builds one from the window's device (shared with egui); the headless `render` command
//! and the tests build one with [`RenderContext::headless`]. Pipelines target the offscreen
//! formats of [`crate::render::target::OffscreenTarget`] at a fixed MSAA sample count.

use super::RenderError;
use super::gpu::{CylinderInstance, LineVertex, MeshVertex, SphereInstance};
use super::shaders;

/// Colour format of the offscreen 3-D view (values stored as display colours).
pub const COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;
/// Depth format of the offscreen 3-D view.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// Accumulation target of weighted blended transparency.
pub const ACCUM_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba16Float;
/// Revealage target of weighted blended transparency.
pub const REVEAL_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::R16Float;

/// Device, queue, bind group layouts and pipelines.
pub struct RenderContext {
    pub device: wgpu::Device,
    pub queue: wgpu::Queue,
    /// MSAA samples of the scene passes (1 or 4).
    pub sample_count: u32,
    /// Adapter description for the status bar and logs.
    pub adapter_summary: String,
    /// True when the adapter is a software rasteriser (lavapipe, WARP): its compute passes run on
    /// the CPU cores the field engines also need, so the viewer extracts isosurfaces on the CPU.
    pub software_adapter: bool,
    pub(crate) globals_layout: wgpu::BindGroupLayout,
    pub(crate) mesh_layout: wgpu::BindGroupLayout,
    pub(crate) slice_layout: wgpu::BindGroupLayout,
    pub(crate) composite_layout: wgpu::BindGroupLayout,
    pub(crate) spheres: wgpu::RenderPipeline,
    pub(crate) cylinders: wgpu::RenderPipeline,
    pub(crate) mesh_opaque: wgpu::RenderPipeline,
    pub(crate) mesh_oit: wgpu::RenderPipeline,
    pub(crate) lines: wgpu::RenderPipeline,
    pub(crate) slice: wgpu::RenderPipeline,
    pub(crate) composite: wgpu::RenderPipeline,
    pub(crate) linear_sampler: wgpu::Sampler,
}

const SPHERE_ATTRS: [wgpu::VertexAttribute; 2] = wgpu::vertex_attr_array![0 => Float32x4, 1 => Unorm8x4];
const CYLINDER_ATTRS: [wgpu::VertexAttribute; 5] =
    wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3, 2 => Float32, 3 => Unorm8x4, 4 => Unorm8x4];
const MESH_ATTRS: [wgpu::VertexAttribute; 2] = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3];
const LINE_ATTRS: [wgpu::VertexAttribute; 2] = wgpu::vertex_attr_array![0 => Float32x3, 1 => Unorm8x4];

fn uniform_entry(binding: u32, visibility: wgpu::ShaderStages) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility,
        ty: wgpu::BindingType::Buffer {
            ty: wgpu::BufferBindingType::Uniform,
            has_dynamic_offset: false,
            min_binding_size: None,
        },
        count: None,
    }
}

fn texture_entry(binding: u32, filterable: bool) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::FRAGMENT,
        ty: wgpu::BindingType::Texture {
            sample_type: wgpu::TextureSampleType::Float { filterable },
            view_dimension: wgpu::TextureViewDimension::D2,
            multisampled: false,
        },
        count: None,
    }
}

fn sampler_entry(binding: u32) -> wgpu::BindGroupLayoutEntry {
    wgpu::BindGroupLayoutEntry {
        binding,
        visibility: wgpu::ShaderStages::FRAGMENT,
        ty: wgpu::BindingType::Sampler(wgpu::SamplerBindingType::Filtering),
        count: None,
    }
}

struct PipelineSpec<'a> {
    label: &'static str,
    module: &'a wgpu::ShaderModule,
    layout: &'a wgpu::PipelineLayout,
    vs: &'static str,
    fs: &'static str,
    buffers: &'a [Option<wgpu::VertexBufferLayout<'a>>],
    topology: wgpu::PrimitiveTopology,
    targets: &'a [Option<wgpu::ColorTargetState>],
    depth_write: bool,
    depth: bool,
    samples: u32,
}

fn pipeline(device: &wgpu::Device, spec: PipelineSpec<'_>) -> wgpu::RenderPipeline {
    device.create_render_pipeline(&wgpu::RenderPipelineDescriptor {
        label: Some(spec.label),
        layout: Some(spec.layout),
        vertex: wgpu::VertexState {
            module: spec.module,
            entry_point: Some(spec.vs),
            buffers: spec.buffers,
            compilation_options: wgpu::PipelineCompilationOptions::default(),
        },
        primitive: wgpu::PrimitiveState {
            topology: spec.topology,
            cull_mode: None,
            ..Default::default()
        },
        depth_stencil: spec.depth.then(|| wgpu::DepthStencilState {
            format: DEPTH_FORMAT,
            depth_write_enabled: Some(spec.depth_write),
            depth_compare: Some(wgpu::CompareFunction::LessEqual),
            stencil: wgpu::StencilState::default(),
            bias: wgpu::DepthBiasState::default(),
        }),
        multisample: wgpu::MultisampleState {
            count: spec.samples,
            mask: !0,
            alpha_to_coverage_enabled: false,
        },
        fragment: Some(wgpu::FragmentState {
            module: spec.module,
            entry_point: Some(spec.fs),
            targets: spec.targets,
            compilation_options: wgpu::PipelineCompilationOptions::default(),
        }),
        multiview_mask: None,
        cache: None,
    })
}

impl RenderContext {
    /// Builds the pipelines on an existing device (the window's, shared with egui).
    pub fn new(device: wgpu::Device, queue: wgpu::Queue, sample_count: u32, adapter_summary: String) -> RenderContext {
        let sample_count = if sample_count >= 4 { 4 } else { 1 };
        let d = &device;
        let vf = wgpu::ShaderStages::VERTEX_FRAGMENT;
        let globals_layout = d.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("orbitfield globals layout"),
            entries: &[uniform_entry(0, vf)],
        });
        let mesh_layout = d.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("orbitfield mesh layout"),
            entries: &[
                uniform_entry(0, vf),
                wgpu::BindGroupLayoutEntry {
                    binding: 1,
                    visibility: wgpu::ShaderStages::FRAGMENT,
                    ty: wgpu::BindingType::Texture {
                        sample_type: wgpu::TextureSampleType::Float { filterable: false },
                        view_dimension: wgpu::TextureViewDimension::D3,
                        multisampled: false,
                    },
                    count: None,
                },
            ],
        });
        let slice_layout = d.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("orbitfield slice layout"),
            entries: &[uniform_entry(0, vf), texture_entry(1, true), sampler_entry(2)],
        });
        let composite_layout = d.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("orbitfield oit composite layout"),
            entries: &[texture_entry(0, false), texture_entry(1, false)],
        });
        let layout = |label: &'static str, groups: &[Option<&wgpu::BindGroupLayout>]| {
            d.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
                label: Some(label),
                bind_group_layouts: groups,
                immediate_size: 0,
            })
        };
        let scene_layout = layout("orbitfield scene pipeline layout", &[Some(&globals_layout)]);
        let mesh_pl = layout(
            "orbitfield mesh pipeline layout",
            &[Some(&globals_layout), Some(&mesh_layout)],
        );
        let slice_pl = layout(
            "orbitfield slice pipeline layout",
            &[Some(&globals_layout), Some(&slice_layout)],
        );
        let composite_pl = layout("orbitfield composite pipeline layout", &[Some(&composite_layout)]);
        let module = |label: &'static str, src: String| {
            d.create_shader_module(wgpu::ShaderModuleDescriptor {
                label: Some(label),
                source: wgpu::ShaderSource::Wgsl(src.into()),
            })
        };
        let spheres_m = module("orbitfield spheres.wgsl", shaders::scene_source(shaders::SPHERES));
        let cylinders_m = module("orbitfield cylinders.wgsl", shaders::scene_source(shaders::CYLINDERS));
        let mesh_m = module("orbitfield mesh.wgsl", shaders::scene_source(shaders::MESH));
        let lines_m = module("orbitfield lines.wgsl", shaders::scene_source(shaders::LINES));
        let slice_m = module("orbitfield slice.wgsl", shaders::scene_source(shaders::SLICE));
        let composite_m = module("orbitfield oit_composite.wgsl", shaders::OIT_COMPOSITE.to_string());

        let opaque_target = [Some(wgpu::ColorTargetState {
            format: COLOR_FORMAT,
            blend: None,
            write_mask: wgpu::ColorWrites::ALL,
        })];
        let instance = |stride: usize, attributes: &'static [wgpu::VertexAttribute]| wgpu::VertexBufferLayout {
            array_stride: stride as u64,
            step_mode: wgpu::VertexStepMode::Instance,
            attributes,
        };
        let spheres = pipeline(
            d,
            PipelineSpec {
                label: "orbitfield spheres pipeline",
                module: &spheres_m,
                layout: &scene_layout,
                vs: "vs_sphere",
                fs: "fs_sphere",
                buffers: &[Some(instance(std::mem::size_of::<SphereInstance>(), &SPHERE_ATTRS))],
                topology: wgpu::PrimitiveTopology::TriangleStrip,
                targets: &opaque_target,
                depth_write: true,
                depth: true,
                samples: sample_count,
            },
        );
        let cylinders = pipeline(
            d,
            PipelineSpec {
                label: "orbitfield cylinders pipeline",
                module: &cylinders_m,
                layout: &scene_layout,
                vs: "vs_cylinder",
                fs: "fs_cylinder",
                buffers: &[Some(instance(std::mem::size_of::<CylinderInstance>(), &CYLINDER_ATTRS))],
                topology: wgpu::PrimitiveTopology::TriangleList,
                targets: &opaque_target,
                depth_write: true,
                depth: true,
                samples: sample_count,
            },
        );
        let mesh_buffers = [Some(wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<MeshVertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &MESH_ATTRS,
        })];
        let mesh_opaque = pipeline(
            d,
            PipelineSpec {
                label: "orbitfield mesh opaque pipeline",
                module: &mesh_m,
                layout: &mesh_pl,
                vs: "vs_mesh",
                fs: "fs_opaque",
                buffers: &mesh_buffers,
                topology: wgpu::PrimitiveTopology::TriangleList,
                targets: &opaque_target,
                depth_write: true,
                depth: true,
                samples: sample_count,
            },
        );
        let additive = wgpu::BlendComponent {
            src_factor: wgpu::BlendFactor::One,
            dst_factor: wgpu::BlendFactor::One,
            operation: wgpu::BlendOperation::Add,
        };
        let reveal = wgpu::BlendComponent {
            src_factor: wgpu::BlendFactor::Zero,
            dst_factor: wgpu::BlendFactor::OneMinusSrc,
            operation: wgpu::BlendOperation::Add,
        };
        let mesh_oit = pipeline(
            d,
            PipelineSpec {
                label: "orbitfield mesh transparent (oit) pipeline",
                module: &mesh_m,
                layout: &mesh_pl,
                vs: "vs_mesh",
                fs: "fs_oit",
                buffers: &mesh_buffers,
                topology: wgpu::PrimitiveTopology::TriangleList,
                targets: &[
                    Some(wgpu::ColorTargetState {
                        format: ACCUM_FORMAT,
                        blend: Some(wgpu::BlendState {
                            color: additive,
                            alpha: additive,
                        }),
                        write_mask: wgpu::ColorWrites::ALL,
                    }),
                    Some(wgpu::ColorTargetState {
                        format: REVEAL_FORMAT,
                        blend: Some(wgpu::BlendState {
                            color: reveal,
                            alpha: reveal,
                        }),
                        write_mask: wgpu::ColorWrites::ALL,
                    }),
                ],
                depth_write: false,
                depth: true,
                samples: sample_count,
            },
        );
        let lines = pipeline(
            d,
            PipelineSpec {
                label: "orbitfield lines pipeline",
                module: &lines_m,
                layout: &scene_layout,
                vs: "vs_line",
                fs: "fs_line",
                buffers: &[Some(wgpu::VertexBufferLayout {
                    array_stride: std::mem::size_of::<LineVertex>() as u64,
                    step_mode: wgpu::VertexStepMode::Vertex,
                    attributes: &LINE_ATTRS,
                })],
                topology: wgpu::PrimitiveTopology::LineList,
                targets: &opaque_target,
                depth_write: true,
                depth: true,
                samples: sample_count,
            },
        );
        let slice = pipeline(
            d,
            PipelineSpec {
                label: "orbitfield slice pipeline",
                module: &slice_m,
                layout: &slice_pl,
                vs: "vs_slice",
                fs: "fs_slice",
                buffers: &[],
                topology: wgpu::PrimitiveTopology::TriangleStrip,
                targets: &opaque_target,
                depth_write: true,
                depth: true,
                samples: sample_count,
            },
        );
        let composite = pipeline(
            d,
            PipelineSpec {
                label: "orbitfield oit composite pipeline",
                module: &composite_m,
                layout: &composite_pl,
                vs: "vs_fullscreen",
                fs: "fs_composite",
                buffers: &[],
                topology: wgpu::PrimitiveTopology::TriangleList,
                targets: &[Some(wgpu::ColorTargetState {
                    format: COLOR_FORMAT,
                    blend: Some(wgpu::BlendState::ALPHA_BLENDING),
                    write_mask: wgpu::ColorWrites::ALL,
                })],
                depth_write: false,
                depth: false,
                samples: 1,
            },
        );
        let linear_sampler = d.create_sampler(&wgpu::SamplerDescriptor {
            label: Some("orbitfield linear clamp sampler"),
            address_mode_u: wgpu::AddressMode::ClampToEdge,
            address_mode_v: wgpu::AddressMode::ClampToEdge,
            mag_filter: wgpu::FilterMode::Linear,
            min_filter: wgpu::FilterMode::Linear,
            ..Default::default()
        });
        RenderContext {
            device,
            queue,
            sample_count,
            adapter_summary,
            software_adapter: false,
            globals_layout,
            mesh_layout,
            slice_layout,
            composite_layout,
            spheres,
            cylinders,
            mesh_opaque,
            mesh_oit,
            lines,
            slice,
            composite,
            linear_sampler,
        }
    }

    /// A context on its own device with no window: for the `render` command and tests. Picks a
    /// hardware adapter when there is one, else a software one (Mesa lavapipe, WARP).
    pub fn headless(sample_count: u32) -> Result<RenderContext, RenderError> {
        let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
        let adapter = pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
            power_preference: wgpu::PowerPreference::HighPerformance,
            force_fallback_adapter: false,
            compatible_surface: None,
            apply_limit_buckets: false,
        }))
        .or_else(|_| {
            pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions {
                power_preference: wgpu::PowerPreference::LowPower,
                force_fallback_adapter: true,
                compatible_surface: None,
                apply_limit_buckets: false,
            }))
        })
        .map_err(|e| RenderError::NoAdapter(e.to_string()))?;
        let info = adapter.get_info();
        let summary = format!("{} ({:?}, {:?})", info.name, info.backend, info.device_type);
        let (device, queue) = pollster::block_on(adapter.request_device(&wgpu::DeviceDescriptor {
            label: Some("orbitfield headless device"),
            // The adapter's own limits: the marching-cubes compute pass needs more storage buffers per
            // stage than the downlevel defaults allow, and any adapter supports its own limits.
            required_limits: adapter.limits(),
            ..Default::default()
        }))
        .map_err(|e| RenderError::Device(e.to_string()))?;
        let mut rc = RenderContext::new(device, queue, sample_count, summary);
        rc.software_adapter = info.device_type == wgpu::DeviceType::Cpu;
        Ok(rc)
    }
}
