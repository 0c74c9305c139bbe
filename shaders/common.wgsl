// Shared by every scene shader: the per-frame uniform and the lighting model.
// Prepended to spheres.wgsl, cylinders.wgsl, mesh.wgsl, lines.wgsl and slice.wgsl by
// `render::shaders::scene_source` (src/render/shaders.rs).

// Twin of `render::gpu::Globals` in src/render/gpu.rs (same field order and sizes).
struct Globals {
    view: mat4x4<f32>,
    proj: mat4x4<f32>,
    view_proj: mat4x4<f32>,
    // Unit vector towards the light, in view space (w unused).
    light_dir_view: vec4<f32>,
    // Background colour (rgb) that the depth cue fades towards.
    background: vec4<f32>,
    // x: view distance where the depth cue starts, y: where it reaches full strength, z: strength 0..1.
    fog: vec4<f32>,
    // x: width, y: height in pixels.
    viewport: vec4<f32>,
};

@group(0) @binding(0) var<uniform> globals: Globals;

// Blinn-Phong with ambient term and depth cue; `p_view` is the shaded point in view space.
fn shade(base: vec3<f32>, n_view: vec3<f32>, p_view: vec3<f32>) -> vec3<f32> {
    let n = normalize(n_view);
    let l = normalize(globals.light_dir_view.xyz);
    let v = normalize(-p_view);
    let h = normalize(l + v);
    let diffuse = max(dot(n, l), 0.0);
    let specular = pow(max(dot(n, h), 0.0), 48.0) * 0.3;
    let lit = base * (0.3 + 0.7 * diffuse) + vec3<f32>(specular);
    let d = -p_view.z;
    let span = max(globals.fog.y - globals.fog.x, 1e-3);
    let f = clamp((d - globals.fog.x) / span, 0.0, 1.0) * globals.fog.z;
    return mix(lit, globals.background.rgb, f);
}

// Depth (0..1) of a view-space point, for impostors that write their own depth.
fn view_depth(p_view: vec3<f32>) -> f32 {
    let clip = globals.proj * vec4<f32>(p_view, 1.0);
    return clip.z / clip.w;
}

struct ImpostorOut {
    @location(0) color: vec4<f32>,
    @builtin(frag_depth) depth: f32,
};
