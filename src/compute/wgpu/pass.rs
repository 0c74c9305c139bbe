//! What the wgpu engine's compute passes build alike: the shader module with its bind-group and
//! pipeline layouts from a list of buffer bindings ([`compute_layouts`]), a launch's bind group of a
//! uniform of parameters and its buffers in binding order ([`params_bind_group`]), and a device error
//! in the engine's words ([`device_err`]).

use super::marching_cubes::compute_buffer_entry;
use crate::compute::ComputeError;

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
