//! WGSL sources, embedded at compile time. Scene shaders are `shaders/common.wgsl` followed by
//! their own file; [`all_modules`] lists every module so a test can validate each with naga.

/// Shared prelude: the `Globals` uniform and the lighting model.
pub const COMMON: &str = include_str!("../../shaders/common.wgsl");
pub const SPHERES: &str = include_str!("../../shaders/spheres.wgsl");
pub const CYLINDERS: &str = include_str!("../../shaders/cylinders.wgsl");
pub const MESH: &str = include_str!("../../shaders/mesh.wgsl");
pub const LINES: &str = include_str!("../../shaders/lines.wgsl");
pub const SLICE: &str = include_str!("../../shaders/slice.wgsl");
pub const OIT_COMPOSITE: &str = include_str!("../../shaders/oit_composite.wgsl");
pub const BLIT: &str = include_str!("../../shaders/blit.wgsl");

/// A scene shader with the common prelude in front.
pub fn scene_source(body: &str) -> String {
    let mut s = String::with_capacity(COMMON.len() + body.len() + 1);
    s.push_str(COMMON);
    s.push('\n');
    s.push_str(body);
    s
}

/// Every shader module the renderer builds, by name, as it is compiled.
pub fn all_modules() -> Vec<(&'static str, String)> {
    vec![
        ("spheres", scene_source(SPHERES)),
        ("cylinders", scene_source(CYLINDERS)),
        ("mesh", scene_source(MESH)),
        ("lines", scene_source(LINES)),
        ("slice", scene_source(SLICE)),
        ("oit_composite", OIT_COMPOSITE.to_string()),
        ("blit", BLIT.to_string()),
    ]
}
