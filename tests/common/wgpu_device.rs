//! A wgpu device on whatever adapter exists (Mesa lavapipe in CI) with the adapter's own limits, for
//! the tests of the render-device compute passes; `None`, with the reason printed, where there is
//! none or it has no compute shaders.

pub fn compute_device(what: &str) -> Option<(wgpu::Device, wgpu::Queue)> {
    let instance = wgpu::Instance::new(wgpu::InstanceDescriptor::new_without_display_handle_from_env());
    let adapter = match pollster::block_on(instance.request_adapter(&wgpu::RequestAdapterOptions::default())) {
        Ok(a) => a,
        Err(e) => {
            eprintln!("skipping the {what} test: no adapter ({e})");
            return None;
        }
    };
    if !adapter
        .get_downlevel_capabilities()
        .flags
        .contains(wgpu::DownlevelFlags::COMPUTE_SHADERS)
    {
        eprintln!("skipping the {what} test: the adapter has no compute shaders");
        return None;
    }
    eprintln!("{what} on {:?}", adapter.get_info().name);
    let desc = wgpu::DeviceDescriptor {
        label: Some("compute pass test device"),
        required_limits: adapter.limits(),
        ..Default::default()
    };
    match pollster::block_on(adapter.request_device(&desc)) {
        Ok(dq) => Some(dq),
        Err(e) => {
            eprintln!("skipping the {what} test: no device ({e})");
            None
        }
    }
}
