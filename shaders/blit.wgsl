// Copies the 3-D view's resolved image into egui's render pass (the paint-callback bridge in
// src/render/callback.rs). `fs_blit` keeps values as stored; `fs_blit_linear` decodes sRGB for
// sRGB-format targets, which encode again on write.

@group(0) @binding(0) var view_texture: texture_2d<f32>;
@group(0) @binding(1) var view_sampler: sampler;

struct BlitVary {
    @builtin(position) clip: vec4<f32>,
    @location(0) uv: vec2<f32>,
};

@vertex
fn vs_blit(@builtin(vertex_index) vi: u32) -> BlitVary {
    let x = f32(i32(vi & 1u) * 4 - 1);
    let y = f32(i32(vi >> 1u) * 4 - 1);
    var out: BlitVary;
    out.clip = vec4<f32>(x, y, 0.0, 1.0);
    out.uv = vec2<f32>((x + 1.0) * 0.5, (1.0 - y) * 0.5);
    return out;
}

@fragment
fn fs_blit(in: BlitVary) -> @location(0) vec4<f32> {
    return vec4<f32>(textureSample(view_texture, view_sampler, in.uv).rgb, 1.0);
}

fn srgb_to_linear(c: vec3<f32>) -> vec3<f32> {
    let lo = c / 12.92;
    let hi = pow((c + 0.055) / 1.055, vec3<f32>(2.4));
    return select(hi, lo, c <= vec3<f32>(0.04045));
}

@fragment
fn fs_blit_linear(in: BlitVary) -> @location(0) vec4<f32> {
    return vec4<f32>(srgb_to_linear(textureSample(view_texture, view_sampler, in.uv).rgb), 1.0);
}
