//! `RenderContext`: the wgpu device and queue and every scene pipeline, created once.
//!
//! The app builds one from the window's device (shared with egui); the headless `render` command
//! and the tests build one with [`RenderContext::headless`]. Pipelines target the offscreen
//! formats of [`crate::render::target::OffscreenTarget`] at a fixed MSAA sample count.

use super::RenderError;
use super::capabilities::{AdapterFacts, Capabilities, Transparency};
use super::gpu::{CylinderInstance, LineVertex, MeshVertex, MeshVertexColor, SphereInstance};
use super::shaders;

/// Colour format of the offscreen 3-D view (values stored as display colours).
pub const COLOR_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba8Unorm;
/// Depth format of the offscreen 3-D view.
pub const DEPTH_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Depth32Float;
/// Accumulation target of weighted blended transparency.
pub const ACCUM_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::Rgba16Float;
/// Revealage target of weighted blended transparency.
pub const REVEAL_FORMAT: wgpu::TextureFormat = wgpu::TextureFormat::R16Float;

/// The pipeline of transparent surfaces, by [`Transparency`] path.
pub(crate) enum MeshTransparent {
    /// Into the accumulation and revealage targets, resolved by the composite pass.
    WeightedBlended(wgpu::RenderPipeline),
    /// Blended over the colour target in the opaque pass, in draw order.
    PlainAlpha(wgpu::RenderPipeline),
}

/// How a mesh is coloured, by pipeline set.
#[derive(Clone, Copy)]
enum MeshKind {
    Field,
    Flat,
    Colors,
}

/// The opaque and transparent pipelines of one kind of mesh.
pub(crate) struct MeshPipelines {
    pub(crate) opaque: wgpu::RenderPipeline,
    /// Weighted blended transparency where its targets blend, else the surfaces blended over the
    /// opaque scene ([`Transparency`]).
    pub(crate) transparent: MeshTransparent,
}

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
    /// What the adapter can do and which path each feature takes (read once, at creation).
    pub capabilities: Capabilities,
    pub(crate) globals_layout: wgpu::BindGroupLayout,
    pub(crate) mesh_layout: wgpu::BindGroupLayout,
    pub(crate) slice_layout: wgpu::BindGroupLayout,
    pub(crate) composite_layout: wgpu::BindGroupLayout,
    pub(crate) spheres: wgpu::RenderPipeline,
    pub(crate) cylinders: wgpu::RenderPipeline,
    /// Meshes coloured by a volume (its 3-D texture bound).
    pub(crate) mesh_field: MeshPipelines,
    /// Meshes in one colour: no texture bound.
    pub(crate) mesh_flat: MeshPipelines,
    /// Meshes with a colour or value per vertex (a second vertex buffer): no texture bound.
    pub(crate) mesh_colors: MeshPipelines,
    pub(crate) mesh_flat_layout: wgpu::BindGroupLayout,
    pub(crate) lines: wgpu::RenderPipeline,
    pub(crate) slice: wgpu::RenderPipeline,
    pub(crate) composite: wgpu::RenderPipeline,
    pub(crate) linear_sampler: wgpu::Sampler,
}

const SPHERE_ATTRS: [wgpu::VertexAttribute; 2] = wgpu::vertex_attr_array![0 => Float32x4, 1 => Unorm8x4];
const CYLINDER_ATTRS: [wgpu::VertexAttribute; 5] =
    wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3, 2 => Float32, 3 => Unorm8x4, 4 => Unorm8x4];
const MESH_ATTRS: [wgpu::VertexAttribute; 2] = wgpu::vertex_attr_array![0 => Float32x3, 1 => Float32x3];
const MESH_COLOR_ATTRS: [wgpu::VertexAttribute; 2] = wgpu::vertex_attr_array![2 => Float32, 3 => Unorm8x4];
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
    /// Rasterise only the far faces of closed impostor boxes: every ray through the box crosses one
    /// near and one far face and the ray cast finds the same surface from either, so half of the
    /// fragments suffice; the far faces stay drawn when the near plane cuts into a box.
    cull_near_faces: bool,
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
            // The impostor boxes are wound clockwise seen from outside: their near faces are "front".
            front_face: wgpu::FrontFace::Cw,
            cull_mode: spec.cull_near_faces.then_some(wgpu::Face::Front),
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
    /// Builds the pipelines on an existing device (the window's, shared with egui) for the paths
    /// `capabilities` chose (read from the device's adapter with [`Capabilities::read`]).
    pub fn new(device: wgpu::Device, queue: wgpu::Queue, capabilities: Capabilities) -> RenderContext {
        let sample_count = if capabilities.sample_count >= 4 { 4 } else { 1 };
        let adapter_summary = capabilities.adapter.clone();
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
        let mesh_flat_layout = d.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("orbitfield flat mesh layout"),
            entries: &[uniform_entry(0, vf)],
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
        let mesh_flat_pl = layout(
            "orbitfield flat mesh pipeline layout",
            &[Some(&globals_layout), Some(&mesh_flat_layout)],
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
                cull_near_faces: false,
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
                cull_near_faces: true,
            },
        );
        let mesh_buffers = [Some(wgpu::VertexBufferLayout {
            array_stride: std::mem::size_of::<MeshVertex>() as u64,
            step_mode: wgpu::VertexStepMode::Vertex,
            attributes: &MESH_ATTRS,
        })];
        let mesh_color_buffers = [
            mesh_buffers[0].clone(),
            Some(wgpu::VertexBufferLayout {
                array_stride: std::mem::size_of::<MeshVertexColor>() as u64,
                step_mode: wgpu::VertexStepMode::Vertex,
                attributes: &MESH_COLOR_ATTRS,
            }),
        ];
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
        let oit_targets = [
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
        ];
        let alpha_target = [Some(wgpu::ColorTargetState {
            format: COLOR_FORMAT,
            blend: Some(wgpu::BlendState::ALPHA_BLENDING),
            write_mask: wgpu::ColorWrites::ALL,
        })];
        // Three sets: meshes coloured by a volume (3-D texture bound), meshes in one colour (the
        // `_flat` entry points) and meshes with a colour per vertex (`_colors`, a second vertex
        // buffer); the last two bind no texture.
        let mesh_pipelines = |layout: &wgpu::PipelineLayout, kind: MeshKind| {
            let (vs, buffers, fs_opaque, fs_oit, fs_alpha): (_, &[Option<wgpu::VertexBufferLayout>], _, _, _) =
                match kind {
                    MeshKind::Field => ("vs_mesh", &mesh_buffers, "fs_opaque", "fs_oit", "fs_alpha"),
                    MeshKind::Flat => (
                        "vs_mesh",
                        &mesh_buffers,
                        "fs_opaque_flat",
                        "fs_oit_flat",
                        "fs_alpha_flat",
                    ),
                    MeshKind::Colors => (
                        "vs_mesh_colors",
                        &mesh_color_buffers,
                        "fs_opaque_colors",
                        "fs_oit_colors",
                        "fs_alpha_colors",
                    ),
                };
            let spec = |label: &'static str, fs: &'static str, targets, depth_write| PipelineSpec {
                label,
                module: &mesh_m,
                layout,
                vs,
                fs,
                buffers,
                topology: wgpu::PrimitiveTopology::TriangleList,
                targets,
                depth_write,
                depth: true,
                samples: sample_count,
                cull_near_faces: false,
            };
            let opaque = pipeline(
                d,
                spec("orbitfield mesh opaque pipeline", fs_opaque, &opaque_target, true),
            );
            let transparent = match capabilities.transparency {
                Transparency::WeightedBlended => MeshTransparent::WeightedBlended(pipeline(
                    d,
                    spec(
                        "orbitfield mesh transparent (oit) pipeline",
                        fs_oit,
                        &oit_targets,
                        false,
                    ),
                )),
                Transparency::PlainAlpha => MeshTransparent::PlainAlpha(pipeline(
                    d,
                    spec(
                        "orbitfield mesh transparent (alpha) pipeline",
                        fs_alpha,
                        &alpha_target,
                        false,
                    ),
                )),
            };
            MeshPipelines { opaque, transparent }
        };
        let mesh_field = mesh_pipelines(&mesh_pl, MeshKind::Field);
        let mesh_flat = mesh_pipelines(&mesh_flat_pl, MeshKind::Flat);
        let mesh_colors = mesh_pipelines(&mesh_flat_pl, MeshKind::Colors);
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
                cull_near_faces: false,
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
                cull_near_faces: false,
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
                cull_near_faces: false,
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
            software_adapter: capabilities.software,
            capabilities,
            globals_layout,
            mesh_layout,
            slice_layout,
            composite_layout,
            spheres,
            cylinders,
            mesh_field,
            mesh_flat,
            mesh_colors,
            mesh_flat_layout,
            lines,
            slice,
            composite,
            linear_sampler,
        }
    }

    /// A context on its own device with no window: for the `render` command and tests. Picks a
    /// hardware adapter when there is one, else a software one (Mesa lavapipe or llvmpipe, WARP),
    /// among the backends `WGPU_BACKEND` names (all when unset). `sample_count` is a wish: the
    /// adapter's [`Capabilities`] decide.
    pub fn headless(sample_count: u32) -> Result<RenderContext, RenderError> {
        RenderContext::headless_on(
            wgpu::Backends::from_env().unwrap_or(wgpu::Backends::all()),
            sample_count,
        )
    }

    /// As [`RenderContext::headless`], on the given backends only.
    pub fn headless_on(backends: wgpu::Backends, sample_count: u32) -> Result<RenderContext, RenderError> {
        RenderContext::headless_with(backends, sample_count, |_, _| {})
    }

    /// As [`RenderContext::headless_on`], with the chosen paths adjusted by `adjust` (given the
    /// adapter's facts) before the pipelines are built: tests compare a degraded path with the full
    /// one on the same adapter.
    pub fn headless_with(
        backends: wgpu::Backends,
        sample_count: u32,
        adjust: impl FnOnce(&AdapterFacts, &mut Capabilities),
    ) -> Result<RenderContext, RenderError> {
        let mut desc = wgpu::InstanceDescriptor::new_without_display_handle_from_env();
        desc.backends = backends;
        let instance = wgpu::Instance::new(desc);
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
        let (device, queue) = pollster::block_on(adapter.request_device(&device_descriptor(&adapter)))
            .map_err(|e| RenderError::Device(e.to_string()))?;
        install_error_handler(&device);
        let facts = AdapterFacts::read(&adapter, &device.limits());
        let mut capabilities = Capabilities::choose(&facts, sample_count);
        adjust(&facts, &mut capabilities);
        Ok(RenderContext::new(device, queue, capabilities))
    }
}

/// The device the view asks an adapter for: the adapter's own limits (any adapter supports them;
/// the defaults of the OpenGL backend allow no storage buffers, so the compute pass could not run
/// even where the driver can), and timestamp queries where the adapter has them (the benches time
/// compute passes with them; nothing else depends on them).
pub fn device_descriptor(adapter: &wgpu::Adapter) -> wgpu::DeviceDescriptor<'static> {
    wgpu::DeviceDescriptor {
        label: Some("orbitfield device"),
        required_features: adapter.features() & wgpu::Features::TIMESTAMP_QUERY,
        required_limits: adapter.limits(),
        ..Default::default()
    }
}

/// Validation errors and a lost device become log lines instead of a panic (wgpu's default), and
/// are counted in [`device_errors`] for the jobs panel.
pub fn install_error_handler(device: &wgpu::Device) {
    device.on_uncaptured_error(std::sync::Arc::new(|e: wgpu::Error| {
        DEVICE_ERRORS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::error!("graphics device error: {e}");
    }));
    device.set_device_lost_callback(|reason, message| {
        DEVICE_ERRORS.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        tracing::error!("graphics device lost ({reason:?}): {message}");
    });
}

/// The GPU memory a device holds for the view (buffers and textures), for the jobs panel.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GpuResources {
    /// Live buffer and texture allocations.
    pub allocations: usize,
    /// Bytes they use.
    pub allocated_bytes: u64,
    /// Bytes of device memory reserved for them (blocks they are sub-allocated from).
    pub reserved_bytes: u64,
}

impl GpuResources {
    /// From the device's memory allocator; `None` where the backend keeps no report (OpenGL).
    pub fn read(device: &wgpu::Device) -> Option<GpuResources> {
        let r = device.generate_allocator_report()?;
        Some(GpuResources {
            allocations: r.allocations.len(),
            allocated_bytes: r.total_allocated_bytes,
            reserved_bytes: r.total_reserved_bytes,
        })
    }

    /// `GPU memory: 41 buffers and textures, 23.4 MiB (64.0 MiB reserved)`.
    pub fn line(&self) -> String {
        let mib = |b: u64| b as f64 / (1024.0 * 1024.0);
        format!(
            "GPU memory: {} buffers and textures, {:.1} MiB ({:.1} MiB reserved)",
            self.allocations,
            mib(self.allocated_bytes),
            mib(self.reserved_bytes)
        )
    }
}

static DEVICE_ERRORS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Graphics device errors reported since start (each one logged).
pub fn device_errors() -> u64 {
    DEVICE_ERRORS.load(std::sync::atomic::Ordering::Relaxed)
}
