//! `OffscreenTarget`: where the 3-D view is drawn: MSAA colour and depth, the transparency
//! targets, and the resolved colour texture that the window composites and screenshots read.
//!
//! Created by the app for its view (resized with the panel) and by the headless renderer.

use super::RenderError;
use super::context::{ACCUM_FORMAT, COLOR_FORMAT, DEPTH_FORMAT, REVEAL_FORMAT, RenderContext};

/// Largest side of an offscreen target in pixels.
pub const MAX_SIDE_PX: u32 = 8192;

/// The textures of one 3-D view.
pub struct OffscreenTarget {
    pub size_px: [u32; 2],
    pub sample_count: u32,
    /// Single-sample colour: the finished image (sampled by the window, copied by screenshots).
    pub color: wgpu::Texture,
    pub color_view: wgpu::TextureView,
    pub(crate) color_msaa_view: Option<wgpu::TextureView>,
    pub(crate) depth_view: wgpu::TextureView,
    pub(crate) accum_view: wgpu::TextureView,
    pub(crate) accum_msaa_view: Option<wgpu::TextureView>,
    pub(crate) reveal_view: wgpu::TextureView,
    pub(crate) reveal_msaa_view: Option<wgpu::TextureView>,
    pub(crate) composite_bind_group: wgpu::BindGroup,
}

fn texture(
    device: &wgpu::Device,
    label: &'static str,
    size: [u32; 2],
    format: wgpu::TextureFormat,
    samples: u32,
    usage: wgpu::TextureUsages,
) -> wgpu::Texture {
    device.create_texture(&wgpu::TextureDescriptor {
        label: Some(label),
        size: wgpu::Extent3d {
            width: size[0],
            height: size[1],
            depth_or_array_layers: 1,
        },
        mip_level_count: 1,
        sample_count: samples,
        dimension: wgpu::TextureDimension::D2,
        format,
        usage,
        view_formats: &[],
    })
}

impl OffscreenTarget {
    /// Textures of `size_px` (each side clamped to 1..=[`MAX_SIDE_PX`]) for the context's pipelines.
    pub fn new(ctx: &RenderContext, size_px: [u32; 2]) -> OffscreenTarget {
        let size = size_px.map(|s| s.clamp(1, MAX_SIDE_PX));
        let d = &ctx.device;
        let samples = ctx.sample_count;
        let attach = wgpu::TextureUsages::RENDER_ATTACHMENT;
        let sampled = wgpu::TextureUsages::TEXTURE_BINDING;
        let color = texture(
            d,
            "orbitfield view colour",
            size,
            COLOR_FORMAT,
            1,
            attach | sampled | wgpu::TextureUsages::COPY_SRC,
        );
        let view = |t: &wgpu::Texture| t.create_view(&wgpu::TextureViewDescriptor::default());
        let msaa = samples > 1;
        let color_msaa_view = msaa.then(|| {
            view(&texture(
                d,
                "orbitfield view colour msaa",
                size,
                COLOR_FORMAT,
                samples,
                attach,
            ))
        });
        let depth_view = view(&texture(
            d,
            "orbitfield view depth",
            size,
            DEPTH_FORMAT,
            samples,
            attach,
        ));
        let accum = texture(
            d,
            "orbitfield oit accumulation",
            size,
            ACCUM_FORMAT,
            1,
            attach | sampled,
        );
        let reveal = texture(d, "orbitfield oit revealage", size, REVEAL_FORMAT, 1, attach | sampled);
        let accum_msaa_view = msaa.then(|| {
            view(&texture(
                d,
                "orbitfield oit accumulation msaa",
                size,
                ACCUM_FORMAT,
                samples,
                attach,
            ))
        });
        let reveal_msaa_view = msaa.then(|| {
            view(&texture(
                d,
                "orbitfield oit revealage msaa",
                size,
                REVEAL_FORMAT,
                samples,
                attach,
            ))
        });
        let accum_view = view(&accum);
        let reveal_view = view(&reveal);
        let composite_bind_group = d.create_bind_group(&wgpu::BindGroupDescriptor {
            label: Some("orbitfield oit composite bind group"),
            layout: &ctx.composite_layout,
            entries: &[
                wgpu::BindGroupEntry {
                    binding: 0,
                    resource: wgpu::BindingResource::TextureView(&accum_view),
                },
                wgpu::BindGroupEntry {
                    binding: 1,
                    resource: wgpu::BindingResource::TextureView(&reveal_view),
                },
            ],
        });
        let color_view = view(&color);
        OffscreenTarget {
            size_px: size,
            sample_count: samples,
            color,
            color_view,
            color_msaa_view,
            depth_view,
            accum_view,
            accum_msaa_view,
            reveal_view,
            reveal_msaa_view,
            composite_bind_group,
        }
    }

    /// Copies the finished colour image to the CPU as tightly packed RGBA8 rows.
    pub fn read_rgba(&self, ctx: &RenderContext) -> Result<image::RgbaImage, RenderError> {
        let [w, h] = self.size_px;
        let unpadded = w as usize * 4;
        let align = wgpu::COPY_BYTES_PER_ROW_ALIGNMENT as usize;
        let padded = unpadded.div_ceil(align) * align;
        let buffer = ctx.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("orbitfield view readback"),
            size: (padded * h as usize) as u64,
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut encoder = ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("orbitfield view readback encoder"),
        });
        encoder.copy_texture_to_buffer(
            self.color.as_image_copy(),
            wgpu::TexelCopyBufferInfo {
                buffer: &buffer,
                layout: wgpu::TexelCopyBufferLayout {
                    offset: 0,
                    bytes_per_row: Some(padded as u32),
                    rows_per_image: None,
                },
            },
            wgpu::Extent3d {
                width: w,
                height: h,
                depth_or_array_layers: 1,
            },
        );
        let index = ctx.queue.submit(std::iter::once(encoder.finish()));
        let (tx, rx) = std::sync::mpsc::sync_channel(1);
        buffer.slice(..).map_async(wgpu::MapMode::Read, move |r| {
            let _ = tx.send(r);
        });
        ctx.device
            .poll(wgpu::PollType::Wait {
                submission_index: Some(index),
                timeout: Some(std::time::Duration::from_secs(60)),
            })
            .map_err(|e| RenderError::Readback(e.to_string()))?;
        rx.recv()
            .map_err(|e| RenderError::Readback(e.to_string()))?
            .map_err(|e| RenderError::Readback(e.to_string()))?;
        let mapped = buffer
            .slice(..)
            .get_mapped_range()
            .map_err(|e| RenderError::Readback(format!("{e:?}")))?;
        let mut pixels = Vec::with_capacity(unpadded * h as usize);
        for row in mapped.chunks_exact(padded) {
            pixels.extend_from_slice(row.get(..unpadded).unwrap_or(&[]));
        }
        drop(mapped);
        buffer.unmap();
        image::RgbaImage::from_raw(w, h, pixels).ok_or_else(|| RenderError::Readback("short image".into()))
    }
}
