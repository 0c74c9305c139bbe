//! The cartoon mesh written on the render device: wgpu compute passes (`shaders/cartoon.wgsl`) that
//! turn the per-residue inputs of `compute::wgpu::cartoon_inputs` into rings (spline, frames, sections:
//! a device-side buffer that never crosses the bus), then into vertex, colour and index buffers the
//! mesh pipeline draws as they are (no host copy of the mesh).
//!
//! Owns [`CartoonCompute`] (pipelines, created once per device), [`CartoonBuffers`] (one
//! representation's input and output buffers, reused from frame to frame and grown with headroom)
//! and [`CartoonMesh`] (the output, handed to `GpuScene::add_cartoon_mesh`). Who calls it: the viewer's
//! cartoon representations on adapters with compute shaders (`app::draw`), `orbitfield bench
//! --cartoon` and the tests, which read the mesh back ([`CartoonMesh::read_back`]) and compare it
//! with the CPU mesh `surface::cartoon::build` makes from the same segments (the reference).
//!
//! The CPU knows every count and offset, so the passes need no atomics and no counter read-back:
//! one thread per ring, then one per vertex and one per triangle, in the same order as the CPU
//! mesh. The ring pass has a bind group of its own (group 1), so that neither pipeline binds more
//! than six storage buffers.

use super::marching_cubes::{ComputeShader, McError, buffer_entry, groups_2d, read_buffer, with_headroom};
use crate::compute::wgpu::cartoon_inputs::{CartoonRecord, CartoonRings};
use crate::surface::MeshData;
use wgpu::util::DeviceExt;

/// The WGSL source of the passes.
pub const SHADER_SOURCE: &str = include_str!("../../../shaders/cartoon.wgsl");

const WORKGROUP: u32 = 64;
/// Bytes per vertex: position and normal (`MeshVertex` of `super::gpu`).
const VERTEX_BYTES: u64 = 24;
/// Bytes per vertex colour (`MeshVertexColor` of `render::gpu`).
const COLOR_BYTES: u64 = 8;
/// Most vertices around a ring the pass takes (as `surface::cartoon` clamps them).
pub const MAX_SIDES: usize = 64;

/// Uniform parameters of the passes. Twin of `Params` in `shaders/cartoon.wgsl`.
#[repr(C)]
#[derive(Clone, Copy, Debug, PartialEq, bytemuck::Pod, bytemuck::Zeroable)]
pub struct CartoonPassParams {
    pub sides: u32,
    pub n_pieces: u32,
    pub n_vertices: u32,
    pub n_triangles: u32,
    pub threads_per_row: u32,
    /// Rings and boxes of all pieces.
    pub n_records: u32,
    pub segments_per_residue: u32,
    /// 1: straight segments between trace points.
    pub linear: u32,
    pub arrow_width_factor: f32,
    pub pad: [u32; 3],
    /// `(a, b, e, 0)` of the protein sections by code, then the arrow's point.
    pub sections: [[f32; 4]; 4],
    /// `t = s / segments_per_residue` of each sample `s`, four per element.
    pub samples_t: [[f32; 4]; MAX_SAMPLES / 4],
    /// `(cos, sin, 0, 0)` of each ring vertex's angle.
    pub angles: [[f32; 4]; MAX_SIDES],
}

/// Most spline samples per residue the pass takes (as `surface::cartoon` clamps them).
pub const MAX_SAMPLES: usize = 64;

/// Why the pass could not run or be read back.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum CartoonGpuError {
    #[error("the cartoon needs {vertices} vertices and {indices} indices, more than this device's buffers take")]
    TooLarge { vertices: u64, indices: u64 },
    #[error("the cartoon's rings have {0} sides, the pass takes 4 to 64")]
    Sides(u32),
    #[error("the cartoon has {0} spline samples per residue, the pass takes 1 to 64")]
    Samples(u32),
    #[error(transparent)]
    ReadBack(#[from] McError),
}

/// The mesh the pass wrote: buffers ready to draw, and how much of them is the mesh.
#[derive(Clone, Debug)]
pub struct CartoonMesh {
    /// `MeshVertex`es; usage `VERTEX | STORAGE | COPY_SRC`.
    pub vertices: wgpu::Buffer,
    /// `MeshVertexColor`s (the residue colours, alpha 255, and the values); usage `VERTEX |
    /// STORAGE | COPY_SRC`.
    pub colors: wgpu::Buffer,
    /// `u32` indices; usage `INDEX | STORAGE | COPY_SRC`.
    pub indices: wgpu::Buffer,
    pub n_vertices: u32,
    pub n_indices: u32,
    /// The values were asked for (read back into `MeshData::values`).
    pub with_values: bool,
}

/// A storage buffer that grows (with an eighth more room) and is otherwise reused.
#[derive(Default)]
struct Grown {
    buffer: Option<wgpu::Buffer>,
}

impl Grown {
    fn at_least(&mut self, device: &wgpu::Device, label: &str, bytes: u64, usage: wgpu::BufferUsages) -> wgpu::Buffer {
        // At least one element of the largest input type (an empty array binds as one).
        let bytes = bytes.max(64);
        match &self.buffer {
            Some(b) if b.size() >= bytes => b.clone(),
            _ => {
                let b = device.create_buffer(&wgpu::BufferDescriptor {
                    label: Some(label),
                    size: with_headroom(bytes),
                    usage,
                    mapped_at_creation: false,
                });
                self.buffer = Some(b.clone());
                b
            }
        }
    }
}

/// One cartoon representation's buffers on the device, kept from frame to frame: the frame's
/// inputs are written into them and its mesh into the previous frame's output buffers (still
/// drawn until this frame's submission, which the queue orders after that draw).
#[derive(Default)]
pub struct CartoonBuffers {
    pieces: Grown,
    residues: Grown,
    host_records: Grown,
    host_bands: Grown,
    records: Grown,
    bands: Grown,
    vertices: Grown,
    colors: Grown,
    indices: Grown,
    params: Option<wgpu::Buffer>,
}

/// Where the passes write GPU timestamps: a query set of the caller's, the index written before the
/// ring pass and the one after the triangle pass.
pub struct PassTimestamps<'a> {
    pub query_set: &'a wgpu::QuerySet,
    pub begin: u32,
    pub end: u32,
}

/// Pipelines, created once per device.
pub struct CartoonCompute {
    layout: wgpu::BindGroupLayout,
    ring_layout: wgpu::BindGroupLayout,
    rings: wgpu::ComputePipeline,
    vertices: wgpu::ComputePipeline,
    triangles: wgpu::ComputePipeline,
}

impl CartoonCompute {
    pub fn new(device: &wgpu::Device) -> CartoonCompute {
        let shader = ComputeShader::new(device, "cartoon", SHADER_SOURCE, false, 3, 3);
        // Group 1 of the ring pass: the parameters, four inputs read and the rings and bands written.
        let mut entries = vec![buffer_entry(0, wgpu::BufferBindingType::Uniform, false)];
        entries.extend((1..=6).map(|b| buffer_entry(b, wgpu::BufferBindingType::Storage { read_only: b <= 4 }, false)));
        let ring_layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
            label: Some("cartoon ring bind group layout"),
            entries: &entries,
        });
        let ring_pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
            label: Some("cartoon ring pipeline layout"),
            bind_group_layouts: &[None, Some(&ring_layout)],
            immediate_size: 0,
        });
        let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
            label: Some("cartoon rings"),
            source: wgpu::ShaderSource::Wgsl(SHADER_SOURCE.into()),
        });
        let rings = device.create_compute_pipeline(&wgpu::ComputePipelineDescriptor {
            label: Some("make_rings"),
            layout: Some(&ring_pipeline_layout),
            module: &module,
            entry_point: Some("make_rings"),
            compilation_options: Default::default(),
            cache: None,
        });
        CartoonCompute {
            ring_layout,
            rings,
            vertices: shader.pipeline(device, "make_vertices"),
            triangles: shader.pipeline(device, "make_triangles"),
            layout: shader.layout,
        }
    }

    /// Writes the inputs of `rings` into `buffers` (through the queue: ordered before the next
    /// submission) and records the passes that make the rings and write the mesh into `encoder`.
    /// The mesh is ready once `encoder` is submitted; nothing is read back.
    pub fn encode(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        encoder: &mut wgpu::CommandEncoder,
        rings: &CartoonRings,
        buffers: &mut CartoonBuffers,
        timestamps: Option<PassTimestamps<'_>>,
    ) -> Result<CartoonMesh, CartoonGpuError> {
        let sides = rings.sides;
        if !(4..=MAX_SIDES as u32).contains(&sides) || rings.angles.len() != sides as usize {
            return Err(CartoonGpuError::Sides(sides));
        }
        let per = rings.segments_per_residue;
        if !(1..=MAX_SAMPLES as u32).contains(&per) || rings.samples_t.len() != per as usize {
            return Err(CartoonGpuError::Samples(per));
        }
        let limits = device.limits();
        let most = limits.max_buffer_size.min(limits.max_storage_buffer_binding_size);
        let too_large = CartoonGpuError::TooLarge {
            vertices: rings.n_vertices,
            indices: rings.n_indices,
        };
        let bytes_of = |n: u64, each: u64| n.checked_mul(each).filter(|&b| with_headroom(b) <= most);
        let record_size = std::mem::size_of::<CartoonRecord>() as u64;
        let (
            Some(vertex_bytes),
            Some(color_bytes),
            Some(index_bytes),
            Some(record_bytes),
            Some(band_bytes),
            Ok(n_vertices),
            Ok(n_indices),
            Ok(n_records),
        ) = (
            bytes_of(rings.n_vertices, VERTEX_BYTES),
            bytes_of(rings.n_vertices, COLOR_BYTES),
            bytes_of(rings.n_indices, 4),
            bytes_of(rings.n_records, record_size),
            bytes_of(rings.n_bands, 4),
            u32::try_from(rings.n_vertices),
            u32::try_from(rings.n_indices),
            u32::try_from(rings.n_records),
        )
        else {
            return Err(too_large);
        };
        let input_bytes = |items: &[u8]| Some(items.len() as u64).filter(|&b| with_headroom(b) <= most);
        let pieces_raw: &[u8] = bytemuck::cast_slice(&rings.pieces);
        let residues_raw: &[u8] = bytemuck::cast_slice(&rings.residues);
        let host_records_raw: &[u8] = bytemuck::cast_slice(&rings.host_records);
        let host_bands_raw: &[u8] = bytemuck::cast_slice(&rings.host_bands);
        let (Some(pb), Some(rb), Some(hb), Some(bb), Ok(n_pieces)) = (
            input_bytes(pieces_raw),
            input_bytes(residues_raw),
            input_bytes(host_records_raw),
            input_bytes(host_bands_raw),
            u32::try_from(rings.pieces.len()),
        ) else {
            return Err(too_large);
        };
        use wgpu::BufferUsages as U;
        let input = U::STORAGE | U::COPY_DST;
        let pieces = buffers.pieces.at_least(device, "cartoon pieces", pb, input);
        let residues = buffers.residues.at_least(device, "cartoon residues", rb, input);
        let host_records = buffers
            .host_records
            .at_least(device, "cartoon host ring records", hb, input);
        let host_bands = buffers.host_bands.at_least(device, "cartoon host bands", bb, input);
        let records = buffers
            .records
            .at_least(device, "cartoon ring records", record_bytes, U::STORAGE);
        let bands = buffers.bands.at_least(device, "cartoon bands", band_bytes, U::STORAGE);
        let out = U::STORAGE | U::COPY_SRC | U::COPY_DST;
        let vertices = buffers
            .vertices
            .at_least(device, "cartoon vertices", vertex_bytes, out | U::VERTEX);
        let colors = buffers
            .colors
            .at_least(device, "cartoon vertex colours", color_bytes, out | U::VERTEX);
        let indices = buffers
            .indices
            .at_least(device, "cartoon indices", index_bytes, out | U::INDEX);
        for (buffer, raw) in [
            (&pieces, pieces_raw),
            (&residues, residues_raw),
            (&host_records, host_records_raw),
            (&host_bands, host_bands_raw),
        ] {
            if !raw.is_empty() {
                queue.write_buffer(buffer, 0, raw);
            }
        }
        let n_triangles = n_indices / 3;
        let (x_groups, _) = groups_2d(n_vertices.max(n_triangles).max(n_records).div_ceil(WORKGROUP));
        let mut angles = [[0.0f32; 4]; MAX_SIDES];
        for (slot, a) in angles.iter_mut().zip(&rings.angles) {
            *slot = [a[0], a[1], 0.0, 0.0];
        }
        let mut samples_t = [[0.0f32; 4]; MAX_SAMPLES / 4];
        for (s, &t) in rings.samples_t.iter().enumerate() {
            if let Some(slot) = samples_t.get_mut(s / 4).and_then(|v| v.get_mut(s % 4)) {
                *slot = t;
            }
        }
        let params = CartoonPassParams {
            sides,
            n_pieces,
            n_vertices,
            n_triangles,
            threads_per_row: x_groups * WORKGROUP,
            n_records,
            segments_per_residue: per,
            linear: u32::from(rings.linear),
            arrow_width_factor: rings.arrow_width_factor,
            pad: [0; 3],
            sections: rings.sections,
            samples_t,
            angles,
        };
        let params_buf = match &buffers.params {
            Some(b) => {
                queue.write_buffer(b, 0, bytemuck::bytes_of(&params));
                b.clone()
            }
            None => {
                let b = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
                    label: Some("cartoon params"),
                    contents: bytemuck::bytes_of(&params),
                    usage: U::UNIFORM | U::COPY_DST,
                });
                buffers.params = Some(b.clone());
                b
            }
        };
        let group = |label: &str, layout: &wgpu::BindGroupLayout, buffers: &[&wgpu::Buffer]| {
            let entries: Vec<wgpu::BindGroupEntry> = buffers
                .iter()
                .enumerate()
                .map(|(binding, b)| wgpu::BindGroupEntry {
                    binding: binding as u32,
                    resource: b.as_entire_binding(),
                })
                .collect();
            device.create_bind_group(&wgpu::BindGroupDescriptor {
                label: Some(label),
                layout,
                entries: &entries,
            })
        };
        let ring_group = group(
            "cartoon ring bind group",
            &self.ring_layout,
            &[
                &params_buf,
                &pieces,
                &residues,
                &host_records,
                &host_bands,
                &records,
                &bands,
            ],
        );
        let bind_group = group(
            "cartoon bind group",
            &self.layout,
            &[&params_buf, &pieces, &records, &bands, &vertices, &colors, &indices],
        );
        let steps: [(&str, &wgpu::ComputePipeline, u32, u32); 3] = [
            ("cartoon rings", &self.rings, n_records, 1),
            ("cartoon vertices", &self.vertices, n_vertices, 0),
            ("cartoon triangles", &self.triangles, n_triangles, 0),
        ];
        for (k, (label, pipeline, threads, group_index)) in steps.into_iter().enumerate() {
            let mut pass = encoder.begin_compute_pass(&wgpu::ComputePassDescriptor {
                label: Some(label),
                // The first pass writes the beginning, the last the end.
                timestamp_writes: timestamps
                    .as_ref()
                    .filter(|_| k != 1)
                    .map(|t| wgpu::ComputePassTimestampWrites {
                        query_set: t.query_set,
                        beginning_of_pass_write_index: (k == 0).then_some(t.begin),
                        end_of_pass_write_index: (k == 2).then_some(t.end),
                    }),
            });
            pass.set_bind_group(
                group_index,
                if group_index == 1 { &ring_group } else { &bind_group },
                &[],
            );
            if threads > 0 {
                pass.set_pipeline(pipeline);
                pass.dispatch_workgroups(x_groups, threads.div_ceil(WORKGROUP).div_ceil(x_groups), 1);
            }
        }
        Ok(CartoonMesh {
            vertices,
            colors,
            indices,
            n_vertices,
            n_indices,
            with_values: rings.with_values,
        })
    }

    /// [`CartoonCompute::encode`] in an encoder of its own, submitted.
    pub fn build(
        &self,
        device: &wgpu::Device,
        queue: &wgpu::Queue,
        rings: &CartoonRings,
        buffers: &mut CartoonBuffers,
    ) -> Result<CartoonMesh, CartoonGpuError> {
        let mut encoder = device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
            label: Some("orbitfield cartoon"),
        });
        let mesh = self.encode(device, queue, &mut encoder, rings, buffers, None)?;
        queue.submit([encoder.finish()]);
        Ok(mesh)
    }
}

impl CartoonMesh {
    /// Copies the mesh back to the host (waits for the GPU; for tests and export, drawing needs no
    /// copy). Colours come back with alpha 255.
    pub fn read_back(&self, device: &wgpu::Device, queue: &wgpu::Queue) -> Result<MeshData, CartoonGpuError> {
        let nv = u64::from(self.n_vertices);
        let words = |raw: Vec<u8>| -> Vec<u32> {
            raw.chunks_exact(4)
                .map(|c| u32::from_ne_bytes([c[0], c[1], c[2], c[3]]))
                .collect()
        };
        let mut mesh = MeshData::default();
        if nv == 0 {
            return Ok(mesh);
        }
        let v = words(read_buffer(device, queue, &self.vertices, VERTEX_BYTES * nv)?);
        for w in v.chunks_exact(6).take(self.n_vertices as usize) {
            let f = |k: usize| w.get(k).copied().map_or(f32::NAN, f32::from_bits);
            mesh.positions_angstrom.push([f(0), f(1), f(2)]);
            mesh.normals.push([f(3), f(4), f(5)]);
        }
        let c = words(read_buffer(device, queue, &self.colors, COLOR_BYTES * nv)?);
        for w in c.chunks_exact(2).take(self.n_vertices as usize) {
            if let [value, color] = *w {
                mesh.colors_rgba8.push(color.to_le_bytes());
                if self.with_values {
                    mesh.values.push(f32::from_bits(value));
                }
            }
        }
        let i = words(read_buffer(
            device,
            queue,
            &self.indices,
            4 * u64::from(self.n_indices),
        )?);
        mesh.indices = i.into_iter().take(self.n_indices as usize).collect();
        Ok(mesh)
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;
    use crate::compute::wgpu::wgsl_type_size;

    #[test]
    fn shader_validates_and_twins_match() {
        let module = wgpu::naga::front::wgsl::parse_str(SHADER_SOURCE).unwrap();
        let mut validator = wgpu::naga::valid::Validator::new(
            wgpu::naga::valid::ValidationFlags::all(),
            wgpu::naga::valid::Capabilities::empty(),
        );
        validator.validate(&module).unwrap();
        for entry in ["make_rings", "make_vertices", "make_triangles"] {
            assert!(module.entry_points.iter().any(|e| e.name == entry), "{entry}");
        }
        use crate::compute::wgpu::cartoon_inputs::{CartoonPiece, CartoonRecord, CartoonResidue};
        assert_eq!(
            wgsl_type_size(&module, "Params"),
            std::mem::size_of::<CartoonPassParams>()
        );
        assert_eq!(wgsl_type_size(&module, "Piece"), std::mem::size_of::<CartoonPiece>());
        assert_eq!(wgsl_type_size(&module, "Record"), std::mem::size_of::<CartoonRecord>());
        assert_eq!(
            wgsl_type_size(&module, "Residue"),
            std::mem::size_of::<CartoonResidue>()
        );
        assert_eq!(std::mem::size_of::<CartoonPassParams>(), 1392);
        assert_eq!(std::mem::size_of::<CartoonResidue>(), 40);
        assert_eq!(std::mem::size_of::<CartoonPiece>(), 64);
    }
}
