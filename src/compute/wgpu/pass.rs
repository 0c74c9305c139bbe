//! What the wgpu engine's compute passes build alike: the shader module with its bind-group and
//! pipeline layouts from a list of buffer bindings ([`compute_layouts`]), a launch's bind group of a
//! uniform of parameters and its buffers in binding order ([`params_bind_group`]), the check of a
//! lattice slab against its output buffer ([`slab_extent`]), and a device error in the engine's words
//! ([`device_err`]).

use super::marching_cubes::compute_buffer_entry;
use crate::compute::ComputeError;

/// Checks that `z_range` names planes of `lattice` and that `values` holds a float per point of them;
/// the planes and the bytes they take.
pub(crate) fn slab_extent(
    lattice: &crate::model::Lattice,
    z_range: &std::ops::Range<usize>,
    values: &wgpu::Buffer,
) -> Result<(usize, u64), ComputeError> {
    let [nx, ny, nz] = lattice.dims;
    if z_range.end > nz || z_range.is_empty() || nx == 0 || ny == 0 {
        return Err(ComputeError::BadInput(format!(
            "planes {z_range:?} of a {nx} x {ny} x {nz} lattice"
        )));
    }
    let planes = z_range.len();
    let need = 4 * (nx as u64) * (ny as u64) * (planes as u64);
    if values.size() < need {
        return Err(ComputeError::BadOutput {
            got: (values.size() / 4) as usize,
            need: (need / 4) as usize,
        });
    }
    Ok((planes, need))
}

/// A wgpu failure as the engine's device error.
pub(crate) fn device_err(e: impl std::fmt::Display) -> ComputeError {
    ComputeError::Device(format!("wgpu: {e}"))
}

/// The module of `source` and the layouts of one bind group whose binding `i` is `bindings[i]`
/// (compute stage), labelled `label`.
pub(crate) fn compute_layouts(
    device: &wgpu::Device,
    label: &str,
    source: &str,
    bindings: &[wgpu::BufferBindingType],
) -> (wgpu::ShaderModule, wgpu::BindGroupLayout, wgpu::PipelineLayout) {
    let module = device.create_shader_module(wgpu::ShaderModuleDescriptor {
        label: Some(label),
        source: wgpu::ShaderSource::Wgsl(source.into()),
    });
    let entries: Vec<wgpu::BindGroupLayoutEntry> = bindings
        .iter()
        .enumerate()
        .map(|(i, &kind)| compute_buffer_entry(i as u32, kind))
        .collect();
    let layout = device.create_bind_group_layout(&wgpu::BindGroupLayoutDescriptor {
        label: Some(label),
        entries: &entries,
    });
    let pipeline_layout = device.create_pipeline_layout(&wgpu::PipelineLayoutDescriptor {
        label: Some(label),
        bind_group_layouts: &[Some(&layout)],
        immediate_size: 0,
    });
    (module, layout, pipeline_layout)
}

/// A bind group of `layout` whose binding 0 is a uniform holding `params` and whose binding `i + 1`
/// is `buffers[i]`, labelled `label` (one per launch: the parameters change between launches).
pub(crate) fn params_bind_group<P: bytemuck::Pod>(
    device: &wgpu::Device,
    layout: &wgpu::BindGroupLayout,
    label: &str,
    params: &P,
    buffers: &[&wgpu::Buffer],
) -> wgpu::BindGroup {
    use wgpu::util::DeviceExt;
    let params_buf = device.create_buffer_init(&wgpu::util::BufferInitDescriptor {
        label: Some(label),
        contents: bytemuck::bytes_of(params),
        usage: wgpu::BufferUsages::UNIFORM,
    });
    let entries: Vec<wgpu::BindGroupEntry> = std::iter::once(&params_buf)
        .chain(buffers.iter().copied())
        .enumerate()
        .map(|(k, b)| wgpu::BindGroupEntry {
            binding: k as u32,
            resource: b.as_entire_binding(),
        })
        .collect();
    device.create_bind_group(&wgpu::BindGroupDescriptor {
        label: Some(label),
        layout,
        entries: &entries,
    })
}
