//! Uploads of the scene's GPU data: meshes (with their own or sampled per-vertex colours), colour fields as 3-D textures, slice images, and the mesh uniforms and bind groups that draw them.

use super::*;

/// A surface drawn by the transparent path (fully transparent ones are not drawn).
pub(super) fn is_transparent(style: MeshStyle) -> bool {
    style.opacity < 0.999 && style.opacity > 0.0
}

/// The attachment to draw into and the texture to resolve to (none without MSAA).
pub(super) fn target_pair<'a>(
    msaa: &'a Option<wgpu::TextureView>,
    single: &'a wgpu::TextureView,
) -> (&'a wgpu::TextureView, Option<&'a wgpu::TextureView>) {
    match msaa {
        Some(v) => (v, Some(single)),
        None => (single, None),
    }
}

/// Draws one mesh; `per_vertex` when its pipeline reads the per-vertex colours.
pub(super) fn draw_mesh(pass: &mut wgpu::RenderPass<'_>, m: &GpuMesh, per_vertex: bool) {
    pass.set_bind_group(1, &m.bind_group, &[]);
    pass.set_vertex_buffer(0, m.vertices.slice(..));
    if let Some(colors) = m.colors.as_ref().filter(|_| per_vertex) {
        pass.set_vertex_buffer(1, colors.slice(..));
    }
    pass.set_index_buffer(m.indices.slice(..), wgpu::IndexFormat::Uint32);
    match &m.index_count {
        IndexCount::Direct(n) => pass.draw_indexed(0..*n, 0, 0..1),
        IndexCount::Indirect(args) => pass.draw_indexed_indirect(args, 0),
    }
}

pub(super) fn mesh_uniform(style: MeshStyle, field: &GpuColorField) -> MeshUniform {
    MeshUniform {
        color: [
            style.color[0],
            style.color[1],
            style.color[2],
            style.opacity.clamp(0.0, 1.0),
        ],
        ..field.uniform
    }
}

/// The uniform alone for a mesh in one colour; with the colour field's texture when one is set.
pub(super) fn mesh_bind_group(ctx: &RenderContext, uniform: &wgpu::Buffer, field: &GpuColorField) -> wgpu::BindGroup {
    let uniform_entry = wgpu::BindGroupEntry {
        binding: 0,
        resource: uniform.as_entire_binding(),
    };
    if let Some(view) = field.view.as_ref().filter(|_| field.textured()) {
        ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("orbitfield mesh bind group"),
            layout: &ctx.mesh_layout,
            entries: &[
                uniform_entry,
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(view),
                },
            ],
        })
    } else {
        ctx.device.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("orbitfield flat mesh bind group"),
            layout: &ctx.mesh_flat_layout,
            entries: &[uniform_entry],
        })
    }
}

pub(super) fn field_texture(ctx: &RenderContext, dims: [u32; 3], values: &[f32]) -> wgpu::TextureView {
    let size = wgpu::Extent3d {
        width: dims[0],
        height: dims[1],
        depth_or_array_layers: dims[2],
    };
    let texture = ctx.device.create_texture(&wgpu::TextureDescriptor {
        label: Some("orbitfield colour field"),
        size,
        mip_level_count: 1,
        sample_count: 1,
        dimension: wgpu::TextureDimension::D3,
        format: wgpu::TextureFormat::R32Float,
        usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
        view_formats: &[],
    });
    ctx.queue.write_texture(
        wgpu::TexelCopyTextureInfo {
            texture: &texture,
            mip_level: 0,
            origin: wgpu::Origin3d::ZERO,
            aspect: wgpu::TextureAspect::All,
        },
        bytemuck::cast_slice(values),
        wgpu::TexelCopyBufferLayout {
            offset: 0,
            bytes_per_row: Some(dims[0] * 4),
            rows_per_image: Some(dims[1]),
        },
        size,
    );
    texture.create_view(&wgpu::TextureViewDescriptor::default())
}

/// No colour field: meshes in their own colours, per-vertex values through `colormap` over `range`.
pub(super) fn no_color_field(range: [f32; 2], colormap: Colormap) -> GpuColorField {
    GpuColorField {
        view: None,
        per_vertex: None,
        uniform: colormap_uniform(range, colormap),
    }
}

/// The uniform's colormap table and range (no texture field).
pub(super) fn colormap_uniform(range: [f32; 2], colormap: Colormap) -> MeshUniform {
    let mut table = [[0.0f32; 4]; COLORMAP_ENTRIES];
    for (i, c) in table.iter_mut().enumerate() {
        let rgba = colormap.sample(i as f32 / (COLORMAP_ENTRIES - 1) as f32);
        *c = [rgba[0], rgba[1], rgba[2], 255].map(|b| f32::from(b) / 255.0);
    }
    MeshUniform {
        field_range: [range[0], range[1], 0.0, 0.0],
        colormap: table,
        ..MeshUniform::default()
    }
}

/// The colour field where the adapter has no usable 3-D textures: the lattice, sampled on the CPU
/// at the vertices of every mesh.
pub(super) fn per_vertex_color_field(f: ColorFieldInput<'_>) -> Result<GpuColorField, ColorFieldError> {
    let l = &f.grid.lattice;
    if !l.is_axis_aligned() {
        return Err(ColorFieldError::NotAxisAligned);
    }
    if l.dims.contains(&0) || f.grid.values.len() < l.n_points() {
        return Err(ColorFieldError::Empty);
    }
    Ok(GpuColorField {
        view: None,
        per_vertex: Some(f.grid.clone()),
        uniform: colormap_uniform(f.range, f.colormap),
    })
}

/// The volume's values at `positions` (trilinear, clamped to the lattice; non-finite as 0, as the
/// texture holds them), to be drawn through the colormap.
pub(super) fn sampled_colors(grid: &Grid3, positions: &[[f32; 3]]) -> Vec<MeshVertexColor> {
    positions
        .iter()
        .map(|&p| MeshVertexColor {
            value: grid
                .trilinear_at_angstrom(p, true)
                .filter(|v| v.is_finite())
                .unwrap_or(0.0),
            color: 0,
        })
        .collect()
}

/// A mesh's own per-vertex colours: categorical colours when there is one per vertex, else values
/// when there is one per vertex, else none.
pub(super) fn own_colors(m: &MeshInput<'_>) -> Option<Vec<MeshVertexColor>> {
    let n = m.positions_angstrom.len();
    if m.colors_rgba8.len() == n {
        Some(
            m.colors_rgba8
                .iter()
                .map(|c| MeshVertexColor {
                    value: 0.0,
                    color: pack_rgba([c[0], c[1], c[2], 255]),
                })
                .collect(),
        )
    } else if m.values.len() == n {
        Some(
            m.values
                .iter()
                .map(|&v| MeshVertexColor {
                    value: if v.is_finite() { v } else { 0.0 },
                    color: 0,
                })
                .collect(),
        )
    } else {
        None
    }
}

/// Per-vertex colours into `reuse` when it has their size, else into a new buffer.
pub(super) fn upload_colors(
    ctx: &RenderContext,
    reuse: Option<wgpu::Buffer>,
    colors: &[MeshVertexColor],
) -> wgpu::Buffer {
    let bytes: &[u8] = bytemuck::cast_slice(colors);
    match reuse {
        Some(b) if b.size() == bytes.len() as u64 => {
            ctx.queue.write_buffer(&b, 0, bytes);
            b
        }
        _ => ctx.device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
            label: Some("orbitfield mesh vertex colours"),
            contents: bytes,
            usage: wgpu::BufferUsages::VERTEX | wgpu::BufferUsages::COPY_DST,
        }),
    }
}

pub(super) fn upload_color_field(
    ctx: &RenderContext,
    f: ColorFieldInput<'_>,
) -> Result<GpuColorField, ColorFieldError> {
    let l = &f.grid.lattice;
    if !l.is_axis_aligned() {
        return Err(ColorFieldError::NotAxisAligned);
    }
    let limit = ctx.device.limits().max_texture_dimension_3d;
    let [nx, ny, nz] = l.dims;
    if nx == 0 || ny == 0 || nz == 0 || f.grid.values.len() < nx * ny * nz {
        return Err(ColorFieldError::Empty);
    }
    let dims: Vec<u32> = l
        .dims
        .iter()
        .filter_map(|&d| u32::try_from(d).ok())
        .filter(|&d| d <= limit)
        .collect();
    let [Some(&dx), Some(&dy), Some(&dz)] = [dims.first(), dims.get(1), dims.get(2)] else {
        return Err(ColorFieldError::TooLarge(nx, ny, nz, limit));
    };
    // One f32 per point: refuse volumes past 1 GiB or the device's buffer limit before asking the
    // device (an oversized texture is a device error, not a returned one).
    let bytes = (nx as u64)
        .saturating_mul(ny as u64)
        .saturating_mul(nz as u64)
        .saturating_mul(4);
    if bytes > (1u64 << 30).min(ctx.device.limits().max_buffer_size) {
        return Err(ColorFieldError::TooLarge(nx, ny, nz, limit));
    }
    let values: Vec<f32> = f.grid.values[..nx * ny * nz]
        .iter()
        .map(|v| if v.is_finite() { *v } else { 0.0 })
        .collect();
    let view = Some(field_texture(ctx, [dx, dy, dz], &values));
    let origin = crate::model::units::angstrom_from_bohr3(l.origin_bohr);
    let step = |k: usize| {
        let s = crate::model::units::angstrom_from_bohr(l.steps_bohr[k][k]);
        if s != 0.0 { (1.0 / s) as f32 } else { 0.0 }
    };
    Ok(GpuColorField {
        view,
        per_vertex: None,
        uniform: MeshUniform {
            field_origin_angstrom: [origin[0] as f32, origin[1] as f32, origin[2] as f32, 1.0],
            field_inv_step_per_angstrom: [step(0), step(1), step(2), 0.0],
            ..colormap_uniform(f.range, f.colormap)
        },
    })
}

pub(super) fn upload_mesh(
    ctx: &RenderContext,
    m: &MeshInput<'_>,
    style: MeshStyle,
    field: &GpuColorField,
) -> Option<GpuMesh> {
    let n = m.positions_angstrom.len();
    let vertices: Vec<MeshVertex> = m
        .positions_angstrom
        .iter()
        .enumerate()
        .map(|(i, p)| MeshVertex {
            position_angstrom: *p,
            normal: m.normals.get(i).copied().unwrap_or([0.0; 3]),
        })
        .collect();
    let indices: Vec<u32> = m
        .indices
        .chunks_exact(3)
        .filter(|t| t.iter().all(|&i| (i as usize) < n))
        .flatten()
        .copied()
        .collect();
    if indices.is_empty() {
        return None;
    }
    let d = &ctx.device;
    let vertices = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("orbitfield mesh vertices"),
        contents: bytemuck::cast_slice(&vertices),
        usage: wgpu::BufferUsages::VERTEX,
    });
    let index_count = u32::try_from(indices.len()).ok()?;
    let indices = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("orbitfield mesh indices"),
        contents: bytemuck::cast_slice(&indices),
        usage: wgpu::BufferUsages::INDEX,
    });
    let uniform = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("orbitfield mesh uniform"),
        contents: bytemuck::bytes_of(&mesh_uniform(style, field)),
        usage: wgpu::BufferUsages::UNIFORM | wgpu::BufferUsages::COPY_DST,
    });
    let bind_group = mesh_bind_group(ctx, &uniform, field);
    let own = own_colors(m);
    let sampled = field
        .per_vertex
        .as_ref()
        .map(|g| sampled_colors(g, m.positions_angstrom));
    let colors = sampled
        .as_deref()
        .or(own.as_deref())
        .map(|c| upload_colors(ctx, None, c));
    // Kept only where a volume colours surfaces per vertex (no usable 3-D textures).
    let source = (!ctx.capabilities.volume_textures).then(|| VertexSource {
        positions_angstrom: m.positions_angstrom.to_vec(),
        own_colors: own,
    });
    Some(GpuMesh {
        vertices,
        indices,
        index_count: IndexCount::Direct(index_count),
        colors,
        source,
        uniform,
        bind_group,
        style,
    })
}

pub(super) fn upload_slice(ctx: &RenderContext, s: &SliceImage) -> Option<GpuSlice> {
    let (w, h) = (s.width, s.height);
    if w == 0 || h == 0 || w > crate::render::target::MAX_SIDE_PX || h > crate::render::target::MAX_SIDE_PX {
        return None;
    }
    if s.rgba.len() != (w as usize) * (h as usize) * 4 {
        return None;
    }
    let d = &ctx.device;
    let texture = d.create_texture_with_data(
        &ctx.queue,
        &wgpu::TextureDescriptor {
            label: Some("orbitfield slice texture"),
            size: wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
            mip_level_count: 1,
            sample_count: 1,
            dimension: wgpu::TextureDimension::D2,
            format: wgpu::TextureFormat::Rgba8Unorm,
            usage: wgpu::TextureUsages::TEXTURE_BINDING | wgpu::TextureUsages::COPY_DST,
            view_formats: &[],
        },
        wgpu::util::TextureDataOrder::LayerMajor,
        &s.rgba,
    );
    let view = texture.create_view(&wgpu::TextureViewDescriptor::default());
    let four = |v: [f32; 3]| [v[0], v[1], v[2], 0.0];
    let uniform = d.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some("orbitfield slice uniform"),
        contents: bytemuck::bytes_of(&SliceUniform {
            origin_angstrom: four(s.origin_angstrom),
            edge_u_angstrom: four(s.edge_u_angstrom),
            edge_v_angstrom: four(s.edge_v_angstrom),
        }),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let bind_group = d.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some("orbitfield slice bind group"),
        layout: &ctx.slice_layout,
        entries: &[
            wgpu::BindGroupEntry {
                binding: 0,
                resource: uniform.as_entire_binding(),
            },
            wgpu::BindGroupEntry {
                binding: 1,
                resource: wgpu::BindingResource::TextureView(&view),
            },
            wgpu::BindGroupEntry {
                binding: 2,
                resource: wgpu::BindingResource::Sampler(&ctx.linear_sampler),
            },
        ],
    });
    Some(GpuSlice { bind_group })
}
