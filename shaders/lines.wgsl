// Lines (the periodic box outline, axes): unlit, per-vertex colour. Vertex layout is
// `render::gpu::LineVertex` (src/render/gpu.rs).

struct LineIn {
    @location(0) position: vec3<f32>,
    @location(1) color: vec4<f32>,
};

struct LineVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) color: vec4<f32>,
};

@vertex
fn vs_line(v: LineIn) -> LineVary {
    var out: LineVary;
    out.clip = globals.view_proj * vec4<f32>(v.position, 1.0);
    out.color = v.color;
    return out;
}

@fragment
fn fs_line(in: LineVary) -> @location(0) vec4<f32> {
    return vec4<f32>(in.color.rgb, 1.0);
}
