//! wgpu rendering of the 3-D view: spheres and cylinders as ray-cast impostors, triangle meshes
//! with Blinn-Phong lighting, depth cue and order-independent transparency, lines, slice planes.
//!
//! This module knows meshes, instances, cameras and colormaps — not molecules: the app (and the
//! headless `render` command) turn structures and fields into the plain instance data of [`gpu`]
//! and upload it to a [`scene::GpuScene`]. [`context::RenderContext`] owns the device and the
//! pipelines (created once); [`target::OffscreenTarget`] is where a view is drawn, on screen or
//! headless; [`callback`] composites a view into egui.

pub mod callback;
pub mod camera;
pub mod capabilities;
pub mod colormap;
pub mod context;
pub mod gpu;
pub mod scene;
pub mod shaders;
pub mod target;

pub use camera::Camera;
pub use capabilities::{Capabilities, Transparency};
pub use context::RenderContext;
pub use scene::{GpuScene, MeshInput, MeshStyle, SliceImage, ViewStyle};
pub use target::OffscreenTarget;

/// Why rendering could not happen.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum RenderError {
    #[error(
        "no graphics adapter is available ({0}); on a headless Linux machine install Mesa's software Vulkan driver (mesa-vulkan-drivers)"
    )]
    NoAdapter(String),
    #[error("the graphics device could not be created: {0}")]
    Device(String),
    #[error("reading the image back from the GPU failed: {0}")]
    Readback(String),
}

/// Renders one frame of `scene` from `camera` into `target` and waits for it.
pub fn render_once(ctx: &RenderContext, scene: &GpuScene, target: &OffscreenTarget, camera: &Camera) {
    let mut encoder = ctx.device.create_command_encoder(&wgpu::CommandEncoderDescriptor {
        label: Some("orbitfield frame encoder"),
    });
    scene.draw(ctx, &mut encoder, target, camera);
    ctx.queue.submit(std::iter::once(encoder.finish()));
}
