//! `GpuScene`: the GPU side of what one 3-D view draws (sphere and cylinder instances, meshes,
//! lines, a slice) and the passes that draw it into an [`OffscreenTarget`].
//!
//! The app (and the headless renderer) upload CPU data when it changes — a new frame's positions,
//! a new mesh — and call [`GpuScene::draw`] every frame; drawing allocates nothing and rebuilds no
//! buffers, so a million atoms stay interactive. Colour and opacity changes touch uniforms only.
//!
//! Meshes are drawn in one colour, coloured by a volume (a 3-D texture read per fragment), or with a
//! colour per vertex (categorical colours, or values through the colormap and range of the colour
//! field; for surfaces extracted on the render device the values may be written there too, by
//! `compute::wgpu::vertex_potential`). Where the adapter has no usable 3-D textures ([`super::Capabilities::volume_textures`]),
//! colouring by a volume samples it at the vertices on the CPU (trilinear, clamped to the lattice
//! as the texture read is) and draws those values per vertex: the scene keeps a copy of the CPU
//! meshes' positions for that on such adapters only.

use super::camera::Camera;
use super::colormap::Colormap;
use super::context::{MeshTransparent, RenderContext};
use super::gpu::{
    COLORMAP_ENTRIES, CylinderInstance, Globals, LineVertex, MeshUniform, MeshVertex, MeshVertexColor, SliceUniform,
    SphereInstance, pack_rgba,
};
use super::target::OffscreenTarget;
use crate::model::Grid3;
use glam::Vec3;
use wgpu::util::DeviceExt;

mod upload;
use upload::*;

/// Background, depth cue and light: uniforms only.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ViewStyle {
    /// Linear 0..1 RGB of the background (also the depth-cue colour).
    pub background: [f32; 3],
    /// Depth-cue strength 0 (off) .. 1.
    pub depth_cue: f32,
    /// Direction towards the light in view space (x right, y up, z towards the viewer).
    pub light_dir_view: [f32; 3],
}

impl Default for ViewStyle {
    fn default() -> Self {
        ViewStyle {
            background: [0.0, 0.0, 0.0],
            depth_cue: 0.5,
            light_dir_view: [-0.3, 0.4, 1.0],
        }
    }
}

/// A triangle mesh as the CPU holds it (borrowed; the renderer copies it to the GPU).
#[derive(Clone, Copy, Debug, Default)]
pub struct MeshInput<'a> {
    pub positions_angstrom: &'a [[f32; 3]],
    /// One normal per position (need not be unit length; zero is allowed).
    pub normals: &'a [[f32; 3]],
    pub indices: &'a [u32],
    /// A value per position, drawn through the colour field's colormap and range (see
    /// [`GpuScene::set_value_colors`]); ignored unless there is one per position.
    pub values: &'a [f32],
    /// An sRGB colour per position (its alpha is ignored: the mesh's opacity applies); drawn
    /// instead of `values` when there is one per position.
    pub colors_rgba8: &'a [[u8; 4]],
}

/// Colour and opacity of a mesh; opacity below 1 draws it with order-independent transparency.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct MeshStyle {
    pub color: [f32; 3],
    pub opacity: f32,
}

/// A second field that colours every mesh of a scene (e.g. the electrostatic potential on a density
/// isosurface): values from `range[0]` to `range[1]` span the colormap.
#[derive(Clone, Copy, Debug)]
pub struct ColorFieldInput<'a> {
    pub grid: &'a Grid3,
    pub range: [f32; 2],
    pub colormap: Colormap,
}

/// Why a colour field cannot be used.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum ColorFieldError {
    #[error("the colouring field's lattice is not axis-aligned (rotated or sheared lattices are not supported)")]
    NotAxisAligned,
    #[error(
        "the colouring field is {0}x{1}x{2} points, more than this GPU takes as a 3-D texture ({3} per axis, 1 GiB in all)"
    )]
    TooLarge(usize, usize, usize, u32),
    #[error("the colouring field has no values")]
    Empty,
    #[error(
        "this graphics adapter has no usable 3-D textures, and surfaces extracted on the GPU cannot be coloured per vertex"
    )]
    NoVolumeTextures,
}

/// The colour field: its 3-D texture, or (without usable 3-D textures) the lattice the CPU samples
/// at the vertices; neither when none is set. The uniform holds the colormap and range that per-vertex
/// values are drawn through either way.
struct GpuColorField {
    view: Option<wgpu::TextureView>,
    per_vertex: Option<Grid3>,
    uniform: MeshUniform,
}

impl GpuColorField {
    fn textured(&self) -> bool {
        self.view.is_some() && self.uniform.field_origin_angstrom[3] > 0.5
    }
}

/// What the scene keeps of a CPU mesh on adapters without usable 3-D textures, to colour it by a
/// volume later: its positions and its own per-vertex colours.
struct VertexSource {
    positions_angstrom: Vec<[f32; 3]>,
    own_colors: Option<Vec<MeshVertexColor>>,
}

/// How many indices a mesh draws: known on the host, or written by the GPU marching-cubes pass into
/// an indirect-draw buffer (the mesh never visits the host).
enum IndexCount {
    Direct(u32),
    Indirect(wgpu::Buffer),
}

/// A mesh on the GPU.
pub struct GpuMesh {
    vertices: wgpu::Buffer,
    indices: wgpu::Buffer,
    index_count: IndexCount,
    /// One [`MeshVertexColor`] per vertex, when the mesh is drawn with a colour per vertex.
    colors: Option<wgpu::Buffer>,
    source: Option<VertexSource>,
    uniform: wgpu::Buffer,
    bind_group: wgpu::BindGroup,
    pub style: MeshStyle,
}

/// A slice image on the GPU: a textured quad.
pub struct GpuSlice {
    bind_group: wgpu::BindGroup,
}

/// A colour image for a slice plane and where it lies.
#[derive(Clone, Debug)]
pub struct SliceImage {
    pub width: u32,
    pub height: u32,
    /// RGBA8 rows, first row at `origin`.
    pub rgba: Vec<u8>,
    pub origin_angstrom: [f32; 3],
    pub edge_u_angstrom: [f32; 3],
    pub edge_v_angstrom: [f32; 3],
}

/// A growable GPU buffer of `T`s.
struct InstanceBuffer {
    label: &'static str,
    usage: wgpu::BufferUsages,
    buffer: Option<wgpu::Buffer>,
    capacity_bytes: u64,
    count: u32,
}

impl InstanceBuffer {
    fn new(label: &'static str, usage: wgpu::BufferUsages) -> InstanceBuffer {
        InstanceBuffer {
            label,
            usage: usage | wgpu::BufferUsages::COPY_DST,
            buffer: None,
            capacity_bytes: 0,
            count: 0,
        }
    }

    fn upload<T: bytemuck::Pod>(&mut self, ctx: &RenderContext, items: &[T]) {
        let bytes: &[u8] = bytemuck::cast_slice(items);
        self.count = u32::try_from(items.len()).unwrap_or(u32::MAX);
        if bytes.is_empty() {
            return;
        }
        let need = bytes.len() as u64;
        match &self.buffer {
            Some(b) if self.capacity_bytes >= need => ctx.queue.write_buffer(b, 0, bytes),
            _ => {
                let capacity = need.next_power_of_two().max(256);
                let b = ctx.device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(self.label),
                    size: capacity,
                    usage: self.usage,
                    mapped_at_creation: false,
                });
                ctx.queue.write_buffer(&b, 0, bytes);
                self.buffer = Some(b);
                self.capacity_bytes = capacity;
            }
        }
    }

    fn live(&self) -> Option<(&wgpu::Buffer, u32)> {
        self.buffer.as_ref().filter(|_| self.count > 0).map(|b| (b, self.count))
    }
}

/// Everything one view draws, on the GPU.
pub struct GpuScene {
    globals: wgpu::Buffer,
    globals_bind_group: wgpu::BindGroup,
    spheres: InstanceBuffer,
    cylinders: InstanceBuffer,
    lines: InstanceBuffer,
    pub meshes: Vec<GpuMesh>,
    slice: Option<GpuSlice>,
    color_field: GpuColorField,
    /// Range and colormap of per-vertex values while no colour field is set.
    value_colors: ([f32; 2], Colormap),
    pub style: ViewStyle,
}

/// Per-vertex values map 0..1 onto the colormap until told otherwise.
const DEFAULT_VALUE_RANGE: [f32; 2] = [0.0, 1.0];

impl GpuScene {
    pub fn new(ctx: &RenderContext) -> GpuScene {
        let globals = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("orbitfield globals"),
            size: std::mem::size_of::<Globals>() as u64,
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let globals_bind_group = ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("orbitfield globals bind group"),
            layout: &ctx.globals_layout,
            entries: &[wgpu::BindGroupEntry {
                binding: 0,
                resource: globals.as_entire_binding(),
            }],
        });
        GpuScene {
            globals,
            globals_bind_group,
            spheres: InstanceBuffer::new("orbitfield sphere instances", wgpu::BufferUsages::VERTEX),
            cylinders: InstanceBuffer::new("orbitfield cylinder instances", wgpu::BufferUsages::VERTEX),
            lines: InstanceBuffer::new("orbitfield line vertices", wgpu::BufferUsages::VERTEX),
            meshes: Vec::new(),
            slice: None,
            color_field: no_color_field(DEFAULT_VALUE_RANGE, Colormap::default()),
            value_colors: (DEFAULT_VALUE_RANGE, Colormap::default()),
            style: ViewStyle::default(),
        }
    }

    /// Colours every mesh by `field` (values through its colormap), or restores their plain colours
    /// with `None`. Meshes uploaded later are coloured the same way.
    pub fn set_color_field(
        &mut self,
        ctx: &RenderContext,
        field: Option<ColorFieldInput<'_>>,
    ) -> Result<(), ColorFieldError> {
        let (range, colormap) = self.value_colors;
        self.color_field = match field {
            None => no_color_field(range, colormap),
            Some(f) if !ctx.capabilities.volume_textures => {
                if self.meshes.iter().any(|m| m.source.is_none()) {
                    return Err(ColorFieldError::NoVolumeTextures);
                }
                per_vertex_color_field(f)?
            }
            Some(f) => upload_color_field(ctx, f)?,
        };
        self.refresh_meshes(ctx);
        Ok(())
    }

    /// Range and colormap of the per-vertex values of meshes ([`MeshInput::values`]) while no colour
    /// field is set (a colour field brings its own).
    pub fn set_value_colors(&mut self, ctx: &RenderContext, range: [f32; 2], colormap: Colormap) {
        self.value_colors = (range, colormap);
        if self.color_field.view.is_none() && self.color_field.per_vertex.is_none() {
            self.color_field = no_color_field(range, colormap);
            self.refresh_meshes(ctx);
        }
    }

    /// Brings every mesh's per-vertex colours, uniform and bind group in line with the colour field.
    fn refresh_meshes(&mut self, ctx: &RenderContext) {
        for m in &mut self.meshes {
            if let Some(src) = &m.source {
                let colors = match &self.color_field.per_vertex {
                    Some(grid) => Some(sampled_colors(grid, &src.positions_angstrom)),
                    None => src.own_colors.clone(),
                };
                m.colors = colors.map(|c| upload_colors(ctx, m.colors.take(), &c));
            }
            m.bind_group = mesh_bind_group(ctx, &m.uniform, &self.color_field);
            ctx.queue.write_buffer(
                &m.uniform,
                0,
                bytemuck::bytes_of(&mesh_uniform(m.style, &self.color_field)),
            );
        }
    }

    /// True when meshes are coloured by a field.
    pub fn has_color_field(&self) -> bool {
        self.color_field.textured() || self.color_field.per_vertex.is_some()
    }

    /// Replaces the atoms (reuses the buffer when it is large enough).
    pub fn set_spheres(&mut self, ctx: &RenderContext, spheres: &[SphereInstance]) {
        self.spheres.upload(ctx, spheres);
    }

    /// Replaces the bonds.
    pub fn set_cylinders(&mut self, ctx: &RenderContext, cylinders: &[CylinderInstance]) {
        self.cylinders.upload(ctx, cylinders);
    }

    /// Replaces the line list (pairs of vertices).
    pub fn set_lines(&mut self, ctx: &RenderContext, lines: &[LineVertex]) {
        self.lines.upload(ctx, lines);
    }

    /// Number of spheres, cylinders and line vertices currently uploaded.
    pub fn counts(&self) -> (u32, u32, u32) {
        (self.spheres.count, self.cylinders.count, self.lines.count)
    }

    /// Replaces all meshes. Indices past the vertex count are dropped with their triangle.
    pub fn set_meshes(&mut self, ctx: &RenderContext, meshes: &[(MeshInput<'_>, MeshStyle)]) {
        self.meshes.clear();
        self.add_meshes(ctx, meshes);
    }

    /// Adds meshes after those uploaded (e.g. CPU meshes beside the GPU marching-cubes pass's).
    pub fn add_meshes(&mut self, ctx: &RenderContext, meshes: &[(MeshInput<'_>, MeshStyle)]) {
        for (m, style) in meshes {
            if let Some(g) = upload_mesh(ctx, m, *style, &self.color_field) {
                self.meshes.push(g);
            }
        }
    }

    /// Replaces all meshes by meshes the GPU marching-cubes pass made (`compute::wgpu::marching_cubes`): their
    /// buffers are drawn as they are, with the index count the pass wrote.
    pub fn set_gpu_meshes(
        &mut self,
        ctx: &RenderContext,
        meshes: Vec<(crate::compute::wgpu::marching_cubes::GpuMesh, MeshStyle)>,
    ) {
        self.set_gpu_meshes_valued(ctx, meshes.into_iter().map(|(m, s)| (m, s, None)).collect());
    }

    /// As [`GpuScene::set_gpu_meshes`], each mesh with its values per vertex where given (a
    /// [`crate::compute::wgpu::vertex_potential::VertexValues`] buffer written on the device, one
    /// [`MeshVertexColor`] per vertex): those meshes are drawn through the colormap and range of
    /// [`GpuScene::set_value_colors`], as CPU meshes with [`MeshInput::values`] are.
    pub fn set_gpu_meshes_valued(
        &mut self,
        ctx: &RenderContext,
        meshes: Vec<(
            crate::compute::wgpu::marching_cubes::GpuMesh,
            MeshStyle,
            Option<crate::compute::wgpu::vertex_potential::VertexValues>,
        )>,
    ) {
        self.meshes.clear();
        for (m, style, values) in meshes {
            let uniform = ctx.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                label: Some("orbitfield mesh uniform"),
                contents: bytemuck::bytes_of(&mesh_uniform(style, &self.color_field)),
                usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
            });
            let bind_group = mesh_bind_group(ctx, &uniform, &self.color_field);
            // A value buffer too small for the mesh's vertices is not drawn from.
            let colors = values.filter(|v| v.capacity >= m.capacity.vertices).map(|v| v.buffer);
            let (vertices, indices, args) = m.into_buffers();
            self.meshes.push(GpuMesh {
                vertices,
                indices,
                index_count: IndexCount::Indirect(args),
                colors,
                source: None,
                uniform,
                bind_group,
                style,
            });
        }
    }

    /// Adds a cartoon mesh written on the device by the cartoon pass (`compute::wgpu::cartoon`) after
    /// the meshes uploaded: its buffers are drawn as they are, with its colour per vertex and the
    /// index count known on the host. Returns false (adding nothing) when it has no triangles.
    pub fn add_cartoon_mesh(
        &mut self,
        ctx: &RenderContext,
        mesh: &crate::compute::wgpu::cartoon::CartoonMesh,
        style: MeshStyle,
    ) -> bool {
        if mesh.n_indices < 3 {
            return false;
        }
        let uniform = ctx.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("orbitfield cartoon mesh uniform"),
            contents: bytemuck::bytes_of(&mesh_uniform(style, &self.color_field)),
            usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
        });
        let bind_group = mesh_bind_group(ctx, &uniform, &self.color_field);
        self.meshes.push(GpuMesh {
            vertices: mesh.vertices.clone(),
            indices: mesh.indices.clone(),
            index_count: IndexCount::Direct(mesh.n_indices),
            colors: Some(mesh.colors.clone()),
            source: None,
            uniform,
            bind_group,
            style,
        });
        true
    }

    /// Changes a mesh's colour and opacity (uniform only).
    pub fn set_mesh_style(&mut self, ctx: &RenderContext, index: usize, style: MeshStyle) {
        if let Some(m) = self.meshes.get_mut(index) {
            m.style = style;
            ctx.queue.write_buffer(
                &m.uniform,
                0,
                bytemuck::bytes_of(&mesh_uniform(style, &self.color_field)),
            );
        }
    }

    /// Shows a slice image, or removes it with `None`.
    pub fn set_slice(&mut self, ctx: &RenderContext, slice: Option<&SliceImage>) {
        self.slice = slice.and_then(|s| upload_slice(ctx, s));
    }

    /// Draws the scene from `camera` into `target`: opaque pass, transparent pass, composite.
    pub fn draw(
        &self,
        ctx: &RenderContext,
        encoder: &mut wgpu::CommandEncoder,
        target: &OffscreenTarget,
        camera: &Camera,
    ) {
        let [w, h] = target.size_px;
        let view = camera.view();
        let proj = camera.projection(w as f32 / h.max(1) as f32);
        let eye_to_center = (camera.scene_center_angstrom - camera.eye_angstrom()).length();
        let r = camera.scene_radius_angstrom.max(1e-3);
        let light = Vec3::from_array(self.style.light_dir_view).normalize_or(Vec3::Z);
        let globals = Globals {
            view: view.to_cols_array_2d(),
            proj: proj.to_cols_array_2d(),
            view_proj: (proj * view).to_cols_array_2d(),
            light_dir_view: light.extend(0.0).to_array(),
            background: [
                self.style.background[0],
                self.style.background[1],
                self.style.background[2],
                1.0,
            ],
            fog: [
                eye_to_center - r * 0.3,
                eye_to_center + r,
                self.style.depth_cue.clamp(0.0, 1.0),
                0.0,
            ],
            viewport: [w as f32, h as f32, 0.0, 0.0],
        };
        ctx.queue.write_buffer(&self.globals, 0, bytemuck::bytes_of(&globals));
        let bg = self.style.background;
        // Coloured by a 3-D texture: every mesh through the field's pipelines; else each mesh by
        // whether it has per-vertex colours.
        let textured = self.color_field.textured();
        let pipelines = |m: &GpuMesh| {
            if textured {
                &ctx.mesh_field
            } else if m.colors.is_some() {
                &ctx.mesh_colors
            } else {
                &ctx.mesh_flat
            }
        };
        let (color_view, color_resolve) = match &target.color_msaa_view {
            Some(msaa) => (msaa, Some(&target.color_view)),
            None => (&target.color_view, None),
        };
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("orbitfield opaque pass"),
                color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                    view: color_view,
                    resolve_target: color_resolve,
                    depth_slice: None,
                    ops: wgpu::Operations {
                        load: wgpu::LoadOp::Clear(wgpu::Color {
                            r: f64::from(bg[0]),
                            g: f64::from(bg[1]),
                            b: f64::from(bg[2]),
                            a: 1.0,
                        }),
                        store: wgpu::StoreOp::Store,
                    },
                })],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &target.depth_view,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Clear(1.0),
                        store: wgpu::StoreOp::Store,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_bind_group(0, &self.globals_bind_group, &[]);
            if let Some((buf, n)) = self.spheres.live() {
                pass.set_pipeline(&ctx.spheres);
                pass.set_vertex_buffer(0, buf.slice(..));
                pass.draw(0..4, 0..n);
            }
            if let Some((buf, n)) = self.cylinders.live() {
                pass.set_pipeline(&ctx.cylinders);
                pass.set_vertex_buffer(0, buf.slice(..));
                pass.draw(0..36, 0..n);
            }
            if let Some((buf, n)) = self.lines.live() {
                pass.set_pipeline(&ctx.lines);
                pass.set_vertex_buffer(0, buf.slice(..));
                pass.draw(0..n, 0..1);
            }
            if let Some(slice) = &self.slice {
                pass.set_pipeline(&ctx.slice);
                pass.set_bind_group(1, &slice.bind_group, &[]);
                pass.draw(0..4, 0..1);
            }
            for m in self.meshes.iter().filter(|m| m.style.opacity >= 0.999) {
                pass.set_pipeline(&pipelines(m).opaque);
                draw_mesh(&mut pass, m, !textured);
            }
            for m in self.meshes.iter().filter(|m| is_transparent(m.style)) {
                if let MeshTransparent::PlainAlpha(alpha) = &pipelines(m).transparent {
                    pass.set_pipeline(alpha);
                    draw_mesh(&mut pass, m, !textured);
                }
            }
        }
        let weighted = |m: &&GpuMesh| {
            is_transparent(m.style) && matches!(pipelines(m).transparent, MeshTransparent::WeightedBlended(_))
        };
        if !self.meshes.iter().any(|m| weighted(&m)) {
            return;
        }
        let (accum, accum_resolve) = target_pair(&target.accum_msaa_view, &target.accum_view);
        let (reveal, reveal_resolve) = target_pair(&target.reveal_msaa_view, &target.reveal_view);
        {
            let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
                label: Some("orbitfield transparent (oit) pass"),
                color_attachments: &[
                    Some(wgpu::RenderPassColorAttachment {
                        view: accum,
                        resolve_target: accum_resolve,
                        depth_slice: None,
                        ops: wgpu::Operations {
                            load: wgpu::LoadOp::Clear(wgpu::Color::TRANSPARENT),
                            store: wgpu::StoreOp::Store,
                        },
                    }),
                    Some(wgpu::RenderPassColorAttachment {
                        view: reveal,
                        resolve_target: reveal_resolve,
                        depth_slice: None,
                        ops: wgpu::Operations {
                            load: wgpu::LoadOp::Clear(wgpu::Color::WHITE),
                            store: wgpu::StoreOp::Store,
                        },
                    }),
                ],
                depth_stencil_attachment: Some(wgpu::RenderPassDepthStencilAttachment {
                    view: &target.depth_view,
                    depth_ops: Some(wgpu::Operations {
                        load: wgpu::LoadOp::Load,
                        store: wgpu::StoreOp::Discard,
                    }),
                    stencil_ops: None,
                }),
                timestamp_writes: None,
                occlusion_query_set: None,
                multiview_mask: None,
            });
            pass.set_bind_group(0, &self.globals_bind_group, &[]);
            for m in self.meshes.iter().filter(weighted) {
                if let MeshTransparent::WeightedBlended(oit) = &pipelines(m).transparent {
                    pass.set_pipeline(oit);
                    draw_mesh(&mut pass, m, !textured);
                }
            }
        }
        let mut pass = encoder.begin_render_pass(&wgpu::RenderPassDescriptor {
            label: Some("orbitfield oit composite pass"),
            color_attachments: &[Some(wgpu::RenderPassColorAttachment {
                view: &target.color_view,
                resolve_target: None,
                depth_slice: None,
                ops: wgpu::Operations {
                    load: wgpu::LoadOp::Load,
                    store: wgpu::StoreOp::Store,
                },
            })],
            depth_stencil_attachment: None,
            timestamp_writes: None,
            occlusion_query_set: None,
            multiview_mask: None,
        });
        pass.set_pipeline(&ctx.composite);
        pass.set_bind_group(0, &target.composite_bind_group, &[]);
        pass.draw(0..3, 0..1);
    }
}

#[cfg(test)]
mod tests;
